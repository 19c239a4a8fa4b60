package secretsapi

import (
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/apierr"
	"podium.dev/podium/internal/secrets"
	"podium.dev/podium/internal/wire/secretswire"
)

const (
	job1 = "6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b"
	org1 = "0b8f0d6e-3c7a-4d59-9c1e-2f4f8a7b6c51"
)

// apiErr checks err's status and the fields it names.
func apiErr(t *testing.T, err error, status int, fields ...string) {
	t.Helper()
	if status == 0 {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	var ae *apierr.Error
	if !errors.As(err, &ae) {
		t.Fatalf("error = %v, want an API error %d", err, status)
	}
	if ae.Status != status {
		t.Errorf("status = %d, want %d (%v)", ae.Status, status, ae)
	}
	var got []string
	if d, ok := ae.Details.([]apierr.FieldError); ok {
		for _, f := range d {
			got = append(got, f.Field)
		}
	}
	if diff := cmp.Diff(fields, got); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
}

func TestValidateStore(t *testing.T) {
	big := strings.Repeat("x", secrets.MaxValueBytes+1)
	cases := []struct {
		name   string
		body   string
		status int
		fields []string
		want   storeInput
	}{
		{name: "minimal", body: `{"env_var": "ANTHROPIC_API_KEY", "value": "v"}`,
			want: storeInput{Scope: "user", EnvVar: "ANTHROPIC_API_KEY", Value: []byte("v")}},
		{name: "job scope, upper-case ids", body: `{"scope": "job", "job_id": "6F1C2A9E-3B4D-4E5F-8A7B-9C0D1E2F3A4B", "env_var": "X", "value": "v", "provider": "anthropic", "org_id": "` + org1 + `", "supersede_secret_id": "` + job1 + `"}`,
			want: storeInput{Scope: "job", JobID: job1, EnvVar: "X", Value: []byte("v"), Provider: "anthropic", Org: orgRef{ID: org1}, SupersedeID: job1}},
		{name: "job_id null in user scope", body: `{"env_var": "X", "value": "v", "job_id": null}`,
			want: storeInput{Scope: "user", EnvVar: "X", Value: []byte("v")}},
		{name: "both supersede names, equal", body: `{"env_var": "X", "value": "v", "supersede_credential_id": "` + job1 + `", "supersede_secret_id": "` + job1 + `"}`,
			want: storeInput{Scope: "user", EnvVar: "X", Value: []byte("v"), SupersedeID: job1}},
		{name: "env_var missing", body: `{"value": "v"}`, status: 400, fields: []string{"env_var"}},
		{name: "value missing", body: `{"env_var": "X"}`, status: 400, fields: []string{"value"}},
		{name: "value null", body: `{"env_var": "X", "value": null}`, status: 400, fields: []string{"value"}},
		{name: "everything wrong", body: `{"scope": "team", "env_var": "lower", "value": "", "provider": "` + strings.Repeat("p", 65) + `", "org_id": "acme", "supersede_credential_id": "x"}`,
			status: 422, fields: []string{"scope", "env_var", "value", "provider", "org_id", "supersede_credential_id"}},
		{name: "value too large", body: `{"env_var": "X", "value": "` + big + `"}`, status: 422, fields: []string{"value"}},
		{name: "job scope without job_id", body: `{"scope": "job", "env_var": "X", "value": "v"}`, status: 422, fields: []string{"job_id"}},
		{name: "user scope with job_id", body: `{"scope": "user", "job_id": "` + job1 + `", "env_var": "X", "value": "v"}`, status: 422, fields: []string{"job_id"}},
		{name: "job_id not a UUID", body: `{"scope": "job", "job_id": "{` + job1 + `}", "env_var": "X", "value": "v"}`, status: 422, fields: []string{"job_id"}},
		{name: "env var too long", body: `{"env_var": "A` + strings.Repeat("B", 64) + `", "value": "v"}`, status: 422, fields: []string{"env_var"}},
		{name: "job_id without scope", body: `{"job_id": "` + job1 + `", "env_var": "X", "value": "v"}`, status: 422, fields: []string{"job_id"}},
		{name: "provider with a bidi override", body: `{"env_var": "X", "value": "v", "provider": "anthropic\u202egnp.exe"}`, status: 422, fields: []string{"provider"}},
		{name: "provider with a zero-width space", body: `{"env_var": "X", "value": "v", "provider": "open\u200bai"}`, status: 422, fields: []string{"provider"}},
		{name: "provider with a line separator", body: `{"env_var": "X", "value": "v", "provider": "a\u2028b"}`, status: 422, fields: []string{"provider"}},
		{name: "provider with DEL", body: `{"env_var": "X", "value": "v", "provider": "a\u007fb"}`, status: 422, fields: []string{"provider"}},
		{name: "provider with other scripts", body: `{"env_var": "X", "value": "v", "provider": "Zhīpǔ 智谱"}`,
			want: storeInput{Scope: "user", EnvVar: "X", Value: []byte("v"), Provider: "Zhīpǔ 智谱"}},
		{name: "provider with a newline", body: `{"env_var": "X", "value": "v", "provider": "a\nb"}`, status: 422, fields: []string{"provider"}},
		{name: "different supersede ids", body: `{"env_var": "X", "value": "v", "supersede_credential_id": "` + job1 + `", "supersede_secret_id": "` + org1 + `"}`, status: 422, fields: []string{"supersede_secret_id"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b secretswire.StoreSecret
			if err := json.Unmarshal([]byte(tc.body), &b); err != nil {
				t.Fatal(err)
			}
			got, err := validateStore(b)
			apiErr(t, err, tc.status, tc.fields...)
			if tc.status == 0 {
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("validateStore (-want +got):\n%s", diff)
				}
			}
			if err != nil && strings.Contains(err.Error(), big) {
				t.Error("the error quotes the value")
			}
		})
	}
}

func TestValidateRevoke(t *testing.T) {
	cases := []struct {
		name   string
		body   string
		status int
		fields []string
		want   revokeInput
	}{
		{name: "minimal", body: `{"env_var": "X"}`, want: revokeInput{Scope: "user", EnvVar: "X"}},
		{name: "job purge", body: `{"scope": "job", "job_id": "` + job1 + `", "env_var": "X", "purge": true, "org_id": "` + org1 + `"}`,
			want: revokeInput{Scope: "job", JobID: job1, EnvVar: "X", Purge: true, Org: orgRef{ID: org1}}},
		{name: "env_var missing", body: `{"scope": "user"}`, status: 400, fields: []string{"env_var"}},
		{name: "job without job_id", body: `{"scope": "job", "env_var": "X"}`, status: 422, fields: []string{"job_id"}},
		{name: "user with job_id", body: `{"job_id": "` + job1 + `", "env_var": "X"}`, status: 422, fields: []string{"job_id"}},
		{name: "bad scope and env_var", body: `{"scope": "org", "env_var": "1X"}`, status: 422, fields: []string{"scope", "env_var"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b secretswire.RevokeSecret
			if err := json.Unmarshal([]byte(tc.body), &b); err != nil {
				t.Fatal(err)
			}
			got, err := validateRevoke(b)
			apiErr(t, err, tc.status, tc.fields...)
			if tc.status == 0 {
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("validateRevoke (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestValidateList(t *testing.T) {
	cases := []struct {
		query  string
		status int
		fields []string
		want   listInput
	}{
		{query: "", want: listInput{Status: "active"}},
		{query: "status=all&scope=user", want: listInput{Status: "all", Scope: "user"}},
		{query: "scope=job&job_id=" + strings.ToUpper(job1), want: listInput{Status: "active", Scope: "job", JobID: job1}},
		{query: "job_id=" + job1, status: 422, fields: []string{"job_id"}},
		{query: "org_id=" + org1 + "&status=revoked", want: listInput{Status: "revoked", Org: orgRef{ID: org1}}},
		{query: "limit=3", status: 400, fields: []string{"limit"}},
		{query: "status=all&status=revoked", status: 400, fields: []string{"status"}},
		{query: "status=gone&scope=x&org_id=y", status: 422, fields: []string{"scope", "status", "org_id"}},
		{query: "scope=user&job_id=" + job1, status: 422, fields: []string{"job_id"}},
		{query: "scope=job&job_id=42", status: 422, fields: []string{"job_id"}},
	}
	for _, tc := range cases {
		t.Run(tc.query, func(t *testing.T) {
			q, err := url.ParseQuery(tc.query)
			if err != nil {
				t.Fatal(err)
			}
			got, err := validateList(q)
			apiErr(t, err, tc.status, tc.fields...)
			if tc.status == 0 {
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("validateList (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestListed(t *testing.T) {
	mk := func(scope hubv1alpha1.SecretScope, owner, job, creator string, state hubv1alpha1.SecretState) *hubv1alpha1.HostedSecret {
		return &hubv1alpha1.HostedSecret{
			ObjectMeta: metav1.ObjectMeta{Namespace: "acme", Annotations: map[string]string{hubv1alpha1.AnnotationCreatedBy: creator}},
			Spec:       hubv1alpha1.HostedSecretSpec{Scope: scope, Owner: owner, JobID: job, EnvVar: "X"},
			Status:     hubv1alpha1.HostedSecretStatus{State: state},
		}
	}
	mine := mk("user", "alice", "", "alice", "active")
	bobs := mk("user", "bob", "", "bob", "active")
	myJob := mk("job", "", job1, "alice", "active")
	revoked := mk("user", "alice", "", "alice", "revoked")
	pending := mk("user", "alice", "", "alice", "")
	active := listInput{Status: "active"}
	cases := []struct {
		name string
		hs   *hubv1alpha1.HostedSecret
		in   listInput
		all  bool
		want bool
	}{
		{"own", mine, active, false, true},
		{"another user's, member", bobs, active, false, false},
		{"another user's, lister", bobs, active, true, true},
		{"own job secret", myJob, active, false, true},
		{"scope filter", myJob, listInput{Status: "active", Scope: "user"}, true, false},
		{"job filter", myJob, listInput{Status: "active", Scope: "job", JobID: job1}, true, true},
		{"other job", myJob, listInput{Status: "active", Scope: "job", JobID: org1}, true, false},
		{"revoked hidden by default", revoked, active, true, false},
		{"revoked asked for", revoked, listInput{Status: "revoked"}, true, true},
		{"all", revoked, listInput{Status: "all"}, false, true},
		{"pending never", pending, listInput{Status: "all"}, true, false},
	}
	for _, tc := range cases {
		if got := listed(tc.hs, tc.in, tc.all, "alice"); got != tc.want {
			t.Errorf("%s: listed = %v, want %v", tc.name, got, tc.want)
		}
	}
}
