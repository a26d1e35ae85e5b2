package timeline

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/88250/lute/ast"
	"github.com/88250/lute/parse"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/mdexport"
)

const testDoc = "20260805200000-docdocd"

// sy builds a document's .sy file of paragraphs: each "id:text".
func sy(t *testing.T, paras ...string) []byte {
	t.Helper()
	var kids []map[string]any
	for _, p := range paras {
		id, text, _ := strings.Cut(p, ":")
		kids = append(kids, map[string]any{"ID": id, "Type": "NodeParagraph", "Properties": map[string]string{"id": id, "updated": "20260805200000"},
			"Children": []map[string]any{{"Type": "NodeText", "Data": text}}})
	}
	b, err := json.Marshal(map[string]any{"ID": testDoc, "Type": "NodeDocument", "Properties": map[string]string{"id": testDoc, "title": "T"}, "Children": kids})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// domOf renders a .sy file's blocks as SiYuan renders a snapshot's
// document.
func domOf(t *testing.T, data []byte) string {
	t.Helper()
	tree, err := mdexport.ParseSY(data)
	if err != nil {
		t.Fatal(err)
	}
	l := mdexport.NewLute()
	l.RenderOptions.ProtyleContenteditable = false // as SiYuan renders a snapshot
	body := &parse.Tree{Root: &ast.Node{Type: ast.NodeDocument}, Context: tree.Context}
	var kids []*ast.Node
	for n := tree.Root.FirstChild; n != nil; n = n.Next {
		kids = append(kids, n)
	}
	for _, n := range kids {
		body.Root.AppendChild(n)
	}
	return l.Tree2BlockDOM(body, l.RenderOptions, l.ParseOptions)
}

func id(n int) string { return fmt.Sprintf("20260805200000-%07d", n) }

func TestDiffSides(t *testing.T) {
	oldSY := sy(t, id(1)+":one", id(2)+":two", id(3)+":three", id(4)+":four")
	curSY := sy(t, id(1)+":one", id(2)+":TWO", id(4)+":four", id(5)+":five")
	old, err := sideFromDOM(domOf(t, oldSY))
	if err != nil {
		t.Fatal(err)
	}
	cur, err := sideFromSY(curSY)
	if err != nil {
		t.Fatal(err)
	}
	changes := diffSides(old, cur)
	var got []string
	for _, c := range changes {
		bid := ""
		if c.Current != nil {
			bid = c.Current.ID
		} else {
			bid = c.Old.ID
		}
		got = append(got, c.Status+":"+bid[len(bid)-1:])
	}
	if want := "unchanged:1 modified:2 removed:3 unchanged:4 added:5"; strings.Join(got, " ") != want {
		t.Fatalf("changes %v, want %s", got, want)
	}
	rm := changes[2]
	if !rm.Rollbackable || rm.PreviousID != id(2) || !strings.Contains(rm.Old.Kramdown, "three") {
		t.Errorf("removed: %+v", rm)
	}
	if m := changes[1]; !strings.Contains(m.Old.Kramdown, "two") || !strings.Contains(m.Current.Kramdown, "TWO") || !m.Rollbackable {
		t.Errorf("modified: %+v %+v", m.Old, m.Current)
	}
	st := statsOf(changes)
	if st.ChangedBlocks != 3 || st.RollbackableBlocks != 3 || st.UnchangedBlocks != 2 || st.AddedLines < 2 || st.RemovedLines < 2 {
		t.Errorf("stats %+v", st)
	}
	// The same comparison gives the same keys; a change to the block
	// gives another.
	again := diffSides(old, cur)
	for i := range changes {
		if again[i].Key != changes[i].Key {
			t.Errorf("key %d not stable", i)
		}
	}
	cur2, _ := sideFromSY(sy(t, id(1)+":one", id(2)+":TWO!", id(4)+":four", id(5)+":five"))
	if k := diffSides(old, cur2)[1].Key; k == changes[1].Key {
		t.Error("a changed block kept its changeKey")
	}
	// The same document on both sides (one from the snapshot's DOM, one
	// from the file): nothing changed.
	same, _ := sideFromSY(oldSY)
	if st := statsOf(diffSides(old, same)); st.ChangedBlocks != 0 {
		t.Errorf("identical sides differ: %+v", diffSides(old, same))
	}
}

func TestRemovedWithoutAnchor(t *testing.T) {
	old, _ := sideFromSY(sy(t, id(1)+":one"))
	cur, _ := sideFromSY(sy(t, id(2)+":two"))
	changes := diffSides(old, cur)
	for _, c := range changes {
		if c.Status == statusRemoved && (c.Rollbackable || c.Reason == "") {
			t.Errorf("a removed block with no neighbour left is rollbackable: %+v", c)
		}
	}
	// Moved into another block: its id is still in the document.
	cur.All[id(1)] = true
	for _, c := range diffSides(old, cur) {
		if c.Status == statusRemoved && c.Rollbackable {
			t.Errorf("a block still in the document deeper is rollbackable: %+v", c)
		}
	}
}

func TestCursor(t *testing.T) {
	c := compareCursor{Tag: "t", Doc: testDoc, Size: 20, Page: 2, Digest: "abc"}
	s := encodeCursor(c)
	got, err := decodeCursor(s)
	if err != nil || got != c {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	for _, bad := range []string{"", "c1.x.y", s + "x", strings.Replace(s, "c1.", "c2.", 1)} {
		if _, err := decodeCursor(bad); err == nil {
			t.Errorf("%q decoded", bad)
		}
	}
}

func FuzzSides(f *testing.F) {
	f.Add([]byte(`{"ID":"x","Type":"NodeDocument","Children":[]}`), `<div data-node-id="20260805200000-aaaaaaa" data-type="NodeParagraph"><div contenteditable="true">x</div></div>`)
	f.Fuzz(func(t *testing.T, data []byte, dom string) {
		old, err1 := sideFromDOM(dom)
		cur, err2 := sideFromSY(data)
		if err1 == nil && err2 == nil {
			statsOf(diffSides(old, cur))
		}
		parseIndex(string(data), true)
		decodeCursor(dom)
	})
}
