package siyuan

import (
	"context"
	"fmt"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
)

// GetBlockBreadcrumb returns the crumbs from a block's document down to
// the block. An unknown id yields an empty list with code 0.
// excludeTypes only changes how crumb names are rendered (inline types).
func (c *Client) GetBlockBreadcrumb(ctx context.Context, id string, excludeTypes []string) ([]BlockPath, error) {
	if err := need(endpoint.GetBlockBreadcrumb, "id", id); err != nil {
		return nil, err
	}
	req := struct {
		ID           string   `json:"id"`
		ExcludeTypes []string `json:"excludeTypes,omitempty"`
	}{id, excludeTypes}
	out := []BlockPath{}
	if err := c.invoke(ctx, endpoint.GetBlockBreadcrumb, req, &out); err != nil {
		return nil, err
	}
	if out == nil {
		out = []BlockPath{}
	}
	return out, nil
}

// GetBlocksWordCount counts the text of blocks (with their descendants).
// Unknown ids are counted in BlockCount but add no text.
func (c *Client) GetBlocksWordCount(ctx context.Context, ids []string) (BlockStat, error) {
	var wc WordCount
	if err := needIDs(endpoint.GetBlocksWordCount, "ids", ids); err != nil {
		return wc.Stat, err
	}
	err := c.invoke(ctx, endpoint.GetBlocksWordCount, idsArg{ids}, &wc)
	return wc.Stat, err
}

// GetRecentUpdatedBlocks lists the most recently updated paragraphs of the
// whole workspace (at most 16, newest first), from the SQL index.
func (c *Client) GetRecentUpdatedBlocks(ctx context.Context) ([]Block, error) {
	out := []Block{}
	if err := c.invoke(ctx, endpoint.GetRecentUpdatedBlocks, struct{}{}, &out); err != nil {
		return nil, err
	}
	if out == nil {
		out = []Block{}
	}
	return out, nil
}

// GetDocsInfo returns the document info of each id's document, in order
// (an id inside a document answers with that document's name and
// attributes). With refCount, RefIDs lists the blocks that reference the
// document or anything in it; with av, AttrViews names its databases. The
// kernel fails the whole call when an id is unknown.
func (c *Client) GetDocsInfo(ctx context.Context, ids []string, refCount, av bool) ([]DocInfo, error) {
	if err := needIDs(endpoint.GetDocsInfo, "ids", ids); err != nil {
		return nil, err
	}
	req := struct {
		IDs      []string `json:"ids"`
		RefCount bool     `json:"refCount"`
		AV       bool     `json:"av"`
	}{ids, refCount, av}
	out := []DocInfo{}
	if err := c.invoke(ctx, endpoint.GetDocsInfo, req, &out); err != nil {
		return nil, err
	}
	if out == nil {
		// The kernel answers a missing argument with code 0 and no data.
		return nil, fmt.Errorf("%s: no document info in the answer", endpoint.GetDocsInfo)
	}
	return out, nil
}

// TransferBlockRef points the block references to fromID at toID instead:
// those inside the blocks refIDs, or every one when refIDs is empty.
// Dynamic anchors take toID's text; static ones keep theirs. An unknown
// toID fails ("block not found"); an unknown fromID or ref block changes
// nothing and still answers code 0.
func (c *Client) TransferBlockRef(ctx context.Context, fromID, toID string, refIDs []string) error {
	if err := need(endpoint.TransferBlockRef, "fromID", fromID, "toID", toID); err != nil {
		return err
	}
	req := struct {
		FromID   string   `json:"fromID"`
		ToID     string   `json:"toID"`
		RefIDs   []string `json:"refIDs,omitempty"`
		ReloadUI bool     `json:"reloadUI"`
	}{fromID, toID, refIDs, false}
	return c.invoke(ctx, endpoint.TransferBlockRef, req, nil)
}

// GetBlockKramdownsMode is GetBlockKramdowns with the export mode: "md"
// (Markdown markers) or "textmark" (inline marks as spans).
func (c *Client) GetBlockKramdownsMode(ctx context.Context, ids []string, mode string) (map[string]string, error) {
	if err := needIDs(endpoint.GetBlockKramdowns, "ids", ids); err != nil {
		return nil, err
	}
	if mode != "md" && mode != "textmark" {
		return nil, invalidArg(endpoint.GetBlockKramdowns, `mode must be "md" or "textmark", got %q`, mode)
	}
	req := struct {
		IDs  []string `json:"ids"`
		Mode string   `json:"mode"`
	}{ids, mode}
	m := map[string]string{}
	if err := c.invoke(ctx, endpoint.GetBlockKramdowns, req, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// SearchDocs finds documents whose human path, name, alias or memo holds
// every word of k (case-insensitive; a document id finds that document),
// and open notebooks whose name holds one: exact title matches first,
// then by human path, at most 64 documents. It reads the SQL index, which
// lags behind writes until flushed.
func (c *Client) SearchDocs(ctx context.Context, k string) ([]DocSearchHit, error) {
	req := struct {
		K string `json:"k"`
	}{k}
	out := []DocSearchHit{}
	if err := c.invoke(ctx, endpoint.SearchDocs, req, &out); err != nil {
		return nil, err
	}
	if out == nil {
		out = []DocSearchHit{}
	}
	return out, nil
}

// GetDoc renders a block (a document: its top-level blocks) as the
// editor's DOM, in mode 0; size > 0 bounds the blocks of a document (the
// kernel's default is 102400). An unknown id fails with code 1 "tree not
// found".
func (c *Client) GetDoc(ctx context.Context, id string, size int) (Doc, error) {
	var d Doc
	if err := need(endpoint.GetDoc, "id", id); err != nil {
		return d, err
	}
	req := struct {
		ID   string `json:"id"`
		Mode int    `json:"mode"`
		Size int    `json:"size,omitempty"`
	}{id, 0, size}
	err := c.invoke(ctx, endpoint.GetDoc, req, &d)
	return d, err
}

// GetDocOutline returns the heading tree of the document holding id (its
// headings anywhere but in blockquotes and callouts), as the editor's
// outline panel shows it (preview: as the preview shows it, the title
// first as a level-1 heading); an unknown id yields an empty outline.
func (c *Client) GetDocOutline(ctx context.Context, id string, preview bool) ([]OutlinePath, error) {
	if err := need(endpoint.GetDocOutline, "id", id); err != nil {
		return nil, err
	}
	req := struct {
		ID      string `json:"id"`
		Preview bool   `json:"preview"`
	}{id, preview}
	out := []OutlinePath{}
	if err := c.invoke(ctx, endpoint.GetDocOutline, req, &out); err != nil {
		return nil, err
	}
	if out == nil {
		out = []OutlinePath{}
	}
	return out, nil
}
