package secretsapi

import (
	"encoding/json"
	"strings"
	"testing"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/wire/secretswire"
)

const saKey = `{"type": "service_account", "client_email": "puller@p.iam.gserviceaccount.com", "private_key": "-----BEGIN PRIVATE KEY-----\nsa-canary\n-----END PRIVATE KEY-----\n"}`

// The rules of a registry credential's body: Harbor's form (service_account_json) and
// the username/password form, one unambiguous shape.
func TestValidateRegistryStore(t *testing.T) {
	keyString, _ := json.Marshal(saKey)
	compact := `{"type":"service_account","client_email":"puller@p.iam.gserviceaccount.com","private_key":"-----BEGIN PRIVATE KEY-----\nsa-canary\n-----END PRIVATE KEY-----\n"}`
	cases := []struct {
		name     string
		body     string
		status   int
		fields   []string
		username string
		value    string
	}{
		{name: "GAR key as a string", body: `{"registry_host": "us-docker.pkg.dev", "display_name": "GAR", "service_account_json": ` + string(keyString) + `}`,
			username: hubv1alpha1.GARUsername, value: compact},
		{name: "GAR key as an object", body: `{"registry_host": "us-docker.pkg.dev", "display_name": "GAR", "service_account_json": ` + saKey + `}`,
			username: hubv1alpha1.GARUsername, value: compact},
		{name: "user and password", body: `{"registry_host": "ghcr.io", "display_name": "GHCR", "username": "bot", "password": "ghp_x"}`,
			username: "bot", value: "ghp_x"},
		{name: "null key is no key", body: `{"registry_host": "ghcr.io", "display_name": "GHCR", "service_account_json": null, "username": "bot", "password": "ghp_x"}`,
			username: "bot", value: "ghp_x"},
		{name: "no host", body: `{"display_name": "GAR", "service_account_json": ` + saKey + `}`, status: 400, fields: []string{"registry_host"}},
		{name: "no name", body: `{"registry_host": "ghcr.io", "service_account_json": ` + saKey + `}`, status: 400, fields: []string{"display_name"}},
		{name: "neither form", body: `{"registry_host": "ghcr.io", "display_name": "x"}`, status: 400, fields: []string{"service_account_json"}},
		{name: "both forms", body: `{"registry_host": "ghcr.io", "display_name": "x", "service_account_json": ` + saKey + `, "username": "u"}`, status: 400, fields: []string{"service_account_json"}},
		{name: "password without user", body: `{"registry_host": "ghcr.io", "display_name": "x", "password": "p"}`, status: 400, fields: []string{"username"}},
		{name: "user without password", body: `{"registry_host": "ghcr.io", "display_name": "x", "username": "u"}`, status: 400, fields: []string{"password"}},
		{name: "not a service account", body: `{"registry_host": "ghcr.io", "display_name": "x", "service_account_json": {"type": "authorized_user", "client_email": "a", "private_key": "b"}}`, status: 422, fields: []string{"service_account_json"}},
		{name: "no private key", body: `{"registry_host": "ghcr.io", "display_name": "x", "service_account_json": {"type": "service_account", "client_email": "a"}}`, status: 422, fields: []string{"service_account_json"}},
		{name: "a string that is not JSON", body: `{"registry_host": "ghcr.io", "display_name": "x", "service_account_json": "sa-canary"}`, status: 422, fields: []string{"service_account_json"}},
		{name: "a number", body: `{"registry_host": "ghcr.io", "display_name": "x", "service_account_json": 7}`, status: 422, fields: []string{"service_account_json"}},
		{name: "_json_key with a password", body: `{"registry_host": "ghcr.io", "display_name": "x", "username": "_json_key", "password": "p"}`, status: 422, fields: []string{"username"}},
		{name: "bad host, name and supersede id", body: `{"registry_host": "GHCR.io", "display_name": "a,b", "service_account_json": ` + saKey + `, "supersede_credential_id": "x"}`,
			status: 422, fields: []string{"display_name", "registry_host", "supersede_credential_id"}},
		{name: "empty password", body: `{"registry_host": "ghcr.io", "display_name": "x", "username": "u", "password": ""}`, status: 422, fields: []string{"password"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b secretswire.StoreRegistry
			if err := json.Unmarshal([]byte(tc.body), &b); err != nil {
				t.Fatal(err)
			}
			in, err := validateRegistryStore(b)
			apiErr(t, err, tc.status, tc.fields...)
			if err != nil && strings.Contains(err.Error(), "sa-canary") {
				t.Errorf("the error quotes the key: %v", err)
			}
			if tc.status == 0 {
				if in.Registry.Username != tc.username || string(in.Password) != tc.value {
					t.Errorf("username %q, value %q; want %q, %q", in.Registry.Username, in.Password, tc.username, tc.value)
				}
			}
		})
	}
}

func TestValidateRegistryRevoke(t *testing.T) {
	cases := []struct {
		body   string
		status int
		fields []string
		want   registryRevokeInput
	}{
		{body: `{"credential_id": "` + strings.ToUpper(job1) + `", "purge": true}`, want: registryRevokeInput{ID: job1, Purge: true}},
		{body: `{"display_name": "GHCR bot"}`, want: registryRevokeInput{DisplayName: "GHCR bot"}},
		{body: `{}`, status: 400, fields: []string{"credential_id"}},
		{body: `{"credential_id": "` + job1 + `", "display_name": "x"}`, status: 400, fields: []string{"credential_id"}},
		{body: `{"credential_id": "nope"}`, status: 422, fields: []string{"credential_id"}},
		{body: `{"display_name": "a,b"}`, status: 422, fields: []string{"display_name"}},
	}
	for _, tc := range cases {
		var b secretswire.RevokeRegistry
		if err := json.Unmarshal([]byte(tc.body), &b); err != nil {
			t.Fatal(err)
		}
		got, err := validateRegistryRevoke(b)
		apiErr(t, err, tc.status, tc.fields...)
		if tc.status == 0 && got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.body, got, tc.want)
		}
	}
}
