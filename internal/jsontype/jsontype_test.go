package jsontype

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// Of names the type encoding/json reports when a value of another type arrives.
func TestOf(t *testing.T) {
	var v struct {
		S string         `json:"s"`
		B bool           `json:"b"`
		L []int          `json:"l"`
		M map[string]int `json:"m"`
		P *struct{}      `json:"p"`
		N float64        `json:"n"`
		I int            `json:"i"`
	}
	for field, want := range map[string]string{"s": "string", "b": "boolean", "l": "array", "m": "object", "p": "object", "n": "number", "i": "number"} {
		wrong := `"x"`
		if want == "string" {
			wrong = `1`
		}
		err := json.Unmarshal([]byte(`{"`+field+`": `+wrong+`}`), &v)
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) {
			t.Fatalf("%s: no type error: %v", field, err)
		}
		if got := Of(te.Type); te.Field != field || got != want {
			t.Errorf("%s: Of(%v) = %s, want %s", field, te.Type, got, want)
		}
	}
	if Of(reflect.TypeFor[json.RawMessage]()) != "array" {
		t.Error("json.RawMessage is a byte slice to reflect")
	}
}
