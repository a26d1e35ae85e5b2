package fs

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/kernelview"
)

// searchArgs are fs.search's arguments.
type searchArgs struct {
	RawPath       string `arg:"path" help:"/ (every notebook you may see, and the virtual files), /<notebook>, a document path (it and its descendants) or a virtual file" required:""`
	Query         string `arg:"query" help:"the text to find in a line, or with regex:true a regular expression (RE2 syntax)" required:""`
	Regex         bool   `arg:"regex" help:"query is a regular expression" default:"false"`
	CaseSensitive bool   `arg:"caseSensitive" help:"match case exactly" default:"false"`
	tools.Paging
	Path  humanPath
	match func(string) bool
}

// Bounds of one search: it reads each document whole (exportMdContent), so
// it stops at maxSearchDocs documents and maxSearchLists directory listings,
// well inside one read's budget of kernel calls, and says so (truncated).
const (
	maxSearchDocs   = 64
	maxSearchLists  = 32
	maxQueryBytes   = 1024
	maxMatchRunes   = 200
	searchLanes     = 4
	truncatedSuffix = "..."
)

// matcher builds the line test: a substring, or an RE2 regular expression
// (Go's syntax: no look-around or backreferences).
func matcher(query string, regex, caseSensitive bool) (func(string) bool, error) {
	if regex {
		expr := query
		if !caseSensitive {
			expr = "(?i)" + expr
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			return nil, failure.Invalid("query is not a valid regular expression (RE2 syntax; no look-around or backreferences): %v", err)
		}
		return re.MatchString, nil
	}
	if caseSensitive {
		return func(line string) bool { return strings.Contains(line, query) }, nil
	}
	q := strings.ToLower(query)
	return func(line string) bool { return strings.Contains(strings.ToLower(line), q) }, nil
}

func (s *searchArgs) parse() (err error) {
	if s.Path, err = parsePath("path", s.RawPath); err != nil {
		return err
	}
	switch {
	case s.Query == "":
		return failure.Invalid("query must not be empty")
	case len(s.Query) > maxQueryBytes:
		return failure.Invalid("query is longer than %d bytes", maxQueryBytes)
	}
	s.match, err = matcher(s.Query, s.Regex, s.CaseSensitive)
	return err
}

// lineMatch is one matching line.
type lineMatch struct {
	Path               string `json:"path"`
	Line               int    `json:"line"`
	Text               string `json:"text"`
	TextTruncated      bool   `json:"textTruncated,omitempty"`
	OriginalTextLength int    `json:"originalTextLength,omitempty"`
}

// matchLines lists the lines of text that match, numbered from 1.
func matchLines(path, text string, match func(string) bool) []lineMatch {
	var out []lineMatch
	for i, line := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		if !match(line) {
			continue
		}
		m := lineMatch{Path: path, Line: i + 1, Text: line}
		if n := utf8.RuneCountInString(line); n > maxMatchRunes {
			m.Text = string([]rune(line)[:maxMatchRunes-len(truncatedSuffix)]) + truncatedSuffix
			m.TextTruncated, m.OriginalTextLength = true, n
		}
		out = append(out, m)
	}
	return out
}

// searchDoc is a document to search and the fs path of its notebook.
type searchDoc struct{ ID, NotebookPath string }

// collector gathers the documents under scopes, within the bounds.
type collector struct {
	docs      []searchDoc
	lists     int
	truncated bool
}

// add adds a document (or notes that the bound is reached).
func (c *collector) add(d searchDoc) bool {
	if len(c.docs) >= maxSearchDocs {
		c.truncated = true
		return false
	}
	c.docs = append(c.docs, d)
	return true
}

// under adds the documents below a storage path, breadth first.
func (c *collector) under(ctx context.Context, env *tools.Env, nb, nbPath, storage string) error {
	queue := []string{storage}
	for len(queue) > 0 {
		if c.lists >= maxSearchLists {
			c.truncated = true
			return nil
		}
		dir := queue[0]
		queue = queue[1:]
		c.lists++
		kids, err := kernelview.ListChildren(ctx, env, nb, dir)
		if err != nil {
			return kernelview.NotebookErr(nb, err)
		}
		for _, k := range kids {
			if !c.add(searchDoc{k.ID, nbPath}) {
				return nil
			}
			if k.SubFileCount > 0 {
				queue = append(queue, k.Path)
			}
		}
	}
	return nil
}

func search(ctx context.Context, env *tools.Env, a searchArgs) (any, error) {
	p := a.Path
	extra := map[string]any{"path": p.Raw, "query": a.Query, "regex": a.Regex, "caseSensitive": a.CaseSensitive}
	var matches []lineMatch
	var c collector
	var skipped []string
	switch {
	case p.Virtual != "":
		text, _, err := readVirtual(ctx, env, p.Virtual)
		if err != nil {
			return nil, err
		}
		extra["virtual"] = true
		matches = matchLines(p.Virtual, text, a.match)
	case p.isRoot():
		for _, v := range []string{memoryFile, rulesFile} {
			text, _, err := readVirtual(ctx, env, v)
			if err != nil {
				return nil, err
			}
			matches = append(matches, matchLines(v, text, a.match)...)
		}
		nbs, err := env.Kernel.ListNotebooks(ctx)
		if err != nil {
			return nil, err
		}
		for _, n := range nbs {
			switch {
			case !tools.Visible(ctx, n.ID) || n.Closed:
				continue // hidden from agents, or nothing to read
			case shadowed(n.Name):
				skipped = append(skipped, n.ID) // its paths would read as the virtual file
				continue
			}
			if err := c.under(ctx, env, n.ID, p.child(n.Name), "/"); err != nil {
				return nil, err
			}
		}
	default:
		s, err := scopeOf(ctx, env, p)
		if err != nil {
			return nil, err
		}
		nbPath := "/" + p.Notebook
		if s.DocID != "" {
			c.add(searchDoc{s.DocID, nbPath})
		}
		if err := c.under(ctx, env, s.Notebook, nbPath, s.Storage); err != nil {
			return nil, err
		}
	}
	found, err := searchDocs(ctx, env, c.docs, a.match)
	if err != nil {
		return nil, err
	}
	matches = dedupe(append(matches, found...))
	if matches == nil {
		matches = []lineMatch{}
	}
	extra["searchedDocuments"] = len(c.docs)
	if c.truncated {
		extra["truncated"] = true
		extra["hint"] = "more documents are under this path than one search reads; search a narrower path"
	}
	if len(skipped) > 0 {
		extra["shadowedNotebooks"] = skipped
	}
	return tools.Paginate(matches, a.Page, a.PageSize).Fields(extra), nil
}

// searchDocs exports each document as Markdown and matches its lines,
// searchLanes at a time; the matches keep the documents' order.
func searchDocs(ctx context.Context, env *tools.Env, docs []searchDoc, match func(string) bool) ([]lineMatch, error) {
	per := make([][]lineMatch, len(docs))
	errs := make([]error, len(docs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, searchLanes)
	ex := kernelview.NewExporter(env)
	for i, d := range docs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			defer failure.Recover(&errs[i])
			md, _, err := ex.Markdown(ctx, d.ID)
			if err != nil {
				errs[i] = err
				return
			}
			per[i] = matchLines(d.NotebookPath+md.HPath, md.Content, match)
		}()
	}
	wg.Wait()
	var out []lineMatch
	for i := range docs {
		if errs[i] != nil {
			return nil, errs[i]
		}
		out = append(out, per[i]...)
	}
	return out, nil
}

// dedupe drops repeated (path, line, text) matches.
func dedupe(ms []lineMatch) []lineMatch {
	seen := map[lineMatch]bool{}
	out := ms[:0]
	for _, m := range ms {
		if !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	return out
}

var searchAction = tools.Read[searchArgs]{
	Name: "search", Summary: "matching lines of the documents under a path (each read as exported Markdown), as {path, line, text}, paged; " +
		"/ also searches the virtual files; at most 64 documents per search",
	Example:  map[string]any{"path": "/Research", "query": "deadline"},
	Validate: (*searchArgs).parse,
	Scope: tools.Scope[searchArgs]{Resolve: func(ctx context.Context, env *tools.Env, a searchArgs) ([]tools.Touch, error) {
		return onPaths(ctx, env, tools.LevelRead, a.Path)
	}},
	Run: search,
}
