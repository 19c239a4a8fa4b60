package ranking

import (
	"strings"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// order is a board's ranking: its rules, and for each rule whether its values are
// compared as strings.
//
// A number against a string compares as strings (docs/ranking.md). Taken pair by pair
// that is not an order (9 < 10 as numbers, "10" < "5" and "5" < "9" as strings: a
// cycle), and an index needs one. So a rule whose ranked values mix numbers and strings
// compares all of its values as strings (numbers by their JavaScript string form);
// a rule whose values are all numbers compares numerically. The index counts numbers and
// strings per rule and re-sorts a board when a rule enters or leaves the mixed state,
// which only happens when a schema lets one property hold both.
type order struct {
	rules []hubv1alpha1.RankRule
	// asText[i] is true when rule i compares every value as a string.
	asText []bool
}

// rulesCompare compares two keys on the rules only: 0 means the rows tie and share a
// rank.
func (o *order) rulesCompare(a, b []value) int {
	for i := range o.rules {
		if c := compareRule(&o.rules[i], a[i], b[i], o.asText[i]); c != 0 {
			return c
		}
	}
	return 0
}

// compareRule orders two values by one rule. Missing values go last whatever the
// direction, unless the rule says nulls first.
func compareRule(r *hubv1alpha1.RankRule, a, b value, asText bool) int {
	switch {
	case a.k == missing && b.k == missing:
		return 0
	case a.k == missing || b.k == missing:
		c := 1 // a is missing: after b
		if b.k == missing {
			c = -1
		}
		if r.Nulls == hubv1alpha1.NullsFirst {
			c = -c
		}
		return c
	}
	c := compareValues(a, b, asText)
	if r.Direction == hubv1alpha1.Descending {
		c = -c
	}
	return c
}

// compareValues orders two present values ascending.
func compareValues(a, b value, asText bool) int {
	if a.k == number && b.k == number && !asText {
		switch {
		case a.n < b.n:
			return -1
		case a.n > b.n:
			return 1
		}
		return 0
	}
	if a.k == text && b.k == text {
		return strings.Compare(a.s, b.s)
	}
	// At least one number, compared as a string. The digits are written on the stack.
	var bufA, bufB [32]byte
	return compareBytes(textOf(bufA[:0], a), textOf(bufB[:0], b))
}

func textOf(buf []byte, v value) []byte {
	if v.k == number {
		return numberText(buf, v.n)
	}
	return append(buf, v.s...)
}

func compareBytes(a, b []byte) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(a) < len(b):
		return -1
	case len(a) > len(b):
		return 1
	}
	return 0
}

// tieBreak orders rows that tie on every rule, and orders rows when there are no
// rules: creation time, then id (both as recorded, hubv1alpha1.CreatedAt and ID, so that
// a restore keeps the order), the same on every replica and run.
func tieBreak(a, b *hubv1alpha1.LeaderboardRow) int {
	ca, cb := hubv1alpha1.CreatedAt(a), hubv1alpha1.CreatedAt(b)
	if c := ca.Compare(cb.Time); c != 0 {
		return c
	}
	return strings.Compare(hubv1alpha1.ID(a), hubv1alpha1.ID(b))
}

// kindCounts counts one rule's ranked values by kind, to know when it mixes.
type kindCounts struct{ numbers, texts int }

func (k kindCounts) mixed() bool { return k.numbers > 0 && k.texts > 0 }

func (k *kindCounts) add(v value, delta int) {
	switch v.k {
	case number:
		k.numbers += delta
	case text:
		k.texts += delta
	}
}

// Sort ranks a batch of rows with a board's rules, as the index would (for the CLI),
// with their rank ranges when a rule names an uncertainty: O(n log n). It filters nothing, so the caller decides which rows are ranked. Rows must be non-nil.
func Sort(rules []hubv1alpha1.RankRule, rows []*hubv1alpha1.LeaderboardRow) []Entry {
	o := &order{rules: rules, asText: make([]bool, len(rules))}
	counts := make([]kindCounts, len(rules))
	nodes := make([]*node, len(rows))
	for i, row := range rows {
		nodes[i] = &node{row: row, key: keyOf(rules, row)}
		for j := range rules {
			counts[j].add(nodes[i].key[j], 1)
		}
	}
	for j := range rules {
		o.asText[j] = counts[j].mixed()
	}
	sortNodes(o, nodes)
	var bands treap
	if bo := bandOrder(o); bo != nil {
		bands = buildBands(bo, nodes, 1)
	}
	out := make([]Entry, len(nodes))
	for i, n := range nodes {
		out[i] = Entry{Rank: i + 1, Row: n.row}
		if i > 0 && len(rules) > 0 && o.rulesCompare(nodes[i-1].key, n.key) == 0 {
			out[i].Rank = out[i-1].Rank
		}
		if bands.ord != nil {
			out[i].RankUpper, out[i].Interval = bands.upperOf(n.band), n.band.iv
		}
	}
	return out
}
