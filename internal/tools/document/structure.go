package document

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/kernelview"
)

// heading_to_doc and doc_to_heading: SiYuan's heading2Doc and doc2Heading.
// Neither is in upstream's dangerous set; both keep every block (and its
// id), moving it between documents.

// headingRe tells a heading's kramdown: SiYuan writes ATX headings only.
var headingRe = regexp.MustCompile(`^#{1,6} `)

type h2dArgs struct {
	HeadingID      string `arg:"headingID" help:"the heading" id:"" required:""`
	TargetNotebook string `arg:"targetNotebook" help:"the notebook of the new document" id:"" required:""`
	TargetPath     string `arg:"targetPath" help:"storage path of the new document's parent (/20260812120000-abcdefg.sy), or / for the notebook's root (the default)"`
	PreviousPath   string `arg:"previousPath" help:"storage path of the sibling document the new one is placed after (instead of targetPath)"`
}

func (a h2dArgs) targets() []string { return []string{a.HeadingID, a.TargetNotebook} }

// folder is the storage folder the new document goes to ("/" for the
// notebook's root), from the arguments alone.
func (a h2dArgs) folder() string {
	if a.PreviousPath != "" {
		return path.Dir(a.PreviousPath)
	}
	if a.TargetPath == "/" {
		return "/"
	}
	return strings.TrimSuffix(a.TargetPath, ".sy")
}

func (a h2dArgs) newPath() string { return path.Join(a.folder(), a.HeadingID+".sy") }

func parseH2D(r *h2dArgs) error {
	// The notebook's own document stands for its root; with neither path
	// the new document goes to the root (SiYuan refuses an empty one).
	if r.TargetPath == "" || r.TargetPath == "/"+r.TargetNotebook+".sy" {
		r.TargetPath = "/"
	}
	for _, p := range []struct{ name, v string }{{"targetPath", r.TargetPath}, {"previousPath", r.PreviousPath}} {
		if p.v == "" || p.v == "/" && p.name == "targetPath" {
			continue
		}
		if !strings.HasPrefix(p.v, "/") || !strings.HasSuffix(p.v, ".sy") || tools.CheckID(p.name, siyuan.DocIDOfPath(p.v)) != nil {
			return failure.Invalid("%s must be a storage path like /20260812120000-abcdefg.sy (got %q)", p.name, p.v)
		}
	}
	return nil
}

// H2DState is the structure heading_to_doc guards: the heading, its
// section and the document holding it, and the place the new document goes
// (its parent and the documents already there).
type H2DState struct {
	HeadingID string `json:"headingID"`
	Missing   bool   `json:"missing,omitempty"`
	Heading   bool   `json:"heading"`
	Kramdown  string `json:"kramdown,omitempty"`
	// Doc is the document holding the heading; SourceChildren its top-level
	// blocks; Section the blocks under the heading.
	Doc            docLoc   `json:"doc"`
	SourceChildren []string `json:"sourceChildren"`
	Section        []string `json:"section"`
	Target         h2dPlace `json:"target"`
}

type h2dPlace struct {
	Notebook        string   `json:"notebook"`
	NotebookMissing bool     `json:"notebookMissing,omitempty"`
	Closed          bool     `json:"closed,omitempty"`
	Parent          *docLoc  `json:"parent,omitempty"`
	Previous        *docLoc  `json:"previous,omitempty"`
	Siblings        []string `json:"siblings"`
}

func childIDs(kids []siyuan.ChildBlock) []string {
	ids := make([]string, 0, len(kids))
	for _, k := range kids {
		ids = append(ids, k.ID)
	}
	return ids
}

// locateAt finds the document at a storage path of a notebook.
func locateAt(ctx context.Context, env *tools.Env, nb, p string) (*docLoc, error) {
	l, err := locateDoc(ctx, env, siyuan.DocIDOfPath(p))
	if err != nil {
		return nil, err
	}
	if l.Missing || l.NotDocument || l.Notebook != nb || l.Path != p {
		l = docLoc{ID: l.ID, Missing: true}
	}
	return &l, nil
}

func readH2DState(ctx context.Context, env *tools.Env, a h2dArgs) (H2DState, error) {
	st := H2DState{HeadingID: a.HeadingID, SourceChildren: []string{}, Section: []string{}, Target: h2dPlace{Notebook: a.TargetNotebook, Siblings: []string{}}}
	ok, err := env.Kernel.CheckBlockExist(ctx, a.HeadingID)
	if err != nil {
		return st, err
	}
	if !ok {
		st.Missing = true
	} else {
		kd, err := env.Kernel.GetBlockKramdown(ctx, a.HeadingID)
		if err != nil {
			return st, err
		}
		st.Kramdown = kernelview.NormalizeKramdown(kd.Kramdown)
		st.Heading = headingRe.MatchString(kd.Kramdown)
		p, err := env.Kernel.GetPathByID(ctx, a.HeadingID)
		if err != nil {
			return st, err
		}
		if st.Doc, err = locateDoc(ctx, env, siyuan.DocIDOfPath(p.Path)); err != nil {
			return st, err
		}
		if st.Heading {
			sec, err := env.Kernel.GetChildBlocks(ctx, a.HeadingID)
			if err != nil {
				return st, err
			}
			st.Section = childIDs(sec)
		}
		kids, err := env.Kernel.GetChildBlocks(ctx, st.Doc.ID)
		if err != nil {
			return st, err
		}
		st.SourceChildren = childIDs(kids)
	}
	nb, err := readNotebookEntry(ctx, env, a.TargetNotebook)
	if err != nil {
		return st, err
	}
	if nb == nil {
		st.Target.NotebookMissing = true
		return st, nil
	}
	st.Target.Closed = nb.Closed
	if a.PreviousPath != "" {
		if st.Target.Previous, err = locateAt(ctx, env, a.TargetNotebook, a.PreviousPath); err != nil {
			return st, err
		}
	}
	if dir := path.Dir(a.newPath()); dir != "/" {
		if st.Target.Parent, err = locateAt(ctx, env, a.TargetNotebook, dir+".sy"); err != nil {
			return st, err
		}
	}
	if st.Target.Closed || st.Target.Parent != nil && st.Target.Parent.Missing {
		return st, nil
	}
	parent := "/"
	if st.Target.Parent != nil {
		parent = st.Target.Parent.Path
	}
	files, err := listVisible(ctx, env, a.TargetNotebook, parent, nil)
	if err != nil {
		return st, err
	}
	for _, f := range files {
		st.Target.Siblings = append(st.Target.Siblings, f.ID)
	}
	return st, nil
}

func readNotebookEntry(ctx context.Context, env *tools.Env, id string) (*siyuan.Notebook, error) {
	nbs, err := env.Kernel.ListNotebooks(ctx)
	if err != nil {
		return nil, err
	}
	for _, n := range nbs {
		if n.ID == id {
			return &n, nil
		}
	}
	return nil, nil
}

func (st H2DState) check() error {
	switch {
	case st.Missing:
		return failure.Missing("heading", st.HeadingID)
	case st.Doc.Missing || st.Doc.NotDocument:
		return fmt.Errorf("heading %s: its document cannot be found", st.HeadingID)
	case st.HeadingID == st.Doc.ID:
		return failure.Invalid("headingID %s is a document, not a heading", st.HeadingID)
	case !st.Heading:
		// SiYuan would turn any block into a document, taking every block
		// after it: refuse what is not a heading.
		return failure.Invalid("headingID %s is not a heading", st.HeadingID)
	case st.Target.NotebookMissing:
		return failure.Missing("notebook", st.Target.Notebook)
	case st.Target.Closed:
		return failure.Invalid("notebook %s is closed: open it first (notebook set_open_state)", st.Target.Notebook)
	case st.Target.Previous != nil && st.Target.Previous.Missing:
		return failure.New(failure.NotFound, "previousPath: no document of notebook %s is stored there", st.Target.Notebook)
	case st.Target.Parent != nil && st.Target.Parent.Missing:
		return failure.New(failure.NotFound, "targetPath: no document of notebook %s is stored at the new document's parent", st.Target.Notebook)
	}
	return nil
}

// headingToDoc hands its readback the state it moved the section from.
var headingToDoc = tools.WriteWith[h2dArgs, H2DState, H2DState]{Write: tools.Write[h2dArgs, H2DState]{
	Name: "heading_to_doc", Summary: "turn a heading and the blocks under it into a document (the heading's id becomes the " +
		"document's, its text the title) at the root of targetNotebook, under the document stored at targetPath, or after the " +
		"document stored at previousPath",
	Policy:   structure,
	Example:  map[string]any{"headingID": "20260812120000-hhhhhhh", "targetNotebook": "20260812115959-nbnbnbn", "targetPath": "/", "validateOnly": true},
	Validate: parseH2D,
	Scope: tools.Scope[h2dArgs]{Touches: func(a h2dArgs) []tools.Touch {
		return []tools.Touch{tools.OnBlock(a.HeadingID, tools.LevelWrite), tools.OnNotebook(a.TargetNotebook, tools.LevelWrite)}
	}},
	Targets: h2dArgs.targets,
	State:   readH2DState,
	Check:   func(_ h2dArgs, st H2DState) error { return st.check() },
},
	Execute: func(ctx context.Context, env *tools.Env, a h2dArgs, st H2DState) (tools.Payload, H2DState, error) {
		req := siyuan.Heading2DocRequest{HeadingID: a.HeadingID, TargetNotebook: a.TargetNotebook, TargetPath: a.TargetPath, PreviousPath: a.PreviousPath}
		if err := env.Kernel.Heading2Doc(ctx, req); err != nil {
			return nil, st, tools.WriteFailure(err, false)
		}
		p := tools.Payload{"id": a.HeadingID, "headingID": a.HeadingID, "targetNotebook": a.TargetNotebook, "targetPath": a.TargetPath,
			"notebook": a.TargetNotebook, "path": a.newPath(), "sourceID": st.Doc.ID}
		if a.PreviousPath != "" {
			p["previousPath"] = a.PreviousPath
		}
		return p, st, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a h2dArgs, _ tools.Payload, before H2DState) (any, error) {
		section := orEmpty(before.Section)
		left := slices.DeleteFunc(slices.Clone(orEmpty(before.SourceChildren)), func(id string) bool { return id == a.HeadingID || slices.Contains(section, id) })
		srcDoc := before.Doc.ID
		return tools.Await(ctx, func(ctx context.Context) (h2dResult, error) { return readH2DResult(ctx, env, a.HeadingID, srcDoc) },
			func(r h2dResult) error {
				switch {
				case r.Doc.Missing || r.Doc.NotDocument:
					return fmt.Errorf("heading %s did not become a document", a.HeadingID)
				case r.Doc.Notebook != a.TargetNotebook || r.Doc.Path != a.newPath():
					return fmt.Errorf("the new document %s is at %s in %s, want %s in %s", a.HeadingID, r.Doc.Path, r.Doc.Notebook, a.newPath(), a.TargetNotebook)
				case !slices.Equal(r.Children, section):
					return fmt.Errorf("the new document %s does not hold exactly the heading's section", a.HeadingID)
				case len(left) > 0 && !slices.Equal(r.SourceChildren, left),
					len(left) == 0 && len(r.SourceChildren) != 1:
					return fmt.Errorf("the source document %s does not read back without the section", srcDoc)
				}
				return nil
			})
	},
}

// orEmpty is ids, or an empty list for none: what a readback compares
// with and reports is a list even when the state held none.
func orEmpty(ids []string) []string {
	if ids == nil {
		return []string{}
	}
	return ids
}

// h2dResult is heading_to_doc's readback: the new document, its blocks,
// and what is left of the source document.
type h2dResult struct {
	Doc            docLoc   `json:"doc"`
	Children       []string `json:"children"`
	SourceChildren []string `json:"sourceChildren"`
}

func readH2DResult(ctx context.Context, env *tools.Env, id, src string) (h2dResult, error) {
	var r h2dResult
	var err error
	if r.Doc, err = locateDoc(ctx, env, id); err != nil || r.Doc.Missing || r.Doc.NotDocument {
		return r, err
	}
	kids, err := env.Kernel.GetChildBlocks(ctx, id)
	if err != nil {
		return r, err
	}
	r.Children = childIDs(kids)
	if src != "" {
		sk, err := env.Kernel.GetChildBlocks(ctx, src)
		if err != nil {
			return r, err
		}
		r.SourceChildren = childIDs(sk)
	}
	return r, nil
}

// ---- doc_to_heading -------------------------------------------------------

type d2hArgs struct {
	SrcID    string `arg:"srcID" help:"the document to turn into a heading" id:"" required:""`
	TargetID string `arg:"targetID" help:"a block of the target document (a heading, or any block)" id:"" required:""`
	After    bool   `arg:"after" help:"place it after the target (a heading: after its section) instead of before" default:"false"`
}

// D2HState is the structure doc_to_heading guards: the source document
// with its blocks and child documents, and the target block with the
// blocks of its document.
type D2HState struct {
	Source         docLoc   `json:"source"`
	SourceChildren []string `json:"sourceChildren"`
	SubDocs        []string `json:"subDocs"`
	Target         docLoc   `json:"target"`
	// TargetDoc is the document holding the target; TargetChildren its
	// top-level blocks.
	TargetDoc      string   `json:"targetDoc,omitempty"`
	TargetChildren []string `json:"targetChildren"`
}

func readD2HState(ctx context.Context, env *tools.Env, a d2hArgs) (D2HState, error) {
	st := D2HState{SourceChildren: []string{}, SubDocs: []string{}, TargetChildren: []string{}}
	var err error
	if st.Source, err = locateDoc(ctx, env, a.SrcID); err != nil {
		return st, err
	}
	if !st.Source.Missing && !st.Source.NotDocument {
		kids, err := env.Kernel.GetChildBlocks(ctx, a.SrcID)
		if err != nil {
			return st, err
		}
		st.SourceChildren = childIDs(kids)
		unlimited := 0
		list, err := env.Kernel.ListDocsByPath(ctx, siyuan.ListDocsRequest{Notebook: st.Source.Notebook, Path: st.Source.Path, MaxListCount: &unlimited, ShowHidden: true})
		if err != nil {
			return st, err
		}
		for _, f := range list.Files {
			st.SubDocs = append(st.SubDocs, f.ID)
		}
	}
	if st.Target, err = locateDoc(ctx, env, a.TargetID); err != nil || st.Target.Missing {
		return st, err
	}
	st.TargetDoc = a.TargetID
	if st.Target.NotDocument {
		st.TargetDoc = siyuan.DocIDOfPath(st.Target.Path)
	}
	kids, err := env.Kernel.GetChildBlocks(ctx, st.TargetDoc)
	if err != nil {
		return st, err
	}
	st.TargetChildren = childIDs(kids)
	return st, nil
}

func (st D2HState) check() error {
	switch {
	case st.Source.Missing:
		return failure.Missing("document", st.Source.ID)
	case st.Source.NotDocument:
		return failure.Invalid("srcID %s is a block inside a document, not a document", st.Source.ID)
	case st.Source.ID == st.Source.Notebook:
		return failure.Invalid("srcID %s is the notebook's own top-level document, which cannot become a heading", st.Source.ID)
	case len(st.SubDocs) > 0:
		return failure.Invalid("document %s has %d child documents: SiYuan turns only a document without children into a heading; move them first", st.Source.ID, len(st.SubDocs))
	case st.Target.Missing:
		// SiYuan answers success and does nothing then.
		return failure.Missing("block", st.Target.ID)
	case !st.Target.NotDocument:
		// SiYuan 3.7.3 removes the source and loses its content (with
		// after:false it also corrupts the target) when targetID is a
		// document.
		return failure.Invalid("targetID %s is a document: pass a block inside it (a heading to place the new heading beside, any other block to place it before or after as a sub-heading)", st.Target.ID)
	case st.TargetDoc == st.Source.ID:
		return failure.Invalid("targetID %s is inside the source document %s", st.Target.ID, st.Source.ID)
	}
	return nil
}

// docToHeading hands its readback the state it moved the blocks from.
var docToHeading = tools.WriteWith[d2hArgs, D2HState, D2HState]{Write: tools.Write[d2hArgs, D2HState]{
	Name: "doc_to_heading", Summary: "turn a document (without child documents) into a heading, keeping its id, with its blocks " +
		"under it, placed before the target block (after:true: after the target heading's section); the source document is removed",
	Policy:  structure,
	Example: map[string]any{"srcID": "20260812120000-docdocd", "targetID": "20260812120000-hhhhhhh", "after": true, "validateOnly": true},
	Validate: func(r *d2hArgs) error {
		if r.SrcID == r.TargetID {
			return failure.Invalid("srcID and targetID must differ")
		}
		return nil
	},
	Scope: tools.Scope[d2hArgs]{Touches: func(a d2hArgs) []tools.Touch {
		return tools.OnBlocks([]string{a.SrcID, a.TargetID}, tools.LevelWrite)
	}},
	Targets: func(a d2hArgs) []string { return []string{a.SrcID, a.TargetID} },
	State:   readD2HState,
	Check:   func(_ d2hArgs, st D2HState) error { return st.check() },
},
	Execute: func(ctx context.Context, env *tools.Env, a d2hArgs, st D2HState) (tools.Payload, D2HState, error) {
		res, err := env.Kernel.Doc2Heading(ctx, a.SrcID, a.TargetID, a.After)
		if err != nil {
			return nil, st, tools.WriteFailure(err, false)
		}
		return tools.Payload{"srcID": a.SrcID, "targetID": a.TargetID, "after": a.After, "id": a.SrcID, "targetDoc": st.TargetDoc,
			"srcTreeBox": res.SrcTreeBox, "srcTreePath": res.SrcTreePath}, st, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a d2hArgs, _ tools.Payload, before D2HState) (any, error) {
		targetDoc, moved := before.TargetDoc, orEmpty(before.SourceChildren)
		return tools.Await(ctx, func(ctx context.Context) (d2hResult, error) {
			return readD2HResult(ctx, env, a.SrcID, targetDoc, moved)
		},
			func(r d2hResult) error {
				switch {
				case !r.Heading:
					return fmt.Errorf("%s did not become a heading", a.SrcID)
				case len(r.Elsewhere) > 0:
					return fmt.Errorf("blocks %s are not in the target document %s", strings.Join(r.Elsewhere, ", "), targetDoc)
				}
				return nil
			})
	},
}

// d2hResult is doc_to_heading's readback: whether the source id is now a
// heading of the target document, which of the moved blocks (and the
// heading) are not in it, and the target's top-level blocks.
type d2hResult struct {
	Heading        bool     `json:"heading"`
	Elsewhere      []string `json:"elsewhere,omitempty"`
	TargetChildren []string `json:"targetChildren"`
}

func readD2HResult(ctx context.Context, env *tools.Env, src, targetDoc string, moved []string) (d2hResult, error) {
	var r d2hResult
	tp, err := env.Kernel.GetPathByID(ctx, targetDoc)
	if err != nil {
		return r, err
	}
	for _, id := range append([]string{src}, moved...) {
		l, err := locateDoc(ctx, env, id)
		if err != nil {
			return r, err
		}
		if l.Missing || l.Path != tp.Path || !l.NotDocument {
			r.Elsewhere = append(r.Elsewhere, id)
		}
	}
	kd, err := env.Kernel.GetBlockKramdown(ctx, src)
	if err != nil {
		return r, err
	}
	r.Heading = headingRe.MatchString(kd.Kramdown)
	kids, err := env.Kernel.GetChildBlocks(ctx, targetDoc)
	if err != nil {
		return r, err
	}
	r.TargetChildren = childIDs(kids)
	return r, nil
}
