package tools

import (
	"context"
	"regexp"
	"strconv"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

var searchMethods = map[string]int{"keyword": 0, "query": 1, "regex": 3}

func searchTool() *Tool {
	return &Tool{
		Name:        "search",
		Title:       "Search",
		Description: "Search SiYuan: full-text over blocks, or a read-only SQL query over the blocks index (which lags writes by a few seconds).",
		Actions: []*Action{
			{
				Name: "fulltext", Summary: "blocks matching a query, with highlights", Policy: read,
				Params: []Param{
					{Name: "query", Type: String, Description: "what to look for", Required: true},
					{Name: "method", Type: String, Description: "keyword, query (SiYuan query syntax) or regex", Enum: []string{"keyword", "query", "regex"}, Default: "keyword"},
					{Name: "page", Type: Integer, Description: "1-based page", Default: 1, Min: intp(1)},
					{Name: "pageSize", Type: Integer, Description: "results per page", Default: 32, Min: intp(1), Max: intp(128)},
					{Name: "paths", Type: Strings, Description: "limit to notebooks or documents: \"<notebook>\" or \"<notebook>/<storage path>\""},
				},
				Run: fulltext,
			},
			{
				Name: "query_sql", Summary: "one read-only SELECT over SiYuan's SQL index", Policy: read,
				Params: []Param{
					{Name: "stmt", Type: String, Description: "a single SELECT or WITH statement, e.g. SELECT id, content FROM blocks WHERE type='h'", Required: true},
					{Name: "maxRows", Type: Integer, Description: "at most this many rows; truncated says whether more exist", Default: 200, Min: intp(1), Max: intp(1000)},
				},
				Run: querySQL,
			},
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

func fulltext(ctx context.Context, env *Env, a *Args) (any, error) {
	q := strings.TrimSpace(a.String("query"))
	if q == "" {
		return nil, badArg("argument \"query\" must not be empty")
	}
	res, err := env.Kernel.FullTextSearchBlock(ctx, siyuan.FullTextSearchRequest{
		Query: q, Method: searchMethods[a.String("method")], Page: a.Int("page"), PageSize: a.Int("pageSize"), Paths: a.Strings("paths"),
	})
	if err != nil {
		return nil, err
	}
	hits := make([]searchHit, 0, len(res.Blocks))
	for _, b := range res.Blocks {
		hits = append(hits, searchHit{b.ID, b.RootID, b.Box, b.HPath, b.Type, b.SubType, b.Content})
	}
	return map[string]any{"blocks": hits, "matchedBlockCount": res.MatchedBlockCount, "matchedRootCount": res.MatchedRootCount,
		"page": a.Int("page"), "pageCount": res.PageCount,
		"hint": "content marks matches with <mark>; the index lags writes by a few seconds"}, nil
}

var (
	sqlComment = regexp.MustCompile(`(?s)/\*.*?\*/|--[^\n]*`)
	sqlFirst   = regexp.MustCompile(`(?i)^\s*(select|with)\b`)
)

func querySQL(ctx context.Context, env *Env, a *Args) (any, error) {
	stmt := strings.TrimSpace(a.String("stmt"))
	stmt = strings.TrimSpace(strings.TrimSuffix(stmt, ";"))
	bare := sqlComment.ReplaceAllString(stmt, " ")
	if !sqlFirst.MatchString(bare) {
		return nil, badArg("only a single SELECT or WITH statement is allowed")
	}
	if strings.Contains(bare, ";") {
		return nil, badArg("only a single statement is allowed")
	}
	max := a.Int("maxRows")
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
