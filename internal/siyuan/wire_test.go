package siyuan

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// TestCopiesMatchWire holds the client's own decode shapes of wire types,
// kept where the wire type will not do, to the wire type's JSON fields: same
// names, same types once pointers are looked through (RawMessage stands for
// any JSON). Add a row for every such copy.
func TestCopiesMatchWire(t *testing.T) {
	tests := []struct {
		name       string
		copy, wire reflect.Type
	}{
		{"envelope", reflect.TypeFor[rawEnvelope](), reflect.TypeFor[wire.Result]()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, want := jsonFields(tt.copy), jsonFields(tt.wire)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s has JSON fields %v, %s has %v", tt.copy, got, tt.wire, want)
			}
		})
	}
}

// TestJSONFieldsSeesDrift keeps TestCopiesMatchWire honest.
func TestJSONFieldsSeesDrift(t *testing.T) {
	type renamed struct {
		Code int    `json:"code"`
		Msg  string `json:"message"`
		Data any    `json:"data"`
	}
	type retyped struct {
		Code *string         `json:"code"`
		Msg  *string         `json:"msg"`
		Data json.RawMessage `json:"data"`
	}
	type extra struct {
		rawEnvelope
		Extra int `json:"extra"`
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[renamed](), reflect.TypeFor[retyped](), reflect.TypeFor[extra]()} {
		if reflect.DeepEqual(jsonFields(typ), jsonFields(reflect.TypeFor[wire.Result]())) {
			t.Errorf("%s passes for wire.Result", typ)
		}
	}
}

// jsonFields maps a struct's JSON field names to their types, pointers
// dereferenced and json.RawMessage read as any. Embedded structs are
// flattened as encoding/json flattens them (without its tie-breaking rules,
// which no copy should rely on).
func jsonFields(typ reflect.Type) map[string]string {
	out := map[string]string{}
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() && !f.Anonymous {
			continue
		}
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			for k, v := range jsonFields(f.Type) {
				out[k] = v
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft == reflect.TypeFor[json.RawMessage]() {
			ft = reflect.TypeFor[any]()
		}
		out[name] = ft.String()
	}
	return out
}
