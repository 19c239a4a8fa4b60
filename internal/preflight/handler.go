package preflight

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/apierr"
	"podium.dev/podium/internal/authn"
	"podium.dev/podium/internal/dsversion"
	"podium.dev/podium/internal/providers"
	"podium.dev/podium/internal/secretkind"
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
// (secrets.Usable: active, and its value present and granted) of the kinds a run
// receives as an environment variable (secretkind.FormEnv): the keys a run the caller
// launches gets. Metadata only, from the cache.
func (h *Handler) activeNames(ctx context.Context, ns, user string) (map[string]bool, error) {
	list := &hubv1alpha1.HostedSecretList{}
	if err := h.Cache.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, hs := range list.Items {
		k := secretkind.Of(&hs)
		if usable, _ := secrets.Usable(&hs); usable && k.Form == secretkind.FormEnv &&
			(hs.Spec.Scope == "" || hs.Spec.Scope == hubv1alpha1.ScopeUser) && hs.Spec.Owner == user {
			names[k.RunKey(&hs.Spec)] = true
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
	apierr.Fail(w, h.Log, err, "Serving a preflight request failed", "path", r.URL.Path)
}
