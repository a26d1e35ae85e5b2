package embedded

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/88250/lute/ast"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// Setting cells, as model.updateAttributeViewValue: the updateAttrViewCell
// transaction and /api/av/setAttributeViewBlockAttr and
// batchSetAttributeViewBlockAttrs.
//
// The value sent is decoded over the stored cell (or a new one), so it may
// carry any of the value's fields; the kernel then normalises by type:
// an empty number or date is zeroed, a number gets its formatted text in
// the format the value names (not the column's), empty select options
// are dropped (a select left with none is not saved at all), options the
// column lacks are added to it with the value's colour or a random one,
// options it has keep its colour. A relation's contents are never stored,
// its item IDs lose duplicates, and a two-way relation adds (or removes)
// the back links in the other database; the kernel decides between adding
// and removing by the count of IDs alone, so replacing one linked row by
// another only adds the new back link.

// avSetCell sets one cell and saves. Callers hold writeMu.
func (k *Kernel) avSetCell(avID, keyID, itemID string, data any) (*wire.AVValue, error) {
	k.avMu.Lock()
	defer k.avMu.Unlock()
	av, err := k.readAV(avID)
	if err != nil {
		return nil, err
	}
	val, save, err := k.setAVValue(av, keyID, itemID, data)
	if err != nil || !save {
		return val, err
	}
	k.regenGroups(av, nil) // a changed value may move its row to another group
	return val, k.saveAV(av)
}

// avSetCells sets cells ({keyID, itemID, value}) one after the other,
// then saves once. Callers hold writeMu.
func (k *Kernel) avSetCells(avID string, values []any) error {
	k.avMu.Lock()
	defer k.avMu.Unlock()
	av, err := k.readAV(avID)
	if err != nil {
		return err
	}
	for _, x := range values {
		m, ok := x.(map[string]any)
		if !ok {
			return errf("values must be objects")
		}
		keyID, _ := m["keyID"].(string)
		itemID, hasItem := m["itemID"].(string)
		if _, ok := m["itemID"]; !ok {
			if _, ok := m["rowID"]; ok {
				return errf("%s", avRowIDDeprecated(endpoint.BatchSetAVBlockAttrs))
			}
		}
		if !hasItem {
			return errf("values itemID must be a string")
		}
		if _, _, err := k.setAVValue(av, keyID, itemID, m["value"]); err != nil {
			return err
		}
	}
	k.regenGroups(av, nil)
	return k.saveAV(av)
}

// avRowIDDeprecated is the kernel's refusal of the old rowID argument.
func avRowIDDeprecated(endpoint string) string {
	return fmt.Sprintf("[%s] parameter [rowID] is deprecated, visit [https://github.com/siyuan-note/siyuan/issues/15727] for details", endpoint)
}

// setAVValue updates a cell in av; save is false when the kernel would
// return without saving (a select set to no option).
func (k *Kernel) setAVValue(av *wire.AttributeView, keyID, itemID string, data any) (val *wire.AVValue, save bool, err error) {
	var blockVal *wire.AVValue
	if bkv := avBlockKeyValues(av); bkv != nil {
		blockVal = avValueOf(bkv, itemID)
	}
	now := time.Now().UnixMilli()
	oldDetached, oldBound := true, ""
	if blockVal != nil {
		oldDetached = blockVal.IsDetached
		if blockVal.Block != nil {
			oldBound = blockVal.Block.ID
		}
	}
	kv := avKeyValues(av, keyID)
	if kv == nil {
		return nil, false, errAVKeyNotFound // the kernel dereferences nil here
	}
	key := kv.Key
	val = avValueOf(kv, itemID)
	if val != nil {
		val.Type = key.Type
	} else {
		val = &wire.AVValue{ID: ast.NewNodeID(), KeyID: keyID, BlockID: itemID, Type: key.Type, CreatedAt: now, UpdatedAt: now}
		kv.Values = append(kv.Values, val)
	}
	var oldRel []string
	if val.Type == wire.AVKeyRelation && val.Relation != nil {
		oldRel = slices.Clone(val.Relation.BlockIDs)
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return nil, false, err
	}
	if err := json.Unmarshal(raw, val); err != nil {
		return nil, false, err
	}
	switch val.Type {
	case wire.AVKeyNumber:
		if n := val.Number; n != nil {
			if !n.IsNotEmpty {
				n.Content, n.FormattedContent = 0, ""
			} else {
				formatNumberValue(n)
			}
		}
	case wire.AVKeyDate:
		if d := val.Date; d != nil && !d.IsNotEmpty {
			d.Content, d.FormattedContent = 0, ""
		}
	case wire.AVKeySelect, wire.AVKeyMSelect:
		if len(val.MSelect) > 0 {
			val.MSelect = slices.DeleteFunc(val.MSelect, func(o *wire.AVValueSelect) bool { return o == nil || o.Content == "" })
			if len(val.MSelect) == 0 {
				val.MSelect = nil
				return val, false, nil
			}
			for _, o := range val.MSelect {
				if opt := avOption(key, o.Content); opt != nil {
					o.Color = opt.Color
					continue
				}
				color := o.Color
				if color == "" {
					color = fmt.Sprint(1 + rand.IntN(14))
				}
				key.Options = append(key.Options, &wire.AVSelectOption{Name: o.Content, Color: color})
			}
		}
	}
	mode := 0 // 0 unchanged, 1 more IDs, 2 fewer
	if val.Type == wire.AVKeyRelation {
		if val.Relation == nil {
			val.Relation = &wire.AVValueRelation{}
		}
		val.Relation.Contents = nil
		val.Relation.BlockIDs = dedupe(val.Relation.BlockIDs)
		if !slices.Equal(oldRel, val.Relation.BlockIDs) {
			mode = 1
			if len(oldRel) > len(val.Relation.BlockIDs) {
				mode = 2
			}
		}
	}
	if val.Type == wire.AVKeyBlock {
		if err := k.setPrimaryKey(av.ID, val, oldDetached, oldBound); err != nil {
			return nil, false, err
		}
	}
	if blockVal != nil {
		if blockVal.Block != nil {
			blockVal.Block.Updated = now
		}
		setUpdatedAt(blockVal, now)
		if val.Type == wire.AVKeyBlock {
			blockVal.IsDetached = val.IsDetached
		}
	}
	setUpdatedAt(val, now)
	if key.Type == wire.AVKeyRelation && key.Relation != nil && key.Relation.IsTwoWay {
		if err := k.updateBackRelations(av, key, val, mode, oldRel); err != nil {
			return nil, false, err
		}
	}
	return val, true, nil
}

// setUpdatedAt is Value.SetUpdatedAt: never equal to the creation time.
func setUpdatedAt(v *wire.AVValue, ms int64) {
	v.UpdatedAt = ms
	if v.CreatedAt == v.UpdatedAt {
		v.UpdatedAt += 1000
	}
}

func avOption(key *wire.AVKey, name string) *wire.AVSelectOption {
	for _, o := range key.Options {
		if o.Name == name {
			return o
		}
	}
	return nil
}

// setPrimaryKey applies a primary-key change: binding a detached row,
// detaching a bound one, moving a row to another block, or (same block)
// a static text (empty: the block's own text again).
func (k *Kernel) setPrimaryKey(avID string, val *wire.AVValue, oldDetached bool, oldBound string) error {
	if val.Block == nil {
		val.Block = &wire.AVValueBlock{}
	}
	switch {
	case oldDetached:
		if !val.IsDetached {
			return k.bindBlock(avID, val.Block.ID)
		}
	case val.IsDetached:
		if err := k.unbindBlock(avID, val.Block.ID); err != nil {
			return err
		}
		val.Block.ID = ""
	case oldBound != val.Block.ID:
		if err := k.unbindBlock(avID, oldBound); err != nil {
			return err
		}
		if err := k.bindBlock(avID, val.Block.ID); err != nil {
			return err
		}
		val.Block.Content = unescapeHTML(val.Block.Content)
	default:
		content := strings.TrimSpace(val.Block.Content)
		if content == "" {
			_, text := k.avBlockText(val.Block.ID)
			val.Block.Content = text
		} else {
			val.Block.Content = content
		}
		return k.setBlockAttr(val.Block.ID, avStaticTextAttr+avID, content)
	}
	return nil
}

// updateBackRelations is updateTwoWayRelationDestAttrView: the other side
// of a two-way relation gains (mode 1) or loses (mode 2) the row.
func (k *Kernel) updateBackRelations(av *wire.AttributeView, key *wire.AVKey, val *wire.AVValue, mode int, oldRel []string) error {
	dest := av
	if key.Relation.AvID != av.ID {
		var err error
		if dest, err = k.readAV(key.Relation.AvID); err != nil {
			return nil // a missing other side is ignored
		}
	}
	now := time.Now().UnixMilli()
	back := avKeyValues(dest, key.Relation.BackKeyID)
	switch {
	case mode == 1 && back != nil:
		for _, id := range val.Relation.BlockIDs {
			if slices.Contains(oldRel, id) {
				continue
			}
			dv := avValueOf(back, id)
			if dv == nil {
				dv = &wire.AVValue{ID: ast.NewNodeID(), KeyID: back.Key.ID, BlockID: id, Type: back.Key.Type,
					Relation: &wire.AVValueRelation{}, CreatedAt: now, UpdatedAt: now + 1000}
				back.Values = append(back.Values, dv)
			}
			if dv.Relation == nil {
				dv.Relation = &wire.AVValueRelation{}
			}
			dv.Relation.BlockIDs = dedupe(append(dv.Relation.BlockIDs, val.BlockID))
		}
	case mode == 2 && back != nil:
		for _, id := range oldRel {
			if slices.Contains(val.Relation.BlockIDs, id) {
				continue
			}
			if dv := avValueOf(back, id); dv != nil && dv.Relation != nil {
				dv.Relation.BlockIDs = slices.DeleteFunc(dv.Relation.BlockIDs, func(s string) bool { return s == val.BlockID })
				setUpdatedAt(dv, now)
			}
		}
	}
	if dest != av {
		return k.saveAV(dest)
	}
	return nil
}
