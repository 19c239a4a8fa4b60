package controllers

import (
	"context"
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/delivery"
	"podium.dev/podium/internal/index"
)

// RunSecretReconciler looks after the run Secrets delivery writes (internal/delivery):
// it writes again one whose write after admission did not happen (reissue), makes one
// written without an owner owned by its Job or Pod, deletes it when the run
// finishes or is gone, when no run was ever created with it, and in any case at MaxAge,
// and removes a revoked, purged or deleted secret's value from the run Secrets of runs
// that have not started yet. Jobs and Pods are cached only when admission labelled them
// (hub.podium.dev/run-secret).
type RunSecretReconciler struct {
	Client    client.Client
	APIReader client.Reader
	// MaxAge bounds every run Secret's life.
	MaxAge time.Duration
	// OrphanGrace is how long a run Secret may wait for its Job or Pod to appear.
	OrphanGrace time.Duration
	Now         func() time.Time
	// Events may be nil (tests): the RunSecretDeleted and RunSecretValuesRemoved events
	// are then not emitted.
	Events eventRecorder
	// Reissue, when set, returns again the run Secret admission decided for a Job or
	// a Pod (kind; delivery.Resolver.Reissue): a run Secret is written after admission
	// answered, once the run is stored, and this writes it should that not have happened.
	Reissue func(ctx context.Context, kind string, run client.Object) (*corev1.Secret, error)
}

// Reasons of the run Secret controller's events (they name the Secret and env vars,
// never a value).
const (
	ReasonRunSecretDeleted       = "RunSecretDeleted"
	ReasonRunSecretValuesRemoved = "RunSecretValuesRemoved"
	ReasonRunSecretReissued      = "RunSecretReissued"
)

// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=create;update

// SetupWithManager registers the reconciler. It finds run Secrets by the HostedSecrets
// they use through index.RunSecretUses, which index.Register adds.
func (r *RunSecretReconciler) SetupWithManager(mgr ctrl.Manager) error {
	isRunSecret := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetLabels()[hubv1alpha1.LabelRunFor] != "" })
	return ctrl.NewControllerManagedBy(mgr).
		For(&corev1.Secret{}, builder.WithPredicates(isRunSecret)).
		Watches(&batchv1.Job{}, handler.EnqueueRequestsFromMapFunc(runToSecret)).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(runToSecret)).
		Watches(&hubv1alpha1.HostedSecret{}, r.goneSecrets()).
		Named("runsecret").
		Complete(r)
}

func runToSecret(_ context.Context, o client.Object) []reconcile.Request {
	name := o.GetLabels()[hubv1alpha1.LabelRunSecret]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
}

// goneSecrets wakes the run Secrets holding a secret that is revoked (or superseded),
// being deleted, or deleted (a purge over HTTP, kubectl delete): each of them drops its
// value if its run has not started.
func (r *RunSecretReconciler) goneSecrets() handler.EventHandler {
	enqueue := func(ctx context.Context, o client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		hs, ok := o.(*hubv1alpha1.HostedSecret)
		if !ok {
			return
		}
		for _, req := range r.secretsUsing(ctx, hs) {
			q.Add(req)
		}
	}
	gone := func(hs client.Object) bool {
		s, ok := hs.(*hubv1alpha1.HostedSecret)
		return ok && (s.Status.State == hubv1alpha1.StateRevoked || s.DeletionTimestamp != nil)
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if gone(e.Object) {
				enqueue(ctx, e.Object, q)
			}
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if gone(e.ObjectNew) {
				enqueue(ctx, e.ObjectNew, q)
			}
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, e.Object, q)
		},
	}
}

// secretsUsing are the run Secrets holding a value of hs.
func (r *RunSecretReconciler) secretsUsing(ctx context.Context, hs *hubv1alpha1.HostedSecret) []reconcile.Request {
	list := &corev1.SecretList{}
	if err := r.Client.List(ctx, list, client.InNamespace(hs.Namespace), client.MatchingFields{index.RunSecretUses: string(hs.UID)}); err != nil {
		logf.FromContext(ctx).Error(err, "Listing the run Secrets of a revoked or deleted secret failed", "hostedSecret", client.ObjectKeyFromObject(hs))
		return nil
	}
	return requestsFor(list.Items)
}

// Reconcile decides the fate of one run Secret.
func (r *RunSecretReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	s := &corev1.Secret{}
	if err := r.Client.Get(ctx, req.NamespacedName, s); apierrors.IsNotFound(err) {
		return r.reissue(ctx, req)
	} else if err != nil {
		return ctrl.Result{}, err
	}
	kind := s.Labels[hubv1alpha1.LabelRunFor]
	if kind == "" || s.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	ownerUID := controllerUID(s)
	owner, obj, err := r.owner(ctx, r.Client, s, kind, ownerUID)
	if err != nil {
		return ctrl.Result{}, err
	}
	v := delivery.Decide(r.now(), s.CreationTimestamp.Time, ownerUID, owner, r.MaxAge, r.OrphanGrace)
	if v.Delete && owner == nil {
		// Confirmed uncached before deleting: a run created a moment ago may not be
		// cached yet. (Waiting for it needs no read: its watch event wakes this Secret.)
		if owner, obj, err = r.owner(ctx, r.APIReader, s, kind, ownerUID); err != nil {
			return ctrl.Result{}, err
		}
		v = delivery.Decide(r.now(), s.CreationTimestamp.Time, ownerUID, owner, r.MaxAge, r.OrphanGrace)
	}
	log := logf.FromContext(ctx)
	if v.Delete {
		if err := r.Client.Delete(ctx, s, client.Preconditions{UID: &s.UID}); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return ctrl.Result{}, fmt.Errorf("deleting run Secret %s: %w", req.NamespacedName, err)
		}
		log.Info("Deleted a run Secret", "secret", req.NamespacedName, "reason", v.Reason)
		if r.Events != nil {
			r.Events.Eventf(s, nil, corev1.EventTypeNormal, ReasonRunSecretDeleted, "Delete", "Deleted run Secret %s: %s", req.Name, v.Reason)
		}
		return ctrl.Result{}, nil
	}
	if v.Adopt {
		if err := r.adopt(ctx, s, kind, obj); err != nil {
			return ctrl.Result{}, err
		}
	}
	if owner != nil && !owner.Started {
		if err := r.dropRevoked(ctx, s); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{RequeueAfter: v.RequeueAfter}, nil
}

// reissue writes the run Secret named req of a Job or Pod admitted less than
// delivery.ReissueWindow ago that has not finished, when admission's own write after its
// answer has not happened within delivery.ReissueAfter (the operator stopped between the
// two). Later, or for a finished run, a missing run Secret stays missing: the operator
// deleted it on purpose (the run finished, or reached MaxAge), or an administrator did.
// A Secret found under the name that is not the operator's is replaced
// (delivery.WriteRunSecret), never adopted.
func (r *RunSecretReconciler) reissue(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if r.Reissue == nil {
		return ctrl.Result{}, nil
	}
	type candidate struct {
		kind  string
		obj   client.Object
		owner *delivery.RunOwner
	}
	var runs []candidate
	opts := []client.ListOption{client.InNamespace(req.Namespace), runsOf(false, req.Name)}
	jobs := &batchv1.JobList{}
	if err := r.Client.List(ctx, jobs, opts...); err != nil {
		return ctrl.Result{}, err
	}
	for i := range jobs.Items {
		runs = append(runs, candidate{delivery.KindJob, &jobs.Items[i], delivery.JobOwner(&jobs.Items[i])})
	}
	pods := &corev1.PodList{}
	if err := r.Client.List(ctx, pods, opts...); err != nil {
		return ctrl.Result{}, err
	}
	for i := range pods.Items {
		runs = append(runs, candidate{delivery.KindPod, &pods.Items[i], delivery.PodOwner(&pods.Items[i])})
	}
	window := min(delivery.ReissueWindow, r.MaxAge/2)
	var res ctrl.Result
	for _, run := range runs {
		age := r.now().Sub(run.obj.GetCreationTimestamp().Time)
		if age >= window || run.obj.GetDeletionTimestamp() != nil || run.owner.Finished {
			continue
		}
		if age < delivery.ReissueAfter {
			res.RequeueAfter = delivery.ReissueAfter - age
			continue
		}
		// Confirmed uncached: the cache may not have seen admission's write yet.
		if err := r.APIReader.Get(ctx, req.NamespacedName, &corev1.Secret{}); !apierrors.IsNotFound(err) {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
		s, err := r.Reissue(ctx, run.kind, run.obj)
		if err != nil || s == nil {
			return ctrl.Result{}, err
		}
		if err := delivery.WriteRunSecret(ctx, r.Client, r.APIReader, s); err != nil {
			return ctrl.Result{}, fmt.Errorf("reissuing run Secret %s: %w", req.NamespacedName, err)
		}
		logf.FromContext(ctx).Info("Reissued the run Secret of a run admission answered without it", "secret", req.NamespacedName, "kind", run.kind, "run", run.obj.GetName())
		if r.Events != nil {
			r.Events.Eventf(run.obj, nil, corev1.EventTypeNormal, ReasonRunSecretReissued, "Reissue",
				"Wrote run Secret %s again from what admission recorded: %s", req.Name, s.Annotations[hubv1alpha1.AnnotationRunHostedSecrets])
		}
		return ctrl.Result{}, nil
	}
	return res, nil
}

func (r *RunSecretReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// owner finds, through reader, the Job or Pod labelled with the Secret's name: the cache
// by its index (index.RunSecretOf), the apiserver by label. With two candidates (a label
// copied by hand), the controller's UID wins; an unadopted Secret is adopted by none of
// them.
func (r *RunSecretReconciler) owner(ctx context.Context, reader client.Reader, s *corev1.Secret, kind string, ownerUID types.UID) (*delivery.RunOwner, client.Object, error) {
	opts := []client.ListOption{client.InNamespace(s.Namespace), runsOf(reader == r.APIReader, s.Name)}
	var owners []*delivery.RunOwner
	var objs []client.Object
	var err error
	switch kind {
	case delivery.KindJob:
		var list batchv1.JobList
		owners, objs, err = runsListed(ctx, reader, &list, func() []batchv1.Job { return list.Items }, delivery.JobOwner, opts)
	case delivery.KindPod:
		var list corev1.PodList
		owners, objs, err = runsListed(ctx, reader, &list, func() []corev1.Pod { return list.Items }, delivery.PodOwner, opts)
	default:
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	for i, o := range owners {
		if ownerUID != "" && o.UID == ownerUID {
			return o, objs[i], nil
		}
	}
	if len(owners) == 1 {
		return owners[0], objs[0], nil
	}
	return nil, nil, nil
}

// runsOf selects the runs labelled with run Secret name: by the cache's field index, or
// (uncached) by label.
func runsOf(uncached bool, name string) client.ListOption {
	if uncached {
		return client.MatchingLabels{hubv1alpha1.LabelRunSecret: name}
	}
	return index.RunsOf(name)
}

// runsListed lists the runs (Jobs or Pods) opts select into list, whose items are
// items, with their owners.
func runsListed[T any, P interface {
	*T
	client.Object
}](ctx context.Context, reader client.Reader, list client.ObjectList, items func() []T, owner func(P) *delivery.RunOwner, opts []client.ListOption) ([]*delivery.RunOwner, []client.Object, error) {
	if err := reader.List(ctx, list, opts...); err != nil {
		return nil, nil, err
	}
	all := items()
	owners, objs := make([]*delivery.RunOwner, 0, len(all)), make([]client.Object, 0, len(all))
	for i := range all {
		owners, objs = append(owners, owner(&all[i])), append(objs, P(&all[i]))
	}
	return owners, objs, nil
}

// adopt makes the run its Secret's controller, so that deleting the run deletes the
// Secret (garbage collection) even when the operator is not running.
func (r *RunSecretReconciler) adopt(ctx context.Context, s *corev1.Secret, kind string, obj client.Object) error {
	want := s.DeepCopy()
	want.OwnerReferences = append(want.OwnerReferences, delivery.RunOwnerRef(kind, obj))
	// Metadata only: the data is neither sent nor compared.
	if err := r.Client.Patch(ctx, want, client.MergeFromWithOptions(s, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("adopting run Secret %s/%s: %w", s.Namespace, s.Name, err)
	}
	*s = *want
	return nil
}

// dropRevoked removes from a run Secret the values of secrets revoked, superseded,
// purged or deleted since delivery, so that a run that has not started yet never gets
// them.
func (r *RunSecretReconciler) dropRevoked(ctx context.Context, s *corev1.Secret) error {
	used := delivery.ParseUsed(s.Annotations[hubv1alpha1.AnnotationRunHostedSecrets])
	var keep []delivery.UsedSecret
	var dropped []string
	for _, u := range used {
		hs := &hubv1alpha1.HostedSecret{}
		err := r.Client.Get(ctx, types.NamespacedName{Namespace: s.Namespace, Name: u.Name}, hs)
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		if err == nil && hs.UID == u.UID && hs.Status.State != hubv1alpha1.StateRevoked && hs.DeletionTimestamp == nil {
			keep = append(keep, u)
			continue
		}
		dropped = append(dropped, u.EnvVar)
	}
	if len(dropped) == 0 {
		return nil
	}
	want := s.DeepCopy()
	delivery.DropValues(want.Data, dropped)
	want.Annotations[hubv1alpha1.AnnotationRunHostedSecrets] = delivery.FormatUsed(keep)
	if err := r.Client.Update(ctx, want); err != nil { // carries the resourceVersion read
		return fmt.Errorf("removing revoked or deleted values from run Secret %s/%s: %w", s.Namespace, s.Name, err)
	}
	logf.FromContext(ctx).Info("Removed revoked or deleted secrets from a run Secret", "secret", client.ObjectKeyFromObject(s), "envVars", dropped)
	if r.Events != nil {
		r.Events.Eventf(s, nil, corev1.EventTypeWarning, ReasonRunSecretValuesRemoved, "RemoveRevoked",
			"Removed the revoked or deleted secrets %s from run Secret %s before its run started", strings.Join(dropped, ", "), s.Name)
	}
	return nil
}

func controllerUID(s *corev1.Secret) types.UID {
	for _, o := range s.OwnerReferences {
		if o.Controller != nil && *o.Controller {
			return o.UID
		}
	}
	return ""
}
