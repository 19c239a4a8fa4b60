package delivery

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/secretkind"
)

// TestEveryFormIsImplemented: every form a kind may have, and every kind's form, is
// carried out here (the run Secret's data and type, the pod spec's reference).
func TestEveryFormIsImplemented(t *testing.T) {
	for _, f := range secretkind.Forms {
		if fo, ok := forms[f]; !ok || fo.put == nil || fo.drop == nil || fo.inject == nil {
			t.Errorf("form %s is not implemented", f)
		}
	}
	for _, k := range secretkind.Kinds {
		if _, ok := forms[k.Form]; !ok {
			t.Errorf("kind %s has form %s, which delivery does not implement", k.Type, k.Form)
		}
	}
}

// deliveryOf is a delivery of kind k for spec, holding the value Secret's data under the
// kind's DataKey, as Resolver.active reads it.
func deliveryOf(t *testing.T, k *secretkind.Kind, name string, spec hubv1alpha1.HostedSecretSpec, value string) Delivery {
	t.Helper()
	hs := &hubv1alpha1.HostedSecret{Spec: spec}
	hs.Name, hs.UID = name, types.UID("uid-of-"+name)
	hs.Spec.Type = k.Type
	data, err := k.Encode(&hs.Spec, []byte(value))
	if err != nil {
		t.Fatal(err)
	}
	return Delivery{EnvVar: k.FullRunKey(&hs.Spec), Secret: hs, Kind: k, value: data[k.DataKey(&hs.Spec)]}
}

// TestEveryKindRoundTripsThroughARunSecret delivers one secret of every kind of the
// table into a run Secret, and drops each again as the run Secret controller does when
// it is revoked: what each kind puts and takes out comes from the table.
func TestEveryKindRoundTripsThroughARunSecret(t *testing.T) {
	specs := map[hubv1alpha1.SecretType]hubv1alpha1.HostedSecretSpec{
		hubv1alpha1.TypeEnv:      {EnvVar: "OPENAI_API_KEY"},
		hubv1alpha1.TypeRegistry: {Scope: hubv1alpha1.ScopeOrg, Registry: &hubv1alpha1.RegistrySpec{Server: "ghcr.io", Username: "bot", DisplayName: "GHCR bot"}},
	}
	var plan Plan
	for _, k := range secretkind.Kinds {
		spec, ok := specs[k.Type]
		if !ok {
			t.Fatalf("kind %s has no spec here: add one", k.Type)
		}
		plan.Delivered = append(plan.Delivered, deliveryOf(t, k, "s-"+string(k.Type), spec, "the-value-of-"+string(k.Type)))
	}
	s := RunSecret("ns", "podium-run-x", KindPod, "alice", plan)
	used := ParseUsed(s.Annotations[hubv1alpha1.AnnotationRunHostedSecrets])
	if len(used) != len(secretkind.Kinds) {
		t.Fatalf("the run Secret records %d deliveries; want one per kind, %d", len(used), len(secretkind.Kinds))
	}
	for _, k := range secretkind.Kinds {
		if got := plan.NamesOf(k); len(got) != 1 || got[0] != k.Name(&plan.Of(k)[0].Secret.Spec) {
			t.Errorf("NamesOf(%s) = %q", k.Type, got)
		}
	}
	if s.Type != corev1.SecretTypeDockerConfigJson {
		t.Errorf("a run Secret with a registry credential is of type %s", s.Type)
	}
	var keys []string
	for _, u := range used {
		keys = append(keys, u.EnvVar)
	}
	DropValues(s.Data, keys)
	want := map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{}}`)}
	if diff := cmp.Diff(want, s.Data); diff != "" {
		t.Errorf("after dropping every delivery (-want +got):\n%s", diff)
	}
}

// TestAThirdKindNeedsNoDeliveryCode delivers secrets of two kinds that are not in the
// table, a Git token delivered as an environment variable and a mirror's credential
// delivered as an imagePullSecret: the run Secret, the names recorded and the keys the
// pod spec is pointed at follow from the kind alone.
func TestAThirdKindNeedsNoDeliveryCode(t *testing.T) {
	gitToken := &secretkind.Kind{
		Type: "git-token", Form: secretkind.FormEnv, RunKeyPrefix: "git:", DeliveredAnnotation: "hub.podium.dev/delivered-git-tokens",
		Name:    func(spec *hubv1alpha1.HostedSecretSpec) string { return spec.Provider },
		RunKey:  func(*hubv1alpha1.HostedSecretSpec) string { return "GIT_TOKEN" },
		DataKey: func(*hubv1alpha1.HostedSecretSpec) string { return "token" },
		Encode: func(_ *hubv1alpha1.HostedSecretSpec, v []byte) (map[string][]byte, error) {
			return map[string][]byte{"token": v}, nil
		},
	}
	mirror := *gitToken
	mirror.Type, mirror.Form, mirror.RunKeyPrefix = "mirror", secretkind.FormPullSecret, "mirror:"
	mirror.RunKey = func(*hubv1alpha1.HostedSecretSpec) string { return "mirror.example.com" }
	mirror.Encode = func(_ *hubv1alpha1.HostedSecretSpec, v []byte) (map[string][]byte, error) {
		cfg, err := secretkind.DockerConfigJSON("mirror.example.com", "ci", string(v))
		return map[string][]byte{"token": cfg}, err
	}
	plan := Plan{Delivered: []Delivery{
		deliveryOf(t, gitToken, "gh", hubv1alpha1.HostedSecretSpec{Provider: "github"}, "ghp_token"),
		deliveryOf(t, &mirror, "mi", hubv1alpha1.HostedSecretSpec{Provider: "mirror"}, "mirror-password"),
	}}
	s := RunSecret("ns", "podium-run-x", KindJob, "alice", plan)
	if string(s.Data["GIT_TOKEN"]) != "ghp_token" {
		t.Errorf("the Git token is not under GIT_TOKEN: %v", s.Data)
	}
	var cfg struct{ Auths map[string]json.RawMessage }
	if err := json.Unmarshal(s.Data[corev1.DockerConfigJsonKey], &cfg); err != nil || cfg.Auths["mirror.example.com"] == nil {
		t.Errorf("the mirror's credential is not an auths entry: %s", s.Data[corev1.DockerConfigJsonKey])
	}
	if s.Type != corev1.SecretTypeDockerConfigJson {
		t.Errorf("run Secret type %s", s.Type)
	}
	if got := s.Annotations[hubv1alpha1.AnnotationRunHostedSecrets]; got != "git:GIT_TOKEN=gh/uid-of-gh,mirror:mirror.example.com=mi/uid-of-mi" {
		t.Errorf("run Secret records %q", got)
	}
	got := [][]string{plan.Names(), plan.Keys(secretkind.FormPullSecret), plan.NamesOf(gitToken), plan.NamesOf(&mirror)}
	want := [][]string{{"GIT_TOKEN"}, {"mirror.example.com"}, {"github"}, {"mirror"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("env keys, pull keys, names of each kind (-want +got):\n%s", diff)
	}
	spec := &corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}
	for _, f := range secretkind.Forms {
		if keys := plan.Keys(f); len(keys) > 0 {
			forms[f].inject(spec, s.Name, keys)
		}
	}
	if len(spec.Containers[0].Env) != 1 || spec.Containers[0].Env[0].Name != "GIT_TOKEN" || len(spec.ImagePullSecrets) != 1 {
		t.Errorf("pod spec = %+v", spec)
	}
	if n := plan.counts(); n["git-token"] != 1 || n["mirror"] != 1 {
		t.Errorf("counts = %v", n)
	}
}
