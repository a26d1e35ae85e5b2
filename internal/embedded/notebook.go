package embedded

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/88250/lute/ast"
	"github.com/88250/lute/parse"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// sortModeFileTree (15) means "use the file tree setting"; SiYuan's default.
const sortModeFileTree = 15

// newBoxConf is the conf.json of a new notebook. BoxCrypt is never left nil
// here or after a read: SiYuan always writes the field, and wire.BoxConf
// omits a nil one.
func newBoxConf(name string) *wire.BoxConf {
	return &wire.BoxConf{
		Name:              name,
		DailyNoteSavePath: `/daily note/{{now | date "2006/01"}}/{{now | date "2006-01-02"}}`,
		SortMode:          sortModeFileTree,
		BoxCrypt:          json.RawMessage("null"),
	}
}

func (k *Kernel) confPath(box string) string {
	return filepath.Join(k.boxDir(box), ".siyuan", "conf.json")
}

func (k *Kernel) readBoxConf(box string) (*wire.BoxConf, error) {
	data, err := os.ReadFile(k.confPath(box))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("notebook %s: %w", box, errNotFound)
		}
		return nil, fmt.Errorf("read notebook conf: %w", err)
	}
	c := newBoxConf("Untitled")
	if err := json.Unmarshal(data, c); err != nil {
		return nil, fmt.Errorf("parse notebook conf %s: %w", box, err)
	}
	if len(c.BoxCrypt) == 0 {
		c.BoxCrypt = json.RawMessage("null")
	}
	return c, nil
}

func (k *Kernel) writeBoxConf(box string, c *wire.BoxConf) error {
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("encode notebook conf: %w", err)
	}
	return writeFileAtomic(k.confPath(box), data, 0o644)
}

// boxIDs lists notebook ids in their sort order.
func (k *Kernel) boxIDs() ([]string, map[string]*wire.BoxConf, error) {
	entries, err := os.ReadDir(k.dataDir)
	if err != nil {
		return nil, nil, fmt.Errorf("read data dir: %w", err)
	}
	confs := map[string]*wire.BoxConf{}
	var ids []string
	for _, e := range entries {
		if !e.IsDir() || !validID(e.Name()) {
			continue
		}
		c, err := k.readBoxConf(e.Name())
		if err != nil {
			continue
		}
		confs[e.Name()] = c
		ids = append(ids, e.Name())
	}
	sort.SliceStable(ids, func(i, j int) bool {
		a, b := confs[ids[i]], confs[ids[j]]
		if a.Sort != b.Sort {
			return a.Sort < b.Sort
		}
		return ids[i] < ids[j]
	})
	return ids, confs, nil
}

// box returns an existing notebook's conf or the error SiYuan answers.
func (k *Kernel) box(id string) (*wire.BoxConf, error) {
	c, err := k.readBoxConf(id)
	if errors.Is(err, errNotFound) {
		return nil, errf("notebook [%s] not found", id)
	}
	return c, err
}

// notebook is the Box object lsNotebooks and createNotebook answer with.
func (k *Kernel) notebook(id string, c *wire.BoxConf) wire.Notebook {
	return wire.Notebook{ID: id, Name: c.Name, Icon: c.Icon, Sort: c.Sort, SortMode: c.SortMode, Closed: c.Closed,
		SubFileCount: k.visibleChildCount(id, "/")}
}

func (k *Kernel) lsNotebooks(ctx context.Context, a args) (any, error) {
	ids, confs, err := k.boxIDs()
	if err != nil {
		return nil, err
	}
	ret := make([]wire.Notebook, 0, len(ids))
	for _, id := range ids {
		ret = append(ret, k.notebook(id, confs[id]))
	}
	return map[string]any{"notebooks": ret, "boxDocEnabled": true}, nil
}

func normalizeName(s string) string {
	s = strings.TrimSpace(s)
	s = strings.NewReplacer("\n", "", "\r", "", "\t", "", "/", "").Replace(s)
	return s
}

func (k *Kernel) createNotebook(ctx context.Context, a args) (any, error) {
	name, err := a.str("name")
	if err != nil {
		return nil, err
	}
	id, err := k.createBox(ctx, name)
	if err != nil {
		return nil, err
	}
	c, err := k.readBoxConf(id)
	if err != nil {
		return nil, err
	}
	return map[string]any{"notebook": k.notebook(id, c)}, nil
}

// createBox creates a notebook with its hidden top-level notebook document,
// as SiYuan 3.7 does with boxDocEnabled.
func (k *Kernel) createBox(ctx context.Context, name string) (string, error) {
	name = normalizeName(name)
	if name == "" {
		name = "Untitled"
	}
	if utf8.RuneCountInString(name) > 512 {
		return "", errf("the name is too long, up to 512 characters")
	}
	ids, confs, err := k.boxIDs()
	if err != nil {
		return "", err
	}
	for i, id := range ids {
		if confs[id].Sort != i+1 {
			confs[id].Sort = i + 1
			if err := k.writeBoxConf(id, confs[id]); err != nil {
				return "", err
			}
		}
	}
	id := ast.NewNodeID()
	c := newBoxConf(name)
	if err := k.writeBoxConf(id, c); err != nil {
		return "", err
	}
	if err := k.writeBoxDocMeta(id); err != nil {
		return "", err
	}
	tree := newDocTree(id, "/"+id+".sy", name)
	tree.HPath = "/" + name // indexed as SiYuan does: searchDocs finds it
	tree.Root.SetIALAttr("custom-hidden", "true")
	if err := k.writeTree(tree); err != nil {
		return "", err
	}
	return id, nil
}

func (k *Kernel) writeBoxDocMeta(box string) error {
	data, _ := json.MarshalIndent(map[string]any{"spec": 1, "boxDocID": box}, "", "  ")
	return writeFileAtomic(filepath.Join(k.boxDir(box), ".siyuan", "boxDoc.json"), data, 0o644)
}

// newDocTree is SiYuan's NewTree: a document holding one empty paragraph.
func newDocTree(box, p, title string) *parse.Tree {
	id := strings.TrimSuffix(p[strings.LastIndex(p, "/")+1:], ".sy")
	root := &ast.Node{Type: ast.NodeDocument, ID: id, Spec: "2", Box: box, Path: p}
	root.SetIALAttr("title", title)
	root.SetIALAttr("id", id)
	root.SetIALAttr("updated", timeFromID(id))
	tree := &parse.Tree{Root: root, ID: id, Box: box, Path: p}
	tree.Root.AppendChild(newParagraph())
	return tree
}

func (k *Kernel) setClosed(a args, closed bool) (any, error) {
	id, err := a.str("notebook")
	if err != nil {
		return nil, err
	}
	c, err := k.readBoxConf(id)
	if errors.Is(err, errNotFound) {
		return nil, nil // SiYuan answers success for an unknown notebook
	}
	if err != nil {
		return nil, err
	}
	c.Closed = closed
	return nil, k.writeBoxConf(id, c)
}

func (k *Kernel) openNotebook(ctx context.Context, a args) (any, error)  { return k.setClosed(a, false) }
func (k *Kernel) closeNotebook(ctx context.Context, a args) (any, error) { return k.setClosed(a, true) }

func (k *Kernel) renameNotebook(ctx context.Context, a args) (any, error) {
	id, err := a.str("notebook")
	if err != nil {
		return nil, err
	}
	name, err := a.str("name")
	if err != nil {
		return nil, err
	}
	name = normalizeName(name)
	if name == "" {
		return nil, errf("the name can not be empty")
	}
	c, err := k.box(id)
	if err != nil {
		return nil, err
	}
	c.Name = name
	if err := k.writeBoxConf(id, c); err != nil {
		return nil, err
	}
	// The notebook document carries the notebook's name as its title.
	if tree, err := k.loadTree(id); err == nil {
		tree.Root.SetIALAttr("title", name)
		if err := k.writeTree(tree); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

func (k *Kernel) removeNotebook(ctx context.Context, a args) (any, error) {
	id, err := a.str("notebook")
	if err != nil {
		return nil, err
	}
	if !validID(id) {
		return nil, errf("invalid ID argument")
	}
	if _, err := os.Stat(k.boxDir(id)); errors.Is(err, os.ErrNotExist) {
		return nil, nil // SiYuan answers success for an unknown notebook
	}
	// SiYuan copies a removed notebook into history/ first.
	hist := filepath.Join(k.historyDir(id), id)
	if err := os.MkdirAll(filepath.Dir(hist), 0o755); err != nil {
		return nil, fmt.Errorf("create history: %w", err)
	}
	if err := os.Rename(k.boxDir(id), hist); err != nil {
		return nil, fmt.Errorf("remove notebook: %w", err)
	}
	if err := syncDir(k.dataDir); err != nil {
		return nil, err
	}
	k.mu.Lock()
	var gone []string
	for docID, d := range k.docs {
		if d.Box == id {
			gone = append(gone, docID)
		}
	}
	for _, d := range gone {
		k.unindexDocLocked(d)
	}
	k.mu.Unlock()
	k.sql.queueRemove(gone...)
	return nil, nil
}

func (k *Kernel) getNotebookConf(ctx context.Context, a args) (any, error) {
	id, err := a.str("notebook")
	if err != nil {
		return nil, err
	}
	c, err := k.box(id)
	if err != nil {
		return nil, err
	}
	return map[string]any{"box": id, "name": c.Name, "conf": c}, nil
}

func (k *Kernel) setNotebookConf(ctx context.Context, a args) (any, error) {
	id, err := a.str("notebook")
	if err != nil {
		return nil, err
	}
	patch, err := a.obj("conf")
	if err != nil {
		return nil, err
	}
	c, err := k.box(id)
	if err != nil {
		return nil, err
	}
	// Merge the given fields onto the stored conf; encryption fields are
	// protected, as in SiYuan.
	delete(patch, "encrypted")
	delete(patch, "boxCrypt")
	if v, ok := patch["dailyNoteSavePath"].(string); ok && strings.TrimSpace(v) == "/" {
		return nil, errf("invalid daily note save path")
	}
	raw, err := json.Marshal(patch)
	if err != nil {
		return nil, errf("invalid conf: %v", err)
	}
	merged := *c
	if err := json.Unmarshal(raw, &merged); err != nil {
		return nil, errf("invalid conf: %v", err)
	}
	merged.Encrypted, merged.BoxCrypt = c.Encrypted, c.BoxCrypt
	merged.Name = normalizeName(merged.Name)
	if merged.Name == "" {
		merged.Name = c.Name
	}
	if err := k.writeBoxConf(id, &merged); err != nil {
		return nil, err
	}
	return &merged, nil
}

func (k *Kernel) setNotebookIcon(ctx context.Context, a args) (any, error) {
	id, err := a.str("notebook")
	if err != nil {
		return nil, err
	}
	icon, err := a.str("icon")
	if err != nil {
		return nil, err
	}
	c, err := k.box(id)
	if err != nil {
		return nil, err
	}
	c.Icon = icon
	return nil, k.writeBoxConf(id, c)
}
