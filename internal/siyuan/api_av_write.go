package siyuan

import (
	"context"
	"slices"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
)

// The /api/av/* writes: simpler forms of the transaction operations of
// the operations of api_av_ops.go ([InsertAttrViewBlockOp] and the others), applied at once (not through the transaction queue). Each is
// attempted once.

// AVSrc is a row to add: a bound block (ID, Detached false) or a detached
// row with its primary-key text (Content, Detached true). ItemID pins the
// new row's item ID (a node ID); without one the kernel makes one up and
// does not say which, so pass one to know the row. Adding a block that is
// already bound binds it again and adds nothing.
type AVSrc struct {
	ItemID   string `json:"itemID,omitempty"`
	ID       string `json:"id,omitempty"`
	Detached bool   `json:"isDetached"`
	Content  string `json:"content,omitempty"`
}

// AddAVBlocksRequest is /api/av/addAttributeViewBlocks. BlockID is the
// database block (its view decides where filters place rows); the rows go
// first in every view, in the order given, or after PreviousID.
type AddAVBlocksRequest struct {
	AvID              string  `json:"avID"`
	BlockID           string  `json:"blockID,omitempty"`
	ViewID            string  `json:"viewID,omitempty"`
	GroupID           string  `json:"groupID,omitempty"`
	PreviousID        string  `json:"previousID,omitempty"`
	Srcs              []AVSrc `json:"srcs"`
	IgnoreDefaultFill bool    `json:"ignoreDefaultFill,omitempty"`
}

// AddAttributeViewBlocks adds rows. An unknown database is code -1 "view
// not found"; a bound block that does not exist fails the call, after
// the rows before it were added.
func (c *Client) AddAttributeViewBlocks(ctx context.Context, req AddAVBlocksRequest) error {
	if err := need(endpoint.AddAVBlocks, "avID", req.AvID); err != nil {
		return err
	}
	if len(req.Srcs) == 0 {
		return invalidArg(endpoint.AddAVBlocks, "srcs must not be empty")
	}
	return c.call(ctx, endpoint.AddAVBlocks, kindOf(endpoint.AddAVBlocks), req, nil, true)
}

// RemoveAttributeViewBlocks removes rows by item ID, with all their cells;
// a bound block keeps its content and loses the binding. Unknown item IDs
// are ignored.
func (c *Client) RemoveAttributeViewBlocks(ctx context.Context, avID string, itemIDs []string) error {
	if err := need(endpoint.RemoveAVBlocks, "avID", avID); err != nil {
		return err
	}
	if err := needIDs(endpoint.RemoveAVBlocks, "srcIDs", itemIDs); err != nil {
		return err
	}
	req := struct {
		AvID   string   `json:"avID"`
		SrcIDs []string `json:"srcIDs"`
	}{avID, itemIDs}
	return c.call(ctx, endpoint.RemoveAVBlocks, kindOf(endpoint.RemoveAVBlocks), req, nil, true)
}

// AddAVKeyRequest is /api/av/addAttributeViewKey. KeyID is the new key's ID
// (the kernel neither checks nor deduplicates it: the same ID twice makes
// two keys). KeyType is one of the AVKey* types but the primary key (an
// unknown type adds nothing, without an error). The column goes after
// PreviousKeyID, or, when it is "", first in table views: before the
// primary key.
type AddAVKeyRequest struct {
	AvID          string `json:"avID"`
	KeyID         string `json:"keyID"`
	KeyName       string `json:"keyName"`
	KeyType       string `json:"keyType"`
	KeyIcon       string `json:"keyIcon"`
	PreviousKeyID string `json:"previousKeyID"`
}

// AddAttributeViewKey adds a key (column). An unknown database is code -1
// "view not found".
func (c *Client) AddAttributeViewKey(ctx context.Context, req AddAVKeyRequest) error {
	if err := need(endpoint.AddAVKey, "avID", req.AvID, "keyID", req.KeyID, "keyType", req.KeyType); err != nil {
		return err
	}
	return c.call(ctx, endpoint.AddAVKey, kindOf(endpoint.AddAVKey), req, nil, true)
}

// RemoveAttributeViewKey removes a key and its cells. Removing one side of
// a two-way relation makes the other one-way, or with removeDest removes
// it too. An unknown key is code -1 "key not found"; the primary key
// "cannot remove primary key field".
func (c *Client) RemoveAttributeViewKey(ctx context.Context, avID, keyID string, removeDest bool) error {
	if err := need(endpoint.RemoveAVKey, "avID", avID, "keyID", keyID); err != nil {
		return err
	}
	req := struct {
		AvID               string `json:"avID"`
		KeyID              string `json:"keyID"`
		RemoveRelationDest bool   `json:"removeRelationDest"`
	}{avID, keyID, removeDest}
	return c.call(ctx, endpoint.RemoveAVKey, kindOf(endpoint.RemoveAVKey), req, nil, true)
}

// SetAttributeViewBlockAttr sets one cell and returns it as stored. The
// value is decoded over the cell, so send only the part of its type
// (e.g. {Number: &AVValueNumber{Content: 7, IsNotEmpty: true}}). A select
// value without options is not stored (the answer is the unsaved cell).
// An unknown key makes SiYuan answer {code:0,data:null} without storing
// anything ([*NullDataError] here).
func (c *Client) SetAttributeViewBlockAttr(ctx context.Context, avID, keyID, itemID string, value *AVValue) (*AVValue, error) {
	if err := need(endpoint.SetAVBlockAttr, "avID", avID, "keyID", keyID, "itemID", itemID); err != nil {
		return nil, err
	}
	if value == nil {
		return nil, invalidArg(endpoint.SetAVBlockAttr, "value must not be nil")
	}
	req := struct {
		AvID   string   `json:"avID"`
		KeyID  string   `json:"keyID"`
		ItemID string   `json:"itemID"`
		Value  *AVValue `json:"value"`
	}{avID, keyID, itemID, value}
	var out struct {
		Value *AVValue `json:"value"`
	}
	if err := c.invoke(ctx, endpoint.SetAVBlockAttr, req, &out); err != nil {
		return nil, err
	}
	return out.Value, nil
}

// AVCellUpdate is one cell of BatchSetAttributeViewBlockAttrs.
type AVCellUpdate struct {
	KeyID  string   `json:"keyID"`
	ItemID string   `json:"itemID"`
	Value  *AVValue `json:"value"`
}

// BatchSetAttributeViewBlockAttrs sets cells in order and saves the
// database once.
func (c *Client) BatchSetAttributeViewBlockAttrs(ctx context.Context, avID string, cells []AVCellUpdate) error {
	if err := need(endpoint.BatchSetAVBlockAttrs, "avID", avID); err != nil {
		return err
	}
	if len(cells) == 0 {
		return invalidArg(endpoint.BatchSetAVBlockAttrs, "cells must not be empty")
	}
	for i, u := range cells {
		if u.KeyID == "" || u.ItemID == "" || u.Value == nil {
			return invalidArg(endpoint.BatchSetAVBlockAttrs, "cell %d needs a keyID, an itemID and a value", i)
		}
	}
	req := struct {
		AvID   string         `json:"avID"`
		Values []AVCellUpdate `json:"values"`
	}{avID, cells}
	return c.call(ctx, endpoint.BatchSetAVBlockAttrs, kindOf(endpoint.BatchSetAVBlockAttrs), req, nil, true)
}

// AppendAttributeViewDetachedRows adds detached rows with their cells and
// saves the database once: each row is a list of values (KeyID and the
// typed content; a primary-key value's Block.Content is the row's text),
// its item ID the first value's BlockID when set, else one the kernel
// makes. An unknown column fails the call with nothing saved. The kernel
// answers nothing: a caller that needs the item IDs sets them.
func (c *Client) AppendAttributeViewDetachedRows(ctx context.Context, avID string, rows [][]*AVValue) error {
	if err := need(endpoint.AppendAVDetachedRows, "avID", avID); err != nil {
		return err
	}
	for i, r := range rows {
		if len(r) == 0 || slices.Contains(r, nil) {
			return invalidArg(endpoint.AppendAVDetachedRows, "row %d needs at least one value and no null", i)
		}
		for _, v := range r {
			if v.KeyID == "" {
				return invalidArg(endpoint.AppendAVDetachedRows, "row %d has a value without keyID", i)
			}
			if v.Type == AVKeyBlock && v.Block == nil {
				return invalidArg(endpoint.AppendAVDetachedRows, "row %d: a primary-key value needs its block", i)
			}
		}
	}
	if rows == nil {
		rows = [][]*AVValue{}
	}
	req := struct {
		AvID         string       `json:"avID"`
		BlocksValues [][]*AVValue `json:"blocksValues"`
	}{avID, rows}
	return c.call(ctx, endpoint.AppendAVDetachedRows, kindOf(endpoint.AppendAVDetachedRows), req, nil, true)
}

// DuplicateAttributeViewBlock copies a database: the new file is the old
// one with its ID replaced (keys, views and rows keep their IDs), named
// "<name> (Duplicated <time>)" when named, its two-way relations one-way;
// bound blocks are bound to the copy too. It answers the new avID and a
// block ID reserved for the copy's database block, which the caller
// inserts (see [DatabaseBlockDOM]); until then no block shows the copy.
func (c *Client) DuplicateAttributeViewBlock(ctx context.Context, avID string) (AVDuplicate, error) {
	var out AVDuplicate
	if err := need(endpoint.DuplicateAVBlock, "avID", avID); err != nil {
		return out, err
	}
	err := c.invoke(ctx, endpoint.DuplicateAVBlock, avIDArg{avID}, &out)
	return out, err
}
