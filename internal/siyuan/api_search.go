package siyuan

import (
	"context"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

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
	if err := c.call(ctx, endpoint.ListInvalidBlockRefs, kindOf(endpoint.ListInvalidBlockRefs), req, &res, true); err != nil {
		return FullTextSearchResult{}, err
	}
	if res.Blocks == nil {
		res.Blocks = []Block{}
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
	if err := need(endpoint.SemanticSearchBlock, "query", req.Query); err != nil {
		return FullTextSearchResult{}, err
	}
	var res FullTextSearchResult
	if err := c.invoke(ctx, endpoint.SemanticSearchBlock, req, &res); err != nil {
		return FullTextSearchResult{}, err
	}
	if res.Blocks == nil {
		res.Blocks = []Block{}
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
	err := c.invoke(ctx, endpoint.EmbeddingStat, nil, &st)
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
	if err := needIDs(endpoint.FindReplace, "ids", req.IDs); err != nil {
		return err
	}
	if err := need(endpoint.FindReplace, "k", req.K); err != nil {
		return err
	}
	return c.call(ctx, endpoint.FindReplace, kindOf(endpoint.FindReplace), req, nil, true)
}

// AssetContentRequest is /api/search/fullTextSearchAssetContent. Method: 0
// keyword, 1 query syntax, 2 SQL (a read-only statement over
// asset_contents_fts_case_insensitive), 3 regex. OrderBy: 0/1 relevance
// descending/ascending, 2/3 updated ascending/descending. Types keeps
// extensions such as ".txt".
type AssetContentRequest struct {
	Query    string          `json:"query"`
	Types    map[string]bool `json:"types,omitempty"`
	Method   int             `json:"method"`
	OrderBy  int             `json:"orderBy"`
	Page     int             `json:"page,omitempty"`
	PageSize int             `json:"pageSize,omitempty"`
}

// AssetContent is one indexed asset (see wire.AssetContent).
type AssetContent = wire.AssetContent

// AssetContentResult is the answer of FullTextSearchAssetContent.
type AssetContentResult struct {
	AssetContents     []AssetContent `json:"assetContents"`
	MatchedAssetCount int            `json:"matchedAssetCount"`
	PageCount         int            `json:"pageCount"`
}

// FullTextSearchAssetContent searches the text SiYuan extracted from the
// files in data/assets (text files at once; the real kernel also parses
// Office, PDF and EPUB files, in the background).
func (c *Client) FullTextSearchAssetContent(ctx context.Context, req AssetContentRequest) (AssetContentResult, error) {
	var res AssetContentResult
	if err := c.invoke(ctx, endpoint.SearchAssetContent, req, &res); err != nil {
		return AssetContentResult{}, err
	}
	if res.AssetContents == nil {
		res.AssetContents = []AssetContent{}
	}
	return res, nil
}

// GetAssetContent reads one indexed asset by the id a search answered,
// its whole text with the query's matches highlighted and newlines as
// <br>; nil when the id is unknown or the query does not match.
func (c *Client) GetAssetContent(ctx context.Context, id, query string, queryMethod int) (*AssetContent, error) {
	req := struct {
		ID          string `json:"id"`
		Query       string `json:"query"`
		QueryMethod int    `json:"queryMethod"`
	}{id, query, queryMethod}
	var res struct {
		AssetContent *AssetContent `json:"assetContent"`
	}
	if err := c.invoke(ctx, endpoint.GetAssetContent, req, &res); err != nil {
		return nil, err
	}
	return res.AssetContent, nil
}

// RefSearchRequest is /api/search/searchRefBlock: the candidates for a
// block ref typed with keyword K in block ID of document RootID. SiYuan
// reads ID, RootID, K and BeforeLen unchecked (a missing one answers only
// reqId), so all are always sent.
type RefSearchRequest struct {
	ID               string `json:"id"`
	RootID           string `json:"rootID"`
	K                string `json:"k"`
	BeforeLen        int    `json:"beforeLen"`
	IsSquareBrackets bool   `json:"isSquareBrackets"`
	IsDatabase       bool   `json:"isDatabase"`
	ReqID            any    `json:"reqId,omitempty"`
}

// RefSearchResult is the answer: the candidate blocks (content with <mark>
// highlights, HPath prefixed with the notebook's name, a document's HPath
// without its own title), RefText the anchor a ref would show, RefCount
// the refs already pointing at each; NewDoc says whether a document named
// K could be created beside the current one; ReqID is echoed.
type RefSearchResult struct {
	Blocks []Block `json:"blocks"`
	NewDoc bool    `json:"newDoc"`
	K      string  `json:"k"`
	ReqID  any     `json:"reqId"`
}

// SearchRefBlock lists block ref candidates: without K the blocks
// referenced most recently (at most 32, the current block included), with
// K the blocks whose text, name, alias or memo hold it (at most 64, names
// and documents first), without the current block, its document and the
// container whose first leaf it is.
func (c *Client) SearchRefBlock(ctx context.Context, req RefSearchRequest) (RefSearchResult, error) {
	if err := need(endpoint.SearchRefBlock, "id", req.ID); err != nil {
		return RefSearchResult{}, err
	}
	var res RefSearchResult
	if err := c.invoke(ctx, endpoint.SearchRefBlock, req, &res); err != nil {
		return RefSearchResult{}, err
	}
	if res.Blocks == nil {
		res.Blocks = []Block{}
	}
	return res, nil
}
