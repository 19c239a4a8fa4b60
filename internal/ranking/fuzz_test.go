package ranking

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

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

// FuzzLookup checks the in-place JSON scan of keyOf against encoding/json on any
// well-formed document, and that it never panics on any other.
func FuzzLookup(f *testing.F) {
	seeds := []struct{ doc, path string }{
		{`{"reward": 1}`, "reward"},
		{`{"a": {"b": {"c": "X"}}}`, "a.b.c"},
		{`{"a.b": {"c": 2}, "a": {"b.c": 50}}`, "a.b.c"},
		{`{"a.b": 7, "a": {"b": {"c": 5}}}`, "a.b.c"},
		{`{"a": 1, "a": {"b": 2}}`, "a.b"},
		{`{"a": {"b": 2}, "a": 1}`, "a.b"},
		{` { "k\u00e9y" : "V\u00c4L" , "x" : [ {"y": "]"} ] } `, "kéy"},
		{`{"n": -0.0, "e": 1E+2, "big": 1e999}`, "big"},
		{`{"t": true, "f": false, "z": null}`, "t"},
		{`{"s": "\ud800"}`, "s"},
		{"{\"s\": \"\xff\"}", "s"},
		{`{"x": 1} trailing`, "x"},
		{`[1, 2]`, "0"},
		{`{"a": {"b": }}`, "a.b"},
	}
	for _, s := range seeds {
		f.Add([]byte(s.doc), s.path)
	}
	f.Fuzz(func(t *testing.T, doc []byte, path string) {
		got := lookup(doc, path)
		if !json.Valid(doc) {
			return
		}
		want := lookupReference(doc, path)
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(value{})); diff != "" {
			t.Fatalf("lookup(%q, %q) (-encoding/json +scan):\n%s", doc, path, diff)
		}
	})
}

// lookupReference is lookup written with encoding/json: slower, obviously right.
func lookupReference(doc []byte, path string) value {
	var obj map[string]json.RawMessage
	if json.Unmarshal(doc, &obj) != nil {
		return value{}
	}
	for obj != nil {
		if raw, ok := obj[path]; ok {
			var v any
			if json.Unmarshal(raw, &v) != nil {
				return value{}
			}
			switch x := v.(type) {
			case bool:
				if x {
					return value{k: number, n: 1}
				}
				return value{k: number, n: 0}
			case float64:
				return value{k: number, n: x + 0} // -0 + 0 is 0
			case string:
				return value{k: text, s: strings.ToLower(x)}
			}
			return value{}
		}
		var next map[string]json.RawMessage
		for cut := strings.LastIndexByte(path, '.'); cut > 0; cut = strings.LastIndexByte(path[:cut], '.') {
			raw, ok := obj[path[:cut]]
			if !ok {
				continue
			}
			var child map[string]json.RawMessage
			if json.Unmarshal(raw, &child) == nil && child != nil {
				next, path = child, path[cut+1:]
				break
			}
		}
		obj = next
	}
	return value{}
}
