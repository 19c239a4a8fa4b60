// Package secrets stores hosted secrets: the value in a Kubernetes Secret, the metadata
// in a HostedSecret, and which secret is active in each slot in a per-slot pointer
// object, so that two active secrets in one slot are impossible even with several
// operator replicas (docs/secrets.md).
//
// Nothing in this package ever puts a value into a log line, an event, a status, an
// HTTP response or an error: values are only written into Secret data and read back
// only to compute the last four characters. The HTTP handlers that use it live in
// internal/secretsapi; the JSON shapes in internal/wire/secretswire.
package secrets

import (
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/secretkind"
)

// Value limits (docs/secrets.md: a value is 1 B to 64 KiB).
const (
	MinValueBytes = hubv1alpha1.MinValueBytes
	MaxValueBytes = hubv1alpha1.MaxValueBytes
	// minLast4Runes: values shorter than this show no last four characters, so that a
	// short value never leaks whole (or nearly whole).
	minLast4Runes = 8
	// DefaultValueKey is the key of the value in its Secret.
	DefaultValueKey = secretkind.DefaultValueKey
)

// Last4 returns the last four characters of a value, or "" when the value has fewer than
// eight characters or is not UTF-8 text.
func Last4(value []byte) string {
	if !utf8.Valid(value) {
		return ""
	}
	s := string(value)
	n := utf8.RuneCountInString(s)
	if n < minLast4Runes {
		return ""
	}
	r := []rune(s)
	return string(r[n-4:])
}

// DataKey is the key of hs's value in its value Secret (its kind's DataKey:
// spec.secretRef.key, default "value", for an env secret; .dockerconfigjson for a
// registry credential).
func DataKey(hs *hubv1alpha1.HostedSecret) string {
	return secretkind.Of(hs).DataKey(&hs.Spec)
}

// ValueOf returns the value a (granted) value Secret holds for hs: what its kind's
// Decode reads from the data under DataKey (for a registry credential the password of
// spec.registry.server's entry). ok is false when there is none.
func ValueOf(hs *hubv1alpha1.HostedSecret, s *corev1.Secret) (value []byte, ok bool) {
	k := secretkind.Of(hs)
	raw, ok := s.Data[k.DataKey(&hs.Spec)]
	if !ok || len(raw) == 0 {
		return nil, false
	}
	return k.Decode(&hs.Spec, raw)
}

// Subject names what a hosted secret is for, in messages and events (its kind's
// Subject): its env var, or "registry credential <display name>".
func Subject(hs *hubv1alpha1.HostedSecret) string {
	return secretkind.Of(hs).Subject(&hs.Spec)
}
