package tools

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/embedded"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
)

// hook intercepts kernel requests in a test: returning true means it
// answered the request itself.
type hook func(w http.ResponseWriter, r *http.Request) bool

// newHookedFixture is newStrictFixture with a hook in front of the kernel.
func newHookedFixture(t *testing.T, h *atomic.Pointer[hook]) *sfix {
	t.Helper()
	ctx := context.Background()
	k, err := embedded.Open(ctx, embedded.Options{Dir: t.TempDir(), Token: "t", SQLFlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	inner := k.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f := h.Load(); f != nil && (*f)(w, r) {
			return
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { srv.Close(); k.Close() })
	c, _ := siyuan.New(siyuan.Config{BaseURL: srv.URL, Token: "t", ReadBackoff: time.Millisecond})
	nb, err := c.CreateNotebook(ctx, "Hooked")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := c.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: nb.ID, Path: "/Doc", Markdown: "one\n\ntwo\n"})
	if err != nil {
		t.Fatal(err)
	}
	s := &sfix{fixture: &fixture{c: c, nb: nb.ID, doc: doc}, k: k, ledger: filepath.Join(t.TempDir(), "ledger.db")}
	s.reopen(t, false)
	return s
}

// preflight runs the validateOnly call and checks the answer's shape:
// field is the precondition field ("" for additive actions).
func (s *sfix) preflight(t *testing.T, tool string, args map[string]any, field string, targets int) map[string]any {
	t.Helper()
	pre := s.ok(t, tool, copyArgs(args, "validateOnly", true))
	id, _ := pre["requestId"].(string)
	if pre["validateOnly"] != true || pre["writeAttempted"] != false || len(id) < 4 || pre["requestIdExpiresAt"] == nil ||
		pre["leaseExpiresAt"] == nil || pre["targetCount"] != float64(targets) {
		t.Fatalf("%s.%s preflight: %v", tool, args["action"], pre)
	}
	if field == "" {
		if _, ok := pre["preconditionField"]; ok {
			t.Fatalf("%s.%s is additive but its preflight names a precondition: %v", tool, args["action"], pre)
		}
		return pre
	}
	cred, _ := pre[field].(string)
	if pre["preconditionField"] != field || len(cred) < 4 || pre["hashPrefixLength"] != float64(len(cred)) {
		t.Fatalf("%s.%s preflight: want %s, got %v", tool, args["action"], field, pre)
	}
	return pre
}

// commit runs the real call for a preflight and checks it committed.
func (s *sfix) commit(t *testing.T, tool string, args, pre map[string]any) map[string]any {
	t.Helper()
	res := s.ok(t, tool, commitArgs(args, pre))
	if res["status"] != "committed" || res["replayed"] != false || res["writeAttempted"] != true || res["writeSafetyGuaranteed"] != true ||
		res["requestId"] != pre["requestId"] || res["resultHash"] == nil || res["targetCount"] != pre["targetCount"] {
		t.Fatalf("%s.%s commit: %v", tool, args["action"], res)
	}
	if _, guarded := pre["preconditionField"]; guarded && (res["previousHash"] == nil || res["previousHash"] == res["resultHash"]) {
		t.Fatalf("%s.%s commit hashes: %v", tool, args["action"], res)
	}
	return res
}

// replay repeats the commit and checks it replays without executing.
func (s *sfix) replay(t *testing.T, tool string, args, pre, res map[string]any) map[string]any {
	t.Helper()
	rep := s.ok(t, tool, commitArgs(args, pre))
	if rep["replayed"] != true || rep["writeAttempted"] != false || rep["status"] != res["status"] || rep["resultHash"] != res["resultHash"] {
		t.Fatalf("%s.%s replay: %v", tool, args["action"], rep)
	}
	return rep
}

// drifted commits after drift and checks state_changed with nothing written.
func (s *sfix) drifted(t *testing.T, tool string, args, pre map[string]any, drift func()) {
	t.Helper()
	drift()
	e := s.wantErr(t, tool, commitArgs(args, pre), strict.CodeStateChanged)
	field, _ := pre["preconditionField"].(string)
	if e.ExpectedHash != pre[field] || e.CurrentHash == "" || e.CurrentHash == e.ExpectedHash || *e.WriteAttempted {
		t.Fatalf("state_changed details: %+v", e)
	}
}

// invalidAt checks a call is refused as invalid_arguments without a write:
// at preflight for guarded actions, at commit for additive ones.
func (s *sfix) invalidAt(t *testing.T, tool string, args map[string]any, atCommit bool) *Error {
	t.Helper()
	if !atCommit {
		e := s.wantErr(t, tool, copyArgs(args, "validateOnly", true), CodeInvalidArguments)
		if e.WriteAttempted == nil || *e.WriteAttempted {
			t.Fatalf("invalid preflight: writeAttempted %v", e.WriteAttempted)
		}
		return e
	}
	pre := s.ok(t, tool, copyArgs(args, "validateOnly", true))
	e := s.wantErr(t, tool, commitArgs(args, pre), CodeInvalidArguments)
	if e.WriteAttempted == nil || *e.WriteAttempted || e.RequestID != pre["requestId"] {
		t.Fatalf("invalid commit: %+v", e)
	}
	return e
}

func (s *sfix) notebook(t *testing.T, id string) (siyuan.Notebook, bool) {
	t.Helper()
	nbs, err := s.c.ListNotebooks(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nbs {
		if n.ID == id {
			return n, true
		}
	}
	return siyuan.Notebook{}, false
}

func TestNotebookCreate(t *testing.T) {
	s := newStrictFixture(t, false)
	args := map[string]any{"action": "create", "name": "  Fresh\tbook ", "icon": "1f4d4"}
	pre := s.preflight(t, "notebook", args, "", 0)
	s.wantErr(t, "notebook", args, strict.CodePreconditionRequired)
	res := s.commit(t, "notebook", args, pre)
	id, _ := res["notebook"].(string)
	nb, ok := s.notebook(t, id)
	if !ok || nb.Name != "Freshbook" || nb.Icon != "1f4d4" {
		t.Fatalf("created notebook: %+v %v", nb, ok)
	}
	rep := s.replay(t, "notebook", args, pre, res)
	if rep["notebook"] != id {
		t.Fatalf("replay answered another notebook: %v", rep)
	}
	nbs, _ := s.c.ListNotebooks(context.Background())
	n := 0
	for _, x := range nbs {
		if x.Name == "Freshbook" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d notebooks created", n)
	}
	s.invalidAt(t, "notebook", map[string]any{"action": "create", "name": " / "}, true)
	// A lost reply leaves the outcome unknown, for good.
	s.k.Faults().Set(embedded.Fault{Endpoint: "/api/notebook/createNotebook", Kind: embedded.DropAfterApply})
	lost := map[string]any{"action": "create", "name": "Lost"}
	pre = s.ok(t, "notebook", copyArgs(lost, "validateOnly", true))
	s.wantErr(t, "notebook", commitArgs(lost, pre), strict.CodeOutcomeUnknown)
	s.k.Faults().Clear()
	s.wantErr(t, "notebook", commitArgs(lost, pre), strict.CodeOutcomeUnknown)
}

func TestNotebookRename(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	args := map[string]any{"action": "rename", "notebook": s.nb, "name": " Renamed "}
	pre := s.preflight(t, "notebook", args, "expectedStateHash", 1)
	if nb, _ := s.notebook(t, s.nb); nb.Name != "Strict" {
		t.Fatal("preflight wrote")
	}
	res := s.commit(t, "notebook", args, pre)
	if nb, _ := s.notebook(t, s.nb); nb.Name != "Renamed" || res["notebook"] != s.nb {
		t.Fatalf("rename: %+v %v", nb, res)
	}
	if err := s.c.RenameNotebook(ctx, s.nb, "Someone else"); err != nil {
		t.Fatal(err)
	}
	s.replay(t, "notebook", args, pre, res)
	if nb, _ := s.notebook(t, s.nb); nb.Name != "Someone else" {
		t.Fatal("a replay renamed again")
	}
	// Drift after preflight: the conf changed.
	again := map[string]any{"action": "rename", "notebook": s.nb, "name": "Agent"}
	pre = s.preflight(t, "notebook", again, "expectedStateHash", 1)
	s.drifted(t, "notebook", again, pre, func() {
		if err := s.c.SetNotebookIcon(ctx, s.nb, "1f600"); err != nil {
			t.Fatal(err)
		}
	})
	if nb, _ := s.notebook(t, s.nb); nb.Name != "Someone else" {
		t.Fatal("a state_changed call renamed")
	}
	s.invalidAt(t, "notebook", map[string]any{"action": "rename", "notebook": s.nb, "name": "  "}, false)
	s.invalidAt(t, "notebook", map[string]any{"action": "rename", "notebook": "nope", "name": "x"}, false)
	s.wantErr(t, "notebook", copyArgs(map[string]any{"action": "rename", "notebook": "20200101010101-abcdefg", "name": "x"}, "validateOnly", true), CodeNotFound)
}

func TestNotebookRemove(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	other, err := s.c.CreateNotebook(ctx, "Doomed")
	if err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"action": "remove", "notebook": other.ID}
	pre := s.preflight(t, "notebook", args, "expectedStateHash", 1)
	// A document created after preflight changes the notebook's state.
	s.drifted(t, "notebook", args, pre, func() {
		if _, err := s.c.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: other.ID, Path: "/Late", Markdown: "x"}); err != nil {
			t.Fatal(err)
		}
	})
	if _, ok := s.notebook(t, other.ID); !ok {
		t.Fatal("a state_changed remove removed")
	}
	pre = s.preflight(t, "notebook", args, "expectedStateHash", 1)
	res := s.commit(t, "notebook", args, pre)
	if _, ok := s.notebook(t, other.ID); ok || res["removed"] != true {
		t.Fatalf("remove: %v", res)
	}
	s.replay(t, "notebook", args, pre, res)
	tool, _ := s.r.Tool("notebook")
	if a, _ := tool.Action("remove"); !a.Destructive {
		t.Fatal("notebook.remove must be destructive")
	}
}

func TestNotebookSetConf(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	args := map[string]any{"action": "set_conf", "notebook": s.nb,
		"conf": map[string]any{"docCreateSavePath": "/Inbox", "sortMode": 6, "dailyNoteTemplatePath": "/tpl/daily.md"}}
	pre := s.preflight(t, "notebook", args, "expectedStateHash", 1)
	res := s.commit(t, "notebook", args, pre)
	conf, err := s.c.GetNotebookConf(ctx, s.nb)
	if err != nil {
		t.Fatal(err)
	}
	if conf.Conf.DocCreateSavePath != "/Inbox" || conf.Conf.SortMode != 6 || conf.Conf.DailyNoteTemplatePath != "/tpl/daily.md" ||
		conf.Conf.Name != "Strict" || res["fields"] != float64(3) {
		t.Fatalf("set_conf: %+v %v", conf.Conf, res)
	}
	s.replay(t, "notebook", args, pre, res)
	// Setting what is already set: no_change.
	pre = s.preflight(t, "notebook", args, "expectedStateHash", 1)
	if res := s.ok(t, "notebook", commitArgs(args, pre)); res["status"] != "no_change" || res["previousHash"] != res["resultHash"] {
		t.Fatalf("no_change: %v", res)
	}
	other := map[string]any{"action": "set_conf", "notebook": s.nb, "conf": map[string]any{"refCreateSavePath": "/Refs"}}
	pre = s.preflight(t, "notebook", other, "expectedStateHash", 1)
	s.drifted(t, "notebook", other, pre, func() {
		c := conf.Conf
		c.DocCreateSavePath = "/Elsewhere"
		if _, err := s.c.SetNotebookConf(ctx, s.nb, c); err != nil {
			t.Fatal(err)
		}
	})
	for _, bad := range []map[string]any{
		{"closed": true}, {"encrypted": true}, {"boxCrypt": "x"}, {"nope": 1}, {"sortMode": 99}, {"sortMode": "6"},
		{"dailyNoteSavePath": "/"}, {"name": " "}, {},
	} {
		s.invalidAt(t, "notebook", map[string]any{"action": "set_conf", "notebook": s.nb, "conf": bad}, false)
	}
}

func TestNotebookSetOpenState(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	args := map[string]any{"action": "set_open_state", "notebook": s.nb, "opened": false}
	pre := s.preflight(t, "notebook", args, "expectedStateHash", 1)
	res := s.commit(t, "notebook", args, pre)
	if nb, _ := s.notebook(t, s.nb); !nb.Closed || res["opened"] != false {
		t.Fatalf("close: %+v %v", nb, res)
	}
	if err := s.c.OpenNotebook(ctx, s.nb); err != nil {
		t.Fatal(err)
	}
	s.replay(t, "notebook", args, pre, res)
	if nb, _ := s.notebook(t, s.nb); nb.Closed {
		t.Fatal("a replay closed the notebook again")
	}
	// Closing under a drift: someone closed it already.
	pre = s.preflight(t, "notebook", args, "expectedStateHash", 1)
	s.drifted(t, "notebook", args, pre, func() {
		if err := s.c.CloseNotebook(ctx, s.nb); err != nil {
			t.Fatal(err)
		}
	})
	// Opening a closed notebook.
	open := map[string]any{"action": "set_open_state", "notebook": s.nb, "opened": true}
	pre = s.preflight(t, "notebook", open, "expectedStateHash", 1)
	s.commit(t, "notebook", open, pre)
	if nb, _ := s.notebook(t, s.nb); nb.Closed {
		t.Fatal("not opened")
	}
	// Opening an open notebook changes nothing.
	pre = s.preflight(t, "notebook", open, "expectedStateHash", 1)
	if res := s.ok(t, "notebook", commitArgs(open, pre)); res["status"] != "no_change" {
		t.Fatalf("no_change: %v", res)
	}
	s.wantErr(t, "notebook", map[string]any{"action": "set_open_state", "notebook": s.nb, "validateOnly": true}, CodeInvalidArguments)
}

func TestNotebookTitleNormalisation(t *testing.T) {
	for in, want := range map[string]string{
		" a/b ": "ab", "x\ty\n": "xy", "\u00a0nb\u00a0": "nb", "z\u200bw": "zw", "e\ue000f": "ef", "👨\u200d👩": "👨\u200d👩",
	} {
		if got := normalizeTitle(in); got != want {
			t.Errorf("normalizeTitle(%q) = %q, want %q", in, got, want)
		}
	}
	if !confMatches("dailyNoteTemplatePath", " tpl / daily ", "/tpl/daily.md") || !confMatches("dailyNoteSavePath", "d/x", "/d/x") ||
		confMatches("sortMode", float64(6), float64(5)) || !strings.Contains("ok", "ok") {
		t.Fatal("confMatches")
	}
}
