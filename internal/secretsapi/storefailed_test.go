package secretsapi

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-logr/logr"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/secrets"
)

// TestStoreFailed is the table of a refused store's answers, for hosted secrets and
// registry credentials: the messages and codes clients (and the CLI) read, and the
// existing record of a replacement_required.
func TestStoreFailed(t *testing.T) {
	hs := &hubv1alpha1.HostedSecret{}
	hs.UID = "6f1d2c1e-6a51-4d4e-9d7e-2b1b7a3c9e10"
	hs.Spec.EnvVar = "OPENAI_API_KEY"
	secret := replaced{
		exists: "an active secret already exists for OPENAI_API_KEY", listed: "the active secret for OPENAI_API_KEY", plural: "secrets",
		existing: func(hs *hubv1alpha1.HostedSecret) any { return existingOf(hs) },
	}
	registry := replaced{
		exists: `an active registry credential named "gar" already exists`, listed: `the active registry credential "gar"`, plural: "credentials",
		existing: func(hs *hubv1alpha1.HostedSecret) any { return registryExistingOf(hs) },
	}
	for _, tc := range []struct {
		name       string
		rec        replaced
		err        error
		wantStatus int
		wantBody   []string
	}{
		{"secret exists", secret, &secrets.ReplacementRequiredError{Existing: hs}, http.StatusConflict, []string{
			`"code":"replacement_required"`,
			`"message":"an active secret already exists for OPENAI_API_KEY; repeat the request with supersede_credential_id set to existing.id to replace it"`,
			`"existing":{"id":"6f1d2c1e-6a51-4d4e-9d7e-2b1b7a3c9e10"`, `"env_var":"OPENAI_API_KEY"`,
		}},
		{"secret stale", secret, secrets.ErrStale, http.StatusConflict, []string{
			`"code":"replacement_stale"`,
			`"message":"supersede_credential_id no longer names the active secret for OPENAI_API_KEY; list the secrets again before retrying"`,
		}},
		{"credential exists", registry, &secrets.ReplacementRequiredError{Existing: hs}, http.StatusConflict, []string{
			`"code":"replacement_required"`,
			`"message":"an active registry credential named \"gar\" already exists; repeat the request with supersede_credential_id set to existing.id to replace it"`,
			`"existing":{"id":"6f1d2c1e-6a51-4d4e-9d7e-2b1b7a3c9e10"`,
		}},
		{"credential stale", registry, secrets.ErrStale, http.StatusConflict, []string{
			`"message":"supersede_credential_id no longer names the active registry credential \"gar\"; list the credentials again before retrying"`,
		}},
		{"other failure", secret, errors.New("etcd refused"), http.StatusInternalServerError, []string{`"code":"internal"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &API{Log: logr.Discard()}
			rec := httptest.NewRecorder()
			a.storeFailed(rec, httptest.NewRequest(http.MethodPost, "/v1/secrets", nil), tc.err, tc.rec)
			body := rec.Body.String()
			if rec.Code != tc.wantStatus {
				t.Errorf("status = %d, want %d (%s)", rec.Code, tc.wantStatus, body)
			}
			for _, want := range tc.wantBody {
				if !strings.Contains(body, want) {
					t.Errorf("body %s lacks %s", body, want)
				}
			}
			if strings.Contains(body, "etcd refused") {
				t.Errorf("the answer carries the cause: %s", body)
			}
		})
	}
}
