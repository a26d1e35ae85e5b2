package search

import (
	"context"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

type anchorArgs struct {
	Given    []string `arg:"candidates" help:"tokens to check (comma-separated aliases split into tokens), at most 10 in all" required:""`
	Kind     string   `arg:"candidateKind" help:"whether they will be written as names (must be unique) or aliases" enum:"name,alias" required:""`
	Excluded []string `arg:"excludeBlockIds" help:"blocks being edited, left out of collisions (at most 100)" id:""`
	Scopes   []string `arg:"activeScopes" help:"custom-anchor-scope values that resolve a token held by several blocks when exactly one is in scope (at most 50)"`
	// Candidates are the tokens of Given, each once; Exclude and Active
	// the sets of Excluded and Scopes.
	Candidates []string
	Exclude    map[string]bool
	Active     map[string]bool
}

func parseAnchor(out *anchorArgs) error {
	ex := out.Excluded
	if len(ex) > 100 {
		return failure.Invalid("excludeBlockIds: at most 100 ids, got %d", len(ex))
	}
	scopes := out.Scopes
	if len(scopes) > 50 {
		return failure.Invalid("activeScopes: at most 50, got %d", len(scopes))
	}
	raw := out.Given
	var cands []string
	seen := map[string]bool{}
	for _, c := range raw {
		for _, t := range splitTokens(c) {
			if !seen[t] {
				seen[t] = true
				cands = append(cands, t)
			}
		}
	}
	if len(cands) == 0 {
		return failure.Invalid("candidates: give 1 to 10 name or alias tokens")
	}
	if len(cands) > 10 {
		return failure.Invalid("candidates: at most 10 tokens per call (comma-separated aliases count one each), got %d", len(cands))
	}
	out.Candidates, out.Exclude, out.Active = cands, map[string]bool{}, tokenSet(scopes)
	for _, id := range ex {
		out.Exclude[id] = true
	}
	return nil
}

type anchorTarget struct {
	ID            string   `json:"id"`
	RootID        string   `json:"rootId"`
	HPath         string   `json:"hpath"`
	Type          string   `json:"type"`
	Name          string   `json:"name"`
	Alias         string   `json:"alias"`
	MatchedFields []string `json:"matchedFields"`
	Scopes        []string `json:"scopes"`
	Preview       string   `json:"preview"`
}

func preview(s string) string {
	r := []rune(s)
	if len(r) > 120 {
		return string(r[:120])
	}
	return s
}

func checkAnchor(ctx context.Context, env *tools.Env, a anchorArgs) (any, error) {
	rows, complete, err := loadNamespace(ctx, env)
	if err != nil {
		return nil, err
	}
	var hit []anchorRow
	for _, r := range rows {
		if a.Exclude[r.ID] {
			continue
		}
		for _, c := range a.Candidates {
			if n, al := r.matches(c); n || al {
				hit = append(hit, r)
				break
			}
		}
	}
	ids := make([]string, len(hit))
	for i, r := range hit {
		ids[i] = r.ID
	}
	scopes, err := loadScopes(ctx, env, ids)
	if err != nil {
		return nil, err
	}
	checks := make([]map[string]any, 0, len(a.Candidates))
	available := 0
	for _, c := range a.Candidates {
		targets := []anchorTarget{}
		var scoped []string
		nameHit := false
		for _, r := range hit {
			n, al := r.matches(c)
			if !n && !al {
				continue
			}
			var fields []string
			if n {
				fields = append(fields, "name")
				nameHit = true
			}
			if al {
				fields = append(fields, "alias")
			}
			sc := scopes[r.ID]
			if sc == nil {
				sc = []string{}
			}
			if intersects(sc, a.Active) {
				scoped = append(scoped, r.ID)
			}
			targets = append(targets, anchorTarget{ID: r.ID, RootID: r.RootID, HPath: r.HPath, Type: r.Type, Name: r.Name, Alias: r.Alias,
				MatchedFields: fields, Scopes: sc, Preview: preview(r.Content)})
		}
		var status string
		switch {
		case len(targets) == 0 && complete:
			status = "available"
			available++
		case len(targets) == 0:
			status = "scan_incomplete_requires_retry"
		case len(scoped) == 1:
			status = "resolved_by_scope"
		case a.Kind == "name" || nameHit:
			status = "collision_requires_adjudication"
		default:
			status = "alias_multi_match_requires_context"
		}
		chk := map[string]any{"candidate": c, "candidateKind": a.Kind, "status": status, "targetCount": len(targets),
			"returnedTargetCount": min(len(targets), 10), "targets": targets[:min(len(targets), 10)]}
		if len(targets) > 10 {
			chk["targetsTruncated"] = true
			chk["hint"] = "more than 10 blocks hold this token: check it alone with activeScopes, or audit it with query_sql"
		}
		if status == "resolved_by_scope" {
			chk["resolvedTargetId"] = scoped[0]
		}
		checks = append(checks, chk)
	}
	ret := map[string]any{
		"normalization": "NFKC + trim + lower case; alias separators: comma or Chinese comma",
		"policy": map[string]any{"name": "globally_unique_logical_address", "alias": "multi_match_allowed_but_must_be_adjudicated",
			"scopedResolution": "automatic only when exactly one candidate intersects activeScopes"},
		"checks": checks, "availableCount": available, "collisionCount": len(checks) - available,
		"namespaceScanComplete": complete, "namespaceScanLimit": namespaceLimit,
	}
	if !complete {
		ret["warning"] = "the readable name/alias namespace reached its 10,000-row limit: no unmatched candidate may be treated as available"
	}
	return ret, nil
}

func checkAnchorAction() *tools.Action {
	return tools.Read[anchorArgs]{
		Name: "check_anchor", Summary: "audit up to 10 candidate name or alias tokens against the readable name/alias namespace before writing them",
		Example:  map[string]any{"candidates": []string{"Project Atlas", "atlas"}, "candidateKind": "alias"},
		Validate: parseAnchor,
		// The namespace spans notebooks; rows of hidden ones are dropped.
		Scope: tools.Scope[anchorArgs]{Global: true},
		Run:   checkAnchor,
	}.Action()
}
