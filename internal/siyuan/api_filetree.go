package siyuan

import (
	"context"
	"path"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
)

// Note: SiYuan 3.7.3 has no per-document sort-mode endpoint (no
// /api/filetree/setDocSortMode in kernel/api/router.go). Sort modes exist per
// notebook (BoxConf.SortMode via SetNotebookConf) and globally; custom order
// among siblings is set with ChangeSort.

type idArg struct {
	ID string `json:"id"`
}

// CreateDocWithMd creates a document from markdown and returns its ID.
// Missing intermediate documents in req.Path are created empty. Not
// idempotent: look the path up with GetIDsByHPath first, or pin req.ID.
func (c *Client) CreateDocWithMd(ctx context.Context, req CreateDocRequest) (string, error) {
	if err := need(endpoint.CreateDocWithMd, "notebook", req.Notebook, "path", req.Path); err != nil {
		return "", err
	}
	var id string
	if err := c.invoke(ctx, endpoint.CreateDocWithMd, req, &id); err != nil {
		return "", err
	}
	if id == "" {
		return "", missingResult(endpoint.CreateDocWithMd, "document ID")
	}
	return id, nil
}

// RenameDocByID sets a document's title.
func (c *Client) RenameDocByID(ctx context.Context, id, title string) error {
	if err := need(endpoint.RenameDocByID, "id", id); err != nil {
		return err
	}
	req := struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	}{id, title}
	return c.invoke(ctx, endpoint.RenameDocByID, req, nil)
}

// RemoveDocByID deletes a document and its children (copied into history/
// first). The notebook's top-level document cannot be removed.
func (c *Client) RemoveDocByID(ctx context.Context, id string) error {
	if err := need(endpoint.RemoveDocByID, "id", id); err != nil {
		return err
	}
	return c.invoke(ctx, endpoint.RemoveDocByID, idArg{id}, nil)
}

// MoveDocsByID moves documents under toID, a document or a notebook ID.
func (c *Client) MoveDocsByID(ctx context.Context, fromIDs []string, toID string) error {
	if err := needIDs(endpoint.MoveDocsByID, "fromIDs", fromIDs); err != nil {
		return err
	}
	if err := need(endpoint.MoveDocsByID, "toID", toID); err != nil {
		return err
	}
	req := struct {
		FromIDs []string `json:"fromIDs"`
		ToID    string   `json:"toID"`
	}{fromIDs, toID}
	return c.invoke(ctx, endpoint.MoveDocsByID, req, nil)
}

// GetHPathByID returns the human path of the document holding a block
// ("/" for a notebook's top-level document).
func (c *Client) GetHPathByID(ctx context.Context, id string) (string, error) {
	if err := need(endpoint.GetHPathByID, "id", id); err != nil {
		return "", err
	}
	var hpath string
	err := c.invoke(ctx, endpoint.GetHPathByID, idArg{id}, &hpath)
	return hpath, err
}

// GetPathByID returns the storage path and notebook of the document holding
// a block.
func (c *Client) GetPathByID(ctx context.Context, id string) (DocPath, error) {
	var p DocPath
	if err := need(endpoint.GetPathByID, "id", id); err != nil {
		return p, err
	}
	err := c.invoke(ctx, endpoint.GetPathByID, idArg{id}, &p)
	return p, err
}

// GetIDsByHPath returns the IDs of the documents at a human path; several
// when titles are duplicated, none when there is no such document.
func (c *Client) GetIDsByHPath(ctx context.Context, notebook, hpath string) ([]string, error) {
	if err := need(endpoint.GetIDsByHPath, "notebook", notebook, "path", hpath); err != nil {
		return nil, err
	}
	req := struct {
		Notebook string `json:"notebook"`
		Path     string `json:"path"`
	}{notebook, hpath}
	var ids []string
	if err := c.invoke(ctx, endpoint.GetIDsByHPath, req, &ids); err != nil {
		return nil, err
	}
	if ids == nil {
		ids = []string{}
	}
	return ids, nil
}

// ListDocsByPath lists the child documents of a storage path. Hidden
// documents (custom-hidden="true", e.g. the notebook's top-level document)
// are omitted unless req.ShowHidden.
func (c *Client) ListDocsByPath(ctx context.Context, req ListDocsRequest) (DocList, error) {
	var list DocList
	if err := need(endpoint.ListDocsByPath, "notebook", req.Notebook, "path", req.Path); err != nil {
		return list, err
	}
	wire := struct {
		ListDocsRequest
		// Without this the kernel pushes a "too many documents" toast to
		// every open UI when the listing is truncated.
		IgnoreMaxListHint bool `json:"ignoreMaxListHint"`
	}{req, true}
	if err := c.invoke(ctx, endpoint.ListDocsByPath, wire, &list); err != nil {
		return list, err
	}
	if list.Files == nil {
		list.Files = []DocFile{}
	}
	return list, nil
}

// ChangeSort sets the custom order of sibling documents: paths (storage
// paths sharing one parent) get ranks 1..n, remaining siblings follow.
func (c *Client) ChangeSort(ctx context.Context, notebook string, paths []string) error {
	if err := need(endpoint.ChangeSort, "notebook", notebook); err != nil {
		return err
	}
	if err := needIDs(endpoint.ChangeSort, "paths", paths); err != nil {
		return err
	}
	req := struct {
		Notebook string   `json:"notebook"`
		Paths    []string `json:"paths"`
	}{notebook, paths}
	return c.invoke(ctx, endpoint.ChangeSort, req, nil)
}

// DocIDOfPath is the id of the document a storage path names
// (/20240318112233-abc1234/20240318112300-def5678.sy: its last segment
// without .sy); callers check it is an id where the path came from outside.
func DocIDOfPath(p string) string { return strings.TrimSuffix(path.Base(p), ".sy") }
