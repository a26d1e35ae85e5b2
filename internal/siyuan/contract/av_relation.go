package contract

// Databases: relations between two databases (two-way, with the back
// links the kernel keeps) and rollups over them.

import (
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// relatedDBs makes databases A (rows a0, a1) and B (rows b0, b1, b2 with a
// number column) and a two-way relation key rel in A whose back key in B
// is back.
type relatedDBs struct {
	a, b      avDB
	aRows     []string
	bRows     []string
	rel, back string
	bNum      string
}

func (s *suite) relatedDBs(t *testing.T) relatedDBs {
	t.Helper()
	var x relatedDBs
	x.a, _ = s.newDB(t)
	x.b, _ = s.newDB(t)
	s.tx(t, siyuan.SetAttrViewNameOp(x.a.av, "Projects"), siyuan.SetAttrViewNameOp(x.b.av, "Tasks"))
	x.bNum, x.rel, x.back = freshID(), freshID(), freshID()
	s.addCols(t, x.b, [3]string{x.bNum, "Hours", "number"})
	s.addCols(t, x.a, [3]string{x.rel, "Relation", "relation"})
	s.tx(t, siyuan.UpdateAttrViewColRelationOp(x.a.av, x.rel, "Tasks", x.b.av, true, x.back, ""))
	x.aRows = s.detachedRows(t, x.a, "a0", "a1")
	x.bRows = s.detachedRows(t, x.b, "b0", "b1", "b2")
	s.setCells(t, x.b,
		[3]string{x.bNum, x.bRows[0], `{"number":{"content":10,"isNotEmpty":true}}`},
		[3]string{x.bNum, x.bRows[1], `{"number":{"content":2.5,"isNotEmpty":true}}`})
	return x
}

func relIDs(v *siyuan.AVValue) []string {
	if v == nil || v.Relation == nil {
		return nil
	}
	return v.Relation.BlockIDs
}

// checkAVRelation: setting up a two-way relation names the relation key
// and creates the back key in the other database ("<name> <key name>");
// relation cells store item IDs (duplicates dropped) and render the
// related rows' primary keys; the other side gains and loses back links,
// decided by the number of IDs alone.
func checkAVRelation(t *testing.T, s *suite) {
	x := s.relatedDBs(t)
	a, b := s.storedAV(t, x.a.av), s.storedAV(t, x.b.av)
	rk, bk := storedKey(a, x.rel), storedKey(b, x.back)
	if rk.Name != "Tasks" || rk.Relation == nil || *rk.Relation != (siyuan.AVRelation{AvID: x.b.av, IsTwoWay: true, BackKeyID: x.back}) {
		t.Fatalf("relation key = %+v %+v", rk, rk.Relation)
	}
	if bk == nil || bk.Name != "Projects Tasks" || bk.Type != "relation" || bk.Relation == nil ||
		*bk.Relation != (siyuan.AVRelation{AvID: x.a.av, IsTwoWay: true, BackKeyID: x.rel}) {
		t.Fatalf("back key = %+v", bk)
	}
	requireOrder(t, "B's view columns", viewColumns(b.Views[0]), []string{x.b.pk, x.b.sel, x.bNum, x.back})

	a0, a1 := x.aRows[0], x.aRows[1]
	b0, b1, b2 := x.bRows[0], x.bRows[1], x.bRows[2]
	s.setCells(t, x.a, [3]string{x.rel, a0, `{"relation":{"blockIDs":["` + b0 + `","` + b1 + `","` + b0 + `"]}}`})
	a, b = s.storedAV(t, x.a.av), s.storedAV(t, x.b.av)
	v := storedCell(a, x.rel, a0)
	requireOrder(t, "stored relation", relIDs(v), []string{b0, b1})
	if v.Relation.Contents != nil {
		t.Fatalf("relation contents stored: %+v", v.Relation.Contents)
	}
	requireOrder(t, "back link of b0", relIDs(storedCell(b, x.back, b0)), []string{a0})
	requireOrder(t, "back link of b1", relIDs(storedCell(b, x.back, b1)), []string{a0})
	if storedCell(b, x.back, b2) != nil {
		t.Fatal("b2 got a back link")
	}

	ra := s.render(t, siyuan.RenderAVRequest{ID: x.a.av})
	names := map[string]string{b0: "B0", b1: "B1", b2: "B2", a0: "A0", a1: "A1"}
	wantEqual(t, "rendered relation", cellText(cellOf(t, ra, a0, x.rel).Value, names),
		`{"type":"relation","relation":{"blockIDs":["B0","B1"],"contents":[{"blockID":"B0","type":"block","block":{"content":"b0"}},{"blockID":"B1","type":"block","block":{"content":"b1"}}]}}`)
	wantEqual(t, "rendered unset relation", cellText(cellOf(t, ra, a1, x.rel).Value, names), `{"type":"relation","relation":{"blockIDs":null,"contents":null}}`)
	rb := s.render(t, siyuan.RenderAVRequest{ID: x.b.av})
	wantEqual(t, "rendered back relation", cellText(cellOf(t, rb, b1, x.back).Value, names),
		`{"type":"relation","relation":{"blockIDs":["A0"],"contents":[{"blockID":"A0","type":"block","block":{"content":"a0"}}]}}`)

	// Adding a row saves the database as rendered: the relation's
	// contents are then stored too.
	s.detachedRows(t, x.a, "a2")
	if v := storedCell(s.storedAV(t, x.a.av), x.rel, a0); len(v.Relation.Contents) != 2 || v.Relation.Contents[1].BlockID != b1 {
		t.Fatalf("stored relation after a row was added = %+v", v.Relation)
	}
	// Fewer IDs: the dropped row loses its back link.
	s.setCells(t, x.a, [3]string{x.rel, a0, `{"relation":{"blockIDs":["` + b0 + `"]}}`})
	b = s.storedAV(t, x.b.av)
	requireOrder(t, "back link of b1 after removal", relIDs(storedCell(b, x.back, b1)), []string{})
	requireOrder(t, "back link of b0 kept", relIDs(storedCell(b, x.back, b0)), []string{a0})
	// As many IDs, another row: counted as an addition, so b0 keeps a back
	// link that no longer holds.
	s.setCells(t, x.a, [3]string{x.rel, a0, `{"relation":{"blockIDs":["` + b2 + `"]}}`})
	b = s.storedAV(t, x.b.av)
	requireOrder(t, "b2 gains a back link", relIDs(storedCell(b, x.back, b2)), []string{a0})
	requireOrder(t, "b0 keeps a stale back link", relIDs(storedCell(b, x.back, b0)), []string{a0})
	// The back side works the same way the other way round.
	s.setCells(t, x.b, [3]string{x.back, b1, `{"relation":{"blockIDs":["` + a1 + `"]}}`})
	requireOrder(t, "forward link from the back side", relIDs(storedCell(s.storedAV(t, x.a.av), x.rel, a1)), []string{b1})

	// Removing the relation key with removeDest removes the back key too;
	// without, the back key becomes one-way.
	s.tx(t, siyuan.RemoveAttrViewColOp(x.a.av, x.rel, false))
	b = s.storedAV(t, x.b.av)
	if bk := storedKey(b, x.back); bk == nil || bk.Relation == nil || bk.Relation.IsTwoWay || bk.Relation.BackKeyID != "" || bk.Relation.AvID != x.a.av {
		t.Fatalf("back key after removing the relation = %+v", bk)
	}
	if storedKey(s.storedAV(t, x.a.av), x.rel) != nil {
		t.Fatal("relation key not removed")
	}
}

// checkAVRollup: a rollup shows the related rows' values of a column of
// the other database (numbers in that column's format), or its operator's
// result: Sum of no row is 0.
func checkAVRollup(t *testing.T, s *suite) {
	x := s.relatedDBs(t)
	sum, vals, count := freshID(), freshID(), freshID()
	s.addCols(t, x.a, [3]string{sum, "Sum", "rollup"}, [3]string{vals, "Values", "rollup"}, [3]string{count, "Count", "rollup"})
	s.tx(t, siyuan.UpdateAttrViewColRollupOp(x.a.av, sum, x.rel, x.bNum, "Sum"),
		siyuan.UpdateAttrViewColRollupOp(x.a.av, vals, x.rel, x.bNum, ""),
		siyuan.UpdateAttrViewColRollupOp(x.a.av, count, x.rel, x.b.pk, "Count all"),
		siyuan.UpdateAttrViewColNumberFormatOp(x.b.av, x.bNum, "USD"))
	k := storedKey(s.storedAV(t, x.a.av), sum)
	if k.Rollup == nil || k.Rollup.RelationKeyID != x.rel || k.Rollup.KeyID != x.bNum || k.Rollup.Calc == nil || k.Rollup.Calc.Operator != "Sum" {
		t.Fatalf("rollup key = %+v", k.Rollup)
	}
	a0, a1 := x.aRows[0], x.aRows[1]
	s.setCells(t, x.a, [3]string{x.rel, a0, `{"relation":{"blockIDs":["` + x.bRows[0] + `","` + x.bRows[1] + `","` + x.bRows[2] + `"]}}`})
	r := s.render(t, siyuan.RenderAVRequest{ID: x.a.av})
	rollup := func(item, key string) string {
		v := cellOf(t, r, item, key).Value
		if v.Type != "rollup" || v.Rollup == nil {
			t.Fatalf("rollup cell = %+v", v)
		}
		var out []string
		for _, c := range v.Rollup.Contents {
			if c.Number == nil {
				out = append(out, c.Type+"?")
				continue
			}
			out = append(out, c.Type+":"+c.Number.FormattedContent)
		}
		return "[" + joinComma(out) + "]"
	}
	wantEqual(t, "sum", rollup(a0, sum), "[number:$12.50]")
	wantEqual(t, "values", rollup(a0, vals), "[number:$10.00,number:$2.50]")
	wantEqual(t, "count all", rollup(a0, count), "[number:3]")
	wantEqual(t, "sum of no rows", rollup(a1, sum), "[number:$0.00]")
	wantEqual(t, "values of no rows", rollup(a1, vals), "[]")
	// A rollup of a template column reads a render of the other
	// database's first view.
	tpl, rollTpl, unique := freshID(), freshID(), freshID()
	s.addCols(t, x.b, [3]string{tpl, "Label", "template"})
	s.addCols(t, x.a, [3]string{rollTpl, "Labels", "rollup"}, [3]string{unique, "Unique", "rollup"})
	s.setCells(t, x.b, [3]string{x.bNum, x.bRows[2], `{"number":{"content":10,"isNotEmpty":true}}`})
	s.tx(t, siyuan.UpdateAttrViewColTemplateOp(x.b.av, tpl, `L.action{.Hours}`),
		siyuan.UpdateAttrViewColRollupOp(x.a.av, rollTpl, x.rel, tpl, ""),
		siyuan.UpdateAttrViewColRollupOp(x.a.av, unique, x.rel, x.bNum, "Count unique values"))
	r = s.render(t, siyuan.RenderAVRequest{ID: x.a.av})
	var labels []string
	for _, c := range cellOf(t, r, a0, rollTpl).Value.Rollup.Contents {
		labels = append(labels, c.Type+":"+c.Template.Content)
	}
	wantEqual(t, "rollup of a template", joinComma(labels), "template:L10,template:L2.5,template:L10")
	wantEqual(t, "count unique values", rollup(a0, unique), "[number:2]")
	// The stored rollup key has no stored values.
	if v := storedCell(s.storedAV(t, x.a.av), sum, a0); v != nil {
		t.Fatalf("a rollup value was stored: %+v", v)
	}
}

func joinComma(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ","
		}
		out += x
	}
	return out
}

// checkAVRelationSelf: a two-way relation of a database to itself keeps
// both keys in the one database; removing one with removeDest removes the
// other too.
func checkAVRelationSelf(t *testing.T, s *suite) {
	db, _ := s.newDB(t)
	s.tx(t, siyuan.SetAttrViewNameOp(db.av, "Self"))
	rel, back := freshID(), freshID()
	s.addCols(t, db, [3]string{rel, "Parent", "relation"})
	s.tx(t, siyuan.UpdateAttrViewColRelationOp(db.av, rel, "Parent", db.av, true, back, "Children"))
	items := s.detachedRows(t, db, "child", "parent")
	s.setCells(t, db, [3]string{rel, items[0], `{"relation":{"blockIDs":["` + items[1] + `"]}}`})
	av := s.storedAV(t, db.av)
	requireOrder(t, "keys", keyNames(av), []string{"Primary Key:block", "Select:select", "Parent:relation", "Children:relation"})
	requireOrder(t, "back link", relIDs(storedCell(av, back, items[1])), []string{items[0]})
	r := s.render(t, siyuan.RenderAVRequest{ID: db.av})
	names := map[string]string{items[0]: "C", items[1]: "P"}
	wantEqual(t, "children of the parent", cellText(cellOf(t, r, items[1], back).Value, names),
		`{"type":"relation","relation":{"blockIDs":["C"],"contents":[{"blockID":"C","type":"block","block":{"content":"child"}}]}}`)
	s.tx(t, siyuan.RemoveAttrViewColOp(db.av, rel, true))
	requireOrder(t, "keys after removeDest", keyNames(s.storedAV(t, db.av)), []string{"Primary Key:block", "Select:select"})
	requireOrder(t, "columns after removeDest", viewColumns(s.storedAV(t, db.av).Views[0]), []string{db.pk, db.sel})
}
