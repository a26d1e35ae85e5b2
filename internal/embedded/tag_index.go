package embedded

import (
	"strings"

	"github.com/88250/lute/ast"
	"github.com/88250/lute/html"
	"github.com/88250/lute/parse"
)

// Tags live in the spans table, as SiYuan 3.7.3 indexes them: a document's
// tags attribute gives one span of type "tag" per label on the document
// block; an inline #label# gives one span of type "textmark <its marks>" on
// the leaf block (paragraph, heading, table…) that holds it, so a tag in a
// list item belongs to the item's paragraph. content is the label as
// written (HTML-unescaped), markdown its #…# form. getTag, searchTag,
// renameTag and removeTag all start from these rows.

// sqlSpanRow is one row of the spans table.
type sqlSpanRow struct {
	ID, BlockID, RootID, Box, Path, Content, Markdown, Type, IAL string
}

// sqlTagSpansOf derives the tag spans of a document.
func sqlTagSpansOf(tree *parse.Tree) []sqlSpanRow {
	var out []sqlSpanRow
	span := func(block, label, typ string) {
		out = append(out, sqlSpanRow{ID: ast.NewNodeID(), BlockID: block, RootID: tree.Root.ID, Box: tree.Box, Path: tree.Path,
			Content: label, Markdown: "#" + html.EscapeString(label) + "#", Type: typ})
	}
	for _, label := range docTagLabels(tree.Root) {
		span(tree.Root.ID, label, "tag")
	}
	ast.Walk(tree.Root, func(n *ast.Node, entering bool) ast.WalkStatus {
		if !entering || !n.IsBlock() || n.ID == "" || n.IsContainerBlock() {
			return ast.WalkContinue
		}
		ast.Walk(n, func(c *ast.Node, entering bool) ast.WalkStatus {
			if entering && c.Type == ast.NodeTextMark && c.IsTextMarkType("tag") {
				span(n.ID, tagLabelOf(c), "textmark "+c.TextMarkType)
			}
			return ast.WalkContinue
		})
		return ast.WalkSkipChildren
	})
	return out
}

// docTagLabels are the labels of a document's tags attribute, in order.
func docTagLabels(doc *ast.Node) []string {
	var out []string
	for _, t := range strings.Split(html.UnescapeString(doc.IALAttr("tags")), ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// tagLabelOf is the label of an inline tag, unescaped.
func tagLabelOf(n *ast.Node) string { return html.UnescapeString(n.TextMarkTextContent) }
