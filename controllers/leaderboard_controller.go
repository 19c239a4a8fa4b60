package controllers

import (
	"context"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/boardres"
	"podium.dev/podium/internal/index"
	"podium.dev/podium/internal/ranking"
)

// DefaultCountDelay is how long row changes are gathered before a board's row counts
// are recomputed: a bulk import of 10,000 rows then costs a few status writes, not
// 10,000.
const DefaultCountDelay = time.Second

// LeaderboardReconciler resolves a Leaderboard's dataset and versions, checks its
// definition against other objects, and reports Ready and its row counts.
type LeaderboardReconciler struct {
	client.Client
	// CountDelay overrides DefaultCountDelay (0 keeps the default).
	CountDelay time.Duration
	// Events may be nil (tests): the RowsInvalid warning is then not emitted.
	Events events.EventRecorder
}

// +kubebuilder:rbac:groups=hub.podium.dev,resources=leaderboards,verbs=get;list;watch;patch;restore
// +kubebuilder:rbac:groups=hub.podium.dev,resources=leaderboards/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=hub.podium.dev,resources=datasets,verbs=get;list;watch
// +kubebuilder:rbac:groups=hub.podium.dev,resources=leaderboardrows,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile records the board's identity, labels it with its id and writes its status.
func (r *LeaderboardReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	lb := &hubv1alpha1.Leaderboard{}
	if ok, err := live(ctx, r, req, lb); !ok {
		return ctrl.Result{}, err // a deleted board's rows go with it through their owner references
	}
	if err := r.ensureIdentity(ctx, lb); err != nil {
		return ctrl.Result{}, err
	}
	facts, err := r.gather(ctx, lb)
	if err != nil {
		return ctrl.Result{}, err
	}
	want := boardStatus(lb, facts, time.Now())
	if equality.Semantic.DeepEqual(want, lb.Status) {
		return ctrl.Result{}, nil
	}
	if want.InvalidRows > lb.Status.InvalidRows && r.Events != nil {
		// A definition applied with kubectl or GitOps cannot be refused after the fact:
		// say so where `kubectl describe` and the GitOps tools show it.
		r.Events.Eventf(lb, nil, corev1.EventTypeWarning, hubv1alpha1.ReasonRowsInvalid, "Validate",
			"%d rows fail the leaderboard's schemas and are not ranked (%s); see status.invalidRowNames and each row's Valid condition",
			want.InvalidRows, strings.Join(want.InvalidRowNames, ", "))
	}
	if reason, msg, ok := readyWarning(lb.Status, want); ok && r.Events != nil {
		r.Events.Eventf(lb, nil, corev1.EventTypeWarning, reason, "Validate", "%s", msg)
	}
	patch := client.MergeFrom(lb.DeepCopy())
	lb.Status = want
	return ctrl.Result{}, r.Status().Patch(ctx, lb, patch)
}

// ensureIdentity records the board's id and creation time once (identityPatch) and
// labels it with its id (hubv1alpha1.LabelID), so that it is found by id without a
// scan, in one merge patch of metadata. The label is only an index: whoever finds a
// board by it checks hubv1alpha1.ID, which admission protects.
func (r *LeaderboardReconciler) ensureIdentity(ctx context.Context, lb *hubv1alpha1.Leaderboard) error {
	base := lb.DeepCopy()
	changed := identityPatch(lb, r.Events)
	if setLabels(lb, map[string]string{hubv1alpha1.LabelID: hubv1alpha1.ID(lb)}) {
		changed = true
	}
	if !changed {
		return nil
	}
	return r.Patch(ctx, lb, client.MergeFrom(base))
}

// readyWarning says whether a status change deserves a Warning event: the board has
// just become not Ready because of its own definition (an invalid schema, or a name
// another board owns), which a definition applied with kubectl or GitOps cannot be
// refused for. The event carries the condition's reason and message.
func readyWarning(old, next hubv1alpha1.LeaderboardStatus) (reason, message string, ok bool) {
	c := meta.FindStatusCondition(next.Conditions, hubv1alpha1.ConditionReady)
	if c == nil || c.Status != metav1.ConditionFalse ||
		(c.Reason != hubv1alpha1.ReasonDuplicateName && c.Reason != hubv1alpha1.ReasonInvalidSchema) {
		return "", "", false
	}
	if prev := meta.FindStatusCondition(old.Conditions, hubv1alpha1.ConditionReady); prev != nil &&
		prev.Status == c.Status && prev.Reason == c.Reason {
		return "", "", false // said already
	}
	return c.Reason, c.Message, true
}

// gather reads, from the cache, every other object the board's status depends on.
func (r *LeaderboardReconciler) gather(ctx context.Context, lb *hubv1alpha1.Leaderboard) (boardFacts, error) {
	var f boardFacts
	var err error
	if f.dataset, f.datasetElsewhere, err = r.findDataset(ctx, lb); err != nil {
		return f, err
	}
	slug := boardres.Slug(lb)
	if slug == "" && f.dataset != nil {
		slug = f.dataset.Namespace + "/" + f.dataset.Name + "/" + lb.Spec.Name
	}
	if slug != "" {
		boards := &hubv1alpha1.LeaderboardList{}
		if err := r.List(ctx, boards, client.InNamespace(lb.Namespace), client.MatchingFields{index.BoardSlug: slug}); err != nil {
			return f, err
		}
		f.sameName = boards.Items
	}
	rows := &hubv1alpha1.LeaderboardRowList{}
	// The cached rows are only counted, never changed: no copy of 100k rows.
	if err := r.List(ctx, rows, client.InNamespace(lb.Namespace), client.MatchingFields{index.RowBoard: lb.Name}, client.UnsafeDisableDeepCopy); err != nil {
		return f, err
	}
	for i := range rows.Items {
		f.rows++
		if ranking.Ranked(&rows.Items[i]) {
			f.ranked++
		}
		if valuesInvalid(&rows.Items[i]) {
			f.invalid++
			f.invalidNames = firstNames(f.invalidNames, rows.Items[i].Name, maxInvalidRowNames)
		}
	}
	return f, nil
}

// maxInvalidRowNames bounds status.invalidRowNames.
const maxInvalidRowNames = 5

// valuesInvalid says whether the row controller found the row's current values invalid.
func valuesInvalid(r *hubv1alpha1.LeaderboardRow) bool {
	c := meta.FindStatusCondition(r.Status.Conditions, hubv1alpha1.ConditionValid)
	return c != nil && c.ObservedGeneration == r.Generation && c.Status == metav1.ConditionFalse && c.Reason == hubv1alpha1.ReasonValuesInvalid
}

// firstNames keeps the n smallest names, sorted, adding name.
func firstNames(names []string, name string, n int) []string {
	i, _ := slices.BinarySearch(names, name)
	if i >= n {
		return names
	}
	names = slices.Insert(names, i, name)
	if len(names) > n {
		names = names[:n]
	}
	return names
}

// findDataset finds the board's Dataset in the board's namespace. A package of another
// org, or a packageID of another namespace's Dataset, is returned as elsewhere.
func (r *LeaderboardReconciler) findDataset(ctx context.Context, lb *hubv1alpha1.Leaderboard) (found *hubv1alpha1.Dataset, elsewhere *hubv1alpha1.Dataset, err error) {
	if lb.Spec.Package != "" {
		org, name, _ := strings.Cut(lb.Spec.Package, "/")
		if org != lb.Namespace {
			// Another org's package is refused whether or not it exists: looking
			// would tell this namespace's users what another org holds.
			return nil, &hubv1alpha1.Dataset{ObjectMeta: metav1.ObjectMeta{Namespace: org, Name: name}}, nil
		}
		ds := &hubv1alpha1.Dataset{}
		if err := r.Get(ctx, types.NamespacedName{Namespace: org, Name: name}, ds); err != nil {
			return nil, nil, client.IgnoreNotFound(err)
		}
		return ds, nil, nil
	}
	list := &hubv1alpha1.DatasetList{}
	if err := r.List(ctx, list, client.MatchingFields{index.UID: strings.ToLower(lb.Spec.PackageID)}); err != nil {
		return nil, nil, err
	}
	for i := range list.Items {
		if list.Items[i].Namespace == lb.Namespace {
			return &list.Items[i], nil, nil
		}
		elsewhere = &list.Items[i]
	}
	return nil, elsewhere, nil
}

// SetupWithManager registers the reconciler and its watches: Datasets (a board
// resolves against its dataset), rows (counts, gathered for CountDelay) and other
// boards of the same slug (the older of two boards with one name wins).
func (r *LeaderboardReconciler) SetupWithManager(mgr ctrl.Manager) error {
	delay := r.CountDelay
	if delay == 0 {
		delay = DefaultCountDelay
	}
	return ctrl.NewControllerManagedBy(mgr).
		// Not on its own status writes: during a bulk import each would start the
		// next count at once, defeating CountDelay.
		For(&hubv1alpha1.Leaderboard{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
		Watches(&hubv1alpha1.Dataset{}, handler.EnqueueRequestsFromMapFunc(r.boardsOfDataset)).
		Watches(&hubv1alpha1.Leaderboard{}, handler.EnqueueRequestsFromMapFunc(r.boardsWithSameSlug)).
		Watches(&hubv1alpha1.LeaderboardRow{}, boardOfRowAfter(delay)).
		Named("leaderboard").
		Complete(r)
}

func (r *LeaderboardReconciler) boardsOfDataset(ctx context.Context, o client.Object) []reconcile.Request {
	boards := &hubv1alpha1.LeaderboardList{}
	// A namespace (an org) holds few boards; rows are never listed here.
	if err := r.List(ctx, boards, client.InNamespace(o.GetNamespace())); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing the leaderboards of a dataset", "dataset", client.ObjectKeyFromObject(o))
		return nil
	}
	pkg := o.GetNamespace() + "/" + o.GetName()
	var reqs []reconcile.Request
	for _, lb := range boards.Items {
		if lb.Spec.Package == pkg || strings.EqualFold(lb.Spec.PackageID, hubv1alpha1.ID(o)) || lb.Status.PackageID == hubv1alpha1.ID(o) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&lb)})
		}
	}
	return reqs
}

func (r *LeaderboardReconciler) boardsWithSameSlug(ctx context.Context, o client.Object) []reconcile.Request {
	lb, ok := o.(*hubv1alpha1.Leaderboard)
	if !ok {
		return nil
	}
	slug := boardres.Slug(lb)
	if slug == "" {
		return nil
	}
	boards := &hubv1alpha1.LeaderboardList{}
	if err := r.List(ctx, boards, client.InNamespace(lb.Namespace), client.MatchingFields{index.BoardSlug: slug}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing the leaderboards of a slug", "slug", slug)
		return nil
	}
	var reqs []reconcile.Request
	for _, other := range boards.Items {
		if other.UID != lb.UID {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&other)})
		}
	}
	return reqs
}

// boardOfRowAfter enqueues a row's board after delay. The queue keeps one entry per
// board at the earliest time asked, so a burst of row events makes one reconcile.
func boardOfRowAfter(delay time.Duration) handler.EventHandler {
	add := func(o client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		if row, ok := o.(*hubv1alpha1.LeaderboardRow); ok {
			q.AddAfter(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: row.Namespace, Name: row.Spec.Leaderboard}}, delay)
		}
	}
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(e.Object, q)
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			oldRow, ok1 := e.ObjectOld.(*hubv1alpha1.LeaderboardRow)
			newRow, ok2 := e.ObjectNew.(*hubv1alpha1.LeaderboardRow)
			if ok1 && ok2 && ranking.Ranked(oldRow) == ranking.Ranked(newRow) && valuesInvalid(oldRow) == valuesInvalid(newRow) {
				return // the counts cannot have changed
			}
			add(e.ObjectNew, q)
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(e.Object, q)
		},
	}
}
