package search

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// semanticSince is the first SiYuan with search/semanticSearchBlock.
const semanticSince = "3.7.0"

type semanticArgs struct {
	Query         string         `arg:"query" help:"natural-language query, sent to the embedding provider SiYuan is configured with" required:""`
	Paths         []string       `arg:"paths" help:"limit to notebooks or documents: \"<notebook>\" or \"<notebook>/<storage path>\""`
	GivenTypes    map[string]any `arg:"types" help:"block types by name or shortcode, as for fulltext"`
	Shortcodes    []string       `arg:"typeShortcodes" help:"block types as shortcodes, merged with types"`
	GivenSubTypes map[string]any `arg:"subTypes" help:"block subtypes, e.g. {\"h1\":true}"`
	Page          int            `arg:"page" help:"1-based page" default:"1" min:"1"`
	PageSize      int            `arg:"pageSize" help:"results per page" default:"32" min:"1" max:"128"`
	// Types and SubTypes are the filters asked.
	Types, SubTypes map[string]bool
}

// boolMap reads an object argument that maps names to booleans.
func boolMap(name string, obj map[string]any) (map[string]bool, error) {
	if obj == nil {
		return nil, nil
	}
	out := map[string]bool{}
	for k, v := range obj {
		b, ok := v.(bool)
		if !ok {
			return nil, failure.Invalid("%s: %q must map to true or false", name, k)
		}
		out[k] = b
	}
	return out, nil
}

func parseSemantic(s *semanticArgs) error {
	if s.Query == "" {
		return failure.Invalid("argument \"query\" must not be empty")
	}
	var err error
	if s.Types, err = resolveTypes(s.GivenTypes, s.Shortcodes); err != nil {
		return err
	}
	s.SubTypes, err = boolMap("subTypes", s.GivenSubTypes)
	return err
}

// semanticReady refuses semantic search where the kernel cannot do it: a
// SiYuan before 3.7.0 has no endpoint, and 3.7+ answers an empty page, not
// an error, while no embedding model is enabled.
func semanticReady(ctx context.Context, env *tools.Env) error {
	st, err := env.Kernel.EmbeddingStat(ctx)
	var status *siyuan.StatusError
	if errors.As(err, &status) && status.Status == http.StatusNotFound {
		v, _ := env.Kernel.Version(ctx)
		e := failure.New(failure.KernelError, "semantic search needs SiYuan %s or later (search/semanticSearchBlock); this kernel (SiYuan %s) does not offer it; nothing was searched", semanticSince, v)
		e.Action = "use search.fulltext, or search.knowledge (which answers from names and aliases without it)"
		return e.With("kernelVersion", v).With("semanticSince", semanticSince)
	}
	if err != nil {
		return err
	}
	if !st.Enabled {
		v, _ := env.Kernel.Version(ctx)
		e := failure.New(failure.KernelError, "semantic search is unavailable: SiYuan %s has search/semanticSearchBlock (since %s) but no embedding model is enabled, and would answer nothing; nothing was searched", v, semanticSince)
		e.Action = "enable an embedding model with an API key in SiYuan (Settings → AI), or use search.fulltext"
		return e.With("kernelVersion", v).With("semanticSince", semanticSince).With("embeddingsEnabled", false)
	}
	return nil
}

func semantic(ctx context.Context, env *tools.Env, a semanticArgs) (any, error) {
	if err := semanticReady(ctx, env); err != nil {
		return nil, err
	}
	paths, ok, err := visiblePaths(ctx, env, a.Paths)
	if err != nil {
		return nil, err
	}
	hits := []searchHit{}
	ret := map[string]any{"page": a.Page, "pageSize": a.PageSize, "dataEgress": true, "externalCost": true}
	if !ok {
		ret["blocks"], ret["matchedBlockCount"], ret["pageCount"], ret["hasNextPage"] = hits, 0, 0, false
		return ret, nil
	}
	res, err := env.Kernel.SemanticSearchBlock(ctx, siyuan.SemanticSearchRequest{Query: a.Query, Page: a.Page, PageSize: a.PageSize,
		Paths: paths, Types: a.Types, SubTypes: a.SubTypes})
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, b := range res.Blocks {
		if tools.Visible(ctx, b.Box) && !seen[b.ID] {
			seen[b.ID] = true
			hits = append(hits, hitOf(b))
		}
	}
	ret["blocks"], ret["matchedBlockCount"], ret["matchedRootCount"], ret["pageCount"], ret["hasNextPage"] =
		hits, res.MatchedBlockCount, res.MatchedRootCount, res.PageCount, a.Page < res.PageCount
	ret["hint"] = "semantic hits are candidates, not evidence: read the block by id and check its source before reuse"
	info := tools.ReadInfo{Scope: "semantic search for " + strconv.Quote(a.Query), Representation: "block hits"}
	var steps []tools.NextStep
	if a.Page < res.PageCount {
		info.Limitations = append(info.Limitations, fmt.Sprintf("page %d of %d only", a.Page, res.PageCount))
		next := map[string]any{"action": "semantic", "query": a.Query, "page": a.Page + 1, "pageSize": a.PageSize}
		for k, v := range map[string]map[string]bool{"types": a.Types, "subTypes": a.SubTypes} {
			if v != nil {
				next[k] = v
			}
		}
		if len(a.Paths) > 0 {
			next["paths"] = a.Paths
		}
		steps = append(steps, tools.NextStep{Purpose: "read the next page of hits (another embedding request)", Tool: "search", Arguments: next})
	}
	if p := tools.PolicyFrom(ctx); p != nil && p.Hides() {
		info.Limitations = append(info.Limitations, "notebooks hidden from agents were not searched")
	}
	tools.Cover(ctx, ret, info, steps...)
	return ret, nil
}

func semanticAction() *tools.Action {
	return tools.Read[semanticArgs]{
		Name: "semantic", Summary: "blocks ranked by embedding similarity (SiYuan's embedding model must be enabled)",
		Example:  map[string]any{"query": "how we decided the release schedule", "pageSize": 10},
		Validate: parseSemantic,
		Scope:    tools.Scope[semanticArgs]{Touches: func(a semanticArgs) []tools.Touch { return pathTouches(a.Paths) }},
		Run:      semantic,
	}.Action()
}

// pathTouches are the notebooks a paths filter names, read.
func pathTouches(paths []string) []tools.Touch {
	var ts []tools.Touch
	for _, p := range paths {
		nb, _, _ := cutNotebook(p)
		ts = append(ts, tools.OnNotebook(nb, tools.LevelRead))
	}
	return ts
}
