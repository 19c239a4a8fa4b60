package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Validate checks a row's values (a JSON object; empty means {}) against s and returns
// every failing field, named from prefix ("metrics" gives "metrics.reward"), in a
// stable order. A nil schema allows anything.
func (s *Schema) Validate(prefix string, raw []byte) []FieldError {
	raw = bytes.TrimSpace(raw)
	var v any = map[string]any{}
	if len(raw) > 0 && string(raw) != "null" {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			return []FieldError{{Field: prefix, Message: "must be a JSON object"}}
		}
	}
	if s == nil {
		return nil
	}
	var errs []FieldError
	s.validate(prefix, v, &errs)
	return errs
}

func (s *Schema) validate(path string, v any, errs *[]FieldError) {
	add := func(format string, args ...any) {
		*errs = append(*errs, FieldError{Field: path, Message: fmt.Sprintf(format, args...)})
	}
	if len(s.Types) > 0 && !slices.ContainsFunc(s.Types, func(t string) bool { return hasType(v, t) }) {
		add("must be %s", describeTypes(s.Types))
		return // further keywords would only repeat the type error
	}
	if s.Enum != nil && !slices.ContainsFunc(s.Enum, func(e any) bool { return equal(e, v) }) {
		add("must be one of %s", describeEnum(s.Enum))
	}
	switch x := v.(type) {
	case json.Number:
		s.validateNumber(x, add)
	case string:
		n := utf8.RuneCountInString(x)
		if s.MinLength != nil && n < *s.MinLength {
			add("must be at least %d characters", *s.MinLength)
		}
		if s.MaxLength != nil && n > *s.MaxLength {
			add("must be at most %d characters", *s.MaxLength)
		}
	case map[string]any:
		s.validateObject(path, x, errs)
	case []any:
		if s.Items != nil {
			for i, e := range x {
				s.Items.validate(path+"["+strconv.Itoa(i)+"]", e, errs)
			}
		}
	}
}

func (s *Schema) validateNumber(n json.Number, add func(string, ...any)) {
	f, err := n.Float64()
	if err != nil {
		add("must be a finite number")
		return
	}
	if s.Minimum != nil && f < *s.Minimum {
		add("must be >= %s", formatFloat(*s.Minimum))
	}
	if s.ExclusiveMinimum != nil && f <= *s.ExclusiveMinimum {
		add("must be > %s", formatFloat(*s.ExclusiveMinimum))
	}
	if s.Maximum != nil && f > *s.Maximum {
		add("must be <= %s", formatFloat(*s.Maximum))
	}
	if s.ExclusiveMaximum != nil && f >= *s.ExclusiveMaximum {
		add("must be < %s", formatFloat(*s.ExclusiveMaximum))
	}
}

func (s *Schema) validateObject(path string, obj map[string]any, errs *[]FieldError) {
	for _, name := range s.Required {
		if _, ok := obj[name]; !ok {
			*errs = append(*errs, FieldError{Field: join(path, name), Message: "is required"})
		}
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if ps, ok := s.Properties[k]; ok {
			ps.validate(join(path, k), obj[k], errs)
			continue
		}
		switch {
		case s.NoAdditional:
			*errs = append(*errs, FieldError{Field: join(path, k), Message: "is not declared by the schema (additionalProperties is false)"})
		case s.Additional != nil:
			s.Additional.validate(join(path, k), obj[k], errs)
		}
	}
}

func hasType(v any, t string) bool {
	switch t {
	case "string":
		_, ok := v.(string)
		return ok
	case "number":
		_, ok := v.(json.Number)
		return ok
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		if _, err := n.Int64(); err == nil {
			return true
		}
		f, err := n.Float64()
		return err == nil && f == math.Trunc(f) // 1.0 and 1e3 are integers, as in JSON Schema
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "null":
		return v == nil
	}
	return false
}

func describeTypes(types []string) string {
	words := make([]string, len(types))
	for i, t := range types {
		switch t {
		case "integer", "object", "array":
			words[i] = "an " + t
		case "null":
			words[i] = "null"
		default:
			words[i] = "a " + t
		}
	}
	if len(words) == 1 {
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

func describeEnum(enum []any) string {
	parts := make([]string, len(enum))
	for i, e := range enum {
		b, _ := json.Marshal(e)
		parts[i] = string(b)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// equal compares two decoded JSON values; numbers compare by value (1 equals 1.0).
func equal(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		fx, err1 := x.Float64()
		fy, err2 := y.Float64()
		return err1 == nil && err2 == nil && fx == fy
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !equal(xv, yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	default:
		return a == b
	}
}
