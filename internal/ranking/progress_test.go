package ranking

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// progress renders records as "name score", which reads well in a diff.
func progress(rs []Record) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, fmt.Sprintf("%s %v", r.Row.Name, r.Score))
	}
	return out
}

// withChange returns the row as the informer hands it after a change recorded at
// epoch+at seconds (the cache keeps the newest history entry's time).
func withChange(row *hubv1alpha1.LeaderboardRow, metrics string, at int) *hubv1alpha1.LeaderboardRow {
	c := changed(row, metrics)
	c.Status.History = []hubv1alpha1.RowChange{{At: metav1.NewTime(epoch.Add(time.Duration(at) * time.Second)), Generation: c.Generation}}
	return c
}

func TestProgress(t *testing.T) {
	r := NewRegistry()
	lb := rewardBoard()
	r.setBoard(lb)
	b := r.Board(lb.UID)
	want := func(names ...string) {
		t.Helper()
		if names == nil {
			names = []string{}
		}
		if diff := cmp.Diff(names, progress(b.Progress())); diff != "" {
			t.Errorf("Progress() (-want +got):\n%s", diff)
		}
	}
	a := testRow("a", 10, `{"reward": 0.4}`, "")
	r.setRow(a)
	want("a 0.4")
	r.setRow(testRow("b", 20, `{"reward": 0.3}`, "")) // worse, later: not a record
	want("a 0.4")
	r.setRow(testRow("c", 30, `{"reward": 0.6}`, ""))
	want("a 0.4", "c 0.6")
	r.setRow(testRow("d", 25, `{"reward": 0.4}`, "")) // ties a, later: not a record
	want("a 0.4", "c 0.6")
	early := testRow("e", 5, `{"reward": 0.5}`, "") // earlier and better than a: a goes
	r.setRow(early)
	want("e 0.5", "c 0.6")
	r.setRow(testRow("n", 1, `{"other": 1}`, "")) // no score: never a record
	want("e 0.5", "c 0.6")
	// e's score changes at t=40: its value is set then, and it beats c.
	r.setRow(withChange(early, `{"reward": 0.9}`, 40))
	want("a 0.4", "c 0.6", "e 0.9")
	// The record c goes: the board is walked again, and d (0.4, t=25) stays behind a.
	r.deleteRow(testRow("c", 30, "", ""))
	want("a 0.4", "e 0.9")
	before := b.Version()
	r.setRow(testRow("f", 50, `{"reward": 0.1}`, ""))
	if b.Version() == before {
		t.Error("a new row did not change the version")
	}
	want("a 0.4", "e 0.9")
	// Rows set at the same time: only the one ahead of the others can be a record.
	r.setRow(testRow("s1", 60, `{"reward": 0.95}`, ""))
	r.setRow(testRow("s2", 60, `{"reward": 0.97}`, ""))
	want("a 0.4", "e 0.9", "s2 0.97")
	// A rules change re-sorts: ascending, the lowest is best.
	lb = lb.DeepCopy()
	lb.ResourceVersion = "2"
	lb.Spec.RankBy = []hubv1alpha1.RankRule{rule("metrics.reward", asc, "")}
	r.setBoard(lb)
	want("a 0.4", "b 0.3", "f 0.1")

}

// TestProgressRandom: after every change the kept records are what computing them
// from scratch (ProgressOf) gives, over random inserts, changes (with new set times,
// often equal to other rows'), hides and deletes, on two rules.
func TestProgressRandom(t *testing.T) {
	for _, dir := range []hubv1alpha1.Direction{desc, asc} {
		t.Run(string(dir), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(38, uint64(len(dir))))
			rules := []hubv1alpha1.RankRule{rule("metrics.score", dir, ""), rule("metrics.cost", asc, "")}
			r := NewRegistry()
			lb := testBoard(rules...)
			r.setBoard(lb)
			b := r.Board(lb.UID)
			latest := map[string]*hubv1alpha1.LeaderboardRow{}
			for step := range 3000 {
				name := fmt.Sprintf("r%02d", rng.IntN(80))
				metrics := fmt.Sprintf(`{"score": %d, "cost": %d}`, rng.IntN(30), rng.IntN(3))
				if rng.IntN(12) == 0 {
					metrics = `{"cost": 1}`
				}
				row := latest[name]
				switch {
				case row != nil && rng.IntN(8) == 0:
					r.deleteRow(row)
					delete(latest, name)
				case row != nil:
					row = withChange(row, metrics, rng.IntN(200))
					if rng.IntN(6) == 0 {
						row.Spec.Visibility = hubv1alpha1.RowHide
					}
					latest[name] = row
					r.setRow(row)
				default:
					row = testRow(name, rng.IntN(200), metrics, "")
					latest[name] = row
					r.setRow(row)
				}
				var ranked []*hubv1alpha1.LeaderboardRow
				for _, row := range latest {
					if Ranked(row) {
						ranked = append(ranked, row)
					}
				}
				if diff := cmp.Diff(progress(ProgressOf(rules, ranked)), progress(b.Progress())); diff != "" {
					t.Fatalf("step %d: kept records against ProgressOf (-want +got):\n%s", step, diff)
				}
			}
		})
	}
}
