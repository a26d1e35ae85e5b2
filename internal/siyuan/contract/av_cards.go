package contract

// Databases: gallery and kanban views, as SiYuan 3.7.3 stores them when
// the editor adds one and edits its fields.

import (
	"encoding/json"
	"regexp"
	"sort"
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
