package contract

// Databases: what configuring an existing relation or rollup column does
// (av.configure_two_way_relation and av.configure_rollup rely on it).

import (
	"encoding/json"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// checkAVRelationReconfigured: a one-way relation made two-way with a new
// back key renames the relation key, creates the back key (last in the
// table view) and links back every row its cells link; configured again
// with that back key existing, both keys are renamed and the links stay
// as they are (none is added for a cell set meanwhile on the one side
// while the relation was one-way).
func checkAVRelationReconfigured(t *testing.T, s *suite) {
	a, _ := s.newDB(t)
	b, _ := s.newDB(t)
	s.tx(t, siyuan.SetAttrViewNameOp(a.av, "A"), siyuan.SetAttrViewNameOp(b.av, "B"))
	rel, back := freshID(), freshID()
	s.addCols(t, a, [3]string{rel, "Rel", "relation"})
	s.tx(t, siyuan.UpdateAttrViewColRelationOp(a.av, rel, "Rel", b.av, false, "", ""))
	aRows := s.detachedRows(t, a, "a0", "a1")
	bRows := s.detachedRows(t, b, "b0", "b1")
	s.setCells(t, a, [3]string{rel, aRows[0], `{"relation":{"blockIDs":["` + bRows[0] + `","` + bRows[1] + `"]}}`},
		[3]string{rel, aRows[1], `{"relation":{"blockIDs":["` + bRows[1] + `"]}}`})
	if storedKey(s.storedAV(t, b.av), back) != nil {
		t.Fatal("a one-way relation made a back key")
	}
	s.tx(t, siyuan.UpdateAttrViewColRelationOp(a.av, rel, "Tasks", b.av, true, back, "Projects"))
	sa, sb := s.storedAV(t, a.av), s.storedAV(t, b.av)
	if k := storedKey(sa, rel); k.Name != "Tasks" || *k.Relation != (siyuan.AVRelation{AvID: b.av, IsTwoWay: true, BackKeyID: back}) {
		t.Fatalf("relation key = %+v %+v", k, k.Relation)
	}
	if k := storedKey(sb, back); k == nil || k.Name != "Projects" || *k.Relation != (siyuan.AVRelation{AvID: a.av, IsTwoWay: true, BackKeyID: rel}) {
		t.Fatalf("back key = %+v", k)
	}
	requireOrder(t, "B's view columns", viewColumns(sb.Views[0]), []string{b.pk, b.sel, back})
	requireOrder(t, "back link of b0", relIDs(storedCell(sb, back, bRows[0])), []string{aRows[0]})
	requireOrder(t, "back link of b1", relIDs(storedCell(sb, back, bRows[1])), []string{aRows[0], aRows[1]})

	// Made one-way, a cell set; two-way again with the back key there:
	// renamed, no link added.
	s.tx(t, siyuan.UpdateAttrViewColRelationOp(a.av, rel, "Tasks", b.av, false, back, ""))
	if k := storedKey(s.storedAV(t, b.av), back); k.Relation == nil || k.Relation.IsTwoWay || k.Relation.BackKeyID != "" {
		t.Fatalf("back key made one-way = %+v", k.Relation)
	}
	s.setCells(t, a, [3]string{rel, aRows[1], `{"relation":{"blockIDs":["` + bRows[0] + `","` + bRows[1] + `"]}}`})
	s.tx(t, siyuan.UpdateAttrViewColRelationOp(a.av, rel, "Tasks2", b.av, true, back, "Projects2"))
	sa, sb = s.storedAV(t, a.av), s.storedAV(t, b.av)
	if k := storedKey(sa, rel); k.Name != "Tasks2" || !k.Relation.IsTwoWay {
		t.Fatalf("relation key = %+v", k)
	}
	if k := storedKey(sb, back); k.Name != "Projects2" || *k.Relation != (siyuan.AVRelation{AvID: a.av, IsTwoWay: true, BackKeyID: rel}) {
		t.Fatalf("back key = %+v", k)
	}
	requireOrder(t, "back link of b0 unchanged", relIDs(storedCell(sb, back, bRows[0])), []string{aRows[0]})
}

// checkAVRollupReconfiguredFilters: configuring a rollup drops the
// filter leaves on it at every depth and every group left empty; a view
// left without filters (or without any before) gets an empty AND root.
func checkAVRollupReconfiguredFilters(t *testing.T, s *suite) {
	x := s.relatedDBs(t)
	roll, text := freshID(), freshID()
	s.addCols(t, x.a, [3]string{roll, "Total", "rollup"}, [3]string{text, "Notes", "text"})
	leaf := func(col, op, typ string) *siyuan.AVViewFilter {
		return &siyuan.AVViewFilter{Column: col, Operator: op, Value: &siyuan.AVValue{Type: typ}}
	}
	s.tx(t, siyuan.SetAttrViewFiltersOp(x.a.av, x.a.block, []*siyuan.AVViewFilter{{Combination: "and", Filters: []*siyuan.AVViewFilter{
		leaf(roll, "Is not empty", "rollup"),
		{Combination: "or", Filters: []*siyuan.AVViewFilter{leaf(roll, "Is empty", "rollup")}},
		leaf(text, "Is not empty", "text"),
	}}}))
	s.tx(t, siyuan.Operation{Action: "updateAttrViewColRollup", AvID: x.a.av, ID: roll, ParentID: x.rel, KeyID: x.bNum,
		Data: map[string]any{"calc": map[string]any{"operator": "Sum"}}})
	av := s.storedAV(t, x.a.av)
	k := storedKey(av, roll)
	if k.Rollup == nil || k.Rollup.RelationKeyID != x.rel || k.Rollup.KeyID != x.bNum || k.Rollup.Calc == nil || k.Rollup.Calc.Operator != "Sum" {
		t.Fatalf("rollup = %+v", k.Rollup)
	}
	f := av.Views[0].Filters
	if len(f) != 1 || f[0].Combination != "and" || len(f[0].Filters) != 1 || f[0].Filters[0].Column != text {
		raw, _ := json.Marshal(f)
		t.Fatalf("filters after = %s", raw)
	}
	// Only the rollup's filters gone: the root stays an empty AND group.
	s.tx(t, siyuan.SetAttrViewFiltersOp(x.a.av, x.a.block, []*siyuan.AVViewFilter{{Combination: "and", Filters: []*siyuan.AVViewFilter{leaf(roll, "Is empty", "rollup")}}}))
	s.tx(t, siyuan.Operation{Action: "updateAttrViewColRollup", AvID: x.a.av, ID: roll, ParentID: x.rel, KeyID: x.bNum,
		Data: map[string]any{"calc": map[string]any{"operator": ""}}})
	av = s.storedAV(t, x.a.av)
	if f := av.Views[0].Filters; len(f) != 1 || f[0].Combination != "and" || len(f[0].Filters) != 0 || f[0].Column != "" {
		raw, _ := json.Marshal(f)
		t.Fatalf("filters after removing the last = %s", raw)
	}
	if k := storedKey(av, roll); k.Rollup.Calc == nil || k.Rollup.Calc.Operator != "" {
		t.Fatalf("rollup calc = %+v", k.Rollup.Calc)
	}
}
