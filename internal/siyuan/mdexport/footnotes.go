package mdexport

import (
	"encoding/json"
	"html"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/88250/lute/ast"
	"github.com/88250/lute/parse"
)

// collectFootnotes is collectFootnotesDefs: every block the document refers
// to (refs and siyuan://blocks/ links, in document order, then what those
// blocks refer to, recursively) gets a footnote number, in the order met.
// A block that cannot be loaded keeps its number and adds nothing more.
func (x *exporter) collectFootnotes(cur *parse.Tree, id string, order *[]string, feet map[string]*footnote, depth *int) {
	*depth++
	if *depth > 4096 {
		return
	}
	_, node := x.load(id)
	if node == nil {
		return
	}
	x.collectFootnotesIn(cur, node, order, feet, depth)
	if node.Type == ast.NodeHeading {
		for _, c := range HeadingChildren(node) {
			x.collectFootnotesIn(cur, c, order, feet, depth)
		}
	}
}

func (x *exporter) collectFootnotesIn(cur *parse.Tree, node *ast.Node, order *[]string, feet map[string]*footnote, depth *int) {
	ast.Walk(node, func(n *ast.Node, entering bool) ast.WalkStatus {
		if !entering {
			return ast.WalkContinue
		}
		switch {
		case isBlockRef(n):
			defID, text := refOf(n)
			x.addFootnote(cur, defID, text, order, feet, depth)
			return ast.WalkSkipChildren
		case isBlockLink(n):
			defID := strings.TrimPrefix(n.TextMarkAHref, "siyuan://blocks/")
			text := n.TextMarkTextContent
			if text == "" {
				text = x.refText(defID)
			}
			x.addFootnote(cur, defID, text, order, feet, depth)
			return ast.WalkSkipChildren
		}
		return ast.WalkContinue
	})
}

// addFootnote is addRefFootnoteAndRecurse.
func (x *exporter) addFootnote(cur *parse.Tree, defID, anchor string, order *[]string, feet map[string]*footnote, depth *int) {
	if feet[defID] != nil || NodeByAnyID(cur.Root, defID) {
		return // numbered already, or a block of this document (an anchor hash)
	}
	anchor = cut(anchor, x.s.AnchorMaxLen)
	*order = append(*order, defID)
	feet[defID] = &footnote{num: strconv.Itoa(len(*order)), anchor: anchor}
	x.collectFootnotes(cur, defID, order, feet, depth)
}

// NodeByAnyID reports whether any node of the tree (a span too) has the id
// (isNodeInTree).
func NodeByAnyID(root *ast.Node, id string) (found bool) {
	ast.Walk(root, func(n *ast.Node, entering bool) ast.WalkStatus {
		if entering && n.ID == id {
			found = true
			return ast.WalkStop
		}
		return ast.WalkContinue
	})
	return found
}

// footnoteDefs is resolveFootnotesDefs: a definition per numbered block
// that can be loaded (a heading with the blocks under it, a document as
// its title and blocks), whose own refs become their anchor text and
// number and whose embeds are resolved. A block that cannot be loaded has
// no definition: its number stays in the text.
func (x *exporter) footnoteDefs(order []string, feet map[string]*footnote, cur *parse.Tree, inTree map[string]bool) *ast.Node {
	if len(order) == 0 {
		return nil
	}
	defs := &ast.Node{Type: ast.NodeFootnotesDefBlock}
	var rendered []string
	for _, defID := range order {
		f := feet[defID]
		if f == nil {
			continue
		}
		t, def := x.load(defID)
		if def == nil {
			continue
		}
		var nodes []*ast.Node
		switch def.Type {
		case ast.NodeHeading:
			nodes = append(nodes, def)
			if cur.ID != t.ID {
				nodes = append(nodes, HeadingChildren(def)...)
			}
		case ast.NodeDocument:
			title := &ast.Node{ID: def.ID, Type: ast.NodeHeading, HeadingLevel: 1}
			title.AppendChild(&ast.Node{Type: ast.NodeText, Tokens: []byte(def.IALAttr("title"))})
			nodes = append(nodes, title)
			for c := def.FirstChild; c != nil; c = c.Next {
				nodes = append(nodes, c)
			}
		default:
			nodes = append(nodes, def)
		}

		var newNodes []*ast.Node
		for _, node := range nodes {
			var unlinks []*ast.Node
			ast.Walk(node, func(n *ast.Node, entering bool) ast.WalkStatus {
				if !entering {
					return ast.WalkContinue
				}
				if isBlockRef(n) {
					id, _ := refOf(n)
					if g := feet[id]; g != nil {
						n.InsertBefore(&ast.Node{Type: ast.NodeText, Tokens: []byte(x.s.RefTextLeft + g.anchor + x.s.RefTextRight)})
						n.InsertBefore(footnoteRef(g.num))
						unlinks = append(unlinks, n)
					} else if inTree[id] {
						n.TextMarkType = "a"
						n.TextMarkTextContent = x.s.RefTextLeft + n.TextMarkTextContent + x.s.RefTextRight
						n.TextMarkAHref = "#" + id
					}
					return ast.WalkSkipChildren
				}
				if n.Type == ast.NodeBlockQueryEmbed {
					for _, id := range x.embedIDs(n) {
						for _, sub := range x.renderBlockMarkdown(id, &rendered) {
							newNodes = append(newNodes, listed(sub))
						}
					}
					unlinks = append(unlinks, n)
					return ast.WalkSkipChildren
				}
				return ast.WalkContinue
			})
			for _, n := range unlinks {
				n.Unlink()
			}
			if node.Type != ast.NodeBlockQueryEmbed {
				newNodes = append(newNodes, listed(node))
			}
		}

		fd := &ast.Node{Type: ast.NodeFootnotesDef, Tokens: []byte("^" + f.num), FootnotesRefId: f.num, FootnotesRefLabel: []byte("^" + f.num)}
		for _, node := range newNodes {
			ast.Walk(node, func(n *ast.Node, entering bool) ast.WalkStatus {
				if !entering || n.Type != ast.NodeParagraph {
					return ast.WalkContinue
				}
				// A paragraph of this document shows at most 64 runes
				// of its text.
				if treeIDOfPath(n.Path) == cur.ID {
					if text := x.refText(n.ID); utf8.RuneCountInString(text) > 64 {
						for c := n.FirstChild; c != nil; {
							next := c.Next
							c.Unlink()
							c = next
						}
						n.AppendChild(&ast.Node{Type: ast.NodeText, Tokens: []byte(string([]rune(text)[:64]) + "...")})
						return ast.WalkSkipChildren
					}
				}
				return ast.WalkContinue
			})
			fd.AppendChild(node)
		}
		defs.AppendChild(fd)
	}
	return defs
}

// listed puts a list item into a list of its kind, as a definition needs.
func listed(n *ast.Node) *ast.Node {
	if n.Type != ast.NodeListItem {
		return n
	}
	list := &ast.Node{Type: ast.NodeList, ListData: &ast.ListData{Typ: n.ListData.Typ}}
	list.AppendChild(n)
	return list
}

// treeIDOfPath is util.GetTreeID: the document id a .sy path ends with.
func treeIDOfPath(p string) string {
	if p == "" {
		return ""
	}
	p = strings.TrimSuffix(p, ".sy")
	if i := strings.LastIndex(p, "/"); i >= 0 {
		p = p[i+1:]
	}
	return p
}

// annotationPage is the 1-based page of an annotation in a .sya file.
func annotationPage(data []byte, annotationID string) (int, bool) {
	var sya map[string]struct {
		Pages []struct {
			Index float64 `json:"index"`
		} `json:"pages"`
	}
	if json.Unmarshal(data, &sya) != nil {
		return 0, false
	}
	a, ok := sya[annotationID]
	if !ok || len(a.Pages) == 0 {
		return 0, false
	}
	return int(a.Pages[0].Index) + 1, true
}

// unescaped is an embed statement as the kernel runs it.
func unescaped(stmt string) string {
	return strings.ReplaceAll(html.UnescapeString(stmt), "_esc_newline_", "\n")
}

// IndexedRefText is sql.GetRefText for a block the SQL index holds, from
// its row's name, type, content and markdown.
func IndexedRefText(name, typ, content, markdown string) string {
	if name != "" {
		return name
	}
	switch typ {
	case "d":
		return content
	case "query_embed":
		return "Query Embed Block " + markdown
	case "av":
		return "Database " + markdown
	case "iframe":
		return "IFrame " + markdown
	case "tb":
		return "Thematic Break"
	case "video":
		return "Video " + markdown
	case "audio":
		return "Audio " + markdown
	case "l", "i", "b", "s", "callout":
		sub := parse.Parse("", []byte(markdown), NewLute().ParseOptions)
		return containerText(sub.Root)
	}
	return content
}

// containerText is sql.GetContainerText: the text of a container's first
// leaf block.
func containerText(container *ast.Node) string {
	leaf := FirstLeafBlock(container)
	if leaf == nil {
		return ""
	}
	var b strings.Builder
	ast.Walk(leaf, func(n *ast.Node, entering bool) ast.WalkStatus {
		if !entering {
			return ast.WalkContinue
		}
		switch n.Type {
		case ast.NodeText, ast.NodeLinkText, ast.NodeFileAnnotationRefText, ast.NodeCodeBlockCode, ast.NodeMathBlockContent:
			b.Write(n.Tokens)
		case ast.NodeTextMark:
			b.WriteString(n.Content())
		}
		return ast.WalkContinue
	})
	return b.String()
}
