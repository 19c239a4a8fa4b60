package accesstoken

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

func newKey(t *testing.T, id string) SigningKey {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return SigningKey{ID: id, Private: priv}
}

func pub(k SigningKey) ed25519.PublicKey { return k.Private.Public().(ed25519.PublicKey) }

func claims(t *testing.T) Claims {
	t.Helper()
	c, err := NewClaims("system:serviceaccount:demo:alice", "0123456789abcdef", t0, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// raw signs any header and payload (objects marshalled as given) with sign.
func raw(hdr, payload any, sign func(input string) []byte) string {
	h, _ := json.Marshal(hdr)
	p, _ := json.Marshal(payload)
	input := enc.EncodeToString(h) + "." + enc.EncodeToString(p)
	return input + "." + enc.EncodeToString(sign(input))
}

func edSign(k SigningKey) func(string) []byte {
	return func(input string) []byte { return ed25519.Sign(k.Private, []byte(input)) }
}

func TestVerify(t *testing.T) {
	cur, prev, gone := newKey(t, "k2"), newKey(t, "k1"), newKey(t, "k0")
	set := KeySet{"k2": pub(cur), "k1": pub(prev)}
	good := claims(t)
	sign := func(k SigningKey, c Claims) string {
		tok, err := Sign(k, c)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	with := func(f func(*Claims)) Claims { c := good; f(&c); return c }
	okHeader := header{Alg: Alg, Typ: Type, Kid: "k2"}
	tampered := func() string {
		parts := strings.Split(sign(cur, good), ".")
		c := with(func(c *Claims) { c.Subject = "system:serviceaccount:demo:mallory" })
		p, _ := json.Marshal(c)
		return parts[0] + "." + enc.EncodeToString(p) + "." + parts[2]
	}
	hs256 := func(input string) []byte { // HMAC keyed with the public key: alg confusion
		m := hmac.New(sha256.New, pub(cur))
		m.Write([]byte(input))
		return m.Sum(nil)
	}

	cases := []struct {
		name  string
		token string
		now   time.Time
		ok    bool
	}{
		{"signed by the current key", sign(cur, good), t0.Add(time.Minute), true},
		{"signed by the previous key, still in the set", sign(prev, good), t0.Add(time.Minute), true},
		{"signed by a key removed from the set", sign(SigningKey{ID: "k0", Private: gone.Private}, good), t0, false},
		{"kid of the set, signed by another key", sign(SigningKey{ID: "k2", Private: gone.Private}, good), t0, false},
		{"unknown kid", raw(header{Alg: Alg, Typ: Type, Kid: "nope"}, good, edSign(cur)), t0, false},
		{"no kid", raw(header{Alg: Alg, Typ: Type}, good, edSign(cur)), t0, false},
		{"alg none, no signature", raw(header{Alg: "none", Typ: Type, Kid: "k2"}, good, func(string) []byte { return nil }), t0, false},
		{"alg none, a valid EdDSA signature", raw(header{Alg: "none", Typ: Type, Kid: "k2"}, good, edSign(cur)), t0, false},
		{"alg HS256 keyed with the public key", raw(header{Alg: "HS256", Typ: Type, Kid: "k2"}, good, hs256), t0, false},
		{"alg ES256", raw(header{Alg: "ES256", Typ: Type, Kid: "k2"}, good, edSign(cur)), t0, false},
		{"typ JWT (not an access token)", raw(header{Alg: Alg, Typ: "JWT", Kid: "k2"}, good, edSign(cur)), t0, false},
		{"unknown header field (jku)", raw(map[string]string{"alg": Alg, "typ": Type, "kid": "k2", "jku": "https://evil"}, good, edSign(cur)), t0, false},
		{"tampered payload", tampered(), t0, false},
		{"expired", sign(cur, good), t0.Add(time.Hour), false},
		{"one second before expiry", sign(cur, good), t0.Add(time.Hour - time.Second), true},
		{"issued in the future", sign(cur, good), t0.Add(-time.Minute), false},
		{"no exp", sign(cur, with(func(c *Claims) { c.ExpiresAt = 0 })), t0, false},
		{"wrong aud", sign(cur, with(func(c *Claims) { c.Audience = "kubernetes" })), t0, false},
		{"wrong iss", sign(cur, with(func(c *Claims) { c.Issuer = "https://kubernetes.default.svc" })), t0, false},
		{"no sub", sign(cur, with(func(c *Claims) { c.Subject = "" })), t0, false},
		{"no api_key_id", sign(cur, with(func(c *Claims) { c.APIKeyID = "" })), t0, false},
		{"unknown claim", raw(okHeader, map[string]any{"iss": Issuer, "aud": Audience, "sub": "a", "iat": t0.Unix(), "exp": t0.Add(time.Hour).Unix(), "jti": "x", "api_key_id": "k", "admin": true}, edSign(cur)), t0, false},
		{"aud as a list", raw(okHeader, map[string]any{"iss": Issuer, "aud": []string{Audience}, "sub": "a", "iat": t0.Unix(), "exp": t0.Add(time.Hour).Unix(), "jti": "x", "api_key_id": "k"}, edSign(cur)), t0, false},
		{"two parts", strings.Join(strings.Split(sign(cur, good), ".")[:2], "."), t0, false},
		{"padded base64", sign(cur, good) + "=", t0, false},
		{"empty", "", t0, false},
		{"a legacy pdmat_ token", "pdmat_MDEyMzQ1Njc4OWFiY2RlZi4xNzk1MDAwMDAw.bWFj", t0, false},
		{"too long", sign(cur, with(func(c *Claims) { c.Groups = []string{strings.Repeat("g", MaxTokenBytes)} })), t0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := &Verifier{Keys: set, Now: func() time.Time { return tc.now }}
			c, err := v.Verify(tc.token)
			if tc.ok {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if c.Subject != good.Subject || c.APIKeyID != good.APIKeyID || c.ExpiresAt != good.ExpiresAt {
					t.Fatalf("claims %+v, want %+v", *c, good)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) || c != nil {
				t.Fatalf("accepted or not ErrInvalid: %+v, %v", c, err)
			}
		})
	}
}

// A verifier of another issuer or audience refuses the package's tokens.
func TestVerifierIssuerAndAudience(t *testing.T) {
	k := newKey(t, "k1")
	tok, err := Sign(k, claims(t))
	if err != nil {
		t.Fatal(err)
	}
	now := func() time.Time { return t0 }
	for _, v := range []*Verifier{
		{Keys: KeySet{"k1": pub(k)}, Now: now, Issuer: "another"},
		{Keys: KeySet{"k1": pub(k)}, Now: now, Audience: "another"},
	} {
		if _, err := v.Verify(tok); !errors.Is(err, ErrInvalid) {
			t.Fatalf("%+v accepted a token of %s for %s", v, Issuer, Audience)
		}
	}
	if _, err := (&Verifier{Keys: KeySet{"k1": pub(k)}, Now: now}).Verify(tok); err != nil {
		t.Fatal(err)
	}
}

// Harbor's client reads "sub" without verifying: split on '.', base64url-decode the
// payload (Python pads it first), read "sub".
func TestSubjectReadsWithoutVerifying(t *testing.T) {
	tok, err := Sign(newKey(t, "k1"), claims(t))
	if err != nil {
		t.Fatal(err)
	}
	p := strings.Split(tok, ".")[1]
	b, err := enc.DecodeString(p)
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	if c["sub"] != "system:serviceaccount:demo:alice" {
		t.Fatalf("sub = %v", c["sub"])
	}
	for _, k := range []string{"iss", "aud", "iat", "exp", "jti", "api_key_id"} {
		if _, ok := c[k]; !ok {
			t.Errorf("claim %q missing", k)
		}
	}
}

func TestSignRefusesBadKeys(t *testing.T) {
	k := newKey(t, "k1")
	for _, bad := range []SigningKey{{ID: "", Private: k.Private}, {ID: "current", Private: k.Private}, {ID: "a/b", Private: k.Private}, {ID: "k1", Private: k.Private[:10]}} {
		if _, err := Sign(bad, claims(t)); err == nil {
			t.Errorf("signed with %q (%d bytes)", bad.ID, len(bad.Private))
		}
	}
}

func TestJWKSRoundTrip(t *testing.T) {
	a, b := newKey(t, "k1"), newKey(t, "k2")
	set := KeySet{"k1": pub(a), "k2": pub(b)}
	doc, err := json.Marshal(set.JWKS())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(doc), enc.EncodeToString(a.Private.Seed())) || strings.Contains(string(doc), `"d"`) {
		t.Fatalf("the JWK Set holds a private key: %s", doc)
	}
	got, err := ParseJWKS(doc)
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := Sign(b, claims(t))
	if _, err := (&Verifier{Keys: got, Now: func() time.Time { return t0 }}).Verify(tok); err != nil {
		t.Fatalf("a token does not verify with the parsed set: %v", err)
	}
	x := enc.EncodeToString(pub(a))
	for name, bad := range map[string]string{
		"not JSON":     `{`,
		"RSA":          `{"keys":[{"kty":"RSA","kid":"k1","n":"AQAB","e":"AQAB"}]}`,
		"another alg":  `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"` + x + `","kid":"k1","alg":"HS256"}]}`,
		"short key":    `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"AAAA","kid":"k1"}]}`,
		"bad kid":      `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"` + x + `","kid":"current"}]}`,
		"repeated kid": `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"` + x + `","kid":"k1"},{"kty":"OKP","crv":"Ed25519","x":"` + x + `","kid":"k1"}]}`,
	} {
		if _, err := ParseJWKS([]byte(bad)); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

func TestLooks(t *testing.T) {
	tok, _ := Sign(newKey(t, "k1"), claims(t))
	kube := raw(map[string]string{"alg": "RS256", "kid": "abc"}, map[string]any{"iss": "https://kubernetes.default.svc.cluster.local", "sub": "system:serviceaccount:a:b"}, func(string) []byte { return []byte("sig") })
	otherAT := raw(header{Alg: "RS256", Typ: Type, Kid: "x"}, map[string]any{"iss": "https://idp.example.com"}, func(string) []byte { return []byte("sig") })
	for token, want := range map[string]bool{tok: true, kube: false, otherAT: false, "pdm_0123456789abcdef_x": false, "pdmat_x.y": false, "": false, "a.b.c": false} {
		if Looks(token) != want {
			t.Errorf("Looks(%.40q) = %v", token, !want)
		}
	}
}
