package embedded

import (
	"context"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/88250/lute/ast"
	"github.com/88250/lute/parse"
	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
	"github.com/sisyphus-go/sisyphus/internal/siyuan/mdexport"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// The backlink panel's endpoints, /api/ref/getBacklink2, getBacklinkDoc and
// getBackmentionDoc, answering as SiYuan 3.7.3 does. SiYuan reads its SQL
// index; we read the documents themselves, which is the index once flushed.

func (k *Kernel) refRoutes() map[string]route {
	return map[string]route{
		endpoint.GetBacklink2:      {json: k.getBacklink2},
		endpoint.GetBacklinkDoc:    {json: k.getBacklinkDoc},
		endpoint.GetBackmentionDoc: {json: k.getBackmentionDoc},
	}
}

// blRef is one row of SiYuan's refs table: a block (the holder) holding a
// ref to def, with the ref's anchor text; a holder counts a target once.
type blRef struct {
	def, holder, anchor string
}

// blBlock is a block as the backlink code reads it from the index.
type blBlock struct {
	node  *ast.Node
	tree  *parse.Tree
	row   sqlBlockRow
	defID string // the block it refers to, for a ref block kept as itself
}

// blIndex is a snapshot of every document: its blocks by id and its refs in
// document order (the order SiYuan's index holds them).
type blIndex struct {
	blocks map[string]*blBlock
	refs   []blRef
	trees  []*parse.Tree
}

func (k *Kernel) backlinkIndex() *blIndex {
	k.mu.RLock()
	trees := make([]*parse.Tree, 0, len(k.docs))
	for _, d := range k.docs {
		trees = append(trees, d.tree)
	}
	k.mu.RUnlock()
	sort.Slice(trees, func(i, j int) bool { return trees[i].ID < trees[j].ID })
	x := &blIndex{blocks: map[string]*blBlock{}, trees: trees}
	for _, tree := range trees {
		seen := map[[2]string]bool{}
		ast.Walk(tree.Root, func(n *ast.Node, entering bool) ast.WalkStatus {
			if !entering {
				return ast.WalkContinue
			}
			if n.IsBlock() && n.ID != "" {
				x.blocks[n.ID] = &blBlock{node: n, tree: tree}
				return ast.WalkContinue
			}
			if n.Type != ast.NodeTextMark || !n.IsTextMarkType("block-ref") {
				return ast.WalkContinue
			}
			holder := parentBlockOf(n)
			if holder == nil || seen[[2]string{n.TextMarkBlockRefID, holder.ID}] {
				return ast.WalkContinue
			}
			seen[[2]string{n.TextMarkBlockRefID, holder.ID}] = true
			x.refs = append(x.refs, blRef{def: n.TextMarkBlockRefID, holder: holder.ID, anchor: n.TextMarkTextContent})
			return ast.WalkContinue
		})
	}
	return x
}

// block returns a block with its index row, or nil.
func (x *blIndex) block(id string) *blBlock {
	b := x.blocks[id]
	if b != nil && b.row.ID == "" {
		b.row = sqlBlockOf(b.node, b.tree)
	}
	return b
}

// defIDs are the ids whose refs count as refs to id: itself and, with
// containChildren, every block inside it (a heading's section included).
func (x *blIndex) defIDs(id string, containChildren bool) map[string]bool {
	ids := map[string]bool{id: true}
	b := x.blocks[id]
	if !containChildren || b == nil {
		return ids
	}
	add := func(n *ast.Node) {
		ast.Walk(n, func(c *ast.Node, entering bool) ast.WalkStatus {
			if entering && c.IsBlock() && c.ID != "" {
				ids[c.ID] = true
			}
			return ast.WalkContinue
		})
	}
	add(b.node)
	if b.node.Type == ast.NodeHeading {
		for _, c := range headingChildren(b.node) {
			add(c)
		}
	}
	return ids
}

// blLinks is what SiYuan's buildLinkRefs makes of the refs to a block.
type blLinks struct {
	refs     []*blBlock      // the blocks shown: a ref block, or the container standing for it
	count    int             // linkRefsCount
	exclude  map[string]bool // blocks (and their documents) no mention may come from
	original map[string]string
}

func (x *blIndex) linkRefs(def *blBlock, refs []blRef, keywords []string) blLinks {
	defRoot := def.tree.ID
	out := blLinks{exclude: map[string]bool{}, original: map[string]string{}}
	// One link per ref whose both ends exist and whose target is in the
	// document of def.
	var links []*blBlock
	for _, r := range refs {
		d, ref := x.block(r.def), x.block(r.holder)
		if d == nil || ref == nil {
			continue
		}
		if ref.tree.ID == defRoot {
			out.exclude[ref.tree.ID], out.exclude[ref.node.ID] = true, true
		}
		if d.tree.ID == defRoot {
			rb := *ref
			rb.defID = r.def
			links = append(links, &rb)
		}
	}
	for _, l := range links {
		out.exclude[l.tree.ID], out.exclude[l.node.ID] = true, true
	}
	out.count = len(links)
	// A paragraph is shown by the list item, quote, super block or callout
	// it sits in; several such paragraphs in one count once.
	parentRef := map[string]*blBlock{}
	var parentIDs []string
	for _, l := range links {
		if l.node.Type == ast.NodeParagraph {
			parentRef[l.row.ParentID] = l
			parentIDs = append(parentIDs, l.row.ParentID)
		}
	}
	uniq := dedupeStrings(parentIDs)
	out.count -= len(parentIDs) - len(uniq)
	processed := map[string]bool{}
	for _, pid := range uniq {
		p := x.block(pid)
		if p == nil {
			continue
		}
		switch p.node.Type {
		case ast.NodeListItem, ast.NodeBlockquote, ast.NodeSuperBlock, ast.NodeCallout:
		default:
			continue
		}
		ref := parentRef[pid]
		useParent := true
		if p.node.Type == ast.NodeListItem && p.row.FContent != ref.row.Content && hasOwnText(ref.node) {
			// A list item stands for a paragraph that is its first, or
			// that holds nothing but refs.
			useParent = false
		}
		if useParent {
			processed[pid] = true
		}
		out.original[pid] = ref.node.ID
		if !matchBacklinkKeyword(p, keywords) {
			out.count--
			continue
		}
		if useParent {
			out.refs = append(out.refs, p)
		}
	}
	for _, l := range links {
		if l.node.Type == ast.NodeParagraph && processed[l.row.ParentID] {
			continue
		}
		if !matchBacklinkKeyword(l, keywords) {
			out.count--
			continue
		}
		out.refs = append(out.refs, l)
	}
	return out
}

// hasOwnText: a block has text besides its block refs.
func hasOwnText(n *ast.Node) bool {
	for c := n.FirstChild; c != nil; c = c.Next {
		if c.Type == ast.NodeTextMark && c.IsTextMarkType("block-ref") {
			continue
		}
		if c.Type == ast.NodeKramdownSpanIAL {
			continue
		}
		if strings.TrimSpace(c.Text()) != "" {
			return true
		}
	}
	return false
}

func dedupeStrings(ss []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// matchBacklinkKeyword: with keywords, one of them is in the block's
// content, document title, name, alias, memo or tags, ignoring case.
func matchBacklinkKeyword(b *blBlock, keywords []string) bool {
	if len(keywords) == 0 {
		return true
	}
	for _, k := range keywords {
		k = strings.ToLower(k)
		for _, f := range []string{b.row.Content, path.Base(b.row.HPath), b.row.Name, b.row.Alias, b.row.Memo, b.row.Tag} {
			if strings.Contains(strings.ToLower(f), k) {
				return true
			}
		}
	}
	return false
}

// refsTo are the refs to id (and, with containChildren, to blocks inside
// it), one per holding block.
func (x *blIndex) refsTo(id string, containChildren bool) []blRef {
	defs := x.defIDs(id, containChildren)
	var out []blRef
	held := map[string]bool{}
	for _, r := range x.refs {
		if defs[r.def] && !held[r.holder] {
			held[r.holder] = true
			out = append(out, r)
		}
	}
	return out
}

// searchLimit is SiYuan's conf.search.limit default, the most blocks a
// mention search reads.
const backmentionLimit = 64

// backmentions is SiYuan's buildTreeBackmention: the blocks outside def's
// document whose text holds def's document title (def a document), the
// names and aliases of def (of its document's blocks), or the anchor text
// of a ref shown as a backlink, ignoring case; and the keywords hit, as the
// text spells them.
func (x *blIndex) backmentions(def *blBlock, links blLinks, keyword string) ([]*blBlock, []string) {
	set := map[string]bool{}
	var kws []string
	add := func(s string) {
		if s = strings.TrimSpace(s); s != "" && !set[s] {
			set[s] = true
			kws = append(kws, s)
		}
	}
	if def.node.Type == ast.NodeDocument {
		ast.Walk(def.node, func(n *ast.Node, entering bool) ast.WalkStatus {
			if entering && n.IsBlock() {
				add(n.IALAttr("name"))
			}
			return ast.WalkContinue
		})
		ast.Walk(def.node, func(n *ast.Node, entering bool) ast.WalkStatus {
			if entering && n.IsBlock() {
				for _, a := range strings.Split(n.IALAttr("alias"), ",") {
					add(a)
				}
			}
			return ast.WalkContinue
		})
		add(path.Base(def.row.HPath))
	} else {
		add(def.row.Name)
		for _, a := range strings.Split(def.row.Alias, ",") {
			add(a)
		}
	}
	for _, l := range links.refs {
		if l.defID == "" {
			continue
		}
		for _, r := range x.refs {
			if r.def == l.defID && r.holder == l.node.ID {
				add(r.anchor)
			}
		}
	}
	if len(kws) == 0 {
		return []*blBlock{}, nil
	}
	lower := make([]string, len(kws))
	for i, kw := range kws {
		lower[i] = strings.ToLower(kw)
	}
	containsAny := func(s string) bool { return len(markedIn(s, lower)) > 0 }
	// The candidates are what SiYuan's full-text query finds: headings,
	// paragraphs, tables and documents outside def's document naming a
	// keyword (and the filter keyword), newest id first, at most a page.
	var cands []*blBlock
	for _, b := range x.blocks {
		switch b.node.Type {
		case ast.NodeDocument, ast.NodeHeading, ast.NodeParagraph, ast.NodeTable:
		default:
			continue
		}
		if b.tree.ID == def.tree.ID {
			continue
		}
		b = x.block(b.node.ID)
		if !containsAny(b.row.Content) && !containsAny(b.row.Name) && !containsAny(b.row.Alias) && !containsAny(b.row.Memo) {
			continue
		}
		if keyword != "" && !strings.Contains(strings.ToLower(b.row.Content), strings.ToLower(keyword)) {
			continue
		}
		cands = append(cands, b)
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].node.ID > cands[j].node.ID })
	if len(cands) > backmentionLimit {
		cands = cands[:backmentionLimit]
	}
	var hit []string
	var ret []*blBlock
	for _, b := range cands {
		text := strings.TrimSpace(mentionText(b.node))
		if b.node.Type == ast.NodeDocument {
			text = ""
		}
		found := markedIn(text, lower)
		switch {
		case len(found) > 0:
			hit = append(hit, found...)
		case text != "" && (containsAny(b.row.Name) || containsAny(b.row.Alias) || containsAny(b.row.Memo)):
		default:
			continue
		}
		if !links.exclude[b.node.ID] {
			ret = append(ret, b)
		}
	}
	if ret == nil {
		ret = []*blBlock{}
	}
	return ret, dedupeStrings(hit)
}

// mentionText is the plain text of a block's own inline content: text and
// link text, not code, refs or other blocks.
func mentionText(n *ast.Node) string {
	var b strings.Builder
	ast.Walk(n, func(c *ast.Node, entering bool) ast.WalkStatus {
		if !entering || c == n {
			return ast.WalkContinue
		}
		if c.IsBlock() {
			return ast.WalkSkipChildren
		}
		switch {
		case c.Type == ast.NodeText || c.Type == ast.NodeLinkText:
			b.Write(c.Tokens)
		case c.Type == ast.NodeTextMark && !c.IsTextMarkType("block-ref") && !c.IsTextMarkType("code") &&
			!c.IsTextMarkType("inline-math") && !c.IsTextMarkType("file-annotation-ref"):
			b.WriteString(c.TextMarkTextContent)
		}
		return ast.WalkContinue
	})
	return b.String()
}

// markedIn returns every stretch of text matching one of the (lower-case)
// keywords, as the text spells it, longest keyword first at each place.
func markedIn(text string, lower []string) []string {
	var out []string
	lt := strings.ToLower(text)
	if len(lt) != len(text) {
		return nil
	}
	for i := 0; i < len(lt); {
		best := matchAt(lt, i, lower)
		if best == 0 {
			i++
			continue
		}
		out = append(out, text[i:i+best])
		i += best
	}
	return out
}

// matchAt is the length of the longest keyword found at byte i of the
// lower-case text as a whole word (SiYuan finds mentions with a full-text
// index, which matches words, not parts of them), 0 if none.
func matchAt(lt string, i int, lower []string) int {
	best := 0
	for _, kw := range lower {
		if len(kw) <= best || !strings.HasPrefix(lt[i:], kw) {
			continue
		}
		if isWordByte(kw[0]) && i > 0 && isWordByte(lt[i-1]) {
			continue
		}
		if end := i + len(kw); isWordByte(kw[len(kw)-1]) && end < len(lt) && isWordByte(lt[end]) {
			continue
		}
		best = len(kw)
	}
	return best
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c >= 0x80
}

// blPath is SiYuan's Path of the backlink panel's document list.
type blPath struct {
	ID       string `json:"id"`
	Box      string `json:"box"`
	Name     string `json:"name"`
	HPath    string `json:"hPath"`
	Type     string `json:"type"`
	NodeType string `json:"nodeType"`
	SubType  string `json:"subType"`
	Depth    int    `json:"depth"`
	Count    int    `json:"count"`
	Folded   bool   `json:"folded"`
	Updated  string `json:"updated"`
	Created  string `json:"created"`
}

// docPaths groups blocks by document, counting them, the documents in the
// order first met.
func (k *Kernel) docPaths(x *blIndex, blocks []*blBlock) []*blPath {
	ret := []*blPath{}
	byRoot := map[string]*blPath{}
	for _, b := range blocks {
		if p := byRoot[b.tree.ID]; p != nil {
			p.Count++
			continue
		}
		root := x.block(b.tree.ID)
		if root == nil {
			continue
		}
		boxName := ""
		if c, err := k.box(b.tree.Box); err == nil {
			boxName = c.Name
		}
		p := &blPath{ID: b.tree.ID, Box: b.tree.Box, Name: path.Base(root.row.HPath), HPath: boxName + root.row.HPath,
			Type: "backlink", NodeType: "NodeDocument", Count: 1, Updated: root.row.Updated, Created: root.row.Created}
		byRoot[b.tree.ID] = p
		ret = append(ret, p)
	}
	return ret
}

// sortPaths orders the document list as SiYuan's sort modes do; an unknown
// mode orders by id, newest first.
func sortPaths(ps []*blPath, mode int) {
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i], ps[j]
		switch mode {
		case 0:
			return strings.ToLower(a.Name) < strings.ToLower(b.Name)
		case 1:
			return strings.ToLower(b.Name) < strings.ToLower(a.Name)
		case 2:
			return a.Updated < b.Updated
		case 3:
			return a.Updated > b.Updated
		case 4:
			return naturalLess(a.Name, b.Name)
		case 5:
			return naturalLess(b.Name, a.Name)
		case 9:
			return a.Created < b.Created
		case 10:
			return a.Created > b.Created
		}
		return a.ID > b.ID
	})
}

// sortModeArg reads a sort mode sent as a string, SiYuan's default (3,
// updated newest first) when absent; a string that is no number is 0.
func sortModeArg(a args, key string) (int, error) {
	v, ok := a[key]
	if !ok || v == nil {
		return 3, nil
	}
	s, ok := v.(string)
	if !ok {
		return 0, errf("argument [%s] must be a string", key)
	}
	n, _ := strconv.Atoi(s)
	return n, nil
}

// containChildrenArg is the containChildren argument, SiYuan's default
// (conf.editor.backlinkContainChildren, true) when absent.
func containChildrenArg(a args) (bool, error) {
	if _, ok := a["containChildren"]; !ok {
		return true, nil
	}
	return a.optBool("containChildren")
}

func splitKeywords(s string) []string {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	return strings.Split(s, " ")
}

func (k *Kernel) getBacklink2(ctx context.Context, a args) (any, error) {
	if v, ok := a["id"]; !ok || v == nil {
		return nil, nil // SiYuan answers nothing without an id
	}
	id, err := a.str("id")
	if err != nil {
		return nil, err
	}
	kw, err := a.str("k")
	if err != nil {
		return nil, err
	}
	mk, err := a.str("mk")
	if err != nil {
		return nil, err
	}
	mode, err := sortModeArg(a, "sort")
	if err != nil {
		return nil, err
	}
	mMode, err := sortModeArg(a, "mSort")
	if err != nil {
		return nil, err
	}
	children, err := containChildrenArg(a)
	if err != nil {
		return nil, err
	}
	kw, mk = strings.TrimSpace(kw), strings.TrimSpace(mk)
	ret := map[string]any{"backlinks": []*blPath{}, "backmentions": []*blPath{}, "linkRefsCount": 0,
		"mentionsCount": 0, "k": kw, "mk": mk, "box": ""}
	x := k.backlinkIndex()
	def := x.block(id)
	if def == nil {
		return ret, nil
	}
	links := x.linkRefs(def, x.refsTo(id, children), splitKeywords(kw))
	backlinks := k.docPaths(x, links.refs)
	sortPaths(backlinks, mode)
	mentions, _ := x.backmentions(def, links, mk)
	backmentions := k.docPaths(x, mentions)
	sortPaths(backmentions, mMode)
	count := 0
	for _, p := range backmentions {
		count += p.Count
	}
	ret["backlinks"], ret["backmentions"] = backlinks, backmentions
	ret["linkRefsCount"], ret["mentionsCount"], ret["box"] = links.count, count, def.tree.Box
	return ret, nil
}

// blDocArgs reads getBacklinkDoc's and getBackmentionDoc's arguments.
func blDocArgs(a args) (defID, refTreeID, keyword string, children, highlight bool, err error) {
	if defID, err = a.str("defID"); err != nil {
		return
	}
	if refTreeID, err = a.str("refTreeID"); err != nil {
		return
	}
	if keyword, err = a.str("keyword"); err != nil {
		return
	}
	if children, err = containChildrenArg(a); err != nil {
		return
	}
	highlight = true
	if _, ok := a["highlight"]; ok {
		highlight, err = a.optBool("highlight")
	}
	return strings.TrimSpace(defID), refTreeID, strings.TrimSpace(keyword), children, highlight, err
}

// wireBacklink is one entry of getBacklinkDoc's and getBackmentionDoc's
// lists: the rendered blocks, their breadcrumb, and whether they open.
type wireBacklink struct {
	DOM        string            `json:"dom"`
	BlockPaths []*wire.BlockPath `json:"blockPaths"`
	Expand     bool              `json:"expand"`
	node       *ast.Node
}

func (k *Kernel) getBacklinkDoc(ctx context.Context, a args) (any, error) {
	defID, refTreeID, keyword, children, highlight, err := blDocArgs(a)
	if err != nil {
		return nil, err
	}
	keywords := dedupeStrings(splitKeywords(keyword))
	if keywords == nil {
		keywords = []string{}
	}
	ret := []*wireBacklink{}
	x := k.backlinkIndex()
	def := x.block(defID)
	if def == nil {
		return map[string]any{"backlinks": ret, "keywords": keywords}, nil
	}
	var refs []blRef
	for _, r := range x.refsTo(defID, children) {
		if b := x.blocks[r.holder]; b != nil && b.tree.ID == refTreeID {
			refs = append(refs, r)
		}
	}
	links := x.linkRefs(def, refs, keywords)
	var tree *parse.Tree
	for _, t := range x.trees {
		if t.ID == refTreeID {
			tree = t
		}
	}
	if tree == nil {
		return map[string]any{"backlinks": ret, "keywords": keywords}, nil
	}
	for _, l := range links.refs {
		if b := k.buildBacklink(tree, l.node.ID, links.original, keywords, highlight); b != nil {
			ret = append(ret, b)
		}
	}
	sortBacklinks(ret, tree)
	return map[string]any{"backlinks": ret, "keywords": keywords}, nil
}

func (k *Kernel) getBackmentionDoc(ctx context.Context, a args) (any, error) {
	defID, refTreeID, keyword, children, highlight, err := blDocArgs(a)
	if err != nil {
		return nil, err
	}
	keywords := splitKeywords(keyword)
	ret := []*wireBacklink{}
	x := k.backlinkIndex()
	def := x.block(defID)
	if def == nil {
		// SiYuan answers the filter's words as they are: null without one.
		return map[string]any{"backmentions": ret, "keywords": keywords}, nil
	}
	links := x.linkRefs(def, x.refsTo(defID, children), keywords)
	all, mentionKeywords := x.backmentions(def, links, keyword)
	mentionKeywords = dedupeStrings(append(mentionKeywords, keywords...))
	keywords = dedupeStrings(append(keywords, mentionKeywords...))
	if keywords == nil {
		keywords = []string{}
	}
	var tree *parse.Tree
	for _, m := range all {
		if m.tree.ID != refTreeID {
			continue
		}
		tree = m.tree
		if b := k.buildBacklink(m.tree, m.node.ID, links.original, mentionKeywords, highlight); b != nil {
			ret = append(ret, b)
		}
	}
	if tree != nil {
		sortBacklinks(ret, tree)
	}
	return map[string]any{"backmentions": ret, "keywords": keywords}, nil
}

// sortBacklinks orders entries as their blocks stand in the document, and
// drops a breadcrumb of the document and the block alone.
func sortBacklinks(bs []*wireBacklink, tree *parse.Tree) {
	order := map[string]int{}
	i := 0
	ast.Walk(tree.Root, func(n *ast.Node, entering bool) ast.WalkStatus {
		if entering && n.IsBlock() {
			order[n.ID] = i
			i++
		}
		return ast.WalkContinue
	})
	sort.SliceStable(bs, func(i, j int) bool { return order[bs[i].node.ID] < order[bs[j].node.ID] })
	for _, b := range bs {
		if len(b.BlockPaths) == 2 {
			b.BlockPaths = []*wire.BlockPath{}
		}
	}
}

// buildBacklink renders one entry: a list item alone, a heading with its
// section, any other block alone; keywords marked when highlight is on.
// A list item with a sub-list, or a heading, whose own text is more than
// refs starts folded (expand false).
func (k *Kernel) buildBacklink(tree *parse.Tree, id string, original map[string]string, keywords []string, highlight bool) *wireBacklink {
	node := mdexport.NodeByID(tree.Root, id)
	if node == nil {
		return nil
	}
	expand := true
	nodes := []*ast.Node{node}
	switch node.Type {
	case ast.NodeListItem:
		c := node.FirstChild
		if c != nil && node.ListData != nil && node.ListData.Typ == 3 {
			c = c.Next
		}
		if c != nil && c != node.LastChild {
			for ; c != nil; c = c.Next {
				if original[node.ID] == c.ID && hasOwnText(c) {
					expand = false
				}
			}
		}
	case ast.NodeHeading:
		if hasOwnText(node) {
			expand = false
		}
		nodes = append(nodes, headingChildren(node)...)
	}
	doc := &ast.Node{Type: ast.NodeDocument}
	for _, n := range nodes {
		doc.AppendChild(cloneSubtree(n))
	}
	if highlight && len(keywords) > 0 {
		markKeywords(doc, keywords)
	}
	// Blocks are drawn numbered as a document's children, but for a list
	// item, which SiYuan draws alone.
	var dom string
	if node.Type == ast.NodeListItem {
		dom = mdexport.NewLute().RenderNodeBlockDOM(cloneSubtree(node))
	} else {
		dom = mdexport.NewLute().RenderNodeBlockDOM(doc)
	}
	paths := []*wire.BlockPath{}
	if (node.Parent != nil && node.Parent.Type != ast.NodeDocument) || (node.Type != ast.NodeHeading && headingLevelAbove(node) > 0) {
		paths = k.breadcrumbOf(tree, node)
	}
	return &wireBacklink{DOM: dom, BlockPaths: paths, Expand: expand, node: node}
}

// headingLevelAbove is the level of the nearest heading among the block and
// its earlier siblings, 0 if none.
func headingLevelAbove(n *ast.Node) int {
	for p := n; p != nil; p = p.Previous {
		if p.Type == ast.NodeHeading {
			return p.HeadingLevel
		}
	}
	return 0
}

// markKeywords wraps each occurrence of a keyword (ignoring case) in the
// text of the blocks under root in a search-mark span.
func markKeywords(root *ast.Node, keywords []string) {
	lower := make([]string, 0, len(keywords))
	for _, kw := range keywords {
		if kw = strings.ToLower(strings.TrimSpace(kw)); kw != "" {
			lower = append(lower, kw)
		}
	}
	var texts []*ast.Node
	ast.Walk(root, func(n *ast.Node, entering bool) ast.WalkStatus {
		if entering && n.Type == ast.NodeText {
			texts = append(texts, n)
		}
		return ast.WalkContinue
	})
	for _, t := range texts {
		text := string(t.Tokens)
		lt := strings.ToLower(text)
		if len(lt) != len(text) {
			continue
		}
		var parts []*ast.Node
		start := 0
		for i := 0; i < len(lt); {
			best := matchAt(lt, i, lower)
			if best == 0 {
				i++
				continue
			}
			if i > start {
				parts = append(parts, &ast.Node{Type: ast.NodeText, Tokens: []byte(text[start:i])})
			}
			parts = append(parts, &ast.Node{Type: ast.NodeTextMark, TextMarkType: "search-mark", TextMarkTextContent: text[i : i+best]})
			i += best
			start = i
		}
		if len(parts) == 0 {
			continue
		}
		if start < len(text) {
			parts = append(parts, &ast.Node{Type: ast.NodeText, Tokens: []byte(text[start:])})
		}
		for _, p := range parts {
			t.InsertBefore(p)
		}
		t.Unlink()
	}
}
