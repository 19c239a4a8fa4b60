package apierr

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type body struct {
	Name  string   `json:"name"`
	Count int      `json:"count"`
	Tags  []string `json:"tags"`
	// Nested is decoded later (as preflight's config is): its duplicates count too.
	Nested json.RawMessage `json:"nested"`
}

func TestDecodeJSON(t *testing.T) {
	tests := []struct {
		name       string
		body       string
		limit      int64
		wantStatus int
		wantCode   string
		wantField  string
	}{
		{name: "valid", body: `{"name":"a","count":1}`},
		{name: "empty", body: ``, wantStatus: 400, wantCode: CodeBadRequest},
		{name: "malformed", body: `{"name":`, wantStatus: 400, wantCode: CodeBadRequest},
		{name: "syntax error", body: `{"name" "a"}`, wantStatus: 400, wantCode: CodeBadRequest},
		{name: "unknown field", body: `{"name":"a","colour":1}`, wantStatus: 400, wantCode: CodeBadRequest, wantField: "colour"},
		{name: "wrong type", body: `{"count":"three"}`, wantStatus: 400, wantCode: CodeBadRequest, wantField: "count"},
		{name: "not an object", body: `[1,2]`, wantStatus: 400, wantCode: CodeBadRequest},
		{name: "trailing data", body: `{"name":"a"}{"name":"b"}`, wantStatus: 400, wantCode: CodeBadRequest},
		{name: "duplicate key", body: `{"name":"a","name":"b"}`, wantStatus: 400, wantCode: CodeBadRequest, wantField: "name"},
		{name: "duplicate nested key", body: `{"name":"a","nested":{"x":1,"x":2}}`, wantStatus: 400, wantCode: CodeBadRequest, wantField: "nested.x"},
		{name: "key in another case", body: `{"Name":"a"}`, wantStatus: 400, wantCode: CodeBadRequest, wantField: "Name"},
		{name: "same key in two cases", body: `{"name":"a","NAME":"b"}`, wantStatus: 400, wantCode: CodeBadRequest, wantField: "NAME"},
		{name: "invalid UTF-8", body: "{\"name\":\"a\xffb\"}", wantStatus: 422, wantCode: CodeValidationFailed, wantField: "name"},
		{name: "lone high surrogate", body: `{"name":"a\ud800b"}`, wantStatus: 422, wantCode: CodeValidationFailed, wantField: "name"},
		{name: "lone low surrogate", body: `{"tags":["ok","\udc00"]}`, wantStatus: 422, wantCode: CodeValidationFailed, wantField: "tags[1]"},
		{name: "surrogate deep inside", body: `{"name":"a","tags":[],"nested":{"x":[{"y":"ok"},{"z":"\udc00"}]}}`, wantStatus: 422, wantCode: CodeValidationFailed, wantField: "nested.x[1].z"},
		{name: "high surrogate at the end", body: `{"name":"\ud83d"}`, wantStatus: 422, wantCode: CodeValidationFailed, wantField: "name"},
		{name: "paired surrogates", body: `{"name":"\ud83d\ude00 \u00e9 \\u"}`},
		{name: "escaped backslash before u", body: `{"name":"\\ud800"}`},
		{name: "raw non-ASCII", body: `{"name":"café 😀"}`},
		{name: "too large", body: `{"name":"` + strings.Repeat("x", 100) + `"}`, limit: 50, wantStatus: 413, wantCode: CodePayloadTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(tt.body))
			if tt.limit > 0 {
				r.Body = http.MaxBytesReader(httptest.NewRecorder(), r.Body, tt.limit)
			}
			var b body
			err := DecodeJSON(r, &b)
			if tt.wantStatus == 0 {
				if err != nil {
					t.Fatalf("DecodeJSON() = %v, want nil", err)
				}
				return
			}
			e := As(err)
			if e.Status != tt.wantStatus || e.Code != tt.wantCode {
				t.Fatalf("DecodeJSON() = %d %s (%q), want %d %s", e.Status, e.Code, e.Message, tt.wantStatus, tt.wantCode)
			}
			if tt.wantField != "" {
				want := []FieldError{{Field: tt.wantField}}
				got, _ := e.Details.([]FieldError)
				if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b FieldError) bool { return a.Field == b.Field })); diff != "" {
					t.Errorf("details (-want +got):\n%s", diff)
				}
				if !strings.HasPrefix(e.Message, tt.wantField+":") {
					t.Errorf("message %q does not name the field %q", e.Message, tt.wantField)
				}
			}
		})
	}
}

func TestWriteEnvelope(t *testing.T) {
	rec := httptest.NewRecorder()
	Write(rec, Invalid(FieldError{Field: "title", Message: "must be 1 to 200 characters"}, FieldError{Field: "name", Message: "required"}))
	if rec.Code != http.StatusUnprocessableEntity {
		t.Fatalf("status = %d, want 422", rec.Code)
	}
	var got map[string]map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]any{"error": {
		"code":    CodeValidationFailed,
		"message": "title: must be 1 to 200 characters (and 1 more)",
		"details": []any{
			map[string]any{"field": "title", "message": "must be 1 to 200 characters"},
			map[string]any{"field": "name", "message": "required"},
		},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("envelope (-want +got):\n%s", diff)
	}
}

func TestInternalErrorsHideTheirCause(t *testing.T) {
	rec := httptest.NewRecorder()
	Write(rec, errString("dial tcp 10.0.0.1:443: secret-ish detail"))
	if rec.Code != http.StatusInternalServerError || strings.Contains(rec.Body.String(), "secret-ish") {
		t.Fatalf("got %d %s, want a 500 that tells nothing of the cause", rec.Code, rec.Body.String())
	}
}

type errString string

func (e errString) Error() string { return string(e) }
