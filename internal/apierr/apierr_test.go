package apierr

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestInvalidList: a field.ErrorList becomes one 422 naming each path with its detail;
// the rejected value never appears in the message or the details.
func TestInvalidList(t *testing.T) {
	const value = "sk-do-not-echo-me"
	p := field.NewPath("config", "agents").Index(2).Child("secrets").Index(0)
	e := InvalidList(field.ErrorList{
		field.Invalid(p, value, "must be an environment variable name"),
		field.TooMany(field.NewPath("declared_env_vars"), 501, 500),
	})
	if e.Status != http.StatusUnprocessableEntity || e.Code != CodeValidationFailed {
		t.Errorf("status, code = %d, %s; want 422, %s", e.Status, e.Code, CodeValidationFailed)
	}
	want := []FieldError{
		{Field: "config.agents[2].secrets[0]", Message: "must be an environment variable name"},
		{Field: "declared_env_vars", Message: "must have at most 500 items"},
	}
	if diff := cmp.Diff(want, e.Details); diff != "" {
		t.Errorf("details (-want +got):\n%s", diff)
	}
	if e.Message != "config.agents[2].secrets[0]: must be an environment variable name (and 1 more)" {
		t.Errorf("message = %q", e.Message)
	}
	if strings.Contains(e.Message, value) {
		t.Errorf("the message echoes the rejected value: %q", e.Message)
	}
}
