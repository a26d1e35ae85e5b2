package embedded

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/88250/lute/ast"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// BenchmarkRenderAV renders a page of a 1,000-row database with a text,
// a number and a template column through the client.
func BenchmarkRenderAV(b *testing.B) {
	ctx := context.Background()
	k, err := Open(ctx, Options{Dir: b.TempDir(), Token: "bench", SQLFlushInterval: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(k.Handler())
	b.Cleanup(func() { srv.Close(); k.Close() })
	c, err := siyuan.New(siyuan.Config{BaseURL: srv.URL, Token: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	nbs, err := c.ListNotebooks(ctx)
	if err != nil {
		b.Fatal(err)
	}
	doc, err := c.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: nbs[0].ID, Path: "/Bench", Markdown: "p"})
	if err != nil {
		b.Fatal(err)
	}
	avID, block := ast.NewNodeID(), ast.NewNodeID()
	tx := func(ops ...siyuan.Operation) {
		if _, err := c.Transactions(ctx, []siyuan.Transaction{{DoOperations: ops}}); err != nil {
			b.Fatal(err)
		}
	}
	tx(siyuan.InsertDatabaseBlockOp(block, avID, "", doc))
	r, err := c.RenderAttributeViewOrCreate(ctx, siyuan.RenderAVRequest{ID: avID, BlockID: block})
	if err != nil {
		b.Fatal(err)
	}
	text, num, tpl := ast.NewNodeID(), ast.NewNodeID(), ast.NewNodeID()
	tx(siyuan.AddAttrViewColOp(avID, text, "Text", "text", "", r.View.Columns[1].ID), siyuan.AddAttrViewColOp(avID, num, "Num", "number", "", text),
		siyuan.AddAttrViewColOp(avID, tpl, "Tpl", "template", "", num), siyuan.UpdateAttrViewColTemplateOp(avID, tpl, ".action{.Text} .action{.Num}"))
	var srcs []siyuan.AVSrc
	var items []string
	for i := range 1000 {
		id := ast.NewNodeID()
		items = append(items, id)
		srcs = append(srcs, siyuan.AVSrc{ItemID: id, Detached: true, Content: fmt.Sprint("row ", i)})
	}
	tx(siyuan.InsertAttrViewBlockOp(avID, block, srcs, ""))
	var cells []siyuan.AVCellUpdate
	for i, id := range items {
		cells = append(cells, siyuan.AVCellUpdate{KeyID: text, ItemID: id, Value: &siyuan.AVValue{Text: &siyuan.AVValueContent{Content: fmt.Sprint("t", i)}}},
			siyuan.AVCellUpdate{KeyID: num, ItemID: id, Value: &siyuan.AVValue{Number: &siyuan.AVValueNumber{Content: float64(i), IsNotEmpty: true}}})
	}
	if err := c.BatchSetAttributeViewBlockAttrs(ctx, avID, cells); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		r, err := c.RenderAttributeView(ctx, siyuan.RenderAVRequest{ID: avID, BlockID: block, PageSize: 50})
		if err != nil || r.View.RowCount != 1000 {
			b.Fatalf("render: %v rowCount %d", err, r.View.RowCount)
		}
	}
}
