package ranking

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// ranges renders entries as "rank rank_upper name [low,high]", which reads well in a diff.
func ranges(entries []Entry) []string {
	out := []string{}
	for _, e := range entries {
		s := fmt.Sprintf("%d %d %s", e.Rank, e.RankUpper, e.Row.Name)
		if e.Interval.OK {
			s += fmt.Sprintf(" [%.4f,%.4f]", e.Interval.Low, e.Interval.High)
		}
		out = append(out, s)
	}
	return out
}

func stderrRule(acc, stderr string, dir hubv1alpha1.Direction, nulls hubv1alpha1.NullsPlacement) hubv1alpha1.RankRule {
	r := rule(acc, dir, nulls)
	r.Stderr = stderr
	return r
}

func intervalRule(acc, low, high string, dir hubv1alpha1.Direction) hubv1alpha1.RankRule {
	r := rule(acc, dir, "")
	r.IntervalLow, r.IntervalHigh = low, high
	return r
}

// rangeCases are the worked tables of docs/ranking.md ("Rank ranges"), and the edge
// cases around them. Every case runs through Sort and through the index.
var rangeCases = []struct {
	name  string
	rules []hubv1alpha1.RankRule
	rows  []*hubv1alpha1.LeaderboardRow
	want  []string
}{{
	// docs/ranking.md, worked table 1.
	name:  "stderr, desc",
	rules: []hubv1alpha1.RankRule{stderrRule("metrics.accuracy", "metrics.accuracy_stderr", desc, "")},
	rows: []*hubv1alpha1.LeaderboardRow{
		testRow("a", 0, `{"accuracy": 0.80, "accuracy_stderr": 0.02}`, ""),
		testRow("b", 1, `{"accuracy": 0.78, "accuracy_stderr": 0.01}`, ""),
		testRow("c", 2, `{"accuracy": 0.74, "accuracy_stderr": 0.005}`, ""),
		testRow("d", 3, `{"accuracy": 0.74}`, ""),
		testRow("e", 4, `{"accuracy": 0.70, "accuracy_stderr": 0.03}`, ""),
		testRow("f", 5, `{"accuracy_stderr": 0.01}`, ""),
		testRow("g", 6, `{"accuracy": 0.60, "accuracy_stderr": -0.1}`, ""),
	},
	want: []string{
		"1 1 a [0.7608,0.8392]",
		"2 1 b [0.7604,0.7996]",
		"3 3 c [0.7302,0.7498]",
		"3 3 d",
		"5 3 e [0.6412,0.7588]",
		"6 6 g",
		"7 7 f",
	},
}, {
	// docs/ranking.md, worked table 2: an exact rule before the uncertain one, asc.
	name: "exact rule first, then an interval, asc",
	rules: []hubv1alpha1.RankRule{
		rule("metadata.tier", asc, ""),
		intervalRule("metrics.cost", "metrics.cost_low", "metrics.cost_high", asc),
		rule("metrics.latency", asc, ""),
	},
	rows: []*hubv1alpha1.LeaderboardRow{
		testRow("p", 0, `{"cost": 10, "cost_low": 8, "cost_high": 12, "latency": 5}`, `{"tier": 1}`),
		testRow("q", 1, `{"cost": 11, "cost_low": 10.5, "cost_high": 11.5, "latency": 1}`, `{"tier": 1}`),
		testRow("r", 2, `{"cost": 13, "cost_low": 11.8, "cost_high": 20, "latency": 1}`, `{"tier": 1}`),
		testRow("s", 3, `{"cost": 1, "cost_low": 0, "cost_high": 2}`, `{"tier": 2}`),
		testRow("t", 4, `{"cost": 11, "cost_low": 10.5, "cost_high": 11.5, "latency": 0}`, `{"tier": 1}`),
	},
	want: []string{
		"1 1 p [8.0000,12.0000]",
		"2 1 t [10.5000,11.5000]",
		"3 1 q [10.5000,11.5000]",
		"4 3 r [11.8000,20.0000]",
		"5 5 s [0.0000,2.0000]",
	},
}, {
	name:  "nulls first: missing values are above every present one",
	rules: []hubv1alpha1.RankRule{stderrRule("metrics.x", "metrics.se", desc, first)},
	rows: []*hubv1alpha1.LeaderboardRow{
		testRow("a", 0, `{"x": 5, "se": 10}`, ""),
		testRow("b", 1, `{}`, ""),
		testRow("c", 2, `{"x": null}`, ""),
		testRow("d", 3, `{"x": 1, "se": 0}`, ""),
	},
	want: []string{"1 1 b", "1 1 c", "3 3 a [-14.6000,24.6000]", "4 3 d [1.0000,1.0000]"},
}, {
	name:  "no interval: not a JSON number, a bound missing, low above high, value outside",
	rules: []hubv1alpha1.RankRule{intervalRule("metrics.x", "metrics.lo", "metrics.hi", desc)},
	rows: []*hubv1alpha1.LeaderboardRow{
		testRow("a", 0, `{"x": 10, "lo": "9", "hi": 11}`, ""),
		testRow("b", 1, `{"x": 9, "lo": true, "hi": 11}`, ""),
		testRow("c", 2, `{"x": 8, "lo": 7}`, ""),
		testRow("d", 3, `{"x": 7, "lo": 8, "hi": 6}`, ""),
		testRow("e", 4, `{"x": 6, "lo": 7, "hi": 9}`, ""),
		testRow("f", 5, `{"x": 5, "lo": 0, "hi": 100}`, ""),
	},
	want: []string{"1 1 a", "2 2 b", "3 3 c", "4 4 d", "5 5 e", "6 1 f [0.0000,100.0000]"},
}, {
	name:  "a string value has no interval; stderr overflowing float64 is none",
	rules: []hubv1alpha1.RankRule{stderrRule("metrics.x", "metrics.se", desc, "")},
	rows: []*hubv1alpha1.LeaderboardRow{
		testRow("a", 0, `{"x": "zz", "se": 1}`, ""),
		testRow("b", 1, `{"x": "aa", "se": 1}`, ""),
		testRow("c", 2, `{"x": "aa"}`, ""),
	},
	want: []string{"1 1 a", "2 2 b", "2 2 c"},
}, {
	name:  "overflow",
	rules: []hubv1alpha1.RankRule{stderrRule("metrics.x", "metrics.se", desc, "")},
	rows: []*hubv1alpha1.LeaderboardRow{
		testRow("a", 0, `{"x": 1e308, "se": 1e308}`, ""),
		testRow("b", 1, `{"x": 1, "se": 0.1}`, ""),
	},
	want: []string{"1 1 a", "2 2 b [0.8040,1.1960]"},
}, {
	name:  "no uncertainty: rank_upper 0",
	rules: []hubv1alpha1.RankRule{rule("metrics.x", desc, "")},
	rows: []*hubv1alpha1.LeaderboardRow{
		testRow("a", 0, `{"x": 2, "se": 1}`, ""),
		testRow("b", 1, `{"x": 1, "se": 1}`, ""),
	},
	want: []string{"1 0 a", "2 0 b"},
}}

func TestRankRanges(t *testing.T) {
	for _, tc := range rangeCases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ranges(Sort(tc.rules, tc.rows))); diff != "" {
				t.Errorf("Sort (-want +got):\n%s", diff)
			}
			r := NewRegistry()
			lb := testBoard(tc.rules...)
			r.setBoard(lb)
			for _, row := range tc.rows {
				r.setRow(row)
			}
			b := r.Board(lb.UID)
			if diff := cmp.Diff(tc.want, ranges(b.Page(0, 100))); diff != "" {
				t.Errorf("index (-want +got):\n%s", diff)
			}
			// Page by page: each row's range is its own query.
			for i := range tc.want {
				if diff := cmp.Diff(tc.want[i:i+1], ranges(b.Page(i, 1))); diff != "" {
					t.Errorf("Page(%d, 1) (-want +got):\n%s", i, diff)
				}
			}
			checkBands(t, b)
		})
	}
}

// TestRankRangesFollowChanges: a row's stderr changing alone moves it in the band tree
// (the rank stays, the ranges change) and bumps the version; rules gaining and losing an
// uncertainty rebuild the ranges.
func TestRankRangesFollowChanges(t *testing.T) {
	rules := []hubv1alpha1.RankRule{stderrRule("metrics.x", "metrics.se", desc, "")}
	r := NewRegistry()
	lb := testBoard(rules...)
	r.setBoard(lb)
	a := testRow("a", 0, `{"x": 10, "se": 0.1}`, "")
	bRow := testRow("b", 1, `{"x": 9, "se": 0.1}`, "")
	r.setRow(a)
	r.setRow(bRow)
	b := r.Board(lb.UID)
	want := func(w ...string) {
		t.Helper()
		if diff := cmp.Diff(w, ranges(b.Page(0, 10))); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		checkBands(t, b)
	}
	want("1 1 a [9.8040,10.1960]", "2 2 b [8.8040,9.1960]")

	v := b.Version()
	bRow = changed(bRow, `{"x": 9, "se": 1}`)
	r.setRow(bRow)
	if b.Version() == v {
		t.Error("Version() did not change when only a stderr changed")
	}
	want("1 1 a [9.8040,10.1960]", "2 1 b [7.0400,10.9600]")

	r.deleteRow(a)
	want("1 1 b [7.0400,10.9600]")
	r.setRow(a)
	want("1 1 a [9.8040,10.1960]", "2 1 b [7.0400,10.9600]")

	plain := lb.DeepCopy()
	plain.ResourceVersion = "2"
	plain.Spec.RankBy[0].Stderr = ""
	r.setBoard(plain)
	want("1 0 a", "2 0 b")
	again := plain.DeepCopy()
	again.ResourceVersion = "3"
	again.Spec.RankBy[0].Stderr = "metrics.se"
	r.setBoard(again)
	want("1 1 a [9.8040,10.1960]", "2 1 b [7.0400,10.9600]")
}

// checkBands checks the band tree: one band node a ranked row, sizes, search order.
func checkBands(t *testing.T, b *Board) {
	t.Helper()
	if b.bands.ord == nil {
		for _, n := range b.nodes {
			if n.band != nil {
				t.Errorf("row %s has a band on a board without ranges", n.row.Name)
			}
		}
		return
	}
	var prev *node
	var walk func(n *node) int
	walk = func(n *node) int {
		if n == nil {
			return 0
		}
		size := walk(n.left)
		if prev != nil && b.bands.ord.compare(prev, n) >= 0 {
			t.Errorf("band order broken: %s before %s", prev.row.Name, n.row.Name)
		}
		prev = n
		size += 1 + walk(n.right)
		if int(n.size) != size {
			t.Errorf("band size of %s = %d, want %d", n.row.Name, n.size, size)
		}
		return size
	}
	if got := walk(b.bands.root); got != len(b.nodes) {
		t.Errorf("band tree holds %d rows, nodes map %d", got, len(b.nodes))
	}
}

// bruteUpper computes rank_upper by the definition of docs/ranking.md, pair by pair,
// for boards ranked by metadata.tier asc (nulls last, exact), then metrics.score with
// metrics.se in direction dir: O(n^2), independent of the index.
func bruteUpper(rows []*hubv1alpha1.LeaderboardRow, dir hubv1alpha1.Direction) map[string]int {
	type parsed struct {
		tier, score, lo, hi float64
		hasTier, hasScore   bool
	}
	p := map[string]parsed{}
	for _, row := range rows {
		var x parsed
		x.tier, x.hasTier = numberAt(row, "metadata.tier")
		x.score, x.hasScore = numberAt(row, "metrics.score")
		x.lo, x.hi = x.score, x.score
		if se, ok := numberAt(row, "metrics.se"); ok && se >= 0 && x.hasScore {
			x.lo, x.hi = x.score-1.96*se, x.score+1.96*se
		}
		p[row.Name] = x
	}
	out := map[string]int{}
	for _, xr := range rows {
		x, n := p[xr.Name], 1
		for _, yr := range rows {
			y := p[yr.Name]
			switch {
			case y.hasTier && !x.hasTier:
				n++
			case y.hasTier != x.hasTier:
			case y.hasTier && y.tier < x.tier:
				n++
			case y.hasTier && y.tier > x.tier:
			case y.hasScore && !x.hasScore:
				n++
			case !y.hasScore || !x.hasScore:
			case dir == desc && y.lo > x.hi, dir == asc && y.hi < x.lo:
				n++
			}
		}
		out[xr.Name] = n
	}
	return out
}

// TestRankRangesRandom changes rows at random (values, stderrs, tiers, missing values,
// hide and delete) and checks every row's rank_upper against bruteUpper, in both
// directions.
func TestRankRangesRandom(t *testing.T) {
	for _, dir := range []hubv1alpha1.Direction{desc, asc} {
		t.Run(string(dir), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(17, uint64(len(dir))))
			rules := []hubv1alpha1.RankRule{
				rule("metadata.tier", asc, ""),
				stderrRule("metrics.score", "metrics.se", dir, ""),
				rule("metrics.cost", asc, ""),
			}
			r := NewRegistry()
			lb := testBoard(rules...)
			r.setBoard(lb)
			b := r.Board(lb.UID)
			latest := map[string]*hubv1alpha1.LeaderboardRow{}
			for step := range 2000 {
				name := fmt.Sprintf("r%02d", rng.IntN(60))
				metrics := fmt.Sprintf(`{"score": %d, "se": %s, "cost": %d}`, rng.IntN(20),
					[]string{"0", "0.5", "1", "2.5", "-1", `"x"`, "null"}[rng.IntN(7)], rng.IntN(3))
				if rng.IntN(10) == 0 {
					metrics = `{"se": 1}`
				}
				metadata := fmt.Sprintf(`{"tier": %d}`, rng.IntN(3))
				if rng.IntN(10) == 0 {
					metadata = `{}`
				}
				row := latest[name]
				switch {
				case row != nil && rng.IntN(8) == 0:
					r.deleteRow(row)
					delete(latest, name)
					continue
				case row != nil:
					row = changed(row, metrics)
					row.Spec.Metadata.Raw = []byte(metadata)
					if rng.IntN(6) == 0 {
						row.Spec.Visibility = hubv1alpha1.RowHide
					}
				default:
					row = testRow(name, step, metrics, metadata)
				}
				latest[name] = row
				r.setRow(row)
				if step%50 != 0 {
					continue
				}
				var ranked []*hubv1alpha1.LeaderboardRow
				for _, row := range latest {
					if Ranked(row) {
						ranked = append(ranked, row)
					}
				}
				slices.SortFunc(ranked, tieBreak)
				want := bruteUpper(ranked, dir)
				entries := b.Page(0, 1000)
				if len(entries) != len(ranked) {
					t.Fatalf("step %d: %d rows ranked, want %d", step, len(entries), len(ranked))
				}
				for _, e := range entries {
					if e.RankUpper != want[e.Row.Name] {
						t.Fatalf("step %d: rank_upper of %s = %d, want %d (%s %s)", step, e.Row.Name,
							e.RankUpper, want[e.Row.Name], e.Row.Spec.Metadata.Raw, e.Row.Spec.Metrics.Raw)
					}
					if e.RankUpper > e.Rank || e.RankUpper < 1 {
						t.Fatalf("step %d: %s ranks %d with rank_upper %d", step, e.Row.Name, e.Rank, e.RankUpper)
					}
				}
				if diff := cmp.Diff(ranges(Sort(rules, ranked)), ranges(entries)); diff != "" {
					t.Fatalf("step %d: index against Sort (-Sort +index):\n%s", step, diff)
				}
				checkTree(t, b)
				checkBands(t, b)
			}
		})
	}
}

func TestIntervalOf(t *testing.T) {
	se := stderrRule("metrics.x", "metrics.se", desc, "")
	iv := intervalRule("metrics.x", "metrics.a.lo", "metrics.a.hi", desc)
	for _, tc := range []struct {
		rule    hubv1alpha1.RankRule
		metrics string
		want    Interval
	}{
		{se, `{"x": 1, "se": 0.5}`, Interval{0.02, 1.98, true}},
		{se, `{"x": 1, "se": 0}`, Interval{1, 1, true}},
		{se, `{"x": 1, "se": -0.5}`, Interval{}},
		{se, `{"x": 1, "se": "0.5"}`, Interval{}},
		{se, `{"x": 1, "se": false}`, Interval{}},
		{se, `{"x": 1, "se": null}`, Interval{}},
		{se, `{"x": 1}`, Interval{}},
		{se, `{"x": 1, "se": 1e308}`, Interval{}},
		{iv, `{"x": 1, "a": {"lo": 0, "hi": 2}}`, Interval{0, 2, true}},
		{iv, `{"x": 1, "a.lo": 1, "a.hi": 1}`, Interval{1, 1, true}},
		{iv, `{"x": 3, "a": {"lo": 0, "hi": 2}}`, Interval{}},
		{iv, `{"x": 1, "a": {"lo": 0}}`, Interval{}},
		{rule("metrics.x", desc, ""), `{"x": 1, "se": 1}`, Interval{}},
	} {
		row := testRow("r", 0, tc.metrics, "")
		got := IntervalOf(&tc.rule, 1, row)
		if tc.metrics[6] == '3' {
			got = IntervalOf(&tc.rule, 3, row)
		}
		if math.Abs(got.Low-tc.want.Low) > 1e-12 || math.Abs(got.High-tc.want.High) > 1e-12 || got.OK != tc.want.OK {
			t.Errorf("IntervalOf(%+v, %s) = %+v, want %+v", tc.rule, tc.metrics, got, tc.want)
		}
	}
}

// TestFind: Find answers each ranked row's rank and range as Page does, and false for
// rows that are not ranked.
func TestFind(t *testing.T) {
	for _, tc := range append(rangeCases, struct {
		name  string
		rules []hubv1alpha1.RankRule
		rows  []*hubv1alpha1.LeaderboardRow
		want  []string
	}{name: "no rules", rows: []*hubv1alpha1.LeaderboardRow{testRow("a", 0, "", ""), testRow("b", 1, "", ""), testRow("c", 2, "", "")}}) {
		r := NewRegistry()
		lb := testBoard(tc.rules...)
		r.setBoard(lb)
		for _, row := range tc.rows {
			r.setRow(row)
		}
		hidden := testRow("hidden", 99, `{}`, "")
		hidden.Spec.Visibility = hubv1alpha1.RowHide
		r.setRow(hidden)
		b := r.Board(lb.UID)
		for _, e := range b.Page(0, 100) {
			got, ok := b.Find(e.Row.UID)
			if !ok || got != e {
				t.Errorf("%s: Find(%s) = %+v, %v; want %+v", tc.name, e.Row.Name, got, ok, e)
			}
		}
		if _, ok := b.Find(hidden.UID); ok {
			t.Errorf("%s: Find(hidden row) = true", tc.name)
		}
	}
}

func TestMembers(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		want []string
		ok   bool
	}{
		{`{}`, nil, true},
		{` { "a" : 1 , "b\u0041":{"c":[1,2]}, "a": "x" } `, []string{`a=1`, `bA={"c":[1,2]}`, `a="x"`}, true},
		{`{"a":1`, []string{"a=1"}, false},
		{`[1]`, nil, false},
		{`{"a" 1}`, nil, false},
		{`{"a":1}x`, []string{"a=1"}, false},
	} {
		var got []string
		ok := Members([]byte(tc.doc), func(k string, raw []byte) { got = append(got, k+"="+string(raw)) })
		if ok != tc.ok || !slices.Equal(got, tc.want) {
			t.Errorf("Members(%s) = %q, %v; want %q, %v", tc.doc, got, ok, tc.want, tc.ok)
		}
	}
}
