package ranking

import (
	"hash/fnv"
	"slices"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/types"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// Entry is one ranked row of a page.
type Entry struct {
	// Rank is the row's standard competition rank (1, 2, 2, 4): rows equal on every
	// rule share it.
	Rank int
	// RankUpper is the best rank the row's uncertainty supports: 1 + the number of
	// rows that lie entirely above it (docs/ranking.md, "Rank ranges"). 0 when no rule
	// of the board names an uncertainty.
	RankUpper int
	// Interval is the row's uncertainty interval on the uncertain rule, if it has one.
	Interval Interval
	// Row is the informer's cached object, shared with every reader: read-only.
	Row *hubv1alpha1.LeaderboardRow
}

// Board is the rank index of one leaderboard: its ranked rows (display and valid) in
// rank order. Many readers page it at once; the Registry is its only writer.
type Board struct {
	version atomic.Uint64

	// mu guards tree: readers page under RLock, the writer swaps nodes under Lock.
	mu   sync.RWMutex
	tree treap
	// bands is the band tree behind rank_upper (band.go); its ord is nil when no rule
	// names an uncertainty.
	bands treap

	// nodes finds a ranked row's node by UID. The writer changes it under mu's write
	// lock; readers (Find) read it under the read lock.
	nodes map[types.UID]*node
	// published is the board's progress (progress.go) as readers see it, under mu.
	published []Record

	// The fields below are read and written by the writer only, which the Registry
	// serializes; readers never touch them.
	uid      types.UID
	key      boardKey
	revision string
	counts   []kindCounts
	// records are the nodes of the rows that moved the state of the art, in the order
	// their values were set (progress.go).
	records []*node
}

func newBoard(lb *hubv1alpha1.Leaderboard, rows map[types.UID]*hubv1alpha1.LeaderboardRow) *Board {
	b := &Board{uid: lb.UID, key: keyOfBoard(lb), revision: lb.ResourceVersion}
	// Treap priorities need not be secret, only spread; seeding from the UID keeps a
	// board's shape reproducible.
	h := fnv.New64a()
	h.Write([]byte(lb.UID))
	b.tree.rnd = h.Sum64()
	all := make([]*hubv1alpha1.LeaderboardRow, 0, len(rows))
	for _, row := range rows {
		all = append(all, row)
	}
	b.rebuild(slices.Clone(lb.Spec.RankBy), all)
	return b
}

// Len is the number of ranked rows: displayed and valid.
func (b *Board) Len() int {
	if b == nil {
		return 0
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.tree.len()
}

// Version changes whenever what is served from this board changes: a ranked row, the
// order, the rules or the Leaderboard object itself. Readers may cache a page by it.
func (b *Board) Version() uint64 {
	if b == nil {
		return 0
	}
	return b.version.Load()
}

// Page returns up to limit rows in rank order from position offset (0 is the first
// row), with their ranks: O(log n + limit) at any depth. Past the end it returns nil.
func (b *Board) Page(offset, limit int) []Entry {
	if b == nil {
		return nil
	}
	offset = max(offset, 0)
	b.mu.RLock()
	defer b.mu.RUnlock()
	t := &b.tree
	n := t.len()
	if limit <= 0 || offset >= n {
		return nil
	}
	limit = min(limit, n-offset)
	out := make([]Entry, 0, limit)
	var prev *node
	t.walk(offset, limit, func(x *node) {
		var rank int
		switch {
		case len(t.ord.rules) == 0:
			// Without rules creation order ranks every row on its own.
			rank = offset + len(out) + 1
		case prev == nil:
			rank = t.countBefore(x.key) + 1
		case t.ord.rulesCompare(prev.key, x.key) == 0:
			rank = out[len(out)-1].Rank
		default:
			rank = offset + len(out) + 1
		}
		e := Entry{Rank: rank, Row: x.row}
		if b.bands.ord != nil {
			e.RankUpper, e.Interval = b.bands.upperOf(x.band), x.band.iv
		}
		out = append(out, e)
		prev = x
	})
	return out
}

// Find returns the ranked row with this UID with its rank (and range), or false when the
// row is not ranked on this board: O(log n).
func (b *Board) Find(uid types.UID) (Entry, bool) {
	if b == nil {
		return Entry{}, false
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	n := b.nodes[uid]
	if n == nil {
		return Entry{}, false
	}
	e := Entry{Row: n.row}
	if len(b.tree.ord.rules) == 0 {
		e.Rank = b.tree.position(n) + 1
	} else {
		e.Rank = b.tree.countBefore(n.key) + 1
	}
	if b.bands.ord != nil {
		e.RankUpper, e.Interval = b.bands.upperOf(n.band), n.band.iv
	}
	return e, true
}

// upsert puts a ranked row in place, or moves it if it changed: O(log n).
func (b *Board) upsert(row *hubv1alpha1.LeaderboardRow) {
	key := keyOf(b.tree.ord.rules, row)
	old := b.nodes[row.UID]
	var bnd *band
	if b.bands.ord != nil {
		bnd = bandOf(b.bands.ord, row, key)
	}
	if old != nil && slices.Equal(old.key, key) && (bnd == nil || sameBand(old.band, bnd)) {
		// Same place in the order (creation time and UID never change): swap the object.
		// A resync hands over an equal object: what is served does not change.
		b.mu.Lock()
		same := old.row.ResourceVersion == row.ResourceVersion
		old.row = row
		if old.band != nil {
			old.band.row = row
		}
		if !same {
			b.version.Add(1)
		}
		b.mu.Unlock()
		if !same {
			// The row's values may have been set at another time (its last change).
			b.progressChanged(b.recordIndex(old), old)
		}
		return
	}
	if old != nil {
		addKey(b.counts, old.key, -1)
	}
	addKey(b.counts, key, 1)
	if b.flips() {
		b.rebuild(b.tree.ord.rules, b.rowsWith(row.UID, row))
		return
	}
	record := -1
	if old != nil {
		record = b.recordIndex(old)
	}
	b.mu.Lock()
	n := old
	if n != nil {
		// Readers only reach nodes under the read lock, so the node can be reused.
		b.tree.remove(n)
		if n.band != nil {
			b.bands.remove(&n.band.node)
		}
	} else {
		n = &node{}
		b.nodes[row.UID] = n
	}
	n.row, n.key, n.band = row, key, bnd
	b.tree.insert(n)
	if bnd != nil {
		b.bands.insert(&bnd.node)
	}
	b.version.Add(1)
	b.mu.Unlock()
	b.progressChanged(record, n)
}

// remove takes a row out of the ranking (deleted, hidden or invalid): O(log n).
func (b *Board) remove(uid types.UID) {
	old := b.nodes[uid]
	if old == nil {
		return
	}
	addKey(b.counts, old.key, -1)
	if b.flips() {
		b.rebuild(b.tree.ord.rules, b.rowsWith(uid, nil))
		return
	}
	record := b.recordIndex(old)
	b.mu.Lock()
	b.tree.remove(old)
	if old.band != nil {
		b.bands.remove(&old.band.node)
	}
	delete(b.nodes, uid)
	b.version.Add(1)
	b.mu.Unlock()
	if record >= 0 {
		b.recordChanged(record, nil)
	}
}

// touch marks a change of the Leaderboard object that leaves the order as it is.
func (b *Board) touch() { b.version.Add(1) }

// setRules re-sorts the board under new rules: O(n log n).
func (b *Board) setRules(rules []hubv1alpha1.RankRule) {
	b.rebuild(slices.Clone(rules), b.rowsWith("", nil))
}

// clear empties a dropped board, for readers that still hold it.
func (b *Board) clear() {
	b.mu.Lock()
	b.tree.root = nil
	b.bands.root = nil
	b.nodes = map[types.UID]*node{}
	b.published = nil
	b.version.Add(1)
	b.mu.Unlock()
	b.records = nil
}

// rows returns the board's ranked rows, in no order.
func (b *Board) rows() map[types.UID]*hubv1alpha1.LeaderboardRow {
	out := make(map[types.UID]*hubv1alpha1.LeaderboardRow, len(b.nodes))
	for uid, n := range b.nodes {
		out[uid] = n.row
	}
	return out
}

// rowsWith returns the board's ranked rows with the row of uid replaced by row, or
// dropped when row is nil.
func (b *Board) rowsWith(uid types.UID, row *hubv1alpha1.LeaderboardRow) []*hubv1alpha1.LeaderboardRow {
	out := make([]*hubv1alpha1.LeaderboardRow, 0, len(b.nodes)+1)
	for id, n := range b.nodes {
		if id != uid {
			out = append(out, n.row)
		}
	}
	if row != nil {
		out = append(out, row)
	}
	return out
}

// flips reports whether the counts, updated for a change, say a rule must now compare
// differently (see order); the change then re-sorts the board.
func (b *Board) flips() bool {
	for i, c := range b.counts {
		if c.mixed() != b.tree.ord.asText[i] {
			return true
		}
	}
	return false
}

// rebuild sorts rows under rules into a new tree, built aside with new nodes so that
// readers keep paging the old one until the swap.
func (b *Board) rebuild(rules []hubv1alpha1.RankRule, rows []*hubv1alpha1.LeaderboardRow) {
	ord := &order{rules: rules, asText: make([]bool, len(rules))}
	counts := make([]kindCounts, len(rules))
	nodes := make(map[types.UID]*node, len(rows))
	sorted := make([]*node, 0, len(rows))
	for _, row := range rows {
		n := &node{row: row, key: keyOf(rules, row)}
		addKey(counts, n.key, 1)
		nodes[row.UID] = n
		sorted = append(sorted, n)
	}
	for i := range counts {
		ord.asText[i] = counts[i].mixed()
	}
	sortNodes(ord, sorted)
	t := treap{ord: ord, rnd: b.tree.rnd}
	t.root = t.build(sorted)
	var bands treap
	if bo := bandOrder(ord); bo != nil {
		bands = buildBands(bo, sorted, b.tree.rnd^0x5bd1e995)
	}

	b.mu.Lock()
	b.tree = t
	b.bands = bands
	b.nodes = nodes
	b.version.Add(1)
	b.mu.Unlock()
	b.counts = counts
	b.recomputeRecords()
}

// build makes a balanced treap of sorted nodes in O(n log n): the middle node is the
// root, recursively, and the priorities are drawn at random, sorted, and handed out
// highest first level by level, so the heap order holds and the priorities are what
// random inserts would have drawn.
func (t *treap) build(sorted []*node) *node {
	var mk func(s []*node) *node
	mk = func(s []*node) *node {
		if len(s) == 0 {
			return nil
		}
		mid := len(s) / 2
		n := s[mid]
		n.left, n.right = mk(s[:mid]), mk(s[mid+1:])
		n.resize()
		return n
	}
	root := mk(sorted)
	prios := make([]uint32, len(sorted))
	for i := range prios {
		prios[i] = t.nextPrio()
	}
	slices.Sort(prios)
	queue := make([]*node, 0, len(sorted))
	if root != nil {
		queue = append(queue, root)
	}
	for i := 0; i < len(queue); i++ {
		n := queue[i]
		n.prio = prios[len(prios)-1-i]
		if n.left != nil {
			queue = append(queue, n.left)
		}
		if n.right != nil {
			queue = append(queue, n.right)
		}
	}
	return root
}

func addKey(counts []kindCounts, key []value, delta int) {
	for i := range counts {
		counts[i].add(key[i], delta)
	}
}
