package embedded

import (
	"time"

	"github.com/88250/lute/ast"
)

// typeAbbr maps lute node types to the abbreviations SiYuan uses in its SQL
// index and in getChildBlocks.
var typeAbbr = map[ast.NodeType]string{
	ast.NodeDocument:        "d",
	ast.NodeHeading:         "h",
	ast.NodeList:            "l",
	ast.NodeListItem:        "i",
	ast.NodeCodeBlock:       "c",
	ast.NodeMathBlock:       "m",
	ast.NodeTable:           "t",
	ast.NodeBlockquote:      "b",
	ast.NodeSuperBlock:      "s",
	ast.NodeParagraph:       "p",
	ast.NodeHTMLBlock:       "html",
	ast.NodeBlockQueryEmbed: "query_embed",
	ast.NodeAttributeView:   "av",
	ast.NodeIFrame:          "iframe",
	ast.NodeWidget:          "widget",
	ast.NodeThematicBreak:   "tb",
	ast.NodeVideo:           "video",
	ast.NodeAudio:           "audio",
	ast.NodeCallout:         "callout",
}

func abbr(n *ast.Node) string { return typeAbbr[n.Type] }

func subTypeAbbr(n *ast.Node) string {
	switch n.Type {
	case ast.NodeList, ast.NodeListItem:
		if n.ListData == nil {
			return ""
		}
		switch n.ListData.Typ {
		case 0:
			return "u"
		case 1:
			return "o"
		case 3:
			return "t"
		}
	case ast.NodeHeading:
		if n.HeadingLevel >= 1 && n.HeadingLevel <= 6 {
			return "h" + string(rune('0'+n.HeadingLevel))
		}
	case ast.NodeCallout:
		return n.CalloutType
	}
	return ""
}

// timeFromID returns the creation time encoded in a block id (its first 14
// characters), as SiYuan does.
func timeFromID(id string) string {
	if len(id) < 14 {
		return nowStamp()
	}
	return id[:14]
}

func nowStamp() string { return time.Now().Format("20060102150405") }

func isTimeStr(s string) bool {
	if len(s) != 14 {
		return false
	}
	_, err := time.Parse("20060102150405", s)
	return err == nil
}

// validID reports whether s is a SiYuan node id (YYYYMMDDHHMMSS-xxxxxxx).
func validID(s string) bool { return ast.IsNodeIDPattern(s) }

// headingChildren returns the blocks that belong to a heading: following
// siblings up to the next heading of the same or a higher level.
func headingChildren(h *ast.Node) (ret []*ast.Node) {
	for n := h.Next; n != nil; n = n.Next {
		if n.Type == ast.NodeKramdownBlockIAL {
			continue
		}
		if n.Type == ast.NodeHeading && n.HeadingLevel <= h.HeadingLevel {
			break
		}
		ret = append(ret, n)
	}
	return ret
}

// headingParent returns the heading a block sits under, if any.
func headingParent(n *ast.Node) *ast.Node {
	level := 7
	if n.Type == ast.NodeHeading {
		level = n.HeadingLevel
	}
	for p := n.Previous; p != nil; p = p.Previous {
		if p.Type == ast.NodeHeading && p.HeadingLevel < level {
			return p
		}
	}
	return nil
}

// touchInserted stamps a new node and its descendants as SiYuan's insert
// does: each block's updated is the time of its own id (a pinned id's too),
// and the blocks around it keep theirs.
func touchInserted(node *ast.Node) {
	ast.Walk(node, func(n *ast.Node, entering bool) ast.WalkStatus {
		if entering && n.IsBlock() && n.Type != ast.NodeKramdownBlockIAL && validID(n.ID) {
			n.SetIALAttr("updated", timeFromID(n.ID))
		}
		return ast.WalkContinue
	})
}

// touchUpdated stamps the updated attribute on a changed node and every
// ancestor, as SiYuan's CreatedUpdated does, and fills missing updated
// attributes of new descendants from their ids.
func touchUpdated(node *ast.Node, stamp string) {
	ast.Walk(node, func(n *ast.Node, entering bool) ast.WalkStatus {
		if !entering || !n.IsBlock() || n.Type == ast.NodeKramdownBlockIAL {
			return ast.WalkContinue
		}
		if n.IALAttr("updated") == "" && validID(n.ID) {
			n.SetIALAttr("updated", timeFromID(n.ID))
		}
		return ast.WalkContinue
	})
	if stamp < timeFromID(node.ID) {
		stamp = timeFromID(node.ID)
	}
	node.SetIALAttr("updated", stamp)
	for p := node.Parent; p != nil; p = p.Parent {
		if p.IsBlock() && p.ID != "" {
			p.SetIALAttr("updated", stamp)
		}
	}
}
