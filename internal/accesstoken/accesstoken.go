// Package accesstoken makes and checks the access tokens of the API-key exchange: JWTs
// (RFC 7519) in compact JWS form, signed with Ed25519 ("alg": "EdDSA", RFC 8037) and
// typed "at+jwt" (RFC 9068) (docs/api-keys.md, "The access token").
//
// The package is pure: it reads no Secret and knows no Kubernetes client, so the read
// tier can link it and check tokens with the public keys alone; only the operator holds
// the private keys that sign (package apikeys keeps them). Verify accepts exactly one
// algorithm: the header's "alg" never chooses how a token is checked (no "none", no HMAC
// under a public key), and its "kid" only picks one of the set's Ed25519 public keys.
package accesstoken

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// The fixed header fields of every token.
const (
	Alg  = "EdDSA"
	Type = "at+jwt"
)

// Issuer and Audience are the "iss" and "aud" of every token the operator signs. They
// name Podium's API-key exchange and Podium's API; two installations are kept apart by
// their keys, not by these names.
const (
	Issuer   = "podium.dev/api-key-exchange"
	Audience = "podium.dev/api"
)

// MaxTokenBytes bounds a token that is parsed at all: ours are under 1 KiB unless the
// identity carries many groups.
const MaxTokenBytes = 16 << 10

// ErrInvalid is every refusal: malformed, another algorithm or type, an unknown key id,
// a bad signature, expired, not yet issued, or another issuer or audience. The reason
// wrapped in it is for tests and logs; a client is told only that the token is invalid.
var ErrInvalid = errors.New("the access token is not valid")

// Claims are the token's payload. Subject is the Kubernetes user name of the key's
// creator (what GET /v1/api-keys shows as "user" and what SubjectAccessReviews name);
// APIKeyID names the API key, so that a revoked key's tokens are refused.
type Claims struct {
	Issuer    string `json:"iss"`
	Subject   string `json:"sub"`
	Audience  string `json:"aud"`
	IssuedAt  int64  `json:"iat"`
	ExpiresAt int64  `json:"exp"`
	// ID ("jti") is random: no two tokens are alike.
	ID string `json:"jti"`
	// APIKeyID ("api_key_id") is the id of the API key the token was exchanged for.
	APIKeyID string `json:"api_key_id"`
	// UID, Groups and Extra are the rest of the recorded identity, as TokenReview said
	// it of the key's creator.
	UID    string              `json:"uid,omitempty"`
	Groups []string            `json:"groups,omitempty"`
	Extra  map[string][]string `json:"extra,omitempty"`
}

type header struct {
	Alg string `json:"alg"`
	Typ string `json:"typ"`
	Kid string `json:"kid"`
}

var enc = base64.RawURLEncoding

// SigningKey is a private key and its id, the "kid" of the tokens it signs.
type SigningKey struct {
	ID      string
	Private ed25519.PrivateKey
}

// NewClaims fills the claims of a token for subject and API key apiKeyID, issued now and
// valid for ttl, with a random ID.
func NewClaims(subject, apiKeyID string, now time.Time, ttl time.Duration) (Claims, error) {
	jti := make([]byte, 16)
	if _, err := rand.Read(jti); err != nil {
		return Claims{}, err
	}
	return Claims{
		Issuer: Issuer, Audience: Audience, Subject: subject, APIKeyID: apiKeyID,
		IssuedAt: now.Unix(), ExpiresAt: now.Add(ttl).Unix(), ID: hex.EncodeToString(jti),
	}, nil
}

// Sign makes the compact JWS of c under k.
func Sign(k SigningKey, c Claims) (string, error) {
	if !ValidKeyID(k.ID) || len(k.Private) != ed25519.PrivateKeySize {
		return "", errors.New("accesstoken: the signing key has no valid id or is not an Ed25519 key")
	}
	h, err := json.Marshal(header{Alg: Alg, Typ: Type, Kid: k.ID})
	if err != nil {
		return "", err
	}
	p, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	input := enc.EncodeToString(h) + "." + enc.EncodeToString(p)
	return input + "." + enc.EncodeToString(ed25519.Sign(k.Private, []byte(input))), nil
}

// ValidKeyID says whether id may name a key: 1-63 of [A-Za-z0-9._-], and not "current"
// (the name of the entry that says which key signs, docs/api-keys.md).
func ValidKeyID(id string) bool {
	if id == "" || len(id) > 63 || id == "current" {
		return false
	}
	return strings.Trim(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == ""
}

// KeySet is the public keys that verify tokens, by key id: during a rollover the current
// key and the previous one.
type KeySet map[string]ed25519.PublicKey

// Verifier checks tokens against Keys. Issuer and Audience default to the package's;
// Now defaults to time.Now. Leeway is the clock skew allowed on "exp" and "iat".
type Verifier struct {
	Keys     KeySet
	Issuer   string
	Audience string
	Now      func() time.Time
	Leeway   time.Duration
}

func invalid(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, a...)...)
}

// split parses the header and payload of a compact JWS without checking anything else.
func split(token string) (h header, payload []byte, sig []byte, input string, err error) {
	if len(token) > MaxTokenBytes {
		return h, nil, nil, "", invalid("longer than %d bytes", MaxTokenBytes)
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return h, nil, nil, "", invalid("not three dot-separated parts")
	}
	hb, err1 := enc.DecodeString(parts[0])
	payload, err2 := enc.DecodeString(parts[1])
	sig, err3 := enc.DecodeString(parts[2])
	if err1 != nil || err2 != nil || err3 != nil {
		return h, nil, nil, "", invalid("a part is not unpadded base64url")
	}
	if err := strictJSON(hb, &h); err != nil {
		return h, nil, nil, "", invalid("header: %v", err)
	}
	return h, payload, sig, parts[0] + "." + parts[1], nil
}

// strictJSON decodes one JSON object and refuses unknown fields and trailing data, so a
// header or payload means exactly one thing.
func strictJSON(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("trailing data")
	}
	return nil
}

// Verify checks token and returns its claims: the header is exactly {"alg":"EdDSA",
// "typ":"at+jwt","kid":...} with a kid of the set, the Ed25519 signature holds under
// that key, and iss, aud, iat and exp are right. Every refusal wraps ErrInvalid.
func (v *Verifier) Verify(token string) (*Claims, error) {
	h, payload, sig, input, err := split(token)
	if err != nil {
		return nil, err
	}
	if h.Alg != Alg {
		return nil, invalid("alg %q", h.Alg)
	}
	if h.Typ != Type {
		return nil, invalid("typ %q", h.Typ)
	}
	pub, ok := v.Keys[h.Kid]
	if !ok || len(pub) != ed25519.PublicKeySize {
		return nil, invalid("unknown kid")
	}
	if len(sig) != ed25519.SignatureSize || !ed25519.Verify(pub, []byte(input), sig) {
		return nil, invalid("bad signature")
	}
	var c Claims
	if err := strictJSON(payload, &c); err != nil {
		return nil, invalid("payload: %v", err)
	}
	iss, aud := v.Issuer, v.Audience
	if iss == "" {
		iss = Issuer
	}
	if aud == "" {
		aud = Audience
	}
	now := time.Now
	if v.Now != nil {
		now = v.Now
	}
	t := now()
	switch {
	case c.Issuer != iss:
		return nil, invalid("iss %q", c.Issuer)
	case c.Audience != aud:
		return nil, invalid("aud %q", c.Audience)
	case c.Subject == "" || c.APIKeyID == "" || c.ID == "":
		return nil, invalid("sub, api_key_id or jti missing")
	case c.ExpiresAt == 0 || !t.Before(time.Unix(c.ExpiresAt, 0).Add(v.Leeway)):
		return nil, invalid("expired")
	case c.IssuedAt == 0 || t.Add(v.Leeway).Before(time.Unix(c.IssuedAt, 0)):
		return nil, invalid("issued in the future")
	}
	return &c, nil
}

// Looks says whether token is shaped like one of these access tokens: a compact JWS
// whose header says "typ": "at+jwt" and whose payload's "iss" is Issuer. It checks no
// signature: it only routes a bearer token to Verify rather than to Kubernetes'
// TokenReview (a Kubernetes token is a JWT too, of another issuer). Every bearer of
// another kind passes here, so it decodes the header alone unless that says at+jwt.
func Looks(token string) bool {
	if len(token) > MaxTokenBytes {
		return false
	}
	h64, rest, ok := strings.Cut(token, ".")
	if !ok {
		return false
	}
	p64, sig, ok := strings.Cut(rest, ".")
	if !ok || strings.Contains(sig, ".") {
		return false
	}
	hb, err := enc.DecodeString(h64)
	if err != nil {
		return false
	}
	var h header
	if json.Unmarshal(hb, &h) != nil || h.Typ != Type {
		return false
	}
	pb, err := enc.DecodeString(p64)
	if err != nil {
		return false
	}
	var c struct {
		Issuer string `json:"iss"`
	}
	return json.Unmarshal(pb, &c) == nil && c.Issuer == Issuer
}
