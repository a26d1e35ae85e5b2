package file

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
	"github.com/sisyphus-go/sisyphus/internal/tools/tplfile"
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
	if left, err := s.C.ReadDir(ctx, tplfile.CopiesDir); err == nil && len(left) > 0 {
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
	if left, err := s.C.ReadDir(ctx, tplfile.CopiesDir); err == nil && len(left) > 0 {
		t.Fatalf("copies left behind: %v", left)
	}
}

// BenchmarkRender compares, on one kernel in one run, file.render (the
// template read, checked, copied, rendered from the copy, the copy
// removed) with the kernel calls a render of the template's own file
// makes (getFile, searchTemplate, render), with those a render of a copy
// makes (the same and putFile, removeFile) and with the bare render.
// With SISYPHUS_BENCH_URL and SISYPHUS_BENCH_TOKEN it runs against any
// SiYuan kernel; it removes the notebook and template it wrote.
//
//	go test ./internal/tools/file -run '^$' -bench BenchmarkRender -benchtime 200x
func BenchmarkRender(b *testing.B) {
	ctx := context.Background()
	c := tooltest.BenchKernel(b)
	r, err := tools.NewRegistry(&tools.Env{Kernel: c}, Tool())
	if err != nil {
		b.Fatal(err)
	}
	nb, err := c.CreateNotebook(ctx, fmt.Sprintf("sisyphus-bench-%d", time.Now().UnixNano()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.RemoveNotebook(context.Background(), nb.ID) })
	doc, err := c.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: nb.ID, Path: "/Bench", Markdown: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	name := fmt.Sprintf("sisyphus-bench-%d.md", time.Now().UnixNano())
	b.Cleanup(func() { c.RemoveFile(context.Background(), "/data/templates/"+name) })
	if err := c.PutFile(ctx, siyuan.PutFileRequest{Path: "/data/templates/" + name, Body: strings.NewReader("# .action{.title}\n\n- item .action{now | date \"2006\"}\n")}); err != nil {
		b.Fatal(err)
	}
	call := tooltest.Caller(b, ctx, r, "file")
	var abs string
	tooltest.BenchLatency(b, []tooltest.Op{
		{Name: "render", Fn: func(int) {
			call(map[string]any{"action": "render", "id": doc, "path": name})
		}},
		{Name: "bare-calls-in-place", Fn: func(int) {
			body, _, err := c.GetFile(ctx, "/data/templates/"+name)
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, body)
			body.Close()
			all, err := c.SearchTemplate(ctx, "")
			if err != nil {
				b.Fatal(err)
			}
			for _, t := range all {
				if t.RelativePath == name {
					abs = t.Path
				}
			}
			if _, err := c.RenderTemplate(ctx, doc, abs, true); err != nil {
				b.Fatal(err)
			}
		}},
		{Name: "bare-calls-copy", Fn: func(int) {
			body, _, err := c.GetFile(ctx, "/data/templates/"+name)
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, body)
			body.Close()
			if _, err := c.SearchTemplate(ctx, ""); err != nil {
				b.Fatal(err)
			}
			if err := c.PutFile(ctx, siyuan.PutFileRequest{Path: tplfile.CopiesDir + "/bench.md", Body: strings.NewReader("# .action{.title}\n")}); err != nil {
				b.Fatal(err)
			}
			root, sep, _ := tplfile.WorkspaceRoot(abs, "templates/"+name)
			if _, err := c.RenderTemplate(ctx, doc, root+"temp"+sep+"sisyphus-render"+sep+"bench.md", true); err != nil {
				b.Fatal(err)
			}
			if err := c.RemoveFile(ctx, tplfile.CopiesDir+"/bench.md"); err != nil {
				b.Fatal(err)
			}
		}},
		{Name: "bare-render", Fn: func(int) {
			if _, err := c.RenderTemplate(ctx, doc, abs, true); err != nil {
				b.Fatal(err)
			}
		}},
	})
}
