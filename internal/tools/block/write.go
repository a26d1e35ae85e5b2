package block

import (
	"context"
	"errors"
	"fmt"
	stdhtml "html"
	"slices"
	"sort"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/kernelview"
	"github.com/sisyphus-go/sisyphus/internal/tools/markup"
)

var guarded = strict.WritePolicy{Class: strict.Mutation, Precondition: strict.ExpectedStateHash}

// states are the guarded state of a set of blocks.
type states = []kernelview.BlockState

func idTargets(a idArgs) []string { return []string{a.ID} }

func readOne(ctx context.Context, env *tools.Env, a idArgs) (states, error) {
	return kernelview.ReadBlockStates(ctx, env, []string{a.ID})
}

// allExist refuses a guarded action on a block that does not exist.
func allExist(st states) error {
	for _, s := range st {
		if s.Missing {
			return failure.Missing("block", s.ID)
		}
	}
	return nil
}

// ---- update ---------------------------------------------------------------

// updateItem is one block.update target; Single is shapeOf's verdict on
// its data.
type updateItem struct {
	ID, DataType, Data string
	Single             bool
	// Blocks is how many top-level blocks markdown data holds (shapeOf).
	Blocks int
}

type updateArgs struct {
	ID       string           `arg:"id" help:"the block to update" id:""`
	Batch    []map[string]any `arg:"items" help:"batch: [{id, data, dataType}]; repeated ids count once in targetCount"`
	Data     *string          `arg:"data" help:"the new content"`
	DataType string           `arg:"dataType" help:"markdown (kramdown) or dom" enum:"markdown,dom" default:"markdown"`
	// Items are the updates asked, from id and data or from items.
	Items []updateItem
}

func (u updateArgs) ids() []string {
	ids := make([]string, len(u.Items))
	for i, it := range u.Items {
		ids[i] = it.ID
	}
	return ids
}

func parseUpdate(a *updateArgs) error {
	if (a.Batch != nil) == (a.ID != "") {
		return failure.Invalid("pass either id (with data) or items[], not both")
	}
	if a.ID != "" {
		if a.Data == nil {
			return failure.Invalid("missing argument \"data\"")
		}
		it := updateItem{ID: a.ID, DataType: a.DataType, Data: *a.Data}
		it.Single, it.Blocks = shapeOf(it.DataType, it.Data)
		a.Items = []updateItem{it}
		return nil
	}
	raw := a.Batch
	if len(raw) == 0 || len(raw) > 50 {
		return failure.Invalid("items[] must hold 1 to 50 updates")
	}
	var out []updateItem
	for i, m := range raw {
		id, _ := m["id"].(string)
		data, ok := m["data"].(string)
		dt, _ := m["dataType"].(string)
		if dt == "" {
			dt = "markdown"
		}
		if err := tools.CheckID(fmt.Sprintf("items[%d].id", i), id); err != nil {
			return err
		}
		if !ok {
			return failure.Invalid("items[%d].data must be a string", i)
		}
		if dt != "markdown" && dt != "dom" {
			return failure.Invalid("items[%d].dataType must be markdown or dom", i)
		}
		for k := range m {
			if k != "id" && k != "data" && k != "dataType" {
				return failure.Invalid("items[%d] does not take %s", i, k)
			}
		}
		single, blocks := shapeOf(dt, data)
		out = append(out, updateItem{ID: id, DataType: dt, Data: data, Single: single, Blocks: blocks})
	}
	a.Items = out
	return nil
}

// update hands its readback the text each block's update applied, by id.
var update = tools.WriteWith[updateArgs, states, map[string]string]{Write: tools.Write[updateArgs, states]{
	Name: "update", Summary: "replace one block's content (id + data) or several (items[]); user attributes are kept", Policy: guarded,
	Example:  map[string]any{"id": "20260812120000-abcdefg", "data": "The revised paragraph, with **bold** text.", "validateOnly": true},
	Validate: parseUpdate,
	Scope:    tools.Scope[updateArgs]{Touches: func(a updateArgs) []tools.Touch { return tools.OnBlocks(a.ids(), tools.LevelWrite) }},
	Targets:  updateArgs.ids,
	// Guarded by each block's content (kramdown and attributes); the
	// readback reads it again, hashed as the state was, and checks the text
	// each block shows (showsApplied).
	State: func(ctx context.Context, env *tools.Env, a updateArgs) (states, error) {
		return kernelview.ReadBlockContents(ctx, env, a.ids())
	},
	Check: checkUpdate,
},
	Execute: execUpdate,
	Readback: func(ctx context.Context, env *tools.Env, a updateArgs, _ tools.Payload, want map[string]string) (any, error) {
		sts, err := kernelview.ReadBlockContents(ctx, env, a.ids())
		if err != nil {
			return nil, err
		}
		if err := showsApplied(ctx, env, sts, want); err != nil {
			return nil, err
		}
		return sts, nil
	},
}

// showsApplied checks that each updated block shows the text its update
// applied. The text is rendered here from the block's kramdown, just read
// back, as the kernel renders an update's markdown; only a block whose
// rendering here differs (a reference's anchor follows its target, an
// embed) is compared with the kernel's own DOM: on SiYuan each DOM read
// loads the block's document.
func showsApplied(ctx context.Context, env *tools.Env, sts []kernelview.BlockState, want map[string]string) error {
	var ask []string
	for _, s := range sts {
		if s.Missing {
			return fmt.Errorf("block %s is gone after the update", s.ID)
		}
		w, ok := want[s.ID]
		if !ok {
			continue
		}
		if text, err := markup.KramdownDOMText(s.Kramdown, s.ID); err != nil || text != w {
			ask = append(ask, s.ID)
		}
	}
	var doms map[string]string
	switch len(ask) {
	case 0:
		return nil
	case 1:
		d, err := env.Kernel.GetBlockDOM(ctx, ask[0])
		if err != nil {
			return err
		}
		doms = map[string]string{ask[0]: d.DOM}
	default:
		var err error
		if doms, err = env.Kernel.GetBlockDOMs(ctx, ask); err != nil {
			return err
		}
	}
	for _, id := range ask {
		if markup.DOMText(doms[id]) != want[id] {
			return fmt.Errorf("block %s does not show the requested content", id)
		}
	}
	return nil
}

// checkUpdate refuses an update SiYuan would apply only in part: a block
// (not a document, whose whole body an update replaces) given several
// blocks keeps the first and drops the others without a word.
func checkUpdate(a updateArgs, st states) error {
	if err := allExist(st); err != nil {
		return err
	}
	doc := map[string]bool{}
	for _, s := range st {
		doc[s.ID] = s.Attrs["type"] == "doc"
	}
	for _, it := range a.Items {
		if it.Blocks > 1 && !doc[it.ID] {
			e := failure.Invalid("the data for block %s holds %d blocks; SiYuan's update keeps the first and drops the rest, so nothing was written", it.ID, it.Blocks)
			e.Action = "update the block with one block, then add the others after it with block.insert (previousID: this block)"
			return e.Attempted(false)
		}
	}
	return nil
}

// execUpdate updates each target once, keeping the user attributes its
// state (read just now, at commit) shows, and returns the text each update
// applied for the readback.
func execUpdate(ctx context.Context, env *tools.Env, a updateArgs, st states) (tools.Payload, map[string]string, error) {
	attrs := make(map[string]map[string]string, len(st))
	for _, s := range st {
		attrs[s.ID] = s.Attrs
	}
	if len(a.Items) > 1 {
		return execBatchUpdate(ctx, env, a, attrs)
	}
	applied := map[string]string{}
	wrote := false
	for _, it := range a.Items {
		writes, txs, err := updateKeeping(ctx, env.Kernel, it.ID, it.DataType, it.Data, it.Single, attrs[it.ID])
		if err != nil {
			// A failure of the attribute restore comes after the content
			// write applied: never a clean rejection.
			return nil, nil, tools.WriteFailure(err, wrote || writes > 1)
		}
		wrote = true
		if text, ok := appliedText(txs, it.ID); ok {
			applied[it.ID] = text
		}
	}
	ids := make([]string, 0, len(a.Items))
	for _, it := range a.Items {
		if !slices.Contains(ids, it.ID) {
			ids = append(ids, it.ID)
		}
	}
	sort.Strings(ids)
	return tools.Payload{"ids": ids, "updated": len(a.Items)}, applied, nil
}

// execBatchUpdate sends every item in one batchUpdateBlock: one kernel
// transaction, where one updateBlock per item would cost a round trip and a
// document write each. The kernel checks every entry before it applies
// any. Attributes ride in each single block's IAL; those of an item with
// DOM data or an IAL of its own are restored after the batch (then the batch has applied: a failure there is
// not a clean rejection).
func execBatchUpdate(ctx context.Context, env *tools.Env, a updateArgs, attrs map[string]map[string]string) (tools.Payload, map[string]string, error) {
	entries := make([]siyuan.BlockUpdate, 0, len(a.Items))
	restore := map[string]map[string]string{}
	for _, it := range a.Items {
		data := it.Data
		keep := userAttrs(attrs[it.ID])
		switch {
		case len(keep) > 0 && it.Single:
			data = strings.TrimRight(data, "\n") + "\n" + ialLine(keep)
			delete(restore, it.ID)
		case len(keep) > 0:
			restore[it.ID] = keep
		default:
			delete(restore, it.ID)
		}
		entries = append(entries, siyuan.BlockUpdate{ID: it.ID, DataType: it.DataType, Data: data})
	}
	txs, err := env.Kernel.BatchUpdateBlock(ctx, entries)
	if err != nil {
		return nil, nil, tools.WriteFailure(err, false)
	}
	ids := make([]string, 0, len(restore))
	for id := range restore {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if err := env.Kernel.SetBlockAttrs(ctx, id, restore[id]); err != nil {
			return nil, nil, tools.WriteFailure(fmt.Errorf("restore attributes of %s after the batch update: %w", id, err), true)
		}
	}
	applied := map[string]string{}
	out := make([]string, 0, len(a.Items))
	for _, it := range a.Items {
		if slices.Contains(out, it.ID) {
			continue
		}
		out = append(out, it.ID)
		if text, ok := appliedText(txs, it.ID); ok { // a later entry for the same id wins, as in the kernel
			applied[it.ID] = text
		}
	}
	sort.Strings(out)
	return tools.Payload{"ids": out, "updated": len(a.Items)}, applied, nil
}

// ---- set_attrs ------------------------------------------------------------

type attrsArgs struct {
	ID    string         `arg:"id" help:"the block" id:"" required:""`
	Given map[string]any `arg:"attrs" help:"attribute name → string value, or null to remove" required:""`
	// Attrs are the attributes to write ("" removes one).
	Attrs map[string]string
}

func parseAttrs(out *attrsArgs) error {
	out.Attrs = map[string]string{}
	for k, v := range out.Given {
		switch x := v.(type) {
		case nil:
			out.Attrs[k] = ""
		case string:
			out.Attrs[k] = x
		default:
			return failure.Invalid("attrs.%s must be a string or null", k)
		}
		if k == "id" || k == "updated" {
			return failure.Invalid("attrs.%s is managed by SiYuan and cannot be set", k)
		}
	}
	if len(out.Attrs) == 0 {
		return failure.Invalid("attrs must name at least one attribute")
	}
	return nil
}

var setAttrs = tools.Write[attrsArgs, states]{
	Name: "set_attrs", Summary: "set or remove block attributes (custom-*, name, alias, memo, bookmark, ...); null or \"\" removes", Policy: guarded,
	Example:  map[string]any{"id": "20260812120000-abcdefg", "attrs": map[string]any{"custom-status": "done", "memo": nil}, "validateOnly": true},
	Validate: parseAttrs,
	Scope:    tools.Scope[attrsArgs]{Touches: func(a attrsArgs) []tools.Touch { return []tools.Touch{tools.OnBlock(a.ID, tools.LevelWrite)} }},
	Targets:  func(a attrsArgs) []string { return []string{a.ID} },
	State: func(ctx context.Context, env *tools.Env, a attrsArgs) (states, error) {
		return kernelview.ReadBlockStates(ctx, env, []string{a.ID})
	},
	Check: func(_ attrsArgs, st states) error { return allExist(st) },
	Execute: func(ctx context.Context, env *tools.Env, a attrsArgs, _ states) (tools.Payload, error) {
		if err := env.Kernel.SetBlockAttrs(ctx, a.ID, a.Attrs); err != nil {
			return nil, tools.WriteFailure(err, false)
		}
		return tools.Payload{"id": a.ID}, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a attrsArgs, p tools.Payload) (any, error) {
		got, err := env.Kernel.GetBlockAttrs(ctx, a.ID)
		if err != nil {
			return nil, err
		}
		for k, v := range a.Attrs {
			if stdhtml.UnescapeString(got[k]) != strings.TrimSpace(v) {
				return nil, fmt.Errorf("attribute %s reads back %q, want %q", k, got[k], v)
			}
		}
		return kernelview.ReadBlockStates(ctx, env, []string{a.ID})
	},
}

// ---- delete ---------------------------------------------------------------

var deleteBlock = tools.Write[idArgs, states]{
	Name: "delete", Summary: "delete a block", Policy: guarded, Destructive: true, Dangerous: true, OffByDefault: true,
	Example: map[string]any{"id": "20260812120000-abcdefg", "validateOnly": true},
	Targets: idTargets, State: readOne,
	Scope: tools.Scope[idArgs]{Touches: func(a idArgs) []tools.Touch { return []tools.Touch{tools.OnBlock(a.ID, tools.LevelDelete)} }},
	Check: func(_ idArgs, st states) error { return allExist(st) },
	Execute: func(ctx context.Context, env *tools.Env, a idArgs, _ states) (tools.Payload, error) {
		if _, err := env.Kernel.DeleteBlock(ctx, a.ID); err != nil {
			return nil, tools.WriteFailure(err, false)
		}
		return tools.Payload{"id": a.ID, "deleted": true}, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a idArgs, p tools.Payload) (any, error) {
		// SiYuan queues deletes: poll existence, never infer it from a failed read.
		gone, err := tools.Poll(ctx, func() (bool, error) {
			ok, err := env.Kernel.CheckBlockExist(ctx, a.ID)
			return !ok, err
		})
		if err != nil {
			return nil, err
		}
		if !gone {
			return nil, fmt.Errorf("block %s still exists", a.ID)
		}
		return kernelview.ReadBlockStates(ctx, env, []string{a.ID})
	},
}

// ---- set_fold_state -------------------------------------------------------

type foldArgs struct {
	ID     string `arg:"id" help:"the block" id:"" required:""`
	Folded bool   `arg:"folded" help:"true folds, false unfolds" required:""`
}

var setFoldState = tools.Write[foldArgs, states]{
	Name: "set_fold_state", Summary: "fold or unfold a block", Policy: guarded,
	Example: map[string]any{"id": "20260812120000-abcdefg", "folded": true, "validateOnly": true},
	Scope:   tools.Scope[foldArgs]{Touches: func(a foldArgs) []tools.Touch { return []tools.Touch{tools.OnBlock(a.ID, tools.LevelWrite)} }},
	Targets: func(a foldArgs) []string { return []string{a.ID} },
	State: func(ctx context.Context, env *tools.Env, a foldArgs) (states, error) {
		return kernelview.ReadBlockStates(ctx, env, []string{a.ID})
	},
	Check: func(_ foldArgs, st states) error { return allExist(st) },
	Execute: func(ctx context.Context, env *tools.Env, a foldArgs, _ states) (tools.Payload, error) {
		var err error
		if a.Folded {
			err = env.Kernel.FoldBlock(ctx, a.ID)
		} else {
			err = env.Kernel.UnfoldBlock(ctx, a.ID)
		}
		if err != nil {
			return nil, tools.WriteFailure(err, false)
		}
		return tools.Payload{"id": a.ID, "folded": a.Folded}, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a foldArgs, p tools.Payload) (any, error) {
		attrs, err := env.Kernel.GetBlockAttrs(ctx, a.ID)
		if err != nil {
			return nil, err
		}
		if (attrs["fold"] == "1") != a.Folded {
			return nil, fmt.Errorf("fold attribute reads back %q", attrs["fold"])
		}
		return kernelview.ReadBlockStates(ctx, env, []string{a.ID})
	},
}

// ---- append, prepend, insert ----------------------------------------------

// insertArgs are the arguments of an additive block write: the anchors
// (previousID, nextID, parentID; those given) and the content.
type insertArgs struct {
	Anchors        map[string]string
	DataType, Data string
}

func (a insertArgs) targets() []string {
	var ids []string
	for _, k := range []string{"previousID", "nextID", "parentID"} {
		if v := a.Anchors[k]; v != "" {
			ids = append(ids, v)
		}
	}
	return ids
}

// requiredData is the content an additive write adds.
type requiredData struct {
	Data     string `arg:"data" help:"the content to add" required:""`
	DataType string `arg:"dataType" help:"markdown (kramdown) or dom" enum:"markdown,dom" default:"markdown"`
}

// containerArgs are append's and prepend's: the container and the content.
type containerArgs struct {
	ParentID string `arg:"parentID" help:"the container" id:"" required:""`
	requiredData
}

func (a containerArgs) insert() insertArgs {
	return insertArgs{Anchors: anchorsGiven("parentID", a.ParentID), DataType: a.DataType, Data: a.Data}
}

// anchorsGiven are the anchors (name, id pairs) with an id.
func anchorsGiven(pairs ...string) map[string]string {
	out := map[string]string{}
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] != "" {
			out[pairs[i]] = pairs[i+1]
		}
	}
	return out
}

// inserting is the argument type of an additive block write.
type inserting interface{ insert() insertArgs }

// anchor is an anchor block of an insert and whether it exists.
type anchor struct {
	Name, ID string
	Exists   bool
}

// readAnchors checks that each anchor of an insert exists (the kernel
// answers an insert at an unknown anchor with success and no block).
func readAnchors(ctx context.Context, env *tools.Env, a insertArgs) ([]anchor, error) {
	var out []anchor
	for _, k := range []string{"previousID", "nextID", "parentID"} {
		id, ok := a.Anchors[k]
		if !ok {
			continue
		}
		exists, err := env.Kernel.CheckBlockExist(ctx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, anchor{k, id, exists})
	}
	return out, nil
}

func checkAnchors(_ insertArgs, st []anchor) error {
	for _, an := range st {
		if !an.Exists {
			return failure.New(failure.NotFound, "%s %s: no such block", an.Name, an.ID)
		}
	}
	return nil
}

// insertWrite is the additive write shared by append and prepend:
// the new ids come back, and the readback proves they exist.
func insertWrite[A inserting](name, summary string, anchors []string,
	call func(context.Context, *siyuan.Client, insertArgs) ([]siyuan.Transaction, error)) tools.WriteWith[A, []anchor, []string] {
	example := map[string]any{anchors[0]: "20260812120000-abcdefg", "data": "A new paragraph.\n\n- and a list item", "validateOnly": true}
	// The readback takes the inserted ids from Execute typed, not from the
	// payload's "ids", so a renamed key cannot leave it checking nothing.
	return tools.WriteWith[A, []anchor, []string]{Write: tools.Write[A, []anchor]{
		Name: name, Summary: summary, Policy: strict.WritePolicy{Class: strict.Additive}, Example: example,
		Validate: func(a *A) error {
			if len((*a).insert().Anchors) == 0 {
				return failure.Invalid("pass one of %s", strings.Join(anchors, ", "))
			}
			return nil
		},
		Scope:   tools.Scope[A]{Touches: func(a A) []tools.Touch { return tools.OnBlocks(a.insert().targets(), tools.LevelWrite) }},
		Targets: func(a A) []string { return a.insert().targets() },
		State: func(ctx context.Context, env *tools.Env, a A) ([]anchor, error) {
			return readAnchors(ctx, env, a.insert())
		},
		Check: func(a A, st []anchor) error { return checkAnchors(a.insert(), st) },
	},
		Execute: func(ctx context.Context, env *tools.Env, a A, _ []anchor) (tools.Payload, []string, error) {
			txs, err := call(ctx, env.Kernel, a.insert())
			if err != nil {
				return nil, nil, tools.WriteFailure(err, false)
			}
			ids := siyuan.InsertedIDs(txs)
			return tools.Payload{"ids": ids, "id": siyuan.FirstInsertedID(txs)}, ids, nil
		},
		Readback: func(ctx context.Context, env *tools.Env, _ A, _ tools.Payload, ids []string) (any, error) {
			if len(ids) == 0 {
				// SiYuan answers code 0 with no id when the insert failed in its queue.
				return nil, errors.New("the kernel reported no inserted block")
			}
			sts, err := kernelview.ReadBlockStates(ctx, env, ids)
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
}

var appendBlock = insertWrite[containerArgs]("append", "add blocks as the last children of a container (document, list, quote, ...)",
	[]string{"parentID"},
	func(ctx context.Context, c *siyuan.Client, a insertArgs) ([]siyuan.Transaction, error) {
		return c.AppendBlock(ctx, a.DataType, a.Data, a.Anchors["parentID"])
	})

var prependBlock = insertWrite[containerArgs]("prepend", "add blocks as the first children of a container",
	[]string{"parentID"},
	func(ctx context.Context, c *siyuan.Client, a insertArgs) ([]siyuan.Transaction, error) {
		return c.PrependBlock(ctx, a.DataType, a.Data, a.Anchors["parentID"])
	})
