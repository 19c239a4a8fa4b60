package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

const (
	// AnnotationUserServiceAccounts, on a namespace, lists (comma-separated, sorted) its
	// ServiceAccounts that hold a Podium right in another namespace through a RoleBinding
	// there; "*" stands for all of them. The admission policy podium-run-identity-elsewhere
	// (config/admission/run_integrity.yaml) reads it: running a Pod as one of them takes
	// being it or impersonate on it (docs/design/delivery.md, "Runs cannot be changed or
	// impersonated").
	AnnotationUserServiceAccounts = hubv1alpha1.AnnotationUserServiceAccounts
	// LabelUserServiceAccounts marks the namespaces that have that annotation, so that
	// the policy's binding selects them and no other namespace pays for it.
	LabelUserServiceAccounts = hubv1alpha1.LabelUserServiceAccounts
	// userServiceAccountsMax bounds the annotation; a longer list is recorded as "*".
	userServiceAccountsMax = 64 << 10

	serviceAccountUserPrefix  = "system:serviceaccount:"
	serviceAccountGroupPrefix = "system:serviceaccounts:"
)

// UserServiceAccountRecorder records, on every namespace, which of its ServiceAccounts are
// Podium users elsewhere: a RoleBinding in another namespace binds them (by name, as the
// user system:serviceaccount:<ns>:<name>, or through the groups system:serviceaccounts,
// system:serviceaccounts:<ns> and system:authenticated) to a Role or ClusterRole that
// grants create on hostedsecrets or leaderboardrows of hub.podium.dev, the rights that
// make a Podium user. Kubernetes lets whoever may create a Pod in a namespace run it as
// any ServiceAccount there and so hold its token; the admission policy that stops this
// for users asks the authorizer about the Pod's own namespace (which ClusterRoleBindings
// and that namespace's RoleBindings answer) and reads this record for the rest.
type UserServiceAccountRecorder struct {
	Client client.Client
}

// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=rolebindings;roles;clusterroles,verbs=get;list;watch

// SetupWithManager registers the recorder: a RoleBinding wakes the namespaces of the
// ServiceAccounts it names; a Role or ClusterRole those of its bindings' ServiceAccounts.
func (r *UserServiceAccountRecorder) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("userserviceaccounts").
		For(&corev1.Namespace{}).
		Watches(&rbacv1.RoleBinding{}, r.bindingEvents()).
		Watches(&rbacv1.Role{}, handler.EnqueueRequestsFromMapFunc(r.forRole)).
		Watches(&rbacv1.ClusterRole{}, handler.EnqueueRequestsFromMapFunc(r.forRole)).
		Complete(r)
}

// bindingEvents wakes, for a RoleBinding's event, the namespaces of the ServiceAccounts
// it names, before and after an update (whose subjects it removed lose the record).
func (r *UserServiceAccountRecorder) bindingEvents() handler.Funcs {
	enqueue := func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request], objs ...client.Object) {
		var bindings []rbacv1.RoleBinding
		for _, o := range objs {
			if b, ok := o.(*rbacv1.RoleBinding); ok {
				bindings = append(bindings, *b)
			}
		}
		for _, req := range r.homesOf(ctx, bindings) {
			q.Add(req)
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, q, e.Object)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, q, e.ObjectOld, e.ObjectNew)
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, q, e.Object)
		},
		GenericFunc: func(ctx context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, q, e.Object)
		},
	}
}

// forRole wakes the namespaces of the ServiceAccounts bound to a Role or ClusterRole.
func (r *UserServiceAccountRecorder) forRole(ctx context.Context, o client.Object) []reconcile.Request {
	kind, opts := "ClusterRole", []client.ListOption(nil)
	if _, ok := o.(*rbacv1.Role); ok {
		kind, opts = "Role", []client.ListOption{client.InNamespace(o.GetNamespace())}
	}
	list := &rbacv1.RoleBindingList{}
	if err := r.Client.List(ctx, list, opts...); err != nil {
		return nil
	}
	bound := slices.DeleteFunc(list.Items, func(b rbacv1.RoleBinding) bool { return b.RoleRef.Kind != kind || b.RoleRef.Name != o.GetName() })
	return r.homesOf(ctx, bound)
}

// homesOf is the requests for the namespaces whose ServiceAccounts the bindings name
// outside their own namespace (every namespace for a group of all ServiceAccounts).
func (r *UserServiceAccountRecorder) homesOf(ctx context.Context, bindings []rbacv1.RoleBinding) []reconcile.Request {
	seen := map[string]bool{}
	for _, b := range bindings {
		for _, s := range b.Subjects {
			home, _, ok := serviceAccountSubject(s, b.Namespace)
			if !ok || home == b.Namespace {
				continue
			}
			if home == "" {
				all := &corev1.NamespaceList{}
				if err := r.Client.List(ctx, all); err != nil {
					return nil
				}
				for _, n := range all.Items {
					seen[n.Name] = true
				}
				continue
			}
			seen[home] = true
		}
	}
	out := make([]reconcile.Request, 0, len(seen))
	for ns := range seen {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: ns}})
	}
	return out
}

// serviceAccountSubject says which ServiceAccounts subject s of a RoleBinding in
// bindingNS stands for: those of namespace home ("" for every namespace), name ("*" for
// all of them).
func serviceAccountSubject(s rbacv1.Subject, bindingNS string) (home, name string, ok bool) {
	switch s.Kind {
	case rbacv1.ServiceAccountKind:
		if s.Namespace == "" {
			return bindingNS, s.Name, true
		}
		return s.Namespace, s.Name, true
	case rbacv1.UserKind:
		if rest, found := strings.CutPrefix(s.Name, serviceAccountUserPrefix); found {
			if ns, n, found := strings.Cut(rest, ":"); found && ns != "" && n != "" {
				return ns, n, true
			}
		}
	case rbacv1.GroupKind:
		switch {
		case s.Name == "system:serviceaccounts" || s.Name == "system:authenticated":
			return "", "*", true
		case strings.HasPrefix(s.Name, serviceAccountGroupPrefix) && len(s.Name) > len(serviceAccountGroupPrefix):
			return strings.TrimPrefix(s.Name, serviceAccountGroupPrefix), "*", true
		}
	}
	return "", "", false
}

// grantsPodiumUse says whether rules let their subjects create hostedsecrets or
// leaderboardrows of hub.podium.dev (wildcards included; a rule restricted to resource
// names counts too, which can only record more).
func grantsPodiumUse(rules []rbacv1.PolicyRule) bool {
	has := func(list []string, v string) bool { return slices.Contains(list, v) || slices.Contains(list, "*") }
	for _, rule := range rules {
		if has(rule.APIGroups, hubv1alpha1.GroupVersion.Group) && has(rule.Verbs, "create") &&
			(has(rule.Resources, "hostedsecrets") || has(rule.Resources, "leaderboardrows")) {
			return true
		}
	}
	return false
}

// rulesOf is the rules of the role b refers to (none when it does not exist: such a
// binding grants nothing until it does, and its creation wakes the namespace).
func (r *UserServiceAccountRecorder) rulesOf(ctx context.Context, b *rbacv1.RoleBinding) ([]rbacv1.PolicyRule, error) {
	switch b.RoleRef.Kind {
	case "ClusterRole":
		cr := &rbacv1.ClusterRole{}
		err := r.Client.Get(ctx, client.ObjectKey{Name: b.RoleRef.Name}, cr)
		return cr.Rules, client.IgnoreNotFound(err)
	case "Role":
		role := &rbacv1.Role{}
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: b.RoleRef.Name}, role)
		return role.Rules, client.IgnoreNotFound(err)
	}
	return nil, nil
}

// Users is the record of namespace ns: its ServiceAccounts that RoleBindings of other
// namespaces make Podium users, sorted, or ["*"] for all of them.
func (r *UserServiceAccountRecorder) Users(ctx context.Context, ns string) ([]string, error) {
	list := &rbacv1.RoleBindingList{}
	if err := r.Client.List(ctx, list); err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for i := range list.Items {
		b := &list.Items[i]
		if b.Namespace == ns {
			continue // the policy asks the authorizer about the Pod's own namespace
		}
		var here []string
		for _, s := range b.Subjects {
			if home, name, ok := serviceAccountSubject(s, b.Namespace); ok && (home == ns || home == "") {
				here = append(here, name)
			}
		}
		if len(here) == 0 {
			continue
		}
		rules, err := r.rulesOf(ctx, b)
		if err != nil {
			return nil, err
		}
		if grantsPodiumUse(rules) {
			for _, n := range here {
				names[n] = true
			}
		}
	}
	if names["*"] {
		return []string{"*"}, nil
	}
	out := make([]string, 0, len(names))
	for n := range names {
		out = append(out, n)
	}
	slices.Sort(out)
	return out, nil
}

// Reconcile brings one namespace's record up to date: the annotation with the list, and
// the label that makes the policy's binding select the namespace, both absent when the
// list is empty.
func (r *UserServiceAccountRecorder) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ns := &corev1.Namespace{}
	if err := r.Client.Get(ctx, req.NamespacedName, ns); err != nil || ns.DeletionTimestamp != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	users, err := r.Users(ctx, ns.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	want := strings.Join(users, ",")
	if len(want) > userServiceAccountsMax {
		want = "*" // every ServiceAccount of the namespace: more than the record holds
	}
	_, labelled := ns.Labels[LabelUserServiceAccounts]
	if ns.Annotations[AnnotationUserServiceAccounts] == want && labelled == (want != "") {
		return ctrl.Result{}, nil
	}
	patch := client.MergeFrom(ns.DeepCopy())
	if want == "" {
		delete(ns.Annotations, AnnotationUserServiceAccounts)
		delete(ns.Labels, LabelUserServiceAccounts)
	} else {
		if ns.Annotations == nil {
			ns.Annotations = map[string]string{}
		}
		if ns.Labels == nil {
			ns.Labels = map[string]string{}
		}
		ns.Annotations[AnnotationUserServiceAccounts] = want
		ns.Labels[LabelUserServiceAccounts] = "true"
	}
	if err := r.Client.Patch(ctx, ns, patch); err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, fmt.Errorf("recording the ServiceAccounts of namespace %s that are Podium users elsewhere: %w", ns.Name, err)
	}
	return ctrl.Result{}, nil
}
