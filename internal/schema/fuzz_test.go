package schema

import "testing"

// FuzzParseValidate feeds arbitrary schemas and values: neither may panic, and a
// schema that parses validates any value and answers any accessor.
func FuzzParseValidate(f *testing.F) {
	f.Add([]byte(metricsSchema), []byte(`{"reward":0.5,"usage":{"tokens":1},"scores":[1]}`), "usage.tokens")
	f.Add([]byte(`{"properties":{"a.b":{"type":["number","null"]}},"additionalProperties":{"items":{}}}`), []byte(`{"a.b":null,"c":[[]]}`), "a.b.c")
	f.Add([]byte(`{"enum":[{"a":[1]}],"minimum":1e400}`), []byte(`{"x":1e400}`), "")
	f.Fuzz(func(t *testing.T, schema, values []byte, path string) {
		s, err := Parse(schema)
		if err != nil {
			return
		}
		_ = s.Validate("metrics", values)
		_ = s.Declares(path)
	})
}
