// Package secretswire holds the JSON shapes of Podium's secrets endpoints
// (/v1/secrets, /v1/registry-credentials; docs/secrets.md): the request bodies the CLI
// sends and the server decodes, and the records both read. It has no server code: the
// CLI imports it, never the server packages.
//
// Request fields are pointers so that the server tells a missing field from an empty
// one; omitempty keeps a client from sending fields it did not set. No record has a
// field that could hold a secret value.
package secretswire

import "encoding/json"

// Record is a secret's metadata as GET /v1/secrets lists it and POST answers it.
type Record struct {
	ID         string  `json:"id"`
	Scope      string  `json:"scope"`
	JobID      *string `json:"job_id"`
	OrgID      string  `json:"org_id"`
	EnvVar     string  `json:"env_var"`
	Provider   *string `json:"provider"`
	ValueLast4 string  `json:"value_last4"`
	Status     string  `json:"status"`
	// Usable says whether the secret is handed to the next run: an active secret whose
	// value is missing or not granted is not; UnusableReason says why.
	Usable         bool    `json:"usable"`
	UnusableReason string  `json:"unusable_reason,omitempty"`
	CreatedAt      string  `json:"created_at"`
	LastUsedAt     *string `json:"last_used_at"`
}

// Existing is the active secret a 409 replacement_required names.
type Existing struct {
	ID         string `json:"id"`
	Scope      string `json:"scope"`
	EnvVar     string `json:"env_var"`
	ValueLast4 string `json:"value_last4"`
	CreatedAt  string `json:"created_at"`
}

// SecretList is the answer of GET /v1/secrets.
type SecretList struct {
	Secrets []Record `json:"secrets"`
}

// StoreSecret is the body of POST /v1/secrets. Value is never echoed anywhere, not
// even in a validation message.
type StoreSecret struct {
	Scope                 *string `json:"scope,omitempty"`
	EnvVar                *string `json:"env_var,omitempty"`
	Value                 *string `json:"value,omitempty"`
	Provider              *string `json:"provider,omitempty"`
	JobID                 *string `json:"job_id,omitempty"`
	OrgID                 *string `json:"org_id,omitempty"`
	Org                   *string `json:"org,omitempty"`
	SupersedeCredentialID *string `json:"supersede_credential_id,omitempty"`
	SupersedeSecretID     *string `json:"supersede_secret_id,omitempty"`
}

// RevokeSecret is the body of DELETE /v1/secrets.
type RevokeSecret struct {
	Scope  *string `json:"scope,omitempty"`
	EnvVar *string `json:"env_var,omitempty"`
	JobID  *string `json:"job_id,omitempty"`
	Purge  *bool   `json:"purge,omitempty"`
	OrgID  *string `json:"org_id,omitempty"`
	Org    *string `json:"org,omitempty"`
}

// Affected is the answer of a DELETE: how many records it revoked or purged.
type Affected struct {
	Affected int `json:"affected"`
}

// RegistryAffected is the answer of DELETE /v1/registry-credentials, in the shape of
// Harbor's hub: the credential_id it was asked for (absent when a display name was),
// how many records it revoked or purged, and whether it purged.
type RegistryAffected struct {
	CredentialID string `json:"credential_id,omitempty"`
	Affected     int    `json:"affected"`
	Purged       bool   `json:"purged"`
}

// Ptr returns a pointer to v: request bodies are built from it.
func Ptr[T any](v T) *T { return &v }

// RegistryRecord is a registry credential's metadata as the HTTP API shows it, in
// Harbor's shape (id, provider, registry_host, display_name, fingerprint, status,
// created_at, last_used_at) plus Podium's org_id, username and value_last4. It has no
// field that could hold the password or the key.
type RegistryRecord struct {
	ID           string  `json:"id"`
	Provider     string  `json:"provider"`
	RegistryHost string  `json:"registry_host"`
	DisplayName  string  `json:"display_name"`
	Fingerprint  string  `json:"fingerprint"`
	Status       string  `json:"status"`
	CreatedAt    string  `json:"created_at"`
	LastUsedAt   *string `json:"last_used_at"`
	OrgID        string  `json:"org_id"`
	Username     string  `json:"username"`
	// ValueLast4 is empty for a service-account key: the end of a JSON document tells
	// nobody anything.
	ValueLast4 string `json:"value_last4"`
	// Usable and UnusableReason: as in Record.
	Usable         bool   `json:"usable"`
	UnusableReason string `json:"unusable_reason,omitempty"`
}

// RegistryExisting is the active credential a 409 replacement_required names.
type RegistryExisting struct {
	ID           string `json:"id"`
	Provider     string `json:"provider"`
	RegistryHost string `json:"registry_host"`
	DisplayName  string `json:"display_name"`
	Fingerprint  string `json:"fingerprint"`
	ValueLast4   string `json:"value_last4"`
	CreatedAt    string `json:"created_at"`
}

// RegistryList is the answer of GET /v1/registry-credentials.
type RegistryList struct {
	Credentials []RegistryRecord `json:"credentials"`
}

// StoreRegistry is the body of POST /v1/registry-credentials: registry_host,
// display_name and either service_account_json (a Google service-account key: the key
// file's text as a JSON string, or the key as a JSON object) or username and password.
// Neither the key nor the password is ever echoed.
type StoreRegistry struct {
	RegistryHost          *string         `json:"registry_host,omitempty"`
	DisplayName           *string         `json:"display_name,omitempty"`
	ServiceAccountJSON    json.RawMessage `json:"service_account_json,omitempty"`
	Username              *string         `json:"username,omitempty"`
	Password              *string         `json:"password,omitempty"`
	OrgID                 *string         `json:"org_id,omitempty"`
	Org                   *string         `json:"org,omitempty"`
	SupersedeCredentialID *string         `json:"supersede_credential_id,omitempty"`
}

// RevokeRegistry is the body of DELETE /v1/registry-credentials: credential_id (the
// record's id, as Harbor sends it) or display_name (the active credential of that
// name), not both.
type RevokeRegistry struct {
	CredentialID *string `json:"credential_id,omitempty"`
	DisplayName  *string `json:"display_name,omitempty"`
	Purge        *bool   `json:"purge,omitempty"`
	OrgID        *string `json:"org_id,omitempty"`
	Org          *string `json:"org,omitempty"`
}

// APIKey is an API key's metadata as GET /v1/api-keys lists it: never the key, which
// is shown once, when it is created (APIKeyCreated).
type APIKey struct {
	ID         string  `json:"id"`
	Name       string  `json:"name"`
	User       string  `json:"user"`
	CreatedAt  string  `json:"created_at"`
	ExpiresAt  *string `json:"expires_at"`
	LastUsedAt *string `json:"last_used_at"`
}

// APIKeyCreated is the answer of POST /v1/api-keys: the record and the key itself.
type APIKeyCreated struct {
	APIKey
	Key string `json:"key"`
}

// APIKeyList is the answer of GET /v1/api-keys: the caller's own keys.
type APIKeyList struct {
	APIKeys []APIKey `json:"api_keys"`
}

// CreateAPIKey is the body of POST /v1/api-keys.
type CreateAPIKey struct {
	Name          *string `json:"name,omitempty"`
	ExpiresInDays *int    `json:"expires_in_days,omitempty"`
}

// RevokeAPIKey is the body of DELETE /v1/api-keys.
type RevokeAPIKey struct {
	ID *string `json:"id,omitempty"`
}

// APIKeyExchange is the body of POST /v1/api-key-exchange, as Harbor sends it.
type APIKeyExchange struct {
	APIKey *string `json:"api_key,omitempty"`
}

// AccessToken is the answer of POST /v1/api-key-exchange: a bearer token that acts as
// the key for expires_in seconds (and no longer than the key lives).
type AccessToken struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int    `json:"expires_in"`
}
