package controllers

import (
	"bytes"
	"context"
	"errors"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/index"
	"podium.dev/podium/internal/provenance"
	"podium.dev/podium/internal/rowhistory"
	"podium.dev/podium/internal/rowwrite"
)

// DefaultRowWorkers is how many rows are reconciled at once: a row's reconcile mostly
// waits for the apiserver, so a bulk import needs many writes in flight.
const DefaultRowWorkers = 32

// LeaderboardRowReconciler ties a row to its board (labels, owner reference) and
// validates its values against the board's schemas.
type LeaderboardRowReconciler struct {
	client.Client
	// APIReader reads a row's whole status from the apiserver when the cache keeps a
	// stripped one (rowhistory.StripForCache); nil reads the cache.
	APIReader client.Reader
	// Workers overrides DefaultRowWorkers (0 keeps the default).
	Workers int
	// Events may be nil (tests): IDReissued is then not emitted.
	Events events.EventRecorder

	// ledger records the identity of rows that lack one in their annotations
	// (SetupWithManager makes it).
	ledger *rowLedger
	// status writes a row's status and reads back only its metadata (SetupWithManager
	// makes it; nil writes with the client).
	status *rowwrite.Client
}

// restore: the operator records a row's id and creation time (annotations the row
// metadata admission policy lets only holders of the restore verb write).
// +kubebuilder:rbac:groups=hub.podium.dev,resources=leaderboardrows,verbs=get;list;watch;patch;update;restore
// +kubebuilder:rbac:groups=hub.podium.dev,resources=leaderboardrows/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=hub.podium.dev,resources=leaderboards,verbs=get;list;watch
// +kubebuilder:rbac:groups=hub.podium.dev,resources=rowidentityledgers,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups="",resources=pods,verbs=get
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// Reconcile adds the row's owner reference when missing and writes its status (Valid, id).
func (r *LeaderboardRowReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	row := &hubv1alpha1.LeaderboardRow{}
	if ok, err := live(ctx, r, req, row); !ok {
		return ctrl.Result{}, err
	}
	lb := &hubv1alpha1.Leaderboard{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: row.Namespace, Name: row.Spec.Leaderboard}, lb); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		lb = nil // the row waits: the board's creation enqueues it again
	}
	if patched, err := r.ensureMetadata(ctx, row, lb); err != nil || patched {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			// A newer version of the row is on its way through the cache and will
			// be reconciled; this one is stale.
			return ctrl.Result{}, nil
		}
		// After a metadata patch, the status is written when the patched row comes
		// back through the cache: writing it now would be done twice, once here and
		// once more for the patch's own event seen before the status write.
		return ctrl.Result{}, err
	}
	verdict, err := r.verify(ctx, row, lb)
	if err != nil {
		return ctrl.Result{}, err
	}
	var res ctrl.Result
	if verdict.Retry {
		// The kubelet has not reported the writing Pod's images yet; Pods are not
		// watched (one read per row a Pod writes, never a Pod cache).
		res.RequeueAfter = podRetry
	}
	now := time.Now()
	want := verifiedRowStatus(row, lb, verdict, now)
	if equality.Semantic.DeepEqual(want, row.Status) {
		return res, nil
	}
	if r.APIReader != nil && rowhistory.NeedsFullStatus(row) {
		// The cached status lacks the history (rowhistory.StripForCache), which the
		// update below writes whole and a new generation's entry needs: one read,
		// only when a write follows (a resync reads nothing), never an extra write.
		full := &hubv1alpha1.LeaderboardRow{}
		if err := r.APIReader.Get(ctx, req.NamespacedName, full); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
		if full.UID != row.UID || full.Generation != row.Generation {
			return ctrl.Result{}, nil // another version is on its way through the cache
		}
		row = full
		if want = verifiedRowStatus(row, lb, verdict, now); equality.Semantic.DeepEqual(want, row.Status) {
			return res, nil
		}
	}
	// An update of the status at the row's resourceVersion, not a patch: the apiserver
	// then neither serializes the stored row nor applies a patch to it, which is a
	// third of what a row's status write costs it (docs/design/performance-log.md, "Rows in"). A
	// conflict means a newer row is on its way through the cache and will be
	// reconciled.
	invalidated := becameInvalid(row.Status, want)
	row.Status = want
	if err := r.writeStatus(ctx, row); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if invalidated && r.Events != nil {
		c := meta.FindStatusCondition(want.Conditions, hubv1alpha1.ConditionValid)
		r.Events.Eventf(row, nil, corev1.EventTypeWarning, hubv1alpha1.ReasonValuesInvalid, "Validate",
			"The row was valid and now fails its leaderboard's schemas; it is no longer ranked: %s", c.Message)
	}
	return res, nil
}

// writeStatus updates the row's status at its resourceVersion.
func (r *LeaderboardRowReconciler) writeStatus(ctx context.Context, row *hubv1alpha1.LeaderboardRow) error {
	if r.status == nil {
		return r.Status().Update(ctx, row)
	}
	return r.status.UpdateStatus(ctx, row)
}

// podRetry is how soon a row whose writing Pod has not reported its images is checked
// again.
const podRetry = 2 * time.Second

// verify decides whether a run Podium admitted wrote the row's current values
// (docs/verified-rows.md). A row no Pod wrote costs nothing; a row whose status already
// records the provenance of these values (this generation: provenance.Kept) keeps it
// (the Pod may be gone); a row whose verdict for this generation is already False keeps
// it (admission changes the recorded writer only with the values). Otherwise the writing Pod is read from the apiserver (Pods are not
// cached) and, when it is a run Podium admitted, its requester's right to write rows is
// asked of the apiserver's authorizer.
func (r *LeaderboardRowReconciler) verify(ctx context.Context, row *hubv1alpha1.LeaderboardRow, lb *hubv1alpha1.Leaderboard) (provenance.Verdict, error) {
	w, ok := provenance.WriterOf(row)
	if !ok {
		return provenance.NotWritten(), nil
	}
	if v, ok := provenance.Kept(row); ok {
		return v, nil
	}
	if c := meta.FindStatusCondition(row.Status.Conditions, hubv1alpha1.ConditionVerified); c != nil &&
		c.Status == metav1.ConditionFalse && c.ObservedGeneration == row.Generation {
		return provenance.Verdict{Status: c.Status, Reason: c.Reason, Message: c.Message}, nil
	}
	reader := r.APIReader
	if reader == nil {
		reader = r.Client
	}
	pod := &corev1.Pod{}
	if err := reader.Get(ctx, types.NamespacedName{Namespace: w.Namespace, Name: w.Name}, pod); err != nil {
		if !apierrors.IsNotFound(err) {
			return provenance.Verdict{}, err
		}
		pod = nil
	}
	f := provenance.Facts{Pod: pod}
	if requester, ask := provenance.Needs(w, pod); ask {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User:   requester,
			Groups: provenance.GroupsOf(requester),
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: row.Namespace, Verb: "create", Group: hubv1alpha1.GroupVersion.Group, Resource: "leaderboardrows",
			},
		}}
		if err := r.Create(ctx, sar); err != nil {
			return provenance.Verdict{}, err
		}
		f.RequesterMayWrite = sar.Status.Allowed
	}
	return provenance.Decide(w, lb, f), nil
}

// becameInvalid says whether a row that was Valid is now invalid by its values (a
// schema change applied with kubectl or GitOps, or new values): the surprising case
// that deserves an event on the row. A row created invalid is reported by its board's
// RowsInvalid event.
func becameInvalid(old, next hubv1alpha1.LeaderboardRowStatus) bool {
	prev := meta.FindStatusCondition(old.Conditions, hubv1alpha1.ConditionValid)
	cur := meta.FindStatusCondition(next.Conditions, hubv1alpha1.ConditionValid)
	return prev != nil && prev.Status == metav1.ConditionTrue &&
		cur != nil && cur.Status == metav1.ConditionFalse && cur.Reason == hubv1alpha1.ReasonValuesInvalid
}

// ensureMetadata records the row's id and creation time once (identityPatch), and adds
// the board's controller reference when it is missing (a row applied with kubectl or
// restored from a backup; the CLI sets it at create), in one patch of metadata (never
// spec). Labels are not the controller's: the board label is set at admission
// (config/admission/row_metadata.yaml) and the row's id is also status.id, written
// with the status, so that it is found by a field selector. It reports whether it
// patched.
func (r *LeaderboardRowReconciler) ensureMetadata(ctx context.Context, row *hubv1alpha1.LeaderboardRow, lb *hubv1alpha1.Leaderboard) (bool, error) {
	base := row.DeepCopy()
	changed, err := r.recordIdentity(ctx, row)
	if err != nil {
		return false, err
	}
	if lb != nil && !controlledBy(row, lb) {
		dropStaleBoardOwner(row)
		if err := controllerutil.SetControllerReference(lb, row, r.Scheme()); err != nil {
			var owned *controllerutil.AlreadyOwnedError
			if !errors.As(err, &owned) {
				return false, err
			}
			// Something else controls the row: keep its claim, add nothing.
			ctrl.LoggerFrom(ctx).Info("Row is controlled by another object; not adding the board's owner reference", "owner", owned.Owner.Name)
			row.OwnerReferences = base.OwnerReferences
		} else {
			changed = true
		}
	}
	if !changed {
		return false, nil
	}
	return true, r.Patch(ctx, row, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
}

// recordIdentity sees that the row's id and creation time are recorded where a backup
// keeps them, and reports whether it changed the row (in place) for the caller's patch.
// A row recorded in its annotations (its create through the row webhook, a restore) needs
// nothing. A row whose id admission refused is given its UID, with an IDReissued event.
// Any other row lacks them because it was stored before Podium recorded identities, or
// created while the row webhook could not be reached: if a ledger of its namespace names
// it with another id, it is that row re-created (a restore without status, or the same
// name created again, which is then like an update of it) and takes the ledger's
// identity; else its identity as it is now goes into a ledger, written with many rows at
// once, and the row is not written at all.
func (r *LeaderboardRowReconciler) recordIdentity(ctx context.Context, row *hubv1alpha1.LeaderboardRow) (bool, error) {
	if hubv1alpha1.IdentityRecorded(row) {
		return false, nil
	}
	if hubv1alpha1.IdentityRefused(row) || r.ledger == nil {
		return identityPatch(row, r.Events), nil
	}
	e, held, err := r.ledger.lookup(ctx, row.Namespace, row.Name)
	switch {
	case err != nil:
		return false, err
	case !held:
		r.ledger.record(row)
		return false, nil
	case e.ID == string(row.UID):
		return false, nil // the row the ledger recorded
	}
	setAnnotations(row, hubv1alpha1.LedgerAnnotations(e))
	return true, nil
}

func controlledBy(row *hubv1alpha1.LeaderboardRow, lb *hubv1alpha1.Leaderboard) bool {
	ref := metav1.GetControllerOf(row)
	return ref != nil && ref.UID == lb.UID
}

// dropStaleBoardOwner removes the controller reference of an earlier board of the same
// name (deleted and created again), so the new board can own the row.
func dropStaleBoardOwner(row *hubv1alpha1.LeaderboardRow) {
	refs := row.OwnerReferences[:0:0]
	for _, ref := range row.OwnerReferences {
		if ref.Controller != nil && *ref.Controller && ref.Kind == "Leaderboard" && ref.APIVersion == hubv1alpha1.GroupVersion.String() {
			continue
		}
		refs = append(refs, ref)
	}
	row.OwnerReferences = refs
}

// SetupWithManager registers the reconciler. Board events enqueue the board's rows
// (through the spec.leaderboard index) when the board appears, goes, or its schemas
// change: that is what re-validates every row of a board.
func (r *LeaderboardRowReconciler) SetupWithManager(mgr ctrl.Manager) error {
	workers := r.Workers
	if workers == 0 {
		workers = DefaultRowWorkers
	}
	r.ledger = newRowLedger(mgr.GetClient(), mgr.GetAPIReader(), mgr.GetClient())
	r.ledger.retake = make(chan event.GenericEvent, 1024)
	status, err := rowwrite.New(mgr.GetConfig(), mgr.GetHTTPClient())
	if err != nil {
		return err
	}
	r.status = status
	if err := mgr.Add(r.ledger); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&hubv1alpha1.LeaderboardRow{}).
		Watches(&hubv1alpha1.Leaderboard{}, handler.EnqueueRequestsFromMapFunc(r.rowsOfBoard), builder.WithPredicates(schemasChanged())).
		// A ledger's creation (a restore brings one back) wakes the rows it names that it
		// would give another identity; its updates are the operator's own appends.
		Watches(&hubv1alpha1.RowIdentityLedger{}, handler.EnqueueRequestsFromMapFunc(r.rowsToRecord), builder.WithPredicates(predicate.Funcs{
			UpdateFunc: func(event.UpdateEvent) bool { return false },
			DeleteFunc: func(event.DeleteEvent) bool { return false },
		})).
		// Rows a ledger batch found named by a ledger with another id: restored after
		// their reconcile read the ledgers, they take the ledger's identity now.
		WatchesRawSource(source.Channel(r.ledger.retake, &handler.EnqueueRequestForObject{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Named("leaderboardrow").
		Complete(r)
}

// rowsToRecord maps a ledger to the rows it names that lack a recorded identity and
// are not the row it recorded (another UID): rows restored before their ledger. The
// ledgers the operator writes itself wake none.
func (r *LeaderboardRowReconciler) rowsToRecord(ctx context.Context, o client.Object) []reconcile.Request {
	l, ok := o.(*hubv1alpha1.RowIdentityLedger)
	if !ok {
		return nil
	}
	var reqs []reconcile.Request
	row := &hubv1alpha1.LeaderboardRow{}
	for name, e := range l.Rows {
		key := types.NamespacedName{Namespace: l.Namespace, Name: name}
		if err := r.Get(ctx, key, row); err != nil || hubv1alpha1.IdentityRecorded(row) || string(row.UID) == e.ID {
			continue // not there yet (its creation is reconciled), recorded, or the same row
		}
		reqs = append(reqs, reconcile.Request{NamespacedName: key})
	}
	return reqs
}

func (r *LeaderboardRowReconciler) rowsOfBoard(ctx context.Context, o client.Object) []reconcile.Request {
	rows := &hubv1alpha1.LeaderboardRowList{}
	if err := r.List(ctx, rows, client.InNamespace(o.GetNamespace()), client.MatchingFields{index.RowBoard: o.GetName()}, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing the rows of a leaderboard", "leaderboard", client.ObjectKeyFromObject(o))
		return nil
	}
	return requestsFor(rows.Items)
}

// schemasChanged passes a board's creation and deletion, and updates that change its
// schemas or its submissions policy: a new title must not rewrite 100k rows' status.
func schemasChanged() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, ok1 := e.ObjectOld.(*hubv1alpha1.Leaderboard)
			n, ok2 := e.ObjectNew.(*hubv1alpha1.Leaderboard)
			if !ok1 || !ok2 {
				return true
			}
			return o.Spec.Submissions != n.Spec.Submissions ||
				!bytes.Equal(rawJSON(o.Spec.MetadataSchema), rawJSON(n.Spec.MetadataSchema)) ||
				!bytes.Equal(rawJSON(o.Spec.MetricsSchema), rawJSON(n.Spec.MetricsSchema))
		},
	}
}
