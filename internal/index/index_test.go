package index

import (
	"testing"

	"github.com/google/go-cmp/cmp"

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
