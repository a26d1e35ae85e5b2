package embedded

import (
	"context"
	"sort"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// getAttributeViewKeys is GetBlockAttributeViewKeys (by a bound block's id)
// or GetAttributeViewItemKeys (by avID and itemID or valueID): for each
// database, the cells of the row, read from a render of the database's
// current view (so empty cells, templates, relations and rollups are
// there). Like the kernel it then stores the database's keyIDs (keys the
// list lacks are appended; the kernel appends them in random order, this
// kernel in column order) and saves the database as rendered; keys are
// listed in keyIDs order.
func (k *Kernel) getAttributeViewKeys(ctx context.Context, a args) (any, error) {
	id, _ := a["id"].(string)
	avID, _ := a["avID"].(string)
	itemID, _ := a["itemID"].(string)
	valueID, _ := a["valueID"].(string)
	ret := []*wire.AVBlockKeys{}
	k.avMu.Lock()
	defer k.avMu.Unlock()
	if avID != "" && (itemID != "" || valueID != "") {
		if e := k.itemKeys(ctx, avID, itemID, valueID); e != nil {
			ret = append(ret, e)
		}
		return ret, nil
	}
	attrs, ok := k.attrsOf(id)
	if !ok {
		return ret, nil
	}
	for _, avID := range splitList(attrs[avAttrAvs]) {
		av, err := k.readAV(avID)
		if err != nil {
			continue
		}
		bv := avBoundValue(av, id)
		if bv == nil {
			// The kernel corrects a stale custom-avs here and stops.
			return ret, nil
		}
		e := k.rowKeys(ctx, av, bv.BlockID, true)
		if e == nil {
			continue
		}
		if len(e.BlockIDs) == 0 {
			continue // no database block shows it
		}
		ret = append(ret, e)
	}
	return ret, nil
}

func (k *Kernel) itemKeys(ctx context.Context, avID, itemID, valueID string) *wire.AVBlockKeys {
	av, err := k.readAV(avID)
	if err != nil {
		return nil
	}
	if avBlockValue(av, itemID) == nil && valueID != "" {
		if bkv := avBlockKeyValues(av); bkv != nil {
			for _, v := range bkv.Values {
				if v.ID == valueID {
					itemID = v.BlockID
					break
				}
			}
		}
	}
	if avBlockValue(av, itemID) == nil {
		return nil
	}
	return k.rowKeys(ctx, av, itemID, false)
}

// rowKeys renders av's current view and collects an item's cells by key
// (all keys, or only those with a cell), in keyIDs order.
func (k *Kernel) rowKeys(ctx context.Context, av *wire.AttributeView, itemID string, allKeys bool) *wire.AVBlockKeys {
	view, err := k.renderedView(av, "", "")
	if err != nil {
		return nil
	}
	r := k.newAVRenderer(ctx, av)
	if view.LayoutType == "table" && view.Table != nil {
		r.view(av, view, "")
	}
	var kvs []*wire.AVKeyValues
	for _, kv := range av.KeyValues {
		if kv.Key.Type == wire.AVKeyLineNumber {
			continue
		}
		e := &wire.AVKeyValues{Key: kv.Key}
		for _, v := range kv.Values {
			if v.BlockID == itemID {
				e.Values = append(e.Values, v)
			}
		}
		if allKeys || len(e.Values) > 0 {
			kvs = append(kvs, e)
		}
	}
	refreshKeyIDs(av)
	if err := r.save(av); err != nil {
		k.log.Warn("save attribute view", "id", av.ID, "err", err)
	}
	pos := map[string]int{}
	for i, id := range av.KeyIDs {
		pos[id] = i
	}
	sort.SliceStable(kvs, func(i, j int) bool { return pos[kvs[i].Key.ID] < pos[kvs[j].Key.ID] })
	return &wire.AVBlockKeys{AvID: av.ID, AvName: avName(av), BlockIDs: k.mirrorBlocks(av.ID), KeyValues: kvs}
}

// refreshKeyIDs is refreshAttrViewKeyIDs: keyIDs names every key once.
func refreshKeyIDs(av *wire.AttributeView) {
	exist := map[string]bool{}
	for _, kv := range av.KeyValues {
		exist[kv.Key.ID] = true
	}
	listed := map[string]bool{}
	for _, id := range av.KeyIDs {
		listed[id] = true
	}
	for _, kv := range av.KeyValues {
		if !listed[kv.Key.ID] {
			av.KeyIDs = append(av.KeyIDs, kv.Key.ID)
			listed[kv.Key.ID] = true
		}
	}
	var keep []string
	for _, id := range av.KeyIDs {
		if exist[id] {
			keep = append(keep, id)
		}
	}
	av.KeyIDs = keep
}
