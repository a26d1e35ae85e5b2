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

// benchDB is a database made for a benchmark: its block, its view, and a
// text, a number and a select column, with rows detached and filled.
type benchDB struct {
	avID, block, view, pk, text, num, sel string
	cols                                  []string // the view's columns, in order
}

// newBenchDB makes a database of rows rows in doc: row i has the text
// t<i*7919 mod rows>, the number i mod 1000 and the option A, B or C
// (i mod 3), so that a filter on the number keeps 89% of them, a sort on
// the text shuffles them and a group on the select splits them in three.
func newBenchDB(b *testing.B, c *siyuan.Client, doc string, rows int) benchDB {
	ctx := context.Background()
	d := benchDB{avID: tooltest.NewID(), block: tooltest.NewID(), text: tooltest.NewID(), num: tooltest.NewID(), sel: tooltest.NewID()}
	b.Cleanup(func() { c.RemoveFile(context.Background(), "/data/storage/av/"+d.avID+".json") })
	if _, err := c.Transactions(ctx, []siyuan.Transaction{{DoOperations: []siyuan.Operation{siyuan.InsertDatabaseBlockOp(d.block, d.avID, "", doc)}}}); err != nil {
		b.Fatal(err)
	}
	r, err := c.RenderAttributeViewOrCreate(ctx, siyuan.RenderAVRequest{ID: d.avID, BlockID: d.block})
	if err != nil {
		b.Fatal(err)
	}
	d.view = r.ViewID
	for _, k := range []siyuan.AddAVKeyRequest{{KeyID: d.text, KeyName: "Text", KeyType: "text"},
		{KeyID: d.num, KeyName: "Num", KeyType: "number"}, {KeyID: d.sel, KeyName: "Sel", KeyType: "select"}} {
		k.AvID = d.avID
		if err := c.AddAttributeViewKey(ctx, k); err != nil {
			b.Fatal(err)
		}
	}
	// The primary key's ID, for the rows' text.
	first, err := c.GetAttributeView(ctx, d.avID)
	if err != nil || first == nil {
		b.Fatal(err)
	}
	for _, kv := range first.KeyValues {
		if kv.Key.Type == siyuan.AVKeyBlock {
			d.pk = kv.Key.ID
		}
	}
	// appendAttributeViewDetachedBlocksWithValues adds rows with their
	// cells in one save (cell by cell, SiYuan 3.7.3 took over ten minutes
	// for 10,000 rows, each call rewriting a file of several MB).
	const batch = 2500
	for start := 0; start < rows; start += batch {
		var add [][]*siyuan.AVValue
		for i := start; i < min(start+batch, rows); i++ {
			add = append(add, []*siyuan.AVValue{
				{KeyID: d.pk, BlockID: tooltest.NewID(), Block: &siyuan.AVValueBlock{Content: fmt.Sprintf("row %d", i)}},
				{KeyID: d.text, Text: &siyuan.AVValueContent{Content: fmt.Sprintf("t%05d", i*7919%rows)}},
				{KeyID: d.num, Number: &siyuan.AVValueNumber{Content: float64(i % 1000), IsNotEmpty: true}},
				{KeyID: d.sel, MSelect: []*siyuan.AVValueSelect{{Content: []string{"A", "B", "C"}[i%3], Color: fmt.Sprint(i%3 + 1)}}},
			})
		}
		if err := c.AppendAttributeViewDetachedRows(ctx, d.avID, add); err != nil {
			b.Fatal(err)
		}
	}
	av, err := c.GetAttributeView(ctx, d.avID)
	if err != nil || av == nil {
		b.Fatal(err)
	}
	for _, v := range av.Views {
		if v.ID == d.view && v.Table != nil {
			for _, col := range v.Table.Columns {
				d.cols = append(d.cols, col.ID)
			}
		}
	}
	return d
}

// BenchmarkAVViews times, on one kernel in one run:
//
//   - a render of the first page (50 rows) of a 10,000-row database
//     filtered (a number > 100), sorted (a text, ascending) and grouped (a
//     select of three options), all three set through the tool's strict
//     actions: through the tool (the gate's lookups, then
//     renderAttributeView) and bare (the one renderAttributeView);
//   - each strict view-shaping action (preflight + commit, through the
//     coordinator) on a 1,000-row database, against the one bare
//     transaction it sends and against the kernel reads and write a strict
//     view write makes, made directly (the gate's lookup of the database's
//     blocks, then the view's state: the database, its blocks and the
//     carrier's attributes; at preflight and at commit; the transaction;
//     the state again for the readback).
//
// Every write changes what it writes on each run (a new filter value, the
// other sort order, the column shown then hidden ...), so none is a no-op.
// With SISYPHUS_BENCH_URL and SISYPHUS_BENCH_TOKEN it runs against any
// SiYuan kernel, in a notebook it creates and removes.
//
//	go test ./internal/tools/av -run '^$' -bench BenchmarkAVViews -benchtime 20x
func BenchmarkAVViews(b *testing.B) {
	ctx := context.Background()
	c := tooltest.BenchKernel(b)
	nb, err := c.CreateNotebook(ctx, fmt.Sprintf("sisyphus-bench-av-views-%d", time.Now().UnixNano()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.RemoveNotebook(context.Background(), nb.ID) })
	doc, err := c.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: nb.ID, Path: "/bench", Markdown: "databases below"})
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	big := newBenchDB(b, c, doc, 10_000)
	small := newBenchDB(b, c, doc, 1_000)
	b.Logf("setup: %s", time.Since(t0).Round(time.Second))

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
	// A bare write between two strict ones can leave what the next strict
	// one writes (the order rotated back): no_change, still sent.
	strictDo := func(args map[string]any) {
		pre := call(tooltest.CopyArgs(args, "validateOnly", true))
		if res := call(tooltest.CommitArgs(args, pre)); res["status"] != "committed" && res["status"] != "no_change" {
			b.Fatal(res)
		}
	}
	on := func(d benchDB, action string, kv ...any) map[string]any {
		m := map[string]any{"action": action, "avID": d.avID, "blockID": d.block, "viewID": d.view}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	numFilter := func(d benchDB, n int) []any {
		return []any{map[string]any{"column": d.num, "operator": ">", "value": map[string]any{"type": "number", "number": map[string]any{"content": n, "isNotEmpty": true}}}}
	}
	// The big database's filter, sort and group, through the tool.
	strictDo(on(big, "set_filters", "filters", numFilter(big, 100)))
	strictDo(on(big, "set_sorts", "sorts", []any{map[string]any{"column": big.text, "order": "ASC"}}))
	strictDo(on(big, "set_group", "group", map[string]any{"field": big.sel, "method": 0, "order": 0, "hideEmpty": false}))
	// Let the kernel finish indexing the setup, so that the first timed
	// operation does not pay for it.
	if err := c.FlushTransaction(ctx); err != nil {
		b.Fatal(err)
	}
	if g := call(map[string]any{"action": "render", "avID": big.avID, "blockID": big.block, "pageSize": 50}); g["groups"] == nil {
		b.Fatalf("the big database renders no groups: %v", g["rowCount"])
	}

	// What a strict view write reads, made directly: the gate, then the
	// view's state.
	gate := func(d benchDB) {
		if _, err := c.GetMirrorDatabaseBlocks(ctx, d.avID); err != nil {
			b.Fatal(err)
		}
	}
	state := func(d benchDB) {
		if _, err := c.AttributeViewShape(ctx, d.avID); err != nil {
			b.Fatal(err)
		}
		gate(d)
		if _, err := c.GetBlockAttrs(ctx, d.block); err != nil {
			b.Fatal(err)
		}
	}
	tx := func(ops ...siyuan.Operation) {
		if _, err := c.Transactions(ctx, []siyuan.Transaction{{DoOperations: ops}}); err != nil {
			b.Fatal(err)
		}
	}
	direct := func(d benchDB, ops ...siyuan.Operation) {
		gate(d)
		state(d)
		gate(d)
		state(d)
		tx(ops...)
		state(d)
	}
	// Each write, as the tool's arguments and as the operations it sends.
	keys := small.cols
	type write struct {
		name string
		args func(n int) map[string]any
		ops  func(n int) []siyuan.Operation
	}
	order := func(n int) []string { // the columns rotated by n
		k := n % len(keys)
		return append(append([]string{}, keys[k:]...), keys[:k]...)
	}
	writes := []write{
		{"set_filters", func(n int) map[string]any { return on(small, "set_filters", "filters", numFilter(small, n%900)) },
			func(n int) []siyuan.Operation {
				return []siyuan.Operation{siyuan.SetAttrViewFiltersOp(small.avID, small.block, []*siyuan.AVViewFilter{{Combination: "and", Filters: []*siyuan.AVViewFilter{
					{Column: small.num, Operator: ">", Value: &siyuan.AVValue{Type: "number", Number: &siyuan.AVValueNumber{Content: float64(n % 900), IsNotEmpty: true}}}}}})}
			}},
		{"set_sorts", func(n int) map[string]any {
			return on(small, "set_sorts", "sorts", []any{map[string]any{"column": small.text, "order": []string{"ASC", "DESC"}[n%2]}})
		}, func(n int) []siyuan.Operation {
			return []siyuan.Operation{siyuan.SetAttrViewSortsOp(small.avID, small.block, []*siyuan.AVViewSort{{Column: small.text, Order: []string{"ASC", "DESC"}[n%2]}})}
		}},
		{"set_group", func(n int) map[string]any {
			return on(small, "set_group", "group", map[string]any{"field": small.sel, "method": 0, "order": 3, "hideEmpty": n%2 == 0})
		}, func(n int) []siyuan.Operation {
			return []siyuan.Operation{{Action: "setAttrViewGroup", AvID: small.avID, BlockID: small.block, Data: viewGroup{Field: small.sel, Order: 3, HideEmpty: n%2 == 0}}}
		}},
		{"set_column_visibility", func(n int) map[string]any {
			return on(small, "set_column_visibility", "keyID", small.text, "hidden", n%2 == 0)
		}, func(n int) []siyuan.Operation {
			return []siyuan.Operation{siyuan.SetAttrViewColHiddenOp(small.avID, small.block, small.text, n%2 == 0)}
		}},
		{"set_column_order", func(n int) map[string]any { return on(small, "set_column_order", "keyIDs", order(n)) },
			func(n int) []siyuan.Operation {
				var ops []siyuan.Operation
				prev := ""
				for _, id := range order(n) {
					ops = append(ops, siyuan.SortAttrViewColOp(small.avID, small.block, id, prev))
					prev = id
				}
				return ops
			}},
	}

	ops := []tooltest.Op{
		{Name: "render-10000-grouped/tool", Fn: func(int) {
			if m := call(map[string]any{"action": "render", "avID": big.avID, "blockID": big.block, "pageSize": 50}); m["groups"] == nil {
				b.Fatal(m["rowCount"])
			}
		}},
		{Name: "render-10000-grouped/bare", Fn: func(int) {
			if _, err := c.RenderAttributeView(ctx, siyuan.RenderAVRequest{ID: big.avID, BlockID: big.block, PageSize: 50}); err != nil {
				b.Fatal(err)
			}
		}},
	}
	for _, w := range writes {
		ops = append(ops,
			tooltest.Op{Name: w.name + "/strict", Fn: func(n int) { strictDo(w.args(n)) }},
			tooltest.Op{Name: w.name + "/bare-calls", Fn: func(n int) { direct(small, w.ops(n)...) }},
			tooltest.Op{Name: w.name + "/bare-tx", Fn: func(n int) { tx(w.ops(n)...) }})
	}
	tooltest.BenchLatency(b, ops)
}
