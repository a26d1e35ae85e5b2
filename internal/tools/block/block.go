// Package block is the block tool: read and change SiYuan blocks
// (kramdown, children, attributes, position, DOM; update, append, prepend,
// insert, delete, move, replace, attributes and fold state).
package block

import (
	"context"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/kernelview"
)

// Tool returns the block tool.
func Tool() *tools.Tool {
	return &tools.Tool{
		Name:  "block",
		Title: "Blocks",
		Description: "Read and change SiYuan blocks: kramdown (Markdown with block attributes), children, attributes, position and " +
			"rendered DOM, several kramdowns at once, breadcrumb, word count, document info and recently updated blocks; update, replace text, " +
			"append, prepend, insert, move, delete, set attributes and fold state, add to today's daily note, move references to another block. Writes are strict: " +
			"call with validateOnly:true first, then repeat with the requestId (and for guarded actions expectedStateHash) it returns.",
		Actions: []*tools.Action{
			getKramdown.Action(), getChildren.Action(), getAttrs.Action(), info.Action(), dom.Action(),
			update.Action(), setAttrs.Action(), deleteBlock.Action(), setFoldState.Action(),
			appendBlock.Action(), prependBlock.Action(), insertBlock.Action(),
			move.Action(), replace.Action(),
			addToDailyNote.Action(),
			batchKramdown.Action(), transferReferences.Action(), breadcrumb.Action(), recentUpdated.Action(),
			wordCount.Action(), docsInfo.Action(),
		},
	}
}

// reads is the scope of a read of one block: its notebook, readable.
var reads = tools.Scope[idArgs]{Touches: func(a idArgs) []tools.Touch { return []tools.Touch{tools.OnBlock(a.ID, tools.LevelRead)} }}

// idArgs are the arguments of an action on one block.
type idArgs struct {
	ID string `arg:"id" help:"the block" id:"" required:""`
}

var getKramdown = tools.Read[idArgs]{
	Name: "get_kramdown", Summary: "a block (with its descendants) as kramdown, attributes included",
	Scope: reads,
	Run: func(ctx context.Context, env *tools.Env, a idArgs) (any, error) {
		kd, err := env.Kernel.GetBlockKramdown(ctx, a.ID)
		if err != nil {
			return nil, err
		}
		// The kernel answers an unknown id with an empty kramdown.
		if kd.Kramdown == "" {
			if err := kernelview.MustExist(ctx, env, a.ID); err != nil {
				return nil, err
			}
		}
		veiled, err := tools.NewShownDatabases(env).VeilKramdown(ctx, kd.Kramdown)
		if err != nil {
			return nil, err
		}
		if p := tools.PolicyFrom(ctx); p != nil && p.FullReadInfo {
			// The full form: a block is read whole.
			out := map[string]any{"id": a.ID, "kramdown": veiled}
			tools.Cover(ctx, out, tools.ReadInfo{Scope: "block " + a.ID, Representation: "kramdown"})
			return out, nil
		}
		return kramdownResult{a.ID, veiled}, nil
	},
}

// kramdownResult is get_kramdown's answer; a struct encodes without the
// sorting and reflection a map takes (same bytes: its fields in key order).
type kramdownResult struct {
	ID       string `json:"id"`
	Kramdown string `json:"kramdown"`
}

type childrenArgs struct {
	ID string `arg:"id" help:"the parent block" id:"" required:""`
	tools.Paging
}

var getChildren = tools.Read[childrenArgs]{
	Name: "get_children", Summary: "a block's child blocks (a heading's: the blocks under it)",
	Scope: tools.Scope[childrenArgs]{Touches: func(a childrenArgs) []tools.Touch { return []tools.Touch{tools.OnBlock(a.ID, tools.LevelRead)} }},
	Run: func(ctx context.Context, env *tools.Env, a childrenArgs) (any, error) {
		if err := kernelview.MustExist(ctx, env, a.ID); err != nil {
			return nil, err
		}
		kids, err := env.Kernel.GetChildBlocks(ctx, a.ID)
		if err != nil {
			return nil, err
		}
		return tools.Paginate(kids, a.Page, a.PageSize).Fields(map[string]any{"id": a.ID}), nil
	},
}

var getAttrs = tools.Read[idArgs]{
	Name: "get_attrs", Summary: "a block's attributes (id, updated, custom-*, name, alias, ...)",
	Scope: reads,
	Run: func(ctx context.Context, env *tools.Env, a idArgs) (any, error) {
		attrs, err := env.Kernel.GetBlockAttrs(ctx, a.ID)
		if err != nil {
			return nil, err
		}
		// Every block has an id attribute; none means no block.
		if attrs["id"] == "" {
			return nil, failure.Missing("block", a.ID)
		}
		// The databases it is a row of that the call may not see are not
		// shown (see tools.ShownDatabases).
		if err := tools.NewShownDatabases(env).VeilAttrs(ctx, attrs); err != nil {
			return nil, err
		}
		return map[string]any{"id": a.ID, "attrs": attrs}, nil
	},
}

var info = tools.Read[idArgs]{
	Name: "info", Summary: "where a block lives: notebook, document, paths",
	Scope: reads,
	Run: func(ctx context.Context, env *tools.Env, a idArgs) (any, error) {
		if err := kernelview.MustExist(ctx, env, a.ID); err != nil {
			return nil, err
		}
		ref, err := kernelview.Describe(ctx, env, a.ID)
		if err != nil {
			return nil, err
		}
		return map[string]any{"id": a.ID, "document": ref, "isDocument": ref.ID == a.ID}, nil
	},
}

var dom = tools.Read[idArgs]{
	Name: "dom", Summary: "a block's rendered DOM, as SiYuan's editor shows it",
	Scope: reads,
	Run: func(ctx context.Context, env *tools.Env, a idArgs) (any, error) {
		d, err := env.Kernel.GetBlockDOM(ctx, a.ID)
		if err != nil {
			return nil, err
		}
		if d.DOM == "" {
			if err := kernelview.MustExist(ctx, env, a.ID); err != nil {
				return nil, err
			}
		}
		dom, err := tools.NewShownDatabases(env).VeilDOM(ctx, d.DOM)
		if err != nil {
			return nil, err
		}
		return map[string]any{"id": a.ID, "dom": dom}, nil
	},
}
