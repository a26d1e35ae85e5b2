package block

import (
	"slices"
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

// TestBlockInsertBatch: insert's blocks[], one write whose items land in
// the order given, each readback-checked.
func TestBlockInsertBatch(t *testing.T) {
	s := newStrictFixture(t, false)
	// fresh is a document of paragraphs p0 p1 p2 and their ids.
	fresh := func(t *testing.T) (string, []string) {
		doc := s.MkDoc(t, s.NB, "/Batch", "p0\n\np1\n\np2\n")
		return doc, s.Kids(t, doc)
	}
	// texts are the first lines of a document's top-level blocks.
	texts := func(t *testing.T, doc string) string {
		var out []string
		for _, id := range s.Kids(t, doc) {
			line, _, _ := strings.Cut(s.Text(t, id), "\n")
			out = append(out, line)
		}
		return strings.Join(out, " ")
	}
	md := func(data string, anchors ...string) map[string]any {
		m := map[string]any{"dataType": "markdown", "data": data}
		for i := 0; i+1 < len(anchors); i += 2 {
			m[anchors[i]] = anchors[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		name  string
		args  func(doc string, p []string) map[string]any
		want  string
		added int
	}{
		{"after a top-level previousID, in order", func(_ string, p []string) map[string]any {
			return map[string]any{"previousID": p[0], "blocks": []any{md("A"), md("B"), md("C")}}
		}, "p0 A B C p1 p2", 3},
		{"before a top-level nextID, in order", func(_ string, p []string) map[string]any {
			return map[string]any{"nextID": p[1], "blocks": []any{md("A"), md("B"), md("C")}}
		}, "p0 A B C p1 p2", 3},
		{"first in a top-level parentID, in order", func(doc string, _ []string) map[string]any {
			return map[string]any{"parentID": doc, "blocks": []any{md("A"), md("B"), md("C")}}
		}, "A B C p0 p1 p2", 3},
		{"items' own anchors", func(_ string, p []string) map[string]any {
			return map[string]any{"blocks": []any{md("A", "previousID", p[2]), md("B", "nextID", p[0])}}
		}, "B p0 p1 p2 A", 2},
		{"own anchors replace the top-level ones", func(doc string, p []string) map[string]any {
			return map[string]any{"previousID": p[0], "blocks": []any{md("A"), md("B", "parentID", doc), md("C")}}
		}, "B p0 A C p1 p2", 3},
		{"an item of several blocks; dataType from the top level", func(_ string, p []string) map[string]any {
			return map[string]any{"previousID": p[2], "dataType": "markdown", "blocks": []any{
				map[string]any{"data": "M1\n\nM2"}, map[string]any{"data": "N"}}}
		}, "p0 p1 p2 M1 M2 N", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, p := fresh(t)
			args := tooltest.CopyArgs(tc.args(doc, p), "action", "insert")
			pre := s.Preflight(t, "block", args, "", len(insertTargets(args)))
			res := s.Commit(t, "block", args, pre)
			ids, _ := res["ids"].([]any)
			if got := texts(t, doc); got != tc.want || len(ids) != tc.added || res["count"] != float64(len(args["blocks"].([]any))) {
				t.Fatalf("got %q %v, want %q", got, res, tc.want)
			}
			s.Replay(t, "block", args, pre, res)
			if got := texts(t, doc); got != tc.want {
				t.Fatalf("a replay inserted again: %q", got)
			}
		})
	}
	doc, p := fresh(t)
	many := make([]any, 51)
	for i := range many {
		many[i] = md("x")
	}
	for _, tc := range []struct {
		name string
		args map[string]any
		code failure.Code
		msg  string
	}{
		{"data and blocks", map[string]any{"previousID": p[0], "data": "x", "blocks": []any{md("A")}}, failure.InvalidArguments, "not both"},
		{"neither", map[string]any{"previousID": p[0]}, failure.InvalidArguments, "missing argument"},
		{"an empty list", map[string]any{"previousID": p[0], "blocks": []any{}}, failure.InvalidArguments, "1 to 50"},
		{"too many", map[string]any{"previousID": p[0], "blocks": many}, failure.InvalidArguments, "1 to 50"},
		{"no anchor anywhere", map[string]any{"blocks": []any{md("A", "previousID", p[0]), md("B")}}, failure.InvalidArguments, "blocks[1] has no anchor"},
		{"a misspelt field", map[string]any{"previousID": p[0], "blocks": []any{map[string]any{"data": "A", "parentId": doc}}}, failure.InvalidArguments, "unknown field"},
		{"no data", map[string]any{"previousID": p[0], "blocks": []any{map[string]any{"dataType": "markdown"}}}, failure.InvalidArguments, "blocks[0].data"},
		{"a bad dataType", map[string]any{"previousID": p[0], "blocks": []any{map[string]any{"data": "A", "dataType": "html"}}}, failure.InvalidArguments, "dataType"},
		{"a malformed anchor", map[string]any{"blocks": []any{md("A", "previousID", "p0")}}, failure.InvalidArguments, "blocks[0].previousID"},
		{"an unknown anchor", map[string]any{"blocks": []any{md("A", "previousID", p[0]), md("B", "nextID", "20200101010101-abcdefg")}}, failure.NotFound, "blocks[1].nextID"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := s.WantErr(t, "block", tooltest.CopyArgs(tc.args, "action", "insert", "validateOnly", true), tc.code)
			if !strings.Contains(e.Message, tc.msg) {
				t.Fatalf("message %q, want %q", e.Message, tc.msg)
			}
		})
	}
	// The kernel checks every entry before it applies any: a leaf as an
	// item's parent refuses the whole batch, and nothing is inserted.
	leaf := map[string]any{"action": "insert", "blocks": []any{md("A", "previousID", p[0]), md("B", "parentID", p[1])}}
	pre := s.Preflight(t, "block", leaf, "", 2)
	s.WantErr(t, "block", tooltest.CommitArgs(leaf, pre), failure.Rejected)
	if got := texts(t, doc); got != "p0 p1 p2" {
		t.Fatalf("a refused batch inserted: %q", got)
	}
}

// insertTargets are the distinct anchor ids of an insert's arguments.
func insertTargets(args map[string]any) []string {
	var ids []string
	add := func(m map[string]any) {
		for _, k := range anchorNames {
			if id, _ := m[k].(string); id != "" && !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	add(args)
	blocks, _ := args["blocks"].([]any)
	for _, b := range blocks {
		add(b.(map[string]any))
	}
	return ids
}
