package embedded

import (
	"context"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/xrash/smetrics"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// The /api/av/* endpoints, with the arguments kernel/api/av.go reads.
// Where the kernel's unchecked type assertions panic into
// {code:0,data:null} (a missing or mistyped argument), these answer code
// -1 with the argument's name.

func (k *Kernel) avRoutes() map[string]route {
	return map[string]route{
		endpoint.RenderAV:                {json: k.renderAttributeView},
		endpoint.GetAV:                   {json: k.getAttributeView},
		endpoint.GetAVKeys:               {json: k.getAttributeViewKeys},
		endpoint.GetAVKeysByAvID:         {json: k.getAttributeViewKeysByAvID},
		endpoint.GetAVFilterSort:         {json: k.getAttributeViewFilterSort},
		endpoint.SearchAV:                {json: k.searchAttributeView},
		endpoint.GetAVPrimaryKeyValues:   {json: k.getAttributeViewPrimaryKeyValues},
		endpoint.GetMirrorDatabaseBlocks: {json: k.getMirrorDatabaseBlocks},
		endpoint.DuplicateAVBlock:        {json: k.duplicateAttributeViewBlock},
		endpoint.SpinBlockDOM:            {json: k.spinBlockDOM},
		endpoint.AddAVBlocks:             {json: k.addAttributeViewBlocks},
		endpoint.RemoveAVBlocks:          {json: k.removeAttributeViewBlocks},
		endpoint.AddAVKey:                {json: k.addAttributeViewKey},
		endpoint.RemoveAVKey:             {json: k.removeAttributeViewKey},
		endpoint.SetAVBlockAttr:          {json: k.setAttributeViewBlockAttr},
		endpoint.BatchSetAVBlockAttrs:    {json: k.batchSetAttributeViewBlockAttrs},
		endpoint.AppendAVDetachedRows:    {json: k.appendAttributeViewDetachedBlocksWithValues},
	}
}

func (k *Kernel) renderAttributeView(ctx context.Context, a args) (any, error) {
	id, err := a.str("id")
	if err != nil {
		return nil, err
	}
	var blockID, viewID, query string
	for key, dst := range map[string]*string{"blockID": &blockID, "viewID": &viewID, "query": &query} {
		if *dst, err = a.optStr(key); err != nil {
			return nil, err
		}
	}
	page, err := a.optInt("page", 1)
	if err != nil {
		return nil, err
	}
	pageSize, err := a.optInt("pageSize", -1)
	if err != nil {
		return nil, err
	}
	create := true
	if _, ok := a["createIfNotExist"]; ok && a["createIfNotExist"] != nil {
		if create, err = a.optBool("createIfNotExist"); err != nil {
			return nil, err
		}
	}
	ignoreRows, err := a.optBool("ignoreRows")
	if err != nil {
		return nil, err
	}
	ret, cards, err := k.renderAVAny(ctx, blockID, id, viewID, query, page, pageSize, parseGroupPaging(a["groupPaging"]), create, ignoreRows)
	if cards != nil {
		return cards, err
	}
	return ret, err
}

// getAttributeView answers the stored database as it is, or null.
func (k *Kernel) getAttributeView(ctx context.Context, a args) (any, error) {
	id, err := a.str("id")
	if err != nil {
		return nil, err
	}
	k.avMu.Lock()
	av, _ := k.readAV(id)
	k.avMu.Unlock()
	return map[string]any{"av": av}, nil
}

func (k *Kernel) getAttributeViewKeysByAvID(ctx context.Context, a args) (any, error) {
	id, err := a.str("avID")
	if err != nil {
		return nil, err
	}
	k.avMu.Lock()
	av, _ := k.readAV(id)
	k.avMu.Unlock()
	keys := []*wire.AVKey{}
	if av != nil {
		for _, kv := range av.KeyValues {
			keys = append(keys, kv.Key)
		}
	}
	return keys, nil
}

func (k *Kernel) getAttributeViewFilterSort(ctx context.Context, a args) (any, error) {
	id, err := a.str("id")
	if err != nil {
		return nil, err
	}
	blockID, err := a.str("blockID")
	if err != nil {
		return nil, err
	}
	av, err := k.loadAV(id)
	if err != nil {
		return map[string]any{"filters": nil, "sorts": nil}, nil
	}
	view, err := avCurrentView(av, k.blockViewID(blockID))
	if err != nil {
		return map[string]any{"filters": nil, "sorts": nil}, nil
	}
	ret := &wire.AVFilterSort{Filters: view.Filters, Sorts: view.Sorts}
	if len(ret.Filters) == 0 {
		ret.Filters = []*wire.AVViewFilter{}
	}
	if len(ret.Sorts) == 0 {
		ret.Sorts = []*wire.AVViewSort{}
	}
	return ret, nil
}

func (k *Kernel) getMirrorDatabaseBlocks(ctx context.Context, a args) (any, error) {
	id, err := a.str("avID")
	if err != nil {
		return nil, err
	}
	refs := []*wire.AVRefDefs{}
	for _, b := range k.mirrorBlocks(id) {
		refs = append(refs, &wire.AVRefDefs{RefID: b, DefIDs: []string{}})
	}
	return map[string]any{"refDefs": refs}, nil
}

// getAttributeViewPrimaryKeyValues lists the rows' primary keys (of bound
// rows whose block exists), those containing keyword, most recently
// changed first, a page of pageSize (16 when < 1).
func (k *Kernel) getAttributeViewPrimaryKeyValues(ctx context.Context, a args) (any, error) {
	id, err := a.str("id")
	if err != nil {
		return nil, err
	}
	page, err := a.optInt("page", 1)
	if err != nil {
		return nil, err
	}
	pageSize, err := a.optInt("pageSize", -1)
	if err != nil {
		return nil, err
	}
	keyword, err := a.optStr("keyword")
	if err != nil {
		return nil, err
	}
	av, err := k.loadAV(id)
	if err != nil {
		return nil, err
	}
	bkv := avBlockKeyValues(av)
	if bkv == nil {
		return nil, errf("attribute view [%s] has no primary key", id)
	}
	var values []*wire.AVValue
	for _, v := range bkv.Values {
		if !v.IsDetached {
			if v.Block == nil {
				continue
			}
			if _, ok := k.lookup(v.Block.ID); !ok {
				continue
			}
		}
		if strings.Contains(strings.ToLower(valueString(v, true)), strings.ToLower(keyword)) {
			values = append(values, v)
		}
	}
	updated := func(v *wire.AVValue) int64 {
		if v.Block == nil {
			return 0
		}
		return v.Block.Updated
	}
	sort.SliceStable(values, func(i, j int) bool { return updated(values[i]) > updated(values[j]) })
	if pageSize < 1 {
		pageSize = 16
	}
	start := min(len(values), max(0, (page-1)*pageSize))
	end := min(len(values), start+pageSize)
	bkv.Values = values[start:end]
	return &wire.AVPrimaryKeyValues{BlockIDs: k.mirrorBlocks(id), Name: avName(av), Rows: bkv}, nil
}

// searchAttributeView finds databases shown by a block whose name holds
// every word of keyword (all of them when it is empty): best Jaro-Winkler
// score first, then the most recently written file; at most 12.
func (k *Kernel) searchAttributeView(ctx context.Context, a args) (any, error) {
	keyword, err := a.str("keyword")
	if err != nil {
		return nil, err
	}
	var excludes []string
	if _, ok := a["excludes"]; ok && a["excludes"] != nil {
		if excludes, err = a.strList("excludes"); err != nil {
			return nil, err
		}
	}
	words := strings.Fields(strings.TrimSpace(keyword))
	type hit struct {
		id, name string
		updated  int64
		score    float64
	}
	var hits []hit
	entries, _ := os.ReadDir(k.avDir())
	for _, e := range entries {
		id := strings.TrimSuffix(e.Name(), ".json")
		if e.IsDir() || !validID(id) || slices.Contains(excludes, id) || len(k.mirrorBlocks(id)) == 0 {
			continue
		}
		av, err := k.loadAV(id)
		if err != nil {
			continue
		}
		h := hit{id: id, name: av.Name}
		if info, err := e.Info(); err == nil {
			h.updated = info.ModTime().UnixMilli()
		}
		matched := true
		for _, w := range words {
			if !strings.Contains(strings.ToLower(h.name), strings.ToLower(w)) {
				matched = false
				break
			}
			h.score += smetrics.JaroWinkler(h.name, w, 0.7, 4)
		}
		if matched {
			hits = append(hits, h)
		}
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].score != hits[j].score {
			return hits[i].score > hits[j].score
		}
		return hits[i].updated > hits[j].updated
	})
	if len(hits) > 12 {
		hits = hits[:12]
	}
	results := []*wire.AVSearchResult{}
	for _, h := range hits {
		blockID := k.mirrorBlocks(h.id)[0]
		tree, _, err := k.viewOf(blockID)
		if err != nil {
			continue
		}
		av, err := k.loadAV(h.id)
		if err != nil {
			continue
		}
		hpath := tree.HPath
		if c, err := k.readBoxConf(tree.Box); err == nil {
			hpath = c.Name + hpath
		}
		parent := &wire.AVSearchResult{AvID: h.id, AvName: h.name, BlockID: blockID, HPath: hpath}
		for _, v := range av.Views {
			parent.Children = append(parent.Children, &wire.AVSearchResult{AvID: h.id, AvName: h.name, ViewName: v.Name,
				ViewID: v.ID, ViewLayout: v.LayoutType, BlockID: blockID, HPath: hpath})
		}
		results = append(results, parent)
	}
	return map[string]any{"results": results}, nil
}

func (k *Kernel) duplicateAttributeViewBlock(ctx context.Context, a args) (any, error) {
	id, err := a.str("avID")
	if err != nil {
		return nil, err
	}
	newAvID, newBlockID, err := k.avDuplicate(id)
	if err != nil {
		return nil, err
	}
	return &wire.AVDuplicate{AvID: newAvID, BlockID: newBlockID}, nil
}

func (k *Kernel) addAttributeViewBlocks(ctx context.Context, a args) (any, error) {
	avID, err := a.str("avID")
	if err != nil {
		return nil, err
	}
	var blockID, viewID, previousID string
	for key, dst := range map[string]*string{"blockID": &blockID, "viewID": &viewID, "previousID": &previousID} {
		if *dst, err = a.optStr(key); err != nil {
			return nil, err
		}
	}
	groupID, err := a.optStr("groupID")
	if err != nil {
		return nil, err
	}
	list, ok := a["srcs"].([]any)
	if !ok {
		return nil, errf("argument [srcs] must be an array of objects")
	}
	srcs := make([]map[string]any, 0, len(list))
	for _, x := range list {
		m, ok := x.(map[string]any)
		if !ok {
			return nil, errf("argument [srcs] must be an array of objects")
		}
		srcs = append(srcs, m)
	}
	ignore, err := a.optBool("ignoreDefaultFill")
	if err != nil {
		return nil, err
	}
	return nil, k.avAddRows(ctx, srcs, avID, blockID, viewID, groupID, previousID, ignore)
}

func (k *Kernel) removeAttributeViewBlocks(ctx context.Context, a args) (any, error) {
	avID, err := a.str("avID")
	if err != nil {
		return nil, err
	}
	srcIDs, err := a.strList("srcIDs")
	if err != nil {
		return nil, err
	}
	return nil, k.avRemoveRows(srcIDs, avID)
}

// addAttributeViewKey needs every argument, keyIcon and previousKeyID
// included, as a string.
func (k *Kernel) addAttributeViewKey(ctx context.Context, a args) (any, error) {
	var vals [6]string
	for i, key := range []string{"avID", "keyID", "keyName", "keyType", "keyIcon", "previousKeyID"} {
		s, err := a.str(key)
		if err != nil {
			return nil, err
		}
		vals[i] = s
	}
	return nil, k.avAddKey(vals[0], vals[1], vals[2], vals[3], vals[4], vals[5])
}

func (k *Kernel) removeAttributeViewKey(ctx context.Context, a args) (any, error) {
	avID, err := a.str("avID")
	if err != nil {
		return nil, err
	}
	keyID, err := a.str("keyID")
	if err != nil {
		return nil, err
	}
	removeDest, err := a.optBool("removeRelationDest")
	if err != nil {
		return nil, err
	}
	return nil, k.avRemoveKey(avID, keyID, removeDest)
}

func (k *Kernel) setAttributeViewBlockAttr(ctx context.Context, a args) (any, error) {
	avID, err := a.str("avID")
	if err != nil {
		return nil, err
	}
	keyID, err := a.str("keyID")
	if err != nil {
		return nil, err
	}
	var itemID string
	if _, ok := a["itemID"]; ok {
		if itemID, err = a.str("itemID"); err != nil {
			return nil, err
		}
	} else if _, ok := a["rowID"]; ok {
		return nil, errf("%s", avRowIDDeprecated("/api/av/setAttributeViewBlockAttr"))
	}
	value, ok := a["value"]
	if !ok || value == nil {
		return nil, errf("missing argument [value]")
	}
	v, err := k.avSetCell(avID, keyID, itemID, value)
	if err != nil {
		return nil, err
	}
	return map[string]any{"value": v}, nil
}

func (k *Kernel) batchSetAttributeViewBlockAttrs(ctx context.Context, a args) (any, error) {
	avID, err := a.str("avID")
	if err != nil {
		return nil, err
	}
	values, ok := a["values"].([]any)
	if !ok {
		return nil, errf("argument [values] must be an array")
	}
	return nil, k.avSetCells(avID, values)
}
