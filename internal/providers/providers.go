// Package providers is the provider table and the reserved names of docs/secrets.md
// (Preflight): which environment variables authenticate a model's provider, and which
// names are never exported into a trial's environment. The preflight check and the
// delivery webhook both read it; it imports nothing of Podium's.
package providers

import (
	_ "embed"
	"fmt"
	"os"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"
)

//go:embed defaults.yaml
var defaultsYAML []byte

// Config is the provider table and the reserved names.
type Config struct {
	// Providers maps a provider (lower case) to the env vars that authenticate it.
	Providers map[string][]string `json:"providers"`
	Reserved  Reserved            `json:"reserved"`
}

// Reserved names are never exported into a trial's environment.
type Reserved struct {
	Names    []string `json:"names"`
	Prefixes []string `json:"prefixes"`
	Suffixes []string `json:"suffixes"`
}

var (
	providerRe = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)
	// envNameRe is what preflight accepts as an environment variable name anywhere
	// (tasks may require lower-case names such as http_proxy).
	envNameRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)
)

// IsEnvVarName says whether s is an environment variable name as the provider table and
// the preflight request accept it: [A-Za-z_][A-Za-z0-9_]*, at most 128 characters
// (tasks may require lower-case names such as http_proxy).
func IsEnvVarName(s string) bool { return envNameRe.MatchString(s) }

// Defaults returns the built-in configuration (docs/secrets.md, Preflight).
func Defaults() *Config {
	c, err := ParseConfig(defaultsYAML)
	if err != nil {
		panic(fmt.Sprintf("the built-in provider table is invalid: %v", err))
	}
	return c
}

// LoadConfig reads a configuration file; "" means the built-in defaults.
func LoadConfig(path string) (*Config, error) {
	if path == "" {
		return Defaults(), nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the preflight configuration: %w", err)
	}
	c, err := ParseConfig(b)
	if err != nil {
		return nil, fmt.Errorf("preflight configuration %s: %w", path, err)
	}
	return c, nil
}

// ParseConfig parses and checks a configuration (YAML or JSON); unknown keys are errors.
func ParseConfig(b []byte) (*Config, error) {
	c := &Config{}
	if err := yaml.UnmarshalStrict(b, c); err != nil {
		return nil, err
	}
	for p, vars := range c.Providers {
		if !providerRe.MatchString(p) {
			return nil, fmt.Errorf("providers: %q is not a lower-case provider name", p)
		}
		if len(vars) == 0 {
			return nil, fmt.Errorf("providers.%s: lists no environment variable", p)
		}
		for _, v := range vars {
			if !envNameRe.MatchString(v) {
				return nil, fmt.Errorf("providers.%s: %q is not an environment variable name", p, v)
			}
		}
	}
	for field, list := range map[string][]string{"names": c.Reserved.Names, "prefixes": c.Reserved.Prefixes, "suffixes": c.Reserved.Suffixes} {
		for _, v := range list {
			if v == "" || strings.ContainsAny(v, " \t\n") {
				return nil, fmt.Errorf("reserved.%s: %q is not a name or part of one", field, v)
			}
		}
	}
	return c, nil
}

// IsReserved says whether name is reserved; case is ignored.
func (c *Config) IsReserved(name string) bool {
	u := strings.ToUpper(name)
	for _, n := range c.Reserved.Names {
		if u == strings.ToUpper(n) {
			return true
		}
	}
	for _, p := range c.Reserved.Prefixes {
		if strings.HasPrefix(u, strings.ToUpper(p)) {
			return true
		}
	}
	for _, s := range c.Reserved.Suffixes {
		if strings.HasSuffix(u, strings.ToUpper(s)) {
			return true
		}
	}
	return false
}

// ProviderEnvVars returns the env vars that authenticate provider, or nil when the
// table does not know it, in the table's order.
func (c *Config) ProviderEnvVars(provider string) []string {
	vars := c.Providers[provider]
	if vars == nil {
		return nil
	}
	return append([]string(nil), vars...)
}

// ProviderOf is the part of a model name before the first "/", lower-cased; "" when
// the name has no "/".
func ProviderOf(model string) string {
	p, _, ok := strings.Cut(model, "/")
	if !ok {
		return ""
	}
	return strings.ToLower(strings.TrimSpace(p))
}
