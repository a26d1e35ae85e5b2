package contract

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// searchChecks cover the search endpoints beyond fullTextSearchBlock.
var searchChecks = append([]check{
	{"search_invalid_refs_lists_dangling_holders", checkInvalidRefs},
	{"search_invalid_refs_page_past_end_is_empty", checkInvalidRefsPastEnd},
	{"search_invalid_refs_closed_notebook_counted_not_listed", checkInvalidRefsClosedNotebook},
	{"search_embeddings_disabled_semantic_is_empty", checkSemanticDisabled},
	{"search_refs_table_rows", checkRefsTable},
	{"search_ref_block_candidates", checkRefSearch},
}, append(findReplaceChecks, assetContentChecks...)...)

// checkInvalidRefs: a block ref and a siyuan://blocks link to a removed
// block make their paragraphs invalid-ref holders; a ref to a live block
// does not. The kernel walks the files, so no flush is needed for the ids,
// but the blocks come from the SQL index.
func checkInvalidRefs(t *testing.T, s *suite) {
	_, ids := s.docWithParas(t, "invalid-ref-target", "doomed target", "kept target")
	doomed, kept := ids[0], ids[1]
	src := s.newDoc(t, "invalid-ref-source", "ref to (("+doomed+" 'gone'))\n\nlink to [gone](siyuan://blocks/"+doomed+")\n\nlive (("+kept+" 'kept'))")
	holders := s.childIDs(t, src)
	if len(holders) != 3 {
		t.Fatalf("source doc has %d children, want 3", len(holders))
	}
	_, err := s.c.DeleteBlock(t.Context(), doomed)
	must(t, "DeleteBlock", err)
	s.flush(t)
	var mine []siyuan.Block
	s.eventually(t, "both holders listed", func() bool {
		res, err := s.c.ListInvalidBlockRefs(t.Context(), 1, 128)
		must(t, "ListInvalidBlockRefs", err)
		if res.MatchedBlockCount < 2 || res.MatchedRootCount < 1 || res.PageCount < 1 {
			return false
		}
		mine = mine[:0]
		for _, b := range res.Blocks {
			if b.Box == s.box && b.RootID == src {
				mine = append(mine, b)
			}
		}
		return len(mine) == 2
	})
	want := []string{holders[0], holders[1]}
	slices.Sort(want)
	got := []string{mine[0].ID, mine[1].ID}
	if !slices.Equal(got, want) {
		t.Fatalf("holders listed %v, want %v sorted (the live ref %s is valid)", got, want, holders[2])
	}
	for _, b := range mine {
		if b.Type != "NodeParagraph" || b.HPath != "/invalid-ref-source" || b.ParentID != src ||
			!strings.Contains(b.Markdown, doomed) || strings.Contains(b.Content, "<mark>") {
			t.Errorf("holder %+v: want a paragraph of /invalid-ref-source with its markdown, unmarked content", b)
		}
	}
	// Paging: one per page, the counts of all.
	one, err := s.c.ListInvalidBlockRefs(t.Context(), 1, 1)
	must(t, "ListInvalidBlockRefs page size 1", err)
	if len(one.Blocks) != 1 || one.PageCount != one.MatchedBlockCount {
		t.Fatalf("page size 1: %d blocks, pageCount %d, matched %d", len(one.Blocks), one.PageCount, one.MatchedBlockCount)
	}
}

// checkInvalidRefsClosedNotebook: SiYuan walks the files of every notebook,
// closed ones too, so a holder in a closed notebook still counts in
// matchedBlockCount; closing drops its blocks from the index, so it is not
// listed (nor its document counted in matchedRootCount).
func checkInvalidRefsClosedNotebook(t *testing.T, s *suite) {
	ctx := t.Context()
	nb, err := s.c.CreateNotebook(ctx, "invalid-ref-closed-"+s.tag)
	must(t, "CreateNotebook", err)
	t.Cleanup(func() {
		if err := s.c.RemoveNotebook(context.Background(), nb.ID); err != nil {
			t.Errorf("cleanup: RemoveNotebook(%s): %v", nb.ID, err)
		}
	})
	_, ids := s.docWithParas(t, "invalid-ref-closed-target", "doomed target")
	holderDoc, err := s.c.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: nb.ID, Path: "/holder", Markdown: "ref to ((" + ids[0] + " 'gone'))"})
	must(t, "CreateDocWithMd", err)
	holder := s.childIDs(t, holderDoc)[0]
	_, err = s.c.DeleteBlock(ctx, ids[0])
	must(t, "DeleteBlock", err)
	s.flush(t)
	listed := func() (bool, siyuan.FullTextSearchResult) {
		res, err := s.c.ListInvalidBlockRefs(ctx, 1, 4096)
		must(t, "ListInvalidBlockRefs", err)
		return slices.ContainsFunc(res.Blocks, func(b siyuan.Block) bool { return b.ID == holder }), res
	}
	s.eventually(t, "the holder listed while its notebook is open", func() bool { ok, _ := listed(); return ok })
	must(t, "CloseNotebook", s.c.CloseNotebook(ctx, nb.ID))
	s.flush(t)
	var ok bool
	var res siyuan.FullTextSearchResult
	s.eventually(t, "the holder no longer listed", func() bool { ok, res = listed(); return !ok })
	if res.MatchedBlockCount <= len(res.Blocks) {
		t.Errorf("closed notebook: holder listed %v, matched %d with %d blocks listed; want it counted, not listed", ok, res.MatchedBlockCount, len(res.Blocks))
	}
}

// checkInvalidRefsPastEnd: a page past the end answers nothing (SiYuan
// panics there and answers data null).
func checkInvalidRefsPastEnd(t *testing.T, s *suite) {
	res, err := s.c.ListInvalidBlockRefs(t.Context(), 100000, 128)
	must(t, "ListInvalidBlockRefs past end", err)
	if len(res.Blocks) != 0 || res.MatchedBlockCount != 0 || res.PageCount != 0 {
		t.Fatalf("past the end: %+v, want nothing", res)
	}
}

// checkSemanticDisabled: with no embedding model configured (a fresh
// workspace), the stat says disabled and semantic search answers an empty
// page rather than an error.
func checkSemanticDisabled(t *testing.T, s *suite) {
	s.newDoc(t, "semantic-probe", "semantic probe words")
	s.flush(t)
	st, err := s.c.EmbeddingStat(t.Context())
	must(t, "EmbeddingStat", err)
	if st.Enabled {
		t.Skip("this kernel has embeddings enabled")
	}
	if st.Indexed != 0 || st.Total < 1 || st.Pending != st.Total {
		t.Errorf("stat %+v: want nothing indexed, every block pending", st)
	}
	res, err := s.c.SemanticSearchBlock(t.Context(), siyuan.SemanticSearchRequest{Query: "semantic probe words", Paths: []string{s.box}})
	must(t, "SemanticSearchBlock", err)
	if len(res.Blocks) != 0 || res.MatchedBlockCount != 0 || res.PageCount != 0 {
		t.Fatalf("semantic with embeddings off: %+v, want an empty page", res)
	}
}

// checkRefsTable: the refs table holds one row per (holder, target) with
// the target's parent, document and path, the anchor text and the ref's
// Markdown; a ref to a removed block keeps its target id.
func checkRefsTable(t *testing.T, s *suite) {
	target, ids := s.docWithParas(t, "refs-target", "ref target", "doomed target")
	src := s.newDoc(t, "refs-source", "see (("+ids[0]+" 'anchor one')) and (("+ids[0]+" 'twice'))\n\nand (("+ids[1]+" 'doomed'))")
	holders := s.childIDs(t, src)
	_, err := s.c.DeleteBlock(t.Context(), ids[1])
	must(t, "DeleteBlock", err)
	s.flush(t)
	var rows []map[string]any
	s.eventually(t, "refs indexed", func() bool {
		rows = s.sqlRows(t, "SELECT def_block_id, def_block_parent_id, def_block_root_id, def_block_path, block_id, root_id, box, path, content, markdown, type, length(id) AS idlen FROM refs WHERE root_id = '"+src+"' LIMIT 10")
		return len(rows) == 2
	})
	// Ids made in one second sort by their random part: order by holder.
	if rows[0]["block_id"] != holders[0] {
		rows[0], rows[1] = rows[1], rows[0]
	}
	want := []map[string]any{
		{"def_block_id": ids[0], "def_block_parent_id": target, "def_block_root_id": target, "def_block_path": "/" + target + ".sy",
			"block_id": holders[0], "root_id": src, "box": s.box, "path": "/" + src + ".sy", "content": "anchor one",
			"markdown": "((" + ids[0] + " 'anchor one'))", "type": "textmark", "idlen": float64(22)},
	}
	if !sameRow(rows[0], want[0]) {
		t.Errorf("ref row %v, want %v (one row per holder and target)", rows[0], want[0])
	}
	if rows[1]["block_id"] != holders[1] || rows[1]["def_block_id"] != ids[1] || rows[1]["content"] != "doomed" {
		t.Errorf("the ref to a removed block: %v", rows[1])
	}
}

func sameRow(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range b {
		if a[k] != v {
			return false
		}
	}
	return true
}

// checkRefSearch: ref candidates for a keyword (the document first, then
// the heading, then paragraphs; the current block and its document left
// out), and without a keyword the block referenced last.
func checkRefSearch(t *testing.T, s *suite) {
	word := "ibex" + randWord(6)
	cur, curIDs := s.docWithParas(t, "refsearch-current", "typing "+word+" here")
	doc := s.newDoc(t, "refsearch "+word, "# "+word+" heading\n\nthe "+word+" paragraph")
	kids := s.childIDs(t, doc)
	s.flush(t)
	var res siyuan.RefSearchResult
	s.eventually(t, "candidates indexed", func() bool {
		var err error
		res, err = s.c.SearchRefBlock(t.Context(), siyuan.RefSearchRequest{ID: curIDs[0], RootID: cur, K: word, BeforeLen: 512, ReqID: 42.0})
		must(t, "SearchRefBlock", err)
		return len(res.Blocks) == 3
	})
	got := []string{res.Blocks[0].ID, res.Blocks[1].ID, res.Blocks[2].ID}
	if want := []string{doc, kids[0], kids[1]}; !slices.Equal(got, want) {
		t.Fatalf("candidates %v, want %v (document, heading, paragraph; not the current block)", got, want)
	}
	d, h, p := res.Blocks[0], res.Blocks[1], res.Blocks[2]
	if d.HPath != s.boxName+"/" || d.Content != "refsearch <mark>"+word+"</mark>" || d.RefText != "refsearch "+word || d.Type != "NodeDocument" {
		t.Errorf("document candidate %+v", d)
	}
	if h.HPath != s.boxName+"/refsearch "+word || h.Content != "<mark>"+word+"</mark> heading" || h.RefText != word+" heading" {
		t.Errorf("heading candidate %+v", h)
	}
	if p.Content != "the <mark>"+word+"</mark> paragraph" || p.RefText != "the "+word+" paragraph" || p.RefCount != 0 {
		t.Errorf("paragraph candidate %+v", p)
	}
	if !res.NewDoc || res.K != word || res.ReqID != 42.0 {
		t.Errorf("newDoc %v, k %q, reqId %v", res.NewDoc, res.K, res.ReqID)
	}
	// The paragraph referenced, then no keyword: it is a recent target.
	s.newDoc(t, "refsearch-ref", "see (("+kids[1]+" 'it'))")
	s.flush(t)
	s.eventually(t, "recent ref listed", func() bool {
		r, err := s.c.SearchRefBlock(t.Context(), siyuan.RefSearchRequest{ID: curIDs[0], RootID: cur, BeforeLen: 512})
		must(t, "SearchRefBlock recent", err)
		for _, b := range r.Blocks {
			if b.ID == kids[1] {
				if b.RefCount != 1 || b.Content != "the "+word+" paragraph" || r.NewDoc || r.K != "" {
					t.Fatalf("recent candidate %+v (newDoc %v)", b, r.NewDoc)
				}
				return true
			}
		}
		return false
	})
}
