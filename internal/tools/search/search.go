// Package search is the search tool: full-text search over blocks,
// read-only SQL over SiYuan's blocks index, and assets by file name.
package search

import (
	"context"
	"path"
	"strconv"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

var searchMethods = map[string]int{"keyword": 0, "query": 1, "regex": 3}

// Tool returns the search tool.
func Tool() *tools.Tool {
	return &tools.Tool{
		Name:        "search",
		Title:       "Search",
		Description: "Search SiYuan: full-text over blocks, a read-only SQL query over the blocks index (which lags writes by a few seconds), or assets by file name.",
		Actions: []*tools.Action{
			tools.Read[fulltextArgs]{
				Name: "fulltext", Summary: "blocks matching a query, with highlights",
				Example: map[string]any{"query": "quarterly plan", "pageSize": 10},
				Params: []tools.Param{
					{Name: "query", Type: tools.String, Description: "what to look for", Required: true},
					{Name: "method", Type: tools.String, Description: "keyword, query (SiYuan query syntax) or regex", Enum: []string{"keyword", "query", "regex"}, Default: "keyword"},
					{Name: "page", Type: tools.Integer, Description: "1-based page", Default: 1, Min: tools.IntP(1)},
					{Name: "pageSize", Type: tools.Integer, Description: "results per page", Default: 32, Min: tools.IntP(1), Max: tools.IntP(128)},
					{Name: "paths", Type: tools.Strings, Description: "limit to notebooks or documents: \"<notebook>\" or \"<notebook>/<storage path>\""},
				},
				Scope: tools.Scope[fulltextArgs]{Touches: func(a fulltextArgs) []tools.Touch {
					var ts []tools.Touch
					for _, p := range a.Paths {
						nb, _, _ := strings.Cut(p, "/")
						ts = append(ts, tools.OnNotebook(nb, tools.LevelRead))
					}
					return ts
				}},
				Run: fulltext,
			}.Action(),
			tools.Read[sqlArgs]{
				Name: "query_sql", Summary: "one read-only SELECT over SiYuan's SQL index",
				Example: map[string]any{"stmt": "SELECT id, content FROM blocks WHERE type = 'h' ORDER BY updated DESC", "maxRows": 20},
				Params: []tools.Param{
					{Name: "stmt", Type: tools.String, Description: "a single SELECT or WITH statement, e.g. SELECT id, content FROM blocks WHERE type='h'. " +
						"SiYuan cannot interrupt a query, so what can run without bound is refused: recursive WITH; joins other than JOIN t ON t.id = x.col (or t.col = x.id, or USING (id)); " +
						"subqueries naming an outer table unless their WHERE ties them to it by an id; randomblob, zeroblob, printf, format", Required: true},
					{Name: "maxRows", Type: tools.Integer, Description: "at most this many rows; truncated says whether more exist", Default: 200, Min: tools.IntP(1), Max: tools.IntP(1000)},
				},
				Parse: func(a *tools.Args) (sqlArgs, error) {
					stmt, err := checkSQL(a.String("stmt"))
					return sqlArgs{stmt, a.Int("maxRows")}, err
				},
				// Raw SQL cannot be filtered by notebook: it is refused
				// while any notebook is hidden (querySQL checks).
				Scope: tools.Scope[sqlArgs]{Global: true},
				Run:   querySQL,
			}.Action(),
			tools.Read[assetArgs]{
				Name: "search_assets", Summary: "assets (images, PDFs, ...) whose file name matches a keyword, newest first",
				Example: map[string]any{"keyword": "diagram", "exts": []string{".png"}},
				Params: []tools.Param{
					{Name: "keyword", Type: tools.String, Description: "words of the file name (empty: every asset)"},
					{Name: "exts", Type: tools.Strings, Description: "only these extensions, like .png or .pdf"},
				},
				// Assets belong to the workspace; one under a notebook's own
				// assets folder is left out while that notebook is hidden.
				Scope: tools.Scope[assetArgs]{Global: true},
				Run:   searchAssets,
			}.Action(),
		},
	}
}

type searchHit struct {
	ID       string `json:"id"`
	RootID   string `json:"rootID"`
	Notebook string `json:"notebook"`
	HPath    string `json:"hpath"`
	Type     string `json:"type"`
	SubType  string `json:"subType,omitempty"`
	Content  string `json:"content"`
}

type fulltextArgs struct {
	Query, Method  string
	Page, PageSize int
	Paths          []string
}

func fulltext(ctx context.Context, env *tools.Env, a fulltextArgs) (any, error) {
	q := strings.TrimSpace(a.Query)
	if q == "" {
		return nil, failure.Invalid("argument \"query\" must not be empty")
	}
	if err := checkPaths(ctx, env, a.Paths); err != nil {
		return nil, err
	}
	paths := a.Paths
	if p := tools.PolicyFrom(ctx); len(paths) == 0 && p != nil && p.Hides() {
		// Search only the notebooks the agent may see, so that counts and
		// pages say nothing of the hidden ones.
		nbs, err := env.Kernel.ListNotebooks(ctx)
		if err != nil {
			return nil, err
		}
		for _, n := range nbs {
			if p.Visible(n.ID) {
				paths = append(paths, n.ID)
			}
		}
		if len(paths) == 0 {
			return map[string]any{"blocks": []searchHit{}, "matchedBlockCount": 0, "matchedRootCount": 0, "page": a.Page, "pageCount": 0}, nil
		}
	}
	res, err := env.Kernel.FullTextSearchBlock(ctx, siyuan.FullTextSearchRequest{
		Query: q, Method: searchMethods[a.Method], Page: a.Page, PageSize: a.PageSize, Paths: paths,
	})
	if err != nil {
		return nil, err
	}
	hits := make([]searchHit, 0, len(res.Blocks))
	for _, b := range res.Blocks {
		if !tools.Visible(ctx, b.Box) {
			continue // never shown, whatever the kernel answered
		}
		hits = append(hits, searchHit{b.ID, b.RootID, b.Box, b.HPath, b.Type, b.SubType, b.Content})
	}
	return map[string]any{"blocks": hits, "matchedBlockCount": res.MatchedBlockCount, "matchedRootCount": res.MatchedRootCount,
		"page": a.Page, "pageCount": res.PageCount,
		"hint": "content marks matches with <mark>; the index lags writes by a few seconds"}, nil
}

type sqlArgs struct {
	Stmt    string
	MaxRows int
}

func querySQL(ctx context.Context, env *tools.Env, a sqlArgs) (any, error) {
	if p := tools.PolicyFrom(ctx); p != nil && p.Hides() {
		e := failure.New(failure.PermissionDenied, "query_sql is refused while a notebook is hidden from agents (permission none): raw SQL cannot be filtered by notebook; nothing was run")
		e.Action = "use search.fulltext, document or block reads instead"
		return nil, e
	}
	stmt := a.Stmt
	max := a.MaxRows
	// Ask for one row more than allowed to know whether the answer was cut;
	// the outer LIMIT also stops SiYuan from injecting its default of 64.
	wrapped := "SELECT * FROM (" + stmt + "\n) LIMIT " + strconv.Itoa(max+1)
	rows, err := env.Kernel.QuerySQL(ctx, wrapped)
	if err != nil {
		return nil, err
	}
	truncated := len(rows) > max
	if truncated {
		rows = rows[:max]
	}
	if rows == nil {
		rows = []map[string]any{}
	}
	ret := map[string]any{"rows": rows, "rowCount": len(rows), "truncated": truncated, "maxRows": max}
	if truncated {
		ret["hint"] = "more rows exist: narrow the query, add ORDER BY with a LIMIT/OFFSET, or raise maxRows (≤1000)"
	}
	return ret, nil
}

// checkPaths refuses a paths filter that names no notebook or document:
// the kernel drops such a filter silently and searches the whole
// workspace, and a filter that cannot be applied must never widen a search.
func checkPaths(ctx context.Context, env *tools.Env, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	nbs, err := env.Kernel.ListNotebooks(ctx)
	if err != nil {
		return err
	}
	known := map[string]bool{}
	for _, n := range nbs {
		known[n.ID] = true
	}
	for i, p := range paths {
		nb, storage, _ := strings.Cut(p, "/")
		refuse := func(why string) error {
			e := failure.New(failure.NotFound, "paths[%d] %q %s; nothing was searched (a filter that cannot be applied is refused, never widened)", i, p, why)
			e.Action = "pass \"<notebook id>\" or \"<notebook id>/<storage path>\" (document.lookup shows both)"
			return e
		}
		if tools.CheckID("paths", nb) != nil || !known[nb] {
			return refuse("names no notebook")
		}
		if storage == "" {
			continue
		}
		id := strings.TrimSuffix(path.Base(storage), ".sy")
		if tools.CheckID("paths", id) != nil || !strings.HasSuffix(storage, ".sy") {
			return refuse("is not <notebook id>/<storage path of a document>")
		}
		where, err := env.Kernel.GetPathByID(ctx, id)
		if err != nil {
			if ok, cerr := env.Kernel.CheckBlockExist(ctx, id); cerr == nil && !ok {
				return refuse("names no document")
			}
			return err
		}
		if where.Notebook != nb || where.Path != "/"+strings.TrimPrefix(storage, "/") {
			return refuse("names no document at that storage path")
		}
	}
	return nil
}

type assetArgs struct {
	Keyword string
	Exts    []string
}

func searchAssets(ctx context.Context, env *tools.Env, a assetArgs) (any, error) {
	exts := make([]string, 0, len(a.Exts))
	for _, e := range a.Exts {
		e = strings.ToLower(strings.TrimSpace(e))
		if e == "" {
			continue
		}
		if !strings.HasPrefix(e, ".") {
			e = "." + e
		}
		exts = append(exts, e)
	}
	hits, err := env.Kernel.SearchAsset(ctx, strings.TrimSpace(a.Keyword), exts)
	if err != nil {
		return nil, err
	}
	p := tools.PolicyFrom(ctx)
	out := hits[:0]
	for _, h := range hits {
		box, _, _ := strings.Cut(strings.TrimPrefix(h.Path, "/"), "/")
		if p != nil && tools.CheckID("", box) == nil && !p.Visible(box) {
			continue
		}
		out = append(out, h)
	}
	return map[string]any{"assets": out, "count": len(out)}, nil
}
