package av

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// TestStrictWrites: each write's preflight, commit (with the change it
// asked for, exactly), replay (nothing done twice) and a stale commit
// (state_changed, nothing written).
func TestStrictWrites(t *testing.T) {
	type tc struct {
		name  string
		args  func(s *fix) map[string]any
		field string
		check func(t *testing.T, s *fix, before, after DBState, res map[string]any)
		drift func(t *testing.T, s *fix)
	}
	cases := []tc{
		{"rename", func(s *fix) map[string]any {
			return map[string]any{"action": "rename", "avID": s.db.AV, "name": " Reading\nlist "}
		}, "expectedStateHash",
			func(t *testing.T, s *fix, _, after DBState, _ map[string]any) {
				if after.Name != "Reading list" {
					t.Fatalf("name %q", after.Name)
				}
			}, func(t *testing.T, s *fix) { s.setText(t, s.rows[0], "drift") }},
		{"add_column", func(s *fix) map[string]any {
			return map[string]any{"action": "add_column", "avID": s.db.AV, "keyName": "Amount", "keyType": "number"}
		}, "expectedStateHash",
			func(t *testing.T, s *fix, before, after DBState, res map[string]any) {
				k, ok := after.key(res["columnID"].(string))
				if !ok || k.Type != "number" || len(after.Keys) != len(before.Keys)+1 || after.Keys[len(after.Keys)-1].ID != k.ID {
					t.Fatalf("keys %+v", after.Keys)
				}
				if cols := after.Views[0].Columns; cols[len(cols)-1].ID != k.ID {
					t.Fatalf("the column is not last: %+v", cols)
				}
			}, func(t *testing.T, s *fix) {
				s.C.Transactions(context.Background(), []siyuan.Transaction{{DoOperations: []siyuan.Operation{siyuan.SetAttrViewNameOp(s.db.AV, "drift")}}})
			}},
		{"add_rows", func(s *fix) map[string]any {
			return map[string]any{"action": "add_rows", "avID": s.db.AV, "blockIDs": []string{s.Blocks[2]}, "primaryKeyTexts": []string{"third", "fourth"}}
		}, "",
			func(t *testing.T, s *fix, before, after DBState, res map[string]any) {
				ids := res["rowIDs"].([]any)
				if len(ids) != 3 || len(after.Rows) != len(before.Rows)+3 {
					t.Fatalf("rows %v: %+v", ids, after.Rows)
				}
				if r, ok := after.row(ids[0].(string)); !ok || r.Block != s.Blocks[2] {
					t.Fatalf("bound row %+v", r)
				}
			}, nil},
		{"set_cells", func(s *fix) map[string]any {
			return map[string]any{"action": "set_cells", "avID": s.db.AV, "cells": []any{
				map[string]any{"rowID": s.rows[0], "columnID": s.text, "value": "hello"},
				map[string]any{"rowID": s.rows[1], "columnID": s.db.Select, "value": "Todo", "valueType": "select"},
				map[string]any{"rowID": s.rows[1], "columnID": s.db.Primary, "value": "renamed row"},
			}}
		}, "expectedManifestHash",
			func(t *testing.T, s *fix, _, after DBState, _ map[string]any) {
				r0, _ := after.row(s.rows[0])
				r1, _ := after.row(s.rows[1])
				if r0.Cells[s.text].Text.Content != "hello" || r1.Cells[s.db.Select].MSelect[0].Content != "Todo" || r1.Cells[s.db.Primary].Block.Content != "renamed row" {
					t.Fatalf("cells %+v %+v", r0.Cells, r1.Cells)
				}
			}, func(t *testing.T, s *fix) { s.setText(t, s.rows[0], "drift") }},
		{"remove_rows", func(s *fix) map[string]any {
			return map[string]any{"action": "remove_rows", "avID": s.db.AV, "srcIDs": []string{s.rows[0]}}
		}, "expectedManifestHash",
			func(t *testing.T, s *fix, before, after DBState, _ map[string]any) {
				if _, ok := after.row(s.rows[0]); ok || len(after.Rows) != len(before.Rows)-1 {
					t.Fatalf("rows %+v", after.Rows)
				}
			}, func(t *testing.T, s *fix) { s.setText(t, s.rows[0], "drift") }},
		{"remove_column", func(s *fix) map[string]any {
			return map[string]any{"action": "remove_column", "avID": s.db.AV, "columnID": s.text}
		}, "expectedStateHash",
			func(t *testing.T, s *fix, before, after DBState, _ map[string]any) {
				if _, ok := after.key(s.text); ok || len(after.Keys) != len(before.Keys)-1 {
					t.Fatalf("keys %+v", after.Keys)
				}
			}, func(t *testing.T, s *fix) {
				s.C.AddAttributeViewBlocks(context.Background(), siyuan.AddAVBlocksRequest{AvID: s.db.AV, BlockID: s.db.Block, Srcs: []siyuan.AVSrc{{ItemID: tooltest.NewID(), Detached: true, Content: "drift"}}})
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newFix(t)
			args := c.args(s)
			before := s.state(t)
			pre := s.Preflight(t, "av", args, c.field, 1)
			if !same(s.state(t), before) {
				t.Fatal("the preflight wrote")
			}
			res := s.Commit(t, "av", args, pre)
			after := s.state(t)
			c.check(t, s, before, after, res)
			s.Replay(t, "av", args, pre, res)
			if !same(s.state(t), after) {
				t.Fatal("the replay wrote")
			}
			if c.drift == nil {
				return
			}
			s2 := newFix(t)
			args = c.args(s2)
			pre = s2.Preflight(t, "av", args, c.field, 1)
			var drifted DBState
			s2.Drifted(t, "av", args, pre, func() { c.drift(t, s2); drifted = s2.state(t) })
			if !same(s2.state(t), drifted) {
				t.Fatal("a state_changed commit wrote")
			}
		})
	}
}

func TestWriteRefusals(t *testing.T) {
	s := newFix(t)
	av := s.db.AV
	for _, c := range []struct {
		args map[string]any
		code failure.Code
	}{
		{map[string]any{"action": "rename", "avID": tooltest.NewID(), "name": "x"}, failure.NotFound},
		{map[string]any{"action": "add_column", "avID": av, "keyName": "x", "keyType": "block"}, failure.InvalidArguments},
		{map[string]any{"action": "add_column", "avID": av, "keyName": "x", "keyType": "text", "previousKeyID": tooltest.NewID()}, failure.NotFound},
		{map[string]any{"action": "add_rows", "avID": av, "blockIDs": []string{tooltest.NewID()}}, failure.NotFound},
		{map[string]any{"action": "add_rows", "avID": av, "blockIDs": []string{s.db.Block}}, failure.InvalidArguments},
		{map[string]any{"action": "add_rows", "avID": av}, failure.InvalidArguments},
		{map[string]any{"action": "set_cells", "avID": av, "rowID": tooltest.NewID(), "columnID": s.text, "value": "x"}, failure.NotFound},
		{map[string]any{"action": "set_cells", "avID": av, "rowID": s.rows[0], "columnID": tooltest.NewID(), "value": "x"}, failure.NotFound},
		{map[string]any{"action": "set_cells", "avID": av, "rowID": s.rows[0], "columnID": s.text, "value": "x", "valueType": "number"}, failure.InvalidArguments},
		{map[string]any{"action": "remove_rows", "avID": av, "srcIDs": []string{tooltest.NewID()}}, failure.NotFound},
		{map[string]any{"action": "remove_column", "avID": av, "keyID": s.db.Primary}, failure.InvalidArguments},
	} {
		e := s.WantErr(t, "av", tooltest.CopyArgs(c.args, "validateOnly", true), c.code)
		if e.WriteAttempted == nil || *e.WriteAttempted {
			t.Errorf("%v: %+v", c.args, e)
		}
	}
	// A bound block's ID is not a row ID: the refusal names the row.
	item := tooltest.NewID()
	if err := s.C.AddAttributeViewBlocks(context.Background(), siyuan.AddAVBlocksRequest{AvID: av, BlockID: s.db.Block, Srcs: []siyuan.AVSrc{{ItemID: item, ID: s.Blocks[1]}}}); err != nil {
		t.Fatal(err)
	}
	e := s.WantErr(t, "av", map[string]any{"action": "remove_rows", "avID": av, "srcIDs": []string{s.Blocks[1]}, "validateOnly": true}, failure.InvalidArguments)
	if e.Details["rowID"] != item {
		t.Fatalf("refusal %+v", e)
	}
	s.WantErr(t, "av", map[string]any{"action": "add_rows", "avID": av, "blockIDs": []string{s.Blocks[1]}, "validateOnly": true}, failure.InvalidArguments)
}

// TestPermissionsAndConfirmation: writes need write (removals delete) in
// the notebook of every block showing the database; a database shown
// nowhere is refused; the removals need a person's confirmation.
func TestPermissionsAndConfirmation(t *testing.T) {
	s := newFix(t)
	av := s.db.AV
	other, err := s.C.CreateNotebook(context.Background(), "Other")
	if err != nil {
		t.Fatal(err)
	}
	otherDoc := s.MkDoc(t, other.ID, "/Mirror", "mirror here")
	mirror := tooltest.NewID()
	if _, err := s.C.Transactions(context.Background(), []siyuan.Transaction{{DoOperations: []siyuan.Operation{siyuan.InsertDatabaseBlockOp(mirror, av, "", otherDoc)}}}); err != nil {
		t.Fatal(err)
	}
	at := func(l tools.Level) *tools.Policy {
		return &tools.Policy{Notebooks: map[string]tools.Level{other.ID: l}, Default: tools.LevelDelete, AllActions: true, Strict: true, Version: "t" + l.String()}
	}
	rename := map[string]any{"action": "rename", "avID": av, "name": "x", "validateOnly": true}
	remove := map[string]any{"action": "remove_rows", "avID": av, "srcIDs": []string{s.rows[0]}, "validateOnly": true}
	s.Policy = at(tools.LevelRead)
	e := s.WantErr(t, "av", rename, failure.PermissionDenied)
	if e.Details["notebook"] != other.ID {
		t.Fatalf("refusal %+v", e)
	}
	s.OK(t, "av", map[string]any{"action": "render", "avID": av})
	s.Policy = at(tools.LevelWrite)
	s.OK(t, "av", rename)
	s.WantErr(t, "av", remove, failure.PermissionDenied)
	// A block showing it in a hidden notebook does not count: the
	// database is in the notebooks that show it where agents may look,
	// and its answer never names the hidden block.
	s.Policy = at(tools.LevelNone)
	got := s.OK(t, "av", map[string]any{"action": "get", "avID": av})
	if strings.Contains(fmt.Sprint(got), mirror) || strings.Contains(fmt.Sprint(got), other.ID) {
		t.Fatalf("get shows the hidden block showing the database: %v", got)
	}
	s.OK(t, "av", rename)
	s.Policy = nil

	// Confirmation: a removal commit is refused until a person confirms.
	args := map[string]any{"action": "remove_rows", "avID": av, "srcIDs": []string{s.rows[0]}}
	s.Unconfirmed = true
	pre := s.Preflight(t, "av", args, "expectedManifestHash", 1)
	s.WantErr(t, "av", tooltest.CommitArgs(args, pre), failure.ConfirmationRequired)
	col := map[string]any{"action": "remove_column", "avID": av, "keyID": s.text}
	cpre := s.Preflight(t, "av", col, "expectedStateHash", 1)
	s.WantErr(t, "av", tooltest.CommitArgs(col, cpre), failure.ConfirmationRequired)
	s.Unconfirmed = false
	if _, ok := s.state(t).row(s.rows[0]); !ok {
		t.Fatal("an unconfirmed removal removed")
	}
	s.Commit(t, "av", args, pre)

	// A database no block shows: refused, whatever the permissions.
	for _, id := range []string{s.db.Block, mirror} {
		if _, err := s.C.DeleteBlock(context.Background(), id); err != nil {
			t.Fatal(err)
		}
	}
	ok, err := tools.Poll(context.Background(), func() (bool, error) {
		b, err := s.C.GetMirrorDatabaseBlocks(context.Background(), av)
		return len(b) == 0, err
	})
	if err != nil || !ok {
		t.Fatalf("blocks still show the database: %v", err)
	}
	e = s.WantErr(t, "av", map[string]any{"action": "render", "avID": av}, failure.PermissionDenied)
	if !strings.Contains(e.Message, "no database block") {
		t.Fatal(e)
	}
	s.WantErr(t, "av", rename, failure.PermissionDenied)
}

// TestPrimaryKeyOfABoundRowNeedsItsBlock: setting a bound row's primary key
// writes the bound block's text, so it needs write where that block lives;
// the row's other cells do not.
func TestPrimaryKeyOfABoundRowNeedsItsBlock(t *testing.T) {
	s := newFix(t)
	ctx := context.Background()
	other, err := s.C.CreateNotebook(ctx, "Elsewhere")
	if err != nil {
		t.Fatal(err)
	}
	bound := s.MkDoc(t, other.ID, "/Bound", "a bound block")
	row := tooltest.NewID()
	if err := s.C.AddAttributeViewBlocks(ctx, siyuan.AddAVBlocksRequest{AvID: s.db.AV, BlockID: s.db.Block,
		Srcs: []siyuan.AVSrc{{ItemID: row, ID: bound}}}); err != nil {
		t.Fatal(err)
	}
	s.Policy = &tools.Policy{Notebooks: map[string]tools.Level{other.ID: tools.LevelRead}, Default: tools.LevelDelete, AllActions: true, Strict: true, Version: "ro-elsewhere"}
	pk := map[string]any{"action": "set_cells", "avID": s.db.AV, "rowID": row, "columnID": s.db.Primary, "value": "renamed", "validateOnly": true}
	if e := s.WantErr(t, "av", pk, failure.PermissionDenied); e.Details["notebook"] != other.ID {
		t.Fatalf("refusal %+v", e)
	}
	s.OK(t, "av", map[string]any{"action": "set_cells", "avID": s.db.AV, "rowID": row, "columnID": s.text, "value": "a note", "validateOnly": true})
	s.Policy = nil
	s.OK(t, "av", pk)
}
