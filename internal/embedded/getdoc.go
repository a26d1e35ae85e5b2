package embedded

// /api/filetree/getDoc in mode 0 (the block asked for; for a document its
// top-level blocks up to size), as model.GetDoc renders it: the blocks'
// DOM numbered from 0, with each block's reference count. Searching,
// highlighting, backlinks and the scrolling modes are not served.

import (
	"context"
	"strconv"

	"github.com/88250/lute/ast"
	"github.com/88250/lute/parse"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/mdexport"
)

// getDocMaxBlocks and dynamicLoadBlocks are getDoc's default size and
// Conf.Editor.DynamicLoadBlocks's default.
const (
	getDocMaxBlocks   = 102400
	dynamicLoadBlocks = 192
)

// countBlockNodes is treenode.CountBlockNodes: the blocks in n, bare
// containers not counted and a folded block as one.
func countBlockNodes(node *ast.Node) (ret int) {
	ast.Walk(node, func(n *ast.Node, entering bool) ast.WalkStatus {
		if !entering || !n.IsBlock() || n.Type == ast.NodeList || n.Type == ast.NodeBlockquote || n.Type == ast.NodeSuperBlock || n.Type == ast.NodeCallout {
			return ast.WalkContinue
		}
		ret++
		if n.IALAttr("fold") == "1" {
			return ast.WalkSkipChildren
		}
		return ast.WalkContinue
	})
	return ret
}

func (k *Kernel) getDoc(ctx context.Context, a args) (any, error) {
	id, ok := a["id"].(string)
	if !ok {
		return nil, &apiError{code: 0}
	}
	mode, size := 0, getDocMaxBlocks
	for key, dst := range map[string]*int{"mode": &mode, "size": &size} {
		if v, present := a[key]; present && v != nil {
			n, err := a.optInt(key, 0)
			if err != nil {
				return nil, err
			}
			*dst = n
		}
	}
	if mode != 0 {
		return nil, errf("getDoc mode %d is not served by this kernel (mode 0 only)", mode)
	}
	view, _, err := k.viewOf(id)
	if err != nil {
		return nil, errCode(1, "tree not found")
	}
	tree := cloneTree(view)
	node := mdexport.NodeByID(tree.Root, id)
	isDoc, isHeading := node.Type == ast.NodeDocument, node.Type == ast.NodeHeading
	typ := node.Type.String()
	if isDoc {
		node = tree.Root.FirstChild
	}
	parentID, parent2ID := tree.Root.ID, tree.Root.ID
	if !isDoc {
		parentID = node.Parent.ID
		parent2ID = parentID
		tmp := node
		if node.Type == ast.NodeListItem {
			tmp = node.Parent
		}
		if h := headingParent(tmp); tmp != nil && h != nil {
			parent2ID = h.ID
		}
	}
	scroll, childCount := false, 0
	ast.Walk(tree.Root, func(n *ast.Node, entering bool) ast.WalkStatus {
		if !entering {
			return ast.WalkContinue
		}
		if childCount < 1 {
			childCount = 1
		} else {
			childCount += countBlockNodes(n)
		}
		if childCount > dynamicLoadBlocks {
			scroll = true
			return ast.WalkStop
		}
		return ast.WalkContinue
	})
	nodes := []*ast.Node{node}
	count := 0
	switch {
	case isDoc:
		for n := node.Next; n != nil; n = n.Next {
			if n.IALAttr("heading-fold") == "1" || n.Type == ast.NodeKramdownBlockIAL {
				continue // under a folded heading
			}
			nodes = append(nodes, n)
			if count < 1 {
				count++
			} else {
				count += countBlockNodes(n)
			}
			if size < count {
				break
			}
		}
	case isHeading && node.IALAttr("fold") != "1":
		for n := node.Next; n != nil; n = n.Next {
			if n.Type == ast.NodeHeading && n.HeadingLevel <= node.HeadingLevel {
				break
			}
			nodes = append(nodes, n)
			count++
			if size < count {
				break
			}
		}
	}
	blockCount := tree.DocBlockCount() // before the nodes move to the rendered tree
	refCounts, err := k.rootRefCounts(ctx, tree.Root.ID)
	if err != nil {
		return nil, err
	}
	sub := &parse.Tree{ID: tree.Root.ID, Root: &ast.Node{Type: ast.NodeDocument}, Marks: tree.Marks}
	for _, n := range nodes {
		ast.Walk(n, func(b *ast.Node, entering bool) ast.WalkStatus {
			if entering && b.IsBlock() && b.ID != "" {
				if c := refCounts[b.ID]; c > 0 {
					b.SetIALAttr("refcount", strconv.Itoa(c))
				}
			}
			return ast.WalkContinue
		})
		sub.Root.AppendChild(n)
	}
	l := mdexport.NewLute()
	l.RenderOptions.NodeIndexStart = 0
	dom := l.Tree2BlockDOM(sub, l.RenderOptions, l.ParseOptions)
	return map[string]any{
		"id": id, "mode": mode, "parentID": parentID, "parent2ID": parent2ID, "rootID": tree.Root.ID, "type": typ,
		"content": dom, "blockCount": blockCount, "eof": false, "scroll": scroll, "box": tree.Box, "path": tree.Path,
		"isSyncing": false, "isBacklinkExpand": false, "keywords": nil, "reqId": a["reqId"],
	}, nil
}

// rootRefCounts is sql.QueryRootChildrenRefCount: references per block of
// a document, from the (lagging) refs table.
func (k *Kernel) rootRefCounts(ctx context.Context, rootID string) (map[string]int, error) {
	rows, err := k.sql.queryArgs(ctx, "SELECT def_block_id, COUNT(*) AS ref_cnt FROM refs WHERE def_block_root_id = ? GROUP BY def_block_id", rootID)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, r := range rows {
		n, _ := r["ref_cnt"].(int64)
		out[str(r["def_block_id"])] = int(n)
	}
	return out, nil
}
