package ranking

import (
	"slices"
	"time"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/rowhistory"
	"podium.dev/podium/internal/wire"
)

// Record is a row that moved a board's state of the art (docs/ranking.md, "Progress
// records"): at At it ranked strictly ahead, on the board's rules, of every row whose
// values were set before, and ahead of (or, tied, created before) every row set at the
// same time. The web's progress chart draws them as a step line.
type Record struct {
	// Row is the informer's cached object: read-only.
	Row *hubv1alpha1.LeaderboardRow
	// At is when the row's current values were set (SetAt).
	At time.Time
	// Score is the row's value on the first rule, when it is a number (HasScore).
	Score    float64
	HasScore bool
}

// SetAt is when a row's current values were set, as far as the cache knows: its last
// change (the cache keeps the time of the newest history entry), else the time its
// verified run ran, else its creation time.
func SetAt(row *hubv1alpha1.LeaderboardRow) time.Time {
	if at := rowhistory.LastChange(row); at != nil {
		return at.Time
	}
	if wire.Verified(row) && row.Status.Provenance.RanAt != nil {
		return row.Status.Provenance.RanAt.Time
	}
	return hubv1alpha1.CreatedAt(row).Time
}

// eventBefore orders rows by when their values were set; creation time and UID break
// ties, so the order is total.
func eventBefore(a, b *hubv1alpha1.LeaderboardRow) bool {
	ta, tb := SetAt(a), SetAt(b)
	if !ta.Equal(tb) {
		return ta.Before(tb)
	}
	if c := tieBreak(a, b); c != 0 {
		return c < 0
	}
	return a.UID < b.UID
}

// Progress returns the board's records, oldest first: a small summary the writer keeps
// as rows change (O(records) per change; one walk of the board only when a record
// itself changes or goes, or the board is re-sorted), so a reader never walks the board.
// It is empty when the board has no rules.
func (b *Board) Progress() []Record {
	if b == nil {
		return nil
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.published
}

// inProgress reports whether a node takes part in the progress: it has a value on the
// first rule (a row without one never sets the state of the art, nor holds it back).
func (b *Board) inProgress(n *node) bool {
	return len(b.tree.ord.rules) > 0 && n.key[0].k != missing
}

// recordIndex is n's place among the board's records, -1 when it is not one.
func (b *Board) recordIndex(n *node) int { return slices.Index(b.records, n) }

// recomputeRecords walks the board in rank order once: among rows tied on the rules,
// the one set first is a record when it was set before every row ranked strictly
// ahead of it. O(n).
func (b *Board) recomputeRecords() { b.recordsFrom(0, nil) }

// progressChanged updates the records after n (in place in the tree) changed: it was
// the record at index i, or no record (i < 0).
func (b *Board) progressChanged(i int, n *node) {
	if i < 0 {
		b.addCandidate(n)
		return
	}
	b.recordChanged(i, n)
}

// recordChanged updates the records after the record at index i changed (its row is
// now n, in place in the tree) or went (n nil).
func (b *Board) recordChanged(i int, n *node) {
	b.recordsFrom(i, n)
	if n != nil {
		b.addCandidate(n)
	}
}

// recordsFrom recomputes the records from index i on, leaving out the node skip. The
// records before i stand: each depends only on the rows set before it, which skip is
// not among (it was set after them, or it is the record at i). Every later record
// ranks strictly ahead of the record p at i-1 and was set after it, so only the rows
// ranked ahead of p are walked: O(log n + rows ahead of p), a handful when the leader
// changes. From i = 0 the whole board is walked.
func (b *Board) recordsFrom(i int, skip *node) {
	var out []*node
	var first *time.Time // when the first of the rows ahead was set
	var group []*node
	flush := func() {
		if len(group) == 0 {
			return
		}
		e := group[0]
		for _, n := range group[1:] {
			if eventBefore(n.row, e.row) {
				e = n
			}
		}
		// A row set at the same time as one ahead of it is not a record: at that
		// time the best was the other one.
		if at := SetAt(e.row); first == nil || at.Before(*first) {
			out = append(out, e)
			first = &at
		}
		group = group[:0]
	}
	if len(b.tree.ord.rules) > 0 {
		limit := b.tree.len()
		if i > 0 {
			limit = b.tree.countBefore(b.records[i-1].key)
		}
		var prev *node
		b.tree.walk(0, limit, func(n *node) {
			if n == skip || !b.inProgress(n) {
				return
			}
			if prev != nil && b.tree.ord.rulesCompare(prev.key, n.key) != 0 {
				flush()
			}
			group = append(group, n)
			prev = n
		})
		flush()
	}
	slices.Reverse(out)
	b.setRecords(append(slices.Clone(b.records[:i]), out...))
}

// addCandidate updates the records for a node that was not one and now stands where it
// is (new, or changed): O(records).
func (b *Board) addCandidate(n *node) {
	if !b.inProgress(n) {
		return
	}
	rs := b.records
	at := SetAt(n.row)
	// i is the number of records set strictly before n; j the end of those set at the
	// same time (one at most: two rows set at once are not both records).
	i, _ := slices.BinarySearchFunc(rs, at, func(r *node, at time.Time) int {
		if SetAt(r.row).Before(at) {
			return -1
		}
		return 1
	})
	if i > 0 && b.tree.ord.rulesCompare(rs[i-1].key, n.key) <= 0 {
		return // the best row set before it is as good or better
	}
	j := i
	if j < len(rs) && SetAt(rs[j].row).Equal(at) {
		c := b.tree.ord.rulesCompare(rs[j].key, n.key)
		if c < 0 || (c == 0 && eventBefore(rs[j].row, n.row)) {
			return // a row set at the same time is ahead of it
		}
		j++ // n takes its place
	}
	for j < len(rs) && b.tree.ord.rulesCompare(rs[j].key, n.key) >= 0 {
		j++ // later records no better than n are no longer records
	}
	out := make([]*node, 0, len(rs)-(j-i)+1)
	out = append(append(append(out, rs[:i]...), n), rs[j:]...)
	b.setRecords(out)
}

// setRecords keeps the records and publishes them to readers; the version changes, so
// that a chart kept by version is drawn again.
func (b *Board) setRecords(rs []*node) {
	pub := make([]Record, len(rs))
	for i, n := range rs {
		pub[i] = Record{Row: n.row, At: SetAt(n.row)}
		if v := n.key[0]; v.k == number {
			pub[i].Score, pub[i].HasScore = v.n, true
		}
	}
	b.records = rs
	b.mu.Lock()
	b.published = pub
	b.version.Add(1)
	b.mu.Unlock()
}

// ProgressOf computes the records of rows under rules from scratch, by definition: in
// the order the rows' values were set, each row ranked strictly ahead of the best one
// before it. For tests and for boards that are not indexed.
func ProgressOf(rules []hubv1alpha1.RankRule, rows []*hubv1alpha1.LeaderboardRow) []Record {
	if len(rules) == 0 {
		return nil
	}
	ord := &order{rules: rules, asText: make([]bool, len(rules))}
	counts := make([]kindCounts, len(rules))
	nodes := make([]*node, 0, len(rows))
	for _, row := range rows {
		n := &node{row: row, key: keyOf(rules, row)}
		addKey(counts, n.key, 1)
		nodes = append(nodes, n)
	}
	for i := range counts {
		ord.asText[i] = counts[i].mixed()
	}
	slices.SortFunc(nodes, func(a, b *node) int {
		if eventBefore(a.row, b.row) {
			return -1
		}
		return 1
	})
	var out []Record
	var best *node
	for k := 0; k < len(nodes); {
		// The rows set at one time: the one ahead of the others (tied: created first)
		// is a record if it beats every row set before.
		at := SetAt(nodes[k].row)
		var top *node
		for ; k < len(nodes) && SetAt(nodes[k].row).Equal(at); k++ {
			n := nodes[k]
			if n.key[0].k != missing && (top == nil || ord.rulesCompare(n.key, top.key) < 0) {
				top = n
			}
		}
		if top != nil && (best == nil || ord.rulesCompare(top.key, best.key) < 0) {
			best = top
			r := Record{Row: top.row, At: at}
			if top.key[0].k == number {
				r.Score, r.HasScore = top.key[0].n, true
			}
			out = append(out, r)
		}
	}
	return out
}

// ScoreOf is a row's number at a rule's accessor (false when it has none there), as
// the rank index reads it.
func ScoreOf(acc string, row *hubv1alpha1.LeaderboardRow) (float64, bool) {
	k := keyOf([]hubv1alpha1.RankRule{{Accessor: acc}}, row)
	if k[0].k != number {
		return 0, false
	}
	return k[0].n, true
}
