package search

import (
	"context"
	"html"
	"regexp"
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

func methodParams() []tools.Param {
	return []tools.Param{
		{Name: "method", Type: tools.Integer, Description: "0 keyword (default), 1 SiYuan query syntax, 2 SQL (a SELECT, checked as query_sql checks it), 3 regex", Min: tools.IntP(0), Max: tools.IntP(3)},
		{Name: "methodName", Type: tools.String, Description: "the method by name (wins over method); query is short for query_syntax",
			Enum: []string{"keyword", "query", "query_syntax", "sql", "regex"}},
	}
}

func fulltextParams() []tools.Param {
	ps := []tools.Param{{Name: "query", Type: tools.String, Description: "what to look for", Required: true}}
	ps = append(ps, methodParams()...)
	return append(ps,
		tools.Param{Name: "types", Type: tools.Object, Description: "block types to search, by name or shortcode: {\"heading\":true,\"p\":true} " +
			"(d document, h heading, p paragraph, l list, i listItem, b blockquote, c codeBlock, m mathBlock, t table, s superBlock, html, embed, av database); default: SiYuan's (documents, headings, paragraphs, code, math, tables, HTML, databases)"},
		tools.Param{Name: "typeShortcodes", Type: tools.Strings, Description: "block types as shortcodes, [\"h\",\"p\"], merged with types"},
		tools.Param{Name: "paths", Type: tools.Strings, Description: "limit to notebooks or documents: \"<notebook>\" or \"<notebook>/<storage path>\""},
		tools.Param{Name: "groupBy", Type: tools.Integer, Description: "0 no grouping (default), 1 by document (each hit is a document with its matching blocks as children)", Min: tools.IntP(0), Max: tools.IntP(1)},
		tools.Param{Name: "orderBy", Type: tools.Integer, Description: "0 block type (SiYuan's default), 1/2 created ascending/descending, 3/4 updated ascending/descending, 5 document order (grouped only), 6/7 relevance ascending/descending", Min: tools.IntP(0), Max: tools.IntP(7)},
		tools.Param{Name: "sortBy", Type: tools.String, Description: "the order by name (wins over orderBy)", Enum: []string{"relevance", "date", "updated_desc", "updated_asc", "created_desc", "created_asc", "type"}},
		tools.Param{Name: "page", Type: tools.Integer, Description: "1-based page", Default: 1, Min: tools.IntP(1)},
		tools.Param{Name: "pageSize", Type: tools.Integer, Description: "results per page", Default: 32, Min: tools.IntP(1), Max: tools.IntP(128)},
		tools.IDParam("parentId", "keep only hits whose document or parent block is this one (filters the kernel's page)", false),
		tools.Param{Name: "hasTags", Type: tools.Boolean, Description: "true: only hits with tags; false: only hits without (filters the kernel's page)"},
		tools.Param{Name: "stripHtml", Type: tools.Boolean, Description: "accepted for upstream; every hit carries plainContent (content without its marks) anyway"},
	)
}

type fulltextArgs struct {
	Query          string
	Method         int
	ResolvedMethod bool // methodName was given
	OrderBy        int
	ResolvedSort   bool // sortBy was given
	Types          map[string]bool
	Paths          []string
	GroupBy        int
	Page, PageSize int
	ParentID       string
	HasTags        *bool
}

// resolveMethod reads method and its alias methodName.
func resolveMethod(a *tools.Args) (int, bool) {
	if n := a.String("methodName"); n != "" {
		return methodNames[n], true
	}
	return a.Int("method"), false
}

// resolveTypes merges types and typeShortcodes, shortcodes named in full.
func resolveTypes(a *tools.Args) (map[string]bool, error) {
	obj, codes := a.Object("types"), a.Strings("typeShortcodes")
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

func parseFulltext(a *tools.Args) (fulltextArgs, error) {
	f := fulltextArgs{Query: strings.TrimSpace(a.String("query")), Paths: a.Strings("paths"), GroupBy: a.Int("groupBy"),
		Page: a.Int("page"), PageSize: a.Int("pageSize"), ParentID: a.String("parentId")}
	if f.Query == "" {
		return f, failure.Invalid("argument \"query\" must not be empty")
	}
	f.Method, f.ResolvedMethod = resolveMethod(a)
	if s := a.String("sortBy"); s != "" {
		f.OrderBy, f.ResolvedSort = sortNames[s], true
	} else {
		f.OrderBy = a.Int("orderBy")
	}
	if f.OrderBy == 5 && f.GroupBy != 1 {
		return f, failure.Invalid("orderBy 5 (document order) needs groupBy 1")
	}
	if f.ParentID != "" {
		if err := tools.CheckID("parentId", f.ParentID); err != nil {
			return f, err
		}
	}
	if a.Has("hasTags") {
		b := a.Bool("hasTags")
		f.HasTags = &b
	}
	var err error
	if f.Types, err = resolveTypes(a); err != nil {
		return f, err
	}
	if f.Method == 2 {
		if f.Query, err = checkSQL(f.Query); err != nil {
			return f, err
		}
	}
	return f, nil
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
	return ret, nil
}

// cutNotebook splits "<notebook>/<storage path>".
func cutNotebook(p string) (string, string, bool) { return strings.Cut(p, "/") }

func fulltextAction() *tools.Action {
	return tools.Read[fulltextArgs]{
		Name: "fulltext", Summary: "blocks matching a query, with highlights; filter by type, notebook or document, group by document, sort",
		Example: map[string]any{"query": "quarterly plan", "methodName": "keyword", "typeShortcodes": []string{"h", "p"}, "sortBy": "updated_desc", "pageSize": 10},
		Params:  fulltextParams(),
		Parse:   parseFulltext,
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
