package fs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/canon"
	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/markup"
)

// writeArgs are fs.write's arguments.
type writeArgs struct {
	RawPath   string  `arg:"path" help:"the document's path /<notebook>/<title>/<child title>; missing parents are created empty" required:""`
	Markdown  *string `arg:"markdown" help:"the body as Markdown; a leading \"# <title>\" repeating the title is dropped (upstream's name; content is the same)"`
	Text      *string `arg:"content" help:"the body, as markdown (give one of the two)"`
	Overwrite bool    `arg:"overwrite" help:"replace the body of the document at path (a guarded mutation: preflight returns expectedStateHash)" default:"false"`
	// Path and Content are the path parsed and the body given.
	Path    humanPath
	Content string
}

// body is the content without a leading title line that repeats the title
// (a virtual file keeps its text as given).
func (a writeArgs) body() string {
	if a.Path.Virtual != "" {
		return a.Content
	}
	return stripTitle(a.Content, a.Path.Title())
}

func (w *writeArgs) parse() error {
	p, err := parseDocPath("path", w.RawPath)
	if err != nil {
		return err
	}
	w.Path = p
	// markdown is upstream's name of the body, content this server's first
	// one: either is accepted, not both.
	switch {
	case w.Markdown != nil && w.Text != nil:
		return failure.Invalid("give the body as markdown or as content, not both")
	case w.Markdown != nil:
		w.Content = *w.Markdown
	case w.Text != nil:
		w.Content = *w.Text
	default:
		return failure.Invalid("missing argument \"markdown\" (the body; content is accepted too)")
	}
	switch p.Virtual {
	case rulesFile:
		return readOnly(p.Virtual)
	case memoryFile:
		if err := checkText(w.Content); err != nil {
			return err
		}
	}
	if w.Overwrite && strings.TrimSpace(w.body()) == "" {
		return failure.Invalid("overwrite needs a non-empty body; to remove the document use rm")
	}
	return nil
}

var guarded = strict.WritePolicy{Class: strict.Mutation, Precondition: strict.ExpectedStateHash}

// written is what write's Execute hands its readback, typed rather than
// read back from the payload's "id" and "notebook": the document written,
// its notebook, and, for an overwrite, the digest of the text the kernel
// applied ("" when it said nothing, and for a creation).
type written struct {
	ID, Notebook, Want string
}

var write = tools.WriteWith[writeArgs, docState, written]{Write: tools.Write[writeArgs, docState]{
	Name: "write", Destructive: true,
	Example: map[string]any{"path": "/Research/Reading list", "markdown": "- Dune\n- The Left Hand of Darkness", "validateOnly": true},
	Summary: "create a document at a path from Markdown (additive: requestId only; refused if the path exists); " +
		"overwrite:true replaces the body of the document there, or creates it where the path is free (guarded by expectedStateHash; refused for documents " +
		"holding databases, super blocks, embeds, widgets, HTML, media or blocks with name/alias/memo/bookmark/style/custom-* attributes); " +
		"on " + memoryFile + " it sets your memory text (overwrite:true to replace it), kept in Sisyphus's configuration",
	Policy: guarded,
	PolicyFor: func(a writeArgs) strict.WritePolicy {
		if a.Overwrite {
			return guarded
		}
		return strict.WritePolicy{Class: strict.Additive}
	},
	Validate: (*writeArgs).parse,
	Scope: tools.Scope[writeArgs]{Resolve: func(ctx context.Context, env *tools.Env, a writeArgs) ([]tools.Touch, error) {
		return onPaths(ctx, env, tools.LevelWrite, a.Path)
	}},
	Targets: func(a writeArgs) []string { return []string{a.Path.Raw} },
	// An overwrite is guarded by the path's document (or its absence and
	// the parent that would take it); a create checks that the notebook
	// exists and the path is free.
	State: writeState,
	Check: func(a writeArgs, st docState) error {
		switch {
		case st.Virtual && !st.Missing && !a.Overwrite:
			return failure.Invalid("%s already holds text; nothing was written: pass overwrite:true to replace it, or use replace to edit it", a.Path.Raw)
		case st.Virtual:
			return nil
		case !st.Missing && !a.Overwrite:
			return failure.Invalid("a document already exists at %s (%s); nothing was written: pass overwrite:true to replace its body", a.Path.Raw, st.RootID)
		case !st.Missing:
			return overwriteRefusal(a.Path.Raw, st.Blocks)
		}
		return nil
	},
},
	// An overwrite hands its readback the digest of the text the kernel
	// applied.
	Execute:  writeExec,
	Readback: writeReadback,
}

func writeState(ctx context.Context, env *tools.Env, a writeArgs) (docState, error) {
	p := a.Path
	if p.Virtual != "" {
		return virtualState(ctx, env, p.Virtual)
	}
	t, err := resolve(ctx, env, p)
	switch {
	case err != nil:
		return docState{}, err
	case !t.Missing && a.Overwrite:
		return docStateWith(ctx, env, p, t.Notebook.ID, t.DocID, false)
	case !t.Missing:
		return docState{Path: p.Raw, Notebook: t.Notebook.ID, RootID: t.DocID}, nil
	}
	st := docState{Path: p.Raw, Missing: true, Notebook: t.Notebook.ID}
	if len(p.Titles) > 1 {
		pids, err := liveDocs(ctx, env, t.Notebook.ID, p.Parent().HPath())
		if err != nil {
			return docState{}, err
		}
		switch len(pids) {
		case 0: // created empty by createDocWithMd
		case 1:
			st.Parent = pids[0]
		default:
			return docState{}, ambiguous("document", p.Parent().Raw, pids)
		}
	}
	return st, nil
}

// writeExec overwrites the document the state, read just now, found at
// the path, or creates one where the path is free. An overwrite returns
// the digest of the text the kernel applied ("" for the others).
func writeExec(ctx context.Context, env *tools.Env, a writeArgs, st docState) (tools.Payload, written, error) {
	if st.Virtual {
		p, err := setMemory(ctx, env, a.body())
		return p, written{}, err
	}
	if !st.Missing {
		return overwriteDoc(ctx, env, a, st)
	}
	p := a.Path
	id, err := env.Kernel.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: st.Notebook, Path: p.HPath(),
		Markdown: a.body(), ParentID: st.Parent})
	if err != nil {
		return nil, written{}, tools.WriteFailure(err, false)
	}
	return tools.Payload{"path": p.Raw, "id": id, "notebook": st.Notebook, "created": true}, written{ID: id, Notebook: st.Notebook}, nil
}

// overwriteDoc replaces the body of the document the state, read at
// commit, found at the path (and checked: no block an overwrite would
// lose), and returns the digest of the text the kernel applied ("" when it
// said nothing).
func overwriteDoc(ctx context.Context, env *tools.Env, a writeArgs, st docState) (tools.Payload, written, error) {
	p, nb, id, body := a.Path, st.Notebook, st.RootID, a.body()
	// updateBlock on a document id replaces its whole body in one write.
	txs, err := env.Kernel.UpdateBlock(ctx, id, "markdown", body)
	if err != nil {
		return nil, written{}, tools.WriteFailure(err, false)
	}
	var applied []string
	for _, tx := range txs {
		for _, op := range tx.DoOperations {
			if d, ok := op.Data.(string); ok && op.ParentID == id && strings.HasSuffix(op.Action, "nsert") {
				applied = append(applied, markup.DOMText(d))
			}
		}
	}
	var want string
	if len(applied) > 0 {
		want = canon.DigestBytes([]byte(strings.Join(applied, " ")))
	}
	return tools.Payload{"path": p.Raw, "id": id, "notebook": nb, "overwritten": true}, written{ID: id, Notebook: nb, Want: want}, nil
}

// writeReadback checks the document is at the path and, when its Execute
// handed the digest want of the text the kernel applied, shows that text.
func writeReadback(ctx context.Context, env *tools.Env, a writeArgs, _ tools.Payload, w written) (any, error) {
	p := a.Path
	if p.Virtual != "" {
		return memoryReadback(ctx, env, a.body())
	}
	id, want := w.ID, w.Want
	if id == "" {
		return nil, errors.New("the kernel reported no document id")
	}
	nb := w.Notebook
	if nb == "" {
		n, err := notebookNamed(ctx, env, p.Notebook)
		if err != nil {
			return nil, err
		}
		nb = n.ID
	}
	// The document exists (live check first), then the path resolves to it.
	if err := waitFor(ctx, func() (bool, error) {
		ok, err := env.Kernel.CheckBlockExist(ctx, id)
		if err != nil || !ok {
			return false, err
		}
		ids, err := liveDocs(ctx, env, nb, p.HPath())
		return slices.Contains(ids, id), err
	}); err != nil {
		return nil, fmt.Errorf("document %s at %s: %w", id, p.Raw, err)
	}
	st, err := readDocAt(ctx, env, p, nb, id)
	if err != nil {
		return nil, err
	}
	if st.Missing {
		return nil, fmt.Errorf("document %s is gone", id)
	}
	if want != "" {
		if got := canon.DigestBytes([]byte(markup.DOMText(st.dom))); got != want {
			return nil, fmt.Errorf("document %s does not show the requested body", id)
		}
	}
	return st, nil
}
