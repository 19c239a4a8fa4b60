package secrets

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/secretkind"
)

// Slot is where at most one secret may be active: the org (namespace), the scope, the
// owner (user scope) or the job (job scope), and the environment variable.
type Slot struct {
	Namespace string
	Scope     hubv1alpha1.SecretScope
	// Owner is the Kubernetes user name for user scope, "" for job scope.
	Owner string
	// JobID is the job's UUID (lowercase) for job scope, "" for user scope.
	JobID  string
	EnvVar string
	// DisplayName names a registry credential (org scope); "" for the other scopes.
	DisplayName string
}

// SlotOf returns the slot of a HostedSecret.
func SlotOf(hs *hubv1alpha1.HostedSecret) Slot {
	s := Slot{Namespace: hs.Namespace, Scope: hs.Spec.Scope, EnvVar: hs.Spec.EnvVar}
	if s.Scope == "" {
		s.Scope = hubv1alpha1.ScopeUser
	}
	switch s.Scope {
	case hubv1alpha1.ScopeJob:
		s.JobID = strings.ToLower(hs.Spec.JobID)
	case hubv1alpha1.ScopeOrg:
		s.DisplayName = secretkind.Of(hs).Name(&hs.Spec)
	default:
		s.Owner = hs.Spec.Owner
	}
	return s
}

// Hash identifies the slot inside its namespace: 40 hex digits of a SHA-256 over the
// scope, the owner or job and the env var (for org scope: the display name), short
// enough for a label value.
func (s Slot) Hash() string {
	who, name := s.Owner, s.EnvVar
	switch s.Scope {
	case hubv1alpha1.ScopeJob:
		who = s.JobID
	case hubv1alpha1.ScopeOrg:
		who, name = "", s.DisplayName
	}
	sum := sha256.Sum256([]byte("v1\x00" + string(s.Scope) + "\x00" + who + "\x00" + name))
	return hex.EncodeToString(sum[:])[:40]
}

// PointerName is the name of the slot's pointer Lease in the slot's namespace.
func (s Slot) PointerName() string { return "podium-slot-" + s.Hash() }

// ErrStale says the slot's active secret is not the one the caller expected.
var ErrStale = errors.New("the active secret changed")

// maxClaimAttempts bounds the read-then-write loop of a claim; every retry means another
// writer changed the pointer, so few are ever needed.
const maxClaimAttempts = 8

// Slots reads and writes slot pointers. A pointer is a coordination.k8s.io Lease named
// after the slot whose holderIdentity is the id (BindingID) of the slot's active
// HostedSecret, so that a restored pointer still names its restored secret. All
// reads are uncached (Reader is the manager's API reader): a decision is only as good
// as the resourceVersion it was made on, and writes carry that resourceVersion.
type Slots struct {
	Client client.Client
	Reader client.Reader
}

// Pointer is one read of a slot pointer; Lease is nil when the slot has none.
type Pointer struct {
	Slot  Slot
	Lease *coordinationv1.Lease
}

// HolderUID is the id (BindingID) of the secret the pointer names, "" when there is no pointer.
func (p Pointer) HolderUID() types.UID {
	if p.Lease == nil || p.Lease.Spec.HolderIdentity == nil {
		return ""
	}
	return types.UID(*p.Lease.Spec.HolderIdentity)
}

// Read returns the slot's pointer as it is now in the apiserver.
func (s *Slots) Read(ctx context.Context, slot Slot) (Pointer, error) {
	l := &coordinationv1.Lease{}
	err := s.Reader.Get(ctx, client.ObjectKey{Namespace: slot.Namespace, Name: slot.PointerName()}, l)
	if apierrors.IsNotFound(err) {
		return Pointer{Slot: slot}, nil
	}
	if err != nil {
		return Pointer{}, fmt.Errorf("reading the pointer of slot %s: %w", slot.Hash(), err)
	}
	return Pointer{Slot: slot, Lease: l}, nil
}

// Holder returns the secret the pointer names when it is still live (it exists with
// that id (Names), is not being deleted and is not revoked), else nil: a pointer to a gone or
// revoked secret is stale and the slot is free.
func (s *Slots) Holder(ctx context.Context, p Pointer) (*hubv1alpha1.HostedSecret, error) {
	uid := p.HolderUID()
	if uid == "" {
		return nil, nil
	}
	name := p.Lease.Annotations[hubv1alpha1.AnnotationHolderName]
	if name == "" {
		return nil, nil
	}
	hs := &hubv1alpha1.HostedSecret{}
	err := s.Reader.Get(ctx, client.ObjectKey{Namespace: p.Slot.Namespace, Name: name}, hs)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the active secret of slot %s: %w", p.Slot.Hash(), err)
	}
	if !Names(uid, hs) || hs.DeletionTimestamp != nil || hs.Status.State == hubv1alpha1.StateRevoked {
		return nil, nil
	}
	return hs, nil
}

// Claim makes hs the slot's holder when the slot is free (no pointer, or a stale one),
// by create-if-absent or by an update carrying the resourceVersion it read. It returns
// the live holder when another secret holds the slot, nil when hs holds it (also when
// it already did).
func (s *Slots) Claim(ctx context.Context, hs *hubv1alpha1.HostedSecret) (*hubv1alpha1.HostedSecret, error) {
	return s.ClaimWith(ctx, hs, nil)
}

// ClaimWith is Claim, writing annotations onto the pointer it creates or takes over
// (a registry credential's seat, seats.go). A swap keeps them.
func (s *Slots) ClaimWith(ctx context.Context, hs *hubv1alpha1.HostedSecret, annotations map[string]string) (*hubv1alpha1.HostedSecret, error) {
	slot := SlotOf(hs)
	for range maxClaimAttempts {
		p, err := s.Read(ctx, slot)
		if err != nil {
			return nil, err
		}
		if Names(p.HolderUID(), hs) {
			return nil, nil
		}
		if p.Lease == nil {
			err := s.Client.Create(ctx, annotate(newPointer(slot, hs), annotations))
			if apierrors.IsAlreadyExists(err) {
				continue
			}
			return nil, wrapPointerErr("creating", slot, err)
		}
		holder, err := s.Holder(ctx, p)
		if err != nil {
			return nil, err
		}
		if holder != nil {
			return holder, nil
		}
		err = s.Client.Update(ctx, annotate(pointTo(p.Lease, hs), annotations))
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			continue
		}
		return nil, wrapPointerErr("taking over", slot, err)
	}
	return nil, fmt.Errorf("claiming slot %s: the pointer kept changing", slot.Hash())
}

// Swap moves the slot from the live secret expectedID to hs, with an update carrying the
// resourceVersion under which expectedID was seen to hold it. It returns the secret that
// held the slot, or ErrStale when expectedID no longer holds it or another writer moved
// the pointer first. A nil secret and nil error mean hs already held the slot.
func (s *Slots) Swap(ctx context.Context, hs *hubv1alpha1.HostedSecret, expectedID types.UID) (*hubv1alpha1.HostedSecret, error) {
	slot := SlotOf(hs)
	p, err := s.Read(ctx, slot)
	if err != nil {
		return nil, err
	}
	if Names(p.HolderUID(), hs) {
		return nil, nil // claimed for hs meanwhile (the slot had become free): hs holds it
	}
	if p.HolderUID() != expectedID {
		// expectedID is the id a client was shown (BindingID).
		return nil, ErrStale
	}
	old, err := s.Holder(ctx, p)
	if err != nil {
		return nil, err
	}
	if old == nil {
		return nil, ErrStale
	}
	err = s.Client.Update(ctx, pointTo(p.Lease, hs))
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return nil, ErrStale
	}
	if err != nil {
		return nil, wrapPointerErr("moving", slot, err)
	}
	return old, nil
}

// Release deletes the slot's pointer if it is still the one read as p (same
// resourceVersion); a pointer someone moved meanwhile is left alone.
func (s *Slots) Release(ctx context.Context, p Pointer) error {
	if p.Lease == nil {
		return nil
	}
	err := s.Client.Delete(ctx, p.Lease, client.Preconditions{UID: &p.Lease.UID, ResourceVersion: &p.Lease.ResourceVersion})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return wrapPointerErr("releasing", p.Slot, err)
}

func wrapPointerErr(verb string, slot Slot, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s the pointer of slot %s: %w", verb, slot.Hash(), err)
}

func newPointer(slot Slot, hs *hubv1alpha1.HostedSecret) *coordinationv1.Lease {
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{
		Namespace: slot.Namespace,
		Name:      slot.PointerName(),
		Labels: map[string]string{
			hubv1alpha1.LabelManagedBy: hubv1alpha1.ManagedByPodium,
			hubv1alpha1.LabelSlot:      slot.Hash(),
		},
	}}
	return pointTo(l, hs)
}

// pointTo returns a copy of l naming hs as the holder. The holder also owns the Lease
// (not as controller, and without blocking its deletion), so that in a cluster with a
// garbage collector deleting the active secret deletes its pointer too.
func pointTo(l *coordinationv1.Lease, hs *hubv1alpha1.HostedSecret) *coordinationv1.Lease {
	l = l.DeepCopy()
	if l.Annotations == nil {
		l.Annotations = map[string]string{}
	}
	l.Annotations[hubv1alpha1.AnnotationHolderName] = hs.Name
	l.Spec.HolderIdentity = ptr.To(string(BindingID(hs)))
	l.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: hubv1alpha1.GroupVersion.String(),
		Kind:       "HostedSecret",
		Name:       hs.Name,
		UID:        hs.UID,
	}}
	return l
}

// annotate sets annotations on l (in place) and returns it.
func annotate(l *coordinationv1.Lease, annotations map[string]string) *coordinationv1.Lease {
	for k, v := range annotations {
		if l.Annotations == nil {
			l.Annotations = map[string]string{}
		}
		l.Annotations[k] = v
	}
	return l
}
