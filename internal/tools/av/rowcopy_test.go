package av

import (
	"context"
	"slices"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// TestDuplicateRows: copies are detached rows with the source's text and
// cells, in order after previousID; a two-way relation links the copy
// back; a replay answers the same copies and makes no more; a drift of a
// source refuses the commit; wrong ids are refused at preflight.
func TestDuplicateRows(t *testing.T) {
	s := newFix(t)
	ctx := context.Background()
	s.setText(t, s.rows[0], "note one")
	other := s.MkDatabase(t, s.Doc)
	target := tooltest.NewID()
	if err := s.C.AddAttributeViewBlocks(ctx, siyuan.AddAVBlocksRequest{AvID: other.AV, BlockID: other.Block,
		Srcs: []siyuan.AVSrc{{ItemID: target, Detached: true, Content: "target"}}}); err != nil {
		t.Fatal(err)
	}
	rel := s.OK(t, "av", tooltest.CommitArgs(map[string]any{"action": "add_column", "avID": s.db.AV, "keyName": "Rel", "keyType": "relation", "relationAvID": other.AV, "isTwoWay": true},
		s.Preflight(t, "av", map[string]any{"action": "add_column", "avID": s.db.AV, "keyName": "Rel", "keyType": "relation", "relationAvID": other.AV, "isTwoWay": true}, "expectedStateHash", 2)))
	relKey, back := rel["columnID"].(string), rel["backKeyID"].(string)
	if _, err := s.C.SetAttributeViewBlockAttr(ctx, s.db.AV, relKey, s.rows[0], &siyuan.AVValue{Relation: &siyuan.AVValueRelation{BlockIDs: []string{target}}}); err != nil {
		t.Fatal(err)
	}
	order := s.state(t).Views[0].ItemIDs

	args := map[string]any{"action": "duplicate_rows", "avID": s.db.AV, "sourceRowIDs": []string{s.rows[0], s.rows[1]}, "previousID": order[0]}
	pre := s.Preflight(t, "av", args, "expectedStateHash", 1)
	res := s.Commit(t, "av", args, pre)
	copies := []string{}
	for _, c := range res["rowIDs"].([]any) {
		copies = append(copies, c.(string))
	}
	st := s.state(t)
	if len(copies) != 2 || len(st.Rows) != 4 {
		t.Fatalf("copies %v, rows %d", copies, len(st.Rows))
	}
	want := slices.Insert(slices.Clone(order), 1, copies...)
	if !slices.Equal(st.Views[0].ItemIDs, want) {
		t.Fatalf("order %v, want %v", st.Views[0].ItemIDs, want)
	}
	c0, _ := st.row(copies[0])
	if !c0.Detached || c0.Cells[s.db.Primary].Block.Content != "first" || c0.Cells[s.text].Text.Content != "note one" {
		t.Fatalf("copy %+v", c0)
	}
	if r, _ := dbOf(t, s.Fixture, other.AV).row(target); r.Cells[back] == nil || !slices.Equal(r.Cells[back].Relation.BlockIDs, []string{s.rows[0], copies[0]}) {
		t.Fatalf("back link %+v", r.Cells[back])
	}
	rep := s.Replay(t, "av", args, pre, res)
	if len(s.state(t).Rows) != 4 || rep["rowIDs"].([]any)[0] != copies[0] {
		t.Fatalf("replay made rows: %v", rep)
	}

	// No previousID: last, in order.
	args = map[string]any{"action": "duplicate_rows", "avID": s.db.AV, "sourceRowIDs": []string{s.rows[1], s.rows[0]}}
	res = s.Commit(t, "av", args, s.Preflight(t, "av", args, "expectedStateHash", 1))
	ids := s.state(t).Views[0].ItemIDs
	if got := ids[len(ids)-2:]; got[0] != res["rowIDs"].([]any)[0] || got[1] != res["rowIDs"].([]any)[1] {
		t.Fatalf("order %v, copies %v", ids, res["rowIDs"])
	}

	// A drift of a source refuses the commit.
	args = map[string]any{"action": "duplicate_rows", "avID": s.db.AV, "sourceRowIDs": []string{s.rows[0]}}
	pre = s.Preflight(t, "av", args, "expectedStateHash", 1)
	s.Drifted(t, "av", args, pre, func() { s.setText(t, s.rows[0], "changed") })

	// A row bound to a block, to refuse its block id.
	bound := tooltest.NewID()
	if err := s.C.AddAttributeViewBlocks(ctx, siyuan.AddAVBlocksRequest{AvID: s.db.AV, BlockID: s.db.Block, Srcs: []siyuan.AVSrc{{ItemID: bound, ID: s.Blocks[0]}}}); err != nil {
		t.Fatal(err)
	}
	av, err := s.C.GetAttributeView(ctx, s.db.AV)
	if err != nil {
		t.Fatal(err)
	}
	cellID := ""
	for _, kv := range av.KeyValues {
		if kv.Key.ID == s.text {
			cellID = kv.Values[0].ID
		}
	}
	for _, c := range []struct {
		args map[string]any
		code failure.Code
	}{
		{map[string]any{"sourceRowIDs": []string{}}, failure.InvalidArguments},
		{map[string]any{"sourceRowIDs": []string{tooltest.NewID()}}, failure.NotFound},
		{map[string]any{"sourceRowIDs": []string{s.Blocks[0]}}, failure.InvalidArguments}, // the bound block
		{map[string]any{"sourceRowIDs": []string{cellID}}, failure.InvalidArguments},      // a cell
		{map[string]any{"sourceRowIDs": []string{s.rows[0]}, "previousID": s.Blocks[0]}, failure.InvalidArguments},
		{map[string]any{"sourceRowIDs": []string{s.rows[0]}, "previousID": tooltest.NewID()}, failure.NotFound},
	} {
		a := tooltest.CopyArgs(c.args, "action", "duplicate_rows", "avID", s.db.AV, "validateOnly", true)
		s.WantErr(t, "av", a, c.code)
	}
}
