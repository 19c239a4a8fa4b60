package schema

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, schema, want string
	}{
		{"empty is fine", ``, ""},
		{"empty object is fine", `{}`, ""},
		{"annotations are ignored", `{"$schema":"x","title":"t","description":"d","type":"object","properties":{"a":{"type":"string","format":"uri"}}}`, ""},
		{"root must be an object schema", `{"type":"number"}`, `type: must be "object" (a row's values are an object), got number`},
		{"root not an object", `[1]`, "must be an object"},
		{"invalid JSON", `{`, "is not valid JSON: unexpected EOF"},
		{"unknown type", `{"properties":{"reward":{"type":"float"}}}`, `properties.reward.type: unknown type "float" (known: string, number, integer, boolean, object, array, null)`},
		{"type list", `{"properties":{"reward":{"type":["number","null"]}}}`, ""},
		{"empty type list", `{"properties":{"reward":{"type":[]}}}`, "properties.reward.type: must name at least one type"},
		{"type not a string", `{"properties":{"reward":{"type":3}}}`, "properties.reward.type: must be a type name or a list of type names"},
		{"properties not an object", `{"properties":[]}`, "properties: must be an object of property schemas"},
		{"property not an object", `{"properties":{"a":"string"}}`, "properties.a: must be an object"},
		{"required not a list", `{"required":"a"}`, "required: must be a list of property names"},
		{"required item not a string", `{"required":["a",1]}`, "required[1]: must be a string"},
		{"enum not a list", `{"properties":{"a":{"enum":"x"}}}`, "properties.a.enum: must be a list of values"},
		{"minimum not a number", `{"properties":{"a":{"minimum":"0"}}}`, "properties.a.minimum: must be a number"},
		{"maxLength negative", `{"properties":{"a":{"maxLength":-1}}}`, "properties.a.maxLength: must be a non-negative integer"},
		{"additionalProperties wrong", `{"additionalProperties":"no"}`, "additionalProperties: must be a boolean or a schema"},
		{"items nested error", `{"properties":{"a":{"type":"array","items":{"type":"nope"}}}}`, `properties.a.items.type: unknown type "nope" (known: string, number, integer, boolean, object, array, null)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.schema))
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse(%s) error (-want +got):\n%s", tt.schema, diff)
			}
		})
	}
}

const metricsSchema = `{
  "type": "object",
  "required": ["reward"],
  "properties": {
    "reward": {"type": "number", "minimum": 0, "maximum": 1},
    "cost": {"type": ["number", "null"], "exclusiveMinimum": 0},
    "steps": {"type": "integer"},
    "passed": {"type": "boolean"},
    "grade": {"type": "string", "enum": ["A", "B", "C"]},
    "note": {"type": "string", "minLength": 2, "maxLength": 5},
    "usage": {"type": "object", "additionalProperties": false, "properties": {"tokens": {"type": "integer"}}},
    "scores": {"type": "array", "items": {"type": "number"}},
    "level": {"enum": [1, 2]}
  }
}`

func TestValidate(t *testing.T) {
	s, err := Parse([]byte(metricsSchema))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		values string
		want   []FieldError
	}{
		{"valid", `{"reward":0.5,"cost":null,"steps":3,"passed":true,"grade":"A","note":"ok","usage":{"tokens":10},"scores":[1,2.5],"level":1.0,"extra":"x"}`, nil},
		{"integer written as 1.0 and 1e3", `{"reward":1,"steps":1e3}`, nil},
		{"missing required", `{}`, []FieldError{{"metrics.reward", "is required"}}},
		{"empty input counts as {}", ``, []FieldError{{"metrics.reward", "is required"}}},
		{"wrong types", `{"reward":"high","steps":1.5,"passed":"yes","cost":"x"}`, []FieldError{
			{"metrics.cost", "must be a number or null"},
			{"metrics.passed", "must be a boolean"},
			{"metrics.reward", "must be a number"},
			{"metrics.steps", "must be an integer"},
		}},
		{"null is not a number", `{"reward":null}`, []FieldError{{"metrics.reward", "must be a number"}}},
		{"bounds", `{"reward":1.5,"cost":0}`, []FieldError{{"metrics.cost", "must be > 0"}, {"metrics.reward", "must be <= 1"}}},
		{"below minimum", `{"reward":-0.1}`, []FieldError{{"metrics.reward", "must be >= 0"}}},
		{"enum", `{"reward":0,"grade":"D","level":3}`, []FieldError{{"metrics.grade", `must be one of ["A", "B", "C"]`}, {"metrics.level", "must be one of [1, 2]"}}},
		{"string lengths count characters", `{"reward":0,"note":"é"}`, []FieldError{{"metrics.note", "must be at least 2 characters"}}},
		{"too long", `{"reward":0,"note":"abcdef"}`, []FieldError{{"metrics.note", "must be at most 5 characters"}}},
		{"nested additionalProperties false", `{"reward":0,"usage":{"tokens":"many","other":1}}`, []FieldError{
			{"metrics.usage.other", "is not declared by the schema (additionalProperties is false)"},
			{"metrics.usage.tokens", "must be an integer"},
		}},
		{"array items", `{"reward":0,"scores":[1,"x",null]}`, []FieldError{{"metrics.scores[1]", "must be a number"}, {"metrics.scores[2]", "must be a number"}}},
		{"not an object", `[1]`, []FieldError{{"metrics", "must be an object"}}},
		{"not JSON", `{`, []FieldError{{"metrics", "must be a JSON object"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := s.Validate("metrics", []byte(tt.values))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate(%s) (-want +got):\n%s", tt.values, diff)
			}
		})
	}
}

func TestValidateEmptySchemaAllowsAnything(t *testing.T) {
	s, err := Parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Validate("metadata", []byte(`{"a":{"b":[1,null,"x"]}}`)); got != nil {
		t.Errorf("Validate = %v, want no errors", got)
	}
}

func TestAdditionalPropertiesSchema(t *testing.T) {
	s, err := Parse([]byte(`{"properties":{"a":{"type":"string"}},"additionalProperties":{"type":"number"}}`))
	if err != nil {
		t.Fatal(err)
	}
	got := s.Validate("metadata", []byte(`{"a":"x","b":1,"c":"no"}`))
	want := []FieldError{{"metadata.c", "must be a number"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestDeclares(t *testing.T) {
	s, err := Parse([]byte(`{"type":"object","properties":{
		"reward":{"type":"number"},
		"a.b":{"type":"number"},
		"usage":{"type":"object","properties":{"tokens":{"type":"integer"},"x.y":{}}},
		"free":{"type":"object"},
		"any":{}
	}}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		want bool
	}{
		{"reward", true},
		{"missing", false},
		{"a.b", true}, // a literal dotted key
		{"a", false},  // only "a.b" exists
		{"usage.tokens", true},
		{"usage.x.y", true}, // literal dotted key one level down
		{"usage.other", false},
		{"free.anything.deep", true}, // an object without declared properties
		{"any.thing", true},          // no type: may be an object
		{"reward.value", false},      // a number has no fields
	}
	for _, tt := range tests {
		if got := s.Declares(tt.path); got != tt.want {
			t.Errorf("Declares(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
	empty, _ := Parse([]byte(`{"type":"object"}`))
	if !empty.Declares("whatever.you.like") {
		t.Error("a schema without properties declares every path")
	}
}
