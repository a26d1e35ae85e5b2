package embedded

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dustin/go-humanize"

	"github.com/88250/lute/ast"
	"github.com/88250/lute/parse"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/mdexport"
	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// Sort modes of SiYuan's file tree.
const (
	sortNameASC      = 0
	sortNameDESC     = 1
	sortUpdatedASC   = 2
	sortUpdatedDESC  = 3
	sortAlphanumASC  = 4
	sortAlphanumDESC = 5
	sortCustom       = 6
	sortCreatedASC   = 9
	sortCreatedDESC  = 10
	sortUnassigned   = 256
)

func (k *Kernel) sortPath(box string) string {
	return filepath.Join(k.boxDir(box), ".siyuan", "sort.json")
}

func (k *Kernel) readSort(box string) (map[string]int, error) {
	data, err := os.ReadFile(k.sortPath(box))
	if errors.Is(err, os.ErrNotExist) {
		return map[string]int{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read sort.json: %w", err)
	}
	m := map[string]int{}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("parse sort.json: %w", err)
	}
	return m, nil
}

func (k *Kernel) writeSort(box string, m map[string]int) error {
	data, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode sort.json: %w", err)
	}
	return writeFileAtomic(k.sortPath(box), data, 0o644)
}

// docAttrs returns a document's root attributes.
func docAttrs(d *docEntry) map[string]string {
	return parse.IAL2Map(d.tree.Root.KramdownIAL)
}

func hidden(d *docEntry) bool { return docAttrs(d)["custom-hidden"] == "true" }

func (k *Kernel) visibleChildCount(box, dir string) int {
	n := 0
	for _, d := range k.childDocs(box, dir) {
		if !hidden(d) {
			n++
		}
	}
	return n
}

// listDocs lists the documents under dir in the effective sort mode.
func (k *Kernel) listDocs(box, dir string, mode int, showHidden bool) ([]wire.DocFile, error) {
	c, err := k.box(box)
	if err != nil {
		return nil, err
	}
	if mode == sortUnassigned {
		mode = sortCustom // conf.fileTree.sort default
		if c.SortMode != sortModeFileTree {
			mode = c.SortMode
		}
	}
	sorts, err := k.readSort(box)
	if err != nil {
		return nil, err
	}
	var files []wire.DocFile
	for _, d := range k.childDocs(box, dir) {
		ial := docAttrs(d)
		// The notebook document is never listed, not even with showHidden.
		if d.ID == d.Box || !showHidden && ial["custom-hidden"] == "true" {
			continue
		}
		var size int64
		var mtime time.Time
		if fi, err := os.Stat(k.docFile(d.Box, d.Path)); err == nil {
			size, mtime = fi.Size(), fi.ModTime()
		}
		ctime, _ := time.ParseInLocation("20060102150405", timeFromID(d.ID), time.Local)
		if upd, err := time.ParseInLocation("20060102150405", ial["updated"], time.Local); err == nil {
			mtime = upd
		}
		files = append(files, wire.DocFile{
			Path: d.Path, Name: ial["title"], TitleEmpty: ial["custom-sy-title-empty"] == "true",
			Icon: ial["icon"], Name1: ial["name"], Alias: ial["alias"], Memo: ial["memo"], Bookmark: ial["bookmark"],
			ID: d.ID, Size: uint64(size), HSize: humanize.SIWithDigits(float64(size), 2, "B"), Mtime: mtime.Unix(), Ctime: ctime.Unix(),
			HMtime: mtime.Format("2006-01-02 15:04:05") + ", " + humanize.Time(mtime),
			HCtime: ctime.Format("2006-01-02 15:04:05") + ", " + humanize.Time(ctime),
			Sort:   sorts[d.ID], SubFileCount: k.visibleChildCount(box, strings.TrimSuffix(d.Path, ".sy")),
		})
	}
	title := func(f wire.DocFile) string { return f.Name }
	switch mode {
	case sortNameASC, sortAlphanumASC:
		sort.SliceStable(files, func(i, j int) bool { return title(files[i]) < title(files[j]) })
	case sortNameDESC, sortAlphanumDESC:
		sort.SliceStable(files, func(i, j int) bool { return title(files[i]) > title(files[j]) })
	case sortUpdatedASC:
		sort.SliceStable(files, func(i, j int) bool { return files[i].Mtime < files[j].Mtime })
	case sortUpdatedDESC:
		sort.SliceStable(files, func(i, j int) bool { return files[i].Mtime > files[j].Mtime })
	case sortCreatedASC:
		sort.SliceStable(files, func(i, j int) bool { return files[i].ID < files[j].ID })
	case sortCreatedDESC:
		sort.SliceStable(files, func(i, j int) bool { return files[i].ID > files[j].ID })
	default: // custom: sort.json rank, ties newest first
		sort.SliceStable(files, func(i, j int) bool {
			if files[i].Sort == files[j].Sort {
				return timeFromID(files[i].ID) > timeFromID(files[j].ID)
			}
			return files[i].Sort < files[j].Sort
		})
	}
	if files == nil {
		files = []wire.DocFile{}
	}
	return files, nil
}

func (k *Kernel) listDocsByPath(ctx context.Context, a args) (any, error) {
	box, err := a.str("notebook")
	if err != nil {
		return nil, err
	}
	p, err := a.str("path")
	if err != nil {
		return nil, err
	}
	mode, err := a.optInt("sort", sortUnassigned)
	if err != nil {
		return nil, err
	}
	maxCount, err := a.optInt("maxListCount", 512)
	if err != nil {
		return nil, err
	}
	showHidden, err := a.optBool("showHidden")
	if err != nil {
		return nil, err
	}
	if strings.Contains(p, "..") {
		return nil, errf("invalid path [%s]", p)
	}
	if c, err := k.box(box); err == nil && c.Closed {
		return nil, errf("Query notebook failed") // SiYuan lists only open notebooks
	}
	files, err := k.listDocs(box, strings.TrimSuffix(p, ".sy"), mode, showHidden)
	if err != nil {
		return nil, err
	}
	if maxCount > 0 && len(files) > maxCount {
		files = files[:maxCount]
	}
	return map[string]any{"box": box, "path": p, "files": files}, nil
}

func (k *Kernel) changeSort(ctx context.Context, a args) (any, error) {
	box, err := a.str("notebook")
	if err != nil {
		return nil, err
	}
	paths, err := a.strList("paths")
	if err != nil {
		return nil, err
	}
	if _, err := k.box(box); err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, nil
	}
	ranks := map[string]int{}
	for i, p := range paths {
		ranks[strings.TrimSuffix(path.Base(p), ".sy")] = i + 1
	}
	next := len(paths) + 1
	sorts, err := k.readSort(box)
	if err != nil {
		return nil, err
	}
	for _, d := range k.childDocs(box, path.Dir(paths[0])) {
		r, ok := ranks[d.ID]
		if !ok {
			r = next
			next++
		}
		sorts[d.ID] = r
	}
	return nil, k.writeSort(box, sorts)
}

// addMaxSort puts a new document after its visible siblings in custom order
// (conf.fileTree.createDocAtTop is false by default).
func (k *Kernel) addMaxSort(box, dir, id string) error {
	files, err := k.listDocs(box, dir, sortUnassigned, false)
	if err != nil {
		return err
	}
	// As SiYuan: the listing includes the new document itself, and the new
	// rank is the last listed rank plus one.
	val := 0
	if len(files) > 0 {
		val = files[len(files)-1].Sort + 1
	}
	sorts, err := k.readSort(box)
	if err != nil {
		return err
	}
	sorts[id] = val
	return k.writeSort(box, sorts)
}

func normalizeTitle(t string) string {
	t = strings.NewReplacer("\n", "", "\r", "", "\t", "", "/", "").Replace(t)
	t = strings.TrimSpace(t)
	if utf8.RuneCountInString(t) > 512 {
		t = string([]rune(t)[:512])
	}
	return t
}

// docsByHPath returns the ids of the documents with a human path, oldest first.
func (k *Kernel) docsByHPath(box, hpath string) []string {
	k.mu.RLock()
	var cands []*docEntry
	for _, d := range k.docs {
		if d.Box == box && d.ID != box {
			cands = append(cands, d)
		}
	}
	k.mu.RUnlock()
	var ids []string
	for _, d := range cands {
		if k.hpathOf(d.Box, d.Path, d.Title) == hpath {
			ids = append(ids, d.ID)
		}
	}
	sort.Strings(ids)
	return ids
}

func (k *Kernel) createDocWithMd(ctx context.Context, a args) (any, error) {
	box, err := a.str("notebook")
	if err != nil {
		return nil, err
	}
	hp, err := a.str("path")
	if err != nil {
		return nil, err
	}
	md, err := a.str("markdown")
	if err != nil {
		return nil, err
	}
	parentID, err := a.optID("parentID")
	if err != nil {
		return nil, err
	}
	id, err := a.optID("id")
	if err != nil {
		return nil, err
	}
	tags, err := a.optStr("tags")
	if err != nil {
		return nil, err
	}
	if _, err := k.box(box); err != nil {
		return nil, err
	}
	if id != "" {
		if _, exists := k.lookup(id); exists {
			return nil, errf("document ID [%s] already exists", id)
		}
	}
	if !strings.HasPrefix(hp, "/") {
		hp = "/" + hp
	}
	segs := strings.Split(strings.TrimPrefix(hp, "/"), "/")
	var titles []string
	for _, s := range segs {
		if s = normalizeTitle(s); s != "" {
			titles = append(titles, s)
		}
	}
	if len(titles) == 0 {
		return nil, errf("invalid path [%s]", hp)
	}
	if len(titles) > 7 {
		return nil, errf("the document path is too deep (at most 7 levels)")
	}
	// Walk the intermediate documents, creating missing ones empty.
	dir := "" // storage directory without .sy, "" = box root
	cur := ""
	for i, t := range titles[:len(titles)-1] {
		cur += "/" + t
		var found string
		if i == len(titles)-2 && parentID != "" {
			if d, ok := k.doc(parentID); ok && d.Box == box && k.hpathOf(d.Box, d.Path, d.Title) == cur {
				found = parentID
			}
		}
		if found == "" {
			for _, c := range k.docsByHPath(box, cur) {
				if d, _ := k.doc(c); d != nil && path.Dir(d.Path) == orRoot(dir) {
					found = c
					break
				}
			}
		}
		if found == "" {
			nid := ast.NewNodeID()
			tree := newDocTree(box, dir+"/"+nid+".sy", t)
			tree.Root.SetIALAttr("updated", nowStamp())
			// Auto-created parents get no rank (0), as in SiYuan.
			if err := k.writeTree(tree); err != nil {
				return nil, err
			}
			found = nid
		}
		d, _ := k.doc(found)
		dir = strings.TrimSuffix(d.Path, ".sy")
	}
	if id == "" {
		id = ast.NewNodeID()
	}
	tree, err := k.docFromMarkdown(box, dir+"/"+id+".sy", titles[len(titles)-1], md)
	if err != nil {
		return nil, err
	}
	if t := strings.TrimSpace(strings.ReplaceAll(tags, "，", ",")); t != "" {
		var parts []string
		for _, x := range strings.Split(t, ",") {
			parts = append(parts, strings.TrimSpace(x))
		}
		tree.Root.SetIALAttr("tags", strings.Join(parts, ","))
	}
	if err := k.writeTree(tree); err != nil {
		return nil, err
	}
	if err := k.addMaxSort(box, orRoot(dir), id); err != nil {
		return nil, err
	}
	return id, nil
}

func orRoot(dir string) string {
	if dir == "" {
		return "/"
	}
	return dir
}

// docFromMarkdown builds a new document the way SiYuan's createDocWithMd
// does: markdown → block DOM → tree.
func (k *Kernel) docFromMarkdown(box, p, title, md string) (*parse.Tree, error) {
	tree := newDocTree(box, p, title)
	l := mdexport.NewLute()
	l.SetHTMLTag2TextMark(true)
	var dom string
	var sub *parse.Tree
	if err := guardLute(func() {
		if dom = l.Md2BlockDOM(md, false); strings.TrimSpace(dom) != "" {
			sub = l.BlockDOM2Tree(dom)
		}
	}); err != nil {
		return nil, errf("%v", err)
	}
	if strings.TrimSpace(dom) != "" {
		if sub != nil && sub.Root != nil && sub.Root.FirstChild != nil {
			tree.Root.FirstChild.Unlink()
			for c := sub.Root.FirstChild; c != nil; {
				next := c.Next
				if c.Type != ast.NodeKramdownBlockIAL {
					tree.Root.AppendChild(c)
				}
				c = next
			}
		}
	}
	if err := checkIDs(tree.Root); err != nil {
		return nil, err
	}
	ast.Walk(tree.Root, func(n *ast.Node, entering bool) ast.WalkStatus {
		if entering && n.IsBlock() && n.Type != ast.NodeKramdownBlockIAL && n.Type != ast.NodeDocument {
			if n.ID == "" {
				n.ID = ast.NewNodeID()
				n.SetIALAttr("id", n.ID)
			}
			if n.IALAttr("updated") == "" {
				n.SetIALAttr("updated", timeFromID(n.ID))
			}
		}
		return ast.WalkContinue
	})
	tree.Root.SetIALAttr("updated", nowStamp())
	tree.HPath = k.hpathOf(box, p, title)
	return tree, nil
}

// docByID resolves the id argument to a document; as in SiYuan, the id of
// any block stands for the document that holds it.
func (k *Kernel) docByID(a args) (*docEntry, error) {
	id, err := a.id("id")
	if err != nil {
		return nil, err
	}
	if loc, ok := k.lookup(id); ok {
		id = loc.Root
	}
	d, ok := k.doc(id)
	if !ok {
		return nil, errf("document [%s] not found", id)
	}
	return d, nil
}

func (k *Kernel) renameDocByID(ctx context.Context, a args) (any, error) {
	d, err := k.docByID(a)
	if err != nil {
		return nil, err
	}
	title, err := a.str("title")
	if err != nil {
		return nil, err
	}
	title = normalizeTitle(title)
	if title == "" {
		title = "Untitled"
	}
	tree, err := k.loadTree(d.ID)
	if err != nil {
		return nil, err
	}
	if tree.Root.IALAttr("title") == title {
		return nil, nil
	}
	old := tree.Root.IALAttr("title")
	tree.Root.SetIALAttr("title", title)
	tree.Root.SetIALAttr("updated", nowStamp())
	if err := k.writeTree(tree); err != nil {
		return nil, err
	}
	k.mu.Lock()
	if k.staleTitles == nil {
		k.staleTitles = map[string]string{}
	}
	if _, seen := k.staleTitles[d.ID]; !seen {
		k.staleTitles[d.ID] = old
	}
	k.mu.Unlock()
	// Descendants' human paths changed: reindex them in SQL.
	k.requeueDescendants(d.Box, d.Path)
	return nil, nil
}

func (k *Kernel) requeueDescendants(box, docPath string) {
	prefix := strings.TrimSuffix(docPath, ".sy") + "/"
	k.mu.RLock()
	var ids []string
	for _, x := range k.docs {
		if x.Box == box && strings.HasPrefix(x.Path, prefix) {
			ids = append(ids, x.ID)
		}
	}
	k.mu.RUnlock()
	for _, id := range ids {
		if t, err := k.loadTree(id); err == nil {
			k.sql.queueUpsert(t)
		}
	}
}

// subtree returns a document and every document below it.
func (k *Kernel) subtree(d *docEntry) []*docEntry {
	prefix := strings.TrimSuffix(d.Path, ".sy") + "/"
	k.mu.RLock()
	defer k.mu.RUnlock()
	ret := []*docEntry{d}
	for _, x := range k.docs {
		if x.Box == d.Box && strings.HasPrefix(x.Path, prefix) {
			ret = append(ret, x)
		}
	}
	return ret
}

func (k *Kernel) removeDocByID(ctx context.Context, a args) (any, error) {
	d, err := k.docByID(a)
	if err != nil {
		return nil, err
	}
	if d.ID == d.Box {
		return nil, errf("the notebook document can not be removed")
	}
	docs := k.subtree(d)
	// SiYuan copies removed documents into history/ first.
	hist := filepath.Join(k.historyDir(d.Box), d.Box, filepath.FromSlash(strings.TrimPrefix(d.Path, "/")))
	if err := os.MkdirAll(filepath.Dir(hist), 0o755); err != nil {
		return nil, fmt.Errorf("create history: %w", err)
	}
	src := k.docFile(d.Box, d.Path)
	if err := os.Rename(src, hist); err != nil {
		return nil, fmt.Errorf("remove document: %w", err)
	}
	dirSrc := strings.TrimSuffix(src, ".sy")
	if _, err := os.Stat(dirSrc); err == nil {
		if err := os.Rename(dirSrc, strings.TrimSuffix(hist, ".sy")); err != nil {
			return nil, fmt.Errorf("remove sub-documents: %w", err)
		}
	}
	if err := syncDir(filepath.Dir(src)); err != nil {
		return nil, err
	}
	if filepath.Dir(src) != k.boxDir(d.Box) {
		removeIfEmpty(filepath.Dir(src))
	}
	var ids []string
	k.mu.Lock()
	for _, x := range docs {
		ids = append(ids, x.ID)
		k.unindexDocLocked(x.ID)
	}
	k.mu.Unlock()
	k.sql.queueRemove(ids...)
	if sorts, err := k.readSort(d.Box); err == nil {
		for _, id := range ids {
			delete(sorts, id)
		}
		k.writeSort(d.Box, sorts)
	}
	return nil, nil
}

func (k *Kernel) moveDocsByID(ctx context.Context, a args) (any, error) {
	from, err := a.strList("fromIDs")
	if err != nil {
		return nil, err
	}
	toID, err := a.id("toID")
	if err != nil {
		return nil, err
	}
	// toID is a document or a notebook (its notebook document, or the box itself).
	var toBox, toDir string
	if c, err := k.readBoxConf(toID); err == nil && c != nil {
		toBox, toDir = toID, "/"
	} else if t, ok := k.doc(toID); ok {
		toBox, toDir = t.Box, strings.TrimSuffix(t.Path, ".sy")
		if t.ID == t.Box {
			toDir = "/"
		}
	} else {
		return nil, errf("target [%s] not found", toID)
	}
	for _, id := range from {
		if !validID(id) {
			return nil, errf("invalid ID argument")
		}
		d, ok := k.doc(id)
		if !ok {
			return nil, errf("document [%s] not found", id)
		}
		if d.ID == d.Box {
			return nil, errf("the notebook document can not be moved")
		}
		if d.Box == toBox && (strings.HasPrefix(toDir+"/", strings.TrimSuffix(d.Path, ".sy")+"/")) {
			continue // SiYuan silently ignores a move into itself or a descendant
		}
		if d.Box == toBox && path.Dir(d.Path) == toDir {
			continue
		}
		if err := k.moveDoc(d, toBox, toDir); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

func (k *Kernel) moveDoc(d *docEntry, toBox, toDir string) error {
	docs := k.subtree(d)
	oldBase := strings.TrimSuffix(d.Path, ".sy")
	newBase := path.Join(toDir, d.ID)
	src, dst := k.docFile(d.Box, d.Path), k.docFile(toBox, newBase+".sy")
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("move document: %w", err)
	}
	if err := os.Rename(src, dst); err != nil {
		return fmt.Errorf("move document: %w", err)
	}
	if _, err := os.Stat(strings.TrimSuffix(src, ".sy")); err == nil {
		if err := os.Rename(strings.TrimSuffix(src, ".sy"), strings.TrimSuffix(dst, ".sy")); err != nil {
			return fmt.Errorf("move sub-documents: %w", err)
		}
	}
	syncDir(filepath.Dir(src))
	if err := syncDir(filepath.Dir(dst)); err != nil {
		return err
	}
	k.mu.Lock()
	for _, x := range docs {
		k.unindexDocLocked(x.ID)
	}
	k.mu.Unlock()
	// Re-index in path order so parents' titles are known before children's.
	sort.Slice(docs, func(i, j int) bool { return len(docs[i].Path) < len(docs[j].Path) })
	for _, x := range docs {
		np := newBase + strings.TrimPrefix(x.Path, oldBase)
		tree := cloneTree(x.tree)
		tree.Box, tree.Path, tree.Root.Box, tree.Root.Path = toBox, np, toBox, np
		tree.HPath = k.hpathOf(toBox, np, x.Title)
		k.indexTree(tree, x.Size)
	}
	for _, x := range docs {
		if t, err := k.loadTree(x.ID); err == nil {
			k.sql.queueUpsert(t)
		}
	}
	// SiYuan keeps a moved document's old rank in sort.json; so do we.
	removeIfEmpty(filepath.Dir(src))
	return nil
}

// removeIfEmpty deletes a sub-document folder left empty, as SiYuan does.
func removeIfEmpty(dir string) {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) == 0 {
		if os.Remove(dir) == nil {
			syncDir(filepath.Dir(dir))
		}
	}
}

func (k *Kernel) getHPathByID(ctx context.Context, a args) (any, error) {
	id, err := a.id("id")
	if err != nil {
		return nil, err
	}
	loc, ok := k.lookup(id)
	if !ok {
		return nil, errf("tree not found")
	}
	d, _ := k.doc(loc.Root)
	if d.ID == d.Box {
		return "/", nil
	}
	return k.hpathOf(d.Box, d.Path, d.Title), nil
}

func (k *Kernel) getPathByID(ctx context.Context, a args) (any, error) {
	id, err := a.id("id")
	if err != nil {
		return nil, err
	}
	loc, ok := k.lookup(id)
	if !ok {
		return nil, errf("tree not found")
	}
	return map[string]any{"path": loc.Path, "notebook": loc.Box}, nil
}

func (k *Kernel) getIDsByHPath(ctx context.Context, a args) (any, error) {
	box, err := a.str("notebook")
	if err != nil {
		return nil, err
	}
	hp, err := a.str("path")
	if err != nil {
		return nil, err
	}
	if _, err := k.readBoxConf(box); err != nil {
		return []string{}, nil // SiYuan answers an unknown notebook with no ids
	}
	if hp == "/" {
		if _, ok := k.doc(box); ok {
			return []string{box}, nil
		}
		return []string{}, nil
	}
	ids := k.docsByHPath(box, hp)
	if ids == nil {
		ids = []string{}
	}
	return ids, nil
}
