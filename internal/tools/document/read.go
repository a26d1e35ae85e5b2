package document

import (
	"context"
	"errors"
	"html"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/kernelview"
)

type lookupArgs struct {
	ID       string   `arg:"id" help:"a document or block id" id:""`
	Notebook string   `arg:"notebook" help:"the notebook, with path or hpath" id:""`
	Path     string   `arg:"path" help:"a storage path like /20260812120000-abcdefg.sy (a human path here is read as hpath, with a hint)"`
	HPath    string   `arg:"hpath" help:"a human path of titles like /Projects/Plan"`
	HPathAka string   `arg:"hPath" help:"alias of hpath"`
	Include  []string `arg:"include" help:"extra fields: \"docInfo\" (id, ids, path, hpath and notebook are always answered)"`
	DocInfo  bool
	// PathAsHPath: a human path was passed as path, read as hpath.
	PathAsHPath bool
}

// lookupIncludes are the values include takes: upstream's schema's, and
// notebook, which upstream's own skills ask for. Only docInfo adds to the
// answer, which always has the others.
var lookupIncludes = map[string]bool{"id": true, "ids": true, "path": true, "hpath": true, "notebook": true, "docInfo": true}

func (l *lookupArgs) complete() error {
	if alias := l.HPathAka; alias != "" {
		if l.HPath != "" && l.HPath != alias {
			return failure.Invalid("hpath and hPath differ; pass one")
		}
		l.HPath = alias
	}
	for _, inc := range l.Include {
		if !lookupIncludes[inc] {
			return failure.Invalid("include takes id, ids, path, hpath, notebook or docInfo, got %q", inc)
		}
		l.DocInfo = l.DocInfo || inc == "docInfo"
	}
	if l.Path != "" && l.HPath == "" && !strings.HasSuffix(l.Path, ".sy") {
		l.Path, l.HPath, l.PathAsHPath = "", l.Path, true
	}
	return nil
}

func lookup(ctx context.Context, env *tools.Env, a lookupArgs) (any, error) {
	ret, err := lookupDocs(ctx, env, a)
	if err != nil {
		return nil, err
	}
	if a.PathAsHPath {
		ret["interpretedPathAs"] = "hpath"
		hint := "path takes a storage path such as /20260812120000-abcdefg.sy; this human path was read as hpath"
		if h, ok := ret["hint"].(string); ok {
			hint = h + "; " + hint
		}
		ret["hint"] = hint
	}
	if a.DocInfo {
		refs, _ := ret["documents"].([]kernelview.DocRef)
		if len(refs) > 0 {
			info, err := env.Kernel.GetDocInfo(ctx, refs[0].ID)
			if err != nil {
				return nil, err
			}
			if err := tools.VeilDocInfo(ctx, env, &info); err != nil {
				return nil, err
			}
			ret["docInfo"] = info
		}
	}
	return ret, nil
}

func lookupDocs(ctx context.Context, env *tools.Env, a lookupArgs) (map[string]any, error) {
	id, nb, p, hp := a.ID, a.Notebook, a.Path, a.HPath
	given := 0
	for _, s := range []string{id, p, hp} {
		if s != "" {
			given++
		}
	}
	if given != 1 {
		return nil, failure.Invalid("pass exactly one of id, path (with notebook) or hpath (with notebook)")
	}
	switch {
	case id != "":
		ref, err := kernelview.Describe(ctx, env, id)
		if err != nil {
			return nil, err
		}
		return map[string]any{"documents": []kernelview.DocRef{ref}, "blockID": id}, nil
	case p != "":
		// notebook is declared optional; path needs it.
		if err := tools.CheckID("notebook", nb); err != nil {
			return nil, err
		}
		docID := siyuan.DocIDOfPath(p)
		if tools.CheckID("path", docID) != nil || !strings.HasSuffix(p, ".sy") {
			return nil, failure.Invalid("argument \"path\" must be a storage path like /20260812120000-abcdefg.sy")
		}
		ref, err := kernelview.Describe(ctx, env, docID)
		var fe *failure.Error
		if err != nil && !(errors.As(err, &fe) && fe.Code == failure.NotFound) {
			return nil, err
		}
		// A document that does not exist, or lives elsewhere (another
		// notebook: a hidden one), is not at the path: one answer for all.
		if err != nil || ref.Notebook != nb || ref.Path != p {
			return nil, failure.Missing("document at path", p)
		}
		return map[string]any{"documents": []kernelview.DocRef{ref}}, nil
	default:
		if err := tools.CheckID("notebook", nb); err != nil {
			return nil, err
		}
		if !strings.HasPrefix(hp, "/") {
			hp = "/" + hp
		}
		ids, err := env.Kernel.GetIDsByHPath(ctx, nb, hp)
		if err != nil {
			return nil, err
		}
		refs := []kernelview.DocRef{}
		for _, d := range ids {
			ref, err := kernelview.Describe(ctx, env, d)
			if err != nil {
				return nil, err
			}
			refs = append(refs, ref)
		}
		if len(refs) == 0 {
			return nil, failure.Missing("document with hpath", hp)
		}
		ret := map[string]any{"documents": refs}
		if len(refs) > 1 {
			ret["hint"] = "several documents share this human path; use an id"
		}
		return ret, nil
	}
}

type outlineArgs struct {
	ID      string `arg:"id" help:"the document" id:"" required:""`
	Preview bool   `arg:"preview" help:"the preview's outline: the document title first, as a level-1 heading" default:"false"`
}

func getOutline(ctx context.Context, env *tools.Env, a outlineArgs) (any, error) {
	id := a.ID
	ref, err := kernelview.Describe(ctx, env, id)
	if err != nil {
		return nil, err
	}
	// SiYuan's own outline: headings anywhere in the document but in
	// blockquotes and callouts.
	paths, err := env.Kernel.GetDocOutline(ctx, ref.ID, a.Preview)
	if err != nil {
		return nil, err
	}
	outline := make([]*kernelview.Heading, 0, len(paths))
	count := 0
	for _, p := range paths {
		h := &kernelview.Heading{ID: p.ID, Level: headingLevel(p.SubType), Text: outlineText(p.Name), Children: outlineChildren(p.Blocks, &count)}
		count++
		outline = append(outline, h)
	}
	return map[string]any{"document": ref, "notebook": ref.Notebook, "preview": a.Preview, "headingCount": count, "outline": outline}, nil
}

func outlineChildren(bs []*siyuan.Block, count *int) []*kernelview.Heading {
	out := make([]*kernelview.Heading, 0, len(bs))
	for _, b := range bs {
		*count++
		out = append(out, &kernelview.Heading{ID: b.ID, Level: headingLevel(b.SubType), Text: outlineText(b.Content), Children: outlineChildren(b.Children, count)})
	}
	return out
}

// headingLevel reads a heading's subtype (h1..h6).
func headingLevel(sub string) int {
	if len(sub) == 2 && sub[0] == 'h' && sub[1] >= '1' && sub[1] <= '6' {
		return int(sub[1] - '0')
	}
	return 0
}

// outlineText is a heading's outline HTML as plain text.
func outlineText(s string) string {
	return strings.TrimSpace(strings.ReplaceAll(html.UnescapeString(stripTags(s)), "\u00a0", " "))
}

// stripTags drops the markup SiYuan renders inline marks with.
func stripTags(s string) string {
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
		case r == '>' && in:
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return b.String()
}

type childDocsArgs struct {
	ID       string `arg:"id" help:"the parent document" id:""`
	Notebook string `arg:"notebook" help:"the notebook, to list its root documents" id:""`
	tools.Paging
}

func getChildDocs(ctx context.Context, env *tools.Env, a childDocsArgs) (any, error) {
	id, nb := a.ID, a.Notebook
	var p string
	switch {
	case id != "" && nb == "":
		ref, err := kernelview.Describe(ctx, env, id)
		if err != nil {
			return nil, err
		}
		nb, p = ref.Notebook, ref.Path
	case nb != "" && id == "":
		p = "/"
	default:
		return nil, failure.Invalid("pass either id (a document) or notebook (its root), not both")
	}
	docs, err := kernelview.ListChildren(ctx, env, nb, p)
	if err != nil {
		return nil, kernelview.NotebookErr(nb, err)
	}
	return tools.Paginate(docs, a.Page, a.PageSize).Fields(map[string]any{"notebook": nb, "path": p}), nil
}

type treeNode struct {
	kernelview.ChildDoc
	Children []*treeNode `json:"children,omitempty"`
}

// maxTreeListings bounds the kernel calls of one list_tree.
const maxTreeListings = 100

type treeArgs struct {
	Notebook string `arg:"notebook" help:"the notebook" id:"" required:""`
	Path     string `arg:"path" help:"storage path of the subtree root; / for the whole notebook" default:"/"`
	MaxDepth int    `arg:"maxDepth" help:"levels to descend (a tree holds at most 100 listings: deeper ones answer partial)" default:"3" min:"1"`
}

func listTree(ctx context.Context, env *tools.Env, a treeArgs) (any, error) {
	nb, p, depth := a.Notebook, a.Path, a.MaxDepth
	if p != "/" && !strings.HasSuffix(p, ".sy") {
		return nil, failure.Invalid("argument \"path\" must be / or a storage path like /20260812120000-abcdefg.sy")
	}
	calls, partial := 0, false
	var walk func(p string, level int) ([]*treeNode, error)
	walk = func(p string, level int) ([]*treeNode, error) {
		if calls >= maxTreeListings {
			partial = true
			return nil, nil
		}
		calls++
		docs, err := kernelview.ListChildren(ctx, env, nb, p)
		if err != nil {
			return nil, err
		}
		out := make([]*treeNode, 0, len(docs))
		for _, d := range docs {
			n := &treeNode{ChildDoc: d}
			if d.SubFileCount > 0 {
				if level < depth {
					if n.Children, err = walk(d.Path, level+1); err != nil {
						return nil, err
					}
				} else {
					partial = true
				}
			}
			out = append(out, n)
		}
		return out, nil
	}
	tree, err := walk(p, 1)
	if err != nil {
		return nil, kernelview.NotebookErr(nb, err)
	}
	ret := map[string]any{"notebook": nb, "path": p, "maxDepth": depth, "tree": tree, "partial": partial}
	if partial {
		ret["hint"] = "deeper documents exist; list a subtree with its path or raise maxDepth"
	}
	return ret, nil
}
