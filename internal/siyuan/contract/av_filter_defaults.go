package contract

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// checkAVFilterDefaults: a row added to a filtered view starts with the
// values that pass the filters (a number > 5 gives 6, < 5 gives 4, a text
// "contains" gives the text, a select "=" the option, a checkbox "is
// true" checked, "is empty" an empty text); "!=" and "does not contain"
// on a select give nothing; the filters in nested groups count too.
// ignoreDefaultFill adds the row bare.
func checkAVFilterDefaults(t *testing.T, s *suite) {
	ctx := t.Context()
	db, _ := s.newDB(t)
	gt, lt, txt, empty, chk, sel2 := freshID(), freshID(), freshID(), freshID(), freshID(), freshID()
	s.addCols(t, db, [3]string{gt, "Gt", "number"}, [3]string{lt, "Lt", "number"}, [3]string{txt, "Txt", "text"},
		[3]string{empty, "Empty", "text"}, [3]string{chk, "Chk", "checkbox"}, [3]string{sel2, "Sel2", "select"})
	num := func(n float64) *siyuan.AVValue {
		return &siyuan.AVValue{Type: "number", Number: &siyuan.AVValueNumber{Content: n, IsNotEmpty: true}}
	}
	leaf := func(col, op string, v *siyuan.AVValue) *siyuan.AVViewFilter {
		return &siyuan.AVViewFilter{Column: col, Operator: op, Value: v}
	}
	filters := []*siyuan.AVViewFilter{{Combination: "and", Filters: []*siyuan.AVViewFilter{
		leaf(gt, ">", num(5)),
		leaf(txt, "Contains", &siyuan.AVValue{Type: "text", Text: &siyuan.AVValueContent{Content: "abc"}}),
		leaf(db.sel, "=", &siyuan.AVValue{Type: "select", MSelect: []*siyuan.AVValueSelect{{Content: "Done", Color: "4"}}}),
		{Combination: "or", Filters: []*siyuan.AVViewFilter{
			leaf(lt, "<", num(5)),
			leaf(chk, "Is true", &siyuan.AVValue{Type: "checkbox", Checkbox: &siyuan.AVValueCheckbox{}}),
			leaf(empty, "Is empty", &siyuan.AVValue{Type: "text", Text: &siyuan.AVValueContent{}}),
			leaf(sel2, "!=", &siyuan.AVValue{Type: "select", MSelect: []*siyuan.AVValueSelect{{Content: "X", Color: "2"}}}),
		}},
	}}}
	s.tx(t, siyuan.SetAttrViewFiltersOp(db.av, db.block, filters))
	item, bare := freshID(), freshID()
	must(t, "AddAttributeViewBlocks", s.c.AddAttributeViewBlocks(ctx, siyuan.AddAVBlocksRequest{AvID: db.av, BlockID: db.block,
		Srcs: []siyuan.AVSrc{{ItemID: item, Detached: true, Content: "new"}}}))
	must(t, "AddAttributeViewBlocks ignoreDefaultFill", s.c.AddAttributeViewBlocks(ctx, siyuan.AddAVBlocksRequest{AvID: db.av, BlockID: db.block,
		IgnoreDefaultFill: true, Srcs: []siyuan.AVSrc{{ItemID: bare, Detached: true, Content: "bare"}}}))

	cells := func(itemID string) string {
		av := s.storedAV(t, db.av)
		var out []string
		for _, kv := range av.KeyValues {
			for _, v := range kv.Values {
				if v.BlockID != itemID || kv.Key.Type == "block" {
					continue
				}
				var c string
				switch {
				case v.Number != nil:
					c = fmt.Sprintf("%g/%v", v.Number.Content, v.Number.IsNotEmpty)
				case v.Text != nil:
					c = fmt.Sprintf("%q", v.Text.Content)
				case v.Checkbox != nil:
					c = fmt.Sprint(v.Checkbox.Checked)
				case v.MSelect != nil:
					var opts []string
					for _, o := range v.MSelect {
						opts = append(opts, o.Content+"#"+o.Color)
					}
					c = "[" + strings.Join(opts, ",") + "]"
				}
				out = append(out, kv.Key.Name+"="+c)
			}
		}
		sort.Strings(out)
		return strings.Join(out, " ")
	}
	wantEqual(t, "defaults of a row added to the filtered view", cells(item),
		`Chk=true Empty="" Gt=6/true Lt=4/true Select=[Done#4] Txt="abc"`)
	wantEqual(t, "cells of a row added with ignoreDefaultFill", cells(bare), "")
}

// checkAVTwoWayDefault: a row added after another in a view filtered on a
// two-way relation copies that row's relation (a filter on a relation
// gives no value of its own), and the related database's back cell gains
// the new row, as when the cell is set.
func checkAVTwoWayDefault(t *testing.T, s *suite) {
	a, _ := s.newDB(t)
	b, _ := s.newDB(t)
	rel, back := freshID(), freshID()
	s.addCols(t, a, [3]string{rel, "Rel", "relation"})
	s.tx(t, siyuan.UpdateAttrViewColRelationOp(a.av, rel, "Rel", b.av, true, back, "Back"))
	bRows := s.detachedRows(t, b, "b0")
	aRows := s.detachedRows(t, a, "a0")
	s.setCells(t, a, [3]string{rel, aRows[0], `{"relation":{"blockIDs":["` + bRows[0] + `"]}}`})
	s.tx(t, siyuan.SetAttrViewFiltersOp(a.av, a.block, []*siyuan.AVViewFilter{{Combination: "and", Filters: []*siyuan.AVViewFilter{
		{Column: rel, Operator: "Is not empty", Value: &siyuan.AVValue{Type: "relation"}},
	}}}))
	item := freshID()
	must(t, "AddAttributeViewBlocks", s.c.AddAttributeViewBlocks(t.Context(), siyuan.AddAVBlocksRequest{AvID: a.av, BlockID: a.block,
		PreviousID: aRows[0], Srcs: []siyuan.AVSrc{{ItemID: item, Detached: true, Content: "new"}}}))
	requireOrder(t, "the new row's relation", relIDs(storedCell(s.storedAV(t, a.av), rel, item)), []string{bRows[0]})
	requireOrder(t, "the back cell", relIDs(storedCell(s.storedAV(t, b.av), back, bRows[0])), []string{aRows[0], item})
}
