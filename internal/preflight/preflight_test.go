package preflight

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/providers"
)

func set(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

// req is the AgentRequirement of an agent: model and provider "" stand for null, each
// missing is one unmet requirement as its alternatives.
func req(agent, model, provider string, configured bool, missing ...[]string) AgentRequirement {
	r := AgentRequirement{Agent: agent, Configured: configured, MissingEnvVars: []string{}, MissingAnyOf: [][]string{}}
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

func TestEvaluate(t *testing.T) {
	c := providers.Defaults()
	claude := func(secrets ...string) Agent {
		return Agent{Name: "claude-code", ModelName: "anthropic/claude-sonnet-4", Secrets: secrets}
	}
	cases := []struct {
		name string
		in   Input
		want Result
	}{{
		name: "configured agent",
		in:   Input{Organization: "acme", Agents: []Agent{claude("ANTHROPIC_API_KEY")}, Active: set("ANTHROPIC_API_KEY")},
		want: Result{
			OK: true, Organization: "acme",
			Providers:         []ProviderResult{{Provider: "anthropic", EnvVars: []string{"ANTHROPIC_API_KEY"}, Configured: true}},
			AgentRequirements: []AgentRequirement{req("claude-code", "anthropic/claude-sonnet-4", "anthropic", true)},
		},
	}, {
		name: "agent missing its key",
		in:   Input{Agents: []Agent{claude("ANTHROPIC_API_KEY")}},
		want: Result{
			Providers:         []ProviderResult{{Provider: "anthropic", EnvVars: []string{"ANTHROPIC_API_KEY"}}},
			AgentRequirements: []AgentRequirement{req("claude-code", "anthropic/claude-sonnet-4", "anthropic", false, []string{"ANTHROPIC_API_KEY"})},
		},
	}, {
		name: "key in the org but not listed by the agent",
		in:   Input{Agents: []Agent{claude()}, Active: set("ANTHROPIC_API_KEY")},
		want: Result{
			Providers:         []ProviderResult{{Provider: "anthropic", EnvVars: []string{"ANTHROPIC_API_KEY"}, Configured: true}},
			AgentRequirements: []AgentRequirement{req("claude-code", "anthropic/claude-sonnet-4", "anthropic", false, []string{"ANTHROPIC_API_KEY"})},
		},
	}, {
		name: "declared var",
		in:   Input{Agents: []Agent{claude("ANTHROPIC_API_KEY")}, Declared: set("ANTHROPIC_API_KEY")},
		want: Result{
			OK:                true,
			Providers:         []ProviderResult{{Provider: "anthropic", EnvVars: []string{"ANTHROPIC_API_KEY"}, Configured: true}},
			AgentRequirements: []AgentRequirement{req("claude-code", "anthropic/claude-sonnet-4", "anthropic", true)},
		},
	}, {
		name: "either of two provider keys; a listed extra name that does not resolve is missing",
		in: Input{
			Agents: []Agent{{Name: "gem", ModelName: "gemini/gemini-2.5-pro", Secrets: []string{"GOOGLE_API_KEY", "EXTRA"}}},
			Active: set("GOOGLE_API_KEY"),
		},
		want: Result{
			Providers:         []ProviderResult{{Provider: "gemini", EnvVars: []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"}, Configured: true}},
			AgentRequirements: []AgentRequirement{req("gem", "gemini/gemini-2.5-pro", "gemini", false, []string{"EXTRA"})},
		},
	}, {
		name: "a provider with alternatives missing is one requirement: any one of them",
		in: Input{
			Agents: []Agent{{Name: "gem", ModelName: "gemini/gemini-2.5-pro", Secrets: []string{"GEMINI_API_KEY", "EXTRA"}}},
			Active: set("EXTRA"),
		},
		want: Result{
			Providers:         []ProviderResult{{Provider: "gemini", EnvVars: []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"}}},
			AgentRequirements: []AgentRequirement{req("gem", "gemini/gemini-2.5-pro", "gemini", false, []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"})},
		},
	}, {
		name: "agents are checked one by one",
		in: Input{
			Agents: []Agent{claude("ANTHROPIC_API_KEY"), {Name: "codex", ModelName: "openai/gpt-5", Secrets: []string{"ANTHROPIC_API_KEY"}}},
			Active: set("ANTHROPIC_API_KEY"),
		},
		want: Result{
			Providers: []ProviderResult{
				{Provider: "anthropic", EnvVars: []string{"ANTHROPIC_API_KEY"}, Configured: true},
				{Provider: "openai", EnvVars: []string{"OPENAI_API_KEY"}},
			},
			AgentRequirements: []AgentRequirement{
				req("claude-code", "anthropic/claude-sonnet-4", "anthropic", true),
				req("codex", "openai/gpt-5", "openai", false, []string{"OPENAI_API_KEY"}),
			},
		},
	}, {
		name: "unknown provider and a model without provider are warned about, not failed",
		in:   Input{Agents: []Agent{{Name: "local", ModelName: "vllm/qwen"}, {Name: "bare", ModelName: "gpt-5"}, {Name: "oracle"}}},
		want: Result{
			OK: true,
			AgentRequirements: []AgentRequirement{
				req("local", "vllm/qwen", "vllm", true),
				req("bare", "gpt-5", "", true),
				req("oracle", "", "", true),
			},
			Warnings: []Warning{
				{"config.agents[0].model_name", "provider vllm is not in the provider table; no credential was checked for it"},
				{"config.agents[1].model_name", "has no provider prefix (<provider>/<model>); no credential was checked for it"},
			},
		},
	}, {
		name: "a reserved name never reaches an agent",
		in:   Input{Agents: []Agent{{Name: "a", ModelName: "x/y", Secrets: []string{"HTTPS_PROXY"}}}, Declared: set("HTTPS_PROXY")},
		want: Result{
			AgentRequirements: []AgentRequirement{req("a", "x/y", "x", false, []string{"HTTPS_PROXY"})},
			Warnings:          []Warning{{"config.agents[0].model_name", "provider x is not in the provider table; no credential was checked for it"}},
		},
	}, {
		name: "task requirements: configured and supplyable",
		in: Input{
			Tasks: []TaskEnv{
				{"t1", "GITHUB_TOKEN", "agent"}, {"t2", "GITHUB_TOKEN", "agent"}, {"t1", "GITHUB_TOKEN", "verifier"},
				{"t3", "HTTPS_PROXY", "environment"}, {"t4", "MODAL_TOKEN", "agent"}, {"t5", "WANDB_KEY", "agent"},
			},
			Active:   set("GITHUB_TOKEN", "MODAL_TOKEN"),
			Declared: set("HTTPS_PROXY"),
		},
		want: Result{
			TaskRequirements: []TaskRequirement{
				{EnvVar: "GITHUB_TOKEN", Phase: "agent", TaskCount: 2, SampleTasks: []string{"t1", "t2"}, Configured: true, Supplyable: true},
				{EnvVar: "GITHUB_TOKEN", Phase: "verifier", TaskCount: 1, SampleTasks: []string{"t1"}, Configured: true, Supplyable: true},
				{EnvVar: "HTTPS_PROXY", Phase: "environment", TaskCount: 1, SampleTasks: []string{"t3"}, Configured: true},
				{EnvVar: "MODAL_TOKEN", Phase: "agent", TaskCount: 1, SampleTasks: []string{"t4"}, Configured: true},
				{EnvVar: "WANDB_KEY", Phase: "agent", TaskCount: 1, SampleTasks: []string{"t5"}, Supplyable: true},
			},
		},
	}, {
		name: "met task requirements are ok",
		in:   Input{Tasks: []TaskEnv{{"t1", "GITHUB_TOKEN", "agent"}}, Declared: set("GITHUB_TOKEN")},
		want: Result{
			OK:               true,
			TaskRequirements: []TaskRequirement{{EnvVar: "GITHUB_TOKEN", Phase: "agent", TaskCount: 1, SampleTasks: []string{"t1"}, Configured: true, Supplyable: true}},
		},
	}, {
		name: "sample tasks are capped",
		in: Input{
			Tasks:  []TaskEnv{{"f", "K", "agent"}, {"e", "K", "agent"}, {"d", "K", "agent"}, {"c", "K", "agent"}, {"b", "K", "agent"}, {"a", "K", "agent"}},
			Active: set("K"),
		},
		want: Result{
			OK:               true,
			TaskRequirements: []TaskRequirement{{EnvVar: "K", Phase: "agent", TaskCount: 6, SampleTasks: []string{"a", "b", "c", "d", "e"}, Configured: true, Supplyable: true}},
		},
	}, {
		name: "a note is a warning that does not make it not ok",
		in:   Input{Notes: []Warning{{"config.tasks[0]", "not a task of a dataset"}}},
		want: Result{OK: true, Warnings: []Warning{{"config.tasks[0]", "not a task of a dataset"}}},
	}, {
		name: "an unresolved dataset makes it not ok",
		in:   Input{Problems: []Warning{{"config.datasets[0].name", "dataset a/b not found; its tasks were not checked"}}},
		want: Result{Warnings: []Warning{{"config.datasets[0].name", "dataset a/b not found; its tasks were not checked"}}},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.want
			for _, l := range []*[]ProviderResult{&want.Providers} {
				if *l == nil {
					*l = []ProviderResult{}
				}
			}
			if want.AgentRequirements == nil {
				want.AgentRequirements = []AgentRequirement{}
			}
			if want.TaskRequirements == nil {
				want.TaskRequirements = []TaskRequirement{}
			}
			if want.Warnings == nil {
				want.Warnings = []Warning{}
			}
			want.Agents = []LegacyAgent{}
			for _, r := range want.AgentRequirements {
				want.Agents = append(want.Agents, LegacyAgent{Agent: r.Agent, Model: r.Model, Satisfied: r.Configured, Missing: r.MissingAnyOf})
			}
			if diff := cmp.Diff(want, Evaluate(c, tc.in)); diff != "" {
				t.Errorf("Evaluate (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTaskEnvs(t *testing.T) {
	v := &hubv1alpha1.DatasetVersion{Tasks: []hubv1alpha1.DatasetTask{
		{Name: "a", RequiredEnv: []hubv1alpha1.TaskEnvVar{{Name: "X"}, {Name: "Y", Phase: hubv1alpha1.TaskPhaseVerifier}}},
		{Name: "b"},
	}}
	want := []TaskEnv{{"a", "X", "agent"}, {"a", "Y", "verifier"}}
	if diff := cmp.Diff(want, TaskEnvs(v)); diff != "" {
		t.Errorf("TaskEnvs (-want +got):\n%s", diff)
	}
}

// BenchmarkEvaluate checks 10 agents against 50 active secrets and 2,000 tasks' needs.
func BenchmarkEvaluate(b *testing.B) {
	c := providers.Defaults()
	in := Input{Active: map[string]bool{}, Declared: set("EXTRA")}
	for i := range 50 {
		in.Active[fmt.Sprintf("KEY_%d", i)] = true
	}
	in.Active["ANTHROPIC_API_KEY"] = true
	for i := range 10 {
		in.Agents = append(in.Agents, Agent{Name: fmt.Sprint("agent-", i), ModelName: "anthropic/claude", Secrets: []string{"ANTHROPIC_API_KEY", "KEY_1", "EXTRA"}})
	}
	for i := range 2000 {
		in.Tasks = append(in.Tasks, TaskEnv{Task: fmt.Sprint("task-", i), EnvVar: fmt.Sprint("KEY_", i%60), Phase: "agent"})
	}
	b.ResetTimer()
	for range b.N {
		Evaluate(c, in)
	}
}
