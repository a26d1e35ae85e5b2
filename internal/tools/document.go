package tools

import (
	"context"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

func documentTool() *Tool {
	return &Tool{
		Name:  "document",
		Title: "Documents",
		Description: "Find and read SiYuan documents: resolve ids and paths, read a document as editable Markdown " +
			"in windows of whole blocks, list child documents, the document tree and the heading outline.",
		Actions: append([]*Action{
			{
				Name: "lookup", Summary: "resolve a document by id, storage path or human path", Policy: read,
				Params: []Param{
					idParam("id", "a document or block id", false),
					{Name: "notebook", Type: String, Description: "the notebook id, with path or hpath"},
					{Name: "path", Type: String, Description: "a storage path like /20260812120000-abcdefg.sy"},
					{Name: "hpath", Type: String, Description: "a human path of titles like /Projects/Plan"},
				},
				Run: lookup,
			},
			{
				Name: "get_doc", Summary: "a document as editable Markdown, in windows of whole top-level blocks", Policy: read,
				Params: []Param{
					idParam("id", "the document", true),
					{Name: "blockStart", Type: Integer, Description: "0-based index of the first top-level block", Default: 0, Min: intp(0)},
					{Name: "blockLimit", Type: Integer, Description: "at most this many blocks", Default: 50, Min: intp(1), Max: intp(200)},
					{Name: "tokenBudget", Type: Integer, Description: "stop adding blocks past this many estimated tokens (one block is always returned)", Default: 2000, Min: intp(100), Max: intp(100000)},
					{Name: "includeBlockIds", Type: Boolean, Description: "also list each returned block's id and type", Default: false},
				},
				Run: getDoc,
			},
			{
				Name: "get_child_docs", Summary: "documents directly under a document (or at a notebook's root)", Policy: read,
				Params: append([]Param{
					idParam("id", "the parent document", false),
					idParam("notebook", "the notebook, to list its root documents", false),
				}, pageParams...),
				Run: getChildDocs,
			},
			{
				Name: "list_tree", Summary: "the document tree under a notebook path, nested", Policy: read,
				Params: []Param{
					idParam("notebook", "the notebook", true),
					{Name: "path", Type: String, Description: "storage path of the subtree root; / for the whole notebook", Default: "/"},
					{Name: "maxDepth", Type: Integer, Description: "levels to descend", Default: 3, Min: intp(1), Max: intp(8)},
				},
				Run: listTree,
			},
			{
				Name: "get_outline", Summary: "the document's heading tree", Policy: read,
				Params: []Param{idParam("id", "the document", true)},
				Run:    getOutline,
			},
		}, documentWriteActions()...),
	}
}

type docRef struct {
	ID       string `json:"id"`
	Notebook string `json:"notebook"`
	Path     string `json:"path"`
	HPath    string `json:"hpath"`
	Title    string `json:"title"`
}

// describe resolves everything a document reference shows from one id.
func describe(ctx context.Context, env *Env, id string) (docRef, error) {
	info, err := env.Kernel.GetBlockInfo(ctx, id)
	if err != nil {
		return docRef{}, blockErr(ctx, env, id, err)
	}
	hp, err := env.Kernel.GetHPathByID(ctx, info.RootID)
	if err != nil {
		return docRef{}, err
	}
	return docRef{ID: info.RootID, Notebook: info.Box, Path: info.Path, HPath: hp, Title: info.RootTitle}, nil
}

// blockErr reports a missing block as not_found: the kernel answers unknown
// ids with assorted messages, so existence is checked directly.
func blockErr(ctx context.Context, env *Env, id string, err error) error {
	if ok, cerr := env.Kernel.CheckBlockExist(ctx, id); cerr == nil && !ok {
		return notFound("block", id)
	}
	return err
}

func lookup(ctx context.Context, env *Env, a *Args) (any, error) {
	id, nb, p, hp := a.String("id"), a.String("notebook"), a.String("path"), a.String("hpath")
	given := 0
	for _, s := range []string{id, p, hp} {
		if s != "" {
			given++
		}
	}
	if given != 1 {
		return nil, badArg("pass exactly one of id, path (with notebook) or hpath (with notebook)")
	}
	switch {
	case id != "":
		if err := checkID("id", id); err != nil {
			return nil, err
		}
		ref, err := describe(ctx, env, id)
		if err != nil {
			return nil, err
		}
		return map[string]any{"documents": []docRef{ref}, "blockID": id}, nil
	case p != "":
		if err := checkID("notebook", nb); err != nil {
			return nil, err
		}
		docID := strings.TrimSuffix(path.Base(p), ".sy")
		if checkID("path", docID) != nil || !strings.HasSuffix(p, ".sy") {
			return nil, badArg("argument \"path\" must be a storage path like /20260812120000-abcdefg.sy")
		}
		ref, err := describe(ctx, env, docID)
		if err != nil {
			return nil, err
		}
		if ref.Notebook != nb || ref.Path != p {
			return nil, notFound("document at path", p)
		}
		return map[string]any{"documents": []docRef{ref}}, nil
	default:
		if err := checkID("notebook", nb); err != nil {
			return nil, err
		}
		if !strings.HasPrefix(hp, "/") {
			hp = "/" + hp
		}
		ids, err := env.Kernel.GetIDsByHPath(ctx, nb, hp)
		if err != nil {
			return nil, err
		}
		refs := []docRef{}
		for _, d := range ids {
			ref, err := describe(ctx, env, d)
			if err != nil {
				return nil, err
			}
			refs = append(refs, ref)
		}
		if len(refs) == 0 {
			return nil, notFound("document with hpath", hp)
		}
		ret := map[string]any{"documents": refs}
		if len(refs) > 1 {
			ret["hint"] = "several documents share this human path; use an id"
		}
		return ret, nil
	}
}

// estimateTokens approximates a model's token count: about four characters each.
func estimateTokens(s string) int { return (utf8.RuneCountInString(s) + 3) / 4 }

type windowBlock struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	SubType string `json:"subType,omitempty"`
}

func getDoc(ctx context.Context, env *Env, a *Args) (any, error) {
	id := a.String("id")
	if err := checkID("id", id); err != nil {
		return nil, err
	}
	ref, err := describe(ctx, env, id)
	if err != nil {
		return nil, err
	}
	if ref.ID != id {
		return nil, badArg("%s is a block of document %s, not a document; read it with block.get_kramdown or pass the document id", id, ref.ID)
	}
	children, err := env.Kernel.GetChildBlocks(ctx, id)
	if err != nil {
		return nil, err
	}
	start, limit, budget := a.Int("blockStart"), a.Int("blockLimit"), a.Int("tokenBudget")
	total := len(children)
	var parts []string
	var blocks []windowBlock
	tokens, over := 0, false
	i := start
	for ; i < total && len(parts) < limit; i++ {
		md := children[i].Markdown
		t := estimateTokens(md)
		if len(parts) > 0 && tokens+t > budget {
			break
		}
		if len(parts) == 0 && t > budget {
			over = true // a single block larger than the budget is returned whole
		}
		tokens += t
		parts = append(parts, md)
		blocks = append(blocks, windowBlock{children[i].ID, children[i].Type, children[i].SubType})
	}
	ret := map[string]any{
		"document": ref, "content": strings.Join(parts, "\n\n"), "blockStart": start,
		"returnedBlocks": len(parts), "totalBlocks": total, "estimatedTokens": tokens,
		"truncated": i < total, "hasNextWindow": i < total, "outline": outlineOf(children),
	}
	if over {
		ret["budgetExceeded"] = true
	}
	if a.Bool("includeBlockIds") {
		if blocks == nil {
			blocks = []windowBlock{}
		}
		ret["blocks"] = blocks
	}
	if i < total {
		ret["nextWindow"] = map[string]any{"action": "get_doc", "id": id, "blockStart": i, "blockLimit": limit, "tokenBudget": budget}
	}
	return ret, nil
}

type heading struct {
	ID       string     `json:"id"`
	Level    int        `json:"level"`
	Text     string     `json:"text"`
	Children []*heading `json:"children"`
}

// outlineOf nests the top-level headings by level.
func outlineOf(children []siyuan.ChildBlock) []*heading {
	root := &heading{Level: 0, Children: []*heading{}}
	stack := []*heading{root}
	for _, c := range children {
		if c.Type != "h" || len(c.SubType) != 2 {
			continue
		}
		h := &heading{ID: c.ID, Level: int(c.SubType[1] - '0'), Text: c.Content, Children: []*heading{}}
		for len(stack) > 1 && stack[len(stack)-1].Level >= h.Level {
			stack = stack[:len(stack)-1]
		}
		parent := stack[len(stack)-1]
		parent.Children = append(parent.Children, h)
		stack = append(stack, h)
	}
	return root.Children
}

func getOutline(ctx context.Context, env *Env, a *Args) (any, error) {
	id := a.String("id")
	if err := checkID("id", id); err != nil {
		return nil, err
	}
	ref, err := describe(ctx, env, id)
	if err != nil {
		return nil, err
	}
	children, err := env.Kernel.GetChildBlocks(ctx, ref.ID)
	if err != nil {
		return nil, err
	}
	return map[string]any{"document": ref, "outline": outlineOf(children)}, nil
}

type childDoc struct {
	ID           string `json:"id"`
	Title        string `json:"title"`
	Path         string `json:"path"`
	Icon         string `json:"icon,omitempty"`
	SubFileCount int    `json:"subFileCount"`
	Sort         int    `json:"sort"`
}

func listChildren(ctx context.Context, env *Env, nb, p string) ([]childDoc, error) {
	unlimited := 0
	list, err := env.Kernel.ListDocsByPath(ctx, siyuan.ListDocsRequest{Notebook: nb, Path: p, MaxListCount: &unlimited})
	if err != nil {
		return nil, err
	}
	out := make([]childDoc, 0, len(list.Files))
	for _, f := range list.Files {
		out = append(out, childDoc{f.ID, f.Name, f.Path, f.Icon, f.SubFileCount, f.Sort})
	}
	return out, nil
}

func getChildDocs(ctx context.Context, env *Env, a *Args) (any, error) {
	id, nb := a.String("id"), a.String("notebook")
	var p string
	switch {
	case id != "" && nb == "":
		if err := checkID("id", id); err != nil {
			return nil, err
		}
		ref, err := describe(ctx, env, id)
		if err != nil {
			return nil, err
		}
		nb, p = ref.Notebook, ref.Path
	case nb != "" && id == "":
		if err := checkID("notebook", nb); err != nil {
			return nil, err
		}
		p = "/"
	default:
		return nil, badArg("pass either id (a document) or notebook (its root), not both")
	}
	docs, err := listChildren(ctx, env, nb, p)
	if err != nil {
		return nil, notebookErr(nb, err)
	}
	ret := paginate(docs, a)
	return map[string]any{"notebook": nb, "path": p, "data": ret.Data, "total": ret.Total, "page": ret.Page,
		"pageSize": ret.PageSize, "pageCount": ret.PageCount, "hasNextPage": ret.HasNextPage}, nil
}

type treeNode struct {
	childDoc
	Children []*treeNode `json:"children,omitempty"`
}

// maxTreeListings bounds the kernel calls of one list_tree.
const maxTreeListings = 100

func listTree(ctx context.Context, env *Env, a *Args) (any, error) {
	nb, p, depth := a.String("notebook"), a.String("path"), a.Int("maxDepth")
	if err := checkID("notebook", nb); err != nil {
		return nil, err
	}
	if p != "/" && !strings.HasSuffix(p, ".sy") {
		return nil, badArg("argument \"path\" must be / or a storage path like /20260812120000-abcdefg.sy")
	}
	calls, partial := 0, false
	var walk func(p string, level int) ([]*treeNode, error)
	walk = func(p string, level int) ([]*treeNode, error) {
		if calls >= maxTreeListings {
			partial = true
			return nil, nil
		}
		calls++
		docs, err := listChildren(ctx, env, nb, p)
		if err != nil {
			return nil, err
		}
		out := make([]*treeNode, 0, len(docs))
		for _, d := range docs {
			n := &treeNode{childDoc: d}
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
		return nil, notebookErr(nb, err)
	}
	ret := map[string]any{"notebook": nb, "path": p, "maxDepth": depth, "tree": tree, "partial": partial}
	if partial {
		ret["hint"] = "deeper documents exist; list a subtree with its path or raise maxDepth"
	}
	return ret, nil
}
