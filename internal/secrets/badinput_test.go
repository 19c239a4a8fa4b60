package secrets_test

import (
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// Bad input found in the attack pass: each is a clear 4xx in the error envelope naming
// the field, never a silent change of what was sent (docs/secrets.md, "Validation").
var _ = Describe("Bad input to the secrets API", func() {
	var (
		acme  org
		alice person
	)
	BeforeEach(func() {
		acme = newOrg("badin")
		alice = newPerson(acme, "alice", "podium-org-owner")
	})

	expectError := func(code int, body []byte, status int, errCode, field string) {
		ExpectWithOffset(1, code).To(Equal(status), string(body))
		e := decode[apiError](body)
		ExpectWithOffset(1, e.Error.Code).To(Equal(errCode), string(body))
		if field != "" {
			ExpectWithOffset(1, e.Error.Details).To(ContainElement(HaveField("Field", field)), string(body))
		}
	}

	It("refuses duplicate keys and keys in another letter case on every endpoint", func() {
		cases := []struct{ method, path, body, field string }{
			{http.MethodPost, "/v1/secrets", `{"env_var":"A_KEY","value":"first-value-1","value":"second-value-2"}`, "value"},
			{http.MethodPost, "/v1/secrets", `{"ENV_VAR":"A_KEY","value":"some-value-123"}`, "ENV_VAR"},
			{http.MethodPost, "/v1/secrets", `{"env_var":"A_KEY","Value":"some-value-123"}`, "Value"},
			{http.MethodDelete, "/v1/secrets", `{"env_var":"A_KEY","env_var":"B_KEY"}`, "env_var"},
			{http.MethodDelete, "/v1/secrets", `{"Env_Var":"A_KEY"}`, "Env_Var"},
			{http.MethodPost, "/v1/secrets/preflight", `{"config":{},"config":{"agents":[]}}`, "config"},
			{http.MethodPost, "/v1/secrets/preflight", `{"config":{"agents":[{"name":"a","name":"b"}]}}`, "config.agents[0].name"},
			{http.MethodPost, "/v1/secrets/preflight", `{"Config":{}}`, "Config"},
			{http.MethodPost, "/v1/leaderboard-read", `{"package":"a/b","name":"x","name":"y"}`, "name"},
			{http.MethodPost, "/v1/leaderboard-read", `{"package":"a/b","Name":"x"}`, "Name"},
		}
		for _, tc := range cases {
			code, body := call(tc.method, tc.path, alice.Token, tc.body)
			expectError(code, body, http.StatusBadRequest, "bad_request", tc.field)
		}
		Expect(hostedSecrets(acme)).To(BeEmpty())
	})

	It("never stores a value other than the one sent: invalid UTF-8 and lone surrogates are refused", func() {
		for _, body := range []string{
			"{\"env_var\":\"A_KEY\",\"value\":\"sk-abc\xff\xfedef-1234\"}",
			`{"env_var":"A_KEY","value":"sk-abc\ud800def-1234"}`,
			`{"env_var":"A_KEY","value":"sk-abcdef-1234\udc00"}`,
		} {
			code, out := call(http.MethodPost, "/v1/secrets", alice.Token, body)
			expectError(code, out, http.StatusUnprocessableEntity, "validation_failed", "value")
		}
		Expect(hostedSecrets(acme)).To(BeEmpty())
		Expect(valueSecrets(acme)).To(BeEmpty())

		By("a paired surrogate escape is text, stored as sent")
		code, out := store(alice, map[string]any{"env_var": "EMOJI_KEY", "value": "sk-smile-😀-ok-9876"})
		Expect(code).To(Equal(http.StatusCreated), string(out))
		Expect(decode[record](out).ValueLast4).To(Equal("9876"))
	})

	It("refuses control and formatting characters in provider, over HTTP and in the CRD alike", func() {
		for _, p := range []string{"anthropic\u202egnp", "open\u200bai", "a\u2028b", "a\x7fb", "a\tb"} {
			code, out := store(alice, map[string]any{"env_var": "P_KEY", "value": "sk-provider-1234", "provider": p})
			expectError(code, out, http.StatusUnprocessableEntity, "validation_failed", "provider")
			Expect(hubv1alpha1.ValidProviderText(p)).To(BeFalse())
			hs := declared(acme, "prov", alice.User, "P_KEY", "prov")
			hs.Spec.Provider = p
			err := k8sClient.Create(ctx, hs)
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%q: %v", p, err)
			Expect(err.Error()).To(ContainSubstring("spec.provider"))
		}
		for _, p := range []string{"anthropic", "Zhīpǔ 智谱", "together_ai (eu)"} {
			Expect(hubv1alpha1.ValidProviderText(p)).To(BeTrue())
			hs := declared(acme, "", alice.User, "P_KEY", "prov")
			hs.GenerateName, hs.Spec.Provider = "prov-", p
			Expect(k8sClient.Create(ctx, hs)).To(Succeed(), p)
		}
	})

	It("has one rule for job_id on POST, GET and DELETE: only with scope job", func() {
		code, out := store(alice, map[string]any{"env_var": "J_KEY", "value": "sk-job-1234", "job_id": jobA})
		expectError(code, out, http.StatusUnprocessableEntity, "validation_failed", "job_id")
		code, out = call(http.MethodGet, "/v1/secrets?job_id="+jobA, alice.Token, nil)
		expectError(code, out, http.StatusUnprocessableEntity, "validation_failed", "job_id")
		code, out = call(http.MethodDelete, "/v1/secrets", alice.Token, map[string]any{"env_var": "J_KEY", "job_id": jobA})
		expectError(code, out, http.StatusUnprocessableEntity, "validation_failed", "job_id")
		code, out = call(http.MethodGet, "/v1/secrets?scope=job&job_id="+jobA, alice.Token, nil)
		Expect(code).To(Equal(http.StatusOK), string(out))
	})

	It("refuses a query string it cannot parse instead of ignoring part of it", func() {
		for _, q := range []string{"?scope=user;x", "?scope=user&status=all;junk", "?scope=%zz"} {
			code, out := call(http.MethodGet, "/v1/secrets"+q, alice.Token, nil)
			expectError(code, out, http.StatusBadRequest, "bad_request", "")
		}
	})

	It("refuses preflight agents that are null, empty or have an empty model name", func() {
		for body, field := range map[string]string{
			`{"organization":"` + acme.Name + `","config":{"agents":[null]}}`:                           "config.agents[0]",
			`{"organization":"` + acme.Name + `","config":{"agents":[{}]}}`:                             "config.agents[0].name",
			`{"organization":"` + acme.Name + `","config":{"agents":[{"name":"a","model_name":""}]}}`:   "config.agents[0].model_name",
			`{"organization":"` + acme.Name + `","config":{"agents":[{"name":"","model_name":"x/y"}]}}`: "config.agents[0].name",
		} {
			code, out := call(http.MethodPost, "/v1/secrets/preflight", alice.Token, body)
			expectError(code, out, http.StatusUnprocessableEntity, "validation_failed", field)
		}
	})

	It("refuses a secretRef that is not an object name, at the CRD", func() {
		for _, name := range []string{"../third/third-secret", "Upper", "a/b", "-lead", "x y"} {
			err := k8sClient.Create(ctx, declared(acme, "bad-ref", alice.User, "R_KEY", name))
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%q: %v", name, err)
			Expect(err.Error()).To(ContainSubstring("spec.secretRef.name"))
		}
		hs := declared(acme, "bad-key", alice.User, "R_KEY", "ok")
		hs.Spec.SecretRef.Key = "../x"
		err := k8sClient.Create(ctx, hs)
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("spec.secretRef.key"))
		Expect(hostedSecrets(acme)).To(BeEmpty())
	})
})
