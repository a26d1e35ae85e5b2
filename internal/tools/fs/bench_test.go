package fs

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// BenchmarkFs measures, on one kernel: a strict fs.replace (preflight and
// commit) of one word in a 200-block document, beside the one updateBlock
// it makes; fs.tree of a notebook of 52 documents in three levels; and
// fs.search over its 53 documents. With SISYPHUS_BENCH_URL and
// SISYPHUS_BENCH_TOKEN it runs against any SiYuan kernel.
func BenchmarkFs(b *testing.B) {
	ctx := context.Background()
	c := tooltest.BenchKernel(b)
	name := fmt.Sprintf("sisyphus-bench-fs-%d", time.Now().UnixNano())
	nb, err := c.CreateNotebook(ctx, name)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.RemoveNotebook(context.Background(), nb.ID) })
	var md strings.Builder
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&md, "Paragraph %d with **some** text and word%d.\n\n", i, i)
	}
	doc, err := c.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: nb.ID, Path: "/big", Markdown: md.String()})
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		for j := 0; j < 4; j++ {
			for k := 0; k < 2; k++ {
				p := fmt.Sprintf("/T%d/C%d/L%d", i, j, k)
				if _, err := c.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: nb.ID, Path: p, Markdown: "needle in " + p}); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	kids, _ := c.GetChildBlocks(ctx, doc)
	l, err := strict.OpenLedger(filepath.Join(b.TempDir(), "ledger.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	r, err := tools.NewRegistry(&tools.Env{Kernel: c, Coordinator: strict.NewCoordinator(strict.CoordinatorConfig{Ledger: l})}, testTools()...)
	if err != nil {
		b.Fatal(err)
	}
	call := tooltest.Caller(b, ctx, r, "fs")
	path := "/" + name + "/big"
	tooltest.BenchLatency(b, []tooltest.Op{
		{Name: "replace-strict", Fn: func(n int) {
			// Each run edits another paragraph, back and forth.
			args := map[string]any{"action": "replace", "path": path, "old": fmt.Sprintf("word%d.", n%200), "new": fmt.Sprintf("word%d!", n%200)}
			if n%400 >= 200 {
				args["old"], args["new"] = args["new"], args["old"]
			}
			pre := call(tooltest.CopyArgs(args, "validateOnly", true))
			if res := call(tooltest.CommitArgs(args, pre)); res["status"] != "committed" {
				b.Fatalf("replace: %v", res)
			}
		}},
		{Name: "replace-state-read", Fn: func(n int) {
			p, _ := parseDocPath("path", path)
			if _, err := readReplace(ctx, r.Env(), replaceArgs{Path: p, Edits: []textEdit{{Old: "word1.", New: "x"}}}); err != nil {
				b.Fatal(err)
			}
		}},
		{Name: "bare-updateBlock", Fn: func(n int) {
			if _, err := c.UpdateBlock(ctx, kids[n%200].ID, "markdown", fmt.Sprintf("Paragraph %d with **some** text and word%d?", n%200, n%200)); err != nil {
				b.Fatal(err)
			}
		}},
		{Name: "tree-52-docs", Fn: func(int) {
			if res := call(map[string]any{"action": "tree", "path": "/" + name}); res["partial"] != false {
				b.Fatalf("tree: %v", res)
			}
		}},
		{Name: "search-53-docs", Fn: func(int) {
			if res := call(map[string]any{"action": "search", "path": "/" + name, "query": "needle"}); res["total"] != float64(32) || res["truncated"] == true {
				b.Fatalf("search: %v", res["total"])
			}
		}},
	})
}
