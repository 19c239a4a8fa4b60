package web

import (
	"bytes"
	"encoding/json"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// rowValues are a row's decoded metadata and metrics, read through accessors.
type rowValues struct {
	metadata map[string]any
	metrics  map[string]any
}

// decodeRow decodes a row's metadata and metrics once, so that every column of the
// row reads from the same maps. Numbers stay json.Number: a score of 0.1 must not be
// shown as 0.10000000000000001.
func decodeRow(row *hubv1alpha1.LeaderboardRow) rowValues {
	return rowValues{metadata: decodeObject(row.Spec.Metadata), metrics: decodeObject(row.Spec.Metrics)}
}

func decodeObject(raw *apiextensionsv1.JSON) map[string]any {
	if raw == nil || len(raw.Raw) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw.Raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		// The apiserver stores only valid JSON; a non-object value has no fields.
		return nil
	}
	return m
}

// lookup reads the value at accessor ("metrics.a.b"), reporting whether it exists.
// A JSON null exists and is nil.
func (v rowValues) lookup(accessor string) (any, bool) {
	root, rest, ok := strings.Cut(accessor, ".")
	if !ok || rest == "" {
		return nil, false
	}
	switch root {
	case "metadata":
		return lookupPath(v.metadata, rest)
	case "metrics":
		return lookupPath(v.metrics, rest)
	}
	return nil, false
}

// lookupPath follows a dotted path through nested objects. A key that holds dots and
// exists literally wins over nesting (DECISIONS.md): at each level the longest key that
// is a prefix of the path and holds an object is followed, exactly as the rank index
// reads values, so a cell shows what its row is sorted by.
func lookupPath(m map[string]any, path string) (any, bool) {
	for m != nil {
		if v, ok := m[path]; ok {
			return v, true
		}
		var next map[string]any
		for i := strings.LastIndexByte(path, '.'); i > 0; i = strings.LastIndexByte(path[:i], '.') {
			if obj, ok := m[path[:i]].(map[string]any); ok {
				next, path = obj, path[i+1:]
				break
			}
		}
		m = next
	}
	return nil, false
}
