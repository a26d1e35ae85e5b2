package tools

import (
	"encoding/json"
	"strings"
	"testing"
)

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

// TestDecodeScalars holds the string and boolean arguments, and the
// action's name, to what json.Unmarshal makes of them.
func TestDecodeScalars(t *testing.T) {
	for _, tt := range []struct {
		typ  ParamType
		raw  string
		want any // nil with ok: absent (null)
		ok   bool
	}{
		{String, `"abc"`, "abc", true},
		{String, `"笔记"`, "笔记", true},
		{String, `"a\"b\u00e9"`, `a"bé`, true},
		{String, "\"a\xffb\"", "a\ufffdb", true},
		{String, ` "padded" `, "padded", true},
		{String, `null`, nil, true},
		{String, `1`, nil, false},
		{String, `["a"]`, nil, false},
		{Boolean, `true`, true, true},
		{Boolean, `false`, false, true},
		{Boolean, ` true `, true, true},
		{Boolean, `null`, nil, true},
		{Boolean, `"true"`, nil, false},
		{Boolean, `1`, nil, false},
		{Boolean, `tru`, nil, false},
	} {
		got, err := Param{Name: "p", Type: tt.typ}.decode([]byte(tt.raw))
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("%s decode(%s) = %v, %v; want %v, ok %v", tt.typ, tt.raw, got, err, tt.want, tt.ok)
		}
	}
	for _, tt := range []struct {
		raw, want string
		ok        bool
	}{
		{`"update"`, "update", true}, {`"\u0075pdate"`, "update", true}, {`null`, "", true}, {``, "", false}, {`1`, "", false}, {`{}`, "", false},
	} {
		var fields map[string]json.RawMessage
		if tt.raw != "" {
			fields = map[string]json.RawMessage{"action": json.RawMessage(tt.raw)}
		}
		got, ok := actionOf(fields)
		var ref string
		refErr := json.Unmarshal(fields["action"], &ref)
		if got != tt.want || ok != tt.ok || ok != (refErr == nil) || ref != got {
			t.Errorf("actionOf(%s) = %q, %v; want %q, %v (json.Unmarshal %q, %v)", tt.raw, got, ok, tt.want, tt.ok, ref, refErr)
		}
	}
}

func TestPageSlice(t *testing.T) {
	all := []int{1, 2, 3, 4, 5, 6, 7}
	const huge = int(^uint(0) >> 1)
	for _, tt := range []struct {
		page, size int
		want       []int
	}{
		{1, 3, []int{1, 2, 3}},
		{2, 3, []int{4, 5, 6}},
		{3, 3, []int{7}},
		{4, 3, []int{}},
		{1, 7, all},
		{2, 7, []int{}},
		{1, 100, all},
		{huge, 3, []int{}},
		{huge / 2, 500, []int{}},
		{1, huge, all},
		{0, 3, []int{}},
		{1, 0, []int{}},
		{-4, -1, []int{}},
	} {
		if got := PageSlice(all, tt.page, tt.size); len(got) != len(tt.want) || len(got) > 0 && got[0] != tt.want[0] {
			t.Errorf("PageSlice(page %d, size %d) = %v, want %v", tt.page, tt.size, got, tt.want)
		}
	}
	if got := PageSlice([]int(nil), 1, 10); len(got) != 0 {
		t.Errorf("an empty list: %v", got)
	}
}

// FuzzPageSlice: every page of every size is a window of the list in
// order, the pages of one size together are the list, and nothing panics.
func FuzzPageSlice(f *testing.F) {
	f.Add(10, 1, 3)
	f.Add(0, 1, 1)
	f.Add(5, int(^uint(0)>>1), 2)
	f.Add(5, -3, 0)
	f.Fuzz(func(t *testing.T, n, page, size int) {
		n = min(max(n, 0), 1000)
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		got := PageSlice(all, page, size)
		if len(got) > max(size, 0) {
			t.Fatalf("page %d of size %d holds %d", page, size, len(got))
		}
		for i, v := range got {
			if v != (page-1)*size+i {
				t.Fatalf("page %d of size %d: %v", page, size, got)
			}
		}
		if size >= 1 && size <= 50 {
			var joined []int
			for p := 1; p <= n/size+1; p++ {
				joined = append(joined, PageSlice(all, p, size)...)
			}
			if len(joined) != n {
				t.Fatalf("the pages of size %d hold %d of %d", size, len(joined), n)
			}
		}
	})
}

// TestNearest: a refused argument name suggests the declared one it
// probably meant, and nothing when none is close.
func TestNearest(t *testing.T) {
	params := []Param{{Name: "id", Type: String}, {Name: "data", Type: String}, {Name: "dataType", Type: String},
		{Name: "pageSize", Type: Integer}, {Name: "parentID", Type: String}, {Name: "validateOnly", Type: Boolean, hidden: true}}
	for _, tt := range []struct{ name, want string }{
		{"blockId", "id"}, {"content", "data"}, {"ID", "id"}, {"data_type", "dataType"}, {"datatype", "dataType"},
		{"pagesize", "pageSize"}, {"pageSzie", "pageSize"}, {"parentId", "parentID"}, {"limit", "pageSize"},
		{"colour", ""}, {"x", ""}, {"validate", ""}, // hidden parameters are not suggested
	} {
		if got := nearest(tt.name, params); got != tt.want {
			t.Errorf("nearest(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
	_, err := bind("update", params, map[string]json.RawMessage{"blockId": []byte(`"x"`), "content": []byte(`"y"`)})
	if err == nil || !strings.Contains(err.Error(), "does not take blockId, content (did you mean id, data?)") {
		t.Errorf("refusal: %v", err)
	}
}
