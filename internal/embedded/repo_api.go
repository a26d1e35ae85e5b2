package embedded

import (
	"context"
	"errors"
	"mime"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/88250/lute/ast"
	"github.com/88250/lute/parse"
	"github.com/88250/lute/render"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
	"github.com/sisyphus-go/sisyphus/internal/siyuan/mdexport"
	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// The data repository endpoints of SiYuan 3.7.3 (kernel/api/repo.go,
// kernel/model/repository.go), on the store of repo_store.go. Arguments
// are checked as SiYuan's BindJsonArg checks them, then the repository
// key, then the call; the answers and refusals are SiYuan's, worded in
// English. Where SiYuan would open a path made from a malformed id (it
// joins the id to its repository folder), this kernel answers the same
// "no such file" refusal without opening anything.

// repoKeyMissing is SiYuan's refusal of a repository call before a key
// is set (its language string 26, in English).
const repoKeyMissing = "Please initialize the data repo key first in [Settings - Account & Sync - Data repo key]"

// repoSnapshotFailed is the wording createSnapshot and tagSnapshot put
// around their failures (language string 140), with the data SiYuan adds.
func repoSnapshotFailed(msg string) error {
	return &apiError{code: -1, msg: "Failed to create data snapshot: " + msg, data: map[string]any{"closeTimeout": 5000}}
}

func (k *Kernel) repoRoutes() map[string]route {
	return map[string]route{
		endpoint.InitRepoKey:              {json: k.initRepoKey, emptyOK: true, anyBody: true},
		endpoint.CreateSnapshot:           {json: k.createSnapshot},
		endpoint.TagSnapshot:              {json: k.tagSnapshot},
		endpoint.GetRepoSnapshots:         {json: k.getRepoSnapshots},
		endpoint.GetRepoTagSnapshots:      {json: k.getRepoTagSnapshots, emptyOK: true, anyBody: true},
		endpoint.RemoveRepoTagSnapshot:    {json: k.removeRepoTagSnapshot},
		endpoint.DiffRepoSnapshots:        {json: k.diffRepoSnapshots},
		endpoint.OpenRepoSnapshotFile:     {json: k.openRepoSnapshotFile},
		endpoint.RollbackRepoSnapshotFile: {json: k.rollbackRepoSnapshotFile},
	}
}

// initRepoKey replaces the repository with an empty one under a new key,
// then makes its first snapshot, "[Init] Init local data repo" (SiYuan
// makes it two seconds after answering; here before).
func (k *Kernel) initRepoKey(ctx context.Context, a args) (any, error) {
	k.repo.mu.Lock()
	defer k.repo.mu.Unlock()
	key, err := k.initRepoKeyLocked()
	if err != nil {
		k.log.Error("init repo key", "err", err)
		return nil, &apiError{code: -1, msg: "Failed to init data repo key: " + err.Error(), data: map[string]any{"closeTimeout": 5000}}
	}
	if _, err := k.snapshotLocked("[Init] Init local data repo"); err != nil {
		k.log.Error("first snapshot", "err", err)
	}
	return map[string]any{"key": key}, nil
}

func (k *Kernel) createSnapshot(ctx context.Context, a args) (any, error) {
	memo, err := a.field("memo", false)
	if err != nil {
		return nil, err
	}
	if err := k.needRepoKey(); err != nil {
		return nil, repoSnapshotFailed(err.Error())
	}
	if memo = strings.TrimSpace(stripInvisible(memo)); memo == "" {
		return nil, repoSnapshotFailed(inputEmpty)
	}
	k.repo.mu.Lock()
	defer k.repo.mu.Unlock()
	if _, err := k.snapshotLocked(memo); err != nil {
		k.log.Error("create snapshot", "err", err)
		return nil, repoSnapshotFailed(err.Error())
	}
	return nil, nil
}

func (k *Kernel) tagSnapshot(ctx context.Context, a args) (any, error) {
	id, err := a.field("id", true)
	if err != nil {
		return nil, err
	}
	name, err := a.field("name", false)
	if err != nil {
		return nil, err
	}
	if err := k.needRepoKey(); err != nil {
		return nil, repoSnapshotFailed(err.Error())
	}
	name, refusal := cleanTagName(name)
	if refusal != "" {
		return nil, repoSnapshotFailed(refusal)
	}
	k.repo.mu.Lock()
	defer k.repo.mu.Unlock()
	ix, err := k.readIndex(id)
	if err != nil {
		return nil, repoSnapshotFailed(err.Error())
	}
	p, _ := k.tagPath(name) // a clean name is one path element
	if err := writeFileAtomic(p, []byte(ix.ID), 0o644); err != nil {
		k.log.Error("tag snapshot", "err", err)
		return nil, repoSnapshotFailed(err.Error())
	}
	return nil, nil
}

// getRepoSnapshots is one page of 32 snapshots, newest first. A page
// below 1 is SiYuan's panic: code 0, data null.
func (k *Kernel) getRepoSnapshots(ctx context.Context, a args) (any, error) {
	f, err := a.number("page")
	if err != nil {
		return nil, err
	}
	if err := k.needRepoKey(); err != nil {
		return nil, err
	}
	page := int(f)
	if page < 1 {
		return nil, nil
	}
	k.repo.mu.RLock()
	defer k.repo.mu.RUnlock()
	all, err := k.allIndexes()
	if err != nil {
		return nil, err
	}
	out := wire.RepoSnapshotsPage{Snapshots: []wire.RepoSnapshot{}, TotalCount: len(all)}
	out.PageCount = (len(all) + repoIndexPageSize - 1) / repoIndexPageSize
	for i := (page - 1) * repoIndexPageSize; i < len(all) && i < page*repoIndexPageSize; i++ {
		out.Snapshots = append(out.Snapshots, snapshotOf(all[i]))
	}
	return out, nil
}

func (k *Kernel) getRepoTagSnapshots(ctx context.Context, a args) (any, error) {
	if err := k.needRepoKey(); err != nil {
		return nil, err
	}
	k.repo.mu.RLock()
	defer k.repo.mu.RUnlock()
	snaps, err := k.tagSnapshots()
	if err != nil {
		return nil, err
	}
	return wire.RepoTagSnapshots{Snapshots: snaps}, nil
}

// removeRepoTagSnapshot takes a tag away; a tag that does not exist (or
// a name that cannot be one) is no error.
func (k *Kernel) removeRepoTagSnapshot(ctx context.Context, a args) (any, error) {
	tag, err := a.field("tag", true)
	if err != nil {
		return nil, err
	}
	if err := k.needRepoKey(); err != nil {
		return nil, err
	}
	p, ok := k.tagPath(tag)
	if !ok {
		return nil, nil
	}
	k.repo.mu.Lock()
	defer k.repo.mu.Unlock()
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return nil, nil
}

func (k *Kernel) diffRepoSnapshots(ctx context.Context, a args) (any, error) {
	left, err := a.field("left", true)
	if err != nil {
		return nil, err
	}
	right, err := a.field("right", true)
	if err != nil {
		return nil, err
	}
	if err := k.needRepoKey(); err != nil {
		return nil, err
	}
	k.repo.mu.RLock()
	defer k.repo.mu.RUnlock()
	lix, err := k.readIndex(left)
	if err != nil {
		return nil, err
	}
	rix, err := k.readIndex(right)
	if err != nil {
		return nil, err
	}
	lfiles, err := k.readIndexFiles(lix.ID)
	if err != nil {
		return nil, err
	}
	rfiles, err := k.readIndexFiles(rix.ID)
	if err != nil {
		return nil, err
	}
	r := make(map[string]repoFile, len(rfiles))
	for _, f := range rfiles {
		r[f.Path] = f
	}
	l := make(map[string]bool, len(lfiles))
	out := wire.RepoDiff{
		AddsLeft: []wire.RepoDiffFile{}, RemovesRight: []wire.RepoDiffFile{}, UpdatesLeft: []wire.RepoDiffFile{}, UpdatesRight: []wire.RepoDiffFile{},
		Left: wire.RepoDiffIndex{ID: lix.ID, Created: lix.Created}, Right: wire.RepoDiffIndex{ID: rix.ID, Created: rix.Created},
	}
	add := func(list *[]wire.RepoDiffFile, f repoFile) {
		if d, ok := k.diffFile(f); ok {
			*list = append(*list, d)
		}
	}
	// The kernel names its lists from dejavu's the other way round: a
	// file only the right snapshot has is "addsLeft".
	for _, lf := range lfiles {
		l[lf.Path] = true
		rf, ok := r[lf.Path]
		if !ok {
			add(&out.RemovesRight, lf)
			continue
		}
		if lf.Updated/1000 != rf.Updated/1000 {
			add(&out.UpdatesLeft, lf)
			add(&out.UpdatesRight, rf)
		}
	}
	for _, rf := range rfiles {
		if !l[rf.Path] {
			add(&out.AddsLeft, rf)
		}
	}
	return out, nil
}

// diffFile is a file of a diff list, titled as SiYuan titles it: a
// document by its title (left out when it has none or cannot be read),
// another file by its base name.
func (k *Kernel) diffFile(f repoFile) (wire.RepoDiffFile, bool) {
	title := path.Base(f.Path)
	if strings.HasSuffix(f.Path, ".sy") {
		data, err := k.readContent(&f)
		if err != nil {
			k.log.Warn("diff: read snapshot file", "file", f.ID, "err", err)
			return wire.RepoDiffFile{}, false
		}
		tree, err := mdexport.ParseSY(data)
		if err != nil {
			return wire.RepoDiffFile{}, false
		}
		title = tree.Root.IALAttr("title")
	}
	if title == "" {
		return wire.RepoDiffFile{}, false
	}
	return wire.RepoDiffFile{FileID: f.ID, Title: title, Path: f.Path, HSize: humanSize(f.Size), Updated: f.Updated}, true
}

// displayableAssetExts are the extensions SiYuan previews (images,
// audio, video).
var displayableAssetExts = []string{".apng", ".ico", ".cur", ".jpg", ".jpe", ".jpeg", ".jfif", ".pjp", ".pjpeg", ".png", ".gif", ".webp", ".bmp", ".svg", ".avif",
	".mp3", ".wav", ".ogg", ".m4a", ".flac", ".mov", ".weba", ".mkv", ".mp4", ".webm"}

func (k *Kernel) openRepoSnapshotFile(ctx context.Context, a args) (any, error) {
	id, err := a.field("id", true)
	if err != nil {
		return nil, err
	}
	if err := k.needRepoKey(); err != nil {
		return nil, err
	}
	k.repo.mu.RLock()
	defer k.repo.mu.RUnlock()
	f, err := k.readEntry(id)
	if err != nil {
		return nil, err
	}
	data, err := k.readContent(f)
	if err != nil {
		return nil, err
	}
	out := wire.RepoSnapshotFile{Updated: f.Updated}
	if strings.HasSuffix(f.Path, ".sy") {
		tree, err := mdexport.ParseSY(data)
		if err != nil {
			return nil, err
		}
		out.Title = tree.Root.IALAttr("title")
		out.DisplayInText = len(data) >= repoLargeDoc
		out.Content = snapshotDocContent(tree, out.DisplayInText)
		return out, nil
	}
	out.DisplayInText = true
	out.Title = f.Path
	if mt := mime.TypeByExtension(filepath.Ext(f.Path)); strings.HasPrefix(mt, "text/") || strings.Contains(mt, "json") {
		out.Content = string(data)
		return out, nil
	}
	i := strings.Index(f.Path, "assets/")
	if i < 0 {
		out.Content = f.Path
		return out, nil
	}
	// SiYuan writes a previewable asset to temp/repo/diff for its UI and
	// answers that path; this kernel answers the path and writes nothing.
	box := ""
	if parts := strings.SplitN(strings.TrimPrefix(f.Path, "/"), "/", 2); validID(parts[0]) {
		box = parts[0]
	}
	p := path.Join(box, f.Path[i:])
	if slices.Contains(displayableAssetExts, strings.ToLower(path.Ext(p))) {
		out.Content = path.Join("repo", "diff", p)
	}
	return out, nil
}

// snapshotDocContent renders a snapshot's document as SiYuan shows it:
// its blocks as read-only block DOM without folding (the document's own
// attributes left out), or the whole document's Markdown when large.
func snapshotDocContent(tree *parse.Tree, large bool) string {
	l := mdexport.NewLute()
	l.RenderOptions.ProtyleContenteditable = false
	if large {
		return string(render.NewFormatRenderer(tree, l.RenderOptions, l.ParseOptions).Render())
	}
	ast.Walk(tree.Root, func(n *ast.Node, entering bool) ast.WalkStatus {
		if entering {
			n.RemoveIALAttr("heading-fold")
			n.RemoveIALAttr("fold")
		}
		return ast.WalkContinue
	})
	doc := &parse.Tree{Root: &ast.Node{Type: ast.NodeDocument}, Marks: tree.Marks}
	var kids []*ast.Node
	for n := tree.Root.FirstChild; n != nil; n = n.Next {
		kids = append(kids, n)
	}
	for _, n := range kids {
		doc.Root.AppendChild(n)
	}
	return l.Tree2BlockDOM(doc, l.RenderOptions, l.ParseOptions)
}

// rollbackRepoSnapshotFile writes a file of a snapshot back, after a
// snapshot of the data as it is ("Backup before checkout"). A document
// goes back into its notebook at its current place (where it was when it
// is gone: under its parent document if that still exists, else at the
// notebook's root), replacing the current file, and is re-indexed: the
// block tree at once, SQL with the usual lag. Its notebook must be open;
// SiYuan would otherwise restore it into a notebook named "Rollback"
// with new block ids, which this kernel refuses. Another file is copied
// back to its path.
func (k *Kernel) rollbackRepoSnapshotFile(ctx context.Context, a args) (any, error) {
	id, err := a.field("id", true)
	if err != nil {
		return nil, err
	}
	if err := k.needRepoKey(); err != nil {
		return nil, err
	}
	k.repo.mu.Lock()
	defer k.repo.mu.Unlock()
	f, err := k.readEntry(id)
	if err != nil {
		return nil, err
	}
	data, err := k.readContent(f)
	if err != nil {
		return nil, err
	}
	if _, err := k.snapshotLocked("Backup before checkout"); err != nil {
		k.log.Error("rollback: backup snapshot", "err", err)
		return nil, errf("Failed to create data snapshot: %s", err)
	}
	if strings.HasSuffix(f.Path, ".sy") {
		return nil, k.rollbackDoc(f, data)
	}
	dst := filepath.Join(k.dataDir, filepath.FromSlash(strings.TrimPrefix(f.Path, "/")))
	if !isSubPath(k.dataDir, dst) {
		return nil, errf("invalid path [%s]", f.Path)
	}
	if err := writeFileAtomic(dst, data, 0o644); err != nil {
		return nil, err
	}
	return nil, nil
}

// rollbackDoc writes a snapshot's document back (see
// rollbackRepoSnapshotFile).
func (k *Kernel) rollbackDoc(f *repoFile, data []byte) error {
	parts := strings.SplitN(strings.TrimPrefix(f.Path, "/"), "/", 2)
	box := parts[0]
	if len(parts) != 2 || !validID(box) {
		return errf("invalid path [%s]", f.Path)
	}
	c, err := k.readBoxConf(box)
	if err != nil || c.Closed {
		return errf("notebook [%s] of the snapshot's document is not open: restoring it into another notebook is not supported", box)
	}
	rootID := strings.TrimSuffix(path.Base(f.Path), ".sy")
	if !validID(rootID) {
		return errf("invalid path [%s]", f.Path)
	}
	tree, err := mdexport.ParseSY(data)
	if err != nil {
		return err
	}
	base := path.Base(f.Path)
	parentID := strings.TrimSuffix(path.Base(path.Dir(f.Path)), ".sy")
	working, hasWorking := k.doc(rootID)
	if hasWorking {
		parentID = path.Base(path.Dir(working.Path))
	}
	dest := "/" + base
	if parent, ok := k.doc(parentID); ok && parent.Box == box && parentID != box {
		dest = strings.TrimSuffix(parent.Path, ".sy") + "/" + base
	}
	if hasWorking {
		if err := os.Remove(k.docFile(working.Box, working.Path)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		k.mu.Lock()
		k.unindexDocLocked(rootID)
		k.mu.Unlock()
		k.sql.queueRemove(rootID)
	}
	tree.ID, tree.Box, tree.Path = rootID, box, dest
	tree.Root.Box, tree.Root.Path = box, dest
	tree.HPath = k.hpathOf(box, dest, tree.Root.IALAttr("title"))
	return k.writeTree(tree)
}
