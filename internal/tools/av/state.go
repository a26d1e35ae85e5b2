package av

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// DBState is a database as guarded writes hash it: what an agent can see
// and change (its name, keys with their types and options, rows with their
// cells, views, and the database blocks showing it), canonicalised so two
// reads of an unchanged database are equal. Left out is what the kernel
// changes on its own or on a read: every timestamp, the keys' saved order
// (keyIDs, which getAttributeViewKeys rewrites), the current view (which
// rendering a view by ID sets), the numbers' formatted text (which a render
// stores), the cells' own IDs, and the values computed at render time
// (templates, rollups, created/updated, relation contents).
type DBState struct {
	ID      string      `json:"id"`
	Missing bool        `json:"missing,omitempty"`
	Name    string      `json:"name"`
	Blocks  []string    `json:"blocks"`
	Keys    []KeyState  `json:"keys"`
	Rows    []RowState  `json:"rows"`
	Views   []ViewState `json:"views"`
}

// KeyState is one column's definition.
type KeyState struct {
	ID           string                   `json:"id"`
	Name         string                   `json:"name"`
	Type         string                   `json:"type"`
	Icon         string                   `json:"icon,omitempty"`
	Desc         string                   `json:"desc,omitempty"`
	Options      []*siyuan.AVSelectOption `json:"options,omitempty"`
	NumberFormat string                   `json:"numberFormat,omitempty"`
	Template     string                   `json:"template,omitempty"`
	Relation     *siyuan.AVRelation       `json:"relation,omitempty"`
	Rollup       *rollupState             `json:"rollup,omitempty"`
}

type rollupState struct {
	RelationKeyID string `json:"relationKeyID"`
	KeyID         string `json:"keyID"`
	Operator      string `json:"operator,omitempty"`
}

// RowState is one row: its item ID, the block it is bound to ("" when
// detached) and its stored cells by key ID.
type RowState struct {
	ID       string                     `json:"id"`
	Block    string                     `json:"block,omitempty"`
	Detached bool                       `json:"detached,omitempty"`
	Cells    map[string]*siyuan.AVValue `json:"cells"`
}

// ViewState is one view: its layout, filters, sorts, columns and manual
// row order.
type ViewState struct {
	ID       string                 `json:"id"`
	Name     string                 `json:"name"`
	Type     string                 `json:"type"`
	Filters  []*siyuan.AVViewFilter `json:"filters,omitempty"`
	Sorts    []*siyuan.AVViewSort   `json:"sorts,omitempty"`
	PageSize int                    `json:"pageSize,omitempty"`
	Columns  []ColumnState          `json:"columns,omitempty"`
	ItemIDs  []string               `json:"itemIds,omitempty"`
}

// ColumnState is a table view's column.
type ColumnState struct {
	ID     string `json:"id"`
	Hidden bool   `json:"hidden,omitempty"`
	Pin    bool   `json:"pin,omitempty"`
	Wrap   bool   `json:"wrap,omitempty"`
	Width  string `json:"width,omitempty"`
}

// ReadDBState reads a database and the blocks showing it, as the call may
// see them (veil.go). A database whose file does not exist (unknown, or a
// database block never rendered), or that is shown only where the call
// may not look, is Missing.
func ReadDBState(ctx context.Context, env *tools.Env, avID string) (DBState, error) {
	st, _, err := readDB(ctx, env, avID)
	return st, err
}

// readDB is ReadDBState and the veil it was read through (nil when no
// notebook is hidden).
func readDB(ctx context.Context, env *tools.Env, avID string) (DBState, *veil, error) {
	st, v, _, err := readDBStored(ctx, env, avID)
	return st, v, err
}

// readDBStored is readDB and the database as stored (nil when Missing),
// for what the state leaves out.
func readDBStored(ctx context.Context, env *tools.Env, avID string) (DBState, *veil, *siyuan.AttributeView, error) {
	st, av, err := readStored(ctx, env, avID)
	if err != nil || st.Missing || !tools.Hiding(ctx) {
		return st, nil, av, err
	}
	shown, err := tools.VisibleBlocks(ctx, env, st.Blocks)
	if err != nil {
		return st, nil, nil, err
	}
	if len(st.Blocks) > 0 && len(shown) == 0 {
		return DBState{ID: avID, Blocks: []string{}, Missing: true}, nil, nil, nil
	}
	v, err := veilOf(ctx, env, av)
	if err != nil {
		return st, nil, nil, err
	}
	return v.state(canonical(av, shown)), v, av, nil
}

// readStored reads a database and every block showing it, unveiled.
func readStored(ctx context.Context, env *tools.Env, avID string) (DBState, *siyuan.AttributeView, error) {
	st := DBState{ID: avID}
	// The two reads are independent: in parallel, a state costs the
	// database's read, not both round trips.
	var blocks []string
	var berr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer failure.Recover(&berr)
		blocks, berr = env.Kernel.GetMirrorDatabaseBlocks(ctx, avID)
	}()
	av, err := env.Kernel.GetAttributeView(ctx, avID)
	<-done
	if err != nil {
		return st, nil, fmt.Errorf("read database %s: %w", avID, err)
	}
	if berr != nil {
		return st, nil, fmt.Errorf("read the blocks of database %s: %w", avID, berr)
	}
	st.Blocks = slices.Sorted(slices.Values(blocks))
	if av == nil {
		st.Missing = true
		return st, nil, nil
	}
	return canonical(av, st.Blocks), av, nil
}

// canonical builds the state of a stored database.
func canonical(av *siyuan.AttributeView, blocks []string) DBState {
	st := DBState{ID: av.ID, Name: av.Name, Blocks: blocks, Keys: []KeyState{}, Rows: []RowState{}, Views: []ViewState{}}
	rows := map[string]*RowState{}
	row := func(item string) *RowState {
		r, ok := rows[item]
		if !ok {
			r = &RowState{ID: item, Cells: map[string]*siyuan.AVValue{}}
			rows[item] = r
		}
		return r
	}
	for _, kv := range av.KeyValues {
		if kv == nil || kv.Key == nil {
			continue
		}
		k := kv.Key
		ks := KeyState{ID: k.ID, Name: k.Name, Type: k.Type, Icon: k.Icon, Desc: k.Desc, Options: k.Options,
			NumberFormat: k.NumberFormat, Template: k.Template, Relation: k.Relation}
		if k.Rollup != nil {
			ks.Rollup = &rollupState{RelationKeyID: k.Rollup.RelationKeyID, KeyID: k.Rollup.KeyID}
			if k.Rollup.Calc != nil {
				ks.Rollup.Operator = k.Rollup.Calc.Operator
			}
		}
		st.Keys = append(st.Keys, ks)
		for _, v := range kv.Values {
			if v == nil || v.BlockID == "" {
				continue
			}
			r := row(v.BlockID)
			if k.Type == siyuan.AVKeyBlock {
				r.Detached = v.IsDetached
				if v.Block != nil && !v.IsDetached {
					r.Block = v.Block.ID
				}
			}
			if c := storedCell(v); c != nil {
				r.Cells[k.ID] = c
			}
		}
	}
	for _, r := range rows {
		st.Rows = append(st.Rows, *r)
	}
	sort.Slice(st.Rows, func(i, j int) bool { return st.Rows[i].ID < st.Rows[j].ID })
	for _, v := range av.Views {
		if v == nil {
			continue
		}
		vs := ViewState{ID: v.ID, Name: v.Name, Type: v.LayoutType, Filters: v.Filters, Sorts: v.Sorts, PageSize: v.PageSize, ItemIDs: v.ItemIDs}
		if v.Table != nil {
			for _, c := range v.Table.Columns {
				if c != nil {
					vs.Columns = append(vs.Columns, ColumnState{ID: c.ID, Hidden: c.Hidden, Pin: c.Pin, Wrap: c.Wrap, Width: c.Width})
				}
			}
		}
		st.Views = append(st.Views, vs)
	}
	return st
}

// storedCell is a stored value without what is volatile or computed; nil
// for a value that holds nothing of its own (a computed column's).
func storedCell(v *siyuan.AVValue) *siyuan.AVValue {
	c := &siyuan.AVValue{Type: v.Type, IsDetached: v.IsDetached, Text: v.Text, Date: v.Date, MSelect: v.MSelect,
		URL: v.URL, Email: v.Email, Phone: v.Phone, MAsset: v.MAsset, Checkbox: v.Checkbox}
	if v.Block != nil {
		c.Block = &siyuan.AVValueBlock{ID: v.Block.ID, Icon: v.Block.Icon, Content: v.Block.Content}
	}
	if v.Number != nil {
		c.Number = &siyuan.AVValueNumber{Content: v.Number.Content, IsNotEmpty: v.Number.IsNotEmpty}
	}
	if v.Date != nil {
		d := *v.Date
		d.FormattedContent = ""
		c.Date = &d
	}
	if v.Relation != nil {
		c.Relation = &siyuan.AVValueRelation{BlockIDs: v.Relation.BlockIDs}
	}
	switch v.Type {
	case siyuan.AVKeyTemplate, siyuan.AVKeyRollup, siyuan.AVKeyCreated, siyuan.AVKeyUpdated, siyuan.AVKeyLineNumber:
		return nil
	}
	return c
}

// key returns a key of the database by ID.
func (s DBState) key(id string) (KeyState, bool) {
	for _, k := range s.Keys {
		if k.ID == id {
			return k, true
		}
	}
	return KeyState{}, false
}

// primary is the primary key (type block).
func (s DBState) primary() KeyState {
	for _, k := range s.Keys {
		if k.Type == siyuan.AVKeyBlock {
			return k
		}
	}
	return KeyState{}
}

// row returns a row by item ID.
func (s DBState) row(id string) (RowState, bool) {
	for _, r := range s.Rows {
		if r.ID == id {
			return r, true
		}
	}
	return RowState{}, false
}

// rowOfBlock returns the row bound to a block.
func (s DBState) rowOfBlock(block string) (RowState, bool) {
	for _, r := range s.Rows {
		if r.Block == block && !r.Detached {
			return r, true
		}
	}
	return RowState{}, false
}

// same reports whether two states are equal as hashed (JSON).
func same(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// clone deep-copies a state (through JSON: it holds only JSON data).
func (s DBState) clone() DBState {
	var out DBState
	b, _ := json.Marshal(s)
	_ = json.Unmarshal(b, &out)
	return out
}

// without returns the state minus rows and keys (with their cells and
// view columns, and the rows' places in the views): what a readback
// compares to see that nothing but the requested change happened.
func (s DBState) without(rows, keys []string) DBState {
	c := s.clone()
	c.Rows = slices.DeleteFunc(c.Rows, func(r RowState) bool { return slices.Contains(rows, r.ID) })
	c.Keys = slices.DeleteFunc(c.Keys, func(k KeyState) bool { return slices.Contains(keys, k.ID) })
	for i := range c.Rows {
		for _, k := range keys {
			delete(c.Rows[i].Cells, k)
		}
	}
	for i := range c.Views {
		v := &c.Views[i]
		v.ItemIDs = slices.DeleteFunc(v.ItemIDs, func(id string) bool { return slices.Contains(rows, id) })
		if len(v.ItemIDs) == 0 {
			v.ItemIDs = nil
		}
		v.Columns = slices.DeleteFunc(v.Columns, func(col ColumnState) bool { return slices.Contains(keys, col.ID) })
		if len(v.Columns) == 0 {
			v.Columns = nil
		}
	}
	return c
}
