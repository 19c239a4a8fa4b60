// Package controllers holds Podium's reconcilers, one per kind. Each reads from the
// manager's cache and decides in pure functions; none writes the spec of an object
// users apply, so objects applied from Git show no diff.
package controllers

import (
	"context"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/dsversion"
)

// DatasetReconciler reports a Dataset's package slug and newest version.
type DatasetReconciler struct {
	client.Client
}

// +kubebuilder:rbac:groups=hub.podium.dev,resources=datasets,verbs=get;list;watch
// +kubebuilder:rbac:groups=hub.podium.dev,resources=datasets/status,verbs=get;update;patch

// Reconcile writes status.package, status.latestVersionID and Ready.
func (r *DatasetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ds := &hubv1alpha1.Dataset{}
	if err := r.Get(ctx, req.NamespacedName, ds); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	want := ds.Status.DeepCopy()
	want.Package = ds.Namespace + "/" + ds.Name
	want.LatestVersionID = ""
	if v := dsversion.Newest(ds.Spec.Versions); v != nil {
		want.LatestVersionID = v.ID
	}
	want.ObservedGeneration = ds.Generation
	meta.SetStatusCondition(&want.Conditions, metav1.Condition{
		Type:               hubv1alpha1.ConditionReady,
		Status:             metav1.ConditionTrue,
		Reason:             hubv1alpha1.ReasonReady,
		Message:            "dataset observed",
		ObservedGeneration: ds.Generation,
	})
	if equality.Semantic.DeepEqual(*want, ds.Status) {
		return ctrl.Result{}, nil
	}
	patch := client.MergeFrom(ds.DeepCopy())
	ds.Status = *want
	return ctrl.Result{}, r.Status().Patch(ctx, ds, patch)
}

// SetupWithManager registers the reconciler.
func (r *DatasetReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&hubv1alpha1.Dataset{}).
		Named("dataset").
		Complete(r)
}
