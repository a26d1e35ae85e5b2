package embedded

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/88250/lute/ast"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// BenchmarkRenderAVGrouped renders the first page of each group of a
// 10,000-row database filtered on a number, sorted by a text and grouped
// by a select of three options, calling the kernel directly (no HTTP).
func BenchmarkRenderAVGrouped(b *testing.B) {
	ctx := context.Background()
	k, err := Open(ctx, Options{Dir: b.TempDir(), Token: "bench", SQLFlushInterval: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { k.Close() })
	av := newAV(ast.NewNodeID())
	view := av.Views[0]
	sel := av.KeyValues[1]
	sel.Key.Options = []*wire.AVSelectOption{{Name: "A", Color: "1"}, {Name: "B", Color: "2"}, {Name: "C", Color: "3"}}
	text := &wire.AVKeyValues{Key: &wire.AVKey{ID: ast.NewNodeID(), Name: "Text", Type: wire.AVKeyText}}
	num := &wire.AVKeyValues{Key: &wire.AVKey{ID: ast.NewNodeID(), Name: "Num", Type: wire.AVKeyNumber}}
	av.KeyValues = append(av.KeyValues, text, num)
	view.Table.Columns = append(view.Table.Columns, &wire.AVViewColumn{ID: text.Key.ID}, &wire.AVViewColumn{ID: num.Key.ID})
	pk := av.KeyValues[0]
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.Local)
	for i := range 10000 {
		item := base.Add(time.Duration(i)*time.Second).Format("20060102150405") + "-" + fmt.Sprintf("%07d", i)
		pk.Values = append(pk.Values, &wire.AVValue{ID: ast.NewNodeID(), KeyID: pk.Key.ID, BlockID: item, Type: wire.AVKeyBlock,
			IsDetached: true, Block: &wire.AVValueBlock{Content: fmt.Sprint("row ", i)}})
		text.Values = append(text.Values, &wire.AVValue{ID: ast.NewNodeID(), KeyID: text.Key.ID, BlockID: item, Type: wire.AVKeyText,
			Text: &wire.AVValueContent{Content: fmt.Sprintf("t%05d", (i*7919)%10000)}})
		num.Values = append(num.Values, &wire.AVValue{ID: ast.NewNodeID(), KeyID: num.Key.ID, BlockID: item, Type: wire.AVKeyNumber,
			Number: &wire.AVValueNumber{Content: float64(i % 1000), IsNotEmpty: true}})
		o := sel.Key.Options[i%3]
		sel.Values = append(sel.Values, &wire.AVValue{ID: ast.NewNodeID(), KeyID: sel.Key.ID, BlockID: item, Type: wire.AVKeySelect,
			MSelect: []*wire.AVValueSelect{{Content: o.Name, Color: o.Color}}})
		view.ItemIDs = append(view.ItemIDs, item)
	}
	view.Filters = []*wire.AVViewFilter{{Combination: "and", Filters: []*wire.AVViewFilter{{Column: num.Key.ID, Operator: ">",
		Value: &wire.AVValue{Type: wire.AVKeyNumber, Number: &wire.AVValueNumber{Content: 100, IsNotEmpty: true}}}}}}
	view.Sorts = []*wire.AVViewSort{{Column: text.Key.ID, Order: "ASC"}}
	if err := k.setViewGroup(av, view, &avGroupConf{Field: sel.Key.ID}); err != nil {
		b.Fatal(err)
	}
	if err := k.saveAV(av); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		r, err := k.renderAV(ctx, "", av.ID, "", "", 1, 50, nil, false, false)
		if err != nil || r.View.RowCount != 8990 || len(r.View.Groups) == 0 {
			b.Fatalf("render: %v, rowCount %d", err, r.View.RowCount)
		}
	}
}
