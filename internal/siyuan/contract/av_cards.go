package contract

// Databases: gallery and kanban views, as SiYuan 3.7.3 stores them when
// the editor adds one and edits its fields.

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// groupCreatedRe matches a grouping's time, which only has to be set.
var groupCreatedRe = regexp.MustCompile(`"groupCreated":[1-9]\d*`)

// checkAVCardViews: a gallery and a kanban view added after a table: the
// fields they copy, their card settings, the kanban grouped by the select
// column; a field hidden and moved in each; a two-way relation made
// towards the database adds its back column to both.
func checkAVCardViews(t *testing.T, s *suite) {
	db, _ := s.newDB(t)
	text, r0, r1 := freshID(), freshID(), freshID()
	s.addCols(t, db, [3]string{text, "Text", "text"})
	s.tx(t, siyuan.InsertAttrViewBlockOp(db.av, db.block, []siyuan.AVSrc{{ItemID: r0, Detached: true, Content: "r0"},
		{ItemID: r1, Detached: true, Content: "r1"}}, ""))
	s.setCells(t, db, [3]string{db.sel, r0, `{"mSelect":[{"content":"A","color":"1"}]}`})
	gallery, kanban := freshID(), freshID()
	s.tx(t, siyuan.AddAttrViewViewOp(db.av, gallery, db.block, "gallery"))
	if a := s.treeAttrs(t, db.block); a["custom-sy-av-view"] != gallery {
		t.Fatalf("database block attrs after adding a gallery: %v", a)
	}
	s.tx(t, siyuan.SetAttrViewColHiddenOp(db.av, db.block, text, true),
		siyuan.SortAttrViewColOp(db.av, db.block, text, ""))
	s.tx(t, siyuan.AddAttrViewViewOp(db.av, kanban, db.block, "kanban"))
	s.tx(t, siyuan.SortAttrViewColOp(db.av, db.block, db.pk, text),
		siyuan.SetAttrViewColHiddenOp(db.av, db.block, db.sel, true))
	b, _ := s.newDB(t)
	rel, back := freshID(), freshID()
	s.addCols(t, b, [3]string{rel, "Rel", "relation"})
	s.tx(t, siyuan.UpdateAttrViewColRelationOp(b.av, rel, "Rel", db.av, true, back, "Back"))

	av := s.storedAV(t, db.av)
	if av.ViewID != kanban || len(av.Views) != 3 {
		t.Fatalf("views after adding a gallery and a kanban: current %s, %d views", av.ViewID, len(av.Views))
	}
	names := map[string]string{db.pk: "PK", db.sel: "SEL", text: "TEXT", back: "BACK", r0: "r0", r1: "r1",
		gallery: "GALLERY", kanban: "KANBAN"}
	norm := func(v any) string {
		return groupCreatedRe.ReplaceAllString(normJSON(t, v, names), `"groupCreated":T`)
	}
	wantEqual(t, "stored gallery", norm(av.Views[1]), avGalleryView)
	// The kernel makes a kanban's groups in a map's order: they are
	// compared in their groupSort order.
	kv := *av.Views[2]
	var gs []json.RawMessage
	mustJSON(t, string(kv.Groups), &gs)
	groupSort := func(g json.RawMessage) int {
		var v struct {
			GroupSort int `json:"groupSort"`
		}
		mustJSON(t, string(g), &v)
		return v.GroupSort
	}
	sort.SliceStable(gs, func(i, j int) bool { return groupSort(gs[i]) < groupSort(gs[j]) })
	enc, err := json.Marshal(gs)
	must(t, "marshal groups", err)
	kv.Groups = enc
	wantEqual(t, "stored kanban", norm(&kv), avKanbanView)

	// A database with no select column: the kanban adds one, "Select",
	// last to the database and to every view, and groups by it.
	c, _ := s.newDB(t)
	s.tx(t, siyuan.RemoveAttrViewColOp(c.av, c.sel, false))
	s.tx(t, siyuan.AddAttrViewViewOp(c.av, freshID(), c.block, "kanban"))
	cav := s.storedAV(t, c.av)
	if len(cav.KeyValues) != 2 {
		t.Fatalf("keys after a kanban without a select column: %v", keyNames(cav))
	}
	sel := cav.KeyValues[1].Key
	names = map[string]string{c.pk: "PK", sel.ID: "NEWSEL"}
	wantEqual(t, "added key", norm(sel), `{"id":"NEWSEL","name":"Select","type":"select","icon":"","desc":"","numberFormat":"","template":""}`)
	wantEqual(t, "table columns", norm(cav.Views[0].Table.Columns), `[{"id":"PK","wrap":false,"hidden":false,"pin":false,"width":""},{"id":"NEWSEL","wrap":false,"hidden":false,"pin":false,"width":""}]`)
	wantEqual(t, "kanban fields and group", norm(cav.Views[1].Kanban)+" "+norm(cav.Views[1].Group),
		`{"spec":0,"id":"ID?","showIcon":true,"wrapField":false,"coverFrom":1,"cardAspectRatio":0,"cardSize":1,"fitImage":false,"displayFieldName":false,"fillColBackgroundColor":false,"fields":[{"id":"PK","wrap":false,"hidden":false},{"id":"NEWSEL","wrap":false,"hidden":false}]} {"field":"NEWSEL","method":0,"order":3,"hideEmpty":false}`)
}

// avGalleryView and avKanbanView are the views checkAVCardViews adds, as
// SiYuan 3.7.3 stores them.
const (
	avGalleryView = `{"id":"GALLERY","icon":"","name":"Card","hideAttrViewName":false,"desc":"","filters":[{"column":"","operator":"","value":null,"combination":"and"}],"pageSize":50,"type":"gallery","gallery":{"spec":0,"id":"ID?","showIcon":true,"wrapField":false,"coverFrom":1,"cardAspectRatio":0,"cardSize":1,"fitImage":false,"displayFieldName":false,"fields":[{"id":"TEXT","wrap":false,"hidden":true},{"id":"PK","wrap":false,"hidden":false},{"id":"SEL","wrap":false,"hidden":false},{"id":"BACK","wrap":false,"hidden":false}],"cardIds":null},"itemIds":["r0","r1"],"groupCreated":0,"groupItemIds":null,"groupFolded":false,"groupHidden":0,"groupSort":0}`
	avKanbanView  = `{"id":"KANBAN","icon":"","name":"Kanban","hideAttrViewName":false,"desc":"","filters":[{"column":"","operator":"","value":null,"combination":"and"}],"pageSize":50,"type":"kanban","kanban":{"spec":0,"id":"ID?","showIcon":true,"wrapField":false,"coverFrom":1,"cardAspectRatio":0,"cardSize":1,"fitImage":false,"displayFieldName":false,"fillColBackgroundColor":false,"fields":[{"id":"SEL","wrap":false,"hidden":true},{"id":"TEXT","wrap":false,"hidden":false},{"id":"PK","wrap":false,"hidden":false},{"id":"BACK","wrap":false,"hidden":false}]},"itemIds":["r0","r1"],"group":{"field":"SEL","method":0,"order":3,"hideEmpty":false},"groupCreated":T,"groups":[{"id":"ID?","icon":"","name":"","hideAttrViewName":false,"desc":"","filters":[{"column":"","operator":"","value":null,"combination":"and"}],"pageSize":50,"type":"kanban","kanban":{"spec":0,"id":"ID?","showIcon":true,"wrapField":false,"coverFrom":1,"cardAspectRatio":0,"cardSize":1,"fitImage":false,"displayFieldName":false,"fillColBackgroundColor":false,"fields":null},"groupCreated":0,"groupItemIds":["r0"],"groupKey":{"id":"SEL","name":"Select","type":"select","icon":"","desc":"","options":[{"name":"A","color":"1","desc":""}],"numberFormat":"","template":""},"groupVal":{"type":"select","mSelect":[{"content":"A","color":"1"}]},"groupFolded":false,"groupHidden":1,"groupSort":0},{"id":"ID?","icon":"","name":"","hideAttrViewName":false,"desc":"","filters":[{"column":"","operator":"","value":null,"combination":"and"}],"pageSize":50,"type":"kanban","kanban":{"spec":0,"id":"ID?","showIcon":true,"wrapField":false,"coverFrom":1,"cardAspectRatio":0,"cardSize":1,"fitImage":false,"displayFieldName":false,"fillColBackgroundColor":false,"fields":null},"groupCreated":0,"groupItemIds":["r1"],"groupKey":{"id":"SEL","name":"Select","type":"select","icon":"","desc":"","options":[{"name":"A","color":"1","desc":""}],"numberFormat":"","template":""},"groupVal":{"type":"text","text":{"content":"_@default@_"}},"groupFolded":false,"groupHidden":1,"groupSort":1}],"groupItemIds":null,"groupFolded":false,"groupHidden":0,"groupSort":0}`
)

// renderRaw is renderAttributeView's answer as JSON, IDs named (others
// ID?) and times dropped: the client's render type knows tables only.
func (s *suite) renderRaw(t *testing.T, avID, blockID, viewID string, names map[string]string) string {
	t.Helper()
	var out json.RawMessage
	req := map[string]any{"id": avID, "blockID": blockID, "viewID": viewID}
	must(t, "renderAttributeView", s.c.Do(t.Context(), "/api/av/renderAttributeView", req, &out, siyuan.Read))
	return normJSON(t, json.RawMessage(out), names)
}

// checkAVCardViewsRendered: a gallery's and a kanban's render: the
// fields, a card per row with its values and (detached rows) no cover,
// the card settings; the kanban's cards in a group per select option and
// one for rows without.
func checkAVCardViewsRendered(t *testing.T, s *suite) {
	db, _ := s.newDB(t)
	text, r0, r1 := freshID(), freshID(), freshID()
	s.addCols(t, db, [3]string{text, "Text", "text"})
	s.tx(t, siyuan.InsertAttrViewBlockOp(db.av, db.block, []siyuan.AVSrc{{ItemID: r0, Detached: true, Content: "r0"},
		{ItemID: r1, Detached: true, Content: "r1"}}, ""))
	s.setCells(t, db, [3]string{db.sel, r0, `{"mSelect":[{"content":"A","color":"1"}]}`},
		[3]string{text, r1, `{"text":{"content":"one"}}`})
	gallery, kanban := freshID(), freshID()
	s.tx(t, siyuan.AddAttrViewViewOp(db.av, gallery, db.block, "gallery"))
	s.tx(t, siyuan.SetAttrViewColHiddenOp(db.av, db.block, text, true))
	table := s.storedAV(t, db.av).Views[0].ID
	names := map[string]string{db.av: "AV", db.pk: "PK", db.sel: "SEL", text: "TEXT", r0: "r0", r1: "r1",
		gallery: "GALLERY", kanban: "KANBAN", table: "TABLE"}
	wantEqual(t, "gallery render", s.renderRaw(t, db.av, db.block, "", names), avGalleryRender)
	s.tx(t, siyuan.AddAttrViewViewOp(db.av, kanban, db.block, "kanban"))
	wantEqual(t, "kanban render", s.renderRaw(t, db.av, db.block, "", names), avKanbanRender)
}

// avGalleryRender and avKanbanRender are what SiYuan 3.7.3 answers for
// the views of checkAVCardViewsRendered.
const (
	avGalleryRender = `{"defaultTemplateID":"","id":"AV","isMirror":false,"name":"","newItemTemplates":null,"view":{"id":"GALLERY","icon":"","name":"Card","desc":"","hideAttrViewName":false,"filters":[{"column":"","operator":"","value":null,"combination":"and"}],"sorts":[],"group":null,"pageSize":50,"showIcon":true,"wrapField":false,"groupFolded":false,"groupHidden":0,"coverFrom":1,"cardAspectRatio":0,"cardSize":1,"fitImage":false,"displayFieldName":false,"fields":[{"id":"PK","name":"Primary Key","type":"block","icon":"","wrap":false,"hidden":false,"desc":"","calc":null,"numberFormat":"","template":""},{"id":"SEL","name":"Select","type":"select","icon":"","wrap":false,"hidden":false,"desc":"","calc":null,"options":[{"name":"A","color":"1","desc":""}],"numberFormat":"","template":""},{"id":"TEXT","name":"Text","type":"text","icon":"","wrap":false,"hidden":true,"desc":"","calc":null,"numberFormat":"","template":""}],"cards":[{"id":"r0","values":[{"id":"ID?","value":{"id":"ID?","keyID":"PK","blockID":"r0","type":"block","isDetached":true,"block":{"content":"r0"}},"valueType":"block"},{"id":"ID?","value":{"id":"ID?","keyID":"SEL","blockID":"r0","type":"select","mSelect":[{"content":"A","color":"1"}]},"valueType":"select"},{"id":"ID?","value":{"id":"ID?","keyID":"TEXT","blockID":"r0","type":"text","text":{"content":""}},"valueType":"text"}],"coverURL":"","coverContent":""},{"id":"r1","values":[{"id":"ID?","value":{"id":"ID?","keyID":"PK","blockID":"r1","type":"block","isDetached":true,"block":{"content":"r1"}},"valueType":"block"},{"id":"ID?","value":{"id":"ID?","keyID":"SEL","blockID":"r1","type":"select"},"valueType":"select"},{"id":"ID?","value":{"id":"ID?","keyID":"TEXT","blockID":"r1","type":"text","text":{"content":"one"}},"valueType":"text"}],"coverURL":"","coverContent":""}],"cardCount":2},"viewID":"GALLERY","viewType":"gallery","views":[{"id":"TABLE","icon":"","name":"Table","desc":"","hideAttrViewName":false,"type":"table","pageSize":50},{"id":"GALLERY","icon":"","name":"Card","desc":"","hideAttrViewName":false,"type":"gallery","pageSize":50}]}`
	avKanbanRender  = `{"defaultTemplateID":"","id":"AV","isMirror":false,"name":"","newItemTemplates":null,"view":{"id":"KANBAN","icon":"","name":"Kanban","desc":"","hideAttrViewName":false,"filters":[{"column":"","operator":"","value":null,"combination":"and"}],"sorts":[],"group":{"field":"SEL","method":0,"order":3,"hideEmpty":false},"pageSize":50,"showIcon":true,"wrapField":false,"groups":[{"id":"ID?","icon":"","name":"A","desc":"","hideAttrViewName":false,"filters":[{"column":"","operator":"","value":null,"combination":"and"}],"sorts":[],"group":null,"pageSize":50,"showIcon":true,"wrapField":false,"groupKey":{"id":"SEL","name":"Select","type":"select","icon":"","desc":"","options":[{"name":"A","color":"1","desc":""}],"numberFormat":"","template":""},"groupValue":{"type":"select","mSelect":[{"content":"A","color":"1"}]},"groupFolded":false,"groupHidden":0,"coverFrom":1,"cardAspectRatio":0,"cardSize":1,"fitImage":false,"displayFieldName":false,"fillColBackgroundColor":false,"fields":[{"id":"PK","name":"Primary Key","type":"block","icon":"","wrap":false,"hidden":false,"desc":"","calc":null,"numberFormat":"","template":""},{"id":"SEL","name":"Select","type":"select","icon":"","wrap":false,"hidden":false,"desc":"","calc":null,"options":[{"name":"A","color":"1","desc":""}],"numberFormat":"","template":""},{"id":"TEXT","name":"Text","type":"text","icon":"","wrap":false,"hidden":false,"desc":"","calc":null,"numberFormat":"","template":""}],"cards":[{"id":"r0","values":[{"id":"ID?","value":{"id":"ID?","keyID":"PK","blockID":"r0","type":"block","isDetached":true,"block":{"content":"r0"}},"valueType":"block"},{"id":"ID?","value":{"id":"ID?","keyID":"SEL","blockID":"r0","type":"select","mSelect":[{"content":"A","color":"1"}]},"valueType":"select"},{"id":"ID?","value":{"id":"ID?","keyID":"TEXT","blockID":"r0","type":"text","text":{"content":""}},"valueType":"text"}],"coverURL":"","coverContent":""}],"cardCount":1},{"id":"ID?","icon":"","name":"Field [Select] is empty","desc":"","hideAttrViewName":false,"filters":[{"column":"","operator":"","value":null,"combination":"and"}],"sorts":[],"group":null,"pageSize":50,"showIcon":true,"wrapField":false,"groupKey":{"id":"SEL","name":"Select","type":"select","icon":"","desc":"","options":[{"name":"A","color":"1","desc":""}],"numberFormat":"","template":""},"groupValue":{"type":"text","text":{"content":"_@default@_"}},"groupFolded":false,"groupHidden":0,"coverFrom":1,"cardAspectRatio":0,"cardSize":1,"fitImage":false,"displayFieldName":false,"fillColBackgroundColor":false,"fields":[{"id":"PK","name":"Primary Key","type":"block","icon":"","wrap":false,"hidden":false,"desc":"","calc":null,"numberFormat":"","template":""},{"id":"SEL","name":"Select","type":"select","icon":"","wrap":false,"hidden":false,"desc":"","calc":null,"options":[{"name":"A","color":"1","desc":""}],"numberFormat":"","template":""},{"id":"TEXT","name":"Text","type":"text","icon":"","wrap":false,"hidden":false,"desc":"","calc":null,"numberFormat":"","template":""}],"cards":[{"id":"r1","values":[{"id":"ID?","value":{"id":"ID?","keyID":"PK","blockID":"r1","type":"block","isDetached":true,"block":{"content":"r1"}},"valueType":"block"},{"id":"ID?","value":{"id":"ID?","keyID":"SEL","blockID":"r1","type":"select"},"valueType":"select"},{"id":"ID?","value":{"id":"ID?","keyID":"TEXT","blockID":"r1","type":"text","text":{"content":"one"}},"valueType":"text"}],"coverURL":"","coverContent":""}],"cardCount":1}],"groupFolded":false,"groupHidden":0,"coverFrom":1,"cardAspectRatio":0,"cardSize":1,"fitImage":false,"displayFieldName":false,"fillColBackgroundColor":false,"fields":[{"id":"PK","name":"Primary Key","type":"block","icon":"","wrap":false,"hidden":false,"desc":"","calc":null,"numberFormat":"","template":""},{"id":"SEL","name":"Select","type":"select","icon":"","wrap":false,"hidden":false,"desc":"","calc":null,"options":[{"name":"A","color":"1","desc":""}],"numberFormat":"","template":""},{"id":"TEXT","name":"Text","type":"text","icon":"","wrap":false,"hidden":false,"desc":"","calc":null,"numberFormat":"","template":""}],"cards":[],"cardCount":2},"viewID":"KANBAN","viewType":"kanban","views":[{"id":"TABLE","icon":"","name":"Table","desc":"","hideAttrViewName":false,"type":"table","pageSize":50},{"id":"GALLERY","icon":"","name":"Card","desc":"","hideAttrViewName":false,"type":"gallery","pageSize":50},{"id":"KANBAN","icon":"","name":"Kanban","desc":"","hideAttrViewName":false,"type":"kanban","pageSize":50}]}`
)

// checkAVCardFieldsFollowColumns: columns added (after a column, and
// with none before) and removed reach a gallery's and a kanban's fields.
func checkAVCardFieldsFollowColumns(t *testing.T, s *suite) {
	db, _ := s.newDB(t)
	text, num, url := freshID(), freshID(), freshID()
	s.addCols(t, db, [3]string{text, "Text", "text"})
	s.tx(t, siyuan.AddAttrViewViewOp(db.av, freshID(), db.block, "gallery"))
	s.tx(t, siyuan.AddAttrViewViewOp(db.av, freshID(), db.block, "kanban"))
	s.tx(t, siyuan.AddAttrViewColOp(db.av, num, "Num", "number", "", db.pk),
		siyuan.AddAttrViewColOp(db.av, url, "URL", "url", "", ""),
		siyuan.RemoveAttrViewColOp(db.av, text, false))
	names := map[string]string{db.pk: "PK", db.sel: "SEL", text: "TEXT", num: "NUM", url: "URL"}
	var got []string
	for _, v := range s.storedAV(t, db.av).Views {
		var ids []string
		switch v.LayoutType {
		case "table":
			ids = viewColumns(v)
		default:
			var l struct {
				Fields []struct {
					ID string `json:"id"`
				} `json:"fields"`
			}
			raw := v.Gallery
			if v.LayoutType == "kanban" {
				raw = v.Kanban
			}
			mustJSON(t, string(raw), &l)
			for _, f := range l.Fields {
				ids = append(ids, f.ID)
			}
		}
		var named []string
		for _, id := range ids {
			named = append(named, names[id])
		}
		got = append(got, v.LayoutType+": "+strings.Join(named, " "))
	}
	wantEqual(t, "fields", strings.Join(got, "; "), "table: PK NUM SEL URL; gallery: PK NUM SEL URL; kanban: PK NUM SEL URL")
}
