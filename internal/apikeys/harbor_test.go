package apikeys_test

import (
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Harbor's client exchanges HARBOR_API_KEY at {base}/functions/v1/api-key-exchange for
// an access token and sends that as the bearer of every request (docs/http-api.md, "Harbor compatibility").
// This replays its session against /v1 (the /functions/v1 alias serves the same
// handlers).
var _ = Describe("Harbor's API-key session", func() {
	It("exchanges the key for {access_token, expires_in} and works as the key's creator", func() {
		org := newOrg("harbor-session")
		owner := newPerson(org, "owner", "podium-org-owner")
		k := createKey(owner, map[string]any{"name": "harbor"})

		code, out := call(http.MethodPost, "/v1/api-key-exchange", "", map[string]any{"api_key": k.Key})
		Expect(code).To(Equal(http.StatusOK), string(out))
		Expect(keysOf(out)).To(Equal([]string{"access_token", "expires_in", "token_type"}))
		tok := decode[struct {
			AccessToken string `json:"access_token"`
			ExpiresIn   int    `json:"expires_in"`
			TokenType   string `json:"token_type"`
		}](out)
		Expect(tok.ExpiresIn).To(Equal(3600))
		Expect(tok.TokenType).To(Equal("bearer"))
		Expect(tok.AccessToken).NotTo(ContainSubstring(k.Key[len(k.Key)-20:]))
		bearer := tok.AccessToken

		By("harbor hub secrets add / list / delete")
		code, out = call(http.MethodPost, "/v1/secrets", bearer, map[string]any{"env_var": "OPENAI_API_KEY", "value": "sk-harbor-session-0001", "org": org})
		Expect(code).To(Equal(http.StatusCreated), string(out))
		Expect(keysOf(out)).To(Equal([]string{"created_at", "env_var", "id", "job_id", "last_used_at", "org_id", "provider", "scope", "status", "usable", "value_last4"}))
		code, out = call(http.MethodPost, "/v1/secrets", bearer, map[string]any{"env_var": "OPENAI_API_KEY", "value": "sk-harbor-session-0002", "org": org})
		Expect(code).To(Equal(http.StatusConflict), string(out))
		existing := decode[struct {
			Error struct {
				Code     string
				Existing struct{ ID string }
			}
		}](out).Error
		Expect(existing.Code).To(Equal("replacement_required"))
		code, out = call(http.MethodPost, "/v1/secrets", bearer, map[string]any{"env_var": "OPENAI_API_KEY", "value": "sk-harbor-session-0002", "org": org, "supersede_credential_id": existing.Existing.ID})
		Expect(code).To(Equal(http.StatusCreated), string(out))
		code, out = call(http.MethodGet, "/v1/secrets?org="+org, bearer, nil)
		Expect(code).To(Equal(http.StatusOK), string(out))
		Expect(keysOf(out)).To(Equal([]string{"secrets"}))
		Expect(string(out)).To(ContainSubstring(`"value_last4":"0002"`))

		By("preflight")
		code, out = call(http.MethodPost, "/v1/secrets/preflight", bearer, map[string]any{
			"organization": org,
			"config":       map[string]any{"agents": []map[string]any{{"name": "a", "model_name": "openai/gpt-5", "secrets": []string{"OPENAI_API_KEY"}}}},
		})
		Expect(code).To(Equal(http.StatusOK), string(out))
		Expect(string(out)).To(ContainSubstring(`"ok":true`))

		By("registry credentials, as the key's creator")
		code, out = call(http.MethodGet, "/v1/registry-credentials?org="+org, bearer, nil)
		Expect(code).To(Equal(http.StatusOK), string(out))
		Expect(string(out)).To(MatchJSON(`{"credentials": []}`))

		code, out = call(http.MethodDelete, "/v1/secrets", bearer, map[string]any{"env_var": "OPENAI_API_KEY", "org": org})
		Expect(code).To(Equal(http.StatusOK), string(out))
		Expect(string(out)).To(MatchJSON(`{"affected": 1}`))

		By("revoking the key ends its access tokens too")
		code, _ = call(http.MethodDelete, "/v1/api-keys", owner.Token, map[string]any{"id": k.ID})
		Expect(code).To(Equal(http.StatusOK))
		Eventually(func() int { c, _ := call(http.MethodGet, "/v1/secrets?org="+org, bearer, nil); return c }).Should(Equal(http.StatusUnauthorized))
		code, _ = call(http.MethodPost, "/v1/api-key-exchange", "", map[string]any{"api_key": k.Key})
		Expect(code).To(Equal(http.StatusUnauthorized))
	})

	It("refuses a forged or tampered access token", func() {
		org := newOrg("harbor-forge")
		owner := newPerson(org, "owner", "podium-org-owner")
		k := createKey(owner, map[string]any{})
		_, out := call(http.MethodPost, "/v1/api-key-exchange", "", map[string]any{"api_key": k.Key})
		tok := decode[struct {
			AccessToken string `json:"access_token"`
		}](out).AccessToken
		tampered := tok[:len(tok)-2] + "AA"
		if tampered == tok {
			tampered = tok[:len(tok)-2] + "BB"
		}
		code, _ := call(http.MethodGet, "/v1/api-keys", tampered, nil)
		Expect(code).To(Equal(http.StatusUnauthorized))
		code, _ = call(http.MethodGet, "/v1/api-keys", tok, nil)
		Expect(code).To(Equal(http.StatusOK))
	})

	It("rate-limits failed exchanges per client address", func() {
		hc := clientFrom("127.0.0.7")
		exchange := func() int {
			code, _ := callFrom(hc, http.MethodPost, "/v1/api-key-exchange", "", map[string]any{"api_key": "pdm_0123456789abcdef_wrong"})
			return code
		}
		for range 10 {
			Expect(exchange()).To(Equal(http.StatusUnauthorized), "the first ten failures are answered")
		}
		// Then 429 (one more try is let through every six seconds: a slow machine may
		// see a 401 between them, never only 401s).
		limited := 0
		for range 20 {
			if exchange() == http.StatusTooManyRequests {
				limited++
			}
		}
		Expect(limited).To(BeNumerically(">=", 10))
		By("another address is not limited")
		code, _ := callFrom(clientFrom("127.0.0.8"), http.MethodPost, "/v1/api-key-exchange", "", map[string]any{"api_key": "pdm_0123456789abcdef_wrong"})
		Expect(code).To(Equal(http.StatusUnauthorized))
	})
})
