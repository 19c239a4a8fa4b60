package preflight

import (
	"sort"
	"strconv"
	"strings"
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
}

// Result is the response of POST /v1/secrets/preflight. Every list is non-nil, so it
// encodes as [] rather than null.
type Result struct {
	OK                bool               `json:"ok"`
	Organization      string             `json:"organization"`
	Providers         []ProviderResult   `json:"providers"`
	AgentRequirements []AgentRequirement `json:"agent_requirements"`
	TaskRequirements  []TaskRequirement  `json:"task_requirements"`
	// Agents is the older name of AgentRequirements, kept for existing clients.
	Agents   []AgentRequirement `json:"agents"`
	Warnings []Warning          `json:"warnings"`
}

// ProviderResult says whether the org can authenticate a provider used by the run.
type ProviderResult struct {
	Provider string   `json:"provider"`
	EnvVars  []string `json:"env_vars"`
	// Configured: one of EnvVars resolves (an active secret or a declared name),
	// whether or not an agent lists it.
	Configured bool `json:"configured"`
}

// AgentRequirement is the verdict for one agent.
type AgentRequirement struct {
	Agent          string   `json:"agent"`
	Model          string   `json:"model"`
	Provider       string   `json:"provider"`
	Configured     bool     `json:"configured"`
	MissingEnvVars []string `json:"missing_env_vars"`
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

// ProviderOf is the part of a model name before the first "/", lower-cased; "" when
// the name has no "/".
func ProviderOf(model string) string {
	p, _, ok := strings.Cut(model, "/")
	if !ok {
		return ""
	}
	return strings.ToLower(strings.TrimSpace(p))
}

// Evaluate checks a run. Per agent, a name counts only when the agent lists it AND it
// resolves to an active secret or a declared name AND it is not reserved (a reserved
// name is never exported into a trial). A task requirement is met when it is configured
// AND supplyable (not reserved).
func (c *Config) Evaluate(in Input) Result {
	res := Result{
		OK:                true,
		Organization:      in.Organization,
		Providers:         []ProviderResult{},
		AgentRequirements: []AgentRequirement{},
		TaskRequirements:  []TaskRequirement{},
		Warnings:          []Warning{},
	}
	known := func(name string) bool { return in.Active[name] || in.Declared[name] }
	usable := func(name string) bool { return known(name) && !c.IsReserved(name) }

	seenProvider := map[string]bool{}
	for i, a := range in.Agents {
		req := c.agent(a, usable)
		if !req.Configured {
			res.OK = false
		}
		res.AgentRequirements = append(res.AgentRequirements, req)
		field := "config.agents[" + strconv.Itoa(i) + "].model_name"
		switch {
		case a.ModelName != "" && req.Provider == "":
			res.Warnings = append(res.Warnings, Warning{field, "has no provider prefix (<provider>/<model>); no credential was checked for it"})
		case req.Provider != "" && c.Providers[req.Provider] == nil:
			res.Warnings = append(res.Warnings, Warning{field, "provider " + req.Provider + " is not in the provider table; no credential was checked for it"})
		case req.Provider != "" && !seenProvider[req.Provider]:
			seenProvider[req.Provider] = true
			vars := c.ProviderEnvVars(req.Provider)
			pr := ProviderResult{Provider: req.Provider, EnvVars: vars}
			for _, v := range vars {
				pr.Configured = pr.Configured || usable(v)
			}
			res.Providers = append(res.Providers, pr)
		}
	}
	res.Agents = append([]AgentRequirement{}, res.AgentRequirements...)

	res.TaskRequirements = c.tasks(in.Tasks, known)
	for _, t := range res.TaskRequirements {
		if !t.Configured || !t.Supplyable {
			res.OK = false
		}
	}
	if len(in.Problems) > 0 {
		res.OK = false
		res.Warnings = append(res.Warnings, in.Problems...)
	}
	return res
}

func (c *Config) agent(a Agent, usable func(string) bool) AgentRequirement {
	req := AgentRequirement{Agent: a.Name, Model: a.ModelName, Provider: ProviderOf(a.ModelName), Configured: true, MissingEnvVars: []string{}}
	listed := map[string]bool{}
	missing := map[string]bool{}
	for _, s := range a.Secrets {
		listed[s] = true
		if !usable(s) {
			missing[s] = true
		}
	}
	if vars := c.Providers[req.Provider]; len(vars) > 0 {
		authenticated := false
		for _, v := range vars {
			authenticated = authenticated || (listed[v] && usable(v))
		}
		if !authenticated {
			for _, v := range vars {
				missing[v] = true
			}
		}
	}
	for m := range missing {
		req.MissingEnvVars = append(req.MissingEnvVars, m)
	}
	sort.Strings(req.MissingEnvVars)
	req.Configured = len(req.MissingEnvVars) == 0
	return req
}

func (c *Config) tasks(envs []TaskEnv, known func(string) bool) []TaskRequirement {
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
