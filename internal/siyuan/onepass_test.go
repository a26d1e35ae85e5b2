package siyuan

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

type onePassOut struct {
	ID   string         `json:"id"`
	N    int            `json:"n"`
	M    map[string]any `json:"m"`
	L    []int          `json:"l"`
	P    *string        `json:"p"`
	Kram string         `json:"kramdown"`
}

// outs are the kinds of result a call decodes into.
var outs = []func() any{
	func() any { return new(onePassOut) },
	func() any { return new(map[string]any) },
	func() any { return new([]int) },
	func() any { return new(string) },
	func() any { return new(any) },
	func() any { return new(*onePassOut) },
	func() any { return onePassOut{} }, // not a pointer: both must refuse it
}

func TestOnePass(t *testing.T) {
	tests := []struct {
		body string
		want bool
	}{
		{`{"code":0,"msg":"","data":{"id":"x"}}`, true},
		{` {"data":[1],"code":0} `, true},
		{`{"code":0,"msg":null,"data":"s","extra":{"a":[1,{"b":"}"}]}}`, true},
		{`{"Code":0,"MSG":"","Data":1}`, true},
		{`{"code":0,"msg":"","data":null}`, false},
		{`{"code":0,"msg":""}`, false},
		{`{"code":-1,"msg":"no","data":{}}`, false},
		{`{"code":0.0,"data":{}}`, false},
		{`{"code":0,"msg":1,"data":{}}`, false},
		{`{"code":0,"data":{},"data":{}}`, false},
		{`{"code":0,"data":{},"Data":{}}`, false},
		{`{"code":0,"code":0,"data":{}}`, false},
		{`{"\u0063ode":0,"data":{}}`, false},
		{`{"code":0,"dàta":{},"data":{}}`, false},
		{`[{"code":0,"data":{}}]`, false},
		{`<html>`, false},
	}
	for _, tt := range tests {
		if got := onePass([]byte(tt.body)); got != tt.want {
			t.Errorf("onePass(%s) = %v, want %v", tt.body, got, tt.want)
		}
	}
}

// FuzzDecodeDataOnePass holds decodeData to the two-pass decoding it
// replaced (decodeTwoPass, which decodeData falls back to), for every body, every kind of result and both nullable modes:
// the same error (or none) and the same result.
func FuzzDecodeDataOnePass(f *testing.F) {
	for _, s := range []string{
		`{"code":0,"msg":"","data":{"id":"x","n":1,"m":{"a":1},"l":[1,2],"p":"q","kramdown":"k"}}`,
		`{"code":0,"msg":"","data":null}`, `{"code":0,"msg":""}`, `{"code":-1,"msg":"boom","data":{"id":1}}`,
		`{"code":0,"data":{"id":1}}`, `{"code":0,"data":{"n":"x"},"data":{"id":"y"}}`, `{"code":0,"data":[1,"x"]}`,
		`{"code":0,"data":"s"}`, `{"code":0,"data":{}} x`, `{"code":0,"data":{"id":"\ud800"}}`, `{"code":0,"data":01}`,
		`{"CODE":0,"Data":{"ID":"x"}}`, `{"code":0,"msg":7,"data":{}}`, `{}`, `null`, ``,
	} {
		f.Add([]byte(s), uint8(0), false)
	}
	f.Fuzz(func(t *testing.T, body []byte, kind uint8, nullable bool) {
		newOut := outs[int(kind)%len(outs)]
		unknown := func(err error) error { return fmt.Errorf("unknown: %w", err) }
		got, want := newOut(), newOut()
		gerr := decodeData(&request{endpoint: "/e", out: got, nullable: nullable}, 200, body, unknown)
		werr := decodeTwoPass(&request{endpoint: "/e", out: want, nullable: nullable}, 200, body, unknown)
		if fmt.Sprint(gerr) != fmt.Sprint(werr) || reflect.TypeOf(gerr) != reflect.TypeOf(werr) {
			t.Fatalf("%q into %T: error %v, two passes %v", body, got, gerr, werr)
		}
		if gerr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q into %T: %#v, two passes %#v", body, got, got, want)
		}
	})
}

// BenchmarkDecodeData decodes a 1,000-paragraph document's kramdown reply,
// in one pass and in the two it replaced.
func BenchmarkDecodeData(b *testing.B) {
	var md strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&md, "Paragraph %d with **some** \"text\".\n{: id=\"20260812120000-abc%04d\" updated=\"20260812120000\"}\n\n", i, i)
	}
	body, _ := json.Marshal(map[string]any{"code": 0, "msg": "", "data": map[string]any{"id": "x", "kramdown": md.String()}})
	unknown := func(err error) error { return err }
	for _, bb := range []struct {
		name   string
		decode func(*request, int, []byte, func(error) error) error
	}{{"one-pass", decodeData}, {"two-pass", decodeTwoPass}} {
		b.Run(bb.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				var out onePassOut
				if err := bb.decode(&request{endpoint: "/e", out: &out}, 200, body, unknown); err != nil || out.Kram == "" {
					b.Fatal(err)
				}
			}
		})
	}
}
