package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// OrgIdentityRecorder records an organization's identity on its namespace
// (docs/operations.md, "What a restore keeps"): the first time a namespace holds a
// hosted secret, the operator writes the namespace's UID and creation time into the
// annotations hub.podium.dev/id and hub.podium.dev/created-at, as it does for every
// record. From then on the org's org_id is the recorded id (hubv1alpha1.ID), which a
// backup of the Namespace object keeps; a restore gives the namespace a new UID but the
// same org_id. Admission (config/admission/record_identity.yaml) lets nobody but a
// restore identity set or change the two annotations on a namespace.
type OrgIdentityRecorder struct {
	Client client.Client
	// ValueNamespace is the operator's value namespace: not an organization.
	ValueNamespace string
}

// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=hub.podium.dev,resources=namespaces,verbs=restore

// SetupWithManager registers the recorder: a namespace's change and a hosted secret's
// creation wake the namespace.
func (r *OrgIdentityRecorder) SetupWithManager(mgr ctrl.Manager) error {
	notValues := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetName() != r.ValueNamespace && o.GetNamespace() != r.ValueNamespace
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("orgidentity").
		For(&corev1.Namespace{}, builder.WithPredicates(notValues)).
		Watches(&hubv1alpha1.HostedSecret{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: o.GetNamespace()}}}
		}), builder.WithPredicates(notValues, predicate.Funcs{ // its creation is enough
			UpdateFunc: func(event.UpdateEvent) bool { return false },
			DeleteFunc: func(event.DeleteEvent) bool { return false },
		})).
		Complete(r)
}

// Reconcile records the identity of one namespace that holds a hosted secret and has
// none recorded.
func (r *OrgIdentityRecorder) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ns := &corev1.Namespace{}
	if err := r.Client.Get(ctx, req.NamespacedName, ns); err != nil || ns.DeletionTimestamp != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if hubv1alpha1.IdentityRecorded(ns) {
		return ctrl.Result{}, nil
	}
	list := &hubv1alpha1.HostedSecretList{}
	if err := r.Client.List(ctx, list, client.InNamespace(ns.Name)); err != nil {
		return ctrl.Result{}, err
	}
	if len(list.Items) == 0 {
		return ctrl.Result{}, nil // not an organization of hosted secrets (yet)
	}
	// The optimistic lock: a restore that writes the annotations at the same moment wins.
	patch := client.MergeFromWithOptions(ns.DeepCopy(), client.MergeFromWithOptimisticLock{})
	identityPatch(ns, nil) // the records' rule; no event: a Namespace is not a record users link to
	if err := r.Client.Patch(ctx, ns, patch); err != nil {
		return ctrl.Result{}, fmt.Errorf("recording the identity of namespace %s: %w", ns.Name, err)
	}
	logf.FromContext(ctx).V(1).Info("Organization identity recorded", "namespace", ns.Name, "orgID", hubv1alpha1.ID(ns))
	return ctrl.Result{}, nil
}
