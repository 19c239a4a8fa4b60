package ranking

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// page returns the whole ranking of the board as "rank name".
func page(b *Board) []string { return ranks(b.Page(0, 1000)) }

func wantPage(t *testing.T, b *Board, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if diff := cmp.Diff(want, page(b)); diff != "" {
		t.Errorf("Page() (-want +got):\n%s", diff)
	}
	if b.Len() != len(want) {
		t.Errorf("Len() = %d, want %d", b.Len(), len(want))
	}
	checkTree(t, b)
}

// checkTree checks the treap's invariants: sizes, heap order, search order.
func checkTree(t *testing.T, b *Board) {
	t.Helper()
	var prev *node
	var walk func(n *node) int
	walk = func(n *node) int {
		if n == nil {
			return 0
		}
		for _, c := range []*node{n.left, n.right} {
			if c != nil && c.prio > n.prio {
				t.Errorf("heap order broken at %s", n.row.Name)
			}
		}
		size := walk(n.left)
		if prev != nil && b.tree.ord.compare(prev, n) >= 0 {
			t.Errorf("search order broken: %s before %s", prev.row.Name, n.row.Name)
		}
		prev = n
		size += 1 + walk(n.right)
		if int(n.size) != size {
			t.Errorf("size of %s = %d, want %d", n.row.Name, n.size, size)
		}
		return size
	}
	if got := walk(b.tree.root); got != len(b.nodes) {
		t.Errorf("tree holds %d rows, nodes map %d", got, len(b.nodes))
	}
}

func rewardBoard() *hubv1alpha1.Leaderboard {
	return testBoard(rule("metrics.reward", desc, ""))
}

func TestIndexInsertUpdateDelete(t *testing.T) {
	r := NewRegistry()
	lb := rewardBoard()
	r.setBoard(lb)
	b := r.Board(lb.UID)
	if b == nil {
		t.Fatal("Board() = nil after the board was added")
	}
	wantPage(t, b)

	a := testRow("a", 0, `{"reward": 1}`, "")
	c := testRow("c", 2, `{"reward": 3}`, "")
	d := testRow("d", 3, `{"reward": 2}`, "")
	for _, row := range []*hubv1alpha1.LeaderboardRow{a, c, d} {
		r.setRow(row)
	}
	wantPage(t, b, "1 c", "2 d", "3 a")

	v := b.Version()
	a2 := changed(a, `{"reward": 5}`)
	r.setRow(a2)
	wantPage(t, b, "1 a", "2 c", "3 d")
	if b.Version() == v {
		t.Error("Version() did not change when a row moved")
	}
	if got := b.Page(0, 1)[0].Row; got != a2 {
		t.Error("Page() does not serve the latest cached object")
	}

	// A change that keeps the row's place still serves the new object.
	v = b.Version()
	a3 := a2.DeepCopy()
	a3.ResourceVersion = "3"
	a3.Spec.TrialIDs = []string{"0b8f0d6e-3c7a-4d59-9c1e-2f4f8a7b6c51"}
	r.setRow(a3)
	wantPage(t, b, "1 a", "2 c", "3 d")
	if got := b.Page(0, 1)[0].Row; got != a3 {
		t.Error("Page() does not serve the latest cached object after an in-place change")
	}
	if b.Version() == v {
		t.Error("Version() did not change when a row changed in place")
	}
	v = b.Version()
	r.setRow(a3.DeepCopy()) // a resync
	if b.Version() != v {
		t.Error("Version() changed on a resync of a row")
	}

	r.setRow(changed(d, `{"reward": 3}`))
	wantPage(t, b, "1 a", "2 c", "2 d")

	r.deleteRow(c)
	wantPage(t, b, "1 a", "2 d")
	r.deleteRow(c) // twice: nothing happens
	wantPage(t, b, "1 a", "2 d")
}

func TestIndexVisibilityAndValidity(t *testing.T) {
	r := NewRegistry()
	lb := rewardBoard()
	r.setBoard(lb)
	b := r.Board(lb.UID)
	a := testRow("a", 0, `{"reward": 1}`, "")
	h := testRow("h", 1, `{"reward": 2}`, "")
	r.setRow(a)
	r.setRow(h)
	wantPage(t, b, "1 h", "2 a")

	hidden := h.DeepCopy()
	hidden.Spec.Visibility = hubv1alpha1.RowHide
	r.setRow(hidden)
	wantPage(t, b, "1 a")

	shown := hidden.DeepCopy()
	shown.Spec.Visibility = "" // the default is display
	r.setRow(shown)
	wantPage(t, b, "1 h", "2 a")

	invalid := a.DeepCopy()
	setValid(invalid, false)
	r.setRow(invalid)
	wantPage(t, b, "1 h")

	// Valid, but for an older generation: the change is not validated yet.
	stale := changed(a, `{"reward": 9}`)
	stale.Status.Conditions[0].ObservedGeneration = a.Generation
	r.setRow(stale)
	wantPage(t, b, "1 h")

	unknown := stale.DeepCopy()
	unknown.Status.Conditions = nil
	r.setRow(unknown)
	wantPage(t, b, "1 h")

	r.setRow(changed(a, `{"reward": 9}`))
	wantPage(t, b, "1 a", "2 h")
}

func TestIndexPageArithmetic(t *testing.T) {
	r := NewRegistry()
	lb := rewardBoard()
	r.setBoard(lb)
	b := r.Board(lb.UID)
	// Rewards 10 9 9 9 8 7 7 ... : ties cross page boundaries.
	rewards := []int{10, 9, 9, 9, 8, 7, 7, 6, 5, 5, 5, 5, 4}
	for i, w := range rewards {
		r.setRow(testRow(fmt.Sprintf("r%02d", i), i, fmt.Sprintf(`{"reward": %d}`, w), ""))
	}
	all := ranks(b.Page(0, 100))
	want := []string{"1 r00", "2 r01", "2 r02", "2 r03", "5 r04", "6 r05", "6 r06", "8 r07", "9 r08", "9 r09", "9 r10", "9 r11", "13 r12"}
	if diff := cmp.Diff(want, all); diff != "" {
		t.Fatalf("Page(0, 100) (-want +got):\n%s", diff)
	}
	for offset := -1; offset <= len(rewards)+1; offset++ {
		for limit := -1; limit <= len(rewards)+2; limit++ {
			got := ranks(b.Page(offset, limit))
			lo := min(max(offset, 0), len(want))
			hi := min(lo+max(limit, 0), len(want))
			if diff := cmp.Diff(want[lo:hi], got); diff != "" {
				t.Errorf("Page(%d, %d) (-want +got):\n%s", offset, limit, diff)
			}
		}
	}
	if got := b.Page(len(rewards), 50); got != nil {
		t.Errorf("Page past the end = %v, want nil", got)
	}
	var none *Board
	if none.Len() != 0 || none.Page(0, 10) != nil || none.Version() != 0 {
		t.Error("a nil Board is not empty")
	}
}

func TestIndexDeepPageRank(t *testing.T) {
	r := NewRegistry()
	lb := rewardBoard()
	r.setBoard(lb)
	b := r.Board(lb.UID)
	// 5,000 rows in groups of 7 equal rewards: row i has reward -(i/7).
	const n = 5000
	for i := range n {
		r.setRow(testRow(fmt.Sprintf("r%05d", i), i, fmt.Sprintf(`{"reward": %d}`, -(i/7)), ""))
	}
	for _, offset := range []int{0, 6, 7, 50, 3333, 4998} {
		got := b.Page(offset, 3)
		for j, e := range got {
			pos := offset + j
			if want := pos/7*7 + 1; e.Rank != want {
				t.Errorf("Page(%d, 3)[%d] rank = %d, want %d", offset, j, e.Rank, want)
			}
			if want := fmt.Sprintf("r%05d", pos); e.Row.Name != want {
				t.Errorf("Page(%d, 3)[%d] = %s, want %s", offset, j, e.Row.Name, want)
			}
		}
	}
	checkTree(t, b)
}

func TestIndexRulesChange(t *testing.T) {
	r := NewRegistry()
	lb := rewardBoard()
	r.setBoard(lb)
	b := r.Board(lb.UID)
	r.setRow(testRow("a", 0, `{"reward": 1, "cost": 1}`, ""))
	r.setRow(testRow("b", 1, `{"reward": 2, "cost": 2}`, ""))
	r.setRow(testRow("c", 2, `{"reward": 2, "cost": 0}`, ""))
	wantPage(t, b, "1 b", "1 c", "3 a")

	v := b.Version()
	lb2 := lb.DeepCopy()
	lb2.ResourceVersion = "2"
	lb2.Spec.RankBy = append(lb2.Spec.RankBy, rule("metrics.cost", asc, ""))
	r.setBoard(lb2)
	if r.Board(lb.UID) != b {
		t.Fatal("a rules change replaced the Board")
	}
	wantPage(t, b, "1 c", "2 b", "3 a")
	if b.Version() == v {
		t.Error("Version() did not change with the rules")
	}

	lb3 := lb2.DeepCopy()
	lb3.ResourceVersion = "3"
	lb3.Spec.RankBy = nil
	r.setBoard(lb3)
	wantPage(t, b, "1 a", "2 b", "3 c")

	// Another change of the board object changes the version, not the order.
	v = b.Version()
	lb4 := lb3.DeepCopy()
	lb4.ResourceVersion = "4"
	lb4.Spec.Title = "Renamed"
	r.setBoard(lb4)
	wantPage(t, b, "1 a", "2 b", "3 c")
	if b.Version() == v {
		t.Error("Version() did not change with the board")
	}
	// A resync (same object) changes nothing.
	v = b.Version()
	r.setBoard(lb4)
	if b.Version() != v {
		t.Error("Version() changed on a resync")
	}
}

func TestIndexRowsBeforeBoardAndBoardDeleted(t *testing.T) {
	r := NewRegistry()
	lb := rewardBoard()
	r.setRow(testRow("a", 0, `{"reward": 1}`, ""))
	r.setRow(testRow("b", 1, `{"reward": 2}`, ""))
	gone := testRow("gone", 2, `{"reward": 3}`, "")
	r.setRow(gone)
	r.deleteRow(gone)
	hidden := testRow("hidden", 3, `{"reward": 4}`, "")
	hidden.Spec.Visibility = hubv1alpha1.RowHide
	r.setRow(hidden)
	other := testRow("other", 4, `{"reward": 5}`, "")
	other.Spec.Leaderboard = "other-board"
	r.setRow(other)
	if r.Board(lb.UID) != nil {
		t.Fatal("Board() of an unknown board is not nil")
	}

	r.setBoard(lb)
	b := r.Board(lb.UID)
	wantPage(t, b, "1 b", "2 a")

	r.deleteBoard(lb)
	if r.Board(lb.UID) != nil {
		t.Error("Board() is not nil after the board was deleted")
	}
	wantPage(t, b) // a reader still holding the board sees it empty

	// The same name again, a new object: the rows that are left attach to it.
	lb2 := lb.DeepCopy()
	lb2.UID = "uid-board-2"
	r.setBoard(lb2)
	wantPage(t, r.Board(lb2.UID), "1 b", "2 a")

	// Deleted and created again while the informer was away: the new UID wins.
	lb3 := lb.DeepCopy()
	lb3.UID = "uid-board-3"
	lb3.Spec.RankBy = []hubv1alpha1.RankRule{rule("metrics.reward", asc, "")}
	r.setBoard(lb3)
	if r.Board(lb2.UID) != nil {
		t.Error("the replaced board is still served")
	}
	wantPage(t, r.Board(lb3.UID), "1 a", "2 b")

	// A stale delete of the old object does not drop the new one.
	r.deleteBoard(lb2)
	wantPage(t, r.Board(lb3.UID), "1 a", "2 b")
}

func TestIndexMixedRuleResorts(t *testing.T) {
	r := NewRegistry()
	lb := testBoard(rule("metrics.score", asc, ""))
	r.setBoard(lb)
	b := r.Board(lb.UID)
	r.setRow(testRow("nine", 0, `{"score": 9}`, ""))
	r.setRow(testRow("ten", 1, `{"score": 10}`, ""))
	wantPage(t, b, "1 nine", "2 ten")

	five := testRow("five", 2, `{"score": "5"}`, "")
	r.setRow(five)
	wantPage(t, b, "1 ten", "2 five", "3 nine")

	r.setRow(changed(five, `{"score": 5}`))
	wantPage(t, b, "1 five", "2 nine", "3 ten")

	r.setRow(changed(five, `{"score": "5"}`))
	wantPage(t, b, "1 ten", "2 five", "3 nine")
	r.deleteRow(five)
	wantPage(t, b, "1 nine", "2 ten")
}

// TestIndexMatchesSort drives a board with random changes and checks every page
// against Sort of the rows that should be ranked.
func TestIndexMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	rules := []hubv1alpha1.RankRule{rule("metrics.reward", desc, ""), rule("metrics.cost", asc, first)}
	r := NewRegistry()
	lb := testBoard(rules...)
	r.setBoard(lb)
	b := r.Board(lb.UID)
	latest := map[types.UID]*hubv1alpha1.LeaderboardRow{}
	metric := func() string {
		vals := []string{"null", "1", "2", "10", "true", `"x"`, `"X"`, `"5"`, "2.5", "-3"}
		if rng.IntN(4) == 0 {
			return fmt.Sprintf(`{"reward": %s}`, vals[rng.IntN(len(vals))])
		}
		return fmt.Sprintf(`{"reward": %s, "cost": %s}`, vals[rng.IntN(len(vals))], vals[rng.IntN(len(vals))])
	}
	for step := range 3000 {
		name := fmt.Sprintf("r%03d", rng.IntN(300))
		uid := types.UID("uid-" + name)
		row := latest[uid]
		switch op := rng.IntN(10); {
		case row == nil:
			row = testRow(name, rng.IntN(20), metric(), "")
		case op < 5:
			row = changed(row, metric())
		case op < 7:
			row = row.DeepCopy()
			row.Spec.Visibility = []hubv1alpha1.RowVisibility{hubv1alpha1.RowDisplay, hubv1alpha1.RowHide}[rng.IntN(2)]
		case op < 8:
			row = row.DeepCopy()
			setValid(row, rng.IntN(2) == 0)
		default:
			r.deleteRow(row)
			delete(latest, uid)
			row = nil
		}
		if row != nil {
			r.setRow(row)
			latest[uid] = row
		}
		if step%100 != 0 {
			continue
		}
		var ranked []*hubv1alpha1.LeaderboardRow
		for _, row := range latest {
			if Ranked(row) {
				ranked = append(ranked, row)
			}
		}
		slices.SortFunc(ranked, func(a, b *hubv1alpha1.LeaderboardRow) int { return tieBreak(a, b) })
		want := ranks(Sort(rules, ranked))
		if diff := cmp.Diff(want, page(b)); diff != "" {
			t.Fatalf("step %d: Page() (-want from Sort +got):\n%s", step, diff)
		}
		for offset := 0; offset < len(want); offset += 7 {
			if diff := cmp.Diff(want[offset:min(offset+7, len(want))], ranks(b.Page(offset, 7))); diff != "" {
				t.Fatalf("step %d: Page(%d, 7) (-want +got):\n%s", step, offset, diff)
			}
		}
		checkTree(t, b)
	}
}

// TestIndexConcurrentReaders pages boards while rows and rules change; run with -race
// it proves readers and the writer share the index safely, and every page it reads
// must be in rank order.
func TestIndexConcurrentReaders(t *testing.T) {
	r := NewRegistry()
	lb := rewardBoard()
	r.setBoard(lb)
	stop := make(chan struct{})
	errs := make(chan error, 4)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					errs <- nil
					return
				default:
				}
				b := r.Board(lb.UID)
				_ = b.Version()
				entries := b.Page(b.Len()/2, 20)
				for i := 1; i < len(entries); i++ {
					if entries[i].Rank < entries[i-1].Rank {
						errs <- fmt.Errorf("ranks out of order: %v", ranks(entries))
						return
					}
				}
			}
		}()
	}
	rows := map[int]*hubv1alpha1.LeaderboardRow{}
	for i := range 2000 {
		id := i % 150
		if row := rows[id]; row != nil {
			rows[id] = changed(row, fmt.Sprintf(`{"reward": %d}`, i%37))
		} else {
			rows[id] = testRow(fmt.Sprintf("r%03d", id), id, fmt.Sprintf(`{"reward": %d}`, i%37), "")
		}
		r.setRow(rows[id])
		if i%500 == 0 {
			next := lb.DeepCopy()
			next.ResourceVersion = fmt.Sprint(i + 2)
			if i%1000 == 0 {
				next.Spec.RankBy[0].Direction = asc
			}
			r.setBoard(next)
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	checkTree(t, r.Board(lb.UID))
}
