package tools

import (
	"context"
	"errors"
	"io"
)

// Files that cross the boundary between a person's machine and the
// authority: uploads are staged on the authority (a front stages the
// person's local file first, so a replay needs no local file), and exports
// are downloaded by the front that runs where the person is. The tools see
// both through these interfaces; internal/transfer implements them.

// Source is an upload source: bytes the authority itself hashed.
type Source struct {
	// Handle names a staged source (uploadSource); "" for a file the
	// authority reads from its own disk.
	Handle string
	Name   string
	SHA256 string // full hex digest
	Size   int64
	// Open reads the bytes; a staged source's bytes never change, a local
	// file's are read (and hashed) again.
	Open func() (io.ReadCloser, error)
}

// Sources are the authority's upload sources.
type Sources interface {
	// Staged returns a staged source by its handle; an unknown or expired
	// handle is the agent's failure (upload_source_unknown or
	// upload_source_expired).
	Staged(handle string) (Source, error)
	// Local hashes a file on the authority's own disk: the way to upload
	// what a front could not stage, when the authority can read the path.
	Local(ctx context.Context, path string) (Source, error)
}

// Stager stages a person's local file on the authority, from a front.
type Stager interface {
	// Stage returns the uploadSource handle of the file at path (reusing a
	// snapshot the authority already verified). An error satisfying
	// IsTooLargeToStage means the file exceeds the staging cap.
	Stage(ctx context.Context, path string) (handle string, err error)
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

// Downloader saves manifests on the person's machine, at a front.
type Downloader interface {
	// File downloads one file to path (which must not exist).
	File(ctx context.Context, d Download, path string) (Saved, error)
	// Tree downloads several files under dir (which must not exist; it is
	// created, and removed again if the extraction fails).
	Tree(ctx context.Context, ds []Download, dir string) ([]Saved, error)
}

// ErrTooLargeToStage is wrapped by a Stager's error for a file above the
// staging cap.
var ErrTooLargeToStage = errors.New("the file is larger than the authority stages")

// IsTooLargeToStage reports whether err is ErrTooLargeToStage.
func IsTooLargeToStage(err error) bool { return errors.Is(err, ErrTooLargeToStage) }
