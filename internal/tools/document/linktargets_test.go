package document

import (
	"context"
	"fmt"
	"net/http"
	"path"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// linkFixture is a strict fixture whose Doc has a child "Existing" with a
// child "Grand" of its own.
type linkFixture struct {
	*sfix
	existing, grand string
}

func newLinkFixture(t *testing.T) linkFixture {
	s := newStrictFixture(t, false)
	return linkFixture{sfix: s, existing: s.MkDoc(t, s.NB, "/Doc/Existing", "existing body"), grand: s.MkDoc(t, s.NB, "/Doc/Existing/Grand", "")}
}

func (f linkFixture) args(mode string, targets ...map[string]any) map[string]any {
	ts := make([]any, len(targets))
	for i, t := range targets {
		ts[i] = t
	}
	return map[string]any{"action": "ensure_link_targets", "notebook": f.NB, "parentId": f.Doc, "mode": mode, "targets": ts}
}

func (f linkFixture) children(t *testing.T) []siyuan.DocFile {
	t.Helper()
	return childDocs(t, f.C, f.NB, f.Where(t, f.Doc).Path)
}

func childDocs(t *testing.T, c *siyuan.Client, nb, p string) []siyuan.DocFile {
	t.Helper()
	unlimited := 0
	list, err := c.ListDocsByPath(context.Background(), siyuan.ListDocsRequest{Notebook: nb, Path: p, MaxListCount: &unlimited, ShowHidden: true})
	if err != nil {
		t.Fatal(err)
	}
	return list.Files
}

// TestEnsureLinkTargetsReads: resolve and reuse answer direct children by
// id only, everything else unresolved; create with dryRun plans and
// creates nothing, reporting a taken title instead of adopting it.
func TestEnsureLinkTargetsReads(t *testing.T) {
	f := newLinkFixture(t)
	other := f.MkDoc(t, f.NB, "/Elsewhere", "")
	for _, mode := range []string{"resolve", "reuse"} {
		res := f.OK(t, "document", f.args(mode,
			map[string]any{"key": "ex", "id": f.existing},
			map[string]any{"key": "grand", "id": f.grand},          // a grandchild: not in scope
			map[string]any{"key": "sibling", "id": other},          // another document
			map[string]any{"key": "block", "id": f.Blocks[0]},      // a block, not a document
			map[string]any{"key": "gone", "id": tooltest.NewID()})) // nothing
		found, _ := res[map[string]string{"resolve": "resolved", "reuse": "reused"}[mode]].([]any)
		if res["success"] != false || res["changed"] != false || res["mode"] != mode || len(found) != 1 || res["unresolvedCount"] != float64(4) || res["createdCount"] != float64(0) {
			t.Fatalf("%s: %v", mode, res)
		}
		r, _ := found[0].(map[string]any)
		want := map[string]any{"key": "ex", "disposition": map[string]string{"resolve": "resolved", "reuse": "reused"}[mode], "id": f.existing,
			"notebook": f.NB, "path": f.Where(t, f.existing).Path, "hPath": "/Doc/Existing", "title": "Existing"}
		for k, v := range want {
			if r[k] != v {
				t.Errorf("%s: %s = %v, want %v", mode, k, r[k], v)
			}
		}
		lm, _ := res["linkMap"].(map[string]any)
		if e, _ := lm["ex"].(map[string]any); len(lm) != 1 || e["id"] != f.existing || e["hPath"] != "/Doc/Existing" {
			t.Errorf("%s linkMap: %v", mode, lm)
		}
		for _, u := range res["unresolved"].([]any) {
			if u.(map[string]any)["reason"] != "target_not_direct_child_of_explicit_parent" {
				t.Errorf("%s unresolved: %v", mode, u)
			}
		}
		sc, _ := res["scope"].(map[string]any)
		if sc["parentId"] != f.Doc || sc["notebook"] != f.NB || sc["parentHPath"] != "/Doc" || sc["parentPath"] != f.Where(t, f.Doc).Path {
			t.Errorf("%s scope: %v", mode, sc)
		}
	}
	// All found: success.
	if res := f.OK(t, "document", f.args("reuse", map[string]any{"key": "ex", "id": f.existing})); res["success"] != true || res["reusedCount"] != float64(1) {
		t.Fatalf("reuse: %v", res)
	}

	// create with dryRun is a plan: nothing created, no request id.
	before := len(f.children(t))
	plan := tooltest.CopyArgs(f.args("create", map[string]any{"key": "new", "title": " New "}, map[string]any{"key": "taken", "title": "Existing"}), "dryRun", true)
	res := f.OK(t, "document", plan)
	would, _ := res["wouldCreate"].([]any)
	un, _ := res["unresolved"].([]any)
	if res["success"] != false || res["dryRun"] != true || res["requestId"] != nil || len(would) != 1 || would[0].(map[string]any)["title"] != "New" ||
		len(un) != 1 || un[0].(map[string]any)["reason"] != "same_title_child_requires_explicit_id" || un[0].(map[string]any)["key"] != "taken" {
		t.Fatalf("dry run: %v", res)
	}
	if after := len(f.children(t)); after != before {
		t.Fatalf("a dry run created documents: %d -> %d", before, after)
	}
}

// TestEnsureLinkTargetsCreate: create is a strict additive write making
// one child per title, read back under the parent, replayed by its
// request id without creating again.
func TestEnsureLinkTargetsCreate(t *testing.T) {
	f := newLinkFixture(t)
	args := f.args("create", map[string]any{"key": "g", "title": "Glossary"}, map[string]any{"key": "i", "title": "Index"})
	args["markdown"] = "shared body"
	pre := f.Preflight(t, "document", args, "", 1)
	if would, _ := pre["wouldCreate"].([]any); len(would) != 2 {
		t.Fatalf("preflight plan: %v", pre)
	}
	if n := len(f.children(t)); n != 1 {
		t.Fatalf("the preflight created documents: %d children", n)
	}
	res := f.Commit(t, "document", args, pre)
	created, _ := res["created"].([]any)
	lm, _ := res["linkMap"].(map[string]any)
	if res["success"] != true || res["changed"] != true || res["createdCount"] != float64(2) || len(created) != 2 || len(lm) != 2 {
		t.Fatalf("create: %v", res)
	}
	parentDir := strings.TrimSuffix(f.Where(t, f.Doc).Path, ".sy")
	for i, title := range []string{"Glossary", "Index"} {
		c, _ := created[i].(map[string]any)
		id, _ := c["id"].(string)
		if c["key"] != []string{"g", "i"}[i] || c["disposition"] != "created" || c["hPath"] != "/Doc/"+title || c["title"] != title ||
			path.Dir(f.Where(t, id).Path) != parentDir || !strings.Contains(f.Text(t, id), "shared body") {
			t.Fatalf("created %d: %v (%s)", i, c, f.Text(t, id))
		}
		if e, _ := lm[c["key"].(string)].(map[string]any); e["id"] != id {
			t.Fatalf("linkMap: %v", lm)
		}
	}
	rep := f.Replay(t, "document", args, pre, res)
	if n := len(f.children(t)); n != 3 || fmt.Sprint(rep["linkMap"]) != fmt.Sprint(lm) {
		t.Fatalf("replay created again (%d children) or answers another map: %v", n, rep)
	}
	// A title now taken refuses the next creation, before a request id.
	e := f.WantErr(t, "document", tooltest.CopyArgs(f.args("create", map[string]any{"key": "x", "title": "Fresh"}, map[string]any{"key": "g", "title": "Glossary"}), "validateOnly", true), failure.InvalidArguments)
	if e.WriteAttempted == nil || *e.WriteAttempted || e.RequestID != "" || !strings.Contains(fmt.Sprint(e.Details["unresolved"]), "Glossary") {
		t.Fatalf("taken title: %+v", e)
	}
	// A title taken between preflight and commit refuses the commit and
	// creates nothing.
	late := f.args("create", map[string]any{"key": "l", "title": "Late"}, map[string]any{"key": "m", "title": "Mine"})
	pre = f.Preflight(t, "document", late, "", 1)
	f.MkDoc(t, f.NB, "/Doc/Late", "")
	e = f.WantErr(t, "document", tooltest.CommitArgs(late, pre), failure.InvalidArguments)
	if e.WriteAttempted == nil || *e.WriteAttempted {
		t.Fatalf("late taken title: %+v", e)
	}
	for _, c := range f.children(t) {
		if c.Name == "Mine" {
			t.Fatal("a refused creation created a document")
		}
	}
}

// TestEnsureLinkTargetsRefusals: what the arguments or the scope show
// wrong is refused before anything is created.
func TestEnsureLinkTargetsRefusals(t *testing.T) {
	f := newLinkFixture(t)
	otherNB, err := f.C.CreateNotebook(context.Background(), "Other")
	if err != nil {
		t.Fatal(err)
	}
	ex := map[string]any{"key": "k", "id": f.existing}
	nw := map[string]any{"key": "k", "title": "T"}
	many := make([]map[string]any, 101)
	for i := range many {
		many[i] = map[string]any{"key": fmt.Sprint(i), "id": f.existing}
	}
	with := func(m map[string]any, kv ...any) map[string]any { return tooltest.CopyArgs(m, kv...) }
	cases := map[string]struct {
		args map[string]any
		code failure.Code
	}{
		"no targets":           {f.args("reuse"), failure.InvalidArguments},
		"101 targets":          {f.args("reuse", many...), failure.InvalidArguments},
		"duplicate key":        {f.args("reuse", ex, with(ex, "id", f.grand)), failure.InvalidArguments},
		"empty key":            {f.args("reuse", with(ex, "key", "  ")), failure.InvalidArguments},
		"key too long":         {f.args("reuse", with(ex, "key", strings.Repeat("k", 257))), failure.InvalidArguments},
		"id and title":         {f.args("reuse", with(ex, "title", "T")), failure.InvalidArguments},
		"resolve by title":     {f.args("resolve", nw), failure.InvalidArguments},
		"create by id":         {f.args("create", ex), failure.InvalidArguments},
		"duplicate titles":     {f.args("create", nw, with(nw, "key", "k2", "title", " T ")), failure.InvalidArguments},
		"title with slash":     {f.args("create", with(nw, "title", "a/b")), failure.InvalidArguments},
		"title too long":       {f.args("create", with(nw, "title", strings.Repeat("t", 257))), failure.InvalidArguments},
		"unknown target key":   {f.args("create", with(nw, "titel", "T")), failure.InvalidArguments},
		"malformed id":         {f.args("reuse", with(ex, "id", "../x")), failure.InvalidArguments},
		"markdown with reuse":  {with(f.args("reuse", ex), "markdown", "x"), failure.InvalidArguments},
		"dryRun with resolve":  {with(f.args("resolve", ex), "dryRun", true), failure.InvalidArguments},
		"unknown mode":         {f.args("adopt", ex), failure.InvalidArguments},
		"parent is a block":    {with(f.args("reuse", ex), "parentId", f.Blocks[0]), failure.InvalidArguments},
		"parent missing":       {with(f.args("reuse", ex), "parentId", tooltest.NewID()), failure.NotFound},
		"parent elsewhere":     {with(f.args("reuse", ex), "notebook", otherNB.ID), failure.InvalidArguments},
		"create, block parent": {with(f.args("create", nw), "parentId", f.Blocks[0], "validateOnly", true), failure.InvalidArguments},
		"create, no parent":    {with(f.args("create", nw), "parentId", tooltest.NewID(), "validateOnly", true), failure.NotFound},
		"create, elsewhere":    {with(f.args("create", nw), "notebook", otherNB.ID, "validateOnly", true), failure.InvalidArguments},
	}
	before := len(f.children(t))
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			e := f.WantErr(t, "document", c.args, c.code)
			if e.RequestID != "" || (e.WriteAttempted != nil && *e.WriteAttempted) {
				t.Fatalf("refused with a request or a write: %+v", e)
			}
		})
	}
	if after := len(f.children(t)); after != before {
		t.Fatalf("refused calls created documents: %d -> %d", before, after)
	}
}

// TestEnsureLinkTargetsPermission: resolve, reuse and the dry run need
// read; create needs write on the notebook; a hidden notebook answers as
// one that does not exist.
func TestEnsureLinkTargetsPermission(t *testing.T) {
	f := newLinkFixture(t)
	at := func(l tools.Level) *tools.Policy {
		return &tools.Policy{Notebooks: map[string]tools.Level{f.NB: l}, Default: tools.LevelWrite, AllActions: true, Strict: true, Version: "t:" + l.String()}
	}
	reuse := f.args("reuse", map[string]any{"key": "k", "id": f.existing})
	create := f.args("create", map[string]any{"key": "k", "title": "New"})
	dry := tooltest.CopyArgs(create, "dryRun", true)
	f.Policy = at(tools.LevelRead)
	f.OK(t, "document", reuse)
	f.OK(t, "document", dry)
	e := f.WantErr(t, "document", tooltest.CopyArgs(create, "validateOnly", true), failure.PermissionDenied)
	if e.WriteAttempted == nil || *e.WriteAttempted {
		t.Fatalf("refused create: %+v", e)
	}
	f.Policy = at(tools.LevelWrite)
	f.Preflight(t, "document", create, "", 1)
	f.Policy = at(tools.LevelNone)
	absent := map[string]string{f.NB: tooltest.NewID(), f.Doc: tooltest.NewID(), f.existing: tooltest.NewID()}
	for _, args := range []map[string]any{reuse, dry, tooltest.CopyArgs(create, "validateOnly", true)} {
		f.WantMissing(t, "document", args, absent)
	}
}

// TestEnsureLinkTargetsResumes: the second document's creation loses its
// reply, applied or not (outcome_unknown with the first created); after a
// restart the replay of the same request finishes with each title made
// once, under the ids the creation reserved.
func TestEnsureLinkTargetsResumes(t *testing.T) {
	for _, applied := range []bool{true, false} {
		t.Run(fmt.Sprint("applied ", applied), func(t *testing.T) {
			f := newLinkFixture(t)
			var calls atomic.Int32
			f.Wrap(func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == "/api/filetree/createDocWithMd" && calls.Add(1) == 2 {
						if applied {
							next.ServeHTTP(discard{}, r)
						}
						panic(http.ErrAbortHandler) // the connection drops
					}
					next.ServeHTTP(w, r)
				})
			})
			args := f.args("create", map[string]any{"key": "a", "title": "Alpha"}, map[string]any{"key": "b", "title": "Beta"})
			pre := f.Preflight(t, "document", args, "", 1)
			e := f.WantErr(t, "document", tooltest.CommitArgs(args, pre), failure.OutcomeUnknown)
			receipt, _ := tooltest.AsJSON(t, e.Details)["receipt"].(map[string]any)
			if made, _ := receipt["created"].([]any); len(made) != 1 || receipt["inDoubt"] != "doc:1" {
				t.Fatalf("outcome_unknown %+v %v", e, e.Details)
			}
			f.CloseLedger()
			f.Reopen(t, false)
			res := f.OK(t, "document", tooltest.CommitArgs(args, pre))
			if res["status"] != "committed" || res["createdCount"] != float64(2) {
				t.Fatalf("resume: %v", res)
			}
			titles := map[string]int{}
			for _, c := range f.children(t) {
				titles[c.Name]++
			}
			if titles["Alpha"] != 1 || titles["Beta"] != 1 {
				t.Fatalf("children after the resume: %v", titles)
			}
		})
	}
}

// discard is a response writer that drops what the kernel says.
type discard struct{}

func (discard) Header() http.Header         { return http.Header{} }
func (discard) Write(b []byte) (int, error) { return len(b), nil }
func (discard) WriteHeader(int)             {}
