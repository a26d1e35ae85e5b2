package tag

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

var guarded = strict.WritePolicy{Class: strict.Mutation, Precondition: strict.ExpectedManifestHash}

// markers are the characters SiYuan refuses in a new label when the label
// is all ASCII (it checks no other).
const markers = "*_[]\n!\\`<>&~${}()=#^"

type renameArgs struct {
	OldLabel string `arg:"oldLabel" help:"the tag to rename" required:""`
	NewLabel string `arg:"newLabel" help:"its new label (a/b nests it under a)" required:""`
}

// check applies SiYuan's rules to the labels (newLabel trimmed as SiYuan
// trims it) and refuses a rename a readback could not verify.
func (a *renameArgs) check() error {
	old, err := parseLabel("oldLabel", a.OldLabel)
	if err != nil {
		return err
	}
	nw, err := newLabelOf(a.NewLabel)
	if err != nil {
		return err
	}
	switch {
	case nw == old:
		return failure.Invalid("newLabel is the tag's current label; nothing to rename")
	case strings.HasPrefix(nw, old+"/"):
		e := failure.Invalid("newLabel %q is nested under %q itself, which a readback cannot tell from the old tag", nw, old)
		e.Action = "rename it to a temporary label first, then to " + nw
		return e
	}
	a.OldLabel, a.NewLabel = old, nw
	return nil
}

// removeArgs are remove's: one label.
type removeArgs struct {
	Label string `arg:"label" help:"the tag to remove" required:""`
}

// parseLabel refuses an empty label.
func parseLabel(field, v string) (string, error) {
	if strings.TrimSpace(v) == "" {
		return "", failure.Invalid("argument %q must name a tag, like project or project/2026", field)
	}
	return v, nil
}

// newLabelOf applies SiYuan's rules to a new label: no Markdown marker in
// an ASCII label, slashes and spaces trimmed, not empty.
func newLabelOf(v string) (string, error) {
	ascii := !strings.ContainsFunc(v, func(r rune) bool { return r > 0x7f })
	if i := strings.IndexAny(v, markers); ascii && i >= 0 {
		return "", failure.Invalid("newLabel %q holds the Markdown marker %q, which SiYuan refuses in a tag", v, v[i])
	}
	l := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(v, "/"), "/"))
	if l == "" {
		return "", failure.Invalid("newLabel must name a tag, like project or project/2026")
	}
	// SiYuan checks the label as given; once trimmed of a non-ASCII space
	// it may be ASCII with a marker, which would break the #…# it writes.
	ascii = !strings.ContainsFunc(l, func(r rune) bool { return r > 0x7f })
	if i := strings.IndexAny(l, markers); ascii && i >= 0 {
		return "", failure.Invalid("newLabel %q holds the Markdown marker %q, which SiYuan refuses in a tag", v, l[i])
	}
	return l, nil
}

// renamed is a label after the rename (itself when it is not affected).
func (a renameArgs) renamed(l string) string {
	if carries(l, a.OldLabel, true) {
		return strings.Replace(l, a.OldLabel, a.NewLabel, 1)
	}
	return l
}

// rename and remove hand their readback each tagged block's labels after
// the change (expectAfter).
var rename = tools.WriteWith[renameArgs, tagState, map[string][]string]{Write: tools.Write[renameArgs, tagState]{
	Name: "rename", Summary: "rename a tag in every block and document that carries it; nested tags follow (old/x becomes new/x); needs write on every notebook that uses it",
	Policy:   guarded,
	Example:  map[string]any{"oldLabel": "draft", "newLabel": "review/draft", "validateOnly": true},
	Validate: (*renameArgs).check,
	Scope: tools.Scope[renameArgs]{Resolve: func(ctx context.Context, env *tools.Env, a renameArgs) ([]tools.Touch, error) {
		if err := tools.RefuseWhileHidden(ctx, "tag.rename"); err != nil {
			return nil, err
		}
		st, err := readTagState(ctx, env, a.OldLabel, true)
		return st.touches(tools.LevelWrite), err
	}},
	Targets: func(a renameArgs) []string { return []string{a.OldLabel} },
	State: func(ctx context.Context, env *tools.Env, a renameArgs) (tagState, error) {
		return readTagState(ctx, env, a.OldLabel, true)
	},
	Check: func(a renameArgs, st tagState) error { return mustCarry(st) },
	Notes: func(_ renameArgs, st tagState) map[string]any { return notes(st) },
},
	Execute: func(ctx context.Context, env *tools.Env, a renameArgs, st tagState) (tools.Payload, map[string][]string, error) {
		if err := env.Kernel.RenameTag(ctx, a.OldLabel, a.NewLabel); err != nil {
			return nil, nil, tools.WriteFailure(err, false)
		}
		return tools.Payload{"oldLabel": a.OldLabel, "newLabel": a.NewLabel, "blockCount": len(st.Blocks)}, expectAfter(st, a.renamed), nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a renameArgs, _ tools.Payload, expect map[string][]string) (any, error) {
		return verify(ctx, env, a.OldLabel, true, expect)
	},
}

var remove = tools.WriteWith[removeArgs, tagState, map[string][]string]{Write: tools.Write[removeArgs, tagState]{
	Name: "remove", Summary: "remove a tag from every block (its #label# text goes) and document; nested tags (label/x) stay; needs delete on every notebook that uses it (a person must confirm)",
	Policy: guarded, Destructive: true, Dangerous: true,
	Example: map[string]any{"label": "obsolete", "validateOnly": true},
	Validate: func(a *removeArgs) error {
		_, err := parseLabel("label", a.Label)
		return err
	},
	// Removing a tag deletes text the user wrote, in every notebook that
	// uses it, with no undo but SiYuan's history: as upstream checks for a
	// dangerous action, each of those notebooks must allow delete.
	Scope: tools.Scope[removeArgs]{Resolve: func(ctx context.Context, env *tools.Env, a removeArgs) ([]tools.Touch, error) {
		if err := tools.RefuseWhileHidden(ctx, "tag.remove"); err != nil {
			return nil, err
		}
		st, err := readTagState(ctx, env, a.Label, false)
		return st.touches(tools.LevelDelete), err
	}},
	Targets: func(a removeArgs) []string { return []string{a.Label} },
	State: func(ctx context.Context, env *tools.Env, a removeArgs) (tagState, error) {
		return readTagState(ctx, env, a.Label, false)
	},
	Check: func(_ removeArgs, st tagState) error { return mustCarry(st) },
	Notes: func(_ removeArgs, st tagState) map[string]any { return notes(st) },
},
	Execute: func(ctx context.Context, env *tools.Env, a removeArgs, st tagState) (tools.Payload, map[string][]string, error) {
		if err := env.Kernel.RemoveTag(ctx, a.Label); err != nil {
			return nil, nil, tools.WriteFailure(err, false)
		}
		drop := func(l string) string {
			if l == a.Label {
				return ""
			}
			return l
		}
		return tools.Payload{"label": a.Label, "blockCount": len(st.Blocks)}, expectAfter(st, drop), nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a removeArgs, _ tools.Payload, expect map[string][]string) (any, error) {
		return verify(ctx, env, a.Label, false, expect)
	},
}

func mustCarry(st tagState) error {
	if len(st.Blocks) == 0 {
		return failure.New(failure.NotFound, "no block or document carries the tag %q; nothing to change", st.Label).Attempted(false)
	}
	return nil
}

func notes(st tagState) map[string]any {
	nbs := map[string]bool{}
	for _, b := range st.Blocks {
		nbs[b.Notebook] = true
	}
	return map[string]any{"blockCount": len(st.Blocks), "notebookCount": len(nbs)}
}

// expectAfter is each tagged block's labels after the change (map turns
// a label into its new one, "" to drop it).
func expectAfter(st tagState, change func(string) string) map[string][]string {
	out := make(map[string][]string, len(st.Blocks))
	for _, b := range st.Blocks {
		var want []string
		for _, l := range b.Labels {
			if n := change(l); n != "" {
				want = append(want, n)
			}
		}
		out[b.ID] = want
	}
	return out
}

// verify is the readback of a rename or removal: no block carries the
// tag any more, and every formerly tagged block carries exactly the set
// of labels the change leaves it (expect: the renamed ones, its others).
func verify(ctx context.Context, env *tools.Env, label string, nested bool, expect map[string][]string) (any, error) {
	ids := make([]string, 0, len(expect))
	for id := range expect {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return tools.Await(ctx, func(ctx context.Context) (tagState, error) {
		return readTagState(ctx, env, label, nested)
	}, func(st tagState) error {
		if len(st.Blocks) > 0 {
			return fmt.Errorf("%d blocks still carry the tag %q (%s first)", len(st.Blocks), label, st.Blocks[0].ID)
		}
		spans, err := tagSpans(ctx, env, "", ids)
		if err != nil {
			return err
		}
		got := map[string][]string{}
		for _, s := range spans {
			got[s.Block] = append(got[s.Block], s.Label)
		}
		for _, id := range ids {
			have, want := labelSet(got[id]), labelSet(expect[id])
			if !slices.Equal(have, want) {
				return fmt.Errorf("block %s carries the tags %q, want %q", id, have, want)
			}
		}
		return nil
	})
}
