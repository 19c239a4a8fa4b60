package secrets

import (
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/apierr"
)

// RegistryRecord is a registry credential's metadata as the HTTP API shows it
// (docs/secrets.md, "Registry credentials"). It has no field that could hold the
// password.
type RegistryRecord struct {
	ID          string `json:"id"`
	OrgID       string `json:"org_id"`
	DisplayName string `json:"display_name"`
	Server      string `json:"server"`
	Username    string `json:"username"`
	Fingerprint string `json:"fingerprint"`
	ValueLast4  string `json:"value_last4"`
	Status      string `json:"status"`
	// Usable and UnusableReason: as in Record.
	Usable         bool    `json:"usable"`
	UnusableReason string  `json:"unusable_reason,omitempty"`
	CreatedAt      string  `json:"created_at"`
	LastUsedAt     *string `json:"last_used_at"`
}

// RegistryExisting is the active credential a 409 replacement_required names.
type RegistryExisting struct {
	ID          string `json:"id"`
	DisplayName string `json:"display_name"`
	Server      string `json:"server"`
	Username    string `json:"username"`
	Fingerprint string `json:"fingerprint"`
	ValueLast4  string `json:"value_last4"`
	CreatedAt   string `json:"created_at"`
}

// registryStoreBody is the body of POST /v1/registry-credentials. Password is never
// echoed anywhere, not even in a validation message.
type registryStoreBody struct {
	DisplayName           *string `json:"display_name"`
	Server                *string `json:"server"`
	Username              *string `json:"username"`
	Password              *string `json:"password"`
	OrgID                 *string `json:"org_id"`
	Org                   *string `json:"org"`
	SupersedeCredentialID *string `json:"supersede_credential_id"`
}

// registryRevokeBody is the body of DELETE /v1/registry-credentials.
type registryRevokeBody struct {
	DisplayName *string `json:"display_name"`
	Purge       *bool   `json:"purge"`
	OrgID       *string `json:"org_id"`
	Org         *string `json:"org"`
}

type registryStoreInput struct {
	Registry    hubv1alpha1.RegistrySpec
	Password    []byte
	Org         orgRef
	SupersedeID string
}

type registryRevokeInput struct {
	DisplayName string
	Purge       bool
	Org         orgRef
}

// The rules of the registry fields; the CRD states the same (a test keeps them equal).
var (
	registryServerRe = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(:[0-9]{1,5})?$`)
	displayNameRe    = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9 ._-]*[A-Za-z0-9])?$`)
)

// Limits of the registry fields.
const (
	MaxServerChars      = 253
	MaxUsernameChars    = 256
	MaxDisplayNameChars = 63
)

// CheckServer, CheckUsername and CheckDisplayName return what is wrong with a field of a
// registry credential, "" when nothing is. The CLI checks with them too.
func CheckServer(v string) string {
	if len(v) > MaxServerChars || !registryServerRe.MatchString(v) {
		return "must be a registry host name with an optional port, in lower case, such as ghcr.io or registry.example.com:5000 (at most 253 characters)"
	}
	if _, port, ok := strings.Cut(v, ":"); ok {
		if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
			return "has a port outside 1-65535"
		}
	}
	return ""
}

// CheckUsername: see CheckServer.
func CheckUsername(v string) string {
	n := len([]rune(v))
	if n < 1 || n > MaxUsernameChars {
		return "must be 1 to 256 characters"
	}
	for _, r := range v {
		if r == ':' || unicode.IsSpace(r) || unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp) {
			return "must not contain white space, ':' or control or formatting characters"
		}
	}
	return ""
}

// CheckDisplayName: see CheckServer.
func CheckDisplayName(v string) string {
	if len(v) > MaxDisplayNameChars || !displayNameRe.MatchString(v) {
		return "must be 1 to 63 letters, digits, spaces, '.', '_' or '-', starting and ending with a letter or digit"
	}
	return ""
}

func validateRegistryStore(b registryStoreBody) (registryStoreInput, error) {
	for _, f := range []struct {
		name string
		v    *string
	}{{"display_name", b.DisplayName}, {"server", b.Server}, {"username", b.Username}, {"password", b.Password}} {
		if f.v == nil {
			return registryStoreInput{}, apierr.BadRequest(f.name, "is required")
		}
	}
	var errs fieldErrs
	in := registryStoreInput{
		Registry: hubv1alpha1.RegistrySpec{Server: *b.Server, Username: *b.Username, DisplayName: *b.DisplayName},
		Password: []byte(*b.Password),
	}
	if m := CheckDisplayName(in.Registry.DisplayName); m != "" {
		errs.add("display_name", m)
	}
	if m := CheckServer(in.Registry.Server); m != "" {
		errs.add("server", m)
	}
	if m := CheckUsername(in.Registry.Username); m != "" {
		errs.add("username", m)
	}
	switch n := len(in.Password); {
	case n < MinValueBytes:
		errs.add("password", "must not be empty")
	case n > MaxValueBytes:
		errs.add("password", "must be at most 65536 bytes")
	}
	in.Org = orgOf(b.OrgID, b.Org, &errs)
	in.SupersedeID = uuidField("supersede_credential_id", b.SupersedeCredentialID, &errs)
	return in, errs.err()
}

func validateRegistryRevoke(b registryRevokeBody) (registryRevokeInput, error) {
	if b.DisplayName == nil {
		return registryRevokeInput{}, apierr.BadRequest("display_name", "is required")
	}
	var errs fieldErrs
	in := registryRevokeInput{DisplayName: *b.DisplayName}
	if m := CheckDisplayName(in.DisplayName); m != "" {
		errs.add("display_name", m)
	}
	in.Org = orgOf(b.OrgID, b.Org, &errs)
	if b.Purge != nil {
		in.Purge = *b.Purge
	}
	return in, errs.err()
}

var registryListParams = map[string]bool{"status": true, "org_id": true, "org": true}

func validateRegistryList(q url.Values) (listInput, error) {
	for k, v := range q {
		if !registryListParams[k] {
			return listInput{}, apierr.BadRequest(k, "unknown query parameter; known: status, org_id, org")
		}
		if len(v) > 1 {
			return listInput{}, apierr.BadRequest(k, "must be given at most once")
		}
	}
	var errs fieldErrs
	in := listInput{Status: "active", Scope: hubv1alpha1.ScopeOrg}
	if q.Has("status") {
		switch s := q.Get("status"); s {
		case "active", "revoked", "all":
			in.Status = s
		default:
			errs.add("status", "must be one of active, revoked, all")
		}
	}
	in.Org = orgQuery(q, &errs)
	return in, errs.err()
}

// registryRoutes are the handlers of /v1/registry-credentials.
func (a *API) registryRoutes() map[string]http.Handler {
	return map[string]http.Handler{
		"POST /v1/registry-credentials":   http.HandlerFunc(a.storeRegistry),
		"GET /v1/registry-credentials":    http.HandlerFunc(a.listRegistry),
		"DELETE /v1/registry-credentials": http.HandlerFunc(a.revokeRegistry),
	}
}

func registrySlot(namespace, displayName string) Slot {
	return Slot{Namespace: namespace, Scope: hubv1alpha1.ScopeOrg, DisplayName: displayName}
}

func (a *API) storeRegistry(w http.ResponseWriter, r *http.Request) {
	caller, in, org, ok := begin(a, w, r, validateRegistryStore, func(in registryStoreInput) orgRef { return in.Org }, "create")
	if !ok {
		return
	}
	if in.SupersedeID != "" {
		ok, err := a.allowed(r.Context(), caller, org.Name, "supersede")
		if err != nil {
			a.internal(w, r, err)
			return
		}
		if !ok {
			apierr.Write(w, apierr.Forbidden("replacing an active registry credential needs organization owner rights (the supersede verb on hostedsecrets in %s)", org.Name))
			return
		}
	}
	fp, err := a.Keyring.Fingerprint(r.Context(), in.Password)
	if err != nil {
		a.internal(w, r, err)
		return
	}
	name := in.Registry.DisplayName
	hs, old, err := a.Store.Store(r.Context(), StoreRequest{
		Slot: registrySlot(org.Name, name), Value: in.Password, CreatedBy: caller.User,
		SupersedeID: types.UID(in.SupersedeID), Registry: &in.Registry, Fingerprint: fp,
	})
	var rr *ReplacementRequiredError
	switch {
	case errors.As(err, &rr):
		e := apierr.New(http.StatusConflict, apierr.CodeReplacementRequired,
			"an active registry credential named %q already exists; repeat the request with supersede_credential_id set to existing.id to replace it", name)
		e.Existing = registryExistingOf(rr.Existing)
		apierr.Write(w, e)
		return
	case errors.Is(err, ErrStale):
		apierr.Write(w, apierr.New(http.StatusConflict, apierr.CodeReplacementStale,
			"supersede_credential_id no longer names the active registry credential %q; list the credentials again before retrying", name))
		return
	case errors.Is(err, ErrLimitReached):
		apierr.Write(w, apierr.New(http.StatusConflict, apierr.CodeLimitReached,
			"organization %s already holds %d registry credentials; revoke one, or supersede one by its display name", org.Name, MaxRegistryCredentials))
		return
	case err != nil:
		a.internal(w, r, err)
		return
	}
	a.awaitStored(r.Context(), hs, old)
	writeJSON(w, http.StatusCreated, registryRecordOf(hs, string(org.UID)))
}

func (a *API) listRegistry(w http.ResponseWriter, r *http.Request) {
	caller, ok := a.caller(w, r)
	if !ok {
		return
	}
	q, ok := parseQuery(w, r)
	if !ok {
		return
	}
	in, err := validateRegistryList(q)
	if err != nil {
		apierr.Write(w, err)
		return
	}
	org, err := a.org(r.Context(), in.Org, caller)
	if err != nil {
		apierr.Write(w, err)
		return
	}
	// Registry credentials belong to the organization: whoever may list hosted secrets
	// there sees them all (metadata only).
	if err := a.authorize(r.Context(), caller, org.Name, "list"); err != nil {
		apierr.Write(w, err)
		return
	}
	hsl := &hubv1alpha1.HostedSecretList{}
	if err := a.Cache.List(r.Context(), hsl, client.InNamespace(org.Name)); err != nil {
		a.internal(w, r, err)
		return
	}
	out := []RegistryRecord{}
	for i := range hsl.Items {
		hs := &hsl.Items[i]
		if hs.Spec.Type == hubv1alpha1.TypeRegistry && hs.Spec.Registry != nil && listed(hs, in, true, caller.User) {
			out = append(out, registryRecordOf(hs, string(org.UID)))
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].DisplayName != out[j].DisplayName {
			return out[i].DisplayName < out[j].DisplayName
		}
		if out[i].CreatedAt != out[j].CreatedAt {
			return out[i].CreatedAt < out[j].CreatedAt
		}
		return out[i].ID < out[j].ID
	})
	writeJSON(w, http.StatusOK, map[string][]RegistryRecord{"registry_credentials": out})
}

func (a *API) revokeRegistry(w http.ResponseWriter, r *http.Request) {
	caller, in, org, ok := begin(a, w, r, validateRegistryRevoke, func(in registryRevokeInput) orgRef { return in.Org }, "delete")
	if !ok {
		return
	}
	// Like a job-scope secret: whoever stored it, or a holder of manage-others.
	permit, err := a.permit(r.Context(), caller, org.Name, hubv1alpha1.ScopeOrg)
	if err != nil {
		a.internal(w, r, err)
		return
	}
	slot := registrySlot(org.Name, in.DisplayName)
	var changed []*hubv1alpha1.HostedSecret
	if in.Purge {
		changed, err = a.Store.PurgeSlot(r.Context(), slot, permit)
	} else {
		changed, err = a.Store.RevokeSlot(r.Context(), slot, permit)
	}
	if errors.Is(err, ErrNotYours) {
		apierr.Write(w, apierr.Forbidden("the registry credential %q was stored by another user; revoking or purging it needs the %s verb on hostedsecrets in %s",
			in.DisplayName, VerbManageOthers, org.Name))
		return
	}
	if err != nil {
		a.internal(w, r, err)
		return
	}
	for _, hs := range changed {
		a.awaitCache(r.Context(), hs, func(c *hubv1alpha1.HostedSecret) bool {
			return (c == nil) == in.Purge && (c == nil || c.Status.State == hubv1alpha1.StateRevoked)
		})
	}
	writeJSON(w, http.StatusOK, map[string]int{"affected": len(changed)})
}

func registryRecordOf(hs *hubv1alpha1.HostedSecret, orgID string) RegistryRecord {
	reg := hs.Spec.Registry
	if reg == nil {
		reg = &hubv1alpha1.RegistrySpec{}
	}
	rec := RegistryRecord{
		ID:          string(BindingID(hs)),
		OrgID:       orgID,
		DisplayName: reg.DisplayName,
		Server:      reg.Server,
		Username:    reg.Username,
		Fingerprint: hs.Status.Fingerprint,
		ValueLast4:  hs.Status.ValueLast4,
		Status:      string(hs.Status.State),
		CreatedAt:   timestamp(hubv1alpha1.CreatedAt(hs).Time),
	}
	rec.Usable, rec.UnusableReason = Usable(hs)
	if hs.Status.LastUsedAt != nil {
		t := timestamp(hs.Status.LastUsedAt.Time)
		rec.LastUsedAt = &t
	}
	return rec
}

func registryExistingOf(hs *hubv1alpha1.HostedSecret) RegistryExisting {
	r := registryRecordOf(hs, "")
	return RegistryExisting{ID: r.ID, DisplayName: r.DisplayName, Server: r.Server, Username: r.Username,
		Fingerprint: r.Fingerprint, ValueLast4: r.ValueLast4, CreatedAt: r.CreatedAt}
}
