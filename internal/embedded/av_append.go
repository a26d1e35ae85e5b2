package embedded

import (
	"context"
	"encoding/json"
	"time"

	"github.com/88250/lute/ast"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// appendAttributeViewDetachedBlocksWithValues adds detached rows with
// their cells in one save, as SiYuan 3.7.3's kernel-internal endpoint of
// that name: each row is a list of values (keyID plus the typed content),
// its item ID the first value's blockID or a new one; each value gets a
// new ID, the row's item ID, its column's type, isDetached and one time
// for created and updated (a primary-key value's block loses its id and
// takes that time); a select option not in the column is added with the
// colour given, one already there keeps its colour (the value takes it).
// The rows go last in every view. An unknown column fails the whole call
// before anything is saved; a row with no values, or blocksValues missing,
// answer code 0 with nothing saved (3.7.3's handler panics and recovers),
// as does a primary-key value without its block.
func (k *Kernel) appendAttributeViewDetachedBlocksWithValues(ctx context.Context, a args) (any, error) {
	avID, err := a.str("avID")
	if err != nil {
		return nil, err
	}
	rows, ok := a["blocksValues"].([]any)
	if !ok {
		return nil, nil
	}
	parsed := make([][]*wire.AVValue, 0, len(rows))
	for _, r := range rows {
		vals, ok := r.([]any)
		if !ok || len(vals) == 0 {
			return nil, nil
		}
		raw, err := json.Marshal(vals)
		if err != nil {
			return nil, errf("%v", err)
		}
		var row []*wire.AVValue
		if err := json.Unmarshal(raw, &row); err != nil {
			return nil, errf("%v", err)
		}
		for _, v := range row {
			if v == nil {
				return nil, nil
			}
		}
		parsed = append(parsed, row)
	}

	k.avMu.Lock()
	defer k.avMu.Unlock()
	av, err := k.readAV(avID)
	if err != nil {
		return nil, err
	}
	now := time.Now().UnixMilli()
	var items []string
	for _, row := range parsed {
		item := ast.NewNodeID()
		if row[0].BlockID != "" {
			item = row[0].BlockID
		}
		items = append(items, item)
		for _, v := range row {
			kv := avKeyValues(av, v.KeyID)
			if kv == nil {
				return nil, errf("key [%s] not found", v.KeyID)
			}
			v.ID, v.BlockID, v.Type = ast.NewNodeID(), item, kv.Key.Type
			if v.Type == wire.AVKeyBlock {
				if v.Block == nil { // 3.7.3 dereferences it: a panic, nothing saved
					return nil, nil
				}
				v.Block.Created, v.Block.Updated, v.Block.ID = now, now, ""
			}
			v.IsDetached, v.CreatedAt, v.UpdatedAt = true, now, now
			kv.Values = append(kv.Values, v)
			if v.Type == wire.AVKeySelect || v.Type == wire.AVKeyMSelect {
				for _, o := range v.MSelect {
					if o == nil {
						continue
					}
					if opt := avOption(kv.Key, o.Content); opt != nil {
						o.Color = opt.Color
					} else {
						kv.Key.Options = append(kv.Key.Options, &wire.AVSelectOption{Name: o.Content, Color: o.Color})
					}
				}
			}
		}
	}
	for _, v := range av.Views {
		v.ItemIDs = append(v.ItemIDs, items...)
	}
	k.regenGroups(av, nil)
	return nil, k.saveAV(av)
}
