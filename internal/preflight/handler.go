package preflight

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kjson "sigs.k8s.io/json"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/apierr"
	"podium.dev/podium/internal/authn"
	"podium.dev/podium/internal/dsversion"
	"podium.dev/podium/internal/jsontype"
	"podium.dev/podium/internal/providers"
	"podium.dev/podium/internal/secrets"
)

// Request limits: far above a real run configuration, low enough to bound the work.
const (
	MaxAgents          = 100
	MaxSecretsPerAgent = 100
	MaxDatasets        = 50
	MaxTasks           = 1000
	MaxDeclared        = 500
	maxNameChars       = 253
)

// request is the body of POST /v1/secrets/preflight. The top level is strict (unknown
// fields are a 400); config is the run configuration the client is about to launch, of
// which preflight reads agents and datasets and ignores every other key.
type request struct {
	Config          json.RawMessage `json:"config"`
	Organization    *string         `json:"organization"`
	DeclaredEnvVars []string        `json:"declared_env_vars"`
}

type runConfig struct {
	// Agents holds pointers so that a null entry is told apart from an empty one.
	Agents   []*runAgent  `json:"agents"`
	Datasets []runDataset `json:"datasets"`
	// Tasks are tasks listed directly rather than through a whole dataset.
	Tasks []*runTask `json:"tasks"`
}

type runAgent struct {
	Name *string `json:"name"`
	// ImportPath names a custom agent by its import path instead of a name.
	ImportPath *string  `json:"import_path"`
	ModelName  *string  `json:"model_name"`
	Secrets    []string `json:"secrets"`
}

type runDataset struct {
	Name *string `json:"name"`
	// Ref names the version (latest, a tag or a version id); Version is its older name.
	Ref     *string `json:"ref"`
	Version *string `json:"version"`
}

// runTask is a task listed directly: a task of a dataset (dataset + name, at ref), or
// a task from elsewhere (a local path, a git repository) that Podium cannot look into.
type runTask struct {
	Name    *string `json:"name"`
	Dataset *string `json:"dataset"`
	Ref     *string `json:"ref"`
	Version *string `json:"version"`
}

type datasetRef struct {
	Field     string // config.datasets[i] or config.tasks[i]
	Namespace string
	Name      string
	Version   string
	// Task, when set, limits the requirements to that task of the version.
	Task string
	// VersionField is the request field that named the version (ref or version).
	VersionField string
}

// Handler serves POST /v1/secrets/preflight. It reads HostedSecret metadata and Datasets
// from the manager's cache; it never reads a Secret.
type Handler struct {
	Config   *providers.Config
	Cache    client.Reader
	Reviewer authn.Reviewer
	Log      logr.Logger
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	caller := authn.CallerFrom(r.Context())
	if caller.Anonymous || caller.User == "" {
		apierr.Write(w, apierr.Unauthenticated())
		return
	}
	var req request
	if err := apierr.DecodeJSON(r, &req); err != nil {
		apierr.Write(w, err)
		return
	}
	in, refs, err := validate(req, caller)
	if err != nil {
		apierr.Write(w, err)
		return
	}
	if err := h.authorize(r.Context(), caller, in.Organization); err != nil {
		h.fail(w, r, err)
		return
	}
	if in.Active, err = h.activeNames(r.Context(), in.Organization, caller.User); err != nil {
		h.fail(w, r, err)
		return
	}
	tasks, problems, err := h.taskEnvs(r.Context(), caller, refs)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	in.Tasks, in.Problems = tasks, append(in.Problems, problems...)
	res := Evaluate(h.Config, in)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(w).Encode(res)
}

// validate checks every field the check reads and names the first failing ones.
func validate(req request, caller *authn.Caller) (Input, []datasetRef, error) {
	if len(req.Config) == 0 || string(req.Config) == "null" {
		return Input{}, nil, apierr.BadRequest("config", "is required")
	}
	var rc runConfig
	if err := json.Unmarshal(req.Config, &rc); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return Input{}, nil, apierr.BadRequest("config."+te.Field, "must be of type %s", jsontype.Of(te.Type))
		}
		return Input{}, nil, apierr.BadRequest("config", "must be an object")
	}
	// Keys are case-sensitive, as everywhere in the API: encoding/json matched
	// "Agents" or "MODEL_NAME" to the fields above; a case-sensitive decode must agree.
	var exact runConfig
	if err := kjson.UnmarshalCaseSensitivePreserveInts(req.Config, &exact); err != nil || !reflect.DeepEqual(exact, rc) {
		return Input{}, nil, apierr.BadRequest("config", "a key of config differs from agents, datasets, tasks, name, import_path, model_name, secrets, dataset, ref or version only in letter case (keys are case-sensitive)")
	}
	var errs []apierr.FieldError
	add := func(field, msg string) { errs = append(errs, apierr.FieldError{Field: field, Message: msg}) }

	in := Input{Declared: map[string]bool{}}
	switch {
	case req.Organization != nil:
		in.Organization = *req.Organization
		if msgs := validation.IsDNS1123Label(in.Organization); len(msgs) > 0 {
			add("organization", "must be an organization (namespace) name: "+strings.Join(msgs, "; "))
		}
	case caller.ServiceAccountNamespace != "":
		in.Organization = caller.ServiceAccountNamespace
	default:
		return Input{}, nil, apierr.BadRequest("organization", "is required: the caller is not a ServiceAccount, so it has no default organization")
	}

	if len(req.DeclaredEnvVars) > MaxDeclared {
		add("declared_env_vars", fmt.Sprintf("must have at most %d items", MaxDeclared))
	}
	for i, v := range req.DeclaredEnvVars {
		if !providers.IsEnvVarName(v) {
			add("declared_env_vars["+strconv.Itoa(i)+"]", "must be an environment variable name ([A-Za-z_][A-Za-z0-9_]*, at most 128 characters)")
		}
		in.Declared[v] = true
	}

	if len(rc.Agents) > MaxAgents {
		add("config.agents", fmt.Sprintf("must have at most %d items", MaxAgents))
	}
	for i, a := range rc.Agents {
		f := "config.agents[" + strconv.Itoa(i) + "]"
		if a == nil {
			add(f, "must be an object with a name (or an import_path)")
			continue
		}
		ag := Agent{Secrets: a.Secrets}
		switch {
		case a.Name != nil:
			ag.Name = *a.Name
			if ag.Name == "" || len(ag.Name) > maxNameChars {
				add(f+".name", fmt.Sprintf("must be 1 to %d characters", maxNameChars))
			}
		case a.ImportPath != nil:
			ag.Name = *a.ImportPath
			if ag.Name == "" || len(ag.Name) > maxNameChars {
				add(f+".import_path", fmt.Sprintf("must be 1 to %d characters", maxNameChars))
			}
		default:
			add(f+".name", "is required (or an import_path): the agent this entry configures")
		}
		if a.ModelName != nil {
			ag.ModelName = *a.ModelName
			if ag.ModelName == "" || len(ag.ModelName) > maxNameChars {
				add(f+".model_name", fmt.Sprintf("must be 1 to %d characters when given (leave it out for an agent without a model)", maxNameChars))
			}
		}
		if len(a.Secrets) > MaxSecretsPerAgent {
			add(f+".secrets", fmt.Sprintf("must have at most %d items", MaxSecretsPerAgent))
		}
		for j, s := range a.Secrets {
			if !providers.IsEnvVarName(s) {
				add(f+".secrets["+strconv.Itoa(j)+"]", "must be an environment variable name ([A-Za-z_][A-Za-z0-9_]*, at most 128 characters)")
			}
		}
		in.Agents = append(in.Agents, ag)
	}

	if len(rc.Datasets) > MaxDatasets {
		add("config.datasets", fmt.Sprintf("must have at most %d items", MaxDatasets))
	}
	var refs []datasetRef
	for i, d := range rc.Datasets {
		f := "config.datasets[" + strconv.Itoa(i) + "]"
		ref := datasetRef{Field: f}
		if d.Name == nil {
			add(f+".name", "is required: <org>/<dataset>")
		} else {
			ref.Namespace, ref.Name = datasetSlug(*d.Name, f+".name", add)
		}
		ref.Version, ref.VersionField = versionOf(d.Ref, d.Version, f, add)
		refs = append(refs, ref)
	}
	if len(rc.Tasks) > MaxTasks {
		add("config.tasks", fmt.Sprintf("must have at most %d items", MaxTasks))
	}
	for i, t := range rc.Tasks {
		f := "config.tasks[" + strconv.Itoa(i) + "]"
		switch {
		case t == nil:
			add(f, "must be an object")
			continue
		case t.Dataset == nil:
			// A task from a path or a repository: nothing Podium can look into.
			in.Notes = append(in.Notes, Warning{f, "not a task of a dataset (no dataset given); its requirements were not checked"})
			continue
		case t.Name == nil || *t.Name == "" || len(*t.Name) > maxNameChars:
			add(f+".name", fmt.Sprintf("is required with dataset: the task's name (1 to %d characters)", maxNameChars))
		}
		ref := datasetRef{Field: f}
		ref.Namespace, ref.Name = datasetSlug(*t.Dataset, f+".dataset", add)
		ref.Version, ref.VersionField = versionOf(t.Ref, t.Version, f, add)
		if t.Name != nil {
			ref.Task = *t.Name
		}
		refs = append(refs, ref)
	}
	if len(errs) > 0 {
		return Input{}, nil, apierr.Invalid(errs...)
	}
	return in, refs, nil
}

// datasetSlug checks "<org>/<dataset>" and splits it.
func datasetSlug(slug, field string, add func(field, msg string)) (ns, name string) {
	ns, name, ok := strings.Cut(slug, "/")
	if !ok || len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 {
		add(field, "must be <org>/<dataset>")
	}
	return ns, name
}

// versionOf is the version a dataset or task entry names: ref (preferred) or its older
// name version, else latest. Both given and different is an error, not a choice.
func versionOf(ref, version *string, field string, add func(field, msg string)) (string, string) {
	check := func(v *string, name string) string {
		if *v == "" || len(*v) > 128 {
			add(field+"."+name, "must be latest, a version tag or a version id (1 to 128 characters)")
		}
		return *v
	}
	switch {
	case ref != nil && version != nil && *ref != *version:
		add(field+".version", "names another version than ref; give one of them (ref is preferred)")
		return check(ref, "ref"), field + ".ref"
	case ref != nil:
		return check(ref, "ref"), field + ".ref"
	case version != nil:
		return check(version, "version"), field + ".version"
	}
	return "latest", field
}

// authorize lets members (who may store secrets) and listers of the org's secrets check.
func (h *Handler) authorize(ctx context.Context, c *authn.Caller, ns string) error {
	for _, verb := range []string{"create", "list"} {
		ok, err := h.Reviewer.Allowed(ctx, c, authn.Attributes{Namespace: ns, Verb: verb, Resource: "hostedsecrets"})
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
	}
	return apierr.Forbidden("%s may not use the hosted secrets of organization %s", c.User, ns)
}

// activeNames are the env vars of the caller's usable user-scope secrets in the org
// (secrets.Usable: active, and its value present and granted): the secrets a run the
// caller launches receives. Metadata only, from the cache.
func (h *Handler) activeNames(ctx context.Context, ns, user string) (map[string]bool, error) {
	list := &hubv1alpha1.HostedSecretList{}
	if err := h.Cache.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, hs := range list.Items {
		if usable, _ := secrets.Usable(&hs); usable &&
			(hs.Spec.Scope == "" || hs.Spec.Scope == hubv1alpha1.ScopeUser) && hs.Spec.Owner == user {
			names[hs.Spec.EnvVar] = true
		}
	}
	return names, nil
}

// taskEnvs resolves the datasets a run names to their versions' task requirements. A
// dataset the caller may not read answers like a missing one.
func (h *Handler) taskEnvs(ctx context.Context, c *authn.Caller, refs []datasetRef) ([]TaskEnv, []Warning, error) {
	var envs []TaskEnv
	var problems []Warning
	readable := map[string]bool{}
	for _, ref := range refs {
		ok, seen := readable[ref.Namespace]
		if !seen {
			var err error
			ok, err = h.Reviewer.Allowed(ctx, c, authn.Attributes{Namespace: ref.Namespace, Verb: "get", Resource: "datasets"})
			if err != nil {
				return nil, nil, err
			}
			readable[ref.Namespace] = ok
		}
		slug := ref.Namespace + "/" + ref.Name
		ds := &hubv1alpha1.Dataset{}
		if ok {
			if err := h.Cache.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, ds); err != nil {
				if !apierrors.IsNotFound(err) {
					return nil, nil, err
				}
				ok = false
			}
		}
		if !ok {
			problems = append(problems, Warning{ref.Field + "." + ref.slugField(), "dataset " + slug + " not found; its tasks were not checked"})
			continue
		}
		v := dsversion.Find(ref.Version, ds.Spec.Versions)
		found := v != nil
		if !found {
			problems = append(problems, Warning{ref.VersionField, "dataset " + slug + " has no version " + ref.Version + "; its tasks were not checked"})
			continue
		}
		all := TaskEnvs(v)
		if ref.Task == "" {
			envs = append(envs, all...)
			continue
		}
		if !hasTask(v, ref.Task) {
			problems = append(problems, Warning{ref.Field + ".name", "dataset " + slug + " version " + v.ID + " has no task " + ref.Task + "; its requirements were not checked"})
			continue
		}
		for _, e := range all {
			if e.Task == ref.Task {
				envs = append(envs, e)
			}
		}
	}
	return envs, problems, nil
}

// slugField is the request field that named the dataset.
func (r datasetRef) slugField() string {
	if r.Task != "" || strings.HasPrefix(r.Field, "config.tasks") {
		return "dataset"
	}
	return "name"
}

func hasTask(v *hubv1alpha1.DatasetVersion, name string) bool {
	for _, t := range v.Tasks {
		if t.Name == name {
			return true
		}
	}
	return false
}

func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	var ae *apierr.Error
	if !errors.As(err, &ae) {
		h.Log.Error(err, "Serving a preflight request failed", "path", r.URL.Path)
	}
	apierr.Write(w, err)
}
