package tools

import (
	"context"
	"errors"
	"fmt"
	stdhtml "html"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/88250/lute"
	"github.com/88250/lute/ast"
	"github.com/88250/lute/editor"
	"github.com/88250/lute/html"
	"github.com/88250/lute/parse"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
)

// userAttrs are the attributes an update must carry over: everything the
// user or a plugin set, not the kernel's bookkeeping.
func userAttrs(attrs map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range attrs {
		switch k {
		case "id", "updated", "created", "type", "title", "fold", "heading-fold":
			continue
		}
		if v != "" {
			out[k] = v
		}
	}
	return out
}

// topLevelBlocks counts the top-level blocks a markdown fragment parses into,
// with the engine SiYuan uses.
func topLevelBlocks(md string) (n int, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed markdown: %v", r)
		}
	}()
	l := lute.New()
	l.SetKramdownIAL(true)
	l.SetSuperBlock(true)
	l.SetCallout(true)
	tree := parse.Parse("", []byte(md), l.ParseOptions)
	for c := tree.Root.FirstChild; c != nil; c = c.Next {
		if c.Type != ast.NodeKramdownBlockIAL {
			n++
		}
	}
	return n, nil
}

// ialLine renders attributes as a kramdown block IAL, sorted for stability.
func ialLine(attrs map[string]string) string {
	keys := make([]string, 0, len(attrs))
	for k := range attrs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("{:")
	for _, k := range keys {
		// As SiYuan stores IAL values: HTML-escaped, newlines as a marker.
		v := strings.ReplaceAll(html.EscapeAttrVal(attrs[k]), "\n", editor.IALValEscNewLine)
		fmt.Fprintf(&b, ` %s="%s"`, k, v)
	}
	b.WriteString("}")
	return b.String()
}

// updateKeepingAttrs replaces a block's content and keeps its user
// attributes, which SiYuan's updateBlock drops. When the markdown is a
// single block, the attributes travel in its IAL: one kernel write. Otherwise
// (DOM data, several blocks) they are restored with a second write.
// It returns the kernel writes made.
func updateKeepingAttrs(ctx context.Context, c *siyuan.Client, id, dataType, data string, before map[string]string) (writes int, err error) {
	writes, _, err = updateKeeping(ctx, c, id, dataType, data, before)
	return writes, err
}

func updateKeeping(ctx context.Context, c *siyuan.Client, id, dataType, data string, before map[string]string) (writes int, text string, err error) {
	keep := userAttrs(before)
	applied := func(txs []siyuan.Transaction) string {
		for _, tx := range txs {
			for _, op := range tx.DoOperations {
				if d, ok := op.Data.(string); ok && op.ID == id {
					return domText(d)
				}
			}
		}
		return ""
	}
	if len(keep) > 0 && dataType == "markdown" {
		if n, perr := topLevelBlocks(data); perr == nil && n == 1 && !strings.Contains(data, "{:") {
			txs, err := c.UpdateBlock(ctx, id, dataType, strings.TrimRight(data, "\n")+"\n"+ialLine(keep))
			return 1, applied(txs), err
		}
	}
	txs, err := c.UpdateBlock(ctx, id, dataType, data)
	if err != nil {
		return 1, "", err
	}
	if len(keep) == 0 {
		return 1, applied(txs), nil
	}
	if err := c.SetBlockAttrs(ctx, id, keep); err != nil {
		// The content is already replaced: this failure is not a clean rejection.
		return 2, "", fmt.Errorf("restore attributes after update: %w", err)
	}
	return 2, applied(txs), nil
}

// writeErr classifies a failed kernel write for the coordinator: a refusal
// before anything of this call was applied is a rejection; anything else
// (a lost reply, or a failure after an earlier write of the same call
// applied) leaves the outcome unknown.
func writeErr(err error, appliedBefore bool) error {
	if appliedBefore || siyuan.IsOutcomeUnknown(err) {
		return err
	}
	var api *siyuan.APIError
	var auth *siyuan.AuthError
	var tr *siyuan.TransportError
	if errors.As(err, &api) || errors.As(err, &auth) || errors.As(err, &tr) && !tr.Sent || errors.Is(err, siyuan.ErrInvalidArgument) {
		return strict.Reject(err)
	}
	return err
}

var (
	tagRE   = regexp.MustCompile(`<[^>]*>`)
	spaceRE = regexp.MustCompile(`\s+`)
)

// domText is the visible text of block DOM, for comparing what the kernel
// applied with what a readback shows.
func domText(dom string) string {
	t := tagRE.ReplaceAllString(dom, " ")
	t = stdhtml.UnescapeString(t)
	t = strings.NewReplacer("\u200b", "", "\u2060", "").Replace(t)
	return strings.TrimSpace(spaceRE.ReplaceAllString(t, " "))
}

// updateItem is one block.update target.
type updateItem struct{ ID, DataType, Data string }

func updateItems(a *Args) ([]updateItem, error) {
	if a.Has("items") == a.Has("id") {
		return nil, badArg("pass either id (with data) or items[], not both")
	}
	if a.Has("id") {
		if err := checkID("id", a.String("id")); err != nil {
			return nil, err
		}
		if !a.Has("data") {
			return nil, badArg("missing argument \"data\"")
		}
		return []updateItem{{a.String("id"), a.String("dataType"), a.String("data")}}, nil
	}
	raw := a.values["items"].([]map[string]any)
	if len(raw) == 0 || len(raw) > 50 {
		return nil, badArg("items[] must hold 1 to 50 updates")
	}
	var out []updateItem
	for i, m := range raw {
		id, _ := m["id"].(string)
		data, ok := m["data"].(string)
		dt, _ := m["dataType"].(string)
		if dt == "" {
			dt = "markdown"
		}
		if err := checkID(fmt.Sprintf("items[%d].id", i), id); err != nil {
			return nil, err
		}
		if !ok {
			return nil, badArg("items[%d].data must be a string", i)
		}
		if dt != "markdown" && dt != "dom" {
			return nil, badArg("items[%d].dataType must be markdown or dom", i)
		}
		for k := range m {
			if k != "id" && k != "data" && k != "dataType" {
				return nil, badArg("items[%d] does not take %s", i, k)
			}
		}
		out = append(out, updateItem{id, dt, data})
	}
	return out, nil
}

func itemTargets(a *Args) []string {
	items, err := updateItems(a)
	if err != nil {
		return nil
	}
	var ids []string
	for _, it := range items {
		ids = append(ids, it.ID)
	}
	return ids
}

// blocksState is the guarded state of a set of blocks.
func blocksState(ids []string) func(ctx context.Context, env *Env, a *Args) (any, error) {
	return func(ctx context.Context, env *Env, a *Args) (any, error) { return readBlockStates(ctx, env, ids) }
}

func idTarget(a *Args) []string { return []string{a.String("id")} }

var dataParams = []Param{
	{Name: "data", Type: String, Description: "the new content"},
	{Name: "dataType", Type: String, Description: "markdown (kramdown) or dom", Enum: []string{"markdown", "dom"}, Default: "markdown"},
}

func blockWriteActions() []*Action {
	guarded := strict.Policy{Class: strict.Mutation, Precondition: strict.ExpectedStateHash}
	additive := strict.Policy{Class: strict.Additive}
	return []*Action{
		{
			Name: "update", Summary: "replace one block's content (id + data) or several (items[]); user attributes are kept", Policy: guarded,
			Params: append([]Param{
				idParam("id", "the block to update", false),
				{Name: "items", Type: Objects, Description: "batch: [{id, data, dataType}]; repeated ids count once in targetCount"},
			}, dataParams...),
			Write: &Write{
				Targets: itemTargets,
				State: func(ctx context.Context, env *Env, a *Args) (any, error) {
					if _, err := updateItems(a); err != nil {
						return nil, err
					}
					return readBlockStates(ctx, env, itemTargets(a))
				},
				Execute: execUpdate,
				Readback: func(ctx context.Context, env *Env, a *Args, p map[string]any) (any, error) {
					states, err := readBlockStates(ctx, env, itemTargets(a))
					if err != nil {
						return nil, err
					}
					want, _ := p["_appliedText"].(map[string]string)
					for _, s := range states {
						if s.Missing {
							return nil, fmt.Errorf("block %s is gone after the update", s.ID)
						}
						if w, ok := want[s.ID]; ok && domText(s.DOM) != w {
							return nil, fmt.Errorf("block %s does not show the requested content", s.ID)
						}
					}
					return states, nil
				},
			},
		},
		{
			Name: "set_attrs", Summary: "set or remove block attributes (custom-*, name, alias, memo, bookmark, ...); null or \"\" removes", Policy: guarded,
			Params: []Param{idParam("id", "the block", true), {Name: "attrs", Type: Object, Description: "attribute name → string value, or null to remove", Required: true}},
			Write: &Write{
				Targets: idTarget,
				State: func(ctx context.Context, env *Env, a *Args) (any, error) {
					return readBlockStates(ctx, env, idTarget(a))
				},
				Execute: func(ctx context.Context, env *Env, a *Args) (map[string]any, error) {
					attrs, err := attrArgs(a)
					if err != nil {
						return nil, strict.Reject(err)
					}
					if err := env.Kernel.SetBlockAttrs(ctx, a.String("id"), attrs); err != nil {
						return nil, writeErr(err, false)
					}
					return map[string]any{"id": a.String("id")}, nil
				},
				Readback: func(ctx context.Context, env *Env, a *Args, p map[string]any) (any, error) {
					attrs, _ := attrArgs(a)
					got, err := env.Kernel.GetBlockAttrs(ctx, a.String("id"))
					if err != nil {
						return nil, err
					}
					for k, v := range attrs {
						if stdhtml.UnescapeString(got[k]) != strings.TrimSpace(v) {
							return nil, fmt.Errorf("attribute %s reads back %q, want %q", k, got[k], v)
						}
					}
					return readBlockStates(ctx, env, idTarget(a))
				},
			},
		},
		{
			Name: "delete", Summary: "delete a block", Policy: guarded, Destructive: true,
			Params: []Param{idParam("id", "the block", true)},
			Write: &Write{
				Targets: idTarget,
				State: func(ctx context.Context, env *Env, a *Args) (any, error) {
					return readBlockStates(ctx, env, idTarget(a))
				},
				Execute: func(ctx context.Context, env *Env, a *Args) (map[string]any, error) {
					if _, err := env.Kernel.DeleteBlock(ctx, a.String("id")); err != nil {
						return nil, writeErr(err, false)
					}
					return map[string]any{"id": a.String("id"), "deleted": true}, nil
				},
				Readback: func(ctx context.Context, env *Env, a *Args, p map[string]any) (any, error) {
					// SiYuan queues deletes: poll existence, never infer it from a failed read.
					id := a.String("id")
					for _, wait := range []time.Duration{0, 50, 100, 200, 400, 800} {
						if err := sleepCtx(ctx, wait*time.Millisecond); err != nil {
							return nil, err
						}
						ok, err := env.Kernel.CheckBlockExist(ctx, id)
						if err != nil {
							return nil, err
						}
						if !ok {
							return readBlockStates(ctx, env, []string{id})
						}
					}
					return nil, fmt.Errorf("block %s still exists", id)
				},
			},
		},
		{
			Name: "set_fold_state", Summary: "fold or unfold a block", Policy: guarded,
			Params: []Param{idParam("id", "the block", true), {Name: "folded", Type: Boolean, Description: "true folds, false unfolds", Required: true}},
			Write: &Write{
				Targets: idTarget,
				State: func(ctx context.Context, env *Env, a *Args) (any, error) {
					return readBlockStates(ctx, env, idTarget(a))
				},
				Execute: func(ctx context.Context, env *Env, a *Args) (map[string]any, error) {
					var err error
					if a.Bool("folded") {
						err = env.Kernel.FoldBlock(ctx, a.String("id"))
					} else {
						err = env.Kernel.UnfoldBlock(ctx, a.String("id"))
					}
					if err != nil {
						return nil, writeErr(err, false)
					}
					return map[string]any{"id": a.String("id"), "folded": a.Bool("folded")}, nil
				},
				Readback: func(ctx context.Context, env *Env, a *Args, p map[string]any) (any, error) {
					attrs, err := env.Kernel.GetBlockAttrs(ctx, a.String("id"))
					if err != nil {
						return nil, err
					}
					if (attrs["fold"] == "1") != a.Bool("folded") {
						return nil, fmt.Errorf("fold attribute reads back %q", attrs["fold"])
					}
					return readBlockStates(ctx, env, idTarget(a))
				},
			},
		},
		{
			Name: "append", Summary: "add blocks as the last children of a container (document, list, quote, ...)", Policy: additive,
			Params: append([]Param{idParam("parentID", "the container", true)}, requiredData()...),
			Write: insertWrite(func(ctx context.Context, c *siyuan.Client, a *Args) ([]siyuan.Transaction, error) {
				return c.AppendBlock(ctx, a.String("dataType"), a.String("data"), a.String("parentID"))
			}, "parentID"),
		},
		{
			Name: "prepend", Summary: "add blocks as the first children of a container", Policy: additive,
			Params: append([]Param{idParam("parentID", "the container", true)}, requiredData()...),
			Write: insertWrite(func(ctx context.Context, c *siyuan.Client, a *Args) ([]siyuan.Transaction, error) {
				return c.PrependBlock(ctx, a.String("dataType"), a.String("data"), a.String("parentID"))
			}, "parentID"),
		},
		{
			Name: "insert", Summary: "add blocks after previousID, before nextID, or first in parentID", Policy: additive,
			Params: append([]Param{
				idParam("previousID", "insert after this block", false),
				idParam("nextID", "insert before this block", false),
				idParam("parentID", "insert as the first child of this container", false),
			}, requiredData()...),
			Write: insertWrite(func(ctx context.Context, c *siyuan.Client, a *Args) ([]siyuan.Transaction, error) {
				return c.InsertBlock(ctx, siyuan.InsertBlockRequest{DataType: a.String("dataType"), Data: a.String("data"),
					PreviousID: a.String("previousID"), NextID: a.String("nextID"), ParentID: a.String("parentID")})
			}, "previousID", "nextID", "parentID"),
		},
	}
}

func requiredData() []Param {
	return []Param{
		{Name: "data", Type: String, Description: "the content to add", Required: true},
		{Name: "dataType", Type: String, Description: "markdown (kramdown) or dom", Enum: []string{"markdown", "dom"}, Default: "markdown"},
	}
}

// insertWrite is the additive write shared by append, prepend and insert:
// the new ids come back, and the readback proves they exist.
func insertWrite(call func(context.Context, *siyuan.Client, *Args) ([]siyuan.Transaction, error), anchors ...string) *Write {
	return &Write{
		Targets: func(a *Args) []string {
			var ids []string
			for _, k := range anchors {
				if v := a.String(k); v != "" {
					ids = append(ids, v)
				}
			}
			return ids
		},
		Execute: func(ctx context.Context, env *Env, a *Args) (map[string]any, error) {
			n := 0
			for _, k := range anchors {
				if v := a.String(k); v != "" {
					if err := checkID(k, v); err != nil {
						return nil, strict.Reject(err)
					}
					n++
				}
			}
			if n == 0 {
				return nil, strict.Reject(badArg("pass one of %s", strings.Join(anchors, ", ")))
			}
			txs, err := call(ctx, env.Kernel, a)
			if err != nil {
				return nil, writeErr(err, false)
			}
			return map[string]any{"ids": siyuan.InsertedIDs(txs), "id": siyuan.FirstInsertedID(txs)}, nil
		},
		Readback: func(ctx context.Context, env *Env, a *Args, p map[string]any) (any, error) {
			ids, _ := p["ids"].([]string)
			if len(ids) == 0 {
				// SiYuan answers code 0 with no id when the insert failed in its queue.
				return nil, errors.New("the kernel reported no inserted block")
			}
			states, err := readBlockStates(ctx, env, ids)
			if err != nil {
				return nil, err
			}
			for _, s := range states {
				if s.Missing {
					return nil, fmt.Errorf("inserted block %s does not exist", s.ID)
				}
			}
			return states, nil
		},
	}
}

// execUpdate updates each target once, keeping its user attributes, and
// notes the text each update applied for the readback.
func execUpdate(ctx context.Context, env *Env, a *Args) (map[string]any, error) {
	items, err := updateItems(a)
	if err != nil {
		return nil, strict.Reject(err)
	}
	applied := map[string]string{}
	wrote := false
	for _, it := range items {
		before, err := env.Kernel.GetBlockAttrs(ctx, it.ID)
		if err != nil {
			if !wrote {
				return nil, strict.Reject(err)
			}
			return nil, err
		}
		writes, text, err := updateKeeping(ctx, env.Kernel, it.ID, it.DataType, it.Data, before)
		if err != nil {
			// A failure of the attribute restore comes after the content
			// write applied: never a clean rejection.
			return nil, writeErr(err, wrote || writes > 1)
		}
		wrote = true
		applied[it.ID] = text // a later item for the same id wins, as in the kernel
	}
	ids := make([]string, 0, len(applied))
	for id := range applied {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return map[string]any{"ids": ids, "updated": len(items), "_appliedText": applied}, nil
}

func attrArgs(a *Args) (map[string]string, error) {
	out := map[string]string{}
	for k, v := range a.Object("attrs") {
		switch x := v.(type) {
		case nil:
			out[k] = ""
		case string:
			out[k] = x
		default:
			return nil, badArg("attrs.%s must be a string or null", k)
		}
		if k == "id" || k == "updated" {
			return nil, badArg("attrs.%s is managed by SiYuan and cannot be set", k)
		}
	}
	if len(out) == 0 {
		return nil, badArg("attrs must name at least one attribute")
	}
	return out, nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
