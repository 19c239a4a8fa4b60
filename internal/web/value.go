package web

import (
	"bytes"
	"encoding/json"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/accessor"
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

// lookup reads the value at an accessor ("metrics.a.b") by the accessor rule
// (internal/accessor), exactly as the rank index reads it, so a cell shows what its row
// is sorted by. It reports whether the value exists; a JSON null exists and is nil.
func (v rowValues) lookup(acc string) (any, bool) {
	root, path, ok := accessor.Split(acc)
	if !ok {
		return nil, false
	}
	if root == accessor.Metadata {
		return accessor.LookupMap(v.metadata, path)
	}
	return accessor.LookupMap(v.metrics, path)
}
