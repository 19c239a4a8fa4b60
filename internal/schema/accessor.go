package schema

import (
	"slices"

	"podium.dev/podium/internal/accessor"
)

// Declares reports whether the schema declares the value at path (an accessor without
// its "metadata." or "metrics." root, for example "reward" or "usage.tokens").
//
// The schema's properties are walked by the accessor rule (internal/accessor) as if
// they were a row's keys: a property literally named "a.b" wins over "a" then "b", as
// in the ranking, the web page and the CLI, so the check says no more and no less
// than what a row's lookup would reach. A schema that declares no properties declares
// everything below it: checking is only possible where the schema says what exists. A
// path that goes below a property whose declared types exclude object is not
// declared: a number has no fields.
func (s *Schema) Declares(path string) bool {
	if path == "" {
		return true
	}
	_, ok := accessor.Lookup(s, path, declaredMember, declaredObject)
	return ok
}

// declaredMember is the schema of property key of s, and whether s declares it.
func declaredMember(s *Schema, key string) (*Schema, bool) {
	if _, object := declaredObject(s); !object {
		return nil, false // a number has no fields
	}
	if s == nil || s.Properties == nil {
		return nil, true // declares everything below
	}
	ps, ok := s.Properties[key]
	return ps, ok
}

// declaredObject returns s when a value it describes may be an object.
func declaredObject(s *Schema) (*Schema, bool) {
	return s, s == nil || len(s.Types) == 0 || slices.Contains(s.Types, "object")
}
