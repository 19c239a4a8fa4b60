package ranking

import (
	"slices"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// node is one ranked row in a board's treap: a binary search tree in rank order that is
// also a heap on random priorities, so its expected depth is O(log n) whatever the
// order of inserts, and each node counts its subtree so the k-th row is found in
// O(log n). About 64 bytes plus the key (32 bytes a rule).
type node struct {
	left, right *node
	// row is the informer's cached object, shared and read-only.
	row *hubv1alpha1.LeaderboardRow
	// key holds the row's values for the board's rules, parsed once.
	key []value
	// band is the row's place in the board's band tree (rank ranges), nil when no rule
	// names an uncertainty.
	band *band
	size int32
	prio uint32
}

func sizeOf(n *node) int {
	if n == nil {
		return 0
	}
	return int(n.size)
}

func (n *node) resize() { n.size = int32(1 + sizeOf(n.left) + sizeOf(n.right)) }

// compare is the total order of the index: the rules, then creation time and UID.
func (o *order) compare(a, b *node) int {
	if c := o.rulesCompare(a.key, b.key); c != 0 {
		return c
	}
	return tieBreak(a.row, b.row)
}

func sortNodes(o *order, nodes []*node) { slices.SortFunc(nodes, o.compare) }

// treap is an order-statistic treap under an order.
type treap struct {
	root *node
	ord  *order
	rnd  uint64
}

// nextPrio is a splitmix64 step: cheap, and good enough to balance a treap.
func (t *treap) nextPrio() uint32 {
	t.rnd += 0x9e3779b97f4a7c15
	z := t.rnd
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return uint32(z ^ (z >> 31))
}

func (t *treap) len() int { return sizeOf(t.root) }

// insert adds n, which must not be in the tree.
func (t *treap) insert(n *node) {
	n.left, n.right, n.size = nil, nil, 1
	n.prio = t.nextPrio()
	t.root = t.insertAt(t.root, n)
}

func (t *treap) insertAt(root, n *node) *node {
	if root == nil {
		return n
	}
	if n.prio > root.prio {
		n.left, n.right = t.split(root, n)
		n.resize()
		return n
	}
	if t.ord.compare(n, root) < 0 {
		root.left = t.insertAt(root.left, n)
	} else {
		root.right = t.insertAt(root.right, n)
	}
	root.size++
	return root
}

// split splits a subtree into the nodes before n and the nodes after it.
func (t *treap) split(root, n *node) (before, after *node) {
	if root == nil {
		return nil, nil
	}
	if t.ord.compare(root, n) < 0 {
		root.right, after = t.split(root.right, n)
		root.resize()
		return root, after
	}
	before, root.left = t.split(root.left, n)
	root.resize()
	return before, root
}

// remove takes n out of the tree, found by its key; it reports whether n was there.
func (t *treap) remove(n *node) bool {
	var found bool
	t.root, found = t.removeAt(t.root, n)
	return found
}

func (t *treap) removeAt(root, n *node) (*node, bool) {
	if root == nil {
		return nil, false
	}
	if root == n {
		return merge(root.left, root.right), true
	}
	var found bool
	if t.ord.compare(n, root) < 0 {
		root.left, found = t.removeAt(root.left, n)
	} else {
		root.right, found = t.removeAt(root.right, n)
	}
	if found {
		root.size--
	}
	return root, found
}

// merge joins two subtrees whose every node of a is before every node of b.
func merge(a, b *node) *node {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	case a.prio > b.prio:
		a.right = merge(a.right, b)
		a.resize()
		return a
	}
	b.left = merge(a, b.left)
	b.resize()
	return b
}

// countBefore counts the nodes whose key is before key on the rules alone: the
// competition rank of a row with that key is countBefore+1. O(log n): the rules are a
// prefix of the tree's order, so the nodes before form a left part of the tree.
func (t *treap) countBefore(key []value) int {
	count := 0
	for x := t.root; x != nil; {
		if t.ord.rulesCompare(x.key, key) < 0 {
			count += sizeOf(x.left) + 1
			x = x.right
		} else {
			x = x.left
		}
	}
	return count
}

// position counts the nodes before n in the tree's whole order (n must be in the tree).
func (t *treap) position(n *node) int {
	count := 0
	for x := t.root; x != nil; {
		switch c := t.ord.compare(x, n); {
		case c == 0:
			return count + sizeOf(x.left)
		case c < 0:
			count += sizeOf(x.left) + 1
			x = x.right
		default:
			x = x.left
		}
	}
	return count
}

// walk calls fn on up to limit nodes in order, starting at position offset (from 0):
// O(log n) to seek, then O(1) amortized a node.
func (t *treap) walk(offset, limit int, fn func(*node)) {
	if offset < 0 || limit <= 0 || offset >= t.len() {
		return
	}
	// stack holds the ancestors whose left subtree holds the next nodes, then the
	// current node on top.
	stack := make([]*node, 0, 64)
	for x, k := t.root, offset; x != nil; {
		ls := sizeOf(x.left)
		switch {
		case k < ls:
			stack = append(stack, x)
			x = x.left
		case k == ls:
			stack = append(stack, x)
			x = nil
		default:
			k -= ls + 1
			x = x.right
		}
	}
	for ; limit > 0 && len(stack) > 0; limit-- {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		fn(x)
		for y := x.right; y != nil; y = y.left {
			stack = append(stack, y)
		}
	}
}
