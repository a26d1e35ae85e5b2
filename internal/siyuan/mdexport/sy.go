package mdexport

import (
	"encoding/json"
	"fmt"

	"github.com/88250/lute"
	"github.com/88250/lute/ast"
	"github.com/88250/lute/parse"
)

// NewLute returns an engine configured exactly as SiYuan's kernel configures
// its own (kernel/util/lute.go NewLute, with the default Markdown
// settings), so parse and render results match. It is the one list of
// those options: the embedded kernel, markup and the export all call it
// (and change an option on the engine they get only where SiYuan does for
// that one call, as the export's footnotes).
func NewLute() *lute.Lute {
	l := lute.New()
	l.SetTextMark(true)
	l.SetProtyleWYSIWYG(true)
	l.SetBlockRef(true)
	l.SetFileAnnotationRef(true)
	l.SetKramdownIAL(true)
	l.SetTag(true)
	l.SetSuperBlock(true)
	l.SetImgPathAllowSpace(true)
	l.SetGitConflict(true)
	l.SetInlineAsterisk(true)
	l.SetInlineUnderscore(true)
	l.SetSup(true)
	l.SetSub(true)
	l.SetInlineMath(true)
	l.SetGFMStrikethrough(true)
	l.SetMark(true)
	l.SetInlineMathAllowDigitAfterOpenMarker(true)
	l.SetGFMStrikethrough1(false)
	l.SetFootnotes(false)
	l.SetToC(false)
	l.SetIndentCodeBlock(false)
	l.SetParagraphBeginningSpace(true)
	l.SetAutoSpace(false)
	l.SetHeadingID(false)
	l.SetSetext(false)
	l.SetYamlFrontMatter(false)
	l.SetLinkRef(false)
	l.SetCodeSyntaxHighlight(false)
	l.SetSanitize(true)
	l.SetUnorderedListMarker("-")
	l.SetCallout(true)
	l.SetDataTask(true)
	l.SetArbitraryTaskListItemMarker(true)
	l.SetExportNormalizeTaskListMarker(false)
	l.SetEnsureListItemParagraph(true)
	return l
}

// ParseSY turns a .sy file (the JSON tree SiYuan stores a document in)
// into a Lute tree whose root is the document; Box, Path and HPath are the
// caller's to set. An empty document gets the empty paragraph SiYuan hangs
// on it when loading it.
func ParseSY(data []byte) (*parse.Tree, error) {
	root := &ast.Node{}
	if err := json.Unmarshal(data, root); err != nil {
		return nil, fmt.Errorf("parse .sy: %w", err)
	}
	l := NewLute()
	tree := &parse.Tree{ID: root.ID, Root: &ast.Node{Type: ast.NodeDocument, ID: root.ID, Spec: root.Spec},
		Context: &parse.Context{ParseOption: l.ParseOptions}}
	tree.Root.KramdownIAL = parse.Map2IAL(root.Properties)
	tree.Root.SetIALAttr("type", "doc")
	for _, c := range root.Children {
		appendJSONNode(tree.Root, c)
	}
	if tree.Root.FirstChild == nil {
		p := &ast.Node{Type: ast.NodeParagraph, ID: ast.NewNodeID()}
		p.SetIALAttr("id", p.ID)
		p.SetIALAttr("updated", p.ID[:14])
		tree.Root.AppendChild(p)
	}
	return tree, nil
}

func appendJSONNode(parent, n *ast.Node) {
	n.Tokens, n.Type = []byte(n.Data), ast.Str2NodeType(n.TypeStr)
	n.Data, n.TypeStr = "", ""
	n.KramdownIAL = parse.Map2IAL(n.Properties)
	n.Properties = nil
	children := n.Children
	n.Children = nil
	parent.AppendChild(n)
	for _, c := range children {
		appendJSONNode(n, c)
	}
}

// NodeByID finds a block in a tree (SiYuan's treenode.GetNodeInTree).
func NodeByID(root *ast.Node, id string) (ret *ast.Node) {
	ast.Walk(root, func(n *ast.Node, entering bool) ast.WalkStatus {
		if !entering {
			return ast.WalkContinue
		}
		if n.ID == id && n.IsBlock() {
			ret = n
			return ast.WalkStop
		}
		return ast.WalkContinue
	})
	return ret
}

// HeadingChildren are the blocks under a heading: its following siblings up
// to the next heading of the same or a higher level (treenode.HeadingChildren).
func HeadingChildren(h *ast.Node) (ret []*ast.Node) {
	start := h.Next
	if start != nil && start.Type == ast.NodeKramdownBlockIAL {
		start = start.Next // the heading's own IAL
	}
	for n := start; n != nil; n = n.Next {
		if n.Type == ast.NodeHeading && h.HeadingLevel >= n.HeadingLevel {
			break
		}
		ret = append(ret, n)
	}
	return ret
}

// FirstLeafBlock is the first block under node that holds no blocks (SiYuan's
// FirstLeafBlock): what names a container in an export, a breadcrumb and the index.
func FirstLeafBlock(node *ast.Node) (ret *ast.Node) {
	ast.Walk(node, func(n *ast.Node, entering bool) ast.WalkStatus {
		if !entering || n.IsMarker() {
			return ast.WalkContinue
		}
		if !n.IsContainerBlock() {
			ret = n
			return ast.WalkStop
		}
		return ast.WalkContinue
	})
	return ret
}
