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
	Query, AssetID       string
	QueryMethod          int
	Types                map[string]bool
	Method, OrderBy      int
	Page, PageSize       int
	resolvedM, resolvedS bool
}

func parseAssetContent(a *tools.Args) (assetContentArgs, error) {
	c := assetContentArgs{Query: a.String("query"), AssetID: a.String("assetId"), QueryMethod: a.Int("queryMethod"), Page: a.Int("page"), PageSize: a.Int("pageSize")}
	if c.Query == "" && c.AssetID == "" {
		return c, failure.Invalid("give query (words of the assets' text) or assetId (an id a search answered)")
	}
	if c.AssetID != "" {
		if err := tools.CheckID("assetId", c.AssetID); err != nil {
			return c, err
		}
	}
	c.Method, c.resolvedM = resolveMethod(a)
	if s := a.String("sortBy"); s != "" {
		c.OrderBy, c.resolvedS = assetSortNames[s], true
	} else {
		c.OrderBy = a.Int("orderBy")
	}
	var err error
	if c.Types, err = boolMap(a, "types"); err != nil {
		return c, err
	}
	if c.Method == 2 && c.AssetID == "" {
		if c.Query, err = checkSQL(c.Query); err != nil {
			return c, err
		}
	}
	return c, nil
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
	params := []tools.Param{
		{Name: "query", Type: tools.String, Description: "words of the assets' text (with assetId: what to highlight)"},
		{Name: "assetId", Type: tools.String, Description: "read one asset's whole text: an id a search answered (a SiYuan id)"},
		{Name: "queryMethod", Type: tools.Integer, Description: "with assetId: 0 keyword, 1 query syntax", Default: 0, Min: tools.IntP(0), Max: tools.IntP(3)},
		{Name: "types", Type: tools.Object, Description: "extensions to keep, e.g. {\".txt\":true,\".pdf\":true}"},
	}
	params = append(params, methodParams()...)
	params = append(params,
		tools.Param{Name: "orderBy", Type: tools.Integer, Description: "0/1 relevance descending/ascending, 2/3 updated ascending/descending", Min: tools.IntP(0), Max: tools.IntP(3)},
		tools.Param{Name: "sortBy", Type: tools.String, Description: "the order by name (wins over orderBy)", Enum: []string{"relevance", "relevance_desc", "relevance_asc", "updated_asc", "updated_desc"}},
		tools.Param{Name: "page", Type: tools.Integer, Description: "1-based page", Default: 1, Min: tools.IntP(1)},
		tools.Param{Name: "pageSize", Type: tools.Integer, Description: "results per page", Default: 32, Min: tools.IntP(1), Max: tools.IntP(128)},
	)
	return tools.Read[assetContentArgs]{
		Name: "fulltext_asset_content", Summary: "assets whose text (txt, md and other text files; Office, PDF, EPUB once parsed) matches, or one asset's whole text",
		Example: map[string]any{"query": "invoice total", "pageSize": 10},
		Params:  params,
		Parse:   parseAssetContent,
		// data/assets belongs to the workspace, not to a notebook.
		Scope: tools.Scope[assetContentArgs]{Global: true},
		Run:   assetContentRun,
	}.Action()
}
