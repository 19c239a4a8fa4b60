package secrets_test

import (
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/preflight"
	"podium.dev/podium/internal/testenv"
)

// agentReq is an agent's expected verdict: model and provider "" stand for null.
func agentReq(agent, model, provider string, configured bool, missing ...[]string) preflight.AgentRequirement {
	r := preflight.AgentRequirement{Agent: agent, Configured: configured, MissingEnvVars: []string{}, MissingAnyOf: [][]string{}}
	if model != "" {
		r.Model = &model
	}
	if provider != "" {
		r.Provider = &provider
	}
	for _, m := range missing {
		r.MissingAnyOf = append(r.MissingAnyOf, m)
		r.MissingEnvVars = append(r.MissingEnvVars, m[0])
	}
	return r
}

var _ = Describe("POST /v1/secrets/preflight", func() {
	var (
		acme  org
		alice person
	)
	BeforeEach(func() {
		acme = newOrg("pre")
		alice = newPerson(acme, "alice", "podium-org-member")
		ds := &hubv1alpha1.Dataset{
			ObjectMeta: metav1.ObjectMeta{Namespace: acme.Name, Name: "swe"},
			Spec: hubv1alpha1.DatasetSpec{Versions: []hubv1alpha1.DatasetVersion{{
				ID: "0b8f0d6e-3c7a-4d59-9c1e-2f4f8a7b6c51", Tag: "1.0", CreatedAt: metav1.Now(),
				Tasks: []hubv1alpha1.DatasetTask{
					{Name: "fix-bug", RequiredEnv: []hubv1alpha1.TaskEnvVar{{Name: "GITHUB_TOKEN"}, {Name: "HTTPS_PROXY", Phase: "environment"}}},
					{Name: "deploy", RequiredEnv: []hubv1alpha1.TaskEnvVar{{Name: "MODAL_TOKEN"}, {Name: "GITHUB_TOKEN"}}},
				},
			}}},
		}
		Expect(k8sClient.Create(ctx, ds)).To(Succeed())
		for env, value := range map[string]string{"ANTHROPIC_API_KEY": "sk-ant-pre-1234", "GITHUB_TOKEN": "ghp-pre-5678", "MODAL_TOKEN": "modal-pre-0000"} {
			code, body := store(alice, map[string]any{"env_var": env, "value": value})
			Expect(code).To(Equal(http.StatusCreated), string(body))
		}
	})

	It("checks every agent and task requirement", func() {
		req := map[string]any{
			"config": map[string]any{
				"agents": []any{
					map[string]any{"name": "claude", "model_name": "anthropic/claude-sonnet-4", "secrets": []string{"ANTHROPIC_API_KEY"}},
					map[string]any{"name": "codex", "model_name": "openai/gpt-5", "secrets": []string{"OPENAI_API_KEY"}},
					map[string]any{"name": "claude-unlisted", "model_name": "anthropic/claude-opus-4"},
					map[string]any{"name": "gem", "model_name": "gemini/gemini-2.5-pro", "secrets": []string{"GEMINI_API_KEY"}, "kwargs": map[string]any{"t": 1}},
				},
				"datasets":     []any{map[string]any{"name": acme.Name + "/swe", "version": "latest"}},
				"n_concurrent": 4,
				"orchestrator": map[string]any{"type": "local"},
			},
			"declared_env_vars": []string{"GEMINI_API_KEY", "HTTPS_PROXY"},
		}
		Eventually(func(g Gomega) { // the Dataset reaches the cache a little after its creation
			code, body := call(http.MethodPost, "/v1/secrets/preflight", alice.Token, req)
			g.Expect(code).To(Equal(http.StatusOK), string(body))
			res := decode[preflight.Result](body)
			g.Expect(res.Warnings).To(BeEmpty())
			g.Expect(res.OK).To(BeFalse())
			g.Expect(res.Organization).To(Equal(acme.Name))
			g.Expect(res.AgentRequirements).To(Equal([]preflight.AgentRequirement{
				agentReq("claude", "anthropic/claude-sonnet-4", "anthropic", true),
				agentReq("codex", "openai/gpt-5", "openai", false, []string{"OPENAI_API_KEY"}),
				agentReq("claude-unlisted", "anthropic/claude-opus-4", "anthropic", false, []string{"ANTHROPIC_API_KEY"}),
				agentReq("gem", "gemini/gemini-2.5-pro", "gemini", true),
			}))
			g.Expect(res.Agents).To(HaveLen(4))
			for i, a := range res.Agents {
				r := res.AgentRequirements[i]
				g.Expect(a).To(Equal(preflight.LegacyAgent{Agent: r.Agent, Model: r.Model, Satisfied: r.Configured, Missing: r.MissingAnyOf}),
					"the legacy field keeps its own shape over the same verdicts")
			}
			g.Expect(res.Providers).To(Equal([]preflight.ProviderResult{
				{Provider: "anthropic", EnvVars: []string{"ANTHROPIC_API_KEY"}, Configured: true},
				{Provider: "openai", EnvVars: []string{"OPENAI_API_KEY"}},
				{Provider: "gemini", EnvVars: []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"}, Configured: true},
			}))
			g.Expect(res.TaskRequirements).To(Equal([]preflight.TaskRequirement{
				{EnvVar: "GITHUB_TOKEN", Phase: "agent", TaskCount: 2, SampleTasks: []string{"deploy", "fix-bug"}, Configured: true, Supplyable: true},
				{EnvVar: "HTTPS_PROXY", Phase: "environment", TaskCount: 1, SampleTasks: []string{"fix-bug"}, Configured: true, Supplyable: false},
				{EnvVar: "MODAL_TOKEN", Phase: "agent", TaskCount: 1, SampleTasks: []string{"deploy"}, Configured: true, Supplyable: false},
			}))
		}).Should(Succeed())
	})

	It("is ok when everything is met, and reports datasets it cannot resolve", func() {
		ok := map[string]any{"config": map[string]any{"agents": []any{
			map[string]any{"name": "claude", "model_name": "anthropic/claude-sonnet-4", "secrets": []string{"ANTHROPIC_API_KEY", "GITHUB_TOKEN"}},
		}}}
		code, body := call(http.MethodPost, "/v1/secrets/preflight", alice.Token, ok)
		Expect(code).To(Equal(http.StatusOK), string(body))
		Expect(decode[preflight.Result](body).OK).To(BeTrue())

		missing := map[string]any{"config": map[string]any{"datasets": []any{
			map[string]any{"name": acme.Name + "/nope"},
			map[string]any{"name": acme.Name + "/swe", "version": "9.9"},
			map[string]any{"name": "elsewhere/swe"},
		}}}
		Eventually(func(g Gomega) {
			code, body := call(http.MethodPost, "/v1/secrets/preflight", alice.Token, missing)
			g.Expect(code).To(Equal(http.StatusOK), string(body))
			res := decode[preflight.Result](body)
			g.Expect(res.OK).To(BeFalse())
			g.Expect(res.Warnings).To(ConsistOf(
				HaveField("Field", "config.datasets[0].name"),
				HaveField("Field", "config.datasets[1].version"),
				HaveField("Field", "config.datasets[2].name"),
			))
		}).Should(Succeed())
	})

	It("reads versions from ref, tasks listed directly, and answers in the shapes existing clients read", func() {
		// A second version, newer: latest. The tag 1.0 keeps the older one.
		ds := &hubv1alpha1.Dataset{ObjectMeta: metav1.ObjectMeta{Namespace: acme.Name, Name: "swe"}}
		Expect(testenv.Update(ctx, k8sClient, ds, func(ds *hubv1alpha1.Dataset) {
			ds.Spec.Versions = append(ds.Spec.Versions, hubv1alpha1.DatasetVersion{
				ID: "1c9a1e7f-4d8b-4e6a-8d2f-3a5b9c8d7e62", Tag: "2.0", CreatedAt: metav1.NewTime(time.Now().Add(time.Hour)),
				Tasks: []hubv1alpha1.DatasetTask{{Name: "new-task", RequiredEnv: []hubv1alpha1.TaskEnvVar{{Name: "WANDB_API_KEY"}}}},
			})
		})).To(Succeed())
		envs := func(body map[string]any) (preflight.Result, map[string]any) {
			var res preflight.Result
			var raw map[string]any
			Eventually(func(g Gomega) {
				code, out := call(http.MethodPost, "/v1/secrets/preflight", alice.Token, body)
				g.Expect(code).To(Equal(http.StatusOK), string(out))
				res = decode[preflight.Result](out)
				raw = decode[map[string]any](out)
				g.Expect(res.Warnings).NotTo(ContainElement(HaveField("Message", ContainSubstring("not found"))))
			}).Should(Succeed())
			return res, raw
		}
		names := func(res preflight.Result) []string {
			var out []string
			for _, t := range res.TaskRequirements {
				out = append(out, t.EnvVar)
			}
			return out
		}
		By("ref names the version (a dataset given only by ref is not checked against latest)")
		res, _ := envs(map[string]any{"config": map[string]any{"datasets": []any{map[string]any{"name": acme.Name + "/swe", "ref": "1.0"}}}})
		Expect(names(res)).To(ConsistOf("GITHUB_TOKEN", "HTTPS_PROXY", "MODAL_TOKEN"))
		res, _ = envs(map[string]any{"config": map[string]any{"datasets": []any{map[string]any{"name": acme.Name + "/swe"}}}})
		Expect(names(res)).To(ConsistOf("WANDB_API_KEY"))

		By("tasks listed directly: a dataset's task at a ref; a task from elsewhere is a warning only")
		res, _ = envs(map[string]any{"config": map[string]any{"tasks": []any{
			map[string]any{"dataset": acme.Name + "/swe", "name": "deploy", "ref": "1.0"},
			map[string]any{"path": "./tasks/local-task"},
		}}})
		Expect(res.TaskRequirements).To(ConsistOf(
			HaveField("EnvVar", "GITHUB_TOKEN"), HaveField("EnvVar", "MODAL_TOKEN")))
		Expect(res.Warnings).To(ConsistOf(HaveField("Field", "config.tasks[1]")))
		res, _ = envs(map[string]any{"config": map[string]any{"tasks": []any{
			map[string]any{"dataset": acme.Name + "/swe", "name": "no-such-task", "ref": "1.0"},
		}}})
		Expect(res.OK).To(BeFalse())
		Expect(res.Warnings).To(ConsistOf(HaveField("Field", "config.tasks[0].name")))

		By("legacy agents keep {agent, model, satisfied, missing}; alternatives are a list; no model is null")
		_, raw := envs(map[string]any{"config": map[string]any{"agents": []any{
			map[string]any{"name": "gem", "model_name": "gemini/gemini-2.5-pro"},
			map[string]any{"name": "oracle"},
		}}})
		legacy := raw["agents"].([]any)
		Expect(legacy[0]).To(Equal(map[string]any{"agent": "gem", "model": "gemini/gemini-2.5-pro", "satisfied": false,
			"missing": []any{[]any{"GEMINI_API_KEY", "GOOGLE_API_KEY"}}}))
		Expect(legacy[1]).To(Equal(map[string]any{"agent": "oracle", "model": nil, "satisfied": true, "missing": []any{}}))
		reqs := raw["agent_requirements"].([]any)
		Expect(reqs[0]).To(HaveKeyWithValue("missing_env_vars", []any{"GEMINI_API_KEY"}))
		Expect(reqs[0]).To(HaveKeyWithValue("missing_any_of", []any{[]any{"GEMINI_API_KEY", "GOOGLE_API_KEY"}}))
		Expect(reqs[1]).To(And(HaveKeyWithValue("model", BeNil()), HaveKeyWithValue("provider", BeNil())))

		By("ref and version naming different versions is an error")
		code, out := call(http.MethodPost, "/v1/secrets/preflight", alice.Token, map[string]any{"config": map[string]any{
			"datasets": []any{map[string]any{"name": acme.Name + "/swe", "ref": "1.0", "version": "2.0"}}}})
		Expect(code).To(Equal(http.StatusUnprocessableEntity), string(out))
		Expect(string(out)).To(ContainSubstring("config.datasets[0].version"))
	})

	It("refuses callers and bodies it cannot serve", func() {
		other := newOrg("pre-other")
		bob := newPerson(other, "bob", "podium-org-owner")
		for _, tc := range []struct {
			token  string
			body   any
			status int
			code   string
		}{
			{"", map[string]any{"config": map[string]any{}}, 401, "unauthenticated"},
			{alice.Token, map[string]any{"config": map[string]any{}, "extra": 1}, 400, "bad_request"},
			{alice.Token, map[string]any{}, 400, "bad_request"},
			{alice.Token, map[string]any{"config": map[string]any{"agents": []any{map[string]any{"name": "a", "secrets": []string{"BAD NAME"}}}}}, 422, "validation_failed"},
			{bob.Token, map[string]any{"config": map[string]any{}, "organization": acme.Name}, 403, "forbidden"},
		} {
			code, body := call(http.MethodPost, "/v1/secrets/preflight", tc.token, tc.body)
			Expect(code).To(Equal(tc.status), string(body))
			Expect(decode[apiError](body).Error.Code).To(Equal(tc.code))
		}
	})
})
