package schema

import (
	"slices"
	"strings"
)

// Declares reports whether the schema declares the value at path (an accessor without
// its "metadata." or "metrics." root, for example "reward" or "usage.tokens").
//
// A schema that declares no properties declares everything below it: checking is only
// possible where the schema says what exists. A key that holds dots literally
// ("a.b" declared as one property) is found as well as nested properties, matching how
// the ranking reads values. A path that goes below a property whose declared types
// exclude object is not declared: a number has no fields.
func (s *Schema) Declares(path string) bool {
	if s == nil || path == "" {
		return true
	}
	if len(s.Types) > 0 && !slices.Contains(s.Types, "object") {
		return false
	}
	if s.Properties == nil {
		return true
	}
	if _, ok := s.Properties[path]; ok {
		return true
	}
	// Try every split point: "a.b.c" may be a → "b.c", "a.b" → "c".
	for i := strings.IndexByte(path, '.'); i >= 0; {
		if ps, ok := s.Properties[path[:i]]; ok && ps.Declares(path[i+1:]) {
			return true
		}
		next := strings.IndexByte(path[i+1:], '.')
		if next < 0 {
			break
		}
		i += next + 1
	}
	return false
}
