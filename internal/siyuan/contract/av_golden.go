package contract

// Databases: a whole rendered view, every field, compared with what
// SiYuan 3.7.3 answers once IDs are named and times left out.

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/testvars"
)

var timeKeyRe = regexp.MustCompile(`"(createdAt|updatedAt|created|updated)":\d+,?`)

// normRender is a render as JSON with the IDs named (others ID?) and the
// creation and update times dropped.
func normRender(t *testing.T, r siyuan.AVRender, names map[string]string) string {
	t.Helper()
	data, err := json.Marshal(r)
	must(t, "marshal render", err)
	s := timeKeyRe.ReplaceAllString(string(data), "")
	s = regexp.MustCompile(`,}`).ReplaceAllString(s, "}")
	return anyIDRe.ReplaceAllStringFunc(s, func(id string) string {
		if n, ok := names[id]; ok {
			return n
		}
		return "ID?"
	})
}

// checkAVRenderWhole: the rendered view of a database with a column of
// each type, a bound and two detached rows and a relation to a second
// database, field for field.
func checkAVRenderWhole(t *testing.T, s *suite) {
	a, paras := s.newDB(t, "bound *row*")
	b, _ := s.newDB(t)
	ids := func(n int) []string {
		var out []string
		for range n {
			out = append(out, freshID())
		}
		return out
	}
	k := ids(10)
	text, num, date, ms, url, cb, tpl, rel, roll, bnum := k[0], k[1], k[2], k[3], k[4], k[5], k[6], k[7], k[8], k[9]
	back := freshID()
	s.addCols(t, a, [3]string{text, "Text", "text"}, [3]string{num, "Num", "number"}, [3]string{date, "Date", "date"},
		[3]string{ms, "Tags", "mSelect"}, [3]string{url, "URL", "url"}, [3]string{cb, "Done", "checkbox"},
		[3]string{tpl, "Tpl", "template"}, [3]string{rel, "Rel", "relation"}, [3]string{roll, "Roll", "rollup"})
	s.addCols(t, b, [3]string{bnum, "BNum", "number"})
	s.tx(t, siyuan.SetAttrViewNameOp(a.av, "Whole"), siyuan.SetAttrViewNameOp(b.av, "Other"),
		siyuan.UpdateAttrViewColNumberFormatOp(a.av, num, "commas"),
		siyuan.UpdateAttrViewColTemplateOp(a.av, tpl, `.action{.Text}/.action{.Num}/.action{.Rel}`),
		siyuan.UpdateAttrViewColRelationOp(a.av, rel, "Rel", b.av, true, back, "Back"),
		siyuan.UpdateAttrViewColRollupOp(a.av, roll, rel, bnum, "Sum"))
	items := ids(3)
	bItems := ids(2)
	s.tx(t, siyuan.InsertAttrViewBlockOp(a.av, a.block, []siyuan.AVSrc{{ItemID: items[0], ID: paras[0]},
		{ItemID: items[1], Detached: true, Content: "detached"}, {ItemID: items[2], Detached: true}}, ""),
		siyuan.InsertAttrViewBlockOp(b.av, b.block, []siyuan.AVSrc{{ItemID: bItems[0], Detached: true, Content: "B0"},
			{ItemID: bItems[1], Detached: true, Content: "B1"}}, ""))
	s.setCells(t, b, [3]string{bnum, bItems[0], `{"number":{"content":1.5,"isNotEmpty":true}}`},
		[3]string{bnum, bItems[1], `{"number":{"content":2,"isNotEmpty":true}}`})
	s.setCells(t, a,
		[3]string{text, items[0], `{"text":{"content":"some <i>text</i>"}}`},
		[3]string{num, items[0], `{"number":{"content":1234.5,"isNotEmpty":true}}`},
		[3]string{date, items[0], `{"date":{"content":1764547200000,"isNotEmpty":true,"isNotTime":true}}`},
		[3]string{a.sel, items[0], `{"mSelect":[{"content":"Todo","color":"4"}]}`},
		[3]string{ms, items[0], `{"mSelect":[{"content":"x","color":"1"},{"content":"y","color":"2"}]}`},
		[3]string{url, items[0], `{"url":{"content":"https://example.com"}}`},
		[3]string{cb, items[0], `{"checkbox":{"checked":true}}`},
		[3]string{rel, items[0], `{"relation":{"blockIDs":["` + bItems[0] + `","` + bItems[1] + `"]}}`},
		[3]string{num, items[1], `{"number":{"content":-2,"isNotEmpty":true}}`})
	names := map[string]string{a.av: "A", b.av: "B", a.block: "BLOCK", b.block: "BBLOCK", a.pk: "PK", a.sel: "SEL", b.pk: "BPK", b.sel: "BSEL",
		text: "TEXT", num: "NUM", date: "DATE", ms: "MS", url: "URL", cb: "CB", tpl: "TPL", rel: "REL", roll: "ROLL", bnum: "BNUM", back: "BACK",
		items[0]: "I0", items[1]: "I1", items[2]: "I2", bItems[0]: "J0", bItems[1]: "J1", paras[0]: "P"}
	r := s.render(t, siyuan.RenderAVRequest{ID: a.av, BlockID: a.block})
	names[r.ViewID] = "VIEW"
	got := normRender(t, r, names)
	if testvars.AVGolden.On(t) {
		t.Logf("render:\n%s", got)
	}
	if got != avWholeRender {
		t.Fatalf("render:\n got %s\nwant %s", got, avWholeRender)
	}
	// The stored databases after the render, field for field too.
	for _, tc := range []struct{ id, want string }{{a.av, avWholeStoredA}, {b.av, avWholeStoredB}} {
		av := s.storedAV(t, tc.id)
		for _, v := range av.Views {
			names[v.ID] = "VIEW"
			if v.Table != nil {
				names[v.Table.ID] = "TABLE"
			}
		}
		got := normJSON(t, av, names)
		if testvars.AVGolden.On(t) {
			t.Logf("stored %s:\n%s", names[tc.id], got)
		}
		if got != tc.want {
			t.Fatalf("stored %s:\n got %s\nwant %s", names[tc.id], got, tc.want)
		}
	}
}

// normJSON is normRender for any value.
func normJSON(t *testing.T, v any, names map[string]string) string {
	t.Helper()
	data, err := json.Marshal(v)
	must(t, "marshal", err)
	s := timeKeyRe.ReplaceAllString(string(data), "")
	s = regexp.MustCompile(`,}`).ReplaceAllString(s, "}")
	return anyIDRe.ReplaceAllStringFunc(s, func(id string) string {
		if n, ok := names[id]; ok {
			return n
		}
		return "ID?"
	})
}

// avWholeStoredA and avWholeStoredB are the databases of
// checkAVRenderWhole as SiYuan 3.7.3 stored them after the render.
const avWholeStoredA = `{"spec":5,"id":"A","name":"Whole","keyValues":[{"key":{"id":"PK","name":"Primary Key","type":"block","icon":"","desc":"","numberFormat":"","template":""},"values":[{"id":"ID?","keyID":"PK","blockID":"I2","type":"block","isDetached":true,"block":{"content":""}},{"id":"ID?","keyID":"PK","blockID":"I1","type":"block","isDetached":true,"block":{"content":"detached"}},{"id":"ID?","keyID":"PK","blockID":"I0","type":"block","block":{"id":"P","content":"bound row"}}]},{"key":{"id":"SEL","name":"Select","type":"select","icon":"","desc":"","options":[{"name":"Todo","color":"4","desc":""}],"numberFormat":"","template":""},"values":[{"id":"ID?","keyID":"SEL","blockID":"I0","type":"select","mSelect":[{"content":"Todo","color":"4"}]}]},{"key":{"id":"TEXT","name":"Text","type":"text","icon":"","desc":"","numberFormat":"","template":""},"values":[{"id":"ID?","keyID":"TEXT","blockID":"I0","type":"text","text":{"content":"some \u003ci\u003etext\u003c/i\u003e"}}]},{"key":{"id":"NUM","name":"Num","type":"number","icon":"","desc":"","numberFormat":"commas","template":""},"values":[{"id":"ID?","keyID":"NUM","blockID":"I0","type":"number","number":{"content":1234.5,"isNotEmpty":true,"format":"","formattedContent":"1234.5"}},{"id":"ID?","keyID":"NUM","blockID":"I1","type":"number","number":{"content":-2,"isNotEmpty":true,"format":"","formattedContent":"-2"}}]},{"key":{"id":"DATE","name":"Date","type":"date","icon":"","desc":"","numberFormat":"","template":""},"values":[{"id":"ID?","keyID":"DATE","blockID":"I0","type":"date","date":{"content":1764547200000,"isNotEmpty":true,"hasEndDate":false,"isNotTime":true,"content2":0,"isNotEmpty2":false,"formattedContent":""}}]},{"key":{"id":"MS","name":"Tags","type":"mSelect","icon":"","desc":"","options":[{"name":"x","color":"1","desc":""},{"name":"y","color":"2","desc":""}],"numberFormat":"","template":""},"values":[{"id":"ID?","keyID":"MS","blockID":"I0","type":"mSelect","mSelect":[{"content":"x","color":"1"},{"content":"y","color":"2"}]}]},{"key":{"id":"URL","name":"URL","type":"url","icon":"","desc":"","numberFormat":"","template":""},"values":[{"id":"ID?","keyID":"URL","blockID":"I0","type":"url","url":{"content":"https://example.com"}}]},{"key":{"id":"CB","name":"Done","type":"checkbox","icon":"","desc":"","numberFormat":"","template":""},"values":[{"id":"ID?","keyID":"CB","blockID":"I0","type":"checkbox","checkbox":{"checked":true}}]},{"key":{"id":"TPL","name":"Tpl","type":"template","icon":"","desc":"","numberFormat":"","template":".action{.Text}/.action{.Num}/.action{.Rel}"}},{"key":{"id":"REL","name":"Rel","type":"relation","icon":"","desc":"","numberFormat":"","template":"","relation":{"avID":"B","isTwoWay":true,"backKeyID":"BACK"}},"values":[{"id":"ID?","keyID":"REL","blockID":"I0","type":"relation","relation":{"blockIDs":["J0","J1"],"contents":null}}]},{"key":{"id":"ROLL","name":"Roll","type":"rollup","icon":"","desc":"","numberFormat":"","template":"","rollup":{"relationKeyID":"REL","keyID":"BNUM","calc":{"operator":"Sum","result":null}}}}],"keyIDs":null,"viewID":"VIEW","views":[{"id":"VIEW","icon":"","name":"Table","hideAttrViewName":false,"desc":"","filters":[{"column":"","operator":"","value":null,"combination":"and"}],"pageSize":50,"type":"table","table":{"spec":0,"id":"TABLE","showIcon":true,"wrapField":false,"columns":[{"id":"PK","wrap":false,"hidden":false,"pin":false,"width":""},{"id":"SEL","wrap":false,"hidden":false,"pin":false,"width":""},{"id":"TEXT","wrap":false,"hidden":false,"pin":false,"width":""},{"id":"NUM","wrap":false,"hidden":false,"pin":false,"width":""},{"id":"DATE","wrap":false,"hidden":false,"pin":false,"width":""},{"id":"MS","wrap":false,"hidden":false,"pin":false,"width":""},{"id":"URL","wrap":false,"hidden":false,"pin":false,"width":""},{"id":"CB","wrap":false,"hidden":false,"pin":false,"width":""},{"id":"TPL","wrap":false,"hidden":false,"pin":false,"width":""},{"id":"REL","wrap":false,"hidden":false,"pin":false,"width":""},{"id":"ROLL","wrap":false,"hidden":false,"pin":false,"width":""}],"rowIds":null},"itemIds":["I0","I1","I2"],"groupCreated":0,"groupItemIds":null,"groupFolded":false,"groupHidden":0,"groupSort":0}]}`

const avWholeStoredB = `{"spec":5,"id":"B","name":"Other","keyValues":[{"key":{"id":"BPK","name":"Primary Key","type":"block","icon":"","desc":"","numberFormat":"","template":""},"values":[{"id":"ID?","keyID":"BPK","blockID":"J1","type":"block","isDetached":true,"block":{"content":"B1"}},{"id":"ID?","keyID":"BPK","blockID":"J0","type":"block","isDetached":true,"block":{"content":"B0"}}]},{"key":{"id":"BSEL","name":"Select","type":"select","icon":"","desc":"","numberFormat":"","template":""}},{"key":{"id":"BNUM","name":"BNum","type":"number","icon":"","desc":"","numberFormat":"","template":""},"values":[{"id":"ID?","keyID":"BNUM","blockID":"J0","type":"number","number":{"content":1.5,"isNotEmpty":true,"format":"","formattedContent":"1.5"}},{"id":"ID?","keyID":"BNUM","blockID":"J1","type":"number","number":{"content":2,"isNotEmpty":true,"format":"","formattedContent":"2"}}]},{"key":{"id":"BACK","name":"Back","type":"relation","icon":"","desc":"","numberFormat":"","template":"","relation":{"avID":"A","isTwoWay":true,"backKeyID":"REL"}},"values":[{"id":"ID?","keyID":"BACK","blockID":"J0","type":"relation","relation":{"blockIDs":["I0"],"contents":null}},{"id":"ID?","keyID":"BACK","blockID":"J1","type":"relation","relation":{"blockIDs":["I0"],"contents":null}}]}],"keyIDs":null,"viewID":"VIEW","views":[{"id":"VIEW","icon":"","name":"Table","hideAttrViewName":false,"desc":"","filters":[{"column":"","operator":"","value":null,"combination":"and"}],"pageSize":50,"type":"table","table":{"spec":0,"id":"TABLE","showIcon":true,"wrapField":false,"columns":[{"id":"BPK","wrap":false,"hidden":false,"pin":false,"width":""},{"id":"BSEL","wrap":false,"hidden":false,"pin":false,"width":""},{"id":"BNUM","wrap":false,"hidden":false,"pin":false,"width":""},{"id":"BACK","wrap":false,"hidden":false,"pin":false,"width":""}],"rowIds":null},"itemIds":["J0","J1"],"groupCreated":0,"groupItemIds":null,"groupFolded":false,"groupHidden":0,"groupSort":0}]}`

// avWholeRender is what SiYuan 3.7.3 answered (and the embedded kernel
// answers) for the database of checkAVRenderWhole.
const avWholeRender = `{"defaultTemplateID":"","id":"A","isMirror":false,"name":"Whole","newItemTemplates":null,"view":{"id":"VIEW","icon":"","name":"Table","desc":"","hideAttrViewName":false,"filters":[{"column":"","operator":"","value":null,"combination":"and"}],"sorts":[],"group":null,"pageSize":50,"showIcon":true,"wrapField":false,"groupFolded":false,"groupHidden":0,"columns":[{"id":"PK","name":"Primary Key","type":"block","icon":"","wrap":false,"hidden":false,"desc":"","calc":null,"numberFormat":"","template":"","pin":false,"width":"","align":""},{"id":"SEL","name":"Select","type":"select","icon":"","wrap":false,"hidden":false,"desc":"","calc":null,"options":[{"name":"Todo","color":"4","desc":""}],"numberFormat":"","template":"","pin":false,"width":"","align":""},{"id":"TEXT","name":"Text","type":"text","icon":"","wrap":false,"hidden":false,"desc":"","calc":null,"numberFormat":"","template":"","pin":false,"width":"","align":""},{"id":"NUM","name":"Num","type":"number","icon":"","wrap":false,"hidden":false,"desc":"","calc":null,"numberFormat":"commas","template":"","pin":false,"width":"","align":""},{"id":"DATE","name":"Date","type":"date","icon":"","wrap":false,"hidden":false,"desc":"","calc":null,"numberFormat":"","template":"","pin":false,"width":"","align":""},{"id":"MS","name":"Tags","type":"mSelect","icon":"","wrap":false,"hidden":false,"desc":"","calc":null,"options":[{"name":"x","color":"1","desc":""},{"name":"y","color":"2","desc":""}],"numberFormat":"","template":"","pin":false,"width":"","align":""},{"id":"URL","name":"URL","type":"url","icon":"","wrap":false,"hidden":false,"desc":"","calc":null,"numberFormat":"","template":"","pin":false,"width":"","align":""},{"id":"CB","name":"Done","type":"checkbox","icon":"","wrap":false,"hidden":false,"desc":"","calc":null,"numberFormat":"","template":"","pin":false,"width":"","align":""},{"id":"TPL","name":"Tpl","type":"template","icon":"","wrap":false,"hidden":false,"desc":"","calc":null,"numberFormat":"","template":".action{.Text}/.action{.Num}/.action{.Rel}","pin":false,"width":"","align":""},{"id":"REL","name":"Rel","type":"relation","icon":"","wrap":false,"hidden":false,"desc":"","calc":null,"numberFormat":"","template":"","relation":{"avID":"B","isTwoWay":true,"backKeyID":"BACK"},"pin":false,"width":"","align":""},{"id":"ROLL","name":"Roll","type":"rollup","icon":"","wrap":false,"hidden":false,"desc":"","calc":null,"numberFormat":"","template":"","rollup":{"relationKeyID":"REL","keyID":"BNUM","calc":{"operator":"Sum","result":null}},"pin":false,"width":"","align":""}],"rows":[{"id":"I0","cells":[{"id":"ID?","value":{"id":"ID?","keyID":"PK","blockID":"I0","type":"block","block":{"id":"P","content":"bound row"}},"valueType":"block","color":"","bgColor":""},{"id":"ID?","value":{"id":"ID?","keyID":"SEL","blockID":"I0","type":"select","mSelect":[{"content":"Todo","color":"4"}]},"valueType":"select","color":"","bgColor":""},{"id":"ID?","value":{"id":"ID?","keyID":"TEXT","blockID":"I0","type":"text","text":{"content":"some \u003ci\u003etext\u003c/i\u003e"}},"valueType":"text","color":"","bgColor":""},{"id":"ID?","value":{"id":"ID?","keyID":"NUM","blockID":"I0","type":"number","number":{"content":1234.5,"isNotEmpty":true,"format":"commas","formattedContent":"1,234.5"}},"valueType":"number","color":"","bgColor":""},{"id":"ID?","value":{"id":"ID?","keyID":"DATE","blockID":"I0","type":"date","date":{"content":1764547200000,"isNotEmpty":true,"hasEndDate":false,"isNotTime":true,"content2":0,"isNotEmpty2":false,"formattedContent":""}},"valueType":"date","color":"","bgColor":""},{"id":"ID?","value":{"id":"ID?","keyID":"MS","blockID":"I0","type":"mSelect","mSelect":[{"content":"x","color":"1"},{"content":"y","color":"2"}]},"valueType":"mSelect","color":"","bgColor":""},{"id":"ID?","value":{"id":"ID?","keyID":"URL","blockID":"I0","type":"url","url":{"content":"https://example.com"}},"valueType":"url","color":"","bgColor":""},{"id":"ID?","value":{"id":"ID?","keyID":"CB","blockID":"I0","type":"checkbox","checkbox":{"checked":true}},"valueType":"checkbox","color":"","bgColor":""},{"id":"ID?","value":{"id":"ID?","keyID":"TPL","blockID":"I0","type":"template","template":{"content":"some \u003ci\u003etext\u003c/i\u003e/1234.5/[B0 B1]"}},"valueType":"template","color":"","bgColor":""},{"id":"ID?","value":{"id":"ID?","keyID":"REL","blockID":"I0","type":"relation","relation":{"blockIDs":["J0","J1"],"contents":[{"id":"ID?","keyID":"BPK","blockID":"J0","type":"block","isDetached":true,"block":{"content":"B0"}},{"id":"ID?","keyID":"BPK","blockID":"J1","type":"block","isDetached":true,"block":{"content":"B1"}}]}},"valueType":"relation","color":"","bgColor":""},{"id":"ID?","value":{"id":"ID?","keyID":"ROLL","blockID":"I0","type":"rollup","rollup":{"contents":[{"type":"number","number":{"content":3.5,"isNotEmpty":true,"format":"","formattedContent":"3.5"}}]}},"valueType":"rollup","color":"","bgColor":""}]},{"id":"I1","cells":[{"id":"ID?","value":{"id":"ID?","keyID":"PK","blockID":"I1","type":"block","isDetached":true,"block":{"content":"detached"}},"valueType":"block","color":"","bgColor":""},{"id":"ID?","value":{"id":"ID?","keyID":"SEL","blockID":"I1","type":"select"},"valueType":"select","color":"","bgColor":""},{"id":"ID?","value":{"id":"ID?","keyID":"TEXT","blockID":"I1","type":"text","text":{"content":""}},"valueType":"text","color":"","bgColor":""},{"id":"ID?","value":{"id":"ID?","keyID":"NUM","blockID":"I1","type":"number","number":{"content":-2,"isNotEmpty":true,"format":"commas","formattedContent":"-2"}},"valueType":"number","color":"","bgColor":""},{"id":"ID?","value":{"id":"ID?","keyID":"DATE","blockID":"I1","type":"date","date":{"content":0,"isNotEmpty":false,"hasEndDate":false,"isNotTime":true,"content2":0,"isNotEmpty2":false,"formattedContent":""}},"valueType":"date","color":"","bgColor":""},{"id":"ID?","value":{"id":"ID?","keyID":"MS","blockID":"I1","type":"mSelect"},"valueType":"mSelect","color":"","bgColor":""},{"id":"ID?","value":{"id":"ID?","keyID":"URL","blockID":"I1","type":"url","url":{"content":""}},"valueType":"url","color":"","bgColor":""},{"id":"ID?","value":{"id":"ID?","keyID":"CB","blockID":"I1","type":"checkbox","checkbox":{"checked":false}},"valueType":"checkbox","color":"","bgColor":""},{"id":"ID?","value":{"id":"ID?","keyID":"TPL","blockID":"I1","type":"template","template":{"content":"/-2/\u0026lt;no value\u0026gt;"}},"valueType":"template","color":"","bgColor":""},{"id":"ID?","value":{"id":"ID?","keyID":"REL","blockID":"I1","type":"relation","relation":{"blockIDs":null,"contents":null}},"valueType":"relation","color":"","bgColor":""},{"id":"ID?","value":{"id":"ID?","keyID":"ROLL","blockID":"I1","type":"rollup","rollup":{"contents":[{"type":"number","number":{"content":0,"isNotEmpty":true,"format":"","formattedContent":"0"}}]}},"valueType":"rollup","color":"","bgColor":""}]},{"id":"I2","cells":[{"id":"ID?","value":{"id":"ID?","keyID":"PK","blockID":"I2","type":"block","isDetached":true,"block":{"content":""}},"valueType":"block","color":"","bgColor":""},{"id":"ID?","value":{"id":"ID?","keyID":"SEL","blockID":"I2","type":"select"},"valueType":"select","color":"","bgColor":""},{"id":"ID?","value":{"id":"ID?","keyID":"TEXT","blockID":"I2","type":"text","text":{"content":""}},"valueType":"text","color":"","bgColor":""},{"id":"ID?","value":{"id":"ID?","keyID":"NUM","blockID":"I2","type":"number","number":{"content":0,"isNotEmpty":false,"format":"","formattedContent":""}},"valueType":"number","color":"","bgColor":""},{"id":"ID?","value":{"id":"ID?","keyID":"DATE","blockID":"I2","type":"date","date":{"content":0,"isNotEmpty":false,"hasEndDate":false,"isNotTime":true,"content2":0,"isNotEmpty2":false,"formattedContent":""}},"valueType":"date","color":"","bgColor":""},{"id":"ID?","value":{"id":"ID?","keyID":"MS","blockID":"I2","type":"mSelect"},"valueType":"mSelect","color":"","bgColor":""},{"id":"ID?","value":{"id":"ID?","keyID":"URL","blockID":"I2","type":"url","url":{"content":""}},"valueType":"url","color":"","bgColor":""},{"id":"ID?","value":{"id":"ID?","keyID":"CB","blockID":"I2","type":"checkbox","checkbox":{"checked":false}},"valueType":"checkbox","color":"","bgColor":""},{"id":"ID?","value":{"id":"ID?","keyID":"TPL","blockID":"I2","type":"template","template":{"content":"/\u0026lt;no value\u0026gt;/\u0026lt;no value\u0026gt;"}},"valueType":"template","color":"","bgColor":""},{"id":"ID?","value":{"id":"ID?","keyID":"REL","blockID":"I2","type":"relation","relation":{"blockIDs":null,"contents":null}},"valueType":"relation","color":"","bgColor":""},{"id":"ID?","value":{"id":"ID?","keyID":"ROLL","blockID":"I2","type":"rollup","rollup":{"contents":[{"type":"number","number":{"content":0,"isNotEmpty":true,"format":"","formattedContent":"0"}}]}},"valueType":"rollup","color":"","bgColor":""}]}],"rowCount":3},"viewID":"VIEW","viewType":"table","views":[{"id":"VIEW","icon":"","name":"Table","desc":"","hideAttrViewName":false,"type":"table","pageSize":50}]}`
