package block

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"golang.org/x/net/html"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/kernelview"
	"github.com/sisyphus-go/sisyphus/internal/tools/markup"
)

// replaceable are the block types block.replace edits: leaf text blocks.
var replaceable = map[string]bool{"NodeParagraph": true, "NodeHeading": true}

// blockType is the data-type of a block's outer DOM element.
func blockType(dom string) string {
	z := html.NewTokenizer(strings.NewReader(dom))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return ""
		case html.StartTagToken, html.SelfClosingTagToken:
			for _, a := range z.Token().Attr {
				if a.Key == "data-type" {
					return a.Val
				}
			}
			return ""
		}
	}
}

// splitIAL: see markup (fs.replace shares it).
func splitIAL(kd string) (body, ial string) { return markup.SplitIAL(kd) }

// replaceEdit is a planned block.replace.
type replaceEdit struct {
	body, newBody string
	count         int
}

// replaceArgs are block.replace's arguments.
type replaceArgs struct {
	ID         string `arg:"id" help:"the block" id:"" required:""`
	Old        string `arg:"old" help:"the exact text to replace, as get_kramdown shows it; must occur once unless replaceAll" required:""`
	New        string `arg:"new" help:"the replacement (may be empty)" required:""`
	ReplaceAll bool   `arg:"replaceAll" help:"replace every occurrence" default:"false"`
}

// planReplace checks the edit against the block's current state. The
// check that the edit keeps one block parses the new text; Execute, whose
// state already passed that check, skips it (keepsOneBlock false) so that
// nothing heavy runs after the ledger recorded the write as executing.
func planReplace(st kernelview.BlockState, a replaceArgs, keepsOneBlock bool) (replaceEdit, error) {
	var e replaceEdit
	id, old, repl := a.ID, a.Old, a.New
	if st.Missing {
		return e, failure.Missing("block", id)
	}
	if typ := blockType(st.DOM); !replaceable[typ] {
		return e, failure.Invalid("block %s is a %s: replace edits the text of one paragraph or heading (not code, math, tables, HTML, embeds, "+
			"super blocks, databases or containers such as lists and quotes: target the paragraph inside)", id, strings.TrimPrefix(typ, "Node"))
	}
	e.body, _ = splitIAL(st.Kramdown)
	e.count = strings.Count(e.body, old)
	switch {
	case e.count == 0:
		return e, failure.Invalid("old does not occur in block %s", id)
	case e.count > 1 && !a.ReplaceAll:
		return e, failure.Invalid("old occurs %d times in block %s: pass replaceAll:true or a longer old that occurs once", e.count, id)
	}
	n := 1
	if a.ReplaceAll {
		n = -1
	}
	e.newBody = strings.Replace(e.body, old, repl, n)
	if strings.TrimSpace(e.newBody) == "" {
		return e, failure.Invalid("the edit would leave block %s empty: delete it with block.delete instead", id)
	}
	if !keepsOneBlock {
		return e, nil
	}
	if blocks, err := topLevelBlocks(e.newBody); err != nil || blocks != 1 {
		return e, failure.Invalid("the edit must keep block %s one block (no blank lines or new block syntax)", id)
	}
	return e, nil
}

func parseReplace(r *replaceArgs) error {
	if r.Old == "" {
		return failure.Invalid("old must not be empty")
	}
	if strings.Contains(r.New, "{:") {
		return failure.Invalid("new must not contain an attribute list ({: ...}); set attributes with set_attrs")
	}
	return nil
}

// keptAttrs are the attributes a replace writes back in the block's IAL:
// all but the ones SiYuan manages.
func keptAttrs(attrs map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range attrs {
		if k != "id" && k != "updated" && v != "" {
			out[k] = v
		}
	}
	return out
}

// replaceDigests are what a replace hands its readback: digests only,
// never the text.
type replaceDigests struct {
	// expect is the digest of the edited kramdown body; applied, of the
	// text the kernel says it applied ("" when it said nothing).
	expect, applied string
}

func textDigest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

var replace = tools.WriteWith[replaceArgs, states, replaceDigests]{Write: tools.Write[replaceArgs, states]{
	Name: "replace", Summary: "exact text edit inside one paragraph or heading: replace old with new in its kramdown (once, or every occurrence with replaceAll); attributes are kept",
	Policy:   strict.WritePolicy{Class: strict.Mutation, Precondition: strict.ExpectedStateHash},
	Example:  map[string]any{"id": "20260812120000-abcdefg", "old": "teh", "new": "the", "validateOnly": true},
	Validate: parseReplace,
	Scope:    tools.Scope[replaceArgs]{Touches: func(a replaceArgs) []tools.Touch { return []tools.Touch{tools.OnBlock(a.ID, tools.LevelWrite)} }},
	Targets:  func(a replaceArgs) []string { return []string{a.ID} },
	State: func(ctx context.Context, env *tools.Env, a replaceArgs) (states, error) {
		st, err := kernelview.ReadBlockState(ctx, env, a.ID)
		if err != nil {
			return nil, err
		}
		return states{st}, nil
	},
	Check: func(a replaceArgs, st states) error {
		_, err := planReplace(st[0], a, true)
		return err
	},
},
	Execute: func(ctx context.Context, env *tools.Env, a replaceArgs, st states) (tools.Payload, replaceDigests, error) {
		var check replaceDigests
		edit, err := planReplace(st[0], a, false)
		if err != nil {
			return nil, check, tools.Refuse(err)
		}
		data := edit.newBody
		if keep := keptAttrs(st[0].Attrs); len(keep) > 0 {
			data += "\n" + ialLine(keep)
		}
		txs, err := env.Kernel.UpdateBlock(ctx, a.ID, "markdown", data)
		if err != nil {
			return nil, check, tools.WriteFailure(err, false)
		}
		if env.StrictOn(ctx) {
			// Only a strict commit reads back.
			check.expect = textDigest(edit.newBody)
			if t, ok := appliedText(txs, a.ID); ok && t != "" {
				check.applied = textDigest(t)
			}
		}
		return tools.Payload{"id": a.ID, "replaced": edit.count}, check, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a replaceArgs, _ tools.Payload, check replaceDigests) (any, error) {
		expect, applied := check.expect, check.applied
		read := func(ctx context.Context) (kernelview.BlockState, error) {
			st, err := kernelview.ReadBlockState(ctx, env, a.ID)
			if err == nil && st.Missing {
				err = fmt.Errorf("block %s is gone after the replace", a.ID)
			}
			return st, err
		}
		st, err := tools.Await(ctx, read, func(st kernelview.BlockState) error {
			// The edited kramdown reads back exactly, or (when the kernel
			// respells markdown) the block shows exactly the text the
			// kernel applied for this edit.
			body, _ := splitIAL(st.Kramdown)
			if textDigest(body) == expect || applied != "" && textDigest(markup.DOMText(st.DOM)) == applied {
				return nil
			}
			return fmt.Errorf("block %s does not show the edit", a.ID)
		})
		if err != nil {
			return nil, err
		}
		return states{st}, nil
	},
}
