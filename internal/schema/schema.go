// Package schema validates a leaderboard row's metadata and metrics against the
// board's JSON-Schema style schemas, and checks that a board's accessors point at
// properties its schemas declare.
//
// It implements the subset of JSON Schema leaderboards use: type (a name or a list of
// names), properties, required, enum, minimum/maximum, exclusiveMinimum/
// exclusiveMaximum, minLength/maxLength, additionalProperties (false or a schema) and
// items. Annotation keywords (title, description, format, $schema, default, examples
// ...) are accepted and ignored, so schemas written for other tools keep working.
package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// Known type names of JSON Schema.
var knownTypes = []string{"string", "number", "integer", "boolean", "object", "array", "null"}

// Schema is a parsed schema node.
type Schema struct {
	// Types are the allowed JSON types; empty allows any.
	Types []string
	// Properties are the declared properties of an object; nil when none are declared
	// (then any property is allowed and any accessor below it resolves).
	Properties map[string]*Schema
	// Required are the property names that must be present.
	Required []string
	// Enum lists the allowed values (compared as JSON); nil allows any.
	Enum []any
	// Minimum and Maximum bound numbers (inclusive); the Exclusive ones exclusively.
	Minimum, Maximum, ExclusiveMinimum, ExclusiveMaximum *float64
	// MinLength and MaxLength bound strings, in characters.
	MinLength, MaxLength *int
	// NoAdditional refuses properties that Properties does not declare.
	NoAdditional bool
	// Additional, when set, is the schema of undeclared properties.
	Additional *Schema
	// Items is the schema of each array element.
	Items *Schema
}

// FieldError names one failing field and why; Field is the value path, for example
// "metrics.reward".
type FieldError struct {
	Field   string
	Message string
}

func (e FieldError) String() string { return e.Field + ": " + e.Message }

// Parse reads a schema from JSON. An empty input or {} is the schema that allows any
// object. The root must describe an object (no type, or type object). Errors name the
// failing keyword by its path, for example `properties.reward.type: unknown type "float"`.
func Parse(raw []byte) (*Schema, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return &Schema{}, nil
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("is not valid JSON: %w", err)
	}
	s, err := parseNode(v, "")
	if err != nil {
		return nil, err
	}
	if len(s.Types) > 0 && !slices.Equal(s.Types, []string{"object"}) {
		return nil, fmt.Errorf("type: must be \"object\" (a row's values are an object), got %s", strings.Join(s.Types, ", "))
	}
	return s, nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func parseNode(v any, path string) (*Schema, error) {
	m, ok := v.(map[string]any)
	if !ok {
		if path == "" {
			return nil, fmt.Errorf("must be an object")
		}
		return nil, fmt.Errorf("%s: must be an object", path)
	}
	s := &Schema{}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys) // errors come out in a stable order
	for _, k := range keys {
		if err := s.parseKeyword(k, m[k], path); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *Schema) parseKeyword(k string, val any, path string) error {
	at := join(path, k)
	var err error
	switch k {
	case "type":
		if s.Types, err = parseTypes(val); err != nil {
			return fmt.Errorf("%s: %w", at, err)
		}
	case "properties":
		s.Properties, err = parseProperties(val, at)
	case "required":
		s.Required, err = parseNames(val, at)
	case "enum":
		list, ok := val.([]any)
		if !ok {
			return fmt.Errorf("%s: must be a list of values", at)
		}
		s.Enum = list
		if s.Enum == nil {
			s.Enum = []any{}
		}
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
		err = s.parseBound(k, val, at)
	case "minLength", "maxLength":
		err = s.parseLength(k, val, at)
	case "additionalProperties":
		switch a := val.(type) {
		case bool:
			s.NoAdditional = !a
		case map[string]any:
			s.Additional, err = parseNode(a, at)
		default:
			return fmt.Errorf("%s: must be a boolean or a schema", at)
		}
	case "items":
		s.Items, err = parseNode(val, at)
	}
	return err
}

// parseProperties reads properties: an object of property schemas.
func parseProperties(val any, at string) (map[string]*Schema, error) {
	props, ok := val.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: must be an object of property schemas", at)
	}
	out := make(map[string]*Schema, len(props))
	for name, pv := range props {
		ps, err := parseNode(pv, join(at, name))
		if err != nil {
			return nil, err
		}
		out[name] = ps
	}
	return out, nil
}

// parseNames reads required: a list of property names.
func parseNames(val any, at string) ([]string, error) {
	list, ok := val.([]any)
	if !ok {
		return nil, fmt.Errorf("%s: must be a list of property names", at)
	}
	var names []string
	for i, e := range list {
		name, ok := e.(string)
		if !ok {
			return nil, fmt.Errorf("%s[%d]: must be a string", at, i)
		}
		names = append(names, name)
	}
	return names, nil
}

// parseBound reads minimum, maximum, exclusiveMinimum or exclusiveMaximum: a finite number.
func (s *Schema) parseBound(k string, val any, at string) error {
	n, ok := val.(json.Number)
	if !ok {
		return fmt.Errorf("%s: must be a number", at)
	}
	f, err := n.Float64()
	if err != nil {
		return fmt.Errorf("%s: must be a finite number", at)
	}
	switch k {
	case "minimum":
		s.Minimum = &f
	case "maximum":
		s.Maximum = &f
	case "exclusiveMinimum":
		s.ExclusiveMinimum = &f
	default:
		s.ExclusiveMaximum = &f
	}
	return nil
}

// parseLength reads minLength or maxLength: a non-negative integer.
func (s *Schema) parseLength(k string, val any, at string) error {
	n, ok := val.(json.Number)
	i, err := n.Int64()
	if !ok || err != nil || i < 0 || i > math.MaxInt32 {
		return fmt.Errorf("%s: must be a non-negative integer", at)
	}
	l := int(i)
	if k == "minLength" {
		s.MinLength = &l
	} else {
		s.MaxLength = &l
	}
	return nil
}

func parseTypes(val any) ([]string, error) {
	var names []string
	switch t := val.(type) {
	case string:
		names = []string{t}
	case []any:
		if len(t) == 0 {
			return nil, fmt.Errorf("must name at least one type")
		}
		for _, e := range t {
			name, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("must be a type name or a list of type names")
			}
			names = append(names, name)
		}
	default:
		return nil, fmt.Errorf("must be a type name or a list of type names")
	}
	for _, n := range names {
		if !slices.Contains(knownTypes, n) {
			return nil, fmt.Errorf("unknown type %q (known: %s)", n, strings.Join(knownTypes, ", "))
		}
	}
	return names, nil
}
