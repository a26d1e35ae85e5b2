package block

import (
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// The argument forms upstream 0.6.8 documents for the block actions this
// tool shares with it (issue 26).

// TestBlockReplaceEdit: replace's edit argument, one object or a list
// applied in order inside the block's kramdown, all or nothing.
func TestBlockReplaceEdit(t *testing.T) {
	s := newStrictFixture(t, false)
	const text = "alpha beta beta gamma"
	fresh := func(t *testing.T) string {
		doc := s.MkDoc(t, s.NB, "/Edits", text+"\n")
		return s.Kids(t, doc)[0]
	}
	for _, tc := range []struct {
		name           string
		edit           any
		want           string
		replaced, nEds int
	}{
		{"one object", map[string]any{"old": "alpha", "new": "A"}, "A beta beta gamma", 1, 1},
		{"a list of one", []any{map[string]any{"old": "gamma", "new": ""}}, "alpha beta beta ", 1, 1},
		{"in order, each on the text the ones before it left", []any{
			map[string]any{"old": "alpha", "new": "delta"},
			map[string]any{"old": "delta", "new": "epsilon"},
		}, "epsilon beta beta gamma", 2, 2},
		{"replace_all", []any{map[string]any{"old": "beta", "new": "b", "replace_all": true}}, "alpha b b gamma", 2, 1},
		{"replaceAll inside an edit", map[string]any{"old": "beta", "new": "B", "replaceAll": true}, "alpha B B gamma", 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := fresh(t)
			args := map[string]any{"action": "replace", "id": id, "edit": tc.edit}
			pre := s.Preflight(t, "block", args, "expectedStateHash", 1)
			res := s.Commit(t, "block", args, pre)
			body, _ := splitIAL(s.Text(t, id))
			if strings.TrimRight(body, " ") != strings.TrimRight(tc.want, " ") || res["replaced"] != float64(tc.replaced) || res["edits"] != float64(tc.nEds) {
				t.Fatalf("got %q %v, want %q", body, res, tc.want)
			}
			s.Replay(t, "block", args, pre, res)
		})
	}
	id := fresh(t)
	many := make([]any, 65)
	for i := range many {
		many[i] = map[string]any{"old": "a", "new": "a"}
	}
	for _, tc := range []struct {
		name string
		args map[string]any
		msg  string
	}{
		{"edit and old/new", map[string]any{"edit": map[string]any{"old": "alpha", "new": "A"}, "old": "alpha", "new": "A"}, "not both"},
		{"edit and replaceAll", map[string]any{"edit": map[string]any{"old": "alpha", "new": "A"}, "replaceAll": true}, "not both"},
		{"neither", map[string]any{}, "missing argument"},
		{"old without new", map[string]any{"old": "alpha"}, "needs new"},
		{"an empty list", map[string]any{"edit": []any{}}, "non-empty"},
		{"too many edits", map[string]any{"edit": many}, "1 to 64"},
		{"an edit without new", map[string]any{"edit": map[string]any{"old": "alpha"}}, "needs new"},
		{"an edit with empty old", map[string]any{"edit": map[string]any{"old": "", "new": "x"}}, "needs old"},
		{"a misspelt field", map[string]any{"edit": map[string]any{"old": "alpha", "new": "x", "replace-all": true}}, "unknown field"},
		{"an attribute list", map[string]any{"edit": []any{map[string]any{"old": "alpha", "new": "x\n{: custom-a=\"b\"}"}}}, "attribute list"},
		{"a later edit that does not match", map[string]any{"edit": []any{
			map[string]any{"old": "alpha", "new": "A"}, map[string]any{"old": "alpha", "new": "B"}}}, "edit #2's old does not occur"},
		{"a later edit that matches twice", map[string]any{"edit": []any{
			map[string]any{"old": "gamma", "new": "G"}, map[string]any{"old": "beta", "new": "B"}}}, "edit #2's old occurs 2 times"},
		{"edits that leave two blocks", map[string]any{"edit": []any{
			map[string]any{"old": "alpha", "new": "A"}, map[string]any{"old": "gamma", "new": "\n\nsecond"}}}, "one block"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := s.InvalidAt(t, "block", tooltest.CopyArgs(tc.args, "action", "replace", "id", id), false)
			if !strings.Contains(e.Message, tc.msg) {
				t.Fatalf("message %q, want %q", e.Message, tc.msg)
			}
		})
	}
	if body, _ := splitIAL(s.Text(t, id)); body != text {
		t.Fatalf("a refused replace wrote: %q", body)
	}
	s.WantErr(t, "block", map[string]any{"action": "replace", "id": "20200101010101-abcdefg", "edit": map[string]any{"old": "a", "new": "b"}, "validateOnly": true}, failure.NotFound)
}
