package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/testvars"
)

// TestTimelineToolThroughTheBinary walks the timeline tool through the
// binary against the embedded kernel's data repository: a checkpoint
// (replayed: no second snapshot or tag), an edit behind the tool's back, a
// comparison, one block rolled back (a stale one refused), the document
// rolled back, the node deleted; a tag of another document refused; the
// gate and the confirmation of the dangerous actions.
func TestTimelineToolThroughTheBinary(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	c := kernelClient(t, k.url, "tok")
	if _, err := c.RepoTagSnapshots(context.Background()); err != nil && !errors.Is(err, siyuan.ErrRepoKeyMissing) {
		t.Skipf("the embedded kernel keeps no data repository yet: %v", err)
	}
	s := startServeWith(t, "--siyuan-url", k.url, "--siyuan-token", "tok", "--state-dir", t.TempDir())
	a := connect(t, s.url, "2025-11-25")
	nb := a.strictDo("notebook", map[string]any{"action": "create", "name": "Timeline"})["notebook"].(string)
	timelineFlow(t, s, a, c, nb)
}

// TestTimelineLive runs the same walk against a real SiYuan 3.7.3 when
// SISYPHUS_LIVE_SIYUAN_URL and SISYPHUS_LIVE_SIYUAN_TOKEN are set, in a
// notebook it creates and removes; it removes the tags it made (SiYuan
// keeps the snapshots: its repository has no removal of one).
func TestTimelineLive(t *testing.T) {
	url, tok := testvars.Live(t)
	s := startServeWith(t, "--siyuan-url", url, "--siyuan-token", tok, "--state-dir", t.TempDir())
	a := connect(t, s.url, "2025-11-25")
	s.config(t, "enable", "notebook.remove")
	nb := a.strictDo("notebook", map[string]any{"action": "create", "name": fmt.Sprintf("sisyphus-live-timeline-%d", time.Now().UnixNano())})["notebook"].(string)
	defer func() {
		s.config(t, "permission", nb, "rwd")
		a.strictDo("notebook", map[string]any{"action": "remove", "notebook": nb, "confirm": true})
	}()
	timelineFlow(t, s, a, kernelClient(t, url, tok), nb)
}

// timelineTags are the repository's tags that begin with prefix.
func timelineTags(t *testing.T, c *siyuan.Client, prefix string) map[string]string {
	t.Helper()
	snaps, err := c.RepoTagSnapshots(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, s := range snaps {
		if strings.HasPrefix(s.Tag, prefix) {
			out[s.Tag] = s.ID
		}
	}
	return out
}

// snapshotCount is how many snapshots the repository holds.
func snapshotCount(t *testing.T, c *siyuan.Client) int {
	t.Helper()
	p, err := c.RepoSnapshots(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	return p.TotalCount
}

// changesOf indexes a comparison's changes by status.
func changesOf(res map[string]any) map[string][]map[string]any {
	out := map[string][]map[string]any{}
	for _, c := range res["changes"].([]any) {
		m := c.(map[string]any)
		out[m["status"].(string)] = append(out[m["status"].(string)], m)
	}
	return out
}

func timelineFlow(t *testing.T, s *serveProc, a *agent, c *siyuan.Client, nb string) {
	ctx := context.Background()
	if _, err := c.RepoTagSnapshots(ctx); errors.Is(err, siyuan.ErrRepoKeyMissing) {
		if _, err := c.InitRepoKey(ctx); err != nil {
			t.Fatal(err)
		}
	}
	s.config(t, "permission", nb, "rwd")
	doc := a.strictDo("document", map[string]any{"action": "create", "notebook": nb, "path": "/Timeline",
		"markdown": "one\n\ntwo\n\nthree\n\nfour"})["id"].(string)
	other := a.strictDo("document", map[string]any{"action": "create", "notebook": nb, "path": "/Other", "markdown": "other"})["id"].(string)
	var blocks []string
	for _, k := range a.ok("block", map[string]any{"action": "get_children", "id": doc})["data"].([]any) {
		blocks = append(blocks, k.(map[string]any)["id"].(string))
	}
	if len(blocks) != 4 {
		t.Fatalf("blocks %v", blocks)
	}
	prefix := "sisyphustimeline_" + doc + "_"
	t.Cleanup(func() {
		for tag := range timelineTags(t, c, prefix) {
			c.RemoveRepoTagSnapshot(context.Background(), tag)
		}
	})

	// Off by default: the three destructive actions. (The configuration
	// lives in the workspace: a live one may have them on from an earlier
	// run, so they are switched off first, and off again at the end.)
	for _, act := range []string{"delete_node", "rollback_document", "rollback_block"} {
		s.config(t, "disable", "timeline."+act)
		defer s.config(t, "disable", "timeline."+act)
		args := map[string]any{"action": act, "documentId": doc, "tag": prefix + "x", "validateOnly": true}
		if act == "rollback_block" {
			args["changeKey"] = "k"
		}
		a.fails("timeline", args, "action_disabled")
		s.config(t, "enable", "timeline."+act)
	}

	// create_node: additive, staged; a replay makes no second snapshot or tag.
	create := map[string]any{"action": "create_node", "name": "Before edit", "scope": "document", "documentId": doc}
	pre := a.ok("timeline", with(create, "validateOnly", true))
	res := a.ok("timeline", commitOf(create, pre))
	tag, _ := res["tag"].(string)
	if res["status"] != "committed" || tag != prefix+"Beforeedit" {
		t.Fatalf("create_node: %v", res)
	}
	if got := timelineTags(t, c, prefix); len(got) != 1 || got[tag] == "" {
		t.Fatalf("tags after create_node: %v", got)
	}
	snapsBefore, _ := c.RepoSnapshots(ctx, 1)
	if rep := a.ok("timeline", commitOf(create, pre)); rep["replayed"] != true || rep["tag"] != tag {
		t.Fatalf("create_node replay: %v", rep)
	}
	snapsAfter, _ := c.RepoSnapshots(ctx, 1)
	if got := timelineTags(t, c, prefix); len(got) != 1 || snapsAfter.TotalCount != snapsBefore.TotalCount {
		t.Fatalf("a replay made a tag or a snapshot: %v, %d → %d snapshots", got, snapsBefore.TotalCount, snapsAfter.TotalCount)
	}
	// The index on the document, in upstream's format.
	attrs, err := c.GetBlockAttrs(ctx, doc)
	if err != nil {
		t.Fatal(err)
	}
	var index []map[string]any
	if err := json.Unmarshal([]byte(attrs["custom-sisyphus-timeline"]), &index); err != nil || len(index) != 1 ||
		index[0]["name"] != "Before edit" || index[0]["tag"] != tag || index[0]["scope"] != "document" || index[0]["snapshotId"] != timelineTags(t, c, prefix)[tag] {
		t.Fatalf("index %q: %v", attrs["custom-sisyphus-timeline"], err)
	}
	list := a.ok("timeline", map[string]any{"action": "list_nodes", "scope": "document", "documentId": doc})
	if nodes := list["nodes"].([]any); len(nodes) != 1 || nodes[0].(map[string]any)["tag"] != tag {
		t.Fatalf("list_nodes: %v", list)
	}

	// A comparison with nothing changed.
	cmp := map[string]any{"action": "compare_node", "documentId": doc, "tag": tag}
	// It takes one snapshot: create_node indexed the node on the document
	// after the node's own, so the newest snapshot cannot tell.
	if res := a.ok("timeline", cmp); res["noChanges"] != true || len(res["changes"].([]any)) != 0 || res["snapshotTaken"] == nil {
		t.Fatalf("compare_node, unchanged: %v", res)
	}
	total := snapshotCount(t, c)

	// Edits behind the tool's back.
	if _, err := c.UpdateBlock(ctx, blocks[1], "markdown", "TWO"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteBlock(ctx, blocks[2]); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AppendBlock(ctx, "markdown", "five", doc); err != nil {
		t.Fatal(err)
	}
	if err := c.FlushTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	res = a.ok("timeline", cmp)
	ch := changesOf(res)
	if res["noChanges"] != false || len(ch["modified"]) != 1 || len(ch["removed"]) != 1 || len(ch["added"]) != 1 || res["snapshotTaken"] != nil {
		t.Fatalf("compare_node: %v", res)
	}
	mod := ch["modified"][0]
	if !strings.Contains(fmt.Sprint(mod["old"]), "two") || !strings.Contains(fmt.Sprint(mod["current"]), "TWO") || mod["rollbackable"] != true {
		t.Fatalf("the modified block: %v", mod)
	}
	if st := res["stats"].(map[string]any); st["changedBlocks"] != float64(3) || st["rollbackableBlocks"] != float64(3) {
		t.Fatalf("stats: %v", st)
	}
	// Paged with a cursor.
	p1 := a.ok("timeline", with(cmp, "pageSize", 2))
	if p1["hasMore"] != true || p1["nextCursor"] == nil {
		t.Fatalf("page 1: %v", p1)
	}
	p2 := a.ok("timeline", with(cmp, "pageSize", 2, "cursor", p1["nextCursor"]))
	if len(p2["changes"].([]any)) != 1 || p2["hasMore"] != false {
		t.Fatalf("page 2: %v", p2)
	}

	// A tag of another document is refused, before anything is read.
	if m, isErr := a.call("timeline", map[string]any{"action": "compare_node", "documentId": other, "tag": tag}); !isErr || errCodeOf(m) != "timeline_tag_mismatch" {
		t.Fatalf("compare_node with another document's tag: %v", m)
	}
	a.fails("timeline", map[string]any{"action": "rollback_document", "documentId": other, "tag": tag, "validateOnly": true}, "timeline_tag_mismatch")

	// rollback_block: the modified block. A change after the preflight is
	// state_changed; a stale changeKey is refused at the preflight.
	rb := map[string]any{"action": "rollback_block", "documentId": doc, "tag": tag, "changeKey": mod["changeKey"]}
	pre = a.ok("timeline", with(rb, "validateOnly", true))
	if _, err := c.UpdateBlock(ctx, blocks[1], "markdown", "TWO again"); err != nil {
		t.Fatal(err)
	}
	a.fails("timeline", with(commitOf(rb, pre), "confirm", true), "state_changed")
	a.fails("timeline", with(rb, "validateOnly", true), "state_changed")
	mod = changesOf(a.ok("timeline", cmp))["modified"][0]
	rb["changeKey"] = mod["changeKey"]
	pre = a.ok("timeline", with(rb, "validateOnly", true))
	if m, isErr := a.call("timeline", commitOf(rb, pre)); !isErr || errCodeOf(m) != "confirmation_required" {
		t.Fatalf("unconfirmed rollback_block: %v", m)
	}
	res = a.ok("timeline", with(commitOf(rb, pre), "confirm", true))
	if res["status"] != "committed" || !strings.Contains(fmt.Sprint(res["next"]), "read the document again") {
		t.Fatalf("rollback_block: %v", res)
	}
	if rep := a.ok("timeline", with(commitOf(rb, pre), "confirm", true)); rep["replayed"] != true {
		t.Fatalf("rollback_block replay: %v", rep)
	}
	if kd, err := c.GetBlockKramdown(ctx, blocks[1]); err != nil || !strings.Contains(kd.Kramdown, "two") {
		t.Fatalf("the block after its rollback: %v %v", kd, err)
	}
	if ch := changesOf(a.ok("timeline", cmp)); len(ch["modified"]) != 0 || len(ch["removed"]) != 1 {
		t.Fatalf("after rollback_block: %v", ch)
	}
	// Every comparison since the first found the document changed between
	// the node and a snapshot already there: none took one.
	if n := snapshotCount(t, c); n != total {
		t.Fatalf("comparisons took %d more snapshots", n-total)
	}

	// The removed block goes back after the block it followed; the added
	// one is deleted. Then nothing differs.
	texts := func() string {
		var out []string
		for _, k := range a.ok("block", map[string]any{"action": "get_children", "id": doc})["data"].([]any) {
			kd, _ := c.GetBlockKramdown(ctx, k.(map[string]any)["id"].(string))
			out = append(out, strings.SplitN(kd.Kramdown, "\n", 2)[0])
		}
		return strings.Join(out, "|")
	}
	ch = changesOf(a.ok("timeline", cmp))
	for _, st := range []string{"removed", "added"} {
		res := a.strictDo("timeline", map[string]any{"action": "rollback_block", "documentId": doc, "tag": tag, "changeKey": ch[st][0]["changeKey"], "confirm": true})
		if res["status"] != "committed" || res["blockId"] == nil {
			t.Fatalf("rollback_block of the %s block: %v", st, res)
		}
	}
	if got := texts(); got != "one|two|three|four" {
		t.Fatalf("the document after three block rollbacks: %s", got)
	}
	if res := a.ok("timeline", cmp); res["noChanges"] != true {
		t.Fatalf("compare_node after three block rollbacks: %v", res)
	}
	rd := map[string]any{"action": "rollback_document", "documentId": doc, "tag": tag}
	a.fails("timeline", with(rd, "validateOnly", true), "invalid_arguments") // nothing differs

	// rollback_document: guarded by the document; read back.
	if _, err := c.UpdateBlock(ctx, blocks[0], "markdown", "ONE"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AppendBlock(ctx, "markdown", "five", doc); err != nil {
		t.Fatal(err)
	}
	c.FlushTransaction(ctx)
	pre = a.ok("timeline", with(rd, "validateOnly", true))
	if _, err := c.AppendBlock(ctx, "markdown", "six", doc); err != nil {
		t.Fatal(err)
	}
	c.FlushTransaction(ctx)
	a.fails("timeline", with(commitOf(rd, pre), "confirm", true), "state_changed")
	pre = a.ok("timeline", with(rd, "validateOnly", true))
	res = a.ok("timeline", with(commitOf(rd, pre), "confirm", true))
	if res["status"] != "committed" {
		t.Fatalf("rollback_document: %v", res)
	}
	if rep := a.ok("timeline", with(commitOf(rd, pre), "confirm", true)); rep["replayed"] != true {
		t.Fatalf("rollback_document replay: %v", rep)
	}
	if got := texts(); got != "one|two|three|four" {
		t.Fatalf("the document after its rollback: %s", got)
	}
	a.fails("timeline", with(rd, "validateOnly", true), "invalid_arguments") // nothing differs now

	// The gate: write to create, delete for the destructive ones; a
	// hidden document is not found.
	s.config(t, "permission", nb, "rw")
	a.fails("timeline", map[string]any{"action": "delete_node", "documentId": doc, "tag": tag, "validateOnly": true}, "permission_denied")
	a.fails("timeline", with(rd, "validateOnly", true), "permission_denied")
	s.config(t, "permission", nb, "r")
	a.fails("timeline", with(create, "validateOnly", true), "permission_denied")
	a.ok("timeline", map[string]any{"action": "list_nodes", "scope": "document", "documentId": doc})
	s.config(t, "permission", nb, "none")
	for _, read := range []map[string]any{cmp, {"action": "list_nodes", "scope": "document", "documentId": doc}} {
		if m, isErr := a.call("timeline", read); !isErr || errCodeOf(m) != "not_found" {
			t.Fatalf("%v of a hidden document: %v", read["action"], m)
		}
	}

	// A workspace node: no notebook's permission is asked (the document's
	// notebook is hidden here); it is listed with scope global.
	label := "E2E" + strings.ReplaceAll(doc, "-", "")
	gtag := a.strictDo("timeline", map[string]any{"action": "create_node", "name": label, "scope": "global"})["tag"]
	if gtag != "sisyphustimeline_global_"+label {
		t.Fatalf("global node's tag %v", gtag)
	}
	t.Cleanup(func() { c.RemoveRepoTagSnapshot(context.Background(), gtag.(string)) })
	if g := fmt.Sprint(a.ok("timeline", map[string]any{"action": "list_nodes", "scope": "global", "pageSize": 100})["nodes"]); !strings.Contains(g, gtag.(string)) {
		t.Fatalf("list_nodes global: %s", g)
	}
	a.strictDo("timeline", map[string]any{"action": "delete_node", "tag": gtag, "confirm": true})
	if got := timelineTags(t, c, gtag.(string)); len(got) != 0 {
		t.Fatalf("the global node's tag after delete_node: %v", got)
	}

	s.config(t, "permission", nb, "rwd")
	// A node the upstream plugin made (its tag, and its index entry written
	// as its JSON.stringify writes one, beside ours) is listed, compared and
	// deleted here; deleting it leaves the other entry as it was.
	// (It marks our node's snapshot: the document is as it was there.)
	snapID := timelineTags(t, c, prefix)[tag]
	utag := prefix + "Upstreammade"
	if err := c.TagSnapshot(ctx, snapID, utag); err != nil {
		t.Fatal(err)
	}
	kept := `{"name":"Kept <as is>","created":1,"snapshotId":"s0","tag":"` + prefix + `Kept","scope":"document","source":"legacy"}`
	upstream := `{"name":"Upstream made","created":` + fmt.Sprint(time.Now().UnixMilli()) + `,"snapshotId":"` + snapID + `","tag":"` + utag + `","scope":"document"}`
	if err := c.SetBlockAttrs(ctx, doc, map[string]string{"custom-sisyphus-timeline": "[" + kept + "," + upstream + "]"}); err != nil {
		t.Fatal(err)
	}
	if nodes := fmt.Sprint(a.ok("timeline", map[string]any{"action": "list_nodes", "scope": "document", "documentId": doc})["nodes"]); !strings.Contains(nodes, utag) || !strings.Contains(nodes, "Kept <as is>") {
		t.Fatalf("list_nodes with the upstream plugin's node: %s", nodes)
	}
	if res := a.ok("timeline", map[string]any{"action": "compare_node", "documentId": doc, "tag": utag}); res["noChanges"] != true {
		t.Fatalf("compare_node with the upstream plugin's node: %v", res)
	}
	a.strictDo("timeline", map[string]any{"action": "delete_node", "documentId": doc, "tag": utag, "confirm": true})
	if attrs, err = c.GetBlockAttrs(ctx, doc); err != nil || attrs["custom-sisyphus-timeline"] != "["+kept+"]" {
		t.Fatalf("the index after deleting the upstream plugin's node: %q %v", attrs["custom-sisyphus-timeline"], err)
	}

	// delete_node: the tag and the index entry go, the snapshot stays.
	del := map[string]any{"action": "delete_node", "documentId": doc, "tag": tag}
	pre = a.ok("timeline", with(del, "validateOnly", true))
	res = a.ok("timeline", with(commitOf(del, pre), "confirm", true))
	if res["status"] != "committed" || res["snapshotRetained"] != true {
		t.Fatalf("delete_node: %v", res)
	}
	if rep := a.ok("timeline", with(commitOf(del, pre), "confirm", true)); rep["replayed"] != true {
		t.Fatalf("delete_node replay: %v", rep)
	}
	if got := timelineTags(t, c, prefix); len(got) != 0 {
		t.Fatalf("tags after delete_node: %v", got)
	}
	if nodes := a.ok("timeline", map[string]any{"action": "list_nodes", "scope": "document", "documentId": doc})["nodes"].([]any); len(nodes) != 1 || strings.Contains(fmt.Sprint(nodes), tag) {
		t.Fatalf("list_nodes after delete_node (only the kept entry, untagged): %v", nodes)
	}
	a.fails("timeline", with(del, "validateOnly", true), "not_found")
}
