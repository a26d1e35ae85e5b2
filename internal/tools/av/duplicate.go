package av

import (
	"context"
	"fmt"
	"slices"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// duplicate copies a database as SiYuan does (duplicateAttributeViewBlock:
// a new database file, keys, views and rows keeping their IDs, two-way
// relations made one-way, bound blocks bound to the copy too), then
// inserts the copy's database block after the source's block (or
// previousID). The kernel chooses the copy's IDs: the ledger learns them
// when the first stage is confirmed, so a crash inside that call cannot
// be resumed (there is no ID to look for) and answers outcome_unknown; it
// is never sent again, so there is never a second copy.

type duplicateArgs struct {
	AvID       string `arg:"avID" help:"the database to copy" id:"" required:""`
	BlockID    string `arg:"blockID" help:"a database block of the source: the copy's block goes after it (default: the source's first)" id:""`
	PreviousID string `arg:"previousID" help:"the block the copy's database block goes after (instead of blockID)" id:""`
}

var duplicate = tools.Write[duplicateArgs, DBState]{
	Name: "duplicate", Summary: "copy a database (SiYuan's duplicate: rows, columns and views keep their IDs; two-way relations become one-way) with its own database block after the source's block (or previousID); answers the copy's avID and blockID, and its hash as resultHash",
	Policy:  guarded,
	Example: map[string]any{"avID": "20260812120000-abcdefg", "validateOnly": true},
	// Write where the source is shown, where the copy goes, and where its
	// bound blocks live (the kernel binds them to the copy: custom-avs).
	Scope: tools.Scope[duplicateArgs]{Resolve: func(ctx context.Context, env *tools.Env, a duplicateArgs) ([]tools.Touch, error) {
		ts, err := dbTouches(ctx, env, a.AvID, tools.LevelWrite)
		if err != nil {
			return nil, err
		}
		if a.PreviousID != "" {
			ts = append(ts, tools.OnBlock(a.PreviousID, tools.LevelWrite))
		}
		if err := refuseWithheld(ctx, env, a.AvID, "the copy would bind their blocks too"); err != nil {
			return nil, err
		}
		st, err := ReadDBState(ctx, env, a.AvID)
		if err != nil {
			return nil, err
		}
		for _, r := range st.Rows {
			if r.Block != "" && !r.Detached {
				ts = append(ts, tools.OnBound(r.Block, tools.LevelWrite))
			}
		}
		return ts, nil
	}},
	Targets: func(a duplicateArgs) []string { return []string{a.AvID} },
	State: func(ctx context.Context, env *tools.Env, a duplicateArgs) (DBState, error) {
		return ReadDBState(ctx, env, a.AvID)
	},
	Check: func(a duplicateArgs, st DBState) error {
		if err := exists(st); err != nil {
			return err
		}
		if a.BlockID != "" && !slices.Contains(st.Blocks, a.BlockID) {
			return failure.Invalid("block %s does not show database %s", a.BlockID, a.AvID)
		}
		if a.PreviousID == "" && len(st.Blocks) == 0 {
			return failure.Invalid("database %s is shown by no block; pass previousID for the copy's block", a.AvID)
		}
		return nil
	},
	Stages: &tools.Stages[duplicateArgs, DBState]{
		Reserve: func(a duplicateArgs, st DBState) (map[string]string, error) {
			after := a.PreviousID
			if after == "" {
				after = a.BlockID
			}
			if after == "" {
				after = st.Blocks[0]
			}
			return map[string]string{idSource: a.AvID, idPrev: after}, nil
		},
		Steps: func(duplicateArgs) []tools.Step[duplicateArgs] {
			return []tools.Step[duplicateArgs]{{Name: "duplicated",
				Do: func(ctx context.Context, env *tools.Env, a duplicateArgs, _ map[string]string) (map[string]string, error) {
					d, err := env.Kernel.DuplicateAttributeViewBlock(ctx, a.AvID)
					if err != nil {
						return nil, tools.WriteFailure(err, false)
					}
					if d.AvID == "" || d.BlockID == "" || d.AvID == a.AvID {
						return nil, fmt.Errorf("the kernel answered a duplicate without its ids: %+v", d)
					}
					return map[string]string{idAV: d.AvID, idBlock: d.BlockID}, nil
				},
				Present: func(ctx context.Context, env *tools.Env, _ duplicateArgs, ids map[string]string) (bool, error) {
					if ids[idAV] == "" {
						return false, nil // in doubt and never learned: nothing to look for
					}
					return avPresent(ctx, env, ids[idAV], func(*siyuan.AttributeView) bool { return true })
				},
			}, insertBlockStep[duplicateArgs]()}
		},
		Receipt: func(a duplicateArgs, ids map[string]string, done []string) tools.Payload {
			return tools.Payload{"sourceAvID": a.AvID, "avID": ids[idAV], "blockID": ids[idBlock], "insertedAfter": ids[idPrev], "stage": last(done)}
		},
	},
	Readback: func(ctx context.Context, env *tools.Env, a duplicateArgs, p tools.Payload) (any, error) {
		avID, blockID, err := createdDB(p)
		if err != nil {
			return nil, err
		}
		src, err := ReadDBState(ctx, env, a.AvID)
		if err != nil {
			return nil, err
		}
		return readChanged(ctx, env, avID, func(st DBState) error {
			if !slices.Equal(st.Blocks, []string{blockID}) {
				return fmt.Errorf("the copy %s is shown by %v, want %s", avID, st.Blocks, blockID)
			}
			if !same(keyShapes(st), keyShapes(src)) || !same(rowIDs(st), rowIDs(src)) {
				return fmt.Errorf("the copy %s does not have the source's columns and rows", avID)
			}
			return nil
		})
	},
}

// keyShapes are a database's keys by ID, name and type.
func keyShapes(st DBState) [][3]string {
	out := [][3]string{}
	for _, k := range st.Keys {
		out = append(out, [3]string{k.ID, k.Name, k.Type})
	}
	return out
}

func rowIDs(st DBState) []string {
	out := []string{}
	for _, r := range st.Rows {
		out = append(out, r.ID)
	}
	return out
}
