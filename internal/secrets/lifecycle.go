package secrets

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/health"
)

// Lifecycle moves hosted secrets between their states. The HTTP handlers and the
// controller share it, so that a transition looks the same whoever makes it.
type Lifecycle struct {
	// Client writes (and its reads are the manager's cache).
	Client client.Client
	// Reader reads from the apiserver, uncached: every read-modify-write starts here.
	Reader client.Reader
	Slots  *Slots
	// Place says where values live; every read, write and delete of a value Secret asks it.
	Place Place
	// Events may be nil (pure tests).
	Events events.EventRecorder
	Log    logr.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

func (l *Lifecycle) now() metav1.Time {
	if l.Now != nil {
		return metav1.NewTime(l.Now())
	}
	return metav1.Now()
}

func (l *Lifecycle) event(hs *hubv1alpha1.HostedSecret, typ, reason, action, note string, args ...any) {
	if l.Events != nil {
		l.Events.Eventf(hs, nil, typ, reason, action, note, args...)
	}
}

// SetPending records the value's last four characters and a Pending Ready condition on
// a secret that has not claimed its slot yet. It runs before the claim, so that a secret
// that holds a slot always shows its valueLast4 (a 409's existing record needs it).
// A registry credential's fingerprint is recorded with it (fingerprint "" keeps the
// recorded one).
func (l *Lifecycle) SetPending(ctx context.Context, hs *hubv1alpha1.HostedSecret, last4, fingerprint string) error {
	return l.updateStatus(ctx, hs, func(st *hubv1alpha1.HostedSecretStatus, gen int64) bool {
		if st.State != "" {
			return false
		}
		changed := st.ValueLast4 != last4
		st.ValueLast4 = last4
		if fingerprint != "" && st.Fingerprint != fingerprint {
			st.Fingerprint, changed = fingerprint, true
		}
		return setReady(st, gen, metav1.ConditionFalse, hubv1alpha1.ReasonPending, "Claiming the secret's slot") || changed
	})
}

// RecordFingerprint records a registry credential's fingerprint when its status has
// none (a status lost in a restore); a recorded one is kept.
func (l *Lifecycle) RecordFingerprint(ctx context.Context, hs *hubv1alpha1.HostedSecret, fingerprint string) error {
	return l.updateStatus(ctx, hs, func(st *hubv1alpha1.HostedSecretStatus, _ int64) bool {
		if st.Fingerprint != "" || fingerprint == "" {
			return false
		}
		st.Fingerprint = fingerprint
		return true
	})
}

// Activate marks a secret that holds its slot active.
func (l *Lifecycle) Activate(ctx context.Context, hs *hubv1alpha1.HostedSecret, last4 string) error {
	activated := false
	err := l.updateStatus(ctx, hs, func(st *hubv1alpha1.HostedSecretStatus, gen int64) bool {
		if st.State == hubv1alpha1.StateRevoked {
			return false
		}
		activated = st.State != hubv1alpha1.StateActive
		changed := activated || st.ValueLast4 != last4
		st.State = hubv1alpha1.StateActive
		st.ValueLast4 = last4
		return setReady(st, gen, metav1.ConditionTrue, hubv1alpha1.ReasonActive, "The secret is active in its slot") || changed
	})
	if err == nil && activated {
		l.event(hs, corev1.EventTypeNormal, hubv1alpha1.ReasonActive, "Activate", "Secret %s is active for %s", BindingID(hs), Subject(hs))
	}
	return err
}

// Revoke marks a secret revoked (reason RevokedByRequest, or RevokedSupersede with the
// replacing secret's id) and deletes its value's Secret. It reports whether this call
// revoked it (false when it already was). With hs read fresh from the apiserver the
// status update carries hs's resourceVersion, so a concurrent change makes it fail with
// a conflict instead of being overwritten.
func (l *Lifecycle) Revoke(ctx context.Context, hs *hubv1alpha1.HostedSecret, reason, supersededBy string) (bool, error) {
	revoked := false
	err := l.updateStatus(ctx, hs, func(st *hubv1alpha1.HostedSecretStatus, gen int64) bool {
		if st.State == hubv1alpha1.StateRevoked {
			return false
		}
		revoked = true
		st.State = hubv1alpha1.StateRevoked
		st.Reason = reason
		st.SupersededBy = supersededBy
		st.RevokedAt = ptr.To(l.now())
		msg := "The secret was revoked"
		if reason == hubv1alpha1.RevokedSupersede {
			msg = "The secret was superseded by " + supersededBy
		}
		setReady(st, gen, metav1.ConditionFalse, hubv1alpha1.ReasonRevoked, msg)
		return true
	})
	if err != nil {
		return false, err
	}
	if revoked {
		l.event(hs, corev1.EventTypeNormal, hubv1alpha1.ReasonRevoked, "Revoke", "Secret %s for %s revoked (%s)", BindingID(hs), Subject(hs), reason)
	}
	return revoked, l.DeleteValue(ctx, hs)
}

// DeleteValue deletes the Secrets holding hs's value, wherever Place says they may be
// (both sides of a move under way), if they are Podium's Secrets of hs: labelled with
// hs's name, and on the other side of a move (or outside hs's namespace) also bound to hs. A Secret Podium
// never took over is not Podium's to delete.
func (l *Lifecycle) DeleteValue(ctx context.Context, hs *hubv1alpha1.HostedSecret) error {
	for i, key := range l.Place.Places(hs) {
		s := &corev1.Secret{}
		err := l.Reader.Get(ctx, key, s)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("reading the value Secret of %s/%s: %w", hs.Namespace, hs.Name, err)
		}
		if s.Labels[hubv1alpha1.LabelHostedSecret] != hs.Name {
			continue
		}
		if (i > 0 || key.Namespace != hs.Namespace) && !IsBoundTo(s, hs) {
			continue
		}
		if err := l.deleteSecret(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

func (l *Lifecycle) deleteSecret(ctx context.Context, s *corev1.Secret) error {
	err := l.Client.Delete(ctx, s, client.Preconditions{UID: &s.UID})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("deleting the value Secret %s/%s: %w", s.Namespace, s.Name, err)
	}
	l.Log.V(1).Info("Deleted a value Secret", "secret", client.ObjectKeyFromObject(s))
	return nil
}

// updateStatus applies mutate to hs's status and writes it when mutate reports a change.
// A conflict re-reads hs from the apiserver and tries again, a few times.
func (l *Lifecycle) updateStatus(ctx context.Context, hs *hubv1alpha1.HostedSecret, mutate func(*hubv1alpha1.HostedSecretStatus, int64) bool) error {
	cur := hs.DeepCopy()
	first := true
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if !first {
			fresh := &hubv1alpha1.HostedSecret{}
			if err := l.Reader.Get(ctx, client.ObjectKeyFromObject(hs), fresh); err != nil {
				return fmt.Errorf("re-reading %s/%s: %w", hs.Namespace, hs.Name, err)
			}
			if fresh.UID != hs.UID {
				return apierrors.NewNotFound(hubv1alpha1.GroupVersion.WithResource("hostedsecrets").GroupResource(), hs.Name)
			}
			cur = fresh
		}
		first = false
		if !mutate(&cur.Status, cur.Generation) {
			return nil
		}
		cur.Status.ObservedGeneration = cur.Generation
		return l.Client.Status().Update(ctx, cur)
	})
	if err != nil {
		return fmt.Errorf("updating the status of %s/%s: %w", hs.Namespace, hs.Name, err)
	}
	*hs = *cur
	return nil
}

// setReady sets the Ready condition, with Stalled or Reconciling beside it as GitOps
// tools read them (health.Set), and reports whether anything changed. Pending waits for
// its claim; every other reason of a secret that is not ready (SlotOccupied,
// ValueMissing, SecretNotGranted, Revoked) needs a change from its author.
func setReady(st *hubv1alpha1.HostedSecretStatus, gen int64, status metav1.ConditionStatus, reason, msg string) bool {
	verdict := health.Stalled
	switch {
	case status == metav1.ConditionTrue:
		verdict = health.Healthy
	case reason == hubv1alpha1.ReasonPending:
		verdict = health.Waiting
	}
	return health.Set(&st.Conditions, gen, verdict, reason, msg)
}

// SetOccupied records on a secret that never became active that another live secret
// holds its slot.
func (l *Lifecycle) SetOccupied(ctx context.Context, hs *hubv1alpha1.HostedSecret, last4 string, holder types.UID) error {
	changed := false
	err := l.updateStatus(ctx, hs, func(st *hubv1alpha1.HostedSecretStatus, gen int64) bool {
		if st.State != "" {
			return false
		}
		c := st.ValueLast4 != last4
		st.ValueLast4 = last4
		changed = setReady(st, gen, metav1.ConditionFalse, hubv1alpha1.ReasonSlotOccupied,
			fmt.Sprintf("Secret %s is active for %s in this slot; supersede it to replace it", holder, Subject(hs)))
		return changed || c
	})
	if err == nil && changed {
		l.event(hs, corev1.EventTypeWarning, hubv1alpha1.ReasonSlotOccupied, "Claim", "Secret %s already holds the slot of %s", holder, Subject(hs))
	}
	return err
}

// SetUnusable records why a secret's value cannot be used (reason ValueMissing or
// SecretNotGranted; msg names the Secret and key, never data).
func (l *Lifecycle) SetUnusable(ctx context.Context, hs *hubv1alpha1.HostedSecret, reason, msg string) error {
	changed := false
	err := l.updateStatus(ctx, hs, func(st *hubv1alpha1.HostedSecretStatus, gen int64) bool {
		if st.State == hubv1alpha1.StateRevoked {
			return false
		}
		changed = setReady(st, gen, metav1.ConditionFalse, reason, msg)
		return changed
	})
	if err == nil && changed {
		l.event(hs, corev1.EventTypeWarning, reason, "ReadValue", "%s", msg)
	}
	return err
}

// Usable says whether hs can be handed to a run now, and when not, why (for the list,
// the CLI and preflight, which must not call a secret usable that is not: docs/secrets.md,
// "States"). A secret is usable when it is active, not being deleted, and its Ready
// condition, as the controller derived it for the current generation, is True: its
// value's Secret exists, is granted to it and holds the value. A status restored from a
// backup says active and Ready until the controller has looked again, which it does as
// soon as it sees the object. The reason is the Ready condition's reason (Revoked,
// SecretNotGranted, ValueMissing, SlotOccupied, Pending), or Deleting; never a value.
func Usable(hs *hubv1alpha1.HostedSecret) (bool, string) {
	ready := meta.FindStatusCondition(hs.Status.Conditions, hubv1alpha1.ConditionReady)
	switch {
	case hs.DeletionTimestamp != nil:
		return false, "Deleting"
	case hs.Status.State == hubv1alpha1.StateRevoked:
		return false, hubv1alpha1.ReasonRevoked
	case ready == nil:
		return false, hubv1alpha1.ReasonPending
	case ready.Status != metav1.ConditionTrue:
		return false, ready.Reason
	case hs.Status.State != hubv1alpha1.StateActive:
		return false, hubv1alpha1.ReasonPending
	}
	return true, ""
}
