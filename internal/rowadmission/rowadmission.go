// Package rowadmission is the mutating admission webhook that records, in a leaderboard
// row's create itself, what the row controller would otherwise write with a metadata
// patch of its own (docs/leaderboards.md, "Ownership, labels, and what controllers
// write"; docs/design/restore.md): the row's id and creation time
// (hubv1alpha1.AnnotationID, AnnotationCreatedAt) and its board's controller reference.
// A row then costs two writes (its create and its status), not three.
//
// What it never does: keep a value a client sent. The admission policy
// podium-row-metadata (config/admission/row_metadata.yaml) runs before every mutating
// webhook (the apiserver's admission order) and leaves, for anyone but a restore
// identity, an empty id and creation time where the client sent one; this webhook fills
// only a row that has neither key, so a refused value stays refused (the operator then
// reissues the id with an IDReissued event) and a restore's values stay the restore's.
//
// The webhook fails open (failurePolicy Ignore): when the operator is down or slow, rows
// are still created, and the row controller records the same three things with the
// patch it made before this webhook existed.
package rowadmission

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"gomodules.xyz/jsonpatch/v2"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// Path is where the operator serves the webhook.
const Path = "/mutate-podium-rows"

// Handler answers the admission of a row's create.
type Handler struct {
	// Boards reads Leaderboards (the operator's cache): a row's board, for its
	// controller reference.
	Boards client.Reader
	// Live, when set, is asked when Boards does not have the board: a board created a
	// moment before its rows (one kubectl apply of both) may not be in the cache yet. A
	// board found nowhere adds no reference (the row controller adds it when the board
	// appears).
	Live client.Reader
	// Restorer says whether the requester may use the verb restore on leaderboardrows in
	// the namespace (a restore identity). Such a create that sends no identity is a row
	// restored from a backup made before its identity was in its annotations, or a
	// cluster admin's: it gets no new id here, and the row controller gives it the
	// identity a row ledger holds for its name, or records it in one (docs/operations.md,
	// "Backup and restore"). nil: nobody is.
	Restorer func(ctx context.Context, user authenticationv1.UserInfo, namespace string) (bool, error)
	// Now and NewID default to the clock and a random UUID (tests set them).
	Now   func() time.Time
	NewID func() string
}

var _ admission.Handler = &Handler{}

// row is the part of a row the webhook reads: a small decode, not the whole object.
type row struct {
	Metadata struct {
		Annotations     map[string]string       `json:"annotations"`
		OwnerReferences []metav1.OwnerReference `json:"ownerReferences"`
	} `json:"metadata"`
	Spec struct {
		Leaderboard string `json:"leaderboard"`
	} `json:"spec"`
}

// Handle records the identity and the controller reference a row's create lacks.
func (h *Handler) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create || req.Resource.Group != hubv1alpha1.GroupVersion.Group || req.Resource.Resource != "leaderboardrows" || req.SubResource != "" {
		return admission.Allowed("")
	}
	var r row
	if err := json.Unmarshal(req.Object.Raw, &r); err != nil {
		// The apiserver decoded it already: answer, never block a create.
		return admission.Allowed("not a row this webhook can read")
	}
	var ops []jsonpatch.JsonPatchOperation
	if ann := r.Metadata.Annotations; !has(ann, hubv1alpha1.AnnotationID) && !has(ann, hubv1alpha1.AnnotationCreatedAt) {
		restorer := false
		if h.Restorer != nil {
			var err error
			if restorer, err = h.Restorer(ctx, req.UserInfo, req.Namespace); err != nil {
				restorer = true // unsure: the row controller records it (a ledger), never a wrong new id
			}
		}
		if !restorer {
			ops = append(ops, h.identity(ann == nil)...)
		}
	}
	if ref := h.controllerRef(ctx, req.Namespace, r); ref != nil {
		if len(r.Metadata.OwnerReferences) == 0 {
			ops = append(ops, jsonpatch.NewOperation("add", "/metadata/ownerReferences", []metav1.OwnerReference{*ref}))
		} else {
			ops = append(ops, jsonpatch.NewOperation("add", "/metadata/ownerReferences/-", *ref))
		}
	}
	if len(ops) == 0 {
		return admission.Allowed("")
	}
	return admission.Patched("", ops...)
}

func has(m map[string]string, k string) bool {
	_, ok := m[k]
	return ok
}

// identity is the patch that records a new id and the creation time.
func (h *Handler) identity(noAnnotations bool) []jsonpatch.JsonPatchOperation {
	now, newID := time.Now, func() string { return string(uuid.NewUUID()) }
	if h.Now != nil {
		now = h.Now
	}
	if h.NewID != nil {
		newID = h.NewID
	}
	id, at := newID(), now().UTC().Format(time.RFC3339)
	if noAnnotations {
		return []jsonpatch.JsonPatchOperation{jsonpatch.NewOperation("add", "/metadata/annotations", map[string]string{
			hubv1alpha1.AnnotationID: id, hubv1alpha1.AnnotationCreatedAt: at,
		})}
	}
	return []jsonpatch.JsonPatchOperation{
		jsonpatch.NewOperation("add", "/metadata/annotations/"+pointer(hubv1alpha1.AnnotationID), id),
		jsonpatch.NewOperation("add", "/metadata/annotations/"+pointer(hubv1alpha1.AnnotationCreatedAt), at),
	}
}

// controllerRef is the board's controller reference, when the row has no controller and
// its board exists: what controllerutil.SetControllerReference would add.
func (h *Handler) controllerRef(ctx context.Context, namespace string, r row) *metav1.OwnerReference {
	for _, ref := range r.Metadata.OwnerReferences {
		if ref.Controller != nil && *ref.Controller {
			return nil // the row controller settles a stale or foreign controller
		}
	}
	if h.Boards == nil || r.Spec.Leaderboard == "" {
		return nil
	}
	key := types.NamespacedName{Namespace: namespace, Name: r.Spec.Leaderboard}
	lb := &hubv1alpha1.Leaderboard{}
	err := h.Boards.Get(ctx, key, lb)
	if apierrors.IsNotFound(err) && h.Live != nil {
		err = h.Live.Get(ctx, key, lb)
	}
	if err != nil || lb.DeletionTimestamp != nil {
		return nil
	}
	return metav1.NewControllerRef(lb, hubv1alpha1.GroupVersion.WithKind("Leaderboard"))
}

// pointer escapes a map key for a JSON pointer (RFC 6901).
func pointer(key string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(key)
}
