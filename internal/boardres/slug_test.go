package boardres

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

func TestSlug(t *testing.T) {
	tests := []struct {
		name string
		lb   hubv1alpha1.Leaderboard
		want string
	}{
		{"from spec.package", hubv1alpha1.Leaderboard{Spec: hubv1alpha1.LeaderboardSpec{Package: "org/ds", Name: "main"}}, "org/ds/main"},
		{"from the resolved package", hubv1alpha1.Leaderboard{
			Spec:   hubv1alpha1.LeaderboardSpec{PackageID: "0b8f0d6e-3c7a-4d59-9c1e-2f4f8a7b6c51", Name: "b_1"},
			Status: hubv1alpha1.LeaderboardStatus{Package: "org/ds"},
		}, "org/ds/b_1"},
		{"unresolved packageID", hubv1alpha1.Leaderboard{Spec: hubv1alpha1.LeaderboardSpec{PackageID: "0b8f0d6e-3c7a-4d59-9c1e-2f4f8a7b6c51", Name: "b"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Slug(&tt.lb); got != tt.want {
				t.Errorf("Slug() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSplitSlug(t *testing.T) {
	type split struct {
		Pkg, Name string
		OK        bool
	}
	tests := map[string]split{
		"org/ds/main":   {"org/ds", "main", true},
		"org/ds/a.b_c":  {"org/ds", "a.b_c", true},
		"org/ds":        {},
		"org/ds/main/x": {},
		"/ds/main":      {},
		"org//main":     {},
		"org/ds/":       {},
	}
	for in, want := range tests {
		pkg, name, ok := SplitSlug(in)
		if diff := cmp.Diff(want, split{pkg, name, ok}); diff != "" {
			t.Errorf("SplitSlug(%q) (-want +got):\n%s", in, diff)
		}
	}
}

func TestServable(t *testing.T) {
	const id = "0b8f0d6e-3c7a-4d59-9c1e-2f4f8a7b6c51"
	wrongOrg := []metav1.Condition{{Type: hubv1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: hubv1alpha1.ReasonPackageInOtherOrg}}
	otherProblem := []metav1.Condition{{Type: hubv1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: hubv1alpha1.ReasonDuplicateName}}
	board := func(ns, pkg, pkgID string, conds []metav1.Condition) *hubv1alpha1.Leaderboard {
		return &hubv1alpha1.Leaderboard{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns},
			Spec:       hubv1alpha1.LeaderboardSpec{Package: pkg, PackageID: pkgID, Name: "main"},
			Status:     hubv1alpha1.LeaderboardStatus{Conditions: conds},
		}
	}
	tests := []struct {
		name string
		lb   *hubv1alpha1.Leaderboard
		want bool
	}{
		{"its own org's dataset", board("acme", "acme/ds", "", nil), true},
		{"another org's dataset by name, before the controller saw it", board("evil", "acme/ds", "", nil), false},
		{"another org's dataset by id, as the controller reports it", board("evil", "", id, wrongOrg), false},
		{"an unresolved id, no verdict yet", board("acme", "", id, nil), false},
		{"an id the controller resolved in its own org", func() *hubv1alpha1.Leaderboard {
			lb := board("acme", "", id, nil)
			lb.Status.Package = "acme/ds"
			return lb
		}(), true},
		{"not Ready for another reason is still served", board("acme", "acme/ds", "", otherProblem), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Servable(tt.lb); got != tt.want {
				t.Errorf("Servable() = %v, want %v", got, tt.want)
			}
		})
	}
}
