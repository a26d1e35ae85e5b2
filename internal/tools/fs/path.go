// Package fs is the fs tool: SiYuan documents as Markdown files addressed
// by human paths /<notebook>/<title>/<child>.
//
// A path resolves through the live file tree (lsNotebooks, getIDsByHPath,
// then checkBlockExist for each id), never through the SQL index, which
// lags behind writes.
package fs

import (
	"context"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/kernelview"
)

// humanPath is a parsed fs path.
type humanPath struct {
	Raw      string   // as normalised: "/", "/Notebook", "/Notebook/A/B"
	Notebook string   // "" for "/"
	Titles   []string // the document titles below the notebook
	// Virtual names a virtual root file (/AGENTS.md, /USER_RULES.md);
	// Notebook is then "".
	Virtual string
}

func (p humanPath) isRoot() bool     { return p.Notebook == "" && p.Virtual == "" }
func (p humanPath) isNotebook() bool { return p.Notebook != "" && len(p.Titles) == 0 }

// HPath is the document's human path inside its notebook.
func (p humanPath) HPath() string { return "/" + strings.Join(p.Titles, "/") }

// Title is the last segment.
func (p humanPath) Title() string { return p.Titles[len(p.Titles)-1] }

// Parent is the path one level up.
func (p humanPath) Parent() humanPath {
	if len(p.Titles) == 0 {
		return humanPath{Raw: "/"}
	}
	q := humanPath{Notebook: p.Notebook, Titles: p.Titles[:len(p.Titles)-1]}
	q.Raw = "/" + strings.Join(append([]string{q.Notebook}, q.Titles...), "/")
	return q
}

// child is the path of a child titled title.
func (p humanPath) child(title string) string {
	if p.isRoot() {
		return "/" + title
	}
	return p.Raw + "/" + title
}

// parsePath splits an fs path; segments are trimmed as SiYuan trims titles.
func parsePath(arg, raw string) (humanPath, error) {
	if !strings.HasPrefix(raw, "/") {
		return humanPath{}, failure.Invalid("argument %q must be a path starting with /, like /Notebook/Title, got %q", arg, raw)
	}
	trimmed := strings.TrimRight(raw, "/")
	if trimmed == "" {
		return humanPath{Raw: "/"}, nil
	}
	segs := strings.Split(trimmed[1:], "/")
	for i, s := range segs {
		segs[i] = strings.TrimSpace(s)
		if segs[i] == "" {
			return humanPath{}, failure.Invalid("argument %q has an empty segment: %q", arg, raw)
		}
		// Paths are titles, not a file system: "." and ".." would become
		// documents titled so, never a step up or a stay.
		if segs[i] == "." || segs[i] == ".." {
			return humanPath{}, failure.Invalid("argument %q has the segment %q: a path is a chain of titles and has no . or .. (write the path in full)", arg, segs[i])
		}
	}
	if len(segs) > 8 {
		return humanPath{}, failure.Invalid("argument %q is too deep: SiYuan nests documents at most 7 levels", arg)
	}
	if v := virtualFiles[segs[0]]; v != "" {
		if len(segs) > 1 {
			return humanPath{}, failure.Invalid("argument %q: %s is a virtual file and has no children (a notebook named %s is not reachable by fs paths: "+
				"rename it, or use the notebook and document tools by id)", arg, v, segs[0])
		}
		return humanPath{Raw: v, Virtual: v}, nil
	}
	return humanPath{Raw: "/" + strings.Join(segs, "/"), Notebook: segs[0], Titles: segs[1:]}, nil
}

// parseDocPath parses a path that must name a document.
func parseDocPath(arg, raw string) (humanPath, error) {
	p, err := parsePath(arg, raw)
	if err != nil {
		return p, err
	}
	if len(p.Titles) == 0 && p.Virtual == "" {
		return p, failure.Invalid("argument %q must name a document (/<notebook>/<title>), got %q", arg, raw)
	}
	return p, nil
}

func ambiguous(what, path string, ids []string) error {
	return failure.New(failure.AmbiguousPath, "%d %ss match %s: %s", len(ids), what, path, strings.Join(ids, ", ")).With("ids", ids)
}

// notebookNamed finds the notebook with a name among those the call may
// see: a hidden notebook's name names nothing (as ls / does not list it),
// so the answer for it is the answer for a name no notebook has, and a
// visible notebook is never ambiguous with a hidden one.
func notebookNamed(ctx context.Context, env *tools.Env, name string) (siyuan.Notebook, error) {
	nbs, err := env.Kernel.ListNotebooks(ctx)
	if err != nil {
		return siyuan.Notebook{}, err
	}
	var found []siyuan.Notebook
	for _, n := range nbs {
		if n.Name == name && tools.Visible(ctx, n.ID) {
			found = append(found, n)
		}
	}
	switch len(found) {
	case 0:
		e := failure.New(failure.NotFound, "no notebook is named %q", name)
		e.Action = "list the notebooks with {\"action\":\"ls\",\"path\":\"/\"}"
		return siyuan.Notebook{}, e
	case 1:
		return found[0], nil
	}
	ids := make([]string, len(found))
	for i, n := range found {
		ids[i] = n.ID
	}
	return siyuan.Notebook{}, ambiguous("notebook", "/"+name, ids)
}

// liveDocs returns the documents at a human path that exist now: the path
// index may still list a document that was just removed, so each id is
// checked live. A failed check is an error, never "absent".
func liveDocs(ctx context.Context, env *tools.Env, nb, hpath string) ([]string, error) {
	ids, err := env.Kernel.GetIDsByHPath(ctx, nb, hpath)
	if err != nil {
		return nil, err
	}
	var live []string
	for _, id := range kernelview.SortedUnique(ids) {
		if id == nb {
			continue // the notebook itself is not a document of the path
		}
		ok, err := env.Kernel.CheckBlockExist(ctx, id)
		if err != nil {
			return nil, err
		}
		if ok {
			live = append(live, id)
		}
	}
	return live, nil
}

// target is a resolved fs path.
type target struct {
	Path     humanPath
	Notebook siyuan.Notebook // unset for "/"
	DocID    string          // "" for "/", a notebook, or a missing document
	Missing  bool            // a document path with no document
}

// resolve resolves a path; a document path with no document is Missing,
// several documents are ambiguous_path.
func resolve(ctx context.Context, env *tools.Env, p humanPath) (target, error) {
	t := target{Path: p}
	if p.isRoot() {
		return t, nil
	}
	if p.Virtual != "" {
		return t, failure.Invalid("%s is a virtual file, not a document or notebook", p.Virtual)
	}
	nb, err := notebookNamed(ctx, env, p.Notebook)
	if err != nil {
		return t, err
	}
	t.Notebook = nb
	if p.isNotebook() {
		return t, nil
	}
	ids, err := liveDocs(ctx, env, nb.ID, p.HPath())
	if err != nil {
		return t, err
	}
	switch len(ids) {
	case 0:
		t.Missing = true
	case 1:
		t.DocID = ids[0]
	default:
		return t, ambiguous("document", p.Raw, ids)
	}
	return t, nil
}

// resolveDoc resolves a path that must name an existing document.
func resolveDoc(ctx context.Context, env *tools.Env, p humanPath) (target, error) {
	t, err := resolve(ctx, env, p)
	if err != nil {
		return t, err
	}
	if t.Missing {
		return t, noDoc(p)
	}
	return t, nil
}

func noDoc(p humanPath) error {
	e := failure.New(failure.NotFound, "no document at %s", p.Raw)
	e.Action = "list the parent with {\"action\":\"ls\"} to see what exists"
	return e
}
