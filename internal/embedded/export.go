package embedded

import (
	"archive/zip"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/88250/lute/ast"
	"github.com/88250/lute/parse"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/mdexport"
)

// exportResources is /api/export/exportResources: the given workspace paths
// zipped as temp/export/<random>-<name>.zip, each under <name>/<base name>/,
// as SiYuan's ExportResources lays it out.
func (k *Kernel) exportResources(ctx context.Context, a args) (any, error) {
	name, err := a.optStr("name")
	if err != nil {
		return nil, err
	}
	if name = truncateFileName(name); name == "" {
		name = time.Now().Format("export-2006-01-02_15-04-05")
	}
	if a["paths"] == nil {
		return nil, &apiError{code: 1, msg: "[paths] is required", data: ""}
	}
	paths, err := a.strList("paths")
	if err != nil {
		return nil, err
	}
	exportErr := func(format string, v ...any) error {
		return &apiError{code: 1, msg: fmt.Sprintf(format, v...), data: map[string]any{"closeTimeout": 7000}}
	}
	type entry struct{ zipName, src string }
	var entries []entry // in order; a later resource with the same name wins, as SiYuan's copy does
	index := map[string]int{}
	add := func(zipName, src string) {
		if i, ok := index[zipName]; ok {
			entries[i].src = src
			return
		}
		index[zipName] = len(entries)
		entries = append(entries, entry{zipName, src})
	}
	base := exportZipBase(name)
	for _, p := range paths {
		abs := filepath.Join(k.dir, filepath.FromSlash(p))
		if !isSubPath(k.dir, abs) {
			return nil, exportErr("resource path [%s] is not in workspace", p)
		}
		if _, err := k.workspacePath(p); err != nil {
			return nil, exportErr("resource path [%s] is not in workspace", p)
		}
		top := base + "/" + filepath.Base(abs)
		info, err := os.Lstat(abs)
		if err != nil {
			return nil, exportErr("Export failed: %s", err.Error())
		}
		if info.Mode()&os.ModeSymlink != 0 {
			return nil, exportErr("export failed: exporting symbolic links is not supported")
		}
		if !info.IsDir() {
			add(top, abs)
			continue
		}
		err = filepath.WalkDir(abs, func(cur string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.Type()&os.ModeSymlink != 0 {
				return errors.New("exporting symbolic links is not supported")
			}
			rel, err := filepath.Rel(abs, cur)
			if err != nil {
				return err
			}
			zipName := path.Join(top, filepath.ToSlash(rel))
			if d.IsDir() {
				// Directories appear as entries only when empty (gulu's AddDirectory).
				children, err := os.ReadDir(cur)
				if err != nil {
					return err
				}
				if len(children) == 0 {
					add(zipName+"/", "")
				}
				return nil
			}
			if !d.Type().IsRegular() {
				return errors.New("exporting special files is not supported")
			}
			add(zipName, cur)
			return nil
		})
		if err != nil {
			return nil, exportErr("export failed: %v", err)
		}
	}
	if len(entries) == 0 {
		add(base+"/", "")
	}
	random := make([]byte, 16)
	rand.Read(random)
	zipName := hex.EncodeToString(random) + "-" + base + ".zip"
	dir := filepath.Join(k.tempDir, "export")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, exportErr("export failed: %v", err)
	}
	final := filepath.Join(dir, zipName)
	if err := writeExportZip(final+".partial", func(zw *zip.Writer) error {
		for _, e := range entries {
			if e.src == "" {
				if _, err := zw.CreateHeader(&zip.FileHeader{Name: e.zipName, Method: zip.Deflate, Modified: time.Now()}); err != nil {
					return err
				}
				continue
			}
			if err := addZipFile(zw, e.zipName, e.src); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		os.Remove(final + ".partial")
		return nil, exportErr("export failed: %v", err)
	}
	if err := os.Rename(final+".partial", final); err != nil {
		os.Remove(final + ".partial")
		return nil, exportErr("export failed: %v", err)
	}
	return map[string]any{"path": path.Join("temp", "export", zipName)}, nil
}

// exportZipBase is the zip's top directory: the name made file-safe.
func exportZipBase(name string) string {
	base := strings.NewReplacer(`\`, "_", "/", "_", ":", "_", "*", "_", "?", "_", `"`, "_", "'", "_",
		"<", "_", ">", "_", "|", "_").Replace(filepath.Base(name))
	base = strings.TrimSuffix(strings.TrimSpace(base), ".")
	if base == "" || base == "." || base == ".." {
		return "resources"
	}
	return base
}

func writeExportZip(p string, fill func(*zip.Writer) error) error {
	f, err := os.Create(p)
	if err != nil {
		return err
	}
	zw := zip.NewWriter(f)
	err = fill(zw)
	if cerr := zw.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func addZipFile(zw *zip.Writer, name, src string) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	h, err := zip.FileInfoHeader(info)
	if err != nil {
		return err
	}
	h.Name, h.Method = name, zip.Deflate
	w, err := zw.CreateHeader(h)
	if err != nil {
		return err
	}
	_, err = io.Copy(w, f)
	return err
}

// exportMdContent is /api/export/exportMdContent: a document (or a block,
// with its heading's children) as standard Markdown, rendered by the
// export Sisyphus shares with its tools (mdexport) from this kernel's
// trees, so it never lags (embeds excepted: they run their query on the
// SQL index). An unknown id answers empty strings, as SiYuan does;
// fillCSSVar is accepted and ignored (there is no theme). A database block
// becomes the table of its view (export_av.go).
func (k *Kernel) exportMdContent(ctx context.Context, a args) (any, error) {
	id, err := a.id("id")
	if err != nil {
		return nil, err
	}
	s := mdexport.DefaultSettings()
	o := mdexport.Options{YFM: true, AddTitle: s.AddTitle}
	if o.RefMode, err = a.optInt("refMode", s.RefMode); err != nil {
		return nil, err
	}
	if o.EmbedMode, err = a.optInt("embedMode", s.EmbedMode); err != nil {
		return nil, err
	}
	for key, dst := range map[string]*bool{"yfm": &o.YFM, "addTitle": &o.AddTitle} {
		if a[key] != nil {
			if *dst, err = a.optBool(key); err != nil {
				return nil, err
			}
		}
	}
	if o.ImgTag, err = a.optBool("imgTag"); err != nil {
		return nil, err
	}
	if o.AdjustHeadingLevel, err = a.optBool("adjustHeadingLevel"); err != nil {
		return nil, err
	}
	if _, err = a.optBool("fillCSSVar"); err != nil {
		return nil, err
	}
	hPath := ""
	if loc, ok := k.lookup(id); ok {
		if d, ok := k.doc(loc.Root); ok {
			hPath = d.tree.HPath
		}
	}
	content, found, err := mdexport.Export(ctx, exportSource{k}, s, o, id)
	if err != nil {
		return nil, err
	}
	if !found {
		hPath = ""
	}
	return map[string]any{"hPath": hPath, "content": content}, nil
}

// exportSource is what an export reads here: private copies of this
// kernel's trees, its SQL index for anchors and embeds, its files for
// annotations.
type exportSource struct{ k *Kernel }

func (s exportSource) Block(_ context.Context, id string) (*parse.Tree, *ast.Node, error) {
	tree, node, err := s.k.loadTreeOf(id)
	if errors.Is(err, errNotFound) {
		return nil, nil, nil
	}
	return tree, node, err
}

// RefText is sql.GetRefText over this kernel's index.
func (s exportSource) RefText(ctx context.Context, id string) (string, error) {
	if !validID(id) {
		if strings.HasPrefix(id, "assets") {
			return id, nil
		}
		return "block not found", nil
	}
	rows, err := s.k.sql.queryArgs(ctx, "SELECT name, type, content, markdown FROM blocks WHERE id = ?", id)
	if err != nil || len(rows) == 0 {
		return "block not found", err
	}
	r := rows[0]
	str := func(k string) string { v, _ := r[k].(string); return v }
	return mdexport.IndexedRefText(str("name"), str("type"), str("content"), str("markdown")), nil
}

func (s exportSource) Embed(ctx context.Context, stmt string, limit int) ([]string, error) {
	rows, err := s.k.sql.query(ctx, stmt, limit, true)
	if err != nil {
		return nil, nil // SiYuan shows nothing for a statement that fails
	}
	var ids []string
	for _, r := range rows {
		if id, _ := r["id"].(string); id != "" {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

func (s exportSource) Annotation(_ context.Context, _, asset string) ([]byte, error) {
	abs, err := s.k.workspacePath("/data/" + asset + ".sya")
	if err != nil {
		return nil, nil
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return nil, nil
	}
	return data, nil
}

// exportRefText is a ref's anchor text when the ref has none: the def
// block's title or content (templates fill empty anchors with it).
func (k *Kernel) exportRefText(defID string) string {
	_, node, err := k.loadTreeOf(defID)
	if err != nil || node == nil {
		return defID
	}
	if node.Type == ast.NodeDocument {
		return node.IALAttr("title")
	}
	return strings.TrimSpace(sqlStaticContent(node))
}
