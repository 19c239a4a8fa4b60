// The HostedSecret controller's value step: which Secret holds a secret's value, making it
// Podium's (label, binding, owner) and whether a Secret serves a live secret.

package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/secretkind"
	"podium.dev/podium/internal/secrets"
)

// valueProblem says why a secret's value cannot be used.
type valueProblem struct{ reason, msg string }

// adoptValue reads the value's Secret, makes it Podium's (label, binding annotation,
// owner reference) and returns the value's last four characters. The value itself goes
// no further than Last4. A Secret is used only when secrets.Granted says it is granted
// to this very object (by label, and bound to no other HostedSecret UID): the right to
// create a HostedSecret alone must not let anyone read the end of, take over or (by
// revoking) delete a Secret, nor inherit another object's value by reusing its name.
// A missing Secret and one not granted get the same status, so that the status tells
// nobody which Secrets exist or how they are labelled.
func (r *HostedSecretReconciler) adoptValue(ctx context.Context, hs *hubv1alpha1.HostedSecret) (string, *valueProblem, error) {
	notGranted := &valueProblem{hubv1alpha1.ReasonSecretNotGranted, secrets.NotGrantedMessage(hs)}
	key, ok := r.Lifecycle.Place.Of(hs)
	if !ok {
		// secretRef names a namespace that is neither the org's nor the value namespace.
		return "", notGranted, nil
	}
	if errs := validation.IsDNS1123Subdomain(key.Name); len(errs) > 0 {
		// Objects stored before the CRD validated secretRef.name: never ask for such a
		// name (the apiserver would answer with an error on every retry).
		return "", notGranted, nil
	}
	// Cached first (only Podium-labelled Secrets are there); a Secret applied without
	// Podium's managed-by label is read once, uncached, and labelled below so that from
	// then on the cache sees it. During a move the other side counts too (Place).
	s, err := r.Lifecycle.Place.Find(ctx, hs, r.Client, r.APIReader)
	if err != nil {
		return "", nil, err
	}
	if ok, why := secrets.Granted(s, hs); !ok {
		logf.FromContext(ctx).V(1).Info("The referenced Secret is not granted", "hostedSecret", client.ObjectKeyFromObject(hs), "why", why)
		return "", notGranted, nil
	}
	dataKey := secrets.DataKey(hs)
	value, ok := secrets.ValueOf(hs, s)
	if !ok {
		return "", &valueProblem{hubv1alpha1.ReasonValueMissing, fmt.Sprintf("Secret %s has no key %q", key.Name, dataKey)}, nil
	}
	if len(value) > secrets.MaxValueBytes {
		return "", &valueProblem{hubv1alpha1.ReasonValueMissing, fmt.Sprintf(
			"the value in Secret %s key %q is larger than %d bytes", key.Name, dataKey, secrets.MaxValueBytes)}, nil
	}
	if secretkind.Of(hs).Fingerprinted && hs.Status.Fingerprint == "" && r.Keyring != nil {
		// A fingerprinted secret (a registry credential) restored without its status:
		// its fingerprint is the same HMAC under the same (restored) key.
		fp, err := r.Keyring.Fingerprint(ctx, value)
		if err != nil {
			return "", nil, err
		}
		if err := r.Lifecycle.RecordFingerprint(ctx, hs, fp); err != nil {
			return "", nil, err
		}
	}
	return secrets.Last4(value), nil, r.own(ctx, hs, s)
}

// own labels the value Secret as Podium's and makes hs its owner (its controller,
// unless another controller already owns it).
func (r *HostedSecretReconciler) own(ctx context.Context, hs *hubv1alpha1.HostedSecret, s *corev1.Secret) error {
	want := s.DeepCopy()
	if want.Labels == nil {
		want.Labels = map[string]string{}
	}
	want.Labels[hubv1alpha1.LabelManagedBy] = hubv1alpha1.ManagedByPodium
	want.Labels[hubv1alpha1.LabelHostedSecret] = hs.Name
	if want.Annotations == nil {
		want.Annotations = map[string]string{}
	}
	want.Annotations[hubv1alpha1.AnnotationHostedSecretUID] = string(secrets.BindingID(hs))
	reattached := isQuarantined(s)
	delete(want.Labels, hubv1alpha1.LabelQuarantined)
	delete(want.Annotations, hubv1alpha1.AnnotationQuarantinedAt)
	if s.Namespace != hs.Namespace {
		// The value namespace: no owner reference can cross namespaces; the org label
		// is what the clean-up finds it by (Granted already required it).
		want.Labels[hubv1alpha1.LabelOrg] = hs.Namespace
	} else if err := controllerutil.SetControllerReference(hs, want, r.Client.Scheme()); err != nil {
		if err := controllerutil.SetOwnerReference(hs, want, r.Client.Scheme()); err != nil {
			return err
		}
	}
	if equalMeta(s, want) {
		return nil
	}
	// A merge patch of metadata only: the data is neither sent nor compared.
	patch := client.MergeFromWithOptions(s, client.MergeFromWithOptimisticLock{})
	if err := r.Client.Patch(ctx, want, patch); err != nil {
		return fmt.Errorf("labelling Secret %s/%s as Podium's: %w", s.Namespace, s.Name, err)
	}
	if reattached {
		r.event(hs, corev1.EventTypeNormal, hubv1alpha1.ReasonValueReattached, "Reattach",
			"Value Secret %s/%s, quarantined, serves this secret (id %s) again", s.Namespace, s.Name, secrets.BindingID(hs))
	}
	return nil
}

func equalMeta(a, b *corev1.Secret) bool {
	if len(a.Labels) != len(b.Labels) || len(a.OwnerReferences) != len(b.OwnerReferences) ||
		a.Annotations[hubv1alpha1.AnnotationHostedSecretUID] != b.Annotations[hubv1alpha1.AnnotationHostedSecretUID] {
		return false
	}
	for k, v := range b.Labels {
		if a.Labels[k] != v {
			return false
		}
	}
	for i := range b.OwnerReferences {
		if a.OwnerReferences[i].UID != b.OwnerReferences[i].UID || ptr.Deref(a.OwnerReferences[i].Controller, false) != ptr.Deref(b.OwnerReferences[i].Controller, false) {
			return false
		}
	}
	return true
}

// serves says whether s is a value Secret of the live secret hs: in its namespace, owned
// by it or bound to it (a restore strips owner references; the binding annotation
// stays); in the value namespace, bound to it at one of its places (Place.Places: the
// copy of a move under way is kept).
func (r *HostedSecretReconciler) serves(s *corev1.Secret, hs *hubv1alpha1.HostedSecret) bool {
	if s.Namespace == hs.Namespace {
		return ownedBy(s, hs.UID) || secrets.IsBoundTo(s, hs)
	}
	if !secrets.IsBoundTo(s, hs) {
		return false
	}
	for _, k := range r.Lifecycle.Place.Places(hs) {
		if k == client.ObjectKeyFromObject(s) {
			return true
		}
	}
	return false
}

func ownedBy(s *corev1.Secret, uid types.UID) bool {
	for _, o := range s.OwnerReferences {
		if o.UID == uid {
			return true
		}
	}
	return false
}
