// Package accessortest is the table every consumer of accessor lookup runs: the rank
// index, the web page, the CLI and the schema check each resolve Case.Accessor in the
// same row and must agree with Case.Want. A consumer that grew its own lookup again
// (shortest prefix first, backtracking, another root rule) would fail here.
package accessortest

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Case is one accessor resolved in one row.
type Case struct {
	Name string
	// Metadata and Metrics are the row's JSON objects.
	Metadata, Metrics string
	Accessor          string
	// Want is the value found, as compact JSON, or "" when the value is missing.
	Want string
}

// Cases is the table.
func Cases() []Case {
	return []Case{
		{Name: "nested", Metrics: `{"a":{"b":1}}`, Accessor: "metrics.a.b", Want: `1`},
		{Name: "a key holding dots wins over nesting", Metrics: `{"a.b":2,"a":{"b":1}}`, Accessor: "metrics.a.b", Want: `2`},
		{Name: "the longest prefix holding an object is followed, without backtracking",
			Metrics: `{"a":{"b":{"c":5}},"a.b":{"z":2}}`, Accessor: "metrics.a.b.c"},
		{Name: "the longest prefix, not the shortest", Metrics: `{"a":{"b.c":1},"a.b":{"c":3}}`, Accessor: "metrics.a.b.c", Want: `3`},
		{Name: "a shorter prefix when no longer one exists", Metrics: `{"a":{"b":{"c":4}}}`, Accessor: "metrics.a.b.c", Want: `4`},
		{Name: "a longer prefix holding no object is passed over", Metrics: `{"a":{"b":{"c":6}},"a.b":7}`, Accessor: "metrics.a.b.c", Want: `6`},
		{Name: "null exists", Metrics: `{"a":null}`, Accessor: "metrics.a", Want: `null`},
		{Name: "a number has no fields", Metrics: `{"a":5}`, Accessor: "metrics.a.b"},
		{Name: "an empty object has no fields", Metrics: `{"e":{}}`, Accessor: "metrics.e.x"},
		{Name: "metadata text", Metadata: `{"agent":"terminus"}`, Metrics: `{"agent":"other"}`, Accessor: "metadata.agent", Want: `"terminus"`},
		{Name: "booleans", Metrics: `{"ok":true}`, Accessor: "metrics.ok", Want: `true`},
		{Name: "an object value", Metrics: `{"u":{"t":1}}`, Accessor: "metrics.u", Want: `{"t":1}`},
		{Name: "an escaped key", Metrics: `{"a\u002eb":8}`, Accessor: "metrics.a.b", Want: `8`},
		{Name: "absent", Metrics: `{"a":1}`, Accessor: "metrics.b"},
		{Name: "no such root", Metrics: `{"a":1}`, Accessor: "other.a"},
		{Name: "a root without a path", Metrics: `{"a":1}`, Accessor: "metrics."},
		{Name: "a root without its dot", Metrics: `{"a":1}`, Accessor: "metrics"},
	}
}

// Row returns the case's metadata and metrics, "{}" for an empty one.
func (c Case) Row() (metadata, metrics []byte) {
	or := func(s string) []byte {
		if s == "" {
			return []byte("{}")
		}
		return []byte(s)
	}
	return or(c.Metadata), or(c.Metrics)
}

// Schema returns a JSON Schema that declares exactly the row's values at root
// ("metadata" or "metrics"): an object for each object (with its properties), a type
// for each other value. Checking an accessor against it must agree with the lookup.
func (c Case) Schema(root string) []byte {
	doc := c.Metrics
	if root == "metadata" {
		doc = c.Metadata
	}
	if doc == "" {
		doc = "{}"
	}
	var v any
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		panic(fmt.Sprintf("case %q: %v", c.Name, err))
	}
	var b strings.Builder
	writeSchema(&b, v)
	return []byte(b.String())
}

func writeSchema(b *strings.Builder, v any) {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString(`{"type":"object","properties":{`)
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			name, _ := json.Marshal(k)
			b.Write(name)
			b.WriteByte(':')
			writeSchema(b, v[k])
		}
		b.WriteString(`}}`)
	case nil:
		b.WriteString(`{"type":"null"}`)
	case bool:
		b.WriteString(`{"type":"boolean"}`)
	case float64:
		b.WriteString(`{"type":"number"}`)
	case string:
		b.WriteString(`{"type":"string"}`)
	default:
		b.WriteString(`{"type":"array"}`)
	}
}
