package embedded

import (
	"context"
	"sort"
	"strings"

	"github.com/88250/lute/ast"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// The /api/search/* and /api/ai/* endpoints of the search tool beyond
// fullTextSearchBlock, answering as SiYuan 3.7.3 does.

func (k *Kernel) searchRoutes() map[string]route {
	return map[string]route{
		endpoint.ListInvalidBlockRefs: {json: k.listInvalidBlockRefs},
		endpoint.SemanticSearchBlock:  {json: k.semanticSearchBlock},
		endpoint.EmbeddingStat:        {json: k.embeddingStat, emptyOK: true},
		endpoint.FindReplace:          {json: k.findReplace},
		// The asset content index is brought up to date before each read.
		endpoint.SearchAssetContent: {json: k.fullTextSearchAssetContent},
		endpoint.GetAssetContent:    {json: k.getAssetContent},
		endpoint.SearchRefBlock:     {json: k.searchRefBlock},
	}
}

// listInvalidBlockRefs is SiYuan's ListInvalidBlockRefs: every block holding
// a block ref or a siyuan://blocks/ link whose target is no block of any
// document, sorted by id and paged; the blocks come from the SQL index.
func (k *Kernel) listInvalidBlockRefs(ctx context.Context, a args) (any, error) {
	page, size, err := a.paging()
	if err != nil {
		return nil, err
	}
	ids := k.invalidRefBlocks()
	start, end := (page-1)*size, min(page*size, len(ids))
	if start > end {
		// SiYuan slices past the end, panics and answers data null.
		return nil, nil
	}
	// SiYuan walks the files of every notebook, closed ones too, so a
	// holder in a closed notebook is counted; but closing a notebook drops
	// its blocks from the SQL index and the block tree, so that holder is
	// neither listed nor counted as a root. This kernel keeps a closed
	// notebook indexed, so it leaves those out itself.
	_, confs, err := k.boxIDs()
	if err != nil {
		return nil, err
	}
	closed := func(id string) bool {
		loc, ok := k.lookup(id)
		return !ok || confs[loc.Box] == nil || confs[loc.Box].Closed
	}
	var open []string
	for _, id := range ids[start:end] {
		if !closed(id) {
			open = append(open, id)
		}
	}
	rows, err := k.sql.blocksByID(ctx, open)
	if err != nil {
		return nil, err
	}
	blocks := []*wire.Block{}
	for _, r := range rows {
		blocks = append(blocks, searchBlockOf(r, func(t string, _ bool) string { return searchEscape(t) }))
	}
	roots := map[string]bool{}
	for _, id := range ids {
		if loc, ok := k.lookup(id); ok && !closed(id) {
			roots[loc.Root] = true
		}
	}
	return map[string]any{"blocks": blocks, "matchedBlockCount": len(ids), "matchedRootCount": len(roots),
		"pageCount": (len(ids) + size - 1) / size}, nil
}

// invalidRefBlocks walks every document for references and returns, sorted,
// the ids of the blocks holding one whose target is not a block.
func (k *Kernel) invalidRefBlocks() []string {
	k.mu.RLock()
	docs := make([]*docEntry, 0, len(k.docs))
	for _, d := range k.docs {
		docs = append(docs, d)
	}
	k.mu.RUnlock()
	exists := map[string]bool{}
	refs := map[string][]string{} // holding block -> targets
	for _, d := range docs {
		ast.Walk(d.tree.Root, func(n *ast.Node, entering bool) ast.WalkStatus {
			if !entering {
				return ast.WalkContinue
			}
			if n.IsBlock() {
				exists[n.ID] = true
				return ast.WalkContinue
			}
			if n.Type != ast.NodeTextMark {
				return ast.WalkContinue
			}
			var def string
			switch {
			case n.IsTextMarkType("a"):
				after, ok := strings.CutPrefix(n.TextMarkAHref, "siyuan://blocks/")
				if !ok {
					return ast.WalkContinue
				}
				def, _, _ = strings.Cut(after, "?")
			case n.IsTextMarkType("block-ref"):
				def = n.TextMarkBlockRefID
			default:
				return ast.WalkContinue
			}
			if p := parentBlockOf(n); p != nil {
				refs[p.ID] = append(refs[p.ID], def)
			}
			return ast.WalkContinue
		})
	}
	var ids []string
	for holder, defs := range refs {
		for _, def := range defs {
			if !exists[def] {
				ids = append(ids, holder)
				break
			}
		}
	}
	sort.Strings(ids)
	return ids
}

// parentBlockOf is lute's treenode.ParentBlock: the nearest block above n.
func parentBlockOf(n *ast.Node) *ast.Node {
	for p := n.Parent; p != nil; p = p.Parent {
		if p.IsBlock() {
			return p
		}
	}
	return nil
}

// semanticSearchBlock answers as SiYuan does while embeddings are disabled
// (this kernel has no embedding provider): an empty page.
func (k *Kernel) semanticSearchBlock(ctx context.Context, a args) (any, error) {
	if _, err := a.optStr("query"); err != nil {
		return nil, err
	}
	return map[string]any{"blocks": []*wire.Block{}, "matchedBlockCount": 0, "matchedRootCount": 0, "pageCount": 0}, nil
}

// embeddingStat is SiYuan's GetEmbeddingStat with embeddings disabled: the
// blocks counted, every one pending, none indexed.
func (k *Kernel) embeddingStat(ctx context.Context, a args) (any, error) {
	n, err := k.sql.countBlocks(ctx)
	if err != nil {
		return nil, err
	}
	return map[string]any{"total": n, "indexed": 0, "pending": n, "failed": 0, "ignoredByLen": 0, "ignoredByConfig": 0,
		"enabled": false}, nil
}
