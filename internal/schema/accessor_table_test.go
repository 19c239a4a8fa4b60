package schema

import (
	"testing"

	"podium.dev/podium/internal/accessor"
	"podium.dev/podium/internal/accessor/accessortest"
)

// A schema that declares exactly a row's values declares exactly the accessors the
// lookup finds in that row: the check agrees with the rank index, the web page and the
// CLI, over their shared table.
func TestDeclaresAccessorTable(t *testing.T) {
	for _, tc := range accessortest.Cases() {
		t.Run(tc.Name, func(t *testing.T) {
			root, path, ok := accessor.Split(tc.Accessor)
			if !ok {
				if tc.Want != "" {
					t.Fatalf("the table finds a value at %q, which has no root", tc.Accessor)
				}
				return // no schema is asked about an accessor without a root
			}
			raw := tc.Schema(root.String())
			s, err := Parse(raw)
			if err != nil {
				t.Fatalf("Parse(%s): %v", raw, err)
			}
			if got, want := s.Declares(path), tc.Want != ""; got != want {
				t.Fatalf("Declares(%q) = %v, want %v (schema %s)", path, got, want, raw)
			}
		})
	}
}
