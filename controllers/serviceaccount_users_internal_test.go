package controllers

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
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
