package ranking

import (
	"math"
	"slices"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/accessor"
)

// Z95 is the factor of a standard error in a 95% interval: value ± 1.96·stderr.
const Z95 = 1.96

// Interval is a row's uncertainty interval on its board's uncertain rule
// (docs/ranking.md, "Rank ranges"). OK is false when the row has none.
type Interval struct {
	Low, High float64
	OK        bool
}

// band is a row's place in a board's band tree, the index behind rank_upper. Its node's
// key is the row's values on the rules up to and including the uncertain rule, with the
// uncertain rule's value replaced by the interval's pessimistic bound (its low end under
// desc, its high end under asc). opt is the same with the optimistic bound: the rows
// that lie entirely above this one are exactly the rows whose band key is before opt on
// those rules, so rank_upper is one countBefore, O(log n).
type band struct {
	node
	opt []value
	iv  Interval
}

// uncertainRule is the index of the rule that names an uncertainty, or -1. The CRD
// allows at most one; should a board carry more, the first counts.
func uncertainRule(rules []hubv1alpha1.RankRule) int {
	for i := range rules {
		if rules[i].HasUncertainty() {
			return i
		}
	}
	return -1
}

// bandOrder is the order of the band tree of a board ordered by o, nil when no rule
// names an uncertainty: the rules up to the uncertain one, which alone carries the
// range; later rules only break ties and never widen a range.
func bandOrder(o *order) *order {
	u := uncertainRule(o.rules)
	if u < 0 {
		return nil
	}
	return &order{rules: o.rules[:u+1], asText: o.asText[:u+1]}
}

// bandOf computes a row's band under the band order bo, from its sort key.
func bandOf(bo *order, row *hubv1alpha1.LeaderboardRow, key []value) *band {
	u := len(bo.rules) - 1
	keys := make([]value, 2*(u+1))
	copy(keys, key[:u+1])
	copy(keys[u+1:], key[:u+1])
	b := &band{node: node{row: row, key: keys[:u+1]}, opt: keys[u+1:]}
	v := key[u]
	if v.k != number || bo.asText[u] {
		return b // no interval: a point at the value (or the missing value)
	}
	b.iv = IntervalOf(&bo.rules[u], v.n, row)
	if b.iv.OK {
		low, high := value{k: number, n: b.iv.Low}, value{k: number, n: b.iv.High}
		if bo.rules[u].Direction == hubv1alpha1.Descending {
			b.key[u], b.opt[u] = low, high
		} else {
			b.key[u], b.opt[u] = high, low
		}
	}
	return b
}

// IntervalOf reads a row's uncertainty interval for a rule whose value is the number v
// (docs/ranking.md, "Rank ranges"): value ± Z95·stderr for a stderr accessor, or the
// interval's bounds. The row has none (OK false) when the rule names no uncertainty, or
// the stderr is missing, not a JSON number or negative, or a bound is missing or not a
// JSON number, or low > high, or the interval does not contain v, or a bound overflows
// float64.
func IntervalOf(r *hubv1alpha1.RankRule, v float64, row *hubv1alpha1.LeaderboardRow) Interval {
	var iv Interval
	switch {
	case r.Stderr != "":
		s, ok := numberAt(row, r.Stderr)
		if !ok || s < 0 {
			return Interval{}
		}
		iv = Interval{Low: v - Z95*s, High: v + Z95*s}
	case r.IntervalLow != "" && r.IntervalHigh != "":
		low, okLow := numberAt(row, r.IntervalLow)
		high, okHigh := numberAt(row, r.IntervalHigh)
		if !okLow || !okHigh || low > v || v > high {
			return Interval{}
		}
		iv = Interval{Low: low, High: high}
	default:
		return Interval{}
	}
	if math.IsInf(iv.Low, 0) || math.IsInf(iv.High, 0) {
		return Interval{}
	}
	iv.OK = true
	return iv
}

// numberAt reads the JSON number an accessor points at in a row (not a boolean, not a
// string holding digits).
func numberAt(row *hubv1alpha1.LeaderboardRow, acc string) (float64, bool) {
	root, path, ok := accessor.Split(acc)
	if !ok {
		return 0, false
	}
	raw := row.Spec.Metadata
	if root == accessor.Metrics {
		raw = row.Spec.Metrics
	}
	if raw == nil {
		return 0, false
	}
	v, found := accessor.Lookup(raw.Raw, path, rawMember, rawObject)
	if !found || (v[0] != '-' && (v[0] < '0' || v[0] > '9')) {
		return 0, false
	}
	n := scalar(v)
	return n.n, n.k == number
}

// sameBand reports whether two bands rank alike and serve the same interval.
func sameBand(a, b *band) bool {
	return slices.Equal(a.key, b.key) && slices.Equal(a.opt, b.opt) && a.iv == b.iv
}

// buildBands makes the band tree of nodes (whose keys are parsed) under the band order
// bo, setting each node's band: O(n log n).
func buildBands(bo *order, nodes []*node, rnd uint64) treap {
	t := treap{ord: bo, rnd: rnd}
	sorted := make([]*node, len(nodes))
	for i, n := range nodes {
		n.band = bandOf(bo, n.row, n.key)
		sorted[i] = &n.band.node
	}
	sortNodes(bo, sorted)
	t.root = t.build(sorted)
	return t
}

// upperOf is the rank_upper of a row with this band: 1 + the rows entirely above it.
func (t *treap) upperOf(b *band) int { return t.countBefore(b.opt) + 1 }

// HasRanges says whether a board with these rules serves rank ranges: one of its rules
// names an uncertainty.
func HasRanges(rules []hubv1alpha1.RankRule) bool { return uncertainRule(rules) >= 0 }
