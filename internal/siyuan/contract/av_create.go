package contract

import (
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// What a staged creation (av create, render with createIfNotExist,
// duplicate) relies on: which of its kernel writes may be sent again
// after an unconfirmed send, and where a database block lands; and the
// API form of relation cells set_cells sends. Listed in avChecks.

// checkAVCreateTwice: a render with createIfNotExist of an existing
// database changes nothing (one file, the same keys and view), and naming
// twice is naming once — so both may be sent again. Adding a key with the
// same ID twice makes two keys with that ID, and inserting a block with
// an ID that exists makes a second block: the inserted one takes the ID
// where it was asked to go, and SiYuan gives the one that had it a new
// ID. Neither may be sent again.
func checkAVCreateTwice(t *testing.T, s *suite) {
	doc, _ := s.docWithParas(t, "create-twice", "one")
	block, avID := freshID(), freshID()
	s.removeAV(t, avID)
	s.tx(t, siyuan.InsertDatabaseBlockOp(block, avID, "", doc))
	first, err := s.c.RenderAttributeViewOrCreate(t.Context(), siyuan.RenderAVRequest{ID: avID, BlockID: block, IgnoreRows: true})
	must(t, "RenderAttributeViewOrCreate", err)
	again, err := s.c.RenderAttributeViewOrCreate(t.Context(), siyuan.RenderAVRequest{ID: avID, BlockID: block, IgnoreRows: true})
	must(t, "RenderAttributeViewOrCreate again", err)
	if first.ViewID != again.ViewID || len(again.View.Columns) != 2 || again.View.Columns[0].ID != first.View.Columns[0].ID || again.View.Columns[1].ID != first.View.Columns[1].ID {
		t.Fatalf("render-create twice: %+v then %+v", first.View, again.View)
	}
	if av := s.storedAV(t, avID); len(av.KeyValues) != 2 || len(av.Views) != 1 {
		t.Fatalf("stored after two creates: %v", keyNames(av))
	}
	s.tx(t, siyuan.SetAttrViewNameOp(avID, "Twice"))
	s.tx(t, siyuan.SetAttrViewNameOp(avID, "Twice"))
	if n := s.storedAV(t, avID).Name; n != "Twice" {
		t.Fatalf("name %q", n)
	}

	key := freshID()
	for range 2 {
		must(t, "AddAttributeViewKey", s.c.AddAttributeViewKey(t.Context(), siyuan.AddAVKeyRequest{AvID: avID, KeyID: key, KeyName: "A", KeyType: "text", PreviousKeyID: first.View.Columns[1].ID}))
	}
	n := 0
	for _, kv := range s.storedAV(t, avID).KeyValues {
		if kv.Key.ID == key {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("a key added twice with one ID is there %d times, want 2", n)
	}

	s.tx(t, siyuan.InsertDatabaseBlockOp(block, avID, "", doc))
	var avBlocks []string
	deadline := time.Now().Add(5 * time.Second)
	for {
		avBlocks = avBlocks[:0]
		for _, k := range s.children(t, doc) {
			if k.Type == "av" {
				avBlocks = append(avBlocks, k.ID)
			}
		}
		if len(avBlocks) == 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(avBlocks) != 2 || avBlocks[0] != block || avBlocks[1] == block || !nodeIDRe.MatchString(avBlocks[1]) {
		t.Fatalf("database blocks after a second insert of %s: %v", block, avBlocks)
	}
	// (SiYuan then lists only the inserted one as the database's block;
	// the embedded kernel lists both. Either way it holds the ID.)
	blocks, err := s.c.GetMirrorDatabaseBlocks(t.Context(), avID)
	must(t, "GetMirrorDatabaseBlocks", err)
	if !slices.Contains(blocks, block) {
		t.Fatalf("registered blocks %v, want %s among them", blocks, block)
	}
}

// checkAVCreateAfter: a database block inserted with previousID lands
// right after that block; a render then creates its database.
func checkAVCreateAfter(t *testing.T, s *suite) {
	doc, paras := s.docWithParas(t, "create-after", "one", "two")
	block, avID := freshID(), freshID()
	s.removeAV(t, avID)
	s.tx(t, siyuan.InsertDatabaseBlockOp(block, avID, paras[0], ""))
	_, err := s.c.RenderAttributeViewOrCreate(t.Context(), siyuan.RenderAVRequest{ID: avID, BlockID: block, IgnoreRows: true})
	must(t, "RenderAttributeViewOrCreate", err)
	var ids []string
	for _, k := range s.children(t, doc) {
		ids = append(ids, k.ID)
	}
	requireOrder(t, "children", ids, []string{paras[0], block, paras[1]})
	blocks, err := s.c.GetMirrorDatabaseBlocks(t.Context(), avID)
	must(t, "GetMirrorDatabaseBlocks", err)
	if !slices.Equal(blocks, []string{block}) {
		t.Fatalf("blocks %v", blocks)
	}
}

// checkAVRelationCellsAPI: batchSetAttributeViewBlockAttrs (what set_cells
// sends) sets a relation cell as the operation does: the item IDs stored
// once each, back links added in the other database at once; fewer IDs
// drop the back link of the row no longer linked.
func checkAVRelationCellsAPI(t *testing.T, s *suite) {
	x := s.relatedDBs(t)
	a0 := x.aRows[0]
	b0, b1, b2 := x.bRows[0], x.bRows[1], x.bRows[2]
	set := func(ids ...string) {
		t.Helper()
		must(t, "BatchSetAttributeViewBlockAttrs", s.c.BatchSetAttributeViewBlockAttrs(t.Context(), x.a.av,
			[]siyuan.AVCellUpdate{{KeyID: x.rel, ItemID: a0, Value: &siyuan.AVValue{Relation: &siyuan.AVValueRelation{BlockIDs: ids}}}}))
	}
	set(b0, b1, b0)
	a, b := s.storedAV(t, x.a.av), s.storedAV(t, x.b.av)
	requireOrder(t, "stored relation", relIDs(storedCell(a, x.rel, a0)), []string{b0, b1})
	requireOrder(t, "back link of b0", relIDs(storedCell(b, x.back, b0)), []string{a0})
	requireOrder(t, "back link of b1", relIDs(storedCell(b, x.back, b1)), []string{a0})
	if storedCell(b, x.back, b2) != nil {
		t.Fatal("b2 got a back link")
	}
	set(b1)
	b = s.storedAV(t, x.b.av)
	requireOrder(t, "back link of b0 after removal", relIDs(storedCell(b, x.back, b0)), []string{})
	requireOrder(t, "back link of b1 kept", relIDs(storedCell(b, x.back, b1)), []string{a0})
}

// checkAVSpinBlockDOM: spinBlockDOM renders a database block's DOM as the
// editor holds it (attributes in Lute's order, contenteditable, the empty
// body and protyle-attr parts, updated from the block ID); what is not a
// block becomes a paragraph with a new ID; "" spins to "", and dom is
// required.
func checkAVSpinBlockDOM(t *testing.T, s *suite) {
	dom, err := s.c.SpinBlockDOM(t.Context(), siyuan.DatabaseBlockDOM("20261201120000-aaaaaaa", "20261201120000-bbbbbbb"))
	must(t, "SpinBlockDOM", err)
	wantEqual(t, "spun database block", dom, `<div contenteditable="false" data-av-id="20261201120000-bbbbbbb" data-av-type="table" data-node-id="20261201120000-aaaaaaa" data-node-index="1" data-type="NodeAttributeView" class="av" updated="20261201120000"><div spellcheck="false"></div><div class="protyle-attr" contenteditable="false">`+"\u200b"+`</div></div>`)
	dom, err = s.c.SpinBlockDOM(t.Context(), "not a block <<")
	must(t, "SpinBlockDOM of text", err)
	if !spunParaRe.MatchString(dom) {
		t.Fatalf("spun text = %q", dom)
	}
	dom, err = s.c.SpinBlockDOM(t.Context(), "")
	must(t, "SpinBlockDOM of nothing", err)
	wantEqual(t, "spun nothing", dom, "")
	r := s.rawJSON(t, "/api/lute/spinBlockDOM", `{}`)
	wantEqual(t, "spin without dom", string(r.body), `{"code":-1,"msg":"Field [dom] is required","data":null}`)
}

var spunParaRe = regexp.MustCompile(`^<div data-node-id="\d{14}-[a-z0-9]{7}" data-node-index="1" data-type="NodeParagraph" class="p" updated="\d{14}"><div contenteditable="true" spellcheck="false">not a block &lt;&lt;</div><div class="protyle-attr" contenteditable="false">` + "\u200b" + `</div></div>$`)
