package contract

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// checkAVCardSettings: the card settings of the view a database block
// shows (cover, cover column, card size and aspect ratio, fit image,
// field names, icons, wrapping every field; a kanban's column colours)
// are stored as sent; a gallery ignores the kanban-only setting; a table
// takes icons and wrapping (every column) only.
func checkAVCardSettings(t *testing.T, s *suite) {
	db, paras := s.newDB(t, "a bound paragraph")
	text := freshID()
	s.addCols(t, db, [3]string{text, "Text", "text"})
	op := func(action string, data any) siyuan.Operation {
		return siyuan.Operation{Action: action, AvID: db.av, BlockID: db.block, Data: data}
	}
	// The table first: icons and wrapping.
	s.tx(t, op("setAttrViewShowIcon", false), op("setAttrViewWrapField", true), op("setAttrViewCardSize", 2.0))
	tv := s.storedAV(t, db.av).Views[0]
	if tv.Table == nil || tv.Table.ShowIcon || !tv.Table.WrapField {
		t.Fatalf("table after showIcon false, wrapField true: %+v", tv.Table)
	}
	for _, c := range tv.Table.Columns {
		if !c.Wrap {
			t.Fatalf("table column %s does not wrap", c.ID)
		}
	}
	if string(tv.Gallery) != "" && string(tv.Gallery) != "null" {
		t.Fatalf("a table took a card setting: %s", tv.Gallery)
	}

	gallery, kanban := freshID(), freshID()
	s.tx(t, siyuan.AddAttrViewViewOp(db.av, gallery, db.block, "gallery"))
	cover := op("setAttrViewCoverFromAssetKeyID", nil)
	cover.KeyID = text
	s.tx(t, op("setAttrViewCoverFrom", 3.0), cover, op("setAttrViewCardSize", 2.0), op("setAttrViewCardAspectRatio", 4.0),
		op("setAttrViewFitImage", true), op("setAttrViewDisplayFieldName", true), op("setAttrViewShowIcon", false),
		op("setAttrViewWrapField", true), op("setAttrViewFillColBackgroundColor", true))
	layout := func(raw json.RawMessage, wrap bool) map[string]any {
		t.Helper()
		var m map[string]any
		mustJSON(t, string(raw), &m)
		delete(m, "id")
		delete(m, "spec")
		delete(m, "cardIds")
		fields, _ := m["fields"].([]any)
		wraps := 0
		for _, f := range fields {
			if f.(map[string]any)["wrap"] == true {
				wraps++
			}
		}
		if wrap && wraps != len(fields) || !wrap && wraps != 0 {
			t.Fatalf("%d of %d fields wrap: %s", wraps, len(fields), raw)
		}
		delete(m, "fields")
		return m
	}
	av := s.storedAV(t, db.av)
	wantEqual(t, "gallery settings", normJSON(t, layout(av.Views[1].Gallery, true), map[string]string{text: "TEXT"}),
		`{"cardAspectRatio":4,"cardSize":2,"coverFrom":3,"coverFromAssetKeyID":"TEXT","displayFieldName":true,"fitImage":true,"showIcon":false,"wrapField":true}`)

	s.tx(t, siyuan.AddAttrViewViewOp(db.av, kanban, db.block, "kanban"))
	s.tx(t, op("setAttrViewFillColBackgroundColor", true), op("setAttrViewCardAspectRatio", 1.0))
	av = s.storedAV(t, db.av)
	k := layout(av.Views[2].Kanban, false)
	if k["fillColBackgroundColor"] != true || k["cardAspectRatio"] != 1.0 {
		t.Fatalf("kanban settings %v", k)
	}

	// A bound row's card: its cover is its block, rendered read-only with
	// fresh ids (coverFrom 3: content block).
	s.tx(t, siyuan.InsertAttrViewBlockOp(db.av, db.block, []siyuan.AVSrc{{ItemID: freshID(), ID: paras[0]}}, ""))
	r := s.renderRaw(t, db.av, db.block, gallery, nil)
	var out struct {
		View struct {
			Cards []struct {
				CoverURL     string `json:"coverURL"`
				CoverContent string `json:"coverContent"`
			} `json:"cards"`
		} `json:"view"`
	}
	mustJSON(t, r, &out)
	if len(out.View.Cards) != 1 {
		t.Fatalf("gallery cards: %s", r)
	}
	got := regexp.MustCompile(`updated="\d{14}"`).ReplaceAllString(out.View.Cards[0].CoverContent, `updated="TS"`)
	wantEqual(t, "a bound paragraph's cover", got, `<div data-node-id="ID?" data-node-index="1" data-type="NodeParagraph" class="p" updated="TS">`+
		`<div contenteditable="false" spellcheck="false">a bound paragraph</div><div class="protyle-attr" contenteditable="false">`+"\u200b"+`</div></div>`)
	wantEqual(t, "a content block cover's address", out.View.Cards[0].CoverURL, "")

	// A web frame, video or audio in a cover does not play by itself:
	// its http(s) address gains autoplay=0 (kept as it is when it names
	// autoplay already), in the cover only.
	const frame = `<iframe src="https://example.com/v?x=1&amp;y=2" data-src="https://example.com/v?x=1&amp;y=2" border="0" frameborder="no" framespacing="0" allowfullscreen="true"></iframe>`
	txs, err := s.c.AppendBlock(t.Context(), "markdown", frame, db.doc)
	must(t, "AppendBlock", err)
	s.tx(t, siyuan.InsertAttrViewBlockOp(db.av, db.block, []siyuan.AVSrc{{ItemID: freshID(), ID: oneInsert(t, txs).ID}}, ""))
	mustJSON(t, s.renderRaw(t, db.av, db.block, gallery, nil), &out)
	if len(out.View.Cards) != 2 {
		t.Fatalf("gallery cards after the frame: %+v", out.View.Cards)
	}
	var addrs []string
	for _, c := range out.View.Cards { // the new row is first on SiYuan
		if strings.Contains(c.CoverContent, `data-type="NodeIFrame"`) {
			addrs = regexp.MustCompile(`(?:data-)?src="[^"]*"`).FindAllString(c.CoverContent, -1)
		}
	}
	wantEqual(t, "a frame's cover addresses", strings.Join(addrs, " "),
		`src="https://example.com/v?autoplay=0&amp;x=1&amp;y=2" data-src="https://example.com/v?autoplay=0&amp;x=1&amp;y=2"`)
}
