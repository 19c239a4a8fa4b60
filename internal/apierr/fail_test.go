package apierr

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
)

// TestFail: an API error is answered as it is and not logged; any other error is
// logged with its message and keys, and answered as a 500 that does not carry it.
func TestFail(t *testing.T) {
	const cause = "etcd at 10.0.0.7 refused: secret sk-live-123"
	for _, tc := range []struct {
		name       string
		err        error
		wantStatus int
		wantCode   string
		wantLogged bool
	}{
		{"api error", BadRequest("name", "name is required"), http.StatusBadRequest, CodeBadRequest, false},
		{"wrapped api error", fmt.Errorf("storing: %w", NotFound("no such secret")), http.StatusNotFound, CodeNotFound, false},
		{"other error", errors.New(cause), http.StatusInternalServerError, CodeInternal, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logged []string
			log := funcr.New(func(prefix, args string) { logged = append(logged, args) }, funcr.Options{})
			rec := httptest.NewRecorder()
			Fail(rec, log, tc.err, "Serving a request failed", "path", "/v1/x")
			if rec.Code != tc.wantStatus || !strings.Contains(rec.Body.String(), `"code":"`+tc.wantCode+`"`) {
				t.Errorf("answer = %d %s, want %d %s", rec.Code, rec.Body.String(), tc.wantStatus, tc.wantCode)
			}
			if strings.Contains(rec.Body.String(), "sk-live") || strings.Contains(rec.Body.String(), "10.0.0.7") {
				t.Errorf("the answer carries the cause: %s", rec.Body.String())
			}
			if got := len(logged) == 1; got != tc.wantLogged {
				t.Fatalf("logged %q, want logged=%v", logged, tc.wantLogged)
			}
			if tc.wantLogged && (!strings.Contains(logged[0], "Serving a request failed") || !strings.Contains(logged[0], `"path"="/v1/x"`) || !strings.Contains(logged[0], cause)) {
				t.Errorf("log line %q lacks the message, the key or the cause", logged[0])
			}
		})
	}
}
