// Package jsontype names the JSON type a Go value decodes from, for the "must be of
// type ..." messages of bad input (the preflight's run configuration, the CLI's files).
package jsontype

import "reflect"

// Of is the JSON type a value of Go type t decodes from: string, boolean, array, object
// or number.
func Of(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Map, reflect.Struct, reflect.Pointer, reflect.Interface:
		return "object"
	default:
		return "number"
	}
}
