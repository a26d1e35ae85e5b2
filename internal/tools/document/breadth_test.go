package document

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

func TestDocumentBreadthReads(t *testing.T) {
	f := tooltest.New(t, testTools)
	sm := f.OK(t, "document", map[string]any{"action": "get_child_sort_mode", "id": f.Doc})
	if sm["declaredSortMode"] != nil || sm["inherited"] != true || sm["supported"] != false || sm["notebook"] != f.NB ||
		sm["effectiveSortMode"] != float64(15) || sm["effectiveSortModeName"] != "file_tree" {
		t.Fatalf("sort mode: %v", sm)
	}
	if err := f.C.SetBlockAttrs(context.Background(), f.Doc, map[string]string{sortModeAttr: "6"}); err != nil {
		t.Fatal(err)
	}
	if sm := f.OK(t, "document", map[string]any{"action": "get_child_sort_mode", "id": f.Doc}); sm["declaredSortMode"] != float64(6) || sm["declaredSortModeName"] != "custom" {
		t.Fatalf("declared sort mode: %v", sm)
	}
	f.WantErr(t, "document", map[string]any{"action": "get_child_sort_mode", "id": f.Blocks[1]}, failure.InvalidArguments)
	f.WantErr(t, "document", map[string]any{"action": "get_child_sort_mode", "id": tooltest.NewID()}, failure.NotFound)

	for _, id := range []string{f.Doc, f.Blocks[3]} {
		cb := f.OK(t, "document", map[string]any{"action": "get_child_blocks", "id": id})
		if cb["id"] != f.Doc || cb["count"] != float64(len(f.Blocks)) {
			t.Fatalf("child blocks of %s: %v", id, cb)
		}
	}
	f.WantErr(t, "document", map[string]any{"action": "get_child_blocks", "id": tooltest.NewID()}, failure.NotFound)
}

func TestDocumentSetAttr(t *testing.T) {
	s := tooltest.NewStrict(t, false, testTools)
	args := map[string]any{"action": "set_attr", "id": s.Doc, "attrs": map[string]any{"icon": "1f4d4", "cover": "https://example.com/c.png"}}
	pre := s.Preflight(t, "document", args, "expectedStateHash", 1)
	res := s.Commit(t, "document", args, pre)
	attrs, err := s.C.GetBlockAttrs(context.Background(), s.Doc)
	if err != nil {
		t.Fatal(err)
	}
	if attrs["icon"] != "1f4d4" || attrs["title-img"] != `background-image:url("https://example.com/c.png");` || res["cover"] != "https://example.com/c.png" {
		t.Fatalf("attrs %v, answer %v", attrs, res)
	}
	s.Replay(t, "document", args, pre, res)

	clear := map[string]any{"action": "set_attr", "id": s.Doc, "attrs": map[string]any{"cover": nil}}
	pre = s.Preflight(t, "document", clear, "expectedStateHash", 1)
	s.Drifted(t, "document", clear, pre, func() {
		if err := s.C.SetBlockAttrs(context.Background(), s.Doc, map[string]string{"custom-x": "drift"}); err != nil {
			t.Fatal(err)
		}
	})
	pre = s.Preflight(t, "document", clear, "expectedStateHash", 1)
	if res := s.Commit(t, "document", clear, pre); res["clearedCover"] != true {
		t.Fatalf("clear: %v", res)
	}
	if attrs, _ := s.C.GetBlockAttrs(context.Background(), s.Doc); attrs["title-img"] != "" || attrs["icon"] != "1f4d4" {
		t.Fatalf("after clearing: %v", attrs)
	}
	for _, tc := range []struct {
		name  string
		attrs map[string]any
	}{
		{"nothing", map[string]any{}},
		{"another attribute", map[string]any{"title": "x"}},
		{"a relative cover", map[string]any{"cover": "c.png"}},
		{"a numeric icon", map[string]any{"icon": 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.InvalidAt(t, "document", map[string]any{"action": "set_attr", "id": s.Doc, "attrs": tc.attrs}, false)
		})
	}
	s.InvalidAt(t, "document", map[string]any{"action": "set_attr", "id": s.Blocks[0], "attrs": map[string]any{"icon": "1f4d4"}}, false)
}

func TestDocumentSearchDocs(t *testing.T) {
	f := tooltest.New(t, testTools)
	ctx := context.Background()
	other, err := f.C.CreateNotebook(ctx, "Hidden")
	if err != nil {
		t.Fatal(err)
	}
	f.MkDoc(t, other.ID, "/Guide copy", "x")
	f.MkDoc(t, f.NB, "/Side guide", "y")
	if err := f.C.FlushTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	res := f.OK(t, "document", map[string]any{"action": "search_docs", "notebook": f.NB, "query": "guide"})
	if res["count"] != float64(4) { // Guide, Guide/Child, Side guide, Guide copy
		t.Fatalf("all readable: %v", res)
	}
	first := res["docs"].([]any)[0].(map[string]any)
	if first["id"] != f.Doc || first["hPath"] != "Tools/Guide" || first["kind"] != "document" {
		t.Fatalf("the exact title comes first: %v", res)
	}
	f.Policy = &tools.Policy{Notebooks: map[string]tools.Level{other.ID: tools.LevelNone}, Default: tools.LevelRead, AllActions: true, Strict: true, Version: "t"}
	res = f.OK(t, "document", map[string]any{"action": "search_docs", "notebook": f.NB, "query": "guide"})
	if res["count"] != float64(3) || strings.Contains(fmt.Sprint(res), other.ID) {
		t.Fatalf("hidden notebook shown: %v", res)
	}
	where := f.Where(t, f.Doc)
	res = f.OK(t, "document", map[string]any{"action": "search_docs", "notebook": f.NB, "query": "guide", "path": where.Path})
	if res["count"] != float64(2) || res["pathApplied"] != true { // Guide and Guide/Child
		t.Fatalf("under the path: %v", res)
	}
	f.WantErr(t, "document", map[string]any{"action": "search_docs", "notebook": f.NB, "query": " "}, failure.InvalidArguments)
	f.WantMissing(t, "document", map[string]any{"action": "search_docs", "notebook": other.ID, "query": "guide"}, map[string]string{other.ID: tooltest.NewID()})
}

func TestDocumentGetDocHTML(t *testing.T) {
	f := tooltest.New(t, testTools)
	res := f.OK(t, "document", map[string]any{"action": "get_doc", "id": f.Doc, "mode": "html"})
	html, _ := res["html"].(string)
	if res["mode"] != "html" || res["blockCount"] != float64(len(f.Blocks)) || res["notebook"] != f.NB ||
		!strings.Contains(html, `data-node-id="`+f.Blocks[0]+`" data-node-index="0"`) || !strings.Contains(html, "zebra") {
		t.Fatalf("html: %v", res)
	}
	small := f.OK(t, "document", map[string]any{"action": "get_doc", "id": f.Doc, "mode": "html", "size": 1})
	if n := strings.Count(small["html"].(string), "data-node-index="); n >= len(f.Blocks) {
		t.Fatalf("size 1 rendered %d blocks", n)
	}
	md := f.OK(t, "document", map[string]any{"action": "get_doc", "id": f.Doc})
	if _, ok := md["content"].(string); !ok || md["outline"] == nil {
		t.Fatalf("markdown mode: %v", md)
	}
	f.WantErr(t, "document", map[string]any{"action": "get_doc", "id": f.Doc, "size": 3}, failure.InvalidArguments)
	f.WantErr(t, "document", map[string]any{"action": "get_doc", "id": f.Blocks[1], "mode": "html"}, failure.InvalidArguments)
	f.WantErr(t, "document", map[string]any{"action": "get_doc", "id": tooltest.NewID(), "mode": "html"}, failure.NotFound)
	f.WantErr(t, "document", map[string]any{"action": "get_doc", "id": f.Doc, "mode": "pdf"}, failure.InvalidArguments)
}

func TestDocumentLookupIncludes(t *testing.T) {
	f := tooltest.New(t, testTools)
	for _, tc := range []struct {
		name string
		args map[string]any
		want func(res map[string]any) bool
	}{
		{"hPath alias with docInfo", map[string]any{"notebook": f.NB, "hPath": "/Guide", "include": []string{"docInfo"}}, func(res map[string]any) bool {
			info, _ := res["docInfo"].(map[string]any)
			return info != nil && info["id"] == f.Doc && info["name"] == "Guide" && info["subFileCount"] == float64(1)
		}},
		{"a human path given as path", map[string]any{"notebook": f.NB, "path": "/Guide/Child"}, func(res map[string]any) bool {
			docs := res["documents"].([]any)
			return res["interpretedPathAs"] == "hpath" && len(docs) == 1 && docs[0].(map[string]any)["id"] == f.Child
		}},
		{"upstream's skills ask for the notebook, always answered", map[string]any{"id": f.Doc, "include": []string{"path", "hpath", "notebook"}}, func(res map[string]any) bool {
			docs := res["documents"].([]any)
			return len(docs) == 1 && docs[0].(map[string]any)["notebook"] == f.NB
		}},
		{"id without include has no docInfo", map[string]any{"id": f.Blocks[1]}, func(res map[string]any) bool {
			_, has := res["docInfo"]
			return !has && res["blockID"] == f.Blocks[1]
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := f.OK(t, "document", tooltest.CopyArgs(tc.args, "action", "lookup"))
			if !tc.want(res) {
				t.Fatalf("lookup: %v", res)
			}
		})
	}
	f.WantErr(t, "document", map[string]any{"action": "lookup", "id": f.Doc, "include": []string{"body"}}, failure.InvalidArguments)
	f.WantErr(t, "document", map[string]any{"action": "lookup", "notebook": f.NB, "hpath": "/Guide", "hPath": "/Other"}, failure.InvalidArguments)
}

func TestDocumentOutlineFromTheKernel(t *testing.T) {
	f := tooltest.New(t, testTools)
	doc := f.MkDoc(t, f.NB, "/Outlined", "# One **bold** &amp; more\n\n- ## In a list\n\n> ## Quoted\n\n### Three")
	res := f.OK(t, "document", map[string]any{"action": "get_outline", "id": doc})
	top := res["outline"].([]any)
	if res["headingCount"] != float64(3) || len(top) != 1 {
		t.Fatalf("outline %v", res)
	}
	one := top[0].(map[string]any)
	kids := one["children"].([]any)
	// The list's heading counts (a blockquote's does not), and the h3 nests under it.
	if one["text"] != "One bold & more" || one["level"] != float64(1) || len(kids) != 1 || kids[0].(map[string]any)["text"] != "In a list" ||
		kids[0].(map[string]any)["children"].([]any)[0].(map[string]any)["level"] != float64(3) {
		t.Fatalf("outline %v", res)
	}
}

func TestDocumentOutlinePreview(t *testing.T) {
	f := tooltest.New(t, testTools)
	res := f.OK(t, "document", map[string]any{"action": "get_outline", "id": f.Doc, "preview": true})
	top := res["outline"].([]any)
	if res["preview"] != true || len(top) != 3 || top[0].(map[string]any)["id"] != f.Doc || top[0].(map[string]any)["text"] != "Guide" {
		t.Fatalf("preview outline %v", res)
	}
	if plain := f.OK(t, "document", map[string]any{"action": "get_outline", "id": f.Doc}); len(plain["outline"].([]any)) != 2 || plain["headingCount"] != float64(3) {
		t.Fatalf("outline %v", plain)
	}
}

func TestDocumentWindowBudgetBounds(t *testing.T) {
	f := tooltest.New(t, testTools)
	// Upstream's bounds: 1 to 32000 tokens.
	one := f.OK(t, "document", map[string]any{"action": "get_doc", "id": f.Doc, "tokenBudget": 1})
	if one["returnedBlocks"] != float64(1) || one["hasNextWindow"] != true {
		t.Fatalf("budget 1: %v", one)
	}
	f.OK(t, "document", map[string]any{"action": "get_doc", "id": f.Doc, "tokenBudget": 32000})
	f.WantErr(t, "document", map[string]any{"action": "get_doc", "id": f.Doc, "tokenBudget": 32001}, failure.InvalidArguments)
	f.WantErr(t, "document", map[string]any{"action": "get_doc", "id": f.Doc, "tokenBudget": 0}, failure.InvalidArguments)
}
