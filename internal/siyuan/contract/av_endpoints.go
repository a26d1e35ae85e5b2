package contract

// Databases: removing rows and columns, renaming, and the read endpoints
// besides render (keys, filters and sorts, mirrors, search, primary keys),
// duplicating, and the /api/av/* forms of the operations.

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

func mustJSON(t *testing.T, data string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(data), v); err != nil {
		t.Fatalf("decode %s: %v", data, err)
	}
}

// checkAVRemove: removeAttrViewBlock removes rows by item ID with their
// cells and unbinds their blocks; removeAttrViewCol removes a key, its
// cells and its columns; the primary key cannot be removed.
func checkAVRemove(t *testing.T, s *suite) {
	db, paras := s.newDB(t, "bound")
	text := freshID()
	s.addCols(t, db, [3]string{text, "Notes", "text"})
	bound := freshID()
	s.tx(t, siyuan.InsertAttrViewBlockOp(db.av, db.block, []siyuan.AVSrc{{ItemID: bound, ID: paras[0]}}, ""))
	items := s.detachedRows(t, db, "d0", "d1")
	s.setCells(t, db, [3]string{text, bound, `{"text":{"content":"x"}}`}, [3]string{text, items[0], `{"text":{"content":"y"}}`})
	// Bound block IDs are not item IDs: nothing is removed for them.
	s.tx(t, siyuan.RemoveAttrViewBlockOp(db.av, []string{paras[0], unknownID}))
	requireOrder(t, "items after removing by block ID", s.storedAV(t, db.av).Views[0].ItemIDs, []string{items[0], items[1], bound})
	s.tx(t, siyuan.RemoveAttrViewBlockOp(db.av, []string{bound, items[0]}))
	av := s.storedAV(t, db.av)
	requireOrder(t, "items after removal", av.Views[0].ItemIDs, []string{items[1]})
	for _, kv := range av.KeyValues {
		for _, v := range kv.Values {
			if v.BlockID == bound || v.BlockID == items[0] {
				t.Fatalf("a removed row's cell is left: %+v", v)
			}
		}
	}
	if a := s.treeAttrs(t, paras[0]); a["custom-avs"] != "" {
		t.Fatalf("removed row's block still bound: %v", a)
	}
	requireOrder(t, "rendered rows", rowIDs(s.render(t, siyuan.RenderAVRequest{ID: db.av})), []string{items[1]})

	s.tx(t, siyuan.RemoveAttrViewColOp(db.av, text, false))
	av = s.storedAV(t, db.av)
	requireOrder(t, "keys after removing a column", keyNames(av), []string{"Primary Key:block", "Select:select"})
	requireOrder(t, "view columns", viewColumns(av.Views[0]), []string{db.pk, db.sel})
	// The primary key stays (the operation fails inside the queue).
	s.tx(t, siyuan.RemoveAttrViewColOp(db.av, db.pk, false))
	requireOrder(t, "keys after removing the primary key", keyNames(s.storedAV(t, db.av)), []string{"Primary Key:block", "Select:select"})
}

// checkAVRename: setAttrViewName trims, turns line breaks into spaces; a
// failing operation (an unknown key) ends its transaction: the operations
// after it are not applied, those before are, and the reply is code 0.
func checkAVRename(t *testing.T, s *suite) {
	db, _ := s.newDB(t)
	s.tx(t, siyuan.SetAttrViewNameOp(db.av, "  My\ndatabase  "))
	wantEqual(t, "name", s.storedAV(t, db.av).Name, "My database")
	wantEqual(t, "rendered name", s.render(t, siyuan.RenderAVRequest{ID: db.av}).Name, "My database")
	items := s.detachedRows(t, db, "r")
	var v siyuan.AVValue
	mustJSON(t, `{"text":{"content":"x"}}`, &v)
	s.tx(t, siyuan.SetAttrViewNameOp(db.av, "Before"),
		siyuan.UpdateAttrViewCellOp(db.av, unknownID, items[0], &v),
		siyuan.SetAttrViewNameOp(db.av, "After"))
	wantEqual(t, "name after a failed operation", s.storedAV(t, db.av).Name, "Before")
	// Renaming a database that does not exist fails silently too.
	s.tx(t, siyuan.SetAttrViewNameOp(freshID(), "nobody"))
	// doUpdateUpdated, sent after a change as the editor does, sets the
	// database block's updated time and its document's; an unknown block
	// is no error.
	s.tx(t, siyuan.DoUpdateUpdatedOp(db.block, "20991231235959"), siyuan.DoUpdateUpdatedOp(unknownID, "20991231235959"))
	if a := s.treeAttrs(t, db.block); a["updated"] != "20991231235959" {
		t.Fatalf("database block attrs = %v", a)
	}
	if a := s.treeAttrs(t, db.doc); a["updated"] != "20991231235959" {
		t.Fatalf("document attrs = %v", a)
	}
}

// checkAVKeys: getAttributeViewKeys of a bound block lists every key of
// its database with the row's cells, rendered (an empty text, the
// template's result); by item ID only keys with a cell. The kernel saves
// the keys' order (keyIDs) and the numbers as rendered.
func checkAVKeys(t *testing.T, s *suite) {
	db, paras := s.newDB(t, "bound block", "unbound block")
	text, num, tpl := freshID(), freshID(), freshID()
	s.addCols(t, db, [3]string{text, "Notes", "text"}, [3]string{num, "Amount", "number"}, [3]string{tpl, "T", "template"})
	s.tx(t, siyuan.UpdateAttrViewColTemplateOp(db.av, tpl, `n=.action{.Amount}`), siyuan.UpdateAttrViewColNumberFormatOp(db.av, num, "commas"))
	bound := freshID()
	s.tx(t, siyuan.InsertAttrViewBlockOp(db.av, db.block, []siyuan.AVSrc{{ItemID: bound, ID: paras[0]}}, ""))
	s.setCells(t, db, [3]string{num, bound, `{"number":{"content":1234,"isNotEmpty":true}}`})
	// getAttributeViewKeys finds the block's databases in its attributes,
	// which SiYuan reads from a cache binding does not always refresh
	// (until then it answers []); setting an attribute refreshes it.
	must(t, "SetBlockAttrs", s.c.SetBlockAttrs(t.Context(), paras[0], map[string]string{"custom-contract": "1"}))
	if got := storedCell(s.storedAV(t, db.av), num, bound).Number.FormattedContent; got != "1234" {
		t.Fatalf("stored number before getAttributeViewKeys = %q", got)
	}
	keys, err := s.c.GetAttributeViewKeys(t.Context(), paras[0])
	must(t, "GetAttributeViewKeys", err)
	if len(keys) != 1 || keys[0].AvID != db.av || keys[0].AvName != "Untitled" || !slices.Equal(keys[0].BlockIDs, []string{db.block}) {
		t.Fatalf("keys = %+v", keys)
	}
	got := map[string]string{}
	for _, kv := range keys[0].KeyValues {
		var cells []string
		for _, v := range kv.Values {
			if v.BlockID != bound {
				t.Fatalf("a cell of another row: %+v", v)
			}
			cells = append(cells, cellText(v, map[string]string{paras[0]: "P"}))
		}
		got[kv.Key.Name] = joinComma(cells)
	}
	want := map[string]string{
		"Primary Key": `{"type":"block","block":{"id":"P","content":"bound block"}}`,
		"Select":      `{"type":"select"}`,
		"Notes":       `{"type":"text","text":{"content":""}}`,
		"Amount":      `{"type":"number","number":{"content":1234,"isNotEmpty":true,"format":"commas","formattedContent":"1,234"}}`,
		"T":           `{"type":"template","template":{"content":"n=1234"}}`,
	}
	if len(got) != len(want) {
		t.Fatalf("keys of the bound block:\n got %v\nwant %v", got, want)
	}
	for k, w := range want {
		if got[k] != w {
			t.Fatalf("key %s: got %s, want %s", k, got[k], w)
		}
	}
	av := s.storedAV(t, db.av)
	if !slices.Equal(sortedCopy(av.KeyIDs), sortedCopy([]string{db.pk, db.sel, text, num, tpl})) {
		t.Fatalf("stored keyIDs = %v", av.KeyIDs)
	}
	wantEqual(t, "stored number after getAttributeViewKeys", cellText(storedCell(av, num, bound), nil),
		`{"type":"number","number":{"content":1234,"isNotEmpty":true,"format":"commas","formattedContent":"1,234"}}`)
	if v := storedCell(av, text, bound); v != nil {
		t.Fatalf("an empty cell was stored: %+v", v)
	}
	// Keys are then listed in keyIDs order.
	keys, err = s.c.GetAttributeViewKeys(t.Context(), paras[0])
	must(t, "GetAttributeViewKeys again", err)
	var order []string
	for _, kv := range keys[0].KeyValues {
		order = append(order, kv.Key.ID)
	}
	requireOrder(t, "key order", order, av.KeyIDs)
	// By item: keys with a cell only.
	items, err := s.c.GetAttributeViewItemKeys(t.Context(), db.av, bound)
	must(t, "GetAttributeViewItemKeys", err)
	if len(items) != 1 || len(items[0].KeyValues) != len(want) {
		t.Fatalf("item keys = %+v", items)
	}
	for _, id := range []string{paras[1], unknownID} {
		keys, err := s.c.GetAttributeViewKeys(t.Context(), id)
		must(t, "GetAttributeViewKeys "+id, err)
		if len(keys) != 0 {
			t.Fatalf("keys of %s = %+v", id, keys)
		}
	}
	if items, err := s.c.GetAttributeViewItemKeys(t.Context(), db.av, unknownID); err != nil || len(items) != 0 {
		t.Fatalf("item keys of an unknown item = %+v, %v", items, err)
	}
	// getAttributeViewKeysByAvID: the keys as stored.
	all, err := s.c.GetAttributeViewKeysByAvID(t.Context(), db.av)
	must(t, "GetAttributeViewKeysByAvID", err)
	var names []string
	for _, k := range all {
		names = append(names, k.Name+":"+k.Type)
	}
	requireOrder(t, "keys by avID", names, []string{"Primary Key:block", "Select:select", "Notes:text", "Amount:number", "T:template"})
	if all, err := s.c.GetAttributeViewKeysByAvID(t.Context(), unknownID); err != nil || len(all) != 0 {
		t.Fatalf("keys of an unknown database = %v, %v", all, err)
	}
}

// checkAVFilterSortMirror: a new view's filters are an empty "and" group
// and its sorts empty; a second block showing the database makes it a
// mirror, listed by getMirrorDatabaseBlocks, and shows the current view.
func checkAVFilterSortMirror(t *testing.T, s *suite) {
	db, paras := s.newDB(t, "p")
	fs, err := s.c.GetAttributeViewFilterSort(t.Context(), db.av, db.block)
	must(t, "GetAttributeViewFilterSort", err)
	if len(fs.Filters) != 1 || fs.Filters[0].Combination != "and" || fs.Filters[0].Value != nil || fs.Sorts == nil || len(fs.Sorts) != 0 {
		t.Fatalf("filter sort = %+v", fs)
	}
	r := s.rawJSON(t, "/api/av/getAttributeViewFilterSort", `{"id":"`+db.av+`","blockID":""}`)
	wantEqual(t, "filter sort, raw", string(r.body), `{"code":0,"msg":"","data":{"filters":[{"column":"","operator":"","value":null,"combination":"and"}],"sorts":[]}}`)
	r = s.rawJSON(t, "/api/av/getAttributeViewFilterSort", `{"id":"`+unknownID+`","blockID":""}`)
	wantEqual(t, "filter sort of an unknown database, raw", string(r.body), `{"code":0,"msg":"","data":{"filters":null,"sorts":null}}`)

	blocks, err := s.c.GetMirrorDatabaseBlocks(t.Context(), db.av)
	must(t, "GetMirrorDatabaseBlocks", err)
	requireOrder(t, "mirror blocks", blocks, []string{db.block})
	if r := s.render(t, siyuan.RenderAVRequest{ID: db.av}); r.IsMirror {
		t.Fatal("one block is a mirror")
	}
	mirror := freshID()
	s.tx(t, siyuan.InsertDatabaseBlockOp(mirror, db.av, paras[0], ""))
	blocks, err = s.c.GetMirrorDatabaseBlocks(t.Context(), db.av)
	must(t, "GetMirrorDatabaseBlocks", err)
	requireOrder(t, "mirror blocks", sortedCopy(blocks), sortedCopy([]string{db.block, mirror}))
	if r := s.render(t, siyuan.RenderAVRequest{ID: db.av}); !r.IsMirror {
		t.Fatal("two blocks: not a mirror")
	}
	// A block inserted for an existing database shows its current view.
	a := s.treeAttrs(t, mirror)
	if a["custom-sy-av-view"] != s.storedAV(t, db.av).ViewID {
		t.Fatalf("mirror block attrs = %v", a)
	}
	if blocks, err := s.c.GetMirrorDatabaseBlocks(t.Context(), unknownID); err != nil || len(blocks) != 0 {
		t.Fatalf("mirror blocks of an unknown database = %v, %v", blocks, err)
	}
}

// checkAVSearch: databases shown by a block are found by words of their
// name, with their views as children and the notebook name before the
// document's path.
func checkAVSearch(t *testing.T, s *suite) {
	db, _ := s.newDB(t)
	word := randWord(10)
	s.tx(t, siyuan.SetAttrViewNameOp(db.av, "Books "+word))
	hidden := freshID() // a database no block shows is never found
	s.removeAV(t, hidden)
	_, err := s.c.RenderAttributeViewOrCreate(t.Context(), siyuan.RenderAVRequest{ID: hidden})
	must(t, "create a database without a block", err)
	s.tx(t, siyuan.SetAttrViewNameOp(hidden, "Books "+word))
	res, err := s.c.SearchAttributeView(t.Context(), word+" books", nil)
	must(t, "SearchAttributeView", err)
	if len(res) != 1 {
		t.Fatalf("search %s = %+v", word, res)
	}
	got := res[0]
	hpath, err := s.c.GetHPathByID(t.Context(), db.doc)
	must(t, "GetHPathByID", err)
	if got.AvID != db.av || got.AvName != "Books "+word || got.BlockID != db.block || got.HPath != s.boxName+hpath ||
		got.ViewID != "" || got.ViewName != "" || len(got.Children) != 1 {
		t.Fatalf("search result = %+v", got)
	}
	c := got.Children[0]
	if c.AvID != db.av || c.ViewName != "Table" || c.ViewLayout != "table" || c.ViewID == "" || c.BlockID != db.block || c.HPath != got.HPath || c.Children != nil {
		t.Fatalf("search result child = %+v", c)
	}
	res, err = s.c.SearchAttributeView(t.Context(), word, []string{db.av})
	must(t, "SearchAttributeView with excludes", err)
	if len(res) != 0 {
		t.Fatalf("excluded database found: %+v", res)
	}
	if res, err = s.c.SearchAttributeView(t.Context(), word+" nothing", nil); err != nil || len(res) != 0 {
		t.Fatalf("every word must match: %+v, %v", res, err)
	}
}

// checkAVPrimaryKeyValues: the rows' primary keys containing a keyword,
// most recently changed first, 16 a page by default; rows bound to a
// deleted block are left out.
func checkAVPrimaryKeyValues(t *testing.T, s *suite) {
	db, paras := s.newDB(t, "Bound apple", "gone apple")
	b0, b1 := freshID(), freshID()
	s.tx(t, siyuan.InsertAttrViewBlockOp(db.av, db.block, []siyuan.AVSrc{{ItemID: b0, ID: paras[0]}, {ItemID: b1, ID: paras[1]}}, ""))
	items := s.detachedRows(t, db, "red apple", "pear")
	s.setCells(t, db, [3]string{db.pk, items[0], `{"block":{"content":"red APPLE"}}`}) // changed last
	_, err := s.c.DeleteBlock(t.Context(), paras[1])
	must(t, "DeleteBlock", err)
	s.eventually(t, "the deleted block is gone", func() bool { return !s.exists(t, paras[1]) })
	pk, err := s.c.GetAttributeViewPrimaryKeyValues(t.Context(), siyuan.AVPrimaryKeyValuesRequest{ID: db.av, Keyword: "Apple"})
	must(t, "GetAttributeViewPrimaryKeyValues", err)
	if pk.Name != "Untitled" || !slices.Equal(pk.BlockIDs, []string{db.block}) || pk.Rows == nil || pk.Rows.Key.ID != db.pk {
		t.Fatalf("primary key values = %+v", pk)
	}
	var got []string
	for _, v := range pk.Rows.Values {
		got = append(got, v.BlockID)
	}
	requireOrder(t, "primary keys with apple", got, []string{items[0], b0})
	pk, err = s.c.GetAttributeViewPrimaryKeyValues(t.Context(), siyuan.AVPrimaryKeyValuesRequest{ID: db.av, Page: 2, PageSize: 1})
	must(t, "GetAttributeViewPrimaryKeyValues page 2", err)
	if len(pk.Rows.Values) != 1 {
		t.Fatalf("page 2 of 1 = %+v", pk.Rows.Values)
	}
	_, err = s.c.GetAttributeViewPrimaryKeyValues(t.Context(), siyuan.AVPrimaryKeyValuesRequest{ID: unknownID})
	if api := apiError(t, "primary keys of an unknown database", err); api.Msg != "view not found" {
		t.Fatalf("unknown: %v", err)
	}
	_, err = s.c.GetAttributeViewPrimaryKeyValues(t.Context(), siyuan.AVPrimaryKeyValuesRequest{ID: "nope"})
	if api := apiError(t, "primary keys of a malformed ID", err); api.Msg != "invalid attribute view id" {
		t.Fatalf("malformed: %v", err)
	}
	// The deleted block's row is gone from the database too.
	if v := storedCell(s.storedAV(t, db.av), db.pk, b1); v != nil {
		t.Fatalf("row of a deleted block = %+v", v)
	}
}

// checkAVDuplicate: duplicateAttributeViewBlock writes a copy with a new
// ID (the keys, views and rows keep theirs), named "(Duplicated …)", binds
// the bound blocks to it too, and reserves a block ID the caller inserts.
func checkAVDuplicate(t *testing.T, s *suite) {
	db, paras := s.newDB(t, "bound")
	s.tx(t, siyuan.SetAttrViewNameOp(db.av, "Original"))
	bound := freshID()
	s.tx(t, siyuan.InsertAttrViewBlockOp(db.av, db.block, []siyuan.AVSrc{{ItemID: bound, ID: paras[0]}}, ""))
	dup, err := s.c.DuplicateAttributeViewBlock(t.Context(), db.av)
	must(t, "DuplicateAttributeViewBlock", err)
	if !nodeIDRe.MatchString(dup.AvID) || !nodeIDRe.MatchString(dup.BlockID) || dup.AvID == db.av {
		t.Fatalf("duplicate = %+v", dup)
	}
	s.removeAV(t, dup.AvID)
	orig, copied := s.storedAV(t, db.av), s.storedAV(t, dup.AvID)
	if !dupNameRe.MatchString(copied.Name) || copied.ViewID != orig.ViewID || !slices.Equal(keyNames(copied), keyNames(orig)) ||
		storedCell(copied, db.pk, bound) == nil || copied.KeyValues[0].Key.ID != db.pk {
		t.Fatalf("copy = %+v (original %+v)", copied, orig)
	}
	if a := s.treeAttrs(t, paras[0]); a["custom-avs"] != db.av+","+dup.AvID {
		t.Fatalf("bound block attrs = %v", a)
	}
	if s.exists(t, dup.BlockID) {
		t.Fatal("the reserved block exists before the insert")
	}
	if blocks, err := s.c.GetMirrorDatabaseBlocks(t.Context(), dup.AvID); err != nil || len(blocks) != 0 {
		t.Fatalf("blocks of the copy before the insert = %v, %v", blocks, err)
	}
	s.tx(t, siyuan.InsertDatabaseBlockOp(dup.BlockID, dup.AvID, db.block, ""))
	if blocks, err := s.c.GetMirrorDatabaseBlocks(t.Context(), dup.AvID); err != nil || !slices.Equal(blocks, []string{dup.BlockID}) {
		t.Fatalf("blocks of the copy = %v, %v", blocks, err)
	}
	r := s.render(t, siyuan.RenderAVRequest{ID: dup.AvID, BlockID: dup.BlockID})
	requireOrder(t, "rows of the copy", rowIDs(r), []string{bound})
	_, err = s.c.DuplicateAttributeViewBlock(t.Context(), unknownID)
	if api := apiError(t, "duplicate unknown", err); api.Msg != "view not found" {
		t.Fatalf("duplicate unknown: %v", err)
	}
}

// checkAVAPIForms: addAttributeViewBlocks, removeAttributeViewBlocks,
// addAttributeViewKey, removeAttributeViewKey, setAttributeViewBlockAttr
// and batchSetAttributeViewBlockAttrs change what the operations change,
// at once, and answer errors instead of failing silently.
func checkAVAPIForms(t *testing.T, s *suite) {
	db, paras := s.newDB(t, "bound")
	ctx := t.Context()
	key := freshID()
	must(t, "AddAttributeViewKey", s.c.AddAttributeViewKey(ctx, siyuan.AddAVKeyRequest{AvID: db.av, KeyID: key, KeyName: "Notes", KeyType: "text", PreviousKeyID: db.sel}))
	requireOrder(t, "columns", viewColumns(s.storedAV(t, db.av).Views[0]), []string{db.pk, db.sel, key})
	err := s.c.AddAttributeViewKey(ctx, siyuan.AddAVKeyRequest{AvID: unknownID, KeyID: freshID(), KeyName: "x", KeyType: "text"})
	if api := apiError(t, "add key to unknown", err); api.Msg != "view not found" {
		t.Fatalf("add key to unknown: %v", err)
	}
	bound, det := freshID(), freshID()
	must(t, "AddAttributeViewBlocks", s.c.AddAttributeViewBlocks(ctx, siyuan.AddAVBlocksRequest{AvID: db.av, BlockID: db.block,
		Srcs: []siyuan.AVSrc{{ItemID: bound, ID: paras[0]}, {ItemID: det, Detached: true, Content: "api row"}}}))
	requireOrder(t, "items", s.storedAV(t, db.av).Views[0].ItemIDs, []string{bound, det})
	if a := s.treeAttrs(t, paras[0]); a["custom-avs"] != db.av {
		t.Fatalf("bound block attrs = %v", a)
	}
	var num siyuan.AVValue
	mustJSON(t, `{"text":{"content":"via api"}}`, &num)
	v, err := s.c.SetAttributeViewBlockAttr(ctx, db.av, key, det, &num)
	must(t, "SetAttributeViewBlockAttr", err)
	if v == nil || v.KeyID != key || v.BlockID != det || v.Type != "text" || v.Text.Content != "via api" || v.UpdatedAt != v.CreatedAt+1000 {
		t.Fatalf("set cell answer = %+v", v)
	}
	r := s.rawJSON(t, "/api/av/setAttributeViewBlockAttr", `{"avID":"`+db.av+`","keyID":"`+key+`","rowID":"`+det+`","value":{"text":{"content":"x"}}}`)
	wantEqual(t, "rowID refused", string(r.body), `{"code":-1,"msg":"[/api/av/setAttributeViewBlockAttr] parameter [rowID] is deprecated, visit [https://github.com/siyuan-note/siyuan/issues/15727] for details","data":null}`)
	var u1, u2 siyuan.AVValue
	mustJSON(t, `{"text":{"content":"batch 1"}}`, &u1)
	mustJSON(t, `{"block":{"content":"renamed row"}}`, &u2)
	must(t, "BatchSetAttributeViewBlockAttrs", s.c.BatchSetAttributeViewBlockAttrs(ctx, db.av,
		[]siyuan.AVCellUpdate{{KeyID: key, ItemID: bound, Value: &u1}, {KeyID: db.pk, ItemID: det, Value: &u2}}))
	av := s.storedAV(t, db.av)
	if storedCell(av, key, bound).Text.Content != "batch 1" || storedCell(av, db.pk, det).Block.Content != "renamed row" {
		t.Fatalf("after batch: %s", renderText(s.render(t, siyuan.RenderAVRequest{ID: db.av})))
	}
	r = s.rawJSON(t, "/api/av/batchSetAttributeViewBlockAttrs", `{"avID":"`+db.av+`","values":[{"keyID":"`+key+`","rowID":"`+det+`","value":{}}]}`)
	wantEqual(t, "rowID refused in a batch", string(r.body), `{"code":-1,"msg":"[/api/av/batchSetAttributeViewBlockAttrs] parameter [rowID] is deprecated, visit [https://github.com/siyuan-note/siyuan/issues/15727] for details","data":null}`)

	must(t, "RemoveAttributeViewBlocks", s.c.RemoveAttributeViewBlocks(ctx, db.av, []string{bound}))
	requireOrder(t, "items after removal", s.storedAV(t, db.av).Views[0].ItemIDs, []string{det})
	if a := s.treeAttrs(t, paras[0]); a["custom-avs"] != "" {
		t.Fatalf("removed row's block attrs = %v", a)
	}
	err = s.c.RemoveAttributeViewKey(ctx, db.av, db.pk, false)
	if api := apiError(t, "remove the primary key", err); api.Msg != "cannot remove primary key field" {
		t.Fatalf("remove primary key: %v", err)
	}
	err = s.c.RemoveAttributeViewKey(ctx, db.av, unknownID, false)
	if api := apiError(t, "remove an unknown key", err); api.Msg != "key not found" {
		t.Fatalf("remove unknown key: %v", err)
	}
	must(t, "RemoveAttributeViewKey", s.c.RemoveAttributeViewKey(ctx, db.av, key, false))
	requireOrder(t, "keys after removal", keyNames(s.storedAV(t, db.av)), []string{"Primary Key:block", "Select:select"})
	for _, tc := range []struct {
		what string
		err  error
		msg  string
	}{
		{"add an unknown block", s.c.AddAttributeViewBlocks(ctx, siyuan.AddAVBlocksRequest{AvID: db.av, Srcs: []siyuan.AVSrc{{ItemID: freshID(), ID: unknownID}}}), "tree not found"},
		{"add to an unknown database", s.c.AddAttributeViewBlocks(ctx, siyuan.AddAVBlocksRequest{AvID: unknownID, Srcs: []siyuan.AVSrc{{Detached: true}}}), "view not found"},
		{"add to a malformed ID", s.c.AddAttributeViewBlocks(ctx, siyuan.AddAVBlocksRequest{AvID: "bad", Srcs: []siyuan.AVSrc{{Detached: true}}}), "invalid attribute view id"},
		{"remove from an unknown database", s.c.RemoveAttributeViewBlocks(ctx, unknownID, []string{det}), "view not found"},
		{"remove a key of an unknown database", s.c.RemoveAttributeViewKey(ctx, unknownID, key, false), "view not found"},
		{"set a cell of an unknown database", func() error { _, err := s.c.SetAttributeViewBlockAttr(ctx, unknownID, key, det, &num); return err }(), "view not found"},
		{"batch of an unknown database", s.c.BatchSetAttributeViewBlockAttrs(ctx, unknownID, []siyuan.AVCellUpdate{{KeyID: key, ItemID: det, Value: &num}}), "view not found"},
	} {
		var api *siyuan.APIError
		if !errors.As(tc.err, &api) || api.Code != -1 || api.Msg != tc.msg {
			t.Fatalf("%s: %v, want code -1 %q", tc.what, tc.err, tc.msg)
		}
	}
}

// checkAVAddRowsPlacement: addAttributeViewBlocks puts rows after
// previousID, in order, in every view; takes viewID, a groupID (of no
// group: the view is not grouped) and ignoreDefaultFill; refuses an
// unknown viewID with "view not found", the row not added.
func checkAVAddRowsPlacement(t *testing.T, s *suite) {
	db, _ := s.newDB(t, "placement")
	ctx := t.Context()
	a, b, c, d := freshID(), freshID(), freshID(), freshID()
	must(t, "AddAttributeViewBlocks", s.c.AddAttributeViewBlocks(ctx, siyuan.AddAVBlocksRequest{AvID: db.av, BlockID: db.block,
		Srcs: []siyuan.AVSrc{{ItemID: a, Detached: true, Content: "a"}, {ItemID: b, Detached: true, Content: "b"}}}))
	view := s.storedAV(t, db.av).Views[0].ID
	must(t, "AddAttributeViewBlocks after a", s.c.AddAttributeViewBlocks(ctx, siyuan.AddAVBlocksRequest{AvID: db.av, BlockID: db.block,
		ViewID: view, GroupID: freshID(), PreviousID: a, IgnoreDefaultFill: true,
		Srcs: []siyuan.AVSrc{{ItemID: c, Detached: true, Content: "c"}, {ItemID: d, Detached: true, Content: "d"}}}))
	requireOrder(t, "items", s.storedAV(t, db.av).Views[0].ItemIDs, []string{a, c, d, b})
	err := s.c.AddAttributeViewBlocks(ctx, siyuan.AddAVBlocksRequest{AvID: db.av, BlockID: db.block, ViewID: freshID(),
		Srcs: []siyuan.AVSrc{{ItemID: freshID(), Detached: true, Content: "e"}}})
	if api := apiError(t, "add to an unknown view", err); api.Msg != "view not found" {
		t.Fatalf("add to an unknown view: %v", err)
	}
	av := s.storedAV(t, db.av)
	requireOrder(t, "items after the refusal", av.Views[0].ItemIDs, []string{a, c, d, b})
	for _, kv := range av.KeyValues {
		if kv.Key.ID == db.pk && len(kv.Values) != 4 {
			t.Fatalf("primary key values after the refusal: %d, want 4", len(kv.Values))
		}
	}
}

// checkAVDeleteBlock: deleting a database's last block unbinds its rows'
// blocks (the database stays, rows and all); a mirror keeps them bound;
// inserting a block for the database again binds them again and shows
// its current view.
func checkAVDeleteBlock(t *testing.T, s *suite) {
	db, paras := s.newDB(t, "bound")
	bound := freshID()
	s.tx(t, siyuan.InsertAttrViewBlockOp(db.av, db.block, []siyuan.AVSrc{{ItemID: bound, ID: paras[0]}}, ""))
	mirror := freshID()
	s.tx(t, siyuan.InsertDatabaseBlockOp(mirror, db.av, paras[0], ""))
	del := func(id string) {
		_, err := s.c.DeleteBlock(t.Context(), id)
		must(t, "DeleteBlock", err)
		s.eventually(t, "the block is gone", func() bool { return !s.exists(t, id) })
	}
	del(mirror)
	if a := s.treeAttrs(t, paras[0]); a["custom-avs"] != db.av {
		t.Fatalf("after deleting a mirror: %v", a)
	}
	del(db.block)
	if a := s.treeAttrs(t, paras[0]); a["custom-avs"] != "" {
		t.Fatalf("after deleting the last block: %v", a)
	}
	if blocks, err := s.c.GetMirrorDatabaseBlocks(t.Context(), db.av); err != nil || len(blocks) != 0 {
		t.Fatalf("blocks after the delete = %v, %v", blocks, err)
	}
	av := s.storedAV(t, db.av)
	if v := storedCell(av, db.pk, bound); v == nil || v.Block.ID != paras[0] {
		t.Fatalf("the row after the delete = %+v", v)
	}
	again := freshID()
	s.tx(t, siyuan.InsertDatabaseBlockOp(again, db.av, "", db.doc))
	if a := s.treeAttrs(t, paras[0]); a["custom-avs"] != db.av {
		t.Fatalf("after inserting a block again: %v", a)
	}
	if a := s.treeAttrs(t, again); a["custom-sy-av-view"] != av.ViewID {
		t.Fatalf("the new block's attributes = %v", a)
	}
}
