// Package keylookup lets the read tier (podium-operator --role=read) sign callers in with
// Podium API keys and their exchanged access tokens without reading a Secret: the keys'
// records live in Secrets only the operator may read, so the read tier asks the operator
// (POST /internal/v1/authenticate, authenticated with the read tier's own ServiceAccount
// token) who a key or token signs in as. The operator answers the caller's identity,
// never the key or its record. An access token (a JWT) is checked first in the read tier
// itself, with the public keys the operator publishes (accesstoken.RemoteKeys): the read
// tier holds no key that could sign one, and a forged or expired token is refused without
// a lookup (docs/api-keys.md, "Keys in the read tier").
package keylookup

import (
	"strings"

	"podium.dev/podium/internal/accesstoken"
	"podium.dev/podium/internal/authn"
)

// Path is where the operator answers the read tier's lookups.
const Path = "/internal/v1/authenticate"

// The token shapes looked up: API keys and the access tokens of their exchange (the
// prefixes of package apikeys, a test holds them equal; and Podium's JWTs). Any other
// bearer token is a Kubernetes token, which the read tier reviews itself (TokenReview).
const (
	keyPrefix         = "pdm_"
	accessTokenPrefix = "pdmat_"
)

// IsKey says whether token is shaped like a Podium API key or access token: a JWT of
// the exchange (accesstoken.Looks: its issuer, not Kubernetes'), or the pdmat_ token of
// an earlier release.
func IsKey(token string) bool {
	return strings.HasPrefix(token, keyPrefix) || strings.HasPrefix(token, accessTokenPrefix) || accesstoken.Looks(token)
}

// request is the body of a lookup.
type request struct {
	Token string `json:"token"`
}

// Identity is the operator's answer: who the key or token signs in as.
type Identity struct {
	User     string              `json:"user"`
	UID      string              `json:"uid,omitempty"`
	Groups   []string            `json:"groups,omitempty"`
	Extra    map[string][]string `json:"extra,omitempty"`
	APIKeyID string              `json:"api_key_id"`
}

func identityOf(c *authn.Caller) Identity {
	return Identity{User: c.User, UID: c.UID, Groups: c.Groups, Extra: c.Extra, APIKeyID: c.APIKeyID}
}

func (i Identity) caller() *authn.Caller {
	c := authn.NewCaller(i.User, i.UID, i.Groups, i.Extra)
	c.APIKeyID = i.APIKeyID
	return c
}
