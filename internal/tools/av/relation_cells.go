package av

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/sisyphus-go/sisyphus/internal/canon"
	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// Relation cells: a relation cell holds item IDs of the related database
// (given as values); SiYuan stores each once, in order, and for a two-way
// relation adds the cell's row to the back-link cell of each newly linked
// row at once (and drops it from a row no longer linked when the list
// shrinks). set_cells' manifest then covers those rows of the related
// database too, and the answer reports both databases' hashes.

// relatedCells are the rows of one related database a call's relation
// cells link (before or after), with their back-link cells.
type relatedCells struct {
	AvID    string      `json:"avID"`
	Missing bool        `json:"missing,omitempty"`
	Back    string      `json:"back,omitempty"`
	Cells   []cellState `json:"cells"`
}

// relationIDs are a relation cell's item IDs: values, or value "" (none).
func relationIDs(c cellEdit, where string) ([]string, error) {
	ids := c.Values
	if ids == nil {
		s, ok := c.Value.(string)
		if !ok || s != "" {
			return nil, failure.Invalid("%s: pass values (the related rows' item IDs), or value \"\" to empty it", where)
		}
	}
	out := []string{}
	for i, id := range ids {
		if err := tools.CheckID(fmt.Sprintf("%s values[%d]", where, i), id); err != nil {
			return nil, err
		}
		if !slices.Contains(out, id) {
			out = append(out, id) // SiYuan stores each once
		}
	}
	return out, nil
}

// relationOf is a stored relation cell's IDs ([] when none).
func relationOf(v *siyuan.AVValue) []string {
	if v == nil || v.Relation == nil || v.Relation.BlockIDs == nil {
		return []string{}
	}
	return v.Relation.BlockIDs
}

// readRelated adds, for the relation cells of a, the related databases'
// rows they link before (stored) and after (asked), with their back-link
// cells, and keeps every database read whole for the hashes.
func readRelated(ctx context.Context, env *tools.Env, a cellsArgs, db DBState, st *cellsState) error {
	rows := map[string][]string{} // related avID → rows
	back := map[string]string{}
	for _, c := range a.Cells {
		k, ok := db.key(c.Key)
		if !ok || k.Type != siyuan.AVKeyRelation || k.Relation == nil || k.Relation.AvID == "" {
			continue
		}
		other := k.Relation.AvID
		ids, _ := relationIDs(c, "")
		if r, ok := db.row(c.Row); ok {
			ids = append(ids, relationOf(r.Cells[c.Key])...)
		}
		rows[other] = append(rows[other], ids...)
		if k.Relation.IsTwoWay {
			back[other] = k.Relation.BackKeyID
		}
	}
	if len(rows) == 0 {
		return nil
	}
	st.dbs = map[string]DBState{a.AvID: db}
	for _, other := range slices.Sorted(func(yield func(string) bool) {
		for k := range rows {
			if !yield(k) {
				return
			}
		}
	}) {
		rdb := db
		if other != a.AvID {
			var err error
			if rdb, err = ReadDBState(ctx, env, other); err != nil {
				return err
			}
			st.dbs[other] = rdb
		}
		rc := relatedCells{AvID: other, Missing: rdb.Missing, Back: back[other], Cells: []cellState{}}
		ids := slices.Compact(slices.Sorted(slices.Values(rows[other])))
		for _, id := range ids {
			cs := cellState{Row: id, Key: back[other]}
			if r, ok := rdb.row(id); ok {
				if cs.Key != "" {
					cs.Value = r.Cells[cs.Key]
				}
			} else {
				cs.RowMissing = true
			}
			rc.Cells = append(rc.Cells, cs)
		}
		st.Related = append(st.Related, rc)
	}
	sort.Slice(st.Related, func(i, j int) bool { return st.Related[i].AvID < st.Related[j].AvID })
	return nil
}

// checkRelated refuses a relation value naming a row its related database
// does not have (a row already linked that is gone may stay).
func checkRelated(a cellsArgs, st cellsState) error {
	for _, c := range a.Cells {
		k, ok := st.key(c.Key)
		if !ok || k.Type != siyuan.AVKeyRelation {
			continue
		}
		if k.Relation == nil || k.Relation.AvID == "" {
			return failure.Invalid("column %s is a relation to no database; configure it first", c.Key)
		}
		ids, err := relationIDs(c, "")
		if err != nil {
			return err
		}
		for _, rc := range st.Related {
			if rc.AvID != k.Relation.AvID {
				continue
			}
			if rc.Missing {
				return failure.Missing("database", rc.AvID)
			}
			for _, cs := range rc.Cells {
				if cs.RowMissing && slices.Contains(ids, cs.Row) {
					return failure.New(failure.NotFound, "row %s: the related database %s has no such row (relation values are item IDs)", cs.Row, rc.AvID)
				}
			}
		}
	}
	return nil
}

// backLinked requires, for each two-way relation cell set, that every row
// it links shows the cell's row in its back-link cell.
func backLinked(a cellsArgs, st cellsState) error {
	for _, c := range a.Cells {
		k, ok := st.key(c.Key)
		if !ok || k.Type != siyuan.AVKeyRelation || k.Relation == nil || !k.Relation.IsTwoWay {
			continue
		}
		ids, _ := relationIDs(c, "")
		for _, rc := range st.Related {
			if rc.AvID != k.Relation.AvID {
				continue
			}
			for _, cs := range rc.Cells {
				if slices.Contains(ids, cs.Row) && !slices.Contains(relationOf(cs.Value), c.Row) {
					return fmt.Errorf("row %s of database %s does not link back to row %s", cs.Row, rc.AvID, c.Row)
				}
			}
		}
	}
	return nil
}

// dbHashes are each database's preimage and postimage digests.
func dbHashes(before, after map[string]DBState) (map[string]any, error) {
	out := map[string]any{}
	for id, b := range before {
		c, ok := after[id]
		if !ok {
			continue
		}
		pre, err := canon.Digest(b)
		if err != nil {
			return nil, err
		}
		post, err := canon.Digest(c)
		if err != nil {
			return nil, err
		}
		out[id] = map[string]any{"previousHash": pre, "resultHash": post}
	}
	return out, nil
}
