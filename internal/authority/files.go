package authority

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/transfer"
)

// The file tool sees transfer through the interfaces of package tools;
// these adapters give it the authority's staging store and disk, and a
// front's stager and downloader.

// sources are the authority's upload sources: what its store staged, and
// files on its own disk.
type sources struct{ store *transfer.Store }

func (s sources) Staged(handle string) (tools.Source, error) {
	snap, err := s.store.Resolve(handle)
	if err != nil {
		return tools.Source{}, err
	}
	return tools.Source{Handle: snap.Handle, Name: snap.Name, SHA256: snap.SHA256, Size: snap.Size,
		Open: func() (io.ReadCloser, error) { return snap.Open(), nil }}, nil
}

// Local hashes a file the authority reads itself: what a front could not
// stage (above the staging cap), or what an HTTP client names on the
// authority's machine. The path must be absolute: the authority's working
// directory means nothing to its callers. The bytes are read again at
// upload; a change in between shows as a state change at commit (the
// digest is read fresh) or, after it, as a readback mismatch.
func (s sources) Local(ctx context.Context, path string) (tools.Source, error) {
	if !filepath.IsAbs(path) {
		return tools.Source{}, failure.New(failure.InvalidArguments,
			"localFilePath %q is relative: the authority reads only absolute paths on its own machine (stdio and sisyphus call stage your local files for you)", path).Attempted(false)
	}
	d, err := transfer.HashFile(ctx, path)
	if err != nil {
		// Local runs for files no front staged: an HTTP client's path on
		// this machine, or a file above the staging cap that a front
		// could only name. Both need the authority to read it here.
		var fe *failure.Error
		if errors.As(err, &fe) {
			fe = fe.Clone()
			fe.Message += fmt.Sprintf(" on the authority's machine; the authority uploads only files it staged (at most %d bytes, staged by stdio or sisyphus call) or files it can read itself; nothing was uploaded", transfer.DefaultMaxFileBytes)
			if fe.Action == "" {
				fe.Action = "make the file smaller than the staging cap, or run the authority (sisyphus serve) on the machine that has the file"
			}
			return tools.Source{}, fe.Attempted(false)
		}
		return tools.Source{}, err
	}
	return tools.Source{Name: filepath.Base(path), SHA256: d.SHA256, Size: d.Size,
		Open: func() (io.ReadCloser, error) { return os.Open(path) }}, nil
}

// stager is a front's: it stages the person's file at the authority.
type stager struct{ s *transfer.Stager }

func (s stager) Stage(ctx context.Context, path string) (string, error) {
	h, err := s.s.Stage(ctx, path)
	if transfer.IsTooLargeToStage(err) {
		return "", fmt.Errorf("%w: %w", tools.ErrTooLargeToStage, err)
	}
	return h, err
}

// downloader is a front's: it saves manifests on the person's disk.
type downloader struct {
	d *transfer.Downloader
	// progress, when set, shows long transfers (a terminal's stderr).
	progress io.Writer
}

func toFile(d tools.Download) transfer.File {
	f := transfer.File{KernelPath: d.KernelPath, Dest: d.Dest, Size: d.Size}
	if d.KernelPath == "" {
		f.Data = []byte(d.Inline)
	}
	return f
}

func (x downloader) File(ctx context.Context, d tools.Download, path string) (tools.Saved, error) {
	dl, done := x.run()
	defer done()
	r, err := dl.Download(ctx, toFile(d), path)
	return tools.Saved(r), err
}

func (x downloader) Tree(ctx context.Context, ds []tools.Download, dir string) ([]tools.Saved, error) {
	dl, done := x.run()
	defer done()
	files := make([]transfer.File, len(ds))
	for i, d := range ds {
		files[i] = toFile(d)
	}
	rs, err := dl.Extract(ctx, files, dir)
	if err != nil {
		return nil, err
	}
	out := make([]tools.Saved, len(rs))
	for i, r := range rs {
		out[i] = tools.Saved(r)
	}
	return out, nil
}

// longTransfer is how long a download runs before its progress shows.
const longTransfer = time.Second

// run returns the downloader for one call, whose progress, if any, shows
// once the call has run longTransfer, and a function that ends its status
// line.
func (x downloader) run() (*transfer.Downloader, func()) {
	if x.progress == nil {
		return x.d, func() {}
	}
	start, print := time.Now(), transfer.ProgressPrinter(x.progress)
	shown := false
	d := *x.d
	// The downloader calls Progress from the calling goroutine only.
	d.Progress = func(p transfer.Progress) {
		if time.Since(start) >= longTransfer {
			shown = true
			print(p)
		}
	}
	return &d, func() {
		if shown {
			fmt.Fprintln(x.progress)
		}
	}
}
