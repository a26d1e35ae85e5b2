package block

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/kernelview"
)

type transferArgs struct {
	FromID string   `arg:"fromID" help:"the block referenced now" id:"" required:""`
	ToID   string   `arg:"toID" help:"the block the references should point at" id:"" required:""`
	RefIDs []string `arg:"refIDs" help:"the blocks holding the references to move; omit to move every reference to fromID" id:""`
}

func parseTransfer(t *transferArgs) error {
	if t.FromID == t.ToID {
		return failure.Invalid("fromID and toID are the same block: nothing would change")
	}
	return nil
}

// TransferState is what a transfer is guarded by: the source and target
// blocks and every block whose references move, each as kramdown and
// attributes (a reference is in its block's kramdown as ((id 'text'))).
type TransferState struct {
	From   kernelview.BlockState   `json:"from"`
	To     kernelview.BlockState   `json:"to"`
	RefIDs []string                `json:"refIDs"`
	Refs   []kernelview.BlockState `json:"refs"`
}

// refBlocks are the blocks whose references move: those named, or every
// block the index says references fromID (after the kernel's queue is
// flushed, so that it counts what was just written).
func refBlocks(ctx context.Context, env *tools.Env, a transferArgs) ([]string, error) {
	if len(a.RefIDs) > 0 {
		return kernelview.SortedUnique(a.RefIDs), nil
	}
	if err := env.Kernel.FlushTransaction(ctx); err != nil {
		return nil, err
	}
	rows, err := env.Kernel.QuerySQL(ctx, "SELECT DISTINCT block_id FROM refs WHERE def_block_id = '"+a.FromID+"' ORDER BY block_id")
	if err != nil {
		return nil, err
	}
	ids := []string{}
	for _, r := range rows {
		if id, _ := r["block_id"].(string); tools.CheckID("block_id", id) == nil {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

func readTransferState(ctx context.Context, env *tools.Env, a transferArgs, refs []string) (TransferState, error) {
	sts, err := kernelview.ReadBlockContents(ctx, env, append([]string{a.FromID, a.ToID}, refs...))
	if err != nil {
		return TransferState{}, err
	}
	by := map[string]kernelview.BlockState{}
	for _, s := range sts {
		by[s.ID] = s
	}
	st := TransferState{From: by[a.FromID], To: by[a.ToID], RefIDs: refs, Refs: []kernelview.BlockState{}}
	for _, id := range refs {
		st.Refs = append(st.Refs, by[id])
	}
	return st, nil
}

// refersTo reports whether kramdown holds a block reference to id.
func refersTo(kramdown, id string) bool { return strings.Contains(kramdown, "(("+id+" ") }

// transferReferences hands its readback the blocks it sent typed, not
// through the payload's "refIDs".
var transferReferences = tools.WriteWith[transferArgs, TransferState, []string]{Write: tools.Write[transferArgs, TransferState]{
	Name: "transfer_references", Summary: "point the block references to fromID at toID instead: those in the blocks refIDs, or every one; dynamic anchors take toID's text, static ones keep theirs",
	Policy:   strict.WritePolicy{Class: strict.Mutation, Precondition: strict.ExpectedManifestHash},
	Example:  map[string]any{"fromID": "20260812120000-aaaaaaa", "toID": "20260812120000-bbbbbbb", "validateOnly": true},
	Validate: parseTransfer,
	// Write on both blocks' notebooks and on every notebook whose blocks
	// change.
	Scope: tools.Scope[transferArgs]{Resolve: func(ctx context.Context, env *tools.Env, a transferArgs) ([]tools.Touch, error) {
		refs, err := refBlocks(ctx, env, a)
		if err != nil {
			return nil, err
		}
		return tools.OnBlocks(append([]string{a.FromID, a.ToID}, refs...), tools.LevelWrite), nil
	}},
	Targets: func(a transferArgs) []string { return append([]string{a.FromID, a.ToID}, a.RefIDs...) },
	State: func(ctx context.Context, env *tools.Env, a transferArgs) (TransferState, error) {
		refs, err := refBlocks(ctx, env, a)
		if err != nil {
			return TransferState{}, err
		}
		return readTransferState(ctx, env, a, refs)
	},
	Check: func(a transferArgs, st TransferState) error {
		switch {
		case st.From.Missing:
			return failure.Missing("block (fromID)", a.FromID)
		case st.To.Missing:
			return failure.Missing("block (toID)", a.ToID)
		case len(st.Refs) == 0:
			return failure.Invalid("no block references %s: nothing to transfer", a.FromID)
		}
		for _, r := range st.Refs {
			if r.Missing {
				return failure.Missing("block (refIDs)", r.ID)
			}
			if !refersTo(r.Kramdown, a.FromID) {
				return failure.Invalid("block %s holds no reference to %s", r.ID, a.FromID)
			}
		}
		return nil
	},
},
	Execute: func(ctx context.Context, env *tools.Env, a transferArgs, st TransferState) (tools.Payload, []string, error) {
		// The blocks checked, exactly: never "all" as the kernel sees it now.
		if err := env.Kernel.TransferBlockRef(ctx, a.FromID, a.ToID, st.RefIDs); err != nil {
			return nil, nil, tools.WriteFailure(err, false)
		}
		return tools.Payload{"fromID": a.FromID, "toID": a.ToID, "refIDs": st.RefIDs, "transferred": len(st.RefIDs)}, slices.Clone(st.RefIDs), nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a transferArgs, _ tools.Payload, refs []string) (any, error) {
		return tools.Await(ctx, func(ctx context.Context) (TransferState, error) { return readTransferState(ctx, env, a, refs) },
			func(st TransferState) error {
				for _, r := range st.Refs {
					switch {
					case r.Missing:
						return fmt.Errorf("block %s is gone", r.ID)
					case refersTo(r.Kramdown, a.FromID) || !refersTo(r.Kramdown, a.ToID):
						return fmt.Errorf("block %s does not read back with its references at %s", r.ID, a.ToID)
					}
				}
				return nil
			})
	},
}
