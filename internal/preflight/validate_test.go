package preflight

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"podium.dev/podium/internal/apierr"
	"podium.dev/podium/internal/authn"
)

func TestValidate(t *testing.T) {
	sa := &authn.Caller{User: "system:serviceaccount:acme:runner", ServiceAccountNamespace: "acme"}
	user := &authn.Caller{User: "alice"}
	cases := []struct {
		name   string
		body   string
		caller *authn.Caller
		status int
		fields []string // the fields named, in order
	}{
		{"minimal", `{"config": {}}`, sa, 0, nil},
		{"other config keys are ignored", `{"config": {"jobs_dir": "x", "agents": [{"name": "a", "kwargs": {"k": 1}}]}}`, sa, 0, nil},
		{"config missing", `{}`, sa, http.StatusBadRequest, []string{"config"}},
		{"config null", `{"config": null}`, sa, http.StatusBadRequest, []string{"config"}},
		{"config not an object", `{"config": 3}`, sa, http.StatusBadRequest, []string{"config"}},
		{"agents not an array", `{"config": {"agents": {}}}`, sa, http.StatusBadRequest, []string{"config.agents"}},
		{"null agent", `{"config": {"agents": [null]}}`, sa, http.StatusUnprocessableEntity, []string{"config.agents[0]"}},
		{"empty agent", `{"config": {"agents": [{}]}}`, sa, http.StatusUnprocessableEntity, []string{"config.agents[0].name"}},
		{"empty name", `{"config": {"agents": [{"name": ""}]}}`, sa, http.StatusUnprocessableEntity, []string{"config.agents[0].name"}},
		{"empty model name", `{"config": {"agents": [{"name": "a", "model_name": ""}]}}`, sa, http.StatusUnprocessableEntity, []string{"config.agents[0].model_name"}},
		{"agent by import path", `{"config": {"agents": [{"import_path": "my.pkg:Agent", "model_name": "anthropic/x"}]}}`, sa, 0, nil},
		{"agent without a model", `{"config": {"agents": [{"name": "oracle"}]}}`, sa, 0, nil},
		{"key in another case", `{"config": {"Agents": [{"name": "a"}]}}`, sa, http.StatusBadRequest, []string{"config"}},
		{"nested key in another case", `{"config": {"agents": [{"name": "a", "Model_Name": "anthropic/x"}]}}`, sa, http.StatusBadRequest, []string{"config"}},
		{"secrets not strings", `{"config": {"agents": [{"secrets": [1]}]}}`, sa, http.StatusBadRequest, []string{"config.agents.secrets"}},
		{"no organization for a user", `{"config": {}}`, user, http.StatusBadRequest, []string{"organization"}},
		{"organization for a user", `{"config": {}, "organization": "acme"}`, user, 0, nil},
		{"bad organization", `{"config": {}, "organization": "Acme Inc"}`, user, http.StatusUnprocessableEntity, []string{"organization"}},
		{"bad names everywhere", `{"config": {"agents": [{"name": "a", "secrets": ["OK", "not ok"]}], "datasets": [{"version": "1"}, {"name": "nodash"}, {"name": "a/b", "version": ""}]}, "declared_env_vars": ["9X"]}`,
			sa, http.StatusUnprocessableEntity, []string{"declared_env_vars[0]", "config.agents[0].secrets[1]", "config.datasets[0].name", "config.datasets[1].name", "config.datasets[2].version"}},
		{"too many agents", `{"config": {"agents": [` + strings.Repeat(`{"name":"a"},`, MaxAgents) + `{"name":"a"}]}}`, sa, http.StatusUnprocessableEntity, []string{"config.agents"}},
		{"tasks: null, no name with a dataset, ref and version disagree, a local task", `{"config": {"tasks": [null, {"dataset": "a/b"}, {"dataset": "a/b", "name": "t", "ref": "1", "version": "2"}, {"path": "x"}]}}`,
			sa, http.StatusUnprocessableEntity, []string{"config.tasks[0]", "config.tasks[1].name", "config.tasks[2].version"}},
		{"too many declared names", `{"config": {}, "declared_env_vars": [` + strings.Repeat(`"A",`, MaxDeclared) + `"A"]}`, sa, http.StatusUnprocessableEntity, []string{"declared_env_vars"}},
		{"too many secrets, bad import path", `{"config": {"agents": [{"import_path": "", "secrets": [` + strings.Repeat(`"A",`, MaxSecretsPerAgent) + `"A"]}]}}`,
			sa, http.StatusUnprocessableEntity, []string{"config.agents[0].import_path", "config.agents[0].secrets"}},
		{"long model name", `{"config": {"agents": [{"name": "a", "model_name": "` + strings.Repeat("m", 254) + `"}]}}`, sa, http.StatusUnprocessableEntity, []string{"config.agents[0].model_name"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var req request
			if err := json.Unmarshal([]byte(tc.body), &req); err != nil {
				t.Fatal(err)
			}
			_, _, err := validate(req, tc.caller)
			if tc.status == 0 {
				if err != nil {
					t.Fatalf("validate: %v", err)
				}
				return
			}
			var ae *apierr.Error
			if !errors.As(err, &ae) {
				t.Fatalf("validate = %v, want an API error %d", err, tc.status)
			}
			if ae.Status != tc.status {
				t.Errorf("status = %d, want %d (%v)", ae.Status, tc.status, ae)
			}
			var got []string
			for _, f := range ae.Details.([]apierr.FieldError) {
				got = append(got, f.Field)
			}
			if diff := cmp.Diff(tc.fields, got); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
		})
	}
}
