package transfer

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/failure"
)

// Staging defaults: what a memory-only store can hold without weighing on
// the authority.
const (
	DefaultMaxConcurrent = 2
	DefaultMaxFileBytes  = 10 << 20
	DefaultMaxTotalBytes = 32 << 20
	DefaultMaxEntries    = 64
	DefaultTTL           = 10 * time.Minute
)

// HandlePrefix starts every uploadSource the store hands out.
const HandlePrefix = "staged:"

// Config configures a Store; zero fields take the defaults.
type Config struct {
	// MaxConcurrent is how many stagings may read their bodies at once; one
	// more is refused with staging_busy (HTTP 429).
	MaxConcurrent int
	// MaxFileBytes caps one file (file_too_large, HTTP 413, refused while
	// streaming).
	MaxFileBytes int64
	// MaxTotalBytes and MaxEntries cap what the store keeps; a new snapshot
	// past either is refused with staging_full (HTTP 507).
	MaxTotalBytes int64
	MaxEntries    int
	// TTL is how long a snapshot is kept from the moment it was staged.
	TTL time.Duration
	// Now is the clock (tests); nil is time.Now.
	Now func() time.Time
}

func (c Config) withDefaults() Config {
	if c.MaxConcurrent <= 0 {
		c.MaxConcurrent = DefaultMaxConcurrent
	}
	if c.MaxFileBytes <= 0 {
		c.MaxFileBytes = DefaultMaxFileBytes
	}
	if c.MaxTotalBytes <= 0 {
		c.MaxTotalBytes = DefaultMaxTotalBytes
	}
	if c.MaxEntries <= 0 {
		c.MaxEntries = DefaultMaxEntries
	}
	if c.TTL <= 0 {
		c.TTL = DefaultTTL
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Snapshot is one staged file: immutable bytes the store hashed itself.
// A Snapshot stays readable after its entry expires or is removed; only the
// store forgets it.
type Snapshot struct {
	// Handle is the uploadSource: HandlePrefix and 128 random bits.
	Handle string
	Name   string
	// SHA256 is the lowercase hex digest of the bytes.
	SHA256    string
	Size      int64
	StagedAt  time.Time
	ExpiresAt time.Time

	data []byte
}

// Open reads the snapshot's bytes.
func (s Snapshot) Open() io.ReadCloser { return io.NopCloser(bytes.NewReader(s.data)) }

// Staged is the answer of /transfer/upload, and of /transfer/lookup when it
// finds the file.
type Staged struct {
	UploadSource string `json:"uploadSource"`
	FileName     string `json:"fileName"`
	SHA256       string `json:"sha256"`
	Size         int64  `json:"size"`
	// ExpiresAt is in Unix milliseconds, like the strict writes' expiries.
	ExpiresAt int64 `json:"expiresAt"`
	// Reused tells that the store already held this name and content.
	Reused bool `json:"reused,omitempty"`
}

// Staged is the snapshot as the routes answer it.
func (s Snapshot) Staged() Staged {
	return Staged{UploadSource: s.Handle, FileName: s.Name, SHA256: s.SHA256, Size: s.Size, ExpiresAt: s.ExpiresAt.UnixMilli()}
}

// key names a snapshot's content: the same key reuses the handle.
type key struct {
	name, sum string
	size      int64
}

// Store is the authority's staging store: memory only, so a restart clears
// it. Create it with NewStore; it is safe for concurrent use.
type Store struct {
	cfg   Config
	slots chan struct{}

	mu      sync.Mutex
	byID    map[string]*Snapshot
	byKey   map[key]*Snapshot
	bytes   int64
	expired map[string]time.Time // handles removed on expiry, so Resolve can say so
	ev      counters
}

type counters struct {
	staged, reused, lookupHits, lookupMisses, gets, getMisses    uint64
	refusedBusy, refusedTooLarge, refusedFull, invalid, expiries uint64
}

// NewStore returns an empty store.
func NewStore(cfg Config) *Store {
	cfg = cfg.withDefaults()
	return &Store{cfg: cfg, slots: make(chan struct{}, cfg.MaxConcurrent),
		byID: map[string]*Snapshot{}, byKey: map[key]*Snapshot{}, expired: map[string]time.Time{}}
}

// Limits returns the store's configuration with its defaults applied.
func (s *Store) Limits() Config { return s.cfg }

// Stage reads one file from r (at most MaxFileBytes; size is the declared
// length, -1 when unknown), hashes it while reading, and keeps it. The same
// name and content answer the existing snapshot, unchanged (Reused); new
// content gets a new handle. Failures are *failure.Error: invalid_request
// (the name, an empty body), staging_busy, file_too_large, staging_full;
// nothing is kept after any of them.
func (s *Store) Stage(ctx context.Context, name string, r io.Reader, size int64) (Staged, error) {
	if err := CheckFileName(name); err != nil {
		s.count(&s.ev.invalid)
		return Staged{}, err
	}
	release, err := s.acquire()
	if err != nil {
		return Staged{}, err
	}
	defer release()
	data, sum, err := s.read(ctx, r, size)
	if err != nil {
		return Staged{}, err
	}
	return s.commit(name, data, sum)
}

// acquire takes one of the MaxConcurrent staging slots, or refuses at once:
// a staging waits for nobody.
func (s *Store) acquire() (release func(), err error) {
	select {
	case s.slots <- struct{}{}:
		return func() { <-s.slots }, nil
	default:
		s.count(&s.ev.refusedBusy)
		return nil, failure.New(failure.StagingBusy, "%d stagings are already running; nothing was kept", s.cfg.MaxConcurrent)
	}
}

func (s *Store) count(c *uint64) {
	s.mu.Lock()
	*c++
	s.mu.Unlock()
}

// tooLarge is the file_too_large refusal of a file over MaxFileBytes.
func (s *Store) tooLarge() *failure.Error {
	s.count(&s.ev.refusedTooLarge)
	return failure.New(failure.FileTooLarge, "the file is larger than staging takes (%d bytes); nothing was kept", s.cfg.MaxFileBytes).
		With("maxBytes", s.cfg.MaxFileBytes)
}

// read reads r into one buffer, hashing each chunk as it arrives: the bytes
// are held once, and a body past MaxFileBytes is refused as soon as it
// passes the cap.
func (s *Store) read(ctx context.Context, r io.Reader, size int64) ([]byte, [sha256.Size]byte, error) {
	max := s.cfg.MaxFileBytes
	if size > max {
		return nil, [sha256.Size]byte{}, s.tooLarge()
	}
	capacity := int64(64 << 10)
	if size >= 0 {
		capacity = size + 1 // room to see a body longer than declared
	}
	buf := make([]byte, 0, min(capacity, max+1))
	h := sha256.New()
	for {
		if err := ctx.Err(); err != nil {
			return nil, [sha256.Size]byte{}, failure.Wrap(failure.TransferFailed, err, "the staging was cancelled; nothing was kept")
		}
		if len(buf) == cap(buf) {
			if int64(len(buf)) > max {
				return nil, [sha256.Size]byte{}, s.tooLarge()
			}
			buf = append(buf, 0)[:len(buf)] // grow: amortized doubling, capped below
			if int64(cap(buf)) > max+1 {
				buf = buf[: len(buf) : max+1]
			}
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		h.Write(buf[len(buf) : len(buf)+n])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > max {
			return nil, [sha256.Size]byte{}, s.tooLarge()
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, [sha256.Size]byte{}, bodyFailure(err)
		}
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return buf, sum, nil
}

// bodyFailure is a body that could not be read to its end. One the server
// cut for arriving too slowly (it paused, or came slower than the server's
// minimum rate) is transfer_failed, HTTP 408: the slot it held is free
// again, so that a client trickling bytes cannot keep the staging slots
// from others.
func bodyFailure(err error) *failure.Error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return failure.Wrap(failure.TransferFailed, err, "the body arrived too slowly and was cut off; nothing was kept")
	}
	return failure.Wrap(failure.InvalidRequest, err, "the body could not be read to its end; nothing was kept")
}

// commit keeps data under name, or answers the snapshot already kept for the
// same name and content. Caps are checked after expired entries are
// removed; a full store refuses rather than evicts, because an eviction
// would pull bytes from under a preflight bound to them.
func (s *Store) commit(name string, data []byte, sum [sha256.Size]byte) (Staged, error) {
	if len(data) == 0 {
		s.count(&s.ev.invalid)
		return Staged{}, failure.New(failure.InvalidRequest, "the body is empty: there is no file to stage")
	}
	k := key{name: name, sum: hex.EncodeToString(sum[:]), size: int64(len(data))}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.cfg.Now()
	s.pruneLocked(now)
	if old := s.byKey[k]; old != nil {
		s.ev.reused++
		st := old.Staged()
		st.Reused = true
		return st, nil
	}
	if len(s.byID) >= s.cfg.MaxEntries || s.bytes+k.size > s.cfg.MaxTotalBytes {
		s.ev.refusedFull++
		return Staged{}, failure.New(failure.StagingFull, "the staging store is full (%d of %d files, %d of %d bytes, this file %d bytes); nothing was kept",
			len(s.byID), s.cfg.MaxEntries, s.bytes, s.cfg.MaxTotalBytes, k.size).
			With("retryAfterSeconds", int(s.nextExpiryLocked(now).Seconds())+1)
	}
	snap := &Snapshot{Handle: HandlePrefix + rand.Text(), Name: name, SHA256: k.sum, Size: k.size,
		StagedAt: now, ExpiresAt: now.Add(s.cfg.TTL), data: data}
	s.byID[snap.Handle], s.byKey[k] = snap, snap
	s.bytes += k.size
	s.ev.staged++
	return snap.Staged(), nil
}

// nextExpiryLocked is how long until the next snapshot expires.
func (s *Store) nextExpiryLocked(now time.Time) time.Duration {
	next := s.cfg.TTL
	for _, e := range s.byID {
		next = min(next, e.ExpiresAt.Sub(now))
	}
	return max(next, 0)
}

// pruneLocked removes expired snapshots (on every stage and read), and
// forgets expired handles a TTL after they expired.
func (s *Store) pruneLocked(now time.Time) {
	for id, e := range s.byID {
		if !now.Before(e.ExpiresAt) {
			delete(s.byID, id)
			delete(s.byKey, key{e.Name, e.SHA256, e.Size})
			s.bytes -= e.Size
			s.expired[id] = e.ExpiresAt
			s.ev.expiries++
		}
	}
	for id, at := range s.expired {
		// Bounded: a handle is remembered one TTL at most, and at most four
		// stores' worth of them.
		if now.Sub(at) > s.cfg.TTL || len(s.expired) > 4*s.cfg.MaxEntries {
			delete(s.expired, id)
		}
	}
}

// Lookup answers the snapshot the store hashed itself for exactly this
// name, digest and size; a digest the caller claims never creates one.
func (s *Store) Lookup(name, sha256Hex string, size int64) (Staged, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pruneLocked(s.cfg.Now())
	snap := s.byKey[key{name: name, sum: strings.ToLower(sha256Hex), size: size}]
	if snap == nil {
		s.ev.lookupMisses++
		return Staged{}, false
	}
	s.ev.lookupHits++
	return snap.Staged(), true
}

// Get returns the snapshot of an uploadSource handle; false when the store
// has none (never staged, expired, or staged before a restart).
func (s *Store) Get(handle string) (Snapshot, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pruneLocked(s.cfg.Now())
	snap := s.byID[handle]
	if snap == nil {
		s.ev.getMisses++
		return Snapshot{}, false
	}
	s.ev.gets++
	return *snap, true
}

// Resolve is Get with the agent's failure: upload_source_expired for a
// handle that expired within the last TTL, upload_source_unknown for any
// other handle the store does not hold.
func (s *Store) Resolve(handle string) (Snapshot, error) {
	if snap, ok := s.Get(handle); ok {
		return snap, nil
	}
	s.mu.Lock()
	at, wasExpired := s.expired[handle]
	s.mu.Unlock()
	if wasExpired {
		return Snapshot{}, failure.New(failure.UploadSourceExpired, "the uploadSource expired at %s (staged files are kept %s); nothing was written",
			at.UTC().Format(time.RFC3339), s.cfg.TTL).Attempted(false)
	}
	what := "names no staged file (never staged here, or the authority restarted since)"
	if !strings.HasPrefix(handle, HandlePrefix) {
		what = fmt.Sprintf("is not an uploadSource (they start with %q)", HandlePrefix)
	}
	return Snapshot{}, failure.New(failure.UploadSourceUnknown, "the uploadSource %s; nothing was written", what).Attempted(false)
}

// Stats are the staging part of the authority's /health: counts only.
type Stats struct {
	// Active stagings are reading their bodies now.
	Active        int    `json:"active"`
	MaxConcurrent int    `json:"maxConcurrent"`
	Entries       int    `json:"entries"`
	Bytes         int64  `json:"bytes"`
	MaxEntries    int    `json:"maxEntries"`
	MaxBytes      int64  `json:"maxBytes"`
	MaxFileBytes  int64  `json:"maxFileBytes"`
	TTLSeconds    int    `json:"ttlSeconds"`
	Staged        uint64 `json:"staged"`
	Reused        uint64 `json:"reused"`
	LookupHits    uint64 `json:"lookupHits"`
	LookupMisses  uint64 `json:"lookupMisses"`
	// Gets and GetMisses count the snapshots upload_asset asked for.
	Gets      uint64 `json:"gets"`
	GetMisses uint64 `json:"getMisses"`
	// Refused stagings, by cause: 429, 413, the total or entry cap, and
	// bad requests (names, bodies, content types).
	RefusedBusy     uint64 `json:"refusedBusy"`
	RefusedTooLarge uint64 `json:"refusedTooLarge"`
	RefusedFull     uint64 `json:"refusedFull"`
	Invalid         uint64 `json:"invalid"`
	Expired         uint64 `json:"expired"`
}

// Stats returns the store's counters (without removing expired entries: a
// health probe changes nothing).
func (s *Store) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.ev
	return Stats{Active: len(s.slots), MaxConcurrent: s.cfg.MaxConcurrent, Entries: len(s.byID), Bytes: s.bytes,
		MaxEntries: s.cfg.MaxEntries, MaxBytes: s.cfg.MaxTotalBytes, MaxFileBytes: s.cfg.MaxFileBytes, TTLSeconds: int(s.cfg.TTL.Seconds()),
		Staged: e.staged, Reused: e.reused, LookupHits: e.lookupHits, LookupMisses: e.lookupMisses, Gets: e.gets, GetMisses: e.getMisses,
		RefusedBusy: e.refusedBusy, RefusedTooLarge: e.refusedTooLarge, RefusedFull: e.refusedFull, Invalid: e.invalid, Expired: e.expiries}
}
