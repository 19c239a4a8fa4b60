package providers

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestShippedConfigIsTheDefault(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "config", "preflight", "preflight.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	shipped, err := ParseConfig(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Defaults(), shipped); diff != "" {
		t.Errorf("config/preflight/preflight.yaml differs from the built-in defaults (-want +got):\n%s", diff)
	}
}

func TestParseConfigRejects(t *testing.T) {
	for name, in := range map[string]string{
		"unknown key":         "providers: {}\nextra: 1\n",
		"upper-case":          "providers: {Anthropic: [ANTHROPIC_API_KEY]}\n",
		"empty provider":      "providers: {anthropic: []}\n",
		"bad env var":         "providers: {anthropic: [\"ANTHROPIC API KEY\"]}\n",
		"empty reserved":      "reserved: {names: [\"\"]}\n",
		"reserved not list":   "reserved: {names: PATH}\n",
		"providers not a map": "providers: [anthropic]\n",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := ParseConfig([]byte(in)); err == nil {
				t.Errorf("ParseConfig(%q) = nil error, want one", in)
			}
		})
	}
}

func TestLoadConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "preflight.yaml")
	if err := os.WriteFile(path, []byte("providers:\n  acme: [ACME_KEY]\nreserved:\n  names: [SECRET_SAUCE]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{Providers: map[string][]string{"acme": {"ACME_KEY"}}, Reserved: Reserved{Names: []string{"SECRET_SAUCE"}}}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("LoadConfig (-want +got):\n%s", diff)
	}
	if _, err := LoadConfig(filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Error("LoadConfig of a missing file: nil error")
	}
}

func TestIsReserved(t *testing.T) {
	c := Defaults()
	for name, want := range map[string]bool{
		"PATH": true, "path": true, "LD_PRELOAD": true,
		"MODAL_TOKEN": true, "MODAL_TOKEN_ID": true, "SUPABASE_URL": true, "HOSTED_PODIUM_KEY": true, "GCP_PROJECT": true,
		"HTTPS_PROXY": true, "http_proxy": true, "NO_PROXY": true,
		"MODAL": false, "PATHS": false, "ANTHROPIC_API_KEY": false, "PROXY_HOST": false, "GITHUB_TOKEN": false, "HOSTED_KEY": false,
	} {
		if got := c.IsReserved(name); got != want {
			t.Errorf("IsReserved(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestProviderOf(t *testing.T) {
	for in, want := range map[string]string{
		"anthropic/claude-sonnet-4": "anthropic",
		"OpenAI/gpt-5":              "openai",
		"openrouter/meta/llama":     "openrouter",
		"gpt-5":                     "",
		"":                          "",
	} {
		if got := ProviderOf(in); got != want {
			t.Errorf("ProviderOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIsEnvVarName(t *testing.T) {
	for in, want := range map[string]bool{
		"ANTHROPIC_API_KEY":            true,
		"http_proxy":                   true,
		"_X":                           true,
		"X" + strings.Repeat("Y", 127): true,
		"X" + strings.Repeat("Y", 128): false,
		"":                             false,
		"9X":                           false,
		"NOT OK":                       false,
		"A-B":                          false,
		"A=B":                          false,
	} {
		if got := IsEnvVarName(in); got != want {
			t.Errorf("IsEnvVarName(%q) = %v, want %v", in, got, want)
		}
	}
}
