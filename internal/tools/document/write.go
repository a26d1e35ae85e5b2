package document

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/kernelview"
	"github.com/sisyphus-go/sisyphus/internal/tools/markup"
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
func locateDoc(ctx context.Context, env *tools.Env, id string) (docLoc, error) {
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

// locateDocument locates the document id names, refusing one that does
// not exist (not_found) or a block inside a document (notDoc, formatted
// with the id).
func locateDocument(ctx context.Context, env *tools.Env, id, notDoc string) (docLoc, error) {
	loc, err := locateDoc(ctx, env, id)
	switch {
	case err != nil:
		return loc, err
	case loc.Missing:
		return loc, failure.Missing("document", id)
	case loc.NotDocument:
		return loc, failure.Invalid(notDoc, id)
	}
	return loc, nil
}

// checkDoc refuses what a document action cannot act on.
func checkDoc(l docLoc, what string) error {
	switch {
	case l.Missing:
		return failure.Missing("document", l.ID)
	case l.NotDocument:
		return failure.Invalid("%s %s is a block inside a document, not a document", what, l.ID)
	case l.ID == l.Notebook:
		return failure.Invalid("%s %s is the notebook's own top-level document; use the notebook tool", what, l.ID)
	}
	return nil
}

// docDir is the storage directory holding a document's children.
func docDir(p string) string { return strings.TrimSuffix(p, ".sy") }

// DocState is the guarded state of one document: its block state (kramdown,
// attributes, DOM of the whole document) and where it lives.
type DocState struct {
	docLoc
	Block *kernelview.BlockState `json:"block,omitempty"`
	// Children are the ids of its direct child documents (remove only).
	Children []string `json:"children,omitempty"`
}

func readDocState(ctx context.Context, env *tools.Env, id string, children bool) (DocState, error) {
	loc, err := locateDoc(ctx, env, id)
	if err != nil || loc.Missing || loc.NotDocument {
		return DocState{docLoc: loc}, err
	}
	st := DocState{docLoc: loc}
	bs, err := kernelview.ReadBlockState(ctx, env, id)
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

func readDocStates(ctx context.Context, env *tools.Env, ids []string, children bool) ([]DocState, error) {
	return kernelview.ReadEach(ids, func(id string) (DocState, error) { return readDocState(ctx, env, id, children) })
}

// docIDs are the ids of document.remove: id or ids[] (each checked as
// declared).
func docIDs(id string, ids []string) ([]string, error) {
	if (id != "") == (ids != nil) {
		return nil, failure.Invalid("pass either id or ids[], not both")
	}
	if id != "" {
		ids = []string{id}
	}
	if len(ids) == 0 || len(ids) > 50 {
		return nil, failure.Invalid("ids[] must hold 1 to 50 documents")
	}
	return ids, nil
}

// stripLeadingTitle drops a leading "# <title>" line that repeats the
// document's title (SiYuan shows the title above the body already).
func stripLeadingTitle(md, title string) string {
	rest := strings.TrimLeft(md, " \t\r\n")
	line, after, _ := strings.Cut(rest, "\n")
	line = strings.TrimSpace(line)
	if strings.HasPrefix(line, "# ") && markup.NormalizeTitle(strings.TrimPrefix(line, "# ")) == title {
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
	// notebookChecked: a parent document was found, so its notebook exists.
	notebookChecked bool
}

// planCreate resolves the create arguments against the live tree (the
// parent document and the notebook must exist) and never writes: the
// state of document.create, read at preflight and again at commit.
func planCreate(ctx context.Context, env *tools.Env, a createArgs) (createPlan, error) {
	p, err := resolveCreate(ctx, env, a)
	if err != nil || p.notebookChecked {
		return p, err
	}
	st, err := kernelview.ReadNotebookState(ctx, env, p.req.Notebook)
	switch {
	case err != nil:
		return p, err
	case st.Missing:
		return p, failure.Missing("notebook", p.req.Notebook)
	case st.Entry.Closed:
		return p, failure.Invalid("notebook %s is closed: open it first (notebook set_open_state)", p.req.Notebook)
	}
	return p, nil
}

func resolveCreate(ctx context.Context, env *tools.Env, a createArgs) (createPlan, error) {
	nb, hp, parentPath, parentID, title := a.Notebook, a.Path, a.ParentPath, a.ParentID, a.Title
	var p createPlan
	switch {
	case hp != "":
		if parentPath != "" || parentID != "" || a.HasTitle {
			return p, failure.Invalid("pass path (a human path) alone, or parentID/parentPath with title")
		}
		// notebook is declared optional (parentID names one); a path
		// needs it.
		if err := tools.CheckID("notebook", nb); err != nil {
			return p, err
		}
		var segs []string
		for _, s := range strings.Split(hp, "/") {
			if s = markup.NormalizeTitle(s); s != "" {
				segs = append(segs, s)
			}
		}
		if len(segs) == 0 {
			return p, failure.Invalid("path must name the new document, like /Inbox/Weekly Note")
		}
		p.title = segs[len(segs)-1]
		p.hpath = "/" + strings.Join(segs, "/")
		p.req = siyuan.CreateDocRequest{Notebook: nb, Path: p.hpath}
	case parentID != "" || parentPath != "":
		if parentID != "" && parentPath != "" {
			return p, failure.Invalid("pass parentID or parentPath, not both")
		}
		if p.title = markup.NormalizeTitle(title); p.title == "" {
			return p, failure.Invalid("title must name the new document")
		}
		var parent docLoc
		switch {
		case parentID != "":
			l, err := locateDoc(ctx, env, parentID)
			if err != nil {
				return p, err
			}
			if l.Missing {
				return p, failure.Missing("document", parentID)
			}
			if l.NotDocument {
				return p, failure.Invalid("parentID %s is a block inside a document, not a document", parentID)
			}
			if nb != "" && nb != l.Notebook {
				return p, failure.Invalid("parentID %s is not in notebook %s", parentID, nb)
			}
			parent = l
		case strings.HasSuffix(parentPath, ".sy"):
			if err := tools.CheckID("notebook", nb); err != nil {
				return p, err
			}
			id := siyuan.DocIDOfPath(parentPath)
			if tools.CheckID("parentPath", id) != nil {
				return p, failure.Invalid("parentPath must be a storage path like /20260812120000-abcdefg.sy or a human path like /Inbox")
			}
			l, err := locateDoc(ctx, env, id)
			if err != nil {
				return p, err
			}
			if l.Missing || l.NotDocument || l.Notebook != nb || l.Path != parentPath {
				return p, failure.Missing("document at storage path", parentPath)
			}
			parent = l
		default:
			if err := tools.CheckID("notebook", nb); err != nil {
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
				return p, failure.Missing("document with human path", hp)
			case 1:
			default:
				return p, failure.Invalid("%d documents have the human path %s; pass parentID instead", len(ids), hp)
			}
			if parent, err = locateDoc(ctx, env, ids[0]); err != nil {
				return p, err
			}
			if parent.Missing {
				return p, failure.Missing("document with human path", hp)
			}
		}
		p.req.Notebook = parent.Notebook
		p.notebookChecked = parent.ID != parent.Notebook && parent.HPath != "/"
		if parent.ID == parent.Notebook || parent.HPath == "/" {
			p.hpath, p.parentDir = "/"+p.title, "/"
		} else {
			p.hpath, p.parentDir = parent.HPath+"/"+p.title, docDir(parent.Path)
			p.req.ParentID = parent.ID
		}
		p.req.Path = p.hpath
	default:
		return p, failure.Invalid("pass notebook + path (a human path), or parentID (or notebook + parentPath) + title")
	}
	p.req.Markdown = stripLeadingTitle(a.Markdown, p.title)
	return p, nil
}

// createExpect is what a created document must read back as, from the
// arguments alone.
type createExpect struct{ title, hpath, parentID string }

func expectCreate(a createArgs) createExpect {
	var segs []string
	split := func(p string) {
		for _, s := range strings.Split(p, "/") {
			if s = markup.NormalizeTitle(s); s != "" {
				segs = append(segs, s)
			}
		}
	}
	if hp := a.Path; hp != "" {
		split(hp)
		if len(segs) == 0 {
			return createExpect{}
		}
		return createExpect{title: segs[len(segs)-1], hpath: "/" + strings.Join(segs, "/")}
	}
	e := createExpect{title: markup.NormalizeTitle(a.Title)}
	pp := a.ParentPath
	switch {
	case a.ParentID != "":
		if a.ParentID != a.Notebook {
			e.parentID = a.ParentID
		}
	case strings.HasSuffix(pp, ".sy"):
		e.parentID = siyuan.DocIDOfPath(pp)
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

// createArgs are document.create's arguments.
type createArgs struct {
	Notebook   string   `arg:"notebook" help:"the notebook" id:""`
	Path       string   `arg:"path" help:"human path of the new document, like /Inbox/Weekly Note (missing parents are created empty)"`
	ParentID   string   `arg:"parentID" help:"the parent document (or a notebook id for its root)" id:""`
	ParentPath string   `arg:"parentPath" help:"with notebook: the parent as a human path (/Inbox) or a storage path (/20260812120000-abcdefg.sy)"`
	TitleArg   *string  `arg:"title" help:"the title, with parentID or parentPath"`
	Markdown   string   `arg:"markdown" help:"the body; omit for an empty document" default:""`
	Icon       string   `arg:"icon" help:"the new document's icon: an emoji code point in hex like 1f4d4 (📔; preferred: a raw emoji may not render), or a custom icon path; set with the document and read back"`
	Sorts      []string `arg:"sorts" help:"accepted and ignored: upstream 0.6.8 keeps it for older callers and does not use it either"`
	// Title is the title given; HasTitle whether one was.
	Title    string
	HasTitle bool
}

func (a createArgs) targets() []string {
	var ids []string
	for _, v := range []string{a.Notebook, a.ParentID} {
		if v != "" {
			ids = append(ids, v)
		}
	}
	return ids
}

// reorderParent is the parent whose children document.reorder orders.
type reorderParent struct {
	ID, Kind, Notebook, Path string
}

func resolveReorderParent(ctx context.Context, env *tools.Env, id string) (reorderParent, error) {
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
	switch {
	case l.Missing:
		return reorderParent{}, failure.New(failure.NotFound, "no notebook or document has the id %s", id)
	case l.NotDocument:
		return reorderParent{}, failure.Invalid("%s is a block inside a document, neither a notebook nor a document", id)
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
	ParentID string `json:"parentID"`
	Missing  bool   `json:"missing,omitempty"`
	// Block: the id names a block inside a document (Missing too).
	Block    bool   `json:"block,omitempty"`
	Kind     string `json:"kind,omitempty"`
	Notebook string `json:"notebook,omitempty"`
	Path     string `json:"path,omitempty"`
	// Conf is the notebook's configuration as SiYuan holds it (what
	// switching it to custom sort sends back whole), Shown as the call may
	// see it: what the digest covers (see kernelview.NotebookState).
	Conf     siyuan.BoxConf `json:"-"`
	Shown    siyuan.BoxConf `json:"conf"`
	Children []reorderChild `json:"children"`
}

func listVisible(ctx context.Context, env *tools.Env, nb, p string, sortMode *int) ([]siyuan.DocFile, error) {
	unlimited := 0
	list, err := env.Kernel.ListDocsByPath(ctx, siyuan.ListDocsRequest{Notebook: nb, Path: p, Sort: sortMode, MaxListCount: &unlimited})
	if err != nil {
		return nil, err
	}
	return list.Files, nil
}

func readReorderState(ctx context.Context, env *tools.Env, parentID string) (ReorderState, error) {
	par, err := resolveReorderParent(ctx, env, parentID)
	if err != nil {
		var te *failure.Error
		if errors.As(err, &te) && (te.Code == failure.InvalidArguments || te.Code == failure.NotFound) {
			return ReorderState{ParentID: parentID, Missing: true, Block: te.Code == failure.InvalidArguments, Children: []reorderChild{}}, nil
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
	go func() {
		defer wg.Done()
		defer failure.Recover(&cErr)
		conf, cErr = env.Kernel.GetNotebookConf(ctx, par.Notebook)
	}()
	go func() {
		defer wg.Done()
		defer failure.Recover(&lErr)
		files, lErr = listVisible(ctx, env, par.Notebook, par.Path, &custom)
	}()
	wg.Wait()
	if err := errors.Join(cErr, lErr); err != nil {
		return ReorderState{}, err
	}
	c := kernelview.ConfState(conf.Conf)
	st := ReorderState{ParentID: parentID, Kind: par.Kind, Notebook: par.Notebook, Path: par.Path, Conf: c, Shown: tools.VeilBoxConf(ctx, c), Children: []reorderChild{}}
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
	return failure.Invalid("orderedIDs must list every visible child document exactly once (%s)", strings.Join(parts, "; "))
}

// moveArgs are document.move's arguments: the documents (fromIDs, or
// fromPaths: storage paths) and the new parent (toID, or toNotebook +
// toPath: a storage path, or / for the notebook's root).
type moveArgs struct {
	GivenIDs   []string `arg:"fromIDs" help:"the documents to move" id:""`
	FromPaths  []string `arg:"fromPaths" help:"the documents to move, by storage path (document lookup answers them; 1 to 50, as fromIDs)"`
	GivenTo    string   `arg:"toID" help:"the new parent: a document, or a notebook for its root" id:""`
	ToNotebook string   `arg:"toNotebook" help:"with toPath: the notebook to move into" id:""`
	ToPath     string   `arg:"toPath" help:"with toNotebook: the new parent's storage path, or / for the notebook's root"`
	// FromIDs and ToID are the documents and the new parent, from either
	// form; From and To where the storage paths say they are.
	FromIDs []string
	ToID    string
	From    []storageRef
	To      *storageRef
}

func (a moveArgs) targets() []string { return append(slices.Clone(a.FromIDs), a.ToID) }

// complete reads the two forms of each end into ids.
func (a *moveArgs) complete() error {
	switch {
	case (a.GivenIDs != nil) == (a.FromPaths != nil):
		return failure.Invalid("pass the documents as fromIDs or as fromPaths (storage paths), one of them")
	case a.FromPaths != nil:
		if len(a.FromPaths) == 0 || len(a.FromPaths) > 50 {
			return failure.Invalid("fromPaths must hold 1 to 50 documents")
		}
		var err error
		if a.FromIDs, a.From, err = refsAtPaths("fromPaths", "", a.FromPaths); err != nil {
			return err
		}
	default:
		a.FromIDs = a.GivenIDs
	}
	switch {
	case a.GivenTo != "" && (a.ToNotebook != "" || a.ToPath != ""):
		return failure.Invalid("pass the new parent as toID or as toNotebook + toPath, one of them")
	case a.GivenTo != "":
		a.ToID = a.GivenTo
	case a.ToNotebook == "" || a.ToPath == "":
		return failure.Invalid("pass the new parent: toID, or toNotebook + toPath (a storage path, or / for the notebook's root)")
	case a.ToPath == "/":
		a.ToID = a.ToNotebook
	default:
		id, err := docAtPath("toPath", a.ToPath)
		if err != nil {
			return err
		}
		a.ToID, a.To = id, &storageRef{ID: id, Notebook: a.ToNotebook, Path: a.ToPath}
	}
	return checkMoveArgs(*a)
}

func checkMoveArgs(a moveArgs) error {
	from, to := a.FromIDs, a.ToID
	if len(from) == 0 || len(from) > 50 {
		return failure.Invalid("fromIDs must hold 1 to 50 documents")
	}
	seen := map[string]bool{}
	for _, id := range from {
		if seen[id] {
			return failure.Invalid("the documents to move name %s twice", id)
		}
		seen[id] = true
		if id == to {
			return failure.Invalid("a document cannot be moved under itself (%s)", id)
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
	Block    bool     `json:"block,omitempty"`
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

func readDocMoveState(ctx context.Context, env *tools.Env, from []string, to string) (DocMoveState, error) {
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
		var te *failure.Error
		if !errors.As(err, &te) {
			return st, err
		}
		st.Target = moveDocParent{ID: to, Missing: true, Block: te.Code == failure.InvalidArguments}
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

// check refuses a move the kernel would refuse or silently skip, and one
// whose storage paths do not name the documents where they are.
func (st DocMoveState) check(a moveArgs) error {
	for _, ref := range a.From {
		i := slices.Index(a.FromIDs, ref.ID)
		if err := checkAt(st.Docs[i], ref); err != nil {
			return err
		}
	}
	if a.ToPath == "/" && (st.Target.Missing || st.Target.Kind != "notebook") {
		return failure.Missing("notebook", a.ToNotebook)
	}
	if to := a.To; to != nil {
		t := st.Target
		if t.Missing || t.Kind != "document" || t.Notebook != to.Notebook || t.Path != to.Path {
			return failure.New(failure.NotFound, "toPath: no document at storage path %s in notebook %s", to.Path, to.Notebook)
		}
	}
	switch {
	case st.Target.Block:
		return failure.Invalid("toID %s is a block inside a document, neither a notebook nor a document", st.Target.ID)
	case st.Target.Missing:
		return failure.New(failure.NotFound, "toID %s: no notebook or document has this id", st.Target.ID)
	}
	for _, d := range st.Docs {
		if err := checkDoc(d, "fromIDs:"); err != nil {
			return err
		}
		if d.Notebook == st.Target.Notebook && strings.HasPrefix(st.Target.dir()+"/", docDir(d.Path)+"/") {
			return failure.Invalid("document %s cannot be moved under itself or its own descendant %s", d.ID, st.Target.ID)
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
