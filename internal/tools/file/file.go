// Package file is the file tool: assets (upload, rename, delete, unused,
// per document, OCR text), templates (list, read, create, update, delete,
// save a document as one, render) and exports (Markdown, resource ZIPs,
// a document with its assets), with upstream Sisyphus's action names.
//
// Bytes cross between the person's machine and the authority only through
// the transfer interfaces of the tools framework: an upload comes from a
// source the authority itself hashed when it was staged (by a front, from
// a file the person's folder rule lets it read, or by an HTTP client), and
// an export to the person's disk is a delivery=download manifest a front
// saves where the same rule lets it create files. The authority opens no
// path a call names.
package file

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// Tool returns the file tool.
func Tool() *tools.Tool {
	return &tools.Tool{
		Name:  "file",
		Title: "Files: assets, templates, exports",
		Description: "SiYuan's files: upload an asset (an image, a PDF) from a local file, rename or delete assets, list unused ones and a document's; " +
			"list, read, create, update, delete and render templates, or save a document as one; export a document as Markdown, " +
			"a notebook's documents as paginated Markdown with digests, resources as a ZIP, or a document with its assets to a local folder; " +
			"show the model an image a document links. Writes are strict: call with validateOnly:true first, " +
			"then repeat with the requestId (and the credential) it returns; exports are external effects without a preflight.",
		Actions: []*tools.Action{
			uploadAsset.Action(),
			listTemplates.Action(), readTemplate.Action(), createTemplate.Action(), updateTemplate.Action(), deleteTemplate.Action(),
			saveDocAsTemplate.Action(), render.Action(),
			exportMd.Action(), exportResources.Action(), extractDoc.Action(),
			listUnusedAssets.Action(), getDocAssets.Action(), getImageOCRText.Action(),
			removeUnusedAssets.Action(), renameAsset.Action(), deleteAsset.Action(),
			readImage.Action(), exportMarkdownSnapshot.Action(), auditImageRefs.Action(),
		},
	}
}

// assetPath normalises an asset path as the kernel names it ("assets/x.png")
// and as the workspace does ("/data/assets/x.png"): "x.png", "/assets/x.png",
// "assets/x.png" and "/data/assets/x.png" all name the same asset. It
// refuses what names no asset: another folder, dot segments.
func assetPath(field, p string) (rel string, err error) {
	s := strings.TrimSpace(strings.ReplaceAll(p, "\\", "/"))

	s = strings.TrimPrefix(strings.TrimLeft(s, "/"), "data/")
	if !strings.HasPrefix(s, "assets/") {
		s = "assets/" + s
	}
	if err := cleanRel(field, p, s); err != nil {
		return "", err
	}
	if s == "assets/" || strings.HasSuffix(s, "/") {
		return "", failure.Invalid("argument %q must name an asset file, like assets/image-20260101000000-abcdefg.png; got %q", field, p)
	}
	return s, nil
}

// cleanRel refuses a relative path with empty, "." or ".." segments, control
// characters or invalid UTF-8.
func cleanRel(field, raw, rel string) error {
	if !utf8.ValidString(rel) || strings.ContainsFunc(rel, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return failure.Invalid("argument %q holds control characters or invalid UTF-8", field)
	}
	for _, seg := range strings.Split(strings.TrimSuffix(rel, "/"), "/") {
		if seg == "" || seg == "." || seg == ".." {
			return failure.Invalid("argument %q must be a plain path without empty, . or .. segments; got %q", field, raw)
		}
	}
	return nil
}

// workspace is the getFile path of a data-relative path.
func workspace(rel string) string { return "/data/" + strings.TrimPrefix(rel, "/") }

// digestFile streams a workspace file through SHA-256. A body cut short
// (a connection dropped mid-file; seen on SiYuan behind forwarders) is read
// again, twice at most: it is a read, and a readback must not report a
// mismatch for a file that is whole.
func digestFile(ctx context.Context, c *siyuan.Client, p string) (sum string, size int64, err error) {
	for attempt := 0; ; attempt++ {
		sum, size, err = digestOnce(ctx, c, p)
		var cut *cutShort
		if !errors.As(err, &cut) || attempt == 2 {
			return sum, size, err
		}
		select {
		case <-ctx.Done():
			return "", 0, err
		case <-time.After(time.Duration(attempt+1) * 50 * time.Millisecond):
		}
	}
}

// cutShort is a file body that ended before its end.
type cutShort struct{ err error }

func (e *cutShort) Error() string { return e.err.Error() }
func (e *cutShort) Unwrap() error { return e.err }

func digestOnce(ctx context.Context, c *siyuan.Client, p string) (string, int64, error) {
	body, _, err := c.GetFile(ctx, p)
	if err != nil {
		return "", 0, err
	}
	defer body.Close()
	h := sha256.New()
	n, err := io.Copy(h, body)
	if err != nil {
		return "", 0, &cutShort{fmt.Errorf("read %s: %w", p, err)}
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// asAPI finds the kernel's error in err.
func asAPI(err error, target **siyuan.APIError) bool { return errors.As(err, target) }

// missingFile reports whether err says a workspace file does not exist.
func missingFile(err error) bool { return errors.Is(err, siyuan.ErrFileNotFound) }

// base is a path's last segment.
func base(p string) string { return path.Base(strings.TrimSuffix(p, "/")) }
