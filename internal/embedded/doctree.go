package embedded

// listDocTree as SiYuan 3.7.3 answers it: the ids of the documents under
// one document of a notebook, read from the notebook's directory on disk
// rather than from the index, nested as the directories nest. The answers
// were captured from the real kernel.

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
)

func (k *Kernel) docTreeRoutes() map[string]route {
	return map[string]route{
		endpoint.ListDocTree: {json: k.listDocTree},
	}
}

// docTreeNode is one document of listDocTree's answer; children is left
// out when the document has none, as SiYuan does.
type docTreeNode struct {
	ID       string         `json:"id"`
	Children []*docTreeNode `json:"children,omitempty"`
}

// listDocTree answers the tree under path ("/<id>" or "/<id>.sy", the
// leading slash optional). SiYuan reads the arguments with unchecked type
// assertions, so a missing or non-string notebook or path answers code 0
// with data null. The notebook's own directory ("/", "", ".") is refused
// as escaping the notebook, any ".." is refused outright, and a path with
// no directory (an unknown document or one without children) answers the
// file system's error. The notebook is not looked up: only its id's form
// is checked.
func (k *Kernel) listDocTree(ctx context.Context, a args) (any, error) {
	box, err := a.str("notebook")
	if err != nil {
		return nil, nil
	}
	if !validID(box) {
		return nil, errf("invalid ID argument")
	}
	p, err := a.str("path")
	if err != nil {
		return nil, nil
	}
	if strings.Contains(p, "..") {
		return nil, errf("path must not contain '..'")
	}
	boxDir := filepath.Join(k.dataDir, box)
	root := filepath.Join(boxDir, strings.TrimSuffix(p, ".sy"))
	if !strings.HasPrefix(root, boxDir+string(filepath.Separator)) {
		return nil, errf("path escapes notebook directory")
	}
	tree, err := walkDocDir(root)
	if err != nil {
		return nil, errf("%s", err)
	}
	return map[string]any{"tree": tree}, nil
}

// walkDocDir lists one directory's documents in name order: a
// sub-directory named by an id is a document with children, a ".sy" file
// named by an id a document, listed once whichever of the two comes first.
// Anything else (hidden directories, other files) is not a document.
func walkDocDir(dir string) ([]*docTreeNode, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []*docTreeNode
	seen := map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() {
			if !validID(name) {
				continue
			}
			n := &docTreeNode{ID: name}
			kids, err := walkDocDir(filepath.Join(dir, name))
			if err != nil {
				return nil, err
			}
			n.Children = kids
			if !seen[name] {
				out = append(out, n)
			}
			seen[name] = true
			continue
		}
		id, ok := strings.CutSuffix(name, ".sy")
		if !ok || !validID(id) {
			continue
		}
		if !seen[id] {
			out = append(out, &docTreeNode{ID: id})
		}
		seen[id] = true
	}
	return out, nil
}
