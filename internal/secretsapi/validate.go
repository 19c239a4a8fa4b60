package secretsapi

import (
	"net/url"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/apierr"
	"podium.dev/podium/internal/secretkind"
	"podium.dev/podium/internal/secrets"
	"podium.dev/podium/internal/wire/secretswire"
)

// storeInput is a validated storeBody (the org is resolved later).
type storeInput struct {
	Scope       hubv1alpha1.SecretScope
	EnvVar      string
	Value       []byte
	Provider    string
	JobID       string
	Org         orgRef
	SupersedeID string
}

// revokeInput is a validated revokeBody.
type revokeInput struct {
	Scope  hubv1alpha1.SecretScope
	EnvVar string
	JobID  string
	Purge  bool
	Org    orgRef
}

// listInput is a validated GET /v1/secrets (or /v1/registry-credentials) query.
type listInput struct {
	// Kind is the kind of secret listed; nil is secretkind.Env (GET /v1/secrets).
	Kind   *secretkind.Kind
	Scope  hubv1alpha1.SecretScope // "" = every scope
	JobID  string
	Status string // active, revoked or all
	Org    orgRef
}

// kind is the kind of secret the query lists.
func (in listInput) kind() *secretkind.Kind {
	if in.Kind == nil {
		return &secretkind.Env
	}
	return in.Kind
}

// orgRef names the organization of a request: org_id (the namespace's recorded id) or org (its
// name); neither means the caller's ServiceAccount namespace.
type orgRef struct{ ID, Name string }

// orgOf checks org_id and org: at most one of them, a UUID and a namespace name.
func orgOf(id, name *string, errs *fieldErrs) orgRef {
	ref := orgRef{ID: uuidField("org_id", id, errs)}
	if name != nil {
		if id != nil {
			errs.add("org", "give org (a name) or org_id (a UUID), not both")
		} else if len(validation.IsDNS1123Label(*name)) > 0 {
			errs.add("org", "must be an organization (namespace) name: lower-case letters, digits and '-', at most 63")
		} else {
			ref.Name = *name
		}
	}
	return ref
}

// fieldErrs collects validation failures.
type fieldErrs []apierr.FieldError

func (f *fieldErrs) add(field, msg string) {
	*f = append(*f, apierr.FieldError{Field: field, Message: msg})
}

func (f fieldErrs) err() error {
	if len(f) == 0 {
		return nil
	}
	return apierr.Invalid(f...)
}

func validateStore(b secretswire.StoreSecret) (storeInput, error) {
	if b.EnvVar == nil {
		return storeInput{}, apierr.BadRequest("env_var", "is required")
	}
	if b.Value == nil {
		return storeInput{}, apierr.BadRequest("value", "is required")
	}
	var errs fieldErrs
	in := storeInput{EnvVar: *b.EnvVar, Value: []byte(*b.Value)}
	in.Scope = scopeOf(b.Scope, &errs)
	checkEnvVar(in.EnvVar, &errs)
	switch n := len(in.Value); {
	case n < secrets.MinValueBytes:
		errs.add("value", "must not be empty")
	case n > secrets.MaxValueBytes:
		errs.add("value", "must be at most 65536 bytes")
	}
	if b.Provider != nil {
		in.Provider = *b.Provider
		if m := hubv1alpha1.CheckProvider(in.Provider); m != "" {
			errs.add("provider", m)
		}
	}
	in.JobID = jobIDOf(in.Scope, b.JobID, &errs)
	in.Org = orgOf(b.OrgID, b.Org, &errs)
	sc := uuidField("supersede_credential_id", b.SupersedeCredentialID, &errs)
	ss := uuidField("supersede_secret_id", b.SupersedeSecretID, &errs)
	switch {
	case sc != "" && ss != "" && sc != ss:
		errs.add("supersede_secret_id", "is an alias of supersede_credential_id; when both are given they must be equal")
	case sc != "":
		in.SupersedeID = sc
	default:
		in.SupersedeID = ss
	}
	return in, errs.err()
}

func validateRevoke(b secretswire.RevokeSecret) (revokeInput, error) {
	if b.EnvVar == nil {
		return revokeInput{}, apierr.BadRequest("env_var", "is required")
	}
	var errs fieldErrs
	in := revokeInput{EnvVar: *b.EnvVar}
	in.Scope = scopeOf(b.Scope, &errs)
	checkEnvVar(in.EnvVar, &errs)
	in.JobID = jobIDOf(in.Scope, b.JobID, &errs)
	in.Org = orgOf(b.OrgID, b.Org, &errs)
	if b.Purge != nil {
		in.Purge = *b.Purge
	}
	return in, errs.err()
}

// knownParams refuses a query parameter that is not one of known, and one given twice.
func knownParams(q url.Values, known ...string) error {
	for k, v := range q {
		if !slices.Contains(known, k) {
			return apierr.BadRequest(k, "unknown query parameter; known: %s", strings.Join(known, ", "))
		}
		if len(v) > 1 {
			return apierr.BadRequest(k, "must be given at most once")
		}
	}
	return nil
}

// listStatus is the status a list asks for: active (without one), revoked or all.
func listStatus(q url.Values, errs *fieldErrs) string {
	if !q.Has("status") {
		return "active"
	}
	switch s := q.Get("status"); s {
	case "active", "revoked", "all":
		return s
	}
	errs.add("status", "must be one of active, revoked, all")
	return "active"
}

func validateList(q url.Values) (listInput, error) {
	if err := knownParams(q, "scope", "job_id", "status", "org_id", "org"); err != nil {
		return listInput{}, err
	}
	var errs fieldErrs
	in := listInput{Status: "active"}
	if q.Has("scope") {
		s := q.Get("scope")
		in.Scope = scopeOf(&s, &errs)
	}
	if q.Has("job_id") {
		j := q.Get("job_id")
		if in.Scope != hubv1alpha1.ScopeJob {
			errs.add("job_id", jobIDNeedsJobScope)
		} else if !hubv1alpha1.IsUUID(j) {
			errs.add("job_id", "must be a UUID")
		} else {
			in.JobID = strings.ToLower(j)
		}
	}
	in.Status = listStatus(q, &errs)
	in.Org = orgQuery(q, &errs)
	return in, errs.err()
}

// orgQuery reads org_id and org of a query string.
func orgQuery(q url.Values, errs *fieldErrs) orgRef {
	var id, name *string
	if q.Has("org_id") {
		v := q.Get("org_id")
		id = &v
	}
	if q.Has("org") {
		v := q.Get("org")
		name = &v
	}
	return orgOf(id, name, errs)
}

func scopeOf(s *string, errs *fieldErrs) hubv1alpha1.SecretScope {
	if s == nil {
		return hubv1alpha1.ScopeUser
	}
	switch sc := hubv1alpha1.SecretScope(*s); sc {
	case hubv1alpha1.ScopeUser, hubv1alpha1.ScopeJob:
		return sc
	default:
		errs.add("scope", "must be user or job")
		return hubv1alpha1.ScopeUser
	}
}

func checkEnvVar(v string, errs *fieldErrs) {
	if m := hubv1alpha1.CheckEnvVar(v); m != "" {
		errs.add("env_var", m)
	}
}

// jobIDNeedsJobScope is the one rule of job_id for POST, GET and DELETE alike: it is
// only given with scope job (scope defaults to user on writes and to every scope on a
// list, so job_id alone never silently means job scope).
const jobIDNeedsJobScope = "is only valid with scope job: add scope=job (or leave job_id out for user scope)"

// jobIDOf checks job_id against the scope: required for job, refused for user.
func jobIDOf(scope hubv1alpha1.SecretScope, j *string, errs *fieldErrs) string {
	switch {
	case scope == hubv1alpha1.ScopeJob && j == nil:
		errs.add("job_id", "is required when scope is job")
	case scope == hubv1alpha1.ScopeUser && j != nil:
		errs.add("job_id", jobIDNeedsJobScope)
	case j != nil && !hubv1alpha1.IsUUID(*j):
		errs.add("job_id", "must be a UUID")
	case j != nil:
		return strings.ToLower(*j)
	}
	return ""
}

func uuidField(field string, v *string, errs *fieldErrs) string {
	if v == nil {
		return ""
	}
	if !hubv1alpha1.IsUUID(*v) {
		errs.add(field, "must be a UUID")
		return ""
	}
	return strings.ToLower(*v)
}
