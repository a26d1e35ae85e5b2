package search

import (
	"context"
	"slices"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// candidate is one collapsed semantic result.
type candidate struct {
	TargetID        string
	Rank            int
	Sources         []string
	CollapsedRefs   int
	Named           bool
	RelatedDocument []map[string]any
}

// collapse turns semantic hits (best first) into candidates: a hit without
// a name that only references other blocks stands for those blocks; named
// blocks come first, then by best rank. Targets not in known (unreadable)
// are dropped, so a reference never reveals a hidden block.
func collapse(hits []string, named map[string]bool, refs map[string][]string, known map[string]bool) []*candidate {
	byID := map[string]*candidate{}
	var order []*candidate
	for i, src := range hits {
		targets := []string{src}
		if !named[src] && len(refs[src]) > 0 {
			targets = refs[src]
		}
		for _, t := range targets {
			if !known[t] {
				continue
			}
			c, ok := byID[t]
			if !ok {
				c = &candidate{TargetID: t, Rank: i + 1, Named: named[t]}
				byID[t] = c
				order = append(order, c)
			}
			if !slices.Contains(c.Sources, src) {
				c.Sources = append(c.Sources, src)
			}
			if t != src {
				c.CollapsedRefs++
			}
			c.Rank = min(c.Rank, i+1)
		}
	}
	slices.SortStableFunc(order, func(a, b *candidate) int {
		if a.Named != b.Named {
			if a.Named {
				return -1
			}
			return 1
		}
		return a.Rank - b.Rank
	})
	return order
}

func knowledgeSemantic(ctx context.Context, env *tools.Env, k knowledgeArgs, seeds []namespaceHit, base map[string]any) (any, error) {
	scope := append([]string{}, k.Notebooks...)
	paths, ok, err := visiblePaths(ctx, env, scope)
	if err != nil {
		return nil, err
	}
	var res siyuan.FullTextSearchResult
	if ok {
		if res, err = env.Kernel.SemanticSearchBlock(ctx, siyuan.SemanticSearchRequest{Query: k.Query, Page: 1, PageSize: k.CandidateSize,
			Paths: paths, Types: k.Types, SubTypes: k.SubTypes}); err != nil {
			return nil, err
		}
	}
	var hits []string
	for _, b := range res.Blocks {
		if tools.Visible(ctx, b.Box) && !slices.Contains(hits, b.ID) {
			hits = append(hits, b.ID)
		}
	}
	refs := map[string][]string{}
	ids := slices.Clone(hits)
	if len(hits) > 0 {
		rows, err := env.Kernel.QuerySQL(ctx, "SELECT block_id, def_block_id FROM refs WHERE block_id IN ("+sqlList(hits)+") LIMIT 500")
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			src, def := rowString(r, "block_id"), rowString(r, "def_block_id")
			if src != "" && def != "" && !slices.Contains(refs[src], def) {
				refs[src] = append(refs[src], def)
				ids = append(ids, def)
			}
		}
	}
	blocks := map[string]anchorRow{}
	if len(ids) > 0 {
		rows, err := env.Kernel.QuerySQL(ctx, "SELECT id, root_id, box, path, hpath, type, subtype, name, alias, content, updated FROM blocks WHERE id IN ("+
			sqlList(ids)+") LIMIT 500")
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			row := anchorRow{ID: rowString(r, "id"), RootID: rowString(r, "root_id"), Box: rowString(r, "box"), Path: rowString(r, "path"),
				HPath: rowString(r, "hpath"), Type: rowString(r, "type"), SubType: rowString(r, "subtype"), Name: rowString(r, "name"),
				Alias: rowString(r, "alias"), Content: rowString(r, "content"), Updated: rowString(r, "updated")}
			if tools.Visible(ctx, row.Box) && k.inScope(row) {
				blocks[row.ID] = row
			}
		}
	}
	named, known := map[string]bool{}, map[string]bool{}
	for id, r := range blocks {
		known[id], named[id] = true, strings.TrimSpace(r.Name) != ""
	}
	cands := collapse(hits, named, refs, known)
	related := map[string][]map[string]any{}
	if k.Related && len(cands) > 0 {
		targets := make([]string, len(cands))
		for i, c := range cands {
			targets[i] = c.TargetID
		}
		rows, err := env.Kernel.QuerySQL(ctx, "SELECT r.def_block_id AS target_id, src.root_id AS source_root_id, src.box AS box, root.hpath AS source_hpath, "+
			"root.content AS source_title FROM refs r JOIN blocks src ON src.id = r.block_id JOIN blocks root ON root.id = src.root_id "+
			"WHERE r.def_block_id IN ("+sqlList(targets)+") GROUP BY r.def_block_id, src.root_id, src.box, root.hpath, root.content LIMIT 500")
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			t, root := rowString(r, "target_id"), rowString(r, "source_root_id")
			if t == "" || root == "" || !tools.Visible(ctx, rowString(r, "box")) {
				continue
			}
			related[t] = append(related[t], map[string]any{"id": root, "hpath": rowString(r, "source_hpath"), "title": rowString(r, "source_title")})
		}
	}
	data := []map[string]any{}
	seen := map[string]bool{}
	for _, s := range seeds {
		seen[s.row.ID] = true
		data = append(data, anchorItem(s.row, s.token, s.kind, s.scopes))
	}
	for _, c := range cands {
		if seen[c.TargetID] {
			continue
		}
		seen[c.TargetID] = true
		r := blocks[c.TargetID]
		rel := related[c.TargetID]
		if rel == nil {
			rel = []map[string]any{}
		}
		data = append(data, map[string]any{"id": r.ID, "rootId": r.RootID, "box": r.Box, "hpath": r.HPath, "type": r.Type, "name": r.Name,
			"alias": r.Alias, "content": r.Content, "semanticRank": c.Rank, "collapsedReferenceCount": c.CollapsedRefs,
			"sourceResultIds": c.Sources, "relatedDocuments": rel})
	}
	total := len(data)
	data = data[:min(len(data), k.PageSize)]
	for i := range data {
		data[i]["deduplicatedRank"] = i + 1
	}
	mode := "semantic_fallback"
	if len(seeds) > 0 {
		mode = "namespace_seeded_semantic"
	}
	base["retrievalMode"], base["data"], base["showing"], base["truncated"] = mode, data, len(data), total > len(data)
	base["semanticAvailable"], base["semanticCandidateCount"], base["deduplicatedCount"] = true, len(hits), total
	base["dataEgress"], base["externalCost"] = true, true
	base["hint"] = "semantic results are candidates, not evidence: read the block by id before reuse"
	return base, nil
}
