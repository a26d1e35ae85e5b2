package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/testvars"
)

// TestBlockDocBreadthThroughTheBinary walks the block, document and
// notebook breadth actions through the binary against the embedded
// kernel: the reads, each strict write preflighted, committed, replayed
// and refused when stale, and the notebook permission refusals.
func TestBlockDocBreadthThroughTheBinary(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	s := startServeWith(t, "--siyuan-url", k.url, "--siyuan-token", "tok", "--state-dir", t.TempDir())
	blockDocFlow(t, s, kernelClient(t, k.url, "tok"))
}

// TestBlockDocBreadthLive runs the same walk against a real SiYuan when
// SISYPHUS_LIVE_SIYUAN_URL and SISYPHUS_LIVE_SIYUAN_TOKEN are set, in
// notebooks it creates and removes.
func TestBlockDocBreadthLive(t *testing.T) {
	url, tok := testvars.Live(t)
	s := startServeWith(t, "--siyuan-url", url, "--siyuan-token", tok, "--state-dir", t.TempDir())
	blockDocFlow(t, s, kernelClient(t, url, tok))
}

func blockDocFlow(t *testing.T, s *serveProc, c *siyuan.Client) {
	ctx := context.Background()
	a := connect(t, s.url, "2025-11-25")
	tag := fmt.Sprintf("%d", time.Now().UnixNano())
	nb := a.strictDo("notebook", map[string]any{"action": "create", "name": "sisyphus-blockdoc-" + tag})["notebook"].(string)
	// A second notebook stays read-only (every new notebook starts so).
	ro := a.strictDo("notebook", map[string]any{"action": "create", "name": "sisyphus-blockdoc-ro-" + tag})["notebook"].(string)
	s.config(t, "permission", nb, "rwd")
	s.config(t, "permission", ro, "rwd")
	s.config(t, "enable", "notebook.remove")
	t.Cleanup(func() {
		// A none entry left behind would keep raw SQL refused in the
		// workspace for every later run (its notebook gone or not).
		s.config(t, "permission", ro, "r")
		for _, id := range []string{nb, ro} {
			c.RemoveNotebook(context.Background(), id)
		}
	})
	doc := a.strictDo("document", map[string]any{"action": "create", "notebook": nb, "path": "/Outline",
		"markdown": "# Top\n\npara one two three\n\n## Sub\n\nsecond para"})["id"].(string)
	kids := a.ok("document", map[string]any{"action": "get_child_blocks", "id": doc})
	if kids["count"] != float64(4) {
		t.Fatalf("get_child_blocks %v", kids)
	}
	blocks := kids["blocks"].([]any)
	id := func(i int) string { return blocks[i].(map[string]any)["id"].(string) }
	from, to := id(1), id(3)
	users := a.strictDo("document", map[string]any{"action": "create", "notebook": nb, "path": "/Users",
		"markdown": "see ((" + from + " 'dyn'))\n\nalso ((" + from + " \"stat\"))"})["id"].(string)
	roDoc := a.strictDo("document", map[string]any{"action": "create", "notebook": ro, "path": "/Elsewhere",
		"markdown": "far ((" + to + " 'far'))"})["id"].(string)
	s.config(t, "permission", ro, "r")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.FlushTransaction(ctx))

	// Reads.
	crumbs := a.ok("block", map[string]any{"action": "breadcrumb", "id": to})["breadcrumb"].([]any)
	if len(crumbs) != 4 || crumbs[0].(map[string]any)["name"] != "sisyphus-blockdoc-"+tag+"/Outline" || crumbs[2].(map[string]any)["name"] != "Sub" {
		t.Fatalf("breadcrumb %v", crumbs)
	}
	if st := a.ok("block", map[string]any{"action": "word_count", "ids": []string{doc}})["stat"].(map[string]any); st["wordCount"] != float64(8) || st["runeCount"] != float64(31) {
		t.Fatalf("word_count %v", st)
	}
	info := a.ok("block", map[string]any{"action": "docs_info", "id": doc, "refCount": true})["documents"].([]any)[0].(map[string]any)
	if info["name"] != "Outline" || info["refCount"] != float64(3) {
		t.Fatalf("docs_info %v", info)
	}
	batch := a.ok("block", map[string]any{"action": "batch_kramdown", "ids": []string{to, freshNodeID(), from}})
	if batch["succeeded"] != float64(2) || batch["partial"] != true {
		t.Fatalf("batch_kramdown %v", batch)
	}
	rec := a.ok("block", map[string]any{"action": "recent_updated", "count": 5})
	if rec["grouping"] != "document" || rec["count"].(float64) > 5 {
		t.Fatalf("recent_updated %v", rec)
	}
	sm := a.ok("document", map[string]any{"action": "get_child_sort_mode", "id": doc})
	if sm["supported"] != false || sm["inherited"] != true || sm["effectiveSortMode"] == nil {
		t.Fatalf("get_child_sort_mode %v", sm)
	}
	if cd := a.ok("notebook", map[string]any{"action": "get_child_docs", "notebook": nb}); cd["total"] != float64(2) {
		t.Fatalf("get_child_docs %v", cd)
	}
	html := a.ok("document", map[string]any{"action": "get_doc", "id": doc, "mode": "html"})
	if h, _ := html["html"].(string); html["blockCount"] != float64(4) || !strings.Contains(h, `data-node-id="`+from+`" data-node-index="1"`) || !strings.Contains(h, `refcount="2"`) {
		t.Fatalf("get_doc html %v", html)
	}
	if ol := a.ok("document", map[string]any{"action": "get_outline", "id": doc}); ol["headingCount"] != float64(2) {
		t.Fatalf("get_outline %v", ol)
	}
	sd := a.ok("document", map[string]any{"action": "search_docs", "notebook": nb, "query": "outline"})
	if sd["count"].(float64) < 1 || sd["docs"].([]any)[0].(map[string]any)["id"] != doc {
		t.Fatalf("search_docs %v", sd)
	}

	// notebook.set_icon: preflight, commit, replay, stale.
	icon := map[string]any{"action": "set_icon", "notebook": nb, "icon": "1f4da"}
	pre := a.ok("notebook", with(icon, "validateOnly", true))
	res := a.ok("notebook", commitOf(icon, pre))
	if res["status"] != "committed" || a.ok("notebook", commitOf(icon, pre))["replayed"] != true {
		t.Fatalf("set_icon %v", res)
	}
	if conf, err := c.GetNotebookConf(ctx, nb); err != nil || conf.Conf.Icon != "1f4da" {
		t.Fatalf("icon %+v %v", conf, err)
	}
	icon2 := with(icon, "icon", "1f4d4")
	pre = a.ok("notebook", with(icon2, "validateOnly", true))
	must(c.SetNotebookIcon(ctx, nb, "1f600"))
	a.fails("notebook", commitOf(icon2, pre), "state_changed")
	a.fails("notebook", map[string]any{"action": "set_icon", "notebook": ro, "icon": "1f4d4", "validateOnly": true}, "permission_denied")

	// document.set_attr.
	attr := map[string]any{"action": "set_attr", "id": doc, "attrs": map[string]any{"icon": "1f4d6", "cover": "https://example.com/c.png"}}
	pre = a.ok("document", with(attr, "validateOnly", true))
	res = a.ok("document", commitOf(attr, pre))
	if res["status"] != "committed" || a.ok("document", commitOf(attr, pre))["replayed"] != true {
		t.Fatalf("set_attr %v", res)
	}
	if got, err := c.GetBlockAttrs(ctx, doc); err != nil || got["icon"] != "1f4d6" || got["title-img"] != `background-image:url("https://example.com/c.png");` {
		t.Fatalf("attrs %v %v", got, err)
	}
	clear := map[string]any{"action": "set_attr", "id": doc, "attrs": map[string]any{"cover": nil}}
	pre = a.ok("document", with(clear, "validateOnly", true))
	must(c.SetBlockAttrs(ctx, doc, map[string]string{"custom-drift": "1"}))
	a.fails("document", commitOf(clear, pre), "state_changed")
	a.fails("document", map[string]any{"action": "set_attr", "id": roDoc, "attrs": map[string]any{"icon": "1f4d4"}, "validateOnly": true}, "permission_denied")

	// block.transfer_references.
	tr := map[string]any{"action": "transfer_references", "fromID": from, "toID": to}
	pre = a.ok("block", with(tr, "validateOnly", true))
	if pre["preconditionField"] != "expectedManifestHash" {
		t.Fatalf("transfer preflight %v", pre)
	}
	res = a.ok("block", commitOf(tr, pre))
	if res["status"] != "committed" || res["transferred"] != float64(2) || a.ok("block", commitOf(tr, pre))["replayed"] != true {
		t.Fatalf("transfer %v", res)
	}
	kd := a.ok("block", map[string]any{"action": "get_kramdown", "id": users})["kramdown"].(string)
	if strings.Contains(kd, "(("+from) || !strings.Contains(kd, "(("+to+" 'second para'))") || !strings.Contains(kd, "(("+to+" \"stat\"))") {
		t.Fatalf("refs after the transfer: %s", kd)
	}
	// Back again, stale; and the read-only notebook's ref block refuses.
	userBlocks := a.ok("document", map[string]any{"action": "get_child_blocks", "id": users})["blocks"].([]any)
	back := map[string]any{"action": "transfer_references", "fromID": to, "toID": from, "refIDs": []string{userBlocks[0].(map[string]any)["id"].(string)}}
	pre = a.ok("block", with(back, "validateOnly", true))
	// The text around the ref changes: a dynamic anchor's own text SiYuan
	// rewrites to the target's, a while after the write.
	if _, err := c.UpdateBlock(ctx, userBlocks[0].(map[string]any)["id"].(string), "markdown", "seen again (("+to+" 'edited'))"); err != nil {
		t.Fatal(err)
	}
	a.fails("block", commitOf(back, pre), "state_changed")
	a.fails("block", map[string]any{"action": "transfer_references", "fromID": to, "toID": from, "validateOnly": true}, "permission_denied")

	// A hidden notebook shows nowhere: not among recent blocks, and its
	// blocks are per-item not_found in a batch.
	s.config(t, "permission", ro, "none")
	far := a.ok("document", map[string]any{"action": "get_child_blocks", "id": users})["blocks"].([]any)[0].(map[string]any)["id"].(string)
	for _, call := range []map[string]any{
		{"action": "recent_updated"},
		{"action": "batch_kramdown", "ids": []string{roDoc, far}},
		{"tool": "document", "action": "search_docs", "notebook": nb, "query": "elsewhere"},
	} {
		tool := "block"
		if tl, ok := call["tool"].(string); ok {
			tool = tl
			delete(call, "tool")
		}
		out, _ := json.Marshal(a.ok(tool, call))
		if strings.Contains(string(out), ro) || strings.Contains(string(out), "far ((") {
			t.Fatalf("%v shows the hidden notebook: %s", call["action"], out)
		}
	}
}
