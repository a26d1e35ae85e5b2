package mdexport

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/88250/lute/ast"
	"github.com/88250/lute/parse"
	"github.com/88250/lute/render"
)

// Source is where an export reads: the kernel's trees and index.
type Source interface {
	// Block loads a private copy (the export changes it) of the tree that
	// holds the block id, and the block in it; a nil tree when no block
	// has the id. The tree's HPath is the caller's to set or not.
	Block(ctx context.Context, id string) (*parse.Tree, *ast.Node, error)
	// RefText is the anchor text the SQL index gives a block
	// (sql.GetRefText): "block not found" for a block it does not hold.
	RefText(ctx context.Context, id string) (string, error)
	// Embed runs an embed's statement as sql.SelectBlocksRawStmt does
	// (page 1, limit rows unless the statement says otherwise): the ids
	// of the blocks it finds, in order.
	Embed(ctx context.Context, stmt string, limit int) ([]string, error)
	// AttributeView is the table a database block exports as; nil keeps
	// the block as it is.
	AttributeView(ctx context.Context, tree *parse.Tree, n *ast.Node) (*ast.Node, error)
	// Annotation is an asset's annotation file (<asset>.sya), nil when
	// there is none.
	Annotation(ctx context.Context, box, asset string) ([]byte, error)
}

// Settings are the values of SiYuan's configuration the export reads.
type Settings struct {
	RefMode   int // conf.export.blockRefMode: the refMode argument's default
	EmbedMode int // conf.export.blockEmbedMode: the embedMode argument's default
	// AddTitle is conf.export.addTitle: the addTitle argument's default,
	// and what adjustHeadingLevel reads whatever the argument says.
	AddTitle              bool
	RefTextLeft           string // conf.export.blockRefTextLeft
	RefTextRight          string // conf.export.blockRefTextRight
	TagOpen, TagClose     string // conf.export.tagOpenMarker, tagCloseMarker
	FileAnnotationRefMode int    // conf.export.fileAnnotationRefMode
	InlineMemo            bool   // conf.export.inlineMemo
	AnchorMaxLen          int    // conf.editor.blockRefDynamicAnchorTextMaxLen
	HeadingEmbedMode      int    // conf.editor.headingEmbedMode
	SearchLimit           int    // conf.search.limit
}

// DefaultSettings are a new SiYuan 3.7.3 workspace's.
func DefaultSettings() Settings {
	return Settings{RefMode: 4, EmbedMode: 1, AddTitle: true, TagOpen: "#", TagClose: "#", AnchorMaxLen: 96, SearchLimit: 64}
}

// Options are exportMdContent's arguments (refMode, embedMode, yfm,
// addTitle, imgTag, adjustHeadingLevel), filled with the settings' defaults.
type Options struct {
	RefMode, EmbedMode int
	YFM, AddTitle      bool
	ImgTag             bool
	AdjustHeadingLevel bool
}

// Export is exportMdContent: the block id (a document, or a block with its
// heading's children) as standard Markdown. found is false when no block
// has the id (SiYuan answers empty strings then). Errors are the Source's:
// where SiYuan skips what it cannot load, an export here fails rather than
// leave something out silently.
func Export(ctx context.Context, src Source, s Settings, o Options, id string) (content string, found bool, err error) {
	x := &exporter{ctx: ctx, src: src, s: s, o: o}
	defer func() {
		// A Source's failure ends the walks by panicking with abort; Lute
		// itself panics on some malformed input (an IAL id it slices by
		// position): either way the export fails, and nothing else does.
		if r := recover(); r != nil {
			content, found = "", false
			if e, ok := r.(abort); ok {
				err = e.err
				return
			}
			err = fmt.Errorf("the export failed: %v", r)
		}
	}()
	tree, node := x.load(id)
	if tree == nil {
		return "", false, nil
	}
	docIAL := parse.IAL2Map(tree.Root.KramdownIAL)
	isDoc := node == tree.Root
	if !isDoc {
		// prepareExportTree: the block (with a heading's children) in a
		// new tree that keeps the document's attributes.
		nodes := []*ast.Node{node}
		if node.Type == ast.NodeHeading {
			nodes = append(nodes, HeadingChildren(node)...)
		}
		l := NewLute()
		ret := parse.Parse("", []byte(""), l.ParseOptions)
		first := ret.Root.FirstChild
		for _, n := range nodes {
			first.InsertBefore(n)
		}
		ret.Root.KramdownIAL = tree.Root.KramdownIAL
		ret.Box, ret.Path, ret.HPath, ret.ID = tree.Box, tree.Path, tree.HPath, tree.ID
		tree = ret
	}
	x.exportTree(tree)
	if o.AdjustHeadingLevel && !isDoc {
		adjustHeadingLevel(tree, s.AddTitle)
	}
	l := NewLute()
	l.SetFootnotes(true)
	l.SetKramdownIAL(false)
	l.SetExportNormalizeTaskListMarker(true)
	var unlinks []*ast.Node
	ast.Walk(tree.Root, func(n *ast.Node, entering bool) ast.WalkStatus {
		// <br /> outside tables becomes a line break.
		if entering && n.Type == ast.NodeBr && !n.ParentIs(ast.NodeTableCell) {
			n.InsertBefore(&ast.Node{Type: ast.NodeText, Tokens: []byte("\n")})
			unlinks = append(unlinks, n)
		}
		return ast.WalkContinue
	})
	for _, n := range unlinks {
		n.Unlink()
	}
	l.SetUnorderedListMarker("-")
	l.SetImgTag(o.ImgTag)
	content = string(render.NewProtyleExportMdRenderer(tree, l.RenderOptions, l.ParseOptions).Render())
	if o.YFM {
		content = YFM(docIAL) + content
	}
	return content, true, nil
}

// abort carries a Source's error out of the walks, which cannot return one.
type abort struct{ err error }

type exporter struct {
	ctx context.Context
	src Source
	s   Settings
	o   Options
}

func (x *exporter) fail(err error) { panic(abort{err}) }

// load is the Source's Block; its failure ends the export.
func (x *exporter) load(id string) (*parse.Tree, *ast.Node) {
	t, n, err := x.src.Block(x.ctx, id)
	if err != nil {
		x.fail(fmt.Errorf("load block %s: %w", id, err))
	}
	if t == nil || n == nil {
		return nil, nil
	}
	return t, n
}

func (x *exporter) refText(id string) string {
	s, err := x.src.RefText(x.ctx, id)
	if err != nil {
		x.fail(fmt.Errorf("ref text of %s: %w", id, err))
	}
	return s
}

// footnote is one reference turned into a footnote (refAsFootnotes).
type footnote struct{ num, anchor string }

// exportTree is the kernel's exportTree for Markdown (not WYSIWYG, folds
// removed, hidden database columns kept, single file).
func (x *exporter) exportTree(tree *parse.Tree) {
	id := tree.Root.ID
	l := NewLute()
	depth := 0
	x.resolveEmbeds(tree.Root, l, &[]string{}, &depth)
	blockLink2Ref(tree.Root)

	var order []string
	feet := map[string]*footnote{}
	if x.o.RefMode == 4 {
		depth = 0
		x.collectFootnotes(tree, tree.ID, &order, feet, &depth)
	}
	inTree := map[string]bool{}
	ast.Walk(tree.Root, func(n *ast.Node, entering bool) ast.WalkStatus {
		if entering && n.ID != "" {
			inTree[n.ID] = true
		}
		return ast.WalkContinue
	})

	var unlinks []*ast.Node
	ast.Walk(tree.Root, func(n *ast.Node, entering bool) ast.WalkStatus {
		if !entering {
			return ast.WalkContinue
		}
		switch n.Type {
		case ast.NodeSuperBlockOpenMarker, ast.NodeSuperBlockLayoutMarker, ast.NodeSuperBlockCloseMarker:
			unlinks = append(unlinks, n)
			return ast.WalkContinue
		case ast.NodeHeading:
			n.SetIALAttr("id", n.ID)
		case ast.NodeMathBlockContent:
			n.Tokens = bytes.TrimSpace(n.Tokens)
			return ast.WalkContinue
		case ast.NodeTextMark:
			if n.IsTextMarkType("inline-memo") && !x.s.InlineMemo {
				n.TextMarkInlineMemoContent = ""
			}
			switch {
			case n.IsTextMarkType("inline-math"):
				n.TextMarkInlineMathContent = strings.TrimSpace(n.TextMarkInlineMathContent)
				return ast.WalkContinue
			case n.IsTextMarkType("file-annotation-ref"):
				refID := n.TextMarkFileAnnotationRefID
				if !strings.Contains(refID, "/") {
					return ast.WalkSkipChildren
				}
				status := x.fileAnnotationRef(refID, n, tree.Box)
				unlinks = append(unlinks, n)
				return status
			case n.IsTextMarkType("tag"):
				n.Type = ast.NodeText
				n.Tokens = []byte(x.s.TagOpen + n.TextMarkTextContent + x.s.TagClose)
				return ast.WalkContinue
			}
		}
		if !isBlockRef(n) {
			return ast.WalkContinue
		}
		defID, text := x.refLinkText(n)
		switch x.o.RefMode {
		case 2: // anchor text linking to siyuan://blocks/<id>
			link := &ast.Node{Type: ast.NodeTextMark, TextMarkTextContent: text, TextMarkAHref: "siyuan://blocks/" + defID}
			link.KramdownIAL = n.KramdownIAL
			link.TextMarkType = "a " + n.TextMarkType
			link.TextMarkInlineMemoContent = n.TextMarkInlineMemoContent
			n.InsertBefore(link)
			unlinks = append(unlinks, n)
		case 3: // anchor text only
			t := &ast.Node{Type: ast.NodeTextMark, TextMarkType: strings.TrimSpace(strings.ReplaceAll(n.TextMarkType, "block-ref", "")), TextMarkTextContent: text}
			t.KramdownIAL = n.KramdownIAL
			t.TextMarkInlineMemoContent = n.TextMarkInlineMemoContent
			n.InsertBefore(t)
			unlinks = append(unlinks, n)
		case 4: // footnotes; an anchor hash for a block of this document
			if inTree[defID] {
				n.TextMarkType = "a " + n.TextMarkType
				n.TextMarkTextContent = text
				n.TextMarkAHref = "#" + defID
				return ast.WalkContinue
			}
			f := feet[defID]
			if f == nil {
				return ast.WalkContinue
			}
			t := &ast.Node{Type: ast.NodeText, Tokens: []byte(text)}
			if n.TextMarkType != "block-ref" {
				t.Type = ast.NodeTextMark
				t.TextMarkType = strings.TrimSpace(strings.ReplaceAll(n.TextMarkType, "block-ref", ""))
				t.TextMarkTextContent = text
				t.TextMarkInlineMemoContent = n.TextMarkInlineMemoContent
			}
			n.InsertBefore(t)
			n.InsertBefore(footnoteRef(f.num))
			unlinks = append(unlinks, n)
		}
		return ast.WalkSkipChildren
	})
	for _, n := range unlinks {
		n.Unlink()
	}

	if x.o.RefMode == 4 {
		if defs := x.footnoteDefs(order, feet, tree, inTree); defs != nil {
			// Definitions no reference uses any more are dropped.
			refs := tree.Root.ChildrenByType(ast.NodeFootnotesRef)
			for d := defs.FirstChild; d != nil; d = d.Next {
				refs = append(refs, d.ChildrenByType(ast.NodeFootnotesRef)...)
			}
			var unused []*ast.Node
			for d := defs.FirstChild; d != nil; d = d.Next {
				if !slices.ContainsFunc(refs, func(r *ast.Node) bool { return r.FootnotesRefId == d.FootnotesRefId }) {
					unused = append(unused, d)
				}
			}
			for _, d := range unused {
				d.Unlink()
			}
			tree.Root.AppendChild(defs)
		}
	}

	if x.o.AddTitle {
		if root := NodeByID(tree.Root, id); root != nil {
			title := &ast.Node{Type: ast.NodeHeading, HeadingLevel: 1}
			for _, kv := range root.KramdownIAL {
				if kv[0] != "type" && kv[0] != "style" {
					title.SetIALAttr(kv[0], kv[1])
				}
			}
			title.AppendChild(&ast.Node{Type: ast.NodeText, Tokens: []byte(html.UnescapeString(root.IALAttr("title")))})
			tree.Root.PrependChild(title)
		}
	}
	// (Without a title, SiYuan adds an anchor span for a document that
	// its own footnotes refer to only when exporting several files.)

	if img := titleImgPath(tree.Root); img != "" {
		p := &ast.Node{Type: ast.NodeParagraph}
		ti := &ast.Node{Type: ast.NodeImage}
		ti.AppendChild(&ast.Node{Type: ast.NodeBang})
		ti.AppendChild(&ast.Node{Type: ast.NodeOpenBracket})
		ti.AppendChild(&ast.Node{Type: ast.NodeLinkText, Tokens: []byte("image")})
		ti.AppendChild(&ast.Node{Type: ast.NodeCloseBracket})
		ti.AppendChild(&ast.Node{Type: ast.NodeOpenParen})
		ti.AppendChild(&ast.Node{Type: ast.NodeLinkDest, Tokens: []byte(img)})
		ti.AppendChild(&ast.Node{Type: ast.NodeCloseParen})
		p.AppendChild(ti)
		tree.Root.PrependChild(p)
	}

	unlinks = nil
	var empty []*ast.Node
	ast.Walk(tree.Root, func(n *ast.Node, entering bool) ast.WalkStatus {
		if !entering {
			return ast.WalkContinue
		}
		n.RemoveIALAttr("fold")
		n.RemoveIALAttr("heading-fold")
		if n.IsBlock() {
			n.RemoveIALAttr("custom-riff-decks")
		}
		switch n.Type {
		case ast.NodeParagraph:
			if n.FirstChild == nil {
				empty = append(empty, n)
			}
		case ast.NodeWidget:
			if md := html.UnescapeString(n.IALAttr("data-export-md")); md != "" {
				wl := NewLute()
				wl.SetYamlFrontMatter(true)
				sub := parse.Parse("", []byte(md), wl.ParseOptions)
				var ins []*ast.Node
				for c := sub.Root.FirstChild; c != nil; c = c.Next {
					if c.Type != ast.NodeKramdownBlockIAL {
						ins = append(ins, c)
					}
				}
				for _, c := range ins {
					n.InsertBefore(c)
				}
				unlinks = append(unlinks, n)
			}
		case ast.NodeSuperBlockOpenMarker, ast.NodeSuperBlockLayoutMarker, ast.NodeSuperBlockCloseMarker:
			unlinks = append(unlinks, n)
		}
		if n.Type == ast.NodeText {
			// Shift+Enter line breaks export as hard breaks.
			n.Tokens = bytes.ReplaceAll(n.Tokens, []byte("\n"), []byte("  \n"))
		}
		return ast.WalkContinue
	})
	for _, n := range unlinks {
		n.Unlink()
	}
	for _, p := range empty {
		p.AppendChild(&ast.Node{Type: ast.NodeText, Tokens: []byte("\u200d")})
	}

	var avs []*ast.Node
	ast.Walk(tree.Root, func(n *ast.Node, entering bool) ast.WalkStatus {
		if entering && n.Type == ast.NodeAttributeView {
			avs = append(avs, n)
		}
		return ast.WalkContinue
	})
	for _, n := range avs {
		table, err := x.src.AttributeView(x.ctx, tree, n)
		if err != nil {
			x.fail(fmt.Errorf("database %s: %w", n.AttributeViewID, err))
		}
		if table != nil {
			n.InsertBefore(table)
			n.Unlink()
		}
	}
}

// refLinkText is getExportBlockRefLinkText: the ref's block and the text
// it exports as (its anchor, else the index's, cut at the anchor length).
func (x *exporter) refLinkText(n *ast.Node) (defID, text string) {
	defID, text = refOf(n)
	if text == "" {
		text = x.refText(defID)
	}
	text = html.UnescapeString(text)
	text = cut(text, x.s.AnchorMaxLen)
	return defID, x.s.RefTextLeft + text + x.s.RefTextRight
}

// cut is SiYuan's anchor truncation: at most max runes, then "...".
func cut(s string, max int) string {
	if utf8.RuneCountInString(s) > max {
		return string([]rune(s)[:max]) + "..."
	}
	return s
}

func isBlockRef(n *ast.Node) bool {
	return n != nil && (n.Type == ast.NodeTextMark && n.IsTextMarkType("block-ref") || n.Type == ast.NodeBlockRef)
}

func isBlockLink(n *ast.Node) bool {
	return n != nil && n.Type == ast.NodeTextMark && n.IsTextMarkType("a") && strings.HasPrefix(n.TextMarkAHref, "siyuan://blocks/")
}

// refOf is treenode.GetBlockRef: a ref's block and anchor text.
func refOf(n *ast.Node) (id, text string) {
	if !isBlockRef(n) {
		return "", ""
	}
	return n.TextMarkBlockRefID, n.TextMarkTextContent
}

func footnoteRef(num string) *ast.Node {
	return &ast.Node{Type: ast.NodeFootnotesRef, Tokens: []byte("^" + num), FootnotesRefId: num, FootnotesRefLabel: []byte("^" + num)}
}

// blockLink2Ref makes the document's siyuan://blocks/ links refs.
func blockLink2Ref(root *ast.Node) {
	ast.Walk(root, func(n *ast.Node, entering bool) ast.WalkStatus {
		if entering && isBlockLink(n) {
			n.TextMarkType = strings.TrimSpace(strings.TrimPrefix(n.TextMarkType, "a") + " block-ref")
			n.TextMarkBlockRefID = strings.TrimPrefix(n.TextMarkAHref, "siyuan://blocks/")
			n.TextMarkBlockRefSubtype = "s"
		}
		return ast.WalkContinue
	})
}

// adjustHeadingLevel is the kernel's for a block's export: the first
// heading (after the title when conf.export.addTitle is on) and the
// headings under it move so that it is h1 (h2 after a title).
func adjustHeadingLevel(tree *parse.Tree, confAddTitle bool) {
	level := 1
	var first *ast.Node
	start := tree.Root.FirstChild
	if confAddTitle {
		if start != nil {
			start = start.Next
		}
		level = 2
	}
	for n := start; n != nil; n = n.Next {
		if n.Type == ast.NodeHeading && !n.ParentIs(ast.NodeBlockquote) && !n.ParentIs(ast.NodeCallout) {
			first = n
			break
		}
	}
	if first == nil {
		return
	}
	diff := level - first.HeadingLevel
	var headings []*ast.Node
	for _, c := range append([]*ast.Node{first}, HeadingChildren(first)...) {
		headings = append(headings, c.ChildrenByType(ast.NodeHeading)...)
	}
	for _, h := range headings {
		h.HeadingLevel = min(max(h.HeadingLevel+diff, 1), 6)
	}
}

// titleImgPath is treenode.GetDocTitleImgPath: the document's title image.
func titleImgPath(root *ast.Node) string {
	const background = "background-image: url("
	img := strings.TrimSpace(root.IALAttr("title-img"))
	img = html.UnescapeString(img)
	img = strings.ReplaceAll(img, "background-image:url(", background)
	if !strings.Contains(img, background) {
		return ""
	}
	start := strings.Index(img, background) + len(background)
	end := strings.LastIndex(img, ")")
	if end < start {
		return ""
	}
	ret := img[start:end]
	ret = strings.TrimPrefix(ret, "\"")
	ret = strings.TrimPrefix(ret, "'")
	ret = strings.TrimSuffix(ret, "\"")
	return strings.TrimSuffix(ret, "'")
}

// YFM is the kernel's yfm(): YAML front matter with the title, date (from
// the id), lastmod (from updated) and tags.
func YFM(ial map[string]string) string {
	var title, created, updated, tags string
	for k, v := range ial {
		switch k {
		case "id":
			if t, err := time.ParseInLocation("20060102150405", timeFromID(v), time.Local); err == nil {
				created = t.Format(time.RFC3339)
			}
		case "title":
			title = v
		case "updated":
			if t, err := time.ParseInLocation("20060102150405", v, time.Local); err == nil {
				updated = t.Format(time.RFC3339)
			}
		case "tags":
			tags = v
		}
	}
	var b strings.Builder
	b.WriteString("---\n")
	if title != "" {
		b.WriteString("title: " + title + "\n")
	}
	if updated == "" {
		updated = time.Now().Format(time.RFC3339)
	}
	if created == "" {
		created = updated
	}
	b.WriteString("date: " + created + "\n")
	b.WriteString("lastmod: " + updated + "\n")
	if tags != "" {
		b.WriteString("tags:\n")
		for _, t := range strings.Split(tags, ",") {
			b.WriteString("  - '" + strings.ReplaceAll(t, "'", "''") + "'\n")
		}
	}
	b.WriteString("---\n\n")
	return b.String()
}

// timeFromID is util.TimeFromID: the first 14 characters of an id.
func timeFromID(id string) string {
	if len(id) < 14 {
		return time.Now().Format("20060102150405")
	}
	return id[:14]
}

// fileAnnotationRef is processFileAnnotationRef: a PDF annotation ref
// becomes a link to its page.
func (x *exporter) fileAnnotationRef(refID string, n *ast.Node, box string) ast.WalkStatus {
	p := refID[:strings.LastIndex(refID, "/")]
	data, err := x.src.Annotation(x.ctx, box, p)
	if err != nil {
		x.fail(fmt.Errorf("annotations of %s: %w", p, err))
	}
	if data == nil {
		return ast.WalkSkipChildren
	}
	page, ok := annotationPage(data, refID[strings.LastIndex(refID, "/")+1:])
	if !ok {
		return ast.WalkSkipChildren
	}
	pageStr := strconv.Itoa(page)
	ext := path.Ext(p)
	text := n.TextMarkTextContent
	if x.s.FileAnnotationRefMode == 0 && len(p) >= 7+23+len(ext) {
		text = p[7:len(p)-23-len(ext)] + ext + " - p" + pageStr + " - " + text
	}
	link := &ast.Node{Type: ast.NodeLink}
	link.AppendChild(&ast.Node{Type: ast.NodeOpenBracket})
	link.AppendChild(&ast.Node{Type: ast.NodeLinkText, Tokens: []byte(text)})
	link.AppendChild(&ast.Node{Type: ast.NodeCloseBracket})
	link.AppendChild(&ast.Node{Type: ast.NodeOpenParen})
	link.AppendChild(&ast.Node{Type: ast.NodeLinkDest, Tokens: []byte(p + "#page=" + pageStr)})
	link.AppendChild(&ast.Node{Type: ast.NodeCloseParen})
	n.InsertBefore(link)
	return ast.WalkSkipChildren
}
