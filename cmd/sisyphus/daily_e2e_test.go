package main

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/testvars"
)

// TestDailyThroughTheBinary walks the daily-note and document-structure
// actions (document.create_daily_note, duplicate, heading_to_doc,
// doc_to_heading; block.add_to_daily_note) through the binary against the
// embedded kernel: each preflighted, committed and replayed, the guarded
// ones refused as state_changed after a change, all refused where the
// notebook is read-only, each checked against the kernel.
func TestDailyThroughTheBinary(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	s := startServeWith(t, "--siyuan-url", k.url, "--siyuan-token", "tok", "--state-dir", t.TempDir())
	a := connect(t, s.url, "2025-11-25")
	nb := a.strictDo("notebook", map[string]any{"action": "create", "name": "Journal"})["notebook"].(string)
	s.config(t, "permission", nb, "rw")
	dailyFlow(t, s, a, kernelClient(t, k.url, "tok"), nb)
}

// TestDailyLive runs the same walk against a real SiYuan when
// SISYPHUS_LIVE_SIYUAN_URL and SISYPHUS_LIVE_SIYUAN_TOKEN are set, in a
// notebook it creates and removes. Its documents are removed first, and
// the notebook a while later: SiYuan 3.7.3 crashes when a notebook is
// removed right after a document in it changed its title.
func TestDailyLive(t *testing.T) {
	url, tok := testvars.Live(t)
	s := startServeWith(t, "--siyuan-url", url, "--siyuan-token", tok, "--state-dir", t.TempDir())
	a := connect(t, s.url, "2025-11-25")
	c := kernelClient(t, url, tok)
	nb := a.strictDo("notebook", map[string]any{"action": "create", "name": fmt.Sprintf("sisyphus-live-daily-%d", time.Now().UnixNano())})["notebook"].(string)
	s.config(t, "permission", nb, "rwd")
	s.config(t, "enable", "notebook.remove")
	defer a.strictDo("notebook", map[string]any{"action": "remove", "notebook": nb, "confirm": true})
	defer func() {
		ctx := context.Background()
		unlimited := 0
		list, err := c.ListDocsByPath(ctx, siyuan.ListDocsRequest{Notebook: nb, Path: "/", MaxListCount: &unlimited})
		if err != nil {
			t.Errorf("cleanup: %v", err)
			return
		}
		for _, f := range list.Files {
			if err := c.RemoveDocByID(ctx, f.ID); err != nil {
				t.Errorf("cleanup: remove %s: %v", f.ID, err)
			}
		}
		time.Sleep(3 * time.Second)
	}()
	dailyFlow(t, s, a, c, nb)
}

// preCommitReplay preflights, commits and replays one write, and returns
// the commit.
func preCommitReplay(t *testing.T, a *agent, tool string, args map[string]any) map[string]any {
	t.Helper()
	pre := a.ok(tool, with(args, "validateOnly", true))
	if pre["writeAttempted"] != false || pre["requestId"] == nil {
		t.Fatalf("%s %v preflight: %v", tool, args, pre)
	}
	res := a.ok(tool, commitOf(args, pre))
	if res["status"] != "committed" || res["writeSafetyGuaranteed"] != true {
		t.Fatalf("%s %v commit: %v", tool, args, res)
	}
	rep := a.ok(tool, commitOf(args, pre))
	if rep["replayed"] != true || rep["writeAttempted"] != false || rep["resultHash"] != res["resultHash"] || rep["id"] != res["id"] {
		t.Fatalf("%s %v replay: %v (commit %v)", tool, args, rep, res)
	}
	return res
}

// staleCommit preflights a guarded write, changes its target, and requires
// the commit to answer state_changed.
func staleCommit(t *testing.T, a *agent, tool string, args map[string]any, change func()) {
	t.Helper()
	pre := a.ok(tool, with(args, "validateOnly", true))
	if pre["preconditionField"] == nil {
		t.Fatalf("%s %v is not guarded: %v", tool, args, pre)
	}
	change()
	a.fails(tool, commitOf(args, pre), "state_changed")
}

func kidsOf(t *testing.T, c *siyuan.Client, id string) []string {
	t.Helper()
	kids, err := c.GetChildBlocks(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, k := range kids {
		ids = append(ids, k.ID)
	}
	return ids
}

func dailyFlow(t *testing.T, s *serveProc, a *agent, c *siyuan.Client, nb string) {
	ctx := context.Background()
	appendTo := func(parent, md string) {
		t.Helper()
		if _, err := c.AppendBlock(ctx, "markdown", md, parent); err != nil {
			t.Fatal(err)
		}
	}

	// create_daily_note: the same note twice in a day.
	daily := map[string]any{"action": "create_daily_note", "notebook": nb}
	note := preCommitReplay(t, a, "document", daily)["id"].(string)
	if again := a.strictDo("document", daily)["id"]; again != note {
		t.Fatalf("second create_daily_note %v, want %s", again, note)
	}
	if hp, err := c.GetHPathByID(ctx, note); err != nil || hp != "/daily note/"+time.Now().Format("2006/01/2006-01-02") {
		t.Fatalf("daily note at %q (%v)", hp, err)
	}

	// add_to_daily_note: at the end, then at the start.
	app := preCommitReplay(t, a, "block", map[string]any{"action": "add_to_daily_note", "notebook": nb, "data": "appended", "dataType": "markdown", "position": "append"})
	pre := preCommitReplay(t, a, "block", map[string]any{"action": "add_to_daily_note", "notebook": nb, "data": "prepended", "position": "prepend"})
	if kids := kidsOf(t, c, note); len(kids) != 3 || kids[0] != pre["id"] || kids[2] != app["id"] || app["note"] != note {
		t.Fatalf("daily note holds %v after append %v and prepend %v", kids, app, pre)
	}

	// duplicate: a copy with new ids; the source is unchanged.
	src := a.strictDo("document", map[string]any{"action": "create", "notebook": nb, "path": "/Plan", "markdown": "# Goals\n\nship it\n\n## Later\n\nrest"})["id"].(string)
	dup := preCommitReplay(t, a, "document", map[string]any{"action": "duplicate", "id": src})
	copyID := dup["id"].(string)
	if copyID == src || dup["sourceID"] != src || len(kidsOf(t, c, copyID)) != 4 {
		t.Fatalf("duplicate: %v", dup)
	}
	if slices.ContainsFunc(kidsOf(t, c, copyID), func(id string) bool { return slices.Contains(kidsOf(t, c, src), id) }) {
		t.Fatal("the copy shares block ids with its source")
	}
	staleCommit(t, a, "document", map[string]any{"action": "duplicate", "id": src}, func() { appendTo(src, "changed") })

	// heading_to_doc: the "Later" section becomes a document under Plan.
	kids := kidsOf(t, c, src)
	later := kids[2]
	srcPath := a.ok("document", map[string]any{"action": "lookup", "id": src})["documents"].([]any)[0].(map[string]any)["path"].(string)
	h2d := map[string]any{"action": "heading_to_doc", "headingID": later, "targetNotebook": nb, "targetPath": srcPath}
	staleCommit(t, a, "document", h2d, func() {
		if _, err := c.InsertBlock(ctx, siyuan.InsertBlockRequest{DataType: "markdown", Data: "into the section", PreviousID: later}); err != nil {
			t.Fatal(err)
		}
	})
	res := preCommitReplay(t, a, "document", h2d)
	if p, err := c.GetPathByID(ctx, later); err != nil || p.Path != res["path"] || p.Notebook != nb {
		t.Fatalf("heading_to_doc %v: the document is at %+v (%v)", res, p, err)
	}
	if got := kidsOf(t, c, later); len(got) != 3 { // the section runs to the end: "changed" too
		t.Fatalf("the new document holds %v", got)
	}
	if got := kidsOf(t, c, src); slices.Contains(got, later) || len(got) != 2 {
		t.Fatalf("the source still holds the section: %v", got)
	}

	// doc_to_heading: the copy becomes a heading after Plan's "Goals"
	// section.
	goals := kidsOf(t, c, src)[0]
	d2h := map[string]any{"action": "doc_to_heading", "srcID": copyID, "targetID": goals, "after": true}
	staleCommit(t, a, "document", d2h, func() { appendTo(copyID, "late") })
	moved := kidsOf(t, c, copyID)
	res = preCommitReplay(t, a, "document", d2h)
	got := kidsOf(t, c, src)
	i := slices.Index(got, copyID)
	if i < 0 || res["srcID"] != copyID || !slices.Equal(got[i+1:i+1+len(moved)], moved) {
		t.Fatalf("doc_to_heading %v: Plan holds %v, want the heading %s then %v", res, got, copyID, moved)
	}
	if l := a.ok("document", map[string]any{"action": "lookup", "id": copyID})["documents"].([]any)[0].(map[string]any); l["id"] != src {
		t.Fatalf("the heading %s lives in %v, want %s", copyID, l, src)
	}
	// A document as the target is refused: SiYuan would lose the source.
	a.fails("document", map[string]any{"action": "doc_to_heading", "srcID": later, "targetID": src, "validateOnly": true}, "invalid_arguments")

	// Read-only: every one of them is refused before it runs.
	s.config(t, "permission", nb, "r")
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"document", daily},
		{"block", map[string]any{"action": "add_to_daily_note", "notebook": nb, "data": "x", "position": "append"}},
		{"document", map[string]any{"action": "duplicate", "id": src}},
		{"document", map[string]any{"action": "heading_to_doc", "headingID": goals, "targetNotebook": nb}},
		{"document", map[string]any{"action": "doc_to_heading", "srcID": later, "targetID": goals}},
	} {
		a.fails(tc.tool, with(tc.args, "validateOnly", true), "permission_denied")
	}
	s.config(t, "permission", nb, "rwd")
}
