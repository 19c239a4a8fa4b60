package controllers

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
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
// registry credentials (type registry), for /v1/registry-credentials.
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
	wait := abandonedAfter(hs.CreationTimestamp.Time, r.now())
	if wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
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
	if hs.Spec.Type == hubv1alpha1.TypeRegistry && hs.Status.Fingerprint == "" && r.Keyring != nil {
		// A registry credential restored without its status: its fingerprint is the
		// same HMAC under the same (restored) key.
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

// removeStrayValues looks after the value Secrets labelled for name that no live secret
// uses, in the org namespace and in the value namespace (found by their org label: no
// owner reference, so no garbage collection, reaches them). A revoked secret's value is
// deleted. A value bound to a record (its binding annotation names an id) that no live
// HostedSecret of that name has is quarantined, not deleted: after a restore the
// HostedSecret may arrive later than its value, and a value lost is lost for good
// (docs/operations.md, "Quarantine"); it is deleted once QuarantineGrace has passed,
// and its HostedSecret, restored or re-attached meanwhile, takes it back. A labelled
// Secret bound to no record was never anyone's value and is deleted. Each act is an
// event. Absence is confirmed uncached, so a Secret created just after its HostedSecret
// is never taken for a stray because the cache has not seen the HostedSecret yet. It
// returns when to look again (a quarantine's end), 0 for never.
func (r *HostedSecretReconciler) removeStrayValues(ctx context.Context, key types.NamespacedName, hs *hubv1alpha1.HostedSecret) (time.Duration, error) {
	list, err := r.labelledValues(ctx, key)
	if err != nil {
		return 0, err
	}
	if len(list.Items) == 0 {
		return 0, nil
	}
	if hs == nil {
		fresh := &hubv1alpha1.HostedSecret{}
		err := r.APIReader.Get(ctx, key, fresh)
		switch {
		case err == nil:
			hs = fresh
		case !apierrors.IsNotFound(err):
			return 0, err
		}
	}
	var again time.Duration
	for i := range list.Items {
		s := &list.Items[i]
		if hs != nil && hs.Status.State != hubv1alpha1.StateRevoked && r.serves(s, hs) {
			continue
		}
		_, bound := secrets.BoundTo(s)
		if bound && (hs == nil || hs.Status.State != hubv1alpha1.StateRevoked || !secrets.IsBoundTo(s, hs)) {
			wait, err := r.quarantine(ctx, s)
			if err != nil {
				return 0, err
			}
			if wait > 0 && (again == 0 || wait < again) {
				again = wait
			}
			if wait > 0 {
				continue
			}
		}
		if err := r.Client.Delete(ctx, s, client.Preconditions{UID: &s.UID}); err != nil {
			if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
				continue
			}
			return 0, fmt.Errorf("deleting stray value Secret %s/%s: %w", s.Namespace, s.Name, err)
		}
		why := "no active secret uses it"
		switch {
		case isQuarantined(s):
			why = "its quarantine ended and no HostedSecret took it back"
		case !bound:
			why = "it is labelled for a HostedSecret but was never bound to one"
		}
		r.event(s, corev1.EventTypeNormal, hubv1alpha1.ReasonStrayValueDeleted, "DeleteStrayValue",
			"Deleted value Secret %s/%s of HostedSecret %s/%s: %s", s.Namespace, s.Name, key.Namespace, key.Name, why)
		logf.FromContext(ctx).Info("Deleted a value Secret no active secret uses", "secret", client.ObjectKeyFromObject(s), "why", why)
	}
	return again, nil
}

// labelledValues are the Secrets labelled as values of the HostedSecret key: in its org,
// and in the value namespace (labelled with the org too) when that is another one.
func (r *HostedSecretReconciler) labelledValues(ctx context.Context, key types.NamespacedName) (*corev1.SecretList, error) {
	list := &corev1.SecretList{}
	if err := r.Client.List(ctx, list, client.InNamespace(key.Namespace), client.MatchingLabels{hubv1alpha1.LabelHostedSecret: key.Name}); err != nil {
		return nil, err
	}
	if vns := r.Lifecycle.Place.Namespace; vns != "" && vns != key.Namespace {
		there := &corev1.SecretList{}
		if err := r.Client.List(ctx, there, client.InNamespace(vns), client.MatchingLabels{
			hubv1alpha1.LabelHostedSecret: key.Name, hubv1alpha1.LabelOrg: key.Namespace,
		}); err != nil {
			return nil, err
		}
		list.Items = append(list.Items, there.Items...)
	}
	return list, nil
}

// DefaultQuarantineGrace is how long a quarantined value Secret is kept
// (docs/operations.md, "Quarantine").
const DefaultQuarantineGrace = 7 * 24 * time.Hour

// quarantine marks s quarantined (label and time) the first time, with a Warning event,
// and returns how long it is still kept: 0 when its grace has passed.
func (r *HostedSecretReconciler) quarantine(ctx context.Context, s *corev1.Secret) (time.Duration, error) {
	grace := r.QuarantineGrace
	if grace == 0 {
		grace = DefaultQuarantineGrace
	}
	if isQuarantined(s) {
		since, err := time.Parse(time.RFC3339, s.Annotations[hubv1alpha1.AnnotationQuarantinedAt])
		if err != nil {
			since = r.now() // unreadable: the quarantine starts again, nothing is lost
		}
		if wait := since.Add(grace).Sub(r.now()); wait > 0 {
			return wait, nil
		}
		return 0, nil
	}
	base := s.DeepCopy()
	if s.Labels == nil {
		s.Labels = map[string]string{}
	}
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	now := r.now().UTC()
	s.Labels[hubv1alpha1.LabelQuarantined] = "true"
	s.Annotations[hubv1alpha1.AnnotationQuarantinedAt] = now.Format(time.RFC3339)
	// A merge patch of metadata only, at the version read: the data is neither sent nor
	// compared, and a Secret changed meanwhile is looked at again.
	if err := r.Client.Patch(ctx, s, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return grace, nil
		}
		return 0, fmt.Errorf("quarantining value Secret %s/%s: %w", s.Namespace, s.Name, err)
	}
	id, _ := secrets.BoundTo(s)
	r.event(s, corev1.EventTypeWarning, hubv1alpha1.ReasonValueQuarantined, "Quarantine",
		"Value Secret %s/%s is bound to hosted secret %s, which no live HostedSecret %s is; it is kept until %s (a restored HostedSecret takes it back; to re-attach it, see docs/operations.md, Backup and restore), then deleted",
		s.Namespace, s.Name, id, s.Labels[hubv1alpha1.LabelHostedSecret], now.Add(grace).Format(time.RFC3339))
	logf.FromContext(ctx).Info("Quarantined a value Secret no live secret is bound to", "secret", client.ObjectKeyFromObject(s), "boundTo", id)
	return grace, nil
}

func isQuarantined(s *corev1.Secret) bool {
	return s.Labels[hubv1alpha1.LabelQuarantined] != ""
}

// event records an event when the reconciler has a recorder.
func (r *HostedSecretReconciler) event(obj client.Object, typ, reason, action, note string, args ...any) {
	if r.Lifecycle.Events != nil {
		r.Lifecycle.Events.Eventf(obj, nil, typ, reason, action, note, args...)
	}
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
