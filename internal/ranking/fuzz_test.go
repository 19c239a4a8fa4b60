package ranking

import (
	"fmt"
	"testing"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// FuzzCompare checks that the comparator is a total order on any three rows: it never
// panics, it is antisymmetric, and it is transitive, both on the rules alone (which
// decide shared ranks) and with the tie-break (which decides the index order). The
// rows' metrics are arbitrary bytes, read through an arbitrary accessor.
func FuzzCompare(f *testing.F) {
	seeds := []struct {
		accessor   string
		a, b, c    string
		dir, nulls byte
	}{
		{"reward", `{"reward": 1}`, `{"reward": 2}`, `{"reward": 2}`, 0, 0},
		{"reward", `{"reward": 9}`, `{"reward": 10}`, `{"reward": "5"}`, 1, 0},
		{"reward", `{"reward": "Alice"}`, `{"reward": "alice"}`, `{"reward": "BOB"}`, 0, 1},
		{"reward", `{"reward": true}`, `{"reward": 0}`, `{"reward": null}`, 1, 1},
		{"a.b", `{"a": {"b": 1}}`, `{"a.b": 2}`, `{"a": 3}`, 0, 0},
		{"a.b.c", `{"a.b": {"c": -0}}`, `{"a": {"b.c": 1e-7}}`, `{"a.b.c": [1]}`, 1, 0},
		{"x", `{"x": 1e21}`, `{"x": "1e+21"}`, `not json`, 0, 1},
		{"x", `{"x": "ß"}`, `{"x": "SS"}`, `{"x": "ẞ"}`, 0, 0},
		{"x", `{"x": 1.5}`, `{"x": "1.5"}`, `{"x": 15}`, 1, 0},
		{"x", ``, `{}`, `{"x": {}}`, 0, 0},
	}
	for _, s := range seeds {
		f.Add(s.accessor, []byte(s.a), []byte(s.b), []byte(s.c), s.dir, s.nulls)
	}
	f.Fuzz(func(t *testing.T, accessor string, a, b, c []byte, dir, nulls byte) {
		r := hubv1alpha1.RankRule{Accessor: "metrics." + accessor, Direction: hubv1alpha1.Ascending}
		if dir%2 == 1 {
			r.Direction = hubv1alpha1.Descending
		}
		if nulls%2 == 1 {
			r.Nulls = hubv1alpha1.NullsFirst
		}
		// A second rule breaks the first one's ties, as on a real board.
		rules := []hubv1alpha1.RankRule{r, {Accessor: "metrics.tie", Direction: hubv1alpha1.Descending}}
		rows := make([]*hubv1alpha1.LeaderboardRow, 3)
		for i, doc := range [][]byte{a, b, c} {
			// Equal creation times, so the UID decides the tie-break.
			rows[i] = testRow(fmt.Sprintf("r%d", i), 0, string(doc), "")
			if len(doc) == 0 {
				rows[i].Spec.Metrics = nil
			}
		}
		for _, asText := range []bool{false, true} {
			nodes := make([]*node, 3)
			for i, row := range rows {
				nodes[i] = &node{row: row, key: keyOf(rules, row)}
			}
			ord := &order{rules: rules, asText: []bool{asText, mixedKeys(nodes, 1)}}
			if !asText && mixedKeys(nodes, 0) {
				// Numbers meeting strings are only compared with asText set; that is the
				// order's own rule (see order).
				continue
			}
			checkOrder(t, "rules", func(x, y *node) int { return ord.rulesCompare(x.key, y.key) }, nodes)
			checkOrder(t, "index", ord.compare, nodes)
			for i := range nodes {
				if ord.compare(nodes[i], nodes[i]) != 0 {
					t.Fatalf("compare(x, x) != 0 for %s", nodes[i].row.Name)
				}
			}
		}
	})
}

// mixedKeys reports whether rule i's values mix numbers and strings.
func mixedKeys(nodes []*node, i int) bool {
	var k kindCounts
	for _, n := range nodes {
		k.add(n.key[i], 1)
	}
	return k.mixed()
}

func sign(c int) int {
	switch {
	case c < 0:
		return -1
	case c > 0:
		return 1
	}
	return 0
}

// checkOrder checks antisymmetry and transitivity (of < and of ==) over every ordered
// triple of nodes.
func checkOrder(t *testing.T, what string, cmp func(x, y *node) int, nodes []*node) {
	t.Helper()
	for _, x := range nodes {
		for _, y := range nodes {
			if sign(cmp(x, y)) != -sign(cmp(y, x)) {
				t.Fatalf("%s: not antisymmetric: cmp(%s, %s) = %d, cmp back = %d", what, x.row.Name, y.row.Name, cmp(x, y), cmp(y, x))
			}
			for _, z := range nodes {
				xy, yz, xz := sign(cmp(x, y)), sign(cmp(y, z)), sign(cmp(x, z))
				if xy <= 0 && yz <= 0 && xz > 0 {
					t.Fatalf("%s: not transitive: %s <= %s <= %s but %s > %s", what, x.row.Name, y.row.Name, z.row.Name, x.row.Name, z.row.Name)
				}
				if xy == 0 && yz == 0 && xz != 0 {
					t.Fatalf("%s: ties not transitive: %s = %s = %s but %s != %s", what, x.row.Name, y.row.Name, z.row.Name, x.row.Name, z.row.Name)
				}
			}
		}
	}
}
