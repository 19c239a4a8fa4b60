package v1alpha1

import (
	"os"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// The field rules' table: every check with the inputs it must accept and refuse.
func TestFieldChecks(t *testing.T) {
	cases := []struct {
		name  string
		check func(string) string
		in    string
		ok    bool
	}{
		{"env", CheckEnvVar, "OPENAI_API_KEY", true},
		{"env", CheckEnvVar, "A", true},
		{"env", CheckEnvVar, "A" + strings.Repeat("B", 63), true},
		{"env", CheckEnvVar, "A" + strings.Repeat("B", 64), false},
		{"env", CheckEnvVar, "lower", false},
		{"env", CheckEnvVar, "1ABC", false},
		{"env", CheckEnvVar, "", false},
		{"server", CheckServer, "ghcr.io", true},
		{"server", CheckServer, "us-docker.pkg.dev", true},
		{"server", CheckServer, "registry.example.com:5000", true},
		{"server", CheckServer, "localhost", true},
		{"server", CheckServer, "GHCR.io", false},
		{"server", CheckServer, "https://ghcr.io", false},
		{"server", CheckServer, "ghcr.io/org", false},
		{"server", CheckServer, "ghcr.io:0", false},
		{"server", CheckServer, "ghcr.io:65536", false},
		{"server", CheckServer, "-ghcr.io", false},
		{"server", CheckServer, "a..b", false},
		{"server", CheckServer, "", false},
		{"server", CheckServer, strings.Repeat("a", 254), false},
		{"username", CheckUsername, "podium-bot", true},
		{"username", CheckUsername, "_json_key", true},
		{"username", CheckUsername, "me@example.com", true},
		{"username", CheckUsername, "a:b", false},
		{"username", CheckUsername, "a b", false},
		{"username", CheckUsername, "a\tb", false},
		{"username", CheckUsername, "a\u202eb", false},
		{"username", CheckUsername, "", false},
		{"username", CheckUsername, strings.Repeat("é", 256), true},
		{"username", CheckUsername, strings.Repeat("é", 257), false},
		{"display", CheckDisplayName, "GHCR bot", true},
		{"display", CheckDisplayName, "a", true},
		{"display", CheckDisplayName, "docker.io_mirror-2", true},
		{"display", CheckDisplayName, "a,b", false},
		{"display", CheckDisplayName, " a", false},
		{"display", CheckDisplayName, "a ", false},
		{"display", CheckDisplayName, "", false},
		{"display", CheckDisplayName, strings.Repeat("a", 64), false},
		{"provider", CheckProvider, "anthropic", true},
		{"provider", CheckProvider, "Zhīpǔ 智谱", true},
		{"provider", CheckProvider, "", true},
		{"provider", CheckProvider, strings.Repeat("é", 64), true},
		{"provider", CheckProvider, strings.Repeat("é", 65), false},
		{"provider", CheckProvider, "anthropic\u202egnp", false},
		{"provider", CheckProvider, "open\u200bai", false},
		{"provider", CheckProvider, "a\u2028b", false},
		{"provider", CheckProvider, "a\x7fb", false},
	}
	for _, c := range cases {
		if got := c.check(c.in) == ""; got != c.ok {
			t.Errorf("%s check(%q) ok = %v, want %v", c.name, c.in, got, c.ok)
		}
	}
}

// The CRD's markers restate the Go rules (a marker cannot name a constant): the
// generated schema must carry exactly the patterns and limits fields.go states.
func TestCRDStatesTheGoFieldRules(t *testing.T) {
	raw, err := os.ReadFile("../../config/crd/bases/hub.podium.dev_hostedsecrets.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		t.Fatal(err)
	}
	spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	reg := spec.Properties["registry"]
	for _, c := range []struct {
		field   string
		prop    apiextensionsv1.JSONSchemaProps
		pattern string
		max     int64
	}{
		{"spec.envVar", spec.Properties["envVar"], EnvVarPattern, 0},
		{"spec.registry.server", reg.Properties["server"], RegistryServerPattern, MaxServerChars},
		{"spec.registry.displayName", reg.Properties["displayName"], DisplayNamePattern, MaxDisplayNameChars},
		{"spec.registry.username", reg.Properties["username"], "", MaxUsernameChars},
		{"spec.provider", spec.Properties["provider"], "", MaxProviderChars},
	} {
		if c.prop.Pattern != c.pattern {
			t.Errorf("%s: the CRD's pattern %q differs from the Go rule %q", c.field, c.prop.Pattern, c.pattern)
		}
		if c.max != 0 && (c.prop.MaxLength == nil || *c.prop.MaxLength != c.max) {
			t.Errorf("%s: the CRD's maxLength %v differs from the Go limit %d", c.field, c.prop.MaxLength, c.max)
		}
	}
}
