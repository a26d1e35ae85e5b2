package embedded

// /api/outline/getDocOutline: model.Outline of SiYuan 3.7.3 with no stored
// outline state (every heading unfolded); preview adds the document's
// title first as a level-1 heading, as the export setting addTitle (on by
// default) does.

import (
	"bytes"
	"context"
	"strings"

	"github.com/88250/lute/ast"
	"github.com/88250/lute/html"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/mdexport"
	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// outlineText is renderOutline: the heading's text HTML-escaped (spaces as
// &nbsp;), inline marks as their DOM.
func outlineText(h *ast.Node) string {
	l := mdexport.NewLute()
	var buf bytes.Buffer
	ast.Walk(h, func(n *ast.Node, entering bool) ast.WalkStatus {
		if !entering {
			if n.Type == ast.NodeHeading && n.IALAttr("style") != "" {
				buf.WriteString("</span>")
			}
			return ast.WalkContinue
		}
		switch n.Type {
		case ast.NodeHeading:
			if style := n.IALAttr("style"); style != "" {
				buf.WriteString(`<span style="` + style + `">`)
			}
		case ast.NodeText, ast.NodeLinkText, ast.NodeCodeBlockCode, ast.NodeMathBlockContent:
			buf.Write(bytes.ReplaceAll(html.EscapeHTML(n.Tokens), []byte(" "), []byte("&nbsp;")))
		case ast.NodeBackslashContent:
			buf.Write(html.EscapeHTML(n.Tokens))
		case ast.NodeTextMark, ast.NodeEmoji, ast.NodeImage:
			buf.WriteString(l.RenderNodeBlockDOM(n))
			return ast.WalkSkipChildren
		}
		return ast.WalkContinue
	})
	return strings.ReplaceAll(strings.TrimSpace(buf.String()), "\n", "")
}

func (k *Kernel) getDocOutline(ctx context.Context, a args) (any, error) {
	id, ok := a["id"].(string)
	if !ok {
		return nil, &apiError{code: 0}
	}
	preview, err := a.optBool("preview")
	if err != nil {
		return nil, err
	}
	ret := []*wire.OutlinePath{}
	tree, _, verr := k.viewOf(id)
	if verr != nil {
		return ret, nil
	}
	var headings []*wire.Block
	levels := map[*wire.Block]int{}
	if preview {
		title := &ast.Node{Type: ast.NodeHeading, HeadingLevel: 1}
		title.AppendChild(&ast.Node{Type: ast.NodeText, Tokens: []byte(tree.Root.IALAttr("title"))})
		b := &wire.Block{RootID: tree.Root.ID, Box: tree.Box, Path: tree.Path, ID: tree.Root.ID, Content: outlineText(title),
			Type: ast.NodeHeading.String(), SubType: "h1"}
		levels[b] = 1
		headings = append(headings, b)
	}
	ast.Walk(tree.Root, func(n *ast.Node, entering bool) ast.WalkStatus {
		if entering && n.Type == ast.NodeHeading && !n.ParentIs(ast.NodeBlockquote) && !n.ParentIs(ast.NodeCallout) {
			b := &wire.Block{RootID: tree.Root.ID, Box: tree.Box, Path: tree.Path, ID: n.ID, Content: outlineText(n),
				Type: n.Type.String(), SubType: subTypeAbbr(n)}
			levels[b] = n.HeadingLevel
			headings = append(headings, b)
			return ast.WalkSkipChildren
		}
		return ast.WalkContinue
	})
	// Nest each heading under the nearest one of a lower level before it.
	var tops, stack []*wire.Block
	for _, h := range headings {
		for len(stack) > 0 && levels[stack[len(stack)-1]] >= levels[h] {
			stack = stack[:len(stack)-1]
		}
		if len(stack) == 0 {
			tops = append(tops, h)
		} else {
			p := stack[len(stack)-1]
			p.Children = append(p.Children, h)
		}
		stack = append(stack, h)
	}
	for _, b := range tops {
		setOutlineDepth(b, 0)
		ret = append(ret, &wire.OutlinePath{ID: b.ID, Box: b.Box, Name: b.Content, NodeType: b.Type, Type: "outline",
			SubType: b.SubType, Blocks: b.Children, Count: b.Count})
	}
	return ret, nil
}

func setOutlineDepth(b *wire.Block, depth int) {
	b.Depth, b.Count = depth, len(b.Children)
	for _, c := range b.Children {
		setOutlineDepth(c, depth+1)
	}
}
