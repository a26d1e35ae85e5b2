package av

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

var (
	guarded  = strict.WritePolicy{Class: strict.Mutation, Precondition: strict.ExpectedStateHash}
	manifest = strict.WritePolicy{Class: strict.Mutation, Precondition: strict.ExpectedManifestHash}
	additive = strict.WritePolicy{Class: strict.Additive}
)

// The writes use the /api/av/* forms where SiYuan has one (rows, keys,
// cells): they apply at once and answer an error, where the transaction
// operations the editor sends fail inside the kernel's queue with code 0
// (a clean rejection is then indistinguishable from success). Renaming has
// only the operation (setAttrViewName), so its readback alone tells.

// shape is what a readback compares around the requested change: the
// name, the keys, the rows' IDs and bindings, and the views' columns and
// order. Cells are left out: rendering (which adding a row does) stores
// some of them again in the kernel's own form.
type shape struct {
	Name  string
	Keys  []KeyState
	Rows  []RowState
	Views []ViewState
}

func shapeOf(s DBState) shape {
	out := shape{Name: s.Name, Keys: s.Keys, Views: s.Views}
	for _, r := range s.Rows {
		out.Rows = append(out.Rows, RowState{ID: r.ID, Block: r.Block, Detached: r.Detached})
	}
	return out
}

// readChanged reads the database again until check passes (the kernel may
// apply a change a little after it answers), and then requires it.
func readChanged(ctx context.Context, env *tools.Env, avID string, check func(DBState) error) (DBState, error) {
	var st DBState
	var last error
	ok, err := tools.Poll(ctx, func() (bool, error) {
		var err error
		if st, err = ReadDBState(ctx, env, avID); err != nil {
			return false, err
		}
		if st.Missing {
			last = fmt.Errorf("database %s is gone", avID)
			return false, nil
		}
		last = check(st)
		return last == nil, nil
	})
	if err != nil {
		return st, err
	}
	if !ok {
		return st, last
	}
	return st, nil
}

// ---- rename ---------------------------------------------------------------

type renameArgs struct {
	dbArg
	Name string `arg:"name" help:"the new name (at most 512 characters)" required:""`
}

// storedName is a name as SiYuan stores it: line breaks as spaces, trimmed.
func storedName(s string) string {
	s = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
	return strings.TrimSpace(s)
}

// rename hands its readback the database as it was before.
var rename = tools.WriteWith[renameArgs, DBState, DBState]{Write: tools.Write[renameArgs, DBState]{
	Name: "rename", Summary: "rename a database (line breaks become spaces; trimmed)", Policy: guarded,
	Example: map[string]any{"avID": "20260812120000-abcdefg", "name": "Reading list", "validateOnly": true},
	Validate: func(out *renameArgs) error {
		if storedName(out.Name) == "" {
			return failure.Invalid("name must not be empty")
		}
		if utf8.RuneCountInString(storedName(out.Name)) > 512 {
			return failure.Invalid("name has more than 512 characters; SiYuan would cut it")
		}
		return nil
	},
	Scope:   scopeOn(func(a renameArgs) string { return a.AvID }, tools.LevelWrite),
	Targets: func(a renameArgs) []string { return []string{a.AvID} },
	State: func(ctx context.Context, env *tools.Env, a renameArgs) (DBState, error) {
		return ReadDBState(ctx, env, a.AvID)
	},
	Check: func(_ renameArgs, st DBState) error { return exists(st) },
},
	Execute: func(ctx context.Context, env *tools.Env, a renameArgs, st DBState) (tools.Payload, DBState, error) {
		_, err := env.Kernel.Transactions(ctx, []siyuan.Transaction{{DoOperations: []siyuan.Operation{siyuan.SetAttrViewNameOp(a.AvID, a.Name)}}})
		if err != nil {
			return nil, st, tools.WriteFailure(err, false)
		}
		return tools.Payload{"avID": a.AvID, "name": storedName(a.Name)}, st, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a renameArgs, _ tools.Payload, before DBState) (any, error) {
		want := storedName(a.Name)
		return readChanged(ctx, env, a.AvID, func(st DBState) error {
			if st.Name != want {
				return fmt.Errorf("database %s is named %q, want %q", a.AvID, st.Name, want)
			}
			b := shapeOf(before)
			b.Name = want
			if !same(shapeOf(st), b) {
				return fmt.Errorf("database %s changed beyond its name", a.AvID)
			}
			return nil
		})
	},
}

// lastColumn is the last column of the first table view (the editor's
// order), else the last key.
func lastColumn(st DBState) string {
	for _, v := range st.Views {
		if len(v.Columns) > 0 {
			return v.Columns[len(v.Columns)-1].ID
		}
	}
	if len(st.Keys) > 0 {
		return st.Keys[len(st.Keys)-1].ID
	}
	return ""
}

// ---- add_rows -------------------------------------------------------------

// checkPlacement refuses a viewID, groupID or previousID the database
// does not have: SiYuan would put the rows last for an unknown previousID
// and fail in the middle of the write for an unknown view.
func checkPlacement(a addRowsArgs, st addState) error {
	if a.ViewID != "" && !slices.ContainsFunc(st.DB.Views, func(v ViewState) bool { return v.ID == a.ViewID }) {
		return failure.New(failure.NotFound, "viewID %s: database %s has no such view", a.ViewID, a.AvID)
	}
	if a.GroupID != "" {
		found := false
		for view, groups := range st.groups {
			found = found || (a.ViewID == "" || view == a.ViewID) && slices.Contains(groups, a.GroupID)
		}
		if !found {
			return failure.New(failure.NotFound, "groupID %s: no grouped view of database %s has such a group", a.GroupID, a.AvID)
		}
	}
	if a.Previous != "" {
		if _, ok := st.DB.row(a.Previous); !ok {
			return failure.New(failure.NotFound, "previousID %s: database %s has no such row (row IDs are item IDs, as render shows them)", a.Previous, a.AvID)
		}
	}
	return nil
}

// placed requires the new rows, in order, right after previousID in every
// view holding it, or first in every view.
func placed(a addRowsArgs, st DBState, added []string) error {
	for _, v := range st.Views {
		at := 0
		if a.Previous != "" {
			i := slices.Index(v.ItemIDs, a.Previous)
			if i < 0 {
				continue
			}
			at = i + 1
		}
		if at+len(added) > len(v.ItemIDs) || !slices.Equal(v.ItemIDs[at:at+len(added)], added) {
			return fmt.Errorf("view %s of database %s does not show the new rows where asked", v.ID, a.AvID)
		}
	}
	return nil
}

type addRowsArgs struct {
	dbArg
	BlockIDs []string `arg:"blockIDs" help:"blocks to add as rows (bound: the row's primary key shows the block); at most 100" id:""`
	Texts    []string `arg:"primaryKeyTexts" help:"detached rows, one per text; at most 100"`
	BlockID  string   `arg:"blockID" help:"the database block whose view the rows are added in (default: the first showing the database); refused when it does not show avID. The permission needed is still that of every notebook showing the database" id:""`
	ViewID   string   `arg:"viewID" help:"the view whose filters and groups give the new rows' default values (default: blockID's view)" id:""`
	GroupID  string   `arg:"groupID" help:"a group of that view the rows go in: its value is their default (a kanban's column)" id:""`
	Previous string   `arg:"previousID" help:"add_rows: a row (item ID) the new rows follow, in order, in every view holding it (default: first in every view); create, duplicate: the block the database block goes after" id:""`
	NoFill   bool     `arg:"ignoreDefaultFill" help:"true skips filling the new rows' cells from the view's filters and group" default:"false"`
}

// addState is the database and whether each block to bind exists; groups
// are each view's group IDs (not hashed: an additive write has no hash).
type addState struct {
	DB     DBState
	Exists map[string]bool
	groups map[string][]string
}

// viewGroups are the group IDs of each view of a stored database.
func viewGroups(av *siyuan.AttributeView) map[string][]string {
	out := map[string][]string{}
	if av == nil {
		return out
	}
	for _, v := range av.Views {
		if v == nil || len(v.Groups) == 0 {
			continue
		}
		var groups []struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(v.Groups, &groups) != nil {
			continue
		}
		for _, g := range groups {
			out[v.ID] = append(out[v.ID], g.ID)
		}
	}
	return out
}

// addedRows are what add_rows hands its readback: the database before,
// and the ids of the rows it added for blocks and for texts, in the
// arguments' order.
type addedRows struct {
	before          DBState
	bound, detached []string
}

var addRows = tools.WriteWith[addRowsArgs, addState, addedRows]{Write: tools.Write[addRowsArgs, addState]{
	Name: "add_rows", Summary: "add rows: bound to blocks (blockIDs) and/or detached with a primary-key text (primaryKeyTexts); first in every view", Policy: additive,
	Example: map[string]any{"avID": "20260812120000-abcdefg", "primaryKeyTexts": []string{"Read Dune"}, "validateOnly": true},
	Validate: func(out *addRowsArgs) error {
		n := len(out.BlockIDs) + len(out.Texts)
		if n == 0 || n > 100 {
			return failure.Invalid("pass 1 to 100 rows in blockIDs and primaryKeyTexts")
		}
		for i, id := range out.BlockIDs {
			if slices.Index(out.BlockIDs, id) != i {
				return failure.Invalid("blockIDs names %s twice; a block is one row", id)
			}
		}
		return nil
	},
	// The database's blocks, and each bound block, which binding marks
	// (custom-avs): write in every notebook holding one.
	Scope: tools.Scope[addRowsArgs]{Resolve: func(ctx context.Context, env *tools.Env, a addRowsArgs) ([]tools.Touch, error) {
		ts, err := dbTouchesAt(ctx, env, a.AvID, a.BlockID, tools.LevelWrite)
		if err != nil {
			return nil, err
		}
		return append(ts, tools.OnBlocks(a.BlockIDs, tools.LevelWrite)...), nil
	}},
	Targets: func(a addRowsArgs) []string { return []string{a.AvID} },
	State: func(ctx context.Context, env *tools.Env, a addRowsArgs) (addState, error) {
		db, _, av, err := readDBStored(ctx, env, a.AvID)
		if err != nil {
			return addState{}, err
		}
		st := addState{DB: db, Exists: map[string]bool{}, groups: viewGroups(av)}
		for _, id := range a.BlockIDs {
			ok, err := env.Kernel.CheckBlockExist(ctx, id)
			if err != nil {
				return st, err
			}
			st.Exists[id] = ok
		}
		return st, nil
	},
	Check: func(a addRowsArgs, st addState) error {
		if err := exists(st.DB); err != nil {
			return err
		}
		if len(st.DB.Blocks) == 0 {
			return failure.Invalid("database %s is shown by no database block; nothing was added", a.AvID)
		}
		if a.BlockID != "" && !slices.Contains(st.DB.Blocks, a.BlockID) {
			return failure.Invalid("block %s does not show database %s (its database blocks: %s)", a.BlockID, a.AvID, strings.Join(st.DB.Blocks, ", "))
		}
		if err := checkPlacement(a, st); err != nil {
			return err
		}
		for _, id := range a.BlockIDs {
			if !st.Exists[id] {
				return failure.Missing("block", id)
			}
			if slices.Contains(st.DB.Blocks, id) {
				return failure.Invalid("block %s is a database block of this database; it cannot be its row", id)
			}
			if r, ok := st.DB.rowOfBlock(id); ok {
				e := failure.Invalid("block %s is already a row of database %s (row %s); nothing was added", id, a.AvID, r.ID)
				return e.With("rowID", r.ID)
			}
		}
		return nil
	},
},
	Execute: func(ctx context.Context, env *tools.Env, a addRowsArgs, st addState) (tools.Payload, addedRows, error) {
		var srcs []siyuan.AVSrc
		var bound, detached []string
		for _, id := range a.BlockIDs {
			item := newID()
			bound = append(bound, item)
			srcs = append(srcs, siyuan.AVSrc{ItemID: item, ID: id})
		}
		for _, text := range a.Texts {
			item := newID()
			detached = append(detached, item)
			srcs = append(srcs, siyuan.AVSrc{ItemID: item, Detached: true, Content: text})
		}
		block := a.BlockID
		if block == "" {
			block = st.DB.Blocks[0]
		}
		err := env.Kernel.AddAttributeViewBlocks(ctx, siyuan.AddAVBlocksRequest{AvID: a.AvID, BlockID: block, ViewID: a.ViewID,
			GroupID: a.GroupID, PreviousID: a.Previous, Srcs: srcs, IgnoreDefaultFill: a.NoFill})
		if err != nil {
			// SiYuan adds the rows one by one: a failure after the first
			// may leave some added.
			return nil, addedRows{}, tools.WriteFailure(err, len(srcs) > 1)
		}
		if bound == nil {
			bound = []string{}
		}
		if detached == nil {
			detached = []string{}
		}
		return tools.Payload{"avID": a.AvID, "rowIDs": append(slices.Clone(bound), detached...), "boundRowIDs": bound, "detachedRowIDs": detached,
			"added": len(srcs)}, addedRows{st.DB, bound, detached}, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a addRowsArgs, _ tools.Payload, added addedRows) (any, error) {
		before, bound, detached := added.before, added.bound, added.detached
		st, err := readChanged(ctx, env, a.AvID, func(st DBState) error {
			for i, item := range bound {
				if r, ok := st.row(item); !ok || r.Block != a.BlockIDs[i] {
					return fmt.Errorf("database %s shows no row %s bound to %s", a.AvID, item, a.BlockIDs[i])
				}
			}
			pk := st.primary().ID
			for i, item := range detached {
				r, ok := st.row(item)
				if !ok || !r.Detached || r.Cells[pk] == nil || r.Cells[pk].Block == nil || r.Cells[pk].Block.Content != a.Texts[i] {
					return fmt.Errorf("database %s shows no detached row %s with the text %q", a.AvID, item, a.Texts[i])
				}
			}
			if !same(shapeOf(st.without(append(slices.Clone(bound), detached...), nil)), shapeOf(before)) {
				return fmt.Errorf("database %s changed beyond the new rows", a.AvID)
			}
			return placed(a, st, append(slices.Clone(bound), detached...))
		})
		return addState{DB: st}, err
	},
}
