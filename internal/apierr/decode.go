package apierr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	kjson "sigs.k8s.io/json"

	"podium.dev/podium/internal/jsontype"
)

// DecodeJSON decodes a request body strictly into v: malformed JSON, unknown fields,
// keys in another letter case than the field's (encoding/json would accept "Value" for
// "value"), a key given twice at any depth (encoding/json keeps the last), trailing data
// and wrongly typed fields are a 400 naming the field; a string that is not valid UTF-8
// or holds an unpaired UTF-16 surrogate escape is a 422 naming it (encoding/json would
// replace it with U+FFFD, silently changing what was sent); a body over the server's
// limit (http.MaxBytesReader) is a 413. Messages never quote the body.
func DecodeJSON(r *http.Request, v any) error {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		return decodeError(err)
	}
	return DecodeJSONBytes(data, v)
}

// DecodeJSONBytes is DecodeJSON for a body already read.
func DecodeJSONBytes(data []byte, v any) error {
	// Types, unknown fields and trailing data: encoding/json's answers name the field.
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return BadRequest("", "the body must hold exactly one JSON object")
	}
	// Duplicates at any depth, including parts decoded later (json.RawMessage).
	var generic any
	strict, err := kjson.UnmarshalStrict(data, &generic, kjson.DisallowDuplicateFields)
	if err != nil {
		return BadRequest("", "the body is not valid JSON")
	}
	if len(strict) > 0 {
		return BadRequest(strictField(strict[0], "duplicate field "), "is given more than once")
	}
	// Letter case: decoding case-sensitively, a key that matched a field only up to
	// case is an unknown field.
	strict, err = kjson.UnmarshalStrict(data, v, kjson.DisallowUnknownFields)
	if err != nil {
		return BadRequest("", "the body could not be read")
	}
	if len(strict) > 0 {
		return BadRequest(strictField(strict[0], "unknown field "), "unknown field (field names are case-sensitive)")
	}
	if field, ok := invalidText(data); !ok {
		return Invalid(FieldError{Field: field, Message: "must be valid UTF-8 text without unpaired surrogates"})
	}
	return nil
}

// strictField extracts the field path from a sigs.k8s.io/json strict error, whose text
// is `<kind> "<path>"`.
func strictField(err error, kind string) string {
	return strings.Trim(strings.TrimPrefix(err.Error(), kind), `"`)
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
		return BadRequest(field, "must be of type %s", jsontype.Of(te.Type))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return BadRequest(field, "unknown field")
	default:
		return BadRequest("", "the body could not be read: %s", trimJSON(err))
	}
}

func trimJSON(err error) string {
	var b bytes.Buffer
	fmt.Fprint(&b, strings.TrimPrefix(err.Error(), "json: "))
	return b.String()
}
