package secrets

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

func TestPlace(t *testing.T) {
	p := Place{Namespace: "podium-system"}
	hs := func(created bool, ref hubv1alpha1.SecretValueRef) *hubv1alpha1.HostedSecret {
		h := &hubv1alpha1.HostedSecret{
			ObjectMeta: metav1.ObjectMeta{Namespace: "org", Name: "key-abc", UID: "u"},
			Spec:       hubv1alpha1.HostedSecretSpec{EnvVar: "KEY", SecretRef: ref},
		}
		if created {
			h.Annotations = map[string]string{hubv1alpha1.AnnotationCreatedBy: "alice"}
		}
		return h
	}
	key := func(ns, name string) client.ObjectKey { return client.ObjectKey{Namespace: ns, Name: name} }
	cases := []struct {
		name    string
		hs      *hubv1alpha1.HostedSecret
		of      client.ObjectKey
		ok      bool
		movable bool
		places  []client.ObjectKey
	}{
		{"stored over HTTP now: the value namespace", hs(true, p.NewValueRef("key-abc")),
			key("podium-system", "key-abc"), true, false, []client.ObjectKey{key("podium-system", "key-abc"), key("org", "key-abc")}},
		{"stored over HTTP by an older Podium: the org namespace, to be moved", hs(true, hubv1alpha1.SecretValueRef{Name: "key-abc", Key: "value"}),
			key("org", "key-abc"), true, true, []client.ObjectKey{key("org", "key-abc"), key("podium-system", "key-abc")}},
		{"declarative: stays where the platform team put it", hs(false, hubv1alpha1.SecretValueRef{Name: "team-key", Key: "token"}),
			key("org", "team-key"), true, false, []client.ObjectKey{key("org", "team-key")}},
		{"declarative, named like itself: not moved without created-by", hs(false, hubv1alpha1.SecretValueRef{Name: "key-abc", Key: "value"}),
			key("org", "key-abc"), true, false, []client.ObjectKey{key("org", "key-abc")}},
		{"created-by but another Secret name: declarative, not moved", hs(true, hubv1alpha1.SecretValueRef{Name: "team-key", Key: "value"}),
			key("org", "team-key"), true, false, []client.ObjectKey{key("org", "team-key")}},
		{"created-by but another key: not moved", hs(true, hubv1alpha1.SecretValueRef{Name: "key-abc", Key: "token"}),
			key("org", "key-abc"), true, false, []client.ObjectKey{key("org", "key-abc")}},
		{"its own namespace named explicitly", hs(false, hubv1alpha1.SecretValueRef{Namespace: "org", Name: "team-key"}),
			key("org", "team-key"), true, false, []client.ObjectKey{key("org", "team-key")}},
		{"any other namespace: never read", hs(false, hubv1alpha1.SecretValueRef{Namespace: "kube-system", Name: "admin-token"}),
			client.ObjectKey{}, false, false, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			of, ok := p.Of(tc.hs)
			if of != tc.of || ok != tc.ok {
				t.Errorf("Of = %v, %v; want %v, %v", of, ok, tc.of, tc.ok)
			}
			if got := p.Movable(tc.hs); got != tc.movable {
				t.Errorf("Movable = %v, want %v", got, tc.movable)
			}
			if got := p.Places(tc.hs); !reflect.DeepEqual(got, tc.places) {
				t.Errorf("Places = %v, want %v", got, tc.places)
			}
		})
	}
	// An operator whose value namespace is the org's own moves nothing.
	same := Place{Namespace: "org"}
	if same.Movable(hs(true, hubv1alpha1.SecretValueRef{Name: "key-abc", Key: "value"})) {
		t.Error("Movable into the org's own namespace")
	}
}

func TestNewValueSecret(t *testing.T) {
	p := Place{Namespace: "podium-system"}
	h := &hubv1alpha1.HostedSecret{ObjectMeta: metav1.ObjectMeta{Namespace: "org", Name: "key-abc", UID: "u"}}
	there := p.NewValueSecret(h, client.ObjectKey{Namespace: "podium-system", Name: "key-abc"}, "", map[string][]byte{"value": []byte("v")})
	if ok, why := Granted(there, h); !ok {
		t.Errorf("a value Secret in the value namespace is not granted to its HostedSecret: %s", why)
	}
	if len(there.OwnerReferences) != 0 || there.Labels[hubv1alpha1.LabelOrg] != "org" || !*there.Immutable {
		t.Errorf("value-namespace Secret: owners %v, labels %v, immutable %v", there.OwnerReferences, there.Labels, *there.Immutable)
	}
	here := p.NewValueSecret(h, client.ObjectKey{Namespace: "org", Name: "key-abc"}, "", map[string][]byte{"value": []byte("v")})
	if ok, why := Granted(here, h); !ok {
		t.Errorf("a value Secret in the org namespace is not granted to its HostedSecret: %s", why)
	}
	if len(here.OwnerReferences) != 1 || here.OwnerReferences[0].UID != "u" || here.Labels[hubv1alpha1.LabelOrg] != "" {
		t.Errorf("org-namespace Secret: owners %v, labels %v", here.OwnerReferences, here.Labels)
	}
	other := h.DeepCopy()
	other.UID = "u2"
	if ok, _ := Granted(there, other); ok {
		t.Error("a value Secret is granted to another object of the same name")
	}
}
