package secrets

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// PurgeRecord permanently deletes one record of a slot, with its value Secret: revoking
// it first when it is the slot's active secret, so that its slot is released the way a
// revoke releases it. Other records of the slot (older, revoked ones, or a newer active
// one) are left alone. It reports whether this call deleted the record (false when it
// was gone already). A record that permit refuses is left alone: ErrNotYours.
func (s *Store) PurgeRecord(ctx context.Context, hs *hubv1alpha1.HostedSecret, permit Permit) (bool, error) {
	if !permit(hs) {
		return false, ErrNotYours
	}
	if hs.Status.State == hubv1alpha1.StateActive {
		if _, err := s.RevokeSlot(ctx, SlotOf(hs), func(holder *hubv1alpha1.HostedSecret) bool {
			return holder.UID == hs.UID // the slot's holder changed meanwhile: not ours to revoke
		}); err != nil && !errors.Is(err, ErrNotYours) {
			return false, err
		}
	}
	err := s.Client.Delete(ctx, hs, client.Preconditions{UID: &hs.UID})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("deleting HostedSecret %s/%s: %w", hs.Namespace, hs.Name, err)
	}
	s.event(hs, corev1.EventTypeNormal, "Purged", "Purge", "Secret %s for %s purged", BindingID(hs), Subject(hs))
	if err := s.DeleteValue(ctx, hs); err != nil {
		s.Log.Error(err, "Deleting a purged secret's value Secret failed; the controller will remove it", "hostedSecret", client.ObjectKeyFromObject(hs))
	}
	return true, nil
}
