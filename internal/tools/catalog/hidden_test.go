package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// hiddenFixture is a strict fixture with a second notebook, Vault, whose
// document holds three blocks; hide makes Vault none.
type hiddenFixture struct {
	*tooltest.Fixture
	vault  string
	blocks []string
}

func newHiddenFixture(t *testing.T) *hiddenFixture {
	s := &hiddenFixture{Fixture: tooltest.NewStrict(t, false, testTools)}
	nb, err := s.C.CreateNotebook(context.Background(), "Vault")
	if err != nil {
		t.Fatal(err)
	}
	s.vault = nb.ID
	doc := s.MkDoc(t, nb.ID, "/Secret", "vault one\n\nvault two\n\nvault three\n")
	s.blocks = s.Kids(t, doc)
	s.show()
	return s
}

func (s *hiddenFixture) show() {
	s.Policy = &tools.Policy{Default: tools.LevelDelete, AllActions: true, Strict: true, Version: "shown"}
}

func (s *hiddenFixture) hide() {
	s.Policy = &tools.Policy{Default: tools.LevelDelete, Notebooks: map[string]tools.Level{s.vault: tools.LevelNone}, AllActions: true, Strict: true, Version: "hidden"}
}

// TestHiddenAtCommitAndReplay: a block hidden between a preflight and its
// commit answers what a block removed in between answers; a committed
// write replayed after its block was hidden answers what it answers after
// its block was removed: the ledger's receipt, written once.
func TestHiddenAtCommitAndReplay(t *testing.T) {
	s := newHiddenFixture(t)
	removed := func(id string) {
		t.Helper()
		s.show()
		del := map[string]any{"action": "delete", "id": id}
		s.Commit(t, "block", del, s.Preflight(t, "block", del, "expectedStateHash", 1))
	}
	answer := func(args map[string]any) string {
		t.Helper()
		res, e := s.Call(t, "block", args)
		var v any = res
		if e != nil {
			v = e.Result()
		}
		b, _ := json.Marshal(v)
		return string(b)
	}

	// Preflighted while visible, committed once hidden or removed.
	hidden, gone := s.blocks[0], s.Blocks[0]
	updH := map[string]any{"action": "update", "id": hidden, "data": "changed"}
	updG := map[string]any{"action": "update", "id": gone, "data": "changed"}
	preH := s.Preflight(t, "block", updH, "expectedStateHash", 1)
	preG := s.Preflight(t, "block", updG, "expectedStateHash", 1)
	removed(gone)
	s.hide()
	h, g := answer(tooltest.CommitArgs(updH, preH)), answer(tooltest.CommitArgs(updG, preG))
	if strings.ReplaceAll(g, gone, hidden) != h || !strings.Contains(h, `"not_found"`) {
		t.Fatalf("a commit of a block hidden since answers\n  %s\nof one removed since\n  %s", h, g)
	}

	// Committed while visible, replayed once hidden or removed.
	hidden, gone = s.blocks[1], s.Blocks[1]
	s.show()
	updH = map[string]any{"action": "update", "id": hidden, "data": "changed"}
	updG = map[string]any{"action": "update", "id": gone, "data": "changed"}
	resH := s.Commit(t, "block", updH, s.Preflight(t, "block", updH, "expectedStateHash", 1))
	resG := s.Commit(t, "block", updG, s.Preflight(t, "block", updG, "expectedStateHash", 1))
	removed(gone)
	s.hide()
	for _, c := range []struct {
		args, res map[string]any
	}{{updH, resH}, {updG, resG}} {
		rep := s.OK(t, "block", map[string]any{"action": "update", "id": c.args["id"], "data": "changed",
			"requestId": c.res["requestId"], "expectedStateHash": "0000"})
		if rep["replayed"] != true || rep["status"] != c.res["status"] || rep["requestId"] != c.res["requestId"] {
			t.Errorf("a replay after the block went: %v (committed %v)", rep, c.res)
		}
	}
	if strings.Contains(s.Text(t, s.Doc), "changed\n\nchanged") {
		t.Fatal("a replay wrote again")
	}
}

// TestReferencesReadTheirTarget: a write or a render whose text references
// a block reads that block: while a notebook is hidden, a reference to
// one of its blocks is refused exactly as a reference to a block that
// does not exist (SiYuan would fill the reference's anchor with the hidden
// block's text), in every form SiYuan reads a reference in: ((id)), a
// block-ref span of block DOM (any quoting, character references), and
// JSON escapes of either. Without a hidden notebook nothing is looked up:
// a reference to a missing block is the kernel's business. The policy is
// production's: read by default, the agent's own notebook writable.
func TestReferencesReadTheirTarget(t *testing.T) {
	s := newHiddenFixture(t)
	policy := func(hide bool) *tools.Policy {
		nbs := map[string]tools.Level{s.NB: tools.LevelDelete}
		if hide {
			nbs[s.vault] = tools.LevelNone
		}
		return &tools.Policy{Default: tools.LevelRead, Notebooks: nbs, AllActions: true, Strict: true, Version: fmt.Sprint(hide)}
	}
	s.Policy = policy(true)
	hid := s.blocks[0]
	span := func(attrs string) string {
		return `<div data-type="NodeParagraph" class="p"><div contenteditable="true">see <span ` + attrs + `>x</span></div></div>`
	}
	entities := ""
	for _, c := range hid {
		entities += fmt.Sprintf("&#%d;", c)
	}
	for _, args := range []map[string]any{
		{"action": "append", "parentID": s.Doc, "data": "see ((" + hid + "))", "validateOnly": true},
		{"action": "append", "parentID": s.Doc, "data": "see ((" + hid + " 'anchor'))", "validateOnly": true},
		{"action": "update", "id": s.Blocks[0], "data": "see ((" + hid + " \"static\"))", "validateOnly": true},
		{"action": "append", "parentID": s.Doc, "dataType": "dom", "data": span(`data-type="block-ref" data-subtype="d" data-id="` + hid + `"`), "validateOnly": true},
		{"action": "append", "parentID": s.Doc, "dataType": "dom", "data": span(`data-type='block-ref' data-subtype=d data-id=` + hid), "validateOnly": true},
		{"action": "append", "parentID": s.Doc, "dataType": "dom", "data": span(`DATA-TYPE="&#98;lock-ref" data-id="` + entities + `"`), "validateOnly": true},
		{"action": "update", "id": s.Blocks[0], "dataType": "dom", "data": span(`data-type="block-ref" data-id="` + hid[:4] + `<wbr>` + hid[4:] + `"`), "validateOnly": true},
		{"action": "append", "parentID": s.Doc, "data": `see <span data-type="block-ref" data-subtype="d" data-id="` + hid + `">x</span>`, "validateOnly": true},
	} {
		s.WantMissing(t, "block", args, map[string]string{hid: tooltest.NewID()})
	}
	// JSON escapes hide nothing: \u0028\u0028 is ((, and a key sent twice
	// is read in both members.
	ctx := tools.WithPolicy(t.Context(), s.Policy)
	for _, raw := range []string{
		`{"action":"append","parentID":"` + s.Doc + `","data":"see \u0028\u0028` + hid + `))","validateOnly":true}`,
		`{"action":"append","parentID":"` + s.Doc + `","dataType":"dom","data":"<span data-type=\"block\u002dref\" data\u002did=\"` + hid + `\">x</span>","validateOnly":true}`,
		`{"action":"append","parentID":"` + s.Doc + `","data":"see ((` + hid + `))","data":"harmless","validateOnly":true}`,
	} {
		_, err := s.R.Call(ctx, "block", json.RawMessage(raw))
		var e *failure.Error
		if !errors.As(err, &e) || e.Code != failure.NotFound || !strings.Contains(e.Message, hid) {
			t.Errorf("%s: got %v, want not_found for %s", raw, err, hid)
		}
	}
	// A reference to a visible block is fine, in every form.
	s.OK(t, "block", map[string]any{"action": "append", "parentID": s.Doc, "data": "see ((" + s.Blocks[1] + "))", "validateOnly": true})
	s.OK(t, "block", map[string]any{"action": "append", "parentID": s.Doc, "dataType": "dom", "data": span(`data-type="block-ref" data-id="` + s.Blocks[1] + `"`), "validateOnly": true})
	// Without a hidden notebook, a reference to a missing block is the
	// kernel's business, as before: no lookup refuses it.
	s.Policy = policy(false)
	s.OK(t, "block", map[string]any{"action": "append", "parentID": s.Doc, "data": "see ((" + tooltest.NewID() + "))", "validateOnly": true})
	s.OK(t, "block", map[string]any{"action": "append", "parentID": s.Doc, "dataType": "dom", "data": span(`data-type="block-ref" data-id="` + tooltest.NewID() + `"`), "validateOnly": true})
}

// TestHiddenNamesAndCounts: names, labels and counts answer for a hidden
// notebook what they answer for one that does not exist.
func TestHiddenNamesAndCounts(t *testing.T) {
	s := newHiddenFixture(t)
	s.MkDoc(t, s.vault, "/Tagged", "#vaulttag# text")
	s.hide()
	subst := map[string]string{"Vault": "Nowhere", "vaulttag": "nosuchtag"}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"fs", map[string]any{"action": "ls", "path": "/Vault"}},
		{"fs", map[string]any{"action": "read", "path": "/Vault/Secret"}},
		{"fs", map[string]any{"action": "write", "path": "/Vault/New", "content": "x", "validateOnly": true}},
		{"tag", map[string]any{"action": "rename", "oldLabel": "vaulttag", "newLabel": "x", "validateOnly": true}},
		{"tag", map[string]any{"action": "remove", "label": "vaulttag", "validateOnly": true}},
	} {
		hidden, missing := s.AsMissing(t, c.tool, c.args, subst)
		if hidden != missing {
			t.Errorf("%s %v answers\n  %s\nfor a name nothing has\n  %s", c.tool, c.args["action"], hidden, missing)
		}
		if strings.Contains(hidden, s.vault) {
			t.Errorf("%s %v names the hidden notebook: %s", c.tool, c.args["action"], hidden)
		}
	}
	tags, _ := json.Marshal(s.OK(t, "tag", map[string]any{"action": "list"}))
	if strings.Contains(string(tags), "vaulttag") {
		t.Fatalf("tag list shows a hidden notebook's tag: %v", tags)
	}
	for _, n := range s.OK(t, "fs", map[string]any{"action": "ls", "path": "/"})["data"].([]any) {
		if slices.Contains([]string{"Vault", s.vault}, n.(map[string]any)["name"].(string)) {
			t.Fatalf("ls / lists the hidden notebook: %v", n)
		}
	}
	e := s.WantErr(t, "tag", map[string]any{"action": "rename", "oldLabel": "vaulttag", "newLabel": "x", "validateOnly": true}, failure.PermissionDenied)
	if e.Details["notebook"] != nil || !strings.Contains(e.Message, "hidden") {
		t.Fatalf("tag.rename refusal while hidden: %+v", e)
	}
}

// TestHiddenReferenceCounts: the counts of references SiYuan gives (a
// candidate's refCount, a document's refcount marks, docs_info's) count
// only references from notebooks the call may see, and docs_info's
// databases leave out one shown only in a hidden notebook.
func TestHiddenReferenceCounts(t *testing.T) {
	s := newHiddenFixture(t)
	ctx := context.Background()
	target := s.Blocks[0] // "paragraph 0"
	s.MkDoc(t, s.NB, "/Referrer", "see (("+target+" \"it\")) in (("+s.Doc+" \"doc\"))")
	hdoc := s.MkDoc(t, s.vault, "/Referrer", "also (("+target+" \"it\")) and (("+target+" \"again\")) in (("+s.Doc+" \"doc\"))")
	db := s.MkDatabase(t, hdoc)
	if err := s.C.AddAttributeViewBlocks(ctx, siyuan.AddAVBlocksRequest{AvID: db.AV, BlockID: db.Block, Srcs: []siyuan.AVSrc{{ItemID: tooltest.NewID(), ID: s.Doc}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.C.FlushTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	s.hide()
	html := s.OK(t, "document", map[string]any{"action": "get_doc", "id": s.Doc, "mode": "html"})["html"].(string)
	if !strings.Contains(html, `refcount="1"`) || !strings.Contains(html, `protyle-attr--refcount popover__block">1<`) || strings.Contains(html, `refcount="2"`) || strings.Contains(html, `popover__block">2<`) {
		t.Fatalf("the document's refcount marks count hidden references: %s", html)
	}
	info := s.OK(t, "block", map[string]any{"action": "docs_info", "id": s.Doc, "refCount": true, "av": true})
	doc := info["documents"].([]any)[0].(map[string]any)
	if doc["refCount"] != float64(1) || len(doc["attrViews"].([]any)) != 0 {
		t.Fatalf("docs_info: %v", doc)
	}
	// The document info SiYuan gives (lookup's docInfo) loses the same.
	di := siyuan.DocInfo{RefCount: 2, RefIDs: []string{s.Blocks[1], s.Kids(t, hdoc)[0]}, AttrViews: []siyuan.AttrView{{ID: db.AV, Name: "Secret"}}}
	if err := tools.VeilDocInfo(tools.WithPolicy(ctx, s.Policy), s.R.Env(), &di); err != nil || di.RefCount != 1 || len(di.AttrViews) != 0 {
		t.Fatalf("veiled doc info: %+v %v", di, err)
	}
	// A storage path in a visible notebook naming a hidden document is a
	// path no document has.
	hpath := s.Where(t, hdoc).Path
	s.WantMissing(t, "document", map[string]any{"action": "lookup", "notebook": s.NB, "path": hpath}, map[string]string{hdoc: tooltest.NewID()})
	refs := s.OK(t, "search", map[string]any{"action": "search_refs", "id": s.Blocks[5], "k": "paragraph 0"})
	found := false
	for _, c := range refs["blocks"].([]any) {
		if m := c.(map[string]any); m["id"] == target {
			found = true
			if m["refCount"] != float64(1) {
				t.Fatalf("a candidate's refCount counts hidden references: %v", m)
			}
		}
	}
	if !found {
		t.Fatalf("the referenced block is not a candidate: %v", refs)
	}
}

// TestCountsReadOnlyVisibleNotebooks: the counts the project works out
// itself over SiYuan's index while a notebook is hidden (reference counts
// in get_doc's HTML, docs_info and search_refs; tag counts) ask the index
// only about the visible notebooks, so that no row of a hidden one fills
// a statement's LIMIT or moves a count, and the counts are right.
func TestCountsReadOnlyVisibleNotebooks(t *testing.T) {
	s := newHiddenFixture(t)
	target := s.Blocks[0]
	s.MkDoc(t, s.NB, "/Referrer", "see (("+target+" \"it\")) #seen# #both#")
	s.MkDoc(t, s.vault, "/Referrer", strings.Repeat("(("+target+" \"it\")) #both# #vaultonly#\n\n", 5))
	if err := s.C.FlushTransaction(context.Background()); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var stmts []string
	s.SetHook(func(_ http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/api/query/sql" {
			var body struct{ Stmt string }
			raw, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(raw))
			json.Unmarshal(raw, &body)
			mu.Lock()
			stmts = append(stmts, body.Stmt)
			mu.Unlock()
		}
		return false
	})
	s.hide()
	html := s.OK(t, "document", map[string]any{"action": "get_doc", "id": s.Doc, "mode": "html"})["html"].(string)
	if !strings.Contains(html, `refcount="1"`) || strings.Contains(html, `refcount="6"`) {
		t.Fatalf("refcount marks: %s", html)
	}
	tags := s.OK(t, "tag", map[string]any{"action": "list"})
	if b, _ := json.Marshal(tags); strings.Contains(string(b), "vaultonly") ||
		!strings.Contains(string(b), `{"children":null,"count":1,"depth":0,"label":"both","name":"both","type":"tag"}`) {
		t.Fatalf("tags: %s", b)
	}
	mu.Lock()
	defer mu.Unlock()
	counted := 0
	for _, st := range stmts {
		if !strings.Contains(st, "FROM refs") && !strings.Contains(st, "FROM spans") {
			continue
		}
		counted++
		if in := st[strings.Index(st, " box IN (")+1:]; !strings.HasPrefix(in, "box IN (") || !strings.Contains(in, s.NB) || strings.Contains(st, s.vault) {
			t.Errorf("a count is not limited to the visible notebooks: %s", st)
		}
	}
	if counted < 2 {
		t.Fatalf("no count asked the index: %q", stmts)
	}
}

// TestCheckLetsAReplayAsk: before a person is asked to confirm a dangerous
// call, the gate runs without the action; a commit (requestId, no
// validateOnly) of something gone or hidden is let through to be asked
// (the ledger may answer it as a replay), a preflight of it is refused.
func TestCheckLetsAReplayAsk(t *testing.T) {
	s := newHiddenFixture(t)
	s.hide()
	raw := func(m map[string]any) tools.Input { b, _ := json.Marshal(m); return tools.Input{Raw: b} }
	ctx := tools.WithPolicy(context.Background(), s.Policy)
	del := map[string]any{"action": "delete", "id": s.blocks[0]}
	if err := s.R.Check(ctx, "block", raw(tooltest.CopyArgs(del, "validateOnly", true))); err == nil || err.(*failure.Error).Code != failure.NotFound {
		t.Fatalf("the preflight of a hidden block's delete: %v", err)
	}
	if err := s.R.Check(ctx, "block", raw(tooltest.CopyArgs(del, "requestId", "abcd", "expectedStateHash", "abcd"))); err != nil {
		t.Fatalf("a commit of a hidden block's delete is refused before it can be asked about: %v", err)
	}
}
