package siyuan

import (
	"context"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
)

// DocTreeNode is one document of a listDocTree answer: its id and the
// documents below it (none when it has no children).
type DocTreeNode struct {
	ID       string         `json:"id"`
	Children []*DocTreeNode `json:"children,omitempty"`
}

// ListDocTree returns the documents below one document of a notebook
// (path is its storage path, "/<id>.sy" or "/<id>/<id>.sy"; the ".sy" is
// optional), nested as they nest, read from the notebook's folder on disk
// rather than from the index, which lags behind writes. SiYuan refuses the
// notebook's own folder ("/"): list its top level with ListDocsByPath. A
// document without children (or an unknown one) has no folder, which the
// kernel answers as an error: ask only for a document whose listing shows
// children.
func (c *Client) ListDocTree(ctx context.Context, notebook, path string) ([]*DocTreeNode, error) {
	if err := need(endpoint.ListDocTree, "notebook", notebook, "path", path); err != nil {
		return nil, err
	}
	req := struct {
		Notebook string `json:"notebook"`
		Path     string `json:"path"`
	}{notebook, path}
	var out struct {
		Tree []*DocTreeNode `json:"tree"`
	}
	if err := c.invoke(ctx, endpoint.ListDocTree, req, &out); err != nil {
		return nil, err
	}
	return out.Tree, nil
}
