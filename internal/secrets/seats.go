package secrets

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// MaxRegistryCredentials is how many registry credentials an organization may hold
// (active ones; revoked records do not count).
const MaxRegistryCredentials = 20

// ErrLimitReached says every seat of the organization is held by a live registry
// credential.
var ErrLimitReached = errors.New("the organization holds the maximum number of registry credentials")

// maxSeatRounds bounds the list-then-write rounds of Take; a new round is only needed
// when another writer took a stale seat this one wanted.
const maxSeatRounds = 10

// Seats bounds the registry credentials of an organization without a lock in any
// process: the organization has Limit seats, Leases named SeatName(0..Limit-1) in its
// namespace, and a first store takes one before it claims its slot (docs/design/secrets.md,
// "Registry credentials: the type, the value Secret and the seats"). A seat is taken by create-if-absent, or, when it is stale, by
// an update carrying the resourceVersion read, so the apiserver gives each seat to one
// writer. A seat names its claimer (holderIdentity = the new credential's id, BindingID) and the
// slot; the slot's pointer names the seat in the annotation hub.podium.dev/registry-seat.
// A seat is live while its claimer is a store in flight (pending) or while the pointer
// of its slot names it and has a live holder; a supersede keeps both.
type Seats struct {
	Client client.Client
	// Reader reads uncached (the manager's API reader), like Slots.
	Reader client.Reader
	Slots  *Slots
	// Limit is the number of seats; 0 means MaxRegistryCredentials.
	Limit int
}

// SeatName is the name of seat i of an organization.
func SeatName(i int) string { return fmt.Sprintf("podium-registry-seat-%02d", i) }

func (s *Seats) limit() int {
	if s.Limit > 0 {
		return s.Limit
	}
	return MaxRegistryCredentials
}

// Take gives hs (a registry credential not yet holding its slot) a seat and returns the
// seat's name, or ErrLimitReached when every seat is live.
func (s *Seats) Take(ctx context.Context, hs *hubv1alpha1.HostedSecret) (string, error) {
	n := s.limit()
	for range maxSeatRounds {
		list := &coordinationv1.LeaseList{}
		if err := s.Reader.List(ctx, list, client.InNamespace(hs.Namespace), client.HasLabels{hubv1alpha1.LabelRegistrySeat}); err != nil {
			return "", fmt.Errorf("listing the registry seats of %s: %w", hs.Namespace, err)
		}
		seen := map[string]*coordinationv1.Lease{}
		for i := range list.Items {
			seen[list.Items[i].Name] = &list.Items[i]
		}
		// Start at a random seat: concurrent stores then rarely want the same one.
		start := rand.IntN(n)
		for j := range n {
			i := (start + j) % n
			if seen[SeatName(i)] != nil {
				continue
			}
			err := s.Client.Create(ctx, seatFor(&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{
				Namespace: hs.Namespace,
				Name:      SeatName(i),
				Labels: map[string]string{
					hubv1alpha1.LabelManagedBy:    hubv1alpha1.ManagedByPodium,
					hubv1alpha1.LabelRegistrySeat: fmt.Sprint(i),
				},
			}}, hs))
			if apierrors.IsAlreadyExists(err) {
				continue // taken since the list: by a store in flight, so live
			}
			if err != nil {
				return "", fmt.Errorf("creating registry seat %d of %s: %w", i, hs.Namespace, err)
			}
			return SeatName(i), nil
		}
		raced := false
		for j := range n {
			l := seen[SeatName((start+j)%n)]
			if l == nil {
				continue
			}
			live, err := s.live(ctx, l)
			if err != nil {
				return "", err
			}
			if live {
				continue
			}
			err = s.Client.Update(ctx, seatFor(l, hs))
			if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
				raced = true
				continue
			}
			if err != nil {
				return "", fmt.Errorf("taking over registry seat %s of %s: %w", l.Name, hs.Namespace, err)
			}
			return l.Name, nil
		}
		if !raced {
			return "", ErrLimitReached
		}
	}
	return "", fmt.Errorf("taking a registry seat in %s: the seats kept changing", hs.Namespace)
}

// live says whether seat l still counts. The claimer is read first and the slot's
// pointer after it: a claimer that stopped being pending has by then claimed its slot
// (or lost), and the later read of the pointer sees that.
func (s *Seats) live(ctx context.Context, l *coordinationv1.Lease) (bool, error) {
	uid := ""
	if l.Spec.HolderIdentity != nil {
		uid = *l.Spec.HolderIdentity
	}
	if name := l.Annotations[hubv1alpha1.AnnotationHolderName]; uid != "" && name != "" {
		hs := &hubv1alpha1.HostedSecret{}
		err := s.Reader.Get(ctx, client.ObjectKey{Namespace: l.Namespace, Name: name}, hs)
		if err != nil && !apierrors.IsNotFound(err) {
			return false, fmt.Errorf("reading the claimer of registry seat %s: %w", l.Name, err)
		}
		if err == nil && Names(types.UID(uid), hs) && hs.DeletionTimestamp == nil && hs.Status.State == "" {
			return true, nil // its store is in flight
		}
	}
	ptrLease := &coordinationv1.Lease{}
	err := s.Reader.Get(ctx, client.ObjectKey{Namespace: l.Namespace, Name: "podium-slot-" + l.Labels[hubv1alpha1.LabelSlot]}, ptrLease)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading the slot of registry seat %s: %w", l.Name, err)
	}
	if ptrLease.Annotations[hubv1alpha1.AnnotationRegistrySeat] != l.Name {
		return false, nil
	}
	holder, err := s.Slots.Holder(ctx, Pointer{Slot: Slot{Namespace: l.Namespace}, Lease: ptrLease})
	return holder != nil, err
}

// seatFor returns a copy of seat l claimed by hs for hs's slot.
func seatFor(l *coordinationv1.Lease, hs *hubv1alpha1.HostedSecret) *coordinationv1.Lease {
	l = l.DeepCopy()
	if l.Annotations == nil {
		l.Annotations = map[string]string{}
	}
	l.Annotations[hubv1alpha1.AnnotationHolderName] = hs.Name
	l.Labels[hubv1alpha1.LabelSlot] = SlotOf(hs).Hash()
	l.Spec.HolderIdentity = ptr.To(string(BindingID(hs)))
	return l
}
