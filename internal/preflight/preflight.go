// Package preflight is the advisory check of docs/secrets.md (Preflight): will every agent of a run
// receive a credential its model can authenticate with, and can every environment
// variable the run's tasks hard-require be supplied? The logic here is pure; the HTTP
// handler gathers its inputs (HostedSecret metadata and Dataset versions from the cache,
// never a value) and answers 200 for every well-formed request. The provider table and
// the reserved names are package providers.
package preflight

import (
	"slices"
	"sort"
	"strconv"

	"podium.dev/podium/internal/providers"
)

// MaxSampleTasks bounds sample_tasks of a task requirement.
const MaxSampleTasks = 5

// Agent is one agent of a run configuration.
type Agent struct {
	Name      string
	ModelName string
	// Secrets are the env var names the agent is configured to receive.
	Secrets []string
}

// TaskEnv is one environment variable one task hard-requires.
type TaskEnv struct {
	Task   string
	EnvVar string
	Phase  string
}

// Input is everything a check looks at. Active and Declared hold names only.
type Input struct {
	Organization string
	Agents       []Agent
	Tasks        []TaskEnv
	// Active are the env vars with an active hosted secret the run can use.
	Active map[string]bool
	// Declared are the caller's declared_env_vars (one-off job secrets).
	Declared map[string]bool
	// Problems are inputs that could not be checked (an unknown dataset or version);
	// each makes the result not ok.
	Problems []Warning
	// Notes are warnings that do not make the result not ok (a task from outside any
	// dataset, whose requirements Podium cannot know).
	Notes []Warning
}

// Result is the response of POST /v1/secrets/preflight. Every list is non-nil, so it
// encodes as [] rather than null.
type Result struct {
	OK                bool               `json:"ok"`
	Organization      string             `json:"organization"`
	Providers         []ProviderResult   `json:"providers"`
	AgentRequirements []AgentRequirement `json:"agent_requirements"`
	TaskRequirements  []TaskRequirement  `json:"task_requirements"`
	// Agents is the older form of AgentRequirements, in the shape existing clients read.
	Agents   []LegacyAgent `json:"agents"`
	Warnings []Warning     `json:"warnings"`
}

// ProviderResult says whether the org can authenticate a provider used by the run.
type ProviderResult struct {
	Provider string   `json:"provider"`
	EnvVars  []string `json:"env_vars"`
	// Configured: one of EnvVars resolves (an active secret or a declared name),
	// whether or not an agent lists it.
	Configured bool `json:"configured"`
}

// AgentRequirement is the verdict for one agent. Model and Provider are null for an
// agent without a model (and Provider for a model without a provider prefix).
//
// An unmet requirement is either one name (a secret the agent lists) or a set of
// alternatives (a provider authenticated by any one of several env vars, as gemini by
// GEMINI_API_KEY or GOOGLE_API_KEY). MissingAnyOf gives each unmet requirement as its
// alternatives (one element for a single name): meeting it takes any ONE of them.
// MissingEnvVars is the flat form for simple clients: one name per unmet requirement,
// the first (preferred) alternative of a set, never all of a set.
type AgentRequirement struct {
	Agent          string     `json:"agent"`
	Model          *string    `json:"model"`
	Provider       *string    `json:"provider"`
	Configured     bool       `json:"configured"`
	MissingEnvVars []string   `json:"missing_env_vars"`
	MissingAnyOf   [][]string `json:"missing_any_of"`
}

// LegacyAgent is an entry of the older agents list, in the shape existing clients read:
// satisfied (not configured), and missing as a list of alternatives per requirement.
type LegacyAgent struct {
	Agent     string     `json:"agent"`
	Model     *string    `json:"model"`
	Satisfied bool       `json:"satisfied"`
	Missing   [][]string `json:"missing"`
}

// TaskRequirement is one env var the run's tasks hard-require, in one phase.
type TaskRequirement struct {
	EnvVar      string   `json:"env_var"`
	Phase       string   `json:"phase"`
	TaskCount   int      `json:"task_count"`
	SampleTasks []string `json:"sample_tasks"`
	Configured  bool     `json:"configured"`
	Supplyable  bool     `json:"supplyable"`
}

// Warning is a note about the request that does not make it malformed.
type Warning struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// Evaluate checks a run. Per agent, a name counts only when the agent lists it AND it
// resolves to an active secret or a declared name AND it is not reserved (a reserved
// name is never exported into a trial). A task requirement is met when it is configured
// AND supplyable (not reserved).
func Evaluate(c *providers.Config, in Input) Result {
	res := Result{
		OK:                true,
		Organization:      in.Organization,
		Providers:         []ProviderResult{},
		AgentRequirements: []AgentRequirement{},
		TaskRequirements:  []TaskRequirement{},
		Agents:            []LegacyAgent{},
		Warnings:          []Warning{},
	}
	known := func(name string) bool { return in.Active[name] || in.Declared[name] }
	usable := func(name string) bool { return known(name) && !c.IsReserved(name) }

	seenProvider := map[string]bool{}
	for i, a := range in.Agents {
		req := agent(c, a, usable)
		if !req.Configured {
			res.OK = false
		}
		res.AgentRequirements = append(res.AgentRequirements, req)
		res.Agents = append(res.Agents, LegacyAgent{Agent: req.Agent, Model: req.Model, Satisfied: req.Configured, Missing: req.MissingAnyOf})
		field := "config.agents[" + strconv.Itoa(i) + "].model_name"
		provider := providers.ProviderOf(a.ModelName)
		switch {
		case a.ModelName != "" && provider == "":
			res.Warnings = append(res.Warnings, Warning{field, "has no provider prefix (<provider>/<model>); no credential was checked for it"})
		case provider != "" && c.Providers[provider] == nil:
			res.Warnings = append(res.Warnings, Warning{field, "provider " + provider + " is not in the provider table; no credential was checked for it"})
		case provider != "" && !seenProvider[provider]:
			seenProvider[provider] = true
			vars := c.ProviderEnvVars(provider)
			pr := ProviderResult{Provider: provider, EnvVars: vars}
			for _, v := range vars {
				pr.Configured = pr.Configured || usable(v)
			}
			res.Providers = append(res.Providers, pr)
		}
	}

	res.TaskRequirements = taskRequirements(c, in.Tasks, known)
	for _, t := range res.TaskRequirements {
		if !t.Configured || !t.Supplyable {
			res.OK = false
		}
	}
	if len(in.Problems) > 0 {
		res.OK = false
		res.Warnings = append(res.Warnings, in.Problems...)
	}
	res.Warnings = append(res.Warnings, in.Notes...)
	return res
}

func agent(c *providers.Config, a Agent, usable func(string) bool) AgentRequirement {
	req := AgentRequirement{Agent: a.Name, Configured: true, MissingEnvVars: []string{}, MissingAnyOf: [][]string{}}
	if a.ModelName != "" {
		req.Model = &a.ModelName
	}
	provider := providers.ProviderOf(a.ModelName)
	if provider != "" {
		req.Provider = &provider
	}
	listed := map[string]bool{}
	var missing [][]string
	seen := map[string]bool{}
	for _, s := range a.Secrets {
		listed[s] = true
		if !usable(s) && !seen[s] {
			seen[s] = true
			missing = append(missing, []string{s})
		}
	}
	if vars := c.Providers[provider]; len(vars) > 0 {
		authenticated := false
		for _, v := range vars {
			authenticated = authenticated || (listed[v] && usable(v))
		}
		if !authenticated {
			// One requirement with alternatives; a listed name of the set that does not
			// resolve is the same requirement, not a second one.
			kept := missing[:0]
			for _, m := range missing {
				if !slices.Contains(vars, m[0]) {
					kept = append(kept, m)
				}
			}
			missing = append(kept, append([]string(nil), vars...))
		}
	}
	sort.Slice(missing, func(i, j int) bool { return missing[i][0] < missing[j][0] })
	for _, m := range missing {
		req.MissingAnyOf = append(req.MissingAnyOf, m)
		req.MissingEnvVars = append(req.MissingEnvVars, m[0])
	}
	req.Configured = len(missing) == 0
	return req
}

func taskRequirements(c *providers.Config, envs []TaskEnv, known func(string) bool) []TaskRequirement {
	type key struct{ env, phase string }
	tasks := map[key]map[string]bool{}
	for _, t := range envs {
		k := key{t.EnvVar, t.Phase}
		if tasks[k] == nil {
			tasks[k] = map[string]bool{}
		}
		tasks[k][t.Task] = true
	}
	out := []TaskRequirement{}
	for k, names := range tasks {
		sample := make([]string, 0, len(names))
		for n := range names {
			sample = append(sample, n)
		}
		sort.Strings(sample)
		if len(sample) > MaxSampleTasks {
			sample = sample[:MaxSampleTasks]
		}
		out = append(out, TaskRequirement{
			EnvVar:      k.env,
			Phase:       k.phase,
			TaskCount:   len(names),
			SampleTasks: sample,
			Configured:  known(k.env),
			Supplyable:  !c.IsReserved(k.env),
		})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].EnvVar != out[j].EnvVar {
			return out[i].EnvVar < out[j].EnvVar
		}
		return out[i].Phase < out[j].Phase
	})
	return out
}
