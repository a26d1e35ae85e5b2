package block

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/kernelview"
)

// block.insert adds content at an anchor: data (one insert), or blocks[],
// upstream 0.6.8's batch, where each item is {dataType, data} with its own
// anchors or none. The items without anchors of their own take the
// top-level ones and land there in the order given (SiYuan places each
// entry of a batch at its anchor in turn, which would put items sharing a
// previousID or parentID in reverse order: those are sent last first);
// an item with anchors of its own is placed by them alone, after those.
// The whole batch is one batchInsertBlock call, which the kernel checks
// entry by entry before it applies any.

// maxInsertBlocks bounds blocks[] (upstream 0.6.8 sets no bound).
const maxInsertBlocks = 50

// anchorNames are an insert's anchors, in the precedence SiYuan gives
// them when several are set.
var anchorNames = []string{"nextID", "previousID", "parentID"}

// insertAtArgs are insert's arguments.
type insertAtArgs struct {
	PreviousID string           `arg:"previousID" help:"insert after this block" id:""`
	NextID     string           `arg:"nextID" help:"insert before this block" id:""`
	ParentID   string           `arg:"parentID" help:"insert as the first child of this container" id:""`
	Data       *string          `arg:"data" help:"the content to add (or blocks[])"`
	DataType   *string          `arg:"dataType" help:"markdown (kramdown) or dom; markdown when omitted; with blocks[], what an item without its own dataType takes" enum:"markdown,dom"`
	Blocks     []map[string]any `arg:"blocks" help:"several inserts in one write (1 to 50; upstream 0.6.8 sets no bound): [{dataType, data, previousID?, nextID?, parentID?}]. Items without anchors take the top-level ones and land there in the order given, each after the one before (upstream sends each to the same anchor, so a shared previousID or parentID reverses them); an item's own anchors replace the top-level ones as a whole (upstream merges them field by field)"`
	// Entries are the inserts in the order the kernel applies them, and
	// Items the blocks[] item each entry is (0 for data).
	Entries []siyuan.InsertBlockRequest
	Items   []int
	// Anchors are every anchor given (name as the call said it, id).
	Anchors []anchor
}

func (a insertAtArgs) targets() []string {
	var ids []string
	for _, an := range a.Anchors {
		if !slices.Contains(ids, an.ID) {
			ids = append(ids, an.ID)
		}
	}
	return ids
}

// anchorsOf reads the anchors of one insert (prefix names them: "" at the
// top level, "blocks[i]." in an item).
func anchorsOf(prefix string, get func(string) (string, bool, error)) (siyuan.InsertBlockRequest, []anchor, error) {
	var req siyuan.InsertBlockRequest
	var out []anchor
	for _, name := range anchorNames {
		id, ok, err := get(name)
		if err != nil {
			return req, nil, err
		}
		if !ok {
			continue
		}
		if err := tools.CheckID(prefix+name, id); err != nil {
			return req, nil, err
		}
		switch name {
		case "nextID":
			req.NextID = id
		case "previousID":
			req.PreviousID = id
		default:
			req.ParentID = id
		}
		out = append(out, anchor{Name: prefix + name, ID: id})
	}
	return req, out, nil
}

func parseInsert(a *insertAtArgs) error {
	dataType := "markdown"
	if a.DataType != nil {
		dataType = *a.DataType
	}
	top, anchors, err := anchorsOf("", func(name string) (string, bool, error) {
		v := map[string]string{"nextID": a.NextID, "previousID": a.PreviousID, "parentID": a.ParentID}[name]
		return v, v != "", nil
	})
	if err != nil {
		return err
	}
	a.Anchors = anchors
	if a.Blocks == nil {
		if a.Data == nil {
			return failure.Invalid("missing argument \"data\" (or blocks[])")
		}
		if len(anchors) == 0 {
			return failure.Invalid("pass one of previousID, nextID, parentID")
		}
		top.DataType, top.Data = dataType, *a.Data
		a.Entries, a.Items = []siyuan.InsertBlockRequest{top}, []int{0}
		return nil
	}
	if a.Data != nil {
		return failure.Invalid("pass data or blocks[], not both")
	}
	if len(a.Blocks) == 0 || len(a.Blocks) > maxInsertBlocks {
		return failure.Invalid("blocks[] must hold 1 to %d items", maxInsertBlocks)
	}
	var shared, own []int // items without anchors of their own, and with
	entries := make([]siyuan.InsertBlockRequest, len(a.Blocks))
	for i, m := range a.Blocks {
		prefix := fmt.Sprintf("blocks[%d].", i)
		for k := range m {
			if k != "dataType" && k != "data" && !slices.Contains(anchorNames, k) {
				return failure.Invalid("%s: unknown field %q (dataType, data, previousID, nextID, parentID)", prefix[:len(prefix)-1], k)
			}
		}
		req, itemAnchors, err := anchorsOf(prefix, func(name string) (string, bool, error) {
			v, ok := m[name]
			if !ok || v == nil {
				return "", false, nil
			}
			id, isStr := v.(string)
			if !isStr {
				return "", false, failure.Invalid("%s%s must be a string", prefix, name)
			}
			return id, id != "", nil
		})
		if err != nil {
			return err
		}
		data, ok := m["data"].(string)
		if !ok {
			return failure.Invalid("%sdata must be a string", prefix)
		}
		dt := dataType
		if v, ok := m["dataType"]; ok && v != nil {
			s, isStr := v.(string)
			if !isStr || s != "markdown" && s != "dom" {
				return failure.Invalid("%sdataType must be markdown or dom", prefix)
			}
			dt = s
		}
		if len(itemAnchors) == 0 {
			if len(anchors) == 0 {
				return failure.Invalid("%s has no anchor: give it previousID, nextID or parentID, or give one at the top level", prefix[:len(prefix)-1])
			}
			req = top
			shared = append(shared, i)
		} else {
			own = append(own, i)
			a.Anchors = append(a.Anchors, itemAnchors...)
		}
		req.DataType, req.Data = dt, data
		entries[i] = req
	}
	// Each entry lands right at its anchor when applied: before nextID
	// keeps the order given; after previousID, or first in parentID,
	// reverses it, so those are sent last first.
	if top.NextID == "" {
		slices.Reverse(shared)
	}
	for _, i := range append(shared, own...) {
		a.Entries = append(a.Entries, entries[i])
		a.Items = append(a.Items, i)
	}
	return nil
}

// inserted is what insert hands its readback: the ids each blocks[] item
// (or data) inserted, in item order.
type inserted struct {
	PerItem [][]string
	// Unmatched: the kernel answered another number of transactions than
	// entries sent, so no id could be given its item.
	Unmatched bool
}

func (in inserted) all() []string {
	var ids []string
	for _, item := range in.PerItem {
		ids = append(ids, item...)
	}
	return ids
}

var insertBlock = tools.WriteWith[insertAtArgs, []anchor, inserted]{Write: tools.Write[insertAtArgs, []anchor]{
	Name: "insert", Summary: "add blocks after previousID, before nextID, or first in parentID: data, or blocks[] (several inserts in one write, in the order given)",
	Policy:   strict.WritePolicy{Class: strict.Additive},
	Example:  map[string]any{"previousID": "20260812120000-abcdefg", "data": "A new paragraph.\n\n- and a list item", "validateOnly": true},
	Validate: parseInsert,
	Scope:    tools.Scope[insertAtArgs]{Touches: func(a insertAtArgs) []tools.Touch { return tools.OnBlocks(a.targets(), tools.LevelWrite) }},
	Targets:  insertAtArgs.targets,
	State: func(ctx context.Context, env *tools.Env, a insertAtArgs) ([]anchor, error) {
		return checkExist(ctx, env, a.Anchors)
	},
	Check: func(_ insertAtArgs, st []anchor) error { return checkAnchors(insertArgs{}, st) },
},
	Execute: func(ctx context.Context, env *tools.Env, a insertAtArgs, _ []anchor) (tools.Payload, inserted, error) {
		var (
			txs []siyuan.Transaction
			err error
		)
		if a.Blocks == nil {
			txs, err = env.Kernel.InsertBlock(ctx, a.Entries[0])
		} else {
			txs, err = env.Kernel.BatchInsertBlock(ctx, a.Entries)
		}
		if err != nil {
			return nil, inserted{}, tools.WriteFailure(err, false)
		}
		in := inserted{PerItem: make([][]string, len(a.Entries))}
		switch {
		case a.Blocks == nil:
			in.PerItem[0] = siyuan.InsertedIDs(txs)
		case len(txs) != len(a.Entries):
			in.Unmatched = true
		default:
			for k, tx := range txs {
				in.PerItem[a.Items[k]] = siyuan.InsertedIDs([]siyuan.Transaction{tx})
			}
		}
		ids := in.all()
		if ids == nil {
			ids = siyuan.InsertedIDs(txs)
		}
		p := tools.Payload{"ids": ids, "id": siyuan.FirstInsertedID(txs)}
		if len(ids) > 0 {
			p["id"] = ids[0]
		}
		if a.Blocks != nil {
			p["count"] = len(a.Blocks)
		}
		return p, in, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, _ insertAtArgs, _ tools.Payload, in inserted) (any, error) {
		if in.Unmatched {
			return nil, errors.New("the kernel answered another number of inserts than blocks sent")
		}
		for i, ids := range in.PerItem {
			if len(ids) == 0 {
				// SiYuan answers code 0 with no id when an insert failed in its queue.
				return nil, fmt.Errorf("the kernel reported no inserted block for blocks[%d]", i)
			}
		}
		sts, err := kernelview.ReadBlockStates(ctx, env, in.all())
		if err != nil {
			return nil, err
		}
		for _, s := range sts {
			if s.Missing {
				return nil, fmt.Errorf("inserted block %s does not exist", s.ID)
			}
		}
		return sts, nil
	},
}

// checkExist reads whether each anchor exists (the kernel answers an
// insert at an unknown anchor with success and no block); an id named
// twice is read once.
func checkExist(ctx context.Context, env *tools.Env, anchors []anchor) ([]anchor, error) {
	out := make([]anchor, 0, len(anchors))
	known := map[string]bool{}
	for _, an := range anchors {
		exists, ok := known[an.ID]
		if !ok {
			var err error
			if exists, err = env.Kernel.CheckBlockExist(ctx, an.ID); err != nil {
				return nil, err
			}
			known[an.ID] = exists
		}
		out = append(out, anchor{an.Name, an.ID, exists})
	}
	return out, nil
}
