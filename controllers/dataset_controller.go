// Package controllers holds Podium's reconcilers, one per kind. Each reads from the
// manager's cache and decides in pure functions; none writes the spec of an object
// users apply, so objects applied from Git show no diff.
package controllers

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/dsversion"
	"podium.dev/podium/internal/health"
)

// DatasetReconciler reports a Dataset's package slug and newest version.
type DatasetReconciler struct {
	client.Client
	// Events may be nil (tests): IDReissued is then not emitted.
	Events eventRecorder
}

// patch and restore: the operator records a dataset's id (package_id) and creation
// time once (docs/operations.md, "Backup and restore").
// +kubebuilder:rbac:groups=hub.podium.dev,resources=datasets,verbs=get;list;watch;patch;restore
// +kubebuilder:rbac:groups=hub.podium.dev,resources=datasets/status,verbs=get;update;patch

// Reconcile records the dataset's identity and writes status.package,
// status.latestVersionID and Ready.
func (r *DatasetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ds := &hubv1alpha1.Dataset{}
	if err := r.Get(ctx, req.NamespacedName, ds); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if err := ensureIdentity(ctx, r.Client, ds, r.Events); err != nil {
		return ctrl.Result{}, err
	}
	want := ds.Status.DeepCopy()
	want.Package = ds.Namespace + "/" + ds.Name
	want.LatestVersionID = ""
	if v := dsversion.Newest(ds.Spec.Versions); v != nil {
		want.LatestVersionID = v.ID
	}
	want.ObservedGeneration = ds.Generation
	verdict, reason, message := datasetReady(ds)
	health.Set(&want.Conditions, ds.Generation, verdict, reason, message)
	if equality.Semantic.DeepEqual(*want, ds.Status) {
		return ctrl.Result{}, nil
	}
	patch := client.MergeFrom(ds.DeepCopy())
	ds.Status = *want
	return ctrl.Result{}, r.Status().Patch(ctx, ds, patch)
}

// datasetReady is the Dataset's Ready condition. The schema already refuses malformed
// ids, repeated ids, repeated tags and the tag "latest"; what it cannot see is two ids
// that differ only in letter case, which boards and the preflight (matching ids without
// regard to case) could not tell apart.
func datasetReady(ds *hubv1alpha1.Dataset) (verdict health.Verdict, reason, message string) {
	seen := map[string]string{}
	var dups []string
	for _, v := range ds.Spec.Versions {
		k := strings.ToLower(v.ID)
		if first, ok := seen[k]; ok {
			dups = append(dups, fmt.Sprintf("%q and %q", first, v.ID))
			continue
		}
		seen[k] = v.ID
	}
	if len(dups) > 0 {
		return health.Stalled, hubv1alpha1.ReasonDuplicateVersionID, truncate(
			"versions: ids differ only in letter case (ids are matched without regard to case): "+strings.Join(dups, ", "), 4096)
	}
	return health.Healthy, hubv1alpha1.ReasonDatasetReady, fmt.Sprintf("%d versions, each named unambiguously", len(ds.Spec.Versions))
}

// SetupWithManager registers the reconciler.
func (r *DatasetReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&hubv1alpha1.Dataset{}).
		Named("dataset").
		Complete(r)
}
