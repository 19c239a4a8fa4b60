package secrets

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

func TestGranted(t *testing.T) {
	hs := &hubv1alpha1.HostedSecret{ObjectMeta: metav1.ObjectMeta{Namespace: "org", Name: "v", UID: "uid-new"}}
	secret := func(label string, annotation string, owners ...metav1.OwnerReference) *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "org", Name: "value", OwnerReferences: owners}}
		if label != "" {
			s.Labels = map[string]string{hubv1alpha1.LabelHostedSecret: label}
		}
		if annotation != "" {
			s.Annotations = map[string]string{hubv1alpha1.AnnotationHostedSecretUID: annotation}
		}
		return s
	}
	// elsewhere moves s into the value namespace, labelled for org (unless "").
	elsewhere := func(s *corev1.Secret, org string) *corev1.Secret {
		s.Namespace = "podium-system"
		if org != "" {
			s.Labels[hubv1alpha1.LabelOrg] = org
		}
		return s
	}
	owner := func(apiVersion, kind string, uid types.UID) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: "v", UID: uid}
	}
	cases := []struct {
		name string
		s    *corev1.Secret
		want bool
	}{
		{"no Secret", nil, false},
		{"not labelled", secret("", ""), false},
		{"labelled for another name", secret("w", ""), false},
		{"labelled, never bound (a fresh declarative grant)", secret("v", ""), true},
		{"labelled and bound to this UID", secret("v", "uid-new", owner("hub.podium.dev/v1alpha1", "HostedSecret", "uid-new")), true},
		{"bound to this UID by annotation only", secret("v", "uid-new"), true},
		{"owned by an earlier object of the same name", secret("v", "", owner("hub.podium.dev/v1alpha1", "HostedSecret", "uid-old")), false},
		{"owned by an earlier object, any version", secret("v", "", owner("hub.podium.dev/v1", "HostedSecret", "uid-old")), false},
		{"was bound to an earlier object (owner reference gone)", secret("v", "uid-old"), false},
		{"annotation of an earlier object, owner reference forged to this one", secret("v", "uid-old", owner("hub.podium.dev/v1alpha1", "HostedSecret", "uid-new")), false},
		{"controlled by an ExternalSecret, granted by label", secret("v", "", owner("external-secrets.io/v1", "ExternalSecret", "es-1")), true},
		{"a HostedSecret kind of another group does not bind", secret("v", "", owner("example.com/v1", "HostedSecret", "x")), true},
		{"value namespace: bound to this UID, labelled for its org", elsewhere(secret("v", "uid-new"), "org"), true},
		{"value namespace: never bound (a label alone grants nothing there)", elsewhere(secret("v", ""), "org"), false},
		{"value namespace: bound by owner reference only", elsewhere(secret("v", "", owner("hub.podium.dev/v1alpha1", "HostedSecret", "uid-new")), "org"), false},
		{"value namespace: bound to another UID", elsewhere(secret("v", "uid-old"), "org"), false},
		{"value namespace: another org's value of the same name and UID label", elsewhere(secret("v", "uid-new"), "other-org"), false},
		{"value namespace: no org label", elsewhere(secret("v", "uid-new"), ""), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, why := Granted(tc.s, hs)
			if got != tc.want {
				t.Errorf("Granted = %v (%s), want %v", got, why, tc.want)
			}
			if !got && why == "" {
				t.Error("a refusal without a reason")
			}
		})
	}
}
