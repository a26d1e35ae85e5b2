package embedded

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/88250/lute/ast"
	"github.com/gabriel-vasile/mimetype"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// maxUploadBytes caps the body of putFile and asset uploads. SiYuan has no
// cap; a test kernel should answer a clear error instead of filling a disk.
var maxUploadBytes int64 = 1 << 30

// maxFormValue caps one non-file multipart field.
const maxFormValue = 1 << 20

// errOutsideWorkspace is SiYuan's refusal of a path outside the workspace
// (it answers os.ErrPermission's text with code 403).
var errOutsideWorkspace = errors.New("permission denied")

// workspacePath resolves a path relative to the workspace root, as SiYuan's
// GetAbsPathInWorkspace does ("/data/x" and "data/x" are the same file, the
// root itself is allowed, ".." is resolved lexically and may not climb out).
// Separators are the host's, as in SiYuan: on Linux a backslash is part of a
// file name. A NUL byte is not refused here either: the file system call
// fails on it, and each endpoint answers that failure as SiYuan does. Unlike
// SiYuan it also follows symbolic links: a path whose existing part resolves
// outside the workspace is refused too.
func (k *Kernel) workspacePath(rel string) (string, error) {
	return resolveInWorkspace(k.dir, rel)
}

func resolveInWorkspace(root, rel string) (string, error) {
	abs := filepath.Join(root, rel)
	if abs != root && !isSubPath(root, abs) {
		return "", errOutsideWorkspace
	}
	// Resolve the longest existing prefix; it must stay inside the
	// (resolved) workspace, whatever links it goes through.
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", fmt.Errorf("resolve workspace: %w", err)
	}
	existing, rest := abs, ""
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			return "", errOutsideWorkspace
		}
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = parent
	}
	real, err := filepath.EvalSymlinks(existing)
	if err != nil {
		// A dangling link or an unreadable component: refuse rather than guess.
		return "", errOutsideWorkspace
	}
	real = filepath.Join(real, rest)
	if real != realRoot && !isSubPath(realRoot, real) {
		return "", errOutsideWorkspace
	}
	return abs, nil
}

// isSubPath reports whether p is strictly inside dir (both clean, absolute).
func isSubPath(dir, p string) bool {
	r, err := filepath.Rel(dir, p)
	if err != nil || r == "." {
		return false
	}
	return r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) && !filepath.IsAbs(r)
}

// fileNameOnlyFilter is SiYuan's FilterFileName: path and shell specials
// become "_", invisible characters go, blanks and a final "." are trimmed.
func fileNameOnlyFilter(name string) string {
	name = strings.NewReplacer(`\`, "_", "/", "_", ":", "_", "*", "_", "?", "_", `"`, "_", "'", "_",
		"<", "_", ">", "_", "|", "_").Replace(name)
	name = strings.ReplaceAll(name, "\u00a0", " ")
	name = strings.Map(func(r rune) rune {
		switch {
		case r == '\u200b' || r == '\u200c' || r == '\u200d' || r == '\ufeff':
			return -1
		case !unicode.IsPrint(r) && r != '\u3000':
			return -1
		case r >= 0xe000 && r <= 0xf8ff, r >= 0xf0000 && r <= 0xffffd, r >= 0x100000 && r <= 0x10fffd:
			return -1
		}
		return r
	}, name)
	return strings.TrimSuffix(strings.TrimSpace(name), ".")
}

// fileNameFilter is SiYuan's FilterUploadFileName: the name assets and new
// files get, with path, shell and Markdown specials removed.
func fileNameFilter(name string) string {
	name = fileNameOnlyFilter(name)
	name = strings.NewReplacer("~", "", "[", "", "]", "", "(", "", ")", "", "!", "", "`", "", "&", "",
		"{", "", "}", "", "=", "", "#", "", "%", "", "$", "", ";", "").Replace(name)
	return truncateFileName(name)
}

// truncateFileName keeps a name within SiYuan's 189-byte limit, extension kept.
func truncateFileName(name string) string {
	ext := filepath.Ext(name)
	maxLen := 189 - len(ext)
	if len(name) <= maxLen {
		return name
	}
	var b strings.Builder
	for _, r := range name {
		if b.Len()+utf8.RuneLen(r) > maxLen {
			break
		}
		b.WriteRune(r)
	}
	return b.String() + ext
}

// validUploadFileName is SiYuan's IsValidUploadFileName.
func validUploadFileName(name string) bool { return name == fileNameFilter(name) }

// fileError answers the raw file API's errors: HTTP 202 and the envelope, as
// getFile does in SiYuan.
func fileError(w http.ResponseWriter, code int, msg string) {
	writeEnvelope(w, http.StatusAccepted, wire.Result{Code: code, Msg: msg})
}

// getFile is /api/file/getFile: the file's bytes with HTTP 200, or HTTP 202
// and an envelope: 404 "file does not exist" when the path cannot be stat'ed
// (missing, or under a regular file), 403 outside the workspace, 409 a
// directory. The Content-Type is SiYuan's: by extension, else sniffed from
// the content with the same library and version SiYuan uses (so a JSON file
// without extension is application/json, an empty one text/plain), else
// application/octet-stream.
func (k *Kernel) getFile(w http.ResponseWriter, r *http.Request) {
	a, err := readArgs(r, false)
	if err != nil {
		fileError(w, -1, err.Error())
		return
	}
	p, err := a.field("path", true)
	if err != nil {
		fileError(w, -1, err.Error())
		return
	}
	abs, err := k.workspacePath(p)
	if err != nil {
		fileError(w, http.StatusForbidden, err.Error())
		return
	}
	// SiYuan's filelock.IsExist: any stat failure means "does not exist".
	info, err := os.Stat(abs)
	if err != nil {
		fileError(w, http.StatusNotFound, "file does not exist")
		return
	}
	if info.IsDir() {
		fileError(w, http.StatusConflict, "path is a directory")
		return
	}
	f, err := os.Open(abs)
	if err != nil {
		fileError(w, http.StatusInternalServerError, err.Error())
		return
	}
	defer f.Close()
	if info, err = f.Stat(); err != nil {
		fileError(w, http.StatusInternalServerError, err.Error())
		return
	}
	ctype := mime.TypeByExtension(filepath.Ext(abs))
	if ctype == "" {
		m, err := mimetype.DetectReader(f)
		if err != nil {
			fileError(w, http.StatusInternalServerError, err.Error())
			return
		}
		ctype = m.String()
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			fileError(w, http.StatusInternalServerError, err.Error())
			return
		}
	}
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Content-Length", strconv.FormatInt(info.Size(), 10))
	w.WriteHeader(http.StatusOK)
	io.Copy(w, f)
}

// uploadForm is a streamed multipart form: values in memory, file parts
// spooled to temporary files in the workspace's temp directory.
type uploadForm struct {
	values map[string][]string
	files  map[string][]*uploadPart
	dir    string
}

type uploadPart struct {
	name string // the client's file name
	path string // spooled copy
	size int64
	hash string // sha256 of the bytes
}

func (f *uploadForm) value(key string) (string, bool) {
	if v := f.values[key]; len(v) > 0 {
		return v[0], true
	}
	return "", false
}

func (f *uploadForm) cleanup() {
	if f.dir != "" {
		os.RemoveAll(f.dir)
	}
}

// errBodyTooLarge reports a body over maxUploadBytes.
type errBodyTooLarge struct{}

func (errBodyTooLarge) Error() string {
	return fmt.Sprintf("request body too large: the limit is %d bytes", maxUploadBytes)
}

// readUploadForm streams a multipart body with bounded memory: each file
// part is copied (and hashed) into a file under <workspace>/temp, fsynced.
func (k *Kernel) readUploadForm(w http.ResponseWriter, r *http.Request) (*uploadForm, error) {
	r.Body = http.MaxBytesReader(w, r.Body, maxUploadBytes)
	form := &uploadForm{values: map[string][]string{}, files: map[string][]*uploadPart{}}
	mr, err := r.MultipartReader()
	if err != nil {
		// SiYuan's PostForm also reads urlencoded bodies (without files).
		if perr := r.ParseForm(); perr != nil {
			return nil, sizeErr(perr)
		}
		for key, v := range r.PostForm {
			form.values[key] = v
		}
		return form, nil
	}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return form, nil
		}
		if err != nil {
			form.cleanup()
			return nil, sizeErr(err)
		}
		key := part.FormName()
		if part.FileName() == "" {
			data, err := io.ReadAll(io.LimitReader(part, maxFormValue+1))
			part.Close()
			if err != nil {
				form.cleanup()
				return nil, sizeErr(err)
			}
			if len(data) > maxFormValue {
				form.cleanup()
				return nil, fmt.Errorf("form field [%s] is larger than %d bytes", key, maxFormValue)
			}
			form.values[key] = append(form.values[key], string(data))
			continue
		}
		up, err := form.spool(k.tempDir, part)
		part.Close()
		if err != nil {
			form.cleanup()
			return nil, sizeErr(err)
		}
		form.files[key] = append(form.files[key], up)
	}
}

func sizeErr(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return errBodyTooLarge{}
	}
	return err
}

func (f *uploadForm) spool(tempDir string, part *multipart.Part) (*uploadPart, error) {
	if f.dir == "" {
		if err := os.MkdirAll(tempDir, 0o755); err != nil {
			return nil, err
		}
		dir, err := os.MkdirTemp(tempDir, "upload-")
		if err != nil {
			return nil, err
		}
		f.dir = dir
	}
	tmp, err := os.CreateTemp(f.dir, "part-")
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), part)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	// The part's name as sent; multipart.Part.FileName already drops any
	// directory, so only the base name remains.
	return &uploadPart{name: part.FileName(), path: tmp.Name(), size: n, hash: hex.EncodeToString(h.Sum(nil))}, nil
}

// installFile moves a spooled file into place atomically (rename, then
// directory fsync); across file systems it is copied first.
func installFile(src, dst string, perm os.FileMode) error {
	dir := filepath.Dir(dst)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.Chmod(src, perm); err != nil {
		return err
	}
	if err := os.Rename(src, dst); err != nil {
		in, oerr := os.Open(src)
		if oerr != nil {
			return err
		}
		defer in.Close()
		tmp, cerr := os.CreateTemp(dir, "."+filepath.Base(dst)+".tmp-*")
		if cerr != nil {
			return cerr
		}
		_, cerr = io.Copy(tmp, in)
		if cerr == nil {
			cerr = tmp.Chmod(perm)
		}
		if cerr == nil {
			cerr = tmp.Sync()
		}
		if err := tmp.Close(); cerr == nil {
			cerr = err
		}
		if cerr == nil {
			cerr = os.Rename(tmp.Name(), dst)
		}
		if cerr != nil {
			os.Remove(tmp.Name())
			return cerr
		}
	}
	return syncDir(dir)
}

// formError answers an unreadable upload body: HTTP 413 for one over the
// cap, otherwise SiYuan's code -1.
func formError(w http.ResponseWriter, err error) {
	if errors.As(err, new(errBodyTooLarge)) {
		writeEnvelope(w, http.StatusRequestEntityTooLarge, wire.Result{Code: -1, Msg: err.Error()})
		return
	}
	writeEnvelope(w, http.StatusOK, wire.Result{Code: -1, Msg: err.Error()})
}

// putFile is /api/file/putFile (multipart path, isDir, modTime, file).
func (k *Kernel) putFile(w http.ResponseWriter, r *http.Request) {
	form, err := k.readUploadForm(w, r)
	if err != nil {
		formError(w, err)
		return
	}
	defer form.cleanup()
	reply := func(code int, msg string) {
		writeEnvelope(w, http.StatusOK, wire.Result{Code: code, Msg: msg})
	}
	isDirStr, _ := form.value("isDir")
	isDir, _ := strconv.ParseBool(isDirStr)
	p, _ := form.value("path")
	if p = strings.TrimSpace(p); p == "" {
		reply(http.StatusBadRequest, "path must not be empty")
		return
	}
	abs, err := k.workspacePath(p)
	if err != nil {
		reply(http.StatusForbidden, err.Error())
		return
	}
	// SiYuan's filelock.IsExist: a path that cannot be stat'ed (missing, or
	// under a regular file) is new, so its name is checked; creating its
	// folders then fails for a path under a file ("mkdir ...: not a directory").
	info, statErr := os.Stat(abs)
	switch {
	case statErr != nil:
		if !validUploadFileName(filepath.Base(abs)) {
			reply(http.StatusBadRequest, "invalid file path. For details, please check https://github.com/siyuan-note/siyuan/issues/14658")
			return
		}
	case info.IsDir() && !isDir:
		reply(http.StatusBadRequest, "path is a directory")
		return
	}
	if isDir {
		if err := os.MkdirAll(abs, 0o755); err != nil {
			reply(-1, err.Error())
			return
		}
	} else {
		parts := form.files["file"]
		if len(parts) == 0 {
			reply(http.StatusBadRequest, "Field [file] must not be empty")
			return
		}
		if err := installFile(parts[0].path, abs, 0o644); err != nil {
			reply(-1, err.Error())
			return
		}
	}
	modTime := time.Now()
	if s, ok := form.value("modTime"); ok && s != "" {
		ms, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			reply(http.StatusInternalServerError, err.Error())
			return
		}
		modTime = time.UnixMilli(ms)
	}
	if err := os.Chtimes(abs, modTime, modTime); err != nil {
		reply(http.StatusInternalServerError, err.Error())
		return
	}
	writeEnvelope(w, http.StatusOK, wire.Result{Code: 0, Msg: "", Data: nil})
}

// internalErrorMsg is SiYuan's message for failures it only details in its log.
const internalErrorMsg = "Internal Server Error. For details, see the SiYuan kernel log."

// removeFile is /api/file/removeFile.
func (k *Kernel) removeFile(ctx context.Context, a args) (any, error) {
	p, err := a.field("path", true)
	if err != nil {
		return nil, err
	}
	abs, err := k.workspacePath(p)
	if err != nil {
		return nil, errCode(http.StatusForbidden, "%s", err.Error())
	}
	if abs == k.dir {
		// SiYuan would delete the whole workspace; refuse instead.
		return nil, errCode(http.StatusForbidden, "%s", errOutsideWorkspace.Error())
	}
	if _, err := os.Lstat(abs); errors.Is(err, fs.ErrNotExist) {
		return nil, errCode(http.StatusNotFound, "path does not exist")
	} else if err != nil {
		k.log.Error("stat failed", "path", abs, "err", err)
		return nil, errCode(http.StatusInternalServerError, internalErrorMsg)
	}
	if err := os.RemoveAll(abs); err != nil {
		k.log.Error("remove failed", "path", abs, "err", err)
		return nil, errCode(http.StatusInternalServerError, internalErrorMsg)
	}
	if err := syncDir(filepath.Dir(abs)); err != nil {
		k.log.Warn("fsync after remove failed", "path", abs, "err", err)
	}
	return nil, nil
}

// readDir is /api/file/readDir.
func (k *Kernel) readDir(ctx context.Context, a args) (any, error) {
	// SiYuan binds readDir's path without trimming or rejecting empty: ""
	// is the workspace root, " /data " a (missing) folder named " ".
	p, err := a.field("path", false)
	if err != nil {
		return nil, err
	}
	abs, err := k.workspacePath(p)
	if err != nil {
		return nil, errCode(http.StatusForbidden, "%s", err.Error())
	}
	info, err := os.Stat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errCode(http.StatusNotFound, "path does not exist")
	}
	if err != nil {
		k.log.Error("stat failed", "path", abs, "err", err)
		return nil, errCode(http.StatusInternalServerError, internalErrorMsg)
	}
	if !info.IsDir() {
		return nil, errCode(http.StatusConflict, "path is not a directory")
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		k.log.Error("read dir failed", "path", abs, "err", err)
		return nil, errCode(http.StatusInternalServerError, internalErrorMsg)
	}
	ret := []map[string]any{}
	for _, e := range entries {
		full := filepath.Join(abs, e.Name())
		fi, err := os.Stat(full)
		if err != nil {
			// A dangling link: describe the link itself rather than fail.
			if fi, err = os.Lstat(full); err != nil {
				continue
			}
		}
		ret = append(ret, map[string]any{
			"name":      e.Name(),
			"isDir":     fi.IsDir(),
			"isSymlink": e.Type() == fs.ModeSymlink,
			"updated":   fi.ModTime().Unix(),
		})
	}
	return ret, nil
}

// assetRemoveID is SiYuan's RemoveID: "pic-20240101120000-abcdefg.png" → "pic.png".
func assetRemoveID(name string) string {
	ext := path.Ext(name)
	if ext == "." {
		ext = ""
	}
	base := strings.TrimSuffix(name, ext)
	if len(base) > 23 && validID(base[len(base)-22:]) {
		base = base[:len(base)-23]
	}
	return base + ext
}

// assetLastID is the candidate id at the end of a file's base name.
func assetLastID(name string) string {
	ext := path.Ext(path.Base(name))
	id := strings.TrimSuffix(path.Base(name), ext)
	if len(id) > 22 {
		id = id[len(id)-22:]
	}
	return id
}

// assetName is SiYuan's AssetName: "<base>-<id><ext>", keeping an id the
// name already ends with.
func assetName(name, newID string) string {
	id := assetLastID(name)
	ext := path.Ext(name)
	if ext == "." {
		ext = ""
	}
	base := name[:len(name)-len(ext)]
	switch {
	case !validID(id):
		return base + "-" + newID + ext
	case !validID(base):
		return base[:len(base)-len(id)-1] + "-" + id + ext
	default:
		return base + ext
	}
}

// assetHashes is SiYuan's asset hash cache: content hash → "assets/…"
// path, filled by uploads into data/assets (SiYuan's cache refuses other
// paths) and consulted by every upload, whatever its target folder. SiYuan
// also finds hashes of assets documents link in its SQL assets table; this
// kernel only remembers its own uploads since it started.
type assetHashes struct {
	mu sync.Mutex
	m  map[string]string
}

func (h *assetHashes) get(dataDir, hash string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	p, ok := h.m[hash]
	if !ok {
		return ""
	}
	if _, err := os.Stat(filepath.Join(dataDir, filepath.FromSlash(p))); err != nil {
		delete(h.m, hash)
		return ""
	}
	return p
}

func (h *assetHashes) set(hash, p string) {
	if !strings.HasPrefix(p, "assets/") {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = map[string]string{}
	}
	h.m[hash] = p
}

// uploadAsset is /api/asset/upload: files in file[] go to assetsDirPath
// (relative to data/, default /assets/; id picks the block's document's
// assets folder) as <base>-<NodeID><ext>, the extension lower-cased. A
// non-empty file whose bytes an earlier upload into data/assets had, under
// the same name without id (case-insensitively), answers that earlier
// "assets/…" path instead, even when assetsDirPath points elsewhere;
// uploads into other folders are never reused. skipIfDuplicated answers the
// first file of the folder matching <base>*<ext> and stops there.
func (k *Kernel) uploadAsset(w http.ResponseWriter, r *http.Request) {
	fail := func(msg string) {
		writeEnvelope(w, http.StatusOK, wire.Result{Code: -1, Msg: msg})
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "multipart/form-data" {
		io.Copy(io.Discard, io.LimitReader(r.Body, maxJSONBody))
		fail(http.ErrNotMultipart.Error())
		return
	}
	form, err := k.readUploadForm(w, r)
	if err != nil {
		formError(w, err)
		return
	}
	defer form.cleanup()
	assetsDir := filepath.Join(k.dataDir, "assets")
	relDir := "assets"
	if id, ok := form.value("id"); ok {
		loc, found := k.lookup(id)
		if !found {
			fail("Failed to insert asset file, please reopen the document")
			return
		}
		assetsDir = k.docAssetsDir(loc.Box, loc.Path)
	}
	if v, ok := form.value("assetsDirPath"); ok {
		relDir = v
		assetsDir = filepath.Join(k.dataDir, filepath.FromSlash(v))
		if _, err := k.workspacePath(strings.TrimPrefix(assetsDir, k.dir)); err != nil || !isSubPath(k.dir, assetsDir) {
			fail("Path [" + assetsDir + "] is not in workspace")
			return
		}
	}
	if err := os.MkdirAll(assetsDir, 0o755); err != nil {
		fail(err.Error())
		return
	}
	skipIfDuplicated := false
	if v, ok := form.value("skipIfDuplicated"); ok {
		skipIfDuplicated = v == "true"
	}
	var errFiles []string // SiYuan answers null, not [], when nothing failed
	succMap := map[string]any{}
	var msg string
	for _, part := range form.files["file[]"] {
		baseName := part.name
		lastID := assetLastID(baseName)
		if !validID(lastID) {
			lastID = ""
		}
		fName := fileNameFilter(baseName)
		ext := filepath.Ext(fName)
		fName = strings.TrimSuffix(fName, ext) + strings.ToLower(ext)
		ext = strings.ToLower(ext)
		if part.size > 0 {
			if existing := k.assetHashes.get(k.dataDir, part.hash); existing != "" &&
				strings.EqualFold(fName, assetRemoveID(path.Base(existing))) {
				succMap[baseName] = existing
				continue
			}
		}
		if skipIfDuplicated {
			pattern := filepath.Join(assetsDir, globEscape(strings.TrimSuffix(fName, ext))) + "*" + globEscape(ext)
			if patternID := assetLastID(fName); lastID != "" && lastID != patternID {
				pattern = filepath.Join(assetsDir, "*"+lastID+globEscape(ext))
			}
			if matches, _ := filepath.Glob(pattern); len(matches) > 0 {
				succMap[baseName] = strings.TrimPrefix(path.Join(relDir, filepath.Base(matches[0])), "/")
				break
			}
		}
		if lastID == "" {
			lastID = ast.NewNodeID()
		}
		fName = assetName(fName, lastID)
		if err := installFile(part.path, filepath.Join(assetsDir, fName), 0o644); err != nil {
			k.log.Error("write asset failed", "name", fName, "err", err)
			errFiles = append(errFiles, fName)
			msg = err.Error()
			break
		}
		p := strings.TrimPrefix(path.Join(relDir, fName), "/")
		succMap[baseName] = p
		if part.size > 0 {
			k.assetHashes.set(part.hash, p)
		}
	}
	writeEnvelope(w, http.StatusOK, wire.Result{Code: 0, Msg: msg, Data: map[string]any{"errFiles": errFiles, "succMap": succMap}})
}

func globEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, "*", `\*`, "?", `\?`, "[", `\[`).Replace(s)
}

// docAssetsDir is SiYuan's getAssetsDir for a block's document: an assets
// directory next to the document, else the notebook's, else data/assets.
func (k *Kernel) docAssetsDir(box, docPath string) string {
	dir := filepath.Join(k.boxDir(box), filepath.FromSlash(path.Dir(docPath)), "assets")
	if _, err := os.Stat(dir); err == nil {
		return dir
	}
	dir = filepath.Join(k.boxDir(box), "assets")
	if _, err := os.Stat(dir); err == nil {
		return dir
	}
	return filepath.Join(k.dataDir, "assets")
}
