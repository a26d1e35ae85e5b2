package block

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

func (s *sfix) tree(t *testing.T, root string) *docTree {
	t.Helper()
	tr, err := readDocTree(context.Background(), &tools.Env{Kernel: s.C}, root)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestBlockMove(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	b := s.Blocks
	args := map[string]any{"action": "move", "ids": []any{b[0], b[1]}, "previousID": b[4]}
	pre := s.Preflight(t, "block", args, "expectedStructureHash", 3)
	res := s.Commit(t, "block", args, pre)
	want := append([]string{b[2], b[3], b[4], b[0], b[1]}, b[5:]...)
	if got := s.Kids(t, s.Doc); !slices.Equal(got, want) {
		t.Fatalf("move after: %v, want %v", got, want)
	}
	if order, _ := res["apiCallOrder"].([]any); len(order) != 2 || order[0] != b[1] || res["moved"] != float64(2) {
		t.Fatalf("move payload: %v", res)
	}
	// Someone moves b[0] back; a replay must not move it again.
	if err := s.C.MoveBlock(ctx, b[0], "", s.Doc); err != nil {
		t.Fatal(err)
	}
	s.Replay(t, "block", args, pre, res)
	if got := s.Kids(t, s.Doc); got[0] != b[0] {
		t.Fatal("a replay moved again")
	}

	// To the start of a container, in another document.
	other := s.MkDoc(t, s.NB, "/Other", "> quoted\n\n- item one\n- item two\n\nlast\n")
	top := s.Kids(t, other)
	quote, list, last := top[0], top[1], top[2]
	in := map[string]any{"action": "move", "ids": []any{b[5], b[6]}, "parentID": quote}
	s.Commit(t, "block", in, s.Preflight(t, "block", in, "expectedStructureHash", 3))
	if got := s.Kids(t, quote); len(got) != 3 || got[0] != b[5] || got[1] != b[6] {
		t.Fatalf("move into a quote: %v", got)
	}
	if slices.Contains(s.Kids(t, s.Doc), b[5]) {
		t.Fatal("the block stayed in its old document")
	}
	// A list item moved after a paragraph is wrapped in a new list.
	item := s.Kids(t, list)[0]
	wrap := map[string]any{"action": "move", "id": item, "previousID": last}
	s.Commit(t, "block", wrap, s.Preflight(t, "block", wrap, "expectedStructureHash", 2))
	tr := s.tree(t, other)
	if l := tr.parent[item]; tr.typ[l] != "NodeList" || tr.index(other, l) != tr.index(other, last)+1 {
		t.Fatalf("wrapped list item: parent %s (%s)", l, tr.typ[l])
	}

	// Structure drift after preflight: a block appears between the anchor and
	// its next sibling; then a moved block changes.
	drift := map[string]any{"action": "move", "id": b[7], "previousID": b[9]}
	pre = s.Preflight(t, "block", drift, "expectedStructureHash", 2)
	s.Drifted(t, "block", drift, pre, func() {
		if _, err := s.C.AppendBlock(ctx, "markdown", "appended by the UI", s.Doc); err != nil {
			t.Fatal(err)
		}
	})
	pre = s.Preflight(t, "block", drift, "expectedStructureHash", 2)
	s.Drifted(t, "block", drift, pre, func() {
		if err := s.C.SetBlockAttrs(ctx, b[7], map[string]string{"custom-x": "1"}); err != nil {
			t.Fatal(err)
		}
	})
	before := s.Kids(t, s.Doc)
	// Moving a block to where it already is changes nothing.
	still := map[string]any{"action": "move", "id": b[9], "previousID": b[8]}
	pre = s.Preflight(t, "block", still, "expectedStructureHash", 2)
	if res := s.OK(t, "block", tooltest.CommitArgs(still, pre)); res["status"] != "no_change" {
		t.Fatalf("no-op move: %v", res)
	}
	if !slices.Equal(before, s.Kids(t, s.Doc)) {
		t.Fatal("a no-op move changed the order")
	}

	inner := s.Kids(t, quote)[0]
	for _, bad := range []map[string]any{
		{"action": "move", "id": b[8], "ids": []any{b[9]}, "previousID": b[10]},
		{"action": "move", "id": b[8]},
		{"action": "move", "id": b[8], "previousID": b[9], "parentID": s.Doc},
		{"action": "move", "ids": []any{b[8], b[9]}, "previousID": b[9]},
		{"action": "move", "ids": []any{b[8], b[8]}, "previousID": b[10]},
		{"action": "move", "id": b[8], "previousID": s.Doc},
		{"action": "move", "id": other, "parentID": s.Doc},
		{"action": "move", "id": quote, "previousID": inner},
	} {
		s.InvalidAt(t, "block", bad, false)
	}
	s.WantErr(t, "block", map[string]any{"action": "move", "id": b[8], "previousID": "20200101010101-abcdefg", "validateOnly": true}, failure.NotFound)
	// A leaf as parentID: the kernel refuses; nothing was applied.
	leaf := map[string]any{"action": "move", "id": b[8], "parentID": b[10]}
	pre = s.Preflight(t, "block", leaf, "expectedStructureHash", 2)
	s.WantErr(t, "block", tooltest.CommitArgs(leaf, pre), failure.Rejected)
}

func TestBlockReplace(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	id := s.Blocks[3]
	if err := s.C.SetBlockAttrs(ctx, id, map[string]string{"custom-keep": "me", "name": "n1"}); err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"action": "replace", "id": id, "old": "graph 3", "new": "graph **three**"}
	pre := s.Preflight(t, "block", args, "expectedStateHash", 1)
	res := s.Commit(t, "block", args, pre)
	kd := s.Text(t, id)
	if !strings.HasPrefix(kd, "paragraph **three**\n") || !strings.Contains(kd, `custom-keep="me"`) || !strings.Contains(kd, `name="n1"`) ||
		res["replaced"] != float64(1) {
		t.Fatalf("replace: %v\n%s", res, kd)
	}
	for k, v := range res {
		if strings.HasPrefix(k, "_") || v == textDigest("paragraph **three**") {
			t.Fatalf("verification detail %s leaked into the answer", k)
		}
	}
	if _, err := s.C.UpdateBlock(ctx, id, "markdown", "paragraph 3 again"); err != nil {
		t.Fatal(err)
	}
	s.Replay(t, "block", args, pre, res)
	if !strings.HasPrefix(s.Text(t, id), "paragraph 3 again") {
		t.Fatal("a replay replaced again")
	}

	// replaceAll, and markdown the kernel respells (the block then shows
	// exactly the text the kernel applied).
	id = s.Blocks[4]
	if _, err := s.C.UpdateBlock(ctx, id, "markdown", "a-b a-b a-b"); err != nil {
		t.Fatal(err)
	}
	all := map[string]any{"action": "replace", "id": id, "old": "a-b", "new": "__c__", "replaceAll": true}
	res = s.Commit(t, "block", all, s.Preflight(t, "block", all, "expectedStateHash", 1))
	if kd := s.Text(t, id); !strings.HasPrefix(kd, "**c** **c** **c**") || res["replaced"] != float64(3) {
		t.Fatalf("replaceAll: %v\n%s", res, kd)
	}

	// Drift after preflight: an attribute.
	drift := map[string]any{"action": "replace", "id": s.Blocks[5], "old": "5", "new": "five"}
	pre = s.Preflight(t, "block", drift, "expectedStateHash", 1)
	s.Drifted(t, "block", drift, pre, func() {
		if err := s.C.SetBlockAttrs(ctx, s.Blocks[5], map[string]string{"custom-x": "y"}); err != nil {
			t.Fatal(err)
		}
	})
	if strings.Contains(s.Text(t, s.Blocks[5]), "five") {
		t.Fatal("a state_changed replace wrote")
	}
	// The text edited away after preflight: state_changed, not a refusal.
	pre = s.Preflight(t, "block", drift, "expectedStateHash", 1)
	s.Drifted(t, "block", drift, pre, func() {
		if _, err := s.C.UpdateBlock(ctx, s.Blocks[5], "markdown", "paragraph V"); err != nil {
			t.Fatal(err)
		}
	})

	// A folded heading stays folded and keeps its level.
	doc := s.MkDoc(t, s.NB, "/Headings", "## Title here\n\nunder it\n")
	h := s.Kids(t, doc)[0]
	if err := s.C.FoldBlock(ctx, h); err != nil {
		t.Fatal(err)
	}
	hargs := map[string]any{"action": "replace", "id": h, "old": "here", "new": "there"}
	s.Commit(t, "block", hargs, s.Preflight(t, "block", hargs, "expectedStateHash", 1))
	if attrs, _ := s.C.GetBlockAttrs(ctx, h); attrs["fold"] != "1" || !strings.HasPrefix(s.Text(t, h), "## Title there\n") {
		t.Fatalf("heading: %v %s", attrs, s.Text(t, h))
	}

	complexDoc := s.MkDoc(t, s.NB, "/Complex", "```go\nx := 1\n```\n\n- item x\n\n| x | y |\n|---|---|\n| 1 | 2 |\n\n$$\nx\n$$\n")
	for _, c := range s.Kids(t, complexDoc) {
		e := s.InvalidAt(t, "block", map[string]any{"action": "replace", "id": c, "old": "x", "new": "z"}, false)
		if !strings.Contains(e.Message, "paragraph or heading") {
			t.Fatalf("complex block message: %s", e.Message)
		}
	}
	p := s.Blocks[6]
	for _, bad := range []map[string]any{
		{"action": "replace", "id": p, "old": "absent", "new": "x"},
		{"action": "replace", "id": p, "old": "a", "new": "x"}, // "paragraph 6": three a's
		{"action": "replace", "id": p, "old": "", "new": "x"},
		{"action": "replace", "id": p, "old": "6", "new": "6\n{: custom-a=\"b\"}"},
		{"action": "replace", "id": p, "old": "6", "new": "6\n\nsecond block"},
		{"action": "replace", "id": p, "old": "paragraph 6", "new": " "},
		{"action": "replace", "id": s.Doc, "old": "paragraph", "new": "x"},
		{"action": "replace", "id": p, "old": "id=", "new": "x"},
	} {
		s.InvalidAt(t, "block", bad, false)
	}
	s.WantErr(t, "block", map[string]any{"action": "replace", "id": "20200101010101-abcdefg", "old": "a", "new": "b", "validateOnly": true}, failure.NotFound)
}

func TestParseDocTree(t *testing.T) {
	dom := `<div data-node-id="a" data-type="NodeParagraph"><div>t<span data-id="x">r</span></div></div>` +
		`<div data-node-id="l" data-type="NodeList"><div data-node-id="i" data-type="NodeListItem"><div data-node-id="p" data-type="NodeParagraph"></div></div></div>`
	tr, err := parseDocTree("d", dom)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(tr.children["d"], []string{"a", "l"}) || tr.parent["p"] != "i" || !slices.Equal(tr.ancestors("p"), []string{"i", "l", "d"}) || tr.typ["i"] != "NodeListItem" {
		t.Fatalf("tree: %+v", tr)
	}
	if body, ial := splitIAL("text\n{: id=\"x\"}\n"); body != "text" || ial != `{: id="x"}` {
		t.Fatalf("splitIAL: %q %q", body, ial)
	}
}
