package secretsapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/apierr"
	"podium.dev/podium/internal/secretkind"
	"podium.dev/podium/internal/secrets"
	"podium.dev/podium/internal/wire/secretswire"
)

type registryStoreInput struct {
	Registry    hubv1alpha1.RegistrySpec
	Password    []byte
	Org         orgRef
	SupersedeID string
}

type registryRevokeInput struct {
	ID          string // credential_id, or
	DisplayName string // display_name
	Purge       bool
	Org         orgRef
}

// validateRegistryStore checks a store body: registry_host and display_name, and
// exactly one of service_account_json (stored as GAR expects it: user _json_key, the
// key's JSON as the password) or username and password.
func validateRegistryStore(b secretswire.StoreRegistry) (registryStoreInput, error) {
	for _, f := range []struct {
		name string
		v    *string
	}{{"registry_host", b.RegistryHost}, {"display_name", b.DisplayName}} {
		if f.v == nil {
			return registryStoreInput{}, apierr.BadRequest(f.name, "is required")
		}
	}
	saJSON := len(b.ServiceAccountJSON) > 0 && string(b.ServiceAccountJSON) != "null"
	switch {
	case saJSON && (b.Username != nil || b.Password != nil):
		return registryStoreInput{}, apierr.BadRequest("service_account_json", "give service_account_json, or username and password, not both")
	case !saJSON && b.Username == nil && b.Password == nil:
		return registryStoreInput{}, apierr.BadRequest("service_account_json", "is required (or username and password, for a registry other than Google Artifact Registry)")
	case !saJSON && b.Username == nil:
		return registryStoreInput{}, apierr.BadRequest("username", "is required with password")
	case !saJSON && b.Password == nil:
		return registryStoreInput{}, apierr.BadRequest("password", "is required with username")
	}
	var errs fieldErrs
	in := registryStoreInput{Registry: hubv1alpha1.RegistrySpec{Server: *b.RegistryHost, DisplayName: *b.DisplayName}}
	if m := hubv1alpha1.CheckDisplayName(in.Registry.DisplayName); m != "" {
		errs.add("display_name", m)
	}
	if m := hubv1alpha1.CheckServer(in.Registry.Server); m != "" {
		errs.add("registry_host", m)
	}
	if saJSON {
		in.Registry.Username = hubv1alpha1.GARUsername
		key, msg := serviceAccountKey(b.ServiceAccountJSON)
		if msg != "" {
			errs.add("service_account_json", msg)
		}
		in.Password = key
	} else {
		in.Registry.Username = *b.Username
		in.Password = []byte(*b.Password)
		if m := hubv1alpha1.CheckUsername(in.Registry.Username); m != "" {
			errs.add("username", m)
		} else if in.Registry.Username == hubv1alpha1.GARUsername {
			errs.add("username", "_json_key is the user of a Google service-account key: send the key as service_account_json")
		}
		checkValueSize("password", in.Password, &errs)
	}
	in.Org = orgOf(b.OrgID, b.Org, &errs)
	in.SupersedeID = uuidField("supersede_credential_id", b.SupersedeCredentialID, &errs)
	return in, errs.err()
}

// checkValueSize checks that a value is 1 B to 64 KiB.
func checkValueSize(field string, v []byte, errs *fieldErrs) {
	switch n := len(v); {
	case n < secrets.MinValueBytes:
		errs.add(field, "must not be empty")
	case n > secrets.MaxValueBytes:
		errs.add(field, "must be at most 65536 bytes")
	}
}

// serviceAccountKey reads service_account_json: the key file's text as a JSON string,
// or the key itself as a JSON object. It returns the key as compact JSON (what GAR
// takes as the password; the fingerprint then ignores white space), or what is wrong,
// never quoting the key.
func serviceAccountKey(raw json.RawMessage) ([]byte, string) {
	text := []byte(raw)
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, "must be a JSON string or object"
		}
		text = []byte(s)
	}
	if len(text) > secrets.MaxValueBytes {
		return nil, "must be at most 65536 bytes"
	}
	var key struct {
		Type        string `json:"type"`
		ClientEmail string `json:"client_email"`
		PrivateKey  string `json:"private_key"`
	}
	if json.Unmarshal(text, &key) != nil {
		return nil, "must be a Google service-account key: a JSON object (the key file's text)"
	}
	if key.Type != "service_account" || key.ClientEmail == "" || key.PrivateKey == "" {
		return nil, `must be a Google service-account key: "type": "service_account" with client_email and private_key`
	}
	var compact bytes.Buffer
	if json.Compact(&compact, text) != nil {
		return nil, "must be a Google service-account key: a JSON object (the key file's text)"
	}
	return compact.Bytes(), ""
}

func validateRegistryRevoke(b secretswire.RevokeRegistry) (registryRevokeInput, error) {
	switch {
	case b.CredentialID == nil && b.DisplayName == nil:
		return registryRevokeInput{}, apierr.BadRequest("credential_id", "is required (or display_name)")
	case b.CredentialID != nil && b.DisplayName != nil:
		return registryRevokeInput{}, apierr.BadRequest("credential_id", "give credential_id or display_name, not both")
	}
	var errs fieldErrs
	var in registryRevokeInput
	if b.CredentialID != nil {
		if in.ID = uuidField("credential_id", b.CredentialID, &errs); in.ID == "" && len(errs) == 0 {
			errs.add("credential_id", "must be a UUID")
		}
	} else {
		in.DisplayName = *b.DisplayName
		if m := hubv1alpha1.CheckDisplayName(in.DisplayName); m != "" {
			errs.add("display_name", m)
		}
	}
	in.Org = orgOf(b.OrgID, b.Org, &errs)
	if b.Purge != nil {
		in.Purge = *b.Purge
	}
	return in, errs.err()
}

func validateRegistryList(q url.Values) (listInput, error) {
	if err := knownParams(q, "status", "org_id", "org"); err != nil {
		return listInput{}, err
	}
	var errs fieldErrs
	in := listInput{Kind: &secretkind.Registry, Status: "active", Scope: secretkind.Registry.Scope}
	in.Status = listStatus(q, &errs)
	in.Org = orgQuery(q, &errs)
	return in, errs.err()
}

func registrySlot(namespace, displayName string) secrets.Slot {
	return secrets.Slot{Namespace: namespace, Scope: secretkind.Registry.Scope, DisplayName: displayName}
}

func (a *API) storeRegistry(w http.ResponseWriter, r *http.Request) {
	caller, in, org, ok := begin(a, w, r, validateRegistryStore, func(in registryStoreInput) orgRef { return in.Org }, "create")
	if !ok {
		return
	}
	if !a.mayReplace(w, r, caller, org.Name, in.SupersedeID, "an active registry credential") {
		return
	}
	fp, err := a.Keyring.Fingerprint(r.Context(), in.Password)
	if err != nil {
		a.internal(w, r, err)
		return
	}
	name := in.Registry.DisplayName
	hs, old, err := a.Store.Store(r.Context(), secrets.StoreRequest{
		Slot: registrySlot(org.Name, name), Value: in.Password, CreatedBy: caller.User,
		SupersedeID: types.UID(in.SupersedeID), Kind: &secretkind.Registry, Registry: &in.Registry, Fingerprint: fp,
	})
	switch {
	case errors.Is(err, secrets.ErrLimitReached):
		apierr.Write(w, apierr.New(http.StatusConflict, apierr.CodeLimitReached,
			"organization %s already holds %d registry credentials; revoke one, or supersede one by its display name", org.Name, secrets.MaxRegistryCredentials))
		return
	case err != nil:
		a.storeFailed(w, r, err, replaced{
			exists: fmt.Sprintf("an active registry credential named %q already exists", name), listed: fmt.Sprintf("the active registry credential %q", name),
			plural: "credentials", existing: func(hs *hubv1alpha1.HostedSecret) any { return registryExistingOf(hs) },
		})
		return
	}
	a.awaitStored(r.Context(), hs, old)
	writeJSON(w, http.StatusCreated, registryRecordOf(hs, hubv1alpha1.ID(org)))
}

func (a *API) listRegistry(w http.ResponseWriter, r *http.Request) {
	caller, in, org, ok := beginList(a, w, r, validateRegistryList)
	if !ok {
		return
	}
	// Registry credentials belong to the organization: whoever may list hosted secrets
	// there sees them all (metadata only).
	if err := a.authorize(r.Context(), caller, org.Name, "list"); err != nil {
		apierr.Write(w, err)
		return
	}
	out, ok := records(a, w, r, org.Name, func(hs *hubv1alpha1.HostedSecret) bool {
		return hs.Spec.Registry != nil && listed(hs, in, true, caller.User)
	}, func(hs *hubv1alpha1.HostedSecret) secretswire.RegistryRecord {
		return registryRecordOf(hs, hubv1alpha1.ID(org))
	})
	if !ok {
		return
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
	writeJSON(w, http.StatusOK, secretswire.RegistryList{Credentials: out})
}

func (a *API) revokeRegistry(w http.ResponseWriter, r *http.Request) {
	caller, in, org, ok := begin(a, w, r, validateRegistryRevoke, func(in registryRevokeInput) orgRef { return in.Org }, "delete")
	if !ok {
		return
	}
	// Like a job-scope secret: whoever stored it, or a holder of manage-others.
	permit, err := a.permit(r.Context(), caller, org.Name, secretkind.Registry.Scope)
	if err != nil {
		a.internal(w, r, err)
		return
	}
	what := fmt.Sprintf("%q", in.DisplayName)
	var changed []*hubv1alpha1.HostedSecret
	switch {
	case in.ID != "":
		what = in.ID
		changed, err = a.revokeRegistryID(r, org.Name, in, permit)
	case in.Purge:
		changed, err = a.Store.PurgeSlot(r.Context(), registrySlot(org.Name, in.DisplayName), permit)
	default:
		changed, err = a.Store.RevokeSlot(r.Context(), registrySlot(org.Name, in.DisplayName), permit)
	}
	if errors.Is(err, secrets.ErrNotYours) {
		apierr.Write(w, apierr.Forbidden("the registry credential %s was stored by another user; revoking or purging it needs the %s verb on hostedsecrets in %s",
			what, secrets.VerbManageOthers, org.Name))
		return
	}
	if err != nil {
		a.internal(w, r, err)
		return
	}
	a.awaitRevoked(r.Context(), changed, in.Purge)
	writeJSON(w, http.StatusOK, secretswire.RegistryAffected{CredentialID: in.ID, Affected: len(changed), Purged: in.Purge})
}

// revokeRegistryID revokes (or purges) the one record credential_id names. An id the
// organization has no registry credential of changes nothing (affected 0, as Harbor's hub
// answers and its CLI expects); so does revoking a revoked one; purging deletes that
// record only, never its display name's other records.
func (a *API) revokeRegistryID(r *http.Request, ns string, in registryRevokeInput, permit secrets.Permit) ([]*hubv1alpha1.HostedSecret, error) {
	hs, err := a.registryByID(r, ns, in.ID)
	if err != nil || hs == nil {
		return nil, err
	}
	if in.Purge {
		deleted, err := a.Store.PurgeRecord(r.Context(), hs, permit)
		if err != nil || !deleted {
			return nil, err
		}
		return []*hubv1alpha1.HostedSecret{hs}, nil
	}
	if hs.Status.State != hubv1alpha1.StateActive {
		return nil, nil
	}
	if !permit(hs) {
		return nil, secrets.ErrNotYours
	}
	superseded := false
	changed, err := a.Store.RevokeSlot(r.Context(), secrets.SlotOf(hs), func(holder *hubv1alpha1.HostedSecret) bool {
		superseded = holder.UID != hs.UID
		return !superseded && permit(holder)
	})
	if superseded && errors.Is(err, secrets.ErrNotYours) {
		return nil, nil // replaced meanwhile: nothing of this id is active any more
	}
	return changed, err
}

// registryByID finds a registry credential of an organization by its id, read fresh
// from the apiserver (a purge or revoke decides on it); nil when it has none of that id.
func (a *API) registryByID(r *http.Request, ns, id string) (*hubv1alpha1.HostedSecret, error) {
	hsl := &hubv1alpha1.HostedSecretList{}
	if err := a.Cache.List(r.Context(), hsl, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	for i := range hsl.Items {
		hs := &hsl.Items[i]
		if publicID(hs) != id || secretkind.Of(hs) != &secretkind.Registry || hs.DeletionTimestamp != nil || hs.Status.State == "" {
			continue
		}
		fresh := &hubv1alpha1.HostedSecret{}
		if err := a.Store.Reader.Get(r.Context(), client.ObjectKeyFromObject(hs), fresh); err != nil {
			if apierrors.IsNotFound(err) {
				break
			}
			return nil, err
		}
		if fresh.UID == hs.UID {
			return fresh, nil
		}
	}
	return nil, nil
}

func registryRecordOf(hs *hubv1alpha1.HostedSecret, orgID string) secretswire.RegistryRecord {
	reg := hs.Spec.Registry
	if reg == nil {
		reg = &hubv1alpha1.RegistrySpec{}
	}
	rec := secretswire.RegistryRecord{
		ID:           publicID(hs),
		Provider:     hubv1alpha1.RegistryProvider(reg),
		RegistryHost: reg.Server,
		DisplayName:  reg.DisplayName,
		Fingerprint:  hs.Status.Fingerprint,
		Status:       string(hs.Status.State),
		CreatedAt:    timestamp(hubv1alpha1.CreatedAt(hs).Time),
		OrgID:        orgID,
		Username:     reg.Username,
	}
	if rec.Provider != hubv1alpha1.RegistryProviderGAR {
		rec.ValueLast4 = hs.Status.ValueLast4
	}
	rec.Usable, rec.UnusableReason = secrets.Usable(hs)
	if hs.Status.LastUsedAt != nil {
		t := timestamp(hs.Status.LastUsedAt.Time)
		rec.LastUsedAt = &t
	}
	return rec
}

func registryExistingOf(hs *hubv1alpha1.HostedSecret) secretswire.RegistryExisting {
	r := registryRecordOf(hs, "")
	return secretswire.RegistryExisting{ID: r.ID, Provider: r.Provider, RegistryHost: r.RegistryHost, DisplayName: r.DisplayName,
		Fingerprint: r.Fingerprint, ValueLast4: r.ValueLast4, CreatedAt: r.CreatedAt}
}
