package secretsapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"sort"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/apierr"
	"podium.dev/podium/internal/authn"
	"podium.dev/podium/internal/index"
	"podium.dev/podium/internal/secretkind"
	"podium.dev/podium/internal/secrets"
	"podium.dev/podium/internal/wire/secretswire"
)

// resource is the RBAC resource every secrets decision is about.
const resource = "hostedsecrets"

// API serves the path of each kind of hosted secret: /v1/secrets and
// /v1/registry-credentials.
type API struct {
	Store *secrets.Store
	// Cache reads the manager's informer caches (HostedSecrets, Namespaces).
	Cache    client.Reader
	Reviewer authn.Reviewer
	Log      logr.Logger
	// Keyring fingerprints registry credentials; with Store.Seats it enables
	// /v1/registry-credentials (registry.go).
	Keyring *secrets.Keyring
}

// kindHandlers are the handlers of one kind's path: they speak the kind's wire shapes.
type kindHandlers struct{ store, list, revoke http.HandlerFunc }

// handlers are the handlers of every kind of secretkind.Kinds (TestEveryKindIsServed).
func (a *API) handlers() map[*secretkind.Kind]kindHandlers {
	return map[*secretkind.Kind]kindHandlers{
		&secretkind.Env:      {a.store, a.list, a.revoke},
		&secretkind.Registry: {a.storeRegistry, a.listRegistry, a.revokeRegistry},
	}
}

// Routes are the API's handlers by ServeMux pattern: POST, GET and DELETE of each
// kind's Path. A Fingerprinted kind is served only with a Keyring, a Seated one only
// with Store.Seats.
func (a *API) Routes() map[string]http.Handler {
	routes := map[string]http.Handler{}
	for k, h := range a.handlers() {
		if (k.Fingerprinted && a.Keyring == nil) || (k.Seated && a.Store.Seats == nil) {
			continue
		}
		routes[http.MethodPost+" "+k.Path] = h.store
		routes[http.MethodGet+" "+k.Path] = h.list
		routes[http.MethodDelete+" "+k.Path] = h.revoke
	}
	return routes
}

func (a *API) store(w http.ResponseWriter, r *http.Request) {
	caller, in, org, ok := begin(a, w, r, validateStore, func(in storeInput) orgRef { return in.Org }, "create")
	if !ok {
		return
	}
	if !a.mayReplace(w, r, caller, org.Name, in.SupersedeID, "an active secret") {
		return
	}
	slot := slotOf(org.Name, in.Scope, in.JobID, in.EnvVar, caller)
	hs, old, err := a.Store.Store(r.Context(), secrets.StoreRequest{
		Slot: slot, Provider: in.Provider, Value: in.Value, CreatedBy: caller.User, SupersedeID: types.UID(in.SupersedeID),
	})
	if err != nil {
		a.storeFailed(w, r, err, replaced{
			exists: "an active secret already exists for " + in.EnvVar, listed: "the active secret for " + in.EnvVar, plural: "secrets",
			existing: func(hs *hubv1alpha1.HostedSecret) any { return existingOf(hs) },
		})
		return
	}
	a.awaitStored(r.Context(), hs, old)
	writeJSON(w, http.StatusCreated, recordOf(hs, hubv1alpha1.ID(org)))
}

// replaced names, for the refusals of a store, the active record it would replace: the
// clause that says it exists (exists), what supersede_credential_id no longer names
// (listed), the records to list again (plural), and the existing record as the
// envelope's existing (docs/design/secrets.md, "Slots, and why two active secrets in one slot
// cannot happen").
type replaced struct {
	exists, listed, plural string
	existing               func(*hubv1alpha1.HostedSecret) any
}

// storeFailed answers a store the Store refused: a 409 replacement_required naming the
// active record when the request did not supersede it, a 409 replacement_stale when
// supersede_credential_id is not the active record any more, else a failure.
func (a *API) storeFailed(w http.ResponseWriter, r *http.Request, err error, rec replaced) {
	var rr *secrets.ReplacementRequiredError
	switch {
	case errors.As(err, &rr):
		e := apierr.New(http.StatusConflict, apierr.CodeReplacementRequired,
			"%s; repeat the request with supersede_credential_id set to existing.id to replace it", rec.exists)
		e.Existing = rec.existing(rr.Existing)
		apierr.Write(w, e)
	case errors.Is(err, secrets.ErrStale):
		apierr.Write(w, apierr.New(http.StatusConflict, apierr.CodeReplacementStale,
			"supersede_credential_id no longer names %s; list the %s again before retrying", rec.listed, rec.plural))
	default:
		a.internal(w, r, err)
	}
}

func (a *API) list(w http.ResponseWriter, r *http.Request) {
	caller, in, org, ok := beginList(a, w, r, validateList)
	if !ok {
		return
	}
	// Listers see the org's secrets; members who may store see their own.
	all, err := a.allowed(r.Context(), caller, org.Name, "list")
	if err != nil {
		a.internal(w, r, err)
		return
	}
	if !all {
		if err := a.authorize(r.Context(), caller, org.Name, "create"); err != nil {
			apierr.Write(w, err)
			return
		}
	}
	out, ok := records(a, w, r, org.Name, func(hs *hubv1alpha1.HostedSecret) bool { return listed(hs, in, all, caller.User) },
		func(hs *hubv1alpha1.HostedSecret) secretswire.Record { return recordOf(hs, hubv1alpha1.ID(org)) })
	if !ok {
		return
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].CreatedAt != out[j].CreatedAt {
			return out[i].CreatedAt < out[j].CreatedAt
		}
		return out[i].ID < out[j].ID
	})
	writeJSON(w, http.StatusOK, map[string][]secretswire.Record{"secrets": out})
}

// records reads org's HostedSecrets from the cache and returns, as T, those keep
// takes; ok is false when it has answered already (the cache failed).
func records[T any](a *API, w http.ResponseWriter, r *http.Request, org string, keep func(*hubv1alpha1.HostedSecret) bool,
	as func(*hubv1alpha1.HostedSecret) T) (out []T, ok bool) {
	hsl := &hubv1alpha1.HostedSecretList{}
	if err := a.Cache.List(r.Context(), hsl, client.InNamespace(org)); err != nil {
		a.internal(w, r, err)
		return nil, false
	}
	out = []T{}
	for i := range hsl.Items {
		if hs := &hsl.Items[i]; keep(hs) {
			out = append(out, as(hs))
		}
	}
	return out, true
}

// listed says whether a list request shows hs.
func listed(hs *hubv1alpha1.HostedSecret, in listInput, all bool, user string) bool {
	scope := secrets.SlotOf(hs).Scope
	switch {
	case hs.DeletionTimestamp != nil, hs.Status.State == "":
		return false // being deleted, or a store in flight
	case secretkind.Of(hs) != in.kind():
		return false // each kind is listed by its own path (registry credentials by /v1/registry-credentials)
	case in.Status != "all" && string(hs.Status.State) != in.Status:
		return false
	case in.Scope != "" && scope != in.Scope:
		return false
	case in.JobID != "" && secrets.SlotOf(hs).JobID != in.JobID:
		return false
	case all:
		return true
	case scope == hubv1alpha1.ScopeUser:
		return hs.Spec.Owner == user
	default:
		return secrets.StoredBy(hs, user)
	}
}

func (a *API) revoke(w http.ResponseWriter, r *http.Request) {
	caller, in, org, ok := begin(a, w, r, validateRevoke, func(in revokeInput) orgRef { return in.Org }, "delete")
	if !ok {
		return
	}
	slot := slotOf(org.Name, in.Scope, in.JobID, in.EnvVar, caller)
	permit, err := a.permit(r.Context(), caller, org.Name, in.Scope)
	if err != nil {
		a.internal(w, r, err)
		return
	}
	var changed []*hubv1alpha1.HostedSecret
	if in.Purge {
		changed, err = a.Store.PurgeSlot(r.Context(), slot, permit)
	} else {
		changed, err = a.Store.RevokeSlot(r.Context(), slot, permit)
	}
	if errors.Is(err, secrets.ErrNotYours) {
		apierr.Write(w, apierr.Forbidden("the job-scope secret %s of job %s was stored by another user; revoking or purging it needs the %s verb on hostedsecrets in %s",
			in.EnvVar, in.JobID, secrets.VerbManageOthers, org.Name))
		return
	}
	if err != nil {
		a.internal(w, r, err)
		return
	}
	a.awaitRevoked(r.Context(), changed, in.Purge)
	writeJSON(w, http.StatusOK, map[string]int{"affected": len(changed)})
}

// mayReplace checks, when a store names a record to supersede, that the caller may
// (the supersede verb: organization owner rights); what is what is being replaced. When
// it returns false it has answered the request.
func (a *API) mayReplace(w http.ResponseWriter, r *http.Request, caller *authn.Caller, ns, supersedeID, what string) bool {
	if supersedeID == "" {
		return true
	}
	ok, err := a.allowed(r.Context(), caller, ns, "supersede")
	if err != nil {
		a.internal(w, r, err)
		return false
	}
	if !ok {
		apierr.Write(w, apierr.Forbidden("replacing %s needs organization owner rights (the supersede verb on hostedsecrets in %s)", what, ns))
		return false
	}
	return true
}

// awaitRevoked waits until the cache shows what a revoke (or purge) changed, so that a
// list right after the answer agrees with it.
func (a *API) awaitRevoked(ctx context.Context, changed []*hubv1alpha1.HostedSecret, purge bool) {
	for _, hs := range changed {
		a.awaitCache(ctx, hs, func(c *hubv1alpha1.HostedSecret) bool {
			return (c == nil) == purge && (c == nil || c.Status.State == hubv1alpha1.StateRevoked)
		})
	}
}

// permit returns which records of a slot the caller may revoke or purge. A user-scope
// slot is the caller's own (its owner is the caller). A job-scope record is the
// caller's when the caller stored it; anyone else needs manage-others.
func (a *API) permit(ctx context.Context, caller *authn.Caller, ns string, scope hubv1alpha1.SecretScope) (secrets.Permit, error) {
	if scope == hubv1alpha1.ScopeUser {
		return func(*hubv1alpha1.HostedSecret) bool { return true }, nil
	}
	others, err := a.allowed(ctx, caller, ns, secrets.VerbManageOthers)
	if err != nil {
		return nil, err
	}
	return func(hs *hubv1alpha1.HostedSecret) bool {
		return others || secrets.StoredBy(hs, caller.User)
	}, nil
}

// begin does what every write starts with: it authenticates the caller, decodes and
// validates the body, resolves the org and checks that the caller may do verb there.
// When ok is false it has answered the request.
func begin[B, I any](a *API, w http.ResponseWriter, r *http.Request, validate func(B) (I, error), orgID func(I) orgRef, verb string) (caller *authn.Caller, in I, org *corev1.Namespace, ok bool) {
	if caller, ok = a.caller(w, r); !ok {
		return nil, in, nil, false
	}
	var body B
	if err := apierr.DecodeJSON(r, &body); err != nil {
		apierr.Write(w, err)
		return nil, in, nil, false
	}
	in, err := validate(body)
	if err != nil {
		apierr.Write(w, err)
		return nil, in, nil, false
	}
	if org, err = a.org(r.Context(), orgID(in), caller); err != nil {
		apierr.Write(w, err)
		return nil, in, nil, false
	}
	if err := a.authorize(r.Context(), caller, org.Name, verb); err != nil {
		apierr.Write(w, err)
		return nil, in, nil, false
	}
	return caller, in, org, true
}

// beginList does what every list starts with: it authenticates the caller, parses and
// validates the query and resolves the org. Each list authorizes on its own (who sees
// what differs). When ok is false it has answered the request.
func beginList(a *API, w http.ResponseWriter, r *http.Request, validate func(url.Values) (listInput, error)) (caller *authn.Caller, in listInput, org *corev1.Namespace, ok bool) {
	if caller, ok = a.caller(w, r); !ok {
		return nil, in, nil, false
	}
	q, ok := parseQuery(w, r)
	if !ok {
		return nil, in, nil, false
	}
	in, err := validate(q)
	if err != nil {
		apierr.Write(w, err)
		return nil, in, nil, false
	}
	if org, err = a.org(r.Context(), in.Org, caller); err != nil {
		apierr.Write(w, err)
		return nil, in, nil, false
	}
	return caller, in, org, true
}

// slotOf is the slot a write names: for user scope its owner is the caller.
func slotOf(namespace string, scope hubv1alpha1.SecretScope, jobID, envVar string, caller *authn.Caller) secrets.Slot {
	slot := secrets.Slot{Namespace: namespace, Scope: scope, JobID: jobID, EnvVar: envVar}
	if scope == hubv1alpha1.ScopeUser {
		slot.Owner = caller.User
	}
	return slot
}

// cacheWait bounds how long a write waits for this replica's cache to show it.
const cacheWait = 5 * time.Second

// awaitStored waits until the cache shows a store's result: the stored secret in its
// state, and the one it superseded (if any) revoked or gone, so that a list right
// after the answer agrees with it.
func (a *API) awaitStored(ctx context.Context, hs, old *hubv1alpha1.HostedSecret) {
	a.awaitCache(ctx, hs, func(c *hubv1alpha1.HostedSecret) bool { return c != nil && c.Status.State == hs.Status.State })
	if old != nil {
		a.awaitCache(ctx, old, func(c *hubv1alpha1.HostedSecret) bool { return c == nil || c.Status.State == hubv1alpha1.StateRevoked })
	}
}

// parseQuery parses the request's query string, answering 400 when it cannot:
// url.ParseQuery, unlike r.URL.Query(), reports what it cannot parse (a ';' in
// "scope=user;x", a bad escape) instead of dropping it silently.
func parseQuery(w http.ResponseWriter, r *http.Request) (url.Values, bool) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		apierr.Write(w, apierr.BadRequest("", "the query string could not be parsed: use & between parameters and escape reserved characters"))
		return nil, false
	}
	return q, true
}

// awaitCache waits (briefly, bounded) until the cache shows what a write just did, so
// that a client's next GET on this replica sees its own write. seen gets nil when the
// object is not in the cache. Giving up is harmless: the write is done either way.
func (a *API) awaitCache(ctx context.Context, hs *hubv1alpha1.HostedSecret, seen func(*hubv1alpha1.HostedSecret) bool) {
	ctx, cancel := context.WithTimeout(ctx, cacheWait)
	defer cancel()
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		c := &hubv1alpha1.HostedSecret{}
		err := a.Cache.Get(ctx, client.ObjectKeyFromObject(hs), c)
		switch {
		case err == nil && c.UID == hs.UID:
			if seen(c) {
				return
			}
		case err == nil || apierrors.IsNotFound(err):
			if seen(nil) {
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// caller returns the authenticated caller, or answers 401.
func (a *API) caller(w http.ResponseWriter, r *http.Request) (*authn.Caller, bool) {
	c := authn.CallerFrom(r.Context())
	if c.Anonymous || c.User == "" {
		apierr.Write(w, apierr.Unauthenticated())
		return nil, false
	}
	return c, true
}

// org resolves the organization of a request: org_id (a namespace's recorded id, found through
// the cache's id index of namespaces), or org (its name), else the caller's
// ServiceAccount namespace.
func (a *API) org(ctx context.Context, ref orgRef, c *authn.Caller) (*corev1.Namespace, error) {
	cache := a.Cache
	orgID := ref.ID
	if orgID == "" {
		name := ref.Name
		if name == "" {
			name = c.ServiceAccountNamespace
		}
		if name == "" {
			return nil, apierr.BadRequest("org_id", "is required (or org): the caller is not a ServiceAccount, so it has no default organization")
		}
		ns := &corev1.Namespace{}
		key := client.ObjectKey{Name: name}
		err := cache.Get(ctx, key, ns)
		if apierrors.IsNotFound(err) {
			// A namespace created a moment ago may not be cached yet: ask once, uncached.
			err = a.Store.Reader.Get(ctx, key, ns)
		}
		if apierrors.IsNotFound(err) {
			return nil, apierr.NotFound("organization %s not found", name)
		}
		if err != nil {
			return nil, err
		}
		return ns, nil
	}
	nsl := &corev1.NamespaceList{}
	if err := cache.List(ctx, nsl, client.MatchingFields{index.UID: orgID}); err != nil {
		return nil, err
	}
	if len(nsl.Items) != 1 {
		return nil, apierr.NotFound("organization %s not found", orgID)
	}
	return &nsl.Items[0], nil
}

func (a *API) allowed(ctx context.Context, c *authn.Caller, ns, verb string) (bool, error) {
	return a.Reviewer.Allowed(ctx, c, authn.Attributes{Namespace: ns, Verb: verb, Resource: resource})
}

// authorize answers 403 unless the caller may do verb on hostedsecrets in ns.
func (a *API) authorize(ctx context.Context, c *authn.Caller, ns, verb string) error {
	ok, err := a.allowed(ctx, c, ns, verb)
	if err != nil {
		return err
	}
	if !ok {
		return apierr.Forbidden("%s may not %s hostedsecrets in organization %s", c.User, verb, ns)
	}
	return nil
}

// internal logs the cause (never a value: no error of this package holds one) and
// answers 500 without it; API errors pass through.
func (a *API) internal(w http.ResponseWriter, r *http.Request, err error) {
	apierr.Fail(w, a.Log, err, "Serving a secrets request failed", "method", r.Method, "path", r.URL.Path)
}

// publicID is a record's id as the HTTP API shows it and takes it back.
func publicID(hs *hubv1alpha1.HostedSecret) string { return string(secrets.BindingID(hs)) }

func recordOf(hs *hubv1alpha1.HostedSecret, orgID string) secretswire.Record {
	rec := secretswire.Record{
		ID:         publicID(hs),
		Scope:      string(secrets.SlotOf(hs).Scope),
		OrgID:      orgID,
		EnvVar:     hs.Spec.EnvVar,
		ValueLast4: hs.Status.ValueLast4,
		Status:     string(hs.Status.State),
		CreatedAt:  timestamp(hubv1alpha1.CreatedAt(hs).Time),
	}
	rec.Usable, rec.UnusableReason = secrets.Usable(hs)
	if hs.Spec.JobID != "" {
		j := secrets.SlotOf(hs).JobID
		rec.JobID = &j
	}
	if hs.Spec.Provider != "" {
		p := hs.Spec.Provider
		rec.Provider = &p
	}
	if hs.Status.LastUsedAt != nil {
		t := timestamp(hs.Status.LastUsedAt.Time)
		rec.LastUsedAt = &t
	}
	return rec
}

func existingOf(hs *hubv1alpha1.HostedSecret) secretswire.Existing {
	return secretswire.Existing{
		ID:         publicID(hs),
		Scope:      string(secrets.SlotOf(hs).Scope),
		EnvVar:     hs.Spec.EnvVar,
		ValueLast4: hs.Status.ValueLast4,
		CreatedAt:  timestamp(hubv1alpha1.CreatedAt(hs).Time),
	}
}

func timestamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
