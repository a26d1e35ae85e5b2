// Package search is the search tool: full-text and semantic search over
// blocks, the name/alias namespace (knowledge, check_anchor), read-only SQL
// over SiYuan's index, backlinks and ref candidates, invalid references,
// assets by name and by content, and find and replace (a strict write).
package search

import (
	"context"
	"strconv"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// Tool returns the search tool.
func Tool() *tools.Tool {
	return &tools.Tool{
		Name:        "search",
		Title:       "Search",
		Description: "Search SiYuan: full-text or semantic over blocks, exact name/alias anchors (knowledge, check_anchor), a read-only SQL query over the index (which lags writes by a few seconds), backlinks and ref candidates, invalid references, assets by name or content, and find and replace in given blocks.",
		Actions: []*tools.Action{
			fulltextAction(),
			semanticAction(),
			knowledgeAction(),
			checkAnchorAction(),
			tools.Read[sqlArgs]{
				Name: "query_sql", Summary: "one read-only SELECT over SiYuan's SQL index",
				Example: map[string]any{"stmt": "SELECT id, content FROM blocks WHERE type = 'h' ORDER BY updated DESC", "maxRows": 20},
				Validate: func(a *sqlArgs) error {
					raw := a.Stmt
					if q := a.SQL; strings.TrimSpace(q) != "" {
						raw = q
					}
					if strings.TrimSpace(raw) == "" {
						return failure.Invalid("missing argument \"stmt\" (or its alias \"sql\"): the SELECT to run")
					}
					var err error
					a.Stmt, err = checkSQL(raw)
					return err
				},
				// Raw SQL cannot be filtered by notebook: it is refused
				// while any notebook is hidden (querySQL checks).
				Scope: tools.Scope[sqlArgs]{Global: true},
				Run:   querySQL,
			}.Action(),
			tools.Read[assetArgs]{
				Name: "search_assets", Summary: "assets (images, PDFs, ...) whose file name matches a keyword, newest first",
				Example:  map[string]any{"keyword": "diagram", "exts": []string{".png"}},
				Validate: (*assetArgs).resolve,
				// Assets belong to the workspace; one under a notebook's own
				// assets folder is left out while that notebook is hidden.
				Scope: tools.Scope[assetArgs]{Global: true},
				Run:   searchAssets,
			}.Action(),
			backlinksAction(),
			refSearchAction(),
			assetContentAction(),
			listInvalidRefsAction(),
			findReplaceAction(),
		},
	}
}

type sqlArgs struct {
	Stmt    string `arg:"stmt" help:"a single SELECT or WITH statement, e.g. SELECT id, content FROM blocks WHERE type='h'. SiYuan cannot interrupt a query, so what can run without bound is refused: recursive WITH; joins other than JOIN t ON t.id = x.col (or t.col = x.id, or USING (id)); subqueries naming an outer table unless their WHERE ties them to it by an id; randomblob, zeroblob, printf, format"`
	SQL     string `arg:"sql" help:"upstream's name for stmt (wins when both are given)"`
	MaxRows int    `arg:"maxRows" help:"at most this many rows; truncated says whether more exist" default:"200" min:"1" max:"1000"`
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
		info := tools.ReadInfo{Scope: "SQL query", Representation: "rows",
			Limitations: []string{"only the first " + strconv.Itoa(max) + " rows were returned (maxRows); more exist"}}
		var steps []tools.NextStep
		if max < 1000 {
			steps = append(steps, tools.NextStep{Purpose: "return more rows of the same query", Tool: "search",
				Arguments: map[string]any{"action": "query_sql", "stmt": stmt, "maxRows": 1000}})
		}
		tools.Cover(ctx, ret, info, steps...)
		return ret, nil
	}
	tools.Cover(ctx, ret, tools.ReadInfo{Scope: "SQL query", Representation: "rows"})
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
		id := siyuan.DocIDOfPath(storage)
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

// assetArgs name the keyword as keyword, or as upstream 0.6.8's query or
// its legacy k. Upstream lets query override k; here names that disagree
// are refused, so that a stale k never searches silently for the wrong
// thing.
type assetArgs struct {
	Keyword string   `arg:"keyword" help:"the keyword (search_assets: words of the file name, empty for every asset; query and k are its aliases: give one, or several that agree)"`
	Query   string   `arg:"query" help:"alias of keyword (upstream's name); refused when it differs from keyword or k (upstream lets query override k)"`
	K       string   `arg:"k" help:"the keyword (for search_assets upstream's legacy name of keyword: refused when it differs from keyword or query)"`
	Exts    []string `arg:"exts" help:"only these extensions, like .png or .pdf"`
}

// resolve settles the keyword from its three names.
func (a *assetArgs) resolve() error {
	given := ""
	for _, n := range []struct{ name, v string }{{"keyword", a.Keyword}, {"query", a.Query}, {"k", a.K}} {
		switch {
		case n.v == "":
		case given == "":
			given = n.v
		case n.v != given:
			return failure.Invalid("keyword, query and k are one argument under three names, and they differ (%s is %q, not %q); pass one of them", n.name, n.v, given)
		}
	}
	a.Keyword = given
	return nil
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
