package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/secrets"
)

// GrantedRecorder records, per org namespace, the Secrets granted to hosted secrets
// under a name not reserved for grants (docs/design/delivery.md, "Who may read a granted
// Secret"): grants made before names were reserved (secrets.GrantedPrefix). Their names
// go on the namespace (hubv1alpha1.AnnotationGrantedSecrets), which the run Secret
// admission policy reads, so that no Pod names them; a Secret named with the prefix is
// protected by its name alone and is not recorded. Only Secrets the cache holds
// (Podium's: a HostedSecret adopted them) are recorded.
type GrantedRecorder struct {
	Client client.Client
	// ValueNamespace is the operator's value namespace: no member creates Pods there, so
	// nothing is recorded for it.
	ValueNamespace string
}

// +kubebuilder:rbac:groups="",resources=namespaces,verbs=patch

// SetupWithManager registers the recorder: a granted Secret's change and its namespace's
// change wake the namespace.
func (r *GrantedRecorder) SetupWithManager(mgr ctrl.Manager) error {
	granted := predicate.NewPredicateFuncs(func(o client.Object) bool {
		_, ok := o.GetLabels()[hubv1alpha1.LabelHostedSecret]
		return ok && o.GetNamespace() != r.ValueNamespace
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("grantedsecrets").
		For(&corev1.Namespace{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetName() != r.ValueNamespace }))).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: o.GetNamespace()}}}
		}), builder.WithPredicates(granted)).
		Complete(r)
}

// Reconcile brings one namespace's recorded list up to date.
func (r *GrantedRecorder) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ns := &corev1.Namespace{}
	if err := r.Client.Get(ctx, req.NamespacedName, ns); err != nil || ns.DeletionTimestamp != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	list := &corev1.SecretList{}
	if err := r.Client.List(ctx, list, client.InNamespace(ns.Name), client.HasLabels{hubv1alpha1.LabelHostedSecret}); err != nil {
		return ctrl.Result{}, err
	}
	names := make([]string, 0, len(list.Items))
	for i := range list.Items {
		if secrets.NeedsRecord(list.Items[i].Name) {
			names = append(names, list.Items[i].Name)
		}
	}
	want, fits := secrets.RecordList(names)
	if len(fits) < len(names) {
		logf.FromContext(ctx).Info("Granted Secrets under unreserved names do not all fit the namespace's record; rename them podium-granted-*",
			"namespace", ns.Name, "recorded", len(fits), "granted", len(names))
	}
	if ns.Annotations[hubv1alpha1.AnnotationGrantedSecrets] == want {
		return ctrl.Result{}, nil
	}
	patch := client.MergeFrom(ns.DeepCopy())
	if ns.Annotations == nil {
		ns.Annotations = map[string]string{}
	}
	ns.Annotations[hubv1alpha1.AnnotationGrantedSecrets] = want
	if err := r.Client.Patch(ctx, ns, patch); err != nil {
		return ctrl.Result{}, fmt.Errorf("recording the granted Secrets of namespace %s: %w", ns.Name, err)
	}
	return ctrl.Result{}, nil
}
