package siyuan

import (
	"context"
	"path"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
)

// Asset paths. SiYuan names an asset by its path relative to data/:
// "assets/<name>-<id>.<ext>" for the global data/assets folder (and, as
// documents link them, for a notebook's own assets folder too, which the
// kernel finds by suffix), "<notebook>/assets/…" where it lists a
// notebook's assets. The calls below take and return such paths unless
// they say otherwise.

// GetDocAssets lists the asset links ("assets/…") of the document holding
// the block id (a block id answers for its whole document), in document
// order without duplicates: link and image destinations, <a> links, the src
// of HTML, audio, video and iframe blocks, a widget's data-assets and block
// attributes custom-data-assets*. Links to a notebook's assets written as
// "<notebook>/assets/…" and remote URLs are not listed. With keepQuery a
// link keeps its query ("assets/a.pdf?page=2"), else it is cut at "?"
// (which may then repeat an entry). An unknown id is code -1 "tree not
// found". A document without assets is an empty list (the kernel answers
// null).
func (c *Client) GetDocAssets(ctx context.Context, id string, keepQuery bool) ([]string, error) {
	if err := need(endpoint.GetDocAssets, "id", id); err != nil {
		return nil, err
	}
	req := struct {
		ID             string `json:"id"`
		RetainQueryStr bool   `json:"retainQueryStr"`
	}{id, keepQuery}
	var out []string
	if err := c.call(ctx, endpoint.GetDocAssets, kindOf(endpoint.GetDocAssets), req, &out, true); err != nil {
		return nil, err
	}
	if out == nil {
		out = []string{}
	}
	return out, nil
}

// GetDocImageAssets lists the destination of every image of the document
// holding the block id, in document order, duplicates and remote images
// ("https://…") included; an HTML <img> counts once the kernel has turned
// it into an image. An unknown id is code -1 "tree not found"; no images is
// an empty list (the kernel answers null).
func (c *Client) GetDocImageAssets(ctx context.Context, id string) ([]string, error) {
	if err := need(endpoint.GetDocImageAssets, "id", id); err != nil {
		return nil, err
	}
	var out []string
	if err := c.call(ctx, endpoint.GetDocImageAssets, kindOf(endpoint.GetDocImageAssets), struct {
		ID string `json:"id"`
	}{id}, &out, true); err != nil {
		return nil, err
	}
	if out == nil {
		out = []string{}
	}
	return out, nil
}

// GetUnusedAssets lists the assets no document links (and no database
// mentions), at most 512, newest first: files and folders in data/assets
// (Item "assets/…") and in the notebooks' assets folders (Item
// "<notebook>/assets/…"). A folder is listed without trailing slash;
// dot files and ocr-texts.json are never listed. The kernel reads no
// arguments.
func (c *Client) GetUnusedAssets(ctx context.Context) ([]UnusedAsset, error) {
	var out []UnusedAsset
	if err := c.call(ctx, endpoint.GetUnusedAssets, kindOf(endpoint.GetUnusedAssets), nil, &out, false); err != nil {
		return nil, err
	}
	if out == nil {
		out = []UnusedAsset{}
	}
	return out, nil
}

// RemoveUnusedAssets removes every asset [Client.GetUnusedAssets] would
// list (without its 512 cap; copies go to the kernel's history folder) and
// returns their absolute paths on the kernel's machine, in no particular
// order. It is a write: attempted once. It touches every notebook's
// assets, not only the caller's: list them first.
func (c *Client) RemoveUnusedAssets(ctx context.Context) ([]string, error) {
	var out struct {
		Paths []string `json:"paths"`
	}
	if err := c.call(ctx, endpoint.RemoveUnusedAssets, kindOf(endpoint.RemoveUnusedAssets), nil, &out, false); err != nil {
		return nil, err
	}
	if out.Paths == nil {
		out.Paths = []string{}
	}
	return out.Paths, nil
}

// RemoveUnusedAsset removes data/<p> and returns its absolute path on the
// kernel's machine. Despite its name the kernel does not check that nothing
// links the asset, removes a folder with everything in it, and answers the
// same path with code 0 when there was nothing to remove, so the reply
// never says whether anything was removed. Because the kernel would remove
// any path it is given (data/ itself for "", outside the workspace for
// ".."), this method only sends a clean asset path, "assets/<…>" or
// "<notebook id>/assets/<…>" with something after "assets/", and refuses
// anything else locally. It is a write: attempted once.
func (c *Client) RemoveUnusedAsset(ctx context.Context, p string) (string, error) {
	if err := checkAssetPath(endpoint.RemoveUnusedAsset, p); err != nil {
		return "", err
	}
	var out struct {
		Path string `json:"path"`
	}
	if err := c.invoke(ctx, endpoint.RemoveUnusedAsset, pathArg{p}, &out); err != nil {
		return "", err
	}
	if out.Path == "" {
		return "", missingResult(endpoint.RemoveUnusedAsset, "path")
	}
	return out.Path, nil
}

// checkAssetPath accepts "assets/<x>" and "<notebook id>/assets/<x>",
// clean (no "." or ".." segment, no doubled or trailing slash, no query).
func checkAssetPath(endpoint, p string) error {
	if err := need(endpoint, "path", p); err != nil {
		return err
	}
	rest := p
	if box, r, ok := strings.Cut(p, "/"); ok && isNodeID(box) {
		rest = r
	}
	if !strings.HasPrefix(rest, "assets/") || len(rest) == len("assets/") || path.Clean(p) != p ||
		strings.ContainsAny(p, "?#\\") || strings.TrimSpace(p) != p {
		return invalidArg(endpoint, "path %q must be a clean asset path: assets/<name> or <notebook>/assets/<name>", p)
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "." || seg == ".." {
			return invalidArg(endpoint, "path %q must not have . or .. segments", p)
		}
	}
	return nil
}

// RenameAsset renames an asset and rewrites the links to it, returning the
// new path. newName is a base name without extension: the kernel filters
// it as an upload name (\ / : * ? " ' < > | become "_"; [ ] ( ) ! ` & { } =
// # % $ ; ~ are dropped), keeps the old extension and appends a new id
// (an id the name already ends with is kept): "assets/a-<id>.png" renamed
// "b c" is "assets/b c-<new id>.png". The file is renamed where it lies
// (for "assets/…" the global folder, else the first notebook holding a
// file with that path suffix), with its .sya annotations. Every .sy file
// of every notebook then has each occurrence of the old file name (the
// last segment of oldPath) replaced by the new one, as plain bytes, so
// documents link the new name; markdown shows a space as %20.
//
// The kernel answers an empty new path, and changes nothing, when newName
// is blank or the asset's current name. It answers a new path with code 0
// even when oldPath names no asset, and renames nothing then: check that
// the asset exists first. It is a write: attempted once.
func (c *Client) RenameAsset(ctx context.Context, oldPath, newName string) (string, error) {
	if err := need(endpoint.RenameAsset, "oldPath", oldPath); err != nil {
		return "", err
	}
	req := struct {
		OldPath string `json:"oldPath"`
		NewName string `json:"newName"`
	}{oldPath, newName}
	var out struct {
		NewPath *string `json:"newPath"`
	}
	if err := c.invoke(ctx, endpoint.RenameAsset, req, &out); err != nil {
		return "", err
	}
	if out.NewPath == nil {
		return "", missingResult(endpoint.RenameAsset, "newPath")
	}
	return *out.NewPath, nil
}

// GetImageOCRText returns the OCR text the workspace stores for an asset
// (data/assets/ocr-texts.json, read by the kernel at boot), "" when it has
// none: the kernel runs no OCR here, and answers "" for any path, missing
// or not an asset. The kernel routes it as an admin write, but it changes
// nothing: it is a read.
func (c *Client) GetImageOCRText(ctx context.Context, p string) (string, error) {
	if err := need(endpoint.GetImageOCRText, "path", p); err != nil {
		return "", err
	}
	var out struct {
		Text *string `json:"text"`
	}
	if err := c.invoke(ctx, endpoint.GetImageOCRText, pathArg{p}, &out); err != nil {
		return "", err
	}
	if out.Text == nil {
		return "", &NullDataError{Endpoint: endpoint.GetImageOCRText}
	}
	return *out.Text, nil
}

// SearchAsset finds files in data/assets (not the notebooks' assets
// folders) whose name without id or whose path contains k, or one of its
// space-separated words, case-insensitively; an empty k matches every
// asset. exts (".png", any case) keeps only those extensions. Results are
// ranked by hits (the whole k in name and path counts most), at most 64;
// the order of equal ranks is the kernel's and may change between calls.
// HName carries <mark> highlights (HTML-escaped). The real kernel answers
// from a cache it refreshes about 100 ms after data/assets changes, so an
// upload may take that long to show.
func (c *Client) SearchAsset(ctx context.Context, k string, exts []string) ([]AssetSearchResult, error) {
	req := struct {
		K    string   `json:"k"`
		Exts []string `json:"exts,omitempty"`
	}{k, exts}
	var out []AssetSearchResult
	if err := c.call(ctx, endpoint.SearchAsset, kindOf(endpoint.SearchAsset), req, &out, false); err != nil {
		return nil, err
	}
	if out == nil {
		out = []AssetSearchResult{}
	}
	return out, nil
}
