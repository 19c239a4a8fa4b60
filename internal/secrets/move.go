package secrets

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// MoveStep is how far MoveValue got.
type MoveStep int

// The steps of a move, in order. Each is idempotent and each leaves a readable value
// (docs/design/secrets.md, "Upgrading: the move of old values").
const (
	// MoveNone: nothing to move (a declarative secret, a revoked one, one already moved
	// and cleaned up, or one whose Secret is not the store's).
	MoveNone MoveStep = iota
	// MoveCopied: the value was copied into the value namespace, bound to the UID.
	MoveCopied
	// MovePointed: the HostedSecret's secretRef names the value namespace.
	MovePointed
	// MoveDone: the org-namespace original is deleted.
	MoveDone
)

// MoveValue moves the value of a secret stored over HTTP by an older Podium from its
// org namespace into the value namespace, in three steps, stopping after the step
// `until` (MoveDone: all of them; tests stop earlier to stand for an operator that died):
//
//  1. copy the value into the value namespace (same name, bound to hs's UID, labelled
//     for its org), or find the copy an interrupted move made;
//  2. point the HostedSecret at the copy: set secretRef.namespace, with an update that
//     carries the resourceVersion read, so a secret revoked or changed meanwhile is
//     re-read instead of overwritten;
//  3. delete the original (UID precondition).
//
// The HostedSecret names a Secret that exists at every moment, and readers that saw it
// before step 2 also look at the copy (Place.Places). A move interrupted anywhere is
// finished by the next call: each step first looks at what is there. Only a Secret the
// store wrote is moved: granted to hs, bound to its UID, controlled by it, immutable.
// It returns the step reached.
func (l *Lifecycle) MoveValue(ctx context.Context, hs *hubv1alpha1.HostedSecret, until MoveStep) (MoveStep, error) {
	p := l.Place
	if hs.Status.State == hubv1alpha1.StateRevoked || hs.DeletionTimestamp != nil {
		return MoveNone, nil
	}
	if p.moved(hs) {
		return MoveDone, l.deleteOriginal(ctx, hs)
	}
	if !p.Movable(hs) {
		return MoveNone, nil
	}
	origKey := client.ObjectKey{Namespace: hs.Namespace, Name: hs.Spec.SecretRef.Name}
	orig := &corev1.Secret{}
	if err := l.Reader.Get(ctx, origKey, orig); err != nil {
		if apierrors.IsNotFound(err) {
			return MoveNone, nil
		}
		return MoveNone, fmt.Errorf("reading the value Secret of %s/%s: %w", hs.Namespace, hs.Name, err)
	}
	if !storeWrote(orig, hs) {
		return MoveNone, nil
	}

	// 1. The copy.
	target := client.ObjectKey{Namespace: p.Namespace, Name: origKey.Name}
	cp := p.NewValueSecret(hs, target, orig.Type, orig.Data)
	err := l.Client.Create(ctx, cp)
	if apierrors.IsAlreadyExists(err) {
		cur := &corev1.Secret{}
		if err := l.Reader.Get(ctx, target, cur); err != nil {
			return MoveNone, fmt.Errorf("reading the copy of the value of %s/%s: %w", hs.Namespace, hs.Name, err)
		}
		if ok, _ := Granted(cur, hs); !ok {
			// Another org's value has this name there: leave this one where it is (it
			// stays usable) and say so; nothing is lost.
			return MoveNone, fmt.Errorf("moving the value of %s/%s: Secret %s exists and belongs to another secret", hs.Namespace, hs.Name, target)
		}
		err = nil
	}
	if err != nil {
		return MoveNone, fmt.Errorf("copying the value of %s/%s into namespace %s: %w", hs.Namespace, hs.Name, p.Namespace, err)
	}
	l.Log.V(1).Info("Copied a value into the value namespace", "hostedSecret", client.ObjectKeyFromObject(hs), "secret", target)
	if until < MovePointed {
		return MoveCopied, nil
	}

	// 2. The pointer. The update carries the resourceVersion of hs: when hs changed
	// since it was read (revoked, say), it fails with a conflict and the caller re-reads.
	want := hs.DeepCopy()
	want.Spec.SecretRef.Namespace = p.Namespace
	if err := l.Client.Update(ctx, want); err != nil {
		return MoveCopied, fmt.Errorf("pointing %s/%s at its value in namespace %s: %w", hs.Namespace, hs.Name, p.Namespace, err)
	}
	*hs = *want
	l.Log.Info("Moved a value into the value namespace", "hostedSecret", client.ObjectKeyFromObject(hs), "namespace", p.Namespace)
	if until < MoveDone {
		return MovePointed, nil
	}

	// 3. The original.
	return MoveDone, l.deleteOriginal(ctx, hs)
}

// deleteOriginal deletes the org-namespace original of a value moved into the value
// namespace, once the copy exists: the Secret of the same name as the copy in hs's
// namespace, if it is Podium's Secret of hs (labelled for it, bound to its UID).
func (l *Lifecycle) deleteOriginal(ctx context.Context, hs *hubv1alpha1.HostedSecret) error {
	if hs.Spec.SecretRef.Name != hs.Name {
		return nil // a move only ever keeps the name the store gave
	}
	// Read through Client (the operator's cache, which holds Podium's Secrets, as the
	// original is): this runs on every reconcile of a moved secret, and an original that
	// is there has been there since long before the move.
	orig := &corev1.Secret{}
	err := l.Client.Get(ctx, client.ObjectKey{Namespace: hs.Namespace, Name: hs.Spec.SecretRef.Name}, orig)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the original value Secret of %s/%s: %w", hs.Namespace, hs.Name, err)
	}
	if !IsBoundTo(orig, hs) || orig.Labels[hubv1alpha1.LabelHostedSecret] != hs.Name {
		return nil
	}
	key, _ := l.Place.Of(hs)
	cp, err := getFirst(ctx, key, []client.Reader{l.Client, l.Reader})
	if err != nil || cp == nil {
		return err // no copy (yet): never delete the only value
	}
	if ok, _ := Granted(cp, hs); !ok {
		return nil
	}
	return l.deleteSecret(ctx, orig)
}

// storeWrote says whether s is a value Secret Podium's store wrote for hs: granted to it,
// bound to its UID, controlled by it and immutable. A Secret a platform team granted is
// not one of them, and stays where it is.
func storeWrote(s *corev1.Secret, hs *hubv1alpha1.HostedSecret) bool {
	if ok, _ := Granted(s, hs); !ok {
		return false
	}
	if !IsBoundTo(s, hs) {
		return false
	}
	return ptr.Deref(s.Immutable, false) && controllerIs(s, hs.UID)
}

func controllerIs(s *corev1.Secret, uid types.UID) bool {
	for _, o := range s.OwnerReferences {
		if ptr.Deref(o.Controller, false) && isHostedSecretRef(o.APIVersion, o.Kind) {
			return o.UID == uid
		}
	}
	return false
}
