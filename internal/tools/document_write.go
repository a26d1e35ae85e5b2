package tools

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
)

// sortCustom is SiYuan's custom sort mode (sort.json ranks).
const sortCustom = 6

// sortFileTree (15) is a notebook's "follow the file tree setting".
const sortFileTree = 15

// docLoc is where a document lives.
type docLoc struct {
	ID       string `json:"id"`
	Missing  bool   `json:"missing,omitempty"`
	Notebook string `json:"notebook,omitempty"`
	Path     string `json:"path,omitempty"`
	HPath    string `json:"hpath,omitempty"`
	// NotDocument: the id names a block inside a document.
	NotDocument bool `json:"notDocument,omitempty"`
}

// locateDoc finds a document by id through the block tree (which does not
// lag like the SQL index). An id the kernel does not know is Missing; a
// failed query is an error, never proof of absence.
func locateDoc(ctx context.Context, env *Env, id string) (docLoc, error) {
	ok, err := env.Kernel.CheckBlockExist(ctx, id)
	if err != nil {
		return docLoc{}, err
	}
	if !ok {
		return docLoc{ID: id, Missing: true}, nil
	}
	p, err := env.Kernel.GetPathByID(ctx, id)
	if err != nil {
		return docLoc{}, err
	}
	if path.Base(p.Path) != id+".sy" {
		return docLoc{ID: id, Notebook: p.Notebook, Path: p.Path, NotDocument: true}, nil
	}
	hp, err := env.Kernel.GetHPathByID(ctx, id)
	if err != nil {
		return docLoc{}, err
	}
	return docLoc{ID: id, Notebook: p.Notebook, Path: p.Path, HPath: hp}, nil
}

// checkDoc refuses what a document action cannot act on.
func checkDoc(l docLoc, what string) error {
	switch {
	case l.Missing:
		return notFound("document", l.ID)
	case l.NotDocument:
		return badArg("%s %s is a block inside a document, not a document", what, l.ID)
	case l.ID == l.Notebook:
		return badArg("%s %s is the notebook's own top-level document; use the notebook tool", what, l.ID)
	}
	return nil
}

// docDir is the storage directory holding a document's children.
func docDir(p string) string { return strings.TrimSuffix(p, ".sy") }

// DocState is the guarded state of one document: its block state (kramdown,
// attributes, DOM of the whole document) and where it lives.
type DocState struct {
	docLoc
	Block *BlockState `json:"block,omitempty"`
	// Children are the ids of its direct child documents (remove only).
	Children []string `json:"children,omitempty"`
}

func readDocState(ctx context.Context, env *Env, id string, children bool) (DocState, error) {
	loc, err := locateDoc(ctx, env, id)
	if err != nil || loc.Missing || loc.NotDocument {
		return DocState{docLoc: loc}, err
	}
	st := DocState{docLoc: loc}
	bs, err := readBlockState(ctx, env, id)
	if err != nil {
		return DocState{}, err
	}
	st.Block = &bs
	if children {
		unlimited := 0
		list, err := env.Kernel.ListDocsByPath(ctx, siyuan.ListDocsRequest{Notebook: loc.Notebook, Path: loc.Path, MaxListCount: &unlimited, ShowHidden: true})
		if err != nil {
			return DocState{}, err
		}
		st.Children = []string{}
		for _, f := range list.Files {
			st.Children = append(st.Children, f.ID)
		}
	}
	return st, nil
}

func readDocStates(ctx context.Context, env *Env, ids []string, children bool) ([]DocState, error) {
	ids = sortedUnique(ids)
	out := make([]DocState, len(ids))
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i], errs[i] = readDocState(ctx, env, id, children)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// docIDs are the ids of document.remove: id or ids[].
func docIDs(a *Args) ([]string, error) {
	if a.Has("id") == a.Has("ids") {
		return nil, badArg("pass either id or ids[], not both")
	}
	ids := a.Strings("ids")
	if a.Has("id") {
		ids = []string{a.String("id")}
	}
	if len(ids) == 0 || len(ids) > 50 {
		return nil, badArg("ids[] must hold 1 to 50 documents")
	}
	for i, id := range ids {
		if err := checkID(fmt.Sprintf("ids[%d]", i), id); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

func docIDTargets(a *Args) []string {
	ids, _ := docIDs(a)
	return ids
}

// stripLeadingTitle drops a leading "# <title>" line that repeats the
// document's title (SiYuan shows the title above the body already).
func stripLeadingTitle(md, title string) string {
	rest := strings.TrimLeft(md, " \t\r\n")
	line, after, _ := strings.Cut(rest, "\n")
	line = strings.TrimSpace(line)
	if strings.HasPrefix(line, "# ") && normalizeTitle(strings.TrimPrefix(line, "# ")) == title {
		return strings.TrimLeft(after, "\r\n")
	}
	return md
}

// createPlan is how document.create will call createDocWithMd.
type createPlan struct {
	req       siyuan.CreateDocRequest
	title     string
	hpath     string // the expected human path
	parentDir string // the expected storage directory, when the parent is known
}

// planCreate resolves the create arguments. It may read the kernel, and
// never writes.
func planCreate(ctx context.Context, env *Env, a *Args) (createPlan, error) {
	nb, hp, parentPath, parentID, title := a.String("notebook"), a.String("path"), a.String("parentPath"), a.String("parentID"), a.String("title")
	var p createPlan
	switch {
	case hp != "":
		if parentPath != "" || parentID != "" || a.Has("title") {
			return p, badArg("pass path (a human path) alone, or parentID/parentPath with title")
		}
		if err := checkID("notebook", nb); err != nil {
			return p, err
		}
		var segs []string
		for _, s := range strings.Split(hp, "/") {
			if s = normalizeTitle(s); s != "" {
				segs = append(segs, s)
			}
		}
		if len(segs) == 0 {
			return p, badArg("path must name the new document, like /Inbox/Weekly Note")
		}
		p.title = segs[len(segs)-1]
		p.hpath = "/" + strings.Join(segs, "/")
		p.req = siyuan.CreateDocRequest{Notebook: nb, Path: p.hpath}
	case parentID != "" || parentPath != "":
		if parentID != "" && parentPath != "" {
			return p, badArg("pass parentID or parentPath, not both")
		}
		if p.title = normalizeTitle(title); p.title == "" {
			return p, badArg("title must name the new document")
		}
		var parent docLoc
		switch {
		case parentID != "":
			if err := checkID("parentID", parentID); err != nil {
				return p, err
			}
			l, err := locateDoc(ctx, env, parentID)
			if err != nil {
				return p, err
			}
			if l.Missing {
				return p, notFound("document", parentID)
			}
			if l.NotDocument {
				return p, badArg("parentID %s is a block inside a document, not a document", parentID)
			}
			if nb != "" && nb != l.Notebook {
				return p, badArg("parentID %s is not in notebook %s", parentID, nb)
			}
			parent = l
		case strings.HasSuffix(parentPath, ".sy"):
			if err := checkID("notebook", nb); err != nil {
				return p, err
			}
			id := strings.TrimSuffix(path.Base(parentPath), ".sy")
			if checkID("parentPath", id) != nil {
				return p, badArg("parentPath must be a storage path like /20260812120000-abcdefg.sy or a human path like /Inbox")
			}
			l, err := locateDoc(ctx, env, id)
			if err != nil {
				return p, err
			}
			if l.Missing || l.NotDocument || l.Notebook != nb || l.Path != parentPath {
				return p, notFound("document at storage path", parentPath)
			}
			parent = l
		default:
			if err := checkID("notebook", nb); err != nil {
				return p, err
			}
			hp := "/" + strings.Trim(parentPath, "/")
			if hp == "/" {
				parent = docLoc{ID: nb, Notebook: nb, Path: "/" + nb + ".sy", HPath: "/"}
				break
			}
			ids, err := env.Kernel.GetIDsByHPath(ctx, nb, hp)
			if err != nil {
				return p, err
			}
			switch len(ids) {
			case 0:
				return p, notFound("document with human path", hp)
			case 1:
			default:
				return p, badArg("%d documents have the human path %s; pass parentID instead", len(ids), hp)
			}
			if parent, err = locateDoc(ctx, env, ids[0]); err != nil {
				return p, err
			}
			if parent.Missing {
				return p, notFound("document with human path", hp)
			}
		}
		p.req.Notebook = parent.Notebook
		if parent.ID == parent.Notebook || parent.HPath == "/" {
			p.hpath, p.parentDir = "/"+p.title, "/"
		} else {
			p.hpath, p.parentDir = parent.HPath+"/"+p.title, docDir(parent.Path)
			p.req.ParentID = parent.ID
		}
		p.req.Path = p.hpath
	default:
		return p, badArg("pass notebook + path (a human path), or parentID (or notebook + parentPath) + title")
	}
	p.req.Markdown = stripLeadingTitle(a.String("markdown"), p.title)
	return p, nil
}

// createExpect is what a created document must read back as, from the
// arguments alone.
type createExpect struct{ title, hpath, parentID string }

func expectCreate(a *Args) createExpect {
	var segs []string
	split := func(p string) {
		for _, s := range strings.Split(p, "/") {
			if s = normalizeTitle(s); s != "" {
				segs = append(segs, s)
			}
		}
	}
	if hp := a.String("path"); hp != "" {
		split(hp)
		if len(segs) == 0 {
			return createExpect{}
		}
		return createExpect{title: segs[len(segs)-1], hpath: "/" + strings.Join(segs, "/")}
	}
	e := createExpect{title: normalizeTitle(a.String("title"))}
	pp := a.String("parentPath")
	switch {
	case a.String("parentID") != "":
		if a.String("parentID") != a.String("notebook") {
			e.parentID = a.String("parentID")
		}
	case strings.HasSuffix(pp, ".sy"):
		e.parentID = strings.TrimSuffix(path.Base(pp), ".sy")
	default:
		// The parent was found at exactly this human path.
		if p := strings.Trim(pp, "/"); p != "" {
			e.hpath = "/" + p + "/" + e.title
		} else {
			e.hpath = "/" + e.title
		}
	}
	return e
}

func createTargets(a *Args) []string {
	var ids []string
	for _, k := range []string{"notebook", "parentID"} {
		if v := a.String(k); v != "" {
			ids = append(ids, v)
		}
	}
	return ids
}

// reorderParent is the parent whose children document.reorder orders.
type reorderParent struct {
	ID, Kind, Notebook, Path string
}

func resolveReorderParent(ctx context.Context, env *Env, id string) (reorderParent, error) {
	nbs, err := env.Kernel.ListNotebooks(ctx)
	if err != nil {
		return reorderParent{}, err
	}
	for _, n := range nbs {
		if n.ID == id {
			return reorderParent{ID: id, Kind: "notebook", Notebook: id, Path: "/"}, nil
		}
	}
	l, err := locateDoc(ctx, env, id)
	if err != nil {
		return reorderParent{}, err
	}
	if l.Missing || l.NotDocument {
		return reorderParent{}, badArg("parentID %s is neither a notebook nor a document", id)
	}
	return reorderParent{ID: id, Kind: "document", Notebook: l.Notebook, Path: l.Path}, nil
}

type reorderChild struct {
	ID    string `json:"id"`
	Path  string `json:"path"`
	Sort  int    `json:"sort"`
	Order int    `json:"order"`
}

// ReorderState is the structure document.reorder guards: the parent, its
// notebook's configuration, and every visible direct child's id, storage
// path, sort value and current order (listed in custom order).
type ReorderState struct {
	ParentID string         `json:"parentID"`
	Missing  bool           `json:"missing,omitempty"`
	Kind     string         `json:"kind,omitempty"`
	Notebook string         `json:"notebook,omitempty"`
	Path     string         `json:"path,omitempty"`
	Conf     siyuan.BoxConf `json:"conf"`
	Children []reorderChild `json:"children"`
}

func listVisible(ctx context.Context, env *Env, nb, p string, sortMode *int) ([]siyuan.DocFile, error) {
	unlimited := 0
	list, err := env.Kernel.ListDocsByPath(ctx, siyuan.ListDocsRequest{Notebook: nb, Path: p, Sort: sortMode, MaxListCount: &unlimited})
	if err != nil {
		return nil, err
	}
	return list.Files, nil
}

func readReorderState(ctx context.Context, env *Env, parentID string) (ReorderState, error) {
	par, err := resolveReorderParent(ctx, env, parentID)
	if err != nil {
		var te *Error
		if errors.As(err, &te) && te.Code == CodeInvalidArguments {
			return ReorderState{ParentID: parentID, Missing: true, Children: []reorderChild{}}, nil
		}
		return ReorderState{}, err
	}
	var (
		wg         sync.WaitGroup
		conf       siyuan.NotebookConf
		files      []siyuan.DocFile
		cErr, lErr error
	)
	custom := sortCustom
	wg.Add(2)
	go func() { defer wg.Done(); conf, cErr = env.Kernel.GetNotebookConf(ctx, par.Notebook) }()
	go func() { defer wg.Done(); files, lErr = listVisible(ctx, env, par.Notebook, par.Path, &custom) }()
	wg.Wait()
	if err := errors.Join(cErr, lErr); err != nil {
		return ReorderState{}, err
	}
	st := ReorderState{ParentID: parentID, Kind: par.Kind, Notebook: par.Notebook, Path: par.Path, Conf: confState(conf.Conf), Children: []reorderChild{}}
	for i, f := range files {
		st.Children = append(st.Children, reorderChild{ID: f.ID, Path: f.Path, Sort: f.Sort, Order: i})
	}
	return st, nil
}

// checkPermutation refuses an order that is not exactly the visible children.
func checkPermutation(ordered []string, children []reorderChild) error {
	cur := map[string]bool{}
	for _, c := range children {
		cur[c.ID] = true
	}
	seen := map[string]bool{}
	var dup, unexpected []string
	for _, id := range ordered {
		if seen[id] {
			dup = append(dup, id)
		}
		seen[id] = true
		if !cur[id] {
			unexpected = append(unexpected, id)
		}
	}
	var missing []string
	for _, c := range children {
		if !seen[c.ID] {
			missing = append(missing, c.ID)
		}
	}
	if len(dup)+len(unexpected)+len(missing) == 0 {
		return nil
	}
	var parts []string
	if len(dup) > 0 {
		parts = append(parts, "duplicated: "+strings.Join(dup, ", "))
	}
	if len(unexpected) > 0 {
		parts = append(parts, "not visible children of the parent: "+strings.Join(unexpected, ", "))
	}
	if len(missing) > 0 {
		parts = append(parts, "missing: "+strings.Join(missing, ", "))
	}
	return badArg("orderedIDs must list every visible child document exactly once (%s)", strings.Join(parts, "; "))
}

func documentWriteActions() []*Action {
	guarded := strict.Policy{Class: strict.Mutation, Precondition: strict.ExpectedStateHash}
	structure := strict.Policy{Class: strict.Mutation, Precondition: strict.ExpectedStructureHash}
	return []*Action{
		{
			Name: "create", Summary: "create a document from markdown: notebook + path (a human path), or parentID (or notebook + parentPath) + title; a leading \"# <title>\" line is dropped",
			Policy: strict.Policy{Class: strict.Additive},
			Params: []Param{
				idParam("notebook", "the notebook", false),
				{Name: "path", Type: String, Description: "human path of the new document, like /Inbox/Weekly Note (missing parents are created empty)"},
				idParam("parentID", "the parent document (or a notebook id for its root)", false),
				{Name: "parentPath", Type: String, Description: "with notebook: the parent as a human path (/Inbox) or a storage path (/20260812120000-abcdefg.sy)"},
				{Name: "title", Type: String, Description: "the title, with parentID or parentPath"},
				{Name: "markdown", Type: String, Description: "the body; omit for an empty document", Default: ""},
			},
			Write: &Write{
				Targets: createTargets,
				Execute: func(ctx context.Context, env *Env, a *Args) (map[string]any, error) {
					plan, err := planCreate(ctx, env, a)
					if err != nil {
						var te *Error
						if errors.As(err, &te) {
							return nil, asInvalid(&Error{Code: CodeInvalidArguments, Message: te.Message})
						}
						return nil, strict.Reject(err) // a failed read: nothing written
					}
					id, err := env.Kernel.CreateDocWithMd(ctx, plan.req)
					if err != nil {
						return nil, writeErr(err, false)
					}
					return map[string]any{"id": id, "notebook": plan.req.Notebook}, nil
				},
				Readback: func(ctx context.Context, env *Env, a *Args, p map[string]any) (any, error) {
					id, _ := p["id"].(string)
					nb, _ := p["notebook"].(string)
					var loc docLoc
					var last error
					ok, err := poll(ctx, func() (bool, error) {
						var err error
						if loc, err = locateDoc(ctx, env, id); err != nil {
							return false, err
						}
						if loc.Missing || loc.NotDocument {
							last = fmt.Errorf("document %s does not exist", id)
							return false, nil
						}
						return true, nil
					})
					if err != nil {
						return nil, err
					}
					if !ok {
						return nil, last
					}
					attrs, err := env.Kernel.GetBlockAttrs(ctx, id)
					if err != nil {
						return nil, err
					}
					want := expectCreate(a)
					switch {
					case loc.Notebook != nb:
						return nil, fmt.Errorf("document %s is in notebook %s, want %s", id, loc.Notebook, nb)
					case attrs["title"] != want.title:
						return nil, fmt.Errorf("document %s reads back another title", id)
					case want.hpath != "" && loc.HPath != want.hpath:
						return nil, fmt.Errorf("document %s is not at the requested human path", id)
					}
					if want.parentID != "" && want.parentID != loc.Notebook {
						par, err := locateDoc(ctx, env, want.parentID)
						if err != nil {
							return nil, err
						}
						if par.Missing || path.Dir(loc.Path) != docDir(par.Path) {
							return nil, fmt.Errorf("document %s is not under %s", id, want.parentID)
						}
					}
					p["path"] = loc.Path
					return loc, nil
				},
			},
		},
		{
			Name: "rename", Summary: "set a document's title", Policy: guarded,
			Params: []Param{idParam("id", "the document", true), {Name: "title", Type: String, Description: "the new title", Required: true}},
			Write: &Write{
				Targets: idTarget,
				State: func(ctx context.Context, env *Env, a *Args) (any, error) {
					id := a.String("id")
					if err := checkID("id", id); err != nil {
						return nil, err
					}
					if normalizeTitle(a.String("title")) == "" {
						return nil, badArg("title must not be empty")
					}
					st, err := readDocState(ctx, env, id, false)
					if err != nil {
						return nil, err
					}
					if preflighting(a) {
						if err := checkDoc(st.docLoc, "id"); err != nil {
							return nil, err
						}
					}
					return st, nil
				},
				Execute: func(ctx context.Context, env *Env, a *Args) (map[string]any, error) {
					id := a.String("id")
					if err := checkID("id", id); err != nil {
						return nil, asInvalid(err)
					}
					if normalizeTitle(a.String("title")) == "" {
						return nil, invalid("title must not be empty")
					}
					if err := env.Kernel.RenameDocByID(ctx, id, a.String("title")); err != nil {
						return nil, writeErr(err, false)
					}
					return map[string]any{"id": id}, nil
				},
				Readback: func(ctx context.Context, env *Env, a *Args, p map[string]any) (any, error) {
					id, title := a.String("id"), normalizeTitle(a.String("title"))
					// SiYuan serves a renamed document's attributes from a cache
					// that lags until its transaction queue is flushed.
					if err := env.Kernel.FlushTransaction(ctx); err != nil {
						return nil, err
					}
					var st DocState
					ok, err := poll(ctx, func() (bool, error) {
						var err error
						if st, err = readDocState(ctx, env, id, false); err != nil {
							return false, err
						}
						return st.Block != nil && st.Block.Attrs["title"] == title && path.Base(st.HPath) == title, nil
					})
					if err != nil {
						return nil, err
					}
					if !ok {
						return nil, fmt.Errorf("document %s does not read back the new title", id)
					}
					return st, nil
				},
			},
		},
		{
			Name: "remove", Summary: "delete documents (id or ids[]) with their child documents (SiYuan keeps a copy in its history)", Policy: guarded, Destructive: true,
			Params: []Param{idParam("id", "the document", false), {Name: "ids", Type: Strings, Description: "several documents"}},
			Write: &Write{
				Targets: docIDTargets,
				State: func(ctx context.Context, env *Env, a *Args) (any, error) {
					ids, err := docIDs(a)
					if err != nil {
						return nil, err
					}
					states, err := readDocStates(ctx, env, ids, true)
					if err != nil {
						return nil, err
					}
					if preflighting(a) {
						for _, st := range states {
							if err := checkDoc(st.docLoc, "id"); err != nil {
								return nil, err
							}
						}
					}
					return states, nil
				},
				Execute: func(ctx context.Context, env *Env, a *Args) (map[string]any, error) {
					ids, err := docIDs(a)
					if err != nil {
						return nil, asInvalid(err)
					}
					ids = sortedUnique(ids)
					for i, id := range ids {
						if err := env.Kernel.RemoveDocByID(ctx, id); err != nil {
							return nil, writeErr(err, i > 0)
						}
					}
					return map[string]any{"ids": ids, "removed": len(ids)}, nil
				},
				Readback: func(ctx context.Context, env *Env, a *Args, p map[string]any) (any, error) {
					// Removal is proven by the block tree saying the document
					// does not exist, never by a failed read.
					ids, _ := docIDs(a)
					var states []DocState
					var last string
					ok, err := poll(ctx, func() (bool, error) {
						var err error
						if states, err = readDocStates(ctx, env, ids, true); err != nil {
							return false, err
						}
						for _, st := range states {
							if !st.Missing {
								last = st.ID
								return false, nil
							}
						}
						return true, nil
					})
					if err != nil {
						return nil, err
					}
					if !ok {
						return nil, fmt.Errorf("document %s still exists", last)
					}
					return states, nil
				},
			},
		},
		{
			Name: "move", Summary: "move documents (fromIDs) under a document or to a notebook's root (toID)", Policy: structure, Destructive: true,
			Params: []Param{
				{Name: "fromIDs", Type: Strings, Description: "the documents to move", Required: true},
				idParam("toID", "the new parent: a document, or a notebook for its root", true),
			},
			Write: &Write{
				Targets: func(a *Args) []string { return append(slices.Clone(a.Strings("fromIDs")), a.String("toID")) },
				State: func(ctx context.Context, env *Env, a *Args) (any, error) {
					if err := checkMoveArgs(a); err != nil {
						return nil, err
					}
					st, err := readDocMoveState(ctx, env, a.Strings("fromIDs"), a.String("toID"))
					if err != nil {
						return nil, err
					}
					if preflighting(a) {
						if err := st.check(); err != nil {
							return nil, err
						}
					}
					return st, nil
				},
				Execute: func(ctx context.Context, env *Env, a *Args) (map[string]any, error) {
					if err := checkMoveArgs(a); err != nil {
						return nil, asInvalid(err)
					}
					from, to := a.Strings("fromIDs"), a.String("toID")
					if err := env.Kernel.MoveDocsByID(ctx, from, to); err != nil {
						return nil, writeErr(err, false)
					}
					return map[string]any{"fromIDs": from, "toID": to, "moved": len(from)}, nil
				},
				Readback: func(ctx context.Context, env *Env, a *Args, p map[string]any) (any, error) {
					var st DocMoveState
					var last error
					ok, err := poll(ctx, func() (bool, error) {
						var err error
						if st, err = readDocMoveState(ctx, env, a.Strings("fromIDs"), a.String("toID")); err != nil {
							return false, err
						}
						last = st.placed()
						return last == nil, nil
					})
					if err != nil {
						return nil, err
					}
					if !ok {
						return nil, last
					}
					return st, nil
				},
			},
		},
		{
			Name: "reorder", Summary: "set the manual (custom) order of a notebook's or document's child documents (orderedIDs: every visible child once); " +
				"a notebook parent is switched to custom sort (6); for a document parent the order is stored and shows wherever " +
				"the notebook sorts by custom order (SiYuan 3.7.3 has no per-document sort mode), as the answer's hint says",
			Policy: structure,
			Params: []Param{
				idParam("parentID", "the notebook or parent document", true),
				{Name: "orderedIDs", Type: Strings, Description: "every visible child document id, in the new order", Required: true},
			},
			Write: &Write{
				Targets: func(a *Args) []string { return append([]string{a.String("parentID")}, a.Strings("orderedIDs")...) },
				State: func(ctx context.Context, env *Env, a *Args) (any, error) {
					if err := checkID("parentID", a.String("parentID")); err != nil {
						return nil, err
					}
					st, err := readReorderState(ctx, env, a.String("parentID"))
					if err != nil {
						return nil, err
					}
					if preflighting(a) {
						if st.Missing {
							return nil, badArg("parentID %s is neither a notebook nor a document", st.ParentID)
						}
						if err := checkPermutation(a.Strings("orderedIDs"), st.Children); err != nil {
							return nil, err
						}
					}
					return st, nil
				},
				Execute: execReorder,
				Readback: func(ctx context.Context, env *Env, a *Args, p map[string]any) (any, error) {
					want := a.Strings("orderedIDs")
					var st ReorderState
					var last error
					ok, err := poll(ctx, func() (bool, error) {
						var err error
						if st, err = readReorderState(ctx, env, a.String("parentID")); err != nil {
							return false, err
						}
						if st.Missing {
							return false, fmt.Errorf("parent %s is gone", st.ParentID)
						}
						if st.Kind == "notebook" && st.Conf.SortMode != sortCustom {
							last = fmt.Errorf("the notebook's sort mode reads back %d, not custom (6)", st.Conf.SortMode)
							return false, nil
						}
						// The custom-order listing must show the requested
						// order exactly.
						custom := sortCustom
						files, err := listVisible(ctx, env, st.Notebook, st.Path, &custom)
						if err != nil {
							return false, err
						}
						got := make([]string, len(files))
						for i, f := range files {
							got[i] = f.ID
						}
						if !slices.Equal(got, want) {
							last = fmt.Errorf("the children read back in another order")
							return false, nil
						}
						return true, nil
					})
					if err != nil {
						return nil, err
					}
					if !ok {
						return nil, last
					}
					return st, nil
				},
			},
		},
		{
			Name: "set_child_sort_mode", Summary: "set how a notebook sorts its documents (id: the notebook, whose top-level document shares its id; sortMode 0-14, 15 or omitted: follow the file tree setting). " +
				"Notebooks only: SiYuan 3.7.3 has no per-document sort mode (setDocSortMode arrived in 3.8.1)",
			Policy: guarded,
			Params: []Param{
				idParam("id", "the notebook", true),
				{Name: "sortMode", Type: Integer, Description: "0/1 name, 2/3 updated, 4/5 natural, 6 custom, 7/8 ref count, 9/10 created, 11/12 size, 13/14 child count (asc/desc); 15 or omitted: follow the file tree setting", Min: intp(0), Max: intp(15)},
			},
			Write: &Write{
				Targets: idTarget,
				State: func(ctx context.Context, env *Env, a *Args) (any, error) {
					id := a.String("id")
					if err := checkID("id", id); err != nil {
						return nil, err
					}
					st, err := readNotebookState(ctx, env, id)
					if err != nil {
						return nil, err
					}
					if st.Missing && preflighting(a) {
						if ok, err := env.Kernel.CheckBlockExist(ctx, id); err == nil && ok {
							return nil, badArg("%s is a document: SiYuan 3.7.3 stores sort modes per notebook only (document sort modes need 3.8.1); pass the notebook id", id)
						}
						return nil, notFound("notebook", id)
					}
					return st, nil
				},
				Execute: func(ctx context.Context, env *Env, a *Args) (map[string]any, error) {
					id := a.String("id")
					if err := checkID("id", id); err != nil {
						return nil, asInvalid(err)
					}
					mode := childSortMode(a)
					cur, err := env.Kernel.GetNotebookConf(ctx, id)
					if err != nil {
						return nil, strict.Reject(notebookErr(id, err))
					}
					conf := cur.Conf
					conf.SortMode = mode
					if _, err := env.Kernel.SetNotebookConf(ctx, id, conf); err != nil {
						return nil, writeErr(err, false)
					}
					return map[string]any{"id": id, "sortMode": mode}, nil
				},
				Readback: func(ctx context.Context, env *Env, a *Args, p map[string]any) (any, error) {
					id, mode := a.String("id"), childSortMode(a)
					return notebookReadback(ctx, env, id, func(st NotebookState) error {
						if st.Missing {
							return fmt.Errorf("notebook %s is gone", id)
						}
						if st.Conf.SortMode != mode || st.Entry.SortMode != mode {
							return fmt.Errorf("notebook %s reads back sort mode %d, want %d", id, st.Conf.SortMode, mode)
						}
						return nil
					})
				},
			},
		},
	}
}

func childSortMode(a *Args) int {
	if !a.Has("sortMode") {
		return sortFileTree
	}
	return a.Int("sortMode")
}

func checkMoveArgs(a *Args) error {
	from, to := a.Strings("fromIDs"), a.String("toID")
	if len(from) == 0 || len(from) > 50 {
		return badArg("fromIDs must hold 1 to 50 documents")
	}
	if err := checkID("toID", to); err != nil {
		return err
	}
	seen := map[string]bool{}
	for i, id := range from {
		if err := checkID(fmt.Sprintf("fromIDs[%d]", i), id); err != nil {
			return err
		}
		if seen[id] {
			return badArg("fromIDs lists %s twice", id)
		}
		seen[id] = true
		if id == to {
			return badArg("a document cannot be moved under itself (%s)", id)
		}
	}
	return nil
}

// DocMoveState is the structure document.move guards: where each moved
// document lives, and the target with its child list.
type DocMoveState struct {
	Docs   []docLoc      `json:"docs"`
	Target moveDocParent `json:"target"`
}

type moveDocParent struct {
	ID       string   `json:"id"`
	Missing  bool     `json:"missing,omitempty"`
	Kind     string   `json:"kind,omitempty"`
	Notebook string   `json:"notebook,omitempty"`
	Path     string   `json:"path,omitempty"`
	Children []string `json:"children,omitempty"`
}

// dir is the storage directory the target's children live in.
func (t moveDocParent) dir() string {
	if t.Kind == "notebook" {
		return "/"
	}
	return docDir(t.Path)
}

func readDocMoveState(ctx context.Context, env *Env, from []string, to string) (DocMoveState, error) {
	var st DocMoveState
	st.Docs = make([]docLoc, len(from))
	for i, id := range from {
		l, err := locateDoc(ctx, env, id)
		if err != nil {
			return st, err
		}
		st.Docs[i] = l
	}
	par, err := resolveReorderParent(ctx, env, to)
	if err != nil {
		var te *Error
		if !errors.As(err, &te) {
			return st, err
		}
		st.Target = moveDocParent{ID: to, Missing: true}
		return st, nil
	}
	st.Target = moveDocParent{ID: to, Kind: par.Kind, Notebook: par.Notebook, Path: par.Path, Children: []string{}}
	custom := sortCustom
	unlimited := 0
	list, err := env.Kernel.ListDocsByPath(ctx, siyuan.ListDocsRequest{Notebook: par.Notebook, Path: par.Path, Sort: &custom, MaxListCount: &unlimited, ShowHidden: true})
	if err != nil {
		return st, err
	}
	for _, f := range list.Files {
		st.Target.Children = append(st.Target.Children, f.ID)
	}
	return st, nil
}

// check refuses a move the kernel would refuse or silently skip.
func (st DocMoveState) check() error {
	if st.Target.Missing {
		return badArg("toID %s is neither a notebook nor a document", st.Target.ID)
	}
	for _, d := range st.Docs {
		if err := checkDoc(d, "fromIDs:"); err != nil {
			return err
		}
		if d.Notebook == st.Target.Notebook && strings.HasPrefix(st.Target.dir()+"/", docDir(d.Path)+"/") {
			return badArg("document %s cannot be moved under itself or its own descendant %s", d.ID, st.Target.ID)
		}
	}
	return nil
}

// placed reports whether every moved document is a child of the target.
func (st DocMoveState) placed() error {
	if st.Target.Missing {
		return fmt.Errorf("the target %s is gone", st.Target.ID)
	}
	for _, d := range st.Docs {
		if d.Missing || d.Notebook != st.Target.Notebook || path.Dir(d.Path) != st.Target.dir() {
			return fmt.Errorf("document %s is not under %s", d.ID, st.Target.ID)
		}
	}
	return nil
}

// execReorder sets the custom order with changeSort, then switches the
// notebook to custom sort when it is not already.
func execReorder(ctx context.Context, env *Env, a *Args) (map[string]any, error) {
	parentID, want := a.String("parentID"), a.Strings("orderedIDs")
	if err := checkID("parentID", parentID); err != nil {
		return nil, asInvalid(err)
	}
	// Reads before any write: a failure here applied nothing.
	par, err := resolveReorderParent(ctx, env, parentID)
	if err != nil {
		var te *Error
		if errors.As(err, &te) {
			return nil, asInvalid(err)
		}
		return nil, strict.Reject(err)
	}
	custom := sortCustom
	files, err := listVisible(ctx, env, par.Notebook, par.Path, &custom)
	if err != nil {
		return nil, strict.Reject(err)
	}
	children := make([]reorderChild, len(files))
	byID := map[string]string{}
	for i, f := range files {
		children[i] = reorderChild{ID: f.ID, Path: f.Path}
		byID[f.ID] = f.Path
	}
	if err := checkPermutation(want, children); err != nil {
		return nil, asInvalid(err)
	}
	conf, err := env.Kernel.GetNotebookConf(ctx, par.Notebook)
	if err != nil {
		return nil, strict.Reject(err)
	}
	out := map[string]any{"parentID": parentID, "notebook": par.Notebook, "ordered": len(want), "sortModeChanged": false}
	if len(want) > 0 {
		paths := make([]string, len(want))
		for i, id := range want {
			paths[i] = byID[id]
		}
		if err := env.Kernel.ChangeSort(ctx, par.Notebook, paths); err != nil {
			return nil, writeErr(err, false)
		}
	}
	if par.Kind != "notebook" {
		if conf.Conf.SortMode != sortCustom {
			out["hint"] = "the notebook does not sort by custom order, so SiYuan's file tree shows these documents in its own order; switch the notebook to custom sort (document set_child_sort_mode sortMode 6) to see this order"
		}
	} else if conf.Conf.SortMode != sortCustom {
		c := conf.Conf
		c.SortMode = sortCustom
		if _, err := env.Kernel.SetNotebookConf(ctx, par.Notebook, c); err != nil {
			return nil, writeErr(err, len(want) > 0)
		}
		out["sortModeChanged"] = true
	}
	return out, nil
}
