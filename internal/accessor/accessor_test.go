package accessor_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"podium.dev/podium/internal/accessor"
	"podium.dev/podium/internal/accessor/accessortest"
)

func TestLookupMap(t *testing.T) {
	for _, tc := range accessortest.Cases() {
		t.Run(tc.Name, func(t *testing.T) {
			metadata, metrics := tc.Row()
			root, path, ok := accessor.Split(tc.Accessor)
			var v any
			var found bool
			if ok {
				doc := metrics
				if root == accessor.Metadata {
					doc = metadata
				}
				var m map[string]any
				d := json.NewDecoder(bytes.NewReader(doc))
				d.UseNumber()
				if err := d.Decode(&m); err != nil {
					t.Fatal(err)
				}
				v, found = accessor.LookupMap(m, path)
			}
			got := ""
			if found {
				b, _ := json.Marshal(v)
				got = string(b)
			}
			if got != tc.Want {
				t.Fatalf("%s = %q, want %q", tc.Accessor, got, tc.Want)
			}
		})
	}
}

func TestSplit(t *testing.T) {
	for in, want := range map[string]struct {
		root accessor.Root
		path string
		ok   bool
	}{
		"metrics.a.b": {accessor.Metrics, "a.b", true},
		"metadata.x":  {accessor.Metadata, "x", true},
		"metrics.":    {},
		"metrics":     {},
		"metricsx.a":  {},
		"other.a":     {},
		"Metrics.a":   {},
		"metadata..a": {accessor.Metadata, ".a", true},
	} {
		root, path, ok := accessor.Split(in)
		if root != want.root || path != want.path || ok != want.ok {
			t.Errorf("Split(%q) = %v, %q, %v; want %v, %q, %v", in, root, path, ok, want.root, want.path, want.ok)
		}
	}
	if accessor.Metrics.String() != "metrics" || accessor.Metadata.String() != "metadata" {
		t.Errorf("root names: %s, %s", accessor.Metrics, accessor.Metadata)
	}
}
