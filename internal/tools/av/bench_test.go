package av

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// BenchmarkAVWrites compares, on one kernel in one run, a strict set_cells
// (one text cell) and a strict add_rows (one detached row), each preflight
// + commit through the coordinator, with the kernel calls those flows make,
// made directly, and with the one bare kernel write; and a render of a
// page of a 1,000-row database through the tool with the bare
// renderAttributeView. The kernel calls of a strict write: the database's
// blocks (the gate) and its state (the database and its blocks) at
// preflight and at commit, the write, and the state again for the
// readback.
//
// With SISYPHUS_BENCH_URL and SISYPHUS_BENCH_TOKEN it runs against any
// SiYuan kernel, in a notebook it creates and removes.
//
//	go test ./internal/tools/av -run '^$' -bench BenchmarkAVWrites -benchtime 40x
func BenchmarkAVWrites(b *testing.B) {
	ctx := context.Background()
	c := tooltest.BenchKernel(b)
	nb, err := c.CreateNotebook(ctx, fmt.Sprintf("sisyphus-bench-av-%d", time.Now().UnixNano()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.RemoveNotebook(context.Background(), nb.ID) })
	doc, err := c.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: nb.ID, Path: "/bench", Markdown: "a database below"})
	if err != nil {
		b.Fatal(err)
	}
	block, avID := tooltest.NewID(), tooltest.NewID()
	b.Cleanup(func() { c.RemoveFile(context.Background(), "/data/storage/av/"+avID+".json") })
	if _, err := c.Transactions(ctx, []siyuan.Transaction{{DoOperations: []siyuan.Operation{siyuan.InsertDatabaseBlockOp(block, avID, "", doc)}}}); err != nil {
		b.Fatal(err)
	}
	if _, err := c.RenderAttributeViewOrCreate(ctx, siyuan.RenderAVRequest{ID: avID, BlockID: block}); err != nil {
		b.Fatal(err)
	}
	text := tooltest.NewID()
	if err := c.AddAttributeViewKey(ctx, siyuan.AddAVKeyRequest{AvID: avID, KeyID: text, KeyName: "Notes", KeyType: "text"}); err != nil {
		b.Fatal(err)
	}
	// 1,000 detached rows, a hundred a call.
	var rows []string
	for len(rows) < 1000 {
		var srcs []siyuan.AVSrc
		for range 100 {
			id := tooltest.NewID()
			rows = append(rows, id)
			srcs = append(srcs, siyuan.AVSrc{ItemID: id, Detached: true, Content: fmt.Sprintf("row %d", len(rows))})
		}
		if err := c.AddAttributeViewBlocks(ctx, siyuan.AddAVBlocksRequest{AvID: avID, BlockID: block, Srcs: srcs}); err != nil {
			b.Fatal(err)
		}
	}
	row := rows[500]
	// Let the kernel finish indexing the setup, so that the first timed
	// operation does not pay for it.
	if err := c.FlushTransaction(ctx); err != nil {
		b.Fatal(err)
	}

	l, err := strict.OpenLedger(filepath.Join(b.TempDir(), "ledger.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	env := &tools.Env{Kernel: c, Coordinator: strict.NewCoordinator(strict.CoordinatorConfig{Ledger: l})}
	r, err := tools.NewRegistry(env, Tool())
	if err != nil {
		b.Fatal(err)
	}
	call := tooltest.Caller(b, ctx, r, "av")
	strictDo := func(args map[string]any) {
		pre := call(tooltest.CopyArgs(args, "validateOnly", true))
		if res := call(tooltest.CommitArgs(args, pre)); res["status"] != "committed" {
			b.Fatal(res)
		}
	}
	// The gate's blocks, then the state: the database and its blocks.
	state := func() {
		if _, err := c.GetMirrorDatabaseBlocks(ctx, avID); err != nil {
			b.Fatal(err)
		}
		if _, err := c.GetAttributeView(ctx, avID); err != nil {
			b.Fatal(err)
		}
		if _, err := c.GetMirrorDatabaseBlocks(ctx, avID); err != nil {
			b.Fatal(err)
		}
	}
	cell := func(v string) []siyuan.AVCellUpdate {
		return []siyuan.AVCellUpdate{{KeyID: text, ItemID: row, Value: &siyuan.AVValue{Type: "text", Text: &siyuan.AVValueContent{Content: v}}}}
	}
	detached := func(n int) siyuan.AddAVBlocksRequest {
		return siyuan.AddAVBlocksRequest{AvID: avID, BlockID: block, Srcs: []siyuan.AVSrc{{ItemID: tooltest.NewID(), Detached: true, Content: fmt.Sprintf("added %d", n)}}}
	}
	tooltest.BenchLatency(b, []tooltest.Op{
		{Name: "set_cells/strict", Fn: func(n int) {
			strictDo(map[string]any{"action": "set_cells", "avID": avID, "rowID": row, "columnID": text, "value": fmt.Sprintf("strict %d", n)})
		}},
		{Name: "set_cells/bare-calls", Fn: func(n int) {
			state()
			state()
			if err := c.BatchSetAttributeViewBlockAttrs(ctx, avID, cell(fmt.Sprintf("calls %d", n))); err != nil {
				b.Fatal(err)
			}
			if _, err := c.GetAttributeView(ctx, avID); err != nil {
				b.Fatal(err)
			}
			if _, err := c.GetMirrorDatabaseBlocks(ctx, avID); err != nil {
				b.Fatal(err)
			}
		}},
		{Name: "set_cells/bare-write", Fn: func(n int) {
			if err := c.BatchSetAttributeViewBlockAttrs(ctx, avID, cell(fmt.Sprintf("bare %d", n))); err != nil {
				b.Fatal(err)
			}
		}},
		{Name: "add_rows/strict", Fn: func(n int) {
			strictDo(map[string]any{"action": "add_rows", "avID": avID, "primaryKeyTexts": []string{fmt.Sprintf("strict %d", n)}})
		}},
		{Name: "add_rows/bare-calls", Fn: func(n int) {
			state()
			state()
			if err := c.AddAttributeViewBlocks(ctx, detached(n)); err != nil {
				b.Fatal(err)
			}
			if _, err := c.GetAttributeView(ctx, avID); err != nil {
				b.Fatal(err)
			}
			if _, err := c.GetMirrorDatabaseBlocks(ctx, avID); err != nil {
				b.Fatal(err)
			}
		}},
		{Name: "add_rows/bare-write", Fn: func(n int) {
			if err := c.AddAttributeViewBlocks(ctx, detached(n)); err != nil {
				b.Fatal(err)
			}
		}},
		{Name: "render-1000-rows/tool", Fn: func(int) {
			if m := call(map[string]any{"action": "render", "avID": avID, "pageSize": 10}); m["rowCount"] == nil {
				b.Fatal(m)
			}
		}},
		{Name: "render-1000-rows/bare", Fn: func(int) {
			if _, err := c.RenderAttributeView(ctx, siyuan.RenderAVRequest{ID: avID, BlockID: block, PageSize: 10}); err != nil {
				b.Fatal(err)
			}
		}},
	})
}
