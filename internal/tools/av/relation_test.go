package av

import (
	"context"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// TestRelationRollupTemplateColumns: a two-way relation answers the
// preimage and postimage hashes of both databases (aliases, different
// before and after on both sides), a rollup and a template column answer
// theirs; each is exactly the requested change.
func TestRelationRollupTemplateColumns(t *testing.T) {
	s := newFix(t)
	other := s.MkDatabase(t, s.Doc)
	num := tooltest.NewID()
	if err := s.C.AddAttributeViewKey(context.Background(), siyuan.AddAVKeyRequest{AvID: other.AV, KeyID: num, KeyName: "Hours", KeyType: "number", PreviousKeyID: other.Select}); err != nil {
		t.Fatal(err)
	}
	rel := map[string]any{"action": "add_column", "avID": s.db.AV, "keyName": "Tasks", "keyType": "relation", "relationAvID": other.AV, "isTwoWay": true, "backKeyName": "Projects"}
	pre := s.Preflight(t, "av", rel, "expectedStateHash", 2)
	res := s.Commit(t, "av", rel, pre)
	relKey, back := res["columnID"].(string), res["backKeyID"].(string)
	hashes, _ := res["hashes"].(map[string]any)
	for _, id := range []string{s.db.AV, other.AV} {
		h, _ := hashes[id].(map[string]any)
		p, _ := h["previousHash"].(string)
		r, _ := h["resultHash"].(string)
		if len(p) < 4 || len(r) < 4 || p == r {
			t.Fatalf("hashes of %s: %v", id, hashes)
		}
	}
	a, b := s.state(t), dbOf(t, s.Fixture, other.AV)
	if k, _ := a.key(relKey); k.Relation == nil || *k.Relation != (siyuan.AVRelation{AvID: other.AV, IsTwoWay: true, BackKeyID: back}) {
		t.Fatalf("relation key %+v", k)
	}
	if k, ok := b.key(back); !ok || k.Name != "Projects" || k.Relation == nil || k.Relation.BackKeyID != relKey {
		t.Fatalf("back key %+v", k)
	}
	rep := s.Replay(t, "av", rel, pre, res)
	if rep["hashes"].(map[string]any)[other.AV].(map[string]any)["resultHash"] != hashes[other.AV].(map[string]any)["resultHash"] {
		t.Fatalf("replay hashes %v", rep["hashes"])
	}

	roll := map[string]any{"action": "add_column", "avID": s.db.AV, "keyName": "Total", "keyType": "rollup", "rollupRelationKeyID": relKey, "rollupKeyID": num, "rollupOperator": "Sum"}
	res = s.Commit(t, "av", roll, s.Preflight(t, "av", roll, "expectedStateHash", 1))
	if k, _ := s.state(t).key(res["columnID"].(string)); k.Rollup == nil || k.Rollup.KeyID != num || k.Rollup.Operator != "Sum" {
		t.Fatalf("rollup %+v", k)
	}
	if h := res["hashes"].(map[string]any); h[s.db.AV] == nil || h[other.AV] == nil {
		t.Fatalf("rollup hashes %v", h)
	}
	tpl := map[string]any{"action": "add_column", "avID": s.db.AV, "keyName": "Label", "keyType": "template", "template": "L.action{.Notes}"}
	res = s.Commit(t, "av", tpl, s.Preflight(t, "av", tpl, "expectedStateHash", 1))
	if k, _ := s.state(t).key(res["columnID"].(string)); k.Template != "L.action{.Notes}" {
		t.Fatalf("template %+v", k)
	}
	if h := res["hashes"].(map[string]any)[s.db.AV].(map[string]any); h["previousHash"] == h["resultHash"] {
		t.Fatalf("template hashes %v", h)
	}

	// Drift on the other side of a two-way relation: state_changed.
	rel2 := map[string]any{"action": "add_column", "avID": s.db.AV, "keyName": "More", "keyType": "relation", "relationAvID": other.AV, "isTwoWay": true}
	pre = s.Preflight(t, "av", rel2, "expectedStateHash", 2)
	s.Drifted(t, "av", rel2, pre, func() {
		s.C.Transactions(context.Background(), []siyuan.Transaction{{DoOperations: []siyuan.Operation{siyuan.SetAttrViewNameOp(other.AV, "drift")}}})
	})

	for _, c := range []struct {
		args map[string]any
		code failure.Code
	}{
		{map[string]any{"action": "add_column", "avID": s.db.AV, "keyName": "x", "keyType": "relation"}, failure.InvalidArguments},
		{map[string]any{"action": "add_column", "avID": s.db.AV, "keyName": "x", "keyType": "text", "relationAvID": other.AV}, failure.InvalidArguments},
		{map[string]any{"action": "add_column", "avID": s.db.AV, "keyName": "x", "keyType": "relation", "relationAvID": s.db.AV, "isTwoWay": true}, failure.InvalidArguments},
		{map[string]any{"action": "add_column", "avID": s.db.AV, "keyName": "x", "keyType": "rollup", "rollupRelationKeyID": s.text, "rollupKeyID": num}, failure.NotFound},
		{map[string]any{"action": "add_column", "avID": s.db.AV, "keyName": "x", "keyType": "rollup", "rollupRelationKeyID": relKey, "rollupKeyID": tooltest.NewID()}, failure.NotFound},
		{map[string]any{"action": "add_column", "avID": s.db.AV, "keyName": "x", "keyType": "text", "template": "t"}, failure.InvalidArguments},
	} {
		if e := s.WantErr(t, "av", tooltest.CopyArgs(c.args, "validateOnly", true), c.code); e.WriteAttempted == nil || *e.WriteAttempted {
			t.Errorf("%v: %+v", c.args, e)
		}
	}
	// The other database's notebook: read for a one-way relation, write
	// for a two-way one.
	nb2, err := s.C.CreateNotebook(context.Background(), "Other")
	if err != nil {
		t.Fatal(err)
	}
	third := s.MkDatabase(t, s.MkDoc(t, nb2.ID, "/Third", "x"))
	s.Policy = &tools.Policy{Notebooks: map[string]tools.Level{nb2.ID: tools.LevelRead}, Default: tools.LevelDelete, AllActions: true, Strict: true, Version: "ro-other"}
	s.OK(t, "av", map[string]any{"action": "add_column", "avID": s.db.AV, "keyName": "One", "keyType": "relation", "relationAvID": third.AV, "validateOnly": true})
	s.WantErr(t, "av", map[string]any{"action": "add_column", "avID": s.db.AV, "keyName": "Two", "keyType": "relation", "relationAvID": third.AV, "isTwoWay": true, "validateOnly": true}, failure.PermissionDenied)
	s.Policy = nil
}

// TestRelationCells: set_cells on a two-way relation links rows of the
// other database, which link back; the answer reports both databases'
// hashes; a drift on the other side's linked row is state_changed; a row
// the other database lacks is refused at preflight.
func TestRelationCells(t *testing.T) {
	s := newFix(t)
	other := s.MkDatabase(t, s.Doc)
	b0, b1 := tooltest.NewID(), tooltest.NewID()
	if err := s.C.AddAttributeViewBlocks(context.Background(), siyuan.AddAVBlocksRequest{AvID: other.AV, BlockID: other.Block,
		Srcs: []siyuan.AVSrc{{ItemID: b0, Detached: true, Content: "b0"}, {ItemID: b1, Detached: true, Content: "b1"}}}); err != nil {
		t.Fatal(err)
	}
	rel := map[string]any{"action": "add_column", "avID": s.db.AV, "keyName": "Tasks", "keyType": "relation", "relationAvID": other.AV, "isTwoWay": true}
	res := s.Commit(t, "av", rel, s.Preflight(t, "av", rel, "expectedStateHash", 2))
	relKey, back := res["columnID"].(string), res["backKeyID"].(string)

	set := map[string]any{"action": "set_cells", "avID": s.db.AV, "rowID": s.rows[0], "columnID": relKey, "values": []any{b0, b1, b0}}
	pre := s.Preflight(t, "av", set, "expectedManifestHash", 1)
	res = s.Commit(t, "av", set, pre)
	h := res["hashes"].(map[string]any)
	for _, id := range []string{s.db.AV, other.AV} {
		x, _ := h[id].(map[string]any)
		if x["previousHash"] == nil || x["previousHash"] == x["resultHash"] {
			t.Fatalf("hashes %v", h)
		}
	}
	a, b := s.state(t), dbOf(t, s.Fixture, other.AV)
	r0, _ := a.row(s.rows[0])
	if got := relationOf(r0.Cells[relKey]); len(got) != 2 || got[0] != b0 || got[1] != b1 {
		t.Fatalf("relation %v", got)
	}
	for _, id := range []string{b0, b1} {
		r, _ := b.row(id)
		if got := relationOf(r.Cells[back]); len(got) != 1 || got[0] != s.rows[0] {
			t.Fatalf("back link of %s: %v", id, got)
		}
	}
	s.Replay(t, "av", set, pre, res)

	// The other side's linked row drifts: state_changed.
	set2 := map[string]any{"action": "set_cells", "avID": s.db.AV, "rowID": s.rows[1], "columnID": relKey, "values": []any{b1}}
	pre = s.Preflight(t, "av", set2, "expectedManifestHash", 1)
	s.Drifted(t, "av", set2, pre, func() {
		if err := s.C.BatchSetAttributeViewBlockAttrs(context.Background(), other.AV, []siyuan.AVCellUpdate{{KeyID: back, ItemID: b1,
			Value: &siyuan.AVValue{Relation: &siyuan.AVValueRelation{BlockIDs: []string{}}}}}); err != nil {
			t.Fatal(err)
		}
	})
	// Emptying it.
	clear := map[string]any{"action": "set_cells", "avID": s.db.AV, "rowID": s.rows[0], "columnID": relKey, "value": ""}
	s.Commit(t, "av", clear, s.Preflight(t, "av", clear, "expectedManifestHash", 1))
	if r, _ := s.state(t).row(s.rows[0]); len(relationOf(r.Cells[relKey])) != 0 {
		t.Fatalf("emptied relation %+v", r.Cells[relKey])
	}
	s.WantErr(t, "av", map[string]any{"action": "set_cells", "avID": s.db.AV, "rowID": s.rows[0], "columnID": relKey, "values": []any{tooltest.NewID()}, "validateOnly": true}, failure.NotFound)
	s.WantErr(t, "av", map[string]any{"action": "set_cells", "avID": s.db.AV, "rowID": s.rows[0], "columnID": relKey, "value": "x", "validateOnly": true}, failure.InvalidArguments)
}
