package tools

import "testing"

func TestUnstorable(t *testing.T) {
	for _, tt := range []struct {
		raw  string
		want string
	}{
		{`{"data":"plain text, é and 😀"}`, ""},
		{`{"data":"\ud83d\ude00 a pair"}`, ""},
		{`{"data":"a \\u0000 is text"}`, ""},
		{`{"data":"nul \u0000 here"}`, "a NUL character (\\u0000)"},
		{`{"data":"lone \ud83d here"}`, "an unpaired UTF-16 surrogate"},
		{`{"data":"lone \ude00 here"}`, "an unpaired UTF-16 surrogate"},
		{"{\"data\":\"\xff\xfe\"}", "bytes that are not valid UTF-8"},
	} {
		if got := unstorable([]byte(tt.raw)); got != tt.want {
			t.Errorf("unstorable(%s) = %q, want %q", tt.raw, got, tt.want)
		}
	}
}

func FuzzUnstorable(f *testing.F) {
	f.Add(`{"data":"\u0000"}`)
	f.Add(`{"x":"\ud800\udc00"}`)
	f.Fuzz(func(t *testing.T, raw string) { unstorable([]byte(raw)) })
}

func TestOneOrObjects(t *testing.T) {
	p := Param{Name: "edit", Type: OneOrObjects}
	for _, tt := range []struct {
		raw  string
		want int // list length; -1: refused
	}{
		{`{"old":"a"}`, 1}, {` [{"old":"a"},{"old":"b"}]`, 2}, {`[]`, -1}, {`[null]`, -1}, {`"x"`, -1}, {`[1]`, -1}, {`{`, -1},
	} {
		v, err := p.decode([]byte(tt.raw))
		l, _ := v.([]map[string]any)
		if tt.want < 0 && err == nil || tt.want >= 0 && (err != nil || len(l) != tt.want) {
			t.Errorf("decode(%s) = %v, %v; want %d", tt.raw, v, err, tt.want)
		}
	}
	if s := p.schema(); s["type"] != nil || s["anyOf"] == nil {
		t.Errorf("schema: %v", s)
	}
}
