package file

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/kernelview"
)

// read_image hands the model one image a document shows, as an MCP image
// block, for a client that can look at images. Assets live in the
// workspace's data/assets, shared by every notebook: an asset is read only
// when a document the call may read links it as an image, so that an agent
// cannot read the images of a notebook hidden from it by guessing names.

// maxImageBytes is the most read_image answers (upstream 0.6.8's inline
// image cap); the call's read budget usually stops it first.
const maxImageBytes = 20 << 20

type readImageArgs struct {
	Path string `arg:"path" help:"the image asset as the document links it: assets/<name>, /assets/<name>, data/assets/<name> or /data/assets/<name>; a query string or fragment is ignored. A URL, a local path, .. segments or anything outside assets/ is refused" required:"" maxLen:"1024"`
	ID   string `arg:"id" help:"the document that shows the image (or a block of it); give id or documentPath" id:""`
	// DocumentPath names the document as fs does.
	DocumentPath string `arg:"documentPath" help:"the document that shows the image, as an fs path with the notebook's name: /Notebook/Folder/Doc; give id or documentPath" maxLen:"4096"`
	// rel is Path as the file is named under data/ (decoded).
	rel string
}

var readImage = tools.Read[readImageArgs]{
	Name: "read_image",
	Summary: "one image a document shows, as an MCP image block (base64 data and mimeType) for the model to look at, after a text block with its metadata " +
		"(documentID, path, mimeType, bytes, sha256); only an image the document links is read, and only PNG, JPEG, GIF or WebP as their bytes show them " +
		"(SVG is refused: it is a text document that may carry scripts and links, and models do not take it as an image). " +
		"Its bytes count against the call's read budget (8 MiB of kernel replies per read) with no extra allowance, at most 20 MiB; a larger image is refused with read_budget_exceeded before it is read whole",
	Example:  map[string]any{"path": "assets/question-20260101000000-abcdefg.png", "id": "20260812120000-docdocd"},
	Validate: parseReadImage,
	Scope: tools.Scope[readImageArgs]{Resolve: func(ctx context.Context, env *tools.Env, a readImageArgs) ([]tools.Touch, error) {
		if a.ID != "" {
			return []tools.Touch{tools.OnBlock(a.ID, tools.LevelRead)}, nil
		}
		nb, _, err := documentAt(ctx, env, a.DocumentPath)
		if err != nil {
			return nil, err
		}
		return []tools.Touch{tools.OnNotebook(nb, tools.LevelRead)}, nil
	}},
	Run: runReadImage,
}

func parseReadImage(a *readImageArgs) (err error) {
	switch {
	case a.ID == "" && a.DocumentPath == "":
		return failure.Invalid("give the document that shows the image: id (a document id) or documentPath (/Notebook/Folder/Doc)")
	case a.ID != "" && a.DocumentPath != "":
		return failure.Invalid("give id or documentPath, not both")
	}
	a.rel, err = imageAssetPath("path", a.Path)
	return err
}

// urlScheme is the start of a URL ("https:", "file:", "c:" of a Windows
// path).
var urlScheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)

// imageAssetPath is an image link or argument as the asset's path under
// data/ ("assets/<name>", percent-decoded as the file is named), or the
// refusal of what names no file of data/assets.
func imageAssetPath(field, raw string) (string, error) {
	s := strings.TrimSpace(raw)
	switch {
	case s == "":
		return "", failure.Invalid("argument %q must name an image asset, like assets/image-20260101000000-abcdefg.png", field)
	case strings.ContainsAny(s, "\\\x00"):
		return "", failure.Invalid("argument %q must be a SiYuan asset path with forward slashes; got %q", field, raw)
	case urlScheme.MatchString(s) || strings.HasPrefix(s, "//"):
		return "", failure.Invalid("argument %q must be a SiYuan asset path (assets/<name>), not a URL or a local file; got %q", field, raw)
	}
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimLeft(s, "/")
	s = strings.TrimPrefix(s, "data/")
	if !strings.HasPrefix(s, "assets/") {
		return "", failure.Invalid("argument %q must start with assets/, /assets/, data/assets/ or /data/assets/; got %q", field, raw)
	}
	d, err := url.PathUnescape(s)
	if err != nil {
		return "", failure.Invalid("argument %q holds a malformed %%-escape: %q", field, raw)
	}
	if err := cleanRel(field, raw, d); err != nil {
		return "", err
	}
	if d == "assets/" || strings.HasSuffix(d, "/") {
		return "", failure.Invalid("argument %q must name an image file, not a folder; got %q", field, raw)
	}
	return d, nil
}

func runReadImage(ctx context.Context, env *tools.Env, a readImageArgs) (any, error) {
	doc := a.ID
	if doc == "" {
		var err error
		if _, doc, err = documentAt(ctx, env, a.DocumentPath); err != nil {
			return nil, err
		}
	}
	links, err := env.Kernel.GetDocImageAssets(ctx, doc)
	if treeMissing(err) {
		return nil, failure.Missing("document", doc)
	}
	if err != nil {
		return nil, err
	}
	linked := slices.ContainsFunc(links, func(l string) bool {
		rel, err := imageAssetPath("link", l)
		return err == nil && rel == a.rel
	})
	if !linked {
		e := failure.Invalid("the document %s shows no image %s: read_image reads only an image the document links", doc, a.rel)
		e.Action = "list the document's images with {\"action\":\"get_doc_assets\",\"id\":\"" + doc + "\",\"assetType\":\"image\"}"
		return nil, e
	}
	limit := int64(maxImageBytes)
	if _, left, ok := tools.ReadLeft(ctx); ok {
		// One byte more than may be read tells a larger file; it must
		// still fit the budget, or the meter fails the read with a
		// message about kernel replies instead of this one.
		limit = min(limit, left-1)
	}
	data, err := readLimited(ctx, env, workspace(a.rel), limit)
	if err != nil {
		return nil, err
	}
	mime := imageMIME(data)
	if mime == "" {
		return nil, failure.Invalid("%s is not a PNG, JPEG, GIF or WebP image (read_image tells an image by its first bytes, not its name; SVG is not read)", a.rel)
	}
	sum := sha256.Sum256(data)
	return &tools.Image{Data: data, MimeType: mime, Meta: map[string]any{
		"documentID": doc, "path": a.rel, "mimeType": mime, "bytes": len(data), "sha256": hex.EncodeToString(sum[:]), "delivery": "mcp_image",
	}}, nil
}

// readLimited reads a workspace file of at most limit bytes, never more
// than limit+1 of it: a larger one is refused before it is read whole.
func readLimited(ctx context.Context, env *tools.Env, p string, limit int64) ([]byte, error) {
	if limit < 1 {
		return nil, failure.New(failure.ReadBudgetExceeded, "this read's budget has no bytes left for the image; nothing more was read")
	}
	body, _, err := env.Kernel.GetFile(ctx, p)
	if missingFile(err) {
		return nil, failure.Missing("asset", strings.TrimPrefix(p, "/data/"))
	}
	if err != nil {
		return nil, err
	}
	defer body.Close()
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	if n > limit {
		return nil, failure.New(failure.ReadBudgetExceeded, "the image %s has more than %d bytes, more than this read may still take (the read budget, or read_image's 20 MiB); nothing more was read",
			strings.TrimPrefix(p, "/data/"), limit)
	}
	return buf.Bytes(), nil
}

// imageMIME is the type of an image its first bytes show, "" for any
// other file.
func imageMIME(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(b, []byte{0xff, 0xd8, 0xff}):
		return "image/jpeg"
	case bytes.HasPrefix(b, []byte("GIF87a")), bytes.HasPrefix(b, []byte("GIF89a")):
		return "image/gif"
	case len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP":
		return "image/webp"
	}
	return ""
}

// documentAt resolves an fs path (/<notebook>/<title>/…, the notebook by
// its name) to its notebook and document as the fs tool does: through the
// live file tree, never the lagging SQL index; a hidden notebook's name
// names nothing, so the answer for it is the answer for a name no notebook
// has.
func documentAt(ctx context.Context, env *tools.Env, raw string) (notebook, id string, err error) {
	segs := strings.Split(strings.Trim(raw, "/"), "/")
	for i := range segs {
		segs[i] = strings.TrimSpace(segs[i])
	}
	if !strings.HasPrefix(raw, "/") || len(segs) < 2 || slices.ContainsFunc(segs, func(s string) bool { return s == "" || s == "." || s == ".." }) {
		return "", "", failure.Invalid("argument \"documentPath\" must name a document as /<notebook>/<title>/…, without empty, . or .. segments; got %q", raw)
	}
	nbs, err := env.Kernel.ListNotebooks(ctx)
	if err != nil {
		return "", "", err
	}
	for _, n := range nbs {
		if n.Name != segs[0] || !tools.Visible(ctx, n.ID) {
			continue
		}
		if notebook != "" {
			return "", "", failure.New(failure.AmbiguousPath, "several notebooks are named %q", segs[0])
		}
		notebook = n.ID
	}
	if notebook == "" {
		return "", "", failure.New(failure.NotFound, "no notebook is named %q", segs[0])
	}
	ids, err := env.Kernel.GetIDsByHPath(ctx, notebook, "/"+strings.Join(segs[1:], "/"))
	if err != nil {
		return "", "", err
	}
	var live []string
	for _, d := range kernelview.SortedUnique(ids) {
		if d == notebook {
			continue
		}
		// The path index may still list a document just removed.
		ok, err := env.Kernel.CheckBlockExist(ctx, d)
		if err != nil {
			return "", "", err
		}
		if ok {
			live = append(live, d)
		}
	}
	switch len(live) {
	case 0:
		return "", "", failure.New(failure.NotFound, "no document at %s", raw)
	case 1:
		return notebook, live[0], nil
	}
	return "", "", failure.New(failure.AmbiguousPath, "%d documents are at %s: %s; give id instead", len(live), raw, strings.Join(live, ", "))
}
