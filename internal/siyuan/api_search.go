package siyuan

import "context"

// ListInvalidBlockRefs pages the blocks holding a reference (block ref or
// siyuan://blocks link) to a block that no longer exists, sorted by block
// id; counts cover every such block. Page and pageSize ≤ 0 take the
// kernel's defaults (1 and 32). The kernel walks every document's file, so
// the answer is current, but the blocks themselves come from the lagging
// SQL index. A page past the end is answered with no blocks and zero counts
// (the kernel panics there and answers data null).
func (c *Client) ListInvalidBlockRefs(ctx context.Context, page, pageSize int) (FullTextSearchResult, error) {
	req := struct {
		Page     int `json:"page,omitempty"`
		PageSize int `json:"pageSize,omitempty"`
	}{page, pageSize}
	var res FullTextSearchResult
	if err := c.call(ctx, epListInvalidBlockRefs, kindOf(epListInvalidBlockRefs), req, &res, true); err != nil {
		return FullTextSearchResult{}, err
	}
	if res.Blocks == nil {
		res.Blocks = []SearchBlock{}
	}
	return res, nil
}

// SemanticSearchRequest is /api/search/semanticSearchBlock (SiYuan ≥ 3.7.0):
// the arguments of fullTextSearchBlock without method, orderBy and groupBy.
type SemanticSearchRequest struct {
	Query    string          `json:"query"`
	Page     int             `json:"page,omitempty"`
	PageSize int             `json:"pageSize,omitempty"`
	Paths    []string        `json:"paths,omitempty"`
	Types    map[string]bool `json:"types,omitempty"`
	SubTypes map[string]bool `json:"subTypes,omitempty"`
}

// SemanticSearchBlock ranks blocks by embedding similarity. The kernel
// answers an empty page, not an error, while embeddings are disabled: ask
// EmbeddingStat first to tell "nothing similar" from "cannot search".
func (c *Client) SemanticSearchBlock(ctx context.Context, req SemanticSearchRequest) (FullTextSearchResult, error) {
	if err := need(epSemanticSearchBlock, "query", req.Query); err != nil {
		return FullTextSearchResult{}, err
	}
	var res FullTextSearchResult
	if err := c.invoke(ctx, epSemanticSearchBlock, req, &res); err != nil {
		return FullTextSearchResult{}, err
	}
	if res.Blocks == nil {
		res.Blocks = []SearchBlock{}
	}
	return res, nil
}

// EmbeddingStat is /api/ai/embeddingStat: whether embeddings are enabled
// (a model with an API key is configured) and how far the index got.
type EmbeddingStat struct {
	Total           int  `json:"total"`
	Indexed         int  `json:"indexed"`
	Pending         int  `json:"pending"`
	Failed          int  `json:"failed"`
	IgnoredByLen    int  `json:"ignoredByLen"`
	IgnoredByConfig int  `json:"ignoredByConfig"`
	Enabled         bool `json:"enabled"`
}

// EmbeddingStat reads the embedding index's state (admin only).
func (c *Client) EmbeddingStat(ctx context.Context) (EmbeddingStat, error) {
	var st EmbeddingStat
	err := c.invoke(ctx, epEmbeddingStat, nil, &st)
	return st, err
}

// FindReplaceRequest is /api/search/findReplace. ReplaceTypes says which
// node kinds change: text, docTitle, codeBlock, mathBlock, htmlBlock, code,
// em, strong, kbd, mark, s, sub, sup, u, tag, inlineMath, inlineMemo,
// blockRef, fileAnnotationRef, imgText, imgTitle, imgSrc, aText, aTitle,
// aHref; with none, nothing is replaced. Method 0 keyword (1 is taken as
// 0), 3 regex; 2 (SQL) and GroupBy 1 are refused. Paths, Types and OrderBy
// only matter for the search the kernel runs when IDs is empty.
type FindReplaceRequest struct {
	K            string          `json:"k"`
	R            string          `json:"r"`
	IDs          []string        `json:"ids"`
	Paths        []string        `json:"paths,omitempty"`
	Types        map[string]bool `json:"types,omitempty"`
	Method       int             `json:"method"`
	OrderBy      int             `json:"orderBy"`
	GroupBy      int             `json:"groupBy"`
	ReplaceTypes map[string]bool `json:"replaceTypes,omitempty"`
}

// FindReplace replaces K by R in the blocks IDs: in a non-document block's
// whole subtree (text matches case-insensitively under SiYuan's default
// configuration), in a document's title and tags only (docTitle). It
// answers nothing about what changed: read the blocks back. An empty IDs
// would make the kernel replace in every block the keyword finds across
// the workspace, so it is refused here. Attempted once.
func (c *Client) FindReplace(ctx context.Context, req FindReplaceRequest) error {
	if err := needIDs(epFindReplace, "ids", req.IDs); err != nil {
		return err
	}
	if err := need(epFindReplace, "k", req.K); err != nil {
		return err
	}
	return c.call(ctx, epFindReplace, kindOf(epFindReplace), req, nil, true)
}
