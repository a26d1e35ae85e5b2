package av

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// Upstream 0.6.8's relation actions: configure_two_way_relation and
// configure_rollup configure an existing relation or rollup column,
// set_relation sets one relation cell by item IDs. Each reads (and
// hashes) the database and the one its relation links, refuses at
// preflight what that state shows cannot be right, sends one kernel
// write, and requires exactly the change on both sides.

// pairState is a database and the one its relation column links (nil
// when the relation links the database itself): both are hashed.
type pairState struct {
	Source      DBState  `json:"source"`
	Destination *DBState `json:"destination,omitempty"`
}

// dest is the database the relation links.
func (p pairState) dest() DBState {
	if p.Destination != nil {
		return *p.Destination
	}
	return p.Source
}

// readPair reads a database and, when another, the one it relates to.
func readPair(ctx context.Context, env *tools.Env, avID, destID string) (pairState, error) {
	src, err := ReadDBState(ctx, env, avID)
	if err != nil {
		return pairState{}, err
	}
	st := pairState{Source: src}
	if destID != "" && destID != avID {
		d, err := ReadDBState(ctx, env, destID)
		if err != nil {
			return pairState{}, err
		}
		st.Destination = &d
	}
	return st, nil
}

// pairHashes are both databases' preimage and postimage digests (one
// when the relation links the database itself).
func pairHashes(before, after pairState) (map[string]any, error) {
	b, c := map[string]DBState{before.Source.ID: before.Source}, map[string]DBState{after.Source.ID: after.Source}
	if before.Destination != nil && after.Destination != nil {
		b[before.Destination.ID], c[after.Destination.ID] = *before.Destination, *after.Destination
	}
	return dbHashes(b, c)
}

// awaitPair reads both databases again until check passes, then answers
// the state read and adds both hashes to the payload.
func awaitPair(ctx context.Context, env *tools.Env, avID, destID string, before pairState, p tools.Payload, check func(pairState) error) (any, error) {
	after, err := tools.Await(ctx, func(ctx context.Context) (pairState, error) {
		return readPair(ctx, env, avID, destID)
	}, check)
	if err != nil {
		return nil, err
	}
	if h, err := pairHashes(before, after); err == nil {
		p["hashes"] = h
	}
	return after, nil
}

// pairTouches are the notebooks of both databases: the source's at
// write, the destination's at need; each block given must show its
// database.
func pairTouches(ctx context.Context, env *tools.Env, avID, blockID, destID, destBlockID string, need tools.Level) ([]tools.Touch, error) {
	ts, err := dbTouchesAt(ctx, env, avID, blockID, tools.LevelWrite)
	if err != nil || destID == "" || destID == avID && destBlockID == "" {
		return ts, err
	}
	other, err := dbTouchesAt(ctx, env, destID, destBlockID, need)
	if err != nil {
		return nil, err
	}
	return append(ts, other...), nil
}

// relationOfKey is the database a relation column of avID links ("" when
// the column is not a configured relation), from its columns.
func relationOfKey(ctx context.Context, env *tools.Env, avID, keyID string) (dest string, twoWay bool, err error) {
	keys, err := env.Kernel.GetAttributeViewKeysByAvID(ctx, avID)
	if err != nil {
		return "", false, fmt.Errorf("read the columns of database %s: %w", avID, err)
	}
	for _, k := range keys {
		if k.ID == keyID && k.Type == siyuan.AVKeyRelation && k.Relation != nil {
			return k.Relation.AvID, k.Relation.IsTwoWay, nil
		}
	}
	return "", false, nil
}

// needKey is a column of the state of the type wanted, or the refusal.
func needKey(st DBState, arg, id, typ string) (KeyState, error) {
	if err := exists(st); err != nil {
		return KeyState{}, err
	}
	k, ok := st.key(id)
	if !ok {
		return k, failure.New(failure.NotFound, "%s %s: database %s has no such column", arg, id, st.ID)
	}
	if k.Type != typ {
		return k, failure.Invalid("%s %s: column %q of database %s is a %s column, not a %s one", arg, id, k.Name, st.ID, k.Type, typ)
	}
	return k, nil
}

// needRow is a row of the state by item ID, or the refusal: a block
// bound to a row is named as such.
func needRow(st DBState, arg, id string) (RowState, error) {
	if r, ok := st.row(id); ok {
		return r, nil
	}
	if r, ok := st.rowOfBlock(id); ok {
		return r, failure.Invalid("%s %s is the block bound to row %s of database %s: pass the row's item ID", arg, id, r.ID, st.ID)
	}
	return RowState{}, failure.New(failure.NotFound, "%s %s: database %s has no such row (rows are named by their item IDs)", arg, id, st.ID)
}

// ---- configure_two_way_relation ------------------------------------------

type twoWayArgs struct {
	AvID        string `arg:"avID" help:"the database holding the relation column" id:"" required:""`
	BlockID     string `arg:"blockID" help:"a database block showing avID" id:"" required:""`
	KeyID       string `arg:"keyID" help:"the relation column to configure (an existing relation key of avID)" id:"" required:""`
	DestAvID    string `arg:"destinationAvID" help:"the database whose rows it links (may be avID)" id:"" required:""`
	DestBlockID string `arg:"destinationBlockID" help:"a database block showing destinationAvID (optional; permission is that of every notebook showing it)" id:""`
	BackKeyID   string `arg:"backRelationKeyID" help:"the back column's ID in destinationAvID: an unconfigured relation column, one already linking avID, or a new ID (created, linking the rows keyID already links)" id:"" required:""`
	SourceName  string `arg:"sourceName" help:"the relation column's name" required:""`
	DestName    string `arg:"destinationName" help:"the back column's name" required:""`
}

var configureTwoWay = tools.Write[twoWayArgs, pairState]{
	Name: "configure_two_way_relation", Summary: "make an existing relation column a two-way relation to destinationAvID, with the back column backRelationKeyID there; both databases' hashes are answered (a person must confirm)",
	Policy: guarded, Dangerous: true,
	Example: map[string]any{"avID": "20260812120000-abcdefg", "blockID": "20260812120000-hijklmn", "keyID": "20260812120200-opqrstu", "destinationAvID": "20260812120300-vwxyzab",
		"backRelationKeyID": "20260812120400-cdefghi", "sourceName": "Tasks", "destinationName": "Projects", "validateOnly": true},
	Validate: func(a *twoWayArgs) error {
		a.SourceName, a.DestName = strings.TrimSpace(a.SourceName), strings.TrimSpace(a.DestName)
		switch {
		case a.SourceName == "" || a.DestName == "":
			return failure.Invalid("sourceName and destinationName must not be empty")
		case a.DestAvID == a.AvID && a.BackKeyID == a.KeyID:
			return failure.Invalid("backRelationKeyID must be another column than keyID")
		}
		return nil
	},
	Scope: tools.Scope[twoWayArgs]{Resolve: func(ctx context.Context, env *tools.Env, a twoWayArgs) ([]tools.Touch, error) {
		ts, err := pairTouches(ctx, env, a.AvID, a.BlockID, a.DestAvID, a.DestBlockID, tools.LevelWrite)
		if err != nil {
			return nil, err
		}
		// A new back column links the rows the column already links: rows
		// the call cannot see would be linked unseen.
		if err := refuseWithheld(ctx, env, a.AvID, "a new back column links the rows its relation already links"); err != nil {
			return nil, err
		}
		return ts, nil
	}},
	Targets: func(a twoWayArgs) []string { return uniq(a.AvID, a.DestAvID) },
	State: func(ctx context.Context, env *tools.Env, a twoWayArgs) (pairState, error) {
		return readPair(ctx, env, a.AvID, a.DestAvID)
	},
	Check: checkTwoWay,
}

// configureTwoWayAction hands the readback the state before.
var configureTwoWayAction = tools.WriteWith[twoWayArgs, pairState, pairState]{Write: configureTwoWay,
	Execute: func(ctx context.Context, env *tools.Env, a twoWayArgs, st pairState) (tools.Payload, pairState, error) {
		_, exists := st.dest().key(a.BackKeyID)
		op := siyuan.UpdateAttrViewColRelationOp(a.AvID, a.KeyID, a.SourceName, a.DestAvID, true, a.BackKeyID, a.DestName)
		if _, err := env.Kernel.Transactions(ctx, []siyuan.Transaction{{DoOperations: []siyuan.Operation{op}}}); err != nil {
			return nil, st, tools.WriteFailure(err, false)
		}
		return tools.Payload{"avID": a.AvID, "keyID": a.KeyID, "destinationAvID": a.DestAvID, "backRelationKeyID": a.BackKeyID, "backKeyCreated": !exists}, st, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a twoWayArgs, p tools.Payload, before pairState) (any, error) {
		want := twoWayResult(a, before)
		return awaitPair(ctx, env, a.AvID, a.DestAvID, before, p, func(after pairState) error { return samePair(want, after, a.BackKeyID) })
	},
}

func uniq(ids ...string) []string {
	out := []string{}
	for _, id := range ids {
		if id != "" && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

func checkTwoWay(a twoWayArgs, st pairState) error {
	k, err := needKey(st.Source, "keyID", a.KeyID, siyuan.AVKeyRelation)
	if err != nil {
		return err
	}
	dest := st.dest()
	if dest.Missing {
		return failure.Missing("database", a.DestAvID)
	}
	if r := k.Relation; r != nil && r.AvID != "" {
		// SiYuan makes the old back column one-way wherever it is: a
		// third database would change unchecked.
		if r.IsTwoWay && r.AvID != a.AvID && r.AvID != a.DestAvID {
			return failure.Invalid("column %s is now a two-way relation to database %s, which this call would change too; remove or reconfigure it there first (remove_column, or configure it to %s)", a.KeyID, r.AvID, r.AvID)
		}
		// Its cells hold item IDs of the database it links now.
		if r.AvID != a.DestAvID {
			for _, row := range st.Source.Rows {
				if len(relationOf(row.Cells[a.KeyID])) > 0 {
					return failure.Invalid("column %s links rows of database %s (row %s and maybe others); empty its cells first (set_relation with relatedItemIDs []), or they would name rows %s does not have", a.KeyID, r.AvID, row.ID, a.DestAvID)
				}
			}
		}
	}
	bk, ok := dest.key(a.BackKeyID)
	if !ok {
		return nil
	}
	switch r := bk.Relation; {
	case bk.Type != siyuan.AVKeyRelation:
		return failure.Invalid("backRelationKeyID %s: column %q of database %s is a %s column, not a relation one", a.BackKeyID, bk.Name, a.DestAvID, bk.Type)
	case r != nil && r.AvID != "" && r.AvID != a.AvID:
		return failure.Invalid("backRelationKeyID %s: column %q of database %s links database %s; pass an unconfigured relation column, or a new ID", a.BackKeyID, bk.Name, a.DestAvID, r.AvID)
	case r != nil && r.IsTwoWay && r.BackKeyID != a.KeyID:
		return failure.Invalid("backRelationKeyID %s: column %q is the back column of column %s of database %s; pass another, or a new ID", a.BackKeyID, bk.Name, r.BackKeyID, a.AvID)
	}
	return nil
}

// pairDBs are the databases of a pair by avID (one when it relates to
// itself), as pointers into it.
func (p *pairState) dbs() map[string]*DBState {
	out := map[string]*DBState{p.Source.ID: &p.Source}
	if p.Destination != nil {
		out[p.Destination.ID] = p.Destination
	}
	return out
}

// clone deep-copies a pair.
func (p pairState) clone() pairState {
	c := pairState{Source: p.Source.clone()}
	if p.Destination != nil {
		d := p.Destination.clone()
		c.Destination = &d
	}
	return c
}

// setKey applies f to the key id of st, when it has it.
func setKey(st *DBState, id string, f func(*KeyState)) bool {
	for i := range st.Keys {
		if st.Keys[i].ID == id {
			f(&st.Keys[i])
			return true
		}
	}
	return false
}

// relationCell is a stored relation cell as the state holds it.
func relationCell(ids []string) *siyuan.AVValue {
	return &siyuan.AVValue{Type: siyuan.AVKeyRelation, Relation: &siyuan.AVValueRelation{BlockIDs: ids}}
}

// setRelationCell sets the relation cell (row, key) of st, adding the row
// when the kernel would (a value for an item it does not have).
func setRelationCell(st *DBState, row, key string, ids []string) {
	for i := range st.Rows {
		if st.Rows[i].ID == row {
			st.Rows[i].Cells[key] = relationCell(ids)
			return
		}
	}
	st.Rows = append(st.Rows, RowState{ID: row, Cells: map[string]*siyuan.AVValue{key: relationCell(ids)}})
	slices.SortFunc(st.Rows, func(x, y RowState) int { return strings.Compare(x.ID, y.ID) })
}

// twoWayResult is the state SiYuan's updateAttrViewColRelation leaves:
// the column renamed and two-way; the old back column (if another) made
// one-way; the back column configured and renamed, or created (last in
// every table view) with a back link for each row the column links.
func twoWayResult(a twoWayArgs, before pairState) pairState {
	want := before.clone()
	dbs := want.dbs()
	src, dest := dbs[a.AvID], dbs[a.DestAvID]
	var old siyuan.AVRelation
	setKey(src, a.KeyID, func(k *KeyState) {
		if k.Relation != nil {
			old = *k.Relation
		}
		k.Name, k.Relation = a.SourceName, &siyuan.AVRelation{AvID: a.DestAvID, IsTwoWay: true, BackKeyID: a.BackKeyID}
	})
	if o := dbs[old.AvID]; old.IsTwoWay && o != nil {
		setKey(o, old.BackKeyID, func(k *KeyState) {
			if k.Relation != nil && k.Relation.AvID == a.AvID && k.Relation.IsTwoWay {
				r := *k.Relation
				r.IsTwoWay, r.BackKeyID = false, ""
				k.Relation = &r
			}
		})
	}
	back := &siyuan.AVRelation{AvID: a.AvID, IsTwoWay: true, BackKeyID: a.KeyID}
	if setKey(dest, a.BackKeyID, func(k *KeyState) { k.Name, k.Relation = a.DestName, back }) {
		return want
	}
	dest.Keys = append(dest.Keys, KeyState{ID: a.BackKeyID, Name: a.DestName, Type: siyuan.AVKeyRelation, Relation: back})
	for i := range dest.Views {
		if dest.Views[i].Type == "table" {
			dest.Views[i].Columns = append(dest.Views[i].Columns, ColumnState{ID: a.BackKeyID})
		}
	}
	links := map[string][]string{}
	var order []string
	for _, r := range src.Rows {
		for _, id := range relationOf(r.Cells[a.KeyID]) {
			if _, ok := links[id]; !ok {
				order = append(order, id)
			}
			if !slices.Contains(links[id], r.ID) {
				links[id] = append(links[id], r.ID)
			}
		}
	}
	for _, id := range order {
		setRelationCell(dest, id, a.BackKeyID, links[id])
	}
	return want
}

// samePair requires the state read to be want, comparing the relation
// cells of key by their item IDs alone (the kernel's back links carry
// nothing else of theirs).
func samePair(want, got pairState, keys ...string) error {
	w, g := want.clone(), got.clone()
	for id, wd := range w.dbs() {
		gd := g.dbs()[id]
		if gd == nil || gd.Missing {
			return fmt.Errorf("database %s is gone", id)
		}
		for _, db := range []*DBState{wd, gd} {
			for i := range db.Rows {
				for _, key := range keys {
					if c, ok := db.Rows[i].Cells[key]; ok {
						db.Rows[i].Cells[key] = relationCell(slices.Clone(relationOf(c)))
					}
				}
			}
		}
		if !same(*wd, *gd) {
			return fmt.Errorf("database %s is not exactly as the change leaves it", id)
		}
	}
	return nil
}

// ---- configure_rollup ------------------------------------------------------

type rollupArgs struct {
	AvID          string         `arg:"avID" help:"the database holding the rollup column" id:"" required:""`
	BlockID       string         `arg:"blockID" help:"a database block showing avID" id:"" required:""`
	KeyID         string         `arg:"keyID" help:"the rollup column to configure (an existing rollup key of avID)" id:"" required:""`
	RelationKeyID string         `arg:"relationKeyID" help:"a configured relation column of avID" id:"" required:""`
	DestKeyID     string         `arg:"destinationKeyID" help:"the column of the related database to roll up" id:"" required:""`
	Calc          map[string]any `arg:"calc" help:"SiYuan's RollupCalc, as is: {\"operator\": \"\" (the values) | \"Sum\" | \"Count all\" | \"Average\" | …}" required:""`
	operator      string
}

// rollupOperators are SiYuan 3.7.3's calculation operators.
var rollupOperators = []string{"", "Unique values", "Count all", "Count values", "Count unique values", "Count empty", "Count not empty",
	"Percent empty", "Percent not empty", "Percent unique values", "Sum", "Average", "Median", "Min", "Max", "Range", "Earliest", "Latest",
	"Checked", "Unchecked", "Percent checked", "Percent unchecked"}

var configureRollup = tools.Write[rollupArgs, pairState]{
	Name: "configure_rollup", Summary: "make an existing rollup column roll up destinationKeyID of the rows relationKeyID links, with SiYuan's calc; SiYuan drops the views' filters on the column (answered as filtersRemoved) (a person must confirm)",
	Policy: guarded, Dangerous: true,
	Example: map[string]any{"avID": "20260812120000-abcdefg", "blockID": "20260812120000-hijklmn", "keyID": "20260812120200-opqrstu", "relationKeyID": "20260812120300-vwxyzab",
		"destinationKeyID": "20260812120400-cdefghi", "calc": map[string]any{"operator": "Sum"}, "validateOnly": true},
	Validate: func(a *rollupArgs) error {
		for k := range a.Calc {
			if k != "operator" {
				return failure.Invalid("calc takes operator only (SiYuan computes a rollup's result itself); got %q", k)
			}
		}
		op, ok := a.Calc["operator"].(string)
		if !ok {
			return failure.Invalid("calc.operator is required: a string, \"\" for the values themselves")
		}
		if !slices.Contains(rollupOperators, op) {
			return failure.Invalid("calc.operator %q is not one of SiYuan's: %s", op, strings.Join(rollupOperators[1:], ", "))
		}
		a.operator = op
		return nil
	},
	Scope: tools.Scope[rollupArgs]{Resolve: func(ctx context.Context, env *tools.Env, a rollupArgs) ([]tools.Touch, error) {
		dest, _, err := relationOfKey(ctx, env, a.AvID, a.RelationKeyID)
		if err != nil {
			return nil, err
		}
		// The related database is read: its column must exist.
		return pairTouches(ctx, env, a.AvID, a.BlockID, dest, "", tools.LevelRead)
	}},
	Targets: func(a rollupArgs) []string { return []string{a.AvID} },
	State: func(ctx context.Context, env *tools.Env, a rollupArgs) (pairState, error) {
		src, err := ReadDBState(ctx, env, a.AvID)
		if err != nil {
			return pairState{}, err
		}
		st := pairState{Source: src}
		if k, ok := src.key(a.RelationKeyID); ok && k.Relation != nil && k.Relation.AvID != "" && k.Relation.AvID != a.AvID {
			d, err := ReadDBState(ctx, env, k.Relation.AvID)
			if err != nil {
				return pairState{}, err
			}
			st.Destination = &d
		}
		return st, nil
	},
	Check: func(a rollupArgs, st pairState) error {
		if _, err := needKey(st.Source, "keyID", a.KeyID, siyuan.AVKeyRollup); err != nil {
			return err
		}
		rel, err := needKey(st.Source, "relationKeyID", a.RelationKeyID, siyuan.AVKeyRelation)
		if err != nil {
			return err
		}
		if rel.Relation == nil || rel.Relation.AvID == "" {
			return failure.Invalid("relationKeyID %s: the relation column links no database yet; configure it first", a.RelationKeyID)
		}
		dest := st.dest()
		if dest.Missing || dest.ID != rel.Relation.AvID {
			return failure.Missing("database", rel.Relation.AvID)
		}
		if _, ok := dest.key(a.DestKeyID); !ok {
			return failure.New(failure.NotFound, "destinationKeyID %s: the related database %s has no such column", a.DestKeyID, dest.ID)
		}
		return nil
	},
}

var configureRollupAction = tools.WriteWith[rollupArgs, pairState, pairState]{Write: configureRollup,
	Execute: func(ctx context.Context, env *tools.Env, a rollupArgs, st pairState) (tools.Payload, pairState, error) {
		op := siyuan.Operation{Action: "updateAttrViewColRollup", AvID: a.AvID, ID: a.KeyID, ParentID: a.RelationKeyID, KeyID: a.DestKeyID,
			Data: map[string]any{"calc": a.Calc}}
		if _, err := env.Kernel.Transactions(ctx, []siyuan.Transaction{{DoOperations: []siyuan.Operation{op}}}); err != nil {
			return nil, st, tools.WriteFailure(err, false)
		}
		p := tools.Payload{"avID": a.AvID, "keyID": a.KeyID, "relationKeyID": a.RelationKeyID, "destinationKeyID": a.DestKeyID, "calc": a.Calc}
		var views []string
		for _, v := range st.Source.Views {
			if filtersOn(v.Filters, a.KeyID) {
				views = append(views, v.ID)
			}
		}
		if len(views) > 0 {
			p["filtersRemoved"] = views // SiYuan drops the filters on a rollup it reconfigures
		}
		return p, st, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a rollupArgs, p tools.Payload, before pairState) (any, error) {
		want := before.clone()
		setKey(&want.Source, a.KeyID, func(k *KeyState) {
			k.Rollup = &rollupState{RelationKeyID: a.RelationKeyID, KeyID: a.DestKeyID, Operator: a.operator}
		})
		for i := range want.Source.Views {
			v := &want.Source.Views[i]
			if v.Filters = dropFiltersOn(v.Filters, a.KeyID); len(v.Filters) == 0 {
				v.Filters = []*siyuan.AVViewFilter{{Combination: "and"}}
			}
		}
		destID := ""
		if before.Destination != nil {
			destID = before.Destination.ID
		}
		return awaitPair(ctx, env, a.AvID, destID, before, p, func(after pairState) error { return samePair(want, after) })
	},
}

// filtersOn reports whether a filter tree has a leaf on column.
func filtersOn(fs []*siyuan.AVViewFilter, column string) bool {
	for _, f := range fs {
		if f == nil {
			continue
		}
		if isGroup(f) && filtersOn(f.Filters, column) || !isGroup(f) && f.Column == column {
			return true
		}
	}
	return false
}

func isGroup(f *siyuan.AVViewFilter) bool { return f.Combination != "" || len(f.Filters) > 0 }

// dropFiltersOn is SiYuan's RemoveFiltersByColumn: the leaves on column
// removed at every depth, and every group left empty (or empty before).
func dropFiltersOn(fs []*siyuan.AVViewFilter, column string) []*siyuan.AVViewFilter {
	var out []*siyuan.AVViewFilter
	for _, f := range fs {
		switch {
		case f == nil:
		case isGroup(f):
			if kids := dropFiltersOn(f.Filters, column); len(kids) > 0 {
				f.Filters = kids
				out = append(out, f)
			}
		case f.Column != column:
			out = append(out, f)
		}
	}
	return out
}

// ---- set_relation ----------------------------------------------------------

type setRelationArgs struct {
	AvID       string   `arg:"avID" help:"the database" id:"" required:""`
	BlockID    string   `arg:"blockID" help:"a database block showing avID" id:"" required:""`
	ItemID     string   `arg:"itemID" help:"the row: its item ID (never the block bound to it)" id:"" required:""`
	KeyID      string   `arg:"keyID" help:"the relation column" id:"" required:""`
	RelatedIDs []string `arg:"relatedItemIDs" help:"the related database's rows it links, by item ID, in order (stored once each); [] empties it" id:"" required:""`
}

// relationChange is what set_relation's state shows of one call: the
// relation's other side, and the links before.
type relationChange struct {
	dest, back string
	old        []string
}

func (a setRelationArgs) change(st pairState) relationChange {
	k, _ := st.Source.key(a.KeyID)
	c := relationChange{}
	if k.Relation != nil {
		c.dest = k.Relation.AvID
		if k.Relation.IsTwoWay {
			c.back = k.Relation.BackKeyID
		}
	}
	if r, ok := st.Source.row(a.ItemID); ok {
		c.old = relationOf(r.Cells[a.KeyID])
	}
	return c
}

var setRelation = tools.Write[setRelationArgs, pairState]{
	Name: "set_relation", Summary: "set (or with [] empty) one relation cell by item IDs; a two-way relation's back links change in the related database, whose hash is answered too (a person must confirm)",
	Policy: guarded, Dangerous: true,
	Example: map[string]any{"avID": "20260812120000-abcdefg", "blockID": "20260812120000-hijklmn", "itemID": "20260812120100-opqrstu", "keyID": "20260812120200-vwxyzab",
		"relatedItemIDs": []string{"20260812120300-cdefghi"}, "validateOnly": true},
	Validate: func(a *setRelationArgs) error {
		a.RelatedIDs = uniq(a.RelatedIDs...) // SiYuan stores each once
		return nil
	},
	Scope: tools.Scope[setRelationArgs]{Resolve: func(ctx context.Context, env *tools.Env, a setRelationArgs) ([]tools.Touch, error) {
		dest, twoWay, err := relationOfKey(ctx, env, a.AvID, a.KeyID)
		if err != nil {
			return nil, err
		}
		need := tools.LevelRead
		if twoWay {
			need = tools.LevelWrite // its back links change
		}
		return pairTouches(ctx, env, a.AvID, a.BlockID, dest, "", need)
	}},
	Targets: func(a setRelationArgs) []string { return []string{a.AvID} },
	State: func(ctx context.Context, env *tools.Env, a setRelationArgs) (pairState, error) {
		src, v, stored, err := readDBStored(ctx, env, a.AvID)
		if err != nil {
			return pairState{}, err
		}
		// The cell may link rows the call cannot see: set whole, it would
		// drop them unseen.
		if v != nil && stored != nil {
			for _, kv := range stored.KeyValues {
				if kv == nil || kv.Key == nil || kv.Key.ID != a.KeyID {
					continue
				}
				for _, val := range kv.Values {
					if val != nil && val.BlockID == a.ItemID && val.Relation != nil && len(val.Relation.BlockIDs) > len(relationOfRow(src, a.ItemID, a.KeyID)) {
						return pairState{}, failure.New(failure.PermissionDenied, "the cell links rows this call cannot see (in notebooks hidden from agents); setting it whole would drop them, so nothing was run").Attempted(false)
					}
				}
			}
		}
		st := pairState{Source: src}
		if k, ok := src.key(a.KeyID); ok && k.Relation != nil && k.Relation.AvID != "" && k.Relation.AvID != a.AvID {
			d, err := ReadDBState(ctx, env, k.Relation.AvID)
			if err != nil {
				return pairState{}, err
			}
			st.Destination = &d
		}
		return st, nil
	},
	Check: checkSetRelation,
}

func relationOfRow(st DBState, row, key string) []string {
	r, _ := st.row(row)
	return relationOf(r.Cells[key])
}

func checkSetRelation(a setRelationArgs, st pairState) error {
	k, err := needKey(st.Source, "keyID", a.KeyID, siyuan.AVKeyRelation)
	if err != nil {
		return err
	}
	if k.Relation == nil || k.Relation.AvID == "" {
		return failure.Invalid("keyID %s: the relation column links no database yet; configure it first", a.KeyID)
	}
	if _, err := needRow(st.Source, "itemID", a.ItemID); err != nil {
		return err
	}
	dest := st.dest()
	if dest.Missing || dest.ID != k.Relation.AvID {
		return failure.Missing("database", k.Relation.AvID)
	}
	for i, id := range a.RelatedIDs {
		if _, err := needRow(dest, fmt.Sprintf("relatedItemIDs[%d]", i), id); err != nil {
			return err
		}
	}
	// SiYuan 3.7.3 updates back links by the count of IDs alone: a list
	// no longer nor shorter than the old one but not holding it, or
	// shorter but adding rows, leaves back links wrong.
	c := a.change(st)
	if c.back != "" {
		added := slices.DeleteFunc(slices.Clone(a.RelatedIDs), func(id string) bool { return slices.Contains(c.old, id) })
		removed := slices.DeleteFunc(slices.Clone(c.old), func(id string) bool { return slices.Contains(a.RelatedIDs, id) })
		if len(added) > 0 && len(removed) > 0 {
			return failure.Invalid("this both adds rows (%s) and removes rows (%s) of a two-way relation, which SiYuan does not keep linked back both ways; call twice: first without the removed rows, then with the added ones",
				strings.Join(added, ", "), strings.Join(removed, ", "))
		}
	}
	return nil
}

var setRelationAction = tools.WriteWith[setRelationArgs, pairState, pairState]{Write: setRelation,
	Execute: func(ctx context.Context, env *tools.Env, a setRelationArgs, st pairState) (tools.Payload, pairState, error) {
		v := &siyuan.AVValue{Relation: &siyuan.AVValueRelation{BlockIDs: a.RelatedIDs}}
		if _, err := env.Kernel.SetAttributeViewBlockAttr(ctx, a.AvID, a.KeyID, a.ItemID, v); err != nil {
			var nd *siyuan.NullDataError
			if errors.As(err, &nd) {
				return nil, st, tools.Refuse(failure.New(failure.NotFound, "keyID %s: the kernel found no such column", a.KeyID))
			}
			return nil, st, tools.WriteFailure(err, false)
		}
		c := a.change(st)
		p := tools.Payload{"avID": a.AvID, "itemID": a.ItemID, "keyID": a.KeyID, "relatedItemIDs": a.RelatedIDs, "destinationAvID": c.dest}
		if c.back != "" {
			p["backKeyID"] = c.back
		}
		return p, st, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a setRelationArgs, p tools.Payload, before pairState) (any, error) {
		c := a.change(before)
		want := before.clone()
		dbs := want.dbs()
		setRelationCell(dbs[a.AvID], a.ItemID, a.KeyID, slices.Clone(a.RelatedIDs))
		if c.back != "" {
			dest := dbs[c.dest]
			for _, id := range a.RelatedIDs {
				if !slices.Contains(c.old, id) {
					setRelationCell(dest, id, c.back, uniq(append(relationOfRow(*dest, id, c.back), a.ItemID)...))
				}
			}
			if len(a.RelatedIDs) < len(c.old) {
				for _, id := range c.old {
					if !slices.Contains(a.RelatedIDs, id) {
						if r, ok := dest.row(id); ok && r.Cells[c.back] != nil {
							setRelationCell(dest, id, c.back, slices.DeleteFunc(slices.Clone(relationOf(r.Cells[c.back])), func(s string) bool { return s == a.ItemID }))
						}
					}
				}
			}
		}
		destID := ""
		if before.Destination != nil {
			destID = before.Destination.ID
		}
		return awaitPair(ctx, env, a.AvID, destID, before, p, func(after pairState) error {
			return samePair(want, after, a.KeyID, c.back)
		})
	},
}
