package block

import (
	"context"
	"errors"
	"fmt"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/kernelview"
	"github.com/sisyphus-go/sisyphus/internal/tools/tplguard"
)

type dailyArgs struct {
	Notebook string `arg:"notebook" help:"the notebook whose daily note to write" id:"" required:""`
	Position string `arg:"position" help:"append (the note's end) or prepend (its start)" enum:"append,prepend" required:""`
	requiredData
}

// dailyAdded is what the daily-note write hands its readback: the
// inserted ids and the note they went into, typed rather than read back
// from the public payload's keys.
type dailyAdded struct {
	IDs  []string
	Note string
}

var addToDailyNote = tools.WriteWith[dailyArgs, kernelview.DailyTarget, dailyAdded]{Write: tools.Write[dailyArgs, kernelview.DailyTarget]{
	Name: "add_to_daily_note", Summary: "add blocks at the end (position append) or the start (prepend) of today's daily note of a notebook, " +
		"creating the note first if needed",
	Policy:  strict.WritePolicy{Class: strict.Additive},
	Example: map[string]any{"notebook": "20260812115959-nbnbnbn", "data": "- [ ] call the plumber", "dataType": "markdown", "position": "append", "validateOnly": true},
	Scope:   tools.Scope[dailyArgs]{Touches: func(a dailyArgs) []tools.Touch { return []tools.Touch{tools.OnNotebook(a.Notebook, tools.LevelWrite)} }},
	Targets: func(a dailyArgs) []string { return []string{a.Notebook} },
	State: func(ctx context.Context, env *tools.Env, a dailyArgs) (kernelview.DailyTarget, error) {
		t, err := kernelview.ReadDailyTarget(ctx, env, a.Notebook)
		if err == nil && !t.Missing {
			// Creating the note renders the notebook's templates.
			err = tplguard.CheckDailyNote(ctx, env, t.SavePath, t.Template)
		}
		return t, err
	},
	Check: func(_ dailyArgs, st kernelview.DailyTarget) error { return st.Check() },
},
	Execute: func(ctx context.Context, env *tools.Env, a dailyArgs, _ kernelview.DailyTarget) (tools.Payload, dailyAdded, error) {
		call := env.Kernel.AppendDailyNoteBlock
		if a.Position == "prepend" {
			call = env.Kernel.PrependDailyNoteBlock
		}
		txs, err := call(ctx, a.Notebook, a.DataType, a.Data)
		if err != nil {
			return nil, dailyAdded{}, tools.WriteFailure(err, false)
		}
		d := dailyAdded{IDs: siyuan.InsertedIDs(txs)}
		p := tools.Payload{"ids": d.IDs, "id": siyuan.FirstInsertedID(txs), "notebook": a.Notebook, "position": a.Position}
		if ops := opsOf(txs); len(ops) > 0 {
			d.Note = ops[0].ParentID
			p["note"] = d.Note
		}
		return p, d, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a dailyArgs, _ tools.Payload, d dailyAdded) (any, error) {
		ids, note := d.IDs, d.Note
		if len(ids) == 0 || note == "" {
			return nil, errors.New("the kernel reported no inserted block")
		}
		at, err := tools.Await(ctx, func(ctx context.Context) (kernelview.DailyNoteAt, error) {
			return kernelview.ReadDailyNote(ctx, env, note)
		}, func(n kernelview.DailyNoteAt) error { return n.Of(a.Notebook) })
		if err != nil {
			return nil, err
		}
		kids, err := env.Kernel.GetChildBlocks(ctx, note)
		if err != nil {
			return nil, err
		}
		// The new blocks are the note's first (prepend) or last (append)
		// top-level blocks.
		if len(kids) < len(ids) {
			return nil, fmt.Errorf("today's note %s holds %d blocks, fewer than the %d added", note, len(kids), len(ids))
		}
		at0 := len(kids) - len(ids)
		if a.Position == "prepend" {
			at0 = 0
		}
		for i, id := range ids {
			if kids[at0+i].ID != id {
				return nil, fmt.Errorf("block %s is not where it was added (%s of today's note %s)", id, a.Position, note)
			}
		}
		sts, err := kernelview.ReadBlockStates(ctx, env, ids)
		if err != nil {
			return nil, err
		}
		return map[string]any{"note": at, "blocks": sts}, nil
	},
}

func opsOf(txs []siyuan.Transaction) []siyuan.Operation {
	var ops []siyuan.Operation
	for _, tx := range txs {
		ops = append(ops, tx.DoOperations...)
	}
	return ops
}
