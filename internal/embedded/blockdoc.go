package embedded

// Block and document reads of SiYuan 3.7.3's kernel/api/block.go that
// Sisyphus's breadth actions use (breadcrumb, word count, recent blocks,
// documents' info) and transferBlockRef, with the answers captured from
// the real kernel.

import (
	"context"
	"fmt"
	"html"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/88250/lute/ast"
	"github.com/88250/lute/parse"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
	"github.com/sisyphus-go/sisyphus/internal/siyuan/mdexport"
	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

func (k *Kernel) blockDocRoutes() map[string]route {
	return map[string]route{
		endpoint.GetBlockBreadcrumb:     {json: k.getBlockBreadcrumb},
		endpoint.GetBlocksWordCount:     {json: k.getBlocksWordCount},
		endpoint.GetRecentUpdatedBlocks: {json: k.getRecentUpdatedBlocks, emptyOK: true},
		endpoint.GetDocsInfo:            {json: k.getDocsInfo},
		endpoint.TransferBlockRef:       {json: k.transferBlockRef},
		endpoint.SearchDocs:             {json: k.searchDocs},
		endpoint.GetDoc:                 {json: k.getDoc},
		endpoint.GetDocOutline:          {json: k.getDocOutline},
	}
}

// crumbText is renderBlockText: the block's static text on one line.
func crumbText(n *ast.Node) string {
	if n == nil {
		return ""
	}
	t := strings.TrimSpace(strings.ReplaceAll(sqlStaticContent(n), "\n", ""))
	r := []rune(t)
	if len(r) > 1024 {
		t = string(r[:1024])
	}
	return html.EscapeString(html.UnescapeString(t))
}

func isCrumbContainer(t ast.NodeType) bool {
	return t == ast.NodeList || t == ast.NodeSuperBlock || t == ast.NodeBlockquote || t == ast.NodeCallout
}

// getBlockBreadcrumb is model.buildBlockBreadcrumb outside embeds: from the
// block up to its document, each ancestor that is not a bare container,
// and before each the headings above it of a higher level.
func (k *Kernel) getBlockBreadcrumb(ctx context.Context, a args) (any, error) {
	id, err := a.str("id")
	if err != nil {
		return nil, err
	}
	if _, err := a.strListOpt("excludeTypes"); err != nil {
		return nil, err
	}
	tree, node, err := k.viewOf(id)
	if err != nil {
		return []*wire.BlockPath{}, nil // SiYuan: an unknown block has no crumbs, code 0
	}
	return k.breadcrumbOf(tree, node), nil
}

// breadcrumbOf is the breadcrumb of a block of a tree (the backlink panel
// draws the same one).
func (k *Kernel) breadcrumbOf(tree *parse.Tree, node *ast.Node) []*wire.BlockPath {
	ret := []*wire.BlockPath{}
	boxName := ""
	if c, err := k.box(tree.Box); err == nil {
		boxName = c.Name
	}
	level := 16
	for p := node; p != nil; p = p.Parent {
		if p.ID == "" {
			continue
		}
		name := p.IALAttr("name")
		switch {
		case p.Type == ast.NodeDocument:
			name = boxName
			if p.ID != tree.Box { // the notebook's own document is named by the notebook
				name += tree.HPath
			}
		case p.Type == ast.NodeAttributeView:
			name = ""
			if av, err := k.readAV(p.AttributeViewID); err == nil {
				name = av.Name
			}
		default:
			if name == "" {
				if p.Type == ast.NodeListItem || isCrumbContainer(p.Type) {
					name = crumbText(mdexport.FirstLeafBlock(p))
				} else {
					name = crumbText(p)
				}
			}
			if p.Type == ast.NodeHeading {
				level = p.HeadingLevel
			}
		}
		add := !isCrumbContainer(p.Type) || p == node
		if p.Type == ast.NodeParagraph && p.Parent != nil && p.Parent.Type == ast.NodeListItem && p.Next == nil &&
			(p.Previous == nil || p.Previous.Type == ast.NodeTaskListItemMarker) {
			add = false
		}
		if p == node {
			name = ""
		}
		if add {
			ret = append([]*wire.BlockPath{{ID: p.ID, Name: name, Type: p.Type.String(), SubType: subTypeAbbr(p)}}, ret...)
		}
		if p.Type != ast.NodeDocument && p.IsContainerBlock() {
			level = 16
		}
		for prev := p.Previous; prev != nil; prev = prev.Previous {
			b := prev
			if prev.Type == ast.NodeSuperBlock {
				if h := lastHeadingIn(prev); h != nil {
					b = h
				}
			}
			if b.Type == ast.NodeHeading && level > b.HeadingLevel {
				if b.Parent != nil && b.Parent.Type == ast.NodeListItem {
					continue
				}
				ret = append([]*wire.BlockPath{{ID: b.ID, Name: crumbText(b), Type: b.Type.String(), SubType: subTypeAbbr(b)}}, ret...)
				level = b.HeadingLevel
			}
		}
	}
	return ret
}

// lastHeadingIn is treenode.SuperBlockLastHeading.
func lastHeadingIn(sb *ast.Node) *ast.Node {
	var hs []*ast.Node
	ast.Walk(sb, func(n *ast.Node, entering bool) ast.WalkStatus {
		if entering && n.Type == ast.NodeHeading {
			hs = append(hs, n)
		}
		return ast.WalkContinue
	})
	if len(hs) == 0 {
		return nil
	}
	return hs[len(hs)-1]
}

// strListOpt is strList for an argument that may be absent.
func (a args) strListOpt(key string) ([]string, error) {
	if v, ok := a[key]; !ok || v == nil {
		return nil, nil
	}
	return a.strList(key)
}

// getBlocksWordCount is filesys.BlocksWordCount: Lute's statistics of each
// known block; blockCount is the number of ids asked for, known or not.
func (k *Kernel) getBlocksWordCount(ctx context.Context, a args) (any, error) {
	ids, err := a.strList("ids")
	if err != nil {
		return nil, err
	}
	st := wire.BlockStat{BlockCount: len(ids)}
	for _, id := range ids {
		_, node, err := k.viewOf(id)
		if err != nil {
			continue
		}
		runes, words, links, images, refs := node.Stat()
		st.RuneCount += runes
		st.WordCount += words
		st.LinkCount += links
		st.ImageCount += images
		st.RefCount += refs
	}
	return wire.WordCount{ReqID: a["reqId"], Stat: st}, nil
}

// recentUpdatedLimit is the page size model.RecentUpdatedBlocks uses.
const recentUpdatedLimit = 16

// getRecentUpdatedBlocks is model.RecentUpdatedBlocks: the newest
// paragraphs of more than one character, from the (lagging) SQL index.
func (k *Kernel) getRecentUpdatedBlocks(ctx context.Context, a args) (any, error) {
	rows, err := k.sql.query(ctx, "SELECT * FROM blocks WHERE type = 'p' AND length > 1 ORDER BY updated DESC", recentUpdatedLimit, true)
	if err != nil {
		return nil, err
	}
	names := map[string]string{}
	for t, ab := range typeAbbr {
		names[ab] = t.String()
	}
	ret := make([]*wire.Block, 0, len(rows))
	for _, r := range rows {
		ial := map[string]string{}
		if s := str(r["ial"]); s != "" {
			ial = parse.IAL2Map(parse.Tokens2IAL([]byte(s)))
		}
		sortN, _ := r["sort"].(int64)
		ret = append(ret, &wire.Block{
			Box: str(r["box"]), Path: str(r["path"]), HPath: str(r["hpath"]), ID: str(r["id"]),
			RootID: str(r["root_id"]), ParentID: str(r["parent_id"]), Name: str(r["name"]), Alias: str(r["alias"]),
			Memo: str(r["memo"]), Tag: str(r["tag"]), Content: str(r["content"]), FContent: str(r["fcontent"]),
			Markdown: str(r["markdown"]), Folded: ial["fold"] == "1", Type: names[str(r["type"])], SubType: str(r["subtype"]),
			IAL: ial, Sort: int(sortN),
		})
	}
	return ret, nil
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// getDocsInfo is model.GetDocsInfo: each id's document, in order; an id
// inside a document answers with that document's name and attributes.
// Reference ids come from the documents' trees (SiYuan reads its refs
// table), listed in document order.
func (k *Kernel) getDocsInfo(ctx context.Context, a args) (any, error) {
	ids, err := a.strList("ids")
	if err != nil {
		return nil, err
	}
	refCount, err := a.reqBool("refCount")
	if err != nil {
		return nil, err
	}
	withAV, err := a.reqBool("av")
	if err != nil {
		return nil, err
	}
	ret := []*wire.DocInfo{}
	for _, id := range ids {
		tree, node, err := k.viewOf(id)
		if err != nil {
			continue
		}
		ial := parse.IAL2Map(tree.Root.KramdownIAL)
		info := &wire.DocInfo{ID: id, RootID: tree.ID, Name: ial["title"], IAL: ial, Icon: ial["icon"],
			SubFileCount: k.visibleChildCount(tree.Box, strings.TrimSuffix(tree.Path, ".sy"))}
		if refCount {
			// The def blocks are the document (or block) and everything in it.
			defs := map[string]bool{}
			ast.Walk(node, func(n *ast.Node, entering bool) ast.WalkStatus {
				if entering && n.IsBlock() && n.ID != "" {
					defs[n.ID] = true
				}
				return ast.WalkContinue
			})
			info.RefIDs = k.refBlocksTo(defs)
			info.RefCount = len(info.RefIDs)
		}
		if withAV {
			for _, avID := range strings.Split(ial["custom-avs"], ",") {
				if !validID(avID) {
					continue
				}
				av, err := k.readAV(avID)
				if err != nil {
					continue
				}
				name := av.Name
				if name == "" {
					name = avLangUntitled
				}
				info.AttrViews = append(info.AttrViews, wire.AttrView{ID: avID, Name: name})
			}
		}
		ret = append(ret, info)
	}
	if len(ret) == 0 {
		return nil, errf("Content block with id [%s] not found", fmt.Sprint(ids))
	}
	return ret, nil
}

// reqBool is a boolean argument SiYuan asserts without checking: absent,
// it panics into code 0 with no data.
func (a args) reqBool(key string) (bool, error) {
	v, ok := a[key].(bool)
	if !ok {
		return false, &apiError{code: 0, msg: ""}
	}
	return v, nil
}

// refBlocksTo lists the blocks holding a block reference to one of defs,
// each once, ordered by document then position.
func (k *Kernel) refBlocksTo(defs map[string]bool) []string {
	k.mu.RLock()
	trees := make([]*parse.Tree, 0, len(k.docs))
	for _, d := range k.docs {
		trees = append(trees, d.tree)
	}
	k.mu.RUnlock()
	sort.Slice(trees, func(i, j int) bool { return trees[i].ID < trees[j].ID })
	ret := []string{}
	for _, t := range trees {
		seen := map[string]bool{}
		ast.Walk(t.Root, func(n *ast.Node, entering bool) ast.WalkStatus {
			if entering && n.Type == ast.NodeTextMark && n.IsTextMarkType("block-ref") && defs[n.TextMarkBlockRefID] {
				if b := blockOf(n); b != nil && !seen[b.ID] {
					seen[b.ID] = true
					ret = append(ret, b.ID)
				}
			}
			return ast.WalkContinue
		})
	}
	return ret
}

// blockOf is the nearest block holding an inline node.
func blockOf(n *ast.Node) *ast.Node {
	for p := n.Parent; p != nil; p = p.Parent {
		if p.IsBlock() && p.ID != "" {
			return p
		}
	}
	return nil
}

// dynamicAnchorMax is Conf.Editor.BlockRefDynamicAnchorTextMaxLen's default.
const dynamicAnchorMax = 96

// transferBlockRef is model.TransferBlockRef: in each ref block (refIDs,
// or every block referencing fromID), references to fromID point at toID;
// dynamic anchors take toID's text.
func (k *Kernel) transferBlockRef(ctx context.Context, a args) (any, error) {
	// SiYuan asserts both ids are strings: otherwise it panics into code 0.
	fromID, ok1 := a["fromID"].(string)
	toID, ok2 := a["toID"].(string)
	if !ok1 || !ok2 {
		return nil, &apiError{code: 0}
	}
	if !validID(fromID) || !validID(toID) {
		return nil, errf("invalid ID argument")
	}
	if _, err := a.optBool("reloadUI"); err != nil {
		return nil, err
	}
	refIDs, err := a.strListOpt("refIDs")
	if err != nil {
		return nil, err
	}
	_, toNode, err := k.viewOf(toID)
	if err != nil {
		return nil, &apiError{code: -1, msg: "block not found", data: map[string]any{"closeTimeout": 7000}}
	}
	toText := toNode.IALAttr("name")
	if toText != "" {
		toText = html.EscapeString(strings.TrimSpace(toText))
	} else {
		toText = k.nodeRefText(toNode)
		if utf8.RuneCountInString(toText) > dynamicAnchorMax {
			toText = string([]rune(toText)[:dynamicAnchorMax]) + "..."
		}
	}
	k.notify("Transferring references...", false, 7000)
	if len(refIDs) == 0 {
		refIDs = k.refBlocksTo(map[string]bool{fromID: true})
	}
	byRoot := map[string][]string{}
	var roots []string
	for _, id := range refIDs {
		loc, ok := k.lookup(id)
		if !ok {
			continue
		}
		if _, seen := byRoot[loc.Root]; !seen {
			roots = append(roots, loc.Root)
		}
		byRoot[loc.Root] = append(byRoot[loc.Root], id)
	}
	for _, root := range roots {
		tree, err := k.loadTree(root)
		if err != nil {
			continue
		}
		changed := false
		for _, id := range byRoot[root] {
			node := mdexport.NodeByID(tree.Root, id)
			if node == nil {
				continue
			}
			ast.Walk(node, func(n *ast.Node, entering bool) ast.WalkStatus {
				if entering && n.Type == ast.NodeTextMark && n.IsTextMarkType("block-ref") && n.TextMarkBlockRefID == fromID {
					n.TextMarkBlockRefID = toID
					if n.TextMarkBlockRefSubtype == "d" {
						n.TextMarkTextContent = toText
					}
					changed = true
				}
				return ast.WalkContinue
			})
		}
		if changed {
			if err := k.writeTree(tree); err != nil {
				return nil, err
			}
		}
	}
	return nil, nil
}
