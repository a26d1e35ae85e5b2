package siyuan

import (
	"context"
	"errors"
	"path/filepath"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
)

// Templates are Markdown files under data/templates/ on the kernel's
// machine (a folder is a group of templates); write them with [Client.PutFile]
// ("/data/templates/<name>.md"). SiYuan renders them with Go's text/template
// and the sprig functions (without env, expandenv, getHostByName), plus
// now, date helpers (Weekday, ISOWeek…), getHPathByID and SQL helpers
// (querySQL, queryBlocks, getBlock) that run on the kernel's index. Those
// SQL helpers are not read-only (querySQL runs any single statement), so
// every render is classified as a write and attempted once.

// ErrTemplateExists is matched by errors.Is for [Client.DocSaveAsTemplate]'s
// refusal to replace an existing template (the kernel's code 1 with an
// empty message, when overwrite is false). The error itself stays the
// [*APIError].
var ErrTemplateExists = errors.New("siyuan: a template of that name exists")

// SearchTemplate lists the templates whose name contains every
// space-separated word of k, case-insensitively (an empty k lists them
// all): the .md files directly in data/templates/ and anywhere in its
// folders (a folder's name counts as part of its templates' names),
// except README.md and dot files. Path is the template's absolute path on
// the kernel's machine: what [Client.RenderTemplate] and
// [Client.RemoveTemplate] take. Content is the name shown ("name" or
// "/group/name", without .md) with <mark> highlights. The best
// Jaro-Winkler match of a word with the file name comes first; equal
// scores keep the kernel's listing order (by name).
func (c *Client) SearchTemplate(ctx context.Context, k string) ([]TemplateSearchResult, error) {
	var out struct {
		Templates []TemplateSearchResult `json:"templates"`
	}
	if err := c.invoke(ctx, endpoint.SearchTemplate, struct {
		K string `json:"k"`
	}{k}, &out); err != nil {
		return nil, err
	}
	if out.Templates == nil {
		out.Templates = []TemplateSearchResult{}
	}
	return out.Templates, nil
}

// RenderTemplate renders the template file at the absolute path p for the
// block id and returns the result as block DOM (each block with a new id
// and an updated time, ready for insertBlock's dataType "dom"). The
// template uses the delimiters .action{ and }, with .id, .title (the
// document's title when id is a document, else the block's name), .name
// and .alias of the block. p may be any file inside the workspace
// ("Path [p] is not in workspace", code -1, otherwise, also for a relative
// path). A missing file is code -1 with the open error; an unknown block
// "tree not found"; a template error "Parse template failed: …"
// (HTML-escaped). preview renders a database as a table instead of saving
// a copy of it.
func (c *Client) RenderTemplate(ctx context.Context, id, p string, preview bool) (string, error) {
	if err := need(endpoint.RenderTemplate, "id", id, "path", p); err != nil {
		return "", err
	}
	req := struct {
		ID      string `json:"id"`
		Path    string `json:"path"`
		Preview bool   `json:"preview"`
	}{id, p, preview}
	var out RenderedTemplate
	if err := c.invoke(ctx, endpoint.RenderTemplate, req, &out); err != nil {
		return "", err
	}
	return out.Content, nil
}

// RenderSprig renders a Go template ({{ }} delimiters, no data: .x is
// "<no value>") with the same functions as templates, and returns the text.
// A parse or execution error is code -1 "Parse template failed: …",
// HTML-escaped.
func (c *Client) RenderSprig(ctx context.Context, tpl string) (string, error) {
	var out *string
	if err := c.invoke(ctx, endpoint.RenderSprig, struct {
		Template string `json:"template"`
	}{tpl}, &out); err != nil {
		return "", err
	}
	if out == nil {
		return "", &NullDataError{Endpoint: endpoint.RenderSprig}
	}
	return *out, nil
}

// DocSaveAsTemplate saves a document (or a block, a heading with the
// blocks under it) as data/templates/<name>.md: kramdown with every
// block's IAL (without updated times) and the document's IAL last.
// name is filtered as a file name (\ / : * ? " ' < > | become "_"), so a
// name cannot leave data/templates; an empty name saves ".md". An
// existing template is kept and the call fails with code 1 (errors.Is(err,
// ErrTemplateExists)) unless overwrite. The kernel answers code 0 and
// writes nothing for an unknown block, so this method sends only an id of
// the node ID shape and callers should check that the block exists. It is
// a write: attempted once.
func (c *Client) DocSaveAsTemplate(ctx context.Context, id, name string, overwrite bool) error {
	if !isNodeID(id) {
		return invalidArg(endpoint.DocSaveAsTemplate, "id %q is not a block ID", id)
	}
	req := struct {
		ID        string `json:"id"`
		Name      string `json:"name"`
		Overwrite bool   `json:"overwrite"`
	}{id, name, overwrite}
	return c.call(ctx, endpoint.DocSaveAsTemplate, kindOf(endpoint.DocSaveAsTemplate), req, nil, true)
}

// RemoveTemplate removes a template file or group folder, recursively. p
// is the absolute path [Client.SearchTemplate] returns. The kernel removes
// whatever path it is given and answers code 0 also when nothing was
// there, so this method only sends an absolute path that lies under a
// data/templates/ folder and has no "." or ".." segment, and refuses
// anything else locally. It is a write: attempted once.
func (c *Client) RemoveTemplate(ctx context.Context, p string) error {
	if err := checkTemplatePath(p); err != nil {
		return err
	}
	return c.invoke(ctx, endpoint.RemoveTemplate, pathArg{p}, nil)
}

func checkTemplatePath(p string) error {
	if err := need(endpoint.RemoveTemplate, "path", p); err != nil {
		return err
	}
	slashed := strings.ReplaceAll(p, `\`, "/")
	abs := strings.HasPrefix(slashed, "/") || filepath.IsAbs(p) || (len(slashed) > 2 && slashed[1] == ':' && slashed[2] == '/')
	_, rest, found := strings.Cut(slashed, "/data/templates/")
	if !abs || !found || strings.Trim(rest, "/") == "" || strings.TrimSpace(p) != p {
		return invalidArg(endpoint.RemoveTemplate, "path %q must be an absolute path under data/templates/", p)
	}
	for _, seg := range strings.Split(slashed, "/") {
		if seg == "." || seg == ".." {
			return invalidArg(endpoint.RemoveTemplate, "path %q must not have . or .. segments", p)
		}
	}
	return nil
}
