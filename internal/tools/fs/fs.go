package fs

import (
	"context"
	"errors"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/kernelview"
)

// Tool returns the fs tool.
func Tool() *tools.Tool {
	return &tools.Tool{
		Name:  "fs",
		Title: "Files by path",
		Description: "SiYuan documents as Markdown files addressed by human paths /<notebook>/<title>/<child>: " +
			"list, show as a tree, read in windows of whole blocks, search by line, create or overwrite, edit exact text, remove, move or rename, and set the manual order of children. " +
			"Two virtual files sit at the root: /AGENTS.md, your memory across sessions (read, write, replace, rm clears it), and /USER_RULES.md, the person's rules (read-only); a notebook named like one of them is shadowed here (reach it by id with the notebook and document tools). " +
			"Writes are strict: call with validateOnly:true first, then repeat with the requestId (and for guarded actions the credential) it returns.",
		Actions: []*tools.Action{
			tools.Read[lsArgs]{
				Name: "ls", Summary: "the direct children of a path: notebooks under /, documents under a notebook or document",
				Example: map[string]any{"path": "/"},
				Scope: tools.Scope[lsArgs]{Resolve: func(ctx context.Context, env *tools.Env, a lsArgs) ([]tools.Touch, error) {
					return onRaw(ctx, env, tools.LevelRead, a.Path)
				}},
				Run: ls,
			}.Action(),
			treeAction.Action(),
			tools.Read[readArgs]{
				Name: "read", Summary: "a document as editable Markdown, in windows of whole top-level blocks",
				Example: map[string]any{"path": "/Research/Reading list"},
				Scope: tools.Scope[readArgs]{Resolve: func(ctx context.Context, env *tools.Env, a readArgs) ([]tools.Touch, error) {
					return onRaw(ctx, env, tools.LevelRead, a.Path)
				}},
				Run: readFile,
			}.Action(),
			write.Action(), replace.Action(), rm.Action(), mv.Action(), reorder.Action(), searchAction.Action(),
		},
	}
}

// onPaths are the notebooks of human paths, with what a call needs there.
// A path whose notebook does not resolve touches nothing: the action
// answers not_found (or ambiguous_path) itself.
func onPaths(ctx context.Context, env *tools.Env, need tools.Level, paths ...humanPath) ([]tools.Touch, error) {
	var out []tools.Touch
	for _, p := range paths {
		if p.isRoot() || p.Virtual != "" {
			continue // in no notebook
		}
		nb, err := notebookNamed(ctx, env, p.Notebook)
		var fe *failure.Error
		if errors.As(err, &fe) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, tools.OnNotebook(nb.ID, need))
	}
	return out, nil
}

// onRaw is onPaths of paths as sent (a malformed one touches nothing: the
// action refuses it).
func onRaw(ctx context.Context, env *tools.Env, need tools.Level, raws ...string) ([]tools.Touch, error) {
	var ps []humanPath
	for _, r := range raws {
		if p, err := parsePath("path", r); err == nil {
			ps = append(ps, p)
		}
	}
	return onPaths(ctx, env, need, ps...)
}

// sortedTargets are the paths a call touches, as its lease scope.
func sortedTargets(paths ...string) []string { return kernelview.SortedUnique(paths) }
