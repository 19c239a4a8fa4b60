package ranking

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

const benchRows = 100_000

var benchRules = []hubv1alpha1.RankRule{
	{Accessor: "metrics.reward", Direction: hubv1alpha1.Descending},
	{Accessor: "metrics.cost", Direction: hubv1alpha1.Ascending},
}

// benchRowSet makes n valid rows of one board, with rewards that tie often.
func benchRowSet(n int, seed uint64) []*hubv1alpha1.LeaderboardRow {
	rng := rand.New(rand.NewPCG(seed, 1))
	rows := make([]*hubv1alpha1.LeaderboardRow, n)
	for i := range rows {
		rows[i] = testRow(fmt.Sprintf("row-%06d", i), i/50,
			fmt.Sprintf(`{"reward": %.2f, "cost": %d}`, float64(rng.IntN(10_000))/100, rng.IntN(100)), "")
	}
	return rows
}

var benchFixture = sync.OnceValues(func() (*Registry, *Board) {
	r := NewRegistry()
	lb := testBoard(benchRules...)
	r.setBoard(lb)
	for _, row := range benchRowSet(benchRows, 1) {
		r.setRow(row)
	}
	return r, r.Board(lb.UID)
})

// BenchmarkUpdateOneRow100k is one informer update of a row whose reward changed, in a
// board of 100k ranked rows: parsing its key, taking it out and putting it back in place.
func BenchmarkUpdateOneRow100k(b *testing.B) {
	r, board := benchFixture()
	rng := rand.New(rand.NewPCG(7, 7))
	// Two versions of 2,048 rows; applying them in turn moves a row every time.
	rows := board.Page(0, benchRows)
	const n = 2048
	updates := make([]*hubv1alpha1.LeaderboardRow, 2*n)
	for i := range n {
		row := rows[rng.IntN(len(rows))].Row
		updates[i] = changed(row, fmt.Sprintf(`{"reward": %d.5, "cost": 1}`, rng.IntN(100)))
		updates[n+i] = changed(row, fmt.Sprintf(`{"reward": %d.25, "cost": 2}`, rng.IntN(100)))
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r.setRow(updates[i%len(updates)])
	}
	b.StopTimer()
	if board.Len() != benchRows {
		b.Fatalf("Len() = %d after updates, want %d", board.Len(), benchRows)
	}
}

func benchmarkPage(b *testing.B, page int) {
	_, board := benchFixture()
	const size = 50
	b.ReportAllocs()
	for b.Loop() {
		if got := board.Page((page-1)*size, size); len(got) != size {
			b.Fatalf("Page() returned %d rows", len(got))
		}
	}
}

// BenchmarkPage1 reads the first page of 50 of a 100k-row board.
func BenchmarkPage1(b *testing.B) { benchmarkPage(b, 1) }

// BenchmarkPage2000 reads the last page of 50 of a 100k-row board.
func BenchmarkPage2000(b *testing.B) { benchmarkPage(b, 2000) }

// BenchmarkIndexMemory100k reports the heap the index of a 100k-row board takes, the
// cached row objects not counted (they belong to the informer).
func BenchmarkIndexMemory100k(b *testing.B) {
	rows := benchRowSet(benchRows, 2)
	var perRow float64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		r := NewRegistry()
		lb := testBoard(benchRules...)
		r.setBoard(lb)
		for _, row := range rows {
			r.setRow(row)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		perRow = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / benchRows
		runtime.KeepAlive(r)
	}
	b.ReportMetric(perRow, "B/row")
}

// BenchmarkRulesChange100k re-sorts a 100k-row board after its rankBy changed.
func BenchmarkRulesChange100k(b *testing.B) {
	r, board := benchFixture()
	lb := testBoard(benchRules...)
	flipped := testBoard(benchRules[1], benchRules[0])
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		next := lb
		if i%2 == 0 {
			next = flipped
		}
		next = next.DeepCopy()
		next.ResourceVersion = fmt.Sprint(i + 2)
		r.setBoard(next)
	}
	b.StopTimer()
	r.setBoard(lb) // back to the fixture's rules
	if board.Len() != benchRows {
		b.Fatalf("Len() = %d, want %d", board.Len(), benchRows)
	}
}

// rangeRules rank by reward with its standard error (rank ranges), then cost.
var rangeRules = []hubv1alpha1.RankRule{
	{Accessor: "metrics.reward", Direction: hubv1alpha1.Descending, Stderr: "metrics.se"},
	{Accessor: "metrics.cost", Direction: hubv1alpha1.Ascending},
}

// rangeRowSet makes n valid rows with rewards that tie often and standard errors from
// 0 to 0.05, so intervals overlap a lot and ranges are wide.
func rangeRowSet(n int, seed uint64) []*hubv1alpha1.LeaderboardRow {
	rng := rand.New(rand.NewPCG(seed, 1))
	rows := make([]*hubv1alpha1.LeaderboardRow, n)
	for i := range rows {
		rows[i] = testRow(fmt.Sprintf("row-%06d", i), i/50, fmt.Sprintf(`{"reward": %.4f, "se": %.4f, "cost": %d}`,
			float64(rng.IntN(10_000))/10_000, float64(rng.IntN(500))/10_000, rng.IntN(100)), "")
	}
	return rows
}

var rangeFixture = sync.OnceValues(func() (*Registry, *Board) {
	r := NewRegistry()
	lb := testBoard(rangeRules...)
	r.setBoard(lb)
	for _, row := range rangeRowSet(benchRows, 1) {
		r.setRow(row)
	}
	return r, r.Board(lb.UID)
})

// BenchmarkRangesUpdateOneRow100k is BenchmarkUpdateOneRow100k on a board with rank
// ranges: the row also moves in the band tree.
func BenchmarkRangesUpdateOneRow100k(b *testing.B) {
	r, board := rangeFixture()
	rng := rand.New(rand.NewPCG(7, 7))
	rows := board.Page(0, benchRows)
	const n = 2048
	updates := make([]*hubv1alpha1.LeaderboardRow, 2*n)
	for i := range n {
		row := rows[rng.IntN(len(rows))].Row
		updates[i] = changed(row, fmt.Sprintf(`{"reward": 0.%d5, "se": 0.01, "cost": 1}`, rng.IntN(100)))
		updates[n+i] = changed(row, fmt.Sprintf(`{"reward": 0.%d25, "se": 0.02, "cost": 2}`, rng.IntN(100)))
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r.setRow(updates[i%len(updates)])
	}
	b.StopTimer()
	if board.Len() != benchRows {
		b.Fatalf("Len() = %d after updates, want %d", board.Len(), benchRows)
	}
}

func benchmarkRangesPage(b *testing.B, page int) {
	_, board := rangeFixture()
	const size = 50
	b.ReportAllocs()
	for b.Loop() {
		got := board.Page((page-1)*size, size)
		if len(got) != size || got[0].RankUpper < 1 {
			b.Fatalf("Page() returned %d rows, rank_upper %d", len(got), got[0].RankUpper)
		}
	}
}

// BenchmarkRangesPage1 reads the first page of 50 of a 100k-row board with the rank
// range of each row (one band tree count a row).
func BenchmarkRangesPage1(b *testing.B) { benchmarkRangesPage(b, 1) }

// BenchmarkRangesPage2000 reads the last page of 50 of it.
func BenchmarkRangesPage2000(b *testing.B) { benchmarkRangesPage(b, 2000) }

// BenchmarkRangesIndexMemory100k is BenchmarkIndexMemory100k with rank ranges.
func BenchmarkRangesIndexMemory100k(b *testing.B) {
	rows := rangeRowSet(benchRows, 2)
	var perRow float64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		r := NewRegistry()
		lb := testBoard(rangeRules...)
		r.setBoard(lb)
		for _, row := range rows {
			r.setRow(row)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		perRow = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / benchRows
		runtime.KeepAlive(r)
	}
	b.ReportMetric(perRow, "B/row")
}
