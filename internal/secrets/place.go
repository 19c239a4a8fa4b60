package secrets

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// Place says where the values of hosted secrets live (docs/design/secrets.md, "Where values
// live"). It is the one home of that rule: the HTTP store, revoke and purge, the
// controller (valueLast4, adoption, clean-up, the move of old values) and delivery all
// ask it, and nothing else computes a value Secret's namespace.
//
//   - A secret stored over HTTP keeps its value in the operator's value namespace
//     (Namespace), which org members cannot read: its secretRef names that namespace.
//     Kubernetes lets anyone who may create a Pod in a namespace mount any Secret of that
//     namespace (secretKeyRef is not checked against Secret read rights), so a value in
//     the org namespace would be readable by every member.
//   - A secret applied declaratively keeps its value where the platform team put it:
//     secretRef without a namespace is the HostedSecret's own namespace.
//   - Values stored over HTTP by an older Podium (in the org namespace) are moved into
//     the value namespace by the controller (Lifecycle.MoveValue); while a move is under
//     way a reader may see the HostedSecret from before it, so readers also look at the
//     other side of a move (Places).
type Place struct {
	// Namespace is the operator's value namespace.
	Namespace string
}

// NewValueRef is the secretRef of a secret stored over HTTP whose value Secret is named
// name: in the value namespace, key "value".
func (p Place) NewValueRef(name string) hubv1alpha1.SecretValueRef {
	return hubv1alpha1.SecretValueRef{Namespace: p.Namespace, Name: name, Key: DefaultValueKey}
}

// Of returns where hs's value lives: secretRef.namespace when set, else hs's own
// namespace. ok is false when secretRef.namespace names a namespace that is neither hs's
// own nor the value namespace: Podium never reads, adopts or deletes a Secret there.
func (p Place) Of(hs *hubv1alpha1.HostedSecret) (key client.ObjectKey, ok bool) {
	ns := hs.Spec.SecretRef.Namespace
	switch ns {
	case "", hs.Namespace:
		return client.ObjectKey{Namespace: hs.Namespace, Name: hs.Spec.SecretRef.Name}, true
	case p.Namespace:
		return client.ObjectKey{Namespace: ns, Name: hs.Spec.SecretRef.Name}, true
	default:
		return client.ObjectKey{}, false
	}
}

// Movable says whether hs is a secret stored over HTTP whose value is still in its org
// namespace (stored by an older Podium): a HostedSecret recorded as stored by someone
// (hub.podium.dev/created-by), whose secretRef has no namespace and names a Secret of its
// own name under the key "value", as the store wrote them. Lifecycle.MoveValue also
// checks the Secret itself. Declaratively granted Secrets are never moved.
func (p Place) Movable(hs *hubv1alpha1.HostedSecret) bool {
	ref := hs.Spec.SecretRef
	return p.Namespace != "" && p.Namespace != hs.Namespace && ref.Namespace == "" &&
		hs.Annotations[hubv1alpha1.AnnotationCreatedBy] != "" &&
		ref.Name == hs.Name && (ref.Key == "" || ref.Key == DefaultValueKey)
}

// moved says whether hs's value was moved into (or stored in) the value namespace while
// hs itself lives elsewhere.
func (p Place) moved(hs *hubv1alpha1.HostedSecret) bool {
	return p.Namespace != "" && hs.Spec.SecretRef.Namespace == p.Namespace && p.Namespace != hs.Namespace
}

// Places returns every place hs's value may be found, the one secretRef names first.
// The second, when there is one, is the other side of a move: the copy in the value
// namespace while secretRef (as the caller saw it) still names the org namespace, or the
// org-namespace original a move has not deleted yet. Only a Secret bound to hs
// counts there (Find, DeleteValue).
func (p Place) Places(hs *hubv1alpha1.HostedSecret) []client.ObjectKey {
	key, ok := p.Of(hs)
	if !ok {
		return nil
	}
	out := []client.ObjectKey{key}
	switch {
	case p.Movable(hs):
		out = append(out, client.ObjectKey{Namespace: p.Namespace, Name: hs.Spec.SecretRef.Name})
	case p.moved(hs) && hs.Spec.SecretRef.Name == hs.Name:
		out = append(out, client.ObjectKey{Namespace: hs.Namespace, Name: hs.Spec.SecretRef.Name})
	}
	return out
}

// NewValueSecret is the value Secret Podium writes for hs at key (a place of hs): labelled
// as Podium's and for hs, bound to hs's id (BindingID), immutable. In hs's own namespace hs is its
// controller owner; elsewhere (no owner reference can cross namespaces) it carries the
// org label, by which the controller cleans it up. typ "" is Opaque.
func (p Place) NewValueSecret(hs *hubv1alpha1.HostedSecret, key client.ObjectKey, typ corev1.SecretType, data map[string][]byte) *corev1.Secret {
	if typ == "" {
		typ = corev1.SecretTypeOpaque
	}
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: key.Namespace,
			Name:      key.Name,
			Labels: map[string]string{
				hubv1alpha1.LabelManagedBy:    hubv1alpha1.ManagedByPodium,
				hubv1alpha1.LabelHostedSecret: hs.Name,
			},
			Annotations: map[string]string{hubv1alpha1.AnnotationHostedSecretUID: string(BindingID(hs))},
		},
		Type:      typ,
		Immutable: ptr.To(true),
		Data:      maps.Clone(data),
	}
	if key.Namespace == hs.Namespace {
		s.OwnerReferences = []metav1.OwnerReference{ownerRef(hs)}
	} else {
		s.Labels[hubv1alpha1.LabelOrg] = hs.Namespace
	}
	return s
}

// Find returns the Secret that serves hs's value now, or nil: the one at the place
// secretRef names, else (a move under way) the other side of the move when it is bound
// to hs. Each place is read from the readers in order (the manager's cache, then
// the apiserver: a Secret without Podium's label is not cached). The caller still asks
// Granted whether the Secret at the named place is hs's.
func (p Place) Find(ctx context.Context, hs *hubv1alpha1.HostedSecret, readers ...client.Reader) (*corev1.Secret, error) {
	for i, key := range p.Places(hs) {
		s, err := getFirst(ctx, key, readers)
		if err != nil {
			return nil, fmt.Errorf("reading the value Secret of %s/%s: %w", hs.Namespace, hs.Name, err)
		}
		if s == nil {
			continue
		}
		if i > 0 {
			if !IsBoundTo(s, hs) {
				continue
			}
		}
		return s, nil
	}
	return nil, nil
}

// getFirst reads key from the first reader that has it; nil when none does.
func getFirst(ctx context.Context, key client.ObjectKey, readers []client.Reader) (*corev1.Secret, error) {
	for _, r := range readers {
		s := &corev1.Secret{}
		err := r.Get(ctx, key, s)
		if err == nil {
			return s, nil
		}
		if !apierrors.IsNotFound(err) {
			return nil, err
		}
	}
	return nil, nil
}
