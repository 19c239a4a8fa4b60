package secrets

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/secretkind"
)

// SlotIndex is the cache field index of HostedSecrets by "<namespace>/<slot hash>".
const SlotIndex = "podium.slot"

// SlotIndexValue is what SlotIndex holds for a HostedSecret.
func SlotIndexValue(hs *hubv1alpha1.HostedSecret) string {
	return hs.Namespace + "/" + SlotOf(hs).Hash()
}

// StoreRequest is a validated request to store a secret.
type StoreRequest struct {
	Slot     Slot
	Provider string
	// Value is the secret value; it only ever goes into the Secret's data.
	Value []byte
	// CreatedBy is the Kubernetes user storing it.
	CreatedBy string
	// SupersedeID, when set, is the id of the active secret the new one replaces.
	SupersedeID types.UID
	// Kind is the kind of the secret; nil is secretkind.Env. Its Encode makes the value
	// Secret's data (for a registry credential a .dockerconfigjson of Registry).
	Kind *secretkind.Kind
	// Registry names the registry and account of a registry credential (Slot.Scope
	// org); the value is then the password.
	Registry *hubv1alpha1.RegistrySpec
	// Fingerprint is the value's fingerprint, for a kind that is Fingerprinted
	// (Keyring.Fingerprint).
	Fingerprint string
}

// kind is the request's kind (secretkind.Env by default).
func (req StoreRequest) kind() *secretkind.Kind {
	if req.Kind == nil {
		return &secretkind.Env
	}
	return req.Kind
}

// ReplacementRequiredError says the slot has an active secret and the request did not
// name it for replacement.
type ReplacementRequiredError struct {
	Existing *hubv1alpha1.HostedSecret
}

func (e *ReplacementRequiredError) Error() string {
	return "an active secret already exists for " + Subject(e.Existing)
}

// Store stores and revokes hosted secrets for the HTTP API.
type Store struct {
	*Lifecycle
	// Seats bounds the registry credentials of an organization (seats.go); nil
	// refuses registry credentials.
	Seats *Seats
}

// claim makes hs, a first store, the holder of its empty slot. A secret of a Seated kind
// (a registry credential) takes one of its organization's seats before it claims its
// slot; the pointer records which (a swap keeps it).
func (s *Store) claim(ctx context.Context, hs *hubv1alpha1.HostedSecret, req StoreRequest) error {
	var annotations map[string]string
	if req.kind().Seated {
		if s.Seats == nil {
			return errors.New("registry credentials are not configured")
		}
		seat, err := s.Seats.Take(ctx, hs)
		if err != nil {
			return err
		}
		annotations = map[string]string{hubv1alpha1.AnnotationRegistrySeat: seat}
	}
	holder, err := s.Slots.ClaimWith(ctx, hs, annotations)
	if err != nil {
		if err := s.unlessHolder(ctx, hs, err); err != nil {
			return err
		}
	}
	if holder != nil {
		return &ReplacementRequiredError{Existing: holder}
	}
	return nil
}

// cleanupTimeout bounds the undoing of a failed store, which runs even when the
// request's context has ended, so that no half-written secret is left behind.
const cleanupTimeout = 15 * time.Second

// Store stores a new secret in its slot: a HostedSecret and its value's Secret are
// created, then the slot is claimed (first store) or swapped from the secret being
// superseded. Whatever fails, what this call created is deleted again. It returns the
// stored secret and the one it superseded (nil for a first store).
func (s *Store) Store(ctx context.Context, req StoreRequest) (stored, superseded *hubv1alpha1.HostedSecret, err error) {
	// Fail early without writing anything when the answer is already known; the claim
	// or swap below decides again, atomically.
	p, err := s.Slots.Read(ctx, req.Slot)
	if err != nil {
		return nil, nil, err
	}
	holder, err := s.Slots.Holder(ctx, p)
	if err != nil {
		return nil, nil, err
	}
	if req.SupersedeID == "" && holder != nil {
		return nil, nil, &ReplacementRequiredError{Existing: holder}
	}
	if req.SupersedeID != "" && (holder == nil || BindingID(holder) != req.SupersedeID) {
		return nil, nil, ErrStale
	}

	hs, err := s.create(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	committed := false
	defer func() {
		if !committed {
			s.discard(hs)
		}
	}()

	var old *hubv1alpha1.HostedSecret
	if req.SupersedeID == "" {
		if err := s.claim(ctx, hs, req); err != nil {
			return nil, nil, err
		}
	} else {
		old, err = s.Slots.Swap(ctx, hs, req.SupersedeID)
		if errors.Is(err, ErrStale) {
			return nil, nil, ErrStale
		}
		if err != nil {
			if err := s.unlessHolder(ctx, hs, err); err != nil {
				return nil, nil, err
			}
		}
	}
	committed = true // hs holds the slot: from here on, failures are repaired, not undone

	if old != nil {
		if _, err := s.Revoke(ctx, old, hubv1alpha1.RevokedSupersede, string(BindingID(hs))); err != nil {
			// The controller revokes a secret that lost its slot; the store itself succeeded.
			s.Log.Error(err, "Revoking a superseded secret failed; the controller will retry", "hostedSecret", client.ObjectKeyFromObject(old))
		}
	}
	if err := s.Activate(ctx, hs, Last4(req.Value)); err != nil {
		s.Log.Error(err, "Activating a stored secret failed; the controller will retry", "hostedSecret", client.ObjectKeyFromObject(hs))
		hs.Status.State = hubv1alpha1.StateActive
	}
	return hs, old, nil
}

// unlessHolder turns a write error of unknown outcome into success when hs holds the
// slot after all (the write went through but its answer was lost).
func (s *Store) unlessHolder(ctx context.Context, hs *hubv1alpha1.HostedSecret, err error) error {
	if p, rerr := s.Slots.Read(ctx, SlotOf(hs)); rerr == nil && Names(p.HolderUID(), hs) {
		return nil
	}
	return err
}

// create writes the HostedSecret, its value's Secret (owned by it) and its pending status.
func (s *Store) create(ctx context.Context, req StoreRequest) (*hubv1alpha1.HostedSecret, error) {
	kind := req.kind()
	spec := hubv1alpha1.HostedSecretSpec{
		Type:     kind.Type,
		Registry: req.Registry.DeepCopy(),
		Scope:    req.Slot.Scope,
		JobID:    req.Slot.JobID,
		Owner:    req.Slot.Owner,
		EnvVar:   req.Slot.EnvVar,
		Provider: req.Provider,
	}
	name := objectName(kind.ObjectBase(&spec))
	spec.SecretRef = s.Place.NewValueRef(name)
	hs := &hubv1alpha1.HostedSecret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   req.Slot.Namespace,
			Name:        name,
			Annotations: map[string]string{hubv1alpha1.AnnotationCreatedBy: req.CreatedBy},
		},
		Spec: spec,
	}
	if err := s.Client.Create(ctx, hs); err != nil {
		return nil, fmt.Errorf("creating HostedSecret %s/%s: %w", hs.Namespace, name, err)
	}
	key, _ := s.Place.Of(hs)
	data, err := kind.Encode(&hs.Spec, req.Value)
	if err != nil {
		s.discard(hs)
		return nil, err
	}
	sec := s.Place.NewValueSecret(hs, key, kind.SecretType, data)
	if err := s.Client.Create(ctx, sec); err != nil {
		s.discard(hs)
		return nil, fmt.Errorf("creating the value Secret %s/%s: %w", key.Namespace, key.Name, err)
	}
	if err := s.SetPending(ctx, hs, Last4(req.Value), req.Fingerprint); err != nil {
		s.discard(hs)
		return nil, err
	}
	return hs, nil
}

// discard deletes a HostedSecret that never became active, and its value's Secret.
func (s *Store) discard(hs *hubv1alpha1.HostedSecret) {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	if key, ok := s.Place.Of(hs); ok {
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
		if err := s.Client.Delete(ctx, sec); err != nil && !apierrors.IsNotFound(err) {
			s.Log.Error(err, "Deleting the value Secret of a discarded secret failed; the controller will remove it", "hostedSecret", client.ObjectKeyFromObject(hs))
		}
	}
	if err := s.Client.Delete(ctx, hs, client.Preconditions{UID: &hs.UID}); err != nil && !apierrors.IsNotFound(err) {
		s.Log.Error(err, "Deleting a discarded HostedSecret failed", "hostedSecret", client.ObjectKeyFromObject(hs))
	}
}

// ErrNotYours says a revoke or purge would touch a secret the caller may not (a
// job-scope secret another user stored).
var ErrNotYours = errors.New("the secret was stored by another user")

// Permit says whether the caller of a revoke or purge may act on a record.
type Permit func(*hubv1alpha1.HostedSecret) bool

// RevokeSlot revokes the active secret of a slot and returns it (none when the slot had
// no active secret). A holder that permit refuses is left alone: ErrNotYours.
func (s *Store) RevokeSlot(ctx context.Context, slot Slot, permit Permit) ([]*hubv1alpha1.HostedSecret, error) {
	for range maxClaimAttempts {
		p, err := s.Slots.Read(ctx, slot)
		if err != nil {
			return nil, err
		}
		holder, err := s.Slots.Holder(ctx, p)
		if err != nil {
			return nil, err
		}
		if holder == nil {
			return nil, nil
		}
		if !permit(holder) {
			return nil, ErrNotYours
		}
		revoked, err := s.Revoke(ctx, holder, hubv1alpha1.RevokedByRequest, "")
		if err != nil {
			return nil, err
		}
		if !revoked {
			continue // superseded or revoked meanwhile: look at the slot again
		}
		if err := s.Slots.Release(ctx, p); err != nil {
			s.Log.Error(err, "Releasing a revoked secret's slot failed; the slot is free anyway", "hostedSecret", client.ObjectKeyFromObject(holder))
		}
		return []*hubv1alpha1.HostedSecret{holder}, nil
	}
	return nil, fmt.Errorf("revoking slot %s: the slot kept changing", slot.Hash())
}

// PurgeSlot permanently deletes every record of a slot (the active one and the revoked
// ones) with their value Secrets, and returns the records it deleted. When permit
// refuses any record, nothing is deleted: ErrNotYours.
func (s *Store) PurgeSlot(ctx context.Context, slot Slot, permit Permit) ([]*hubv1alpha1.HostedSecret, error) {
	p, err := s.Slots.Read(ctx, slot)
	if err != nil {
		return nil, err
	}
	victims := map[types.UID]*hubv1alpha1.HostedSecret{}
	holder, err := s.Slots.Holder(ctx, p)
	if err != nil {
		return nil, err
	}
	if holder != nil {
		victims[holder.UID] = holder
	}
	list := &hubv1alpha1.HostedSecretList{}
	if err := s.Client.List(ctx, list, client.InNamespace(slot.Namespace), client.MatchingFields{SlotIndex: slot.Namespace + "/" + slot.Hash()}); err != nil {
		return nil, fmt.Errorf("listing the secrets of slot %s: %w", slot.Hash(), err)
	}
	for i := range list.Items {
		hs := &list.Items[i]
		if hs.Status.State == "" || hs.DeletionTimestamp != nil {
			continue // a store in flight (or its leftovers): not a record yet
		}
		if _, ok := victims[hs.UID]; !ok {
			victims[hs.UID] = hs
		}
	}
	ordered := make([]*hubv1alpha1.HostedSecret, 0, len(victims))
	for _, hs := range victims {
		ordered = append(ordered, hs)
	}
	sort.Slice(ordered, func(i, j int) bool { return ordered[i].Name < ordered[j].Name })
	for _, hs := range ordered {
		if !permit(hs) {
			return nil, ErrNotYours
		}
	}
	var deleted []*hubv1alpha1.HostedSecret
	for _, hs := range ordered {
		// The record first: a value Secret left without its record is removed by the
		// controller, while a record left without its value would look usable.
		err := s.Client.Delete(ctx, hs, client.Preconditions{UID: &hs.UID})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			continue
		}
		if err != nil {
			return deleted, fmt.Errorf("deleting HostedSecret %s/%s: %w", hs.Namespace, hs.Name, err)
		}
		deleted = append(deleted, hs)
		s.event(hs, corev1.EventTypeNormal, "Purged", "Purge", "Secret %s for %s purged", BindingID(hs), Subject(hs))
		if err := s.DeleteValue(ctx, hs); err != nil {
			s.Log.Error(err, "Deleting a purged secret's value Secret failed; the controller will remove it", "hostedSecret", client.ObjectKeyFromObject(hs))
		}
	}
	if holder != nil {
		if err := s.Slots.Release(ctx, p); err != nil {
			s.Log.Error(err, "Releasing a purged secret's slot failed; the slot is free anyway", "slot", slot.Hash())
		}
	}
	return deleted, nil
}

// objectName is a fresh name for a HostedSecret and its Secret: the env var, readable,
// and a random suffix.
func objectName(envVar string) string {
	base := strings.ToLower(strings.ReplaceAll(envVar, "_", "-"))
	if len(base) > 40 {
		base = base[:40]
	}
	base = strings.TrimRight(base, "-")
	return base + "-" + randomSuffix(10)
}

const suffixAlphabet = "bcdfghjklmnpqrstvwxz2456789"

func randomSuffix(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = suffixAlphabet[int(b[i])%len(suffixAlphabet)]
	}
	return string(b)
}

func ownerRef(hs *hubv1alpha1.HostedSecret) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion:         hubv1alpha1.GroupVersion.String(),
		Kind:               "HostedSecret",
		Name:               hs.Name,
		UID:                hs.UID,
		Controller:         ptr.To(true),
		BlockOwnerDeletion: ptr.To(true),
	}
}
