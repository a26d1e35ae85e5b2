package file

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// TestRenderRendersWhatItChecked: while a notebook is hidden, an agent
// renders a harmless template it may render, and rewrites it (a committed
// update_template, as any agent writes) in the moment between render's
// check and SiYuan's reading of the file: here, as the render request
// reaches the kernel. The rewrite calls querySQL over the hidden notebook.
// SiYuan renders what was checked; the rewrite lands, and is refused when
// rendered; no copy is left behind.
func TestRenderRendersWhatItChecked(t *testing.T) {
	s := newFixture(t)
	ctx := context.Background()
	hidden, err := s.C.CreateNotebook(ctx, "Hidden")
	if err != nil {
		t.Fatal(err)
	}
	s.MkDoc(t, hidden.ID, "/Salary", "salary secret")
	if err := s.C.FlushTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	s.put(t, "/data/templates/daily.md", "# .action{.title}\n")
	s.Policy = &tools.Policy{Default: tools.LevelRead, Notebooks: map[string]tools.Level{hidden.ID: tools.LevelNone}, AllActions: true, Strict: true}
	evil := `.action{ range (querySQL "SELECT content FROM blocks WHERE content LIKE 'salary%'") }leak:.action{ .content }.action{ end }` + "\n"
	write := map[string]any{"action": "update_template", "path": "daily.md", "content": evil}
	pre := s.Preflight(t, "file", write, "expectedStateHash", 1)

	var (
		once      sync.Once
		committed map[string]any
		werr      *failure.Error
	)
	s.SetHook(func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/api/template/render" {
			once.Do(func() { committed, werr = s.Call(t, "file", tooltest.CommitArgs(write, pre)) })
		}
		return false
	})
	render := map[string]any{"action": "render", "id": s.Doc, "path": "daily.md"}
	r := s.OK(t, "file", render)
	s.SetHook(nil)
	if werr != nil || committed["status"] != "committed" {
		t.Fatalf("the rewrite in the gap: %v %v", committed, werr)
	}
	if dom, _ := r["content"].(string); strings.Contains(dom, "salary") || strings.Contains(dom, "leak:") || !strings.Contains(dom, ">Doc<") {
		t.Fatalf("SiYuan rendered something else than the template checked: %v", r)
	}
	if got, _ := s.read(t, "/data/templates/daily.md"); string(got) != evil {
		t.Fatalf("the rewrite did not land: %q", got)
	}
	s.WantErr(t, "file", render, failure.PermissionDenied)
	if left, err := s.C.ReadDir(ctx, renderCopies); err == nil && len(left) > 0 {
		t.Fatalf("copies left behind: %v", left)
	}
}

// TestRenderCopyRemoved: the private copy is removed whatever came of the
// render (a refusal of the kernel's, a block that does not exist).
func TestRenderCopyRemoved(t *testing.T) {
	s := newFixture(t)
	ctx := context.Background()
	s.put(t, "/data/templates/t.md", "# .action{.title}\n")
	s.put(t, "/data/templates/broken.md", ".action{ if }\n")
	s.OK(t, "file", map[string]any{"action": "render", "id": s.Doc, "path": "t.md"})
	s.WantErr(t, "file", map[string]any{"action": "render", "id": tooltest.NewID(), "path": "t.md"}, failure.NotFound)
	if _, e := s.Call(t, "file", map[string]any{"action": "render", "id": s.Doc, "path": "broken.md"}); e == nil {
		t.Fatal("a template that does not parse rendered")
	}
	if left, err := s.C.ReadDir(ctx, renderCopies); err == nil && len(left) > 0 {
		t.Fatalf("copies left behind: %v", left)
	}
}

func TestWorkspaceRoot(t *testing.T) {
	for _, c := range []struct {
		abs, rel, root, sep string
	}{
		{"/home/me/SiYuan/data/templates/daily.md", "templates/daily.md", "/home/me/SiYuan/", "/"},
		{"/ws/data/templates/work/weekly.md", "templates/work/weekly.md", "/ws/", "/"},
		{`C:\Users\me\SiYuan\data\templates\daily.md`, "templates/daily.md", `C:\Users\me\SiYuan\`, `\`},
		{`C:\Users\me\SiYuan\data\templates\work\weekly.md`, "templates/work/weekly.md", `C:\Users\me\SiYuan\`, `\`},
		{"/ws/data/templates/other.md", "templates/daily.md", "", ""},
		{"/ws/xdata/templates/daily.md", "templates/daily.md", "", ""},
		{"data/templates/daily.md", "templates/daily.md", "", ""},
		{"", "templates/daily.md", "", ""},
	} {
		root, sep, err := workspaceRoot(c.abs, c.rel)
		if root != c.root || sep != c.sep || (err == nil) != (c.root != "") {
			t.Errorf("workspaceRoot(%q, %q) = %q, %q, %v; want %q, %q", c.abs, c.rel, root, sep, err, c.root, c.sep)
		}
	}
}
