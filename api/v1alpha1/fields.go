package v1alpha1

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The field rules of a HostedSecret, in one place: the kubebuilder markers on
// HostedSecretSpec and RegistrySpec state the same patterns and limits for the apiserver
// (markers cannot name a Go constant), and fields_test.go checks that the generated CRD's
// patterns equal these. The HTTP API, the CLI and the delivery webhook check with the
// functions below (docs/secrets.md, "Field rules").

// Patterns of HostedSecret fields.
const (
	// EnvVarPattern is what spec.envVar (and the HTTP API's env_var) may be.
	EnvVarPattern = `^[A-Z][A-Z0-9_]{0,63}$`
	// RegistryServerPattern is what spec.registry.server (registry_host) may be: a
	// lower-case host name with an optional port.
	RegistryServerPattern = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(:[0-9]{1,5})?$`
	// DisplayNamePattern is what spec.registry.displayName (display_name) may be.
	DisplayNamePattern = `^[A-Za-z0-9]([A-Za-z0-9 ._-]*[A-Za-z0-9])?$`
)

// Limits of HostedSecret fields and values.
const (
	MaxServerChars      = 253
	MaxUsernameChars    = 256
	MaxDisplayNameChars = 63
	MaxProviderChars    = 64
	// MinValueBytes and MaxValueBytes bound a value (a password, a token, a
	// service-account JSON): 1 B to 64 KiB.
	MinValueBytes = 1
	MaxValueBytes = 64 << 10
)

var (
	envVarRe      = regexp.MustCompile(EnvVarPattern)
	serverRe      = regexp.MustCompile(RegistryServerPattern)
	displayNameRe = regexp.MustCompile(DisplayNamePattern)
)

// CheckEnvVar returns what is wrong with an env var name, "" when nothing is.
func CheckEnvVar(v string) string {
	if !envVarRe.MatchString(v) {
		return "must match " + EnvVarPattern + ": an upper-case letter, then up to 63 upper-case letters, digits or underscores"
	}
	return ""
}

// CheckServer returns what is wrong with a registry host, "" when nothing is.
func CheckServer(v string) string {
	if len(v) > MaxServerChars || !serverRe.MatchString(v) {
		return "must be a registry host name with an optional port, in lower case, such as ghcr.io or registry.example.com:5000 (at most 253 characters)"
	}
	if _, port, ok := strings.Cut(v, ":"); ok {
		if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
			return "has a port outside 1-65535"
		}
	}
	return ""
}

// CheckUsername returns what is wrong with a registry user name, "" when nothing is.
// The CRD's CEL rule on spec.registry.username says the same.
func CheckUsername(v string) string {
	n := utf8.RuneCountInString(v)
	if n < 1 || n > MaxUsernameChars {
		return "must be 1 to 256 characters"
	}
	for _, r := range v {
		if r == ':' || unicode.IsSpace(r) || unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp) {
			return "must not contain white space, ':' or control or formatting characters"
		}
	}
	return ""
}

// CheckDisplayName returns what is wrong with a registry credential's display name, ""
// when nothing is.
func CheckDisplayName(v string) string {
	if len(v) > MaxDisplayNameChars || !displayNameRe.MatchString(v) {
		return "must be 1 to 63 letters, digits, spaces, '.', '_' or '-', starting and ending with a letter or digit"
	}
	return ""
}

// CheckProvider returns what is wrong with a provider label, "" when nothing is.
func CheckProvider(v string) string {
	if utf8.RuneCountInString(v) > MaxProviderChars {
		return "must be at most 64 characters"
	}
	if !ValidProviderText(v) {
		return "must not contain control or formatting characters (such as bidirectional overrides)"
	}
	return ""
}

// ValidProviderText says whether a label is free of control characters (Cc), formatting
// characters (Cf: bidirectional overrides, zero-width characters) and line or paragraph
// separators, which would garble `kubectl get hs` and mislead a reader. The CRD's rule
// on spec.provider says the same in CEL.
func ValidProviderText(s string) bool {
	for _, r := range s {
		if unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp) {
			return false
		}
	}
	return true
}

// The two forms of a registry credential (docs/secrets.md, "Registry credentials"). A
// Google Artifact Registry (or Container Registry) service-account key signs in as the
// user _json_key with the key file's JSON as the password, which is how GAR expects it;
// any other registry signs in with a user name and a password or token. The form is
// read from spec.registry.username, so stored objects need no new field.
const (
	// GARUsername is the user name GAR expects with a service-account JSON key.
	GARUsername = "_json_key"
	// RegistryProviderGAR is the provider of a credential made from a service-account
	// JSON key.
	RegistryProviderGAR = "gar"
	// RegistryProviderBasic is the provider of a user name and password credential.
	RegistryProviderBasic = "basic"
)

// RegistryProvider is the provider of a registry credential: RegistryProviderGAR when it
// signs in as GARUsername, else RegistryProviderBasic.
func RegistryProvider(r *RegistrySpec) string {
	if r != nil && r.Username == GARUsername {
		return RegistryProviderGAR
	}
	return RegistryProviderBasic
}
