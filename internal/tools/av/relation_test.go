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
