package ranking

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/accessor"
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

// keyOf parses the values the rules rank by out of a row's metadata and metrics. It
// scans the raw JSON of the cached object in place and allocates only the key (and the
// text of string values): it runs for every row on every change and on every re-sort.
func keyOf(rules []hubv1alpha1.RankRule, row *hubv1alpha1.LeaderboardRow) []value {
	if len(rules) == 0 {
		return nil
	}
	key := make([]value, len(rules))
	for i, r := range rules {
		root, path, ok := accessor.Split(r.Accessor)
		if !ok {
			continue
		}
		raw := row.Spec.Metadata
		if root == accessor.Metrics {
			raw = row.Spec.Metrics
		}
		if raw != nil {
			key[i] = lookup(raw.Raw, path)
		}
	}
	return key
}

// lookup resolves a dotted path in a JSON object by the accessor rule
// (internal/accessor), scanning the raw JSON in place. A repeated key counts by its last
// occurrence, as in encoding/json. Malformed JSON reads as missing.
func lookup(doc []byte, path string) value {
	if raw, ok := accessor.Lookup(doc, path, rawMember, rawObject); ok {
		return scalar(raw)
	}
	return value{}
}

func rawMember(doc []byte, key string) ([]byte, bool) {
	v, _ := member(doc, key)
	return v, v != nil
}

func rawObject(v []byte) ([]byte, bool) { return v, v[0] == '{' }

// scalar turns one JSON value into a sort key.
func scalar(raw []byte) value {
	switch c := raw[0]; {
	case c == 't':
		return value{k: number, n: 1}
	case c == 'f':
		return value{k: number, n: 0}
	case c == '"':
		if s, ok := unquote(raw); ok {
			return value{k: text, s: fold(s)}
		}
	case c == '-' || (c >= '0' && c <= '9'):
		n, err := strconv.ParseFloat(string(raw), 64)
		if err != nil || math.IsNaN(n) {
			return value{} // out of float64's range: encoding/json refuses it too
		}
		if n == 0 {
			n = 0 // -0 and 0 are one value, and both print as "0"
		}
		return value{k: number, n: n}
	}
	return value{} // null, objects and arrays
}

// unquote decodes a JSON string; only strings with escapes go through encoding/json.
func unquote(raw []byte) (string, bool) {
	if inner, ok := plainString(raw); ok {
		return string(inner), true
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// plainString returns the bytes inside a JSON string that needs no decoding: no escape,
// valid UTF-8.
func plainString(raw []byte) ([]byte, bool) {
	if len(raw) < 2 {
		return nil, false
	}
	inner := raw[1 : len(raw)-1]
	return inner, bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner)
}

// member returns the raw value of key in a JSON object (its last occurrence), nil when
// the key is absent, and false when doc is not one well-formed object.
func member(doc []byte, key string) ([]byte, bool) {
	i := skipSpace(doc, 0)
	if i >= len(doc) || doc[i] != '{' {
		return nil, false
	}
	i = skipSpace(doc, i+1)
	if i < len(doc) && doc[i] == '}' {
		return nil, skipSpace(doc, i+1) == len(doc)
	}
	var found []byte
	for {
		end := skipString(doc, i)
		if end < 0 {
			return nil, false
		}
		rawKey := doc[i:end]
		i = skipSpace(doc, end)
		if i >= len(doc) || doc[i] != ':' {
			return nil, false
		}
		start := skipSpace(doc, i+1)
		if i = skipValue(doc, start); i < 0 {
			return nil, false
		}
		if inner, plain := plainString(rawKey); plain {
			if string(inner) == key {
				found = doc[start:i]
			}
		} else if k, ok := unquote(rawKey); !ok {
			return nil, false
		} else if k == key {
			found = doc[start:i]
		}
		if i = skipSpace(doc, i); i >= len(doc) {
			return nil, false
		}
		switch doc[i] {
		case ',':
			i = skipSpace(doc, i+1)
		case '}':
			return found, skipSpace(doc, i+1) == len(doc)
		default:
			return nil, false
		}
	}
}

func skipSpace(doc []byte, i int) int {
	for i < len(doc) && (doc[i] == ' ' || doc[i] == '\t' || doc[i] == '\n' || doc[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the JSON string starting at i, or -1.
func skipString(doc []byte, i int) int {
	if i >= len(doc) || doc[i] != '"' {
		return -1
	}
	for i++; i < len(doc); i++ {
		switch doc[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// skipValue returns the index after the JSON value starting at i, or -1. It checks
// the structure (brackets, strings), not every literal: the values it skips are never
// read, and the apiserver only stores valid JSON.
func skipValue(doc []byte, i int) int {
	if i >= len(doc) {
		return -1
	}
	switch doc[i] {
	case '"':
		return skipString(doc, i)
	case '{', '[':
		var buf [32]byte
		stack := buf[:0]
		for ; i < len(doc); i++ {
			switch c := doc[i]; c {
			case '"':
				end := skipString(doc, i)
				if end < 0 {
					return -1
				}
				i = end - 1
			case '{', '[':
				stack = append(stack, c)
			case '}', ']':
				if len(stack) == 0 || stack[len(stack)-1] != c-2 {
					return -1 // '{'+2 == '}' and '['+2 == ']'
				}
				stack = stack[:len(stack)-1]
				if len(stack) == 0 {
					return i + 1
				}
			}
		}
		return -1
	}
	start := i
	for i < len(doc) && !strings.ContainsRune(" \t\n\r,}]:{[\"", rune(doc[i])) {
		i++
	}
	if i == start {
		return -1
	}
	return i
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

// RawLookup resolves an accessor's path in a JSON object by the accessor rule, scanning
// the raw JSON in place as the index does (no decoding): the raw value, or false when
// the value is missing or doc is malformed. For the CSV export.
func RawLookup(doc []byte, path string) ([]byte, bool) {
	return accessor.Lookup(doc, path, rawMember, rawObject)
}

// Members calls fn with each member of a JSON object, in document order (a repeated key
// as often as it occurs), its key decoded and its value raw. It reports false when doc
// is not one well-formed object.
func Members(doc []byte, fn func(key string, raw []byte)) bool {
	i := skipSpace(doc, 0)
	if i >= len(doc) || doc[i] != '{' {
		return false
	}
	i = skipSpace(doc, i+1)
	if i < len(doc) && doc[i] == '}' {
		return skipSpace(doc, i+1) == len(doc)
	}
	for {
		end := skipString(doc, i)
		if end < 0 {
			return false
		}
		key, ok := unquote(doc[i:end])
		if !ok {
			return false
		}
		i = skipSpace(doc, end)
		if i >= len(doc) || doc[i] != ':' {
			return false
		}
		start := skipSpace(doc, i+1)
		if i = skipValue(doc, start); i < 0 {
			return false
		}
		fn(key, doc[start:i])
		if i = skipSpace(doc, i); i >= len(doc) {
			return false
		}
		switch doc[i] {
		case ',':
			i = skipSpace(doc, i+1)
		case '}':
			return skipSpace(doc, i+1) == len(doc)
		default:
			return false
		}
	}
}
