package embedded

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"io/fs"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/88250/lute/ast"
	"github.com/88250/lute/parse"
	"github.com/88250/lute/render"
	luteutil "github.com/88250/lute/util"
	"github.com/Masterminds/sprig/v3"
	"github.com/araddon/dateparse"
	"github.com/dustin/go-humanize"
	"github.com/spf13/cast"
	"github.com/xrash/smetrics"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/mdexport"
	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// Templates: SiYuan keeps them as Markdown files under data/templates/
// (a folder is a group), renders them with Go's text/template and finds
// them by name. This file is SiYuan 3.7.3's template engine as far as the
// kernel API shows it:
//
//   - renderSprig renders {{…}} with no data; render renders a template
//     file with the .action{…} delimiters and the data .id, .title (a
//     document's title, else the block's name), .name and .alias of a
//     block, then parses the result as kramdown, gives every block a new id
//     and an updated time, and answers it as block DOM.
//   - Functions: sprig's (text/template set, the same version SiYuan pins)
//     without env, expandenv and getHostByName; now (one instant per
//     render); SiYuan's Weekday, WeekdayCN, WeekdayCN2, ISOWeek, ISOYear,
//     ISOMonth, ISOWeekDate, pow, powf, log, logf, parseTime, FormatFloat,
//     getHPathByID, runeCount, wordCount, markdown2text, markdown2content;
//     and the SQL helpers querySQL (any single statement, as in SiYuan not
//     read-only), queryBlocks (with ? arguments, at most 512 blocks, each
//     with SiYuan's sql.Block field names: .ID, .Content, .HPath…) and
//     getBlock (an id, or a map with "id"). They run on the SQL index, which
//     lags writes as SiYuan's does.
//
// Not supported: statBlock, countif and querySpans are not defined (a
// template using them fails to parse, naming the function); databases in
// templates (SiYuan clones them, and previews them as tables); the
// emoji/custom-emoji table; a block ref with empty anchor text is given the
// target's content from the block tree rather than SiYuan's ref-text
// rules. queryBlocks scans whatever columns the statement returns.

// countIf is SiYuan's util.CountIf (the countif helper): how many numbers
// of a list compare with threshold as op (gt, lt, eq, ge, le) says; what
// is not a number is skipped.
func countIf(list any, op string, threshold any) int {
	num := func(v any) (float64, bool) {
		switch x := v.(type) {
		case float64:
			return x, true
		case float32:
			return float64(x), true
		case int:
			return float64(x), true
		case int64:
			return float64(x), true
		case string:
			f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
			return f, err == nil
		}
		return 0, false
	}
	t, ok := num(threshold)
	v := reflect.ValueOf(list)
	if !ok || v.Kind() != reflect.Slice && v.Kind() != reflect.Array {
		return 0
	}
	n := 0
	for i := 0; i < v.Len(); i++ {
		e, ok := num(v.Index(i).Interface())
		if !ok {
			continue
		}
		switch op {
		case "gt":
			ok = e > t
		case "lt":
			ok = e < t
		case "eq":
			ok = e == t
		case "ge":
			ok = e >= t
		case "le":
			ok = e <= t
		default:
			ok = false
		}
		if ok {
			n++
		}
	}
	return n
}

// templateSpan is SiYuan's sql.Span, as querySpans hands it to templates.
type templateSpan struct {
	ID, BlockID, RootID, Box, Path, Content, Markdown, Type, IAL string
}

// templateStat is SiYuan's util.BlockStatResult, statBlock's answer.
type templateStat struct {
	RuneCount, WordCount, LinkCount, ImageCount, RefCount, BlockCount int
}

// templateBlock is SiYuan's sql.Block, as queryBlocks and getBlock hand it
// to templates (field names matter, tags do not).
type templateBlock struct {
	ID       string
	ParentID string
	RootID   string
	Hash     string
	Box      string
	Path     string
	HPath    string
	Name     string
	Alias    string
	Memo     string
	Tag      string
	Content  string
	FContent string
	Markdown string
	Length   int
	Type     string
	SubType  string
	IAL      string
	Sort     int
	Created  string
	Updated  string
}

func templateBlockOf(r map[string]any) *templateBlock {
	s := func(k string) string { return cast.ToString(r[k]) }
	return &templateBlock{ID: s("id"), ParentID: s("parent_id"), RootID: s("root_id"), Hash: s("hash"), Box: s("box"),
		Path: s("path"), HPath: s("hpath"), Name: s("name"), Alias: s("alias"), Memo: s("memo"), Tag: s("tag"),
		Content: s("content"), FContent: s("fcontent"), Markdown: s("markdown"), Length: cast.ToInt(r["length"]),
		Type: s("type"), SubType: s("subtype"), IAL: s("ial"), Sort: cast.ToInt(r["sort"]), Created: s("created"),
		Updated: s("updated")}
}

// templateFuncs is SiYuan's BuiltInTemplateFuncs plus SQLTemplateFuncs.
func (k *Kernel) templateFuncs(ctx context.Context, now time.Time) template.FuncMap {
	f := sprig.TxtFuncMap()
	delete(f, "env")
	delete(f, "expandenv")
	delete(f, "getHostByName")
	f["now"] = func() time.Time { return now }
	f["Weekday"] = func(d time.Time) int { return int(d.Weekday()) }
	f["WeekdayCN"] = func(d time.Time) string {
		return []string{"日", "一", "二", "三", "四", "五", "六"}[d.Weekday()]
	}
	f["WeekdayCN2"] = func(d time.Time) string {
		return []string{"天", "一", "二", "三", "四", "五", "六"}[d.Weekday()]
	}
	f["ISOWeek"] = func(d time.Time) int { _, w := d.ISOWeek(); return w }
	f["ISOYear"] = func(d time.Time) int { y, _ := d.ISOWeek(); return y }
	f["ISOMonth"] = func(d time.Time) int {
		// The month of the Thursday of d's ISO week.
		wd := int(d.Weekday())
		if wd == 0 {
			wd = 7
		}
		return int(d.AddDate(0, 0, 4-wd).Month())
	}
	f["ISOWeekDate"] = func(day int, d time.Time) time.Time {
		wd := int(d.Weekday())
		if wd == 0 {
			wd = 7
		}
		return d.AddDate(0, 0, -(wd-1)).AddDate(0, 0, day-1)
	}
	f["pow"] = func(a, b any) int64 { return int64(math.Pow(cast.ToFloat64(a), cast.ToFloat64(b))) }
	f["powf"] = func(a, b any) float64 { return math.Pow(cast.ToFloat64(a), cast.ToFloat64(b)) }
	f["log"] = func(a, b any) int64 { return int64(math.Log(cast.ToFloat64(a)) / math.Log(cast.ToFloat64(b))) }
	f["logf"] = func(a, b any) float64 { return math.Log(cast.ToFloat64(a)) / math.Log(cast.ToFloat64(b)) }
	f["parseTime"] = func(s string) time.Time {
		n := time.Now()
		t, err := dateparse.ParseIn(s, n.Location())
		if err != nil {
			return n
		}
		return t
	}
	f["FormatFloat"] = func(format string, n float64) string { return humanize.FormatFloat(format, n) }
	f["getHPathByID"] = func(id string) string {
		loc, ok := k.lookup(id)
		if !ok {
			return ""
		}
		d, ok := k.doc(loc.Root)
		if !ok {
			return ""
		}
		return d.tree.HPath
	}
	f["runeCount"] = func(s string) int { r, _ := luteutil.WordCount(s); return r }
	f["wordCount"] = func(s string) int { _, w := luteutil.WordCount(s); return w }
	f["markdown2text"] = func(md string) string {
		return parse.Parse("", []byte(md), mdexport.NewLute().ParseOptions).Root.Text()
	}
	f["markdown2content"] = func(md string) string {
		return parse.Parse("", []byte(md), mdexport.NewLute().ParseOptions).Root.Content()
	}
	f["queryBlocks"] = func(stmt string, args ...string) []*templateBlock {
		for _, a := range args {
			stmt = strings.Replace(stmt, "?", a, 1)
		}
		rows, err := k.sql.query(ctx, stmt, 512, false)
		if err != nil {
			return nil
		}
		var ret []*templateBlock
		for _, r := range rows {
			ret = append(ret, templateBlockOf(r))
		}
		return ret
	}
	f["getBlock"] = func(arg any) *templateBlock {
		var id string
		switch v := arg.(type) {
		case string:
			id = v
		case map[string]any:
			id, _ = v["id"].(string)
		}
		if id == "" {
			return nil
		}
		rows, err := k.sql.query(ctx, "SELECT * FROM blocks WHERE id = '"+strings.ReplaceAll(id, "'", "''")+"'", 1, false)
		if err != nil || len(rows) == 0 {
			return nil
		}
		return templateBlockOf(rows[0])
	}
	f["countif"] = countIf
	f["querySpans"] = func(stmt string, args ...string) []*templateSpan {
		for _, a := range args {
			stmt = strings.Replace(stmt, "?", a, 1)
		}
		// SiYuan's SelectSpansRawStmt runs a SELECT and nothing else.
		if info := sqlScan(stmt); info.multiple || !sqlIsQuery(info) {
			return nil
		}
		rows, err := k.sql.query(ctx, stmt, 512, true)
		if err != nil {
			return nil
		}
		var ret []*templateSpan
		for _, r := range rows {
			str := func(k string) string { v, _ := r[k].(string); return v }
			ret = append(ret, &templateSpan{ID: str("id"), BlockID: str("block_id"), RootID: str("root_id"), Box: str("box"),
				Path: str("path"), Content: str("content"), Markdown: str("markdown"), Type: str("type"), IAL: str("ial")})
		}
		return ret
	}
	f["statBlock"] = func(id string) *templateStat {
		tree, node, err := k.loadTreeOf(id)
		if err != nil {
			return nil
		}
		if node.Type != ast.NodeDocument {
			r, w, l, i, refs := node.Stat()
			return &templateStat{RuneCount: r, WordCount: w, LinkCount: l, ImageCount: i, RefCount: refs, BlockCount: 1}
		}
		// A document counts its blocks (its databases' cells are not
		// counted here, where SiYuan adds their words).
		blocks := 0
		ast.Walk(tree.Root, func(n *ast.Node, entering bool) ast.WalkStatus {
			if entering && n != tree.Root && n.IsBlock() {
				blocks++
			}
			return ast.WalkContinue
		})
		r, w, l, i, refs := tree.Root.Stat()
		return &templateStat{RuneCount: r, WordCount: w, LinkCount: l, ImageCount: i, RefCount: refs, BlockCount: blocks}
	}
	f["querySQL"] = func(stmt string) []map[string]any {
		if info := sqlScan(stmt); info.multiple {
			return nil
		}
		ret, _ := k.sql.query(ctx, stmt, 1024, false)
		return ret
	}
	return f
}

// templateErr is SiYuan's answer to a template that fails to parse or run
// (language string 44), HTML-escaped as its handlers escape messages.
func templateErr(err error) error {
	return errf("%s", searchEscape("Parse template failed: "+err.Error()))
}

// renderSprig is /api/template/renderSprig: {{…}} rendered with no data.
func (k *Kernel) renderSprig(ctx context.Context, a args) (any, error) {
	src, err := a.str("template")
	if err != nil {
		return nil, err
	}
	tpl, err := template.New("").Funcs(k.templateFuncs(ctx, time.Now())).Parse(src)
	if err != nil {
		return nil, templateErr(err)
	}
	var buf bytes.Buffer
	if err := tpl.Execute(&buf, nil); err != nil {
		return nil, templateErr(err)
	}
	return buf.String(), nil
}

// inWorkspace is SiYuan's IsAbsPathInWorkspace: an absolute path strictly
// inside the workspace (lexically).
func (k *Kernel) inWorkspace(p string) bool {
	return filepath.IsAbs(p) && isSubPath(k.dir, filepath.Clean(p))
}

// renderTemplate is /api/template/render (id, path: the template's absolute
// path, any file in the workspace; preview). It writes nothing here: this
// kernel has no databases to clone.
func (k *Kernel) renderTemplate(ctx context.Context, a args) (any, error) {
	p, err := a.str("path")
	if err != nil {
		return nil, err
	}
	id, err := a.str("id")
	if err != nil {
		return nil, err
	}
	if !validID(id) {
		return nil, errf("invalid ID argument")
	}
	if !k.inWorkspace(p) {
		return nil, errf("%s", searchEscape("Path ["+p+"] is not in workspace"))
	}
	if _, err := a.optBool("preview"); err != nil {
		return nil, err
	}
	d, err := k.docOfBlock(id)
	if err != nil {
		return nil, err
	}
	node := mdexport.NodeByID(d.tree.Root, id)
	if node == nil {
		return nil, errf("block not found")
	}
	md, err := os.ReadFile(p)
	if err != nil {
		return nil, errf("%s", searchEscape(err.Error()))
	}
	data := map[string]string{"name": node.IALAttr("name"), "alias": node.IALAttr("alias"), "id": id, "title": node.IALAttr("name")}
	if node.Type == ast.NodeDocument {
		data["title"] = node.IALAttr("title")
	}
	tpl, err := template.New("").Delims(".action{", "}").Funcs(k.templateFuncs(ctx, time.Now())).Parse(string(md))
	if err != nil {
		return nil, templateErr(err)
	}
	var buf bytes.Buffer
	if err := tpl.Execute(&buf, data); err != nil {
		return nil, templateErr(err)
	}
	tree := parseKTree(buf.Bytes())
	k.prepareTemplateTree(tree)
	l := mdexport.NewLute()
	dom := l.Tree2BlockDOM(tree, l.RenderOptions, l.ParseOptions)
	return map[string]any{"path": p, "content": dom}, nil
}

// parseKTree is SiYuan's parseKTree: kramdown to a tree, normalised as
// SiYuan normalises imported Markdown (every block gets an id and an IAL,
// empty IALs stay as empty paragraphs, inline HTML becomes text).
func parseKTree(md []byte) *parse.Tree {
	l := mdexport.NewLute()
	tree := parse.Parse("", md, l.ParseOptions)
	if tree.Root.FirstChild == nil {
		tree.Root.AppendChild(newParagraphWithID(""))
	} else if !tree.Root.FirstChild.IsBlock() || tree.Root.FirstChild.Type == ast.NodeKramdownBlockIAL {
		tree.Root.PrependChild(newParagraphWithID(""))
	}
	ast.Walk(tree.Root, func(n *ast.Node, entering bool) ast.WalkStatus {
		if !entering {
			return ast.WalkContinue
		}
		if n.IsEmptyBlockIAL() {
			p := &ast.Node{Type: ast.NodeParagraph}
			p.KramdownIAL = parse.Tokens2IAL(n.Tokens)
			p.ID = p.IALAttr("id")
			n.InsertBefore(p)
			return ast.WalkContinue
		}
		if n.IALAttr("id") == "" && n.IsBlock() {
			n.SetIALAttr("id", n.ID)
		}
		if n.IALAttr("id") == "" && kTreeBlockTypes[n.Type] {
			n.ID = ast.NewNodeID()
			n.KramdownIAL = [][]string{{"id", n.ID}}
			n.InsertAfter(&ast.Node{Type: ast.NodeKramdownBlockIAL, Tokens: []byte(`{: id="` + n.ID + `"}`)})
			n.SetIALAttr("updated", timeFromID(n.ID))
		}
		if n.ID == "" && len(n.KramdownIAL) > 0 && n.Type != ast.NodeDocument {
			n.ID = n.IALAttr("id")
		}
		switch {
		case n.Type == ast.NodeHTMLBlock:
			tokens := bytes.TrimSpace(n.Tokens)
			if !bytes.HasPrefix(tokens, []byte("<div>")) {
				tokens = append([]byte("<div>\n"), tokens...)
			}
			if !bytes.HasSuffix(tokens, []byte("</div>")) {
				tokens = append(tokens, []byte("\n</div>")...)
			}
			n.Tokens = tokens
		case n.Type == ast.NodeInlineHTML:
			n.Type = ast.NodeText
		case n.Type == ast.NodeParagraph && n.FirstChild != nil && n.FirstChild.Type == ast.NodeTaskListItemMarker:
			if n.FirstChild.Next != nil {
				n.FirstChild.Next.Tokens = bytes.TrimLeft(n.FirstChild.Next.Tokens, " ")
			}
			n.InsertBefore(n.FirstChild)
		case n.Type == ast.NodeLinkTitle:
			n.Tokens = []byte(html.UnescapeString(string(n.Tokens)))
		}
		return ast.WalkContinue
	})
	return tree
}

var kTreeBlockTypes = map[ast.NodeType]bool{
	ast.NodeParagraph: true, ast.NodeList: true, ast.NodeListItem: true, ast.NodeBlockquote: true,
	ast.NodeMathBlock: true, ast.NodeCodeBlock: true, ast.NodeHeading: true, ast.NodeTable: true,
	ast.NodeThematicBreak: true, ast.NodeYamlFrontMatter: true, ast.NodeBlockQueryEmbed: true,
	ast.NodeSuperBlock: true, ast.NodeAttributeView: true, ast.NodeHTMLBlock: true, ast.NodeIFrame: true,
	ast.NodeWidget: true, ast.NodeAudio: true, ast.NodeVideo: true, ast.NodeCallout: true,
}

// prepareTemplateTree is the rest of SiYuan's RenderTemplate: new ids (refs
// between the template's own blocks follow them), updated times, an empty
// paragraph in empty list items, quotes and callouts, folded headings'
// blocks marked status="temp", a dynamic icon unescaped.
func (k *Kernel) prepareTemplateTree(tree *parse.Tree) {
	var needChild, unlinks []*ast.Node
	ids := map[string]string{}
	stamp := nowStamp()
	ast.Walk(tree.Root, func(n *ast.Node, entering bool) ast.WalkStatus {
		if !entering {
			return ast.WalkContinue
		}
		if n.ID != "" {
			old := n.ID
			n.ID = ast.NewNodeID()
			ids[old] = n.ID
			n.SetIALAttr("id", n.ID)
			n.RemoveIALAttr("custom-avs")
			n.SetIALAttr("updated", stamp)
			for p := n.Parent; p != nil; p = p.Parent {
				if p.IsBlock() && p.Type != ast.NodeDocument {
					p.SetIALAttr("updated", stamp)
				}
			}
		}
		if (n.Type == ast.NodeListItem && (n.FirstChild == nil ||
			(n.ListData.Typ == 3 && (n.FirstChild.Next == nil || n.FirstChild.Next.Type == ast.NodeKramdownBlockIAL)))) ||
			(n.Type == ast.NodeBlockquote && n.FirstChild != nil && n.FirstChild.Next != nil && n.FirstChild.Next.Type == ast.NodeKramdownBlockIAL) ||
			(n.Type == ast.NodeCallout && n.FirstChild != nil && n.FirstChild.Type == ast.NodeKramdownBlockIAL) {
			needChild = append(needChild, n)
		}
		if n.IsTextMarkType("inline-math") && n.ParentIs(ast.NodeTableCell) {
			n.TextMarkInlineMathContent = strings.ReplaceAll(n.TextMarkInlineMathContent, "|", "&#124;")
		}
		return ast.WalkContinue
	})
	ast.Walk(tree.Root, func(n *ast.Node, entering bool) ast.WalkStatus {
		if !entering {
			return ast.WalkContinue
		}
		switch {
		case n.IsTextMarkType("block-ref"):
			if nid, ok := ids[n.TextMarkBlockRefID]; ok {
				n.TextMarkBlockRefID = nid
			} else if strings.TrimSpace(n.TextMarkTextContent) == "" {
				if text := k.exportRefText(n.TextMarkBlockRefID); strings.TrimSpace(text) != "" {
					n.TextMarkTextContent = strings.TrimSpace(text)
					n.TextMarkBlockRefSubtype = "d"
				} else {
					unlinks = append(unlinks, n)
				}
			}
		case n.IsTextMarkType("a") && strings.HasPrefix(n.TextMarkAHref, "siyuan://blocks/"):
			if nid, ok := ids[strings.TrimPrefix(n.TextMarkAHref, "siyuan://blocks/")]; ok {
				n.TextMarkAHref = "siyuan://blocks/" + nid
			}
		case n.Type == ast.NodeBlockQueryEmbedScript:
			for o, nid := range ids {
				n.Tokens = bytes.ReplaceAll(n.Tokens, []byte(o), []byte(nid))
			}
		}
		return ast.WalkContinue
	})
	for _, n := range needChild {
		if n.Type == ast.NodeBlockquote {
			n.FirstChild.InsertAfter(newParagraphWithID(""))
		} else {
			n.AppendChild(newParagraphWithID(""))
		}
	}
	for _, n := range unlinks {
		n.Unlink()
	}
	ast.Walk(tree.Root, func(n *ast.Node, entering bool) ast.WalkStatus {
		if entering && n.IALAttr("heading-fold") == "1" {
			n.SetIALAttr("status", "temp")
		}
		return ast.WalkContinue
	})
	if icon := tree.Root.IALAttr("icon"); icon != "" {
		tree.Root.SetIALAttr("icon", html.UnescapeString(icon))
	}
}

// newParagraphWithID is SiYuan's treenode.NewParagraph: an empty paragraph
// with the given id, or a new one.
func newParagraphWithID(id string) *ast.Node {
	if id == "" {
		id = ast.NewNodeID()
	}
	p := &ast.Node{ID: id, Type: ast.NodeParagraph}
	p.SetIALAttr("id", id)
	p.SetIALAttr("updated", timeFromID(id))
	return p
}

// docSaveAsTemplate is /api/template/docSaveAsTemplate: the document (or a
// block, with a heading's children) as kramdown with block IALs (no updated
// times, template code blocks as paragraphs, the document IAL last with its
// id first) into data/templates/<name>.md, the name filtered as a file name.
// An existing file is code 1 with an empty message unless overwrite; an
// unknown block is code 0 and nothing is written.
func (k *Kernel) docSaveAsTemplate(ctx context.Context, a args) (any, error) {
	id, err := a.str("id")
	if err != nil {
		return nil, err
	}
	name, err := a.str("name")
	if err != nil {
		return nil, err
	}
	ov, ok := a["overwrite"].(bool)
	if !ok {
		return nil, errf("argument [overwrite] must be a boolean")
	}
	loc, found := k.lookup(id)
	if !found {
		return nil, nil
	}
	d, found := k.doc(loc.Root)
	if !found {
		return nil, nil
	}
	tree := cloneTree(d.tree)
	if id != loc.Root {
		node := mdexport.NodeByID(tree.Root, id)
		if node == nil {
			return nil, nil
		}
		nodes := []*ast.Node{node}
		if node.Type == ast.NodeHeading {
			nodes = append(nodes, headingChildren(node)...)
		}
		l := mdexport.NewLute()
		sub := parse.Parse("", []byte(""), l.ParseOptions)
		first := sub.Root.FirstChild
		for _, n := range nodes {
			first.InsertBefore(n)
		}
		sub.Root.KramdownIAL = tree.Root.KramdownIAL
		sub.ID, sub.Box, sub.Path = tree.ID, tree.Box, tree.Path
		tree = sub
	}
	templateIALNodes(tree)
	var unlinks []*ast.Node
	ast.Walk(tree.Root, func(n *ast.Node, entering bool) ast.WalkStatus {
		if !entering {
			return ast.WalkContinue
		}
		switch n.Type {
		case ast.NodeCodeBlockCode, ast.NodeCodeSpanContent, ast.NodeBlockQueryEmbedScript:
			n.Tokens = bytes.ReplaceAll(n.Tokens, []byte("&quot;"), []byte(`"`))
		case ast.NodeTextMark:
			if n.IsTextMarkType("code") {
				n.TextMarkTextContent = strings.ReplaceAll(n.TextMarkTextContent, "&quot;", `"`)
			}
		case ast.NodeCodeBlockFenceInfoMarker:
			if lang := string(n.CodeBlockInfo); lang == "siyuan-template" || lang == "template" {
				unlinks = append(unlinks, n.Parent)
				p := newParagraphWithID(n.Parent.ID)
				p.AppendChild(&ast.Node{Type: ast.NodeText, Tokens: n.Next.Tokens})
				n.Parent.InsertBefore(p)
			}
		}
		return ast.WalkContinue
	})
	for _, n := range unlinks {
		n.Unlink()
	}
	l := mdexport.NewLute()
	md := render.NewFormatRenderer(tree, l.RenderOptions, l.ParseOptions).Render()
	if len(tree.Root.KramdownIAL) > 0 {
		tree.Root.RemoveIALAttr("id")
		tree.Root.KramdownIAL = append([][]string{{"id", tree.Root.ID}}, tree.Root.KramdownIAL...)
		md = append(md, '\n')
		md = append(md, parse.IAL2Tokens(tree.Root.KramdownIAL)...)
	}
	file := truncateFileName(fileNameOnlyFilter(name) + ".md")
	savePath := filepath.Join(k.dataDir, "templates", file)
	if _, err := os.Stat(savePath); err == nil && !ov {
		return nil, &apiError{code: 1}
	}
	if err := writeFileAtomic(savePath, md, 0o644); err != nil {
		return nil, errf("%s", searchEscape(err.Error()))
	}
	return nil, nil
}

// templateIALNodes is SiYuan's addBlockIALNodes(tree, true): every block's
// IAL written out as a node after it, updated removed, embeds on one line,
// HTML blocks wrapped in <div>.
func templateIALNodes(tree *parse.Tree) {
	var blocks []*ast.Node
	ast.Walk(tree.Root, func(n *ast.Node, entering bool) ast.WalkStatus {
		if !entering || !n.IsBlock() {
			return ast.WalkContinue
		}
		if n.Type == ast.NodeBlockQueryEmbed {
			if script := n.ChildByType(ast.NodeBlockQueryEmbedScript); script != nil {
				script.Tokens = bytes.ReplaceAll(script.Tokens, []byte("\n"), []byte(" "))
			}
		} else if n.Type == ast.NodeHTMLBlock {
			n.Tokens = bytes.TrimSpace(n.Tokens)
			if !bytes.HasPrefix(n.Tokens, []byte("<div>")) {
				n.Tokens = append([]byte("<div>\n"), n.Tokens...)
			}
			if !bytes.HasSuffix(n.Tokens, []byte("</div>")) {
				n.Tokens = append(n.Tokens, []byte("\n</div>")...)
			}
		}
		n.RemoveIALAttr("updated")
		if len(n.KramdownIAL) > 0 {
			blocks = append(blocks, n)
		}
		return ast.WalkContinue
	})
	for _, b := range blocks {
		b.InsertAfter(&ast.Node{Type: ast.NodeKramdownBlockIAL, Tokens: parse.IAL2Tokens(b.KramdownIAL)})
	}
}

// templatesDir is data/templates.
func (k *Kernel) templatesDir() string { return filepath.Join(k.dataDir, "templates") }

// templateReadmes is SiYuan's getTemplateReadmePaths: README.md and the
// readme paths a template package's template.json names.
func templateReadmes(dir string) map[string]bool {
	ret := map[string]bool{"README.md": true}
	data, err := os.ReadFile(filepath.Join(dir, "template.json"))
	if err != nil {
		return ret
	}
	var pkg struct {
		Readme map[string]string `json:"readme"`
	}
	if json.Unmarshal(data, &pkg) == nil {
		for _, v := range pkg.Readme {
			if v = strings.TrimSpace(v); v != "" {
				ret[v] = true
			}
		}
	}
	return ret
}

// searchTemplate is /api/search/searchTemplate: the .md files under
// data/templates (README.md and dot files aside) whose name (a group's
// templates: "<group>/<path>") contains every space-separated word of k,
// case-insensitively, best Jaro-Winkler score of the file name first.
func (k *Kernel) searchTemplate(ctx context.Context, a args) (any, error) {
	kw, err := a.str("k")
	if err != nil {
		return nil, err
	}
	ret := []wire.TemplateSearchResult{}
	reply := map[string]any{"k": kw, "templates": ret}
	dir := k.templatesDir()
	groups, err := os.ReadDir(dir)
	if err != nil {
		return reply, nil
	}
	keywords := strings.Fields(strings.TrimSpace(kw))
	type result struct {
		item  wire.TemplateSearchResult
		score float64
	}
	var results []result
	match := func(name, hay string) (float64, bool) {
		score := 0.0
		for _, w := range keywords {
			if !strings.Contains(strings.ToLower(hay), strings.ToLower(w)) {
				return 0, false
			}
			score += smetrics.JaroWinkler(name, w, 0.7, 4)
		}
		return score, true
	}
	mark := func(s string) string {
		if len(keywords) == 0 {
			return s
		}
		return searchMarkTerms(s, keywords, 32)
	}
	for _, g := range groups {
		if strings.HasPrefix(g.Name(), ".") {
			continue
		}
		if g.IsDir() {
			gdir := filepath.Join(dir, g.Name())
			readmes := templateReadmes(gdir)
			filepath.WalkDir(gdir, func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return nil
				}
				name := strings.ToLower(d.Name())
				if strings.HasPrefix(name, ".") {
					if d.IsDir() {
						return filepath.SkipDir
					}
					return nil
				}
				if !strings.HasSuffix(name, ".md") {
					return nil
				}
				rel, err := filepath.Rel(gdir, p)
				if err != nil || readmes[filepath.ToSlash(rel)] {
					return nil
				}
				content := strings.TrimSuffix(strings.TrimPrefix(p, dir), ".md")
				score, ok := match(name, filepath.Join(g.Name(), content))
				if !ok {
					return nil
				}
				relPath, _ := filepath.Rel(dir, p)
				results = append(results, result{wire.TemplateSearchResult{Path: p, RelativePath: filepath.ToSlash(relPath),
					Content: mark(filepath.ToSlash(content))}, score})
				return nil
			})
			continue
		}
		name := strings.ToLower(g.Name())
		if !strings.HasSuffix(name, ".md") || g.Name() == "README.md" {
			continue
		}
		content := strings.TrimSuffix(g.Name(), ".md")
		score, ok := match(name, content)
		if !ok {
			continue
		}
		results = append(results, result{wire.TemplateSearchResult{Path: filepath.Join(dir, g.Name()), RelativePath: g.Name(),
			Content: mark(filepath.ToSlash(content))}, score})
	}
	sort.SliceStable(results, func(i, j int) bool { return results[i].score > results[j].score })
	for _, r := range results {
		ret = append(ret, r.item)
	}
	reply["templates"] = ret
	return reply, nil
}

// removeTemplate is /api/search/removeTemplate: SiYuan removes the path it
// is given, recursively, whatever it is (relative paths against its
// working directory), and answers code 0 also when nothing was there. This
// kernel removes only inside the workspace: an existing path outside it
// (or a relative one) is refused with code 403.
func (k *Kernel) removeTemplate(ctx context.Context, a args) (any, error) {
	p, err := a.str("path")
	if err != nil {
		return nil, err
	}
	if _, err := os.Lstat(p); err != nil {
		return nil, nil
	}
	if !k.inWorkspace(p) {
		return nil, errCode(http.StatusForbidden, "%s", errOutsideWorkspace.Error())
	}
	if err := os.RemoveAll(p); err != nil {
		return nil, errf("%s", err.Error())
	}
	return nil, nil
}
