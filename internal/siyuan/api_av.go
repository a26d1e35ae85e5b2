package siyuan

import (
	"context"
	"encoding/json"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
)

// Databases (attribute views). A database lives in
// data/storage/av/<avID>.json and is shown in documents by database blocks
// (NodeAttributeView, SQL type "av") whose block ID is not the avID;
// several blocks may show one database (mirrors). Its rows are items: an
// item ID names a row, which is bound to a block of a document
// (Block.ID in its primary-key value) or detached (a primary-key text
// only). Cells are values: Value.BlockID is the item ID, not a block.
//
// There is no endpoint that creates a database: insert a database block
// with [DatabaseBlockDOM] (a transaction insert, as SiYuan's editor does),
// then [Client.RenderAttributeViewOrCreate] writes the file with a table
// view, a primary key and a select key. Columns, rows and cells are then
// changed with the /api/transactions operations of the operations of api_av_ops.go ([InsertAttrViewBlockOp] and the others) (what the
// editor and upstream Sisyphus send) or the simpler /api/av/* calls
// below; both report failures inside the kernel's transaction queue only
// on its websocket, so read the database back to know a change happened.

// RenderAVRequest is /api/av/renderAttributeView. BlockID names the
// database block (its view, custom-sy-av-view, is rendered when ViewID is
// empty). Page starts at 1; PageSize < 1 uses the view's (50 by default);
// the answer's view.pageSize is always the view's own. Query keeps the
// rows one of whose cells contains every word, case-insensitively.
// IgnoreRows answers the columns only.
type RenderAVRequest struct {
	ID         string `json:"id"`
	BlockID    string `json:"blockID,omitempty"`
	ViewID     string `json:"viewID,omitempty"`
	Page       int    `json:"page,omitempty"`
	PageSize   int    `json:"pageSize,omitempty"`
	Query      string `json:"query,omitempty"`
	IgnoreRows bool   `json:"ignoreRows,omitempty"`
	// GroupPaging pages a grouped view's groups one by one: group ID to
	// {page, pageSize}.
	GroupPaging map[string]any `json:"groupPaging,omitempty"`
}

type renderAVWire struct {
	RenderAVRequest
	CreateIfNotExist bool `json:"createIfNotExist"`
}

// RenderAttributeView renders a view of a database: its columns and a page
// of rows, each with a cell per column (an empty value of the column's
// type where the row has none), relation contents, rollups and templates
// computed. A database that does not exist is code -1 "attribute view not
// found"; a malformed ID "invalid id". Rendering a view by ID makes it the
// database's current view. It is a read (createIfNotExist is sent false).
func (c *Client) RenderAttributeView(ctx context.Context, req RenderAVRequest) (AVRender, error) {
	return c.renderAV(ctx, req, false)
}

// RenderAttributeViewOrCreate is RenderAttributeView that first creates a
// database that does not exist (SiYuan's default): any well-formed ID
// becomes a database file, whether or not a block shows it. It is a write,
// attempted once.
func (c *Client) RenderAttributeViewOrCreate(ctx context.Context, req RenderAVRequest) (AVRender, error) {
	return c.renderAV(ctx, req, true)
}

func (c *Client) renderAV(ctx context.Context, req RenderAVRequest, create bool) (AVRender, error) {
	var out AVRender
	if err := need(endpoint.RenderAV, "id", req.ID); err != nil {
		return out, err
	}
	kind := Read
	if create {
		kind = Write
	}
	err := c.call(ctx, endpoint.RenderAV, kind, renderAVWire{req, create}, &out, false)
	return out, err
}

// GetAttributeView returns a database as stored (nil, without an error,
// when there is none or the ID is malformed).
func (c *Client) GetAttributeView(ctx context.Context, avID string) (*AttributeView, error) {
	if err := need(endpoint.GetAV, "id", avID); err != nil {
		return nil, err
	}
	var out struct {
		AV *AttributeView `json:"av"`
	}
	if err := c.invoke(ctx, endpoint.GetAV, idArg{avID}, &out); err != nil {
		return nil, err
	}
	return out.AV, nil
}

// AttributeViewShape returns a database's keys and views without its
// cells (each of KeyValues holds only its Key; NewItemTemplates are
// left out too). It reads the database's file, which SiYuan writes
// before it answers the change that made it, so it is as fresh as
// getAttributeView, at a fraction of its cost on a large database: the
// kernel sends the file as it is instead of decoding and re-encoding
// every cell (10,000 rows on SiYuan 3.7.3: 55 ms against 400 ms). A file
// that does not give the database (an encrypted notebook's database,
// which lives elsewhere; one caught while being written; a missing file)
// is read through getAttributeView instead, nil when there is none.
// (SiYuan itself prefers that file too, except for a database it already
// found in an encrypted notebook: a stale copy at the shared place would
// then be read here, and a strict write's readback would not find its
// change: readback_mismatch, never a silent success.)
func (c *Client) AttributeViewShape(ctx context.Context, avID string) (*AttributeView, error) {
	if err := need(endpoint.GetAV, "id", avID); err != nil {
		return nil, err
	}
	if !isNodeID(avID) { // never a path of its own making
		return c.GetAttributeView(ctx, avID)
	}
	if av, ok := c.avShapeFromFile(ctx, avID); ok {
		return av, nil
	}
	full, err := c.GetAttributeView(ctx, avID)
	if full == nil || err != nil {
		return full, err
	}
	shape := *full
	shape.NewItemTemplates, shape.DefaultTemplateID = nil, ""
	shape.KeyValues = make([]*AVKeyValues, 0, len(full.KeyValues))
	for _, kv := range full.KeyValues {
		if kv != nil {
			shape.KeyValues = append(shape.KeyValues, &AVKeyValues{Key: kv.Key})
		}
	}
	return &shape, nil
}

// avShapeFromFile decodes the keys and views of the database file; ok is
// false for anything but a whole database of that ID.
func (c *Client) avShapeFromFile(ctx context.Context, avID string) (*AttributeView, bool) {
	body, _, err := c.GetFile(ctx, "/data/storage/av/"+avID+".json")
	if err != nil {
		return nil, false
	}
	defer body.Close()
	var file struct {
		Spec      int    `json:"spec"`
		ID        string `json:"id"`
		Name      string `json:"name"`
		KeyValues []struct {
			Key *AVKey `json:"key"`
		} `json:"keyValues"`
		KeyIDs []string  `json:"keyIDs"`
		ViewID string    `json:"viewID"`
		Views  []*AVView `json:"views"`
	}
	if json.NewDecoder(body).Decode(&file) != nil || file.ID != avID {
		return nil, false
	}
	av := &AttributeView{Spec: file.Spec, ID: file.ID, Name: file.Name, KeyIDs: file.KeyIDs, ViewID: file.ViewID, Views: file.Views,
		KeyValues: make([]*AVKeyValues, 0, len(file.KeyValues))}
	for _, kv := range file.KeyValues {
		av.KeyValues = append(av.KeyValues, &AVKeyValues{Key: kv.Key})
	}
	return av, true
}

// GetAttributeViewKeys returns, for each database a block is bound to
// (its custom-avs), the database blocks showing it and the block's row:
// every key with the row's cells (a key without a cell has no values),
// from a render of the database's current view. The kernel saves the
// database's keyIDs as a side effect; the order of the keys is not
// stable on SiYuan until keyIDs were saved once. An unbound or unknown
// block is an empty list.
func (c *Client) GetAttributeViewKeys(ctx context.Context, blockID string) ([]AVBlockKeys, error) {
	if err := need(endpoint.GetAVKeys, "id", blockID); err != nil {
		return nil, err
	}
	return c.avBlockKeys(ctx, idArg{blockID})
}

// GetAttributeViewItemKeys is GetAttributeViewKeys for a row by its item
// ID, bound or detached: only keys with a cell are listed. An unknown
// database or item is an empty list.
func (c *Client) GetAttributeViewItemKeys(ctx context.Context, avID, itemID string) ([]AVBlockKeys, error) {
	if err := need(endpoint.GetAVKeys, "avID", avID, "itemID", itemID); err != nil {
		return nil, err
	}
	return c.avBlockKeys(ctx, struct {
		AvID   string `json:"avID"`
		ItemID string `json:"itemID"`
	}{avID, itemID})
}

func (c *Client) avBlockKeys(ctx context.Context, req any) ([]AVBlockKeys, error) {
	var out []AVBlockKeys
	if err := c.invoke(ctx, endpoint.GetAVKeys, req, &out); err != nil {
		return nil, err
	}
	return out, nil
}

type avIDArg struct {
	AvID string `json:"avID"`
}

// GetAttributeViewKeysByAvID returns a database's keys (columns) in stored
// order, the primary key first; an unknown database is an empty list.
func (c *Client) GetAttributeViewKeysByAvID(ctx context.Context, avID string) ([]AVKey, error) {
	if err := need(endpoint.GetAVKeysByAvID, "avID", avID); err != nil {
		return nil, err
	}
	var out []AVKey
	if err := c.invoke(ctx, endpoint.GetAVKeysByAvID, avIDArg{avID}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// GetAttributeViewFilterSort returns the filters and sorts of the view a
// database block shows (blockID may be "": the current view). Since spec
// 5 the filters are one root group, {combination:"and"} when empty. An
// unknown database answers null for both (here nil slices).
func (c *Client) GetAttributeViewFilterSort(ctx context.Context, avID, blockID string) (AVFilterSort, error) {
	var out AVFilterSort
	if err := need(endpoint.GetAVFilterSort, "id", avID); err != nil {
		return out, err
	}
	req := struct {
		ID      string `json:"id"`
		BlockID string `json:"blockID"`
	}{avID, blockID}
	err := c.invoke(ctx, endpoint.GetAVFilterSort, req, &out)
	return out, err
}

// SearchAttributeView finds databases shown by a database block whose name
// contains every word of keyword, case-insensitively ("" finds all), except
// the excluded IDs: at most 12, best match first (Jaro-Winkler), then the
// most recently written. Each result names a block showing it and lists
// its views as children.
func (c *Client) SearchAttributeView(ctx context.Context, keyword string, excludes []string) ([]AVSearchResult, error) {
	req := struct {
		Keyword  string   `json:"keyword"`
		Excludes []string `json:"excludes,omitempty"`
	}{keyword, excludes}
	var out struct {
		Results []AVSearchResult `json:"results"`
	}
	if err := c.invoke(ctx, endpoint.SearchAV, req, &out); err != nil {
		return nil, err
	}
	if out.Results == nil {
		out.Results = []AVSearchResult{}
	}
	return out.Results, nil
}

// AVPrimaryKeyValuesRequest is /api/av/getAttributeViewPrimaryKeyValues.
// Page starts at 1; PageSize < 1 means 16.
type AVPrimaryKeyValuesRequest struct {
	ID       string `json:"id"`
	Keyword  string `json:"keyword,omitempty"`
	Page     int    `json:"page,omitempty"`
	PageSize int    `json:"pageSize,omitempty"`
}

// GetAttributeViewPrimaryKeyValues returns a database's name ("Untitled"
// when it has none), the blocks showing it and a page of its rows'
// primary-key values (rows bound to a block that is gone are left out)
// whose text contains keyword, most recently changed first. An unknown
// database is code -1 "view not found"; a malformed ID "invalid attribute
// view id".
func (c *Client) GetAttributeViewPrimaryKeyValues(ctx context.Context, req AVPrimaryKeyValuesRequest) (AVPrimaryKeyValues, error) {
	var out AVPrimaryKeyValues
	if err := need(endpoint.GetAVPrimaryKeyValues, "id", req.ID); err != nil {
		return out, err
	}
	err := c.invoke(ctx, endpoint.GetAVPrimaryKeyValues, req, &out)
	return out, err
}

// GetMirrorDatabaseBlocks returns the IDs of the database blocks showing a
// database (in no particular order on SiYuan); none is an empty list.
func (c *Client) GetMirrorDatabaseBlocks(ctx context.Context, avID string) ([]string, error) {
	if err := need(endpoint.GetMirrorDatabaseBlocks, "avID", avID); err != nil {
		return nil, err
	}
	var out struct {
		RefDefs []AVRefDefs `json:"refDefs"`
	}
	if err := c.invoke(ctx, endpoint.GetMirrorDatabaseBlocks, avIDArg{avID}, &out); err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(out.RefDefs))
	for _, r := range out.RefDefs {
		ids = append(ids, r.RefID)
	}
	return ids, nil
}
