package embedded

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/88250/lute/ast"
	"github.com/88250/lute/parse"
	"github.com/88250/lute/render"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/mdexport"
)

// errNotFound is returned when a block, document or notebook does not exist.
var errNotFound = errors.New("not found")

// blockLoc is the block-tree entry of one block: where its document lives.
type blockLoc struct {
	Root string // document (tree) id
	Box  string
	Path string // storage path of the document, e.g. /2024.../2025....sy
	Type string // SiYuan type abbreviation
	AvID string // the database a database block shows
}

// docEntry describes one document of the file tree. It is replaced, never
// mutated, when the document changes.
type docEntry struct {
	ID    string
	Box   string
	Path  string
	Title string
	Size  int // bytes of the .sy file
	// tree is the parsed document, shared by readers and never mutated:
	// writers work on a clone and install a new entry. Parsing a large
	// document costs milliseconds; cloning it, microseconds.
	tree *parse.Tree
}

// boxDir returns the directory of a notebook.
func (k *Kernel) boxDir(box string) string { return filepath.Join(k.dataDir, box) }

// docFile returns the .sy file of a document.
func (k *Kernel) docFile(box, p string) string {
	return filepath.Join(k.dataDir, box, filepath.FromSlash(strings.TrimPrefix(p, "/")))
}

// loadIndex walks every notebook and builds the block tree from the .sy files.
func (k *Kernel) loadIndex() error {
	entries, err := os.ReadDir(k.dataDir)
	if err != nil {
		return fmt.Errorf("read data dir: %w", err)
	}
	for _, e := range entries {
		if !e.IsDir() || !validID(e.Name()) {
			continue
		}
		box := e.Name()
		if _, err := os.Stat(filepath.Join(k.boxDir(box), ".siyuan", "conf.json")); err != nil {
			continue
		}
		root := k.boxDir(box)
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if strings.HasPrefix(d.Name(), ".") && p != root {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(d.Name(), ".sy") {
				return nil
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return fmt.Errorf("read %s: %w", p, err)
			}
			rel, _ := filepath.Rel(root, p)
			sp := "/" + filepath.ToSlash(rel)
			tree, err := k.parseSY(data, box, sp)
			if err != nil {
				k.log.Warn("skipping unreadable document", "path", p, "err", err)
				return nil
			}
			k.indexTree(tree, len(data))
			return nil
		})
		if err != nil {
			return fmt.Errorf("index notebook %s: %w", box, err)
		}
	}
	return nil
}

// parseSY turns .sy JSON into a lute tree with Box, Path and HPath set.
func (k *Kernel) parseSY(data []byte, box, p string) (*parse.Tree, error) {
	tree, err := mdexport.ParseSY(data)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", p, err)
	}
	tree.Box, tree.Path = box, p
	tree.Root.Box, tree.Root.Path = box, p
	tree.HPath = k.hpathOf(box, p, tree.Root.IALAttr("title"))
	if tree.ID == box {
		tree.HPath = "/" // the notebook document
	}
	return tree, nil
}

func newParagraph() *ast.Node {
	p := &ast.Node{Type: ast.NodeParagraph, ID: ast.NewNodeID()}
	p.SetIALAttr("id", p.ID)
	p.SetIALAttr("updated", timeFromID(p.ID))
	return p
}

// hpathOf derives the human path of a document from its ancestors' titles.
func (k *Kernel) hpathOf(box, p, title string) string {
	parts := strings.Split(strings.TrimSuffix(strings.TrimPrefix(p, "/"), ".sy"), "/")
	var b strings.Builder
	for _, id := range parts[:len(parts)-1] {
		t := "Untitled"
		k.mu.RLock()
		if d, ok := k.docs[id]; ok && d.Title != "" {
			t = d.Title
		}
		k.mu.RUnlock()
		b.WriteString("/")
		b.WriteString(t)
	}
	b.WriteString("/")
	b.WriteString(title)
	return b.String()
}

// renderSY renders a tree as SiYuan 3.7 stores it: single-line JSON.
func renderSY(tree *parse.Tree) ([]byte, error) {
	l := mdexport.NewLute()
	tree.Root.SetIALAttr("type", "doc")
	data := render.NewJSONRenderer(tree, l.RenderOptions, l.ParseOptions).Render()
	if !json.Valid(data) {
		return nil, fmt.Errorf("render tree %s: invalid JSON", tree.ID)
	}
	return data, nil
}

// indexTree records every block of a tree in the block tree.
func (k *Kernel) indexTree(tree *parse.Tree, size int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.indexTreeLocked(tree, size)
}

func (k *Kernel) indexTreeLocked(tree *parse.Tree, size int) {
	for _, id := range k.rootBlocks[tree.ID] {
		// A block moved to another document belongs to that tree now.
		if loc, ok := k.blocks[id]; ok && loc.Root == tree.ID {
			delete(k.blocks, id)
		}
	}
	var ids []string
	ast.Walk(tree.Root, func(n *ast.Node, entering bool) ast.WalkStatus {
		if !entering || !n.IsBlock() || n.ID == "" || n.Type == ast.NodeKramdownBlockIAL {
			return ast.WalkContinue
		}
		k.blocks[n.ID] = blockLoc{Root: tree.ID, Box: tree.Box, Path: tree.Path, Type: abbr(n), AvID: n.AttributeViewID}
		ids = append(ids, n.ID)
		return ast.WalkContinue
	})
	k.rootBlocks[tree.ID] = ids
	k.docs[tree.ID] = &docEntry{ID: tree.ID, Box: tree.Box, Path: tree.Path, Title: tree.Root.IALAttr("title"), Size: size,
		tree: cloneTree(tree)}
}

func (k *Kernel) unindexDocLocked(id string) {
	for _, b := range k.rootBlocks[id] {
		if loc, ok := k.blocks[b]; ok && loc.Root == id {
			delete(k.blocks, b)
		}
	}
	delete(k.rootBlocks, id)
	delete(k.docs, id)
}

// lookup returns the block-tree entry of a block.
func (k *Kernel) lookup(id string) (blockLoc, bool) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	loc, ok := k.blocks[id]
	return loc, ok
}

func (k *Kernel) doc(id string) (*docEntry, bool) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	d, ok := k.docs[id]
	return d, ok
}

// loadTree returns a private copy of a document, so callers may mutate it
// freely (SiYuan re-reads the file on every request for the same reason).
func (k *Kernel) loadTree(rootID string) (*parse.Tree, error) {
	d, ok := k.doc(rootID)
	if !ok {
		return nil, fmt.Errorf("tree %s: %w", rootID, errNotFound)
	}
	return cloneTree(d.tree), nil
}

// loadTreeOf loads a private copy of the tree that holds a block.
func (k *Kernel) loadTreeOf(id string) (*parse.Tree, *ast.Node, error) {
	loc, ok := k.lookup(id)
	if !ok {
		return nil, nil, fmt.Errorf("block %s: %w", id, errNotFound)
	}
	tree, err := k.loadTree(loc.Root)
	if err != nil {
		return nil, nil, err
	}
	n := mdexport.NodeByID(tree.Root, id)
	if n == nil {
		return nil, nil, fmt.Errorf("block %s: %w", id, errNotFound)
	}
	return tree, n, nil
}

// viewOf returns the shared tree holding a block and the block itself; the
// caller must not mutate either (clone a subtree first to render it).
func (k *Kernel) viewOf(id string) (*parse.Tree, *ast.Node, error) {
	loc, ok := k.lookup(id)
	if !ok {
		return nil, nil, fmt.Errorf("block %s: %w", id, errNotFound)
	}
	d, ok := k.doc(loc.Root)
	if !ok {
		return nil, nil, fmt.Errorf("tree %s: %w", loc.Root, errNotFound)
	}
	n := mdexport.NodeByID(d.tree.Root, id)
	if n == nil {
		return nil, nil, fmt.Errorf("block %s: %w", id, errNotFound)
	}
	return d.tree, n, nil
}

// cloneTree deep-copies a tree's node structure.
func cloneTree(t *parse.Tree) *parse.Tree {
	c := *t
	c.Root = cloneSubtree(t.Root)
	if t.Context != nil {
		ctx := *t.Context
		ctx.Tip = c.Root
		c.Context = &ctx
	}
	return &c
}

// cloneSubtree returns a detached deep copy of n and its descendants. Links,
// IALs and tokens are copied (Lute mutates them in place); other pointer
// fields are shared because nothing here mutates them.
func cloneSubtree(n *ast.Node) *ast.Node {
	c := *n
	c.Parent, c.Previous, c.Next, c.FirstChild, c.LastChild = nil, nil, nil, nil, nil
	c.Children = nil
	if n.KramdownIAL != nil {
		c.KramdownIAL = make([][]string, len(n.KramdownIAL))
		for i, kv := range n.KramdownIAL {
			c.KramdownIAL[i] = append([]string(nil), kv...)
		}
	}
	if n.Tokens != nil {
		c.Tokens = append([]byte(nil), n.Tokens...)
	}
	for ch := n.FirstChild; ch != nil; ch = ch.Next {
		c.AppendChild(cloneSubtree(ch))
	}
	return &c
}

// writeTree persists a tree durably, then updates the block tree and queues
// the SQL index update (which lags until flushed, like SiYuan's).
// Callers hold writeMu.
func (k *Kernel) writeTree(tree *parse.Tree) error {
	if tree.Root.FirstChild == nil {
		tree.Root.AppendChild(newParagraph())
	}
	data, err := renderSY(tree)
	if err != nil {
		return err
	}
	if err := writeFileAtomic(k.docFile(tree.Box, tree.Path), data, 0o644); err != nil {
		return err
	}
	k.indexTree(tree, len(data))
	k.sql.queueUpsert(tree)
	return nil
}

// childDocs lists the documents directly under a storage directory of a box
// ("/" or "/<id>/<id>" without .sy).
func (k *Kernel) childDocs(box, dir string) []*docEntry {
	dir = strings.TrimSuffix(dir, ".sy")
	if dir == "" {
		dir = "/"
	}
	k.mu.RLock()
	defer k.mu.RUnlock()
	var ret []*docEntry
	for _, d := range k.docs {
		if d.Box != box {
			continue
		}
		if path.Dir(d.Path) == dir {
			ret = append(ret, d)
		}
	}
	sort.Slice(ret, func(i, j int) bool { return ret[i].ID < ret[j].ID })
	return ret
}

// subDocCount counts documents directly under a document.
func (k *Kernel) subDocCount(box, docPath string) int {
	return len(k.childDocs(box, strings.TrimSuffix(docPath, ".sy")))
}
