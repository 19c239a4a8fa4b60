package apikeys_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/accesstoken"
	"podium.dev/podium/internal/testenv"
)

// Harbor's client exchanges HARBOR_API_KEY at {base}/functions/v1/api-key-exchange for
// an access token and sends that as the bearer of every request (docs/http-api.md, "Harbor compatibility").
// This replays its session against /v1 (the /functions/v1 alias serves the same
// handlers), through the one base URL in front of the operator and the read tier
// (suite.Origin), as installed.
var _ = Describe("Harbor's API-key session", func() {
	It("exchanges the key for {access_token, expires_in} and works as the key's creator", func() {
		org := newOrg("harbor-session")
		owner := newPerson(org, "owner", "podium-org-owner")
		k := createKey(owner, map[string]any{"name": "harbor"})

		code, out := callOrigin(http.MethodPost, "/v1/api-key-exchange", "", map[string]any{"api_key": k.Key})
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
		code, out = callOrigin(http.MethodPost, "/v1/secrets", bearer, map[string]any{"env_var": "OPENAI_API_KEY", "value": "sk-harbor-session-0001", "org": org})
		Expect(code).To(Equal(http.StatusCreated), string(out))
		Expect(keysOf(out)).To(Equal([]string{"created_at", "env_var", "id", "job_id", "last_used_at", "org_id", "provider", "scope", "status", "usable", "value_last4"}))
		code, out = callOrigin(http.MethodPost, "/v1/secrets", bearer, map[string]any{"env_var": "OPENAI_API_KEY", "value": "sk-harbor-session-0002", "org": org})
		Expect(code).To(Equal(http.StatusConflict), string(out))
		existing := decode[struct {
			Error struct {
				Code     string
				Existing struct{ ID string }
			}
		}](out).Error
		Expect(existing.Code).To(Equal("replacement_required"))
		code, out = callOrigin(http.MethodPost, "/v1/secrets", bearer, map[string]any{"env_var": "OPENAI_API_KEY", "value": "sk-harbor-session-0002", "org": org, "supersede_credential_id": existing.Existing.ID})
		Expect(code).To(Equal(http.StatusCreated), string(out))
		code, out = callOrigin(http.MethodGet, "/v1/secrets?org="+org, bearer, nil)
		Expect(code).To(Equal(http.StatusOK), string(out))
		Expect(keysOf(out)).To(Equal([]string{"secrets"}))
		Expect(string(out)).To(ContainSubstring(`"value_last4":"0002"`))

		By("preflight")
		code, out = callOrigin(http.MethodPost, "/v1/secrets/preflight", bearer, map[string]any{
			"organization": org,
			"config":       map[string]any{"agents": []map[string]any{{"name": "a", "model_name": "openai/gpt-5", "secrets": []string{"OPENAI_API_KEY"}}}},
		})
		Expect(code).To(Equal(http.StatusOK), string(out))
		Expect(string(out)).To(ContainSubstring(`"ok":true`))

		By("registry credentials, as the key's creator")
		code, out = callOrigin(http.MethodGet, "/v1/registry-credentials?org="+org, bearer, nil)
		Expect(code).To(Equal(http.StatusOK), string(out))
		Expect(string(out)).To(MatchJSON(`{"credentials": []}`))

		code, out = callOrigin(http.MethodDelete, "/v1/secrets", bearer, map[string]any{"env_var": "OPENAI_API_KEY", "org": org})
		Expect(code).To(Equal(http.StatusOK), string(out))
		Expect(string(out)).To(MatchJSON(`{"affected": 1}`))

		By("revoking the key ends its access tokens too")
		code, _ = callOrigin(http.MethodDelete, "/v1/api-keys", owner.Token, map[string]any{"id": k.ID})
		Expect(code).To(Equal(http.StatusOK))
		Eventually(func() int { c, _ := callOrigin(http.MethodGet, "/v1/secrets?org="+org, bearer, nil); return c }).Should(Equal(http.StatusUnauthorized))
		code, _ = callOrigin(http.MethodPost, "/v1/api-key-exchange", "", map[string]any{"api_key": k.Key})
		Expect(code).To(Equal(http.StatusUnauthorized))
	})

	It("refuses a forged or tampered access token", func() {
		org := newOrg("harbor-forge")
		owner := newPerson(org, "owner", "podium-org-owner")
		k := createKey(owner, map[string]any{})
		_, out := callOrigin(http.MethodPost, "/v1/api-key-exchange", "", map[string]any{"api_key": k.Key})
		tok := decode[struct {
			AccessToken string `json:"access_token"`
		}](out).AccessToken
		tampered := tok[:len(tok)-2] + "AA"
		if tampered == tok {
			tampered = tok[:len(tok)-2] + "BB"
		}
		code, _ := callOrigin(http.MethodGet, "/v1/api-keys", tampered, nil)
		Expect(code).To(Equal(http.StatusUnauthorized))
		code, _ = callOrigin(http.MethodGet, "/v1/api-keys", tok, nil)
		Expect(code).To(Equal(http.StatusOK))

		By("the read tier, which checks the signature with the published keys, refuses them too")
		claims, err := accesstoken.NewClaims(owner.User, k.ID, time.Now(), time.Hour)
		Expect(err).NotTo(HaveOccurred())
		underListedKid, err := accesstoken.Sign(accesstoken.SigningKey{ID: kidOf(tok), Private: otherKey()}, claims)
		Expect(err).NotTo(HaveOccurred())
		unlistedKey, err := accesstoken.Sign(accesstoken.SigningKey{ID: "not-published", Private: otherKey()}, claims)
		Expect(err).NotTo(HaveOccurred())
		rowRead := func(bearer string) int {
			GinkgoHelper()
			code, out := callOrigin(http.MethodPost, "/v1/leaderboard-row-read", bearer, map[string]any{"row_id": "6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b"})
			Expect(string(out)).NotTo(ContainSubstring(bearer[len(bearer)-16:]), "the answer names the token")
			return code
		}
		Expect(rowRead(tok)).To(Equal(http.StatusNotFound), "signed in: the row is missing")
		for name, bad := range map[string]string{"tampered": tampered, "signed by another key under a published kid": underListedKid, "signed by a key the JWK Set does not list": unlistedKey} {
			Expect(rowRead(bad)).To(Equal(http.StatusUnauthorized), name)
		}
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

// Harbor's hosted client, request by request as harbor/hosted/{api,secrets,
// registry_credentials,preflight}.py, harbor/hub/leaderboards.py and
// harbor/auth/tokens.py build them: every URL is {base}/functions/v1/<name>; the exchange
// sends only the publishable key (header apikey) and {"api_key"}; every other call sends
// only "Authorization: Bearer <access token>", no org (the key's creator's default
// organization), and reads the fields below. A 401 makes Harbor re-exchange the key; 401
// or 403 at the exchange is "key rejected". {base} is the one origin: the exchange,
// secrets and registry credentials reach the operator, preflight and the leaderboard
// reads the read tier (its own process, as podium-read), which checks the access token
// with the operator's published keys and asks the operator whether its key is revoked.
var _ = Describe("Harbor's hosted client, as it sends", func() {
	harbor := func(method, path, bearer string, body any) (int, []byte) {
		GinkgoHelper()
		var rd io.Reader
		if body != nil {
			b, err := json.Marshal(body)
			Expect(err).NotTo(HaveOccurred())
			rd = bytes.NewReader(b)
		}
		req, err := http.NewRequestWithContext(ctx, method, suite.Origin+"/functions/v1"+path, rd)
		Expect(err).NotTo(HaveOccurred())
		if body != nil {
			req.Header.Set("Content-Type", "application/json") // httpx's json=
		}
		if bearer == "" {
			req.Header.Set("apikey", "sb_publishable_harbor-default") // SUPABASE_PUBLISHABLE_KEY
		} else {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := http.DefaultClient.Do(req)
		Expect(err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		out, err := io.ReadAll(resp.Body)
		Expect(err).NotTo(HaveOccurred())
		return resp.StatusCode, out
	}
	// errorOf is what harbor.hosted.api.error_details reads.
	type harborError struct {
		Error struct {
			Code     string         `json:"code"`
			Message  string         `json:"message"`
			Existing map[string]any `json:"existing"`
		} `json:"error"`
	}

	It("exchanges the key, then stores, lists and deletes secrets and registry credentials, runs preflight and reads a private board", func() {
		org := newOrg("harbor-hosted")
		owner := newPerson(org, "owner", "podium-org-owner")
		k := createKey(owner, map[string]any{"name": "harbor"})
		lb, rows := privateBoard(org)

		By("the read tier behind the origin runs as podium-read, which may get no Secret")
		Expect(mayGetSecrets(testenv.ReadTierUser)).To(BeFalse())

		By("exchange_api_key: 200 {access_token, expires_in} with expires_in past Harbor's 20 s skew")
		code, out := harbor(http.MethodPost, "/api-key-exchange", "", map[string]any{"api_key": k.Key})
		Expect(code).To(Equal(http.StatusOK), string(out))
		tok := decode[struct {
			AccessToken string  `json:"access_token"`
			ExpiresIn   float64 `json:"expires_in"`
		}](out)
		Expect(tok.AccessToken).NotTo(BeEmpty())
		Expect(tok.ExpiresIn).To(BeNumerically(">", 20))
		bearer := tok.AccessToken

		By("require_user_id: sub_from_access_token reads sub from the unverified JWT")
		Expect(harborSub(bearer)).To(Equal(owner.User))

		By("set_hosted_secret {env_var, value, provider}: the record _secret_from_row reads")
		secretKeys := []string{"created_at", "env_var", "id", "job_id", "last_used_at", "provider", "scope", "status", "value_last4"}
		code, out = harbor(http.MethodPost, "/secrets", bearer, map[string]any{"env_var": "ANTHROPIC_API_KEY", "value": "sk-ant-harbor-hosted-0001", "provider": "anthropic"})
		Expect(code).To(Equal(http.StatusCreated), string(out))
		Expect(keysOf(out)).To(ContainElements(secretKeys))
		first := decode[struct{ ID, Scope, Status string }](out)
		Expect(first.Scope).To(Equal("user"))
		Expect(first.Status).To(Equal("active"))

		By("409 replacement_required with error.existing {id, value_last4}; confirmed with supersede_secret_id")
		code, out = harbor(http.MethodPost, "/secrets", bearer, map[string]any{"env_var": "ANTHROPIC_API_KEY", "value": "sk-ant-harbor-hosted-0002"})
		Expect(code).To(Equal(http.StatusConflict), string(out))
		conflict := decode[harborError](out).Error
		Expect(conflict.Code).To(Equal("replacement_required"))
		Expect(conflict.Message).NotTo(BeEmpty())
		Expect(conflict.Existing).To(HaveKeyWithValue("id", first.ID))
		Expect(conflict.Existing).To(HaveKeyWithValue("value_last4", "0001"))
		code, out = harbor(http.MethodPost, "/secrets", bearer, map[string]any{"env_var": "ANTHROPIC_API_KEY", "value": "sk-ant-harbor-hosted-0002", "supersede_secret_id": first.ID})
		Expect(code).To(Equal(http.StatusCreated), string(out))
		Expect(decode[struct {
			Last4 string `json:"value_last4"`
		}](out).Last4).To(Equal("0002"))

		By("list_hosted_secrets: GET ?status=active and ?status=all, read under secrets")
		code, out = harbor(http.MethodGet, "/secrets?status=active", bearer, nil)
		Expect(code).To(Equal(http.StatusOK), string(out))
		active := decode[struct{ Secrets []json.RawMessage }](out).Secrets
		Expect(active).To(HaveLen(1))
		Expect(keysOf(active[0])).To(ContainElements(secretKeys))
		code, out = harbor(http.MethodGet, "/secrets?status=all", bearer, nil)
		Expect(code).To(Equal(http.StatusOK), string(out))
		Expect(decode[struct{ Secrets []json.RawMessage }](out).Secrets).To(HaveLen(2))

		By("run_hosted_preflight: POST {secrets url}/preflight with dump_hosted_config's config")
		preflight := func() map[string]any {
			GinkgoHelper()
			code, out := harbor(http.MethodPost, "/secrets/preflight", bearer, map[string]any{
				"config": map[string]any{
					"job_name": "preflight", "n_attempts": 1, "n_concurrent_trials": 4,
					"tasks":    []map[string]any{{"name": "harbor/task", "ref": "latest"}},
					"datasets": []map[string]any{},
					"agents": []map[string]any{
						{"name": "claude-code", "model_name": "anthropic/claude-opus-4-1", "secrets": []string{"ANTHROPIC_API_KEY"}, "kwargs": map[string]any{}, "env": map[string]any{}},
						{"name": "oracle", "kwargs": map[string]any{}, "env": map[string]any{}},
					},
					"environment": map[string]any{"env": map[string]any{}}, "verifier": map[string]any{"env": map[string]any{}},
					"retry": map[string]any{"exclude_exceptions": nil},
				},
				"declared_env_vars": []string{"KAGGLE_API_KEY"},
				"organization":      org,
			})
			Expect(code).To(Equal(http.StatusOK), string(out))
			return decode[map[string]any](out)
		}
		report := preflight()
		Expect(report).To(HaveKey("ok"))
		Expect(report).To(HaveKey("task_requirements"))
		Expect(report).To(HaveKey("agents"), "the older field, for clients before agent_requirements")
		reqs := report["agent_requirements"].([]any)
		Expect(reqs).To(HaveLen(2))
		for _, r := range reqs {
			Expect(r).To(And(HaveKey("agent"), HaveKey("model"), HaveKey("provider"), HaveKey("configured"), HaveKey("missing_env_vars")))
		}
		Expect(reqs[0]).To(HaveKeyWithValue("agent", "claude-code"))
		Expect(reqs[1]).To(And(HaveKeyWithValue("agent", "oracle"), HaveKeyWithValue("configured", true)), "an agent without a model needs nothing")
		// The stored secret counts once the operator has made it usable.
		Eventually(func() any { return preflight()["agent_requirements"].([]any)[0] }).Should(HaveKeyWithValue("configured", true))

		By("delete_hosted_secret {env_var, purge}: {affected}; again 0 (Harbor prints 'No active secret')")
		code, out = harbor(http.MethodDelete, "/secrets", bearer, map[string]any{"env_var": "ANTHROPIC_API_KEY", "purge": false})
		Expect(code).To(Equal(http.StatusOK), string(out))
		Expect(string(out)).To(MatchJSON(`{"affected": 1}`))
		code, out = harbor(http.MethodDelete, "/secrets", bearer, map[string]any{"env_var": "ANTHROPIC_API_KEY", "purge": false})
		Expect(code).To(Equal(http.StatusOK), string(out))
		Expect(string(out)).To(MatchJSON(`{"affected": 0}`))
		Expect(preflight()["agent_requirements"].([]any)[0]).To(And(
			HaveKeyWithValue("configured", false), HaveKeyWithValue("missing_env_vars", ConsistOf("ANTHROPIC_API_KEY"))))

		By("add_registry_credential {registry_host, display_name, service_account_json (json.dumps of the key)}")
		sa := `{"type": "service_account", "project_id": "p", "private_key": "-----BEGIN PRIVATE KEY-----\nharbor-hosted-canary\n-----END PRIVATE KEY-----\n", "client_email": "puller@p.iam.gserviceaccount.com"}`
		add := map[string]any{"registry_host": "us-east1-docker.pkg.dev", "display_name": "test puller", "service_account_json": sa}
		code, out = harbor(http.MethodPost, "/registry-credentials", bearer, add)
		Expect(code).To(Equal(http.StatusCreated), string(out))
		regKeys := []string{"created_at", "display_name", "fingerprint", "id", "last_used_at", "provider", "registry_host", "status"}
		Expect(keysOf(out)).To(ContainElements(regKeys))
		cred := decode[struct{ ID, Provider, Status string }](out)
		Expect(cred.Provider).To(Equal("gar"))
		Expect(string(out)).NotTo(ContainSubstring("harbor-hosted-canary"))

		By("409 replacement_required with error.existing {id, fingerprint}; confirmed with supersede_credential_id")
		code, out = harbor(http.MethodPost, "/registry-credentials", bearer, add)
		Expect(code).To(Equal(http.StatusConflict), string(out))
		regConflict := decode[harborError](out).Error
		Expect(regConflict.Code).To(Equal("replacement_required"))
		Expect(regConflict.Existing).To(And(HaveKeyWithValue("id", cred.ID), HaveKey("fingerprint")))
		confirm := map[string]any{"supersede_credential_id": cred.ID}
		for k, v := range add {
			confirm[k] = v
		}
		code, out = harbor(http.MethodPost, "/registry-credentials", bearer, confirm)
		Expect(code).To(Equal(http.StatusCreated), string(out))
		second := decode[struct{ ID string }](out).ID

		By("list_registry_credentials: GET ?status=active / ?status=all under credentials; delete by display name resolves an id from it")
		code, out = harbor(http.MethodGet, "/registry-credentials?status=active", bearer, nil)
		Expect(code).To(Equal(http.StatusOK), string(out))
		creds := decode[struct{ Credentials []json.RawMessage }](out).Credentials
		Expect(creds).To(HaveLen(1))
		Expect(keysOf(creds[0])).To(ContainElements(regKeys))
		Expect(decode[struct {
			ID          string
			DisplayName string `json:"display_name"`
		}](creds[0])).To(And(HaveField("ID", second), HaveField("DisplayName", "test puller")))
		code, out = harbor(http.MethodGet, "/registry-credentials?status=all", bearer, nil)
		Expect(code).To(Equal(http.StatusOK), string(out))
		Expect(decode[struct{ Credentials []json.RawMessage }](out).Credentials).To(HaveLen(2))

		By("delete_registry_credential {credential_id, purge}: {credential_id, affected, purged}, as Harbor's hub answers")
		code, out = harbor(http.MethodDelete, "/registry-credentials", bearer, map[string]any{"credential_id": second, "purge": false})
		Expect(code).To(Equal(http.StatusOK), string(out))
		Expect(string(out)).To(MatchJSON(`{"credential_id": "` + second + `", "affected": 1, "purged": false}`))
		code, out = harbor(http.MethodDelete, "/registry-credentials", bearer, map[string]any{"credential_id": cred.ID, "purge": true})
		Expect(code).To(Equal(http.StatusOK), string(out))
		Expect(string(out)).To(MatchJSON(`{"credential_id": "` + cred.ID + `", "affected": 1, "purged": true}`))

		By("the leaderboard client sends the same bearer to the read: accepted (a missing row is 404, not 401)")
		code, out = harbor(http.MethodPost, "/leaderboard-row-read", bearer, map[string]any{"row_id": "6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b"})
		Expect(code).To(Equal(http.StatusNotFound), string(out))
		Expect(decode[harborError](out).Error.Code).To(Equal("not_found"))

		By("show / export, list_rows and get_row of a private board with the access token, at the read tier")
		show := map[string]any{"package": lb.Spec.Package, "name": lb.Spec.Name}
		Eventually(func(g Gomega) {
			code, out := harbor(http.MethodPost, "/leaderboard-read", bearer, show)
			g.Expect(code).To(Equal(http.StatusOK), string(out))
			g.Expect(decode[boardPage](out).Rows).To(HaveLen(2))
		}).Should(Succeed())
		code, out = harbor(http.MethodPost, "/leaderboard-read", bearer, map[string]any{"leaderboard_id": string(lb.UID), "page": 2, "page_size": 1})
		Expect(code).To(Equal(http.StatusOK), string(out))
		page := decode[boardPage](out)
		Expect(page.Rows).To(HaveLen(1))
		Expect(page.Pagination.Total).To(Equal(2))
		Expect(page.Pagination.TotalPages).To(Equal(2))
		code, out = harbor(http.MethodPost, "/leaderboard-row-read", bearer, map[string]any{"row_id": string(rows[0].UID)})
		Expect(code).To(Equal(http.StatusOK), string(out))
		Expect(decode[struct{ Row struct{ ID string } }](out).Row.ID).To(Equal(string(rows[0].UID)))

		By("a private board is a 404 to the anonymous, as a missing one")
		code, out = harbor(http.MethodPost, "/leaderboard-read", "", show)
		Expect(code).To(Equal(http.StatusNotFound), string(out))

		By("the raw API key as the bearer of a read: the read tier looks it up at the operator")
		code, out = harbor(http.MethodPost, "/leaderboard-read", k.Key, show)
		Expect(code).To(Equal(http.StatusOK), string(out))
		Expect(decode[boardPage](out).Rows).To(HaveLen(2))

		By("the split is real: the operator serves no public read, the read tier no secrets")
		code, _ = callAt(http.DefaultClient, op.BaseURL, http.MethodPost, "/functions/v1/leaderboard-read", bearer, show)
		Expect(code).To(Equal(http.StatusNotFound))
		code, _ = callAt(http.DefaultClient, suite.Read.BaseURL, http.MethodGet, "/functions/v1/secrets?status=active", bearer, nil)
		Expect(code).To(Equal(http.StatusNotFound))

		By("after revoke: 401 on the bearer (Harbor re-exchanges), then 401 at the exchange (Harbor: key rejected)")
		code, _ = call(http.MethodDelete, "/v1/api-keys", owner.Token, map[string]any{"id": k.ID})
		Expect(code).To(Equal(http.StatusOK))
		Eventually(func() int { c, _ := harbor(http.MethodGet, "/secrets?status=active", bearer, nil); return c }).Should(Equal(http.StatusUnauthorized))
		By("the read tier refuses the revoked key's token and the key itself within seconds")
		for _, b := range []string{bearer, k.Key} {
			Eventually(func() int { c, _ := harbor(http.MethodPost, "/leaderboard-read", b, show); return c }).
				WithTimeout(10 * time.Second).Should(Equal(http.StatusUnauthorized))
		}
		code, out = harbor(http.MethodPost, "/api-key-exchange", "", map[string]any{"api_key": k.Key})
		Expect(code).To(BeElementOf(http.StatusUnauthorized, http.StatusForbidden), string(out))
		Expect(string(out)).NotTo(ContainSubstring(k.Key[len(k.Key)-12:]))
	})
})

// harborSub does what Harbor's sub_from_access_token does with PyJWT's
// jwt.decode(token, options={"verify_signature": False}): three parts split on '.', a
// header and a payload that base64url-decode (Python pads them) to JSON objects, a kid
// that is a string, and a non-empty string sub, Harbor's user id.
func harborSub(token string) string {
	GinkgoHelper()
	parts := strings.Split(token, ".")
	Expect(parts).To(HaveLen(3), "a JWT in compact form")
	object := func(part string) map[string]any {
		b, err := base64.URLEncoding.DecodeString(part + strings.Repeat("=", (4-len(part)%4)%4))
		Expect(err).NotTo(HaveOccurred())
		var m map[string]any
		Expect(json.Unmarshal(b, &m)).To(Succeed(), string(b))
		return m
	}
	Expect(object(parts[0])).To(HaveKeyWithValue("kid", BeAssignableToTypeOf("")))
	sub, ok := object(parts[1])["sub"].(string)
	Expect(ok).To(BeTrue(), "sub is a string")
	Expect(sub).NotTo(BeEmpty())
	return sub
}

// boardPage is what Harbor's leaderboard client reads of a read.
type boardPage struct {
	Rows       []json.RawMessage `json:"rows"`
	Pagination struct {
		Total      int `json:"total"`
		TotalPages int `json:"total_pages"`
	} `json:"pagination"`
}

// privateBoard makes, in org, a dataset and a private board of it with two rows.
func privateBoard(org string) (*hubv1alpha1.Leaderboard, []*hubv1alpha1.LeaderboardRow) {
	GinkgoHelper()
	Expect(k8sClient.Create(ctx, &hubv1alpha1.Dataset{ObjectMeta: metav1.ObjectMeta{Namespace: org, Name: "ds"}})).To(Succeed())
	lb := &hubv1alpha1.Leaderboard{
		ObjectMeta: metav1.ObjectMeta{Namespace: org, Name: "private"},
		Spec: hubv1alpha1.LeaderboardSpec{
			Package: org + "/ds", Name: "private", Title: "Private", Visibility: hubv1alpha1.VisibilityPrivate,
			Columns: []hubv1alpha1.Column{{ID: "score", Header: "Score", Accessor: "metrics.score", Type: hubv1alpha1.ColumnNumber}},
			RankBy:  []hubv1alpha1.RankRule{{Accessor: "metrics.score", Direction: hubv1alpha1.Descending}},
		},
	}
	Expect(k8sClient.Create(ctx, lb)).To(Succeed())
	var rows []*hubv1alpha1.LeaderboardRow
	for i, score := range []string{"2", "1"} {
		r := &hubv1alpha1.LeaderboardRow{
			ObjectMeta: metav1.ObjectMeta{Namespace: org, Name: fmt.Sprintf("r%d", i)},
			Spec:       hubv1alpha1.LeaderboardRowSpec{Leaderboard: lb.Name, Metrics: &apiextensionsv1.JSON{Raw: []byte(`{"score":` + score + `}`)}},
		}
		Expect(k8sClient.Create(ctx, r)).To(Succeed())
		rows = append(rows, r)
	}
	return lb, rows
}

// mayGetSecrets asks the apiserver whether user may get Secrets in the operator's
// namespace.
func mayGetSecrets(user string) bool {
	GinkgoHelper()
	sar, err := clientset.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{User: user, ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: testenv.DeliveryNamespace, Verb: "get", Resource: "secrets",
		}},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	return sar.Status.Allowed
}
