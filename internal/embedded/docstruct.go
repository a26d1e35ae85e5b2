package embedded

import (
	"context"
	"os"
	"path"
	"strings"
	"time"

	"github.com/88250/lute/ast"
	"github.com/88250/lute/parse"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/mdexport"
)

// Document structure changes as SiYuan 3.7.3 makes them: duplicateDoc
// (model.DuplicateDoc), heading2Doc and doc2Heading (model/heading.go).

// blockNotFound is the refusal heading2Doc and doc2Heading answer, with the
// notice timeout SiYuan sends along.
func blockNotFound() error {
	return &apiError{code: -1, msg: "block not found", data: map[string]any{"closeTimeout": 5000}}
}

func (k *Kernel) duplicateDoc(ctx context.Context, a args) (any, error) {
	id, err := a.str("id")
	if err != nil {
		return nil, err
	}
	// Any block stands for its document; an unknown or malformed id is
	// "tree not found", as LoadTreeByBlockID answers.
	loc, ok := k.lookup(id)
	if !ok {
		return nil, &apiError{code: -1, msg: "tree not found", data: map[string]any{"closeTimeout": 7000}}
	}
	src, ok := k.doc(loc.Root)
	if !ok {
		return nil, &apiError{code: -1, msg: "tree not found", data: map[string]any{"closeTimeout": 7000}}
	}
	tree, err := k.loadTree(src.ID)
	if err != nil {
		return nil, err
	}
	srcHPath := "/"
	if src.ID != src.Box {
		srcHPath = k.hpathOf(src.Box, src.Path, src.Title)
	}
	newID := ast.NewNodeID()
	suffix := " (Duplicated " + time.Now().Format("2006-01-02 15:04:05") + ")"
	if t, err := time.ParseInLocation("20060102150405", timeFromID(newID), time.Local); err == nil {
		suffix = " (Duplicated " + t.Format("2006-01-02 15:04:05") + ")"
	}
	title := tree.Root.IALAttr("title") + suffix
	newPath := path.Join(path.Dir(src.Path), newID) + ".sy"
	resetTreeIDs(tree, newID)
	tree.Root.SetIALAttr("title", title)
	tree.Root.RemoveIALAttr("scroll")
	if src.ID == src.Box {
		tree.Root.RemoveIALAttr("custom-hidden")
	}
	ast.Walk(tree.Root, func(n *ast.Node, entering bool) ast.WalkStatus {
		if entering && n.IsBlock() {
			// A copy is bound to no database and no flashcard deck.
			n.RemoveIALAttr("custom-avs")
			n.RemoveIALAttr("custom-sy-av-view")
			for _, kv := range append([][]string(nil), n.KramdownIAL...) {
				if strings.HasPrefix(kv[0], "custom-sy-av-s-text-") {
					n.RemoveIALAttr(kv[0])
				}
			}
			n.RemoveIALAttr("custom-riff-decks")
		}
		return ast.WalkContinue
	})
	tree.Path, tree.Root.Path = newPath, newPath
	tree.HPath = k.hpathOf(src.Box, newPath, title)
	// The copy is ranked right after its source, before it exists.
	if err := k.addSortAfter(src.Box, src.Path, newID); err != nil {
		return nil, err
	}
	if err := k.writeTree(tree); err != nil {
		return nil, err
	}
	// SiYuan joins the suffix to the human path with one more space.
	return map[string]any{"id": newID, "notebook": src.Box, "path": newPath, "hPath": srcHPath + " " + suffix}, nil
}

// resetTreeIDs is SiYuan's resetTree: the document and every block get new
// ids, and references to blocks of the document follow them.
func resetTreeIDs(tree *parse.Tree, rootID string) {
	refs := map[string]string{}
	ast.Walk(tree.Root, func(n *ast.Node, entering bool) ast.WalkStatus {
		if entering && n.Type == ast.NodeTextMark && n.IsTextMarkType("block-ref") && n.TextMarkBlockRefID != "" {
			refs[n.TextMarkBlockRefID] = ""
		}
		return ast.WalkContinue
	})
	tree.ID, tree.Root.ID = rootID, rootID
	tree.Root.SetIALAttr("id", rootID)
	ast.Walk(tree.Root, func(n *ast.Node, entering bool) ast.WalkStatus {
		if !entering || n.Type == ast.NodeDocument || !n.IsBlock() || n.ID == "" || n.Type == ast.NodeKramdownBlockIAL {
			return ast.WalkContinue
		}
		nid := ast.NewNodeID()
		if _, ok := refs[n.ID]; ok {
			refs[n.ID] = nid
		}
		n.ID = nid
		n.SetIALAttr("id", nid)
		return ast.WalkContinue
	})
	ast.Walk(tree.Root, func(n *ast.Node, entering bool) ast.WalkStatus {
		if entering && n.Type == ast.NodeTextMark && n.IsTextMarkType("block-ref") {
			if nid := refs[n.TextMarkBlockRefID]; nid != "" {
				n.TextMarkBlockRefID = nid
			}
		}
		return ast.WalkContinue
	})
}

// addSortAfter is SiYuan's box.addSort: the siblings of previousPath are
// ranked 0, 1, ... in their listed order, with id right after previousPath.
func (k *Kernel) addSortAfter(box, previousPath, id string) error {
	dir := path.Dir(previousPath)
	files, err := k.listDocs(box, dir, sortUnassigned, false)
	if err != nil {
		return err
	}
	sorts, err := k.readSort(box)
	if err != nil {
		return err
	}
	prev := strings.TrimSuffix(path.Base(previousPath), ".sy")
	val := 0
	for _, f := range files {
		if f.ID == id {
			continue
		}
		sorts[f.ID] = val
		if f.ID == prev {
			val++
			sorts[id] = val
		}
		val++
	}
	return k.writeSort(box, sorts)
}

// docAtPath finds the document stored at a path of a notebook.
func (k *Kernel) docAtPath(box, p string) (*docEntry, bool) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	for _, d := range k.docs {
		if d.Box == box && d.Path == p {
			return d, true
		}
	}
	return nil, false
}

func (k *Kernel) heading2Doc(ctx context.Context, a args) (any, error) {
	srcID, err := a.str("srcHeadingID")
	if err != nil {
		return nil, err
	}
	box, err := a.str("targetNoteBook")
	if err != nil {
		return nil, err
	}
	targetPath, err := a.optStr("targetPath")
	if err != nil {
		return nil, err
	}
	previousPath, err := a.optStr("previousPath")
	if err != nil {
		return nil, err
	}
	if targetPath == "/"+box+".sy" {
		targetPath = "/" // the notebook's own document stands for its root
	}
	loc, ok := k.lookup(srcID)
	if !ok {
		return nil, blockNotFound()
	}
	tree, err := k.loadTree(loc.Root)
	if err != nil {
		return nil, blockNotFound()
	}
	heading := mdexport.NodeByID(tree.Root, srcID)
	if heading == nil || heading.Type == ast.NodeDocument {
		return nil, blockNotFound()
	}
	if _, err := k.readBoxConf(box); err != nil {
		return nil, blockNotFound()
	}
	text := strings.ReplaceAll(strings.TrimSpace(sqlStaticContent(heading)), "/", "_")
	toHP, toFolder := "/"+text, "/"
	parentAt := func(p string) (*docEntry, error) {
		d, ok := k.docAtPath(box, p)
		if !ok {
			return nil, blockNotFound()
		}
		return d, nil
	}
	switch {
	case previousPath != "":
		if _, err := parentAt(previousPath); err != nil {
			return nil, err
		}
		if pp := path.Dir(previousPath); pp != "/" {
			par, err := parentAt(pp + ".sy")
			if err != nil {
				return nil, err
			}
			toHP = path.Join(k.hpathOf(box, par.Path, par.Title), text)
			toFolder = path.Join(path.Dir(par.Path), par.ID)
		}
	case targetPath != "/":
		par, err := parentAt(targetPath)
		if err != nil {
			return nil, err
		}
		toHP = path.Join(k.hpathOf(box, par.Path, par.Title), text)
		toFolder = path.Join(path.Dir(par.Path), par.ID)
	}
	newPath := path.Join(toFolder, srcID+".sy")

	// A folded heading's section is unfolded when it becomes a document.
	children := headingChildren(heading)
	for _, c := range children {
		ast.Walk(c, func(n *ast.Node, entering bool) ast.WalkStatus {
			if entering {
				n.RemoveIALAttr("heading-fold")
				n.RemoveIALAttr("fold")
			}
			return ast.WalkContinue
		})
	}
	heading.RemoveIALAttr("fold")
	heading.RemoveIALAttr("heading-fold")
	doc := newDocTree(box, newPath, text)
	doc.Root.FirstChild.Unlink()
	for _, c := range children {
		doc.Root.AppendChild(c)
	}
	heading.SetIALAttr("type", "doc")
	heading.SetIALAttr("id", srcID)
	heading.SetIALAttr("title", text)
	heading.RemoveIALAttr("custom-hidden")
	doc.Root.KramdownIAL = heading.KramdownIAL
	if top := topHeadingLevel(doc.Root); top > 0 {
		for c := doc.Root.FirstChild; c != nil; c = c.Next {
			if c.Type == ast.NodeHeading {
				c.HeadingLevel = min(6, c.HeadingLevel-top+2)
			}
		}
	}
	heading.Unlink()
	stamp := nowStamp()
	tree.Root.SetIALAttr("updated", stamp)
	if err := k.writeTree(tree); err != nil {
		return nil, err
	}
	doc.Root.SetIALAttr("updated", stamp)
	doc.HPath = toHP
	if err := k.writeTree(doc); err != nil {
		return nil, err
	}
	toTop, _ := a.optBool("toTop")
	switch {
	case previousPath != "":
		err = k.addSortAfter(box, previousPath, srcID)
	case toTop:
		err = k.addMinSort(box, toFolder, srcID)
	default:
		err = k.addMaxSort(box, toFolder, srcID)
	}
	return nil, err
}

// addMinSort ranks id before every sibling (box.addMinSort).
func (k *Kernel) addMinSort(box, dir, id string) error {
	files, err := k.listDocs(box, dir, sortUnassigned, false)
	if err != nil {
		return err
	}
	sorts, err := k.readSort(box)
	if err != nil {
		return err
	}
	low := 0
	for _, f := range files {
		if f.ID != id && f.Sort < low {
			low = f.Sort
		}
	}
	sorts[id] = low - 1
	return k.writeSort(box, sorts)
}

// topHeadingLevel is the lowest level of the top-level headings (0: none).
func topHeadingLevel(root *ast.Node) int {
	top := 7
	for n := root.FirstChild; n != nil; n = n.Next {
		if n.Type == ast.NodeHeading && n.HeadingLevel < top {
			top = n.HeadingLevel
		}
	}
	if top == 7 {
		return 0
	}
	return top
}

// levelAt is SiYuan's treenode.HeadingLevel: the level of the block itself
// or of the nearest heading before it among its siblings (0: none).
func levelAt(n *ast.Node) int {
	for p := n; p != nil; p = p.Previous {
		if p.Type == ast.NodeHeading {
			return p.HeadingLevel
		}
	}
	return 0
}

func (k *Kernel) doc2Heading(ctx context.Context, a args) (any, error) {
	srcID, err := a.str("srcID")
	if err != nil {
		return nil, err
	}
	targetID, err := a.str("targetID")
	if err != nil {
		return nil, err
	}
	v, ok := a["after"].(bool)
	if !ok {
		return nil, errf("argument [after] must be a boolean")
	}
	after := v
	nothing := map[string]any{"srcTreeBox": "", "srcTreePath": ""}
	if !validID(srcID) || !validID(targetID) {
		return nothing, nil
	}
	loc, ok := k.lookup(srcID)
	if !ok {
		return nil, blockNotFound()
	}
	srcDoc, ok := k.doc(loc.Root)
	if !ok {
		return nil, blockNotFound()
	}
	if srcDoc.ID == srcDoc.Box {
		return nil, &apiError{code: -1, msg: "The top-level notebook document cannot be removed or moved", data: map[string]any{"closeTimeout": 5000}}
	}
	if k.subDocCount(srcDoc.Box, srcDoc.Path) > 0 {
		return nil, &apiError{code: -1, msg: "Cannot be converted to heading when including sub-documents", data: map[string]any{"closeTimeout": 5000}}
	}
	removeIfEmpty(strings.TrimSuffix(k.docFile(srcDoc.Box, srcDoc.Path), ".sy"))
	tloc, ok := k.lookup(targetID)
	if !ok {
		return nothing, nil // SiYuan ignores a target that does not exist
	}
	src, err := k.loadTree(srcDoc.ID)
	if err != nil {
		return nil, err
	}
	target, err := k.loadTree(tloc.Root)
	if err != nil {
		return nil, err
	}
	pivot := mdexport.NodeByID(target.Root, targetID)
	if pivot == nil {
		return nil, blockNotFound()
	}
	ret := map[string]any{"srcTreeBox": srcDoc.Box, "srcTreePath": srcDoc.Path}
	if pivot.Type == ast.NodeDocument {
		// SiYuan inserts the heading beside the document node itself, so
		// the content goes nowhere (after:true; after:false even corrupts
		// the target's file) while the source is removed.
		return ret, k.dropDoc(srcDoc)
	}
	if pivot.Type == ast.NodeListItem && pivot.LastChild != nil {
		pivot = pivot.LastChild
	}
	pivotLevel := levelAt(pivot)
	delta := pivotLevel - topHeadingLevel(src.Root) + 1
	level := pivotLevel
	if pivot.Type == ast.NodeHeading {
		if after {
			if cs := headingChildren(pivot); len(cs) > 0 {
				pivot = cs[len(cs)-1]
			}
		}
	} else {
		level++
		delta++
	}
	level = min(level, 6)
	stamp := nowStamp()
	src.Root.RemoveIALAttr("scroll")
	src.Root.RemoveIALAttr("type")
	tags := src.Root.IALAttr("tags")
	src.Root.RemoveIALAttr("tags")
	title := src.Root.IALAttr("title")
	heading := &ast.Node{ID: src.Root.ID, Type: ast.NodeHeading, HeadingLevel: level, KramdownIAL: src.Root.KramdownIAL}
	heading.SetIALAttr("updated", stamp)
	heading.AppendChild(&ast.Node{Type: ast.NodeText, Tokens: []byte(title)})
	heading.RemoveIALAttr("title")
	if tags != "" {
		// A tagged document's tags become a paragraph under its heading.
		para := newParagraph()
		parts := strings.Split(tags, ",")
		for i, tag := range parts {
			if tag == "" {
				continue
			}
			para.AppendChild(&ast.Node{Type: ast.NodeTextMark, TextMarkType: "tag", TextMarkTextContent: tag})
			if i < len(parts)-1 {
				para.AppendChild(&ast.Node{Type: ast.NodeText, Tokens: []byte(" ")})
			}
		}
		if para.FirstChild != nil {
			src.Root.PrependChild(para)
		}
	}
	var nodes []*ast.Node
	if after {
		for c := src.Root.LastChild; c != nil; c = c.Previous {
			nodes = append(nodes, c)
		}
	} else {
		for c := src.Root.FirstChild; c != nil; c = c.Next {
			nodes = append(nodes, c)
		}
	}
	if !after {
		pivot.InsertBefore(heading)
	}
	for _, n := range nodes {
		if n.Type == ast.NodeHeading {
			n.HeadingLevel = min(6, n.HeadingLevel+delta)
		}
		if after {
			pivot.InsertAfter(n)
		} else {
			pivot.InsertBefore(n)
		}
	}
	if after {
		pivot.InsertAfter(heading)
	}
	if err := k.dropDoc(srcDoc); err != nil {
		return nil, err
	}
	target.Root.SetIALAttr("updated", stamp)
	if err := k.writeTree(target); err != nil {
		return nil, err
	}
	return ret, nil
}

// dropDoc deletes a document's file and index entries (its blocks, when
// they moved, are indexed again with their new tree).
func (k *Kernel) dropDoc(d *docEntry) error {
	if err := os.Remove(k.docFile(d.Box, d.Path)); err != nil {
		return err
	}
	k.mu.Lock()
	k.unindexDocLocked(d.ID)
	k.mu.Unlock()
	k.sql.queueRemove(d.ID)
	if sorts, err := k.readSort(d.Box); err == nil {
		delete(sorts, d.ID)
		return k.writeSort(d.Box, sorts)
	}
	return nil
}
