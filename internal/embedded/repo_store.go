package embedded

import (
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// The data repository: a small content-addressed store under the
// workspace's repo/ directory, kept as SiYuan 3.7.3 keeps its own (which
// is dejavu's) in what clients can see: snapshots of data/ under 40-hex
// ids, a file id per path and modification second, tags as file names,
// the newest snapshot kept when nothing changed. Its layout is this
// kernel's own, not dejavu's:
//
//	repo/indexes/<id>       a snapshot's header (repoIndex)
//	repo/files/<id>         its files (repoFile, sorted by path; gzipped JSON)
//	repo/entries/<aa>/<…>   one file version by file id (repoFile)
//	repo/objects/<aa>/<…>   file contents by SHA-1
//	repo/refs/latest        the newest snapshot's id
//	repo/refs/tags/<tag>    a tagged snapshot's id; its mtime is the tag's
//
// The repository key lives in conf/conf.json (repo.key) as SiYuan keeps
// it. SiYuan encrypts the repository with it; this kernel only requires
// it (a test workspace's snapshots are not secrets) and stores contents
// as they are.

// repoStore guards the repository directory: writers (snapshot, tag,
// rollback) hold mu, readers hold it shared.
type repoStore struct {
	mu sync.RWMutex
}

// repoIndex is a snapshot's header.
type repoIndex struct {
	ID         string               `json:"id"`
	Memo       string               `json:"memo"`
	Created    int64                `json:"created"`
	Count      int                  `json:"count"`
	Size       int64                `json:"size"`
	SystemID   string               `json:"systemID"`
	SystemName string               `json:"systemName"`
	SystemOS   string               `json:"systemOS"`
	TypesCount []wire.RepoTypeCount `json:"typesCount"`
}

// repoFile is one version of a file: its id, path under data/ ("/…"),
// size, modification time (ms) and content hash.
type repoFile struct {
	ID      string `json:"id"`
	Path    string `json:"path"`
	Size    int64  `json:"size"`
	Updated int64  `json:"updated"`
	Blob    string `json:"blob"`
}

// repoIndexPageSize is how many snapshots a getRepoSnapshots page holds.
const repoIndexPageSize = 32

// repoLargeDoc is the size from which openRepoSnapshotFile answers a
// document as Markdown rather than block DOM (SiYuan's 1 MiB).
const repoLargeDoc = 1 << 20

func (k *Kernel) repoDir() string { return filepath.Join(k.dir, "repo") }

// inputEmpty is SiYuan's refusal of an empty memo or tag name (its
// language string 142).
const inputEmpty = "Input can not be empty"

// repoKey reads the repository key from conf/conf.json ("" when none).
func (k *Kernel) repoKey() (string, error) {
	c, err := k.storedConf()
	if err != nil {
		return "", err
	}
	repo, _ := c["repo"].(map[string]any)
	key, _ := repo["key"].(string)
	return key, nil
}

// storedConf is conf/conf.json as stored (empty when absent).
func (k *Kernel) storedConf() (map[string]any, error) {
	c := map[string]any{}
	data, err := os.ReadFile(filepath.Join(k.dir, "conf", "conf.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, err
	}
	if len(data) == 0 {
		return c, nil
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("conf/conf.json: %w", err)
	}
	return c, nil
}

// needRepoKey answers SiYuan's missing-key refusal when no key is set.
func (k *Kernel) needRepoKey() error {
	key, err := k.repoKey()
	if err != nil {
		return err
	}
	if key == "" {
		return errf("%s", repoKeyMissing)
	}
	return nil
}

// initRepoKeyLocked removes the repository, stores a new random key and
// answers it (base64, as SiYuan's []byte key encodes).
func (k *Kernel) initRepoKeyLocked() (string, error) {
	if err := os.RemoveAll(k.repoDir()); err != nil {
		return "", err
	}
	if err := os.MkdirAll(k.repoDir(), 0o755); err != nil {
		return "", err
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	key := base64.StdEncoding.EncodeToString(raw)
	c, err := k.storedConf()
	if err != nil {
		return "", err
	}
	repo, _ := c["repo"].(map[string]any)
	if repo == nil {
		repo = map[string]any{}
	}
	repo["key"] = key
	c["repo"] = repo
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return "", err
	}
	if err := writeFileAtomic(filepath.Join(k.dir, "conf", "conf.json"), data, 0o600); err != nil {
		return "", err
	}
	return key, nil
}

// isRepoID is a 40-hex id (snapshot, file or content hash).
func isRepoID(id string) bool {
	if len(id) != 40 {
		return false
	}
	for _, c := range id {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// notFound is the error SiYuan's repository answers for a missing id: an
// open of its file. The path is formed, never opened, for a malformed id.
func notFound(p string) error {
	return fmt.Errorf("open %s: no such file or directory", p)
}

func (k *Kernel) indexPath(id string) string {
	return filepath.Join(k.repoDir(), "indexes", id)
}

func (k *Kernel) entryPath(id string) string {
	return filepath.Join(k.repoDir(), "entries", id[:2], id[2:])
}

func (k *Kernel) objectPath(hash string) string {
	return filepath.Join(k.repoDir(), "objects", hash[:2], hash[2:])
}

// readIndex reads a snapshot's header.
func (k *Kernel) readIndex(id string) (*repoIndex, error) {
	if !isRepoID(id) {
		return nil, notFound(filepath.Join(k.repoDir(), "indexes", id))
	}
	data, err := os.ReadFile(k.indexPath(id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, notFound(k.indexPath(id))
	}
	if err != nil {
		return nil, err
	}
	var ix repoIndex
	if err := json.Unmarshal(data, &ix); err != nil {
		return nil, fmt.Errorf("index %s: %w", id, err)
	}
	return &ix, nil
}

// readIndexFiles reads a snapshot's files.
func (k *Kernel) readIndexFiles(id string) ([]repoFile, error) {
	f, err := os.Open(filepath.Join(k.repoDir(), "files", id))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("files of %s: %w", id, err)
	}
	var files []repoFile
	if err := json.NewDecoder(zr).Decode(&files); err != nil {
		return nil, fmt.Errorf("files of %s: %w", id, err)
	}
	return files, nil
}

// readEntry reads one file version by its id.
func (k *Kernel) readEntry(id string) (*repoFile, error) {
	if !isRepoID(id) {
		return nil, notFound(filepath.Join(k.repoDir(), "objects", id))
	}
	data, err := os.ReadFile(k.entryPath(id))
	if errors.Is(err, fs.ErrNotExist) {
		// SiYuan's repository keeps file versions among its objects.
		return nil, notFound(filepath.Join(k.repoDir(), "objects", id[:2], id[2:]))
	}
	if err != nil {
		return nil, err
	}
	var f repoFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("file %s: %w", id, err)
	}
	return &f, nil
}

// readContent reads a file version's content.
func (k *Kernel) readContent(f *repoFile) ([]byte, error) {
	if !isRepoID(f.Blob) {
		return nil, fmt.Errorf("file %s: bad content hash", f.ID)
	}
	return os.ReadFile(k.objectPath(f.Blob))
}

// latestIndex is the newest snapshot (nil when there is none).
func (k *Kernel) latestIndex() (*repoIndex, error) {
	data, err := os.ReadFile(filepath.Join(k.repoDir(), "refs", "latest"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return k.readIndex(strings.TrimSpace(string(data)))
}

// repoFileID is dejavu's id of a file version: SHA-1 of its path and
// modification second.
func repoFileID(p string, updated int64) string {
	h := sha1.Sum([]byte(p + strconv.FormatInt(updated/1000, 10)))
	return hex.EncodeToString(h[:])
}

// walkedFile is a file of data/ a snapshot takes.
type walkedFile struct {
	path, abs string
	size      int64
	updated   int64
}

// userGuideBoxes are the user guide's notebooks, which SiYuan's
// repository leaves out.
var userGuideBoxes = [...]string{"20210808180117-6v0mkxr", "20210808180117-czj9bvb", "20211226090932-5lcq56f", "20240530133126-axarxgx"}

// walkData lists the files of data/ a snapshot takes, as SiYuan's
// repository walks it: folders starting with a dot are skipped, but the
// files of .siyuan (at any depth) are taken; dot files, *.tmp, anything
// not a regular file (links included), the data root's
// .siyuan/conf.json, storage/local.json, recent-doc.json, ref-used.json
// and the user guide's notebooks are left out. .siyuan/syncignore is
// not read: an embedded workspace ignores nothing more.
func (k *Kernel) walkData() ([]walkedFile, error) {
	var out []walkedFile
	err := filepath.WalkDir(k.dataDir, func(abs string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if abs == k.dataDir {
			return nil
		}
		name := d.Name()
		if d.IsDir() {
			if strings.HasPrefix(name, ".") && name != ".siyuan" {
				return filepath.SkipDir
			}
			if name == "filesys_status_check" {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".tmp") || !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(k.dataDir, abs)
		if err != nil {
			return err
		}
		p := "/" + filepath.ToSlash(rel)
		// SiYuan matches the end of the absolute path, its data folder
		// being named data.
		for _, s := range []string{"data/storage/local.json", "data/storage/recent-doc.json", "data/storage/ref-used.json"} {
			if strings.HasSuffix("/data"+p, s) {
				return nil
			}
		}
		if p == "/.siyuan/conf.json" {
			return nil
		}
		for _, b := range userGuideBoxes {
			if strings.HasPrefix(p, "/"+b+"/") {
				return nil
			}
		}
		info, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		out = append(out, walkedFile{path: p, abs: abs, size: info.Size(), updated: info.ModTime().UnixMilli()})
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out, err
}

// snapshotLocked snapshots data/ under memo, as dejavu's Index: when no
// file's path or modification second changed since the newest snapshot,
// that one is answered and nothing is stored. Callers hold repo.mu.
func (k *Kernel) snapshotLocked(memo string) (*repoIndex, error) {
	// SiYuan makes the sync ignore file on every snapshot; it is then
	// one of the snapshot's files.
	ignore := filepath.Join(k.dataDir, ".siyuan", "syncignore")
	if _, err := os.Stat(ignore); errors.Is(err, fs.ErrNotExist) {
		if err := writeFileAtomic(ignore, nil, 0o644); err != nil {
			return nil, err
		}
	}
	walked, err := k.walkData()
	if err != nil {
		return nil, fmt.Errorf("walk data: %w", err)
	}
	latest, err := k.latestIndex()
	if err != nil {
		return nil, err
	}
	prev := map[string]repoFile{}
	if latest != nil {
		files, err := k.readIndexFiles(latest.ID)
		if err != nil {
			return nil, err
		}
		if sameFiles(files, walked) {
			return latest, nil
		}
		for _, f := range files {
			prev[f.Path] = f
		}
	}
	files := make([]repoFile, 0, len(walked))
	var size int64
	var written []string
	for _, w := range walked {
		if f, ok := prev[w.path]; ok && f.Updated/1000 == w.updated/1000 {
			files = append(files, f) // the version the newest snapshot has
			size += f.Size
			continue
		}
		f, err := k.storeFile(w, &written)
		if err != nil {
			return nil, err
		}
		if f == nil {
			continue // gone since the walk
		}
		files = append(files, *f)
		size += f.Size
	}
	if len(written) > 0 {
		if err := syncWritten(k.repoDir(), written); err != nil {
			return nil, err
		}
	}
	sys := k.systemInfo()
	ix := &repoIndex{
		ID: randomHex(20), Memo: memo, Created: time.Now().UnixMilli(), Count: len(files), Size: size,
		SystemID: sys[0], SystemName: sys[1], SystemOS: sys[2], TypesCount: typesCount(files),
	}
	data, err := gzipJSON(files)
	if err != nil {
		return nil, err
	}
	if err := writeFileAtomic(filepath.Join(k.repoDir(), "files", ix.ID), data, 0o644); err != nil {
		return nil, err
	}
	if data, err = json.Marshal(ix); err != nil {
		return nil, err
	}
	if err := writeFileAtomic(k.indexPath(ix.ID), data, 0o644); err != nil {
		return nil, err
	}
	if err := writeFileAtomic(filepath.Join(k.repoDir(), "refs", "latest"), []byte(ix.ID), 0o644); err != nil {
		return nil, err
	}
	return ix, nil
}

// sameFiles: both list the same paths at the same modification seconds
// (both sorted by path).
func sameFiles(prev []repoFile, walked []walkedFile) bool {
	if len(prev) != len(walked) {
		return false
	}
	for i := range prev {
		if prev[i].Path != walked[i].path || prev[i].Updated/1000 != walked[i].updated/1000 {
			return false
		}
	}
	return true
}

// storeFile stores a walked file's version unless the repository has it
// (same path and modification second), and answers it; nil when the file
// is gone. What it writes is not synced: the caller syncs every written
// path (written) at once before any snapshot refers to them.
func (k *Kernel) storeFile(w walkedFile, written *[]string) (*repoFile, error) {
	id := repoFileID(w.path, w.updated)
	if f, err := k.readEntry(id); err == nil {
		return f, nil
	}
	data, err := os.ReadFile(w.abs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	h := sha1.Sum(data)
	f := &repoFile{ID: id, Path: w.path, Size: int64(len(data)), Updated: w.updated, Blob: hex.EncodeToString(h[:])}
	if _, err := os.Stat(k.objectPath(f.Blob)); errors.Is(err, fs.ErrNotExist) {
		if err := writeFileUnsynced(k.objectPath(f.Blob), data); err != nil {
			return nil, err
		}
		*written = append(*written, k.objectPath(f.Blob))
	}
	entry, err := json.Marshal(f)
	if err != nil {
		return nil, err
	}
	if err := writeFileUnsynced(k.entryPath(id), entry); err != nil {
		return nil, err
	}
	*written = append(*written, k.entryPath(id))
	return f, nil
}

// writeFileUnsynced writes a file whole (a temporary file renamed over
// it), without syncing: see storeFile.
func writeFileUnsynced(p string, data []byte) error {
	dir := filepath.Dir(p)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(p)+".tmp-*")
	if err != nil {
		return fmt.Errorf("create temp for %s: %w", p, err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, p)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", p, err)
	}
	return nil
}

// gzipJSON is v as gzipped JSON (a snapshot's file list: a thousand
// files' paths and ids shrink to about a third).
func gzipJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if err := json.NewEncoder(zw).Encode(v); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// systemInfo is the system id, name and OS a snapshot records.
func (k *Kernel) systemInfo() [3]string {
	out := [3]string{"", "", runtime.GOOS}
	c, err := k.conf()
	if err != nil {
		return out
	}
	sys, _ := c["system"].(map[string]any)
	out[0], _ = sys["id"].(string)
	out[1], _ = sys["name"].(string)
	if s, _ := sys["os"].(string); s != "" {
		out[2] = s
	}
	return out
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// typesCount counts a snapshot's files by extension ("NoExt" for none),
// most first (ties in the order first met). Past ten types SiYuan keeps
// ten and adds "Other" with a count of 0 (its sum is never added up).
func typesCount(files []repoFile) []wire.RepoTypeCount {
	var out []wire.RepoTypeCount
	at := map[string]int{}
	for _, f := range files {
		ext := path.Ext(f.Path)
		if ext == "." || ext == "" {
			ext = "NoExt"
		}
		if i, ok := at[ext]; ok {
			out[i].Count++
			continue
		}
		at[ext] = len(out)
		out = append(out, wire.RepoTypeCount{Type: ext, Count: 1})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Count > out[j].Count })
	if len(out) > 10 {
		out = append(out[:10], wire.RepoTypeCount{Type: "Other"})
	}
	return out
}

// humanSize is go-humanize's BytesCustomCeil(n, 2) as SiYuan shows sizes:
// SI units, rounded up to two decimals, trailing zeros dropped.
func humanSize(n int64) string {
	if n < 10 {
		return strconv.FormatInt(n, 10) + " B"
	}
	units := []string{"B", "kB", "MB", "GB", "TB", "PB", "EB"}
	e := math.Floor(math.Log(float64(n)) / math.Log(1000))
	val := math.Ceil(float64(n)/math.Pow(1000, e)*100) / 100
	var s string
	if _, frac := math.Modf(val); frac == 0 {
		s = fmt.Sprintf("%.0f", val)
	} else {
		s = strings.TrimRight(fmt.Sprintf("%.2f", val), "0")
	}
	return s + " " + units[int(e)]
}

// snapshotOf is a snapshot as the lists answer it.
func snapshotOf(ix *repoIndex) wire.RepoSnapshot {
	tc := ix.TypesCount
	if tc == nil {
		tc = []wire.RepoTypeCount{}
	}
	return wire.RepoSnapshot{
		ID: ix.ID, Memo: ix.Memo, Created: ix.Created, HCreated: time.UnixMilli(ix.Created).Format("2006-01-02 15:04:05"),
		Files: json.RawMessage("null"), Count: ix.Count, Size: ix.Size, HSize: humanSize(ix.Size),
		SystemID: ix.SystemID, SystemName: ix.SystemName, SystemOS: ix.SystemOS, TypesCount: tc,
	}
}

// allIndexes lists every snapshot, newest first.
func (k *Kernel) allIndexes() ([]*repoIndex, error) {
	entries, err := os.ReadDir(filepath.Join(k.repoDir(), "indexes"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*repoIndex
	for _, e := range entries {
		if e.IsDir() || !isRepoID(e.Name()) {
			continue
		}
		ix, err := k.readIndex(e.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, ix)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Created > out[j].Created })
	return out, nil
}

// cleanTagName is SiYuan's tag name check: invisible characters removed,
// white space trimmed, not empty, a valid file name. "." and ".." (which
// SiYuan would write over its own folders with) are refused too.
// The refusal is answered as a message ("" when the name is good).
func cleanTagName(name string) (clean, refusal string) {
	name = strings.TrimSpace(stripInvisible(name))
	if name == "" {
		return "", inputEmpty
	}
	if strings.ContainsAny(name, `\/:*?"'<>|`) {
		return "", "Do not include symbols \\ / : * ? &quot; &#039; &lt; &gt; |"
	}
	if name == "." || name == ".." {
		return "", "invalid tag name"
	}
	return name, ""
}

// stripInvisible drops what SiYuan's memo and tag checks remove before
// trimming: format characters (zero-width and the like), controls other
// than white space, private-use characters.
func stripInvisible(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Cf, r) || (unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r') || unicode.Is(unicode.Co, r) {
			return -1
		}
		return r
	}, s)
}

// tagPath is a tag's file; ok is false for a name that is not a single
// path element (never opened).
func (k *Kernel) tagPath(name string) (string, bool) {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\\x00") {
		return "", false
	}
	return filepath.Join(k.repoDir(), "refs", "tags", name), true
}

// tagSnapshots lists the tags, one snapshot entry per tag, newest
// snapshot first.
func (k *Kernel) tagSnapshots() ([]wire.RepoSnapshot, error) {
	dir := filepath.Join(k.repoDir(), "refs", "tags")
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return []wire.RepoSnapshot{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := []wire.RepoSnapshot{}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		id := string(data)
		if len(id) != 40 {
			continue
		}
		ix, err := k.readIndex(id)
		if err != nil {
			return nil, err
		}
		info, err := e.Info()
		if err != nil {
			return nil, err
		}
		s := snapshotOf(ix)
		s.Tag = e.Name()
		s.HTagUpdated = info.ModTime().Format("2006-01-02 15:04:05")
		out = append(out, s)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Created > out[j].Created })
	return out, nil
}
