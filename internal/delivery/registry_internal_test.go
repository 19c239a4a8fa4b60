package delivery

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestDropValues(t *testing.T) {
	data := map[string][]byte{
		"A_KEY":                    []byte("a"),
		"B_KEY":                    []byte("b"),
		corev1.DockerConfigJsonKey: dockerConfig(map[string]json.RawMessage{"ghcr.io": json.RawMessage(`{"username":"u"}`), "x.io:5000": json.RawMessage(`{}`)}),
	}
	DropValues(data, []string{"A_KEY", RegistryKey("ghcr.io")})
	if _, ok := data["A_KEY"]; ok {
		t.Error("A_KEY stays")
	}
	if string(data["B_KEY"]) != "b" {
		t.Error("B_KEY went")
	}
	var cfg struct{ Auths map[string]json.RawMessage }
	if err := json.Unmarshal(data[corev1.DockerConfigJsonKey], &cfg); err != nil || len(cfg.Auths) != 1 || cfg.Auths["x.io:5000"] == nil {
		t.Errorf("auths = %s, %v; want only x.io:5000", data[corev1.DockerConfigJsonKey], err)
	}
	DropValues(data, []string{RegistryKey("x.io:5000")})
	if string(data[corev1.DockerConfigJsonKey]) != `{"auths":{}}` {
		t.Errorf("an emptied .dockerconfigjson stays valid: %s", data[corev1.DockerConfigJsonKey])
	}
}

func TestInjectPullSecret(t *testing.T) {
	spec := &corev1.PodSpec{ImagePullSecrets: []corev1.LocalObjectReference{{Name: "own"}}}
	InjectPullSecret(spec, "run")
	InjectPullSecret(spec, "run")
	if len(spec.ImagePullSecrets) != 2 || spec.ImagePullSecrets[1].Name != "run" {
		t.Errorf("imagePullSecrets = %v", spec.ImagePullSecrets)
	}
}

func TestParseRegistryRequest(t *testing.T) {
	r := ParseRequest(map[string]string{"hub.podium.dev/registry-credentials": "GHCR bot, GHCR bot,,bad;x, Mirror"})
	if len(r.Registry) != 2 || r.Registry[0] != "GHCR bot" || r.Registry[1] != "Mirror" {
		t.Errorf("Registry = %q", r.Registry)
	}
	if len(r.Warnings) != 1 {
		t.Errorf("warnings = %q", r.Warnings)
	}
	if !Asks(map[string]string{"hub.podium.dev/registry-credentials": "x"}) {
		t.Error("the registry annotation alone asks")
	}
}
