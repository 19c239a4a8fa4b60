// Package secretkind states, per kind of hosted secret, everything that differs between
// kinds: the value Secret's type and keys, how a value is read back, what names a secret
// in messages, whether it has a fingerprint or takes an organization seat, and how a run
// receives it (an environment variable or an imagePullSecret). The store, the HTTP
// handlers, the controllers, the delivery webhook, the preflight and the metrics ask the
// table Kinds instead of branching on spec.type (docs/design/extending.md, "Adding a kind of
// hosted secret").
//
// It is a rule package: it imports, of Podium's packages, only api/v1alpha1. Nothing in
// it ever puts a value into an error or a message.
package secretkind

import (
	corev1 "k8s.io/api/core/v1"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// Kind is one kind of hosted secret: data, and small functions of its spec.
type Kind struct {
	// Type is spec.type; its string is also the label kind of
	// podium_secrets_delivered_total.
	Type hubv1alpha1.SecretType
	// Scope is the scope every secret of the kind is stored in; "" when the caller
	// chooses (user or job).
	Scope hubv1alpha1.SecretScope
	// Path is the HTTP API path that stores, lists and revokes the kind.
	Path string
	// SecretType is the type of the value Secret Podium writes.
	SecretType corev1.SecretType
	// Fingerprinted kinds record an HMAC fingerprint of their value in status.
	Fingerprinted bool
	// Seated kinds are bounded per organization: each takes one of its seats.
	Seated bool
	// Form is how a run receives the value.
	Form Form
	// AskAnnotation on a Job or bare Pod asks for secrets of the kind by Name;
	// DeliveredAnnotation is where admission records the Names delivered.
	AskAnnotation, DeliveredAnnotation string
	// RunKeyPrefix starts the key of a delivered secret of the kind in a run Secret's
	// hub.podium.dev/hosted-secrets annotation (RunKey); "" for at most one kind.
	RunKeyPrefix string

	// Name names a secret of the kind in its slot, in requests and in annotations: the
	// env var, the display name.
	Name func(spec *hubv1alpha1.HostedSecretSpec) string
	// Subject names it in messages and events.
	Subject func(spec *hubv1alpha1.HostedSecretSpec) string
	// ObjectBase starts the names of the HostedSecret and value Secret stored over HTTP.
	ObjectBase func(spec *hubv1alpha1.HostedSecretSpec) string
	// DataKey is the key of the value in its value Secret.
	DataKey func(spec *hubv1alpha1.HostedSecretSpec) string
	// Encode is the data of the value Secret holding value (never quoted in its error).
	Encode func(spec *hubv1alpha1.HostedSecretSpec, value []byte) (map[string][]byte, error)
	// Decode is the value the data under DataKey holds; ok is false when there is none.
	Decode func(spec *hubv1alpha1.HostedSecretSpec, raw []byte) (value []byte, ok bool)
	// RunKey is what follows RunKeyPrefix in the run Secret's annotation: the key the
	// Form puts the value under.
	RunKey func(spec *hubv1alpha1.HostedSecretSpec) string
}

// Form is how a run receives a hosted secret's value; internal/delivery implements each
// (the run Secret's data and type, the pod spec's reference to it).
type Form string

const (
	// FormEnv: a key of the run Secret, referenced by an env entry of every container.
	FormEnv Form = "env"
	// FormPullSecret: an auths entry of the run Secret's .dockerconfigjson, the run
	// Secret named in the pod's imagePullSecrets (the kubelet reads it, no container).
	FormPullSecret Form = "imagePullSecret"
)

// Forms are every Form.
var Forms = []Form{FormEnv, FormPullSecret}

// Kinds are every kind, in a fixed order (env first).
var Kinds = []*Kind{&Env, &Registry}

// Of returns the kind of hs. A HostedSecret of no type (stored before spec.type
// existed) is an env secret, the default; the CRD admits no other type.
func Of(hs *hubv1alpha1.HostedSecret) *Kind {
	if k, ok := ByType(hs.Spec.Type); ok {
		return k
	}
	return &Env
}

// ByType returns the kind of type t ("" is env, the default).
func ByType(t hubv1alpha1.SecretType) (*Kind, bool) {
	if t == "" {
		t = hubv1alpha1.TypeEnv
	}
	for _, k := range Kinds {
		if k.Type == t {
			return k, true
		}
	}
	return nil, false
}

// FullRunKey is the key of hs's delivery in a run Secret's hub.podium.dev/hosted-secrets
// annotation: its kind's RunKeyPrefix and RunKey.
func (k *Kind) FullRunKey(spec *hubv1alpha1.HostedSecretSpec) string {
	return k.RunKeyPrefix + k.RunKey(spec)
}

// OfRunKey returns the kind of an entry of a run Secret's hub.podium.dev/hosted-secrets
// annotation (the kind of the longest RunKeyPrefix it starts with) and the RunKey after
// the prefix.
func OfRunKey(key string) (*Kind, string) {
	var best *Kind
	for _, k := range Kinds {
		if len(key) >= len(k.RunKeyPrefix) && key[:len(k.RunKeyPrefix)] == k.RunKeyPrefix &&
			(best == nil || len(k.RunKeyPrefix) > len(best.RunKeyPrefix)) {
			best = k
		}
	}
	if best == nil {
		return &Env, key
	}
	return best, key[len(best.RunKeyPrefix):]
}

// AskAnnotations are the AskAnnotation of every kind, in the order of Kinds.
func AskAnnotations() []string {
	out := make([]string, len(Kinds))
	for i, k := range Kinds {
		out[i] = k.AskAnnotation
	}
	return out
}

// DeliveredAnnotations are the DeliveredAnnotation of every kind, in the order of Kinds.
func DeliveredAnnotations() []string {
	out := make([]string, len(Kinds))
	for i, k := range Kinds {
		out[i] = k.DeliveredAnnotation
	}
	return out
}

// AnyAnnotation says whether annotations hold any of keys.
func AnyAnnotation(annotations map[string]string, keys []string) bool {
	for _, k := range keys {
		if _, ok := annotations[k]; ok {
			return true
		}
	}
	return false
}
