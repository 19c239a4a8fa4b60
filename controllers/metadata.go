package controllers

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// setLabels sets want on obj's labels and reports whether anything changed.
func setLabels(obj client.Object, want map[string]string) bool {
	labels := obj.GetLabels()
	changed := false
	for k, v := range want {
		if labels[k] != v {
			if labels == nil {
				labels = map[string]string{}
			}
			labels[k] = v
			changed = true
		}
	}
	if changed {
		obj.SetLabels(labels)
	}
	return changed
}

// rawJSON returns the bytes of an optional JSON field (nil when unset).
func rawJSON(j *apiextensionsv1.JSON) []byte {
	if j == nil {
		return nil
	}
	return j.Raw
}

// Reasons of the events about a record's identity (docs/operations.md, "Backup and restore").
const (
	// ReasonIDReissued: the object was created with an id or creation time its creator
	// may not set (no restore verb); it has a new id.
	ReasonIDReissued = "IDReissued"
)

// identityPatch adds to obj (in place) the annotations that record its id and creation
// time when they are not recorded yet (hubv1alpha1.IdentityAnnotations), and reports
// whether it changed obj. The caller writes obj in the patch it makes anyway, or alone.
// When admission refused an id the creator sent, it emits IDReissued on events (when
// not nil): whoever re-created the object learns its links changed.
func identityPatch(obj client.Object, events eventRecorder) bool {
	if hubv1alpha1.IdentityRecorded(obj) {
		return false
	}
	if hubv1alpha1.IdentityRefused(obj) && events != nil {
		events.Eventf(obj, nil, corev1.EventTypeWarning, ReasonIDReissued, "RecordIdentity",
			"The object was created with an id or creation time that only a restore identity (the restore verb, ClusterRole podium-restorer) may set; it has the new id %s, and links to its old id no longer find it",
			string(obj.GetUID()))
	}
	setAnnotations(obj, hubv1alpha1.IdentityAnnotations(obj))
	return true
}

// setAnnotations sets want on obj's annotations (setLabels' twin, without the report).
func setAnnotations(obj client.Object, want map[string]string) {
	ann := obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	for k, v := range want {
		ann[k] = v
	}
	obj.SetAnnotations(ann)
}

// ensureIdentity records obj's id and creation time (identityPatch) with a merge patch
// of its annotations (and of labels, when the caller changed them on obj too).
func ensureIdentity(ctx context.Context, c client.Client, obj client.Object, events eventRecorder) error {
	base := obj.DeepCopyObject().(client.Object)
	if !identityPatch(obj, events) {
		return nil
	}
	return c.Patch(ctx, obj, client.MergeFrom(base))
}

// eventRecorder is the part of the manager's event recorder the controllers use.
type eventRecorder = events.EventRecorder
