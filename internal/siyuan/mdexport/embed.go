package mdexport

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/88250/lute"
	"github.com/88250/lute/ast"
	"github.com/88250/lute/parse"
)

// embedIDs runs an embed block's statement: the blocks it shows.
func (x *exporter) embedIDs(n *ast.Node) []string {
	script := n.ChildByType(ast.NodeBlockQueryEmbedScript)
	if script == nil {
		return nil
	}
	ids, err := x.src.Embed(x.ctx, unescaped(script.TokensStr()), x.s.SearchLimit)
	if err != nil {
		x.fail(fmt.Errorf("embed %s: %w", n.ID, err))
	}
	return ids
}

// resolveEmbeds is resolveEmbedR: each embed under n is replaced by the
// blocks its statement finds, as Markdown (quoted with embed mode 1), and
// the embeds those hold are resolved in turn (7 levels at most, each
// embed once).
func (x *exporter) resolveEmbeds(n *ast.Node, l *lute.Lute, resolved *[]string, depth *int) {
	var children []*ast.Node
	switch n.Type {
	case ast.NodeHeading:
		children = append(append(children, n), HeadingChildren(n)...)
	case ast.NodeDocument:
		for c := n.FirstChild; c != nil; c = c.Next {
			children = append(children, c)
		}
	default:
		children = append(children, n)
	}
	*depth++
	if *depth > 7 {
		return
	}
	for _, child := range children {
		var unlinks []*ast.Node
		parentLevel := 1
		for prev := child; prev != nil; prev = prev.Previous {
			if prev.Type == ast.NodeHeading {
				parentLevel = prev.HeadingLevel
				break
			}
		}
		ast.Walk(child, func(e *ast.Node, entering bool) ast.WalkStatus {
			if !entering || !e.IsBlock() || e.Type != ast.NodeBlockQueryEmbed || slices.Contains(*resolved, e.ID) {
				return ast.WalkContinue
			}
			*resolved = append(*resolved, e.ID)
			for _, id := range x.embedIDs(e) {
				sub, found := x.load(id)
				if sub == nil || found.Type == ast.NodeBlockQueryEmbed {
					continue
				}
				md := x.embedMarkdown(e, sub, found, parentLevel, l)
				var buf bytes.Buffer
				lines := strings.Split(md, "\n")
				for i, line := range lines {
					if x.o.EmbedMode != 0 {
						buf.WriteString("> ")
					}
					buf.WriteString(line)
					if i < len(lines)-1 {
						buf.WriteString("\n")
					}
				}
				buf.WriteString("\n\n")
				parsed := parse.Parse("", buf.Bytes(), l.ParseOptions)
				var inserts []*ast.Node
				for c := parsed.Root.FirstChild; c != nil; c = c.Next {
					if c.Type != ast.NodeKramdownBlockIAL {
						inserts = append(inserts, c)
					}
				}
				if len(e.KramdownIAL) > 2 && len(inserts) > 0 {
					for _, k := range []string{"bookmark", "name", "alias", "memo"} {
						if v := e.IALAttr(k); v != "" {
							inserts[0].SetIALAttr(k, v)
						}
					}
				}
				for _, ins := range inserts {
					e.InsertBefore(ins)
					if slices.Contains(*resolved, id) {
						return ast.WalkContinue
					}
					x.resolveEmbeds(ins, l, resolved, depth)
					*depth--
				}
			}
			unlinks = append(unlinks, e)
			return ast.WalkSkipChildren
		})
		for _, u := range unlinks {
			u.Unlink()
		}
	}
}

// embedMarkdown is the Markdown an embed shows for one block it finds: a
// document whole, a heading as the heading embed mode says, any other
// block alone; headings shift under the embed's heading with mode 0.
func (x *exporter) embedMarkdown(e *ast.Node, sub *parse.Tree, found *ast.Node, parentLevel int, l *lute.Lute) string {
	shift := func(hs []*ast.Node, top int) {
		for _, h := range hs {
			h.HeadingLevel = min(max(h.HeadingLevel+parentLevel-top+1, 2), 6)
		}
	}
	switch found.Type {
	case ast.NodeDocument:
		if x.o.EmbedMode == 0 {
			top := 0
			if h := sub.Root.ChildByType(ast.NodeHeading); h != nil {
				top = h.HeadingLevel
			}
			var hs []*ast.Node
			ast.Walk(sub.Root, func(n *ast.Node, entering bool) ast.WalkStatus {
				if entering && n.Type == ast.NodeHeading {
					hs = append(hs, n)
				}
				return ast.WalkContinue
			})
			shift(hs, top)
		}
		md, _ := lute.FormatNodeSync(sub.Root, l.ParseOptions, l.RenderOptions)
		return md
	case ast.NodeHeading:
		mode := x.s.HeadingEmbedMode
		if m, err := strconv.Atoi(e.IALAttr("custom-heading-mode")); err == nil && m >= 0 && m <= 2 {
			mode = m
		}
		var parts []*ast.Node
		switch mode {
		case 1: // the heading alone
			parts = append(parts, found)
		case 2: // the blocks under it, unless it is folded
			if found.IALAttr("fold") != "1" {
				for _, c := range HeadingChildren(found) {
					if c.IALAttr("heading-fold") != "1" {
						parts = append(parts, c)
					}
				}
			}
		default: // the heading and the blocks under it
			parts = append(append(parts, found), HeadingChildren(found)...)
		}
		if x.o.EmbedMode == 0 {
			top := 0
			for _, p := range parts {
				if p.Type == ast.NodeHeading {
					top = p.HeadingLevel
					break
				}
			}
			var hs []*ast.Node
			for _, p := range parts {
				if p.Type == ast.NodeHeading {
					hs = append(hs, p)
				}
			}
			shift(hs, top)
		}
		var buf strings.Builder
		for _, p := range parts {
			md, _ := lute.FormatNodeSync(p, l.ParseOptions, l.RenderOptions)
			buf.WriteString(md)
			buf.WriteString("\n\n")
		}
		return buf.String()
	}
	md, _ := lute.FormatNodeSync(found, l.ParseOptions, l.RenderOptions)
	return md
}

// renderBlockMarkdown is renderBlockMarkdownR: the nodes a block shows in
// a footnote definition's embed (a heading with its children, a document's
// blocks), embeds inside resolved the same way, each block once.
func (x *exporter) renderBlockMarkdown(id string, rendered *[]string) (ret []*ast.Node) {
	if slices.Contains(*rendered, id) {
		return nil
	}
	*rendered = append(*rendered, id)
	_, node := x.load(id)
	if node == nil {
		return nil
	}
	var children []*ast.Node
	switch node.Type {
	case ast.NodeHeading:
		children = append(append(children, node), HeadingChildren(node)...)
	case ast.NodeDocument:
		for c := node.FirstChild; c != nil; c = c.Next {
			children = append(children, c)
		}
	default:
		children = append(children, node)
	}
	for _, child := range children {
		var unlinks, inserts []*ast.Node
		ast.Walk(child, func(n *ast.Node, entering bool) ast.WalkStatus {
			if !entering || !n.IsBlock() {
				return ast.WalkContinue
			}
			if n.Type == ast.NodeBlockQueryEmbed {
				for _, sub := range x.embedIDs(n) {
					inserts = append(inserts, x.renderBlockMarkdown(sub, rendered)...)
				}
				unlinks = append(unlinks, n)
				return ast.WalkSkipChildren
			}
			return ast.WalkContinue
		})
		for _, n := range unlinks {
			n.Unlink()
		}
		if child.Type != ast.NodeBlockQueryEmbed {
			ret = append(ret, child)
		} else {
			ret = append(ret, inserts...)
		}
	}
	return ret
}
