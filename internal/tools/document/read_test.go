package document

import (
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

func TestDocumentReads(t *testing.T) {
	f := tooltest.New(t, testTools)
	for _, args := range []map[string]any{
		{"action": "lookup", "id": f.Blocks[2]},
		{"action": "lookup", "notebook": f.NB, "hpath": "/Guide"},
		{"action": "lookup", "notebook": f.NB, "path": "/" + f.Doc + ".sy"},
	} {
		m := f.OK(t, "document", args)
		docs := m["documents"].([]any)
		if len(docs) != 1 || docs[0].(map[string]any)["id"] != f.Doc || docs[0].(map[string]any)["title"] != "Guide" {
			t.Fatalf("lookup %v: %v", args, m)
		}
	}
	whole := f.OK(t, "document", map[string]any{"action": "get_doc", "id": f.Doc})
	want := "# One\n\nalpha paragraph\n\n## One.A\n\nbeta paragraph\n\n# Two\n\ngamma paragraph with a unique zebra word"
	if whole["content"] != want || whole["hasNextWindow"] != false || whole["totalBlocks"].(float64) != 6 {
		t.Fatalf("get_doc: %q %v", whole["content"], whole)
	}
	outline := whole["outline"].([]any)
	if len(outline) != 2 || len(outline[0].(map[string]any)["children"].([]any)) != 1 {
		t.Fatalf("outline: %v", outline)
	}
	// Windows: two blocks at a time, following nextWindow until the end.
	var got []string
	args := map[string]any{"action": "get_doc", "id": f.Doc, "blockLimit": 2, "includeBlockIds": true}
	for i := 0; i < 10; i++ {
		w := f.OK(t, "document", args)
		got = append(got, w["content"].(string))
		if len(w["blocks"].([]any)) != int(w["returnedBlocks"].(float64)) {
			t.Fatalf("blocks sidecar: %v", w)
		}
		next, ok := w["nextWindow"].(map[string]any)
		if !ok {
			break
		}
		args = next
		args["includeBlockIds"] = true
	}
	if strings.Join(got, "\n\n") != want || len(got) != 3 {
		t.Fatalf("windows joined: %q (%d windows)", strings.Join(got, "\n\n"), len(got))
	}
	// A tiny token budget still returns one whole block.
	tiny := f.OK(t, "document", map[string]any{"action": "get_doc", "id": f.Doc, "blockStart": 5, "tokenBudget": 100})
	if tiny["returnedBlocks"].(float64) != 1 {
		t.Fatalf("tiny budget: %v", tiny)
	}
	cd := f.OK(t, "document", map[string]any{"action": "get_child_docs", "id": f.Doc})
	if cd["total"].(float64) != 1 || cd["data"].([]any)[0].(map[string]any)["id"] != f.Child {
		t.Fatalf("child docs: %v", cd)
	}
	root := f.OK(t, "document", map[string]any{"action": "get_child_docs", "notebook": f.NB})
	if root["total"].(float64) != 1 {
		t.Fatalf("root docs: %v", root)
	}
	tree := f.OK(t, "document", map[string]any{"action": "list_tree", "notebook": f.NB})
	top := tree["tree"].([]any)[0].(map[string]any)
	if top["id"] != f.Doc || top["children"].([]any)[0].(map[string]any)["id"] != f.Child || tree["partial"] != false {
		t.Fatalf("tree: %v", tree)
	}
	shallow := f.OK(t, "document", map[string]any{"action": "list_tree", "notebook": f.NB, "maxDepth": 1})
	if shallow["partial"] != true {
		t.Fatalf("depth-limited tree must say partial: %v", shallow)
	}
	ol := f.OK(t, "document", map[string]any{"action": "get_outline", "id": f.Doc})
	if len(ol["outline"].([]any)) != 2 {
		t.Fatalf("outline: %v", ol)
	}
}

func testTools() []*tools.Tool { return []*tools.Tool{Tool()} }

// TestGetDocReadInfo: a window that stops before the document's end says
// so (readInfo partial, with what was left out) and names the exact call
// that reads the next window; following nextSteps reads the document
// whole, and the last window, like a whole read, carries no readInfo.
func TestGetDocReadInfo(t *testing.T) {
	f := tooltest.New(t, testTools)
	whole := f.OK(t, "document", map[string]any{"action": "get_doc", "id": f.Doc})
	if _, ok := whole["readInfo"]; ok {
		t.Fatalf("a whole read has readInfo: %v", whole)
	}
	var got []string
	args := map[string]any{"action": "get_doc", "id": f.Doc, "blockLimit": 2}
	for i := 0; ; i++ {
		if i > 10 {
			t.Fatal("nextSteps never end")
		}
		w := f.OK(t, "document", args)
		got = append(got, w["content"].(string))
		steps, _ := w["nextSteps"].([]any)
		if len(steps) == 0 {
			if _, ok := w["readInfo"]; ok || w["hasNextWindow"] != false {
				t.Fatalf("the last window: %v", w)
			}
			break
		}
		info := w["readInfo"].(map[string]any)
		if info["coverage"] != "partial" || len(info["limitations"].([]any)) != 1 || info["representation"] != "markdown" {
			t.Fatalf("readInfo: %v", info)
		}
		step := steps[0].(map[string]any)
		if step["tool"] != "document" {
			t.Fatalf("step: %v", step)
		}
		args = step["arguments"].(map[string]any)
		if args["action"] != "get_doc" || args["id"] != f.Doc || args["blockStart"].(float64) != float64(2*(i+1)) {
			t.Fatalf("step arguments: %v", args)
		}
	}
	if strings.Join(got, "\n\n") != whole["content"] {
		t.Fatalf("windows joined: %q", strings.Join(got, "\n\n"))
	}
}
