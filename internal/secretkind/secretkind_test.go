package secretkind_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/secretkind"
)

// row is what a kind states as data, one line of the table in docs/design/extending.md
// ("Adding a kind of hosted secret").
type row struct {
	Type                               hubv1alpha1.SecretType
	Scope                              hubv1alpha1.SecretScope
	Path                               string
	SecretType                         corev1.SecretType
	Fingerprinted, Seated              bool
	Form                               secretkind.Form
	AskAnnotation, DeliveredAnnotation string
	RunKeyPrefix                       string
}

func rowOf(k *secretkind.Kind) row {
	return row{k.Type, k.Scope, k.Path, k.SecretType, k.Fingerprinted, k.Seated, k.Form, k.AskAnnotation, k.DeliveredAnnotation, k.RunKeyPrefix}
}

// TestTable states what each kind is, once: the table the store, the HTTP handlers, the
// controllers, the delivery webhook, the preflight and the metrics read.
func TestTable(t *testing.T) {
	want := []row{
		{Type: "env", Path: "/v1/secrets", SecretType: corev1.SecretTypeOpaque, Form: secretkind.FormEnv,
			AskAnnotation: "hub.podium.dev/secrets", DeliveredAnnotation: "hub.podium.dev/delivered"},
		{Type: "registry", Scope: "org", Path: "/v1/registry-credentials", SecretType: corev1.SecretTypeDockerConfigJson,
			Fingerprinted: true, Seated: true, Form: secretkind.FormPullSecret,
			AskAnnotation: "hub.podium.dev/registry-credentials", DeliveredAnnotation: "hub.podium.dev/delivered-registry-credentials",
			RunKeyPrefix: "registry:"},
	}
	var got []row
	for _, k := range secretkind.Kinds {
		got = append(got, rowOf(k))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the kind table (-want +got):\n%s", diff)
	}
}

// samples is one spec and one value per kind: a new kind adds its own, or
// TestEveryKindRoundTrips fails.
var samples = map[hubv1alpha1.SecretType]struct {
	spec        hubv1alpha1.HostedSecretSpec
	value       string
	name, key   string
	subject     string
	objectBase  string
	dataKeyWant string
}{
	hubv1alpha1.TypeEnv: {
		spec:  hubv1alpha1.HostedSecretSpec{Type: hubv1alpha1.TypeEnv, EnvVar: "OPENAI_API_KEY", SecretRef: hubv1alpha1.SecretValueRef{Name: "v", Key: "token"}},
		value: "sk-the-value", name: "OPENAI_API_KEY", key: "OPENAI_API_KEY", subject: "OPENAI_API_KEY", objectBase: "OPENAI_API_KEY",
		dataKeyWant: "token",
	},
	hubv1alpha1.TypeRegistry: {
		spec: hubv1alpha1.HostedSecretSpec{Type: hubv1alpha1.TypeRegistry, Scope: hubv1alpha1.ScopeOrg,
			Registry: &hubv1alpha1.RegistrySpec{Server: "ghcr.io", Username: "bot", DisplayName: "GHCR bot"}},
		value: "ghp_the-password", name: "GHCR bot", key: "ghcr.io", subject: "registry credential GHCR bot", objectBase: "registry",
		dataKeyWant: corev1.DockerConfigJsonKey,
	},
}

// TestEveryKindRoundTrips runs every kind of the table through what its consumers ask of
// it: the value Secret the store writes is of the kind's type and gives the value back
// (what the controller and the delivery read), names, and the run Secret key the
// delivery records and the run Secret controller reads back.
func TestEveryKindRoundTrips(t *testing.T) {
	for _, k := range secretkind.Kinds {
		t.Run(string(k.Type), func(t *testing.T) {
			s, ok := samples[k.Type]
			if !ok {
				t.Fatalf("kind %s has no sample: add one", k.Type)
			}
			spec := s.spec
			data, err := k.Encode(&spec, []byte(s.value))
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			for _, msg := range []string{k.Subject(&spec), k.Name(&spec), k.FullRunKey(&spec)} {
				if strings.Contains(msg, s.value) {
					t.Errorf("%q quotes the value", msg)
				}
			}
			// The store writes the value under its kind's default key; the DataKey of
			// a spec without secretRef.key reads it back.
			plain := spec
			plain.SecretRef.Key = ""
			raw, ok := data[k.DataKey(&plain)]
			if !ok {
				t.Fatalf("Encode wrote %v, not the key %q", keys(data), k.DataKey(&plain))
			}
			got, ok := k.Decode(&spec, raw)
			if !ok || !bytes.Equal(got, []byte(s.value)) {
				t.Errorf("Decode(Encode(value)) = %v; want the value back", ok)
			}
			gotNames := []string{k.Name(&spec), k.RunKey(&spec), k.Subject(&spec), k.ObjectBase(&spec), k.DataKey(&spec)}
			wantNames := []string{s.name, s.key, s.subject, s.objectBase, s.dataKeyWant}
			if diff := cmp.Diff(wantNames, gotNames); diff != "" {
				t.Errorf("Name, RunKey, Subject, ObjectBase, DataKey (-want +got):\n%s", diff)
			}
			gotKind, rest := secretkind.OfRunKey(k.FullRunKey(&spec))
			if gotKind != k || rest != s.key {
				t.Errorf("OfRunKey(%q) = %s, %q; want %s, %q", k.FullRunKey(&spec), gotKind.Type, rest, k.Type, s.key)
			}
			if byType, ok := secretkind.ByType(k.Type); !ok || byType != k {
				t.Errorf("ByType(%s) does not find the kind", k.Type)
			}
			if secretkind.Of(&hubv1alpha1.HostedSecret{Spec: spec}) != k {
				t.Errorf("Of a HostedSecret of type %s is not its kind", k.Type)
			}
		})
	}
}

// TestKindsAreDistinct: what tells kinds apart (their type, paths, annotations and run
// keys) is never shared, and every kind's form is one a run can receive.
func TestKindsAreDistinct(t *testing.T) {
	seen := map[string]secretkind.Kind{}
	for _, k := range secretkind.Kinds {
		for _, v := range []string{"type:" + string(k.Type), "path:" + k.Path, "ann:" + k.AskAnnotation, "ann:" + k.DeliveredAnnotation, "prefix:" + k.RunKeyPrefix} {
			if other, dup := seen[v]; dup {
				t.Errorf("%s is both kind %s's and kind %s's", v, other.Type, k.Type)
			}
			seen[v] = *k
		}
		found := false
		for _, f := range secretkind.Forms {
			found = found || f == k.Form
		}
		if !found {
			t.Errorf("kind %s has form %q, which is not in Forms", k.Type, k.Form)
		}
	}
}

func TestOfDefaultsToEnv(t *testing.T) {
	if k := secretkind.Of(&hubv1alpha1.HostedSecret{}); k != &secretkind.Env {
		t.Errorf("a HostedSecret without spec.type is of kind %s; want env", k.Type)
	}
	if _, ok := secretkind.ByType("ssh"); ok {
		t.Errorf("ByType found a kind that is not in the table")
	}
	if k, rest := secretkind.OfRunKey("ANTHROPIC_API_KEY"); k != &secretkind.Env || rest != "ANTHROPIC_API_KEY" {
		t.Errorf("OfRunKey of an env var = %s, %q", k.Type, rest)
	}
}

// TestAThirdKind adds a kind to the table, as a new kind of hosted secret would, and
// shows that what is derived from the table (the lookups, the annotations the webhook
// and the admission policies read) follows without a change of code.
func TestAThirdKind(t *testing.T) {
	saved := secretkind.Kinds
	t.Cleanup(func() { secretkind.Kinds = saved })
	gitToken := &secretkind.Kind{
		Type: "git-token", Scope: hubv1alpha1.ScopeOrg, Path: "/v1/git-tokens", SecretType: corev1.SecretTypeOpaque,
		Form: secretkind.FormEnv, AskAnnotation: "hub.podium.dev/git-tokens", DeliveredAnnotation: "hub.podium.dev/delivered-git-tokens",
		RunKeyPrefix: "git:",
		RunKey:       func(*hubv1alpha1.HostedSecretSpec) string { return "GIT_TOKEN" },
	}
	secretkind.Kinds = append(append([]*secretkind.Kind(nil), saved...), gitToken)

	if k, ok := secretkind.ByType("git-token"); !ok || k != gitToken {
		t.Errorf("ByType does not find the new kind")
	}
	if k := secretkind.Of(&hubv1alpha1.HostedSecret{Spec: hubv1alpha1.HostedSecretSpec{Type: "git-token"}}); k != gitToken {
		t.Errorf("Of a HostedSecret of the new type is kind %s", k.Type)
	}
	if k, rest := secretkind.OfRunKey(gitToken.FullRunKey(nil)); k != gitToken || rest != "GIT_TOKEN" {
		t.Errorf("OfRunKey(%q) = %s, %q", gitToken.FullRunKey(nil), k.Type, rest)
	}
	if got := secretkind.AskAnnotations(); got[len(got)-1] != "hub.podium.dev/git-tokens" {
		t.Errorf("AskAnnotations = %v; want the new kind's last", got)
	}
	if got := secretkind.DeliveredAnnotations(); got[len(got)-1] != "hub.podium.dev/delivered-git-tokens" {
		t.Errorf("DeliveredAnnotations = %v; want the new kind's last", got)
	}
	if !secretkind.AnyAnnotation(map[string]string{"hub.podium.dev/git-tokens": "x"}, secretkind.AskAnnotations()) {
		t.Errorf("a run asking for the new kind alone does not ask")
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
