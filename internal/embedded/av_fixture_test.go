package embedded

import (
	"testing"

	"github.com/88250/lute/ast"
)

// avFixture is a database with a column of most types, a bound and two
// detached rows, a two-way relation to a second database and a rollup
// over it, for the tests of this package.
type avFixture struct {
	doc, block, av, pk, sel                                       string
	para                                                          string
	rows                                                          []string // bound, detached, detached
	text, num, date, ms, url, cb, tpl, mAsset, created, rel, roll string
	b                                                             string // the related database
	bBlock, bPK, bNum                                             string
	bRows                                                         []string
}

func newAVFixture(t *testing.T, e *ixEnv) avFixture {
	t.Helper()
	id := ast.NewNodeID
	f := avFixture{block: id(), av: id(), b: id(), bBlock: id()}
	f.doc = e.doc(e.box(), "/DB", "bound para")
	var kids []struct{ ID string }
	e.ok("/api/block/getChildBlocks", map[string]any{"id": f.doc}, &kids)
	f.para = kids[0].ID
	tx := func(ops ...map[string]any) {
		t.Helper()
		e.ok("/api/transactions", map[string]any{"reqId": 1, "transactions": []map[string]any{{"doOperations": ops}}}, nil)
	}
	dom := func(block, av string) string {
		return `<div class="av" data-node-id="` + block + `" data-av-id="` + av + `" data-type="NodeAttributeView" data-av-type="table"></div>`
	}
	tx(map[string]any{"action": "insert", "id": f.block, "data": dom(f.block, f.av), "parentID": f.doc},
		map[string]any{"action": "insert", "id": f.bBlock, "data": dom(f.bBlock, f.b), "previousID": f.block})
	var r struct {
		View struct{ Columns []struct{ ID string } }
	}
	e.ok("/api/av/renderAttributeView", map[string]any{"id": f.av, "blockID": f.block}, &r)
	f.pk, f.sel = r.View.Columns[0].ID, r.View.Columns[1].ID
	e.ok("/api/av/renderAttributeView", map[string]any{"id": f.b, "blockID": f.bBlock}, &r)
	f.bPK, f.bNum = r.View.Columns[0].ID, id()
	f.text, f.num, f.date, f.ms, f.url, f.cb, f.tpl, f.mAsset, f.created, f.rel, f.roll = id(), id(), id(), id(), id(), id(), id(), id(), id(), id(), id()
	col := func(av, key, name, typ, prev string) map[string]any {
		return map[string]any{"action": "addAttrViewCol", "avID": av, "id": key, "name": name, "type": typ, "data": "", "previousID": prev}
	}
	tx(col(f.av, f.text, "Notes", "text", f.sel), col(f.av, f.num, "Amount", "number", f.text), col(f.av, f.date, "When", "date", f.num),
		col(f.av, f.ms, "Tags", "mSelect", f.date), col(f.av, f.url, "Link", "url", f.ms), col(f.av, f.cb, "Done", "checkbox", f.url),
		col(f.av, f.tpl, "Tmpl", "template", f.cb), col(f.av, f.mAsset, "Files", "mAsset", f.tpl),
		col(f.av, f.created, "Created", "created", f.mAsset), col(f.av, f.rel, "Rel", "relation", f.created),
		col(f.av, f.roll, "Roll", "rollup", f.rel), col(f.b, f.bNum, "Hours", "number", f.bPK),
		map[string]any{"action": "updateAttrViewColTemplate", "avID": f.av, "id": f.tpl, "type": "template", "data": "[.action{.Notes}]"},
		map[string]any{"action": "updateAttrViewColRelation", "avID": f.av, "id": f.b, "keyID": f.rel, "isTwoWay": true, "backRelationKeyID": id(), "name": "", "format": "Rel"},
		map[string]any{"action": "updateAttrViewColRollup", "avID": f.av, "id": f.roll, "parentID": f.rel, "keyID": f.bNum, "data": map[string]any{"calc": map[string]any{"operator": "Sum"}}},
		map[string]any{"action": "setAttrViewName", "id": f.av, "data": "Fixture"})
	f.rows = []string{id(), id(), id()}
	f.bRows = []string{id(), id()}
	tx(map[string]any{"action": "insertAttrViewBlock", "avID": f.av, "blockID": f.block, "srcs": []map[string]any{
		{"itemID": f.rows[0], "id": f.para, "isDetached": false},
		{"itemID": f.rows[1], "isDetached": true, "content": "detached one"},
		{"itemID": f.rows[2], "isDetached": true, "content": "detached two"}}},
		map[string]any{"action": "insertAttrViewBlock", "avID": f.b, "blockID": f.bBlock, "srcs": []map[string]any{
			{"itemID": f.bRows[0], "isDetached": true, "content": "b0"}, {"itemID": f.bRows[1], "isDetached": true, "content": "b1"}}})
	cell := func(av, key, item string, v map[string]any) map[string]any {
		return map[string]any{"action": "updateAttrViewCell", "avID": av, "keyID": key, "rowID": item, "data": v}
	}
	tx(cell(f.av, f.text, f.rows[0], map[string]any{"text": map[string]any{"content": "hello"}}),
		cell(f.av, f.num, f.rows[0], map[string]any{"number": map[string]any{"content": 3, "isNotEmpty": true}}),
		cell(f.av, f.date, f.rows[0], map[string]any{"date": map[string]any{"content": 1764547200000, "isNotEmpty": true}}),
		cell(f.av, f.sel, f.rows[0], map[string]any{"mSelect": []map[string]any{{"content": "Todo"}}}),
		cell(f.av, f.ms, f.rows[0], map[string]any{"mSelect": []map[string]any{{"content": "a", "color": "2"}}}),
		cell(f.av, f.url, f.rows[0], map[string]any{"url": map[string]any{"content": "https://example.com"}}),
		cell(f.av, f.cb, f.rows[0], map[string]any{"checkbox": map[string]any{"checked": true}}),
		cell(f.av, f.mAsset, f.rows[0], map[string]any{"mAsset": []map[string]any{{"type": "file", "name": "a", "content": "assets/a.txt"}}}),
		cell(f.b, f.bNum, f.bRows[0], map[string]any{"number": map[string]any{"content": 2, "isNotEmpty": true}}),
		cell(f.b, f.bNum, f.bRows[1], map[string]any{"number": map[string]any{"content": 0.5, "isNotEmpty": true}}),
		cell(f.av, f.rel, f.rows[0], map[string]any{"relation": map[string]any{"blockIDs": f.bRows}}))
	return f
}
