package contract

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// What av.set_column_options and av.duplicate_rows rely on: the
// operations updateAttrViewColOptions, removeAttrViewColOption and
// duplicateAttrViewRow. Listed in avChecks.

// optionList is a column's options as "name:color:desc", comma-joined.
func optionList(k *siyuan.AVKey) string {
	var out []string
	for _, o := range k.Options {
		out = append(out, o.Name+":"+o.Color+":"+o.Desc)
	}
	return strings.Join(out, ",")
}

// checkAVColOptions: removeAttrViewColOption drops the option from the
// column, its cells and the filters on it (a filter left empty goes);
// updateAttrViewColOptions updates known names' colour and description,
// appends new names without reordering, reorders as sent only when no
// name is new, drops empty names, and changes nothing for an empty list.
// So one transaction [remove…, update, update] leaves exactly the list
// sent, in its order.
func checkAVColOptions(t *testing.T, s *suite) {
	db, _ := s.newDB(t)
	ms := freshID()
	s.addCols(t, db, [3]string{ms, "Tags", "mSelect"})
	items := s.detachedRows(t, db, "r0", "r1")
	s.setCells(t, db,
		[3]string{ms, items[0], `{"type":"mSelect","mSelect":[{"content":"a","color":"1"},{"content":"b","color":"2"},{"content":"c","color":"3"}]}`},
		[3]string{ms, items[1], `{"type":"mSelect","mSelect":[{"content":"b","color":"2"}]}`},
		[3]string{db.sel, items[0], `{"type":"select","mSelect":[{"content":"Todo","color":"4"}]}`})
	s.tx(t, siyuan.SetAttrViewFiltersOp(db.av, db.block, []*siyuan.AVViewFilter{
		leaf(t, ms, "Contains", `{"type":"mSelect","mSelect":[{"content":"b","color":"2"}]}`),
		leaf(t, ms, "Contains", `{"type":"mSelect","mSelect":[{"content":"a","color":"1"},{"content":"b","color":"2"}]}`),
	}))
	wantEqual(t, "options before", optionList(storedKey(s.storedAV(t, db.av), ms)), "a:1:,b:2:,c:3:")

	// A new name is appended, not sorted in.
	s.tx(t, siyuan.UpdateAttrViewColOptionsOp(db.av, ms, []*siyuan.AVSelectOption{{Name: "c", Color: "7", Desc: "see"}, {Name: "d", Color: "8"}, {Name: "", Color: "9"}, {Name: "a", Color: "1"}}))
	wantEqual(t, "options after a new name", optionList(storedKey(s.storedAV(t, db.av), ms)), "a:1:,b:2:,c:7:see,d:8:")
	// No new name: reordered as sent, where a name not sent sorts as the
	// first one sent (stably).
	s.tx(t, siyuan.UpdateAttrViewColOptionsOp(db.av, ms, []*siyuan.AVSelectOption{{Name: "d", Color: "8"}, {Name: "a", Color: "5", Desc: "x"}}))
	wantEqual(t, "options reordered", optionList(storedKey(s.storedAV(t, db.av), ms)), "b:2:,c:7:see,d:8:,a:5:x")
	// Nothing for an empty list.
	s.tx(t, siyuan.UpdateAttrViewColOptionsOp(db.av, ms, nil))
	wantEqual(t, "options after an empty list", optionList(storedKey(s.storedAV(t, db.av), ms)), "b:2:,c:7:see,d:8:,a:5:x")

	// The complete list in one transaction: remove, then update twice.
	want := []*siyuan.AVSelectOption{{Name: "e", Color: "10"}, {Name: "c", Color: "7", Desc: "see"}, {Name: "a", Color: "5", Desc: ""}}
	s.tx(t, siyuan.RemoveAttrViewColOptionOp(db.av, ms, "b"), siyuan.RemoveAttrViewColOptionOp(db.av, ms, "d"),
		siyuan.UpdateAttrViewColOptionsOp(db.av, ms, want), siyuan.UpdateAttrViewColOptionsOp(db.av, ms, want))
	av := s.storedAV(t, db.av)
	wantEqual(t, "options replaced", optionList(storedKey(av, ms)), "e:10:,c:7:see,a:5:")
	// Cells keep their own colours; removed names leave them.
	wantEqual(t, "cell 0", cellText(storedCell(av, ms, items[0]), nil), `{"type":"mSelect","mSelect":[{"content":"a","color":"1"},{"content":"c","color":"3"}]}`)
	wantEqual(t, "cell 1", cellText(storedCell(av, ms, items[1]), nil), `{"type":"mSelect"}`)
	wantEqual(t, "other column", optionList(storedKey(av, db.sel)), storedKey(av, db.sel).Options[0].Name+":"+storedKey(av, db.sel).Options[0].Color+":")
	fs := av.Views[0].Filters
	if len(fs) != 1 || len(fs[0].Filters) != 1 || len(fs[0].Filters[0].Value.MSelect) != 1 || fs[0].Filters[0].Value.MSelect[0].Content != "a" {
		t.Fatalf("filters after removing b: %s", rowopsJSON(fs))
	}

	// An empty list: every option removed, then nothing to update.
	s.tx(t, siyuan.RemoveAttrViewColOptionOp(db.av, ms, "e"), siyuan.RemoveAttrViewColOptionOp(db.av, ms, "c"),
		siyuan.RemoveAttrViewColOptionOp(db.av, ms, "a"), siyuan.UpdateAttrViewColOptionsOp(db.av, ms, nil), siyuan.UpdateAttrViewColOptionsOp(db.av, ms, nil))
	av = s.storedAV(t, db.av)
	if k := storedKey(av, ms); len(k.Options) != 0 {
		t.Fatalf("options after removing all: %s", optionList(k))
	}
	wantEqual(t, "cell 0 emptied", cellText(storedCell(av, ms, items[0]), nil), `{"type":"mSelect"}`)
	if fs := av.Views[0].Filters; len(fs) != 1 || len(fs[0].Filters) != 0 || fs[0].Combination != "and" {
		t.Fatalf("filters after removing all: %s", rowopsJSON(fs))
	}
}

// checkAVDuplicateRow: duplicateAttrViewRow adds a detached copy with the
// ID sent, after previousID in every view (last when previousID is ""),
// copying every cell but rollup, created and updated; a bound source's
// copy keeps the bound block's text; a two-way relation cell adds the
// copy to the related rows' back cells. Sending it again with the same ID
// keeps one row but copies its cells again.
func checkAVDuplicateRow(t *testing.T, s *suite) {
	a, paras := s.newDB(t, "bound text")
	b, _ := s.newDB(t)
	txt, rel, back := freshID(), freshID(), freshID()
	s.addCols(t, a, [3]string{txt, "Text", "text"})
	s.tx(t, siyuan.AddAttrViewColOp(a.av, rel, "Rel", "relation", "", txt),
		siyuan.UpdateAttrViewColRelationOp(a.av, rel, "Rel", b.av, true, back, "Back"))
	targets := s.detachedRows(t, b, "t0", "t1")
	bound := freshID()
	s.tx(t, siyuan.InsertAttrViewBlockOp(a.av, a.block, []siyuan.AVSrc{{ItemID: bound, ID: paras[0]}}, ""))
	items := s.detachedRows(t, a, "d0", "d1")
	s.setCells(t, a,
		[3]string{txt, items[0], `{"type":"text","text":{"content":"hello"}}`},
		[3]string{a.sel, items[0], `{"type":"select","mSelect":[{"content":"Todo","color":"4"}]}`})
	s.tx(t, siyuan.UpdateAttrViewCellOp(a.av, rel, items[0], &siyuan.AVValue{Type: "relation", Relation: &siyuan.AVValueRelation{BlockIDs: []string{targets[1]}}}))
	before := s.storedAV(t, a.av).Views[0].ItemIDs
	c0, c1, c2 := freshID(), freshID(), freshID()
	s.tx(t, siyuan.DuplicateAttrViewRowOp(a.av, items[0], c0, items[0]),
		siyuan.DuplicateAttrViewRowOp(a.av, bound, c1, ""),
		siyuan.DuplicateAttrViewRowOp(a.av, items[1], c2, c0))
	av := s.storedAV(t, a.av)
	after := av.Views[0].ItemIDs
	want := slices.Clone(before)
	i := slices.Index(want, items[0])
	want = slices.Insert(want, i+1, c0, c2)
	want = append(want, c1)
	if !slices.Equal(after, want) {
		t.Fatalf("view order %v, want %v (before %v)", after, want, before)
	}
	pk := storedCell(av, a.pk, c0)
	if pk == nil || !pk.IsDetached || pk.Block == nil || pk.Block.Content != "d0" || pk.Block.ID != "" {
		t.Fatalf("copy's primary key: %s", rowopsJSON(pk))
	}
	if v := storedCell(av, a.pk, c1); v == nil || !v.IsDetached || v.Block == nil || v.Block.Content != "bound text" || v.Block.ID != "" {
		t.Fatalf("bound row's copy: %s", rowopsJSON(v))
	}
	wantEqual(t, "copied text", cellText(storedCell(av, txt, c0), nil), `{"type":"text","text":{"content":"hello"}}`)
	wantEqual(t, "copied select", cellText(storedCell(av, a.sel, c0), nil), `{"type":"select","mSelect":[{"content":"Todo","color":"4"}]}`)
	if v := storedCell(av, txt, c0); v.IsDetached || v.ID == storedCell(av, txt, items[0]).ID {
		t.Fatalf("copied cell: %s", rowopsJSON(v))
	}
	if v := storedCell(av, rel, c0); v == nil || v.Relation == nil || !slices.Equal(v.Relation.BlockIDs, []string{targets[1]}) || v.Relation.Contents != nil {
		t.Fatalf("copied relation: %s", rowopsJSON(v))
	}
	bav := s.storedAV(t, b.av)
	if v := storedCell(bav, back, targets[1]); v == nil || v.Relation == nil || !slices.Equal(v.Relation.BlockIDs, []string{items[0], c0}) {
		t.Fatalf("back relation: %s", rowopsJSON(v))
	}

	// Sent again with the same new ID: the kernel keeps one primary-key
	// value and one place per view for the ID, but the copied cells are
	// added again (two text values of c0), and the back link again.
	s.tx(t, siyuan.DuplicateAttrViewRowOp(a.av, items[0], c0, ""))
	av = s.storedAV(t, a.av)
	count := func(keyID string) (n int) {
		for _, kv := range av.KeyValues {
			if kv.Key.ID == keyID {
				for _, v := range kv.Values {
					if v.BlockID == c0 {
						n++
					}
				}
			}
		}
		return n
	}
	if p, x := count(a.pk), count(txt); p != 1 || x != 2 || !slices.Equal(av.Views[0].ItemIDs, after) {
		t.Fatalf("a copy sent twice with one ID: %d primary-key values, %d text values, order %v (was %v)", p, x, av.Views[0].ItemIDs, after)
	}
	bav = s.storedAV(t, b.av)
	if v := storedCell(bav, back, targets[1]); v == nil || v.Relation == nil || !slices.Equal(v.Relation.BlockIDs, []string{items[0], c0}) {
		t.Fatalf("back relation after a second send: %s", rowopsJSON(v))
	}
}

func rowopsJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// checkAVNewItemTemplates: setAttrViewNewItemTemplates stores the list as
// sent less what the kernel normalises (trimmed names and icons, no icon
// on a detached target, each static value reduced to its key's part with
// the key's number format, one option of a select, currentTime without a
// value, a static field without a value dropped), and the default's ID;
// a list with one bad entry (an unknown key, currentTime on text) changes
// nothing; an empty list clears both.
func checkAVNewItemTemplates(t *testing.T, s *suite) {
	db, _ := s.newDB(t)
	txt, num, when := freshID(), freshID(), freshID()
	s.addCols(t, db, [3]string{txt, "Text", "text"}, [3]string{num, "Num", "number"}, [3]string{when, "When", "date"})
	s.tx(t, siyuan.UpdateAttrViewColNumberFormatOp(db.av, num, "percent"))
	t1, t2 := freshID(), freshID()
	var config siyuan.AVNewItemTemplatesConfig
	mustJSON(t, `{"templates":[
		{"id":"`+t1+`","name":"  Task ","icon":"1f600","targetType":"detached","primaryKeyTemplate":"Task {{now | date \"2006\"}}",
		 "fieldValues":{"`+txt+`":{"mode":"static","value":{"id":"x","type":"text","text":{"content":"hi"},"number":{"content":3}}},
		  "`+num+`":{"value":{"number":{"content":0.5,"isNotEmpty":true,"format":"","formattedContent":"50%"}}},
		  "`+db.sel+`":{"mode":"static","value":{"mSelect":[{"content":"","color":"1"},{"content":"Todo","color":"4"},{"content":"Done","color":"2"}]}},
		  "`+when+`":{"mode":"currentTime","value":{"date":{"content":1}}}}},
		{"id":"`+t2+`","name":"Doc","icon":" 1f4c4 ","targetType":"document","saveLocation":{"pathTemplate":" /Items/ "},"contentTemplatePath":" /x.md ",
		 "fieldValues":{"`+txt+`":{"mode":"static"}}}],
		"defaultTemplateID":"`+t2+`"}`, &config)
	s.tx(t, siyuan.SetAttrViewNewItemTemplatesOp(db.av, config))
	av := s.storedAV(t, db.av)
	want := `[{"id":"` + t1 + `","name":"Task","targetType":"detached","primaryKeyTemplate":"Task {{now | date \"2006\"}}","fieldValues":{` +
		`"` + db.sel + `":{"mode":"static","value":{"type":"select","mSelect":[{"content":"Todo","color":"4"}]}},` +
		`"` + txt + `":{"mode":"static","value":{"type":"text","text":{"content":"hi"}}},` +
		`"` + num + `":{"mode":"static","value":{"type":"number","number":{"content":0.5,"isNotEmpty":true,"format":"percent","formattedContent":""}}},` +
		`"` + when + `":{"mode":"currentTime"}}},` +
		`{"id":"` + t2 + `","name":"Doc","icon":"1f4c4","targetType":"document","saveLocation":{"pathTemplate":"/Items/"},"contentTemplatePath":"/x.md"}]`
	wantEqual(t, "templates", compactJSON(t, av.NewItemTemplates), compactJSON(t, []byte(want)))
	wantEqual(t, "default", av.DefaultTemplateID, t2)
	r := s.render(t, siyuan.RenderAVRequest{ID: db.av})
	wantEqual(t, "rendered templates", compactJSON(t, r.NewItemTemplates), compactJSON(t, []byte(want)))

	// One bad entry: nothing changes.
	for _, bad := range []string{
		`{"templates":[{"id":"` + t1 + `","name":"A","targetType":"detached","fieldValues":{"` + freshID() + `":{"mode":"static"}}}]}`,
		`{"templates":[{"id":"` + t1 + `","name":"A","targetType":"detached","fieldValues":{"` + txt + `":{"mode":"currentTime"}}}]}`,
		`{"templates":[{"id":"` + t1 + `","name":"A","targetType":"detached","fieldValues":{"` + txt + `":{"mode":"static","value":{"number":{"content":1}}}}}]}`,
		`{"templates":[{"id":"` + t1 + `","name":"A","targetType":"row"}]}`,
		`{"templates":[{"id":"` + t1 + `","name":" ","targetType":"detached"}]}`,
		`{"templates":[{"id":"` + t1 + `","name":"A","targetType":"detached"}],"defaultTemplateID":"` + t2 + `"}`,
	} {
		var c siyuan.AVNewItemTemplatesConfig
		mustJSON(t, bad, &c)
		s.tx(t, siyuan.SetAttrViewNewItemTemplatesOp(db.av, c))
		if got := s.storedAV(t, db.av); compactJSON(t, got.NewItemTemplates) != compactJSON(t, []byte(want)) || got.DefaultTemplateID != t2 {
			t.Fatalf("after %s: %s, default %q", bad, got.NewItemTemplates, got.DefaultTemplateID)
		}
	}

	s.tx(t, siyuan.SetAttrViewNewItemTemplatesOp(db.av, siyuan.AVNewItemTemplatesConfig{}))
	av = s.storedAV(t, db.av)
	if len(av.NewItemTemplates) != 0 || av.DefaultTemplateID != "" {
		t.Fatalf("after clearing: %s, default %q", av.NewItemTemplates, av.DefaultTemplateID)
	}
}

// compactJSON is raw JSON re-encoded (objects' keys sorted; "" when
// empty).
func compactJSON(t *testing.T, raw []byte) string {
	t.Helper()
	if len(raw) == 0 {
		return ""
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
