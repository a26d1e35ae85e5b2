package contract

// Databases: cells of each column type, set with updateAttrViewCell as the
// editor sets them, as stored and as rendered.

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// detachedRows adds detached rows with the texts and returns their item IDs.
func (s *suite) detachedRows(t *testing.T, db avDB, texts ...string) []string {
	t.Helper()
	var srcs []siyuan.AVSrc
	var ids []string
	for _, text := range texts {
		id := freshID()
		ids = append(ids, id)
		srcs = append(srcs, siyuan.AVSrc{ItemID: id, Detached: true, Content: text})
	}
	s.tx(t, siyuan.InsertAttrViewBlockOp(db.av, db.block, srcs, ""))
	return ids
}

// setCells sets cells in one transaction: {keyID, itemID, value JSON}.
func (s *suite) setCells(t *testing.T, db avDB, cells ...[3]string) {
	t.Helper()
	var ops []siyuan.Operation
	for _, c := range cells {
		var v siyuan.AVValue
		mustJSON(t, c[2], &v)
		ops = append(ops, siyuan.UpdateAttrViewCellOp(db.av, c[0], c[1], &v))
	}
	s.tx(t, ops...)
}

// storedCell is the stored value of an item in a key (nil when none).
func storedCell(av *siyuan.AttributeView, keyID, itemID string) *siyuan.AVValue {
	for _, kv := range av.KeyValues {
		if kv.Key.ID != keyID {
			continue
		}
		for _, v := range kv.Values {
			if v.BlockID == itemID {
				return v
			}
		}
	}
	return nil
}

func storedKey(av *siyuan.AttributeView, keyID string) *siyuan.AVKey {
	for _, kv := range av.KeyValues {
		if kv.Key.ID == keyID {
			return kv.Key
		}
	}
	return nil
}

// checkAVCellText: a text cell as sent; a new cell's updatedAt is its
// createdAt plus a second; setting it again keeps its ID; the row's
// primary key is touched.
func checkAVCellText(t *testing.T, s *suite) {
	db, _ := s.newDB(t)
	col := freshID()
	s.addCols(t, db, [3]string{col, "Notes", "text"})
	items := s.detachedRows(t, db, "one", "two")
	before := storedCell(s.storedAV(t, db.av), db.pk, items[0])
	s.setCells(t, db, [3]string{col, items[0], `{"type":"text","text":{"content":"hello <b>world</b>  "}}`})
	av := s.storedAV(t, db.av)
	v := storedCell(av, col, items[0])
	if v == nil || v.KeyID != col || v.Type != "text" || v.CreatedAt == 0 || v.UpdatedAt != v.CreatedAt+1000 || !nodeIDRe.MatchString(v.ID) {
		t.Fatalf("stored text cell = %+v", v)
	}
	wantEqual(t, "stored text", cellText(v, nil), `{"type":"text","text":{"content":"hello \u003cb\u003eworld\u003c/b\u003e  "}}`)
	if pk := storedCell(av, db.pk, items[0]); pk.UpdatedAt < before.UpdatedAt || pk.Block.Updated < before.Block.Updated || pk.UpdatedAt == pk.CreatedAt {
		t.Fatalf("primary key after a cell change = %+v (before %+v)", pk, before)
	}
	s.setCells(t, db, [3]string{col, items[0], `{"text":{"content":"again"}}`})
	v2 := storedCell(s.storedAV(t, db.av), col, items[0])
	if v2.ID != v.ID || v2.CreatedAt != v.CreatedAt || v2.Text.Content != "again" {
		t.Fatalf("text cell set again = %+v (was %+v)", v2, v)
	}
	r := s.render(t, siyuan.RenderAVRequest{ID: db.av})
	wantEqual(t, "rendered text", cellText(cellOf(t, r, items[0], col).Value, nil), `{"type":"text","text":{"content":"again"}}`)
	wantEqual(t, "rendered empty text", cellText(cellOf(t, r, items[1], col).Value, nil), `{"type":"text","text":{"content":""}}`)
}

// checkAVCellNumber: a number is stored with its text in the format it
// was sent with; rendering formats it in the column's format; an empty
// number is zeroed.
func checkAVCellNumber(t *testing.T, s *suite) {
	db, _ := s.newDB(t)
	col := freshID()
	s.addCols(t, db, [3]string{col, "Amount", "number"})
	items := s.detachedRows(t, db, "a", "b", "c", "d")
	s.setCells(t, db,
		[3]string{col, items[0], `{"type":"number","number":{"content":1234.5,"isNotEmpty":true,"format":"","formattedContent":""}}`},
		[3]string{col, items[1], `{"type":"number","number":{"content":-0.125,"isNotEmpty":true}}`},
		[3]string{col, items[2], `{"type":"number","number":{"content":42,"isNotEmpty":false,"formattedContent":"42"}}`})
	av := s.storedAV(t, db.av)
	wantEqual(t, "stored number", cellText(storedCell(av, col, items[0]), nil), `{"type":"number","number":{"content":1234.5,"isNotEmpty":true,"format":"","formattedContent":"1234.5"}}`)
	wantEqual(t, "stored negative", cellText(storedCell(av, col, items[1]), nil), `{"type":"number","number":{"content":-0.125,"isNotEmpty":true,"format":"","formattedContent":"-0.125"}}`)
	wantEqual(t, "stored empty number", cellText(storedCell(av, col, items[2]), nil), `{"type":"number","number":{"content":0,"isNotEmpty":false,"format":"","formattedContent":""}}`)
	r := s.render(t, siyuan.RenderAVRequest{ID: db.av})
	wantEqual(t, "rendered unset number", cellText(cellOf(t, r, items[3], col).Value, nil), `{"type":"number","number":{"content":0,"isNotEmpty":false,"format":"","formattedContent":""}}`)

	for _, tc := range []struct{ format, big, neg string }{
		{"", "1234.5", "-0.125"},
		{"commas", "1,234.5", "-0.125"},
		{"percent", "123450%", "-12.5%"},
		{"USD", "$1,234.50", "$-0.12"},
		{"EUR", "€1.234,50", "€-0,12"},
		{"JPY", "¥1,234", "¥-0"},
		{"CNY", "CN¥1,234.50", "CN¥-0.12"},
	} {
		s.tx(t, siyuan.UpdateAttrViewColNumberFormatOp(db.av, col, tc.format))
		if k := storedKey(s.storedAV(t, db.av), col); k.NumberFormat != tc.format {
			t.Fatalf("numberFormat = %q, want %q", k.NumberFormat, tc.format)
		}
		r := s.render(t, siyuan.RenderAVRequest{ID: db.av})
		for item, want := range map[string]string{items[0]: tc.big, items[1]: tc.neg} {
			n := cellOf(t, r, item, col).Value.Number
			if n.Format != tc.format || n.FormattedContent != want {
				t.Errorf("format %q: rendered %+v, want %q", tc.format, n, want)
			}
		}
		if n := cellOf(t, r, items[2], col).Value.Number; n.Format != "" || n.FormattedContent != "" {
			t.Errorf("format %q: empty number rendered %+v", tc.format, n)
		}
		col := r.View.Columns[2]
		if col.NumberFormat != tc.format {
			t.Errorf("rendered column numberFormat = %q", col.NumberFormat)
		}
	}
	// The format a value is sent with gives its stored text.
	s.setCells(t, db, [3]string{col, items[3], `{"number":{"content":0.5,"isNotEmpty":true,"format":"percent"}}`})
	wantEqual(t, "stored in the sent format", cellText(storedCell(s.storedAV(t, db.av), col, items[3]), nil),
		`{"type":"number","number":{"content":0.5,"isNotEmpty":true,"format":"percent","formattedContent":"50%"}}`)
	// Adding a row renders the view and saves the database as rendered:
	// the stored numbers take the column's format.
	s.detachedRows(t, db, "e")
	wantEqual(t, "stored after a row was added", cellText(storedCell(s.storedAV(t, db.av), col, items[0]), nil),
		`{"type":"number","number":{"content":1234.5,"isNotEmpty":true,"format":"CNY","formattedContent":"CN¥1,234.50"}}`)
	// A format name the column does not apply to: the type must match.
	s.tx(t, siyuan.Operation{Action: "updateAttrViewColNumberFormat", AvID: db.av, ID: col, Type: "text", Format: "USD"})
	if k := storedKey(s.storedAV(t, db.av), col); k.NumberFormat != "CNY" {
		t.Fatalf("numberFormat after a mismatched type = %q", k.NumberFormat)
	}
}

// checkAVCellSelect: options a column lacks are added with the value's
// colour or a random one (1 to 14) while the value keeps the colour sent;
// an existing option's colour wins; empty options are dropped, and a
// select left with none is not stored at all.
func checkAVCellSelect(t *testing.T, s *suite) {
	db, _ := s.newDB(t)
	ms := freshID()
	s.addCols(t, db, [3]string{ms, "Tags", "mSelect"})
	items := s.detachedRows(t, db, "a", "b", "c")
	s.setCells(t, db,
		[3]string{db.sel, items[0], `{"type":"select","mSelect":[{"content":"Todo","color":""}]}`},
		[3]string{db.sel, items[1], `{"type":"select","mSelect":[{"content":"Todo","color":"3"}]}`},
		[3]string{db.sel, items[2], `{"type":"select","mSelect":[{"content":"","color":"3"}]}`},
		[3]string{ms, items[0], `{"type":"mSelect","mSelect":[{"content":"x","color":"5"},{"content":"","color":""},{"content":"y","color":""}]}`})
	av := s.storedAV(t, db.av)
	k := storedKey(av, db.sel)
	if len(k.Options) != 1 || k.Options[0].Name != "Todo" || !validColor(k.Options[0].Color) || k.Options[0].Desc != "" {
		t.Fatalf("select options = %+v", k.Options)
	}
	color := k.Options[0].Color
	wantEqual(t, "new option's value", cellText(storedCell(av, db.sel, items[0]), nil), `{"type":"select","mSelect":[{"content":"Todo","color":""}]}`)
	wantEqual(t, "existing option's value", cellText(storedCell(av, db.sel, items[1]), nil), `{"type":"select","mSelect":[{"content":"Todo","color":"`+color+`"}]}`)
	if v := storedCell(av, db.sel, items[2]); v != nil {
		t.Fatalf("a select of only an empty option was stored: %+v", v)
	}
	km := storedKey(av, ms)
	if len(km.Options) != 2 || km.Options[0].Name != "x" || km.Options[0].Color != "5" || km.Options[1].Name != "y" || !validColor(km.Options[1].Color) {
		t.Fatalf("mSelect options = %+v", km.Options)
	}
	wantEqual(t, "mSelect value", cellText(storedCell(av, ms, items[0]), nil), `{"type":"mSelect","mSelect":[{"content":"x","color":"5"},{"content":"y","color":""}]}`)
	s.setCells(t, db, [3]string{ms, items[0], `{"mSelect":[{"content":"y","color":"9"},{"content":"z","color":"12"}]}`})
	av = s.storedAV(t, db.av)
	wantEqual(t, "mSelect set again", cellText(storedCell(av, ms, items[0]), nil),
		`{"type":"mSelect","mSelect":[{"content":"y","color":"`+km.Options[1].Color+`"},{"content":"z","color":"12"}]}`)
	if km = storedKey(av, ms); len(km.Options) != 3 || km.Options[2].Name != "z" || km.Options[2].Color != "12" {
		t.Fatalf("mSelect options after z = %+v", km.Options)
	}
	r := s.render(t, siyuan.RenderAVRequest{ID: db.av})
	wantEqual(t, "rendered select", cellText(cellOf(t, r, items[0], db.sel).Value, nil), `{"type":"select","mSelect":[{"content":"Todo","color":""}]}`)
	wantEqual(t, "rendered empty mSelect", cellText(cellOf(t, r, items[1], ms).Value, nil), `{"type":"mSelect"}`)
	if c := r.View.Columns[1]; len(c.Options) != 1 || c.Options[0].Color != color {
		t.Fatalf("rendered select column options = %+v", c.Options)
	}
}

func validColor(c string) bool {
	n, err := strconv.Atoi(c)
	return err == nil && n >= 1 && n <= 14
}

// checkAVCellDate: dates are stored and rendered as sent (no formatted
// text); an empty date is zeroed; an unset one renders without time.
func checkAVCellDate(t *testing.T, s *suite) {
	db, _ := s.newDB(t)
	col := freshID()
	s.addCols(t, db, [3]string{col, "When", "date"})
	items := s.detachedRows(t, db, "a", "b", "c", "d")
	s.setCells(t, db,
		[3]string{col, items[0], `{"type":"date","date":{"content":1764547200000,"isNotEmpty":true,"hasEndDate":true,"isNotTime":false,"content2":1764633600000,"isNotEmpty2":true}}`},
		[3]string{col, items[1], `{"type":"date","date":{"content":1764547200000,"isNotEmpty":true,"isNotTime":true}}`},
		[3]string{col, items[2], `{"type":"date","date":{"content":1764547200000,"isNotEmpty":false,"formattedContent":"x"}}`})
	av := s.storedAV(t, db.av)
	wantEqual(t, "stored range", cellText(storedCell(av, col, items[0]), nil),
		`{"type":"date","date":{"content":1764547200000,"isNotEmpty":true,"hasEndDate":true,"isNotTime":false,"content2":1764633600000,"isNotEmpty2":true,"formattedContent":""}}`)
	wantEqual(t, "stored empty date", cellText(storedCell(av, col, items[2]), nil),
		`{"type":"date","date":{"content":0,"isNotEmpty":false,"hasEndDate":false,"isNotTime":false,"content2":0,"isNotEmpty2":false,"formattedContent":""}}`)
	r := s.render(t, siyuan.RenderAVRequest{ID: db.av})
	wantEqual(t, "rendered day", cellText(cellOf(t, r, items[1], col).Value, nil),
		`{"type":"date","date":{"content":1764547200000,"isNotEmpty":true,"hasEndDate":false,"isNotTime":true,"content2":0,"isNotEmpty2":false,"formattedContent":""}}`)
	wantEqual(t, "rendered unset date", cellText(cellOf(t, r, items[3], col).Value, nil),
		`{"type":"date","date":{"content":0,"isNotEmpty":false,"hasEndDate":false,"isNotTime":true,"content2":0,"isNotEmpty2":false,"formattedContent":""}}`)
}

// checkAVCellCheckboxURL: checkboxes and URLs as sent; unset ones empty.
func checkAVCellCheckboxURL(t *testing.T, s *suite) {
	db, _ := s.newDB(t)
	cb, url := freshID(), freshID()
	s.addCols(t, db, [3]string{cb, "Done", "checkbox"}, [3]string{url, "Link", "url"})
	items := s.detachedRows(t, db, "a", "b", "c")
	s.setCells(t, db,
		[3]string{cb, items[0], `{"type":"checkbox","checkbox":{"checked":true}}`},
		[3]string{cb, items[1], `{"type":"checkbox","checkbox":{"checked":false}}`},
		[3]string{url, items[0], `{"type":"url","url":{"content":" https://example.com/a?b=1&c=2 "}}`})
	av := s.storedAV(t, db.av)
	wantEqual(t, "stored unchecked", cellText(storedCell(av, cb, items[1]), nil), `{"type":"checkbox","checkbox":{"checked":false}}`)
	r := s.render(t, siyuan.RenderAVRequest{ID: db.av})
	wantEqual(t, "rendered checked", cellText(cellOf(t, r, items[0], cb).Value, nil), `{"type":"checkbox","checkbox":{"checked":true}}`)
	wantEqual(t, "rendered unset checkbox", cellText(cellOf(t, r, items[2], cb).Value, nil), `{"type":"checkbox","checkbox":{"checked":false}}`)
	wantEqual(t, "rendered url", cellText(cellOf(t, r, items[0], url).Value, nil), `{"type":"url","url":{"content":" https://example.com/a?b=1\u0026c=2 "}}`)
	wantEqual(t, "rendered unset url", cellText(cellOf(t, r, items[1], url).Value, nil), `{"type":"url","url":{"content":""}}`)
	// A query matches a checked box by its text, √.
	r = s.render(t, siyuan.RenderAVRequest{ID: db.av, Query: "√"})
	requireOrder(t, "query √", rowIDs(r), items[:1])
}

// checkAVCellTemplate: a template column renders .action{…} per row over
// the row's cells by column name, .id (the bound block, else the item),
// and templates named in it first; a result with an unclosed tag (as
// "<no value>" for a missing value) is HTML-escaped whole.
func checkAVCellTemplate(t *testing.T, s *suite) {
	db, paras := s.newDB(t, "bound para")
	text, num, tpl, tpl2 := freshID(), freshID(), freshID(), freshID()
	s.addCols(t, db, [3]string{tpl2, "Outer", "template"}, [3]string{text, "Notes", "text"}, [3]string{num, "Amount", "number"},
		[3]string{tpl, "Inner", "template"})
	bound := freshID()
	s.tx(t, siyuan.InsertAttrViewBlockOp(db.av, db.block, []siyuan.AVSrc{{ItemID: bound, ID: paras[0]}}, ""))
	items := s.detachedRows(t, db, "d1", "d2")
	s.setCells(t, db,
		[3]string{text, bound, `{"text":{"content":"hello <b>world</b>"}}`},
		[3]string{num, bound, `{"number":{"content":1234.5,"isNotEmpty":true}}`},
		[3]string{num, items[0], `{"number":{"content":-0.125,"isNotEmpty":true}}`})
	s.tx(t, siyuan.UpdateAttrViewColTemplateOp(db.av, tpl, `[.action{.Notes}] .action{.Amount} id=.action{.id}`),
		siyuan.UpdateAttrViewColTemplateOp(db.av, tpl2, `<.action{.Inner}> .action{upper "x"} .action{.Amount_raw.Number.IsNotEmpty}`))
	if k := storedKey(s.storedAV(t, db.av), tpl); k.Template != `[.action{.Notes}] .action{.Amount} id=.action{.id}` {
		t.Fatalf("stored template = %q", k.Template)
	}
	r := s.render(t, siyuan.RenderAVRequest{ID: db.av})
	names := map[string]string{paras[0]: "P", items[0]: "I0", items[1]: "I1"}
	wantEqual(t, "template of the bound row", cellText(cellOf(t, r, bound, tpl).Value, names),
		`{"type":"template","template":{"content":"[hello \u003cb\u003eworld\u003c/b\u003e] 1234.5 id=P"}}`)
	wantEqual(t, "template of a detached row", cellText(cellOf(t, r, items[0], tpl).Value, names),
		`{"type":"template","template":{"content":"[] -0.125 id=I0"}}`)
	wantEqual(t, "template with a missing value", cellText(cellOf(t, r, items[1], tpl).Value, names),
		`{"type":"template","template":{"content":"[] \u0026lt;no value\u0026gt; id=I1"}}`)
	wantEqual(t, "template over a template", cellText(cellOf(t, r, bound, tpl2).Value, names),
		`{"type":"template","template":{"content":"\u003c[hello \u003cb\u003eworld\u003c/b\u003e] 1234.5 id=P\u003e X true"}}`)
	c := cellOf(t, r, items[0], tpl)
	if !strings.HasPrefix(c.ID, items[0][:14]) || c.Value.CreatedAt != 0 || c.Value.UpdatedAt != 0 {
		t.Fatalf("template cell = %+v value %+v", c, c.Value)
	}
	// Template values are computed, never stored.
	if v := storedCell(s.storedAV(t, db.av), tpl, bound); v != nil {
		t.Fatalf("a template value was stored: %+v", v)
	}
}

// checkAVCellPrimaryKey: a detached row's primary key is its text; a bound
// row's is the block's text unless set, which stores a static text on the
// block; setting it empty goes back to the block's text.
func checkAVCellPrimaryKey(t *testing.T, s *suite) {
	db, paras := s.newDB(t, "the block text")
	bound := freshID()
	s.tx(t, siyuan.InsertAttrViewBlockOp(db.av, db.block, []siyuan.AVSrc{{ItemID: bound, ID: paras[0]}}, ""))
	items := s.detachedRows(t, db, "old text")
	staticAttr := "custom-sy-av-s-text-" + db.av
	s.setCells(t, db,
		[3]string{db.pk, items[0], `{"block":{"content":"new text"}}`},
		[3]string{db.pk, bound, `{"block":{"id":"` + paras[0] + `","content":"  Static  "}}`})
	av := s.storedAV(t, db.av)
	names := map[string]string{paras[0]: "P"}
	wantEqual(t, "detached primary key", cellText(storedCell(av, db.pk, items[0]), names), `{"type":"block","isDetached":true,"block":{"content":"new text"}}`)
	wantEqual(t, "bound primary key", cellText(storedCell(av, db.pk, bound), names), `{"type":"block","block":{"id":"P","content":"Static"}}`)
	if a := s.treeAttrs(t, paras[0]); a[staticAttr] != "Static" || a["custom-avs"] != db.av {
		t.Fatalf("bound block attrs = %v", a)
	}
	r := s.render(t, siyuan.RenderAVRequest{ID: db.av})
	wantEqual(t, "rendered static text", cellText(cellOf(t, r, bound, db.pk).Value, names), `{"type":"block","block":{"id":"P","content":"Static"}}`)
	s.setCells(t, db, [3]string{db.pk, bound, `{"block":{"id":"` + paras[0] + `","content":""}}`})
	av = s.storedAV(t, db.av)
	wantEqual(t, "primary key back to the block's text", cellText(storedCell(av, db.pk, bound), names), `{"type":"block","block":{"id":"P","content":"the block text"}}`)
	if a := s.treeAttrs(t, paras[0]); a[staticAttr] != "" {
		t.Fatalf("static text attribute left: %v", a)
	}
	// Detaching a bound row unbinds its block.
	s.setCells(t, db, [3]string{db.pk, bound, `{"isDetached":true,"block":{"id":"` + paras[0] + `","content":"now detached"}}`})
	av = s.storedAV(t, db.av)
	wantEqual(t, "detached primary key", cellText(storedCell(av, db.pk, bound), names), `{"type":"block","isDetached":true,"block":{"content":"now detached"}}`)
	if a := s.treeAttrs(t, paras[0]); a["custom-avs"] != "" {
		t.Fatalf("detached block still bound: %v", a)
	}
}

// checkAVCellTimesAssets: created and updated columns are computed when
// rendered (a bound row from its block's ID and updated attribute, a
// detached one from its item ID and its primary key's update time, in
// local time to the minute); assets, emails and phone numbers are stored
// as sent.
func checkAVCellTimesAssets(t *testing.T, s *suite) {
	db, paras := s.newDB(t, "bound")
	created, updated, assets, email, phone := freshID(), freshID(), freshID(), freshID(), freshID()
	s.addCols(t, db, [3]string{created, "Created", "created"}, [3]string{updated, "Updated", "updated"},
		[3]string{assets, "Files", "mAsset"}, [3]string{email, "Mail", "email"}, [3]string{phone, "Phone", "phone"})
	bound := freshID()
	s.tx(t, siyuan.InsertAttrViewBlockOp(db.av, db.block, []siyuan.AVSrc{{ItemID: bound, ID: paras[0]}}, ""))
	items := s.detachedRows(t, db, "d")
	s.setCells(t, db,
		[3]string{assets, items[0], `{"mAsset":[{"type":"image","name":"","content":"assets/a.png"},{"type":"file","name":"doc","content":"https://example.com/x.pdf"}]}`},
		[3]string{email, items[0], `{"email":{"content":"a@example.com"}}`},
		[3]string{phone, items[0], `{"phone":{"content":"+1 555"}}`})
	r := s.render(t, siyuan.RenderAVRequest{ID: db.av})
	local := func(ms int64) string { return time.UnixMilli(ms).Format("2006-01-02 15:04") }
	idTime := func(id string) int64 {
		tm, err := time.ParseInLocation("20060102150405", id[:14], time.Local)
		must(t, "parse "+id, err)
		return tm.UnixMilli()
	}
	for _, tc := range []struct {
		item, key string
		ms        int64
	}{
		{bound, created, idTime(paras[0])},
		{items[0], created, idTime(items[0])},
		{bound, updated, idTime(s.treeAttrs(t, paras[0])["updated"])},
		{items[0], updated, storedCell(s.storedAV(t, db.av), db.pk, items[0]).Block.Updated},
	} {
		v := cellOf(t, r, tc.item, tc.key).Value
		tv := v.Created
		if tc.key == updated {
			tv = v.Updated
		}
		if tv == nil || tv.Content != tc.ms || !tv.IsNotEmpty || tv.FormattedContent != local(tc.ms) || tv.Content2 != 0 || tv.IsNotEmpty2 {
			t.Fatalf("%s of %s = %+v, want %d (%s)", v.Type, tc.item, tv, tc.ms, local(tc.ms))
		}
		if v.CreatedAt != 0 || v.UpdatedAt != 0 {
			t.Fatalf("a computed value has times: %+v", v)
		}
	}
	wantEqual(t, "rendered assets", cellText(cellOf(t, r, items[0], assets).Value, nil),
		`{"type":"mAsset","mAsset":[{"type":"image","name":"","content":"assets/a.png"},{"type":"file","name":"doc","content":"https://example.com/x.pdf"}]}`)
	wantEqual(t, "rendered empty assets", cellText(cellOf(t, r, bound, assets).Value, nil), `{"type":"mAsset"}`)
	wantEqual(t, "rendered email", cellText(cellOf(t, r, items[0], email).Value, nil), `{"type":"email","email":{"content":"a@example.com"}}`)
	wantEqual(t, "rendered phone", cellText(cellOf(t, r, items[0], phone).Value, nil), `{"type":"phone","phone":{"content":"+1 555"}}`)
	wantEqual(t, "rendered empty phone", cellText(cellOf(t, r, bound, phone).Value, nil), `{"type":"phone","phone":{"content":""}}`)
	// Created and updated values are never stored.
	av := s.storedAV(t, db.av)
	if storedCell(av, created, bound) != nil || storedCell(av, updated, items[0]) != nil {
		t.Fatal("a created or updated value was stored")
	}
}

// checkAVTemplateTwice: template columns are rendered in passes, those
// naming an unrendered template column waiting for a later pass; every
// pass renders again the columns of the passes before, their output
// taken as a template. So a template whose cell reads
// `.action{upper "x"}` shows it as text when one pass is enough, and "X"
// when a template column before it in the database names one after it.
func checkAVTemplateTwice(t *testing.T, s *suite) {
	db, _ := s.newDB(t)
	text, first, last := freshID(), freshID(), freshID()
	s.addCols(t, db, [3]string{text, "Notes", "text"}, [3]string{last, "Last", "template"})
	items := s.detachedRows(t, db, "r")
	s.setCells(t, db, [3]string{text, items[0], `{"text":{"content":".action{upper \"x\"}"}}`})
	s.tx(t, siyuan.UpdateAttrViewColTemplateOp(db.av, last, `.action{.Notes}`))
	r := s.render(t, siyuan.RenderAVRequest{ID: db.av})
	wantEqual(t, "one pass", cellOf(t, r, items[0], last).Value.Template.Content, `.action{upper "x"}`)
	// A template column added after Last but naming it comes later in the
	// database's keys: still one pass. Removing Last and adding it again
	// after First makes two.
	s.tx(t, siyuan.RemoveAttrViewColOp(db.av, last, false))
	s.addCols(t, db, [3]string{first, "First", "template"}, [3]string{last, "Last", "template"})
	s.tx(t, siyuan.UpdateAttrViewColTemplateOp(db.av, first, `F(.action{.Last})`),
		siyuan.UpdateAttrViewColTemplateOp(db.av, last, `.action{.Notes}`))
	r = s.render(t, siyuan.RenderAVRequest{ID: db.av})
	wantEqual(t, "rendered twice", cellOf(t, r, items[0], last).Value.Template.Content, `X`)
	wantEqual(t, "the column that waited", cellOf(t, r, items[0], first).Value.Template.Content, `F(.action{upper "x"})`)
}
