package siyuan

import (
	"context"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
)

type notebookArg struct {
	Notebook string `json:"notebook"`
}

// ListNotebooks lists all notebooks, open and closed.
func (c *Client) ListNotebooks(ctx context.Context) ([]Notebook, error) {
	var data struct {
		Notebooks []Notebook `json:"notebooks"`
	}
	if err := c.invoke(ctx, endpoint.LsNotebooks, nil, &data); err != nil {
		return nil, err
	}
	if data.Notebooks == nil {
		data.Notebooks = []Notebook{}
	}
	return data.Notebooks, nil
}

// CreateNotebook creates (and opens) a notebook. Not idempotent: duplicate
// names are allowed.
func (c *Client) CreateNotebook(ctx context.Context, name string) (Notebook, error) {
	var data struct {
		Notebook *Notebook `json:"notebook"`
	}
	req := struct {
		Name string `json:"name"`
	}{name}
	if err := c.invoke(ctx, endpoint.CreateNotebook, req, &data); err != nil {
		return Notebook{}, err
	}
	if data.Notebook == nil || data.Notebook.ID == "" {
		// The kernel answered without the new notebook: whether it was
		// created, we cannot tell.
		return Notebook{}, missingResult(endpoint.CreateNotebook, "notebook.id")
	}
	return *data.Notebook, nil
}

// OpenNotebook opens (mounts) a notebook.
func (c *Client) OpenNotebook(ctx context.Context, id string) error {
	if err := need(endpoint.OpenNotebook, "notebook", id); err != nil {
		return err
	}
	return c.invoke(ctx, endpoint.OpenNotebook, notebookArg{id}, nil)
}

// CloseNotebook closes (unmounts) a notebook.
func (c *Client) CloseNotebook(ctx context.Context, id string) error {
	if err := need(endpoint.CloseNotebook, "notebook", id); err != nil {
		return err
	}
	return c.invoke(ctx, endpoint.CloseNotebook, notebookArg{id}, nil)
}

// RenameNotebook renames a notebook.
func (c *Client) RenameNotebook(ctx context.Context, id, name string) error {
	if err := need(endpoint.RenameNotebook, "notebook", id); err != nil {
		return err
	}
	req := struct {
		Notebook string `json:"notebook"`
		Name     string `json:"name"`
	}{id, name}
	return c.invoke(ctx, endpoint.RenameNotebook, req, nil)
}

// RemoveNotebook deletes a notebook (the kernel copies it into history/
// first). An unknown ID succeeds silently.
func (c *Client) RemoveNotebook(ctx context.Context, id string) error {
	if err := need(endpoint.RemoveNotebook, "notebook", id); err != nil {
		return err
	}
	return c.invoke(ctx, endpoint.RemoveNotebook, notebookArg{id}, nil)
}

// GetNotebookConf returns a notebook's configuration.
func (c *Client) GetNotebookConf(ctx context.Context, id string) (NotebookConf, error) {
	var nc NotebookConf
	if err := need(endpoint.GetNotebookConf, "notebook", id); err != nil {
		return nc, err
	}
	err := c.invoke(ctx, endpoint.GetNotebookConf, notebookArg{id}, &nc)
	return nc, err
}

// SetNotebookConf stores conf and returns the configuration as saved. The
// kernel merges the JSON onto the current configuration and every BoxConf
// field is sent, so read-modify-write: start from GetNotebookConf. The
// encryption fields are never changed by this call.
func (c *Client) SetNotebookConf(ctx context.Context, id string, conf BoxConf) (BoxConf, error) {
	var saved BoxConf
	if err := need(endpoint.SetNotebookConf, "notebook", id); err != nil {
		return saved, err
	}
	conf.BoxCrypt = nil // protected by the kernel anyway; keep secrets off the wire
	req := struct {
		Notebook string  `json:"notebook"`
		Conf     BoxConf `json:"conf"`
	}{id, conf}
	err := c.invoke(ctx, endpoint.SetNotebookConf, req, &saved)
	return saved, err
}

// SetNotebookIcon sets a notebook's icon (an emoji code such as "1f4d4" or an
// icon path).
func (c *Client) SetNotebookIcon(ctx context.Context, id, icon string) error {
	if err := need(endpoint.SetNotebookIcon, "notebook", id); err != nil {
		return err
	}
	req := struct {
		Notebook string `json:"notebook"`
		Icon     string `json:"icon"`
	}{id, icon}
	return c.invoke(ctx, endpoint.SetNotebookIcon, req, nil)
}
