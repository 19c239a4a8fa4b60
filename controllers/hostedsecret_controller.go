package controllers

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/secrets"
)

// Requeue delays for what no watch reports: an unlabelled Secret is outside the cache
// (it appears later), and a slot pointer is read uncached (a slot may also be freed by
// means the slotFreed watch does not see, such as a pointer deleted by hand).
const (
	valueMissingRetry = 30 * time.Second
	slotOccupiedRetry = time.Minute
	// maxValueRetry bounds valueRetry.
	maxValueRetry = 5 * time.Minute
)

// valueRetry is when to look again (uncached) for the value Secret of hs, missing or not
// granted: after valueMissingRetry while the problem is new, then after a quarter of how
// long it has lasted (since the Ready condition turned False for it), at most
// maxValueRetry. A fix made soon after the problem is seen within 30 s; a HostedSecret
// left broken for hours costs one uncached read every few minutes, not every 30 s (800
// of them kept the controller's one worker busy in a test).
func valueRetry(hs *hubv1alpha1.HostedSecret, now time.Time) time.Duration {
	c := meta.FindStatusCondition(hs.Status.Conditions, hubv1alpha1.ConditionReady)
	if c == nil || c.Status != metav1.ConditionFalse ||
		(c.Reason != hubv1alpha1.ReasonValueMissing && c.Reason != hubv1alpha1.ReasonSecretNotGranted) {
		return valueMissingRetry
	}
	return min(max(now.Sub(c.LastTransitionTime.Time)/4, valueMissingRetry), maxValueRetry)
}

// HostedSecretReconciler keeps a HostedSecret, its value's Secret and its slot
// consistent. It serves both paths: secrets stored over HTTP (which the handler already
// made active; the reconciler repairs what an interrupted request left) and secrets
// applied with kubectl (a Secret and a HostedSecret pointing at it), which it takes over:
// it labels and owns the Secret, computes valueLast4 and claims the slot.
type HostedSecretReconciler struct {
	// Client reads the manager's cache (only Podium-labelled Secrets are in it) and writes.
	Client client.Client
	// APIReader reads uncached: an unlabelled Secret referenced declaratively, and any
	// object whose absence would otherwise be inferred from a lagging cache.
	APIReader client.Reader
	Lifecycle *secrets.Lifecycle
	// QuarantineGrace overrides DefaultQuarantineGrace (0 keeps the default).
	QuarantineGrace time.Duration
	// Keyring computes a registry credential's fingerprint when its status lacks one
	// (restored without status); nil leaves it empty.
	Keyring *secrets.Keyring
}

// manage-others: the operator creates and deletes HostedSecrets for the callers of its
// HTTP API, after its own checks; the ownership admission policy requires the verb for
// that (config/admission, docs/secrets.md). place-values and update: it stores values in
// its value namespace (secretRef.namespace, which the same policy lets only holders of
// place-values set) and moves old values there. store-registry: only it creates
// registry credentials (type registry), for /v1/registry-credentials. restore: it records
// ids (docs/operations.md, "Backup and restore") and the caller of its HTTP API as a
// secret's creator (hub.podium.dev/created-by), which the ownership policy lets only a
// restore identity write for another user.
// +kubebuilder:rbac:groups=hub.podium.dev,resources=hostedsecrets,verbs=get;list;watch;create;update;patch;delete;manage-others;place-values;store-registry;restore
// +kubebuilder:rbac:groups=hub.podium.dev,resources=hostedsecrets/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=hub.podium.dev,resources=hostedsecrets/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;create;update;delete
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// SetupWithManager registers the reconciler. Value Secrets are watched through the
// manager's label-filtered Secret cache and mapped to their HostedSecret by label.
func (r *HostedSecretReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&hubv1alpha1.HostedSecret{}).
		Watches(&hubv1alpha1.HostedSecret{}, r.slotFreed()).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.valueSecretToHostedSecret)).
		Named("hostedsecret").
		Complete(r)
}

// slotFreed wakes the secrets waiting for a slot (SlotOccupied) when a secret of the
// slot is revoked or deleted, instead of leaving them to their periodic retry.
func (r *HostedSecretReconciler) slotFreed() handler.EventHandler {
	wake := func(ctx context.Context, hs *hubv1alpha1.HostedSecret, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		list := &hubv1alpha1.HostedSecretList{}
		if err := r.Client.List(ctx, list, client.InNamespace(hs.Namespace), client.MatchingFields{secrets.SlotIndex: secrets.SlotIndexValue(hs)}); err != nil {
			logf.FromContext(ctx).Error(err, "Listing the secrets of a freed slot failed", "hostedSecret", client.ObjectKeyFromObject(hs))
			return
		}
		for _, o := range list.Items {
			if o.UID != hs.UID && o.Status.State == "" {
				q.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&o)})
			}
		}
	}
	return handler.Funcs{
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			old, okOld := e.ObjectOld.(*hubv1alpha1.HostedSecret)
			cur, okNew := e.ObjectNew.(*hubv1alpha1.HostedSecret)
			if okOld && okNew && old.Status.State != hubv1alpha1.StateRevoked && cur.Status.State == hubv1alpha1.StateRevoked {
				wake(ctx, cur, q)
			}
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if hs, ok := e.Object.(*hubv1alpha1.HostedSecret); ok {
				wake(ctx, hs, q)
			}
		},
	}
}

// valueSecretToHostedSecret maps a value Secret to its HostedSecret: by its label, in
// its namespace, or for a Secret of the value namespace in the org its org label names.
// At start the cache lists every value Secret, so values whose HostedSecret was deleted
// while no operator ran are found then.
func (r *HostedSecretReconciler) valueSecretToHostedSecret(_ context.Context, o client.Object) []reconcile.Request {
	name := o.GetLabels()[hubv1alpha1.LabelHostedSecret]
	if name == "" {
		return nil
	}
	ns := o.GetNamespace()
	if org := o.GetLabels()[hubv1alpha1.LabelOrg]; org != "" && ns == r.Lifecycle.Place.Namespace {
		ns = org
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}}
}

// Reconcile brings one HostedSecret to its state.
func (r *HostedSecretReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	hs := &hubv1alpha1.HostedSecret{}
	if err := r.Client.Get(ctx, req.NamespacedName, hs); err != nil {
		if apierrors.IsNotFound(err) {
			again, err := r.removeStrayValues(ctx, req.NamespacedName, nil)
			return ctrl.Result{RequeueAfter: again}, err
		}
		return ctrl.Result{}, err
	}
	if hs.DeletionTimestamp != nil {
		return ctrl.Result{}, nil // the value Secret is owned by it and goes with it
	}
	// The id its value and slot are bound to, recorded once so that a restore keeps it
	// (docs/operations.md, "Backup and restore"); a conflict or a deletion meanwhile is seen again.
	if err := ensureIdentity(ctx, r.Client, hs, r.Lifecycle.Events); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	res, err := r.reconcileSlot(ctx, hs)
	if apierrors.IsNotFound(err) {
		return ctrl.Result{}, nil // deleted meanwhile (a store that lost its race): nothing to do
	}
	if err != nil {
		return res, err
	}
	// A value an older Podium stored in the org namespace moves to the value namespace
	// (a conflict means hs changed meanwhile: the next reconcile looks again).
	if _, err := r.Lifecycle.MoveValue(ctx, hs, secrets.MoveDone); err != nil {
		return ctrl.Result{}, err
	}
	again, err := r.removeStrayValues(ctx, req.NamespacedName, hs)
	if again > 0 && (res.RequeueAfter == 0 || again < res.RequeueAfter) {
		res.RequeueAfter = again
	}
	return res, err
}

// reconcileSlot is the state machine of one secret: revoked secrets lose their value,
// the slot's holder becomes active, an active secret that lost its slot is revoked as
// superseded, and a new secret claims its slot when the slot is free.
func (r *HostedSecretReconciler) reconcileSlot(ctx context.Context, hs *hubv1alpha1.HostedSecret) (ctrl.Result, error) {
	lc := r.Lifecycle
	if hs.Status.State == hubv1alpha1.StateRevoked {
		return ctrl.Result{}, lc.DeleteValue(ctx, hs)
	}
	if hs.Status.State == "" && hs.Annotations[hubv1alpha1.AnnotationCreatedBy] != "" {
		// Stored over HTTP and not active yet: its request is in flight, or was
		// interrupted. The controller never claims a slot for it (the client may have
		// been told 409); it only finishes one that already holds its slot.
		p, err := lc.Slots.Read(ctx, secrets.SlotOf(hs))
		if err != nil {
			return ctrl.Result{}, err
		}
		if !secrets.Names(p.HolderUID(), hs) {
			return r.abandonedStore(ctx, hs)
		}
	}
	last4, problem, err := r.adoptValue(ctx, hs)
	if err != nil {
		return ctrl.Result{}, err
	}
	if problem != nil {
		return ctrl.Result{RequeueAfter: valueRetry(hs, time.Now())}, lc.SetUnusable(ctx, hs, problem.reason, problem.msg)
	}

	p, err := lc.Slots.Read(ctx, secrets.SlotOf(hs))
	if err != nil {
		return ctrl.Result{}, err
	}
	if !secrets.Names(p.HolderUID(), hs) {
		holder, err := lc.Slots.Holder(ctx, p)
		if err != nil {
			return ctrl.Result{}, err
		}
		if holder == nil {
			if hs.Status.State == "" {
				if err := lc.SetPending(ctx, hs, last4, ""); err != nil {
					return ctrl.Result{}, err
				}
			}
			if holder, err = lc.Slots.Claim(ctx, hs); err != nil {
				return ctrl.Result{}, err
			}
		}
		if holder != nil {
			if hs.Status.State == hubv1alpha1.StateActive {
				_, err := lc.Revoke(ctx, hs, hubv1alpha1.RevokedSupersede, string(secrets.BindingID(holder)))
				return ctrl.Result{}, err
			}
			return ctrl.Result{RequeueAfter: slotOccupiedRetry}, lc.SetOccupied(ctx, hs, last4, secrets.BindingID(holder))
		}
	}
	// hs holds the slot: no other secret of the slot may still look active.
	if err := r.revokeOthers(ctx, hs); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, lc.Activate(ctx, hs, last4)
}

// abandonedStore deletes a secret stored over HTTP that never claimed its slot, once it
// is older than any request can take (its request died), and waits until then.
func (r *HostedSecretReconciler) abandonedStore(ctx context.Context, hs *hubv1alpha1.HostedSecret) (ctrl.Result, error) {
	// The age of this object, not of its record: a secret restored from a backup gets
	// the time its slot pointer needs to be restored too.
	if wait := abandonedAfter(hs.CreationTimestamp.Time, r.now()); wait > 0 {
		return ctrl.Result{RequeueAfter: pointerRecheck(wait)}, nil
	}
	if err := r.Client.Delete(ctx, hs, client.Preconditions{UID: &hs.UID}); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	logf.FromContext(ctx).Info("Deleted a secret whose store was interrupted before it claimed its slot", "hostedSecret", client.ObjectKeyFromObject(hs))
	r.event(hs, corev1.EventTypeWarning, hubv1alpha1.ReasonAbandonedStoreDeleted, "DeleteAbandonedStore",
		"Deleted secret %s for %s: it was stored over HTTP %s ago and never claimed its slot (its request died)", secrets.BindingID(hs), secrets.Subject(hs), abandonedStoreAge)
	return ctrl.Result{}, r.Lifecycle.DeleteValue(ctx, hs)
}

// abandonedStoreAge is far longer than a store request can last (the HTTP server's
// write timeout is 30 s).
const abandonedStoreAge = 2 * time.Minute

// slotPointerRecheck is how often a secret stored over HTTP that does not hold its slot
// looks at its slot pointer again while it waits out abandonedStoreAge. The pointer is a
// Lease, which no watch reports, and a restore brings Leases back after HostedSecrets
// (Velero restores kinds in that order): waiting the whole age before looking again
// left a restored secret inactive for up to two minutes after its pointer was back.
const slotPointerRecheck = 5 * time.Second

// pointerRecheck is when to look at the slot pointer again, with wait left before the
// secret counts as abandoned.
func pointerRecheck(wait time.Duration) time.Duration { return min(wait, slotPointerRecheck) }

// abandonedAfter returns how long to wait before a pending HTTP store created at created
// counts as abandoned; 0 when it already does.
func abandonedAfter(created, now time.Time) time.Duration {
	if age := now.Sub(created); age < abandonedStoreAge {
		return abandonedStoreAge - age
	}
	return 0
}

func (r *HostedSecretReconciler) now() time.Time {
	if r.Lifecycle.Now != nil {
		return r.Lifecycle.Now()
	}
	return time.Now()
}

// revokeOthers revokes, as superseded by hs, any other secret of hs's slot that still
// shows active (a replacement interrupted between moving the pointer and revoking).
func (r *HostedSecretReconciler) revokeOthers(ctx context.Context, hs *hubv1alpha1.HostedSecret) error {
	list := &hubv1alpha1.HostedSecretList{}
	if err := r.Client.List(ctx, list, client.InNamespace(hs.Namespace), client.MatchingFields{secrets.SlotIndex: secrets.SlotIndexValue(hs)}); err != nil {
		return err
	}
	for i := range list.Items {
		o := &list.Items[i]
		if o.UID == hs.UID || o.Status.State != hubv1alpha1.StateActive {
			continue
		}
		fresh := &hubv1alpha1.HostedSecret{}
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(o), fresh); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return err
		}
		if _, err := r.Lifecycle.Revoke(ctx, fresh, hubv1alpha1.RevokedSupersede, string(secrets.BindingID(hs))); err != nil {
			return err
		}
	}
	return nil
}

// event records an event when the reconciler has a recorder.
func (r *HostedSecretReconciler) event(obj client.Object, typ, reason, action, note string, args ...any) {
	if r.Lifecycle.Events != nil {
		r.Lifecycle.Events.Eventf(obj, nil, typ, reason, action, note, args...)
	}
}
