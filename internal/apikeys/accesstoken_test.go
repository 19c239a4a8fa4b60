package apikeys_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"podium.dev/podium/internal/accesstoken"
)

// The exchange's access token is a JWT the operator signs with Ed25519; anyone holding
// the published public keys (the read tier) can check it, and nothing published can
// sign one (docs/api-keys.md, "The access token").
var _ = Describe("Access tokens", func() {
	It("are JWTs that the public keys at /.well-known/jwks.json verify, naming the creator and the key", func() {
		org := newOrg("at-jwks")
		owner := newPerson(org, "owner", "podium-org-owner")
		k := createKey(owner, map[string]any{"name": "jwks"})
		code, out := call(http.MethodPost, "/v1/api-key-exchange", "", map[string]any{"api_key": k.Key})
		Expect(code).To(Equal(http.StatusOK), string(out))
		tok := decode[struct {
			AccessToken string `json:"access_token"`
		}](out).AccessToken

		code, out = call(http.MethodGet, "/.well-known/jwks.json", "", nil)
		Expect(code).To(Equal(http.StatusOK), string(out))
		Expect(string(out)).NotTo(ContainSubstring(`"d"`), "no private key is published")
		set, err := accesstoken.ParseJWKS(out)
		Expect(err).NotTo(HaveOccurred(), string(out))
		c, err := (&accesstoken.Verifier{Keys: set}).Verify(tok)
		Expect(err).NotTo(HaveOccurred())
		Expect(c.Subject).To(Equal(owner.User))
		Expect(c.APIKeyID).To(Equal(k.ID))
		Expect(c.Issuer).To(Equal(accesstoken.Issuer))
		Expect(c.Audience).To(Equal(accesstoken.Audience))
		Expect(time.Unix(c.ExpiresAt, 0).Sub(time.Unix(c.IssuedAt, 0))).To(Equal(time.Hour))
		Expect(c.ID).NotTo(BeEmpty())

		By("the token signs in on the operator, and a token with a changed payload does not")
		code, out = call(http.MethodGet, "/v1/api-keys", tok, nil)
		Expect(code).To(Equal(http.StatusOK), string(out))
		forged, err := accesstoken.Sign(accesstoken.SigningKey{ID: kidOf(tok), Private: otherKey()}, *c)
		Expect(err).NotTo(HaveOccurred())
		code, _ = call(http.MethodGet, "/v1/api-keys", forged, nil)
		Expect(code).To(Equal(http.StatusUnauthorized), "signed by a key not in the Secret, under the kid of one that is")
	})
})

// kidOf is the kid in token's header.
func kidOf(token string) string {
	GinkgoHelper()
	b, err := base64.RawURLEncoding.DecodeString(strings.Split(token, ".")[0])
	Expect(err).NotTo(HaveOccurred())
	var h struct{ Kid string }
	Expect(json.Unmarshal(b, &h)).To(Succeed())
	Expect(h.Kid).NotTo(BeEmpty())
	return h.Kid
}

func otherKey() ed25519.PrivateKey {
	GinkgoHelper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	Expect(err).NotTo(HaveOccurred())
	return priv
}
