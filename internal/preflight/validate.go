package preflight

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kjson "sigs.k8s.io/json"

	"podium.dev/podium/internal/apierr"
	"podium.dev/podium/internal/authn"
	"podium.dev/podium/internal/jsontype"
	"podium.dev/podium/internal/providers"
)

// envNameDetail is the message of a rejected environment variable name.
const envNameDetail = "must be an environment variable name ([A-Za-z_][A-Za-z0-9_]*, at most 128 characters)"

// validate checks every field the check reads and names the failing ones: a body that
// cannot be read as a run configuration, or a user without an organization, is a 400
// naming the field; every other failing field is listed in one 422, section by section
// (organization, declared_env_vars, config.agents, config.datasets, config.tasks).
func validate(req request, caller *authn.Caller) (Input, []datasetRef, error) {
	rc, err := decodeConfig(req.Config)
	if err != nil {
		return Input{}, nil, err
	}
	org, errs, err := validateOrganization(req.Organization, caller, field.NewPath("organization"))
	if err != nil {
		return Input{}, nil, err
	}
	in := Input{Organization: org}
	var sectionErrs field.ErrorList
	in.Declared, sectionErrs = validateDeclared(req.DeclaredEnvVars, field.NewPath("declared_env_vars"))
	errs = append(errs, sectionErrs...)
	config := field.NewPath("config")
	in.Agents, sectionErrs = validateAgents(rc.Agents, config.Child("agents"))
	errs = append(errs, sectionErrs...)
	refs, sectionErrs := validateDatasets(rc.Datasets, config.Child("datasets"))
	errs = append(errs, sectionErrs...)
	taskRefs, notes, sectionErrs := validateTasks(rc.Tasks, config.Child("tasks"))
	errs = append(errs, sectionErrs...)
	if len(errs) > 0 {
		return Input{}, nil, apierr.InvalidList(errs)
	}
	in.Notes = notes
	return in, append(refs, taskRefs...), nil
}

// decodeConfig reads config as a run configuration; what it cannot read is a 400.
func decodeConfig(raw json.RawMessage) (runConfig, error) {
	var rc runConfig
	if len(raw) == 0 || string(raw) == "null" {
		return rc, apierr.BadRequest("config", "is required")
	}
	if err := json.Unmarshal(raw, &rc); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return rc, apierr.BadRequest("config."+te.Field, "must be of type %s", jsontype.Of(te.Type))
		}
		return rc, apierr.BadRequest("config", "must be an object")
	}
	// Keys are case-sensitive, as everywhere in the API: encoding/json matched
	// "Agents" or "MODEL_NAME" to the fields above; a case-sensitive decode must agree.
	var exact runConfig
	if err := kjson.UnmarshalCaseSensitivePreserveInts(raw, &exact); err != nil || !reflect.DeepEqual(exact, rc) {
		return rc, apierr.BadRequest("config", "a key of config differs from agents, datasets, tasks, name, import_path, model_name, secrets, dataset, ref or version only in letter case (keys are case-sensitive)")
	}
	return rc, nil
}

// validateOrganization is the organization checked: the one given, else a
// ServiceAccount's own namespace; a user without one is a 400.
func validateOrganization(org *string, caller *authn.Caller, p *field.Path) (string, field.ErrorList, error) {
	switch {
	case org != nil:
		if msgs := validation.IsDNS1123Label(*org); len(msgs) > 0 {
			return *org, field.ErrorList{field.Invalid(p, *org, "must be an organization (namespace) name: "+strings.Join(msgs, "; "))}, nil
		}
		return *org, nil, nil
	case caller.ServiceAccountNamespace != "":
		return caller.ServiceAccountNamespace, nil, nil
	}
	return "", nil, apierr.BadRequest(p.String(), "is required: the caller is not a ServiceAccount, so it has no default organization")
}

// validateDeclared checks declared_env_vars (one-off job secrets) and returns them as a set.
func validateDeclared(vars []string, p *field.Path) (map[string]bool, field.ErrorList) {
	var errs field.ErrorList
	if len(vars) > MaxDeclared {
		errs = append(errs, field.TooMany(p, len(vars), MaxDeclared))
	}
	declared := map[string]bool{}
	for i, v := range vars {
		if !providers.IsEnvVarName(v) {
			errs = append(errs, field.Invalid(p.Index(i), v, envNameDetail))
		}
		declared[v] = true
	}
	return declared, errs
}

// validateAgents checks config.agents: each entry names its agent (name or
// import_path), optionally its model, and the secrets it is configured to receive.
func validateAgents(agents []*runAgent, p *field.Path) ([]Agent, field.ErrorList) {
	var errs field.ErrorList
	if len(agents) > MaxAgents {
		errs = append(errs, field.TooMany(p, len(agents), MaxAgents))
	}
	var out []Agent
	for i, a := range agents {
		ap := p.Index(i)
		if a == nil {
			errs = append(errs, field.Required(ap, "must be an object with a name (or an import_path)"))
			continue
		}
		ag, agentErrs := validateAgent(a, ap)
		errs = append(errs, agentErrs...)
		out = append(out, ag)
	}
	return out, errs
}

func validateAgent(a *runAgent, p *field.Path) (Agent, field.ErrorList) {
	var errs field.ErrorList
	ag := Agent{Secrets: a.Secrets}
	switch {
	case a.Name != nil:
		ag.Name = *a.Name
		errs = append(errs, checkName(ag.Name, p.Child("name"), fmt.Sprintf("must be 1 to %d characters", maxNameChars))...)
	case a.ImportPath != nil:
		ag.Name = *a.ImportPath
		errs = append(errs, checkName(ag.Name, p.Child("import_path"), fmt.Sprintf("must be 1 to %d characters", maxNameChars))...)
	default:
		errs = append(errs, field.Required(p.Child("name"), "is required (or an import_path): the agent this entry configures"))
	}
	if a.ModelName != nil {
		ag.ModelName = *a.ModelName
		errs = append(errs, checkName(ag.ModelName, p.Child("model_name"),
			fmt.Sprintf("must be 1 to %d characters when given (leave it out for an agent without a model)", maxNameChars))...)
	}
	sp := p.Child("secrets")
	if len(a.Secrets) > MaxSecretsPerAgent {
		errs = append(errs, field.TooMany(sp, len(a.Secrets), MaxSecretsPerAgent))
	}
	for j, s := range a.Secrets {
		if !providers.IsEnvVarName(s) {
			errs = append(errs, field.Invalid(sp.Index(j), s, envNameDetail))
		}
	}
	return ag, errs
}

// checkName rejects an empty name or one over maxNameChars with detail.
func checkName(name string, p *field.Path, detail string) field.ErrorList {
	if name == "" || len(name) > maxNameChars {
		return field.ErrorList{field.Invalid(p, name, detail)}
	}
	return nil
}

// validateDatasets checks config.datasets: each names "<org>/<dataset>" and optionally
// the version (ref, or its older name version).
func validateDatasets(datasets []runDataset, p *field.Path) ([]datasetRef, field.ErrorList) {
	var errs field.ErrorList
	if len(datasets) > MaxDatasets {
		errs = append(errs, field.TooMany(p, len(datasets), MaxDatasets))
	}
	var refs []datasetRef
	for i, d := range datasets {
		dp := p.Index(i)
		ref := datasetRef{Field: dp.String()}
		if d.Name == nil {
			errs = append(errs, field.Required(dp.Child("name"), "is required: <org>/<dataset>"))
		} else {
			ref.Namespace, ref.Name = datasetSlug(*d.Name, dp.Child("name"), &errs)
		}
		ref.Version, ref.VersionField = versionOf(d.Ref, d.Version, dp, &errs)
		refs = append(refs, ref)
	}
	return refs, errs
}

// validateTasks checks config.tasks. A task of a dataset (dataset + name) is resolved
// like a dataset, limited to that task; a task from elsewhere (no dataset) becomes a
// note, as Podium cannot look into it.
func validateTasks(tasks []*runTask, p *field.Path) ([]datasetRef, []Warning, field.ErrorList) {
	var errs field.ErrorList
	if len(tasks) > MaxTasks {
		errs = append(errs, field.TooMany(p, len(tasks), MaxTasks))
	}
	var refs []datasetRef
	var notes []Warning
	for i, t := range tasks {
		tp := p.Index(i)
		switch {
		case t == nil:
			errs = append(errs, field.Required(tp, "must be an object"))
			continue
		case t.Dataset == nil:
			// A task from a path or a repository: nothing Podium can look into.
			notes = append(notes, Warning{tp.String(), "not a task of a dataset (no dataset given); its requirements were not checked"})
			continue
		case t.Name == nil || *t.Name == "" || len(*t.Name) > maxNameChars:
			errs = append(errs, field.Required(tp.Child("name"), fmt.Sprintf("is required with dataset: the task's name (1 to %d characters)", maxNameChars)))
		}
		ref := datasetRef{Field: tp.String()}
		ref.Namespace, ref.Name = datasetSlug(*t.Dataset, tp.Child("dataset"), &errs)
		ref.Version, ref.VersionField = versionOf(t.Ref, t.Version, tp, &errs)
		if t.Name != nil {
			ref.Task = *t.Name
		}
		refs = append(refs, ref)
	}
	return refs, notes, errs
}

// datasetSlug checks "<org>/<dataset>" and splits it.
func datasetSlug(slug string, p *field.Path, errs *field.ErrorList) (ns, name string) {
	ns, name, ok := strings.Cut(slug, "/")
	if !ok || len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 {
		*errs = append(*errs, field.Invalid(p, slug, "must be <org>/<dataset>"))
	}
	return ns, name
}

// versionOf is the version a dataset or task entry names: ref (preferred) or its older
// name version, else latest, and the field that named it. Both given and different is an
// error, not a choice.
func versionOf(ref, version *string, p *field.Path, errs *field.ErrorList) (string, string) {
	check := func(v *string, name string) string {
		if *v == "" || len(*v) > 128 {
			*errs = append(*errs, field.Invalid(p.Child(name), *v, "must be latest, a version tag or a version id (1 to 128 characters)"))
		}
		return *v
	}
	switch {
	case ref != nil && version != nil && *ref != *version:
		*errs = append(*errs, field.Invalid(p.Child("version"), *version, "names another version than ref; give one of them (ref is preferred)"))
		return check(ref, "ref"), p.Child("ref").String()
	case ref != nil:
		return check(ref, "ref"), p.Child("ref").String()
	case version != nil:
		return check(version, "version"), p.Child("version").String()
	}
	return "latest", p.String()
}
