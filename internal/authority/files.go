package authority

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/localfs"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/transfer"
)

// The file tool sees transfer through the interfaces of package tools;
// these adapters give it the authority's staging store, and a front's
// stager, folder rule and downloader.

// sources are the authority's upload sources: what its store staged. The
// authority reads no file of its own disk for a call.
type sources struct{ store *transfer.Store }

func (s sources) Staged(handle string) (tools.Source, error) {
	snap, err := s.store.Resolve(handle)
	if err != nil {
		return tools.Source{}, err
	}
	return tools.Source{Handle: snap.Handle, Name: snap.Name, SHA256: snap.SHA256, Size: snap.Size,
		Open: func() (io.ReadCloser, error) { return snap.Open(), nil }}, nil
}

// stager is a front's: it opens the person's file under the front's folder
// rule and stages what it opened at the authority.
type stager struct {
	s     *transfer.Stager
	guard *localfs.Guard
}

func (s stager) Stage(ctx context.Context, path string) (string, error) {
	f, err := s.guard.Open(ctx, path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := s.s.Stage(ctx, f.File, f.Name)
	return st.UploadSource, err
}

// localDisk is a front's folder rule, as the tools ask it.
type localDisk struct{ guard *localfs.Guard }

func (l localDisk) Inspect(ctx context.Context, path string) (tools.LocalFile, error) {
	f, err := l.guard.Open(ctx, path)
	if err != nil {
		return tools.LocalFile{}, err
	}
	f.Close()
	return tools.LocalFile{Path: f.Path, Size: f.Size}, nil
}

func (l localDisk) Destination(ctx context.Context, path string) (string, error) {
	return l.guard.Destination(ctx, path)
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
