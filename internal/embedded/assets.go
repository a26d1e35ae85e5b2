package embedded

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/88250/lute/ast"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// The asset endpoints beyond upload: where documents link assets, which
// assets nothing links, renaming one (with every link to it), removing them,
// finding them by name, and the OCR texts SiYuan keeps for images. They
// follow SiYuan 3.7.3's kernel/model/assets.go as observed on the real
// kernel; the differences are where SiYuan would delete outside the data
// folder (removeUnusedAsset of a path climbing out of data/, of data/ itself)
// or panic on a malformed argument: this kernel refuses those.

// ocrTexts is SiYuan's table of OCR texts (data/assets/ocr-texts.json, read
// at boot): asset path → text. There is no OCR engine here, so it only
// holds what the workspace already had, and follows renames and removals.
type ocrTexts struct {
	mu    sync.Mutex
	texts map[string]string
	path  string
}

func loadOCRTexts(dataDir string) *ocrTexts {
	o := &ocrTexts{texts: map[string]string{}, path: filepath.Join(dataDir, "assets", "ocr-texts.json")}
	if data, err := os.ReadFile(o.path); err == nil {
		_ = json.Unmarshal(data, &o.texts)
		if o.texts == nil {
			o.texts = map[string]string{}
		}
	}
	return o
}

func (o *ocrTexts) get(asset string) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.texts[asset]
}

// set and remove persist the table when it changed, unless there is no
// table and nothing to write (as SiYuan without OCR creates no file).
func (o *ocrTexts) set(asset, text string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if old, ok := o.texts[asset]; ok && old == text {
		return
	}
	o.texts[asset] = text
	o.saveLocked()
}

func (o *ocrTexts) remove(asset string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := o.texts[asset]; !ok {
		return
	}
	delete(o.texts, asset)
	o.saveLocked()
}

func (o *ocrTexts) saveLocked() {
	if _, err := os.Stat(o.path); err != nil && len(o.texts) == 0 {
		return
	}
	data, err := json.MarshalIndent(o.texts, "", "  ")
	if err == nil {
		_ = writeFileAtomic(o.path, data, 0o644)
	}
}

// isAssetLinkDest is SiYuan's IsAssetLinkDest without serve paths.
func isAssetLinkDest(dest string) bool { return strings.HasPrefix(dest, "assets/") }

// nodeSrc is SiYuan's GetNodeSrcTokens: the src="…" of an HTML-ish node.
func nodeSrc(n *ast.Node) string {
	i := bytes.Index(n.Tokens, []byte(`src="`))
	if i <= 0 {
		return ""
	}
	src, _, ok := bytes.Cut(n.Tokens[i+len(`src="`):], []byte(`"`))
	if !ok {
		return ""
	}
	return strings.TrimSpace(string(src))
}

// assetLinkDests is SiYuan's getAssetsLinkDests: the asset links ("assets/…")
// under node, in document order, without duplicates; nil when there are
// none. Links come from link and image destinations, <a> text marks, PDF
// annotation refs, the src of HTML, iframe, audio and video blocks, a
// widget's data-assets and any block attribute custom-data-assets*.
// (Database asset columns are not read: this kernel has no databases.)
func assetLinkDests(node *ast.Node) []string {
	var ret []string
	ast.Walk(node, func(n *ast.Node, entering bool) ast.WalkStatus {
		if n.IsBlock() {
			for _, kv := range n.KramdownIAL {
				if strings.HasPrefix(kv[0], "custom-data-assets") && isAssetLinkDest(kv[1]) {
					ret = append(ret, kv[1])
				}
			}
		}
		if !entering {
			return ast.WalkContinue
		}
		switch {
		case n.Type == ast.NodeLinkDest:
			if isAssetLinkDest(string(n.Tokens)) {
				ret = append(ret, strings.TrimSpace(string(n.Tokens)))
			}
		case n.IsTextMarkType("a"):
			if isAssetLinkDest(n.TextMarkAHref) {
				ret = append(ret, strings.TrimSpace(n.TextMarkAHref))
			}
		case n.IsTextMarkType("file-annotation-ref"):
			id := n.TextMarkFileAnnotationRefID
			if isAssetLinkDest(id) && strings.Contains(id, "/") {
				ret = append(ret, strings.TrimSpace(id[:strings.LastIndexByte(id, '/')]))
			}
		case n.Type == ast.NodeWidget:
			v := n.IALAttr("custom-data-assets")
			if v == "" {
				v = n.IALAttr("data-assets")
			}
			if isAssetLinkDest(v) {
				ret = append(ret, v)
			}
		case n.Type == ast.NodeHTMLBlock, n.Type == ast.NodeInlineHTML, n.Type == ast.NodeIFrame,
			n.Type == ast.NodeAudio, n.Type == ast.NodeVideo:
			if src := nodeSrc(n); isAssetLinkDest(src) {
				ret = append(ret, src)
			}
		}
		return ast.WalkContinue
	})
	ret = dedupe(ret)
	for i, d := range ret {
		if strings.HasSuffix(d, ".rtfd") {
			ret[i] = d + "/"
		}
	}
	return ret
}

// dedupe keeps the first of equal strings; nil for none, as gulu's does.
func dedupe(s []string) []string {
	seen := map[string]bool{}
	var ret []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			ret = append(ret, x)
		}
	}
	return ret
}

// docTree is SiYuan's LoadTreeByBlockID for the asset endpoints: the tree
// holding a block, or "tree not found".
func (k *Kernel) docTree(id string) (*ast.Node, error) {
	d, err := k.docOfBlock(id)
	if err != nil {
		return nil, err
	}
	return d.tree.Root, nil
}

// docOfBlock is the document holding a block, or SiYuan's "tree not
// found" (LoadTreeByBlockID's error).
func (k *Kernel) docOfBlock(id string) (*docEntry, error) {
	loc, ok := k.lookup(id)
	if !ok {
		return nil, errf("tree not found")
	}
	d, ok := k.doc(loc.Root)
	if !ok {
		return nil, errf("tree not found")
	}
	return d, nil
}

// getDocAssets is /api/asset/getDocAssets: the asset links of the document
// holding the block (null when it has none). retainQueryStr (default true)
// false cuts each link at its "?".
func (k *Kernel) getDocAssets(ctx context.Context, a args) (any, error) {
	id, err := a.str("id")
	if err != nil {
		return nil, err
	}
	retain := true
	if v, ok := a["retainQueryStr"]; ok && v != nil {
		b, ok := v.(bool)
		if !ok {
			return nil, errf("argument [retainQueryStr] must be a boolean")
		}
		retain = b
	}
	root, err := k.docTree(id)
	if err != nil {
		return nil, err
	}
	dests := assetLinkDests(root)
	if !retain {
		for i, d := range dests {
			dests[i], _, _ = strings.Cut(d, "?")
		}
	}
	return dests, nil
}

// getDocImageAssets is /api/asset/getDocImageAssets: the destination of
// every image of the document holding the block, in order, duplicates and
// remote images included (null when there are none).
func (k *Kernel) getDocImageAssets(ctx context.Context, a args) (any, error) {
	id, err := a.str("id")
	if err != nil {
		return nil, err
	}
	root, err := k.docTree(id)
	if err != nil {
		return nil, err
	}
	var ret []string
	ast.Walk(root, func(n *ast.Node, entering bool) ast.WalkStatus {
		if entering && n.Type == ast.NodeImage {
			if dest := n.ChildByType(ast.NodeLinkDest); dest != nil && len(dest.Tokens) > 0 {
				ret = append(ret, string(dest.Tokens))
			}
		}
		return ast.WalkContinue
	})
	return ret, nil
}

// getImageOCRText is /api/asset/getImageOCRText: the stored OCR text of an
// asset, "" when there is none (or no path).
func (k *Kernel) getImageOCRText(ctx context.Context, a args) (any, error) {
	p, err := a.optStr("path")
	if err != nil {
		return nil, err
	}
	return map[string]any{"text": k.ocr.get(p)}, nil
}

// isSkipFile is SiYuan's: dot files and a few build folders are not walked.
func isSkipFile(name string) bool {
	return strings.HasPrefix(name, ".") || name == "node_modules" || name == "dist" || name == "target"
}

// assetAbsPath is SiYuan's GetAssetAbsPathInBox(p, ""): an "assets/…" path
// (a ?box=<id> query picks the notebook) found in data/, else in the first
// notebook holding a file whose path ends with it.
func (k *Kernel) assetAbsPath(p string) (string, error) {
	p = strings.TrimSpace(p)
	box := ""
	if i := strings.Index(p, "?"); i >= 0 {
		if q, err := url.ParseQuery(p[i+1:]); err == nil {
			box = strings.TrimSpace(q.Get("box"))
		}
		p = p[:i]
	}
	p = path.Clean(p)
	if p == "." || p == ".." || strings.HasPrefix(p, "../") || path.IsAbs(p) {
		return "", fmt.Errorf("[%s] is not an asset path", p)
	}
	if !strings.HasPrefix(p, "assets/") {
		return "", fmt.Errorf("[%s] is not an asset path (must start with assets/)", p)
	}
	if box != "" {
		if !validID(box) {
			return "", fmt.Errorf("[%s] is not a box id", box)
		}
		if abs := filepath.Join(k.dataDir, box, filepath.FromSlash(p)); exists(abs) {
			return abs, nil
		}
	}
	if abs := filepath.Join(k.dataDir, filepath.FromSlash(p)); exists(abs) {
		return abs, nil
	}
	boxes, _, err := k.boxIDs()
	if err != nil {
		return "", err
	}
	for _, b := range boxes {
		root := k.boxDir(b)
		found := ""
		filepath.WalkDir(root, func(q string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if isSkipFile(d.Name()) {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if strings.HasSuffix(filepath.ToSlash(q), p) {
				found = q
				return fs.SkipAll
			}
			return nil
		})
		if found != "" {
			return found, nil
		}
	}
	return "", fmt.Errorf("asset [%s] not found", p)
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// renameAsset is /api/asset/renameAsset. The new name is filtered as an
// upload name and gets a new id (one it already ends with is kept); the
// asset is renamed where it lies, with its .sya annotations; then every
// .sy file of every notebook has each occurrence of the old file name (the
// last segment of oldPath, query included) replaced by the new one, and
// every data/storage/av/<id>.json oldPath by newPath. It answers
// {newPath: "<dir of oldPath>/<new name>"}, "" when the new name is blank
// or the asset's current name; an oldPath that names no asset is still
// answered with a newPath, and nothing is renamed.
func (k *Kernel) renameAsset(ctx context.Context, a args) (any, error) {
	oldPath, err := a.str("oldPath")
	if err != nil {
		return nil, err
	}
	newName, err := a.str("newName")
	if err != nil {
		return nil, err
	}
	oldClean := oldPath
	if i := strings.Index(strings.TrimSpace(oldClean), "?"); i >= 0 {
		oldClean = strings.TrimSpace(oldClean)[:i]
	}
	oldClean = filepath.ToSlash(strings.TrimSpace(oldClean))
	newName = fileNameFilter(strings.TrimSpace(newName))
	if path.Base(oldClean) == newName || newName == "" {
		return map[string]any{"newPath": ""}, nil
	}
	newName = assetName(newName+filepath.Ext(oldClean), ast.NewNodeID())
	newPath := path.Join(path.Dir(oldClean), newName)
	reply := map[string]any{"newPath": newPath}
	oldAbs, err := k.assetAbsPath(oldPath)
	if err != nil {
		k.log.Info("rename asset: no such asset", "path", oldPath, "err", err)
		return reply, nil
	}
	newAbs := filepath.Join(filepath.Dir(oldAbs), newName)
	if err := os.Rename(oldAbs, newAbs); err != nil {
		return nil, errf("%s", err.Error())
	}
	if oldSya := filepath.Join(k.dataDir, filepath.FromSlash(oldPath+".sya")); exists(oldSya) {
		if err := os.Rename(oldSya, filepath.Join(k.dataDir, filepath.FromSlash(newPath+".sya"))); err != nil {
			return nil, errf("%s", err.Error())
		}
	}
	if err := k.replaceInDocs([]byte(path.Base(oldPath)), []byte(newName)); err != nil {
		return nil, errf("%s", err.Error())
	}
	if err := k.replaceInAVs([]byte(oldPath), []byte(newPath)); err != nil {
		return nil, errf("%s", err.Error())
	}
	if t := k.ocr.get(oldPath); t != "" {
		k.ocr.set(newPath, t)
	}
	return reply, nil
}

// replaceInDocs replaces bytes in every .sy file of every notebook, as
// SiYuan's renameAsset does, and re-indexes the documents it changed.
func (k *Kernel) replaceInDocs(old, repl []byte) error {
	boxes, _, err := k.boxIDs()
	if err != nil {
		return err
	}
	for _, box := range boxes {
		root := k.boxDir(box)
		var files []string
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() {
				if strings.HasPrefix(d.Name(), ".") && p != root {
					return filepath.SkipDir
				}
				return nil
			}
			if strings.HasSuffix(d.Name(), ".sy") {
				files = append(files, p)
			}
			return nil
		})
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			if !bytes.Contains(data, old) {
				continue
			}
			data = bytes.ReplaceAll(data, old, repl)
			if err := writeFileAtomic(f, data, 0o644); err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, f)
			tree, err := k.parseSY(data, box, "/"+filepath.ToSlash(rel))
			if err != nil {
				k.log.Warn("renamed asset: document no longer parses", "path", f, "err", err)
				continue
			}
			k.indexTree(tree, len(data))
			k.sql.queueUpsert(tree)
		}
	}
	return nil
}

// replaceInAVs replaces bytes in the database files data/storage/av/<id>.json.
func (k *Kernel) replaceInAVs(old, repl []byte) error {
	dir := filepath.Join(k.dataDir, "storage", "av")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") || !validID(strings.TrimSuffix(e.Name(), ".json")) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(data, old) {
			if err := writeFileAtomic(p, bytes.ReplaceAll(data, old, repl), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// assetFiles is SiYuan's allAssetAbsPaths: "assets/…" (a folder with a
// trailing slash) → absolute path, for every assets folder in a notebook
// and for data/assets (which wins on equal keys); dot files are left out.
func (k *Kernel) assetFiles() (map[string]string, error) {
	boxes, _, err := k.boxIDs()
	if err != nil {
		return nil, err
	}
	ret := map[string]string{}
	walkAssets := func(dir string) {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || p == dir {
				return nil
			}
			if isSkipFile(d.Name()) {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			rel := filepath.ToSlash(p)
			rel = rel[strings.Index(rel, "assets/"):]
			if d.IsDir() {
				rel += "/"
			}
			ret[rel] = p
			return nil
		})
	}
	for _, box := range boxes {
		root := k.boxDir(box)
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || p == root {
				return nil
			}
			if isSkipFile(d.Name()) {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.IsDir() && d.Name() == "assets" {
				walkAssets(p)
				return filepath.SkipDir
			}
			return nil
		})
	}
	walkAssets(filepath.Join(k.dataDir, "assets"))
	return ret, nil
}

// titleImgPath is SiYuan's GetDocTitleImgPath: the url(…) of a document's
// title-img attribute.
func titleImgPath(root *ast.Node) string {
	const bg = "background-image: url("
	v := strings.TrimSpace(root.IALAttr("title-img"))
	v = strings.ReplaceAll(html.UnescapeString(v), "background-image:url(", bg)
	if !strings.Contains(v, bg) {
		return ""
	}
	start, end := strings.Index(v, bg)+len(bg), strings.LastIndex(v, ")")
	if end < start {
		return ""
	}
	v = strings.TrimPrefix(v[start:end], `"`)
	v = strings.TrimPrefix(v, "'")
	v = strings.TrimSuffix(v, `"`)
	return strings.TrimSuffix(v, "'")
}

// unusedAsset is an unused asset with its modification time, for sorting.
type unusedAsset struct {
	wire.UnusedAsset
	abs   string
	mtime int64
}

// unusedAssets is SiYuan's UnusedAssets: the assets no document of any
// notebook links (a folder link covers what is under it, a link with a
// query its file, a PDF link its .sya), nor a database file mentions,
// ocr-texts.json aside; newest first, then by path descending.
func (k *Kernel) unusedAssets() ([]unusedAsset, error) {
	files, err := k.assetFiles()
	if err != nil {
		return nil, err
	}
	boxes, _, err := k.boxIDs()
	if err != nil {
		return nil, err
	}
	linked := map[string]bool{}
	for _, box := range boxes {
		dests := map[string]bool{}
		k.mu.RLock()
		var roots []*ast.Node
		for _, d := range k.docs {
			if d.Box == box {
				roots = append(roots, d.tree.Root)
			}
		}
		k.mu.RUnlock()
		for _, root := range roots {
			for _, d := range assetLinkDests(root) {
				dests[d] = true
			}
			if t := titleImgPath(root); t != "" && isAssetLinkDest(t) {
				dests[t] = true
			}
		}
		var folders, filesLinked []string
		for d := range dests {
			if !strings.HasPrefix(d, "assets/") {
				continue
			}
			if i := strings.Index(d, "?"); i > 0 {
				d = d[:i]
			}
			if files[d] == "" {
				continue
			}
			if strings.HasSuffix(d, "/") {
				folders = append(folders, d)
			} else {
				filesLinked = append(filesLinked, d)
			}
		}
		for asset := range files {
			for _, f := range folders {
				if strings.HasPrefix(asset, f) {
					delete(files, asset)
				}
			}
			for _, f := range filesLinked {
				if strings.HasPrefix(f, asset) {
					delete(files, asset)
				}
			}
		}
		for _, f := range filesLinked {
			linked[f] = true
			if strings.HasSuffix(f, ".pdf") {
				linked[f+".sya"] = true
			}
		}
	}
	for asset := range files {
		if strings.HasSuffix(asset, "ocr-texts.json") || strings.HasSuffix(asset, "android-notification-texts.txt") {
			delete(files, asset)
		}
	}
	avDir := filepath.Join(k.dataDir, "storage", "av")
	if entries, err := os.ReadDir(avDir); err == nil {
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".json") || !validID(strings.TrimSuffix(e.Name(), ".json")) {
				continue
			}
			data, err := os.ReadFile(filepath.Join(avDir, e.Name()))
			if err != nil {
				continue
			}
			for asset := range files {
				if bytes.Contains(data, []byte(asset)) {
					delete(files, asset)
				}
			}
		}
	}
	ret := []unusedAsset{}
	for dest, abs := range files {
		if linked[dest] {
			continue
		}
		rel, err := filepath.Rel(k.dataDir, abs)
		if err != nil {
			continue
		}
		item := filepath.ToSlash(rel)
		var mtime int64
		if info, err := os.Stat(abs); err == nil {
			mtime = info.ModTime().UnixNano()
		}
		ret = append(ret, unusedAsset{UnusedAsset: wire.UnusedAsset{Item: item, Name: path.Base(item)}, abs: abs, mtime: mtime})
	}
	sort.Slice(ret, func(i, j int) bool {
		if ret[i].mtime != ret[j].mtime {
			return ret[i].mtime > ret[j].mtime
		}
		return ret[i].Item > ret[j].Item
	})
	return ret, nil
}

// maxUnusedAssets is how many unused assets getUnusedAssets lists at most.
const maxUnusedAssets = 512

// getUnusedAssets is /api/asset/getUnusedAssets (it reads no arguments).
func (k *Kernel) getUnusedAssets(ctx context.Context, a args) (any, error) {
	unused, err := k.unusedAssets()
	if err != nil {
		return nil, err
	}
	ret := make([]wire.UnusedAsset, 0, len(unused))
	for _, u := range unused {
		ret = append(ret, u.UnusedAsset)
	}
	if len(ret) > maxUnusedAssets {
		ret = ret[:maxUnusedAssets]
	}
	return ret, nil
}

// removeUnusedAssets is /api/asset/removeUnusedAssets (no arguments): it
// removes every unused asset and answers {paths: [absolute paths]}.
func (k *Kernel) removeUnusedAssets(ctx context.Context, a args) (any, error) {
	unused, err := k.unusedAssets()
	if err != nil {
		return nil, err
	}
	ret := []string{}
	for _, u := range unused {
		if exists(u.abs) {
			if err := os.RemoveAll(u.abs); err != nil {
				k.log.Error("remove unused asset failed", "path", u.abs, "err", err)
				break
			}
			k.ocr.remove(u.Item)
		}
		ret = append(ret, u.abs)
	}
	return map[string]any{"paths": ret}, nil
}

// removeUnusedAsset is /api/asset/removeUnusedAsset: it removes data/<path>
// (recursively), whether anything links it or not, and answers {path: the
// absolute path}, also when there was nothing there. SiYuan removes any
// path it is given, even outside the workspace; this kernel refuses an
// existing path that is not strictly inside data/ (code 403).
func (k *Kernel) removeUnusedAsset(ctx context.Context, a args) (any, error) {
	p, err := a.str("path")
	if err != nil {
		return nil, err
	}
	abs := filepath.Join(k.dataDir, p)
	reply := map[string]any{"path": abs}
	if !exists(abs) {
		return reply, nil
	}
	if !isSubPath(k.dataDir, abs) {
		return nil, errCode(http.StatusForbidden, "%s", errOutsideWorkspace.Error())
	}
	if err := os.RemoveAll(abs); err != nil {
		k.log.Error("remove unused asset failed", "path", abs, "err", err)
		return reply, nil
	}
	k.ocr.remove(p)
	return reply, nil
}

// maxSearchResults is SiYuan's default conf.search.limit.
const maxSearchResults = 64

// searchAsset is /api/search/searchAsset: the files under data/assets whose
// name (without id) or path contains the keyword or one of its
// space-separated words, case-insensitively, ranked by hits (a whole-keyword
// hit counts 64, each further occurrence 1), at most 64; an empty keyword
// matches every asset. exts keeps only those extensions (".png", any case).
func (k *Kernel) searchAsset(ctx context.Context, a args) (any, error) {
	kw, err := a.str("k")
	if err != nil {
		return nil, err
	}
	var exts []string
	if _, ok := a["exts"]; ok && a["exts"] != nil {
		if exts, err = a.strList("exts"); err != nil {
			return nil, err
		}
	}
	keywords := []string{kw}
	if kw != "" {
		keywords = append(keywords, strings.Split(kw, " ")...)
	}
	type hit struct {
		wire.AssetSearchResult
		hits int
	}
	var hits []hit
	root := filepath.Join(k.dataDir, "assets")
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		name := d.Name()
		if strings.HasSuffix(name, ".sya") || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "~$") {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		asset := wire.AssetSearchResult{HName: assetRemoveID(name), Path: "assets/" + filepath.ToSlash(rel), Updated: info.ModTime().Unix()}
		if len(exts) > 0 {
			ext := strings.ToLower(filepath.Ext(asset.HName))
			found := false
			for _, e := range exts {
				if ext == strings.ToLower(e) {
					found = true
					break
				}
			}
			if !found {
				return nil
			}
		}
		lname, lpath := strings.ToLower(asset.HName), strings.ToLower(asset.Path)
		n := 0
		for i, kw := range keywords {
			lk := strings.ToLower(kw)
			if i == 0 {
				if strings.Contains(lname, lk) {
					n += 64
				}
				if strings.Contains(lpath, lk) {
					n += 64
				}
			}
			n += countSubstr(lname, lk) + countSubstr(lpath, lk)
		}
		if n > 0 {
			hits = append(hits, hit{asset, n})
		}
		return nil
	})
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].hits > hits[j].hits })
	ret := []wire.AssetSearchResult{}
	var terms []string
	for _, kw := range keywords {
		if strings.TrimSpace(kw) != "" {
			terms = append(terms, kw)
		}
	}
	for _, h := range hits {
		if len(ret) == maxSearchResults {
			break
		}
		if len(terms) > 0 {
			h.HName = searchMarkTerms(h.HName, terms, 64)
		}
		ret = append(ret, h.AssetSearchResult)
	}
	return ret, nil
}

// countSubstr is strings.Count, which counts an empty needle once per rune
// and once more.
func countSubstr(s, sub string) int {
	if sub == "" {
		return utf8.RuneCountInString(s) + 1
	}
	return strings.Count(s, sub)
}
