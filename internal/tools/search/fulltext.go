package search

import (
	"context"
	"fmt"
	"html"
	"regexp"
	"strconv"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// Upstream's names for the kernel's search methods and orders.
var (
	methodNames = map[string]int{"keyword": 0, "query": 1, "query_syntax": 1, "sql": 2, "regex": 3}
	methodOf    = map[int]string{0: "keyword", 1: "query_syntax", 2: "sql", 3: "regex"}
	sortNames   = map[string]int{"relevance": 7, "date": 4, "updated_desc": 4, "updated_asc": 3,
		"created_desc": 2, "created_asc": 1, "type": 0}
	sortOf = map[int]string{7: "relevance", 4: "updated_desc", 3: "updated_asc", 2: "created_desc", 1: "created_asc", 0: "type"}
	// typeCodes are upstream's block type shortcodes.
	typeCodes = map[string]string{"d": "document", "h": "heading", "p": "paragraph", "l": "list", "i": "listItem",
		"b": "blockquote", "c": "codeBlock", "m": "mathBlock", "t": "table", "s": "superBlock", "html": "htmlBlock",
		"embed": "embedBlock", "av": "databaseBlock", "video": "video", "audio": "audio", "widget": "widget"}
)

// methodArgs are the kernel's search method, by number or by name.
type methodArgs struct {
	Method     int    `arg:"method" help:"0 keyword (default), 1 SiYuan query syntax, 2 SQL (a SELECT, checked as query_sql checks it), 3 regex" min:"0" max:"3"`
	MethodName string `arg:"methodName" help:"the method by name (wins over method); query is short for query_syntax" enum:"keyword,query,query_syntax,sql,regex"`
}

// resolve is the method asked, and whether it was named.
func (m methodArgs) resolve() (int, bool) {
	if m.MethodName != "" {
		return methodNames[m.MethodName], true
	}
	return m.Method, false
}

// blockSort is an order of block hits by name, as upstream names them.
type blockSort string

func (blockSort) ArgEnum() []string {
	return []string{"relevance", "date", "updated_desc", "updated_asc", "created_desc", "created_asc", "type"}
}

type fulltextArgs struct {
	Query string `arg:"query" help:"what to look for" required:""`
	methodArgs
	GivenTypes map[string]any `arg:"types" help:"block types to search, by name or shortcode: {\"heading\":true,\"p\":true} (d document, h heading, p paragraph, l list, i listItem, b blockquote, c codeBlock, m mathBlock, t table, s superBlock, html, embed, av database); default: SiYuan's (documents, headings, paragraphs, code, math, tables, HTML, databases)"`
	Shortcodes []string       `arg:"typeShortcodes" help:"block types as shortcodes, [\"h\",\"p\"], merged with types"`
	Paths      []string       `arg:"paths" help:"limit to notebooks or documents: \"<notebook>\" or \"<notebook>/<storage path>\""`
	GroupBy    int            `arg:"groupBy" help:"0 no grouping (default), 1 by document (each hit is a document with its matching blocks as children)" min:"0" max:"1"`
	OrderBy    int            `arg:"orderBy" help:"0 block type (SiYuan's default), 1/2 created ascending/descending, 3/4 updated ascending/descending, 5 document order (grouped only), 6/7 relevance ascending/descending" min:"0" max:"7"`
	SortBy     blockSort      `arg:"sortBy" help:"the order by name (wins over orderBy)"`
	Page       int            `arg:"page" help:"1-based page" default:"1" min:"1"`
	PageSize   int            `arg:"pageSize" help:"results per page" default:"32" min:"1" max:"128"`
	ParentID   string         `arg:"parentId" help:"keep only hits whose document or parent block is this one (filters the kernel's page)" id:""`
	HasTags    *bool          `arg:"hasTags" help:"true: only hits with tags; false: only hits without (filters the kernel's page)"`
	StripHTML  bool           `arg:"stripHtml" help:"accepted for upstream; every hit carries plainContent (content without its marks) anyway"`
	// Method as resolved, the sort, and the types asked.
	ResolvedMethod bool // methodName was given
	ResolvedSort   bool // sortBy was given
	Types          map[string]bool
}

// resolveTypes merges types and typeShortcodes, shortcodes named in full.
func resolveTypes(obj map[string]any, codes []string) (map[string]bool, error) {
	if obj == nil && len(codes) == 0 {
		return nil, nil
	}
	types := map[string]bool{}
	for _, c := range codes {
		name, ok := typeCodes[c]
		if !ok {
			return nil, failure.Invalid("typeShortcodes: %q is no block type shortcode (d, h, p, l, i, b, c, m, t, s, html, embed, av, video, audio, widget)", c)
		}
		types[name] = true
	}
	for k, v := range obj {
		b, ok := v.(bool)
		if !ok {
			return nil, failure.Invalid("types: %q must map to true or false", k)
		}
		if name, ok := typeCodes[k]; ok {
			k = name
		}
		types[k] = b
	}
	return types, nil
}

func parseFulltext(f *fulltextArgs) error {
	f.Query = strings.TrimSpace(f.Query)
	if f.Query == "" {
		return failure.Invalid("argument \"query\" must not be empty")
	}
	f.Method, f.ResolvedMethod = f.resolve()
	if f.SortBy != "" {
		f.OrderBy, f.ResolvedSort = sortNames[string(f.SortBy)], true
	}
	if f.OrderBy == 5 && f.GroupBy != 1 {
		return failure.Invalid("orderBy 5 (document order) needs groupBy 1")
	}
	var err error
	if f.Types, err = resolveTypes(f.GivenTypes, f.Shortcodes); err != nil {
		return err
	}
	if f.Method == 2 {
		if f.Query, err = checkSQL(f.Query); err != nil {
			return err
		}
	}
	return nil
}

type searchHit struct {
	ID           string      `json:"id"`
	RootID       string      `json:"rootID"`
	ParentID     string      `json:"parentID,omitempty"`
	Notebook     string      `json:"notebook"`
	HPath        string      `json:"hpath"`
	Type         string      `json:"type"`
	SubType      string      `json:"subType,omitempty"`
	Content      string      `json:"content"`
	PlainContent string      `json:"plainContent"`
	Name         string      `json:"name,omitempty"`
	Alias        string      `json:"alias,omitempty"`
	Tag          string      `json:"tag,omitempty"`
	Children     []searchHit `json:"children,omitempty"`
}

var markupRE = regexp.MustCompile(`<[^>]*>`)

// plain is content without SiYuan's marks and escapes.
func plain(s string) string { return html.UnescapeString(markupRE.ReplaceAllString(s, "")) }

func hitOf(b siyuan.Block) searchHit {
	h := searchHit{ID: b.ID, RootID: b.RootID, ParentID: b.ParentID, Notebook: b.Box, HPath: b.HPath, Type: b.Type, SubType: b.SubType,
		Content: b.Content, PlainContent: plain(b.Content), Name: b.Name, Alias: b.Alias, Tag: b.Tag}
	seen := map[string]bool{}
	for _, c := range b.Children {
		if seen[c.ID] {
			continue // a grouped document's block twice: see the dedup in fulltext
		}
		seen[c.ID] = true
		h.Children = append(h.Children, hitOf(*c))
	}
	return h
}

// visiblePaths returns the paths to search: those given, or, while a
// notebook is hidden, every visible notebook (so that counts and pages say
// nothing of hidden ones). ok is false when nothing may be searched.
func visiblePaths(ctx context.Context, env *tools.Env, paths []string) ([]string, bool, error) {
	if err := checkPaths(ctx, env, paths); err != nil {
		return nil, false, err
	}
	p := tools.PolicyFrom(ctx)
	if len(paths) > 0 || p == nil || !p.Hides() {
		return paths, true, nil
	}
	nbs, err := env.Kernel.ListNotebooks(ctx)
	if err != nil {
		return nil, false, err
	}
	for _, n := range nbs {
		if p.Visible(n.ID) {
			paths = append(paths, n.ID)
		}
	}
	return paths, len(paths) > 0, nil
}

func fulltext(ctx context.Context, env *tools.Env, a fulltextArgs) (any, error) {
	if a.Method == 2 {
		if p := tools.PolicyFrom(ctx); p != nil && p.Hides() {
			e := failure.New(failure.PermissionDenied, "method 2 (SQL) is refused while a notebook is hidden from agents (permission none): raw SQL cannot be filtered by notebook; nothing was run")
			e.Action = "use method 0 (keyword), 1 (query syntax) or 3 (regex)"
			return nil, e
		}
	}
	paths, ok, err := visiblePaths(ctx, env, a.Paths)
	if err != nil {
		return nil, err
	}
	ret := map[string]any{"page": a.Page, "pageSize": a.PageSize}
	if a.ResolvedMethod || a.ResolvedSort {
		ret["resolvedArgs"] = map[string]any{"method": a.Method, "methodName": methodOf[a.Method], "orderBy": a.OrderBy, "sortBy": sortOf[a.OrderBy]}
	}
	if !ok {
		for k, v := range map[string]any{"blocks": []searchHit{}, "matchedBlockCount": 0, "matchedRootCount": 0, "pageCount": 0, "hasNextPage": false} {
			ret[k] = v
		}
		return ret, nil
	}
	size := a.PageSize
	if a.ParentID != "" {
		// The subtree filter drops hits from the kernel's page: ask for
		// more so that a page still holds enough (upstream's rule).
		size = min(size*3, 128)
	}
	res, err := env.Kernel.FullTextSearchBlock(ctx, siyuan.FullTextSearchRequest{
		Query: a.Query, Method: a.Method, Page: a.Page, PageSize: size, Paths: paths,
		Types: a.Types, OrderBy: a.OrderBy, GroupBy: a.GroupBy,
	})
	if err != nil {
		return nil, err
	}
	hits := make([]searchHit, 0, len(res.Blocks))
	filtered, dups := 0, 0
	seen := map[string]bool{}
	for _, b := range res.Blocks {
		switch {
		case seen[b.ID]:
			// Real SiYuan's index briefly holds a new document's rows
			// twice; a block is shown once.
			dups++
			continue
		case !tools.Visible(ctx, b.Box):
			filtered++ // never shown, whatever the kernel answered
			continue
		case a.ParentID != "" && b.RootID != a.ParentID && b.ParentID != a.ParentID:
			continue
		case a.HasTags != nil && (strings.TrimSpace(b.Tag) != "") != *a.HasTags:
			continue
		}
		seen[b.ID] = true
		hits = append(hits, hitOf(b))
	}
	ret["blocks"] = hits
	if dups > 0 {
		ret["duplicatesDropped"] = dups
	}
	ret["returnedCount"] = len(hits)
	ret["kernelMatchedBlockCount"], ret["kernelMatchedRootCount"], ret["kernelPageCount"] = res.MatchedBlockCount, res.MatchedRootCount, res.PageCount
	if a.ParentID != "" || a.HasTags != nil || filtered > 0 {
		// Counts of what was filtered out of the page are unknown.
		ret["matchedBlockCount"], ret["pageCount"], ret["hasNextPage"] = len(hits), 1, false
		ret["paginationMode"] = "post_filtered_window"
		ret["pagingHint"] = "parentId and hasTags filter the kernel's page; kernel* fields describe that page before filtering (kernelPageCount pages remain to read)"
		if a.ParentID != "" {
			ret["parentIdFilter"] = a.ParentID
		}
	} else {
		ret["matchedBlockCount"], ret["matchedRootCount"], ret["pageCount"], ret["hasNextPage"] =
			res.MatchedBlockCount, res.MatchedRootCount, res.PageCount, a.Page < res.PageCount
	}
	ret["hint"] = "content marks matches with <mark>; plainContent is the same without marks; the index lags writes by a few seconds"
	coverFulltext(ctx, ret, a, a.Page < res.PageCount)
	return ret, nil
}

// coverFulltext says what a page of hits leaves out: the pages after it
// (with the call that reads the next one), and, while a notebook is hidden,
// that hidden notebooks were not searched (said whether or not they hold a
// match, so that it tells nothing of them).
func coverFulltext(ctx context.Context, ret map[string]any, a fulltextArgs, more bool) {
	info := tools.ReadInfo{Scope: "full-text search for " + strconv.Quote(a.Query), Representation: "block hits"}
	var steps []tools.NextStep
	if more {
		info.Limitations = append(info.Limitations, fmt.Sprintf("page %d only; the kernel has more pages of hits", a.Page))
		next := map[string]any{"action": "fulltext", "query": a.Query, "method": a.Method, "orderBy": a.OrderBy,
			"groupBy": a.GroupBy, "page": a.Page + 1, "pageSize": a.PageSize}
		if len(a.Paths) > 0 {
			next["paths"] = a.Paths
		}
		if a.Types != nil {
			next["types"] = a.Types
		}
		if a.ParentID != "" {
			next["parentId"] = a.ParentID
		}
		if a.HasTags != nil {
			next["hasTags"] = *a.HasTags
		}
		steps = append(steps, tools.NextStep{Purpose: "read the next page of hits", Tool: "search", Arguments: next})
	}
	if p := tools.PolicyFrom(ctx); p != nil && p.Hides() {
		info.Limitations = append(info.Limitations, "notebooks hidden from agents were not searched")
	}
	tools.Cover(ctx, ret, info, steps...)
}

// cutNotebook splits "<notebook>/<storage path>".
func cutNotebook(p string) (string, string, bool) { return strings.Cut(p, "/") }

func fulltextAction() *tools.Action {
	return tools.Read[fulltextArgs]{
		Name: "fulltext", Summary: "blocks matching a query, with highlights; filter by type, notebook or document, group by document, sort",
		Example:  map[string]any{"query": "quarterly plan", "methodName": "keyword", "typeShortcodes": []string{"h", "p"}, "sortBy": "updated_desc", "pageSize": 10},
		Validate: parseFulltext,
		Scope: tools.Scope[fulltextArgs]{Touches: func(a fulltextArgs) []tools.Touch {
			ts := pathTouches(a.Paths)
			if a.ParentID != "" {
				ts = append(ts, tools.OnBlock(a.ParentID, tools.LevelRead))
			}
			return ts
		}},
		Run: fulltext,
	}.Action()
}
