package main

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
)

// TestAVCreateThroughTheBinary: create, render with createIfNotExist and
// duplicate through the binary against the embedded kernel: preflight,
// commit, replay (the receipt, nothing created), a stale duplicate
// (state_changed), and the permission refusal.
func TestAVCreateThroughTheBinary(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	k := startKernel(t, ws)
	s := startServeWith(t, "--siyuan-url", k.url, "--siyuan-token", "tok", "--state-dir", t.TempDir())
	a := connect(t, s.url, "2025-11-25")
	doc, para := firstParagraph(a)
	nb := a.ok("notebook", map[string]any{"action": "list"})["notebooks"].([]any)[0].(map[string]any)["id"].(string)
	avCreateFlow(t, a, kernelClient(t, k.url, "tok"), doc, para, func() int { return countDBFiles(t, ws) })

	// Permission: write in the notebook of the document or block (of the
	// source's block, for a duplicate).
	src := a.strictDo("av", map[string]any{"action": "create", "parentID": doc})["avID"]
	s.config(t, "permission", nb, "r")
	for _, args := range []map[string]any{
		{"action": "create", "parentID": doc},
		{"action": "render", "blockID": doc, "createIfNotExist": true},
		{"action": "duplicate", "avID": src},
	} {
		m := a.fails("av", with(args, "validateOnly", true), "permission_denied")
		if m["writeAttempted"] != false {
			t.Fatalf("refusal %v", m)
		}
	}
}

// TestAVCreateLive runs the same flow against a real SiYuan when
// SISYPHUS_LIVE_SIYUAN_URL and SISYPHUS_LIVE_SIYUAN_TOKEN are set.
func TestAVCreateLive(t *testing.T) {
	a, c, doc := liveDatabaseDoc(t, "avcreate", "/Databases", "a row block\n\nsecond")
	avCreateFlow(t, a, c, doc, firstChild(a, doc), nil)
}

// countDBFiles counts the embedded kernel's database files.
func countDBFiles(t *testing.T, ws string) int {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(ws, "data", "storage", "av", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	return len(m)
}

func avCreateFlow(t *testing.T, a *agent, c *siyuan.Client, doc, para string, count func() int) {
	ctx := context.Background()
	remove := func(av string) {
		t.Cleanup(func() { c.RemoveFile(context.Background(), "/data/storage/av/"+av+".json") })
	}
	stored := func(av string) *siyuan.AttributeView {
		t.Helper()
		v, err := c.GetAttributeView(ctx, av)
		if err != nil || v == nil {
			t.Fatalf("GetAttributeView %s: %v, %v", av, v, err)
		}
		return v
	}
	counted := func() int {
		if count == nil {
			return 0
		}
		return count()
	}
	n := counted()

	// create: block, database, name, columns, rows in one strict call.
	create := map[string]any{"action": "create", "previousID": para, "name": "Reading list",
		"columns":         []any{map[string]any{"name": "Author", "type": "text"}, map[string]any{"name": "Pages", "type": "number"}},
		"primaryKeyTexts": []any{"Dune"}}
	pre := a.ok("av", with(create, "validateOnly", true))
	if pre["requestId"] == nil || pre["preconditionField"] != nil {
		t.Fatalf("create preflight %v", pre)
	}
	res := a.ok("av", commitOf(create, pre))
	av, block := res["avID"].(string), res["blockID"].(string)
	remove(av)
	if res["status"] != "committed" || res["stage"] != "rows" || len(res["stages"].([]any)) != 6 || res["resultHash"] == nil {
		t.Fatalf("create %v", res)
	}
	got := stored(av)
	if got.Name != "Reading list" || len(got.KeyValues) != 4 || len(got.Views[0].ItemIDs) != 1 {
		t.Fatalf("created %+v", got)
	}
	if blocks, err := c.GetMirrorDatabaseBlocks(ctx, av); err != nil || !slices.Equal(blocks, []string{block}) {
		t.Fatalf("blocks %v, %v", blocks, err)
	}
	rep := a.ok("av", commitOf(create, pre))
	if rep["replayed"] != true || rep["writeAttempted"] != false || rep["avID"] != av || rep["resultHash"] != res["resultHash"] {
		t.Fatalf("create replay %v", rep)
	}
	if count != nil && counted() != n+1 {
		t.Fatalf("%d database files, want %d", counted(), n+1)
	}
	r := a.ok("av", map[string]any{"action": "render", "id": av})
	if r["rowCount"] != float64(1) || len(r["columns"].([]any)) != 4 {
		t.Fatalf("render of the new database %v", r)
	}

	// render with createIfNotExist: upstream's creation.
	rc := map[string]any{"action": "render", "blockID": doc, "createIfNotExist": true}
	pre = a.ok("av", with(rc, "validateOnly", true))
	res = a.ok("av", commitOf(rc, pre))
	av2 := res["avID"].(string)
	remove(av2)
	if res["status"] != "committed" || res["generatedAvID"] != true || res["materialized"] != true || len(res["columns"].([]any)) != 2 {
		t.Fatalf("render createIfNotExist %v", res)
	}
	if rep := a.ok("av", commitOf(rc, pre)); rep["replayed"] != true || rep["avID"] != av2 {
		t.Fatalf("render createIfNotExist replay %v", rep)
	}
	// Of a database that exists, createIfNotExist renders it (upstream's way).
	if r := a.ok("av", map[string]any{"action": "render", "id": av2, "createIfNotExist": true}); r["avID"] != av2 || r["requestId"] != nil {
		t.Fatalf("render of an existing database with createIfNotExist: %v", r)
	}

	// duplicate: guarded on the source; the copy's hash is resultHash.
	dup := map[string]any{"action": "duplicate", "avID": av}
	pre = a.ok("av", with(dup, "validateOnly", true))
	res = a.ok("av", commitOf(dup, pre))
	cp := res["avID"].(string)
	remove(cp)
	if res["status"] != "committed" || res["sourceAvID"] != av || res["insertedAfter"] != block || res["previousHash"] == res["resultHash"] {
		t.Fatalf("duplicate %v", res)
	}
	if copied := stored(cp); len(copied.KeyValues) != 4 {
		t.Fatalf("copy %+v", copied)
	}
	if rep := a.ok("av", commitOf(dup, pre)); rep["replayed"] != true || rep["avID"] != cp {
		t.Fatalf("duplicate replay %v", rep)
	}
	pre = a.ok("av", with(dup, "validateOnly", true))
	if _, err := c.Transactions(ctx, []siyuan.Transaction{{DoOperations: []siyuan.Operation{siyuan.SetAttrViewNameOp(av, "Renamed behind")}}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the rename", func() bool { return stored(av).Name == "Renamed behind" })
	m := a.fails("av", commitOf(dup, pre), "state_changed")
	if m["writeAttempted"] != false {
		t.Fatalf("stale duplicate %v", m)
	}
	if count != nil && counted() != n+3 {
		t.Fatalf("%d database files, want %d", counted(), n+3)
	}
}

// TestAVCreateCrashAtEachStage: the authority is killed (SIGKILL) while
// the kernel, a separate process, still applies one stage of a creation;
// a new authority on the same state dir gets the same commit: it checks
// the kernel for the reserved ids, finishes from the last confirmed
// stage, answers the receipt, and there is one database.
func TestAVCreateCrashAtEachStage(t *testing.T) {
	t.Parallel()
	for _, stage := range []struct{ name, endpoint string }{
		{"block", "/api/transactions"},
		{"database", "/api/av/renderAttributeView"},
		{"column", "/api/av/addAttributeViewKey"},
		{"rows", "/api/av/addAttributeViewBlocks"},
	} {
		t.Run(stage.name, func(t *testing.T) {
			t.Parallel()
			state, ws := t.TempDir(), t.TempDir()
			k := startKernel(t, ws, "--fault", stage.endpoint+"=latency:3s")
			s := startServeWith(t, "--siyuan-url", k.url, "--siyuan-token", "tok", "--state-dir", state)
			a := connect(t, s.url, "2025-11-25")
			doc, _ := firstParagraph(a)
			n := countDBFiles(t, ws)
			create := map[string]any{"action": "create", "parentID": doc,
				"columns": []any{map[string]any{"name": "Author", "type": "text"}}, "primaryKeyTexts": []any{"Dune", "Solaris"}}
			pre := a.ok("av", with(create, "validateOnly", true))

			done := make(chan struct{})
			go func() {
				defer close(done)
				a.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "av", Arguments: commitOf(create, pre)})
			}()
			// Kill the authority while the kernel holds the stage's request
			// (every stage before it is fast).
			time.Sleep(1200 * time.Millisecond)
			s.cmd.Process.Signal(syscall.SIGKILL)
			s.cmd.Wait()
			<-done
			time.Sleep(2 * time.Second) // the kernel finishes applying it

			// The ledger the dead authority left: executing, the reserved
			// ids, the stage in doubt.
			l, err := strict.OpenLedger(filepath.Join(state, strict.LedgerFile))
			if err != nil {
				t.Fatal(err)
			}
			rec, _, err := l.Get(context.Background(), strict.RequestID(pre["requestId"].(string)))
			l.Close()
			if err != nil || rec.Status != strict.StatusExecuting || rec.Creation == nil || rec.Creation.IDs["avID"] == "" ||
				!strings.HasPrefix(rec.Creation.Pending, stage.name) {
				t.Fatalf("ledger after the kill: %+v %+v, %v", rec, rec.Creation, err)
			}

			s2 := startServeWith(t, "--siyuan-url", k.url, "--siyuan-token", "tok", "--state-dir", state)
			b := connect(t, s2.url, "2026-07-28")
			res, isErr := b.call("av", commitOf(create, pre))
			if isErr || res["status"] != "committed" || res["replayed"] != false {
				t.Fatalf("resumed commit: %v", res)
			}
			av := res["avID"].(string)
			if av != rec.Creation.IDs["avID"] {
				t.Fatalf("resumed %s, reserved %s", av, rec.Creation.IDs["avID"])
			}
			if got := countDBFiles(t, ws); got != n+1 {
				t.Fatalf("%d database files, want %d", got, n+1)
			}
			c := kernelClient(t, k.url, "tok")
			v, err := c.GetAttributeView(context.Background(), av)
			if err != nil || v == nil || len(v.KeyValues) != 3 || len(v.Views[0].ItemIDs) != 2 {
				t.Fatalf("database after the resume: %+v, %v", v, err)
			}
			blocks, err := c.GetMirrorDatabaseBlocks(context.Background(), av)
			if err != nil || !slices.Equal(blocks, []string{res["blockID"].(string)}) {
				t.Fatalf("blocks %v, %v", blocks, err)
			}
			rep := b.ok("av", commitOf(create, pre))
			if rep["replayed"] != true || rep["avID"] != av {
				t.Fatalf("replay after the resume %v", rep)
			}
		})
	}
}

// TestAVRenderCreateAndDuplicateCrash: the same kill for render with
// createIfNotExist and for duplicate. A stage whose reserved ids the
// kernel shows is resumed; the duplicate itself, killed inside SiYuan's
// copy, has no id to look for (the kernel chooses it): outcome_unknown
// with the receipt so far, on every replay, and never a second copy.
func TestAVRenderCreateAndDuplicateCrash(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, action, endpoint, pending string
		resumes                         bool
	}{
		{"render/block", "render", "/api/transactions", "block", true},
		{"render/database", "render", "/api/av/renderAttributeView", "database", true},
		{"duplicate/duplicated", "duplicate", "/api/av/duplicateAttributeViewBlock", "duplicated", false},
		{"duplicate/block", "duplicate", "/api/transactions", "block", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			state, ws := t.TempDir(), t.TempDir()
			k := startKernel(t, ws, "--fault", c.endpoint+"=latency:3s")
			s := startServeWith(t, "--siyuan-url", k.url, "--siyuan-token", "tok", "--state-dir", state)
			a := connect(t, s.url, "2025-11-25")
			doc, _ := firstParagraph(a)
			args := map[string]any{"action": "render", "blockID": doc, "createIfNotExist": true}
			if c.action == "duplicate" {
				src := a.strictDo("av", map[string]any{"action": "create", "parentID": doc, "primaryKeyTexts": []any{"row"}})
				args = map[string]any{"action": "duplicate", "avID": src["avID"]}
			}
			n := countDBFiles(t, ws)
			pre := a.ok("av", with(args, "validateOnly", true))
			done := make(chan struct{})
			go func() {
				defer close(done)
				a.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "av", Arguments: commitOf(args, pre)})
			}()
			time.Sleep(1200 * time.Millisecond)
			s.cmd.Process.Signal(syscall.SIGKILL)
			s.cmd.Wait()
			<-done
			time.Sleep(2 * time.Second)

			l, err := strict.OpenLedger(filepath.Join(state, strict.LedgerFile))
			if err != nil {
				t.Fatal(err)
			}
			rec, _, err := l.Get(context.Background(), strict.RequestID(pre["requestId"].(string)))
			l.Close()
			if err != nil || rec.Status != strict.StatusExecuting || rec.Creation == nil || rec.Creation.Pending != c.pending {
				t.Fatalf("ledger after the kill: %+v %+v, %v", rec, rec.Creation, err)
			}

			s2 := startServeWith(t, "--siyuan-url", k.url, "--siyuan-token", "tok", "--state-dir", state)
			b := connect(t, s2.url, "2026-07-28")
			for try := range 2 {
				res, isErr := b.call("av", commitOf(args, pre))
				switch {
				case c.resumes && try == 0 && (isErr || res["status"] != "committed"):
					t.Fatalf("resumed commit: %v", res)
				case c.resumes && try == 1 && res["replayed"] != true:
					t.Fatalf("replay after the resume: %v", res)
				case !c.resumes:
					e, _ := res["error"].(map[string]any)
					r, _ := e["receipt"].(map[string]any)
					if !isErr || e["code"] != "outcome_unknown" || r["inDoubt"] != c.pending {
						t.Fatalf("try %d: %v", try, res)
					}
				}
			}
			if got := countDBFiles(t, ws); got != n+1 {
				t.Fatalf("%d database files, want %d", got, n+1)
			}
		})
	}
}
