// Package accessor is accessor lookup: how a column or rank rule accessor such as
// "metrics.usage.tokens" finds its value in a row, and whether a board's schemas
// declare it. The ranking, the web page, the CLI and the controller's schema check all
// resolve accessors here, so a cell always shows what its row is ranked by.
//
// The rule (docs/leaderboards.md, "Accessors"): an accessor is a root, "metadata." or
// "metrics.", and a dotted path. At each level of the row's JSON object the whole
// remaining path, as one key, wins; otherwise the longest dotted prefix of it that is a
// key holding an object is followed, and the rest of the path is looked up in that
// object. There is no backtracking: when the followed object lacks the rest, the value
// is missing, even if a shorter prefix would have led somewhere. A lookup therefore
// costs at most one pass per path segment, whatever a row holds.
package accessor

import "strings"

// Root is the part of a row an accessor reads.
type Root uint8

const (
	// Metadata is a row's spec.metadata ("metadata.").
	Metadata Root = iota + 1
	// Metrics is a row's spec.metrics ("metrics.").
	Metrics
)

// String is the accessor prefix of the root, without its dot.
func (r Root) String() string {
	switch r {
	case Metadata:
		return "metadata"
	case Metrics:
		return "metrics"
	}
	return ""
}

// Split splits "metrics.a.b" into its root and the path inside it ("a.b"). ok is false
// for any other root and for an empty path.
func Split(accessor string) (root Root, path string, ok bool) {
	if p, found := strings.CutPrefix(accessor, "metrics."); found && p != "" {
		return Metrics, p, true
	}
	if p, found := strings.CutPrefix(accessor, "metadata."); found && p != "" {
		return Metadata, p, true
	}
	return 0, "", false
}

// Lookup resolves path in obj by the package's rule, for any representation of JSON
// objects: member returns the value of key in an object and whether the key exists;
// object returns a value as an object when it is one.
func Lookup[O, V any](obj O, path string, member func(O, string) (V, bool), object func(V) (O, bool)) (V, bool) {
	for {
		if v, ok := member(obj, path); ok {
			return v, true
		}
		followed := false
		for cut := strings.LastIndexByte(path, '.'); cut > 0; cut = strings.LastIndexByte(path[:cut], '.') {
			if v, ok := member(obj, path[:cut]); ok {
				if o, isObject := object(v); isObject {
					obj, path, followed = o, path[cut+1:], true
					break
				}
			}
		}
		if !followed {
			var zero V
			return zero, false
		}
	}
}

// LookupMap is Lookup over decoded JSON (map[string]any). A JSON null exists and is nil.
func LookupMap(m map[string]any, path string) (any, bool) {
	return Lookup(m, path, mapMember, mapObject)
}

func mapMember(m map[string]any, key string) (any, bool) {
	v, ok := m[key]
	return v, ok
}

func mapObject(v any) (map[string]any, bool) {
	m, ok := v.(map[string]any)
	return m, ok
}
