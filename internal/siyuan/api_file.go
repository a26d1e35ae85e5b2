package siyuan

import (
	"context"
	"io"
	"mime/multipart"
	"path"
	"strconv"
	"strings"
	"unicode"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
)

type pathArg struct {
	Path string `json:"path"`
}

// UploadAsset uploads files into the assets directory (multipart field
// "file[]", streamed). It is a write: attempted once. AssetsDirPath is any
// folder under data/ (made when missing; outside the workspace is code -1
// "Path [<absolute folder>] is not in workspace"); ID, for a block the
// kernel does not know, is code -1 "Failed to insert asset file, please
// reopen the document". Each file is stored as "<name>-<new id><ext>" (an
// id the name ends with is kept, the extension lower-cased, the name
// filtered as an upload name) and SuccMap maps each name as sent (one key
// for a name sent twice) to "<folder>/<stored name>". Identical non-empty
// bytes under the same name (case-insensitively, without id) are not
// stored again only when the first copy went to data/assets: SiYuan's hash
// cache keeps only those, and then answers that "assets/…" path even for
// another AssetsDirPath; uploads into a notebook's assets folder are
// stored anew every time. Files the kernel could not store are listed in
// ErrFiles while the reply still has code 0: check it.
func (c *Client) UploadAsset(ctx context.Context, req AssetUploadRequest) (AssetUploadResult, error) {
	var res AssetUploadResult
	if len(req.Files) == 0 {
		return res, invalidArg(endpoint.UploadAsset, "at least one file is required")
	}
	for i, f := range req.Files {
		if err := checkFileName(endpoint.UploadAsset, f.Name); err != nil {
			return res, err
		}
		if f.Body == nil {
			return res, invalidArg(endpoint.UploadAsset, "files[%d] has no body", i)
		}
	}
	r := &request{
		endpoint: endpoint.UploadAsset,
		kind:     kindOf(endpoint.UploadAsset),
		out:      &res,
		multipart: func(mw *multipart.Writer) error {
			if req.AssetsDirPath != "" {
				if err := mw.WriteField("assetsDirPath", req.AssetsDirPath); err != nil {
					return err
				}
			}
			if req.ID != "" {
				if err := mw.WriteField("id", req.ID); err != nil {
					return err
				}
			}
			if req.SkipIfDuplicated {
				if err := mw.WriteField("skipIfDuplicated", "true"); err != nil {
					return err
				}
			}
			for _, f := range req.Files {
				w, err := mw.CreateFormFile("file[]", f.Name)
				if err != nil {
					return err
				}
				if _, err := io.Copy(w, f.Body); err != nil {
					return err
				}
			}
			return nil
		},
	}
	if _, err := c.run(ctx, r); err != nil {
		return AssetUploadResult{}, err
	}
	if res.ErrFiles == nil {
		res.ErrFiles = []string{}
	}
	if res.SuccMap == nil {
		res.SuccMap = map[string]string{}
	}
	return res, nil
}

// checkFileName keeps control characters out of multipart headers, where a
// line break would let a file name inject header lines.
func checkFileName(endpoint, name string) error {
	if strings.TrimSpace(name) == "" {
		return invalidArg(endpoint, "file name must not be empty")
	}
	if strings.ContainsFunc(name, unicode.IsControl) {
		return invalidArg(endpoint, "file name %q contains control characters", name)
	}
	return nil
}

// GetFile streams a workspace file (path relative to the workspace root,
// e.g. "/data/storage/petal/<plugin>/<name>"; the leading slash is optional,
// surrounding white space is trimmed, ".." is resolved and may not leave the
// workspace). The content type is the kernel's: by extension, else sniffed
// (a JSON file without extension is application/json, an empty file
// text/plain). The caller must close the reader. Errors come back as
// *APIError with the kernel's code: 404 missing (errors.Is(err,
// ErrFileNotFound)), 409 a directory, 403 outside the workspace, -3 an
// encrypted notebook, -1 a malformed argument.
func (c *Client) GetFile(ctx context.Context, p string) (io.ReadCloser, string, error) {
	if err := need(endpoint.GetFile, "path", p); err != nil {
		return nil, "", err
	}
	body, err := encodeJSONBody(endpoint.GetFile, pathArg{p})
	if err != nil {
		return nil, "", err
	}
	res, err := c.run(ctx, &request{endpoint: endpoint.GetFile, kind: kindOf(endpoint.GetFile), jsonBody: body, raw: true})
	if err != nil {
		return nil, "", err
	}
	return res.body, res.contentType, nil
}

// PutFile writes a workspace file or creates a directory (multipart fields
// path, isDir, modTime, file; streamed). Missing parent folders are created;
// an existing file is replaced, and a read right after the reply sees the
// new bytes. The file's modification time is ModTime (milliseconds), or
// "now" when zero. A new file's name must pass SiYuan's upload file name
// check (no # : * ? " < > | \ and the like, at most 189 bytes; else code
// 400). Writing .sy files this way bypasses the kernel's index.
func (c *Client) PutFile(ctx context.Context, req PutFileRequest) error {
	if err := need(endpoint.PutFile, "path", req.Path); err != nil {
		return err
	}
	if err := checkFileName(endpoint.PutFile, req.Path); err != nil {
		return err
	}
	if !req.IsDir && req.Body == nil {
		return invalidArg(endpoint.PutFile, "body is required unless isDir")
	}
	r := &request{
		endpoint: endpoint.PutFile,
		kind:     kindOf(endpoint.PutFile),
		multipart: func(mw *multipart.Writer) error {
			if err := mw.WriteField("path", req.Path); err != nil {
				return err
			}
			if err := mw.WriteField("isDir", strconv.FormatBool(req.IsDir)); err != nil {
				return err
			}
			if req.ModTime != 0 {
				if err := mw.WriteField("modTime", strconv.FormatInt(req.ModTime, 10)); err != nil {
					return err
				}
			}
			if req.IsDir {
				return nil
			}
			w, err := mw.CreateFormFile("file", path.Base(req.Path))
			if err != nil {
				return err
			}
			_, err = io.Copy(w, req.Body)
			return err
		},
	}
	_, err := c.run(ctx, r)
	return err
}

// RemoveFile deletes a workspace file or directory, recursively. A missing
// path is code 404 (errors.Is(err, ErrFileNotFound)).
func (c *Client) RemoveFile(ctx context.Context, p string) error {
	if err := need(endpoint.RemoveFile, "path", p); err != nil {
		return err
	}
	return c.invoke(ctx, endpoint.RemoveFile, pathArg{p}, nil)
}

// ReadDir lists a workspace directory, sorted by name; Updated is the
// modification time in Unix seconds. Unlike the other file calls the kernel
// does not trim the path. A missing directory is code 404
// (errors.Is(err, ErrFileNotFound)), a file 409.
func (c *Client) ReadDir(ctx context.Context, p string) ([]DirEntry, error) {
	if err := need(endpoint.ReadDir, "path", p); err != nil {
		return nil, err
	}
	var entries []DirEntry
	if err := c.invoke(ctx, endpoint.ReadDir, pathArg{p}, &entries); err != nil {
		return nil, err
	}
	if entries == nil {
		entries = []DirEntry{}
	}
	return entries, nil
}

// ExportResources zips workspace paths into temp/export/<name>.zip and
// returns that workspace-relative path (fetch it with GetFile). It writes a
// file, so it is attempted once. An empty name lets the kernel pick one.
func (c *Client) ExportResources(ctx context.Context, paths []string, name string) (string, error) {
	if err := needIDs(endpoint.ExportResources, "paths", paths); err != nil {
		return "", err
	}
	req := struct {
		Paths []string `json:"paths"`
		Name  string   `json:"name,omitempty"`
	}{paths, name}
	var data struct {
		Path string `json:"path"`
	}
	if err := c.invoke(ctx, endpoint.ExportResources, req, &data); err != nil {
		return "", err
	}
	if data.Path == "" {
		return "", missingResult(endpoint.ExportResources, "path")
	}
	return data.Path, nil
}

// ExportMdContent returns a document as plain markdown, without YAML front
// matter (yfm:false), using the kernel's configured reference and embed modes.
func (c *Client) ExportMdContent(ctx context.Context, id string) (MdContent, error) {
	var md MdContent
	if err := need(endpoint.ExportMdContent, "id", id); err != nil {
		return md, err
	}
	req := struct {
		ID  string `json:"id"`
		YFM bool   `json:"yfm"`
	}{id, false}
	err := c.invoke(ctx, endpoint.ExportMdContent, req, &md)
	return md, err
}
