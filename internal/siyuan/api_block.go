package siyuan

import (
	"context"
	"fmt"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
)

func checkDataType(endpoint, dataType string) error {
	if dataType != "markdown" && dataType != "dom" {
		return invalidArg(endpoint, `dataType must be "markdown" or "dom", got %q`, dataType)
	}
	return nil
}

// InsertBlock inserts blocks relative to NextID, PreviousID or ParentID and
// returns the executed transactions; see FirstInsertedID and InsertedIDs.
func (c *Client) InsertBlock(ctx context.Context, req InsertBlockRequest) ([]Transaction, error) {
	if err := checkDataType(endpoint.InsertBlock, req.DataType); err != nil {
		return nil, err
	}
	if req.NextID == "" && req.PreviousID == "" && req.ParentID == "" {
		return nil, invalidArg(endpoint.InsertBlock, "one of nextID, previousID or parentID is required")
	}
	var txs []Transaction
	if err := c.invoke(ctx, endpoint.InsertBlock, req, &txs); err != nil {
		return nil, err
	}
	return txs, nil
}

type parentInsert struct {
	DataType string `json:"dataType"`
	Data     string `json:"data"`
	ParentID string `json:"parentID"`
}

// PrependBlock inserts blocks as the first children of parentID, which must
// be a container (document, list, list item, blockquote, callout, super block).
func (c *Client) PrependBlock(ctx context.Context, dataType, data, parentID string) ([]Transaction, error) {
	return c.parentInsert(ctx, endpoint.PrependBlock, dataType, data, parentID)
}

// AppendBlock inserts blocks as the last children of parentID, which must be
// a container. The kernel reports the operation as action "insert".
func (c *Client) AppendBlock(ctx context.Context, dataType, data, parentID string) ([]Transaction, error) {
	return c.parentInsert(ctx, endpoint.AppendBlock, dataType, data, parentID)
}

func (c *Client) parentInsert(ctx context.Context, ep, dataType, data, parentID string) ([]Transaction, error) {
	if err := checkDataType(ep, dataType); err != nil {
		return nil, err
	}
	if err := need(ep, "parentID", parentID); err != nil {
		return nil, err
	}
	var txs []Transaction
	if err := c.invoke(ctx, ep, parentInsert{dataType, data, parentID}, &txs); err != nil {
		return nil, err
	}
	return txs, nil
}

// UpdateBlock replaces a block's content; only the first top-level block of
// data keeps the ID. On a document ID it replaces the whole body.
func (c *Client) UpdateBlock(ctx context.Context, id, dataType, data string) ([]Transaction, error) {
	if err := checkDataType(endpoint.UpdateBlock, dataType); err != nil {
		return nil, err
	}
	if err := need(endpoint.UpdateBlock, "id", id); err != nil {
		return nil, err
	}
	req := struct {
		DataType string `json:"dataType"`
		Data     string `json:"data"`
		ID       string `json:"id"`
	}{dataType, data, id}
	var txs []Transaction
	if err := c.invoke(ctx, endpoint.UpdateBlock, req, &txs); err != nil {
		return nil, err
	}
	return txs, nil
}

// BlockUpdate is one entry of [Client.BatchUpdateBlock].
type BlockUpdate struct {
	ID       string `json:"id"`
	DataType string `json:"dataType"`
	Data     string `json:"data"`
}

// BatchUpdateBlock replaces several blocks' content in one transaction, as
// UpdateBlock does each (a later entry for the same block wins). The kernel
// checks every entry before it applies any: an unknown block fails the
// whole call ("get block failed: tree not found") with nothing written.
func (c *Client) BatchUpdateBlock(ctx context.Context, blocks []BlockUpdate) ([]Transaction, error) {
	if len(blocks) == 0 {
		return nil, fmt.Errorf("%w: %s needs at least one block", ErrInvalidArgument, endpoint.BatchUpdateBlock)
	}
	for _, b := range blocks {
		if err := checkDataType(endpoint.BatchUpdateBlock, b.DataType); err != nil {
			return nil, err
		}
		if err := need(endpoint.BatchUpdateBlock, "id", b.ID); err != nil {
			return nil, err
		}
	}
	req := struct {
		Blocks []BlockUpdate `json:"blocks"`
	}{blocks}
	var txs []Transaction
	if err := c.invoke(ctx, endpoint.BatchUpdateBlock, req, &txs); err != nil {
		return nil, err
	}
	return txs, nil
}

// BatchInsertBlock inserts several entries, each as InsertBlock would, in
// one call: the kernel checks every entry before it applies any (a bad id,
// a leaf parentID, bad data fail the whole call with nothing written),
// then applies them in order, one transaction each, and answers them in
// that order. An entry whose anchor does not exist inserts nothing and is
// answered with an empty id, as InsertBlock's.
func (c *Client) BatchInsertBlock(ctx context.Context, blocks []InsertBlockRequest) ([]Transaction, error) {
	if len(blocks) == 0 {
		return nil, fmt.Errorf("%w: %s needs at least one block", ErrInvalidArgument, endpoint.BatchInsertBlock)
	}
	for _, b := range blocks {
		if err := checkDataType(endpoint.BatchInsertBlock, b.DataType); err != nil {
			return nil, err
		}
		if b.NextID == "" && b.PreviousID == "" && b.ParentID == "" {
			return nil, invalidArg(endpoint.BatchInsertBlock, "every entry needs one of nextID, previousID or parentID")
		}
	}
	req := struct {
		Blocks []InsertBlockRequest `json:"blocks"`
	}{blocks}
	var txs []Transaction
	if err := c.invoke(ctx, endpoint.BatchInsertBlock, req, &txs); err != nil {
		return nil, err
	}
	return txs, nil
}

// DeleteBlock deletes a block. The kernel queues the deletion without
// waiting for it and answers code 0 even for an unknown ID; verify with
// CheckBlockExist when it matters.
func (c *Client) DeleteBlock(ctx context.Context, id string) ([]Transaction, error) {
	if err := need(endpoint.DeleteBlock, "id", id); err != nil {
		return nil, err
	}
	var txs []Transaction
	if err := c.invoke(ctx, endpoint.DeleteBlock, idArg{id}, &txs); err != nil {
		return nil, err
	}
	return txs, nil
}

// MoveBlock moves a block after previousID or, when previousID is empty,
// into parentID as its first child. previousID may not be a document.
func (c *Client) MoveBlock(ctx context.Context, id, previousID, parentID string) error {
	if err := need(endpoint.MoveBlock, "id", id); err != nil {
		return err
	}
	if previousID == "" && parentID == "" {
		return invalidArg(endpoint.MoveBlock, "previousID or parentID is required")
	}
	req := struct {
		ID         string `json:"id"`
		PreviousID string `json:"previousID,omitempty"`
		ParentID   string `json:"parentID,omitempty"`
	}{id, previousID, parentID}
	return c.invoke(ctx, endpoint.MoveBlock, req, nil)
}

// FoldBlock folds a block (not a document).
func (c *Client) FoldBlock(ctx context.Context, id string) error {
	if err := need(endpoint.FoldBlock, "id", id); err != nil {
		return err
	}
	return c.invoke(ctx, endpoint.FoldBlock, idArg{id}, nil)
}

// UnfoldBlock unfolds a block (not a document).
func (c *Client) UnfoldBlock(ctx context.Context, id string) error {
	if err := need(endpoint.UnfoldBlock, "id", id); err != nil {
		return err
	}
	return c.invoke(ctx, endpoint.UnfoldBlock, idArg{id}, nil)
}

// GetBlockKramdown returns a block's kramdown with its IAL (the whole
// document for a document ID). An unknown ID yields "" without an error.
func (c *Client) GetBlockKramdown(ctx context.Context, id string) (BlockKramdown, error) {
	var k BlockKramdown
	if err := need(endpoint.GetBlockKramdown, "id", id); err != nil {
		return k, err
	}
	err := c.invoke(ctx, endpoint.GetBlockKramdown, idArg{id}, &k)
	return k, err
}

// GetBlockKramdowns returns kramdown by block ID; invalid IDs are skipped.
func (c *Client) GetBlockKramdowns(ctx context.Context, ids []string) (map[string]string, error) {
	if err := needIDs(endpoint.GetBlockKramdowns, "ids", ids); err != nil {
		return nil, err
	}
	m := map[string]string{}
	if err := c.invoke(ctx, endpoint.GetBlockKramdowns, idsArg{ids}, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// GetBlocksIndexes places ids in the document of the first one, loaded
// once: each id's value is the 1-based position of the top-level block
// holding it there (nested blocks share their top-level block's); the
// document itself and ids it does not hold read 0. An unknown first id
// answers an empty map. One document load tells which of several blocks
// share the first one's document, where one lookup per block loads the
// document once each.
func (c *Client) GetBlocksIndexes(ctx context.Context, ids []string) (map[string]int, error) {
	if err := needIDs(endpoint.GetBlocksIndexes, "ids", ids); err != nil {
		return nil, err
	}
	m := map[string]int{}
	if err := c.invoke(ctx, endpoint.GetBlocksIndexes, idsArg{ids}, &m); err != nil {
		return nil, err
	}
	return m, nil
}

type idsArg struct {
	IDs []string `json:"ids"`
}

// GetChildBlocks lists a block's children (for a heading: the blocks under it).
func (c *Client) GetChildBlocks(ctx context.Context, id string) ([]ChildBlock, error) {
	if err := need(endpoint.GetChildBlocks, "id", id); err != nil {
		return nil, err
	}
	children := []ChildBlock{}
	if err := c.invoke(ctx, endpoint.GetChildBlocks, idArg{id}, &children); err != nil {
		return nil, err
	}
	return children, nil
}

// GetBlockDOM returns a block's DOM.
func (c *Client) GetBlockDOM(ctx context.Context, id string) (BlockDOM, error) {
	var d BlockDOM
	if err := need(endpoint.GetBlockDOM, "id", id); err != nil {
		return d, err
	}
	err := c.invoke(ctx, endpoint.GetBlockDOM, idArg{id}, &d)
	return d, err
}

// GetBlockDOMs returns DOM by block ID.
func (c *Client) GetBlockDOMs(ctx context.Context, ids []string) (map[string]string, error) {
	if err := needIDs(endpoint.GetBlockDOMs, "ids", ids); err != nil {
		return nil, err
	}
	m := map[string]string{}
	if err := c.invoke(ctx, endpoint.GetBlockDOMs, idsArg{ids}, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// GetBlockInfo returns where a block lives. The kernel answers code 3 while
// it is still indexing.
func (c *Client) GetBlockInfo(ctx context.Context, id string) (BlockInfo, error) {
	var bi BlockInfo
	if err := need(endpoint.GetBlockInfo, "id", id); err != nil {
		return bi, err
	}
	err := c.invoke(ctx, endpoint.GetBlockInfo, idArg{id}, &bi)
	return bi, err
}

// GetDocInfo returns a document's attributes, reference count and databases.
func (c *Client) GetDocInfo(ctx context.Context, id string) (DocInfo, error) {
	var di DocInfo
	if err := need(endpoint.GetDocInfo, "id", id); err != nil {
		return di, err
	}
	err := c.invoke(ctx, endpoint.GetDocInfo, idArg{id}, &di)
	return di, err
}

// CheckBlockExist reports whether a block exists, from the block tree (it
// does not lag behind writes like the SQL index).
func (c *Client) CheckBlockExist(ctx context.Context, id string) (bool, error) {
	if err := need(endpoint.CheckBlockExist, "id", id); err != nil {
		return false, err
	}
	var ok bool
	err := c.invoke(ctx, endpoint.CheckBlockExist, idArg{id}, &ok)
	return ok, err
}

// SetBlockAttrs sets block attributes. The kernel treats "" as "remove this
// attribute"; custom attributes need the "custom-" prefix.
func (c *Client) SetBlockAttrs(ctx context.Context, id string, attrs map[string]string) error {
	if err := need(endpoint.SetBlockAttrs, "id", id); err != nil {
		return err
	}
	if attrs == nil {
		attrs = map[string]string{} // null would panic the handler into a fake success
	}
	req := struct {
		ID    string            `json:"id"`
		Attrs map[string]string `json:"attrs"`
	}{id, attrs}
	return c.invoke(ctx, endpoint.SetBlockAttrs, req, nil)
}

// GetBlockAttrs returns a block's attributes (id, type, updated, title, ...),
// read from the tree rather than the lagging SQL index. An unknown block
// yields an empty map.
func (c *Client) GetBlockAttrs(ctx context.Context, id string) (map[string]string, error) {
	if err := need(endpoint.GetBlockAttrs, "id", id); err != nil {
		return nil, err
	}
	m := map[string]string{}
	if err := c.invoke(ctx, endpoint.GetBlockAttrs, idArg{id}, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// BatchGetBlockAttrs returns attributes by block ID.
func (c *Client) BatchGetBlockAttrs(ctx context.Context, ids []string) (map[string]map[string]string, error) {
	if err := needIDs(endpoint.BatchGetBlockAttrs, "ids", ids); err != nil {
		return nil, err
	}
	m := map[string]map[string]string{}
	if err := c.invoke(ctx, endpoint.BatchGetBlockAttrs, idsArg{ids}, &m); err != nil {
		return nil, err
	}
	return m, nil
}
