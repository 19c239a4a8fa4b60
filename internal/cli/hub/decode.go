package hub

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"

	"podium.dev/podium/internal/apierr"
	"podium.dev/podium/internal/jsontype"
)

// Format is how a file is written: a board or rows file in YAML or JSON, or Kubernetes manifests.
type Format string

const (
	FormatYAML     Format = "yaml"
	FormatJSON     Format = "json"
	FormatManifest Format = "manifest"
)

// FormatOf returns the format an extension implies (.yaml/.yml or .json), or an error
// naming the accepted extensions (docs/cli.md, Files).
func FormatOf(path string) (Format, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml":
		return FormatYAML, nil
	case ".json":
		return FormatJSON, nil
	}
	return "", apierr.BadRequest("", "%s: the file name must end in .yaml, .yml or .json", path)
}

// document is one document of a file: its JSON form, for decoding, and its YAML node
// tree, for the line numbers of errors.
type document struct {
	file string
	json []byte
	node *yamlv3.Node
}

// readDocuments reads a YAML or JSON file (by extension) into its documents.
func readDocuments(path string) ([]document, error) {
	if _, err := FormatOf(path); err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, apierr.BadRequest("", "reading %s: %v", path, unwrapPathError(err))
	}
	return parseDocuments(path, raw)
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func parseDocuments(file string, raw []byte) ([]document, error) {
	dec := yamlv3.NewDecoder(bytes.NewReader(raw))
	var docs []document
	for {
		var n yamlv3.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, apierr.BadRequest("", "%s: not valid YAML or JSON: %s", file, strings.TrimPrefix(err.Error(), "yaml: "))
		}
		root := &n
		if n.Kind == yamlv3.DocumentNode {
			if len(n.Content) == 0 {
				continue
			}
			root = n.Content[0]
		}
		if root.Kind == yamlv3.ScalarNode && root.Tag == "!!null" {
			continue // an empty document between two "---"
		}
		budget := maxNodes
		v, err := nodeValue(root, 0, &budget)
		if err != nil {
			return nil, apierr.BadRequest("", "%s: %v", file, err)
		}
		j, err := json.Marshal(v)
		if err != nil {
			return nil, apierr.BadRequest("", "%s: %v", file, err)
		}
		docs = append(docs, document{file: file, json: j, node: root})
	}
	if len(docs) == 0 {
		return nil, apierr.BadRequest("", "%s: the file is empty", file)
	}
	return docs, nil
}

// decodeStrict decodes one document into v (a pointer to one of the file structs):
// an unknown key or a wrongly typed value is an error naming the field and its line.
func (d document) decodeStrict(v any) error {
	var generic any
	jd := json.NewDecoder(bytes.NewReader(d.json))
	jd.UseNumber()
	if err := jd.Decode(&generic); err != nil {
		return apierr.BadRequest("", "%s: %v", d.file, err)
	}
	if err := d.checkKeys(generic, reflect.TypeOf(v).Elem(), nil); err != nil {
		return err
	}
	if err := json.Unmarshal(d.json, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			path := fieldPath(te.Field)
			return d.fieldError(path, "must be of type %s", jsonKind(te.Type))
		}
		return apierr.BadRequest("", "%s: %v", d.file, err)
	}
	return nil
}

var rawMessageType = reflect.TypeOf(json.RawMessage{})

// checkKeys walks a decoded document along the struct type it must fit and refuses
// keys the type does not have. Free-form values (schemas, metadata, metrics) are
// json.RawMessage fields and are not walked.
func (d document) checkKeys(v any, t reflect.Type, path []any) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawMessageType {
		return nil
	}
	switch t.Kind() {
	case reflect.String:
		if _, ok := v.(string); !ok && v != nil {
			return d.fieldError(path, "must be of type string")
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok && v != nil {
			return d.fieldError(path, "must be of type boolean")
		}
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			if v == nil {
				return nil
			}
			return d.fieldError(path, "must be an object")
		}
		fields := map[string]reflect.Type{}
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name != "" && name != "-" {
				fields[name] = f.Type
			}
		}
		for _, k := range sortedKeys(m) {
			ft, ok := fields[k]
			if !ok {
				return d.fieldError(append(append([]any{}, path...), k), "unknown key")
			}
			if err := d.checkKeys(m[k], ft, append(append([]any{}, path...), k)); err != nil {
				return err
			}
		}
	case reflect.Slice:
		items, ok := v.([]any)
		if !ok {
			if v == nil {
				return nil
			}
			return d.fieldError(path, "must be a list")
		}
		for i, item := range items {
			if err := d.checkKeys(item, t.Elem(), append(append([]any{}, path...), i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// fieldError is a bad_request naming the file, the line (when known) and the field.
func (d document) fieldError(path []any, format string, args ...any) error {
	field := formatPath(path)
	where := d.file
	if line := lineOf(d.node, path); line > 0 {
		where += ":" + strconv.Itoa(line)
	}
	e := apierr.BadRequest(field, format, args...)
	e.Message = where + ": " + e.Message
	return e
}

// formatPath renders a path as columns[0].header.
func formatPath(path []any) string {
	var b strings.Builder
	for _, p := range path {
		switch p := p.(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", p)
		case string:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(p)
		}
	}
	return b.String()
}

// fieldPath splits encoding/json's dotted field path ("columns.0.header").
func fieldPath(s string) []any {
	var path []any
	for _, p := range strings.Split(s, ".") {
		if i, err := strconv.Atoi(p); err == nil {
			path = append(path, i)
		} else {
			path = append(path, p)
		}
	}
	return path
}

// lineOf finds the line of the key (or item) a path names in a YAML node tree, 0 when
// the path cannot be followed.
func lineOf(n *yamlv3.Node, path []any) int {
	line := 0
	for _, p := range path {
		if n == nil {
			return line
		}
		switch p := p.(type) {
		case string:
			if n.Kind != yamlv3.MappingNode {
				return line
			}
			var next *yamlv3.Node
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == p {
					line = n.Content[i].Line
					next = n.Content[i+1]
					break
				}
			}
			n = next
		case int:
			if n.Kind != yamlv3.SequenceNode || p >= len(n.Content) {
				return line
			}
			n = n.Content[p]
			line = n.Line
		}
	}
	return line
}

// jsonKind is jsontype.Of, except that the raw JSON the files hold (schemas, row
// values) must be objects.
func jsonKind(t reflect.Type) string {
	if t == rawMessageType {
		return "object"
	}
	return jsontype.Of(t)
}

func sortedKeys(m map[string]any) []string {
	// Sorted so that the first unknown key reported is stable.
	return slices.Sorted(maps.Keys(m))
}

// maxNodes bounds the values one document may expand to (500 rows of large objects fit
// well below it).
const maxNodes = 5_000_000

// nodeValue converts a YAML node to a JSON-able value with YAML 1.2 meanings (the
// yaml.v3 parser's: "yes" and "n" are strings); timestamps stay strings. Duplicate keys
// and values JSON cannot hold are errors naming the line.
func nodeValue(n *yamlv3.Node, depth int, budget *int) (any, error) {
	if depth > 100 {
		return nil, fmt.Errorf("line %d: nested too deeply", n.Line)
	}
	// Aliases can make a small file expand to billions of values.
	if *budget--; *budget < 0 {
		return nil, fmt.Errorf("line %d: the document expands to more than %d values", n.Line, maxNodes)
	}
	switch n.Kind {
	case yamlv3.AliasNode:
		return nodeValue(n.Alias, depth+1, budget)
	case yamlv3.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yamlv3.ScalarNode {
				return nil, fmt.Errorf("line %d: keys must be strings", k.Line)
			}
			if _, dup := m[k.Value]; dup {
				return nil, fmt.Errorf("line %d: key %q is already set", k.Line, k.Value)
			}
			v, err := nodeValue(n.Content[i+1], depth+1, budget)
			if err != nil {
				return nil, err
			}
			m[k.Value] = v
		}
		return m, nil
	case yamlv3.SequenceNode:
		l := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := nodeValue(c, depth+1, budget)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
		}
		return l, nil
	case yamlv3.ScalarNode:
		switch n.ShortTag() {
		case "!!str", "!!timestamp", "!!binary":
			return n.Value, nil
		case "!!null":
			return nil, nil
		case "!!bool", "!!int", "!!float":
			var v any
			if err := n.Decode(&v); err != nil {
				return nil, fmt.Errorf("line %d: %w", n.Line, err)
			}
			if f, ok := v.(float64); ok && (math.IsInf(f, 0) || math.IsNaN(f)) {
				return nil, fmt.Errorf("line %d: %s is not a JSON number", n.Line, n.Value)
			}
			return v, nil
		}
		return n.Value, nil
	}
	return nil, fmt.Errorf("line %d: unsupported YAML", n.Line)
}
