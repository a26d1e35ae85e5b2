package search

import (
	"context"
	"errors"
	"path"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// Upstream's names for the asset content orders.
var (
	assetSortNames = map[string]int{"relevance": 0, "relevance_desc": 0, "relevance_asc": 1, "updated_asc": 2, "updated_desc": 3}
	assetSortOf    = map[int]string{0: "relevance_desc", 1: "relevance_asc", 2: "updated_asc", 3: "updated_desc"}
)

type assetContentArgs struct {
	Query       string         `arg:"query" help:"words of the assets' text (with assetId: what to highlight)"`
	AssetID     string         `arg:"assetId" help:"read one asset's whole text: an id a search answered" id:""`
	QueryMethod int            `arg:"queryMethod" help:"with assetId: 0 keyword, 1 query syntax" default:"0" min:"0" max:"3"`
	GivenTypes  map[string]any `arg:"types" help:"extensions to keep, e.g. {\".txt\":true,\".pdf\":true}"`
	methodArgs
	OrderBy  int       `arg:"orderBy" help:"0/1 relevance descending/ascending, 2/3 updated ascending/descending" min:"0" max:"3"`
	SortBy   assetSort `arg:"sortBy" help:"the order by name (wins over orderBy)"`
	Page     int       `arg:"page" help:"1-based page" default:"1" min:"1"`
	PageSize int       `arg:"pageSize" help:"results per page" default:"32" min:"1" max:"128"`
	// Types are the extensions kept; resolvedM and resolvedS whether the
	// method and the order were named.
	Types                map[string]bool
	resolvedM, resolvedS bool
}

// assetSort is an order of asset hits by name.
type assetSort string

func (assetSort) ArgEnum() []string {
	return []string{"relevance", "relevance_desc", "relevance_asc", "updated_asc", "updated_desc"}
}

func parseAssetContent(c *assetContentArgs) error {
	if c.Query == "" && c.AssetID == "" {
		return failure.Invalid("give query (words of the assets' text) or assetId (an id a search answered)")
	}
	c.Method, c.resolvedM = c.resolve()
	if c.SortBy != "" {
		c.OrderBy, c.resolvedS = assetSortNames[string(c.SortBy)], true
	}
	var err error
	if c.Types, err = boolMap("types", c.GivenTypes); err != nil {
		return err
	}
	if c.Method == 2 && c.AssetID == "" {
		if c.Query, err = checkSQL(c.Query); err != nil {
			return err
		}
	}
	return nil
}

// existing keeps the hits whose file is still in data/assets: SiYuan 3.7.3
// keeps a removed asset in its content index.
func existing(ctx context.Context, env *tools.Env, hits []siyuan.AssetContent) ([]siyuan.AssetContent, int, error) {
	dirs := map[string]map[string]bool{}
	out := make([]siyuan.AssetContent, 0, len(hits))
	for _, h := range hits {
		dir := path.Dir(h.Path)
		names, ok := dirs[dir]
		if !ok {
			entries, err := env.Kernel.ReadDir(ctx, "/data/"+dir)
			if err != nil && !isMissing(err) {
				return nil, 0, err
			}
			names = map[string]bool{}
			for _, e := range entries {
				names[e.Name] = true
			}
			dirs[dir] = names
		}
		if names[path.Base(h.Path)] {
			out = append(out, h)
		}
	}
	return out, len(hits) - len(out), nil
}

func isMissing(err error) bool { return errors.Is(err, siyuan.ErrFileNotFound) }

func assetContentRun(ctx context.Context, env *tools.Env, a assetContentArgs) (any, error) {
	if a.AssetID != "" {
		c, err := env.Kernel.GetAssetContent(ctx, a.AssetID, a.Query, a.QueryMethod)
		if err != nil {
			return nil, err
		}
		if c == nil {
			e := failure.New(failure.NotFound, "no indexed asset content %s matches (the id is unknown, or the query does not match its text)", a.AssetID)
			e.Action = "take assetId from a fulltext_asset_content answer; drop query to read the whole text"
			return nil, e
		}
		kept, _, err := existing(ctx, env, []siyuan.AssetContent{*c})
		if err != nil {
			return nil, err
		}
		if len(kept) == 0 {
			return nil, failure.New(failure.NotFound, "asset content %s is of %s, which no longer exists (SiYuan keeps removed assets in its index)", a.AssetID, c.Path)
		}
		return map[string]any{"assetContent": c, "hint": "content is the whole text, matches in <mark>, newlines as <br>"}, nil
	}
	if a.Method == 2 {
		if p := tools.PolicyFrom(ctx); p != nil && p.Hides() {
			e := failure.New(failure.PermissionDenied, "method 2 (SQL) is refused while a notebook is hidden from agents (permission none); nothing was run")
			e.Action = "use method 0 (keyword), 1 (query syntax) or 3 (regex)"
			return nil, e
		}
	}
	res, err := env.Kernel.FullTextSearchAssetContent(ctx, siyuan.AssetContentRequest{Query: a.Query, Types: a.Types, Method: a.Method,
		OrderBy: a.OrderBy, Page: a.Page, PageSize: a.PageSize})
	if err != nil {
		return nil, err
	}
	hits, stale, err := existing(ctx, env, res.AssetContents)
	if err != nil {
		return nil, err
	}
	ret := map[string]any{"assetContents": hits, "data": hits, "total": len(hits), "matchedAssetCount": res.MatchedAssetCount,
		"page": a.Page, "pageSize": a.PageSize, "pageCount": res.PageCount, "hasNextPage": a.Page < res.PageCount,
		"hint": "assets in data/assets whose text matches (text files at once; Office, PDF and EPUB files once SiYuan has parsed them); content is a snippet with <mark>; matchedAssetCount and pageCount are the kernel's"}
	if stale > 0 {
		ret["staleDropped"] = stale
	}
	if a.resolvedM || a.resolvedS {
		ret["resolvedArgs"] = map[string]any{"method": a.Method, "methodName": methodOf[a.Method], "orderBy": a.OrderBy, "sortBy": assetSortOf[a.OrderBy]}
	}
	return ret, nil
}

func assetContentAction() *tools.Action {
	return tools.Read[assetContentArgs]{
		Name: "fulltext_asset_content", Summary: "assets whose text (txt, md and other text files; Office, PDF, EPUB once parsed) matches, or one asset's whole text",
		Example:  map[string]any{"query": "invoice total", "pageSize": 10},
		Validate: parseAssetContent,
		// data/assets belongs to the workspace, not to a notebook.
		Scope: tools.Scope[assetContentArgs]{Global: true},
		Run:   assetContentRun,
	}.Action()
}
