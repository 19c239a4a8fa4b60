package controllers

import (
	"context"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestServiceAccountSubject(t *testing.T) {
	for _, tc := range []struct {
		s          rbacv1.Subject
		home, name string
		ok         bool
	}{
		{rbacv1.Subject{Kind: "ServiceAccount", Namespace: "demo", Name: "ci-x"}, "demo", "ci-x", true},
		{rbacv1.Subject{Kind: "ServiceAccount", Name: "ci-x"}, "org2", "ci-x", true}, // RBAC reads the binding's namespace
		{rbacv1.Subject{Kind: "User", Name: "system:serviceaccount:demo:ci-x"}, "demo", "ci-x", true},
		{rbacv1.Subject{Kind: "User", Name: "system:serviceaccount:demo"}, "", "", false},
		{rbacv1.Subject{Kind: "User", Name: "alice@example.com"}, "", "", false},
		{rbacv1.Subject{Kind: "Group", Name: "system:serviceaccounts:demo"}, "demo", "*", true},
		{rbacv1.Subject{Kind: "Group", Name: "system:serviceaccounts"}, "", "*", true},
		{rbacv1.Subject{Kind: "Group", Name: "system:authenticated"}, "", "*", true},
		{rbacv1.Subject{Kind: "Group", Name: "system:serviceaccounts:"}, "", "", false},
		{rbacv1.Subject{Kind: "Group", Name: "platform"}, "", "", false},
	} {
		home, name, ok := serviceAccountSubject(tc.s, "org2")
		if home != tc.home || name != tc.name || ok != tc.ok {
			t.Errorf("serviceAccountSubject(%+v) = %q, %q, %v; want %q, %q, %v", tc.s, home, name, ok, tc.home, tc.name, tc.ok)
		}
	}
}

func TestGrantsPodiumUse(t *testing.T) {
	rule := func(groups, resources, verbs []string) []rbacv1.PolicyRule {
		return []rbacv1.PolicyRule{{APIGroups: groups, Resources: resources, Verbs: verbs}}
	}
	hub := []string{"hub.podium.dev"}
	for _, tc := range []struct {
		rules []rbacv1.PolicyRule
		want  bool
	}{
		{rule(hub, []string{"hostedsecrets"}, []string{"create"}), true},
		{rule(hub, []string{"leaderboardrows"}, []string{"get", "create"}), true},
		{rule([]string{"*"}, []string{"*"}, []string{"*"}), true},
		{rule(hub, []string{"hostedsecrets"}, []string{"get", "list", "watch"}), false},
		{rule(hub, []string{"leaderboards"}, []string{"create"}), false},
		{rule([]string{""}, []string{"hostedsecrets"}, []string{"create"}), false},
		{nil, false},
	} {
		if got := grantsPodiumUse(tc.rules); got != tc.want {
			t.Errorf("grantsPodiumUse(%+v) = %v, want %v", tc.rules, got, tc.want)
		}
	}
}

// TestBindingUpdateWakesFormerSubjects: an update of a RoleBinding wakes the namespaces of
// the ServiceAccounts it named before, whose record may have to lose them, as well as
// those it names now.
func TestBindingUpdateWakesFormerSubjects(t *testing.T) {
	binding := func(subjects ...rbacv1.Subject) *rbacv1.RoleBinding {
		return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "org2", Name: "members"},
			RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "podium-org-member"}, Subjects: subjects}
	}
	old := binding(rbacv1.Subject{Kind: "ServiceAccount", Namespace: "demo", Name: "former"})
	updated := binding(rbacv1.Subject{Kind: "ServiceAccount", Namespace: "ci", Name: "runner"},
		rbacv1.Subject{Kind: "ServiceAccount", Namespace: "org2", Name: "local"})
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	(&UserServiceAccountRecorder{}).bindingEvents().Update(context.Background(), event.UpdateEvent{ObjectOld: old, ObjectNew: updated}, q)
	var got []string
	for q.Len() > 0 {
		req, _ := q.Get()
		got = append(got, req.Name)
		q.Done(req)
	}
	slices.Sort(got)
	if want := []string{"ci", "demo"}; !slices.Equal(got, want) {
		t.Errorf("an update woke %v, want %v (the former subject's namespace and the new one's, not the binding's own)", got, want)
	}
}
