package av

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tplguard"
)

// What a call may see of a database while a notebook is hidden from
// agents. A database is in the notebooks whose documents show it (its
// database blocks); one shown only where the call may not look is
// missing to it. Of a database it may see:
//
//   - a row bound to a block the call cannot see (in a hidden notebook,
//     or gone: the two are left out alike) is left out, with its cells;
//     detached rows stay;
//   - a relation cell leaves out the rows it links that are left out of
//     their database (every row of a database the call cannot see);
//   - a rollup over such a relation, or over a computed column of the
//     related database, and a template that reads SiYuan's index (SQL
//     helpers) or whose row has such a relation or rollup, are emptied:
//     their values are computed from what the call cannot see;
//   - counts, pages and totals count only what is shown, and the answer
//     says how much was left out (withheld: rows and cells), never what.
//
// Writes address what reads show: a row left out answers as a row the
// database does not have. Without a hidden notebook nothing is veiled and
// nothing is looked up.

// veil is what one call may not see of one database (nil: nothing).
type veil struct {
	avID string
	// rows are this database's rows left out, by item ID.
	rows map[string]bool
	// rels are each row's relation cells: item ID → key ID → linked item IDs.
	rels map[string]map[string][]string
	// keys are this database's keys by ID.
	keys map[string]*siyuan.AVKey
	// related are the databases relation keys link, by avID.
	related map[string]*relatedVeil
	// impure are the templates (by their text) of this database's
	// template keys that call anything but pure functions, decided once
	// per key rather than once per cell.
	impure map[string]bool
}

// relatedVeil is what the call may not see of a related database.
type relatedVeil struct {
	whole bool            // the call cannot see the database at all
	rows  map[string]bool // its rows left out
	keys  map[string]string
}

// withheld counts what an answer left out.
type withheld struct {
	Rows  int `json:"rows"`
	Cells int `json:"cells"`
}

// boundBlocks maps each bound row (item ID) of a stored database to its
// block; detached rows and rows without a block are not in it.
func boundBlocks(av *siyuan.AttributeView) map[string]string {
	out := map[string]string{}
	for _, kv := range av.KeyValues {
		if kv == nil || kv.Key == nil || kv.Key.Type != siyuan.AVKeyBlock {
			continue
		}
		for _, v := range kv.Values {
			if v != nil && v.BlockID != "" && !v.IsDetached && v.Block != nil && v.Block.ID != "" {
				out[v.BlockID] = v.Block.ID
			}
		}
	}
	return out
}

// hiddenRows are the rows of a stored database bound to blocks the call
// cannot see.
func hiddenRows(ctx context.Context, env *tools.Env, av *siyuan.AttributeView) (map[string]bool, error) {
	bound := boundBlocks(av)
	blocks := make([]string, 0, len(bound))
	for _, b := range bound {
		blocks = append(blocks, b)
	}
	seen, err := tools.SeenIndexed(ctx, env, blocks)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for item, b := range bound {
		if !seen[b] {
			out[item] = true
		}
	}
	return out, nil
}

// veilOf works out what the call may not see of a stored database (nil
// when no notebook is hidden).
func veilOf(ctx context.Context, env *tools.Env, av *siyuan.AttributeView) (*veil, error) {
	if av == nil || !tools.Hiding(ctx) {
		return nil, nil
	}
	rows, err := hiddenRows(ctx, env, av)
	if err != nil {
		return nil, err
	}
	v := &veil{avID: av.ID, rows: rows, rels: map[string]map[string][]string{}, keys: map[string]*siyuan.AVKey{}, related: map[string]*relatedVeil{},
		impure: map[string]bool{}}
	for _, kv := range av.KeyValues {
		if kv == nil || kv.Key == nil {
			continue
		}
		v.keys[kv.Key.ID] = kv.Key
		if kv.Key.Type == siyuan.AVKeyTemplate {
			v.impure[kv.Key.Template] = impureTemplate(kv.Key.Template)
		}
		if kv.Key.Type != siyuan.AVKeyRelation {
			continue
		}
		for _, val := range kv.Values {
			if val == nil || val.Relation == nil || val.BlockID == "" {
				continue
			}
			if v.rels[val.BlockID] == nil {
				v.rels[val.BlockID] = map[string][]string{}
			}
			v.rels[val.BlockID][kv.Key.ID] = val.Relation.BlockIDs
		}
	}
	for _, k := range v.keys {
		if k.Type != siyuan.AVKeyRelation || k.Relation == nil || k.Relation.AvID == "" || v.related[k.Relation.AvID] != nil {
			continue
		}
		r, err := relatedVeilOf(ctx, env, av, rows, k.Relation.AvID)
		if err != nil {
			return nil, err
		}
		v.related[k.Relation.AvID] = r
	}
	return v, nil
}

// relatedVeilOf is what the call may not see of the database other, which
// a relation column of av links.
func relatedVeilOf(ctx context.Context, env *tools.Env, av *siyuan.AttributeView, rows map[string]bool, other string) (*relatedVeil, error) {
	typesOf := func(a *siyuan.AttributeView) map[string]string {
		out := map[string]string{}
		for _, kv := range a.KeyValues {
			if kv != nil && kv.Key != nil {
				out[kv.Key.ID] = kv.Key.Type
			}
		}
		return out
	}
	if other == av.ID {
		return &relatedVeil{rows: rows, keys: typesOf(av)}, nil
	}
	shown, err := tools.DatabaseBlocks(ctx, env, other)
	if err != nil {
		return nil, err
	}
	if len(shown) == 0 {
		return &relatedVeil{whole: true}, nil
	}
	oav, err := env.Kernel.GetAttributeView(ctx, other)
	if err != nil {
		return nil, fmt.Errorf("read database %s: %w", other, err)
	}
	if oav == nil {
		return &relatedVeil{whole: true}, nil
	}
	orows, err := hiddenRows(ctx, env, oav)
	if err != nil {
		return nil, err
	}
	return &relatedVeil{rows: orows, keys: typesOf(oav)}, nil
}

// row reports whether a row of this database is left out.
func (v *veil) row(item string) bool { return v != nil && v.rows[item] }

// target reports whether a row of the database avID, linked by a relation
// cell, is left out.
func (v *veil) target(avID, item string) bool {
	if v == nil {
		return false
	}
	r := v.related[avID]
	return r != nil && (r.whole || r.rows[item])
}

// relatedOf is the database a relation key links ("" for another key).
func (v *veil) relatedOf(keyID string) string {
	if k := v.keys[keyID]; k != nil && k.Type == siyuan.AVKeyRelation && k.Relation != nil {
		return k.Relation.AvID
	}
	return ""
}

// keepOf filters the item IDs of the database other that a relation cell
// links.
func (v *veil) keepOf(other string, ids []string) []string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if !v.target(other, id) {
			out = append(out, id)
		}
	}
	return out
}

// linksHidden reports whether a row's relation cell of keyID links a row
// left out.
func (v *veil) linksHidden(item, keyID string) bool {
	if v == nil {
		return false
	}
	other := v.relatedOf(keyID)
	for _, id := range v.rels[item][keyID] {
		if v.target(other, id) {
			return true
		}
	}
	return false
}

// computed reports whether a row's cell of a computed key (rollup,
// template) is emptied: its value comes from what the call cannot see.
func (v *veil) computed(item string, k *siyuan.AVKey) bool {
	if v == nil || k == nil {
		return false
	}
	switch k.Type {
	case siyuan.AVKeyRollup:
		return v.rollupHidden(item, k)
	case siyuan.AVKeyTemplate:
		impure, known := v.impure[k.Template]
		if !known {
			impure = impureTemplate(k.Template)
		}
		if impure {
			return true
		}
		// A template reads its row's cells by name, relation and rollup
		// contents included.
		for id, key := range v.keys {
			switch {
			case key.Type == siyuan.AVKeyRelation && v.linksHidden(item, id):
				return true
			case key.Type == siyuan.AVKeyRollup && v.rollupHidden(item, key):
				return true
			}
		}
	}
	return false
}

// impureTemplate reports whether a template column's template calls
// anything but pure functions: it may then read SiYuan's index, which
// spans every notebook (tplguard keeps the one classification of SiYuan's
// template functions).
func impureTemplate(tpl string) bool { return tplguard.CheckPure(tpl, tplguard.File) != nil }

// rollupHidden reports whether a rollup cell rolls up a row left out, or
// a computed column of the related database (whose values may come from
// further rows).
func (v *veil) rollupHidden(item string, k *siyuan.AVKey) bool {
	if k.Rollup == nil {
		return false
	}
	if v.linksHidden(item, k.Rollup.RelationKeyID) {
		return true
	}
	r := v.related[v.relatedOf(k.Rollup.RelationKeyID)]
	if r == nil {
		return false
	}
	switch r.keys[k.Rollup.KeyID] {
	case siyuan.AVKeyRelation, siyuan.AVKeyRollup, siyuan.AVKeyTemplate:
		return len(v.rels[item][k.Rollup.RelationKeyID]) > 0
	}
	return r.whole && len(v.rels[item][k.Rollup.RelationKeyID]) > 0
}

// value is a cell of the key k (nil: the one its KeyID names) as the call
// may see it: nil when emptied, else the value with the relation targets
// left out (a copy when changed); w counts what was withheld. A relation
// value whose key is not a relation to a known database is emptied: what
// it links cannot be told.
func (v *veil) value(item string, k *siyuan.AVKey, val *siyuan.AVValue, w *withheld) *siyuan.AVValue {
	if v == nil || val == nil {
		return val
	}
	if k == nil {
		k = v.keys[val.KeyID]
	}
	switch {
	case val.Relation != nil:
		if k == nil || k.Type != siyuan.AVKeyRelation || k.Relation == nil || v.related[k.Relation.AvID] == nil {
			w.Cells++
			return nil
		}
		other := k.Relation.AvID
		hidden := func(c *siyuan.AVValue) bool { return c == nil || v.target(other, c.BlockID) }
		keep := v.keepOf(other, val.Relation.BlockIDs)
		if len(keep) == len(val.Relation.BlockIDs) && !slices.ContainsFunc(val.Relation.Contents, hidden) {
			return val
		}
		c := *val
		rel := *val.Relation
		rel.BlockIDs = keep
		rel.Contents = slices.DeleteFunc(slices.Clone(rel.Contents), hidden)
		c.Relation = &rel
		w.Cells++
		return &c
	case (val.Type == siyuan.AVKeyRollup || val.Type == siyuan.AVKeyTemplate) && v.computed(item, k):
		w.Cells++
		return nil
	}
	return val
}

// attributeView is a stored database as the call may see it: without the
// rows left out, relation cells without their hidden targets, emptied
// computed cells, and views and column calculations without what was
// computed over every row.
func (v *veil) attributeView(av *siyuan.AttributeView, w *withheld) (*siyuan.AttributeView, error) {
	if v == nil {
		return av, nil
	}
	var c siyuan.AttributeView
	b, err := json.Marshal(av)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, err
	}
	left := map[string]bool{}
	for _, kv := range c.KeyValues {
		if kv == nil {
			continue
		}
		if kv.Key != nil && kv.Key.Rollup != nil && kv.Key.Rollup.Calc != nil {
			kv.Key.Rollup.Calc.Result = nil // computed over every row
		}
		kept := kv.Values[:0]
		for _, val := range kv.Values {
			if val == nil {
				continue
			}
			if v.row(val.BlockID) {
				left[val.BlockID] = true
				continue
			}
			if val = v.value(val.BlockID, kv.Key, val, w); val != nil {
				kept = append(kept, val)
			}
		}
		kv.Values = kept
	}
	w.Rows += len(left)
	for _, view := range c.Views {
		if view == nil {
			continue
		}
		view.ItemIDs = slices.DeleteFunc(view.ItemIDs, v.row)
		view.GroupItemIDs = slices.DeleteFunc(view.GroupItemIDs, v.row)
		// Groups and their calculations are worked out over every row.
		view.Groups, view.GroupCalc = nil, nil
		if view.Table != nil {
			view.Table.RowIDs = slices.DeleteFunc(view.Table.RowIDs, v.row)
			for _, col := range view.Table.Columns {
				if col != nil {
					col.Calc = calcWithoutResult(col.Calc)
				}
			}
		}
	}
	return &c, nil
}

// calcWithoutResult is a column calculation without its stored result
// (computed over every row); its operator stays.
func calcWithoutResult(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return raw
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	if _, ok := m["result"]; !ok {
		return raw
	}
	delete(m, "result")
	b, err := json.Marshal(m)
	if err != nil {
		return nil
	}
	return b
}

// state is a database state as the call may see it: without the rows left
// out (nor their places in the views), and relation cells without their
// hidden targets. Writes are guarded by it, so nothing the call cannot see
// changes its hash, and a row left out is a row the state does not have.
func (v *veil) state(st DBState) DBState {
	if v == nil {
		return st
	}
	st.Rows = slices.DeleteFunc(st.Rows, func(r RowState) bool { return v.row(r.ID) })
	for i := range st.Rows {
		for k, c := range st.Rows[i].Cells {
			if c != nil && c.Relation != nil {
				cc := *c
				ids := []string{} // what a relation to no known database links cannot be told
				if other := v.relatedOf(k); v.related[other] != nil {
					ids = v.keepOf(other, c.Relation.BlockIDs)
				}
				cc.Relation = &siyuan.AVValueRelation{BlockIDs: ids}
				st.Rows[i].Cells[k] = &cc
			}
		}
	}
	for i := range st.Views {
		st.Views[i].ItemIDs = slices.DeleteFunc(st.Views[i].ItemIDs, v.row)
		if len(st.Views[i].ItemIDs) == 0 {
			st.Views[i].ItemIDs = nil
		}
	}
	return st
}

// hiddenTargets are the targets of a row's stored relation cell that the
// call cannot see: a write of the cell keeps them, as it cannot see them.
func (v *veil) hiddenTargets(item, keyID string) []string {
	if v == nil {
		return nil
	}
	other := v.relatedOf(keyID)
	var out []string
	for _, id := range v.rels[item][keyID] {
		if v.target(other, id) {
			out = append(out, id)
		}
	}
	return out
}

// matchesQuery is SiYuan's render query over the cells a call may see: a
// row is kept when one of its cells holds every word (ignoring case).
func matchesQuery(query string, texts []string) bool {
	words := strings.Fields(strings.ToLower(query))
	if len(words) == 0 {
		return true
	}
	for _, t := range texts {
		t = strings.ToLower(t)
		all := true
		for _, w := range words {
			if !strings.Contains(t, w) {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

// refuseWithheld refuses a change of a whole database that would reach
// rows the call cannot see (their cells, their blocks): it says no more
// than a read's withheld count does, that such rows exist.
func refuseWithheld(ctx context.Context, env *tools.Env, avID, why string) error {
	if !tools.Hiding(ctx) {
		return nil
	}
	av, err := env.Kernel.GetAttributeView(ctx, avID)
	if err != nil {
		return fmt.Errorf("read database %s: %w", avID, err)
	}
	v, err := veilOf(ctx, env, av)
	if err != nil || v == nil || len(v.rows) == 0 {
		return err
	}
	e := failure.New(failure.PermissionDenied, "database %s has rows this call cannot see (withheld in its reads: bound to blocks in notebooks hidden from agents, or gone); %s, so nothing was run", avID, why)
	e.Action = "ask the person who runs Sisyphus to make this change in SiYuan"
	return e.Attempted(false)
}
