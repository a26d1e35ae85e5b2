package embedded

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/88250/lute"
	"github.com/88250/lute/ast"
	"github.com/88250/lute/html"
	"github.com/88250/lute/parse"
	"github.com/88250/lute/render"
)

// exportResources is /api/export/exportResources: the given workspace paths
// zipped as temp/export/<random>-<name>.zip, each under <name>/<base name>/,
// as SiYuan's ExportResources lays it out.
func (k *Kernel) exportResources(ctx context.Context, a args) (any, error) {
	name, err := a.optStr("name")
	if err != nil {
		return nil, err
	}
	if name = truncateFileName(name); name == "" {
		name = time.Now().Format("export-2006-01-02_15-04-05")
	}
	if a["paths"] == nil {
		return nil, &apiError{code: 1, msg: "[paths] is required", data: ""}
	}
	paths, err := a.strList("paths")
	if err != nil {
		return nil, err
	}
	exportErr := func(format string, v ...any) error {
		return &apiError{code: 1, msg: fmt.Sprintf(format, v...), data: map[string]any{"closeTimeout": 7000}}
	}
	type entry struct{ zipName, src string }
	var entries []entry // in order; a later resource with the same name wins, as SiYuan's copy does
	index := map[string]int{}
	add := func(zipName, src string) {
		if i, ok := index[zipName]; ok {
			entries[i].src = src
			return
		}
		index[zipName] = len(entries)
		entries = append(entries, entry{zipName, src})
	}
	base := exportZipBase(name)
	for _, p := range paths {
		abs := filepath.Join(k.dir, filepath.FromSlash(p))
		if !isSubPath(k.dir, abs) {
			return nil, exportErr("resource path [%s] is not in workspace", p)
		}
		if _, err := k.workspacePath(p); err != nil {
			return nil, exportErr("resource path [%s] is not in workspace", p)
		}
		top := base + "/" + filepath.Base(abs)
		info, err := os.Lstat(abs)
		if err != nil {
			return nil, exportErr("Export failed: %s", err.Error())
		}
		if info.Mode()&os.ModeSymlink != 0 {
			return nil, exportErr("export failed: exporting symbolic links is not supported")
		}
		if !info.IsDir() {
			add(top, abs)
			continue
		}
		err = filepath.WalkDir(abs, func(cur string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.Type()&os.ModeSymlink != 0 {
				return errors.New("exporting symbolic links is not supported")
			}
			rel, err := filepath.Rel(abs, cur)
			if err != nil {
				return err
			}
			zipName := path.Join(top, filepath.ToSlash(rel))
			if d.IsDir() {
				// Directories appear as entries only when empty (gulu's AddDirectory).
				children, err := os.ReadDir(cur)
				if err != nil {
					return err
				}
				if len(children) == 0 {
					add(zipName+"/", "")
				}
				return nil
			}
			if !d.Type().IsRegular() {
				return errors.New("exporting special files is not supported")
			}
			add(zipName, cur)
			return nil
		})
		if err != nil {
			return nil, exportErr("export failed: %v", err)
		}
	}
	if len(entries) == 0 {
		add(base+"/", "")
	}
	random := make([]byte, 16)
	rand.Read(random)
	zipName := hex.EncodeToString(random) + "-" + base + ".zip"
	dir := filepath.Join(k.tempDir, "export")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, exportErr("export failed: %v", err)
	}
	final := filepath.Join(dir, zipName)
	if err := writeExportZip(final+".partial", func(zw *zip.Writer) error {
		for _, e := range entries {
			if e.src == "" {
				if _, err := zw.CreateHeader(&zip.FileHeader{Name: e.zipName, Method: zip.Deflate, Modified: time.Now()}); err != nil {
					return err
				}
				continue
			}
			if err := addZipFile(zw, e.zipName, e.src); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		os.Remove(final + ".partial")
		return nil, exportErr("export failed: %v", err)
	}
	if err := os.Rename(final+".partial", final); err != nil {
		os.Remove(final + ".partial")
		return nil, exportErr("export failed: %v", err)
	}
	return map[string]any{"path": path.Join("temp", "export", zipName)}, nil
}

// exportZipBase is the zip's top directory: the name made file-safe.
func exportZipBase(name string) string {
	base := strings.NewReplacer(`\`, "_", "/", "_", ":", "_", "*", "_", "?", "_", `"`, "_", "'", "_",
		"<", "_", ">", "_", "|", "_").Replace(filepath.Base(name))
	base = strings.TrimSuffix(strings.TrimSpace(base), ".")
	if base == "" || base == "." || base == ".." {
		return "resources"
	}
	return base
}

func writeExportZip(p string, fill func(*zip.Writer) error) error {
	f, err := os.Create(p)
	if err != nil {
		return err
	}
	zw := zip.NewWriter(f)
	err = fill(zw)
	if cerr := zw.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func addZipFile(zw *zip.Writer, name, src string) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	h, err := zip.FileInfoHeader(info)
	if err != nil {
		return err
	}
	h.Name, h.Method = name, zip.Deflate
	w, err := zw.CreateHeader(h)
	if err != nil {
		return err
	}
	_, err = io.Copy(w, f)
	return err
}

// exportOpts are exportMdContent's options with SiYuan's defaults.
type exportOpts struct {
	refMode, embedMode int
	yfm, addTitle      bool
	imgTag             bool
	adjustHeadingLevel bool
}

// exportMdContent is /api/export/exportMdContent: a document (or a block,
// with its heading's children) as standard Markdown, read from the tree, so
// it never lags (embeds excepted: they run their query on the SQL index). An
// unknown id answers empty strings, as SiYuan does; fillCSSVar is accepted
// and ignored (there is no theme).
func (k *Kernel) exportMdContent(ctx context.Context, a args) (any, error) {
	id, err := a.id("id")
	if err != nil {
		return nil, err
	}
	o := exportOpts{refMode: 4, embedMode: 1, yfm: true, addTitle: true}
	if o.refMode, err = a.optInt("refMode", 4); err != nil {
		return nil, err
	}
	if o.embedMode, err = a.optInt("embedMode", 1); err != nil {
		return nil, err
	}
	for key, dst := range map[string]*bool{"yfm": &o.yfm, "addTitle": &o.addTitle} {
		if a[key] != nil {
			if *dst, err = a.optBool(key); err != nil {
				return nil, err
			}
		}
	}
	if o.imgTag, err = a.optBool("imgTag"); err != nil {
		return nil, err
	}
	if o.adjustHeadingLevel, err = a.optBool("adjustHeadingLevel"); err != nil {
		return nil, err
	}
	if _, err = a.optBool("fillCSSVar"); err != nil {
		return nil, err
	}
	hPath, content, err := k.exportMarkdown(ctx, id, o)
	if err != nil {
		return nil, err
	}
	return map[string]any{"hPath": hPath, "content": content}, nil
}

func (k *Kernel) exportMarkdown(ctx context.Context, id string, o exportOpts) (hPath, content string, err error) {
	loc, ok := k.lookup(id)
	if !ok {
		return "", "", nil
	}
	tree, err := k.loadTree(loc.Root)
	if errors.Is(err, errNotFound) {
		return "", "", nil
	}
	if err != nil {
		return "", "", err
	}
	docIAL := parse.IAL2Map(tree.Root.KramdownIAL)
	title := html.UnescapeString(tree.Root.IALAttr("title"))
	if id != tree.ID {
		// A block exports alone (a heading with the blocks under it).
		node := nodeByID(tree.Root, id)
		if node == nil {
			return "", "", nil
		}
		nodes := []*ast.Node{node}
		if node.Type == ast.NodeHeading {
			nodes = append(nodes, headingChildren(node)...)
		}
		// SiYuan heads a block's export with its document's title.
		root := &ast.Node{Type: ast.NodeDocument, ID: tree.ID, KramdownIAL: tree.Root.KramdownIAL}
		for _, n := range nodes {
			root.AppendChild(n)
		}
		tree = &parse.Tree{ID: tree.ID, Box: tree.Box, Path: tree.Path, HPath: tree.HPath, Root: root, Context: tree.Context}
	}
	hPath = tree.HPath
	k.exportPrepare(ctx, tree, title, o)
	if o.adjustHeadingLevel && id != tree.ID {
		exportAdjustHeadings(tree)
	}
	l := newLute()
	l.SetFootnotes(true)
	l.SetKramdownIAL(false)
	l.SetExportNormalizeTaskListMarker(true)
	l.SetUnorderedListMarker("-")
	l.SetImgTag(o.imgTag)
	content = string(render.NewProtyleExportMdRenderer(tree, l.RenderOptions, l.ParseOptions).Render())
	if o.yfm {
		content = exportYFM(docIAL) + content
	}
	return hPath, content, nil
}

// exportPrepare applies SiYuan's exportTree steps for Markdown: resolve
// embeds, turn refs into links/text/footnotes, add the title, write tags as
// #tag#, drop folding and superblock markers, keep empty paragraphs.
func (k *Kernel) exportPrepare(ctx context.Context, tree *parse.Tree, title string, o exportOpts) {
	depth := 0
	k.exportEmbeds(ctx, tree.Root, o.embedMode, map[string]bool{}, &depth)

	// Block links (siyuan://blocks/<id>) are refs for export purposes.
	ast.Walk(tree.Root, func(n *ast.Node, entering bool) ast.WalkStatus {
		if entering && n.Type == ast.NodeTextMark && n.IsTextMarkType("a") && strings.HasPrefix(n.TextMarkAHref, "siyuan://blocks/") {
			n.TextMarkType = strings.TrimSpace(strings.TrimPrefix(n.TextMarkType, "a") + " block-ref")
			n.TextMarkBlockRefID = strings.TrimPrefix(n.TextMarkAHref, "siyuan://blocks/")
			n.TextMarkBlockRefSubtype = "s"
		}
		return ast.WalkContinue
	})

	inTree := map[string]bool{}
	ast.Walk(tree.Root, func(n *ast.Node, entering bool) ast.WalkStatus {
		if entering && n.ID != "" {
			inTree[n.ID] = true
		}
		return ast.WalkContinue
	})

	var footOrder []string
	footNum := map[string]string{}
	var unlinks []*ast.Node
	ast.Walk(tree.Root, func(n *ast.Node, entering bool) ast.WalkStatus {
		if !entering {
			return ast.WalkContinue
		}
		switch n.Type {
		case ast.NodeSuperBlockOpenMarker, ast.NodeSuperBlockLayoutMarker, ast.NodeSuperBlockCloseMarker:
			unlinks = append(unlinks, n)
			return ast.WalkContinue
		case ast.NodeMathBlockContent:
			n.Tokens = bytes.TrimSpace(n.Tokens)
			return ast.WalkContinue
		case ast.NodeTextMark:
			if n.IsTextMarkType("inline-memo") {
				n.TextMarkInlineMemoContent = ""
			}
			if n.IsTextMarkType("inline-math") {
				n.TextMarkInlineMathContent = strings.TrimSpace(n.TextMarkInlineMathContent)
				return ast.WalkContinue
			}
			if n.IsTextMarkType("tag") {
				n.Type = ast.NodeText
				n.Tokens = []byte("#" + n.TextMarkTextContent + "#")
				return ast.WalkContinue
			}
		}
		if n.Type != ast.NodeTextMark || !n.IsTextMarkType("block-ref") {
			return ast.WalkContinue
		}
		defID := n.TextMarkBlockRefID
		text := n.TextMarkTextContent
		if text == "" {
			text = k.exportRefText(defID)
		}
		text = html.UnescapeString(text)
		if utf8.RuneCountInString(text) > 96 {
			text = string([]rune(text)[:96]) + "..."
		}
		rest := strings.TrimSpace(strings.ReplaceAll(n.TextMarkType, "block-ref", ""))
		switch o.refMode {
		case 2: // anchor text linking to siyuan://blocks/<id>
			link := &ast.Node{Type: ast.NodeTextMark, TextMarkType: strings.TrimSpace("a " + n.TextMarkType),
				TextMarkTextContent: text, TextMarkAHref: "siyuan://blocks/" + defID, KramdownIAL: n.KramdownIAL}
			n.InsertBefore(link)
			unlinks = append(unlinks, n)
		case 3: // anchor text only
			if rest == "" {
				n.InsertBefore(&ast.Node{Type: ast.NodeText, Tokens: []byte(text)})
			} else {
				n.InsertBefore(&ast.Node{Type: ast.NodeTextMark, TextMarkType: rest, TextMarkTextContent: text})
			}
			unlinks = append(unlinks, n)
		case 4: // footnotes, or an anchor hash inside the document
			if inTree[defID] {
				n.TextMarkType = "a " + n.TextMarkType
				n.TextMarkTextContent = text
				n.TextMarkAHref = "#" + defID
				return ast.WalkSkipChildren
			}
			num, ok := footNum[defID]
			if !ok {
				footOrder = append(footOrder, defID)
				num = strconv.Itoa(len(footOrder))
				footNum[defID] = num
			}
			if rest == "" {
				n.InsertBefore(&ast.Node{Type: ast.NodeText, Tokens: []byte(text)})
			} else {
				n.InsertBefore(&ast.Node{Type: ast.NodeTextMark, TextMarkType: rest, TextMarkTextContent: text})
			}
			n.InsertBefore(&ast.Node{Type: ast.NodeFootnotesRef, Tokens: []byte("^" + num), FootnotesRefId: num, FootnotesRefLabel: []byte("^" + num)})
			unlinks = append(unlinks, n)
		}
		return ast.WalkSkipChildren
	})
	for _, n := range unlinks {
		n.Unlink()
	}
	if o.refMode == 4 && len(footOrder) > 0 {
		if defs := k.exportFootnotes(footOrder, footNum); defs != nil {
			tree.Root.AppendChild(defs)
		}
	}

	if o.addTitle {
		h := &ast.Node{Type: ast.NodeHeading, HeadingLevel: 1}
		h.AppendChild(&ast.Node{Type: ast.NodeText, Tokens: []byte(title)})
		tree.Root.PrependChild(h)
	}

	unlinks = nil
	var empty []*ast.Node
	ast.Walk(tree.Root, func(n *ast.Node, entering bool) ast.WalkStatus {
		if !entering {
			return ast.WalkContinue
		}
		n.RemoveIALAttr("fold")
		n.RemoveIALAttr("heading-fold")
		switch n.Type {
		case ast.NodeParagraph:
			if n.FirstChild == nil {
				empty = append(empty, n)
			}
		case ast.NodeBr:
			if !n.ParentIs(ast.NodeTableCell) {
				n.InsertBefore(&ast.Node{Type: ast.NodeText, Tokens: []byte("\n")})
				unlinks = append(unlinks, n)
			}
		case ast.NodeText:
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
}

// exportAdjustHeadings is SiYuan's adjustHeadingLevel for a block export:
// the first heading after the title (SiYuan's conf.export.addTitle, on by
// default, decides that a title is there) and its children shift so it
// becomes h2.
func exportAdjustHeadings(tree *parse.Tree) {
	if tree.Root.FirstChild == nil {
		return
	}
	var first *ast.Node
	for n := tree.Root.FirstChild.Next; n != nil; n = n.Next {
		if n.Type == ast.NodeHeading {
			first = n
			break
		}
	}
	if first == nil {
		return
	}
	diff := 2 - first.HeadingLevel
	var headings []*ast.Node
	for _, c := range append([]*ast.Node{first}, headingChildren(first)...) {
		headings = append(headings, c.ChildrenByType(ast.NodeHeading)...)
	}
	for _, h := range headings {
		h.HeadingLevel = min(max(h.HeadingLevel+diff, 1), 6)
	}
}

// exportRefText is a ref's anchor text when the ref has none: the def
// block's title or content.
func (k *Kernel) exportRefText(defID string) string {
	_, node, err := k.loadTreeOf(defID)
	if err != nil || node == nil {
		return defID
	}
	if node.Type == ast.NodeDocument {
		return node.IALAttr("title")
	}
	return strings.TrimSpace(sqlStaticContent(node))
}

// exportFootnotes builds the footnote definitions of refs to other documents:
// each def block (a heading with its children, a document as its title and
// blocks) under [^n]. Refs inside definitions become their anchor text. A
// ref whose block is gone keeps its [^n] without a definition, as in SiYuan.
func (k *Kernel) exportFootnotes(order []string, nums map[string]string) *ast.Node {
	block := &ast.Node{Type: ast.NodeFootnotesDefBlock}
	for _, defID := range order {
		_, node, err := k.loadTreeOf(defID)
		if err != nil || node == nil {
			continue
		}
		num := nums[defID]
		def := &ast.Node{Type: ast.NodeFootnotesDef, Tokens: []byte("^" + num), FootnotesRefId: num, FootnotesRefLabel: []byte("^" + num)}
		for _, n := range exportDefNodes(node) {
			var unlinks []*ast.Node
			ast.Walk(n, func(c *ast.Node, entering bool) ast.WalkStatus {
				if entering && c.Type == ast.NodeTextMark && c.IsTextMarkType("block-ref") {
					text := c.TextMarkTextContent
					if text == "" {
						text = k.exportRefText(c.TextMarkBlockRefID)
					}
					c.InsertBefore(&ast.Node{Type: ast.NodeText, Tokens: []byte(html.UnescapeString(text))})
					unlinks = append(unlinks, c)
					return ast.WalkSkipChildren
				}
				return ast.WalkContinue
			})
			for _, u := range unlinks {
				u.Unlink()
			}
			if n.Type == ast.NodeListItem {
				list := &ast.Node{Type: ast.NodeList, ListData: &ast.ListData{Typ: n.ListData.Typ}}
				list.AppendChild(n)
				n = list
			}
			def.AppendChild(n)
		}
		block.AppendChild(def)
	}
	if block.FirstChild == nil {
		return nil
	}
	return block
}

// exportDefNodes are the nodes a footnote definition shows for a def block.
func exportDefNodes(node *ast.Node) []*ast.Node {
	switch node.Type {
	case ast.NodeHeading:
		return append([]*ast.Node{node}, headingChildren(node)...)
	case ast.NodeDocument:
		h := &ast.Node{Type: ast.NodeHeading, HeadingLevel: 1}
		h.AppendChild(&ast.Node{Type: ast.NodeText, Tokens: []byte(html.UnescapeString(node.IALAttr("title")))})
		nodes := []*ast.Node{h}
		for c := node.FirstChild; c != nil; c = c.Next {
			nodes = append(nodes, c)
		}
		return nodes
	}
	return []*ast.Node{node}
}

// exportEmbeds replaces embed blocks ({{SELECT …}}) by the blocks their
// query finds in the (lagging) SQL index: as they are (mode 0) or quoted
// (mode 1), as SiYuan's resolveEmbedR does.
func (k *Kernel) exportEmbeds(ctx context.Context, node *ast.Node, mode int, resolved map[string]bool, depth *int) {
	*depth++
	if *depth > 7 {
		return
	}
	var embeds []*ast.Node
	ast.Walk(node, func(n *ast.Node, entering bool) ast.WalkStatus {
		if entering && n.Type == ast.NodeBlockQueryEmbed && !resolved[n.ID] {
			embeds = append(embeds, n)
		}
		return ast.WalkContinue
	})
	l := newLute()
	for _, n := range embeds {
		resolved[n.ID] = true
		script := n.ChildByType(ast.NodeBlockQueryEmbedScript)
		if script == nil {
			continue
		}
		stmt := strings.ReplaceAll(html.UnescapeString(string(script.Tokens)), "_esc_newline_", "\n")
		rows, err := k.sql.query(ctx, stmt, sqlSearchLimit, true)
		if err != nil {
			continue
		}
		for _, r := range rows {
			id, _ := r["id"].(string)
			if id == "" || r["type"] == "query_embed" {
				continue
			}
			_, found, err := k.loadTreeOf(id)
			if err != nil || found == nil {
				continue
			}
			var parts []*ast.Node
			switch found.Type {
			case ast.NodeDocument:
				parts = []*ast.Node{found}
			case ast.NodeHeading:
				parts = append([]*ast.Node{found}, headingChildren(found)...)
			default:
				parts = []*ast.Node{found}
			}
			var md strings.Builder
			for _, p := range parts {
				s, err := lute.FormatNodeSync(p, l.ParseOptions, l.RenderOptions)
				if err != nil {
					continue
				}
				md.WriteString(s)
				md.WriteString("\n\n")
			}
			text := md.String()
			if mode != 0 {
				lines := strings.Split(text, "\n")
				for i := range lines {
					lines[i] = "> " + lines[i]
				}
				text = strings.Join(lines, "\n")
			}
			sub := parse.Parse("", []byte(text+"\n\n"), l.ParseOptions)
			var inserts []*ast.Node
			for c := sub.Root.FirstChild; c != nil; c = c.Next {
				if c.Type != ast.NodeKramdownBlockIAL {
					inserts = append(inserts, c)
				}
			}
			for _, ins := range inserts {
				n.InsertBefore(ins)
				if !resolved[id] {
					k.exportEmbeds(ctx, ins, mode, resolved, depth)
				}
			}
		}
		n.Unlink()
	}
}

// exportYFM is SiYuan's yfm(): YAML front matter with title, date (from the
// id), lastmod (from updated) and tags.
func exportYFM(ial map[string]string) string {
	var created, updated string
	if t, err := time.ParseInLocation("20060102150405", timeFromID(ial["id"]), time.Local); err == nil && ial["id"] != "" {
		created = t.Format(time.RFC3339)
	}
	if t, err := time.ParseInLocation("20060102150405", ial["updated"], time.Local); err == nil {
		updated = t.Format(time.RFC3339)
	}
	var b strings.Builder
	b.WriteString("---\n")
	if ial["title"] != "" {
		b.WriteString("title: " + ial["title"] + "\n")
	}
	if updated == "" {
		updated = time.Now().Format(time.RFC3339)
	}
	if created == "" {
		created = updated
	}
	b.WriteString("date: " + created + "\n")
	b.WriteString("lastmod: " + updated + "\n")
	if tags := ial["tags"]; tags != "" {
		b.WriteString("tags:\n")
		for _, t := range strings.Split(tags, ",") {
			b.WriteString("  - '" + strings.ReplaceAll(t, "'", "''") + "'\n")
		}
	}
	b.WriteString("---\n\n")
	return b.String()
}
