package secrets_test

import (
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/preflight"
)

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
				{Agent: "claude", Model: "anthropic/claude-sonnet-4", Provider: "anthropic", Configured: true, MissingEnvVars: []string{}},
				{Agent: "codex", Model: "openai/gpt-5", Provider: "openai", MissingEnvVars: []string{"OPENAI_API_KEY"}},
				{Agent: "claude-unlisted", Model: "anthropic/claude-opus-4", Provider: "anthropic", MissingEnvVars: []string{"ANTHROPIC_API_KEY"}},
				{Agent: "gem", Model: "gemini/gemini-2.5-pro", Provider: "gemini", Configured: true, MissingEnvVars: []string{}},
			}))
			g.Expect(res.Agents).To(Equal(res.AgentRequirements), "the legacy field mirrors agent_requirements")
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
			{alice.Token, map[string]any{"config": map[string]any{"agents": []any{map[string]any{"secrets": []string{"BAD NAME"}}}}}, 422, "validation_failed"},
			{bob.Token, map[string]any{"config": map[string]any{}, "organization": acme.Name}, 403, "forbidden"},
		} {
			code, body := call(http.MethodPost, "/v1/secrets/preflight", tc.token, tc.body)
			Expect(code).To(Equal(tc.status), string(body))
			Expect(decode[apiError](body).Error.Code).To(Equal(tc.code))
		}
	})
})
