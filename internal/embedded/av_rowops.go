package embedded

import (
	"encoding/json"
	"slices"
	"sort"
	"time"

	"github.com/88250/lute/ast"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// A select column's options and copies of rows, as SiYuan 3.7.3 applies
// the transaction operations (model/attribute_view.go):
//
//	updateAttrViewColOptions  avID, id (the key), data [{name, color, desc}]
//	removeAttrViewColOption   avID, id (the key), data (the option's name)
//	duplicateAttrViewRow      avID, srcIDs [the source item], id (the new item), previousID
//
// The kernel also regenerates a grouped view's groups after each; groups
// are kept here as stored.

// applyAVRowOp applies one of those; handled is false for other actions.
func (k *Kernel) applyAVRowOp(op *wire.Operation) (handled bool, err error) {
	switch op.Action {
	case "updateAttrViewColOptions":
		err = k.avUpdateColOptions(op.AvID, op.ID, op.Data)
	case "removeAttrViewColOption":
		name, ok := op.Data.(string)
		if !ok {
			// The kernel asserts a string and panics, failing the
			// transaction.
			err = errf("data must be a string")
		} else {
			err = k.avRemoveColOption(op.AvID, op.ID, name)
		}
	case "duplicateAttrViewRow":
		src := ""
		if len(op.SrcIDs) > 0 {
			src = op.SrcIDs[0]
		}
		if src == "" {
			err = errf("source row id is empty")
		} else {
			err = k.avDuplicateRow(op.AvID, op.PreviousID, src, op.ID)
		}
	case "setAttrViewNewItemTemplates":
		err = k.avSetNewItemTemplates(op.AvID, op.Data)
	default:
		return false, nil
	}
	if err != nil {
		return true, &txFailure{op.Action, err}
	}
	return true, nil
}

// avUpdateColOptions is updateAttributeViewColumnOptions: empty names are
// dropped and an empty list changes nothing; a name the key has takes the
// colour and description sent, a name it lacks is appended; only when
// none is new are the key's options sorted by the order sent (a name not
// sent sorts as the first sent). An unknown key changes nothing.
func (k *Kernel) avUpdateColOptions(avID, keyID string, data any) error {
	raw, err := json.Marshal(data)
	if err != nil {
		return err
	}
	var sent []*wire.AVSelectOption
	if err := json.Unmarshal(raw, &sent); err != nil {
		return err
	}
	sent = slices.DeleteFunc(sent, func(o *wire.AVSelectOption) bool { return o == nil || o.Name == "" })
	return k.editAV(avID, func(av *wire.AttributeView) error {
		if len(sent) == 0 {
			return errAVNoSave
		}
		key := avKey(av, keyID)
		if key == nil {
			return errAVNoSave
		}
		order := map[string]int{}
		for i, o := range sent {
			order[o.Name] = i
		}
		added := false
		for _, o := range sent {
			if have := avOption(key, o.Name); have != nil {
				have.Color, have.Desc = o.Color, o.Desc
				continue
			}
			key.Options = append(key.Options, &wire.AVSelectOption{Name: o.Name, Color: o.Color, Desc: o.Desc})
			added = true
		}
		if !added {
			sort.SliceStable(key.Options, func(i, j int) bool { return order[key.Options[i].Name] < order[key.Options[j].Name] })
		}
		return nil
	})
}

// avRemoveColOption is removeAttributeViewColumnOption: the option goes
// from the key, from its cells and from the filters on the key (a leaf
// left without an option goes; a view left without filters gets an empty
// root group). An unknown key fails.
func (k *Kernel) avRemoveColOption(avID, keyID, name string) error {
	return k.editAV(avID, func(av *wire.AttributeView) error {
		kv := avKeyValues(av, keyID)
		if kv == nil {
			return errf("key [%s] not found", keyID)
		}
		key := kv.Key
		if i := slices.IndexFunc(key.Options, func(o *wire.AVSelectOption) bool { return o != nil && o.Name == name }); i >= 0 {
			key.Options = slices.Delete(key.Options, i, i+1)
		}
		for _, v := range kv.Values {
			if v == nil {
				continue
			}
			if i := slices.IndexFunc(v.MSelect, func(o *wire.AVValueSelect) bool { return o != nil && o.Content == name }); i >= 0 {
				v.MSelect = slices.Delete(v.MSelect, i, i+1)
			}
		}
		for _, view := range av.Views {
			view.Filters = removeOptionFromFilters(view.Filters, keyID, name)
			if len(view.Filters) == 0 {
				view.Filters = []*wire.AVViewFilter{{Combination: "and"}}
			}
		}
		return nil
	})
}

// removeOptionFromFilters is av.RemoveSelectOptionFromFilters.
func removeOptionFromFilters(fs []*wire.AVViewFilter, column, name string) []*wire.AVViewFilter {
	var ret []*wire.AVViewFilter
	for _, f := range fs {
		if f == nil {
			continue
		}
		if isFilterGroup(f) {
			if kids := removeOptionFromFilters(f.Filters, column, name); len(kids) > 0 {
				f.Filters = kids
				ret = append(ret, f)
			}
			continue
		}
		if f.Column != column || f.Value == nil || (f.Value.Type != wire.AVKeySelect && f.Value.Type != wire.AVKeyMSelect) ||
			f.Operator == "Is empty" || f.Operator == "Is not empty" {
			ret = append(ret, f)
			continue
		}
		if i := slices.IndexFunc(f.Value.MSelect, func(o *wire.AVValueSelect) bool { return o != nil && o.Content == name }); i >= 0 {
			f.Value.MSelect = slices.Delete(f.Value.MSelect, i, i+1)
		}
		if len(f.Value.MSelect) > 0 {
			ret = append(ret, f)
		}
	}
	return ret
}

// avDuplicateRow is DuplicateAttributeViewRow: a detached copy newItemID
// (a new ID when "") of the source row with its primary-key text, and a
// copy of each of its cells but rollup, created and updated (options the
// key lacks are added, a copied option takes the key's colour), after
// previousItemID in every view and each of its groups (last when it is
// "" or not there), the groups then made anew; a
// two-way relation cell adds the copy to the related rows' back cells.
// The kernel's save then keeps one primary-key value per item.
func (k *Kernel) avDuplicateRow(avID, previousItemID, srcItemID, newItemID string) error {
	k.avMu.Lock()
	defer k.avMu.Unlock()
	av, err := k.readAV(avID)
	if err != nil {
		return err
	}
	bkv := avBlockKeyValues(av)
	if bkv == nil {
		return errf("attribute view [%s] has no block key", avID)
	}
	src := avValueOf(bkv, srcItemID)
	if src == nil {
		return errf("source row [%s] not found in attribute view [%s]", srcItemID, avID)
	}
	if newItemID == "" {
		newItemID = ast.NewNodeID()
	}
	now := time.Now().UnixMilli()
	content := ""
	if src.Block != nil {
		content = src.Block.Content
	}
	bkv.Values = append(bkv.Values, &wire.AVValue{ID: ast.NewNodeID(), KeyID: bkv.Key.ID, BlockID: newItemID, Type: wire.AVKeyBlock,
		IsDetached: true, CreatedAt: now, UpdatedAt: now, Block: &wire.AVValueBlock{Content: content, Created: now, Updated: now}})
	type twoWay struct {
		key *wire.AVKey
		val *wire.AVValue
	}
	var pending []twoWay
	for _, kv := range av.KeyValues {
		switch kv.Key.Type {
		case wire.AVKeyBlock, wire.AVKeyRollup, wire.AVKeyCreated, wire.AVKeyUpdated:
			continue
		}
		sv := avValueOf(kv, srcItemID)
		if sv == nil {
			continue
		}
		nv := cloneValue(sv)
		nv.ID, nv.BlockID, nv.IsDetached, nv.CreatedAt, nv.UpdatedAt = ast.NewNodeID(), newItemID, false, now, now
		if nv.Relation != nil {
			nv.Relation.Contents = nil
		}
		if nv.Type == wire.AVKeySelect || nv.Type == wire.AVKeyMSelect {
			for _, o := range nv.MSelect {
				if have := avOption(kv.Key, o.Content); have == nil {
					kv.Key.Options = append(kv.Key.Options, &wire.AVSelectOption{Name: o.Content, Color: o.Color})
				} else {
					o.Color = have.Color
				}
			}
		}
		kv.Values = append(kv.Values, nv)
		if nv.Type == wire.AVKeyRelation && kv.Key.Relation != nil && kv.Key.Relation.IsTwoWay && nv.Relation != nil && len(nv.Relation.BlockIDs) > 0 {
			pending = append(pending, twoWay{kv.Key, nv})
		}
	}
	for _, v := range av.Views {
		addRowToViewItems(v, newItemID, previousItemID)
	}
	for _, p := range pending {
		if err := k.updateBackRelations(av, p.key, p.val, 1, nil); err != nil {
			return err
		}
	}
	// The groups made anew keep the copy where its value puts it, in the
	// order the insertion above gave it.
	k.regenGroups(av, nil)
	return k.saveAV(av)
}

// addRowToViewItems puts a new row after previousItemID in a view's rows
// and in the rows of each of its groups.
func addRowToViewItems(v *wire.AVView, itemID, previousItemID string) {
	v.ItemIDs = insertItemAfter(v.ItemIDs, itemID, previousItemID)
	gs := viewGroups(v)
	if gs == nil {
		return
	}
	for _, g := range gs {
		g.GroupItemIDs = insertItemAfter(g.GroupItemIDs, itemID, previousItemID)
	}
	setViewGroups(v, gs)
}

// insertItemAfter is the kernel's insertItemAfter: after previous, or last
// when previous is "" or not there.
func insertItemAfter(ids []string, item, previous string) []string {
	if i := slices.Index(ids, previous); previous != "" && i >= 0 {
		return slices.Insert(ids, i+1, item)
	}
	return append(ids, item)
}
