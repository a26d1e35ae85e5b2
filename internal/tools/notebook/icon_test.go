package notebook

import (
	"context"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

func TestNotebookSetIcon(t *testing.T) {
	s := newStrictFixture(t, false)
	args := map[string]any{"action": "set_icon", "notebook": s.NB, "icon": "1f4da"}
	pre := s.Preflight(t, "notebook", args, "expectedStateHash", 1)
	if nb, _ := s.notebook(t, s.NB); nb.Icon == "1f4da" {
		t.Fatal("preflight wrote")
	}
	res := s.Commit(t, "notebook", args, pre)
	if nb, _ := s.notebook(t, s.NB); nb.Icon != "1f4da" || res["icon"] != "1f4da" {
		t.Fatalf("icon %q, answer %v", nb.Icon, res)
	}
	s.Replay(t, "notebook", args, pre, res)
	again := tooltest.CopyArgs(args, "icon", "1f4d4")
	pre = s.Preflight(t, "notebook", again, "expectedStateHash", 1)
	s.Drifted(t, "notebook", again, pre, func() {
		if err := s.C.SetNotebookIcon(context.Background(), s.NB, "1f600"); err != nil {
			t.Fatal(err)
		}
	})
	// A closed notebook takes an icon too, as SiYuan sets it.
	if err := s.C.CloseNotebook(context.Background(), s.NB); err != nil {
		t.Fatal(err)
	}
	closed := tooltest.CopyArgs(args, "icon", "1f4d3")
	s.Commit(t, "notebook", closed, s.Preflight(t, "notebook", closed, "expectedStateHash", 1))
	if nb, _ := s.notebook(t, s.NB); nb.Icon != "1f4d3" || !nb.Closed {
		t.Fatalf("closed notebook %+v", nb)
	}
	for _, tc := range []struct {
		name string
		args map[string]any
		code failure.Code
	}{
		{"empty icon", tooltest.CopyArgs(args, "icon", " "), failure.InvalidArguments},
		{"unknown notebook", tooltest.CopyArgs(args, "notebook", tooltest.NewID()), failure.NotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.WantErr(t, "notebook", tooltest.CopyArgs(tc.args, "validateOnly", true), tc.code)
		})
	}
}

func TestNotebookGetChildDocs(t *testing.T) {
	s := newStrictFixture(t, false)
	s.MkDoc(t, s.NB, "/Second", "x")
	s.MkDoc(t, s.NB, "/Doc/Nested", "y")
	res := s.OK(t, "notebook", map[string]any{"action": "get_child_docs", "notebook": s.NB, "pageSize": 1})
	if res["total"] != float64(2) || res["pageCount"] != float64(2) || res["hasNextPage"] != true || res["notebook"] != s.NB {
		t.Fatalf("page 1: %v", res)
	}
	two := s.OK(t, "notebook", map[string]any{"action": "get_child_docs", "notebook": s.NB, "page": 2, "pageSize": 1})
	first := res["data"].([]any)[0].(map[string]any)["id"]
	second := two["data"].([]any)[0].(map[string]any)["id"]
	if first == second || (first != s.Doc && second != s.Doc) {
		t.Fatalf("pages %v / %v", res, two)
	}
	s.WantErr(t, "notebook", map[string]any{"action": "get_child_docs", "notebook": tooltest.NewID()}, failure.NotFound)
	if err := s.C.CloseNotebook(context.Background(), s.NB); err != nil {
		t.Fatal(err)
	}
	s.WantErr(t, "notebook", map[string]any{"action": "get_child_docs", "notebook": s.NB}, failure.InvalidArguments)
}
