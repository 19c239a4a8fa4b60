package delivery

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/providers"
	"podium.dev/podium/internal/scheme"
)

func answeredPod() (*corev1.Pod, stored) {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "acme", Name: "run-1", UID: "u1",
		Labels: map[string]string{hubv1alpha1.LabelRunSecret: "podium-run-aaaaaaaaaaaa"},
		Annotations: map[string]string{
			hubv1alpha1.AnnotationSecrets:   "A_KEY,B_KEY",
			hubv1alpha1.AnnotationRequester: "alice",
			hubv1alpha1.AnnotationDelivered: "A_KEY",
		}}}
	return p, stored{kind: KindPod, namespace: "acme", name: "run-1", requester: "alice",
		recorded: map[string]string{hubv1alpha1.AnnotationDelivered: "A_KEY"}, runSecret: "podium-run-aaaaaaaaaaaa"}
}

// TestStoredMatches: the stored run is the one admission answered only when everything
// admission put on it is there as answered.
func TestStoredMatches(t *testing.T) {
	p, want := answeredPod()
	if !want.matches(p) {
		t.Fatal("the run as answered does not match")
	}
	for name, change := range map[string]func(*corev1.Pod){
		"another requester":         func(p *corev1.Pod) { p.Annotations[hubv1alpha1.AnnotationRequester] = "bob" },
		"another run Secret":        func(p *corev1.Pod) { p.Labels[hubv1alpha1.LabelRunSecret] = "podium-run-bbbbbbbbbbbb" },
		"no run Secret":             func(p *corev1.Pod) { delete(p.Labels, hubv1alpha1.LabelRunSecret) },
		"another delivered list":    func(p *corev1.Pod) { p.Annotations[hubv1alpha1.AnnotationDelivered] = "A_KEY,B_KEY" },
		"a registry list added":     func(p *corev1.Pod) { p.Annotations[hubv1alpha1.AnnotationDeliveredRegistry] = "GHCR" },
		"another name":              func(p *corev1.Pod) { p.Name = "run-2" },
		"another namespace":         func(p *corev1.Pod) { p.Namespace = "other" },
		"asks for nothing":          func(p *corev1.Pod) { delete(p.Annotations, hubv1alpha1.AnnotationSecrets) },
		"being deleted":             func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: time.Now()} },
		"no delivered list at all":  func(p *corev1.Pod) { delete(p.Annotations, hubv1alpha1.AnnotationDelivered) },
		"a requester left unstated": func(p *corev1.Pod) { delete(p.Annotations, hubv1alpha1.AnnotationRequester) },
	} {
		q := p.DeepCopy()
		change(q)
		if want.matches(q) {
			t.Errorf("%s: matches", name)
		}
	}
	// A request without a name (generateName) matches whatever name the apiserver gave.
	want.name = ""
	q := p.DeepCopy()
	q.Name = "run-x7k2p"
	if !want.matches(q) {
		t.Error("a generated name does not match a request without a name")
	}
}

// TestStoredByName: a run delivered nothing is found by its name in the apiserver, only
// as answered.
func TestStoredByName(t *testing.T) {
	p, want := answeredPod()
	delete(p.Labels, hubv1alpha1.LabelRunSecret)
	delete(p.Annotations, hubv1alpha1.AnnotationDelivered)
	want.runSecret, want.recorded = "", map[string]string{}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(p).Build()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if storedByName(ctx, c, want) == nil {
		t.Error("the stored run was not found")
	}
	other := want
	other.requester = "bob"
	if storedByName(ctx, c, other) != nil {
		t.Error("a run of another requester was taken for the one answered")
	}
	other = want
	other.name = ""
	if storedByName(ctx, c, other) != nil {
		t.Error("a run without a name was looked up")
	}
}

// TestWriteRunSecret: a Secret under the run Secret's name is kept only when it is
// exactly the run Secret; another is deleted and the run Secret written again.
func TestWriteRunSecret(t *testing.T) {
	p, _ := answeredPod()
	want := RunSecret("acme", "podium-run-aaaaaaaaaaaa", KindPod, "alice", Plan{Delivered: []Delivery{{
		EnvVar: "A_KEY", Secret: &hubv1alpha1.HostedSecret{ObjectMeta: metav1.ObjectMeta{Name: "a-key", UID: "hs1"}}, value: []byte("alice-value")}}})
	want.OwnerReferences = []metav1.OwnerReference{RunOwnerRef(KindPod, p)}
	planted := want.DeepCopy()
	planted.Data = map[string][]byte{"A_KEY": []byte("carol-value")}
	ctx := context.Background()
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(planted).Build()

	err := WriteRunSecret(ctx, c, c, want)
	if err == nil || !strings.Contains(err.Error(), "was not the operator's") {
		t.Fatalf("a planted Secret was kept: %v", err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(want), &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the planted Secret stays: %v", err)
	}
	if err := WriteRunSecret(ctx, c, c, want); err != nil {
		t.Fatal(err)
	}
	got := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(want), got); err != nil || string(got.Data["A_KEY"]) != "alice-value" {
		t.Fatalf("the run Secret was not written: %v", err)
	}
	// Written already (the reissue and admission's write): kept.
	if err := WriteRunSecret(ctx, c, c, want); err != nil {
		t.Errorf("the run Secret itself was not kept: %v", err)
	}
	for name, change := range map[string]func(*corev1.Secret){
		"another owner":     func(s *corev1.Secret) { s.OwnerReferences[0].UID = "u2" },
		"another requester": func(s *corev1.Secret) { s.Annotations[hubv1alpha1.AnnotationRequester] = "carol" },
		"another type":      func(s *corev1.Secret) { s.Type = corev1.SecretTypeDockerConfigJson },
		"a key more":        func(s *corev1.Secret) { s.Data["B_KEY"] = []byte("x") },
		"another kind":      func(s *corev1.Secret) { s.Labels[hubv1alpha1.LabelRunFor] = KindJob },
	} {
		s := want.DeepCopy()
		change(s)
		if SameRunSecret(s, want) {
			t.Errorf("%s: taken for the run Secret", name)
		}
	}
}

// TestDryRunWarnings: a dry run's warnings come from the annotations alone.
func TestDryRunWarnings(t *testing.T) {
	cfg := &providers.Config{}
	ask := ParseRequest(map[string]string{hubv1alpha1.AnnotationSecrets: "A_KEY,not-a-name", hubv1alpha1.AnnotationJobID: "x"})
	w := strings.Join(dryRunWarnings(cfg, ask), "\n")
	for _, s := range []string{`"not-a-name" is not an environment variable name`, `"x" is not a UUID`, "this is a dry run: no hosted secret was looked up"} {
		if !strings.Contains(w, s) {
			t.Errorf("warnings %q lack %q", w, s)
		}
	}
	if strings.Contains(w, "not delivered") {
		t.Errorf("a dry run says what is not delivered: %q", w)
	}
}
