package fs

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// fsNotebook creates a notebook with documents at the given human paths
// (created in order) and returns its id and the document ids by path.
func (s *sfix) fsNotebook(t *testing.T, name string, docs ...string) (string, map[string]string) {
	t.Helper()
	ctx := context.Background()
	nb, err := s.C.CreateNotebook(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for _, d := range docs {
		id, err := s.C.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: nb.ID, Path: d, Markdown: "text of " + d})
		if err != nil {
			t.Fatal(err)
		}
		ids[d] = id
	}
	return nb.ID, ids
}

// strictOK runs preflight then commit and returns both answers.
func (s *sfix) strictOK(t *testing.T, args map[string]any) (pre, res map[string]any) {
	t.Helper()
	pre = s.OK(t, "fs", tooltest.CopyArgs(args, "validateOnly", true))
	res = s.OK(t, "fs", tooltest.CommitArgs(args, pre))
	return pre, res
}

func (s *sfix) body(t *testing.T, id string) string {
	t.Helper()
	kids, err := s.C.GetChildBlocks(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var md []string
	for _, k := range kids {
		md = append(md, k.Markdown)
	}
	return strings.Join(md, "\n\n")
}

func names(t *testing.T, ls map[string]any) []string {
	t.Helper()
	var out []string
	for _, e := range ls["data"].([]any) {
		out = append(out, e.(map[string]any)["name"].(string))
	}
	return out
}

func TestFsLsAndRead(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	child, err := s.C.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: s.NB, Path: "/Doc/Child", Markdown: "child"})
	if err != nil {
		t.Fatal(err)
	}

	root := s.OK(t, "fs", map[string]any{"action": "ls", "path": "/"})
	var strictNb map[string]any
	for _, e := range root["data"].([]any) {
		if m := e.(map[string]any); m["name"] == "Strict" {
			strictNb = m
		}
	}
	if strictNb == nil || strictNb["path"] != "/Strict" || strictNb["id"] != s.NB || strictNb["children"].(float64) != 1 {
		t.Fatalf("ls /: %v", root)
	}
	nb := s.OK(t, "fs", map[string]any{"action": "ls", "path": "/Strict/"})
	d := nb["data"].([]any)[0].(map[string]any)
	if nb["total"].(float64) != 1 || d["name"] != "Doc" || d["path"] != "/Strict/Doc" || d["id"] != s.Doc || d["children"].(float64) != 1 {
		t.Fatalf("ls /Strict: %v", nb)
	}
	sub := s.OK(t, "fs", map[string]any{"action": "ls", "path": "/Strict/Doc"})
	if c := sub["data"].([]any)[0].(map[string]any); c["id"] != child || c["path"] != "/Strict/Doc/Child" || c["children"].(float64) != 0 {
		t.Fatalf("ls /Strict/Doc: %v", sub)
	}

	// read: windows of whole blocks, nextWindow in fs arguments.
	first := s.OK(t, "fs", map[string]any{"action": "read", "path": "/Strict/Doc", "blockLimit": 5})
	next, _ := first["nextWindow"].(map[string]any)
	if first["path"] != "/Strict/Doc" || first["returnedBlocks"].(float64) != 5 || first["totalBlocks"].(float64) != 12 ||
		!strings.HasPrefix(first["content"].(string), "paragraph 0") || next["action"] != "read" || next["path"] != "/Strict/Doc" ||
		next["blockStart"].(float64) != 5 || next["id"] != nil {
		t.Fatalf("read: %v", first)
	}
	// readInfo says the window is partial; its next step is the same call.
	if info, _ := first["readInfo"].(map[string]any); info["coverage"] != "partial" {
		t.Fatalf("read readInfo: %v", first)
	}
	if step := first["nextSteps"].([]any)[0].(map[string]any); step["tool"] != "fs" || step["arguments"].(map[string]any)["path"] != "/Strict/Doc" ||
		step["arguments"].(map[string]any)["blockStart"].(float64) != 5 {
		t.Fatalf("read nextSteps: %v", first["nextSteps"])
	}
	second := s.OK(t, "fs", tooltest.CopyArgs(next))
	if !strings.HasPrefix(second["content"].(string), "paragraph 5") {
		t.Fatalf("read next window: %v", second)
	}
	s.WantErr(t, "fs", map[string]any{"action": "read", "path": "/Strict/Nope"}, failure.NotFound)
	s.WantErr(t, "fs", map[string]any{"action": "read", "path": "/Strict"}, failure.InvalidArguments)
	s.WantErr(t, "fs", map[string]any{"action": "ls", "path": "/No such notebook"}, failure.NotFound)
	s.WantErr(t, "fs", map[string]any{"action": "ls", "path": "Strict"}, failure.InvalidArguments)
	s.WantErr(t, "fs", map[string]any{"action": "read", "path": "/Strict//Doc"}, failure.InvalidArguments)
}

func TestFsAmbiguousPath(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	// Two documents with one human path.
	nb, ids := s.fsNotebook(t, "Dup", "/Same")
	other, err := s.C.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: nb, Path: "/Same", Markdown: "twin"})
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range []map[string]any{
		{"action": "read", "path": "/Dup/Same"},
		{"action": "ls", "path": "/Dup/Same"},
		{"action": "rm", "path": "/Dup/Same", "validateOnly": true},
		{"action": "write", "path": "/Dup/Same", "content": "x", "overwrite": true, "validateOnly": true},
		{"action": "mv", "from": "/Dup/Same", "to": "/Dup/Other", "validateOnly": true},
	} {
		e := s.WantErr(t, "fs", args, failure.AmbiguousPath)
		if !strings.Contains(e.Message, ids["/Same"]) || !strings.Contains(e.Message, other) {
			t.Errorf("%v: ambiguous_path must list both ids: %s", args, e.Message)
		}
	}
	// Two notebooks with one name.
	nb2, err := s.C.CreateNotebook(ctx, "Strict")
	if err != nil {
		t.Fatal(err)
	}
	e := s.WantErr(t, "fs", map[string]any{"action": "ls", "path": "/Strict"}, failure.AmbiguousPath)
	if !strings.Contains(e.Message, s.NB) || !strings.Contains(e.Message, nb2.ID) {
		t.Fatalf("ambiguous notebooks must list both ids: %s", e.Message)
	}
	// An additive create under an ambiguous path is refused at preflight,
	// nothing attempted and no request id issued.
	create := map[string]any{"action": "write", "path": "/Dup/Same/Kid", "content": "k", "validateOnly": true}
	if e := s.WantErr(t, "fs", create, failure.AmbiguousPath); *e.WriteAttempted || e.RequestID != "" {
		t.Fatal("a refused create must not be attempted")
	}
}

func TestFsWriteCreate(t *testing.T) {
	s := newStrictFixture(t, false)
	args := map[string]any{"action": "write", "path": "/Strict/Notes/Plan", "content": "# Plan\n\nfirst **step**\n\nsecond step\n"}
	pre := s.OK(t, "fs", tooltest.CopyArgs(args, "validateOnly", true))
	if _, hasHash := pre["preconditionField"]; hasHash || pre["requestId"] == nil || pre["targetCount"].(float64) != 1 {
		t.Fatalf("create preflight is additive (requestId only): %v", pre)
	}
	s.WantErr(t, "fs", args, failure.PreconditionRequired)
	res := s.OK(t, "fs", tooltest.CommitArgs(args, pre))
	id, _ := res["id"].(string)
	if res["status"] != "committed" || res["created"] != true || res["path"] != "/Strict/Notes/Plan" || id == "" ||
		res["writeSafetyGuaranteed"] != true || res["resultHash"] == nil {
		t.Fatalf("create: %v", res)
	}
	if body := s.body(t, id); body != "first **step**\n\nsecond step" {
		t.Fatalf("body %q: the duplicate title must be stripped", body)
	}
	// The missing parent was created; the new document is listed under it.
	ls := s.OK(t, "fs", map[string]any{"action": "ls", "path": "/Strict/Notes"})
	if got := names(t, ls); len(got) != 1 || got[0] != "Plan" {
		t.Fatalf("ls /Strict/Notes: %v", ls)
	}
	// Replay: same answer, nothing created again.
	rep := s.OK(t, "fs", tooltest.CommitArgs(args, pre))
	if rep["replayed"] != true || rep["writeAttempted"] != false || rep["id"] != id {
		t.Fatalf("replay: %v", rep)
	}
	if ids, _ := s.C.GetIDsByHPath(context.Background(), s.NB, "/Notes/Plan"); len(ids) != 1 {
		t.Fatalf("%d documents at the path after a replay", len(ids))
	}
	// Creating where a document exists is refused at preflight, nothing
	// attempted and no request id issued (issue 9: it used to be refused only
	// at commit).
	again := tooltest.CopyArgs(args, "content", "other")
	e := s.WantErr(t, "fs", tooltest.CopyArgs(again, "validateOnly", true), failure.InvalidArguments)
	if *e.WriteAttempted || e.RequestID != "" || !strings.Contains(e.Message, "overwrite") {
		t.Fatalf("existing path: %+v", e)
	}
	// In a notebook that does not exist: not_found at preflight.
	s.WantErr(t, "fs", map[string]any{"action": "write", "path": "/NoSuchNotebook/x", "content": "x", "validateOnly": true}, failure.NotFound)
	// A document that appears between preflight and commit: refused at
	// commit before anything is recorded as executing; a retry is refused
	// the same way.
	race := map[string]any{"action": "write", "path": "/Strict/Notes/Race", "content": "mine"}
	pre = s.Preflight(t, "fs", race, "", 1)
	other := s.MkDoc(t, s.NB, "/Notes/Race", "theirs")
	for i := 0; i < 2; i++ {
		if e := s.WantErr(t, "fs", tooltest.CommitArgs(race, pre), failure.InvalidArguments); *e.WriteAttempted {
			t.Fatalf("a refused create attempted a write: %+v", e)
		}
	}
	if body := s.body(t, other); !strings.Contains(body, "theirs") {
		t.Fatal("a refused create wrote")
	}
	// Strict mode off: a direct create still works.
	s.CloseLedger()
	s.Reopen(t, true)
	direct := s.OK(t, "fs", map[string]any{"action": "write", "path": "/Strict/Direct", "content": "d"})
	if direct["writeSafetyGuaranteed"] != false || direct["created"] != true {
		t.Fatalf("direct create: %v", direct)
	}
}

func TestFsWriteOverwrite(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	_, ids := s.fsNotebook(t, "W", "/Page", "/Plain", "/Aliased", "/Custom", "/HTML")
	page := ids["/Page"]
	args := map[string]any{"action": "write", "path": "/W/Page", "content": "# Page\n\nreplaced **body**\n\n- item", "overwrite": true}

	pre := s.OK(t, "fs", tooltest.CopyArgs(args, "validateOnly", true))
	if pre["preconditionField"] != "expectedStateHash" || pre["expectedStateHash"] == nil {
		t.Fatalf("overwrite preflight is guarded: %v", pre)
	}
	// The hash is required.
	s.WantErr(t, "fs", tooltest.CopyArgs(args, "requestId", pre["requestId"]), failure.PreconditionRequired)
	res := s.OK(t, "fs", tooltest.CommitArgs(args, pre))
	if res["status"] != "committed" || res["overwritten"] != true || res["id"] != page || res["previousHash"] == res["resultHash"] {
		t.Fatalf("overwrite: %v", res)
	}
	if _, leaked := res["_appliedTextHash"]; leaked {
		t.Fatal("verification detail leaked into the answer")
	}
	if body := s.body(t, page); body != "replaced **body**\n\n- item" {
		t.Fatalf("body after overwrite: %q", body)
	}
	if rep := s.OK(t, "fs", tooltest.CommitArgs(args, pre)); rep["replayed"] != true || rep["status"] != "committed" {
		t.Fatalf("replay: %v", rep)
	}
	// The same body again still replaces the blocks (new ids): committed.
	_, same := s.strictOK(t, args)
	if same["status"] != "committed" || s.body(t, page) != "replaced **body**\n\n- item" {
		t.Fatalf("same body: %v", same)
	}

	// Drift after preflight: state_changed, nothing written.
	drift := map[string]any{"action": "write", "path": "/W/Plain", "content": "agent text", "overwrite": true}
	pre = s.OK(t, "fs", tooltest.CopyArgs(drift, "validateOnly", true))
	kids, _ := s.C.GetChildBlocks(ctx, ids["/Plain"])
	if _, err := s.C.UpdateBlock(ctx, kids[0].ID, "markdown", "edited in the UI"); err != nil {
		t.Fatal(err)
	}
	e := s.WantErr(t, "fs", tooltest.CommitArgs(drift, pre), failure.StateChanged)
	if e.ExpectedHash != pre["expectedStateHash"] || *e.WriteAttempted {
		t.Fatalf("state_changed: %+v", e)
	}
	if body := s.body(t, ids["/Plain"]); body != "edited in the UI" {
		t.Fatalf("a state_changed overwrite wrote: %q", body)
	}

	// Refusals: fail closed at preflight, nothing attempted.
	kids, _ = s.C.GetChildBlocks(ctx, ids["/Aliased"])
	if err := s.C.SetBlockAttrs(ctx, kids[0].ID, map[string]string{"alias": "keep me"}); err != nil {
		t.Fatal(err)
	}
	kids, _ = s.C.GetChildBlocks(ctx, ids["/Custom"])
	if err := s.C.SetBlockAttrs(ctx, kids[0].ID, map[string]string{"custom-x": "1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.C.AppendBlock(ctx, "markdown", "<div>\nraw html\n</div>", ids["/HTML"]); err != nil {
		t.Fatal(err)
	}
	for p, why := range map[string]string{"/W/Aliased": "alias", "/W/Custom": "custom-x", "/W/HTML": "NodeHTMLBlock"} {
		id := ids[strings.TrimPrefix(p, "/W")]
		before := s.body(t, id)
		e := s.WantErr(t, "fs", map[string]any{"action": "write", "path": p, "content": "x", "overwrite": true, "validateOnly": true}, failure.InvalidArguments)
		if *e.WriteAttempted || !strings.Contains(e.Message, why) {
			t.Fatalf("%s: refusal %+v", p, e)
		}
		if s.body(t, id) != before {
			t.Fatalf("%s: a refused overwrite wrote", p)
		}
	}
	s.WantErr(t, "fs", map[string]any{"action": "write", "path": "/W/Plain", "content": "# Plain\n", "overwrite": true, "validateOnly": true}, failure.InvalidArguments)

	// An attribute set after preflight: the commit refuses (state_changed), nothing written.
	late := map[string]any{"action": "write", "path": "/W/Page", "content": "late", "overwrite": true}
	pre = s.OK(t, "fs", tooltest.CopyArgs(late, "validateOnly", true))
	kids, _ = s.C.GetChildBlocks(ctx, page)
	if err := s.C.SetBlockAttrs(ctx, kids[0].ID, map[string]string{"bookmark": "★"}); err != nil {
		t.Fatal(err)
	}
	s.WantErr(t, "fs", tooltest.CommitArgs(late, pre), failure.StateChanged)
	if strings.Contains(s.body(t, page), "late") {
		t.Fatal("overwrite of a bookmarked block went through")
	}

	// overwrite:true on a free path creates, guarded by the path's absence.
	_, made := s.strictOK(t, map[string]any{"action": "write", "path": "/W/Fresh", "content": "fresh", "overwrite": true})
	if made["status"] != "committed" || made["created"] != true {
		t.Fatalf("overwrite on a free path: %v", made)
	}
}

func TestFsRm(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	_, ids := s.fsNotebook(t, "R", "/Gone", "/Gone/Kid", "/Drift", "/Family")
	// Index everything, then remove without flushing: SQL still lists the
	// document after the removal, and the readback must not care.
	if err := s.C.FlushTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"action": "rm", "path": "/R/Gone"}
	pre, res := s.strictOK(t, args)
	if pre["preconditionField"] != "expectedStateHash" || res["status"] != "committed" || res["removed"] != true ||
		res["id"] != ids["/Gone"] || res["previousHash"] == res["resultHash"] {
		t.Fatalf("rm: %v / %v", pre, res)
	}
	if s.Exists(t, ids["/Gone"]) || s.Exists(t, ids["/Gone/Kid"]) {
		t.Fatal("the document or its child survived")
	}
	rows, err := s.C.QuerySQL(ctx, fmt.Sprintf("SELECT id FROM blocks WHERE id = '%s'", ids["/Gone"]))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 {
		t.Fatalf("the test needs a stale SQL index (the removed document still indexed), got %d rows", len(rows))
	}
	if rep := s.OK(t, "fs", tooltest.CommitArgs(args, pre)); rep["replayed"] != true || rep["status"] != "committed" {
		t.Fatalf("replay: %v", rep)
	}
	// A missing path is refused at preflight.
	s.WantErr(t, "fs", tooltest.CopyArgs(args, "validateOnly", true), failure.NotFound)

	// Drift between preflight and commit: content, a new child document, the
	// document removed by someone else. Each is state_changed, nothing removed.
	drift := map[string]any{"action": "rm", "path": "/R/Drift"}
	pre = s.OK(t, "fs", tooltest.CopyArgs(drift, "validateOnly", true))
	if _, err := s.C.AppendBlock(ctx, "markdown", "late edit", ids["/Drift"]); err != nil {
		t.Fatal(err)
	}
	s.WantErr(t, "fs", tooltest.CommitArgs(drift, pre), failure.StateChanged)
	family := map[string]any{"action": "rm", "path": "/R/Family"}
	pre = s.OK(t, "fs", tooltest.CopyArgs(family, "validateOnly", true))
	if _, err := s.C.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: s.nbID(t, "R"), Path: "/Family/Newborn", Markdown: "n"}); err != nil {
		t.Fatal(err)
	}
	s.WantErr(t, "fs", tooltest.CommitArgs(family, pre), failure.StateChanged)
	pre = s.OK(t, "fs", tooltest.CopyArgs(drift, "validateOnly", true))
	if err := s.C.RemoveDocByID(ctx, ids["/Drift"]); err != nil {
		t.Fatal(err)
	}
	s.WantErr(t, "fs", tooltest.CommitArgs(drift, pre), failure.StateChanged)
	if !s.Exists(t, ids["/Family"]) {
		t.Fatal("a state_changed rm removed the document")
	}
}

func (s *sfix) nbID(t *testing.T, name string) string {
	t.Helper()
	nbs, err := s.C.ListNotebooks(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nbs {
		if n.Name == name {
			return n.ID
		}
	}
	t.Fatalf("no notebook %s", name)
	return ""
}

// rmFaults sits between the client and the kernel: once a document is
// removed, it answers for the path index as if it were stale, or breaks the
// connection of every existence query.
type rmFaults struct {
	mu      sync.Mutex
	mode    string // "stale" or "netfail"
	removed string
}

func (f *rmFaults) set(mode string) {
	f.mu.Lock()
	f.mode, f.removed = mode, ""
	f.mu.Unlock()
}

func (f *rmFaults) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		mode, removed := f.mode, f.removed
		f.mu.Unlock()
		switch {
		case removed != "" && mode == "stale" && r.URL.Path == "/api/filetree/getIDsByHPath":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"code":0,"msg":"","data":[%q]}`, removed)
			return
		case removed != "" && mode == "netfail" && r.URL.Path == "/api/block/checkBlockExist":
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		case mode != "" && r.URL.Path == "/api/filetree/removeDocByID":
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var req struct{ ID string }
			json.Unmarshal(body, &req)
			h.ServeHTTP(w, r)
			f.mu.Lock()
			f.removed = req.ID
			f.mu.Unlock()
			return
		}
		h.ServeHTTP(w, r)
	})
}

func newRmFaultFixture(t *testing.T) (*sfix, *rmFaults) {
	t.Helper()
	f := &rmFaults{}
	s := &sfix{tooltest.NewHooked(t, testTools)}
	s.Wrap(f.wrap)
	return s, f
}

// TestFsRmReadbackExistenceFirst: a stale path index never turns a done
// removal into a failure; a failed existence query never proves deletion.
func TestFsRmReadbackExistenceFirst(t *testing.T) {
	s, faults := newRmFaultFixture(t)
	_, ids := s.fsNotebook(t, "F", "/Stale", "/Cut")

	faults.set("stale")
	res := s.OK(t, "fs", tooltest.CommitArgs(map[string]any{"action": "rm", "path": "/F/Stale"},
		s.OK(t, "fs", map[string]any{"action": "rm", "path": "/F/Stale", "validateOnly": true})))
	if res["status"] != "committed" {
		t.Fatalf("rm under a stale path index: %v", res)
	}
	if ids, _ := s.C.GetIDsByHPath(context.Background(), s.nbID(t, "F"), "/Stale"); len(ids) != 1 {
		t.Fatal("the test needs the path index to still list the removed document")
	}

	faults.set("netfail")
	args := map[string]any{"action": "rm", "path": "/F/Cut"}
	pre := s.OK(t, "fs", tooltest.CopyArgs(args, "validateOnly", true))
	e := s.WantErr(t, "fs", tooltest.CommitArgs(args, pre), failure.ReadbackMismatch)
	if !*e.WriteAttempted || e.RequestID != pre["requestId"] {
		t.Fatalf("a failed existence query must leave the outcome unknown: %+v", e)
	}
	faults.set("")
	if s.Exists(t, ids["/Cut"]) {
		t.Fatal("the removal did happen; only its proof failed")
	}
	// The request is never executed again; it stays unknown.
	s.WantErr(t, "fs", tooltest.CommitArgs(args, pre), failure.OutcomeUnknown)
}

func TestFsMv(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	nb, ids := s.fsNotebook(t, "M", "/Doc", "/Doc/Kid", "/Folder", "/Taken")
	other, _ := s.fsNotebook(t, "M2")

	// Move and rename in one call.
	args := map[string]any{"action": "mv", "from": "/M/Doc", "to": "/M/Folder/Renamed"}
	pre, res := s.strictOK(t, args)
	if pre["preconditionField"] != "expectedStructureHash" || pre["targetCount"].(float64) != 2 ||
		res["status"] != "committed" || res["moved"] != true || res["renamed"] != true || res["id"] != ids["/Doc"] {
		t.Fatalf("mv: %v / %v", pre, res)
	}
	if got, _ := s.C.GetIDsByHPath(ctx, nb, "/Folder/Renamed"); len(got) != 1 || got[0] != ids["/Doc"] {
		t.Fatalf("not at the destination: %v", got)
	}
	if got, _ := s.C.GetIDsByHPath(ctx, nb, "/Folder/Renamed/Kid"); len(got) != 1 {
		t.Fatal("the child did not move along")
	}
	if rep := s.OK(t, "fs", tooltest.CommitArgs(args, pre)); rep["replayed"] != true {
		t.Fatalf("replay: %v", rep)
	}
	// Rename only, then a move across notebooks to its root.
	_, res = s.strictOK(t, map[string]any{"action": "mv", "from": "/M/Folder/Renamed", "to": "/M/Folder/Again"})
	if res["moved"] != false || res["renamed"] != true {
		t.Fatalf("rename: %v", res)
	}
	_, res = s.strictOK(t, map[string]any{"action": "mv", "from": "/M/Folder/Again", "to": "/M2/Again"})
	if res["moved"] != true || res["renamed"] != false {
		t.Fatalf("cross-notebook move: %v", res)
	}
	if got, _ := s.C.GetIDsByHPath(ctx, other, "/Again"); len(got) != 1 || got[0] != ids["/Doc"] {
		t.Fatal("not in the other notebook")
	}

	// Refusals at preflight.
	for _, tt := range []struct {
		from, to string
		code     failure.Code
	}{
		{"/M/Folder", "/M/Taken", failure.InvalidArguments},         // destination exists
		{"/M/Folder", "/M/Folder/Inside", failure.InvalidArguments}, // under itself
		{"/M/Folder", "/M/Folder", failure.InvalidArguments},        // same path
		{"/M/Nothing", "/M/Else", failure.NotFound},                 // no source
		{"/M/Folder", "/M/No parent/X", failure.NotFound},           // no destination parent
		{"/M", "/M2/X", failure.InvalidArguments},                   // a notebook is not a document
		{"/M/Folder", "/Nowhere/X", failure.NotFound},               // no such notebook
	} {
		s.WantErr(t, "fs", map[string]any{"action": "mv", "from": tt.from, "to": tt.to, "validateOnly": true}, tt.code)
	}

	// Drift: the destination appears after preflight → state_changed, nothing moved.
	drift := map[string]any{"action": "mv", "from": "/M/Folder", "to": "/M/Later"}
	pre = s.OK(t, "fs", tooltest.CopyArgs(drift, "validateOnly", true))
	if _, err := s.C.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: nb, Path: "/Later", Markdown: "x"}); err != nil {
		t.Fatal(err)
	}
	s.WantErr(t, "fs", tooltest.CommitArgs(drift, pre), failure.StateChanged)
	if got, _ := s.C.GetIDsByHPath(ctx, nb, "/Folder"); len(got) != 1 {
		t.Fatal("a state_changed mv moved the document")
	}
}

func TestFsReorder(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	nb, ids := s.fsNotebook(t, "O", "/A", "/B", "/C", "/P", "/P/x", "/P/y")
	conf, _ := s.C.GetNotebookConf(ctx, nb)
	if conf.Conf.SortMode == sortCustom {
		t.Fatal("the test needs a notebook not yet in custom sort")
	}
	order := []any{"/O/C", "/O/A", "/O/P", "/O/B"}
	args := map[string]any{"action": "reorder", "path": "/O", "orderedPaths": order}
	pre, res := s.strictOK(t, args)
	if pre["preconditionField"] != "expectedStructureHash" || pre["targetCount"].(float64) != 5 ||
		res["status"] != "committed" || res["reordered"].(float64) != 4 || res["sortModeSet"] != true {
		t.Fatalf("reorder: %v / %v", pre, res)
	}
	if got := names(t, s.OK(t, "fs", map[string]any{"action": "ls", "path": "/O"})); strings.Join(got, ",") != "C,A,P,B" {
		t.Fatalf("ls after reorder: %v", got)
	}
	if conf, _ := s.C.GetNotebookConf(ctx, nb); conf.Conf.SortMode != sortCustom {
		t.Fatalf("sort mode %d", conf.Conf.SortMode)
	}
	if rep := s.OK(t, "fs", tooltest.CommitArgs(args, pre)); rep["replayed"] != true {
		t.Fatalf("replay: %v", rep)
	}
	// The same order again changes nothing.
	if _, same := s.strictOK(t, args); same["status"] != "no_change" {
		t.Fatalf("same order: %v", same)
	}
	// Children of a document.
	_, res = s.strictOK(t, map[string]any{"action": "reorder", "path": "/O/P", "orderedPaths": []any{"/O/P/y", "/O/P/x"}})
	if res["status"] != "committed" || res["sortModeSet"] != false {
		t.Fatalf("reorder under a document: %v", res)
	}
	if got := names(t, s.OK(t, "fs", map[string]any{"action": "ls", "path": "/O/P"})); strings.Join(got, ",") != "y,x" {
		t.Fatalf("ls /O/P: %v", got)
	}

	// Invalid permutations are refused at preflight.
	for _, bad := range [][]any{
		{"/O/C", "/O/A", "/O/P"},                 // missing one
		{"/O/C", "/O/A", "/O/P", "/O/B", "/O/B"}, // duplicate
		{"/O/C", "/O/A", "/O/P", "/O/Z"},         // unexpected
		{"/O/C", "/O/A", "/O/P", "/O/P/x"},       // not a direct child
		{"/O/C", "/O/A", "/O/P", "O/B"},          // not a path
		{},                                       // empty
	} {
		s.WantErr(t, "fs", map[string]any{"action": "reorder", "path": "/O", "orderedPaths": bad, "validateOnly": true}, failure.InvalidArguments)
	}
	s.WantErr(t, "fs", map[string]any{"action": "reorder", "path": "/O/A", "orderedPaths": []any{}, "validateOnly": true}, failure.InvalidArguments)
	s.WantErr(t, "fs", map[string]any{"action": "reorder", "path": "/", "orderedPaths": []any{"/O"}, "validateOnly": true}, failure.InvalidArguments)

	// Drift: a concurrent reorder, a concurrent create. state_changed, order untouched.
	next := map[string]any{"action": "reorder", "path": "/O", "orderedPaths": []any{"/O/A", "/O/B", "/O/C", "/O/P"}}
	pre = s.OK(t, "fs", tooltest.CopyArgs(next, "validateOnly", true))
	if err := s.C.ChangeSort(ctx, nb, []string{"/" + ids["/B"] + ".sy", "/" + ids["/A"] + ".sy", "/" + ids["/C"] + ".sy", "/" + ids["/P"] + ".sy"}); err != nil {
		t.Fatal(err)
	}
	s.WantErr(t, "fs", tooltest.CommitArgs(next, pre), failure.StateChanged)
	pre = s.OK(t, "fs", tooltest.CopyArgs(next, "validateOnly", true))
	if _, err := s.C.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: nb, Path: "/D", Markdown: "d"}); err != nil {
		t.Fatal(err)
	}
	s.WantErr(t, "fs", tooltest.CommitArgs(next, pre), failure.StateChanged)
	if got := names(t, s.OK(t, "fs", map[string]any{"action": "ls", "path": "/O"})); strings.Join(got, ",") != "B,A,C,P,D" {
		t.Fatalf("a state_changed reorder changed the order: %v", got)
	}
	// Two children with one title cannot be ordered by path.
	if _, err := s.C.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: nb, Path: "/D", Markdown: "twin"}); err != nil {
		t.Fatal(err)
	}
	s.WantErr(t, "fs", map[string]any{"action": "reorder", "path": "/O", "orderedPaths": []any{"/O/A", "/O/B", "/O/C", "/O/P", "/O/D", "/O/D"}, "validateOnly": true}, failure.AmbiguousPath)
}

func TestFsSchemaAndClasses(t *testing.T) {
	s := newStrictFixture(t, false)
	tool, ok := s.R.Tool("fs")
	if !ok {
		t.Fatal("fs is not registered")
	}
	props := tooltest.Schema(t, s.R, "fs")["properties"].(map[string]any)
	state := props["expectedStateHash"].(map[string]any)["description"].(string)
	structure := props["expectedStructureHash"].(map[string]any)["description"].(string)
	if !strings.Contains(state, "write") || !strings.Contains(state, "rm") || strings.Contains(state, "mv") ||
		!strings.Contains(structure, "mv") || !strings.Contains(structure, "reorder") {
		t.Fatalf("precondition fields: state %q, structure %q", state, structure)
	}
	if a := tool.Annotations(tools.View{Policy: tools.Unrestricted()}); !a.Destructive || a.ReadOnly {
		t.Fatal("fs removes documents")
	}
	for overwrite, want := range map[bool]strict.WritePolicy{
		false: {Class: strict.Additive},
		true:  {Class: strict.Mutation, Precondition: strict.ExpectedStateHash},
	} {
		got := write.PolicyFor(writeArgs{Overwrite: overwrite})
		if got != want || got.Validate() != nil {
			t.Errorf("write overwrite=%v: policy %+v", overwrite, got)
		}
	}
	if got := write.PolicyFor(writeArgs{}); got.Class != strict.Additive {
		t.Errorf("write without overwrite must be additive, got %v", got.Class)
	}
}

func TestFsStripTitle(t *testing.T) {
	for in, want := range map[string]string{
		"# T\n\nbody":       "body",
		"\n\n#   T  \nbody": "body",
		"# T #\nbody":       "body",
		"# Other\n\nbody":   "# Other\n\nbody",
		"## T\nbody":        "## T\nbody",
		"body\n# T":         "body\n# T",
		"# T":               "",
		"":                  "",
	} {
		if got := stripTitle(in, "T"); got != want {
			t.Errorf("stripTitle(%q) = %q, want %q", in, got, want)
		}
	}
}

func testTools() []*tools.Tool { return []*tools.Tool{Tool()} }

// sfix is a strict fixture with this package's helpers.
type sfix struct{ *tooltest.Fixture }

func newStrictFixture(t *testing.T, strictOff bool) *sfix {
	return &sfix{tooltest.NewStrict(t, strictOff, testTools)}
}

// TestDotSegmentsRefused: a path with . or .. segments is refused, never
// turned into documents titled so (issue 9).
func TestDotSegmentsRefused(t *testing.T) {
	s := newStrictFixture(t, false)
	for _, p := range []string{"/Strict/../../../tmp/pwned", "/Strict/./x", "/..", "/Strict/a/.."} {
		e := s.WantErr(t, "fs", map[string]any{"action": "write", "path": p, "content": "x", "validateOnly": true}, failure.InvalidArguments)
		if !strings.Contains(e.Message, "no . or ..") {
			t.Errorf("%s: %s", p, e.Message)
		}
	}
	if ids, _ := s.C.GetIDsByHPath(context.Background(), s.NB, "/.."); len(ids) != 0 {
		t.Fatal("a document titled .. was created")
	}
}

// TestActionAliases: upstream's action names (kebab-case, ls/list,
// mv/move, rm/remove/delete/del) run the action they stand for, bind
// their request under its own name (a preflight by one name commits by
// the other) and show in help; a name that stands for nothing is unknown.
func TestActionAliases(t *testing.T) {
	s := newStrictFixture(t, false)
	nb, ids := s.fsNotebook(t, "Al", "/Doc")
	if got := names(t, s.OK(t, "fs", map[string]any{"action": "list", "path": "/Al"})); len(got) != 1 || got[0] != "Doc" {
		t.Fatalf("list as ls: %v", got)
	}
	args := map[string]any{"action": "move", "from": "/Al/Doc", "to": "/Al/Moved"}
	pre := s.OK(t, "fs", tooltest.CopyArgs(args, "validateOnly", true))
	res := s.OK(t, "fs", tooltest.CommitArgs(tooltest.CopyArgs(args, "action", "mv"), pre))
	if res["status"] != "committed" || res["id"] != ids["/Doc"] {
		t.Fatalf("move committed as mv: %v", res)
	}
	if got, _ := s.C.GetIDsByHPath(context.Background(), nb, "/Moved"); len(got) != 1 {
		t.Fatal("not moved")
	}
	if h := s.OK(t, "fs", map[string]any{"action": "help", "topic": "move"}); h["action"] != "mv" {
		t.Fatalf("help topic move: %v", h)
	}
	s.WantErr(t, "fs", map[string]any{"action": "copy", "from": "/Al/Moved", "to": "/Al/X"}, failure.UnknownAction)
}
