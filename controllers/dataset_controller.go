// Package controllers holds Podium's reconcilers, one per kind. Each reads from the
// manager's cache and decides in pure functions; none writes the spec of an object
// users apply, so objects applied from Git show no diff.
package controllers

import (
	"context"
	"sort"

	"k8s.io/apimachinery/pkg/api/equality"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/health"
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
	if v := LatestVersion(ds.Spec.Versions); v != nil {
		want.LatestVersionID = v.ID
	}
	want.ObservedGeneration = ds.Generation
	health.Set(&want.Conditions, ds.Generation, health.Healthy, hubv1alpha1.ReasonReady, "dataset observed")
	if equality.Semantic.DeepEqual(*want, ds.Status) {
		return ctrl.Result{}, nil
	}
	patch := client.MergeFrom(ds.DeepCopy())
	ds.Status = *want
	return ctrl.Result{}, r.Status().Patch(ctx, ds, patch)
}

// LatestVersion returns the newest version (by createdAt; on a tie the greater id, so
// the answer never depends on list order), or nil when there is none.
func LatestVersion(versions []hubv1alpha1.DatasetVersion) *hubv1alpha1.DatasetVersion {
	var latest *hubv1alpha1.DatasetVersion
	for i := range versions {
		v := &versions[i]
		if latest == nil || v.CreatedAt.After(latest.CreatedAt.Time) ||
			(v.CreatedAt.Equal(&latest.CreatedAt) && v.ID > latest.ID) {
			latest = v
		}
	}
	return latest
}

// versionsByAge returns the version ids oldest first (ties by id).
func versionsByAge(versions []hubv1alpha1.DatasetVersion) []string {
	vs := append([]hubv1alpha1.DatasetVersion(nil), versions...)
	sort.SliceStable(vs, func(i, j int) bool {
		if !vs[i].CreatedAt.Equal(&vs[j].CreatedAt) {
			return vs[i].CreatedAt.Before(&vs[j].CreatedAt)
		}
		return vs[i].ID < vs[j].ID
	})
	ids := make([]string, len(vs))
	for i, v := range vs {
		ids[i] = v.ID
	}
	return ids
}

// SetupWithManager registers the reconciler.
func (r *DatasetReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&hubv1alpha1.Dataset{}).
		Named("dataset").
		Complete(r)
}
