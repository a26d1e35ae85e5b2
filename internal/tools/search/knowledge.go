package search

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

type knowledgeArgs struct {
	Query         string         `arg:"query" help:"what to find; an exact readable name or alias resolves locally before anything semantic" required:""`
	PageSize      int            `arg:"pageSize" help:"at most this many candidates" default:"10" min:"1" max:"50"`
	Candidates    *int           `arg:"candidateSize" help:"semantic hits asked for before collapsing (default: 3 × pageSize, 20 to 100)" min:"1" max:"100"`
	Notebooks     []string       `arg:"notebooks" help:"only these notebooks" id:""`
	Paths         []string       `arg:"paths" help:"only blocks under these storage paths (\"/<doc id>\" prefixes)"`
	GivenTypes    map[string]any `arg:"types" help:"block types, e.g. {\"h\":true} or {\"heading\":true}"`
	GivenSubTypes map[string]any `arg:"subTypes" help:"block subtypes, e.g. {\"h2\":true}"`
	Related       bool           `arg:"includeRelatedDocuments" help:"attach the documents that reference each semantic candidate" default:"true"`
	Scopes        []string       `arg:"activeScopes" help:"custom-anchor-scope values that pick one block when an exact anchor has several (at most 50)"`
	NamespaceMode string         `arg:"namespaceMode" help:"auto (default) probes names and aliases first; off skips them (a baseline for evaluation)" enum:"auto,off" default:"auto"`
	// What the arguments resolve to.
	CandidateSize   int
	Types, SubTypes map[string]bool
	Active          map[string]bool
	Namespace       bool
}

func parseKnowledge(k *knowledgeArgs) error {
	k.Namespace = k.NamespaceMode != "off"
	if strings.TrimSpace(k.Query) == "" {
		return failure.Invalid("argument \"query\" must not be empty")
	}
	k.CandidateSize = min(max(k.PageSize*3, 20), 100)
	if k.Candidates != nil {
		k.CandidateSize = *k.Candidates
	}
	if len(k.Scopes) > 50 {
		return failure.Invalid("activeScopes: at most 50, got %d", len(k.Scopes))
	}
	k.Active = tokenSet(k.Scopes)
	var err error
	if k.Types, err = boolMap("types", k.GivenTypes); err != nil {
		return err
	}
	k.SubTypes, err = boolMap("subTypes", k.GivenSubTypes)
	return err
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
	row    anchorRow
	token  string
	kind   string
	scopes []string
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

func knowledgeAction() *tools.Action {
	return tools.Read[knowledgeArgs]{
		Name: "knowledge", Summary: "find knowledge: exact name/alias anchors first (via SQL), then semantic search where SiYuan has embeddings, collapsing reference-only hits into what they reference",
		Example:  map[string]any{"query": "release checklist", "pageSize": 5},
		Validate: parseKnowledge,
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
