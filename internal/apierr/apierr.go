// Package apierr is the one error envelope of Podium's HTTP API and of the CLI's --json
// output: {"error": {"code", "message", "details"?, "existing"?}}.
package apierr

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Codes of the envelope, with the HTTP status each one goes with.
const (
	CodeBadRequest          = "bad_request"          // 400
	CodeValidationFailed    = "validation_failed"    // 422
	CodeRowsInvalid         = "rows_invalid"         // 422
	CodeUnauthenticated     = "unauthenticated"      // 401
	CodeForbidden           = "forbidden"            // 403
	CodeNotFound            = "not_found"            // 404
	CodeReplacementRequired = "replacement_required" // 409
	CodeReplacementStale    = "replacement_stale"    // 409
	CodeLimitReached        = "limit_reached"        // 409: an organization limit (registry credentials)
	CodeStale               = "stale"                // 409
	CodeConflict            = "conflict"             // 409: the record already exists
	CodePayloadTooLarge     = "payload_too_large"    // 413
	CodeMethodNotAllowed    = "method_not_allowed"   // 405
	CodeInternal            = "internal"             // 500
	CodeUnavailable         = "unavailable"          // 503
)

// FieldError names one field and what is wrong with it (details of validation_failed).
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// Error is an API error. Message never holds a secret value or an internal detail.
type Error struct {
	Status   int    `json:"-"`
	Code     string `json:"code"`
	Message  string `json:"message"`
	Details  any    `json:"details,omitempty"`
	Existing any    `json:"existing,omitempty"`
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Envelope is the JSON body of every error response.
type Envelope struct {
	Error *Error `json:"error"`
}

// New returns an error with the given status, code and message.
func New(status int, code, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// BadRequest is a 400 bad_request naming the field.
func BadRequest(field, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	e := &Error{Status: http.StatusBadRequest, Code: CodeBadRequest, Message: msg}
	if field != "" {
		e.Message = field + ": " + msg
		e.Details = []FieldError{{Field: field, Message: msg}}
	}
	return e
}

// Invalid is a 422 validation_failed listing every failing field.
func Invalid(fields ...FieldError) *Error {
	msg := "validation failed"
	if len(fields) > 0 {
		msg = fields[0].Field + ": " + fields[0].Message
		if len(fields) > 1 {
			msg += fmt.Sprintf(" (and %d more)", len(fields)-1)
		}
	}
	return &Error{Status: http.StatusUnprocessableEntity, Code: CodeValidationFailed, Message: msg, Details: fields}
}

// NotFound is a 404 not_found.
func NotFound(format string, args ...any) *Error {
	return New(http.StatusNotFound, CodeNotFound, format, args...)
}

// Unauthenticated is a 401.
func Unauthenticated() *Error {
	return New(http.StatusUnauthorized, CodeUnauthenticated, "a valid bearer token is required")
}

// Forbidden is a 403.
func Forbidden(format string, args ...any) *Error {
	return New(http.StatusForbidden, CodeForbidden, format, args...)
}

// Internal is a 500 that tells nothing of the cause; log the cause separately.
func Internal() *Error {
	return New(http.StatusInternalServerError, CodeInternal, "internal error")
}

// As returns err as an *Error, or a 500 internal error when it is not one.
func As(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return Internal()
}

// Write writes err as the JSON envelope with its status.
func Write(w http.ResponseWriter, err error) {
	e := As(err)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(e.Status)
	_ = json.NewEncoder(w).Encode(Envelope{Error: e})
}

// Fail answers a handler's failure: an *Error passes through as Write writes it; any other
// error is a cause the caller must not see (it may name an object or a server detail), so
// it goes to log with msg and keysAndValues and the answer is Internal's 500.
func Fail(w http.ResponseWriter, log logr.Logger, err error, msg string, keysAndValues ...any) {
	var e *Error
	if !errors.As(err, &e) {
		log.Error(err, msg, keysAndValues...)
	}
	Write(w, err)
}

// InvalidList is Invalid for apimachinery's field.ErrorList (what the per-section
// validators return): each error's path and Detail, in order. The BadValue is never
// used, so a rejected value (possibly a secret) does not reach the response.
func InvalidList(errs field.ErrorList) *Error {
	fields := make([]FieldError, 0, len(errs))
	for _, e := range errs {
		fields = append(fields, FieldError{Field: e.Field, Message: e.Detail})
	}
	return Invalid(fields...)
}
