package jsonobj

import (
	"bytes"
	"encoding/json"
	"maps"
	"testing"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want map[string]string // nil: not an object
	}{
		{"empty", ` { } `, map[string]string{}},
		{"members keep their exact bytes", `{"a": 1 ,"b":[1, {"c":"}"}], "d":"x\"y" , "e":null,"f":-1.5e3,"g":true}`,
			map[string]string{"a": `1`, "b": `[1, {"c":"}"}]`, "d": `"x\"y"`, "e": `null`, "f": `-1.5e3`, "g": `true`}},
		{"escaped key", `{"\u006dethod":"x","a\\b":1,"\"":2}`, map[string]string{"method": `"x"`, `a\b`: `1`, `"`: `2`}},
		{"a later duplicate wins", `{"a":1,"a":{"b":2}}`, map[string]string{"a": `{"b":2}`}},
		{"strings holding brackets and escapes", `{"a":"[{\\","b":["]\"",{}]}`, map[string]string{"a": `"[{\\"`, "b": `["]\"",{}]`}},
		{"non-ASCII key", `{"é":1}`, map[string]string{"é": `1`}},
		{"array", `[1]`, nil},
		{"string", `"{}"`, nil},
		{"null", `null`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Split([]byte(tt.in))
			if ok != (tt.want != nil) {
				t.Fatalf("ok %v, want %v", ok, tt.want != nil)
			}
			if !ok {
				return
			}
			gs := map[string]string{}
			for k, v := range got {
				gs[k] = string(v)
			}
			if !maps.Equal(gs, tt.want) {
				t.Fatalf("got %q, want %q", gs, tt.want)
			}
			var ref map[string]json.RawMessage
			if err := json.Unmarshal([]byte(tt.in), &ref); err != nil || !sameFields(got, ref) {
				t.Fatalf("differs from json.Unmarshal: %q vs %q (%v)", got, ref, err)
			}
		})
	}
	t.Run("a value's capacity ends with it", func(t *testing.T) {
		data := []byte(`{"a":1,"b":2}`)
		got, _ := Split(data)
		_ = append(got["a"], '9')
		if string(data) != `{"a":1,"b":2}` {
			t.Fatalf("an append wrote into the message: %s", data)
		}
	})
}

func TestString(t *testing.T) {
	tests := []struct {
		name, in, want string
		ok             bool
	}{
		{"ASCII", `"abc"`, "abc", true},
		{"UTF-8 as written", `"笔记 é"`, "笔记 é", true},
		{"an escaped quote", `"a\"b"`, `a"b`, true},
		{"a unicode escape", `"\u7b14"`, "笔", true},
		{"invalid UTF-8 is replaced", "\"a\xffb\"", "a\ufffdb", true},
		{"an encoded U+FFFD stays", "\"\xef\xbf\xbd\"", "\ufffd", true},
		{"empty", `""`, "", true},
		{"a raw control character is not a string", "\"a\tb\"", "", false},
		{"a number", `12`, "", false},
		{"null", `null`, "", false},
		{"unterminated", `"abc`, "", false},
		{"a quote inside", `"a"b"`, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := String([]byte(tt.in))
			if got != tt.want || ok != tt.ok {
				t.Fatalf("String(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
			}
			var ref string
			err := json.Unmarshal([]byte(tt.in), &ref)
			if tt.in != "null" && (err == nil) != ok || ok && ref != got {
				t.Fatalf("json.Unmarshal: %q, %v", ref, err)
			}
		})
	}
}

func sameFields(a, b map[string]json.RawMessage) bool {
	return maps.EqualFunc(a, b, func(x, y json.RawMessage) bool { return bytes.Equal(x, y) })
}

// FuzzSplit holds the splitter to json.Unmarshal on every valid
// document, and to not panicking on anything.
func FuzzSplit(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, `{"\u0061":"\"}","a":[{}]}`, `{"a":"\xff"}`, "{\"\xff\":1}",
		`{"a" : { "b" : [ 1 , 2 ] } , "c" : "d" }`, `[]`, `"x"`, `{"a":1}x`, `{"a":}`, `{`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, ok := Split(data) // must not panic, valid or not
		if !json.Valid(data) {
			return
		}
		if s := bytes.TrimSpace(data); s[0] != '{' {
			if ok {
				t.Fatalf("%q is not an object, split as %q", data, got)
			}
			return
		}
		var want map[string]json.RawMessage
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatalf("json.Unmarshal of a valid object: %v", err)
		}
		if !ok || !sameFields(got, want) {
			t.Fatalf("%q: split %q (ok %v), json.Unmarshal %q", data, got, ok, want)
		}
		for _, v := range got {
			if s, ok := String(v); v[0] == '"' {
				var ref string
				if err := json.Unmarshal(v, &ref); err != nil || !ok || s != ref {
					t.Fatalf("string %q: %q (ok %v), json.Unmarshal %q (%v)", v, s, ok, ref, err)
				}
			} else if ok {
				t.Fatalf("%q is not a string, read as %q", v, s)
			}
		}
	})
}

// FuzzString holds String to json.Unmarshal into a string on any bytes
// (a value's exact bytes: no surrounding space).
func FuzzString(f *testing.F) {
	for _, s := range []string{`"abc"`, `"笔记"`, `"a\"b"`, "\"a\xffb\"", `"\ud800"`, `"a`, `"a"b"`, "\"\t\"", `null`, `1`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) == 0 || len(bytes.TrimSpace(raw)) != len(raw) {
			return
		}
		got, ok := String(raw)
		var ref string
		err := json.Unmarshal(raw, &ref)
		isString := err == nil && raw[0] == '"'
		if ok != isString || ok && got != ref {
			t.Fatalf("String(%q) = %q, %v; json.Unmarshal %q, %v", raw, got, ok, ref, err)
		}
	})
}
