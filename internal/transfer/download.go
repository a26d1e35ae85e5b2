package transfer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/failure"
)

// Download limits: one export may be large, but never unbounded on the
// person's disk.
const (
	// DefaultMaxDownloadBytes bounds one ZIP, or one whole document
	// extraction (a running total over its files).
	DefaultMaxDownloadBytes = 512 << 20
	// DefaultFileTimeout is the deadline of each file.
	DefaultFileTimeout = 120 * time.Second
)

// FileGetter streams a kernel workspace file; *siyuan.Client implements it
// (GetFile, through the front's own authenticated kernel client).
type FileGetter interface {
	GetFile(ctx context.Context, path string) (io.ReadCloser, string, error)
}

// File is one entry of a delivery=download manifest: where to fetch it
// (exactly one of KernelPath, AuthorityPath and Data) and where to save it.
type File struct {
	// KernelPath is a workspace path for getFile ("/temp/export/x.zip").
	KernelPath string `json:"kernelPath,omitempty"`
	// AuthorityPath is a path on the authority ("/transfer/..."), fetched
	// with the front's authority credentials.
	AuthorityPath string `json:"authorityPath,omitempty"`
	// Dest is the destination relative to the extraction directory
	// ("doc.md", "assets/a.png"); Download ignores it.
	Dest string `json:"dest,omitempty"`
	// Size is the expected size in bytes (0: unknown). A file of another
	// size fails.
	Size int64 `json:"size,omitempty"`
	// Data, when not nil, is the content itself (a document's Markdown,
	// which the authority's answer carries): saved like a fetched file.
	Data []byte `json:"-"`
}

func (f File) source() string {
	if f.Data != nil {
		return f.Dest
	}
	if f.KernelPath != "" {
		return f.KernelPath
	}
	return f.AuthorityPath
}

// Result is one saved file.
type Result struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// Progress is reported while a download runs.
type Progress struct {
	// File is the destination being written.
	File string
	// Done is the bytes written so far by the whole call (all files of an
	// extraction); Total is the sum of the expected sizes, -1 when one is
	// unknown.
	Done, Total int64
}

// Downloader saves kernel files on the person's machine, at a front: each
// file streamed to a temporary file beside its destination with SHA-256
// computed on the way, moved into place only when complete, never over an
// existing file or directory. Whatever a failed, cancelled or oversized
// call wrote (temporary files, the directories it created) is removed; the
// transfer is never restarted.
type Downloader struct {
	// Kernel fetches KernelPath entries.
	Kernel FileGetter
	// Authority fetches AuthorityPath entries (nil: refused).
	Authority Authority
	// MaxBytes bounds a Download, or an Extract in total
	// (DefaultMaxDownloadBytes).
	MaxBytes int64
	// FileTimeout is each file's deadline (DefaultFileTimeout).
	FileTimeout time.Duration
	// Progress, when set, is called as bytes arrive (about every MiB and at
	// the end of each file), from the calling goroutine.
	Progress func(Progress)
}

func (d *Downloader) maxBytes() int64 {
	if d.MaxBytes > 0 {
		return d.MaxBytes
	}
	return DefaultMaxDownloadBytes
}

func (d *Downloader) fileTimeout() time.Duration {
	if d.FileTimeout > 0 {
		return d.FileTimeout
	}
	return DefaultFileTimeout
}

func (d *Downloader) tooLarge(what string) *failure.Error {
	return failure.New(failure.DownloadTooLarge, "%s is larger than one download may be (%d bytes); the partial output was removed", what, d.maxBytes()).
		With("maxBytes", d.maxBytes())
}

// Download saves one file (a ZIP export) at dst, which must not exist; the
// missing parent directories are created, and removed again if it fails.
func (d *Downloader) Download(ctx context.Context, f File, dst string) (Result, error) {
	if err := d.checkSource(f); err != nil {
		return Result{}, err
	}
	if f.Size > d.maxBytes() {
		return Result{}, d.tooLarge(f.source())
	}
	if err := refuseExisting(dst); err != nil {
		return Result{}, err
	}
	created, err := mkdirParents(filepath.Dir(dst))
	if err != nil {
		return Result{}, err
	}
	run := &run{d: d, left: d.maxBytes(), total: f.Size}
	if f.Size == 0 {
		run.total = -1
	}
	res, err := run.fetch(ctx, f, dst)
	if err != nil {
		removeDirs(created)
		return Result{}, err
	}
	return res, nil
}

// Extract saves a document extraction (a Markdown file and its assets)
// under dir, which must not exist: it is created with its missing parents,
// each file is saved at dir/Dest, and the 512 MiB limit counts the whole
// extraction. On any failure dir and the parents it created are removed,
// and nothing else: siblings of dir stay as they were. The results follow
// the order of files.
func (d *Downloader) Extract(ctx context.Context, files []File, dir string) ([]Result, error) {
	if len(files) == 0 {
		return nil, failure.New(failure.InvalidArguments, "the manifest lists no file to save")
	}
	total, err := d.checkManifest(files)
	if err != nil {
		return nil, err
	}
	if err := refuseExisting(dir); err != nil {
		return nil, err
	}
	created, err := mkdirParents(filepath.Dir(dir))
	if err != nil {
		return nil, err
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		removeDirs(created)
		if errors.Is(err, fs.ErrExist) {
			return nil, exists(dir)
		}
		return nil, failure.Wrap(failure.TransferFailed, err, "the directory %s cannot be created; nothing was written", dir)
	}
	run := &run{d: d, left: d.maxBytes(), total: total}
	out := make([]Result, 0, len(files))
	for _, f := range files {
		dst := filepath.Join(dir, filepath.FromSlash(f.Dest))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			err = failure.Wrap(failure.TransferFailed, err, "the directory of %s cannot be created", f.Dest)
			return nil, d.abandon(dir, created, err)
		}
		res, err := run.fetch(ctx, f, dst)
		if err != nil {
			return nil, d.abandon(dir, created, err)
		}
		out = append(out, res)
	}
	return out, nil
}

// abandon removes a failed extraction's own output: dir, which it created
// whole, and the parents it created.
func (d *Downloader) abandon(dir string, created []string, err error) error {
	if rerr := os.RemoveAll(dir); rerr != nil {
		var fe *failure.Error
		if errors.As(err, &fe) {
			fe.Message += fmt.Sprintf("; %s could not be removed (%v): remove it yourself", dir, rerr)
		}
	}
	removeDirs(created)
	return err
}

func (d *Downloader) checkSource(f File) error {
	switch {
	case f.Data != nil && (f.KernelPath != "" || f.AuthorityPath != ""):
		return failure.New(failure.InvalidArguments, "a manifest entry with its content names no other source")
	case f.Data != nil:
	case (f.KernelPath == "") == (f.AuthorityPath == ""):
		return failure.New(failure.InvalidArguments, "a manifest entry needs exactly one of kernelPath and authorityPath")
	case f.KernelPath != "" && d.Kernel == nil:
		return failure.New(failure.Internal, "this process has no kernel client to download %s", f.KernelPath)
	case f.AuthorityPath != "" && (d.Authority == nil || !strings.HasPrefix(f.AuthorityPath, "/")):
		return failure.New(failure.InvalidArguments, "authorityPath %q must be a path on the authority this front delegates to", f.AuthorityPath)
	case f.Size < 0:
		return failure.New(failure.InvalidArguments, "a manifest entry's size must not be negative")
	}
	return nil
}

// checkManifest refuses a manifest whose destinations leave the directory
// or collide, and returns the sum of the expected sizes (-1 if one is
// unknown).
func (d *Downloader) checkManifest(files []File) (int64, error) {
	var total int64
	known := true
	dests := make([]string, 0, len(files))
	for _, f := range files {
		if err := d.checkSource(f); err != nil {
			return 0, err
		}
		rel := filepath.FromSlash(f.Dest)
		if f.Dest == "" || !filepath.IsLocal(rel) || filepath.Clean(rel) != rel || strings.Contains(f.Dest, `\`) {
			return 0, failure.New(failure.InvalidArguments, "manifest destination %q must be a plain relative path inside the directory", f.Dest)
		}
		dests = append(dests, filepath.ToSlash(rel))
		total += f.Size
		known = known && f.Size > 0
	}
	slices.Sort(dests)
	for i := 1; i < len(dests); i++ {
		if dests[i] == dests[i-1] || strings.HasPrefix(dests[i], dests[i-1]+"/") {
			return 0, failure.New(failure.InvalidArguments, "manifest destinations %q and %q collide", dests[i-1], dests[i])
		}
	}
	if total > d.maxBytes() {
		return 0, d.tooLarge("the extraction")
	}
	if !known {
		total = -1
	}
	return total, nil
}

func exists(p string) *failure.Error {
	return failure.New(failure.DestinationExists, "%s already exists; nothing was written", p).With("path", p)
}

// refuseExisting refuses a destination that exists in any form (a file, a
// directory, a link, even a dangling one).
func refuseExisting(p string) error {
	_, err := os.Lstat(p)
	switch {
	case err == nil:
		return exists(p)
	case errors.Is(err, fs.ErrNotExist):
		return nil
	}
	return failure.Wrap(failure.InvalidArguments, err, "the destination %s cannot be used", p)
}

// mkdirParents creates dir and its missing parents and returns the ones it
// created, outermost first; a directory someone else creates meanwhile is
// not counted as its own.
func mkdirParents(dir string) ([]string, error) {
	var missing []string
	for p := dir; ; p = filepath.Dir(p) {
		st, err := os.Stat(p)
		if err == nil {
			if !st.IsDir() {
				return nil, failure.New(failure.InvalidArguments, "%s is not a directory; nothing was written", p)
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, failure.Wrap(failure.InvalidArguments, err, "%s cannot be used; nothing was written", p)
		}
		missing = append(missing, p)
		if filepath.Dir(p) == p {
			break
		}
	}
	var created []string
	for _, p := range slices.Backward(missing) {
		err := os.Mkdir(p, 0o755)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			removeDirs(created)
			return nil, failure.Wrap(failure.TransferFailed, err, "the directory %s cannot be created; nothing was written", p)
		}
		created = append(created, p)
	}
	return created, nil
}

// removeDirs removes directories this call created, innermost first, only
// while they are empty.
func removeDirs(created []string) {
	for _, p := range slices.Backward(created) {
		os.Remove(p)
	}
}

// run is one Download or Extract: the bytes it may still write and what it
// reports as progress.
type run struct {
	d           *Downloader
	left        int64
	done, total int64
}

// fetch streams one file to dst under its own deadline.
func (r *run) fetch(ctx context.Context, f File, dst string) (Result, error) {
	timeout := r.d.fileTimeout()
	fctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := r.fetchTo(fctx, f, dst)
	if err == nil {
		return res, nil
	}
	var fe *failure.Error
	switch {
	case errors.As(err, &fe):
		return Result{}, err
	case ctx.Err() != nil:
		return Result{}, failure.Wrap(failure.TransferFailed, err, "the download of %s was cancelled; the partial output was removed", f.source())
	case errors.Is(fctx.Err(), context.DeadlineExceeded):
		return Result{}, failure.Wrap(failure.TransferFailed, err, "the download of %s did not finish within %s; the partial output was removed", f.source(), timeout)
	}
	return Result{}, failure.Wrap(failure.TransferFailed, err, "the download of %s failed; the partial output was removed", f.source())
}

func (r *run) open(ctx context.Context, f File) (io.ReadCloser, error) {
	if f.Data != nil {
		return io.NopCloser(bytes.NewReader(f.Data)), nil
	}
	if f.KernelPath != "" {
		body, _, err := r.d.Kernel.GetFile(ctx, f.KernelPath)
		return body, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.AuthorityPath, nil)
	if err != nil {
		return nil, err
	}
	resp, err := r.d.Authority.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		if fe, ok := failure.Parse(data); ok {
			return nil, fe
		}
		return nil, fmt.Errorf("the authority answered HTTP %d", resp.StatusCode)
	}
	return resp.Body, nil
}

// progressEvery is how often Progress is called within a file.
const progressEvery = 1 << 20

func (r *run) fetchTo(ctx context.Context, f File, dst string) (res Result, err error) {
	body, err := r.open(ctx, f)
	if err != nil {
		return Result{}, err
	}
	defer body.Close()
	tmp, err := newPartial(dst)
	if err != nil {
		return Result{}, err
	}
	defer func() {
		if err != nil {
			tmp.discard()
		}
	}()
	h := sha256.New()
	buf := make([]byte, 256<<10)
	var n, reported int64
	for {
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		k, rerr := body.Read(buf)
		if int64(k) > r.left-n {
			return Result{}, r.d.tooLarge(f.source())
		}
		if k > 0 {
			h.Write(buf[:k])
			if _, err := tmp.f.Write(buf[:k]); err != nil {
				return Result{}, failure.Wrap(failure.TransferFailed, err, "writing %s failed; the partial output was removed", dst)
			}
			n += int64(k)
		}
		if r.d.Progress != nil && (n-reported >= progressEvery || rerr != nil) {
			reported = n
			r.d.Progress(Progress{File: dst, Done: r.done + n, Total: r.total})
		}
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			return Result{}, rerr
		}
	}
	if f.Size > 0 && n != f.Size {
		return Result{}, failure.New(failure.TransferFailed, "%s is %d bytes, the manifest said %d; the partial output was removed", f.source(), n, f.Size)
	}
	if err := tmp.f.Sync(); err != nil {
		return Result{}, failure.Wrap(failure.TransferFailed, err, "writing %s failed; the partial output was removed", dst)
	}
	if err := tmp.place(dst); err != nil {
		return Result{}, err
	}
	r.left -= n
	r.done += n
	return Result{Path: dst, SHA256: hex.EncodeToString(h.Sum(nil)), Size: n}, nil
}

// partial is a download being written: where the system allows, an
// unnamed file in the destination's directory (O_TMPFILE), which vanishes
// with the process however it ends, even killed, and gets its name only
// when complete, in the folder it was opened in (held open, and refused if
// reached through a symbolic link: the caller resolved every link of dst);
// elsewhere a hidden named file beside the destination, removed on failure
// or cancellation.
type partial struct {
	f    *os.File
	u    *unnamed // the unnamed file, or nil
	name string   // the named file's path ("" for an unnamed file)
}

func newPartial(dst string) (*partial, error) {
	u, ok, err := openUnnamed(filepath.Dir(dst))
	switch {
	case err != nil:
		return nil, failure.Wrap(failure.TransferFailed, err, "the folder of %s is no longer where it was decided on (a symbolic link on its way); nothing was written", dst)
	case ok:
		return &partial{f: u.f, u: u}, nil
	}
	f, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".*.part")
	if err != nil {
		return nil, failure.Wrap(failure.TransferFailed, err, "cannot write beside %s; nothing was written", dst)
	}
	return &partial{f: f, name: f.Name()}, nil
}

func (p *partial) discard() {
	if p.u != nil {
		p.u.close()
		return
	}
	p.f.Close()
	os.Remove(p.name)
}

// place gives the complete file its name dst without replacing anything
// that appeared there meanwhile: a hard link fails on an existing name,
// where a rename would replace it. A file system without hard links falls
// back to checking, then renaming. It closes the file.
func (p *partial) place(dst string) error {
	if p.u != nil {
		err := p.u.link(filepath.Base(dst))
		p.u.close()
		switch {
		case err == nil:
			return nil
		case errors.Is(err, fs.ErrExist):
			return exists(dst)
		}
		return failure.Wrap(failure.TransferFailed, err, "%s cannot be put in place; nothing was written", dst)
	}
	// CreateTemp makes the file private; an export is the person's
	// ordinary file.
	if err := p.f.Chmod(0o644); err != nil {
		return failure.Wrap(failure.TransferFailed, err, "writing %s failed; the partial output was removed", dst)
	}
	if err := p.f.Close(); err != nil {
		return failure.Wrap(failure.TransferFailed, err, "writing %s failed; the partial output was removed", dst)
	}
	err := os.Link(p.name, dst)
	switch {
	case err == nil:
		os.Remove(p.name)
		return nil
	case errors.Is(err, fs.ErrExist):
		return exists(dst)
	}
	if err := refuseExisting(dst); err != nil {
		return err
	}
	if err := os.Rename(p.name, dst); err != nil {
		return failure.Wrap(failure.TransferFailed, err, "%s cannot be put in place; the partial output was removed", dst)
	}
	return nil
}
