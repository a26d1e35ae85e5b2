package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/testvars"
)

// TestSearchToolThroughTheBinary walks every search action through the
// binary against the embedded kernel: the reads with upstream's arguments,
// the namespace audits, invalid references, and find_replace preflighted,
// refused unconfirmed, committed, replayed and refused when stale; then the
// same reads with the notebook hidden.
func TestSearchToolThroughTheBinary(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	s := startServeWith(t, "--siyuan-url", k.url, "--siyuan-token", "tok", "--state-dir", t.TempDir())
	a := connect(t, s.url, "2025-11-25")
	nb := a.strictDo("notebook", map[string]any{"action": "create", "name": "Search"})["notebook"].(string)
	s.config(t, "permission", nb, "rwd")
	searchFlow(t, s, a, kernelClient(t, k.url, "tok"), nb)
}

// TestSearchToolLive runs the same walk against a real SiYuan when
// SISYPHUS_LIVE_SIYUAN_URL and SISYPHUS_LIVE_SIYUAN_TOKEN are set, in a
// notebook it creates and removes. It expects a workspace without
// embeddings enabled (a fresh one).
func TestSearchToolLive(t *testing.T) {
	url, tok := testvars.Live(t)
	s := startServeWith(t, "--siyuan-url", url, "--siyuan-token", tok, "--state-dir", t.TempDir())
	a := connect(t, s.url, "2025-11-25")
	nb := a.strictDo("notebook", map[string]any{"action": "create", "name": fmt.Sprintf("sisyphus-live-search-%d", time.Now().UnixNano())})["notebook"].(string)
	s.config(t, "permission", nb, "rwd")
	s.config(t, "enable", "notebook.remove")
	defer func() {
		s.config(t, "permission", nb, "rwd")
		a.strictDo("notebook", map[string]any{"action": "remove", "notebook": nb, "confirm": true})
	}()
	searchFlow(t, s, a, kernelClient(t, url, tok), nb)
}

func idsOf(t *testing.T, list any) []string {
	t.Helper()
	var out []string
	for _, x := range list.([]any) {
		out = append(out, x.(map[string]any)["id"].(string))
	}
	return out
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func searchFlow(t *testing.T, s *serveProc, a *agent, c *siyuan.Client, nb string) {
	ctx := context.Background()
	word := "quokka" + strings.ToLower(freshNodeID()[15:])
	doc := a.strictDo("document", map[string]any{"action": "create", "notebook": nb, "path": "/Zoo",
		"markdown": "# Heading " + word + "\n\nThe " + word + " is happy\n\n**" + word + "** in bold\n\nplain tail"})["id"].(string)
	kids := idsOf(t, a.ok("block", map[string]any{"action": "get_children", "id": doc})["data"])
	if len(kids) != 4 {
		t.Fatalf("doc blocks %v", kids)
	}
	head, para, bold, tail := kids[0], kids[1], kids[2], kids[3]
	a.strictDo("block", map[string]any{"action": "set_attrs", "id": tail, "attrs": map[string]any{"name": "Tail" + word, "alias": "ending," + word + "-end"}})
	// A reference to a block that then goes: an invalid reference.
	gone := a.strictDo("block", map[string]any{"action": "append", "parentID": doc, "data": "doomed block"})["ids"].([]any)[0].(string)
	holder := a.strictDo("block", map[string]any{"action": "append", "parentID": doc, "data": "points to ((" + gone + " 'doomed'))"})["ids"].([]any)[0].(string)
	if _, err := c.DeleteBlock(ctx, gone); err != nil {
		t.Fatal(err)
	}
	if err := c.FlushTransaction(ctx); err != nil {
		t.Fatal(err)
	}

	// fulltext with upstream's arguments.
	ft := func(args map[string]any) map[string]any {
		t.Helper()
		return a.ok("search", with(args, "action", "fulltext", "paths", []string{nb}))
	}
	if got := idsOf(t, ft(map[string]any{"query": word, "typeShortcodes": []string{"h"}})["blocks"]); len(got) != 1 || got[0] != head {
		t.Fatalf("headings only: %v", got)
	}
	r := ft(map[string]any{"query": word, "types": map[string]any{"p": true}, "sortBy": "created_asc"})
	// The tail's name and alias hold the word too.
	if got := idsOf(t, r["blocks"]); len(got) != 3 || got[0] != para || got[1] != bold || got[2] != tail || r["resolvedArgs"].(map[string]any)["orderBy"] != float64(1) {
		t.Fatalf("paragraphs by creation: %v", r)
	}
	if got := idsOf(t, ft(map[string]any{"query": "SELECT * FROM blocks WHERE id = '" + para + "'", "methodName": "sql"})["blocks"]); len(got) != 1 || got[0] != para {
		t.Fatalf("sql method: %v", got)
	}
	g := ft(map[string]any{"query": word, "groupBy": 1})["blocks"].([]any)
	if len(g) != 1 || g[0].(map[string]any)["id"] != doc || len(g[0].(map[string]any)["children"].([]any)) != 4 {
		t.Fatalf("grouped: %v", g)
	}
	if got := idsOf(t, ft(map[string]any{"query": word, "parentId": doc, "pageSize": 2})["blocks"]); len(got) != 4 {
		t.Fatalf("parentId widens the kernel page to find all four: %v", got)
	}
	// The kernel's rows as they are: real SiYuan's index briefly holds a
	// new document's rows twice, so the heading is counted once per id.
	q := a.ok("search", map[string]any{"action": "query_sql", "sql": "SELECT id FROM blocks WHERE root_id = '" + doc + "' AND type = 'h'"})
	heads := map[any]bool{}
	for _, row := range q["rows"].([]any) {
		heads[row.(map[string]any)["id"]] = true
	}
	if len(heads) != 1 || q["rowCount"] != float64(len(q["rows"].([]any))) {
		t.Fatalf("query_sql by sql: %v", q)
	}

	// semantic: no embedding model in a fresh workspace.
	m, isErr := a.call("search", map[string]any{"action": "semantic", "query": word})
	if e, _ := m["error"].(map[string]any); !isErr || e["code"] != "kernel_error" || e["kernelVersion"] == nil || !strings.Contains(e["message"].(string), "embedding") {
		t.Fatalf("semantic: %v", m)
	}

	// The name/alias namespace.
	kn := a.ok("search", map[string]any{"action": "knowledge", "query": word + "-END"})
	if kn["retrievalMode"] != "namespace_exact" || idsOf(t, kn["data"])[0] != tail {
		t.Fatalf("knowledge exact alias: %v", kn)
	}
	kn = a.ok("search", map[string]any{"action": "knowledge", "query": "where is tail" + word + " now", "notebooks": []string{nb}})
	if kn["retrievalMode"] != "namespace_only" || kn["semanticAvailable"] != false || idsOf(t, kn["data"])[0] != tail {
		t.Fatalf("knowledge without semantic: %v", kn)
	}
	ca := a.ok("search", map[string]any{"action": "check_anchor", "candidateKind": "name", "candidates": []string{"tail" + word, "free" + word}})
	checks := ca["checks"].([]any)
	if checks[0].(map[string]any)["status"] != "collision_requires_adjudication" || checks[1].(map[string]any)["status"] != "available" {
		t.Fatalf("check_anchor: %v", ca)
	}

	// Backlinks: the holder references the removed block; the tail is
	// referenced once and its text mentioned once.
	ref := a.strictDo("block", map[string]any{"action": "append", "parentID": doc, "data": "about ((" + tail + " 'the tail'))"})["ids"].([]any)[0].(string)
	mention := a.strictDo("block", map[string]any{"action": "append", "parentID": doc, "data": "the plain tail again"})["ids"].([]any)[0].(string)
	if err := c.FlushTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	bl := a.ok("search", map[string]any{"action": "get_backlinks", "id": tail})
	if got := idsOf(t, bl["backlinks"]); len(got) != 1 || got[0] != ref {
		t.Fatalf("backlinks: %v", bl)
	}
	if got := idsOf(t, bl["backmentions"]); !has(got, mention) || has(got, ref) {
		t.Fatalf("backmentions: %v", bl)
	}

	// Ref candidates for a ref typed in the heading: the paragraphs, not
	// the heading itself nor its document.
	rs := a.ok("search", map[string]any{"action": "search_refs", "id": head, "rootID": doc, "k": word})
	if got := idsOf(t, rs["blocks"]); has(got, head) || has(got, doc) || !has(got, para) {
		t.Fatalf("search_refs: %v", rs)
	}

	// Asset content: a text asset found by its words, then read whole.
	up, err := c.UploadAsset(ctx, siyuan.AssetUploadRequest{AssetsDirPath: "/assets/", Files: []siyuan.UploadFile{{Name: word + ".txt", Body: strings.NewReader("notes on the " + word + "\n")}}})
	if err != nil {
		t.Fatal(err)
	}
	asset := up.SuccMap[word+".txt"]
	t.Cleanup(func() { c.RemoveFile(context.Background(), "/data/"+asset) })
	var found map[string]any
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		r := a.ok("search", map[string]any{"action": "fulltext_asset_content", "query": word})
		if r["total"] == float64(1) {
			found = r["data"].([]any)[0].(map[string]any)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("asset content not found: %v", r)
		}
	}
	whole := a.ok("search", map[string]any{"action": "fulltext_asset_content", "assetId": found["id"], "query": word})["assetContent"].(map[string]any)
	if found["path"] != asset || whole["content"] != "notes on the <mark>"+word+"</mark><br>" {
		t.Fatalf("asset content %v, whole %v", found, whole)
	}

	// Invalid references.
	inv := a.ok("search", map[string]any{"action": "list_invalid_refs", "pageSize": 128})
	if !has(idsOf(t, inv["data"]), holder) {
		t.Fatalf("list_invalid_refs lacks %s: %v", holder, inv)
	}

	// find_replace: a person confirms; guarded by its manifest.
	fr := map[string]any{"action": "find_replace", "k": word, "r": "wombat", "ids": []string{para, bold, tail}}
	pre := a.ok("search", with(fr, "validateOnly", true))
	if pre["preconditionField"] != "expectedManifestHash" || fmt.Sprint(pre["willReplace"]) != fmt.Sprint([]any{para}) {
		t.Fatalf("find_replace preflight: %v (text only: the bold span and the alias stay)", pre)
	}
	a.fails("search", commitOf(fr, pre), "confirmation_required")
	res := a.ok("search", with(commitOf(fr, pre), "confirm", true))
	rep := a.ok("search", with(commitOf(fr, pre), "confirm", true))
	if res["status"] != "committed" || rep["replayed"] != true || rep["resultHash"] != res["resultHash"] {
		t.Fatalf("find_replace %v, replay %v", res, rep)
	}
	kd := func(id string) string {
		k, err := c.GetBlockKramdown(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return k.Kramdown
	}
	if got := kd(para); !strings.HasPrefix(got, "The wombat is happy") {
		t.Fatalf("replaced paragraph: %q", got)
	}
	if got := kd(bold); !strings.HasPrefix(got, "**"+word+"**") {
		t.Fatalf("the bold span needs replaceTypes strong: %q", got)
	}
	strong := with(fr, "replaceTypes", map[string]any{"strong": true}, "ids", []string{bold})
	pre = a.ok("search", with(strong, "validateOnly", true))
	if _, err := c.UpdateBlock(ctx, bold, "markdown", "**"+word+"** in bold, edited"); err != nil {
		t.Fatal(err)
	}
	a.fails("search", with(commitOf(strong, pre), "confirm", true), "state_changed")
	if got := kd(bold); !strings.HasPrefix(got, "**"+word+"** in bold, edited") {
		t.Fatalf("a stale commit wrote: %q", got)
	}
	a.strictDo("search", with(strong, "confirm", true))
	if got := kd(bold); !strings.HasPrefix(got, "**wombat** in bold, edited") {
		t.Fatalf("strong replaced: %q", got)
	}
	s.config(t, "permission", nb, "r")
	a.fails("search", with(fr, "ids", []string{head}, "validateOnly", true), "permission_denied")

	// Hidden: the notebook never appears.
	s.config(t, "permission", nb, "none")
	for _, c := range []map[string]any{
		{"action": "fulltext", "query": "wombat"},
		{"action": "knowledge", "query": word + "-end"},
		{"action": "check_anchor", "candidateKind": "name", "candidates": []string{"tail" + word}},
		{"action": "list_invalid_refs"},
	} {
		got := a.ok("search", c)
		if b := fmt.Sprint(got); strings.Contains(b, nb) || strings.Contains(b, tail) || strings.Contains(b, holder) {
			t.Errorf("%v shows the hidden notebook: %v", c["action"], got)
		}
	}
	if m, isErr := a.call("search", map[string]any{"action": "query_sql", "stmt": "SELECT id FROM blocks LIMIT 1"}); !isErr || errCodeOf(m) != "permission_denied" {
		t.Fatalf("query_sql while a notebook is hidden: %v", m)
	}
	s.config(t, "permission", nb, "rwd")
}
