package av

import (
	"context"
	"slices"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// relFix is fix plus a second database (other, rows b0 b1 b2, a number
// column) in the same document, and in the first database an
// unconfigured relation column and a rollup column.
type relFix struct {
	*fix
	other  tooltest.Database
	bRows  []string
	num    string
	rel    string
	rollup string
}

func newRelFix(t *testing.T) *relFix {
	s := &relFix{fix: newFix(t)}
	ctx := context.Background()
	s.other = s.MkDatabase(t, s.Doc)
	s.num, s.rel, s.rollup = tooltest.NewID(), tooltest.NewID(), tooltest.NewID()
	if err := s.C.AddAttributeViewKey(ctx, siyuan.AddAVKeyRequest{AvID: s.other.AV, KeyID: s.num, KeyName: "Hours", KeyType: "number", PreviousKeyID: s.other.Select}); err != nil {
		t.Fatal(err)
	}
	for _, k := range [][3]string{{s.rel, "Rel", "relation"}, {s.rollup, "Total", "rollup"}} {
		if err := s.C.AddAttributeViewKey(ctx, siyuan.AddAVKeyRequest{AvID: s.db.AV, KeyID: k[0], KeyName: k[1], KeyType: k[2], PreviousKeyID: s.text}); err != nil {
			t.Fatal(err)
		}
	}
	s.bRows = []string{tooltest.NewID(), tooltest.NewID(), tooltest.NewID()}
	if err := s.C.AddAttributeViewBlocks(ctx, siyuan.AddAVBlocksRequest{AvID: s.other.AV, BlockID: s.other.Block, Srcs: []siyuan.AVSrc{
		{ItemID: s.bRows[0], Detached: true, Content: "b0"}, {ItemID: s.bRows[1], Detached: true, Content: "b1"}, {ItemID: s.bRows[2], Detached: true, Content: "b2"}}}); err != nil {
		t.Fatal(err)
	}
	return s
}

func (s *relFix) twoWay(back string) map[string]any {
	return map[string]any{"action": "configure_two_way_relation", "avID": s.db.AV, "blockID": s.db.Block, "keyID": s.rel,
		"destinationAvID": s.other.AV, "backRelationKeyID": back, "sourceName": "Tasks", "destinationName": "Projects"}
}

func (s *relFix) setRel(row string, ids ...string) map[string]any {
	if ids == nil {
		ids = []string{}
	}
	return map[string]any{"action": "set_relation", "avID": s.db.AV, "blockID": s.db.Block, "itemID": row, "keyID": s.rel, "relatedItemIDs": ids}
}

func hashesOf(t *testing.T, res map[string]any, ids ...string) {
	t.Helper()
	h, _ := res["hashes"].(map[string]any)
	for _, id := range ids {
		x, _ := h[id].(map[string]any)
		if x["previousHash"] == nil || x["previousHash"] == x["resultHash"] {
			t.Fatalf("hashes of %s: %v", id, h)
		}
	}
}

// TestConfigureTwoWayRelation: a one-way relation with a linked cell made
// two-way creates the back column, linking back the rows already linked;
// both databases' hashes are answered; replay and drift; refusals.
func TestConfigureTwoWayRelation(t *testing.T) {
	s := newRelFix(t)
	ctx := context.Background()
	// One-way first, with a linked cell.
	if _, err := s.C.Transactions(ctx, []siyuan.Transaction{{DoOperations: []siyuan.Operation{
		siyuan.UpdateAttrViewColRelationOp(s.db.AV, s.rel, "Rel", s.other.AV, false, "", "")}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.C.SetAttributeViewBlockAttr(ctx, s.db.AV, s.rel, s.rows[0], &siyuan.AVValue{Relation: &siyuan.AVValueRelation{BlockIDs: []string{s.bRows[0], s.bRows[1]}}}); err != nil {
		t.Fatal(err)
	}
	back := tooltest.NewID()
	args := s.twoWay(back)
	pre := s.Preflight(t, "av", args, "expectedStateHash", 2)
	res := s.Commit(t, "av", args, pre)
	hashesOf(t, res, s.db.AV, s.other.AV)
	if res["backKeyCreated"] != true {
		t.Fatalf("answer %v", res)
	}
	a, b := s.state(t), dbOf(t, s.Fixture, s.other.AV)
	if k, _ := a.key(s.rel); k.Name != "Tasks" || *k.Relation != (siyuan.AVRelation{AvID: s.other.AV, IsTwoWay: true, BackKeyID: back}) {
		t.Fatalf("relation key %+v", k)
	}
	if k, _ := b.key(back); k.Name != "Projects" || k.Relation == nil || *k.Relation != (siyuan.AVRelation{AvID: s.db.AV, IsTwoWay: true, BackKeyID: s.rel}) {
		t.Fatalf("back key %+v", k)
	}
	for _, id := range s.bRows[:2] {
		if r, _ := b.row(id); !slices.Equal(relationOf(r.Cells[back]), []string{s.rows[0]}) {
			t.Fatalf("back link of %s: %+v", id, r.Cells[back])
		}
	}
	s.Replay(t, "av", args, pre, res)

	// Renaming both sides again (the back column exists now); a drift
	// on the other side is state_changed.
	again := tooltest.CopyArgs(args, "sourceName", "Tasks2", "destinationName", "Projects2")
	pre = s.Preflight(t, "av", again, "expectedStateHash", 2)
	s.Drifted(t, "av", again, pre, func() {
		s.C.Transactions(ctx, []siyuan.Transaction{{DoOperations: []siyuan.Operation{siyuan.SetAttrViewNameOp(s.other.AV, "drift")}}})
	})
	res = s.Commit(t, "av", again, s.Preflight(t, "av", again, "expectedStateHash", 2))
	if res["backKeyCreated"] != false {
		t.Fatalf("answer %v", res)
	}
	if k, _ := dbOf(t, s.Fixture, s.other.AV).key(back); k.Name != "Projects2" {
		t.Fatalf("back key %+v", k)
	}

	for _, c := range []struct {
		name string
		args map[string]any
		code failure.Code
	}{
		{"not a relation key", tooltest.CopyArgs(args, "keyID", s.text), failure.InvalidArguments},
		{"no such key", tooltest.CopyArgs(args, "keyID", tooltest.NewID()), failure.NotFound},
		{"back key of another type", tooltest.CopyArgs(args, "backRelationKeyID", s.num), failure.InvalidArguments},
		{"no such destination", tooltest.CopyArgs(args, "destinationAvID", tooltest.NewID()), failure.NotFound},
		{"empty name", tooltest.CopyArgs(args, "sourceName", " "), failure.InvalidArguments},
		{"back key is the key", tooltest.CopyArgs(args, "destinationAvID", s.db.AV, "backRelationKeyID", s.rel), failure.InvalidArguments},
		{"blockID not showing it", tooltest.CopyArgs(args, "blockID", s.other.Block), failure.InvalidArguments},
		{"destinationBlockID not showing it", tooltest.CopyArgs(args, "destinationBlockID", s.db.Block), failure.InvalidArguments},
		// Re-pointing a relation whose cells link rows of its database.
		{"cells link the old database", tooltest.CopyArgs(args, "destinationAvID", s.db.AV, "backRelationKeyID", tooltest.NewID()), failure.InvalidArguments},
	} {
		if e := s.WantErr(t, "av", tooltest.CopyArgs(c.args, "validateOnly", true), c.code); e.WriteAttempted == nil || *e.WriteAttempted {
			t.Errorf("%s: %+v", c.name, e)
		}
	}
	s.OK(t, "av", tooltest.CopyArgs(args, "destinationBlockID", s.other.Block, "validateOnly", true))
}

// TestConfigureRollup: a rollup configured with SiYuan's calc; a filter
// on it is dropped by SiYuan and said so; refusals of a key of the wrong
// type, a destination key the related database lacks, a bad calc.
func TestConfigureRollup(t *testing.T) {
	s := newRelFix(t)
	ctx := context.Background()
	if _, err := s.C.Transactions(ctx, []siyuan.Transaction{{DoOperations: []siyuan.Operation{
		siyuan.UpdateAttrViewColRelationOp(s.db.AV, s.rel, "Rel", s.other.AV, false, "", ""),
		siyuan.SetAttrViewFiltersOp(s.db.AV, s.db.Block, []*siyuan.AVViewFilter{{Combination: "and", Filters: []*siyuan.AVViewFilter{
			{Column: s.rollup, Operator: "Is not empty", Value: &siyuan.AVValue{Type: "rollup"}},
			{Combination: "or", Filters: []*siyuan.AVViewFilter{{Column: s.rollup, Operator: "Is empty", Value: &siyuan.AVValue{Type: "rollup"}}}},
			{Column: s.text, Operator: "Contains", Value: &siyuan.AVValue{Type: "text", Text: &siyuan.AVValueContent{Content: "x"}}},
		}}})}}}); err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"action": "configure_rollup", "avID": s.db.AV, "blockID": s.db.Block, "keyID": s.rollup, "relationKeyID": s.rel,
		"destinationKeyID": s.num, "calc": map[string]any{"operator": "Sum"}}
	pre := s.Preflight(t, "av", args, "expectedStateHash", 1)
	res := s.Commit(t, "av", args, pre)
	if fr, _ := res["filtersRemoved"].([]any); len(fr) != 1 {
		t.Fatalf("answer %v", res)
	}
	st := s.state(t)
	if k, _ := st.key(s.rollup); k.Rollup == nil || *k.Rollup != (rollupState{RelationKeyID: s.rel, KeyID: s.num, Operator: "Sum"}) {
		t.Fatalf("rollup %+v", k.Rollup)
	}
	if f := st.Views[0].Filters; len(f) != 1 || len(f[0].Filters) != 1 || f[0].Filters[0].Column != s.text {
		t.Fatalf("filters %s", tooltest.AsJSON(t, map[string]any{"f": f}))
	}
	s.Replay(t, "av", args, pre, res)
	again := tooltest.CopyArgs(args, "calc", map[string]any{"operator": ""})
	pre = s.Preflight(t, "av", again, "expectedStateHash", 1)
	s.Drifted(t, "av", again, pre, func() { s.setText(t, s.rows[0], "drift") })

	for _, c := range []struct {
		name string
		args map[string]any
		code failure.Code
	}{
		{"not a rollup key", tooltest.CopyArgs(args, "keyID", s.text), failure.InvalidArguments},
		{"not a relation key", tooltest.CopyArgs(args, "relationKeyID", s.text), failure.InvalidArguments},
		{"destination key not there", tooltest.CopyArgs(args, "destinationKeyID", s.text), failure.NotFound},
		{"unknown operator", tooltest.CopyArgs(args, "calc", map[string]any{"operator": "Total"}), failure.InvalidArguments},
		{"no operator", tooltest.CopyArgs(args, "calc", map[string]any{}), failure.InvalidArguments},
		{"a result", tooltest.CopyArgs(args, "calc", map[string]any{"operator": "Sum", "result": nil}), failure.InvalidArguments},
	} {
		if e := s.WantErr(t, "av", tooltest.CopyArgs(c.args, "validateOnly", true), c.code); e.WriteAttempted == nil || *e.WriteAttempted {
			t.Errorf("%s: %+v", c.name, e)
		}
	}
}

// TestSetRelation: set_relation links rows of the other database, which
// link back; shrinking drops the back links; [] empties; refusals of a
// bound block id for a row, related ids not rows there, a mixed change of
// a two-way relation; a destination in a read-only notebook.
func TestSetRelation(t *testing.T) {
	s := newRelFix(t)
	back := tooltest.NewID()
	s.Commit(t, "av", s.twoWay(back), s.Preflight(t, "av", s.twoWay(back), "expectedStateHash", 2))
	b0, b1, b2 := s.bRows[0], s.bRows[1], s.bRows[2]
	backOf := func(id string) []string {
		r, _ := dbOf(t, s.Fixture, s.other.AV).row(id)
		return relationOf(r.Cells[back])
	}
	set := s.setRel(s.rows[0], b0, b1, b0)
	pre := s.Preflight(t, "av", set, "expectedStateHash", 1)
	res := s.Commit(t, "av", set, pre)
	hashesOf(t, res, s.db.AV, s.other.AV)
	if r, _ := s.state(t).row(s.rows[0]); !slices.Equal(relationOf(r.Cells[s.rel]), []string{b0, b1}) {
		t.Fatalf("relation %+v", r.Cells[s.rel])
	}
	if !slices.Equal(backOf(b0), []string{s.rows[0]}) || !slices.Equal(backOf(b1), []string{s.rows[0]}) {
		t.Fatalf("back links %v %v", backOf(b0), backOf(b1))
	}
	s.Replay(t, "av", set, pre, res)

	// A mixed change is refused; shrinking drops b1's back link.
	s.WantErr(t, "av", tooltest.CopyArgs(s.setRel(s.rows[0], b0, b2), "validateOnly", true), failure.InvalidArguments)
	shrink := s.setRel(s.rows[0], b0)
	pre = s.Preflight(t, "av", shrink, "expectedStateHash", 1)
	s.Drifted(t, "av", shrink, pre, func() {
		if err := s.C.BatchSetAttributeViewBlockAttrs(context.Background(), s.other.AV, []siyuan.AVCellUpdate{{KeyID: s.num, ItemID: b1,
			Value: &siyuan.AVValue{Number: &siyuan.AVValueNumber{Content: 3, IsNotEmpty: true}}}}); err != nil {
			t.Fatal(err)
		}
	})
	s.Commit(t, "av", shrink, s.Preflight(t, "av", shrink, "expectedStateHash", 1))
	if len(backOf(b1)) != 0 || !slices.Equal(backOf(b0), []string{s.rows[0]}) {
		t.Fatalf("back links after shrinking %v %v", backOf(b0), backOf(b1))
	}
	clear := s.setRel(s.rows[0])
	s.Commit(t, "av", clear, s.Preflight(t, "av", clear, "expectedStateHash", 1))
	if r, _ := s.state(t).row(s.rows[0]); len(relationOf(r.Cells[s.rel])) != 0 || len(backOf(b0)) != 0 {
		t.Fatalf("cleared %+v %v", r.Cells[s.rel], backOf(b0))
	}

	// A bound row: its block is not its item id.
	bound := s.MkDoc(t, s.NB, "/Bound", "bound")
	item := tooltest.NewID()
	if err := s.C.AddAttributeViewBlocks(context.Background(), siyuan.AddAVBlocksRequest{AvID: s.db.AV, BlockID: s.db.Block,
		Srcs: []siyuan.AVSrc{{ID: bound, ItemID: item}}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args map[string]any
		code failure.Code
	}{
		{"bound block as itemID", s.setRel(bound, b0), failure.InvalidArguments},
		{"no such row", s.setRel(tooltest.NewID(), b0), failure.NotFound},
		{"related id not a row there", s.setRel(s.rows[1], s.rows[0]), failure.NotFound},
		{"not a relation key", tooltest.CopyArgs(s.setRel(s.rows[1], b0), "keyID", s.text), failure.InvalidArguments},
	} {
		if e := s.WantErr(t, "av", tooltest.CopyArgs(c.args, "validateOnly", true), c.code); e.WriteAttempted == nil || *e.WriteAttempted {
			t.Errorf("%s: %+v", c.name, e)
		}
	}
	s.OK(t, "av", tooltest.CopyArgs(s.setRel(item, b2), "validateOnly", true))

	// The related database in a read-only notebook: a two-way relation's
	// writes are refused there, a read is enough for a rollup.
	nb2, err := s.C.CreateNotebook(context.Background(), "Other")
	if err != nil {
		t.Fatal(err)
	}
	third := s.MkDatabase(t, s.MkDoc(t, nb2.ID, "/Third", "x"))
	s.Policy = &tools.Policy{Notebooks: map[string]tools.Level{nb2.ID: tools.LevelRead}, Default: tools.LevelDelete, AllActions: true, Strict: true, Version: "ro-other"}
	defer func() { s.Policy = nil }()
	tw := tooltest.CopyArgs(s.twoWay(tooltest.NewID()), "keyID", back, "destinationAvID", third.AV, "validateOnly", true)
	tw["avID"], tw["blockID"] = s.other.AV, s.other.Block
	s.WantErr(t, "av", tw, failure.PermissionDenied)
}
