package accesstoken

import (
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"sort"
)

// JWKSPath is where the operator publishes its public keys as a JWK Set, to anyone
// (docs/api-keys.md, "The access token"): the read tier reads them from there, and the
// one origin routes the path to the operator.
const JWKSPath = "/.well-known/jwks.json"

// JWK is one public key of a JWK Set (RFC 7517; Ed25519 as RFC 8037 writes it).
type JWK struct {
	KeyType string `json:"kty"` // "OKP"
	Curve   string `json:"crv"` // "Ed25519"
	X       string `json:"x"`   // the public key, base64url
	KeyID   string `json:"kid"`
	Alg     string `json:"alg"` // "EdDSA"
	Use     string `json:"use"` // "sig"
}

// JWKS is a JWK Set: what the operator publishes at GET /.well-known/jwks.json.
type JWKS struct {
	Keys []JWK `json:"keys"`
}

// JWKS returns the set's public keys as a JWK Set, ordered by key id.
func (s KeySet) JWKS() JWKS {
	out := JWKS{Keys: make([]JWK, 0, len(s))}
	for kid, pub := range s {
		out.Keys = append(out.Keys, JWK{KeyType: "OKP", Curve: "Ed25519", X: enc.EncodeToString(pub), KeyID: kid, Alg: Alg, Use: "sig"})
	}
	sort.Slice(out.Keys, func(i, j int) bool { return out.Keys[i].KeyID < out.Keys[j].KeyID })
	return out
}

// ParseJWKS reads a JWK Set of Ed25519 keys (what the read tier fetches). A key of
// another type, curve or algorithm, a bad id or a repeated one makes the whole set an
// error: a verifier keeps the set it had rather than a set it half understood.
func ParseJWKS(b []byte) (KeySet, error) {
	var doc JWKS
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("accesstoken: the JWK Set is not JSON: %w", err)
	}
	set := KeySet{}
	for _, k := range doc.Keys {
		if k.KeyType != "OKP" || k.Curve != "Ed25519" || (k.Alg != "" && k.Alg != Alg) || (k.Use != "" && k.Use != "sig") {
			return nil, fmt.Errorf("accesstoken: key %q is not an Ed25519 signing key", k.KeyID)
		}
		pub, err := enc.DecodeString(k.X)
		if err != nil || len(pub) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("accesstoken: key %q has no Ed25519 public key", k.KeyID)
		}
		if !ValidKeyID(k.KeyID) {
			return nil, fmt.Errorf("accesstoken: key id %q is not valid", k.KeyID)
		}
		if _, dup := set[k.KeyID]; dup {
			return nil, fmt.Errorf("accesstoken: key id %q is repeated", k.KeyID)
		}
		set[k.KeyID] = ed25519.PublicKey(pub)
	}
	return set, nil
}
