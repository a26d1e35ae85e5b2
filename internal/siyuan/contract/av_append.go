package contract

import (
	"errors"
	"slices"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// checkAVAppendDetachedRows: appendAttributeViewDetachedBlocksWithValues
// adds detached rows with their cells in one call, last in every view:
// the item ID is the first value's blockID or a new one, every value gets
// the row's item ID, its column's type, isDetached and one created and
// updated time, a primary-key value's block loses its id; a new select
// option is added with the colour given, an existing one keeps its colour
// in the cell too. An unknown column fails with nothing saved, an unknown
// or malformed database as the other row endpoints.
func checkAVAppendDetachedRows(t *testing.T, s *suite) {
	ctx := t.Context()
	db, _ := s.newDB(t)
	num := freshID()
	s.addCols(t, db, [3]string{num, "Num", "number"})
	first := freshID()
	rows := [][]*siyuan.AVValue{
		{{KeyID: db.pk, BlockID: first, Block: &siyuan.AVValueBlock{ID: freshID(), Content: "row one"}},
			{KeyID: num, Type: "text", Number: &siyuan.AVValueNumber{Content: 5, IsNotEmpty: true}},
			{KeyID: db.sel, MSelect: []*siyuan.AVValueSelect{{Content: "New", Color: "3"}}}},
		{{KeyID: num, Number: &siyuan.AVValueNumber{Content: 7, IsNotEmpty: true}},
			{KeyID: db.sel, MSelect: []*siyuan.AVValueSelect{{Content: "New", Color: "5"}}}},
	}
	must(t, "AppendAttributeViewDetachedRows", s.c.AppendAttributeViewDetachedRows(ctx, db.av, rows))

	av := s.storedAV(t, db.av)
	items := av.Views[0].ItemIDs
	if len(items) != 2 || items[0] != first || items[1] == first || items[1] == "" {
		t.Fatalf("view items = %v, want %s then a new item", items, first)
	}
	second := items[1]
	type cell struct {
		key, item, typ string
	}
	var got []cell
	for _, kv := range av.KeyValues {
		for _, v := range kv.Values {
			got = append(got, cell{kv.Key.ID, v.BlockID, v.Type})
			if !v.IsDetached || v.ID == "" || v.CreatedAt == 0 || v.CreatedAt != v.UpdatedAt || v.KeyID != kv.Key.ID {
				t.Fatalf("stored value %+v", v)
			}
			switch kv.Key.ID {
			case db.pk:
				if v.Block == nil || v.Block.ID != "" || v.Block.Content != "row one" || v.Block.Created != v.CreatedAt || v.Block.Updated != v.CreatedAt {
					t.Fatalf("primary-key value %+v block %+v", v, v.Block)
				}
			case db.sel:
				if len(v.MSelect) != 1 || v.MSelect[0].Content != "New" || v.MSelect[0].Color != "3" {
					t.Fatalf("select value of %s = %+v", v.BlockID, v.MSelect)
				}
			case num:
				if v.Number == nil || (v.BlockID == first) != (v.Number.Content == 5) {
					t.Fatalf("number value of %s = %+v", v.BlockID, v.Number)
				}
			}
		}
	}
	want := []cell{{db.pk, first, "block"}, {db.sel, first, "select"}, {db.sel, second, "select"}, {num, first, "number"}, {num, second, "number"}}
	if !slices.Equal(got, want) {
		t.Fatalf("stored cells = %+v\nwant %+v", got, want)
	}
	for _, kv := range av.KeyValues {
		if kv.Key.ID == db.sel && (len(kv.Key.Options) != 1 || kv.Key.Options[0].Name != "New" || kv.Key.Options[0].Color != "3") {
			t.Fatalf("select options = %+v", kv.Key.Options)
		}
	}

	unknownID := freshID()
	for _, tc := range []struct {
		what, msg string
		err       error
	}{
		{"an unknown column", "key [" + unknownID + "] not found", s.c.AppendAttributeViewDetachedRows(ctx, db.av, [][]*siyuan.AVValue{
			{{KeyID: db.sel, MSelect: []*siyuan.AVValueSelect{{Content: "Other", Color: "2"}}}, {KeyID: unknownID, Text: &siyuan.AVValueContent{Content: "x"}}}})},
		{"an unknown database", "view not found", s.c.AppendAttributeViewDetachedRows(ctx, unknownID, [][]*siyuan.AVValue{{{KeyID: num}}})},
		{"a malformed database ID", "invalid attribute view id", s.c.AppendAttributeViewDetachedRows(ctx, "bad", [][]*siyuan.AVValue{{{KeyID: num}}})},
	} {
		var api *siyuan.APIError
		if !errors.As(tc.err, &api) || api.Code != -1 || api.Msg != tc.msg {
			t.Fatalf("%s: %v, want code -1 %q", tc.what, tc.err, tc.msg)
		}
	}
	after := s.storedAV(t, db.av)
	if !slices.Equal(after.Views[0].ItemIDs, items) {
		t.Fatalf("items after a refused call = %v, want %v", after.Views[0].ItemIDs, items)
	}
	for _, kv := range after.KeyValues {
		if kv.Key.ID == db.sel && len(kv.Key.Options) != 1 {
			t.Fatalf("a refused call added options: %+v", kv.Key.Options)
		}
	}
	// No rows: nothing changes.
	must(t, "append no rows", s.c.AppendAttributeViewDetachedRows(ctx, db.av, nil))
	if n := len(s.storedAV(t, db.av).Views[0].ItemIDs); n != 2 {
		t.Fatalf("items after appending no rows = %d", n)
	}
}
