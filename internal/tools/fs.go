package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
)

// The fs tool is the human-path Markdown layer: a document is addressed as
// /<notebook name>/<title>/<child title>, and "/" lists the notebooks.
// A path resolves through the live file tree (lsNotebooks, getIDsByHPath,
// then checkBlockExist for each id), never through the SQL index, which
// lags behind writes.

// CodeAmbiguousPath: a path names several notebooks or documents.
const CodeAmbiguousPath = "ambiguous_path"

func fsTool() *Tool {
	pathParam := Param{Name: "path", Type: String, Required: true,
		Description: "a human path /<notebook name>/<title>/<child title>; / is the list of notebooks"}
	return &Tool{
		Name:  "fs",
		Title: "Files by path",
		Description: "SiYuan documents as Markdown files addressed by human paths /<notebook>/<title>/<child>: " +
			"list, read in windows of whole blocks, create or overwrite, remove, move or rename, and set the manual order of children.",
		Actions: []*Action{
			{
				Name: "ls", Summary: "the direct children of a path: notebooks under /, documents under a notebook or document", Policy: read,
				Params: append([]Param{pathParam}, pageParams...),
				Run:    fsLs,
			},
			{
				Name: "read", Summary: "a document as editable Markdown, in windows of whole top-level blocks", Policy: read,
				Params: []Param{
					pathParam,
					{Name: "blockStart", Type: Integer, Description: "0-based index of the first top-level block", Default: 0, Min: intp(0)},
					{Name: "blockLimit", Type: Integer, Description: "at most this many blocks", Default: 50, Min: intp(1), Max: intp(200)},
					{Name: "tokenBudget", Type: Integer, Description: "stop adding blocks past this many estimated tokens (one block is always returned)", Default: 2000, Min: intp(100), Max: intp(100000)},
					{Name: "includeBlockIds", Type: Boolean, Description: "also list each returned block's id and type", Default: false},
				},
				Run: fsRead,
			},
			fsWriteAction(),
			fsRmAction(),
			fsMvAction(),
			fsReorderAction(),
		},
	}
}

// fsPath is a parsed fs path.
type fsPath struct {
	Raw      string   // as normalised: "/", "/Notebook", "/Notebook/A/B"
	Notebook string   // "" for "/"
	Titles   []string // the document titles below the notebook
}

func (p fsPath) isRoot() bool     { return p.Notebook == "" }
func (p fsPath) isNotebook() bool { return p.Notebook != "" && len(p.Titles) == 0 }

// HPath is the document's human path inside its notebook.
func (p fsPath) HPath() string { return "/" + strings.Join(p.Titles, "/") }

// Title is the last segment.
func (p fsPath) Title() string { return p.Titles[len(p.Titles)-1] }

// Parent is the path one level up.
func (p fsPath) Parent() fsPath {
	if len(p.Titles) == 0 {
		return fsPath{Raw: "/"}
	}
	q := fsPath{Notebook: p.Notebook, Titles: p.Titles[:len(p.Titles)-1]}
	q.Raw = "/" + strings.Join(append([]string{q.Notebook}, q.Titles...), "/")
	return q
}

// child is the path of a child titled title.
func (p fsPath) child(title string) string {
	if p.isRoot() {
		return "/" + title
	}
	return p.Raw + "/" + title
}

// parseFSPath splits an fs path; segments are trimmed as SiYuan trims titles.
func parseFSPath(arg, raw string) (fsPath, error) {
	if !strings.HasPrefix(raw, "/") {
		return fsPath{}, badArg("argument %q must be a path starting with /, like /Notebook/Title, got %q", arg, raw)
	}
	trimmed := strings.TrimRight(raw, "/")
	if trimmed == "" {
		return fsPath{Raw: "/"}, nil
	}
	segs := strings.Split(trimmed[1:], "/")
	for i, s := range segs {
		segs[i] = strings.TrimSpace(s)
		if segs[i] == "" {
			return fsPath{}, badArg("argument %q has an empty segment: %q", arg, raw)
		}
	}
	if len(segs) > 8 {
		return fsPath{}, badArg("argument %q is too deep: SiYuan nests documents at most 7 levels", arg)
	}
	return fsPath{Raw: "/" + strings.Join(segs, "/"), Notebook: segs[0], Titles: segs[1:]}, nil
}

// fsDocPath parses a path that must name a document.
func fsDocPath(arg, raw string) (fsPath, error) {
	p, err := parseFSPath(arg, raw)
	if err != nil {
		return p, err
	}
	if len(p.Titles) == 0 {
		return p, badArg("argument %q must name a document (/<notebook>/<title>), got %q", arg, raw)
	}
	return p, nil
}

func fsAmbiguous(what, path string, ids []string) error {
	return &Error{Code: CodeAmbiguousPath, Message: fmt.Sprintf("%d %ss match %s: %s", len(ids), what, path, strings.Join(ids, ", ")),
		Action: "rename one of them, or use the document/notebook tools with one of these ids"}
}

// fsNotebook finds the notebook with a name.
func fsNotebook(ctx context.Context, env *Env, name string) (siyuan.Notebook, error) {
	nbs, err := env.Kernel.ListNotebooks(ctx)
	if err != nil {
		return siyuan.Notebook{}, err
	}
	var found []siyuan.Notebook
	for _, n := range nbs {
		if n.Name == name {
			found = append(found, n)
		}
	}
	switch len(found) {
	case 0:
		return siyuan.Notebook{}, &Error{Code: CodeNotFound, Message: fmt.Sprintf("no notebook is named %q", name),
			Action: "list the notebooks with {\"action\":\"ls\",\"path\":\"/\"}"}
	case 1:
		return found[0], nil
	}
	ids := make([]string, len(found))
	for i, n := range found {
		ids[i] = n.ID
	}
	return siyuan.Notebook{}, fsAmbiguous("notebook", "/"+name, ids)
}

// fsLiveDocs returns the documents at a human path that exist now: the path
// index may still list a document that was just removed, so each id is
// checked live. A failed check is an error, never "absent".
func fsLiveDocs(ctx context.Context, env *Env, nb, hpath string) ([]string, error) {
	ids, err := env.Kernel.GetIDsByHPath(ctx, nb, hpath)
	if err != nil {
		return nil, err
	}
	var live []string
	for _, id := range sortedUnique(ids) {
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

// fsTarget is a resolved fs path.
type fsTarget struct {
	Path     fsPath
	Notebook siyuan.Notebook // unset for "/"
	DocID    string          // "" for "/", a notebook, or a missing document
	Missing  bool            // a document path with no document
}

// fsResolve resolves a path; a document path with no document is Missing,
// several documents are ambiguous_path.
func fsResolve(ctx context.Context, env *Env, p fsPath) (fsTarget, error) {
	t := fsTarget{Path: p}
	if p.isRoot() {
		return t, nil
	}
	nb, err := fsNotebook(ctx, env, p.Notebook)
	if err != nil {
		return t, err
	}
	t.Notebook = nb
	if p.isNotebook() {
		return t, nil
	}
	ids, err := fsLiveDocs(ctx, env, nb.ID, p.HPath())
	if err != nil {
		return t, err
	}
	switch len(ids) {
	case 0:
		t.Missing = true
	case 1:
		t.DocID = ids[0]
	default:
		return t, fsAmbiguous("document", p.Raw, ids)
	}
	return t, nil
}

// fsResolveDoc resolves a path that must name an existing document.
func fsResolveDoc(ctx context.Context, env *Env, p fsPath) (fsTarget, error) {
	t, err := fsResolve(ctx, env, p)
	if err != nil {
		return t, err
	}
	if t.Missing {
		return t, fsNoDoc(p)
	}
	return t, nil
}

func fsNoDoc(p fsPath) error {
	return &Error{Code: CodeNotFound, Message: fmt.Sprintf("no document at %s", p.Raw),
		Action: "list the parent with {\"action\":\"ls\"} to see what exists"}
}

type fsEntry struct {
	Name     string `json:"name"`
	Path     string `json:"path"`
	ID       string `json:"id"`
	Children int    `json:"children"`
	Closed   bool   `json:"closed,omitempty"`
}

func fsLs(ctx context.Context, env *Env, a *Args) (any, error) {
	p, err := parseFSPath("path", a.String("path"))
	if err != nil {
		return nil, err
	}
	var entries []fsEntry
	if p.isRoot() {
		nbs, err := env.Kernel.ListNotebooks(ctx)
		if err != nil {
			return nil, err
		}
		for _, n := range nbs {
			entries = append(entries, fsEntry{Name: n.Name, Path: p.child(n.Name), ID: n.ID, Children: n.SubFileCount, Closed: n.Closed})
		}
	} else {
		t, err := fsResolveDoc(ctx, env, p)
		if err != nil {
			return nil, err
		}
		storage := "/"
		if t.DocID != "" {
			info, err := env.Kernel.GetBlockInfo(ctx, t.DocID)
			if err != nil {
				return nil, err
			}
			storage = info.Path
		}
		docs, err := listChildren(ctx, env, t.Notebook.ID, storage)
		if err != nil {
			return nil, notebookErr(t.Notebook.ID, err)
		}
		for _, d := range docs {
			entries = append(entries, fsEntry{Name: d.Title, Path: p.child(d.Title), ID: d.ID, Children: d.SubFileCount})
		}
	}
	if entries == nil {
		entries = []fsEntry{}
	}
	pg := paginate(entries, a)
	return map[string]any{"path": p.Raw, "data": pg.Data, "total": pg.Total, "page": pg.Page,
		"pageSize": pg.PageSize, "pageCount": pg.PageCount, "hasNextPage": pg.HasNextPage}, nil
}

func fsRead(ctx context.Context, env *Env, a *Args) (any, error) {
	p, err := fsDocPath("path", a.String("path"))
	if err != nil {
		return nil, err
	}
	t, err := fsResolveDoc(ctx, env, p)
	if err != nil {
		return nil, err
	}
	// The window logic is document.get_doc's; only the addressing differs.
	win := &Args{values: map[string]any{"id": t.DocID}}
	for _, k := range []string{"blockStart", "blockLimit", "tokenBudget", "includeBlockIds"} {
		if v, ok := a.values[k]; ok {
			win.values[k] = v
		}
	}
	v, err := getDoc(ctx, env, win)
	if err != nil {
		return nil, err
	}
	ret := v.(map[string]any)
	ret["path"] = p.Raw
	if next, ok := ret["nextWindow"].(map[string]any); ok {
		ret["nextWindow"] = map[string]any{"action": "read", "path": p.Raw, "blockStart": next["blockStart"],
			"blockLimit": next["blockLimit"], "tokenBudget": next["tokenBudget"]}
	}
	return ret, nil
}

// fsRefuse marks a refusal decided before any kernel write: the caller sees
// its own code (invalid_arguments, ambiguous_path, not_found), nothing was
// attempted, and the ledger records the request as rejected.
func fsRefuse(err error) error {
	e, ok := err.(*Error)
	if !ok {
		return strict.Reject(err)
	}
	return &strict.Failure{Code: e.Code, Message: e.Message, Cause: strict.Reject(e)}
}
