// The HostedSecret controller's clean-up: value Secrets no live secret uses are deleted
// or, when bound to a record that may come back (a restore), quarantined.

package controllers

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/secrets"
)

// removeStrayValues looks after the value Secrets labelled for name that no live secret
// uses, in the org namespace and in the value namespace (found by their org label: no
// owner reference, so no garbage collection, reaches them). A revoked secret's value is
// deleted. A value bound to a record (its binding annotation names an id) that no live
// HostedSecret of that name has is quarantined, not deleted: after a restore the
// HostedSecret may arrive later than its value, and a value lost is lost for good
// (docs/operations.md, "Quarantine"); it is deleted once QuarantineGrace has passed,
// and its HostedSecret, restored or re-attached meanwhile, takes it back. A labelled
// Secret bound to no record was never anyone's value and is deleted. Each act is an
// event. Absence is confirmed uncached, so a Secret created just after its HostedSecret
// is never taken for a stray because the cache has not seen the HostedSecret yet. It
// returns when to look again (a quarantine's end), 0 for never.
func (r *HostedSecretReconciler) removeStrayValues(ctx context.Context, key types.NamespacedName, hs *hubv1alpha1.HostedSecret) (time.Duration, error) {
	list, err := r.labelledValues(ctx, key)
	if err != nil {
		return 0, err
	}
	if len(list.Items) == 0 {
		return 0, nil
	}
	if hs == nil {
		fresh := &hubv1alpha1.HostedSecret{}
		err := r.APIReader.Get(ctx, key, fresh)
		switch {
		case err == nil:
			hs = fresh
		case !apierrors.IsNotFound(err):
			return 0, err
		}
	}
	var again time.Duration
	for i := range list.Items {
		s := &list.Items[i]
		if hs != nil && hs.Status.State != hubv1alpha1.StateRevoked && r.serves(s, hs) {
			continue
		}
		_, bound := secrets.BoundTo(s)
		if bound && (hs == nil || hs.Status.State != hubv1alpha1.StateRevoked || !secrets.IsBoundTo(s, hs)) {
			wait, err := r.quarantine(ctx, s)
			if err != nil {
				return 0, err
			}
			if wait > 0 && (again == 0 || wait < again) {
				again = wait
			}
			if wait > 0 {
				continue
			}
		}
		if err := r.Client.Delete(ctx, s, client.Preconditions{UID: &s.UID}); err != nil {
			if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
				continue
			}
			return 0, fmt.Errorf("deleting stray value Secret %s/%s: %w", s.Namespace, s.Name, err)
		}
		why := "no active secret uses it"
		switch {
		case isQuarantined(s):
			why = "its quarantine ended and no HostedSecret took it back"
		case !bound:
			why = "it is labelled for a HostedSecret but was never bound to one"
		}
		r.event(s, corev1.EventTypeNormal, hubv1alpha1.ReasonStrayValueDeleted, "DeleteStrayValue",
			"Deleted value Secret %s/%s of HostedSecret %s/%s: %s", s.Namespace, s.Name, key.Namespace, key.Name, why)
		logf.FromContext(ctx).Info("Deleted a value Secret no active secret uses", "secret", client.ObjectKeyFromObject(s), "why", why)
	}
	return again, nil
}

// labelledValues are the Secrets labelled as values of the HostedSecret key: in its org,
// and in the value namespace (labelled with the org too) when that is another one.
func (r *HostedSecretReconciler) labelledValues(ctx context.Context, key types.NamespacedName) (*corev1.SecretList, error) {
	list := &corev1.SecretList{}
	if err := r.Client.List(ctx, list, client.InNamespace(key.Namespace), client.MatchingLabels{hubv1alpha1.LabelHostedSecret: key.Name}); err != nil {
		return nil, err
	}
	if vns := r.Lifecycle.Place.Namespace; vns != "" && vns != key.Namespace {
		there := &corev1.SecretList{}
		if err := r.Client.List(ctx, there, client.InNamespace(vns), client.MatchingLabels{
			hubv1alpha1.LabelHostedSecret: key.Name, hubv1alpha1.LabelOrg: key.Namespace,
		}); err != nil {
			return nil, err
		}
		list.Items = append(list.Items, there.Items...)
	}
	return list, nil
}

// DefaultQuarantineGrace is how long a quarantined value Secret is kept
// (docs/operations.md, "Quarantine").
const DefaultQuarantineGrace = 7 * 24 * time.Hour

// quarantine marks s quarantined (label and time) the first time, with a Warning event,
// and returns how long it is still kept: 0 when its grace has passed.
func (r *HostedSecretReconciler) quarantine(ctx context.Context, s *corev1.Secret) (time.Duration, error) {
	grace := r.QuarantineGrace
	if grace == 0 {
		grace = DefaultQuarantineGrace
	}
	if isQuarantined(s) {
		since, err := time.Parse(time.RFC3339, s.Annotations[hubv1alpha1.AnnotationQuarantinedAt])
		if err != nil {
			since = r.now() // unreadable: the quarantine starts again, nothing is lost
		}
		if wait := since.Add(grace).Sub(r.now()); wait > 0 {
			return wait, nil
		}
		return 0, nil
	}
	base := s.DeepCopy()
	if s.Labels == nil {
		s.Labels = map[string]string{}
	}
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	now := r.now().UTC()
	s.Labels[hubv1alpha1.LabelQuarantined] = "true"
	s.Annotations[hubv1alpha1.AnnotationQuarantinedAt] = now.Format(time.RFC3339)
	// A merge patch of metadata only, at the version read: the data is neither sent nor
	// compared, and a Secret changed meanwhile is looked at again.
	if err := r.Client.Patch(ctx, s, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return grace, nil
		}
		return 0, fmt.Errorf("quarantining value Secret %s/%s: %w", s.Namespace, s.Name, err)
	}
	id, _ := secrets.BoundTo(s)
	r.event(s, corev1.EventTypeWarning, hubv1alpha1.ReasonValueQuarantined, "Quarantine",
		"Value Secret %s/%s is bound to hosted secret %s, which no live HostedSecret %s is; it is kept until %s (a restored HostedSecret takes it back; to re-attach it, see docs/operations.md, Backup and restore), then deleted",
		s.Namespace, s.Name, id, s.Labels[hubv1alpha1.LabelHostedSecret], now.Add(grace).Format(time.RFC3339))
	logf.FromContext(ctx).Info("Quarantined a value Secret no live secret is bound to", "secret", client.ObjectKeyFromObject(s), "boundTo", id)
	return grace, nil
}

func isQuarantined(s *corev1.Secret) bool {
	return s.Labels[hubv1alpha1.LabelQuarantined] != ""
}
