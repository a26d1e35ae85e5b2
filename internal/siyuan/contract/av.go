package contract

// Databases (attribute views): a database block inserted as the editor
// inserts one, the file renderAttributeView writes, the raw and rendered
// database, and the errors of the read endpoints.

import (
	"slices"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// avChecks are the database checks, run after the others.
var avChecks = []check{
	{"av_create_block_then_render_writes_file", checkAVCreate},
	{"av_insert_block_markdown", checkAVInsertMarkdown},
	{"av_render_unknown_and_malformed", checkAVRenderUnknown},
	{"av_columns_added_in_place", checkAVAddCols},
	{"av_rows_bound_and_detached", checkAVRows},
	{"av_render_pages_query_and_columns_only", checkAVRenderPaging},
	{"av_cell_text", checkAVCellText},
	{"av_cell_number_and_formats", checkAVCellNumber},
	{"av_cell_select_and_mselect", checkAVCellSelect},
	{"av_cell_date", checkAVCellDate},
	{"av_cell_checkbox_and_url", checkAVCellCheckboxURL},
	{"av_cell_template", checkAVCellTemplate},
	{"av_cell_template_rendered_twice", checkAVTemplateTwice},
	{"av_cell_primary_key", checkAVCellPrimaryKey},
	{"av_cell_created_updated_assets_email_phone", checkAVCellTimesAssets},
	{"av_relation_two_way_across_databases", checkAVRelation},
	{"av_relation_to_itself_and_remove_dest", checkAVRelationSelf},
	{"av_rollup_of_related_rows", checkAVRollup},
	{"av_remove_rows_and_columns", checkAVRemove},
	{"av_rename_and_failed_operation", checkAVRename},
	{"av_keys_of_a_bound_block", checkAVKeys},
	{"av_filter_sort_and_mirror_blocks", checkAVFilterSortMirror},
	{"av_search_by_name", checkAVSearch},
	{"av_primary_key_values", checkAVPrimaryKeyValues},
	{"av_duplicate_database_block", checkAVDuplicate},
	{"av_api_forms_of_the_operations", checkAVAPIForms},
	{"av_add_rows_placement_arguments", checkAVAddRowsPlacement},
	{"av_render_whole_view", checkAVRenderWhole},
	{"av_export_md_database_block", checkExportMdDatabase},
	{"av_delete_database_block_unbinds_rows", checkAVDeleteBlock},
	// What staged creations and relation cells rely on (av_create.go).
	{"av_create_stages_sent_twice", checkAVCreateTwice},
	{"av_create_block_after_previous", checkAVCreateAfter},
	{"av_relation_cells_by_the_api_form", checkAVRelationCellsAPI},
	{"av_spin_block_dom", checkAVSpinBlockDOM},
	// What a view's settings do to its render (av_views.go).
	{"av_view_filters_each_operator", checkAVFilters},
	{"av_view_filters_generated_columns", checkAVFiltersGenerated},
	{"av_view_sorts_each_type", checkAVSorts},
	{"av_view_column_calculations", checkAVCalcs},
	{"av_view_added_and_its_settings", checkAVViewSettings},
	// What set_column_options and duplicate_rows rely on (av_rowops.go).
	{"av_column_options_replaced", checkAVColOptions},
	{"av_duplicate_row", checkAVDuplicateRow},
	{"av_new_item_templates", checkAVNewItemTemplates},
	// Configuring existing relation and rollup columns (av_relations2.go).
	{"av_relation_reconfigured_two_way", checkAVRelationReconfigured},
	{"av_rollup_reconfigured_drops_filters", checkAVRollupReconfiguredFilters},
	{"av_view_groups", checkAVGroups},
	{"av_rollup_change_drops_its_filters", checkAVRollupFiltersDropped},
	{"av_card_views_added", checkAVCardViews},
	{"av_card_views_rendered", checkAVCardViewsRendered},
	{"av_card_fields_follow_columns", checkAVCardFieldsFollowColumns},
	{"av_calc_date_range", checkAVCalcDateRange},
	{"av_calc_template", checkAVCalcTemplate},
	{"av_duplicate_row_grouped", checkAVDuplicateRowGrouped},
	{"av_append_detached_rows", checkAVAppendDetachedRows},
	{"av_filter_defaults", checkAVFilterDefaults},
	{"av_two_way_default", checkAVTwoWayDefault},
	{"av_card_settings", checkAVCardSettings},
}

// checkAVCreate: an inserted database block shows nothing until the first
// render, which writes a database with a table view, a primary key and a
// select key.
func checkAVCreate(t *testing.T, s *suite) {
	db, _ := s.newDB(t)
	r := s.render(t, siyuan.RenderAVRequest{ID: db.av, BlockID: db.block})
	wantEqual(t, "render id", r.ID, db.av)
	wantEqual(t, "render name", r.Name, "")
	wantEqual(t, "render viewType", r.ViewType, "table")
	wantEqual(t, "render isMirror", r.IsMirror, false)
	wantEqual(t, "render newItemTemplates", string(r.NewItemTemplates), "null")
	if len(r.Views) != 1 || r.Views[0].ID != r.ViewID || r.Views[0].Name != "Table" || r.Views[0].Type != "table" || r.Views[0].PageSize != 50 {
		t.Fatalf("render views = %+v (viewID %s)", r.Views, r.ViewID)
	}
	v := r.View
	if v.ID != r.ViewID || v.Name != "Table" || v.PageSize != 50 || !v.ShowIcon || v.WrapField || string(v.Group) != "null" ||
		v.RowCount != 0 || v.Rows == nil || len(v.Rows) != 0 || v.Sorts == nil || len(v.Sorts) != 0 {
		t.Fatalf("rendered view = %+v", v)
	}
	if len(v.Filters) != 1 || v.Filters[0].Combination != "and" || len(v.Filters[0].Filters) != 0 || v.Filters[0].Column != "" {
		t.Fatalf("rendered filters = %+v, want one empty \"and\" group", v.Filters)
	}
	var cols []string
	for _, c := range v.Columns {
		cols = append(cols, c.Name+":"+c.Type+":"+string(c.Calc))
	}
	requireOrder(t, "rendered columns", cols, []string{"Primary Key:block:null", "Select:select:null"})

	av := s.storedAV(t, db.av)
	wantEqual(t, "stored spec", av.Spec, 5)
	wantEqual(t, "stored id", av.ID, db.av)
	requireOrder(t, "stored keys", keyNames(av), []string{"Primary Key:block", "Select:select"})
	if av.KeyIDs != nil || av.ViewID != r.ViewID || len(av.Views) != 1 {
		t.Fatalf("stored database = %+v", av)
	}
	sv := av.Views[0]
	requireOrder(t, "stored view columns", viewColumns(sv), []string{db.pk, db.sel})
	if sv.LayoutType != "table" || sv.PageSize != 50 || sv.ItemIDs != nil || sv.Sorts != nil || len(sv.Filters) != 1 ||
		sv.Filters[0].Combination != "and" || !sv.Table.ShowIcon || sv.GroupItemIDs != nil {
		t.Fatalf("stored view = %+v table %+v", sv, sv.Table)
	}
	for _, kv := range av.KeyValues {
		if kv.Values != nil {
			t.Fatalf("a new database has values: %+v", kv)
		}
	}

	// The block: a NodeAttributeView, first in the document.
	if kids := s.children(t, db.doc); len(kids) < 2 || kids[0].ID != db.block || kids[0].Type != "av" {
		t.Fatalf("document children = %+v", kids)
	}
	got := normKramdown(s.kramdown(t, db.block), map[string]string{db.block: "BLOCK", db.av: "AV"})
	want := `<div data-type="NodeAttributeView" data-av-id="AV" data-av-type="table"></div>` + "\n" + `{: id="BLOCK" updated="TS"}`
	wantEqual(t, "database block kramdown", got, want)
	dom, err := s.c.GetBlockDOM(t.Context(), db.block)
	must(t, "GetBlockDOM", err)
	wantDOM := `<div contenteditable="false" data-av-id="AV" data-av-type="table" data-node-id="ID" data-type="NodeAttributeView" class="av" updated="TS"><div spellcheck="false"></div><div class="protyle-attr" contenteditable="false">` + "\u200b" + `</div></div>`
	// (SiYuan numbers the block, data-node-index="1"; the embedded kernel does not.)
	gotDOM := nodeIndexRe.ReplaceAllString(normDOM(strings.ReplaceAll(dom.DOM, db.av, "AV")), "")
	wantEqual(t, "database block DOM", gotDOM, wantDOM)
	// The block's content in the index is the database's text when the
	// index is flushed (so "" on SiYuan when its own flush came before the
	// render wrote the file).
	s.flush(t)
	rows := s.sqlRows(t, "SELECT type, content, markdown FROM blocks WHERE id = '"+db.block+"'")
	content := "Table Primary Key Select"
	if len(rows) > 0 && s.k.Live && str(rows[0]["content"]) == "" {
		content = ""
	}
	if len(rows) == 0 || str(rows[0]["type"]) != "av" || str(rows[0]["content"]) != content ||
		str(rows[0]["markdown"]) != `<div data-type="NodeAttributeView" data-av-id="`+db.av+`" data-av-type="table"></div>` {
		t.Fatalf("SQL row of the database block = %v", rows)
	}
}

// checkAVInsertMarkdown: insertBlock with the database block's HTML as
// Markdown makes a database block too; getChildBlocks gives a database
// block the database's text as its content once the file exists.
func checkAVInsertMarkdown(t *testing.T, s *suite) {
	doc := s.newDoc(t, "dbmd-"+randWord(6), "p")
	avID := freshID()
	s.removeAV(t, avID)
	txs, err := s.c.InsertBlock(t.Context(), siyuan.InsertBlockRequest{DataType: "markdown", ParentID: doc,
		Data: `<div data-type="NodeAttributeView" data-av-id="` + avID + `" data-av-type="table"></div>`})
	must(t, "InsertBlock", err)
	block := oneInsert(t, txs).ID
	kids := s.children(t, doc)
	if kids[0].ID != block || kids[0].Type != "av" || kids[0].Content != "" ||
		kids[0].Markdown != `<div data-type="NodeAttributeView" data-av-id="`+avID+`" data-av-type="table"></div>` {
		t.Fatalf("children = %+v", kids)
	}
	_, err = s.c.RenderAttributeViewOrCreate(t.Context(), siyuan.RenderAVRequest{ID: avID, BlockID: block})
	must(t, "RenderAttributeViewOrCreate", err)
	s.tx(t, siyuan.SetAttrViewNameOp(avID, "Named"))
	if kids := s.children(t, doc); kids[0].Content != "Named Table Primary Key Select" {
		t.Fatalf("children after the render = %+v", kids)
	}
}

// checkAVRenderUnknown: without createIfNotExist an unknown database is an
// error, a malformed ID always is; getAttributeView answers null.
func checkAVRenderUnknown(t *testing.T, s *suite) {
	unknown := freshID()
	_, err := s.c.RenderAttributeView(t.Context(), siyuan.RenderAVRequest{ID: unknown})
	if api := apiError(t, "render unknown", err); api.Code != -1 || api.Msg != "attribute view not found" {
		t.Fatalf("render unknown: %v", err)
	}
	_, err = s.c.RenderAttributeView(t.Context(), siyuan.RenderAVRequest{ID: "not-an-id"})
	if api := apiError(t, "render malformed", err); api.Code != -1 || api.Msg != "invalid id" {
		t.Fatalf("render malformed: %v", err)
	}
	for _, id := range []string{unknown, "not-an-id"} {
		av, err := s.c.GetAttributeView(t.Context(), id)
		must(t, "GetAttributeView "+id, err)
		if av != nil {
			t.Fatalf("GetAttributeView(%s) = %+v, want nil", id, av)
		}
	}
	r := s.rawJSON(t, "/api/av/getAttributeView", `{"id":"`+unknown+`"}`)
	wantEqual(t, "getAttributeView of unknown, raw", string(r.body), `{"code":0,"msg":"","data":{"av":null}}`)
	// With createIfNotExist (SiYuan's default) any well-formed ID becomes a
	// database, no block needed.
	s.removeAV(t, unknown)
	created, err := s.c.RenderAttributeViewOrCreate(t.Context(), siyuan.RenderAVRequest{ID: unknown})
	must(t, "RenderAttributeViewOrCreate", err)
	if created.ID != unknown || len(created.View.Columns) != 2 {
		t.Fatalf("created = %+v", created)
	}
	if av := s.storedAV(t, unknown); av.ID != unknown {
		t.Fatalf("stored = %+v", av)
	}
}

// checkAVAddCols: addAttrViewCol places a column after previousID, first
// (before the primary key) without one, and adds nothing for a type it
// does not know or the primary key's; key IDs are not deduplicated.
func checkAVAddCols(t *testing.T, s *suite) {
	db, _ := s.newDB(t)
	ids := map[string]string{}
	var cols [][3]string
	for _, typ := range []string{"text", "number", "date", "mSelect", "url", "checkbox", "template", "email", "phone", "mAsset", "created", "updated", "relation", "rollup", "lineNumber"} {
		id := freshID()
		ids[typ] = id
		cols = append(cols, [3]string{id, "C " + typ, typ})
	}
	s.addCols(t, db, cols...)
	first, bad1, bad2 := freshID(), freshID(), freshID()
	s.tx(t, siyuan.AddAttrViewColOp(db.av, first, "First", "text", "1f600", ""),
		siyuan.AddAttrViewColOp(db.av, bad1, "Bad", "nope", "", db.sel),
		siyuan.AddAttrViewColOp(db.av, bad2, "Block", "block", "", db.sel),
		siyuan.AddAttrViewColOp(db.av, first, "First again", "text", "", "20200101000000-zzzzzzz"))
	av := s.storedAV(t, db.av)
	want := []string{"Primary Key:block", "Select:select"}
	for _, c := range cols {
		want = append(want, c[1]+":"+c[2])
	}
	want = append(want, "First:text", "First again:text")
	requireOrder(t, "stored keys", keyNames(av), want)
	wantCols := []string{first, db.pk, db.sel}
	for _, c := range cols {
		wantCols = append(wantCols, c[0])
	}
	wantCols = append(wantCols, first) // an unknown previous key: last
	requireOrder(t, "view columns", viewColumns(av.Views[0]), wantCols)
	for _, kv := range av.KeyValues {
		switch kv.Key.Type {
		case "rollup":
			if kv.Key.Rollup == nil || kv.Key.Rollup.Calc == nil || kv.Key.Rollup.Calc.Operator != "" || kv.Key.Rollup.RelationKeyID != "" {
				t.Fatalf("new rollup key = %+v", kv.Key)
			}
		case "text":
			if kv.Key.Name == "First" && kv.Key.Icon != "1f600" {
				t.Fatalf("icon = %q", kv.Key.Icon)
			}
		}
		if kv.Key.Type != "rollup" && kv.Key.Rollup != nil || kv.Key.Relation != nil || kv.Key.Options != nil {
			t.Fatalf("new key = %+v", kv.Key)
		}
	}
	// The render shows each column in view order, a duplicated ID twice.
	r := s.render(t, siyuan.RenderAVRequest{ID: db.av})
	var got []string
	for _, c := range r.View.Columns {
		got = append(got, c.ID)
	}
	requireOrder(t, "rendered columns", got, wantCols)
}

// checkAVRows: insertAttrViewBlock adds bound and detached rows (srcs
// applied last first, each placed first: the given order), binds the block
// (custom-avs), and echoes the srcs reversed; a block bound again keeps
// its row.
func checkAVRows(t *testing.T, s *suite) {
	db, paras := s.newDB(t, "bound **one**", "bound two")
	i1, i2, i3 := freshID(), freshID(), freshID()
	txs := s.tx(t, siyuan.InsertAttrViewBlockOp(db.av, db.block, []siyuan.AVSrc{
		{ItemID: i1, ID: paras[0]},
		{ItemID: i2, ID: freshID(), Detached: true, Content: "detached <i>two</i>"},
		{ItemID: i3, Detached: true, Content: ""},
	}, ""))
	op := txs[0].DoOperations[0]
	var echoed []string
	for _, src := range op.Srcs {
		echoed = append(echoed, str(src["itemID"]))
	}
	requireOrder(t, "echoed srcs", echoed, []string{i3, i2, i1})

	av := s.storedAV(t, db.av)
	requireOrder(t, "item order", av.Views[0].ItemIDs, []string{i1, i2, i3})
	var pks []string
	for _, v := range av.KeyValues[0].Values {
		pks = append(pks, v.BlockID+"|"+cellText(v, nil))
	}
	requireOrder(t, "stored primary keys (last src first)", pks, []string{
		i3 + `|{"type":"block","isDetached":true,"block":{"content":""}}`,
		i2 + `|{"type":"block","isDetached":true,"block":{"content":"detached \u003ci\u003etwo\u003c/i\u003e"}}`,
		i1 + `|{"type":"block","block":{"id":"ID?","content":"bound one"}}`,
	})
	for _, v := range av.KeyValues[0].Values {
		if v.CreatedAt == 0 || v.CreatedAt != v.UpdatedAt || v.Block.Created != v.CreatedAt || v.KeyID != db.pk {
			t.Fatalf("new row value = %+v", v)
		}
	}
	if a := s.treeAttrs(t, paras[0]); a["custom-avs"] != db.av {
		t.Fatalf("bound block attrs = %v", a)
	}
	got := normKramdown(s.kramdown(t, paras[0]), map[string]string{paras[0]: "P", db.av: "AV"})
	wantEqual(t, "bound block kramdown", got, "bound **one**\n"+`{: custom-avs="AV" id="P" updated="TS"}`)
	if a := s.treeAttrs(t, paras[1]); a["custom-avs"] != "" {
		t.Fatalf("unbound block attrs = %v", a)
	}

	r := s.render(t, siyuan.RenderAVRequest{ID: db.av, BlockID: db.block})
	requireOrder(t, "rendered rows", rowIDs(r), []string{i1, i2, i3})
	wantEqual(t, "rowCount", r.View.RowCount, 3)
	names := map[string]string{paras[0]: "P"}
	wantEqual(t, "bound row primary key", cellText(cellOf(t, r, i1, db.pk).Value, names), `{"type":"block","block":{"id":"P","content":"bound one"}}`)
	wantEqual(t, "detached row primary key", cellText(cellOf(t, r, i2, db.pk).Value, names), `{"type":"block","isDetached":true,"block":{"content":"detached \u003ci\u003etwo\u003c/i\u003e"}}`)
	// An empty cell: an empty value whose ID starts with the item's time.
	c := cellOf(t, r, i1, db.sel)
	if c.ID != c.Value.ID || !strings.HasPrefix(c.ID, i1[:14]) || c.ID == i1 || c.Value.BlockID != i1 || c.ValueType != "select" ||
		c.Value.CreatedAt != c.Value.UpdatedAt || c.Color != "" || c.BgColor != "" {
		t.Fatalf("empty select cell = %+v value %+v", c, c.Value)
	}
	wantEqual(t, "empty select cell", cellText(c.Value, nil), `{"type":"select"}`)

	// The same block again: no new row; the src's itemID becomes the row's.
	again := freshID()
	txs = s.tx(t, siyuan.InsertAttrViewBlockOp(db.av, db.block, []siyuan.AVSrc{{ItemID: again, ID: paras[0]}}, ""))
	wantEqual(t, "re-added src itemID", str(txs[0].DoOperations[0].Srcs[0]["itemID"]), i1)
	av = s.storedAV(t, db.av)
	requireOrder(t, "item order after re-adding", av.Views[0].ItemIDs, []string{i1, i2, i3})
	// After previousID: inserted there, in every view.
	i4 := freshID()
	s.tx(t, siyuan.InsertAttrViewBlockOp(db.av, db.block, []siyuan.AVSrc{{ItemID: i4, ID: paras[1]}}, i2))
	av = s.storedAV(t, db.av)
	requireOrder(t, "item order after previousID", av.Views[0].ItemIDs, []string{i1, i2, i4, i3})
	// A bound block that does not exist fails the operation (silently).
	s.tx(t, siyuan.InsertAttrViewBlockOp(db.av, db.block, []siyuan.AVSrc{{ItemID: freshID(), ID: unknownID}}, ""))
	if got := s.storedAV(t, db.av).Views[0].ItemIDs; !slices.Equal(got, []string{i1, i2, i4, i3}) {
		t.Fatalf("item order after an unknown block = %v", got)
	}
}

// checkAVRenderPaging: pages of the view's order, the query, and
// ignoreRows; the answer's pageSize stays the view's.
func checkAVRenderPaging(t *testing.T, s *suite) {
	db, _ := s.newDB(t)
	var srcs []siyuan.AVSrc
	var items []string
	for i, text := range []string{"alpha one", "beta two", "Gamma Three", "delta four", "ALPHA five"} {
		id := freshID()
		items = append(items, id)
		srcs = append(srcs, siyuan.AVSrc{ItemID: id, Detached: true, Content: text})
		_ = i
	}
	s.tx(t, siyuan.InsertAttrViewBlockOp(db.av, db.block, srcs, ""))
	r := s.render(t, siyuan.RenderAVRequest{ID: db.av, Page: 2, PageSize: 2})
	requireOrder(t, "page 2 of 2", rowIDs(r), items[2:4])
	if r.View.RowCount != 5 || r.View.PageSize != 50 {
		t.Fatalf("page 2: rowCount %d pageSize %d", r.View.RowCount, r.View.PageSize)
	}
	r = s.render(t, siyuan.RenderAVRequest{ID: db.av, Page: 9, PageSize: 2})
	if len(r.View.Rows) != 0 || r.View.Rows == nil || r.View.RowCount != 5 {
		t.Fatalf("page 9: rows %v rowCount %d", r.View.Rows, r.View.RowCount)
	}
	r = s.render(t, siyuan.RenderAVRequest{ID: db.av, Query: "  alpha   "})
	requireOrder(t, "query alpha", rowIDs(r), []string{items[0], items[4]})
	wantEqual(t, "query rowCount", r.View.RowCount, 2)
	r = s.render(t, siyuan.RenderAVRequest{ID: db.av, Query: "three gamma"})
	requireOrder(t, "query of two words", rowIDs(r), []string{items[2]})
	r = s.render(t, siyuan.RenderAVRequest{ID: db.av, Query: "alpha two"})
	if len(r.View.Rows) != 0 {
		t.Fatalf("words in different rows match nothing: %v", rowIDs(r))
	}
	r = s.render(t, siyuan.RenderAVRequest{ID: db.av, IgnoreRows: true})
	if len(r.View.Rows) != 0 || r.View.RowCount != 0 || len(r.View.Columns) != 2 || r.View.PageSize != 50 {
		t.Fatalf("ignoreRows: %+v", r.View)
	}
	// An unknown view: the current one.
	r = s.render(t, siyuan.RenderAVRequest{ID: db.av, ViewID: unknownID})
	if len(r.View.Rows) != 5 || r.View.ID != r.ViewID {
		t.Fatalf("unknown view: %+v", r.View)
	}
}
