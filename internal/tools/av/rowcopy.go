package av

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// duplicate_rows copies rows as SiYuan's editor does, one
// duplicateAttrViewRow operation per row, each a stage of a staged
// creation: the copies' item IDs are reserved before the first is sent,
// each stage is confirmed by its copy showing, and a stage in doubt is
// never sent again (SiYuan keeps one row per ID but would copy its cells
// twice). A copy is a detached row with the source's primary-key text and
// every stored cell; a two-way relation cell adds the copy to the related
// rows' back cells.

const copyPrefix = "copy:"

type dupRowsArgs struct {
	dbArg
	ctxBlock
	Sources  []string `arg:"sourceRowIDs" help:"the rows to copy (item IDs, as render shows them; not bound block IDs or cell IDs), in order; at most 50" id:"" required:""`
	Previous string   `arg:"previousID" help:"a row (item ID) the copies follow, in order, in every view holding it (default: last in every view)" id:""`
}

// dupRowsState is what duplicate_rows reads and changes: the source rows
// with their cells, where the copies go (each view's row after previousID,
// or its last row), and the back cells of the rows the sources' two-way
// relations link. db and valueIDs are for Check, not hashed.
type dupRowsState struct {
	Missing bool                                  `json:"missing,omitempty"`
	Blocks  []string                              `json:"blocks"`
	Sources []RowState                            `json:"sources"`
	Places  map[string][2]string                  `json:"places"`
	Back    map[string]map[string]*siyuan.AVValue `json:"back,omitempty"`
	db      DBState
	values  map[string]string // a cell's value ID → its row
}

// twoWayTargets are the databases a copy of the rows changes through
// two-way relations, with the back key and the related rows of each
// relation cell.
func twoWayTargets(db DBState, sources []string) map[string]map[string][]string {
	out := map[string]map[string][]string{} // avID → back key → rows
	for _, id := range sources {
		r, ok := db.row(id)
		if !ok {
			continue
		}
		for _, k := range db.Keys {
			c := r.Cells[k.ID]
			if k.Type != siyuan.AVKeyRelation || k.Relation == nil || !k.Relation.IsTwoWay || c == nil || c.Relation == nil || len(c.Relation.BlockIDs) == 0 {
				continue
			}
			if out[k.Relation.AvID] == nil {
				out[k.Relation.AvID] = map[string][]string{}
			}
			out[k.Relation.AvID][k.Relation.BackKeyID] = append(out[k.Relation.AvID][k.Relation.BackKeyID], c.Relation.BlockIDs...)
		}
	}
	return out
}

func readDupRows(ctx context.Context, env *tools.Env, a dupRowsArgs) (dupRowsState, error) {
	db, _, av, err := readDBStored(ctx, env, a.AvID)
	if err != nil {
		return dupRowsState{}, err
	}
	st := dupRowsState{Missing: db.Missing, Blocks: db.Blocks, Sources: []RowState{}, Places: map[string][2]string{}, db: db, values: map[string]string{}}
	if db.Missing {
		return st, nil
	}
	if av != nil {
		for _, kv := range av.KeyValues {
			if kv == nil {
				continue
			}
			for _, v := range kv.Values {
				if v != nil && v.ID != "" {
					st.values[v.ID] = v.BlockID
				}
			}
		}
	}
	for _, id := range a.Sources {
		if r, ok := db.row(id); ok {
			st.Sources = append(st.Sources, r)
		}
	}
	for _, v := range db.Views {
		at, next := "", ""
		if i := slices.Index(v.ItemIDs, a.Previous); a.Previous != "" && i >= 0 {
			at = a.Previous
			if i+1 < len(v.ItemIDs) {
				next = v.ItemIDs[i+1]
			}
		} else if len(v.ItemIDs) > 0 {
			at = v.ItemIDs[len(v.ItemIDs)-1]
		}
		st.Places[v.ID] = [2]string{at, next}
	}
	for other, backs := range twoWayTargets(db, a.Sources) {
		o := db
		if other != a.AvID {
			if o, err = ReadDBState(ctx, env, other); err != nil {
				return st, err
			}
		}
		if st.Back == nil {
			st.Back = map[string]map[string]*siyuan.AVValue{}
		}
		cells := map[string]*siyuan.AVValue{}
		for back, rows := range backs {
			for _, row := range rows {
				if r, ok := o.row(row); ok {
					cells[back+"/"+row] = r.Cells[back]
				}
			}
		}
		st.Back[other] = cells
	}
	return st, nil
}

func checkDupRows(a dupRowsArgs, st dupRowsState) error {
	if st.Missing {
		return failure.Missing("database", a.AvID)
	}
	if a.BlockID != "" && !slices.Contains(st.Blocks, a.BlockID) {
		return failure.Invalid("block %s does not show database %s", a.BlockID, a.AvID)
	}
	rowArg := func(what, id string) error {
		if _, ok := st.db.row(id); ok {
			return nil
		}
		if r, ok := st.db.rowOfBlock(id); ok {
			e := failure.Invalid("%s %s is the block bound to row %s; pass the row's item ID", what, id, r.ID)
			return e.With("rowID", r.ID)
		}
		if row, ok := st.values[id]; ok {
			e := failure.Invalid("%s %s is the ID of a cell of row %s; pass the row's item ID", what, id, row)
			return e.With("rowID", row)
		}
		return failure.New(failure.NotFound, "%s %s: database %s has no such row (row IDs are item IDs, as render shows them)", what, id, a.AvID)
	}
	for i, id := range a.Sources {
		if err := rowArg("sourceRowIDs["+strconv.Itoa(i)+"]", id); err != nil {
			return err
		}
	}
	if a.Previous != "" {
		if err := rowArg("previousID", a.Previous); err != nil {
			return err
		}
	}
	return nil
}

var duplicateRows = tools.Write[dupRowsArgs, dupRowsState]{
	Name: "duplicate_rows", Summary: "copy rows, in order, as detached rows (the primary key's text and every stored cell; a two-way relation cell also links the copy back), after previousID (default: last); answers the copies' item IDs as rowIDs; a replay after a lost reply never makes second copies",
	Policy: guarded, Dangerous: true,
	Example: map[string]any{"avID": "20260812120000-abcdefg", "sourceRowIDs": []string{"20260812120000-hijklmn"}, "validateOnly": true},
	Validate: func(a *dupRowsArgs) error {
		if len(a.Sources) == 0 || len(a.Sources) > 50 {
			return failure.Invalid("pass 1 to 50 sourceRowIDs")
		}
		return nil
	},
	// Write where the database is shown and where each database its
	// two-way relations change is shown.
	Scope: tools.Scope[dupRowsArgs]{Resolve: func(ctx context.Context, env *tools.Env, a dupRowsArgs) ([]tools.Touch, error) {
		ts, err := dbTouchesAt(ctx, env, a.AvID, a.BlockID, tools.LevelWrite)
		if err != nil {
			return nil, err
		}
		db, err := ReadDBState(ctx, env, a.AvID)
		if err != nil {
			return nil, err
		}
		for other := range twoWayTargets(db, a.Sources) {
			if other == a.AvID {
				continue
			}
			o, err := dbTouches(ctx, env, other, tools.LevelWrite)
			if err != nil {
				return nil, err
			}
			ts = append(ts, o...)
		}
		return ts, nil
	}},
	Targets: func(a dupRowsArgs) []string { return []string{a.AvID} },
	State:   readDupRows,
	Check:   checkDupRows,
	Stages: &tools.Stages[dupRowsArgs, dupRowsState]{
		Reserve: func(a dupRowsArgs, _ dupRowsState) (map[string]string, error) {
			ids := map[string]string{idAV: a.AvID, idPrev: a.Previous}
			for i := range a.Sources {
				ids[copyPrefix+strconv.Itoa(i)] = newID()
			}
			return ids, nil
		},
		Steps: func(a dupRowsArgs) []tools.Step[dupRowsArgs] {
			steps := make([]tools.Step[dupRowsArgs], 0, len(a.Sources))
			for i := range a.Sources {
				steps = append(steps, copyRowStep(i))
			}
			return steps
		},
		Receipt: func(a dupRowsArgs, ids map[string]string, done []string) tools.Payload {
			return tools.Payload{"avID": a.AvID, "sourceRowIDs": a.Sources, "rowIDs": listed(ids, copyPrefix, len(a.Sources)),
				"previousID": a.Previous, "copied": len(done), "stage": last(done)}
		},
	},
	Readback: func(ctx context.Context, env *tools.Env, a dupRowsArgs, p tools.Payload) (any, error) {
		copies, err := tools.PayloadKey[[]string](p, "rowIDs")
		if err != nil {
			return nil, err
		}
		st, err := readChanged(ctx, env, a.AvID, func(st DBState) error { return rowsCopied(ctx, env, a, st, copies) })
		if err != nil {
			return nil, err
		}
		return st, nil
	},
}

// copyRowStep copies source i after the previous copy (the first after
// previousID; without it, each last).
func copyRowStep(i int) tools.Step[dupRowsArgs] {
	key := copyPrefix + strconv.Itoa(i)
	return tools.Step[dupRowsArgs]{Name: key,
		Do: func(ctx context.Context, env *tools.Env, a dupRowsArgs, ids map[string]string) (map[string]string, error) {
			prev := a.Previous
			if i > 0 && prev != "" {
				prev = ids[copyPrefix+strconv.Itoa(i-1)]
			}
			op := siyuan.DuplicateAttrViewRowOp(a.AvID, a.Sources[i], ids[key], prev)
			_, err := env.Kernel.Transactions(ctx, []siyuan.Transaction{{DoOperations: []siyuan.Operation{op}}})
			return nil, tools.WriteFailure(err, false)
		},
		Present: func(ctx context.Context, env *tools.Env, _ dupRowsArgs, ids map[string]string) (bool, error) {
			return avPresent(ctx, env, ids[idAV], func(av *siyuan.AttributeView) bool { return hasRow(av, ids[key]) })
		},
	}
}

// rowsCopied requires each copy: a detached row with its source's text
// and stored cells, in order after previousID (or last) in every view,
// and linked back by the related rows of its two-way relations.
func rowsCopied(ctx context.Context, env *tools.Env, a dupRowsArgs, st DBState, copies []string) error {
	if len(copies) != len(a.Sources) {
		return fmt.Errorf("the receipt names %d copies for %d rows", len(copies), len(a.Sources))
	}
	pk := st.primary().ID
	for i, id := range copies {
		src, ok := st.row(a.Sources[i])
		if !ok {
			return fmt.Errorf("database %s no longer has row %s", a.AvID, a.Sources[i])
		}
		c, ok := st.row(id)
		if !ok || !c.Detached || c.Block != "" {
			return fmt.Errorf("database %s shows no detached row %s", a.AvID, id)
		}
		text := func(r RowState) string {
			if v := r.Cells[pk]; v != nil && v.Block != nil {
				return v.Block.Content
			}
			return ""
		}
		if text(c) != text(src) {
			return fmt.Errorf("row %s has the text %q, want %q", id, text(c), text(src))
		}
		if !same(copiedCells(src, pk), copiedCells(c, pk)) {
			return fmt.Errorf("row %s's cells are not those of row %s", id, a.Sources[i])
		}
	}
	for _, v := range st.Views {
		at := len(v.ItemIDs) - len(copies)
		if a.Previous != "" {
			j := slices.Index(v.ItemIDs, a.Previous)
			if j < 0 {
				continue
			}
			at = j + 1
		}
		if at < 0 || at+len(copies) > len(v.ItemIDs) || !slices.Equal(v.ItemIDs[at:at+len(copies)], copies) {
			return fmt.Errorf("view %s of database %s does not show the copies where asked", v.ID, a.AvID)
		}
	}
	for i, id := range copies {
		for other, backs := range twoWayTargets(st, a.Sources[i:i+1]) {
			o := st
			if other != a.AvID {
				var err error
				if o, err = ReadDBState(ctx, env, other); err != nil {
					return err
				}
			}
			for back, rows := range backs {
				for _, row := range rows {
					r, ok := o.row(row)
					if !ok {
						continue // a related row gone: SiYuan links nothing
					}
					if c := r.Cells[back]; c == nil || c.Relation == nil || !slices.Contains(c.Relation.BlockIDs, id) {
						return fmt.Errorf("row %s of database %s does not link back to the copy %s", row, other, id)
					}
				}
			}
		}
	}
	return nil
}

// copiedCells are a row's cells as a copy has them: every stored cell but
// the primary key's, without the detached mark and the options' colours
// (a copy takes the column's).
func copiedCells(r RowState, pk string) map[string]*siyuan.AVValue {
	out := map[string]*siyuan.AVValue{}
	for k, v := range r.Cells {
		if k == pk || v == nil {
			continue
		}
		c := *v
		c.IsDetached = false
		if len(c.MSelect) > 0 {
			c.MSelect = nil
			for _, o := range v.MSelect {
				if o != nil {
					c.MSelect = append(c.MSelect, &siyuan.AVValueSelect{Content: o.Content})
				}
			}
		}
		out[k] = &c
	}
	return out
}
