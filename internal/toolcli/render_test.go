package toolcli

import (
	"bytes"
	"slices"
	"testing"
)

func TestRender(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"markdown body", `{"content":"# T\n\ntext","document":{"id":"x"}}`, "# T\n\ntext\n"},
		{"kramdown body", `{"id":"x","kramdown":"para\n{: id=\"x\"}\n"}`, "para\n{: id=\"x\"}\n"},
		{"table", `{"notebooks":[{"name":"A","id":"1","closed":false},{"id":"2","name":"B","closed":true}],"total":2}`,
			"total: 2\nnotebooks:\n  ID  NAME  CLOSED\n  1   A     false\n  2   B     true\n"},
		{"nested", `{"a":{"b":1.5,"c":null},"l":["x","y"],"e":[]}`, "a:\n  b: 1.5\n  c: -\ne: (none)\nl:\n  - x\n  - y\n"},
		{"big number", `{"n":1796533885304}`, "n: 1796533885304\n"},
		{"error", `{"error":{"code":"not_found","message":"no block","action":"check the id"},"writeAttempted":false}`,
			"error not_found: no block\nwhat to do: check the id\n"},
		{"cell on one line", `{"rows":[{"id":"1","text":"a\nb"}]}`, "rows:\n  ID  TEXT\n  1   a ⏎ b\n"},
		{"not json", `nope`, "nope\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			Render(&b, []byte(tt.in))
			if b.String() != tt.want {
				t.Fatalf("got\n%q\nwant\n%q", b.String(), tt.want)
			}
		})
	}
}

func TestComplete(t *testing.T) {
	tl, _ := action(t, "document", "get_doc")
	tests := []struct {
		args       []string
		toComplete string
		want, not  []string
	}{
		{nil, "get_", []string{"get_doc", "get_outline"}, []string{"create"}},
		{[]string{"get_doc"}, "--", []string{"--id", "--mode", "--include-block-ids", "--no-include-block-ids", "--json"}, []string{"--validate-only", "--request-id"}},
		{[]string{"get_doc", "--mode"}, "", []string{"markdown", "html"}, nil},
		{[]string{"rename"}, "--", []string{"--title", "--validate-only"}, []string{"--expected-state-hash"}},
		{[]string{"remove"}, "--y", []string{"--yes"}, nil},
		{[]string{"nope"}, "--", nil, []string{"--id"}},
	}
	for _, tt := range tests {
		got := Complete(tl, tt.args, tt.toComplete)
		for _, w := range tt.want {
			if !slices.Contains(got, w) {
				t.Errorf("Complete(%v, %q) = %v, lacks %s", tt.args, tt.toComplete, got, w)
			}
		}
		for _, n := range tt.not {
			if slices.Contains(got, n) {
				t.Errorf("Complete(%v, %q) offers %s", tt.args, tt.toComplete, n)
			}
		}
	}
}

// FuzzRender: whatever an answer holds, rendering it neither panics nor
// loses its text.
func FuzzRender(f *testing.F) {
	f.Add(`{"notebooks":[{"id":"1","name":"A"}],"total":1}`)
	f.Add(`{"content":"# x"}`)
	f.Add(`[[1,{"a":[]}],null,"s"]`)
	f.Add(`{"error":{"code":1}}`)
	f.Fuzz(func(t *testing.T, s string) {
		var b bytes.Buffer
		Render(&b, []byte(s))
	})
}
