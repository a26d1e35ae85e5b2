package search

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

type knowledgeArgs struct {
	Query                   string
	PageSize, CandidateSize int
	Notebooks, Paths        []string
	Types, SubTypes         map[string]bool
	Related                 bool
	Active                  map[string]bool
	Namespace               bool
}

func parseKnowledge(a *tools.Args) (knowledgeArgs, error) {
	k := knowledgeArgs{Query: a.String("query"), PageSize: a.Int("pageSize"), Notebooks: a.Strings("notebooks"), Paths: a.Strings("paths"),
		Related: a.Bool("includeRelatedDocuments"), Namespace: a.String("namespaceMode") != "off"}
	if strings.TrimSpace(k.Query) == "" {
		return k, failure.Invalid("argument \"query\" must not be empty")
	}
	k.CandidateSize = a.Int("candidateSize")
	if !a.Has("candidateSize") {
		k.CandidateSize = min(max(k.PageSize*3, 20), 100)
	}
	for _, nb := range k.Notebooks {
		if err := tools.CheckID("notebooks", nb); err != nil {
			return k, err
		}
	}
	scopes := a.Strings("activeScopes")
	if len(scopes) > 50 {
		return k, failure.Invalid("activeScopes: at most 50, got %d", len(scopes))
	}
	k.Active = tokenSet(scopes)
	var err error
	if k.Types, err = boolMap(a, "types"); err != nil {
		return k, err
	}
	k.SubTypes, err = boolMap(a, "subTypes")
	return k, err
}

// inScope applies the notebooks, paths, types and subTypes filters to a row.
func (k knowledgeArgs) inScope(r anchorRow) bool {
	if len(k.Notebooks) > 0 && !slices.Contains(k.Notebooks, r.Box) {
		return false
	}
	if len(k.Paths) > 0 && !slices.ContainsFunc(k.Paths, func(p string) bool {
		return r.Path == p || strings.HasPrefix(r.Path, strings.TrimSuffix(p, "/")+"/") || strings.HasPrefix(r.Path, strings.TrimSuffix(p, ".sy")+"/")
	}) {
		return false
	}
	if len(k.Types) > 0 {
		name := typeCodes[r.Type]
		if !k.Types[r.Type] && !k.Types[name] {
			return false
		}
	}
	if len(k.SubTypes) > 0 && !k.SubTypes[r.SubType] {
		return false
	}
	return true
}

func anchorItem(r anchorRow, token, kind string, scopes []string) map[string]any {
	if scopes == nil {
		scopes = []string{}
	}
	return map[string]any{"id": r.ID, "rootId": r.RootID, "box": r.Box, "hpath": r.HPath, "type": r.Type, "name": r.Name, "alias": r.Alias,
		"content": r.Content, "updated": r.Updated, "anchorMatch": map[string]any{"token": token, "kind": kind, "scopes": scopes}}
}

var hanRE = regexp.MustCompile(`\p{Han}`)

// containable says whether a token is long enough to count when found
// inside a longer query: two Han characters, or four others.
func containable(token string) bool {
	compact := strings.Join(strings.Fields(token), "")
	if hanRE.MatchString(compact) {
		return utf8.RuneCountInString(compact) >= 2
	}
	return len(compact) >= 4
}

type namespaceHit struct {
	row        anchorRow
	token      string
	kind       string
	scopes     []string
	resolution string
}

// probeNamespace finds the exact anchors of the query, or else the seeds:
// up to 10 unique anchors whose token the query contains.
func probeNamespace(ctx context.Context, env *tools.Env, k knowledgeArgs) (exact, seeds []namespaceHit, status string, complete bool, err error) {
	all, complete, err := loadNamespace(ctx, env)
	if err != nil {
		return nil, nil, "", false, err
	}
	var rows []anchorRow
	for _, r := range all {
		if k.inScope(r) {
			rows = append(rows, r)
		}
	}
	match := func(token string) []namespaceHit {
		var out []namespaceHit
		for _, r := range rows {
			if n, a := r.matches(token); n || a {
				kind := "alias"
				if n {
					kind = "name"
				}
				out = append(out, namespaceHit{row: r, token: token, kind: kind})
			}
		}
		return out
	}
	q := normToken(k.Query)
	exact = match(q)
	switch {
	case len(exact) > 0 && !complete:
		status = "scan_incomplete_requires_retry"
	case len(exact) == 1:
		status = "unique"
	case len(exact) > 1:
		ids := make([]string, len(exact))
		for i, h := range exact {
			ids[i] = h.row.ID
		}
		scopes, err := loadScopes(ctx, env, ids)
		if err != nil {
			return nil, nil, "", false, err
		}
		var scoped []namespaceHit
		for i := range exact {
			exact[i].scopes = scopes[exact[i].row.ID]
			if intersects(exact[i].scopes, k.Active) {
				scoped = append(scoped, exact[i])
			}
		}
		status = "ambiguity_requires_context"
		if len(scoped) == 1 {
			exact, status = scoped, "resolved_by_scope"
		}
	}
	if len(exact) > 0 {
		return exact, nil, status, complete, nil
	}
	tokens := map[string]bool{}
	for _, r := range rows {
		for _, t := range append(splitTokens(r.Alias), normToken(r.Name)) {
			if t != "" && t != q && containable(t) && strings.Contains(q, t) {
				tokens[t] = true
			}
		}
	}
	ordered := make([]string, 0, len(tokens))
	for t := range tokens {
		ordered = append(ordered, t)
	}
	// Longest first, then by text, so the answer does not depend on map order.
	slices.SortFunc(ordered, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	seen := map[string]bool{}
	for _, t := range ordered[:min(len(ordered), 10)] {
		if m := match(t); len(m) == 1 && !seen[m[0].row.ID] {
			seen[m[0].row.ID] = true
			seeds = append(seeds, m[0])
		}
	}
	return nil, seeds, "", complete, nil
}

func knowledge(ctx context.Context, env *tools.Env, k knowledgeArgs) (any, error) {
	var exact, seeds []namespaceHit
	status, complete := "", true
	if k.Namespace {
		var err error
		if exact, seeds, status, complete, err = probeNamespace(ctx, env, k); err != nil {
			return nil, err
		}
	}
	items := func(hs []namespaceHit) []map[string]any {
		out := []map[string]any{}
		for _, h := range hs {
			out = append(out, anchorItem(h.row, h.token, h.kind, h.scopes))
		}
		return out
	}
	base := map[string]any{"query": k.Query, "namespaceScanComplete": complete}
	switch status {
	case "scan_incomplete_requires_retry", "ambiguity_requires_context":
		data := items(exact[:min(len(exact), k.PageSize)])
		base["retrievalMode"], base["resolutionStatus"], base["data"], base["showing"], base["candidateCount"], base["truncated"] =
			"namespace_ambiguous", status, data, len(data), len(exact), len(exact) > len(data)
		base["dataEgress"], base["externalCost"] = false, false
		base["hint"] = "the exact anchor maps to several readable blocks (or the namespace scan was cut): no target was chosen and semantic search was skipped; pass activeScopes or read the candidates"
		return base, nil
	case "unique", "resolved_by_scope":
		h := exact[0]
		base["retrievalMode"], base["resolutionStatus"], base["data"], base["showing"] = "namespace_exact", status, items(exact[:1]), 1
		base["matchedAnchor"] = map[string]any{"token": h.token, "kind": h.kind, "status": status}
		base["dataEgress"], base["externalCost"] = false, false
		base["hint"] = "a unique readable name/alias resolved locally; check updated before treating the block as current"
		return base, nil
	}
	seedIDs := []map[string]any{}
	for _, s := range seeds {
		seedIDs = append(seedIDs, map[string]any{"id": s.row.ID, "token": s.token, "kind": s.kind})
	}
	base["namespaceSeeds"] = seedIDs
	if err := semanticReady(ctx, env); err != nil {
		fe, ok := err.(*failure.Error)
		if !ok || fe.Code != failure.KernelError {
			return nil, err
		}
		// Without semantic search the namespace part still answers.
		data := items(seeds[:min(len(seeds), k.PageSize)])
		base["retrievalMode"], base["data"], base["showing"] = "namespace_only", data, len(data)
		base["semanticAvailable"], base["semanticUnavailableReason"] = false, fe.Message
		base["dataEgress"], base["externalCost"] = false, false
		base["hint"] = "no exact name/alias matched and semantic search is unavailable; data holds the anchors whose token the query contains. Try search.fulltext"
		return base, nil
	}
	return knowledgeSemantic(ctx, env, k, seeds, base)
}

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

func knowledgeAction() *tools.Action {
	return tools.Read[knowledgeArgs]{
		Name: "knowledge", Summary: "find knowledge: exact name/alias anchors first (via SQL), then semantic search where SiYuan has embeddings, collapsing reference-only hits into what they reference",
		Example: map[string]any{"query": "release checklist", "pageSize": 5},
		Params: []tools.Param{
			{Name: "query", Type: tools.String, Description: "what to find; an exact readable name or alias resolves locally before anything semantic", Required: true},
			{Name: "pageSize", Type: tools.Integer, Description: "at most this many candidates", Default: 10, Min: tools.IntP(1), Max: tools.IntP(50)},
			{Name: "candidateSize", Type: tools.Integer, Description: "semantic hits asked for before collapsing (default: 3 × pageSize, 20 to 100)", Min: tools.IntP(1), Max: tools.IntP(100)},
			{Name: "notebooks", Type: tools.Strings, Description: "only these notebooks (ids)"},
			{Name: "paths", Type: tools.Strings, Description: "only blocks under these storage paths (\"/<doc id>\" prefixes)"},
			{Name: "types", Type: tools.Object, Description: "block types, e.g. {\"h\":true} or {\"heading\":true}"},
			{Name: "subTypes", Type: tools.Object, Description: "block subtypes, e.g. {\"h2\":true}"},
			{Name: "includeRelatedDocuments", Type: tools.Boolean, Description: "attach the documents that reference each semantic candidate", Default: true},
			{Name: "activeScopes", Type: tools.Strings, Description: "custom-anchor-scope values that pick one block when an exact anchor has several (at most 50)"},
			{Name: "namespaceMode", Type: tools.String, Description: "auto (default) probes names and aliases first; off skips them (a baseline for evaluation)", Enum: []string{"auto", "off"}, Default: "auto"},
		},
		Parse: parseKnowledge,
		Scope: tools.Scope[knowledgeArgs]{Touches: func(k knowledgeArgs) []tools.Touch {
			var ts []tools.Touch
			for _, nb := range k.Notebooks {
				ts = append(ts, tools.OnNotebook(nb, tools.LevelRead))
			}
			return ts
		}},
		Run: knowledge,
	}.Action()
}
