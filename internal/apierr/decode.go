package apierr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// DecodeJSON decodes a request body strictly into v: malformed JSON, unknown fields,
// trailing data and wrongly typed fields are a 400 naming the field; a body over the
// server's limit (http.MaxBytesReader) is a 413. Messages never quote the body.
func DecodeJSON(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return decodeError(err)
		}
		return BadRequest("", "the body must hold exactly one JSON object")
	}
	return nil
}

func decodeError(err error) error {
	var mbe *http.MaxBytesError
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &mbe):
		return New(http.StatusRequestEntityTooLarge, CodePayloadTooLarge, "the body is larger than %d bytes", mbe.Limit)
	case errors.Is(err, io.EOF):
		return BadRequest("", "the body is empty; a JSON object is required")
	case errors.As(err, &se), errors.Is(err, io.ErrUnexpectedEOF):
		return BadRequest("", "the body is not valid JSON")
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			return BadRequest("", "the body must be a JSON object")
		}
		return BadRequest(field, "must be of type %s", jsonKind(te.Type.Kind().String()))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return BadRequest(field, "unknown field")
	default:
		return BadRequest("", "the body could not be read: %s", trimJSON(err))
	}
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "slice", "array":
		return "array"
	case "map", "struct", "ptr":
		return "object"
	default:
		return "number"
	}
}

func trimJSON(err error) string {
	var b bytes.Buffer
	fmt.Fprint(&b, strings.TrimPrefix(err.Error(), "json: "))
	return b.String()
}
