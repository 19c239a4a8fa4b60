package web

import (
	"unsafe"

	"k8s.io/apimachinery/pkg/types"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/lru"
	"podium.dev/podium/internal/ranking"
	"podium.dev/podium/internal/wire"
)

// MaxSortRows is the largest board the pages sort by a column other than rank. The
// rank index keeps one order per board; any other order is a sort of every ranked
// row (O(n log n) with a JSON decode per row) done on the request that first asks for
// it and kept for the next pages until the board changes. Above this size the page
// offers no column sorting and shows rank order, so a reader cannot make the operator
// sort 100,000 rows per click.
const MaxSortRows = 20000

// sortCacheSize bounds the sorted orders kept (each holds one pointer pair per row).
const sortCacheSize = 8

// Entry is one ranked row: its competition rank on the board (and its rank range on
// boards whose rules name an uncertainty) and the shared cached object (read-only).
type Entry = ranking.Entry

// Ranked is a board's rank index (the ranking package's Board).
type Ranked interface {
	// Len is the number of ranked rows.
	Len() int
	// Version changes whenever what is served from the board changes.
	Version() uint64
	// Page returns rows in rank order.
	Page(offset, limit int) []Entry
	// Progress returns the rows that moved the board's state of the art, oldest first
	// (a summary the index keeps: the progress chart walks no rows).
	Progress() []ranking.Record
}

// SortFunc orders rows by ranking rules, with the rank index's comparison of values
// (nulls last unless asked, booleans as 0/1, strings case-insensitive) and its
// deterministic order inside ties.
type SortFunc func(rules []hubv1alpha1.RankRule, rows []*hubv1alpha1.LeaderboardRow) []*hubv1alpha1.LeaderboardRow

type sortKey struct {
	board   types.UID
	version uint64
	column  string
	dir     hubv1alpha1.Direction
	// verified: the verified rows only.
	verified bool
}

// verifiedRows is the verified rows of ranked, in rank order with their ranks on the
// board (one walk of the board; the page offers it up to MaxSortRows rows).
func verifiedRows(ranked Ranked) Ranked {
	out := filtered{version: ranked.Version()}
	for _, e := range ranked.Page(0, ranked.Len()) {
		if wire.Verified(e.Row) {
			out.entries = append(out.entries, e)
		}
	}
	return out
}

// filtered is a subset of a board's ranked rows.
type filtered struct {
	entries []Entry
	version uint64
}

func (f filtered) Len() int                   { return len(f.entries) }
func (f filtered) Version() uint64            { return f.version }
func (f filtered) Progress() []ranking.Record { return nil }
func (f filtered) Page(offset, limit int) []Entry {
	if offset >= len(f.entries) {
		return nil
	}
	return f.entries[offset:min(offset+limit, len(f.entries))]
}

// entryBytes is what one kept Entry costs.
const entryBytes = int64(unsafe.Sizeof(Entry{}))

// entrySize counts what a kept order costs: one Entry a row.
func entrySize(e []Entry) int64 { return int64(len(e)) * entryBytes }

// newSortCache keeps the few most recently used column orders.
func newSortCache() *lru.Cache[sortKey, []Entry] {
	return lru.New[sortKey](sortCacheSize, sortCacheSize*MaxSortRows*entryBytes, sortCacheSize*MaxSortRows*entryBytes, entrySize)
}

// sortByColumn returns every ranked row ordered by the column's accessor (its sort
// value, not the display accessor), ties broken by the board's own rules and so by
// rank; each entry keeps its rank on the board.
func sortByColumn(sortFn SortFunc, ranked Ranked, board *hubv1alpha1.Leaderboard, col hubv1alpha1.Column, dir hubv1alpha1.Direction) []Entry {
	all := ranked.Page(0, ranked.Len())
	rank := make(map[types.UID]Entry, len(all))
	rows := make([]*hubv1alpha1.LeaderboardRow, len(all))
	for i, e := range all {
		rank[e.Row.UID] = e
		rows[i] = e.Row
	}
	rules := append([]hubv1alpha1.RankRule{{Accessor: col.Accessor, Direction: dir}}, board.Spec.RankBy...)
	for i := range rules {
		// Only the order is needed here (each row keeps its rank and range from the
		// index): without an uncertainty the sort builds no rank ranges.
		rules[i].Stderr, rules[i].IntervalLow, rules[i].IntervalHigh = "", "", ""
	}
	sorted := sortFn(rules, rows)
	out := make([]Entry, len(sorted))
	for i, r := range sorted {
		out[i] = rank[r.UID]
		out[i].Row = r
	}
	return out
}
