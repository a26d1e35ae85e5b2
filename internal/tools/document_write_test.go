package tools

import (
	"context"
	"net/http"
	"path"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
)

func (s *sfix) mkdoc(t *testing.T, nb, hpath, md string) string {
	t.Helper()
	id, err := s.c.CreateDocWithMd(context.Background(), siyuan.CreateDocRequest{Notebook: nb, Path: hpath, Markdown: md})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func (s *sfix) where(t *testing.T, id string) siyuan.DocPath {
	t.Helper()
	p, err := s.c.GetPathByID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (s *sfix) childOrder(t *testing.T, nb, p string) []string {
	t.Helper()
	files, err := listVisible(context.Background(), &Env{Kernel: s.c}, nb, p, nil)
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
	args := map[string]any{"action": "create", "notebook": s.nb, "path": "/Inbox/ Weekly Note ", "markdown": "\n# Weekly Note\n\nbody text\n"}
	pre := s.preflight(t, "document", args, "", 1)
	res := s.commit(t, "document", args, pre)
	id, _ := res["id"].(string)
	hp, _ := s.c.GetHPathByID(ctx, id)
	kd := s.text(t, id)
	if hp != "/Inbox/Weekly Note" || res["notebook"] != s.nb || res["path"] != s.where(t, id).Path ||
		!strings.Contains(kd, "body text") || strings.Contains(kd, "# Weekly Note") {
		t.Fatalf("create: %s %v\n%s", hp, res, kd)
	}
	rep := s.replay(t, "document", args, pre, res)
	if ids, _ := s.c.GetIDsByHPath(ctx, s.nb, "/Inbox/Weekly Note"); len(ids) != 1 || rep["id"] != id {
		t.Fatalf("replay created again: %v %v", ids, rep)
	}
	// A "# Title" that differs from the title stays.
	keep := map[string]any{"action": "create", "parentID": s.doc, "title": "Child", "markdown": "# Other\n\nx"}
	res = s.commit(t, "document", keep, s.preflight(t, "document", keep, "", 1))
	child, _ := res["id"].(string)
	if p := s.where(t, child); path.Dir(p.Path) != strings.TrimSuffix(s.where(t, s.doc).Path, ".sy") || !strings.Contains(s.text(t, child), "# Other") {
		t.Fatalf("parentID create: %v %s", p, s.text(t, child))
	}
	// parentPath as a human path and as a storage path; a notebook id as parentID.
	byHPath := map[string]any{"action": "create", "notebook": s.nb, "parentPath": "/Doc/Child", "title": "Grandchild"}
	res = s.commit(t, "document", byHPath, s.preflight(t, "document", byHPath, "", 1))
	if hp, _ := s.c.GetHPathByID(ctx, res["id"].(string)); hp != "/Doc/Child/Grandchild" {
		t.Fatalf("parentPath (human): %s", hp)
	}
	bySPath := map[string]any{"action": "create", "notebook": s.nb, "parentPath": s.where(t, child).Path, "title": "Second"}
	res = s.commit(t, "document", bySPath, s.preflight(t, "document", bySPath, "", 1))
	if hp, _ := s.c.GetHPathByID(ctx, res["id"].(string)); hp != "/Doc/Child/Second" {
		t.Fatalf("parentPath (storage): %s", hp)
	}
	root := map[string]any{"action": "create", "parentID": s.nb, "title": "Top"}
	res = s.commit(t, "document", root, s.preflight(t, "document", root, "", 1))
	if p := s.where(t, res["id"].(string)); path.Dir(p.Path) != "/" {
		t.Fatalf("notebook as parentID: %v", p)
	}

	for _, bad := range []map[string]any{
		{"action": "create", "notebook": s.nb},
		{"action": "create", "notebook": s.nb, "path": "/x", "title": "y"},
		{"action": "create", "parentID": s.doc},
		{"action": "create", "parentID": s.doc, "title": " / "},
		{"action": "create", "parentID": s.blocks[0], "title": "x"},
		{"action": "create", "notebook": s.nb, "parentPath": "/No/Such", "title": "x"},
		{"action": "create", "parentID": s.doc, "notebook": "20200101010101-abcdefg", "title": "x"},
	} {
		s.invalidAt(t, "document", bad, true)
	}
	// A refusal by the kernel (too deep) is a rejection: nothing applied.
	deep := map[string]any{"action": "create", "notebook": s.nb, "path": "/a/b/c/d/e/f/g/h"}
	pre = s.ok(t, "document", copyArgs(deep, "validateOnly", true))
	s.wantErr(t, "document", commitArgs(deep, pre), strict.CodeRejected)
	if ids, _ := s.c.GetIDsByHPath(ctx, s.nb, "/a"); len(ids) != 0 {
		t.Fatal("a rejected create created documents")
	}
}

func TestDocumentRename(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	args := map[string]any{"action": "rename", "id": s.doc, "title": " New title "}
	pre := s.preflight(t, "document", args, "expectedStateHash", 1)
	res := s.commit(t, "document", args, pre)
	if hp, _ := s.c.GetHPathByID(ctx, s.doc); hp != "/New title" || res["id"] != s.doc {
		t.Fatalf("rename: %s %v", hp, res)
	}
	if err := s.c.RenameDocByID(ctx, s.doc, "Other"); err != nil {
		t.Fatal(err)
	}
	s.replay(t, "document", args, pre, res)
	if hp, _ := s.c.GetHPathByID(ctx, s.doc); hp != "/Other" {
		t.Fatal("a replay renamed again")
	}
	// The document's content is part of its state.
	again := map[string]any{"action": "rename", "id": s.doc, "title": "Agent"}
	pre = s.preflight(t, "document", again, "expectedStateHash", 1)
	s.drifted(t, "document", again, pre, func() {
		if _, err := s.c.UpdateBlock(ctx, s.blocks[0], "markdown", "edited in the UI"); err != nil {
			t.Fatal(err)
		}
	})
	if hp, _ := s.c.GetHPathByID(ctx, s.doc); hp != "/Other" {
		t.Fatal("a state_changed rename renamed")
	}
	s.invalidAt(t, "document", map[string]any{"action": "rename", "id": s.blocks[1], "title": "x"}, false)
	s.invalidAt(t, "document", map[string]any{"action": "rename", "id": s.nb, "title": "x"}, false)
	s.invalidAt(t, "document", map[string]any{"action": "rename", "id": s.doc, "title": "\t"}, false)
	s.wantErr(t, "document", map[string]any{"action": "rename", "id": "20200101010101-abcdefg", "title": "x", "validateOnly": true}, CodeNotFound)
}

func TestDocumentRemove(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	a := s.mkdoc(t, s.nb, "/A", "a")
	b := s.mkdoc(t, s.nb, "/B", "b")
	bChild := s.mkdoc(t, s.nb, "/B/Child", "c")
	args := map[string]any{"action": "remove", "ids": []any{a, b, a}}
	pre := s.preflight(t, "document", args, "expectedStateHash", 2)
	// A child document created after preflight is a change of b's state.
	s.drifted(t, "document", args, pre, func() { s.mkdoc(t, s.nb, "/B/Late", "late") })
	if !s.exists(t, a) || !s.exists(t, b) {
		t.Fatal("a state_changed remove removed")
	}
	pre = s.preflight(t, "document", args, "expectedStateHash", 2)
	res := s.commit(t, "document", args, pre)
	if s.exists(t, a) || s.exists(t, b) || s.exists(t, bChild) || res["removed"] != float64(2) {
		t.Fatalf("remove: %v", res)
	}
	s.replay(t, "document", args, pre, res)
	s.wantErr(t, "document", map[string]any{"action": "remove", "id": a, "validateOnly": true}, CodeNotFound)
	s.invalidAt(t, "document", map[string]any{"action": "remove", "id": s.blocks[0]}, false)
	s.invalidAt(t, "document", map[string]any{"action": "remove", "id": s.nb}, false)
	s.invalidAt(t, "document", map[string]any{"action": "remove", "id": s.doc, "ids": []any{s.doc}}, false)
	if _, err := s.c.GetBlockAttrs(ctx, s.doc); err != nil {
		t.Fatal(err)
	}
}

// TestDocumentRemoveUnprovable: a removal whose existence check fails is
// never reported as done: the outcome stays unknown.
func TestDocumentRemoveUnprovable(t *testing.T) {
	var h atomic.Pointer[hook]
	s := newHookedFixture(t, &h)
	var removed atomic.Bool
	f := hook(func(w http.ResponseWriter, r *http.Request) bool {
		switch {
		case r.URL.Path == "/api/filetree/removeDocByID":
			removed.Store(true)
		case r.URL.Path == "/api/block/checkBlockExist" && removed.Load():
			http.Error(w, "index busy", http.StatusServiceUnavailable)
			return true
		}
		return false
	})
	h.Store(&f)
	args := map[string]any{"action": "remove", "id": s.doc}
	pre := s.preflight(t, "document", args, "expectedStateHash", 1)
	e := s.wantErr(t, "document", commitArgs(args, pre), strict.CodeReadbackMismatch)
	if !*e.WriteAttempted || e.RequestID != pre["requestId"] {
		t.Fatalf("readback_mismatch details: %+v", e)
	}
	h.Store(nil)
	if s.exists(t, s.doc) {
		t.Fatal("the document was not removed")
	}
	s.wantErr(t, "document", commitArgs(args, pre), strict.CodeOutcomeUnknown)
}

func TestDocumentMove(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	a := s.mkdoc(t, s.nb, "/A", "a")
	aChild := s.mkdoc(t, s.nb, "/A/Kid", "k")
	b := s.mkdoc(t, s.nb, "/B", "b")
	args := map[string]any{"action": "move", "fromIDs": []any{a, b}, "toID": s.doc}
	pre := s.preflight(t, "document", args, "expectedStructureHash", 3)
	// A concurrent child of the target invalidates the lease.
	s.drifted(t, "document", args, pre, func() { s.mkdoc(t, s.nb, "/Doc/Late", "x") })
	pre = s.preflight(t, "document", args, "expectedStructureHash", 3)
	res := s.commit(t, "document", args, pre)
	dir := strings.TrimSuffix(s.where(t, s.doc).Path, ".sy")
	for _, id := range []string{a, b} {
		if p := s.where(t, id); path.Dir(p.Path) != dir {
			t.Fatalf("%s at %s, want under %s", id, p.Path, dir)
		}
	}
	if hp, _ := s.c.GetHPathByID(ctx, aChild); hp != "/Doc/A/Kid" || res["moved"] != float64(2) {
		t.Fatalf("descendants move along: %s %v", hp, res)
	}
	if err := s.c.MoveDocsByID(ctx, []string{a}, s.nb); err != nil {
		t.Fatal(err)
	}
	s.replay(t, "document", args, pre, res)
	if path.Dir(s.where(t, a).Path) != "/" {
		t.Fatal("a replay moved again")
	}
	// To another notebook's root.
	other, _ := s.c.CreateNotebook(ctx, "Other")
	cross := map[string]any{"action": "move", "fromIDs": []any{a}, "toID": other.ID}
	s.commit(t, "document", cross, s.preflight(t, "document", cross, "expectedStructureHash", 2))
	if p := s.where(t, a); p.Notebook != other.ID || p.Path != "/"+a+".sy" {
		t.Fatalf("cross-notebook move: %v", p)
	}
	for _, bad := range []map[string]any{
		{"action": "move", "fromIDs": []any{a}, "toID": aChild},
		{"action": "move", "fromIDs": []any{s.doc}, "toID": s.doc},
		{"action": "move", "fromIDs": []any{s.blocks[0]}, "toID": other.ID},
		{"action": "move", "fromIDs": []any{s.nb}, "toID": other.ID},
		{"action": "move", "fromIDs": []any{b, b}, "toID": other.ID},
		{"action": "move", "fromIDs": []any{}, "toID": other.ID},
		{"action": "move", "fromIDs": []any{b}, "toID": s.blocks[0]},
	} {
		s.invalidAt(t, "document", bad, false)
	}
}

func TestDocumentReorder(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	nb, _ := s.c.CreateNotebook(ctx, "Order")
	x := s.mkdoc(t, nb.ID, "/X", "x")
	y := s.mkdoc(t, nb.ID, "/Y", "y")
	z := s.mkdoc(t, nb.ID, "/Z", "z")
	want := []string{z, x, y}
	if slices.Equal(s.childOrder(t, nb.ID, "/"), want) {
		t.Fatal("pick another order")
	}
	args := map[string]any{"action": "reorder", "parentID": nb.ID, "orderedIDs": []any{z, x, y}}
	pre := s.preflight(t, "document", args, "expectedStructureHash", 4)
	res := s.commit(t, "document", args, pre)
	conf, _ := s.c.GetNotebookConf(ctx, nb.ID)
	if got := s.childOrder(t, nb.ID, "/"); !slices.Equal(got, want) || conf.Conf.SortMode != sortCustom || res["sortModeChanged"] != true {
		t.Fatalf("reorder: %v mode %d %v", got, conf.Conf.SortMode, res)
	}
	if err := s.c.ChangeSort(ctx, nb.ID, []string{"/" + y + ".sy"}); err != nil {
		t.Fatal(err)
	}
	s.replay(t, "document", args, pre, res)
	if got := s.childOrder(t, nb.ID, "/"); got[0] != y {
		t.Fatal("a replay reordered again")
	}
	// A concurrent create, or a concurrent reorder, invalidates the lease.
	args = map[string]any{"action": "reorder", "parentID": nb.ID, "orderedIDs": []any{x, y, z}}
	pre = s.preflight(t, "document", args, "expectedStructureHash", 4)
	s.drifted(t, "document", args, pre, func() {
		if err := s.c.ChangeSort(ctx, nb.ID, []string{"/" + z + ".sy"}); err != nil {
			t.Fatal(err)
		}
	})
	pre = s.preflight(t, "document", args, "expectedStructureHash", 4)
	late := ""
	s.drifted(t, "document", args, pre, func() { late = s.mkdoc(t, nb.ID, "/Late", "l") })
	// Not a permutation of the visible children.
	for _, ids := range [][]any{{x, y, z}, {x, y, z, late, x}, {x, y, z, late, s.doc}, {}} {
		e := s.invalidAt(t, "document", map[string]any{"action": "reorder", "parentID": nb.ID, "orderedIDs": ids}, false)
		if !strings.Contains(e.Message, "exactly once") {
			t.Fatalf("permutation message: %s", e.Message)
		}
	}
	s.invalidAt(t, "document", map[string]any{"action": "reorder", "parentID": s.blocks[0], "orderedIDs": []any{x}}, false)

	// A document parent: its children, under custom sort.
	k1 := s.mkdoc(t, s.nb, "/Doc/K1", "1")
	k2 := s.mkdoc(t, s.nb, "/Doc/K2", "2")
	dargs := map[string]any{"action": "reorder", "parentID": s.doc, "orderedIDs": []any{k2, k1}}
	res = s.commit(t, "document", dargs, s.preflight(t, "document", dargs, "expectedStructureHash", 3))
	if got := s.childOrder(t, s.nb, s.where(t, s.doc).Path); !slices.Equal(got, []string{k2, k1}) {
		t.Fatalf("document reorder: %v %v", got, res)
	}
	// Again in the same order: ranks already set, mode already custom.
	pre = s.preflight(t, "document", dargs, "expectedStructureHash", 3)
	if res := s.ok(t, "document", commitArgs(dargs, pre)); res["status"] != "no_change" || res["sortModeChanged"] != false {
		t.Fatalf("repeat reorder: %v", res)
	}
}

func TestDocumentSetChildSortMode(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	args := map[string]any{"action": "set_child_sort_mode", "id": s.nb, "sortMode": 9}
	pre := s.preflight(t, "document", args, "expectedStateHash", 1)
	res := s.commit(t, "document", args, pre)
	if conf, _ := s.c.GetNotebookConf(ctx, s.nb); conf.Conf.SortMode != 9 || res["sortMode"] != float64(9) {
		t.Fatalf("set_child_sort_mode: %d %v", conf.Conf.SortMode, res)
	}
	s.replay(t, "document", args, pre, res)
	inherit := map[string]any{"action": "set_child_sort_mode", "id": s.nb}
	pre = s.preflight(t, "document", inherit, "expectedStateHash", 1)
	s.drifted(t, "document", inherit, pre, func() {
		if err := s.c.RenameNotebook(ctx, s.nb, "Drift"); err != nil {
			t.Fatal(err)
		}
	})
	pre = s.preflight(t, "document", inherit, "expectedStateHash", 1)
	s.commit(t, "document", inherit, pre)
	if conf, _ := s.c.GetNotebookConf(ctx, s.nb); conf.Conf.SortMode != sortFileTree {
		t.Fatalf("inherit: %d", conf.Conf.SortMode)
	}
	e := s.invalidAt(t, "document", map[string]any{"action": "set_child_sort_mode", "id": s.doc, "sortMode": 6}, false)
	if !strings.Contains(e.Message, "3.8.1") {
		t.Fatalf("a document parent must be refused with the reason: %s", e.Message)
	}
	s.wantErr(t, "document", map[string]any{"action": "set_child_sort_mode", "id": s.nb, "sortMode": 16, "validateOnly": true}, CodeInvalidArguments)
}
