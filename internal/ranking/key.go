package ranking

import (
	"encoding/json"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// kind is what a rank_by value is, as far as ordering cares.
type kind uint8

const (
	// missing covers an absent key, JSON null, and objects and arrays (which have no
	// order of their own).
	missing kind = iota
	// number covers JSON numbers and booleans (false 0, true 1).
	number
	// text covers JSON strings, kept case-folded.
	text
)

// value is one rule's sort key for one row, parsed once when the row enters the index.
type value struct {
	// s is the case-folded string of a text value.
	s string
	// n is the number of a number value.
	n float64
	k kind
}

// keyOf parses the values the rules rank by out of a row's metadata and metrics.
func keyOf(rules []hubv1alpha1.RankRule, row *hubv1alpha1.LeaderboardRow) []value {
	if len(rules) == 0 {
		return nil
	}
	var roots [2]map[string]json.RawMessage
	var parsed [2]bool
	key := make([]value, len(rules))
	for i, r := range rules {
		src, path, ok := splitAccessor(r.Accessor)
		if !ok {
			continue
		}
		if !parsed[src] {
			parsed[src] = true
			raw := row.Spec.Metadata
			if src == fromMetrics {
				raw = row.Spec.Metrics
			}
			roots[src] = objectOf(raw)
		}
		key[i] = lookup(roots[src], path)
	}
	return key
}

const (
	fromMetadata = 0
	fromMetrics  = 1
)

// splitAccessor splits "metrics.a.b" into its source (metadata or metrics) and the
// path inside it ("a.b").
func splitAccessor(accessor string) (src int, path string, ok bool) {
	if p, found := strings.CutPrefix(accessor, "metrics."); found && p != "" {
		return fromMetrics, p, true
	}
	if p, found := strings.CutPrefix(accessor, "metadata."); found && p != "" {
		return fromMetadata, p, true
	}
	return 0, "", false
}

func objectOf(raw *apiextensionsv1.JSON) map[string]json.RawMessage {
	if raw == nil || len(raw.Raw) == 0 {
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw.Raw, &m); err != nil {
		return nil
	}
	return m
}

// lookup resolves a dotted path in an object. At each level the longest dotted prefix
// of the remaining path that exists literally as a key wins ("a.b" before "a" then
// "b"), as long as it is the whole remaining path or leads to an object; so a key that
// contains dots wins over nesting. Objects are decoded one level at a time, only along
// the path.
func lookup(obj map[string]json.RawMessage, path string) value {
	for obj != nil {
		if raw, ok := obj[path]; ok {
			return scalar(raw)
		}
		next := map[string]json.RawMessage(nil)
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

// scalar turns a JSON value into a sort key.
func scalar(raw json.RawMessage) value {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return value{}
	}
	switch x := v.(type) {
	case bool:
		if x {
			return value{k: number, n: 1}
		}
		return value{k: number, n: 0}
	case float64:
		if x == 0 {
			x = 0 // -0 and 0 are one value, and both print as "0"
		}
		return value{k: number, n: x}
	case string:
		return value{k: text, s: fold(x)}
	}
	return value{}
}

// fold makes strings compare case-insensitively. strings.ToLower returns its argument
// unchanged (no copy) when there is nothing to lower.
func fold(s string) string { return strings.ToLower(s) }

// numberText appends a number's string form, as JavaScript's String(n) writes it
// (1, 1.5, 1e+21, 1e-7), which is how a number compares against a string.
func numberText(dst []byte, n float64) []byte {
	abs := n
	if abs < 0 {
		abs = -abs
	}
	if abs == 0 || (abs >= 1e-6 && abs < 1e21) {
		return strconv.AppendFloat(dst, n, 'f', -1, 64)
	}
	start := len(dst)
	dst = strconv.AppendFloat(dst, n, 'e', -1, 64)
	// Go writes two exponent digits at least (1e-07); JavaScript writes 1e-7.
	e := start
	for e < len(dst) && dst[e] != 'e' {
		e++
	}
	if e+3 < len(dst) && dst[e+2] == '0' {
		dst = append(dst[:e+2], dst[e+3:]...)
	}
	return dst
}
