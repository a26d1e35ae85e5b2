package embedded

import (
	"strings"
	"testing"

	"github.com/88250/lute/ast"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// TestAVExportTableCells: the cell forms the contract's database does not
// reach (the contract suite pins the others against SiYuan 3.7.3): a
// wrapped column's lines each end with a hard break, an empty URL cell
// and a relation without contents stay empty, line numbers count the
// rows, an aligned column keeps its alignment.
func TestAVExportTableCells(t *testing.T) {
	text := func(s string) *wire.AVValue {
		return &wire.AVValue{KeyID: "w", Type: wire.AVKeyText, Text: &wire.AVValueContent{Content: s}}
	}
	tbl := &wire.AVTable{
		Columns: []*wire.AVColumn{{ID: "w", Name: "Wrapped|col", Wrap: true, Align: "center"}, {ID: "u", Name: "URL"},
			{ID: "r", Name: "Rel"}, {ID: "n", Name: "No"}},
		Rows: []*wire.AVRow{
			{ID: "1", Cells: []*wire.AVCell{{Value: text("a *b*\nc")}, {Value: &wire.AVValue{KeyID: "u", Type: wire.AVKeyURL, URL: &wire.AVValueContent{Content: " "}}},
				{Value: &wire.AVValue{KeyID: "r", Type: wire.AVKeyRelation}}, {Value: &wire.AVValue{KeyID: "n", Type: wire.AVKeyLineNumber}}}},
			{ID: "2", Cells: []*wire.AVCell{{Value: text("d")}, {Value: nil}, {Value: &wire.AVValue{KeyID: "r", Type: wire.AVKeyRelation,
				Relation: &wire.AVValueRelation{Contents: []*wire.AVValue{{Type: wire.AVKeyBlock, Block: &wire.AVValueBlock{Content: "x|y"}}, nil}}}},
				{Value: &wire.AVValue{KeyID: "n", Type: wire.AVKeyLineNumber}}}},
		},
	}
	n := avExportTable(&wire.AttributeView{}, tbl)
	if n.Type != ast.NodeTable || len(n.TableAligns) != 4 || n.TableAligns[0] != 2 {
		t.Fatalf("table %v aligns %v", n.Type, n.TableAligns)
	}
	var rows [][]string
	for r := n.FirstChild; r != nil; r = r.Next {
		row := r
		if r.Type == ast.NodeTableHead {
			row = r.FirstChild
		}
		var cells []string
		for c := row.FirstChild; c != nil; c = c.Next {
			var b strings.Builder
			for p := c.FirstChild; p != nil; p = p.Next {
				if p.Type == ast.NodeHardBreak {
					b.WriteString("<br>")
				}
				b.Write(p.Tokens)
			}
			cells = append(cells, b.String())
		}
		rows = append(rows, cells)
	}
	want := [][]string{{`Wrapped\|col`, "URL", "Rel", "No"}, {`a \*b\*<br>c<br>`, "", "", "1"}, {"d<br>", "", `x\|y, `, "2"}}
	if len(rows) != len(want) {
		t.Fatalf("rows %q", rows)
	}
	for i := range want {
		if strings.Join(rows[i], "|") != strings.Join(want[i], "|") {
			t.Errorf("row %d = %q, want %q", i, rows[i], want[i])
		}
	}
}
