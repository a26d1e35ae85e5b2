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

// replaceEdit is a planned block.replace: the block's body before and
// after the edits, and how many occurrences each edit replaced.
type replaceEdit struct {
	body, newBody string
	counts        []int
}

// replaced is how many occurrences the edits replaced in all.
func (e replaceEdit) replaced() int {
	n := 0
	for _, c := range e.counts {
		n += c
	}
	return n
}

// maxReplaceEdits bounds one call's edits, as fs.replace's.
const maxReplaceEdits = 64

// replaceArgs are block.replace's arguments: one edit given flat (old,
// new, replaceAll) or edit, one object or a list of them (upstream
// 0.6.8's form).
type replaceArgs struct {
	ID         string           `arg:"id" help:"the block" id:"" required:""`
	Edit       []map[string]any `arg:"edit" help:"{\"old\":..., \"new\":..., \"replace_all\":false} or a list of them (at most 64), applied in order, each on the text the ones before it left; each old must occur (once unless replace_all); all or nothing" oneOrMore:""`
	Old        *string          `arg:"old" help:"one edit, without edit: the exact text to replace, as get_kramdown shows it; must occur once unless replaceAll"`
	New        *string          `arg:"new" help:"with old: the replacement (may be empty)"`
	ReplaceAll bool             `arg:"replaceAll" help:"with old: replace every occurrence" default:"false"`
	// Edits are the edits asked, from old/new or from edit.
	Edits []markup.TextEdit
}

// planReplace checks the edits against the block's current state, in
// order, each on the text the ones before it left. The check that the
// result is one block parses the new text; Execute, whose state already
// passed that check, skips it (keepsOneBlock false) so that nothing heavy
// runs after the ledger recorded the write as executing.
func planReplace(st kernelview.BlockState, a replaceArgs, keepsOneBlock bool) (replaceEdit, error) {
	var e replaceEdit
	id := a.ID
	if st.Missing {
		return e, failure.Missing("block", id)
	}
	if typ := blockType(st.DOM); !replaceable[typ] {
		return e, failure.Invalid("block %s is a %s: replace edits the text of one paragraph or heading (not code, math, tables, HTML, embeds, "+
			"super blocks, databases or containers such as lists and quotes: target the paragraph inside)", id, strings.TrimPrefix(typ, "Node"))
	}
	e.body, _ = splitIAL(st.Kramdown)
	text := e.body
	for i, ed := range a.Edits {
		which := "old"
		if len(a.Edits) > 1 || a.Old == nil {
			which = fmt.Sprintf("edit #%d's old", i+1)
		}
		count := strings.Count(text, ed.Old)
		switch {
		case count == 0 && i > 0:
			return e, failure.Invalid("%s does not occur in block %s once the edits before it are applied", which, id)
		case count == 0:
			return e, failure.Invalid("%s does not occur in block %s", which, id)
		case count > 1 && !ed.ReplaceAll:
			return e, failure.Invalid("%s occurs %d times in block %s: pass replace_all:true (flat: replaceAll) or a longer old that occurs once", which, count, id)
		}
		n := 1
		if ed.ReplaceAll {
			n = -1
		}
		text = strings.Replace(text, ed.Old, ed.New, n)
		e.counts = append(e.counts, count)
	}
	e.newBody = text
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

// parseReplace reads the edits: flat old/new or edit, never both.
func parseReplace(r *replaceArgs) error {
	raw := r.Edit
	switch {
	case raw != nil && (r.Old != nil || r.New != nil || r.ReplaceAll):
		return failure.Invalid("give either edit or old/new/replaceAll, not both")
	case raw != nil:
		if len(raw) == 0 || len(raw) > maxReplaceEdits {
			return failure.Invalid("edit must hold 1 to %d edits, got %d", maxReplaceEdits, len(raw))
		}
		for i, m := range raw {
			e, err := markup.ParseEdit(i, m)
			if err != nil {
				return err
			}
			if strings.Contains(e.New, "{:") {
				return failure.Invalid("edit #%d: new must not contain an attribute list ({: ...}); set attributes with set_attrs", i+1)
			}
			r.Edits = append(r.Edits, e)
		}
		return nil
	case r.Old == nil && r.New == nil:
		return failure.Invalid("missing argument \"edit\": {\"old\":...,\"new\":...} or a list of them (or old and new)")
	case r.Old == nil || *r.Old == "":
		return failure.Invalid("old must not be empty")
	case r.New == nil:
		return failure.Invalid("old needs new (the replacement; may be empty)")
	case strings.Contains(*r.New, "{:"):
		return failure.Invalid("new must not contain an attribute list ({: ...}); set attributes with set_attrs")
	}
	r.Edits = []markup.TextEdit{{Old: *r.Old, New: *r.New, ReplaceAll: r.ReplaceAll}}
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
	Name: "replace", Summary: "exact text edits inside one paragraph or heading: replace old with new in its kramdown (once, or every occurrence with replaceAll), or apply edit (one {old, new, replace_all} or a list, in order, all or nothing); attributes are kept",
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
		p := tools.Payload{"id": a.ID, "replaced": edit.replaced()}
		if a.Edit != nil {
			p["edits"] = len(edit.counts)
		}
		return p, check, nil
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
