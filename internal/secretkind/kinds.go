package secretkind

import (
	corev1 "k8s.io/api/core/v1"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// DefaultValueKey is the key of an env secret's value in its Secret when
// spec.secretRef.key is unset.
const DefaultValueKey = "value"

// Env is the kind of secrets exported into a run as an environment variable
// (docs/secrets.md).
var Env = Kind{
	Type:                hubv1alpha1.TypeEnv,
	Path:                "/v1/secrets",
	SecretType:          corev1.SecretTypeOpaque,
	Form:                FormEnv,
	AskAnnotation:       hubv1alpha1.AnnotationSecrets,
	DeliveredAnnotation: hubv1alpha1.AnnotationDelivered,
	Name:                envVar,
	Subject:             envVar,
	ObjectBase:          envVar,
	DataKey: func(spec *hubv1alpha1.HostedSecretSpec) string {
		if spec.SecretRef.Key != "" {
			return spec.SecretRef.Key
		}
		return DefaultValueKey
	},
	Encode: func(_ *hubv1alpha1.HostedSecretSpec, value []byte) (map[string][]byte, error) {
		return map[string][]byte{DefaultValueKey: value}, nil
	},
	Decode: func(_ *hubv1alpha1.HostedSecretSpec, raw []byte) ([]byte, bool) { return raw, true },
	RunKey: envVar,
}

func envVar(spec *hubv1alpha1.HostedSecretSpec) string { return spec.EnvVar }

// Registry is the kind of container registry credentials, owned by the organization
// and handed to a run as an imagePullSecret (docs/secrets.md, "Registry credentials").
// The value is the password (or service-account key); its Secret is a
// .dockerconfigjson for spec.registry.
var Registry = Kind{
	Type:                hubv1alpha1.TypeRegistry,
	Scope:               hubv1alpha1.ScopeOrg,
	Path:                "/v1/registry-credentials",
	SecretType:          corev1.SecretTypeDockerConfigJson,
	Fingerprinted:       true,
	Seated:              true,
	Form:                FormPullSecret,
	AskAnnotation:       hubv1alpha1.AnnotationRegistryCredentials,
	DeliveredAnnotation: hubv1alpha1.AnnotationDeliveredRegistry,
	RunKeyPrefix:        "registry:",
	Name:                func(spec *hubv1alpha1.HostedSecretSpec) string { return registry(spec).DisplayName },
	Subject: func(spec *hubv1alpha1.HostedSecretSpec) string {
		return "registry credential " + registry(spec).DisplayName
	},
	ObjectBase: func(*hubv1alpha1.HostedSecretSpec) string { return "registry" },
	DataKey:    func(*hubv1alpha1.HostedSecretSpec) string { return corev1.DockerConfigJsonKey },
	Encode: func(spec *hubv1alpha1.HostedSecretSpec, value []byte) (map[string][]byte, error) {
		r := registry(spec)
		cfg, err := DockerConfigJSON(r.Server, r.Username, string(value))
		if err != nil {
			return nil, err
		}
		return map[string][]byte{corev1.DockerConfigJsonKey: cfg}, nil
	},
	Decode: func(spec *hubv1alpha1.HostedSecretSpec, raw []byte) ([]byte, bool) {
		if spec.Registry == nil {
			return nil, false
		}
		pw, ok := RegistryPassword(raw, spec.Registry.Server)
		return []byte(pw), ok && pw != ""
	},
	RunKey: func(spec *hubv1alpha1.HostedSecretSpec) string { return registry(spec).Server },
}

// registry is spec.registry, empty when unset (the CRD requires it for the kind).
func registry(spec *hubv1alpha1.HostedSecretSpec) *hubv1alpha1.RegistrySpec {
	if spec.Registry == nil {
		return &hubv1alpha1.RegistrySpec{}
	}
	return spec.Registry
}
