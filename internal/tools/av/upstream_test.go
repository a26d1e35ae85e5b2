package av

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// typedFix is a fixture with a column of every type upstream's typed
// value fields set, by type.
type typedFix struct {
	*fix
	col map[string]string
}

func newTypedFix(t *testing.T) *typedFix {
	s := &typedFix{fix: newFix(t), col: map[string]string{siyuan.AVKeyText: "", siyuan.AVKeySelect: ""}}
	s.col[siyuan.AVKeyText], s.col[siyuan.AVKeySelect], s.col[siyuan.AVKeyBlock] = s.text, s.db.Select, s.db.Primary
	for _, typ := range []string{siyuan.AVKeyNumber, siyuan.AVKeyDate, siyuan.AVKeyCheckbox, siyuan.AVKeyMSelect, siyuan.AVKeyURL,
		siyuan.AVKeyEmail, siyuan.AVKeyPhone, siyuan.AVKeyMAsset} {
		id := tooltest.NewID()
		if err := s.C.AddAttributeViewKey(context.Background(), siyuan.AddAVKeyRequest{AvID: s.db.AV, KeyID: id, KeyName: typ, KeyType: typ, PreviousKeyID: s.text}); err != nil {
			t.Fatal(err)
		}
		s.col[typ] = id
	}
	third := tooltest.NewID()
	if err := s.C.AddAttributeViewBlocks(context.Background(), siyuan.AddAVBlocksRequest{AvID: s.db.AV, BlockID: s.db.Block,
		Srcs: []siyuan.AVSrc{{ItemID: third, Detached: true, Content: "third"}}}); err != nil {
		t.Fatal(err)
	}
	s.rows = append(s.rows, third)
	return s
}

// cell is the stored cell of a row in a column of a type.
func (s *typedFix) cell(t *testing.T, row, typ string) *siyuan.AVValue {
	t.Helper()
	r, ok := s.state(t).row(row)
	if !ok {
		t.Fatalf("no row %s", row)
	}
	return r.Cells[s.col[typ]]
}

// TestUpstreamTypedCells: each of upstream 0.6.8's typed value fields sets
// its cell through the strict write, at top level and inside cells[] and
// items[], with upstream's valueType names; the readback checks the
// value set.
func TestUpstreamTypedCells(t *testing.T) {
	s := newTypedFix(t)
	day := time.Date(2026, 5, 1, 0, 0, 0, 0, time.Local).UnixMilli()
	at := time.Date(2026, 5, 1, 9, 30, 0, 0, time.UTC).UnixMilli()
	end := time.Date(2026, 5, 3, 0, 0, 0, 0, time.Local).UnixMilli()
	assets := []any{map[string]any{"type": "image", "content": "assets/x.png", "name": "x"}, map[string]any{"type": "file", "content": "assets/y.pdf"}}
	for _, c := range []struct {
		name  string
		typ   string
		cell  map[string]any // the cell's value fields
		check func(v *siyuan.AVValue) bool
	}{
		{"text", siyuan.AVKeyText, map[string]any{"valueType": "text", "text": "typed"}, func(v *siyuan.AVValue) bool { return v.Text != nil && v.Text.Content == "typed" }},
		{"primary key text", siyuan.AVKeyBlock, map[string]any{"text": "renamed"}, func(v *siyuan.AVValue) bool { return v.Block != nil && v.Block.Content == "renamed" }},
		{"number", siyuan.AVKeyNumber, map[string]any{"valueType": "number", "number": 12.5}, func(v *siyuan.AVValue) bool {
			return v.Number != nil && v.Number.IsNotEmpty && v.Number.Content == 12.5
		}},
		{"number with format", siyuan.AVKeyNumber, map[string]any{"valueType": "number", "number": 3, "numberFormat": "USD"}, func(v *siyuan.AVValue) bool {
			return v.Number != nil && v.Number.Content == 3
		}},
		{"date only", siyuan.AVKeyDate, map[string]any{"valueType": "date", "date": "2026-05-01"}, func(v *siyuan.AVValue) bool {
			return v.Date != nil && v.Date.Content == day && v.Date.IsNotTime && !v.Date.HasEndDate
		}},
		{"date with time", siyuan.AVKeyDate, map[string]any{"valueType": "date", "date": "2026-05-01T09:30:00Z"}, func(v *siyuan.AVValue) bool {
			return v.Date != nil && v.Date.Content == at && !v.Date.IsNotTime
		}},
		{"epoch date, includeTime false", siyuan.AVKeyDate, map[string]any{"valueType": "date", "date": float64(at), "includeTime": false}, func(v *siyuan.AVValue) bool {
			return v.Date != nil && v.Date.Content == at && v.Date.IsNotTime
		}},
		{"date range", siyuan.AVKeyDate, map[string]any{"valueType": "date", "date": "2026-05-01", "endDate": "2026-05-03"}, func(v *siyuan.AVValue) bool {
			return v.Date != nil && v.Date.Content == day && v.Date.HasEndDate && v.Date.Content2 == end && v.Date.IsNotEmpty2
		}},
		{"date range by value", siyuan.AVKeyDate, map[string]any{"value": "2026-05-01", "endDate": float64(end), "includeTime": true}, func(v *siyuan.AVValue) bool {
			return v.Date != nil && v.Date.HasEndDate && v.Date.Content2 == end && !v.Date.IsNotTime
		}},
		{"checkbox", siyuan.AVKeyCheckbox, map[string]any{"valueType": "checkbox", "checked": true}, func(v *siyuan.AVValue) bool { return v.Checkbox != nil && v.Checkbox.Checked }},
		{"select", siyuan.AVKeySelect, map[string]any{"valueType": "select", "option": "Doing"}, func(v *siyuan.AVValue) bool {
			return len(v.MSelect) == 1 && v.MSelect[0].Content == "Doing"
		}},
		{"multi_select", siyuan.AVKeyMSelect, map[string]any{"valueType": "multi_select", "options": []any{"a", "b"}}, func(v *siyuan.AVValue) bool {
			return len(v.MSelect) == 2 && v.MSelect[0].Content == "a" && v.MSelect[1].Content == "b"
		}},
		{"url", siyuan.AVKeyURL, map[string]any{"valueType": "url", "url": "https://example.org"}, func(v *siyuan.AVValue) bool { return v.URL != nil && v.URL.Content == "https://example.org" }},
		{"email", siyuan.AVKeyEmail, map[string]any{"valueType": "email", "email": "a@example.org"}, func(v *siyuan.AVValue) bool { return v.Email != nil && v.Email.Content == "a@example.org" }},
		{"phone", siyuan.AVKeyPhone, map[string]any{"valueType": "phone", "phone": "+1 555"}, func(v *siyuan.AVValue) bool { return v.Phone != nil && v.Phone.Content == "+1 555" }},
		{"mAsset", siyuan.AVKeyMAsset, map[string]any{"valueType": "mAsset", "assets": assets}, func(v *siyuan.AVValue) bool {
			return len(v.MAsset) == 2 && *v.MAsset[0] == (siyuan.AVValueAsset{Type: "image", Name: "x", Content: "assets/x.png"}) &&
				*v.MAsset[1] == (siyuan.AVValueAsset{Type: "file", Content: "assets/y.pdf"})
		}},
	} {
		for i, form := range []string{"top level", "cells", "items"} {
			t.Run(c.name+" "+form, func(t *testing.T) {
				row := s.rows[i]
				cell := tooltest.CopyArgs(c.cell, "rowID", row, "columnID", s.col[c.typ])
				args := map[string]any{"action": "set_cells", "avID": s.db.AV}
				if form == "top level" {
					args = tooltest.CopyArgs(cell, "action", "set_cells", "avID", s.db.AV)
				} else {
					args[form] = []any{cell}
				}
				// The cell may already hold the value (the other form set
				// it): empty it first, so that the write changes it.
				clear := map[string]any{"action": "set_cells", "avID": s.db.AV, "rowID": row, "columnID": s.col[c.typ], "value": ""}
				switch c.typ {
				case siyuan.AVKeyText, siyuan.AVKeyNumber, siyuan.AVKeyDate, siyuan.AVKeyURL, siyuan.AVKeyEmail, siyuan.AVKeyPhone:
					s.Commit(t, "av", clear, s.Preflight(t, "av", clear, "expectedManifestHash", 1))
				}
				pre := s.Preflight(t, "av", args, "expectedManifestHash", 1)
				res := s.Commit(t, "av", args, pre)
				if v := s.cell(t, row, c.typ); v == nil || !c.check(v) {
					b, _ := json.Marshal(v)
					t.Fatalf("stored %s", b)
				}
				s.Replay(t, "av", args, pre, res)
			})
		}
	}
}

// TestUpstreamNumberFormat: numberFormat is stored on the cell as sent
// (SiYuan formats the number's text with it).
func TestUpstreamNumberFormat(t *testing.T) {
	s := newTypedFix(t)
	args := map[string]any{"action": "set_cells", "avID": s.db.AV, "rowID": s.rows[0], "columnID": s.col[siyuan.AVKeyNumber], "valueType": "number", "number": 1234.5, "numberFormat": "commas"}
	s.Commit(t, "av", args, s.Preflight(t, "av", args, "expectedManifestHash", 1))
	av, err := s.C.GetAttributeView(context.Background(), s.db.AV)
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range av.KeyValues {
		if kv.Key.ID != s.col[siyuan.AVKeyNumber] {
			continue
		}
		for _, v := range kv.Values {
			if v.BlockID == s.rows[0] && (v.Number == nil || v.Number.Format != "commas" || v.Number.FormattedContent != "1,234.5") {
				t.Fatalf("stored number %+v", v.Number)
			}
		}
	}
}

// TestUpstreamTypedRefusals: a typed field that does not fit the
// valueType or the column, with value, twice, or malformed is refused
// before anything is written.
func TestUpstreamTypedRefusals(t *testing.T) {
	s := newTypedFix(t)
	row := s.rows[0]
	one := func(typ string, kv ...any) map[string]any {
		return tooltest.CopyArgs(map[string]any{"action": "set_cells", "avID": s.db.AV, "rowID": row, "columnID": s.col[typ]}, kv...)
	}
	for _, c := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"field against valueType", one(siyuan.AVKeyNumber, "valueType", "number", "text", "x"), "valueType number takes number, not text"},
		{"field against the column", one(siyuan.AVKeyNumber, "text", "x"), "text does not fit a number column; pass number"},
		{"value and a typed field", one(siyuan.AVKeyText, "value", "a", "text", "b"), "not both"},
		{"two typed fields", one(siyuan.AVKeyText, "text", "a", "url", "b"), "one value field"},
		{"valueType without its field", one(siyuan.AVKeyCheckbox, "valueType", "checkbox"), "checked (or value) is required"},
		{"numberFormat of a text", one(siyuan.AVKeyText, "text", "a", "numberFormat", "USD"), "numberFormat is for a number cell"},
		{"unknown numberFormat", one(siyuan.AVKeyNumber, "number", 1, "numberFormat", "dollars"), "numberFormat must be one of"},
		{"endDate of a number", one(siyuan.AVKeyNumber, "number", 1, "endDate", "2026-01-01"), "endDate is for a date cell"},
		{"endDate without a date", one(siyuan.AVKeyDate, "value", "", "endDate", "2026-01-01"), "a range needs a date and an endDate"},
		{"bad date", one(siyuan.AVKeyDate, "date", "tomorrow"), "is not a date"},
		{"number as text", one(siyuan.AVKeyNumber, "number", "5"), "must be a number"},
		{"asset type", one(siyuan.AVKeyMAsset, "assets", []any{map[string]any{"type": "video", "content": "assets/v.mp4"}}), "type must be image or file"},
		{"asset key", one(siyuan.AVKeyMAsset, "assets", []any{map[string]any{"type": "file", "content": "assets/v", "size": 3}}), "does not take size"},
		{"no assets", one(siyuan.AVKeyMAsset, "assets", []any{}), "at least one file"},
		{"value of an mAsset", one(siyuan.AVKeyMAsset, "value", "assets/x.png"), "takes assets"},
		{"relation ids", one(siyuan.AVKeyText, "relationBlockIDs", []any{"nope"}), "relationBlockIDs"},
		{"typed field in cells and at top level", map[string]any{"action": "set_cells", "avID": s.db.AV, "text": "a",
			"cells": []any{map[string]any{"rowID": row, "columnID": s.text, "text": "b"}}}, "pass none at top level"},
		{"typo in a cell", map[string]any{"action": "set_cells", "avID": s.db.AV,
			"cells": []any{map[string]any{"rowID": row, "columnID": s.text, "txt": "b"}}}, "does not take txt"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := s.WantErr(t, "av", tooltest.CopyArgs(c.args, "validateOnly", true), failure.InvalidArguments)
			if !strings.Contains(e.Message, c.want) || e.WriteAttempted == nil || *e.WriteAttempted {
				t.Fatalf("%+v, want %q", e, c.want)
			}
		})
	}
	// A typo at top level: the registry refuses the unknown argument.
	s.WantErr(t, "av", one(siyuan.AVKeyText, "txt", "a", "validateOnly", true), failure.InvalidArguments)
}

// TestUpstreamContextBlock: blockID names a database block of the
// database for set_cells, remove_rows, add_column, remove_column and
// add_rows; another block is refused before anything is written.
func TestUpstreamContextBlock(t *testing.T) {
	s := newFix(t)
	other := s.MkDatabase(t, s.Doc)
	for _, c := range []map[string]any{
		{"action": "set_cells", "avID": s.db.AV, "rowID": s.rows[0], "columnID": s.text, "text": "x"},
		{"action": "remove_rows", "avID": s.db.AV, "srcIDs": []any{s.rows[0]}, "confirm": true},
		{"action": "add_column", "avID": s.db.AV, "keyName": "N", "keyType": "number"},
		{"action": "remove_column", "avID": s.db.AV, "keyID": s.text, "confirm": true},
		{"action": "add_rows", "avID": s.db.AV, "primaryKeyTexts": []any{"x"}},
	} {
		t.Run(c["action"].(string), func(t *testing.T) {
			s.OK(t, "av", tooltest.CopyArgs(c, "blockID", s.db.Block, "validateOnly", true))
			e := s.WantErr(t, "av", tooltest.CopyArgs(c, "blockID", other.Block, "validateOnly", true), failure.InvalidArguments)
			if !strings.Contains(e.Message, "does not show database") || *e.WriteAttempted {
				t.Fatalf("%+v", e)
			}
		})
	}
}

// TestUpstreamAddRows: add_rows takes previousID (the rows follow that
// row, in order, in every view), viewID, ignoreDefaultFill and blockID as
// SiYuan's addAttributeViewBlocks does; an unknown view, group or row is
// refused at preflight.
func TestUpstreamAddRows(t *testing.T) {
	s := newFix(t)
	args := map[string]any{"action": "add_rows", "avID": s.db.AV, "primaryKeyTexts": []any{"a", "b"}, "previousID": s.rows[0],
		"blockID": s.db.Block, "viewID": s.state(t).Views[0].ID, "ignoreDefaultFill": true}
	res := s.Commit(t, "av", args, s.Preflight(t, "av", args, "", 1))
	added := res["rowIDs"].([]any)
	want := []string{s.rows[0], added[0].(string), added[1].(string), s.rows[1]}
	if got := s.state(t).Views[0].ItemIDs; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("order %v, want %v", got, want)
	}
	for _, c := range []struct {
		arg, value string
	}{{"viewID", tooltest.NewID()}, {"groupID", tooltest.NewID()}, {"previousID", tooltest.NewID()}} {
		e := s.WantErr(t, "av", map[string]any{"action": "add_rows", "avID": s.db.AV, "primaryKeyTexts": []any{"x"}, c.arg: c.value, "validateOnly": true}, failure.NotFound)
		if !strings.Contains(e.Message, c.arg) {
			t.Fatalf("%s: %+v", c.arg, e)
		}
	}
}

// TestUpstreamAddColumnKeyID: keyID names the new column; one the
// database has is refused.
func TestUpstreamAddColumnKeyID(t *testing.T) {
	s := newFix(t)
	id := tooltest.NewID()
	args := map[string]any{"action": "add_column", "avID": s.db.AV, "keyID": id, "keyName": "Due", "keyType": "date"}
	res := s.Commit(t, "av", args, s.Preflight(t, "av", args, "expectedStateHash", 1))
	if res["keyID"] != id {
		t.Fatalf("answer %v", res)
	}
	if k, ok := s.state(t).key(id); !ok || k.Name != "Due" || k.Type != siyuan.AVKeyDate {
		t.Fatalf("column %+v", k)
	}
	e := s.WantErr(t, "av", tooltest.CopyArgs(args, "keyID", s.text, "validateOnly", true), failure.InvalidArguments)
	if !strings.Contains(e.Message, "already has a column") {
		t.Fatalf("%+v", e)
	}
}

// TestUpstreamRemoveRelationDest: removing one side of a two-way relation
// makes the back column one-way, or removes it with removeRelationDest;
// both databases' hashes are answered.
func TestUpstreamRemoveRelationDest(t *testing.T) {
	for _, removeDest := range []bool{false, true} {
		s := newFix(t)
		other := s.MkDatabase(t, s.Doc)
		rel := map[string]any{"action": "add_column", "avID": s.db.AV, "keyName": "Tasks", "keyType": "relation", "relationAvID": other.AV, "isTwoWay": true}
		res := s.Commit(t, "av", rel, s.Preflight(t, "av", rel, "expectedStateHash", 2))
		relKey, back := res["columnID"].(string), res["backKeyID"].(string)
		rm := map[string]any{"action": "remove_column", "avID": s.db.AV, "keyID": relKey, "removeRelationDest": removeDest, "confirm": true}
		pre := s.Preflight(t, "av", rm, "expectedStateHash", 1)
		res = s.Commit(t, "av", rm, pre)
		if _, ok := s.state(t).key(relKey); ok {
			t.Fatal("relation column kept")
		}
		k, ok := dbOf(t, s.Fixture, other.AV).key(back)
		switch {
		case removeDest && ok:
			t.Fatalf("back column kept: %+v", k)
		case !removeDest && (!ok || k.Relation == nil || k.Relation.IsTwoWay || k.Relation.AvID != s.db.AV):
			t.Fatalf("back column %+v", k)
		}
		if h, _ := res["hashes"].(map[string]any); h[other.AV] == nil || h[s.db.AV] == nil {
			t.Fatalf("hashes %v", res["hashes"])
		}
		s.Replay(t, "av", rm, pre, res)
	}
	// The related database's notebook must allow deleting the back column.
	s := newFix(t)
	nb2, err := s.C.CreateNotebook(context.Background(), "Other")
	if err != nil {
		t.Fatal(err)
	}
	third := s.MkDatabase(t, s.MkDoc(t, nb2.ID, "/Third", "x"))
	rel := map[string]any{"action": "add_column", "avID": s.db.AV, "keyName": "T", "keyType": "relation", "relationAvID": third.AV, "isTwoWay": true}
	relKey := s.Commit(t, "av", rel, s.Preflight(t, "av", rel, "expectedStateHash", 2))["columnID"]
	s.Policy = &tools.Policy{Notebooks: map[string]tools.Level{nb2.ID: tools.LevelWrite}, Default: tools.LevelDelete, AllActions: true, Strict: true, Version: "w-other"}
	s.OK(t, "av", map[string]any{"action": "remove_column", "avID": s.db.AV, "keyID": relKey, "confirm": true, "validateOnly": true})
	s.WantErr(t, "av", map[string]any{"action": "remove_column", "avID": s.db.AV, "keyID": relKey, "removeRelationDest": true, "confirm": true, "validateOnly": true}, failure.PermissionDenied)
	s.Policy = nil
}

// TestUpstreamRenderPaging: pageSize -1 renders the view's own page size
// (SiYuan's default); groupPaging of SiYuan's shape is taken, another
// refused; pageSize 0 is refused.
func TestUpstreamRenderPaging(t *testing.T) {
	s := newFix(t)
	r := s.OK(t, "av", map[string]any{"action": "render", "avID": s.db.AV, "pageSize": -1})
	if view := s.state(t).Views[0]; r["pageSize"] != float64(view.PageSize) || len(r["rows"].([]any)) != 2 || view.PageSize < 2 {
		t.Fatalf("render -1: %v (view page size %d)", r, view.PageSize)
	}
	gid := tooltest.NewID()
	s.OK(t, "av", map[string]any{"action": "render", "avID": s.db.AV, "groupPaging": map[string]any{gid: map[string]any{"page": 2, "pageSize": -1}}})
	for _, gp := range []any{
		map[string]any{"x": map[string]any{"page": 1}},
		map[string]any{gid: 3},
		map[string]any{gid: map[string]any{"page": 0}},
		map[string]any{gid: map[string]any{"pageSize": 501}},
		map[string]any{gid: map[string]any{"rows": 1}},
	} {
		s.WantErr(t, "av", map[string]any{"action": "render", "avID": s.db.AV, "groupPaging": gp}, failure.InvalidArguments)
	}
	s.WantErr(t, "av", map[string]any{"action": "render", "avID": s.db.AV, "pageSize": 0}, failure.InvalidArguments)
	s.WantErr(t, "av", map[string]any{"action": "render", "avID": s.db.AV, "pageSize": -2}, failure.InvalidArguments)
}
