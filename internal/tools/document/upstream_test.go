package document

import (
	"context"
	"net/http"
	"path"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// The argument forms upstream 0.6.8 documents for the document actions
// this tool shares with it (issue 26): create's icon and sorts, and the
// storage-path forms of rename, remove and move.

func TestDocumentCreateIcon(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		args     map[string]any
		wantIcon string
	}{
		{"hex code point", map[string]any{"action": "create", "notebook": s.NB, "path": "/Iconed", "icon": " 1f4d4 "}, "1f4d4"},
		{"custom icon path, with parentID + title", map[string]any{"action": "create", "parentID": s.Doc, "title": "Kid", "icon": "custom/star.svg"}, "custom/star.svg"},
		// sorts is accepted and has no effect, as upstream.
		{"sorts ignored", map[string]any{"action": "create", "notebook": s.NB, "parentPath": "/", "title": "Sorted", "sorts": []any{"a", "b"}}, ""},
		{"empty icon is no icon", map[string]any{"action": "create", "notebook": s.NB, "path": "/Plain", "icon": ""}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pre := s.Preflight(t, "document", tc.args, "", 1)
			res := s.Commit(t, "document", tc.args, pre)
			id, _ := res["id"].(string)
			attrs, err := s.C.GetBlockAttrs(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if attrs["icon"] != tc.wantIcon || (tc.wantIcon != "") != (res["icon"] == tc.wantIcon) {
				t.Fatalf("icon %q, answer %v; want %q", attrs["icon"], res, tc.wantIcon)
			}
			s.Replay(t, "document", tc.args, pre, res)
		})
	}
	// The icon is part of the write: a kernel that drops it fails the
	// readback rather than reporting success.
	h := tooltest.NewHooked(t, testTools)
	h.SetHook(func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/api/transactions" {
			_, _ = w.Write([]byte(`{"code":0,"msg":"","data":[]}`))
			return true
		}
		return false
	})
	args := map[string]any{"action": "create", "notebook": h.NB, "path": "/Dropped", "icon": "1f4d4"}
	pre := h.Preflight(t, "document", args, "", 1)
	h.WantErr(t, "document", tooltest.CommitArgs(args, pre), failure.ReadbackMismatch)
}

// path is the storage path of a document the fixture knows.
func (s *sfix) path(t *testing.T, id string) string { return s.Where(t, id).Path }

func TestDocumentRenameByPath(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	kid := s.MkDoc(t, s.NB, "/Doc/Kid", "k")
	other, _ := s.C.CreateNotebook(ctx, "Other")
	for _, tc := range []struct {
		name  string
		args  map[string]any
		id    string
		title string
	}{
		{"notebook + path", map[string]any{"notebook": s.NB, "path": s.path(t, s.Doc), "title": "Renamed"}, s.Doc, "Renamed"},
		{"nested path", map[string]any{"notebook": s.NB, "path": s.path(t, kid), "title": "Kid 2"}, kid, "Kid 2"},
		{"id and a path that agree", map[string]any{"id": kid, "notebook": s.NB, "path": s.path(t, kid), "title": "Kid 3"}, kid, "Kid 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := tooltest.CopyArgs(tc.args, "action", "rename")
			pre := s.Preflight(t, "document", args, "expectedStateHash", 1)
			res := s.Commit(t, "document", args, pre)
			if hp, _ := s.C.GetHPathByID(ctx, tc.id); path.Base(hp) != tc.title || res["id"] != tc.id {
				t.Fatalf("rename: %s %v", hp, res)
			}
		})
	}
	for _, tc := range []struct {
		name string
		args map[string]any
		code failure.Code
	}{
		{"path without notebook", map[string]any{"path": s.path(t, kid)}, failure.InvalidArguments},
		{"notebook without path", map[string]any{"notebook": s.NB}, failure.InvalidArguments},
		{"neither id nor path", map[string]any{}, failure.InvalidArguments},
		{"a human path", map[string]any{"notebook": s.NB, "path": "/Doc/Kid"}, failure.InvalidArguments},
		{"a malformed storage path", map[string]any{"notebook": s.NB, "path": "/../x.sy"}, failure.InvalidArguments},
		{"id and path disagree", map[string]any{"id": s.Doc, "notebook": s.NB, "path": s.path(t, kid)}, failure.InvalidArguments},
		{"no such document", map[string]any{"notebook": s.NB, "path": "/20200101010101-abcdefg.sy"}, failure.NotFound},
		{"the wrong notebook", map[string]any{"notebook": other.ID, "path": s.path(t, kid)}, failure.NotFound},
		{"the wrong parent", map[string]any{"notebook": s.NB, "path": "/" + kid + ".sy"}, failure.NotFound},
		{"a block, not a document", map[string]any{"notebook": s.NB, "path": "/" + s.Blocks[0] + ".sy"}, failure.NotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := tooltest.CopyArgs(tc.args, "action", "rename", "title", "Nope", "validateOnly", true)
			e := s.WantErr(t, "document", args, tc.code)
			if e.WriteAttempted == nil || *e.WriteAttempted {
				t.Fatalf("refusal %+v", e)
			}
		})
	}
	// A document moved since the preflight is not renamed, and its old
	// path no longer names it.
	args := map[string]any{"action": "rename", "notebook": s.NB, "path": s.path(t, kid), "title": "Late"}
	pre := s.Preflight(t, "document", args, "expectedStateHash", 1)
	s.Drifted(t, "document", args, pre, func() {
		if err := s.C.MoveDocsByID(ctx, []string{kid}, s.NB); err != nil {
			t.Fatal(err)
		}
	})
	s.WantErr(t, "document", tooltest.CopyArgs(args, "validateOnly", true), failure.NotFound)
	if hp, _ := s.C.GetHPathByID(ctx, kid); hp != "/Kid 3" {
		t.Fatalf("a moved document was renamed: %s", hp)
	}
}

func TestDocumentRemoveByPath(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	other, _ := s.C.CreateNotebook(ctx, "Other")
	for _, tc := range []struct {
		name    string
		mk      func() (args map[string]any, gone []string)
		targets int
	}{
		{"notebook + path", func() (map[string]any, []string) {
			a := s.MkDoc(t, s.NB, "/A", "a")
			kid := s.MkDoc(t, s.NB, "/A/Kid", "k")
			return map[string]any{"notebook": s.NB, "path": s.path(t, a)}, []string{a, kid}
		}, 1},
		{"paths in a notebook", func() (map[string]any, []string) {
			a, b := s.MkDoc(t, s.NB, "/A", "a"), s.MkDoc(t, s.NB, "/B/Kid", "b")
			return map[string]any{"notebook": s.NB, "paths": []any{s.path(t, a), s.path(t, b)}}, []string{a, b}
		}, 2},
		{"paths across notebooks", func() (map[string]any, []string) {
			a, b := s.MkDoc(t, s.NB, "/A", "a"), s.MkDoc(t, other.ID, "/B", "b")
			return map[string]any{"paths": []any{s.path(t, a), s.path(t, b)}}, []string{a, b}
		}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args, gone := tc.mk()
			args["action"] = "remove"
			pre := s.Preflight(t, "document", args, "expectedStateHash", tc.targets)
			res := s.Commit(t, "document", args, pre)
			for _, id := range gone {
				if s.Exists(t, id) {
					t.Fatalf("%s still exists: %v", id, res)
				}
			}
			if res["paths"] == nil {
				t.Fatalf("the answer does not say the paths: %v", res)
			}
			s.Replay(t, "document", args, pre, res)
		})
	}
	a := s.MkDoc(t, s.NB, "/Keep", "k")
	ap := s.path(t, a)
	for _, tc := range []struct {
		name string
		args map[string]any
		code failure.Code
	}{
		{"id and path", map[string]any{"id": a, "notebook": s.NB, "path": ap}, failure.InvalidArguments},
		{"ids and paths", map[string]any{"ids": []any{a}, "paths": []any{ap}}, failure.InvalidArguments},
		{"path and paths", map[string]any{"notebook": s.NB, "path": ap, "paths": []any{ap}}, failure.InvalidArguments},
		{"notebook alone", map[string]any{"notebook": s.NB}, failure.InvalidArguments},
		{"notebook with id", map[string]any{"notebook": s.NB, "id": a}, failure.InvalidArguments},
		{"path without notebook", map[string]any{"path": ap}, failure.InvalidArguments},
		{"empty paths", map[string]any{"paths": []any{}}, failure.InvalidArguments},
		{"a human path", map[string]any{"paths": []any{"/Keep"}}, failure.InvalidArguments},
		{"paths outside the notebook", map[string]any{"notebook": other.ID, "paths": []any{ap}}, failure.NotFound},
		{"a path to nothing", map[string]any{"paths": []any{ap, "/20200101010101-abcdefg.sy"}}, failure.NotFound},
		{"a path under the wrong parent", map[string]any{"paths": []any{"/" + s.Doc + "/" + a + ".sy"}}, failure.NotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.WantErr(t, "document", tooltest.CopyArgs(tc.args, "action", "remove", "validateOnly", true), tc.code)
		})
	}
	if !s.Exists(t, a) {
		t.Fatal("a refused remove removed")
	}
}

func TestDocumentMoveByPath(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	other, _ := s.C.CreateNotebook(ctx, "Other")
	dest := s.MkDoc(t, other.ID, "/Dest", "d")
	for _, tc := range []struct {
		name   string
		from   string
		args   func(a string) map[string]any
		parent func() (nb, dir string)
	}{
		{"under a document in another notebook", "/Doc/Mover", func(a string) map[string]any {
			return map[string]any{"fromPaths": []any{s.path(t, a)}, "toNotebook": other.ID, "toPath": s.path(t, dest)}
		}, func() (string, string) { return other.ID, strings.TrimSuffix(s.path(t, dest), ".sy") }},
		{"to a notebook's root", "/Doc/Mover", func(a string) map[string]any {
			return map[string]any{"fromPaths": []any{s.path(t, a)}, "toNotebook": other.ID, "toPath": "/"}
		}, func() (string, string) { return other.ID, "/" }},
		{"fromIDs to a storage path", "/Mover", func(a string) map[string]any {
			return map[string]any{"fromIDs": []any{a}, "toNotebook": s.NB, "toPath": s.path(t, s.Doc)}
		}, func() (string, string) { return s.NB, strings.TrimSuffix(s.path(t, s.Doc), ".sy") }},
		{"fromPaths to toID", "/Doc/Mover", func(a string) map[string]any {
			return map[string]any{"fromPaths": []any{s.path(t, a)}, "toID": s.NB}
		}, func() (string, string) { return s.NB, "/" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := s.MkDoc(t, s.NB, tc.from, "m")
			args := tooltest.CopyArgs(tc.args(a), "action", "move")
			pre := s.Preflight(t, "document", args, "expectedStructureHash", 2)
			res := s.Commit(t, "document", args, pre)
			nb, dir := tc.parent()
			if p := s.Where(t, a); p.Notebook != nb || path.Dir(p.Path) != dir || res["moved"] != float64(1) {
				t.Fatalf("moved to %v, want %s %s: %v", p, nb, dir, res)
			}
		})
	}
	a := s.MkDoc(t, s.NB, "/Stay", "s")
	ap := s.path(t, a)
	for _, tc := range []struct {
		name string
		args map[string]any
		code failure.Code
	}{
		{"fromIDs and fromPaths", map[string]any{"fromIDs": []any{a}, "fromPaths": []any{ap}, "toID": other.ID}, failure.InvalidArguments},
		{"toID and toPath", map[string]any{"fromPaths": []any{ap}, "toID": other.ID, "toNotebook": other.ID, "toPath": "/"}, failure.InvalidArguments},
		{"toPath without toNotebook", map[string]any{"fromPaths": []any{ap}, "toPath": "/"}, failure.InvalidArguments},
		{"toNotebook without toPath", map[string]any{"fromPaths": []any{ap}, "toNotebook": other.ID}, failure.InvalidArguments},
		{"no documents", map[string]any{"toID": other.ID}, failure.InvalidArguments},
		{"a path twice", map[string]any{"fromPaths": []any{ap, ap}, "toID": other.ID}, failure.InvalidArguments},
		{"a human toPath", map[string]any{"fromPaths": []any{ap}, "toNotebook": other.ID, "toPath": "/Dest"}, failure.InvalidArguments},
		{"a source path to nothing", map[string]any{"fromPaths": []any{"/20200101010101-abcdefg.sy"}, "toID": other.ID}, failure.NotFound},
		{"a source at another path", map[string]any{"fromPaths": []any{"/" + s.Doc + "/" + a + ".sy"}, "toID": other.ID}, failure.NotFound},
		{"toPath in the wrong notebook", map[string]any{"fromPaths": []any{ap}, "toNotebook": s.NB, "toPath": s.path(t, dest)}, failure.NotFound},
		{"root of a document", map[string]any{"fromPaths": []any{ap}, "toNotebook": dest, "toPath": "/"}, failure.NotFound},
		{"under itself", map[string]any{"fromPaths": []any{ap}, "toNotebook": s.NB, "toPath": ap}, failure.InvalidArguments},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.WantErr(t, "document", tooltest.CopyArgs(tc.args, "action", "move", "validateOnly", true), tc.code)
		})
	}
	if p := s.Where(t, a); p.Notebook != s.NB || p.Path != ap {
		t.Fatal("a refused move moved")
	}
	// Both notebooks are checked: a move out of a writable notebook into a
	// read-only one is refused, whatever form names the destination.
	s.Policy = &tools.Policy{Notebooks: map[string]tools.Level{s.NB: tools.LevelWrite, other.ID: tools.LevelRead}, Default: tools.LevelRead, AllActions: true, Strict: true, Version: "test"}
	for _, args := range []map[string]any{
		{"action": "move", "fromPaths": []any{ap}, "toNotebook": other.ID, "toPath": "/", "validateOnly": true},
		{"action": "move", "fromPaths": []any{ap}, "toNotebook": other.ID, "toPath": s.path(t, dest), "validateOnly": true},
	} {
		if e := s.WantErr(t, "document", args, failure.PermissionDenied); e.Details["notebook"] != other.ID {
			t.Fatalf("refusal %+v", e)
		}
	}
	// And the source's: out of a read-only notebook.
	s.Policy = &tools.Policy{Notebooks: map[string]tools.Level{s.NB: tools.LevelRead, other.ID: tools.LevelWrite}, Default: tools.LevelRead, AllActions: true, Strict: true, Version: "test2"}
	if e := s.WantErr(t, "document", map[string]any{"action": "move", "fromPaths": []any{ap}, "toNotebook": other.ID, "toPath": "/", "validateOnly": true}, failure.PermissionDenied); e.Details["notebook"] != s.NB {
		t.Fatalf("refusal %+v", e)
	}
}
