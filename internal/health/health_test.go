package health_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"podium.dev/podium/internal/health"
)

func TestSet(t *testing.T) {
	type cond struct{ Type, Status, Reason string }
	tests := []struct {
		name    string
		before  []metav1.Condition
		verdict health.Verdict
		want    []cond
		kstatus status.Status
	}{
		{"healthy", nil, health.Healthy, []cond{{"Ready", "True", "R"}}, status.CurrentStatus},
		{"waiting", nil, health.Waiting, []cond{{"Ready", "False", "R"}, {"Reconciling", "True", "R"}}, status.InProgressStatus},
		{"stalled", nil, health.Stalled, []cond{{"Ready", "False", "R"}, {"Stalled", "True", "R"}}, status.FailedStatus},
		{"stalled, then fixed: Stalled is removed", []metav1.Condition{
			{Type: "Ready", Status: "False", Reason: "Old"}, {Type: "Stalled", Status: "True", Reason: "Old"}, {Type: "Valid", Status: "True", Reason: "V"},
		}, health.Healthy, []cond{{"Ready", "True", "R"}, {"Valid", "True", "V"}}, status.CurrentStatus},
		{"waiting, then stalled: Reconciling is removed", []metav1.Condition{
			{Type: "Ready", Status: "False", Reason: "Old"}, {Type: "Reconciling", Status: "True", Reason: "Old"},
		}, health.Stalled, []cond{{"Ready", "False", "R"}, {"Stalled", "True", "R"}}, status.FailedStatus},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conds := append([]metav1.Condition(nil), tt.before...)
			if !health.Set(&conds, 3, tt.verdict, "R", "because") {
				t.Fatal("Set reported no change")
			}
			var got []cond
			for _, c := range conds {
				got = append(got, cond{c.Type, string(c.Status), c.Reason})
				if c.Type != "Valid" && c.ObservedGeneration != 3 {
					t.Errorf("%s: observedGeneration %d, want 3", c.Type, c.ObservedGeneration)
				}
			}
			if d := cmp.Diff(tt.want, got, cmpopts.SortSlices(func(a, b cond) bool { return a.Type < b.Type })); d != "" {
				t.Errorf("conditions (-want +got):\n%s", d)
			}
			if health.Set(&conds, 3, tt.verdict, "R", "because") {
				t.Error("Set reported a change the second time")
			}
			if got := compute(t, conds, 3); got != tt.kstatus {
				t.Errorf("kstatus computes %s, want %s", got, tt.kstatus)
			}
		})
	}
}

// compute runs kstatus on a Podium object carrying conds, as the apiserver serves it.
func compute(t *testing.T, conds []metav1.Condition, gen int64) status.Status {
	t.Helper()
	b, err := json.Marshal(map[string]any{
		"apiVersion": "hub.podium.dev/v1alpha1", "kind": "Leaderboard",
		"metadata": map[string]any{"name": "x", "generation": gen},
		"status":   map[string]any{"observedGeneration": gen, "conditions": conds},
	})
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(b); err != nil {
		t.Fatal(err)
	}
	res, err := status.Compute(u)
	if err != nil {
		t.Fatal(err)
	}
	return res.Status
}
