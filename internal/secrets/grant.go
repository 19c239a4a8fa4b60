package secrets

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// Granted says whether the Secret s may serve as the value of hs: whether Podium may
// read it (for the last four characters or a delivery), label it and own it. This is
// the one place the rule is written (docs/secrets.md, "Ownership"); the controller and
// every other reader of value Secrets ask it.
//
// A Secret is granted to hs when both hold:
//   - it carries the label hub.podium.dev/hosted-secret=<hs's name>, which only someone
//     who may write the Secret can set: the right to create a HostedSecret alone never
//     reaches a Secret's data;
//   - it is bound to no other HostedSecret: no owner reference to a HostedSecret with
//     another UID, and no binding annotation hub.podium.dev/hosted-secret-uid naming
//     another id (Names). A grant is for one record, not for a name: a HostedSecret
//     deleted and created again under the same name is another record (a new id) and
//     inherits nothing; the same record restored from a backup keeps its id (recorded
//     in hub.podium.dev/id, which only a restore identity may set) and its value;
//   - outside hs's own namespace (the operator's value namespace, see Place), it is
//     bound to hs's id by the binding annotation and labelled hub.podium.dev/org=<hs's
//     namespace>: only the operator writes there, and it always writes both.
//
// A nil s (no such Secret) is not granted. The reason is for logs and tests only; what
// a HostedSecret's status says must not tell apart "missing" from "not granted"
// (NotGrantedMessage), so that nobody learns through it which Secrets exist.
func Granted(s *corev1.Secret, hs *hubv1alpha1.HostedSecret) (bool, string) {
	if s == nil {
		return false, "the Secret does not exist"
	}
	if got := s.Labels[hubv1alpha1.LabelHostedSecret]; got != hs.Name {
		return false, fmt.Sprintf("the Secret is not labelled %s=%s", hubv1alpha1.LabelHostedSecret, hs.Name)
	}
	if uid, ok := BoundTo(s); ok && !Names(uid, hs) {
		return false, "the Secret is bound to another HostedSecret"
	}
	if s.Namespace != hs.Namespace {
		if !Names(types.UID(s.Annotations[hubv1alpha1.AnnotationHostedSecretUID]), hs) {
			return false, "the Secret is outside the HostedSecret's namespace and not bound to its id"
		}
		if s.Labels[hubv1alpha1.LabelOrg] != hs.Namespace {
			return false, fmt.Sprintf("the Secret is outside the HostedSecret's namespace and not labelled %s=%s", hubv1alpha1.LabelOrg, hs.Namespace)
		}
	}
	return true, ""
}

// BindingID is what Podium binds hs's value Secret and slot to: hs's record id
// (hubv1alpha1.ID), which a backup and restore keeps, unlike its UID. For a secret
// stored before ids were recorded it is its UID, so every existing binding holds.
func BindingID(hs *hubv1alpha1.HostedSecret) types.UID {
	return types.UID(hubv1alpha1.ID(hs))
}

// Names says whether uid, read from a binding annotation, an owner reference or a slot
// pointer, names hs: its BindingID, or its UID (an owner reference, which always names
// the live object). An empty uid names nothing.
func Names(uid types.UID, hs *hubv1alpha1.HostedSecret) bool {
	return uid != "" && (uid == BindingID(hs) || uid == hs.UID)
}

// IsBoundTo says whether the Secret s is bound to hs (BoundTo names hs).
func IsBoundTo(s *corev1.Secret, hs *hubv1alpha1.HostedSecret) bool {
	uid, ok := BoundTo(s)
	return ok && Names(uid, hs)
}

// BoundTo returns the id of the HostedSecret the Secret is (or was) bound to: its
// binding annotation (a BindingID), else the UID of a HostedSecret among its owners. ok is false for
// a Secret never bound to one.
func BoundTo(s *corev1.Secret) (uid types.UID, ok bool) {
	if v := s.Annotations[hubv1alpha1.AnnotationHostedSecretUID]; v != "" {
		return types.UID(v), true
	}
	for _, o := range s.OwnerReferences {
		if isHostedSecretRef(o.APIVersion, o.Kind) {
			return o.UID, true
		}
	}
	return "", false
}

func isHostedSecretRef(apiVersion, kind string) bool {
	gv, err := schema.ParseGroupVersion(apiVersion)
	return err == nil && gv.Group == hubv1alpha1.GroupVersion.Group && kind == "HostedSecret"
}

// NotGrantedMessage is the status message of a HostedSecret whose Secret is missing or
// not granted to it. It is the same in both cases, on purpose.
func NotGrantedMessage(hs *hubv1alpha1.HostedSecret) string {
	return fmt.Sprintf("Secret %s does not exist or is not granted to this HostedSecret: it must carry the label %s=%s and belong to no other HostedSecret",
		hs.Spec.SecretRef.Name, hubv1alpha1.LabelHostedSecret, hs.Name)
}

// StoredBy says whether user stored the job-scope secret hs: a job-scope secret belongs
// to whoever stored it (docs/secrets.md, "Ownership"), recorded in its created-by
// annotation, which the operator sets for HTTP stores and the admission policy guards:
// set on creation to the requester's own name (or by a restore identity), immutable
// afterwards for everyone else, org owners included. The list's visibility, revoke and
// purge over HTTP, and delivery into runs all ask it.
func StoredBy(hs *hubv1alpha1.HostedSecret, user string) bool {
	by := hs.Annotations[hubv1alpha1.AnnotationCreatedBy]
	return by != "" && by == user
}
