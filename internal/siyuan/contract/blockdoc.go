package contract

// Block and document breadth reads (breadcrumb, word count, recent blocks,
// documents' info) and transferBlockRef, as SiYuan 3.7.3 answers them.

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools/markup"
)

// blockDocChecks are the block and document breadth checks.
var blockDocChecks = []check{
	{"blockdoc_breadcrumb", checkBreadcrumb},
	{"blockdoc_word_count", checkWordCount},
	{"blockdoc_docs_info", checkDocsInfo},
	{"blockdoc_recent_updated", checkRecentUpdated},
	{"blockdoc_transfer_block_ref", checkTransferBlockRef},
	{"blockdoc_sql_refs", checkSQLRefs},
	{"blockdoc_tx_set_doc_icon_and_cover", checkTxDocIconCover},
	{"blockdoc_search_docs", checkSearchDocs},
	{"blockdoc_get_doc_html", checkGetDocHTML},
	{"blockdoc_doc_outline", checkDocOutline},
	{"blockdoc_closed_notebook_icon_and_listing", checkClosedNotebookIcon},
}

type crumb struct{ id, name, typ, sub string }

func crumbsOf(ps []siyuan.BlockPath) []crumb {
	out := make([]crumb, len(ps))
	for i, p := range ps {
		out[i] = crumb{p.ID, p.Name, p.Type, p.SubType}
	}
	return out
}

// outlineDoc is a document of H1, a paragraph, H2 under it, a paragraph
// and a list: the children's ids in that order.
func (s *suite) outlineDoc(t *testing.T, title string) (string, []string) {
	t.Helper()
	doc := s.newDoc(t, title, "# Top\n\npara one two three\n\n## Sub\n\nsecond para\n\n- item")
	ids := s.childIDs(t, doc)
	if len(ids) != 5 {
		t.Fatalf("outline doc has %d children, want 5", len(ids))
	}
	return doc, ids
}

// checkBreadcrumb: the document is named notebook name + human path, the
// headings above the block follow by level, the block itself comes last
// with an empty name; a list is its own crumb; an unknown block has none.
func checkBreadcrumb(t *testing.T, s *suite) {
	doc, ids := s.outlineDoc(t, "Crumbs")
	docCrumb := crumb{doc, s.boxName + "/Crumbs", "NodeDocument", ""}
	for _, tc := range []struct {
		id   string
		want []crumb
	}{
		{ids[3], []crumb{docCrumb, {ids[0], "Top", "NodeHeading", "h1"}, {ids[2], "Sub", "NodeHeading", "h2"}, {ids[3], "", "NodeParagraph", ""}}},
		{ids[1], []crumb{docCrumb, {ids[0], "Top", "NodeHeading", "h1"}, {ids[1], "", "NodeParagraph", ""}}},
		{ids[4], []crumb{docCrumb, {ids[0], "Top", "NodeHeading", "h1"}, {ids[2], "Sub", "NodeHeading", "h2"}, {ids[4], "", "NodeList", "u"}}},
		{doc, []crumb{{doc, "", "NodeDocument", ""}}},
	} {
		got, err := s.c.GetBlockBreadcrumb(t.Context(), tc.id, nil)
		must(t, "GetBlockBreadcrumb", err)
		if !slices.Equal(crumbsOf(got), tc.want) {
			t.Fatalf("breadcrumb of %s:\n got %+v\nwant %+v", tc.id, crumbsOf(got), tc.want)
		}
	}
	got, err := s.c.GetBlockBreadcrumb(t.Context(), ids[3], []string{"NodeHeading"})
	must(t, "GetBlockBreadcrumb excludeTypes", err)
	wantEqual(t, "crumbs with excludeTypes (names only)", len(got), 4)
	got, err = s.c.GetBlockBreadcrumb(t.Context(), freshID(), nil)
	must(t, "GetBlockBreadcrumb unknown", err)
	wantEqual(t, "crumbs of an unknown block", len(got), 0)
}

// checkWordCount: letters are counted without spaces, a document counts
// its whole body, and blockCount is the number of ids asked for, unknown
// ones included.
func checkWordCount(t *testing.T, s *suite) {
	doc, ids := s.outlineDoc(t, "Counted")
	st, err := s.c.GetBlocksWordCount(t.Context(), []string{doc})
	must(t, "GetBlocksWordCount doc", err)
	wantEqual(t, "doc stat", st, siyuan.BlockStat{RuneCount: 35, WordCount: 9, BlockCount: 1})
	st, err = s.c.GetBlocksWordCount(t.Context(), []string{ids[1], freshID()})
	must(t, "GetBlocksWordCount para+unknown", err)
	wantEqual(t, "para+unknown stat", st, siyuan.BlockStat{RuneCount: 15, WordCount: 4, BlockCount: 2})
	ref := s.newDoc(t, "Counted refs", "see (("+ids[1]+" 'x')) and [a](https://example.com)")
	st, err = s.c.GetBlocksWordCount(t.Context(), []string{ref})
	must(t, "GetBlocksWordCount refs", err)
	if st.RefCount != 1 || st.LinkCount != 1 || st.BlockCount != 1 {
		t.Fatalf("refs stat = %+v, want one ref and one link", st)
	}
}

// checkDocsInfo: each id answers its document, in order; refCount counts
// the blocks referencing anything in the document; an unknown id alone
// fails the call.
func checkDocsInfo(t *testing.T, s *suite) {
	doc, ids := s.outlineDoc(t, "Info")
	other := s.newDoc(t, "Info refs", "a (("+ids[1]+" 'x'))\n\nb (("+doc+" \"d\"))")
	refs := s.childIDs(t, other)
	s.flush(t)
	infos, err := s.c.GetDocsInfo(t.Context(), []string{doc, ids[3], other}, true, true)
	must(t, "GetDocsInfo", err)
	if len(infos) != 3 {
		t.Fatalf("GetDocsInfo = %d infos, want 3", len(infos))
	}
	d := infos[0]
	if d.ID != doc || d.RootID != doc || d.Name != "Info" || d.IAL["title"] != "Info" || d.IAL["type"] != "doc" || d.SubFileCount != 0 {
		t.Fatalf("doc info = %+v", d)
	}
	slices.Sort(d.RefIDs)
	want := slices.Clone(refs)
	slices.Sort(want)
	if d.RefCount != 2 || !slices.Equal(d.RefIDs, want) {
		t.Fatalf("doc refs = %d %v, want %v", d.RefCount, d.RefIDs, want)
	}
	if b := infos[1]; b.ID != ids[3] || b.RootID != doc || b.Name != "Info" {
		t.Fatalf("block info = %+v", b)
	}
	if o := infos[2]; o.ID != other || o.RefCount != 0 || o.RefIDs == nil || len(o.RefIDs) != 0 || o.AttrViews != nil {
		t.Fatalf("other info = %+v", o)
	}
	infos, err = s.c.GetDocsInfo(t.Context(), []string{doc}, false, false)
	must(t, "GetDocsInfo plain", err)
	if infos[0].RefIDs != nil || infos[0].RefCount != 0 {
		t.Fatalf("plain info has refs: %+v", infos[0])
	}
	unknown := freshID()
	_, err = s.c.GetDocsInfo(t.Context(), []string{unknown}, false, false)
	api := apiError(t, "GetDocsInfo unknown", err)
	wantEqual(t, "unknown code", api.Code, -1)
	wantEqual(t, "unknown msg", api.Msg, "Content block with id [["+unknown+"]] not found")
	infos, err = s.c.GetDocsInfo(t.Context(), []string{unknown, doc}, false, false)
	must(t, "GetDocsInfo unknown+doc", err)
	if len(infos) != 1 || infos[0].ID != doc {
		t.Fatalf("unknown+doc infos = %+v, want the doc only", infos)
	}
}

// checkRecentUpdated: once indexed, the newest paragraphs (longer than one
// character) come first, as full blocks with the node type's full name.
func checkRecentUpdated(t *testing.T, s *suite) {
	// updated has a resolution of one second and the list 16 entries:
	// start a new second so that the new paragraph is strictly newest.
	time.Sleep(1100 * time.Millisecond)
	_, ids := s.docWithParas(t, "Recent", "recent "+s.tag, "x")
	s.flush(t)
	blocks, err := s.c.GetRecentUpdatedBlocks(t.Context())
	must(t, "GetRecentUpdatedBlocks", err)
	if len(blocks) == 0 || len(blocks) > 16 {
		t.Fatalf("recent blocks: %d, want 1..16", len(blocks))
	}
	var found *siyuan.Block
	for i, b := range blocks {
		if b.Type != "NodeParagraph" || b.Box == "" || b.RootID == "" || !strings.HasSuffix(b.Path, ".sy") || b.IAL["id"] != b.ID {
			t.Fatalf("recent block %d = %+v", i, b)
		}
		if b.ID == ids[1] {
			t.Fatalf("a one-character paragraph is listed: %+v", b)
		}
		if b.ID == ids[0] {
			found = &blocks[i]
		}
	}
	if found == nil {
		t.Fatalf("the new paragraph %s is not among the recent blocks", ids[0])
	}
	if found.Box != s.box || found.HPath != "/Recent" || found.Content != "recent "+s.tag || found.Markdown != "recent "+s.tag ||
		found.Created != "" || found.Updated != "" || found.Sort != 10 {
		t.Fatalf("recent paragraph = %+v", *found)
	}
}

// checkTransferBlockRef: references move to toID in the ref blocks given
// (all when none are): dynamic anchors take toID's text, static ones keep
// theirs; an unknown toID fails, an unknown fromID changes nothing.
func checkTransferBlockRef(t *testing.T, s *suite) {
	_, defs := s.docWithParas(t, "Ref defs", "old target", "new target")
	from, to := defs[0], defs[1]
	refDoc := s.newDoc(t, "Ref users", "see (("+from+" 'dyn'))\n\nalso (("+from+" \"stat\"))\n\nthird (("+from+"))")
	refs := s.childIDs(t, refDoc)
	s.flush(t)
	md := func() []string {
		var out []string
		for _, k := range s.children(t, refDoc) {
			out = append(out, k.Markdown)
		}
		return out
	}
	requireOrder(t, "refs before", md(), []string{
		"see ((" + from + " 'dyn'))", "also ((" + from + " \"stat\"))", "third ((" + from + " '" + from + "'))"})
	must(t, "TransferBlockRef one", s.c.TransferBlockRef(t.Context(), from, to, refs[:1]))
	s.flush(t)
	requireOrder(t, "after one", md(), []string{
		"see ((" + to + " 'new target'))", "also ((" + from + " \"stat\"))", "third ((" + from + " '" + from + "'))"})
	must(t, "TransferBlockRef all", s.c.TransferBlockRef(t.Context(), from, to, nil))
	s.flush(t)
	requireOrder(t, "after all", md(), []string{
		"see ((" + to + " 'new target'))", "also ((" + to + " \"stat\"))", "third ((" + to + " 'new target'))"})

	must(t, "TransferBlockRef unknown from", s.c.TransferBlockRef(t.Context(), freshID(), to, nil))
	must(t, "TransferBlockRef unknown ref block", s.c.TransferBlockRef(t.Context(), to, from, []string{freshID()}))
	requireOrder(t, "after no-ops", md(), []string{
		"see ((" + to + " 'new target'))", "also ((" + to + " \"stat\"))", "third ((" + to + " 'new target'))"})
	err := s.c.TransferBlockRef(t.Context(), to, freshID(), nil)
	api := apiError(t, "TransferBlockRef unknown to", err)
	wantEqual(t, "unknown to code", api.Code, -1)
	wantEqual(t, "unknown to msg", api.Msg, "block not found")
	err = s.c.TransferBlockRef(t.Context(), "bad", to, nil)
	api = apiError(t, "TransferBlockRef bad id", err)
	wantEqual(t, "bad id msg", api.Msg, "invalid ID argument")
}

// checkSQLRefs: once indexed, the refs table has one row per reference,
// with the target's location and the reference's kramdown.
func checkSQLRefs(t *testing.T, s *suite) {
	defDoc, defs := s.docWithParas(t, "Refs target", "target text")
	user := s.newDoc(t, "Refs user", "a (("+defs[0]+" 'dyn')) b (("+defDoc+" \"stat\"))")
	block := s.childIDs(t, user)[0]
	s.flush(t)
	rows := s.sqlRows(t, "SELECT * FROM refs WHERE root_id = '"+user+"' ORDER BY def_block_id")
	if len(rows) != 2 {
		t.Fatalf("refs rows = %v, want 2", rows)
	}
	type ref struct{ def, defParent, defRoot, defPath, block, root, box, path, content, markdown, typ string }
	got := make([]ref, len(rows))
	for i, r := range rows {
		got[i] = ref{str(r["def_block_id"]), str(r["def_block_parent_id"]), str(r["def_block_root_id"]), str(r["def_block_path"]),
			str(r["block_id"]), str(r["root_id"]), str(r["box"]), str(r["path"]), str(r["content"]), str(r["markdown"]), str(r["type"])}
		if !nodeIDRe.MatchString(str(r["id"])) {
			t.Fatalf("ref row id = %v", r["id"])
		}
	}
	userPath := "/" + user + ".sy"
	defPath := "/" + defDoc + ".sy"
	want := []ref{
		{defDoc, "", defDoc, defPath, block, user, s.box, userPath, "stat", "((" + defDoc + " \"stat\"))", "textmark"},
		{defs[0], defDoc, defDoc, defPath, block, user, s.box, userPath, "dyn", "((" + defs[0] + " 'dyn'))", "textmark"},
	}
	if defs[0] < defDoc {
		want[0], want[1] = want[1], want[0]
	}
	if !slices.Equal(got, want) {
		t.Fatalf("refs rows:\n got %+v\nwant %+v", got, want)
	}
	// A reference from another notebook has the target's location too.
	other, _ := s.auxNotebook(t, "refs")
	far, err := s.c.CreateDocWithMd(t.Context(), siyuan.CreateDocRequest{Notebook: other, Path: "/Far", Markdown: "far ((" + defs[0] + " 'f'))"})
	must(t, "CreateDocWithMd far", err)
	s.flush(t)
	rows = s.sqlRows(t, "SELECT * FROM refs WHERE root_id = '"+far+"'")
	if len(rows) != 1 || str(rows[0]["box"]) != other || str(rows[0]["def_block_root_id"]) != defDoc ||
		str(rows[0]["def_block_path"]) != defPath || str(rows[0]["def_block_parent_id"]) != defDoc {
		t.Fatalf("cross-notebook refs rows = %v", rows)
	}
}

// checkTxDocIconCover: a setAttrs transaction sets a document's icon and
// title-img (the cover); an empty value removes the attribute; getDocInfo
// reports the icon.
func checkTxDocIconCover(t *testing.T, s *suite) {
	doc := s.newDoc(t, "Covered", "body")
	set := func(attrs string) {
		t.Helper()
		_, err := s.c.Transactions(t.Context(), []siyuan.Transaction{{DoOperations: []siyuan.Operation{{Action: "setAttrs", ID: doc, Data: attrs}}, UndoOperations: []siyuan.Operation{}}})
		must(t, "Transactions setAttrs", err)
		s.flush(t)
	}
	cover := `background-image:url("/assets/c.png");`
	set(`{"icon":"1f4d4","title-img":"background-image:url(\"/assets/c.png\");"}`)
	a := s.attrs(t, doc)
	wantEqual(t, "icon", a["icon"], "1f4d4")
	wantEqual(t, "title-img", a["title-img"], cover)
	info, err := s.c.GetDocInfo(t.Context(), doc)
	must(t, "GetDocInfo", err)
	wantEqual(t, "doc info icon", info.Icon, "1f4d4")
	set(`{"title-img":""}`)
	a = s.attrs(t, doc)
	if _, ok := a["title-img"]; ok || a["icon"] != "1f4d4" {
		t.Fatalf("after removing the cover: %v", a)
	}
}

// checkSearchDocs: once indexed, documents whose human path holds every
// word are found (case-insensitive), an exact title first, then by human
// path prefixed with the notebook's name; a notebook whose name holds a
// word is listed as path "/"; a document id finds that document.
func checkSearchDocs(t *testing.T, s *suite) {
	w := randWord(8)
	for strings.Contains(w, "zq") { // "zq" is the second word searched for
		w = randWord(8)
	}
	parent := s.newDoc(t, "Zq "+w, "p")
	s.newDocAt(t, "/Zq "+w+"/Child "+w, "c")
	exact := s.newDoc(t, w, "e")
	s.newDoc(t, "Other "+strings.ToUpper(w)+" zq", "o")
	s.flush(t)
	hits := s.searchDocs(t, w)
	var got []string
	for _, h := range hits {
		if h.Box != s.box || h.BoxIcon != "" {
			t.Fatalf("hit %+v", h)
		}
		got = append(got, h.HPath)
	}
	b := s.boxName
	requireOrder(t, "hits", got, []string{b + "/" + w, b + "/Other " + strings.ToUpper(w) + " zq", b + "/Zq " + w, b + "/Zq " + w + "/Child " + w})
	if hits[0].Path != "/"+exact+".sy" || hits[2].Path != "/"+parent+".sy" {
		t.Fatalf("paths %+v", hits)
	}
	if two := s.searchDocs(t, "zq "+w); len(two) != 3 {
		t.Fatalf("two words: %+v", two)
	}
	hits = s.searchDocs(t, exact)
	if len(hits) != 1 || hits[0].Path != "/"+exact+".sy" {
		t.Fatalf("by id: %+v", hits)
	}
	// The notebook itself, then its own (hidden) document; other checks'
	// documents whose titles hold the suite's tag may follow.
	hits = s.searchDocs(t, s.tag)
	var own []siyuan.DocSearchHit
	for _, h := range hits {
		if h.Path == "/" || h.Path == "/"+s.box+".sy" {
			own = append(own, h)
		} else if !strings.Contains(h.HPath, s.tag) {
			t.Fatalf("by notebook name: %+v matches nothing of %q", h, s.tag)
		}
	}
	hits = own
	if len(hits) != 2 || hits[0].Path != "/" || hits[0].HPath != b+"/" || hits[0].Box != s.box ||
		hits[1].Path != "/"+s.box+".sy" || hits[1].HPath != b+"/"+b {
		t.Fatalf("by notebook name: %+v", hits)
	}
	wantEqual(t, "no hits", len(s.searchDocs(t, randWord(12))), 0)
}

// searchDocs is SearchDocs without repeated hits: real SiYuan's index
// sometimes holds a document's row twice (a parent document re-indexed
// when a child is created under it, a notebook's own document), and
// searchDocs then lists it twice.
func (s *suite) searchDocs(t *testing.T, k string) []siyuan.DocSearchHit {
	t.Helper()
	hits, err := s.c.SearchDocs(t.Context(), k)
	must(t, "SearchDocs "+k, err)
	out := []siyuan.DocSearchHit{}
	seen := map[siyuan.DocSearchHit]bool{}
	for _, h := range hits {
		if !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	return out
}

// checkGetDocHTML: getDoc renders a document's top-level blocks as
// getBlockDOM does, numbered from 0 and with each referenced block's
// count; a block id renders that block alone; an unknown id fails.
func checkGetDocHTML(t *testing.T, s *suite) {
	doc, ids := s.outlineDoc(t, "Html")
	// Two references in one block count once (the refs table keeps a
	// block's first reference to each target).
	s.newDoc(t, "Html refs", "a (("+ids[3]+" 'x')) b (("+ids[3]+" 'y'))\n\nc (("+ids[3]+" 'z'))")
	s.flush(t)
	d, err := s.c.GetDoc(t.Context(), doc, 0)
	must(t, "GetDoc", err)
	if d.ID != doc || d.RootID != doc || d.ParentID != doc || d.Parent2ID != doc || d.Type != "NodeDocument" || d.Box != s.box ||
		d.Path != "/"+doc+".sy" || d.BlockCount != 5 || d.EOF || d.Scroll || d.Mode != 0 || d.Keywords != nil {
		t.Fatalf("getDoc = %+v", d)
	}
	if !strings.Contains(d.Content, `data-node-id="`+ids[0]+`" data-node-index="0"`) ||
		!strings.Contains(d.Content, `refcount="2"`) || !strings.Contains(d.Content, `<div class="protyle-attr--refcount popover__block">2</div>`) {
		t.Fatalf("getDoc content: %s", d.Content)
	}
	dom, err := s.c.GetBlockDOM(t.Context(), doc)
	must(t, "GetBlockDOM", err)
	bare := func(h string) string {
		return nodeIndexRe.ReplaceAllString(markup.WithoutRefCounts(h), "")
	}
	wantEqual(t, "getDoc content without numbers and counts", bare(d.Content), bare(dom.DOM))

	// size bounds the blocks after the first, counted with their nested
	// blocks: size 2 stops after the fourth top-level block here.
	small, err := s.c.GetDoc(t.Context(), doc, 2)
	must(t, "GetDoc size 2", err)
	if n := strings.Count(small.Content, "data-node-index="); n != 4 || small.BlockCount != 5 || strings.Contains(small.Content, ids[4]) {
		t.Fatalf("getDoc size 2: %d blocks, %+v", n, small)
	}
	b, err := s.c.GetDoc(t.Context(), ids[3], 0)
	must(t, "GetDoc block", err)
	if b.Type != "NodeParagraph" || b.ParentID != doc || b.Parent2ID != ids[2] || strings.Count(b.Content, "data-node-id=") != 1 ||
		!strings.Contains(b.Content, `data-node-id="`+ids[3]+`"`) {
		t.Fatalf("getDoc of a block = %+v", b)
	}
	h, err := s.c.GetDoc(t.Context(), ids[2], 0)
	must(t, "GetDoc heading", err)
	if h.Type != "NodeHeading" || !strings.Contains(h.Content, ids[3]) || !strings.Contains(h.Content, ids[4]) || strings.Contains(h.Content, ids[1]) {
		t.Fatalf("getDoc of a heading = %+v", h)
	}
	_, err = s.c.GetDoc(t.Context(), freshID(), 0)
	api := apiError(t, "GetDoc unknown", err)
	wantEqual(t, "unknown code", api.Code, 1)
	wantEqual(t, "unknown msg", api.Msg, "tree not found")
}

// outlineLines flattens an outline entry: name, type, subtype, depth and
// count, then its sub-headings indented.
func outlineLines(b *siyuan.Block, indent string, out *[]string) {
	*out = append(*out, fmt.Sprintf("%s%s %s %s d%d c%d folded=%v", indent, b.Content, b.Type, b.SubType, b.Depth, b.Count, b.Folded))
	if b.RootID == "" || b.Box == "" || !strings.HasSuffix(b.Path, ".sy") || b.IAL != nil {
		*out = append(*out, "bad block fields")
	}
	for _, c := range b.Children {
		outlineLines(c, indent+"  ", out)
	}
}

// checkDocOutline: the outline nests headings by level, leaves out those
// in blockquotes, keeps those in lists, and names each by its text (spaces
// as &nbsp;); an unknown id has none.
func checkDocOutline(t *testing.T, s *suite) {
	doc := s.newDoc(t, "Outlined", "# Top one\n\n## Sub\n\n### Deep\n\n## Second\n\n> ## Quoted\n\n- ## Listed\n\n# Top two")
	ol, err := s.c.GetDocOutline(t.Context(), doc, false)
	must(t, "GetDocOutline", err)
	var got []string
	for _, p := range ol {
		got = append(got, fmt.Sprintf("%s %s %s %s d%d c%d folded=%v hpath=%q", p.Name, p.Type, p.NodeType, p.SubType, p.Depth, p.Count, p.Folded, p.HPath))
		if p.Box != s.box || p.Children != nil || p.Updated != "" || p.Created != "" {
			t.Fatalf("outline entry %+v", p)
		}
		for _, b := range p.Blocks {
			outlineLines(b, "  ", &got)
		}
	}
	requireOrder(t, "outline", got, []string{
		"Top&nbsp;one outline NodeHeading h1 d0 c3 folded=false hpath=\"\"",
		"  Sub NodeHeading h2 d1 c1 folded=false",
		"    Deep NodeHeading h3 d2 c0 folded=false",
		"  Second NodeHeading h2 d1 c0 folded=false",
		"  Listed NodeHeading h2 d1 c0 folded=false",
		"Top&nbsp;two outline NodeHeading h1 d0 c0 folded=false hpath=\"\"",
	})
	pv, err := s.c.GetDocOutline(t.Context(), doc, true)
	must(t, "GetDocOutline preview", err)
	if len(pv) != 3 || pv[0].ID != doc || pv[0].Name != "Outlined" || pv[0].SubType != "h1" || pv[0].Count != 0 || pv[0].Blocks != nil ||
		pv[1].ID != ol[0].ID || pv[1].Count != 3 {
		t.Fatalf("preview outline %+v", pv)
	}
	ol, err = s.c.GetDocOutline(t.Context(), freshID(), false)
	must(t, "GetDocOutline unknown", err)
	wantEqual(t, "outline of nothing", len(ol), 0)
}

// checkClosedNotebookIcon: a closed notebook takes an icon (its conf and
// listing show it) but lists no documents.
func checkClosedNotebookIcon(t *testing.T, s *suite) {
	nb, _ := s.auxNotebook(t, "closed-icon")
	must(t, "CloseNotebook", s.c.CloseNotebook(t.Context(), nb))
	must(t, "SetNotebookIcon closed", s.c.SetNotebookIcon(t.Context(), nb, "1f4d4"))
	conf, err := s.c.GetNotebookConf(t.Context(), nb)
	must(t, "GetNotebookConf closed", err)
	entry, ok := s.findNotebook(t, nb)
	if conf.Conf.Icon != "1f4d4" || !conf.Conf.Closed || !ok || entry.Icon != "1f4d4" || !entry.Closed {
		t.Fatalf("closed notebook: conf %+v, entry %+v", conf.Conf, entry)
	}
	_, err = s.c.ListDocsByPath(t.Context(), siyuan.ListDocsRequest{Notebook: nb, Path: "/"})
	api := apiError(t, "ListDocsByPath closed", err)
	wantEqual(t, "closed listing code", api.Code, -1)
	wantEqual(t, "closed listing msg", api.Msg, "Query notebook failed")
}
