// Package document is the document tool: find and read SiYuan documents
// (ids, paths, Markdown windows, children, tree, outline) and create,
// rename, remove, move and reorder them.
package document

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/kernelview"
	"github.com/sisyphus-go/sisyphus/internal/tools/markup"
)

// Tool returns the document tool.
func Tool() *tools.Tool {
	return &tools.Tool{
		Name:  "document",
		Title: "Documents",
		Description: "Find and read SiYuan documents: resolve ids and paths, read a document as editable Markdown " +
			"in windows of whole blocks (or as HTML), list child documents and blocks, the document tree, the heading outline, titles by search " +
			"and the child sort mode; create, rename, move, reorder, duplicate and remove documents, set their icon and cover, " +
			"create today's daily note, turn a heading's section into a document and a document into a heading, and give an import " +
			"its link targets among one document's children (by id, or created by title). Writes are strict: call with validateOnly:true first, then repeat with the requestId " +
			"(and for guarded actions the credential) it returns.",
		Actions: []*tools.Action{
			lookupAction.Action(), getDoc.Action(), getChildDocsAction.Action(), listTreeAction.Action(), getOutlineAction.Action(),
			create.Action(), rename.Action(), remove.Action(), move.Action(), reorder.Action(), setChildSortMode.Action(),
			createDailyNote.Action(), duplicate.Action(), headingToDoc.Action(), docToHeading.Action(),
			getChildSortMode.Action(), getChildBlocks.Action(), setAttr.Action(), searchDocs.Action(), ensureLinkTargets.Action(),
		},
	}
}

type idArgs struct {
	ID string `arg:"id" help:"the document" id:"" required:""`
}

// parentArgs and sourceArgs name one document as get_child_sort_mode and
// duplicate describe it.
type (
	parentArgs struct {
		ID string `arg:"id" help:"the parent document" id:"" required:""`
	}
	sourceArgs struct {
		ID string `arg:"id" help:"the source document" id:"" required:""`
	}
)

// readsID is the scope of a read of one document: its notebook, readable.
var readsID = tools.Scope[idArgs]{Touches: func(a idArgs) []tools.Touch { return []tools.Touch{tools.OnBlock(a.ID, tools.LevelRead)} }}

// either touches a notebook named by id, or the notebook of a block or
// document named by id (the gate resolves which).
func either(ids []string, need tools.Level) []tools.Touch { return tools.OnBlocks(ids, need) }

// ---- reads ----------------------------------------------------------------

var lookupAction = tools.Read[lookupArgs]{
	Name: "lookup", Summary: "resolve a document by id, storage path or human path (hpath, alias hPath); include docInfo adds the first document's info (title, attributes, icon, child count)",
	Example:  map[string]any{"notebook": "20260812115959-nbnbnbn", "hpath": "/Projects/Plan", "include": []string{"docInfo"}},
	Validate: (*lookupArgs).complete,
	Scope:    tools.Scope[lookupArgs]{Touches: func(a lookupArgs) []tools.Touch { return either(nonEmpty(a.ID, a.Notebook), tools.LevelRead) }},
	Run:      lookup,
}

var getDoc = tools.Read[getDocArgs]{
	Name: "get_doc", Summary: "a document as editable Markdown, in windows of whole top-level blocks (mode markdown: blockStart, blockLimit, tokenBudget, includeBlockIds), or as the editor's HTML (mode html: size, the window arguments ignored)",
	Validate: (*getDocArgs).check,
	Scope:    tools.Scope[getDocArgs]{Touches: func(a getDocArgs) []tools.Touch { return []tools.Touch{tools.OnBlock(a.ID, tools.LevelRead)} }},
	Run: func(ctx context.Context, env *tools.Env, a getDocArgs) (any, error) {
		if a.Mode == "html" {
			return readHTML(ctx, env, a)
		}
		return kernelview.ReadWindow(ctx, env, kernelview.Window{ID: a.ID, WindowArgs: a.WindowArgs})
	},
}

var getChildDocsAction = tools.Read[childDocsArgs]{
	Name: "get_child_docs", Summary: "documents directly under a document (or at a notebook's root)",
	Example: map[string]any{"notebook": "20260812115959-nbnbnbn"},
	Scope:   tools.Scope[childDocsArgs]{Touches: func(a childDocsArgs) []tools.Touch { return either(nonEmpty(a.ID, a.Notebook), tools.LevelRead) }},
	Run:     getChildDocs,
}

var listTreeAction = tools.Read[treeArgs]{
	Name: "list_tree", Summary: "the document tree under a notebook path, nested",
	Scope: tools.Scope[treeArgs]{Touches: func(a treeArgs) []tools.Touch { return []tools.Touch{tools.OnNotebook(a.Notebook, tools.LevelRead)} }},
	Run:   listTree,
}

var getOutlineAction = tools.Read[outlineArgs]{
	Name: "get_outline", Summary: "the document's heading tree (headings in lists too, none from blockquotes); preview: as SiYuan's preview shows it, the title first",
	Scope: tools.Scope[outlineArgs]{Touches: func(a outlineArgs) []tools.Touch { return []tools.Touch{tools.OnBlock(a.ID, tools.LevelRead)} }},
	Run:   getOutline,
}

// ---- writes ---------------------------------------------------------------

var (
	guarded   = strict.WritePolicy{Class: strict.Mutation, Precondition: strict.ExpectedStateHash}
	structure = strict.WritePolicy{Class: strict.Mutation, Precondition: strict.ExpectedStructureHash}
)

// createdDoc is what create hands its readback, typed rather than read
// back from the public payload's keys: the new document and the notebook
// the plan put it in.
type createdDoc struct {
	ID, Notebook string
}

var create = tools.WriteWith[createArgs, createPlan, createdDoc]{Write: tools.Write[createArgs, createPlan]{
	Name: "create", Summary: "create a document from markdown: notebook + path (a human path), or parentID (or notebook + parentPath) + title; a leading \"# <title>\" line is dropped",
	Policy:  strict.WritePolicy{Class: strict.Additive},
	Example: map[string]any{"notebook": "20260812115959-nbnbnbn", "path": "/Projects/Plan", "markdown": "## Goals\n\n- ship it", "validateOnly": true},
	Validate: func(a *createArgs) error {
		a.HasTitle = a.TitleArg != nil
		if a.HasTitle {
			a.Title = *a.TitleArg
		}
		a.Icon = strings.TrimSpace(a.Icon)
		return nil
	},
	Scope:   tools.Scope[createArgs]{Touches: func(a createArgs) []tools.Touch { return either(a.targets(), tools.LevelWrite) }},
	Targets: createArgs.targets,
	State:   planCreate,
},
	Execute: func(ctx context.Context, env *tools.Env, a createArgs, plan createPlan) (tools.Payload, createdDoc, error) {
		id, err := env.Kernel.CreateDocWithMd(ctx, plan.req)
		if err != nil {
			return nil, createdDoc{}, tools.WriteFailure(err, false)
		}
		p := tools.Payload{"id": id, "notebook": plan.req.Notebook}
		if a.Icon != "" {
			// The document exists now: a failure here is never a clean
			// rejection.
			if err := setDocAttrs(ctx, env, id, map[string]string{"icon": a.Icon}); err != nil {
				return nil, createdDoc{}, tools.WriteFailure(fmt.Errorf("set the icon of the new document %s: %w", id, err), true)
			}
			p["icon"] = a.Icon
		}
		return p, createdDoc{id, plan.req.Notebook}, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a createArgs, p tools.Payload, d createdDoc) (any, error) {
		id, nb := d.ID, d.Notebook
		loc, err := tools.Await(ctx, func(ctx context.Context) (docLoc, error) { return locateDoc(ctx, env, id) },
			func(loc docLoc) error {
				if loc.Missing || loc.NotDocument {
					return fmt.Errorf("document %s does not exist", id)
				}
				return nil
			})
		if err != nil {
			return nil, err
		}
		if a.Icon != "" {
			// The icon's transaction is queued: flush it before reading.
			if err := env.Kernel.FlushTransaction(ctx); err != nil {
				return nil, err
			}
		}
		attrs, err := env.Kernel.GetBlockAttrs(ctx, id)
		if err != nil {
			return nil, err
		}
		if a.Icon != "" && attrs["icon"] != a.Icon {
			return nil, fmt.Errorf("document %s reads back icon %q, want %q", id, attrs["icon"], a.Icon)
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
}

type renameArgs struct {
	ID       string `arg:"id" help:"the document (or name it by notebook + path; when both are given they must name the same document, where upstream 0.6.8 takes id and ignores path)" id:""`
	Notebook string `arg:"notebook" help:"with path: the document's notebook" id:""`
	Path     string `arg:"path" help:"with notebook: the document's storage path, like /20260812120000-abcdefg.sy (document lookup answers it)"`
	Title    string `arg:"title" help:"the new title" required:""`
	// At is where notebook + path say the document is (nil with id alone).
	At *storageRef
}

// complete reads rename's document: id, or notebook + a storage path,
// which resolves to the id it ends with (both may be given when they name
// the same document).
func (a *renameArgs) complete() error {
	if markup.NormalizeTitle(a.Title) == "" {
		return failure.Invalid("title must not be empty")
	}
	at, err := pathRef(a.ID, a.Notebook, a.Path)
	if err != nil {
		return err
	}
	if at != nil {
		a.ID, a.At = at.ID, at
	}
	return nil
}

// pathRef reads a document named by id, or by notebook + path (a storage
// path): nil for id alone. Both may be given only when path ends with id.
func pathRef(id, nb, p string) (*storageRef, error) {
	switch {
	case p == "" && nb != "":
		return nil, failure.Invalid("notebook names a document only with path (its storage path); or pass id")
	case p == "" && id == "":
		return nil, failure.Invalid("pass id, or notebook + path (a storage path like /20260812120000-abcdefg.sy)")
	case p == "":
		return nil, nil
	case nb == "":
		return nil, failure.Invalid("path needs notebook (the notebook the storage path is in)")
	}
	pid, err := docAtPath("path", p)
	if err != nil {
		return nil, err
	}
	if id != "" && id != pid {
		return nil, failure.Invalid("id %s and path %s name different documents; pass one of them", id, p)
	}
	return &storageRef{ID: pid, Notebook: nb, Path: p}, nil
}

// docTouches are the touches of a write to documents: each document's
// notebook, and the notebook the call named, at need.
func docTouches(ids []string, nb string, need tools.Level) []tools.Touch {
	out := tools.OnBlocks(ids, need)
	if nb != "" {
		out = append(out, tools.OnNotebook(nb, need))
	}
	return out
}

var rename = tools.Write[renameArgs, DocState]{
	Name: "rename", Summary: "set a document's title; name the document by id, or by notebook + path (its storage path)", Policy: guarded,
	Example:  map[string]any{"id": "20260812120000-docdocd", "title": "Plan (final)", "validateOnly": true},
	Validate: (*renameArgs).complete,
	Scope: tools.Scope[renameArgs]{Touches: func(a renameArgs) []tools.Touch {
		return docTouches([]string{a.ID}, a.Notebook, tools.LevelWrite)
	}},
	Targets: func(a renameArgs) []string { return []string{a.ID} },
	State: func(ctx context.Context, env *tools.Env, a renameArgs) (DocState, error) {
		return readDocState(ctx, env, a.ID, false)
	},
	Check: func(a renameArgs, st DocState) error {
		if a.At != nil {
			if err := checkAt(st.docLoc, *a.At); err != nil {
				return err
			}
		}
		return checkDoc(st.docLoc, "id")
	},
	Execute: func(ctx context.Context, env *tools.Env, a renameArgs, _ DocState) (tools.Payload, error) {
		if err := env.Kernel.RenameDocByID(ctx, a.ID, a.Title); err != nil {
			return nil, tools.WriteFailure(err, false)
		}
		return tools.Payload{"id": a.ID}, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a renameArgs, p tools.Payload) (any, error) {
		title := markup.NormalizeTitle(a.Title)
		// SiYuan serves a renamed document's attributes from a cache that
		// lags until its transaction queue is flushed.
		if err := env.Kernel.FlushTransaction(ctx); err != nil {
			return nil, err
		}
		return tools.Await(ctx, func(ctx context.Context) (DocState, error) { return readDocState(ctx, env, a.ID, false) },
			func(st DocState) error {
				if st.Block == nil || st.Block.Attrs["title"] != title || path.Base(st.HPath) != title {
					return fmt.Errorf("document %s does not read back the new title", a.ID)
				}
				return nil
			})
	},
}

type removeArgs struct {
	ID       string   `arg:"id" help:"the document" id:""`
	Given    []string `arg:"ids" help:"several documents (1 to 50)" id:""`
	Notebook string   `arg:"notebook" help:"with path: the document's notebook; with paths: the notebook every path is in (omitted: each path's own)" id:""`
	Path     string   `arg:"path" help:"with notebook: the document's storage path, like /20260812120000-abcdefg.sy (document lookup answers it)"`
	Paths    []string `arg:"paths" help:"several documents by storage path (1 to 50; upstream 0.6.8 sets no bound)"`
	IDs      []string // the documents, from whichever form was given
	// At are where path or paths say the documents are.
	At []storageRef
}

// complete reads remove's documents: id, ids[], notebook + path, or
// paths[] (with notebook or without), one form per call.
func (a *removeArgs) complete() error {
	forms := 0
	for _, given := range []bool{a.ID != "", a.Given != nil, a.Path != "", a.Paths != nil} {
		if given {
			forms++
		}
	}
	if forms != 1 {
		return failure.Invalid("pass one of id, ids[], notebook + path, or paths[] (storage paths)")
	}
	switch {
	case a.Path != "":
		at, err := pathRef("", a.Notebook, a.Path)
		if err != nil {
			return err
		}
		a.IDs, a.At = []string{at.ID}, []storageRef{*at}
		return nil
	case a.Paths != nil:
		if len(a.Paths) == 0 || len(a.Paths) > 50 {
			return failure.Invalid("paths[] must hold 1 to 50 documents")
		}
		var err error
		a.IDs, a.At, err = refsAtPaths("paths", a.Notebook, a.Paths)
		return err
	case a.Notebook != "":
		return failure.Invalid("notebook goes with path or paths[] (storage paths)")
	}
	var err error
	a.IDs, err = docIDs(a.ID, a.Given)
	return err
}

var remove = tools.Write[removeArgs, []DocState]{
	Name: "remove", Summary: "delete documents (id, ids[], notebook + path, or paths[]: storage paths) with their child documents (SiYuan keeps a copy in its history); one form per call: unlike upstream 0.6.8, which silently prefers one, mixed forms are refused", Policy: guarded, Destructive: true,
	Dangerous: true, OffByDefault: true,
	Example:  map[string]any{"id": "20260812120000-docdocd", "validateOnly": true},
	Validate: (*removeArgs).complete,
	Scope: tools.Scope[removeArgs]{Touches: func(a removeArgs) []tools.Touch {
		return docTouches(a.IDs, a.Notebook, tools.LevelDelete)
	}},
	Targets: func(a removeArgs) []string { return a.IDs },
	State: func(ctx context.Context, env *tools.Env, a removeArgs) ([]DocState, error) {
		return readDocStates(ctx, env, a.IDs, true)
	},
	Check: func(a removeArgs, sts []DocState) error {
		if err := checkAll(sts, a.At); err != nil {
			return err
		}
		for _, st := range sts {
			if err := checkDoc(st.docLoc, "id"); err != nil {
				return err
			}
		}
		return nil
	},
	Execute: func(ctx context.Context, env *tools.Env, a removeArgs, _ []DocState) (tools.Payload, error) {
		ids := kernelview.SortedUnique(a.IDs)
		for i, id := range ids {
			if err := env.Kernel.RemoveDocByID(ctx, id); err != nil {
				return nil, tools.WriteFailure(err, i > 0)
			}
		}
		p := tools.Payload{"ids": ids, "removed": len(ids)}
		if a.Paths != nil || a.Path != "" {
			p["paths"] = append(slices.Clone(a.Paths), nonEmpty(a.Path)...)
		}
		return p, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a removeArgs, p tools.Payload) (any, error) {
		// Removal is proven by the block tree saying the document does not
		// exist, never by a failed read.
		return tools.Await(ctx, func(ctx context.Context) ([]DocState, error) { return readDocStates(ctx, env, a.IDs, true) },
			func(sts []DocState) error {
				for _, st := range sts {
					if !st.Missing {
						return fmt.Errorf("document %s still exists", st.ID)
					}
				}
				return nil
			})
	},
}

var move = tools.Write[moveArgs, DocMoveState]{
	Name: "move", Summary: "move documents (fromIDs, or fromPaths: storage paths) under a document or to a notebook's root (toID, or toNotebook + toPath: the parent's storage path, / for the root)", Policy: structure, Destructive: true, Dangerous: true,
	Example:  map[string]any{"fromIDs": []string{"20260812120000-docdocd"}, "toID": "20260812115959-nbnbnbn", "validateOnly": true},
	Validate: (*moveArgs).complete,
	Scope: tools.Scope[moveArgs]{Touches: func(a moveArgs) []tools.Touch {
		return docTouches(a.targets(), a.ToNotebook, tools.LevelWrite)
	}},
	Targets: moveArgs.targets,
	State: func(ctx context.Context, env *tools.Env, a moveArgs) (DocMoveState, error) {
		return readDocMoveState(ctx, env, a.FromIDs, a.ToID)
	},
	Check: func(a moveArgs, st DocMoveState) error { return st.check(a) },
	Execute: func(ctx context.Context, env *tools.Env, a moveArgs, _ DocMoveState) (tools.Payload, error) {
		if err := env.Kernel.MoveDocsByID(ctx, a.FromIDs, a.ToID); err != nil {
			return nil, tools.WriteFailure(err, false)
		}
		p := tools.Payload{"fromIDs": a.FromIDs, "toID": a.ToID, "moved": len(a.FromIDs)}
		if a.FromPaths != nil {
			p["fromPaths"] = a.FromPaths
		}
		if a.ToPath != "" {
			p["toNotebook"], p["toPath"] = a.ToNotebook, a.ToPath
		}
		return p, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a moveArgs, p tools.Payload) (any, error) {
		return tools.Await(ctx, func(ctx context.Context) (DocMoveState, error) { return readDocMoveState(ctx, env, a.FromIDs, a.ToID) },
			DocMoveState.placed)
	},
}

type reorderArgs struct {
	ParentID   string   `arg:"parentID" help:"the notebook or parent document" id:"" required:""`
	OrderedIDs []string `arg:"orderedIDs" help:"every visible child document id, in the new order" required:""`
}

var reorder = tools.Write[reorderArgs, ReorderState]{
	Name: "reorder", Summary: "set the manual (custom) order of a notebook's or document's child documents (orderedIDs: every visible child once); " +
		"a notebook parent is switched to custom sort (6); for a document parent the order is stored and shows wherever " +
		"the notebook sorts by custom order (SiYuan 3.7.3 has no per-document sort mode), as the answer's hint says",
	Policy:  structure,
	Example: map[string]any{"parentID": "20260812115959-nbnbnbn", "orderedIDs": []string{"20260812120000-bbbbbbb", "20260812120000-aaaaaaa"}, "validateOnly": true},
	Scope:   tools.Scope[reorderArgs]{Touches: func(a reorderArgs) []tools.Touch { return either([]string{a.ParentID}, tools.LevelWrite) }},
	Targets: func(a reorderArgs) []string { return append([]string{a.ParentID}, a.OrderedIDs...) },
	State: func(ctx context.Context, env *tools.Env, a reorderArgs) (ReorderState, error) {
		return readReorderState(ctx, env, a.ParentID)
	},
	Check: func(a reorderArgs, st ReorderState) error {
		switch {
		case st.Block:
			return failure.Invalid("parentID %s is a block inside a document, neither a notebook nor a document", st.ParentID)
		case st.Missing:
			return failure.New(failure.NotFound, "parentID %s: no notebook or document has this id", st.ParentID)
		}
		return checkPermutation(a.OrderedIDs, st.Children)
	},
	Execute: execReorder,
	Readback: func(ctx context.Context, env *tools.Env, a reorderArgs, p tools.Payload) (any, error) {
		read := func(ctx context.Context) (ReorderState, error) {
			st, err := readReorderState(ctx, env, a.ParentID)
			if err == nil && st.Missing {
				// Absence proven by a successful read: no wait brings it back.
				err = fmt.Errorf("parent %s is gone", st.ParentID)
			}
			return st, err
		}
		return tools.Await(ctx, read, func(st ReorderState) error {
			if st.Kind == "notebook" && st.Conf.SortMode != sortCustom {
				return fmt.Errorf("the notebook's sort mode reads back %d, not custom (6)", st.Conf.SortMode)
			}
			// The state lists the children in custom order: it must show
			// the requested order exactly.
			got := make([]string, len(st.Children))
			for i, c := range st.Children {
				got[i] = c.ID
			}
			if !slices.Equal(got, a.OrderedIDs) {
				return fmt.Errorf("the children read back in another order")
			}
			return nil
		})
	},
}

// execReorder sets the custom order with changeSort, then switches the
// notebook to custom sort when it is not already.
func execReorder(ctx context.Context, env *tools.Env, a reorderArgs, st ReorderState) (tools.Payload, error) {
	byID := map[string]string{}
	for _, c := range st.Children {
		byID[c.ID] = c.Path
	}
	out := tools.Payload{"parentID": a.ParentID, "notebook": st.Notebook, "ordered": len(a.OrderedIDs), "sortModeChanged": false}
	if len(a.OrderedIDs) > 0 {
		paths := make([]string, len(a.OrderedIDs))
		for i, id := range a.OrderedIDs {
			paths[i] = byID[id]
		}
		if err := env.Kernel.ChangeSort(ctx, st.Notebook, paths); err != nil {
			return nil, tools.WriteFailure(err, false)
		}
	}
	if st.Kind != "notebook" {
		if st.Conf.SortMode != sortCustom {
			out["hint"] = "the notebook does not sort by custom order, so SiYuan's file tree shows these documents in its own order; switch the notebook to custom sort (document set_child_sort_mode sortMode 6) to see this order"
		}
	} else if st.Conf.SortMode != sortCustom {
		c := st.Conf
		c.SortMode = sortCustom
		if _, err := env.Kernel.SetNotebookConf(ctx, st.Notebook, c); err != nil {
			return nil, tools.WriteFailure(err, len(a.OrderedIDs) > 0)
		}
		out["sortModeChanged"] = true
	}
	return out, nil
}

type sortModeArgs struct {
	ID   string `arg:"id" help:"the notebook" id:"" required:""`
	Mode *int   `arg:"sortMode" help:"0/1 name, 2/3 updated, 4/5 natural, 6 custom, 7/8 ref count, 9/10 created, 11/12 size, 13/14 child count (asc/desc); 15 or omitted: follow the file tree setting" min:"0" max:"15"`
	// SortMode is Mode, or following the file tree when omitted.
	SortMode int
}

// sortModeState is a notebook's state; for an id that is no notebook, it
// also says whether the id names a document (refused with the reason).
type sortModeState struct {
	kernelview.NotebookState
	IsDocument bool `json:"isDocument,omitempty"`
}

var setChildSortMode = tools.Write[sortModeArgs, sortModeState]{
	Name: "set_child_sort_mode", Summary: "set how a notebook sorts its documents (id: the notebook, whose top-level document shares its id; sortMode 0-14, 15 or omitted: follow the file tree setting). " +
		"Notebooks only: SiYuan 3.7.3 has no per-document sort mode (setDocSortMode arrived in 3.8.1)",
	Policy:  guarded,
	Example: map[string]any{"id": "20260812115959-nbnbnbn", "sortMode": 6, "validateOnly": true},
	Validate: func(a *sortModeArgs) error {
		a.SortMode = sortFileTree
		if a.Mode != nil {
			a.SortMode = *a.Mode
		}
		return nil
	},
	Scope:   tools.Scope[sortModeArgs]{Touches: func(a sortModeArgs) []tools.Touch { return either([]string{a.ID}, tools.LevelWrite) }},
	Targets: func(a sortModeArgs) []string { return []string{a.ID} },
	State: func(ctx context.Context, env *tools.Env, a sortModeArgs) (sortModeState, error) {
		st, err := kernelview.ReadNotebookState(ctx, env, a.ID)
		if err != nil || !st.Missing {
			return sortModeState{NotebookState: st}, err
		}
		ok, err := env.Kernel.CheckBlockExist(ctx, a.ID)
		return sortModeState{NotebookState: st, IsDocument: ok}, err
	},
	Check: func(a sortModeArgs, st sortModeState) error {
		switch {
		case st.Missing && st.IsDocument:
			return failure.Invalid("%s is a document: SiYuan 3.7.3 stores sort modes per notebook only (document sort modes need 3.8.1); pass the notebook id", a.ID)
		case st.Missing:
			return failure.Missing("notebook", a.ID)
		}
		return nil
	},
	Execute: func(ctx context.Context, env *tools.Env, a sortModeArgs, st sortModeState) (tools.Payload, error) {
		conf := *st.Conf
		conf.SortMode = a.SortMode
		if _, err := env.Kernel.SetNotebookConf(ctx, a.ID, conf); err != nil {
			return nil, tools.WriteFailure(err, false)
		}
		return tools.Payload{"id": a.ID, "sortMode": a.SortMode}, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a sortModeArgs, p tools.Payload) (any, error) {
		st, err := tools.Await(ctx, func(ctx context.Context) (kernelview.NotebookState, error) {
			return kernelview.ReadNotebookState(ctx, env, a.ID)
		},
			func(st kernelview.NotebookState) error {
				switch {
				case st.Missing:
					return fmt.Errorf("notebook %s is gone", a.ID)
				case st.Conf.SortMode != a.SortMode || st.Entry.SortMode != a.SortMode:
					return fmt.Errorf("notebook %s reads back sort mode %d, want %d", a.ID, st.Conf.SortMode, a.SortMode)
				}
				return nil
			})
		if err != nil {
			return nil, err
		}
		return sortModeState{NotebookState: st}, nil
	},
}

// nonEmpty returns the non-empty strings among ss.
func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
