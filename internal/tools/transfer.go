package tools

import (
	"context"
	"io"

	"github.com/sisyphus-go/sisyphus/internal/failure"
)

// Files that cross the boundary between a person's machine and the
// authority: uploads are staged on the authority (a front stages the
// person's local file first, so a replay needs no local file), and exports
// are downloaded by the front that runs where the person is. The authority
// opens no path a call names. The tools see all of it through these
// interfaces; internal/transfer and internal/localfs implement them.

// Source is an upload source: bytes the authority itself hashed when they
// were staged.
type Source struct {
	// Handle names the staged source (uploadSource).
	Handle string
	Name   string
	SHA256 string // full hex digest
	Size   int64
	// Open reads the bytes, which never change.
	Open func() (io.ReadCloser, error)
}

// Sources are the authority's upload sources.
type Sources interface {
	// Staged returns a staged source by its handle; an unknown or expired
	// handle is the agent's failure (upload_source_unknown or
	// upload_source_expired).
	Staged(handle string) (Source, error)
}

// Stager stages a person's local file on the authority, from a front.
type Stager interface {
	// Stage opens the file at path under the front's folder rule (see
	// LocalFiles) and returns its uploadSource handle (reusing a snapshot
	// the authority already verified). A file above the staging cap is
	// refused (file_too_large).
	Stage(ctx context.Context, path string) (handle string, err error)
}

// LocalFiles is a front's view of its person's disk for an agent's call:
// only files and destinations under the folders the person allowed, never
// in the workspace, the state dir or a hidden folder (package localfs).
// Every refusal is a *failure.Error.
type LocalFiles interface {
	// Inspect decides on a file a call names, to read: the file itself,
	// every link resolved, and its size.
	Inspect(ctx context.Context, path string) (LocalFile, error)
	// Destination decides on a new file or folder a call names, to create:
	// it must not exist; the answer is the path to create, links resolved.
	Destination(ctx context.Context, path string) (string, error)
}

// LocalFile is a file of the person's disk a call may read.
type LocalFile struct {
	Path string // absolute, every link resolved
	Size int64
}

// noLocal is the LocalFiles of a process that reads and writes no file for
// agents.
type noLocal struct{}

func (noLocal) refuse(path string) error {
	return failure.New(failure.PathNotAllowed, "the local path %q cannot be used: this process reads and writes no local file for agents; nothing was read or written", path).
		Attempted(false)
}

func (n noLocal) Inspect(_ context.Context, path string) (LocalFile, error) {
	return LocalFile{}, n.refuse(path)
}

func (n noLocal) Destination(_ context.Context, path string) (string, error) {
	return "", n.refuse(path)
}

// Download is one file of a delivery=download manifest, to be saved where
// the person is.
type Download struct {
	// KernelPath is the workspace path to fetch with getFile.
	KernelPath string `json:"kernelPath"`
	// Dest is the destination, relative to the call's output directory
	// (or the output file itself when the manifest has one entry and the
	// call named a file).
	Dest string `json:"dest"`
	Size int64  `json:"size,omitempty"`
	// Inline, when set, is the file's content itself (a document's
	// Markdown): written, not fetched.
	Inline string `json:"-"`
}

// Saved is a downloaded file.
type Saved struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// Downloader saves manifests on the person's machine, at a front. The
// paths it is given were decided on by LocalFiles.Destination.
type Downloader interface {
	// File downloads one file to path (which must not exist).
	File(ctx context.Context, d Download, path string) (Saved, error)
	// Tree downloads several files under dir (which must not exist; it is
	// created, and removed again if the extraction fails).
	Tree(ctx context.Context, ds []Download, dir string) ([]Saved, error)
}
