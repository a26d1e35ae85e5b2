package document

import (
	"context"
	"net/http"
	"path"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// sfix is a strict fixture with this package's helpers.
type sfix struct{ *tooltest.Fixture }

func newStrictFixture(t *testing.T, strictOff bool) *sfix {
	return &sfix{tooltest.NewStrict(t, strictOff, testTools)}
}

func (s *sfix) childOrder(t *testing.T, nb, p string) []string {
	t.Helper()
	files, err := listVisible(context.Background(), &tools.Env{Kernel: s.C}, nb, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, f := range files {
		ids = append(ids, f.ID)
	}
	return ids
}

func TestDocumentCreate(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	args := map[string]any{"action": "create", "notebook": s.NB, "path": "/Inbox/ Weekly Note ", "markdown": "\n# Weekly Note\n\nbody text\n"}
	pre := s.Preflight(t, "document", args, "", 1)
	res := s.Commit(t, "document", args, pre)
	id, _ := res["id"].(string)
	hp, _ := s.C.GetHPathByID(ctx, id)
	kd := s.Text(t, id)
	if hp != "/Inbox/Weekly Note" || res["notebook"] != s.NB || res["path"] != s.Where(t, id).Path ||
		!strings.Contains(kd, "body text") || strings.Contains(kd, "# Weekly Note") {
		t.Fatalf("create: %s %v\n%s", hp, res, kd)
	}
	rep := s.Replay(t, "document", args, pre, res)
	if ids, _ := s.C.GetIDsByHPath(ctx, s.NB, "/Inbox/Weekly Note"); len(ids) != 1 || rep["id"] != id {
		t.Fatalf("replay created again: %v %v", ids, rep)
	}
	// A "# Title" that differs from the title stays.
	keep := map[string]any{"action": "create", "parentID": s.Doc, "title": "Child", "markdown": "# Other\n\nx"}
	res = s.Commit(t, "document", keep, s.Preflight(t, "document", keep, "", 1))
	child, _ := res["id"].(string)
	if p := s.Where(t, child); path.Dir(p.Path) != strings.TrimSuffix(s.Where(t, s.Doc).Path, ".sy") || !strings.Contains(s.Text(t, child), "# Other") {
		t.Fatalf("parentID create: %v %s", p, s.Text(t, child))
	}
	// parentPath as a human path and as a storage path; a notebook id as parentID.
	byHPath := map[string]any{"action": "create", "notebook": s.NB, "parentPath": "/Doc/Child", "title": "Grandchild"}
	res = s.Commit(t, "document", byHPath, s.Preflight(t, "document", byHPath, "", 1))
	if hp, _ := s.C.GetHPathByID(ctx, res["id"].(string)); hp != "/Doc/Child/Grandchild" {
		t.Fatalf("parentPath (human): %s", hp)
	}
	bySPath := map[string]any{"action": "create", "notebook": s.NB, "parentPath": s.Where(t, child).Path, "title": "Second"}
	res = s.Commit(t, "document", bySPath, s.Preflight(t, "document", bySPath, "", 1))
	if hp, _ := s.C.GetHPathByID(ctx, res["id"].(string)); hp != "/Doc/Child/Second" {
		t.Fatalf("parentPath (storage): %s", hp)
	}
	root := map[string]any{"action": "create", "parentID": s.NB, "title": "Top"}
	res = s.Commit(t, "document", root, s.Preflight(t, "document", root, "", 1))
	if p := s.Where(t, res["id"].(string)); path.Dir(p.Path) != "/" {
		t.Fatalf("notebook as parentID: %v", p)
	}

	// What a read can know is wrong is refused at preflight, before any
	// request id is issued (issue 9: it used to pass preflight and fail at
	// commit).
	for _, bad := range []struct {
		args map[string]any
		code failure.Code
	}{
		{map[string]any{"action": "create", "notebook": s.NB}, failure.InvalidArguments},
		{map[string]any{"action": "create", "notebook": s.NB, "path": "/x", "title": "y"}, failure.InvalidArguments},
		{map[string]any{"action": "create", "parentID": s.Doc}, failure.InvalidArguments},
		{map[string]any{"action": "create", "parentID": s.Doc, "title": " / "}, failure.InvalidArguments},
		{map[string]any{"action": "create", "parentID": s.Blocks[0], "title": "x"}, failure.InvalidArguments},
		{map[string]any{"action": "create", "notebook": s.NB, "parentPath": "/No/Such", "title": "x"}, failure.NotFound},
		{map[string]any{"action": "create", "parentID": s.Doc, "notebook": "20200101010101-abcdefg", "title": "x"}, failure.InvalidArguments},
		{map[string]any{"action": "create", "notebook": "20200101010101-abcdefg", "path": "/x"}, failure.NotFound},
		{map[string]any{"action": "create", "notebook": "../conf", "path": "/x"}, failure.InvalidArguments},
	} {
		e := s.WantErr(t, "document", tooltest.CopyArgs(bad.args, "validateOnly", true), bad.code)
		if e.WriteAttempted == nil || *e.WriteAttempted || e.RequestID != "" {
			t.Fatalf("%v: refused preflight %+v", bad.args, e)
		}
	}
	// A refusal by the kernel (too deep) is a rejection: nothing applied.
	deep := map[string]any{"action": "create", "notebook": s.NB, "path": "/a/b/c/d/e/f/g/h"}
	pre = s.OK(t, "document", tooltest.CopyArgs(deep, "validateOnly", true))
	s.WantErr(t, "document", tooltest.CommitArgs(deep, pre), failure.Rejected)
	if ids, _ := s.C.GetIDsByHPath(ctx, s.NB, "/a"); len(ids) != 0 {
		t.Fatal("a rejected create created documents")
	}
}

func TestDocumentRename(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	args := map[string]any{"action": "rename", "id": s.Doc, "title": " New title "}
	pre := s.Preflight(t, "document", args, "expectedStateHash", 1)
	res := s.Commit(t, "document", args, pre)
	if hp, _ := s.C.GetHPathByID(ctx, s.Doc); hp != "/New title" || res["id"] != s.Doc {
		t.Fatalf("rename: %s %v", hp, res)
	}
	if err := s.C.RenameDocByID(ctx, s.Doc, "Other"); err != nil {
		t.Fatal(err)
	}
	s.Replay(t, "document", args, pre, res)
	if hp, _ := s.C.GetHPathByID(ctx, s.Doc); hp != "/Other" {
		t.Fatal("a replay renamed again")
	}
	// The document's content is part of its state.
	again := map[string]any{"action": "rename", "id": s.Doc, "title": "Agent"}
	pre = s.Preflight(t, "document", again, "expectedStateHash", 1)
	s.Drifted(t, "document", again, pre, func() {
		if _, err := s.C.UpdateBlock(ctx, s.Blocks[0], "markdown", "edited in the UI"); err != nil {
			t.Fatal(err)
		}
	})
	if hp, _ := s.C.GetHPathByID(ctx, s.Doc); hp != "/Other" {
		t.Fatal("a state_changed rename renamed")
	}
	s.InvalidAt(t, "document", map[string]any{"action": "rename", "id": s.Blocks[1], "title": "x"}, false)
	s.InvalidAt(t, "document", map[string]any{"action": "rename", "id": s.NB, "title": "x"}, false)
	s.InvalidAt(t, "document", map[string]any{"action": "rename", "id": s.Doc, "title": "\t"}, false)
	s.WantErr(t, "document", map[string]any{"action": "rename", "id": "20200101010101-abcdefg", "title": "x", "validateOnly": true}, failure.NotFound)
}

func TestDocumentRemove(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	a := s.MkDoc(t, s.NB, "/A", "a")
	b := s.MkDoc(t, s.NB, "/B", "b")
	bChild := s.MkDoc(t, s.NB, "/B/Child", "c")
	args := map[string]any{"action": "remove", "ids": []any{a, b, a}}
	pre := s.Preflight(t, "document", args, "expectedStateHash", 2)
	// A child document created after preflight is a change of b's state.
	s.Drifted(t, "document", args, pre, func() { s.MkDoc(t, s.NB, "/B/Late", "late") })
	if !s.Exists(t, a) || !s.Exists(t, b) {
		t.Fatal("a state_changed remove removed")
	}
	pre = s.Preflight(t, "document", args, "expectedStateHash", 2)
	res := s.Commit(t, "document", args, pre)
	if s.Exists(t, a) || s.Exists(t, b) || s.Exists(t, bChild) || res["removed"] != float64(2) {
		t.Fatalf("remove: %v", res)
	}
	s.Replay(t, "document", args, pre, res)
	s.WantErr(t, "document", map[string]any{"action": "remove", "id": a, "validateOnly": true}, failure.NotFound)
	s.InvalidAt(t, "document", map[string]any{"action": "remove", "id": s.Blocks[0]}, false)
	s.InvalidAt(t, "document", map[string]any{"action": "remove", "id": s.NB}, false)
	s.InvalidAt(t, "document", map[string]any{"action": "remove", "id": s.Doc, "ids": []any{s.Doc}}, false)
	if _, err := s.C.GetBlockAttrs(ctx, s.Doc); err != nil {
		t.Fatal(err)
	}
}

// TestDocumentRemoveUnprovable: a removal whose existence check fails is
// never reported as done: the outcome stays unknown.
func TestDocumentRemoveUnprovable(t *testing.T) {
	s := tooltest.NewHooked(t, testTools)
	var removed atomic.Bool
	s.SetHook(func(w http.ResponseWriter, r *http.Request) bool {
		switch {
		case r.URL.Path == "/api/filetree/removeDocByID":
			removed.Store(true)
		case r.URL.Path == "/api/block/checkBlockExist" && removed.Load():
			http.Error(w, "index busy", http.StatusServiceUnavailable)
			return true
		}
		return false
	})
	args := map[string]any{"action": "remove", "id": s.Doc}
	pre := s.Preflight(t, "document", args, "expectedStateHash", 1)
	e := s.WantErr(t, "document", tooltest.CommitArgs(args, pre), failure.ReadbackMismatch)
	if !*e.WriteAttempted || e.RequestID != pre["requestId"] {
		t.Fatalf("readback_mismatch details: %+v", e)
	}
	s.SetHook(nil)
	if s.Exists(t, s.Doc) {
		t.Fatal("the document was not removed")
	}
	s.WantErr(t, "document", tooltest.CommitArgs(args, pre), failure.OutcomeUnknown)
}

func TestDocumentMove(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	a := s.MkDoc(t, s.NB, "/A", "a")
	aChild := s.MkDoc(t, s.NB, "/A/Kid", "k")
	b := s.MkDoc(t, s.NB, "/B", "b")
	args := map[string]any{"action": "move", "fromIDs": []any{a, b}, "toID": s.Doc}
	pre := s.Preflight(t, "document", args, "expectedStructureHash", 3)
	// A concurrent child of the target invalidates the lease.
	s.Drifted(t, "document", args, pre, func() { s.MkDoc(t, s.NB, "/Doc/Late", "x") })
	pre = s.Preflight(t, "document", args, "expectedStructureHash", 3)
	res := s.Commit(t, "document", args, pre)
	dir := strings.TrimSuffix(s.Where(t, s.Doc).Path, ".sy")
	for _, id := range []string{a, b} {
		if p := s.Where(t, id); path.Dir(p.Path) != dir {
			t.Fatalf("%s at %s, want under %s", id, p.Path, dir)
		}
	}
	if hp, _ := s.C.GetHPathByID(ctx, aChild); hp != "/Doc/A/Kid" || res["moved"] != float64(2) {
		t.Fatalf("descendants move along: %s %v", hp, res)
	}
	if err := s.C.MoveDocsByID(ctx, []string{a}, s.NB); err != nil {
		t.Fatal(err)
	}
	s.Replay(t, "document", args, pre, res)
	if path.Dir(s.Where(t, a).Path) != "/" {
		t.Fatal("a replay moved again")
	}
	// To another notebook's root.
	other, _ := s.C.CreateNotebook(ctx, "Other")
	cross := map[string]any{"action": "move", "fromIDs": []any{a}, "toID": other.ID}
	s.Commit(t, "document", cross, s.Preflight(t, "document", cross, "expectedStructureHash", 2))
	if p := s.Where(t, a); p.Notebook != other.ID || p.Path != "/"+a+".sy" {
		t.Fatalf("cross-notebook move: %v", p)
	}
	for _, bad := range []map[string]any{
		{"action": "move", "fromIDs": []any{a}, "toID": aChild},
		{"action": "move", "fromIDs": []any{s.Doc}, "toID": s.Doc},
		{"action": "move", "fromIDs": []any{s.Blocks[0]}, "toID": other.ID},
		{"action": "move", "fromIDs": []any{s.NB}, "toID": other.ID},
		{"action": "move", "fromIDs": []any{b, b}, "toID": other.ID},
		{"action": "move", "fromIDs": []any{}, "toID": other.ID},
		{"action": "move", "fromIDs": []any{b}, "toID": s.Blocks[0]},
	} {
		s.InvalidAt(t, "document", bad, false)
	}
}

func TestDocumentReorder(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	nb, _ := s.C.CreateNotebook(ctx, "Order")
	x := s.MkDoc(t, nb.ID, "/X", "x")
	y := s.MkDoc(t, nb.ID, "/Y", "y")
	z := s.MkDoc(t, nb.ID, "/Z", "z")
	want := []string{z, x, y}
	if slices.Equal(s.childOrder(t, nb.ID, "/"), want) {
		t.Fatal("pick another order")
	}
	args := map[string]any{"action": "reorder", "parentID": nb.ID, "orderedIDs": []any{z, x, y}}
	pre := s.Preflight(t, "document", args, "expectedStructureHash", 4)
	res := s.Commit(t, "document", args, pre)
	conf, _ := s.C.GetNotebookConf(ctx, nb.ID)
	if got := s.childOrder(t, nb.ID, "/"); !slices.Equal(got, want) || conf.Conf.SortMode != sortCustom || res["sortModeChanged"] != true {
		t.Fatalf("reorder: %v mode %d %v", got, conf.Conf.SortMode, res)
	}
	if err := s.C.ChangeSort(ctx, nb.ID, []string{"/" + y + ".sy"}); err != nil {
		t.Fatal(err)
	}
	s.Replay(t, "document", args, pre, res)
	if got := s.childOrder(t, nb.ID, "/"); got[0] != y {
		t.Fatal("a replay reordered again")
	}
	// A concurrent create, or a concurrent reorder, invalidates the lease.
	args = map[string]any{"action": "reorder", "parentID": nb.ID, "orderedIDs": []any{x, y, z}}
	pre = s.Preflight(t, "document", args, "expectedStructureHash", 4)
	s.Drifted(t, "document", args, pre, func() {
		if err := s.C.ChangeSort(ctx, nb.ID, []string{"/" + z + ".sy"}); err != nil {
			t.Fatal(err)
		}
	})
	pre = s.Preflight(t, "document", args, "expectedStructureHash", 4)
	late := ""
	s.Drifted(t, "document", args, pre, func() { late = s.MkDoc(t, nb.ID, "/Late", "l") })
	// Not a permutation of the visible children.
	for _, ids := range [][]any{{x, y, z}, {x, y, z, late, x}, {x, y, z, late, s.Doc}, {}} {
		e := s.InvalidAt(t, "document", map[string]any{"action": "reorder", "parentID": nb.ID, "orderedIDs": ids}, false)
		if !strings.Contains(e.Message, "exactly once") {
			t.Fatalf("permutation message: %s", e.Message)
		}
	}
	s.InvalidAt(t, "document", map[string]any{"action": "reorder", "parentID": s.Blocks[0], "orderedIDs": []any{x}}, false)

	// A document parent: its children, under custom sort.
	k1 := s.MkDoc(t, s.NB, "/Doc/K1", "1")
	k2 := s.MkDoc(t, s.NB, "/Doc/K2", "2")
	dargs := map[string]any{"action": "reorder", "parentID": s.Doc, "orderedIDs": []any{k2, k1}}
	res = s.Commit(t, "document", dargs, s.Preflight(t, "document", dargs, "expectedStructureHash", 3))
	if got := s.childOrder(t, s.NB, s.Where(t, s.Doc).Path); !slices.Equal(got, []string{k2, k1}) {
		t.Fatalf("document reorder: %v %v", got, res)
	}
	// Again in the same order: ranks already set, mode already custom.
	pre = s.Preflight(t, "document", dargs, "expectedStructureHash", 3)
	if res := s.OK(t, "document", tooltest.CommitArgs(dargs, pre)); res["status"] != "no_change" || res["sortModeChanged"] != false {
		t.Fatalf("repeat reorder: %v", res)
	}
}

func TestDocumentSetChildSortMode(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	args := map[string]any{"action": "set_child_sort_mode", "id": s.NB, "sortMode": 9}
	pre := s.Preflight(t, "document", args, "expectedStateHash", 1)
	res := s.Commit(t, "document", args, pre)
	if conf, _ := s.C.GetNotebookConf(ctx, s.NB); conf.Conf.SortMode != 9 || res["sortMode"] != float64(9) {
		t.Fatalf("set_child_sort_mode: %d %v", conf.Conf.SortMode, res)
	}
	s.Replay(t, "document", args, pre, res)
	inherit := map[string]any{"action": "set_child_sort_mode", "id": s.NB}
	pre = s.Preflight(t, "document", inherit, "expectedStateHash", 1)
	s.Drifted(t, "document", inherit, pre, func() {
		if err := s.C.RenameNotebook(ctx, s.NB, "Drift"); err != nil {
			t.Fatal(err)
		}
	})
	pre = s.Preflight(t, "document", inherit, "expectedStateHash", 1)
	s.Commit(t, "document", inherit, pre)
	if conf, _ := s.C.GetNotebookConf(ctx, s.NB); conf.Conf.SortMode != sortFileTree {
		t.Fatalf("inherit: %d", conf.Conf.SortMode)
	}
	e := s.InvalidAt(t, "document", map[string]any{"action": "set_child_sort_mode", "id": s.Doc, "sortMode": 6}, false)
	if !strings.Contains(e.Message, "3.8.1") {
		t.Fatalf("a document parent must be refused with the reason: %s", e.Message)
	}
	s.WantErr(t, "document", map[string]any{"action": "set_child_sort_mode", "id": s.NB, "sortMode": 16, "validateOnly": true}, failure.InvalidArguments)
}
