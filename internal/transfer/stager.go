package transfer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/failure"
)

// Authority is a front's link to its write authority (authority.Delegator
// implements it).
type Authority interface {
	// Do sends req, whose URL is only a path on the authority
	// ("/transfer/upload"), with the front's credentials and pins: the
	// authority's base URL, its bearer token, the instance and workspace
	// the front pinned. An authority that cannot be reached, refuses the
	// token, or is another instance or workspace is a *failure.Error; any
	// other answer comes back, whatever its status, for the caller to read
	// and close.
	Do(req *http.Request) (*http.Response, error)
}

// DefaultStageTimeout bounds one staging (lookup and upload): long enough
// for the largest file on a slow link, short enough that a stalled one
// frees its staging slot.
const DefaultStageTimeout = 120 * time.Second

// ErrTooLargeToStage is the cause of the file_too_large failure of a file
// over the staging cap; see IsTooLargeToStage.
var ErrTooLargeToStage = errors.New("transfer: the file is larger than staging takes")

// IsTooLargeToStage reports whether err says the file exceeds the staging
// cap. The caller must then refuse clearly: nothing uploads around the cap.
func IsTooLargeToStage(err error) bool { return errors.Is(err, ErrTooLargeToStage) }

// Stager stages the person's local files at the authority, from a front.
// The zero values of its limits take the defaults; Authority is required.
type Stager struct {
	Authority Authority
	// MaxFileBytes is the authority's per-file cap (DefaultMaxFileBytes): a
	// larger file is refused before anything is sent.
	MaxFileBytes int64
	// Timeout bounds one Stage (DefaultStageTimeout).
	Timeout time.Duration
	// BusyRetries is how many times a staging_busy answer is retried
	// (default 3; negative: never), BusyPause apart (250 ms, doubled each
	// time). Staging has no side effect, so a retry is safe.
	BusyRetries int
	BusyPause   time.Duration
}

// Digest is a file's SHA-256 (lowercase hex) and size.
type Digest struct {
	SHA256 string
	Size   int64
}

// ctxReader stops a copy when its context ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// hashFrom hashes r; with max ≥ 0 it stops past max bytes (Size is then
// max+1).
func hashFrom(ctx context.Context, r io.Reader, max int64) (Digest, error) {
	if max >= 0 {
		r = io.LimitReader(r, max+1)
	}
	h := sha256.New()
	n, err := io.CopyBuffer(h, ctxReader{ctx, r}, make([]byte, 256<<10))
	if err != nil {
		return Digest{}, failure.Wrap(failure.TransferFailed, err, "the local file could not be read")
	}
	return Digest{SHA256: hex.EncodeToString(h.Sum(nil)), Size: n}, nil
}

func (s *Stager) maxFile() int64 {
	if s.MaxFileBytes > 0 {
		return s.MaxFileBytes
	}
	return DefaultMaxFileBytes
}

func (s *Stager) tooLarge(path string, size int64) *failure.Error {
	e := failure.Wrap(failure.FileTooLarge, ErrTooLargeToStage,
		"%s is %d bytes, larger than the authority stages (%d bytes a file); Sisyphus uploads no file above that cap, so nothing was sent or written", path, size, s.maxFile()).
		With("size", size).With("maxBytes", s.maxFile()).Attempted(false)
	e.Action = "make the file smaller than the cap, or add it through SiYuan itself"
	return e
}

// Stage stages the open file f under name (the base name of f's path when
// empty) and answers its uploadSource: it hashes the file, asks
// /transfer/lookup for a snapshot the authority already verified, and only
// when there is none streams the bytes it hashed to /transfer/upload as
// application/octet-stream. A file over the cap is refused before anything
// is sent (IsTooLargeToStage). The authority's own digest must match the
// local one, else the file changed while it was sent.
//
// The Stager opens no path: which file an agent's call may have staged is
// the caller's decision (a front opens it through package localfs).
func (s *Stager) Stage(ctx context.Context, f *os.File, name string) (st Staged, err error) {
	defer func() {
		// upload_asset relays these: nothing was written, whatever failed.
		var fe *failure.Error
		if errors.As(err, &fe) && fe.WriteAttempted == nil {
			fe.Attempted(false)
		}
	}()
	path := f.Name()
	if name == "" {
		name = filepath.Base(path)
	}
	if err := CheckFileName(name); err != nil {
		var fe *failure.Error
		errors.As(err, &fe)
		fe.Code = failure.InvalidArguments
		return Staged{}, fe
	}
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		return Staged{}, failure.New(failure.InvalidArguments, "%s is not a regular file", path)
	}
	if info.Size() > s.maxFile() {
		return Staged{}, s.tooLarge(path, info.Size())
	}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = DefaultStageTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	d, err := hashFrom(ctx, io.NewSectionReader(f, 0, s.maxFile()+1), s.maxFile())
	if err != nil {
		return Staged{}, stageFailure(ctx, timeout, err)
	}
	if d.Size > s.maxFile() {
		return Staged{}, s.tooLarge(path, d.Size) // it grew past the cap since Stat
	}
	if d.Size == 0 {
		return Staged{}, failure.New(failure.InvalidArguments, "%s is empty: there is nothing to upload", path).Attempted(false)
	}
	found, err := s.lookup(ctx, name, d)
	if err != nil || found.UploadSource != "" {
		return found, stageFailure(ctx, timeout, err)
	}
	st, err = s.upload(ctx, f, name, d)
	if err != nil {
		return Staged{}, stageFailure(ctx, timeout, err)
	}
	if st.SHA256 != d.SHA256 || st.Size != d.Size {
		return Staged{}, failure.New(failure.TransferFailed, "%s changed while it was staged (the authority hashed other bytes than this front); nothing was written", path).
			Attempted(false)
	}
	return st, nil
}

// stageFailure names a deadline or a cancellation as such.
func stageFailure(ctx context.Context, timeout time.Duration, err error) error {
	if err == nil {
		return nil
	}
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return failure.Wrap(failure.TransferFailed, err, "staging did not finish within %s; nothing was written", timeout).Attempted(false)
	case ctx.Err() != nil:
		return failure.Wrap(failure.TransferFailed, err, "staging was cancelled; nothing was written").Attempted(false)
	}
	return err
}

func (s *Stager) lookup(ctx context.Context, name string, d Digest) (Staged, error) {
	body, _ := json.Marshal(lookupRequest{FileName: name, SHA256: d.SHA256, Size: d.Size})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, LookupPath, bytes.NewReader(body))
	if err != nil {
		return Staged{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	var rep LookupReply
	if err := s.send(req, &rep); err != nil || !rep.Found || rep.Staged == nil {
		return Staged{}, err
	}
	return *rep.Staged, nil
}

// upload streams the first d.Size bytes of f (the bytes it hashed),
// retrying staging_busy.
func (s *Stager) upload(ctx context.Context, f *os.File, name string, d Digest) (Staged, error) {
	retries, pause := s.BusyRetries, s.BusyPause
	if retries == 0 {
		retries = 3
	}
	if pause <= 0 {
		pause = 250 * time.Millisecond
	}
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, UploadPath, io.NewSectionReader(f, 0, d.Size))
		if err != nil {
			return Staged{}, err
		}
		req.ContentLength = d.Size
		req.Header.Set("Content-Type", "application/octet-stream")
		req.Header.Set(HeaderFileName, url.PathEscape(name))
		var st Staged
		err = s.send(req, &st)
		var fe *failure.Error
		if errors.As(err, &fe) && fe.Code == failure.StagingBusy && attempt < retries {
			select {
			case <-ctx.Done():
				return Staged{}, ctx.Err()
			case <-time.After(pause << attempt):
			}
			continue
		}
		if errors.As(err, &fe) && fe.Code == failure.FileTooLarge {
			fe.Cause = ErrTooLargeToStage
		}
		return st, err
	}
}

// send does req and decodes a 200 answer into out; an error answer comes
// back as the authority's own failure.
func (s *Stager) send(req *http.Request, out any) error {
	resp, err := s.Authority.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return failure.Wrap(failure.TransferFailed, err, "the authority's answer to %s was cut off", req.URL.Path)
	}
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(data, out); err != nil {
			return failure.Wrap(failure.Internal, err, "the authority's answer to %s cannot be decoded", req.URL.Path)
		}
		return nil
	}
	if fe, ok := failure.Parse(data); ok {
		return fe.Attempted(false)
	}
	if resp.StatusCode == http.StatusNotFound {
		return failure.New(failure.DelegationRefused, "the authority does not serve %s (an older Sisyphus?); nothing was staged", req.URL.Path).Attempted(false)
	}
	return failure.New(failure.DelegationRefused, "the authority answered %s with HTTP %d; nothing was staged", req.URL.Path, resp.StatusCode).
		Attempted(false).With("status", fmt.Sprint(resp.StatusCode))
}
