package kernelview

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// DocRef is where a document lives.
type DocRef struct {
	ID       string `json:"id"`
	Notebook string `json:"notebook"`
	Path     string `json:"path"`
	HPath    string `json:"hpath"`
	Title    string `json:"title"`
}

// Describe resolves the document holding a block (or the document itself)
// from one id.
func Describe(ctx context.Context, env *tools.Env, id string) (DocRef, error) {
	info, err := env.Kernel.GetBlockInfo(ctx, id)
	if err != nil {
		return DocRef{}, blockErr(ctx, env, id, err)
	}
	hp, err := env.Kernel.GetHPathByID(ctx, info.RootID)
	if err != nil {
		return DocRef{}, err
	}
	return DocRef{ID: info.RootID, Notebook: info.Box, Path: info.Path, HPath: hp, Title: info.RootTitle}, nil
}

// blockErr reports a missing block as not_found: the kernel answers unknown
// ids with assorted messages, so existence is checked directly.
func blockErr(ctx context.Context, env *tools.Env, id string, err error) error {
	if ok, cerr := env.Kernel.CheckBlockExist(ctx, id); cerr == nil && !ok {
		return failure.Missing("block", id)
	}
	return err
}

// MustExist answers not_found for a block the kernel does not know: SiYuan
// answers an unknown id with an empty success on several read endpoints.
func MustExist(ctx context.Context, env *tools.Env, id string) error {
	ok, err := env.Kernel.CheckBlockExist(ctx, id)
	if err != nil {
		return err
	}
	if !ok {
		return failure.Missing("block", id)
	}
	return nil
}

// ChildDoc is one document of a file-tree listing.
type ChildDoc struct {
	ID           string `json:"id"`
	Title        string `json:"title"`
	Path         string `json:"path"`
	Icon         string `json:"icon,omitempty"`
	SubFileCount int    `json:"subFileCount"`
	Sort         int    `json:"sort"`
}

// ListChildren lists the documents directly under a storage path ("/" for
// a notebook's root), unlimited, in the notebook's sort order.
func ListChildren(ctx context.Context, env *tools.Env, nb, p string) ([]ChildDoc, error) {
	unlimited := 0
	list, err := env.Kernel.ListDocsByPath(ctx, siyuan.ListDocsRequest{Notebook: nb, Path: p, MaxListCount: &unlimited})
	if err != nil {
		return nil, err
	}
	out := make([]ChildDoc, 0, len(list.Files))
	for _, f := range list.Files {
		out = append(out, ChildDoc{f.ID, f.Name, f.Path, f.Icon, f.SubFileCount, f.Sort})
	}
	return out, nil
}

// WindowArgs are the arguments of a Markdown window read, declared once
// for every action that embeds them in its argument type.
type WindowArgs struct {
	BlockStart      int  `arg:"blockStart" help:"0-based index of the first top-level block" default:"0" min:"0"`
	BlockLimit      int  `arg:"blockLimit" help:"at most this many blocks" default:"50" min:"1" max:"200"`
	TokenBudget     int  `arg:"tokenBudget" help:"stop adding blocks past this many estimated tokens (one block is always returned)" default:"2000" min:"1" max:"32000"`
	IncludeBlockIds bool `arg:"includeBlockIds" help:"also list each returned block's id and type" default:"false"`
}

// Window asks for a document as Markdown from BlockStart, at most
// BlockLimit blocks and about TokenBudget tokens.
type Window struct {
	ID string
	WindowArgs
	// Tool and Address name the read that continues the window (its
	// action and addressing arguments): document.get_doc by id when empty.
	Tool    string
	Address map[string]any
}

// CoverWindow completes a window's answer with readInfo and the step that
// reads the next window (the window's own tool and addressing), when the
// window did not reach the document's end.
func CoverWindow(ctx context.Context, ret map[string]any, w Window, scope string, from, n, total int) {
	if from+n >= total {
		// Coverage is of what was asked: the blocks from blockStart on.
		tools.Cover(ctx, ret, tools.ReadInfo{Scope: fmt.Sprintf("%s from top-level block %d", scope, from), Representation: "markdown"})
		return
	}
	next := map[string]any{}
	for k, v := range w.Address {
		next[k] = v
	}
	next["blockStart"], next["blockLimit"], next["tokenBudget"] = from+n, w.BlockLimit, w.TokenBudget
	ret["nextWindow"] = next
	tools.Cover(ctx, ret, tools.ReadInfo{Scope: fmt.Sprintf("%s from top-level block %d", scope, from), Representation: "markdown",
		Limitations: []string{tools.WindowLimit("top-level blocks", from, n, total) + " (blockLimit or tokenBudget)"}},
		tools.NextStep{Purpose: "read the next window", Tool: w.Tool, Arguments: next})
}

// EstimateTokens approximates a model's token count: about four characters each.
func EstimateTokens(s string) int { return (utf8.RuneCountInString(s) + 3) / 4 }

type windowBlock struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	SubType string `json:"subType,omitempty"`
}

// ReadWindow reads one window of a document as editable Markdown, in whole
// top-level blocks, with the outline and (when more remain) the arguments
// of the next window under "nextWindow".
func ReadWindow(ctx context.Context, env *tools.Env, w Window) (map[string]any, error) {
	id := w.ID
	ref, err := Describe(ctx, env, id)
	if err != nil {
		return nil, err
	}
	if ref.ID != id {
		return nil, failure.Invalid("%s is a block of document %s, not a document; read it with block.get_kramdown or pass the document id", id, ref.ID)
	}
	children, err := env.Kernel.GetChildBlocks(ctx, id)
	if err != nil {
		return nil, err
	}
	start, limit, budget := w.BlockStart, w.BlockLimit, w.TokenBudget
	total := len(children)
	var parts []string
	var blocks []windowBlock
	tokens, over := 0, false
	i := start
	for ; i < total && len(parts) < limit; i++ {
		md := children[i].Markdown
		t := EstimateTokens(md)
		if len(parts) > 0 && tokens+t > budget {
			break
		}
		if len(parts) == 0 && t > budget {
			over = true // a single block larger than the budget is returned whole
		}
		tokens += t
		parts = append(parts, md)
		blocks = append(blocks, windowBlock{children[i].ID, children[i].Type, children[i].SubType})
	}
	ret := map[string]any{
		"document": ref, "content": strings.Join(parts, "\n\n"), "blockStart": start,
		"returnedBlocks": len(parts), "totalBlocks": total, "estimatedTokens": tokens,
		"truncated": i < total, "hasNextWindow": i < total, "outline": Outline(children),
	}
	if over {
		ret["budgetExceeded"] = true
	}
	if w.IncludeBlockIds {
		if blocks == nil {
			blocks = []windowBlock{}
		}
		ret["blocks"] = blocks
	}
	if w.Tool == "" {
		w.Tool, w.Address = "document", map[string]any{"action": "get_doc", "id": id}
	}
	CoverWindow(ctx, ret, w, "document "+id, start, len(parts), total)
	return ret, nil
}

// Heading is one entry of a document's outline.
type Heading struct {
	ID       string     `json:"id"`
	Level    int        `json:"level"`
	Text     string     `json:"text"`
	Children []*Heading `json:"children"`
}

// Outline nests the top-level headings by level.
func Outline(children []siyuan.ChildBlock) []*Heading {
	root := &Heading{Level: 0, Children: []*Heading{}}
	stack := []*Heading{root}
	for _, c := range children {
		if c.Type != "h" || len(c.SubType) != 2 {
			continue
		}
		h := &Heading{ID: c.ID, Level: int(c.SubType[1] - '0'), Text: c.Content, Children: []*Heading{}}
		for len(stack) > 1 && stack[len(stack)-1].Level >= h.Level {
			stack = stack[:len(stack)-1]
		}
		parent := stack[len(stack)-1]
		parent.Children = append(parent.Children, h)
		stack = append(stack, h)
	}
	return root.Children
}
