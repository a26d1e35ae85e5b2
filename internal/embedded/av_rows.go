package embedded

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/88250/lute/ast"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// Adding and removing rows, as model.AddAttributeViewBlock and
// removeAttributeViewBlock: the insertAttrViewBlock and removeAttrViewBlock
// transactions and /api/av/addAttributeViewBlocks, removeAttributeViewBlocks.

// avAddRows adds rows for srcs (each {itemID?, id?, isDetached, content?}),
// in reverse order, each placed first in every view (or after
// previousItemID). The kernel reverses srcs in place, so the echoed
// operation lists them reversed; a block that is already bound is bound
// again and its src's itemID becomes the existing row's. Callers hold
// writeMu.
func (k *Kernel) avAddRows(ctx context.Context, srcs []map[string]any, avID, dbBlockID, viewID, groupID, previousItemID string, ignoreDefaultFill bool) error {
	slices.Reverse(srcs)
	now := time.Now().UnixMilli()
	k.avMu.Lock()
	defer k.avMu.Unlock()
	// The kernel reads and saves the database for each src; this kernel
	// keeps it in memory through the operation and saves once, also when
	// a src fails after others were added (as the kernel's saves would
	// have left it).
	var av *wire.AttributeView
	save := func() error {
		if av == nil {
			return nil
		}
		return k.saveAV(av)
	}
	for _, src := range srcs {
		if src == nil {
			return errors.Join(errf("invalid srcs"), save())
		}
		itemID := ast.NewNodeID()
		if v, ok := src["itemID"]; ok && v != nil {
			s, ok := v.(string)
			if !ok {
				return errors.Join(errf("srcs itemID must be a string"), save())
			}
			itemID = s
		}
		detached, ok := src["isDetached"].(bool)
		if !ok {
			return errors.Join(errf("srcs isDetached must be a boolean"), save())
		}
		var boundID string
		if !detached {
			boundID, _ = src["id"].(string)
			if !validID(boundID) {
				continue
			}
			if _, ok := k.lookup(boundID); !ok {
				return errors.Join(errf("tree not found"), save())
			}
		} else if itemID == "" {
			itemID = ast.NewNodeID()
		}
		if av == nil {
			var err error
			if av, err = k.readAV(avID); err != nil {
				return err
			}
		}
		content, _ := src["content"].(string)
		if err := k.avAddRow(ctx, av, now, dbBlockID, viewID, groupID, previousItemID, itemID, boundID, content, src, detached, ignoreDefaultFill); err != nil {
			return errors.Join(err, save())
		}
	}
	return save()
}

// avAddRow adds one row to av (in memory). Callers hold writeMu and avMu.
func (k *Kernel) avAddRow(ctx context.Context, av *wire.AttributeView, now int64, dbBlockID, viewID, groupID, previousItemID, itemID, boundID, content string,
	src map[string]any, detached, ignoreDefaultFill bool) error {
	avID := av.ID
	var icon string
	if !detached {
		icon, content = k.avBlockText(boundID)
	}
	bkv := avBlockKeyValues(av)
	if bkv == nil {
		return errf("attribute view [%s] has no primary key", avID)
	}
	for _, bv := range bkv.Values {
		if boundID != "" && bv.Block != nil && bv.Block.ID == boundID {
			// Bound again, e.g. after the database block was cut and pasted.
			if err := k.bindBlock(avID, boundID); err != nil {
				return err
			}
			bv.IsDetached, bv.Block.Icon, bv.Block.Content, bv.UpdatedAt = false, icon, content, now
			k.notify(fmt.Sprintf("This block has already been added to the database [%s]", searchEscape(avName(av))), false, 5000)
			src["itemID"] = bv.BlockID
			return nil
		}
	}
	// The kernel appends the row's primary value before it looks the view
	// up, and returns without saving when it is not found: the row is not
	// added. Looking it up first leaves nothing to undo.
	view, err := avCurrentView(av, k.blockViewID(dbBlockID))
	if err != nil {
		return err
	}
	if viewID != "" {
		if view = avViewByID(av, viewID); view == nil {
			return errAVViewNotFound
		}
	}
	bv := &wire.AVValue{ID: ast.NewNodeID(), KeyID: bkv.Key.ID, BlockID: itemID, Type: wire.AVKeyBlock, IsDetached: detached,
		CreatedAt: now, UpdatedAt: now, Block: &wire.AVValueBlock{Icon: icon, Content: content, Created: now, Updated: now}}
	if !detached {
		bv.Block.ID = boundID
	}
	bkv.Values = append(bkv.Values, bv)

	// Filling default values renders the view or the group the row goes
	// to (to find the row next to the new one): the kernel then saves
	// its database as rendered, less the values the render filled in.
	groupView := view
	if g := groupByID(view, groupID); g != nil {
		groupView = g
	}
	r := k.newAVRenderer(ctx, av)
	if !ignoreDefaultFill && view.Table != nil {
		near := r.nearItem(av, view, groupView, previousItemID)
		if err := r.fillDefaults(av, view, groupView, near, itemID, now); err != nil {
			return err
		}
	}
	for _, kv := range av.KeyValues {
		if kv.Key.Type != wire.AVKeyDate || kv.Key.Date == nil || !kv.Key.Date.AutoFillNow {
			continue
		}
		d := &wire.AVValueDate{Content: now, IsNotEmpty: true, IsNotTime: !kv.Key.Date.FillSpecificTime}
		if v := avValueOf(kv, itemID); v == nil {
			kv.Values = append(kv.Values, &wire.AVValue{ID: ast.NewNodeID(), KeyID: kv.Key.ID, BlockID: itemID,
				Type: wire.AVKeyDate, IsDetached: detached, CreatedAt: now, UpdatedAt: now + 1000, Date: d})
		} else if r.autoFill[v] {
			v.CreatedAt, v.UpdatedAt, v.Date = now, now+1000, d
			delete(r.autoFill, v)
		}
	}
	if !detached {
		if err := k.bindBlock(avID, boundID); err != nil {
			r.strip(av)
			return err
		}
	}
	for _, v := range av.Views {
		v.ItemIDs = insertItem(v.ItemIDs, itemID, previousItemID)
		// Every group takes the row too, so that the regeneration below
		// keeps it where it was put.
		if gs := viewGroups(v); gs != nil {
			for _, g := range gs {
				g.GroupItemIDs = insertItem(g.GroupItemIDs, itemID, previousItemID)
			}
			setViewGroups(v, gs)
		}
	}
	k.regenGroups(av, r)
	r.strip(av)
	return nil
}

// insertItem puts an item after previous (at the end when previous is not
// there), or first when previous is "".
func insertItem(ids []string, item, previous string) []string {
	if previous == "" {
		return append([]string{item}, ids...)
	}
	if i := slices.Index(ids, previous); i >= 0 {
		return slices.Insert(ids, i+1, item)
	}
	return append(ids, item)
}

// avRemoveRows removes items (by item ID) and every cell of them, unbinds
// bound blocks and drops the items from each view's order. Callers hold
// writeMu.
func (k *Kernel) avRemoveRows(srcIDs []string, avID string) error {
	k.avMu.Lock()
	defer k.avMu.Unlock()
	av, err := k.readAV(avID)
	if err != nil {
		return err
	}
	remove := map[string]bool{}
	for _, id := range srcIDs {
		remove[id] = true
	}
	for _, kv := range av.KeyValues {
		keep := kv.Values[:0]
		for _, v := range kv.Values {
			if !remove[v.BlockID] {
				keep = append(keep, v)
				continue
			}
			if !v.IsDetached && v.Block != nil && v.Block.ID != "" {
				if err := k.removeNodeAv(v.Block.ID, avID); err != nil {
					return err
				}
			}
		}
		kv.Values = keep
	}
	for _, v := range av.Views {
		v.ItemIDs = slices.DeleteFunc(v.ItemIDs, func(id string) bool { return remove[id] })
	}
	k.regenGroups(av, nil)
	return k.saveAV(av)
}

// removeNodeAv is removeNodeAvID: the database leaves the block's
// custom-avs, with any database that no longer exists; a document also
// loses custom-hidden.
func (k *Kernel) removeNodeAv(blockID, avID string) error {
	tree, node, err := k.loadTreeOf(blockID)
	if err != nil {
		return nil
	}
	if node.Type == ast.NodeDocument && tree.ID != tree.Box {
		node.RemoveIALAttr("custom-hidden")
	}
	var keep []string
	for _, id := range splitList(node.IALAttr(avAttrAvs)) {
		if id != avID && k.avExists(id) {
			keep = append(keep, id)
		}
	}
	if len(keep) == 0 {
		node.RemoveIALAttr(avAttrAvs)
	} else {
		node.SetIALAttr(avAttrAvs, joinList(keep))
	}
	return k.writeTree(tree)
}
