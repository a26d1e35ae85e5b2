package strict

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/sisyphus-go/sisyphus/internal/canon"
)

// Ledger limits.
const (
	// RequestIDTTL is the first-execution window of an issued request id
	// (requestIdExpiresAt = issuedAt + RequestIDTTL).
	RequestIDTTL = 10 * time.Minute
	// Retention is how long executed records are kept for replay.
	Retention = 7 * 24 * time.Hour
	// MaxReceiptSize caps a record's replay receipt.
	MaxReceiptSize = 16 << 10
	// DefaultOpenTimeout is how long OpenLedger waits for the file lock.
	DefaultOpenTimeout = time.Second
	// LedgerFile is the ledger's file name in the state directory.
	LedgerFile = "ledger.db"
)

// ledgerSchema versions the record format and bucket layout.
const ledgerSchema = "1"

var (
	ledgerBucket = []byte("strict.ledger")
	metaBucket   = []byte("strict.meta")
	schemaKey    = []byte("schema")
)

// Errors of the ledger. Each maps to one failure code of the caller.
var (
	// ErrUnknownRequest: the request id was never issued here
	// (precondition_required: preflight again).
	ErrUnknownRequest = errors.New("strict: request id was never issued by this authority")
	// ErrRequestExpired: the id was issued but not executed within
	// RequestIDTTL, or its record was pruned (preflight again).
	ErrRequestExpired = errors.New("strict: request id expired before its first execution")
	// ErrIdempotencyConflict: the id was issued for another tool, action,
	// arguments or targets (idempotency_conflict).
	ErrIdempotencyConflict = errors.New("strict: request id was issued for a different call")
	// ErrAlreadyExecuting: the record was left executing by a crash or a
	// lost reply. The outcome is unknown forever and the request is never
	// executed again (outcome_unknown).
	ErrAlreadyExecuting = errors.New("strict: request already started executing; its outcome is unknown")
	// ErrReplay: the request finished; the returned record's receipt is
	// the result to replay, without executing.
	ErrReplay = errors.New("strict: request already finished; replay its receipt")
	// ErrRequestExists: Issue was called twice for one id.
	ErrRequestExists = errors.New("strict: request id already has a ledger record")
	// ErrBadTransition: Finish on a record that is not executing, or
	// Withdraw on one that is not issued.
	ErrBadTransition = errors.New("strict: ledger record is not in the status this step needs")
	// ErrRecordUnreadable: a stored record does not decode.
	ErrRecordUnreadable = errors.New("strict: ledger record is unreadable")
	// ErrReceiptTooLarge: a receipt over MaxReceiptSize or not JSON.
	ErrReceiptTooLarge = errors.New("strict: receipt is too large")
	// ErrLedgerUnavailable: the ledger could not be read or written. It
	// fails closed: once a storage operation fails, every later call
	// returns this error until the process restarts, and the caller must
	// not dispatch.
	ErrLedgerUnavailable = errors.New("strict: write ledger unavailable")
	// ErrLedgerLocked: another process holds the ledger file.
	ErrLedgerLocked = errors.New("strict: write ledger is locked by another process")
)

// errLedgerClosed is the failure a closed ledger answers with.
var errLedgerClosed = errors.New("the ledger is closed")

// domainErrors are answers about a request, not storage failures.
var domainErrors = []error{
	ErrUnknownRequest, ErrRequestExpired, ErrIdempotencyConflict, ErrAlreadyExecuting,
	ErrReplay, ErrRequestExists, ErrBadTransition, ErrRecordUnreadable, ErrMalformedRequestID, ErrCreationTooLarge,
}

func isDomain(err error) bool {
	for _, d := range domainErrors {
		if errors.Is(err, d) {
			return true
		}
	}
	return false
}

// Status is the state of a ledger record.
//
//	issued ──Begin──▶ executing ──Finish──▶ committed | no_change | failed_before_dispatch
//	   │                  │
//	   │ (10 min,         └─ left executing (crash, lost reply): outcome unknown forever
//	   │  or a restart)
//	   ▼
//	expired (pruned; the id stays reserved)
//
// An issued request is kept in memory; from executing on, records are on disk.
type Status string

// Record statuses.
const (
	StatusIssued               Status = "issued"
	StatusExecuting            Status = "executing"
	StatusCommitted            Status = "committed"
	StatusNoChange             Status = "no_change"
	StatusFailedBeforeDispatch Status = "failed_before_dispatch"
)

// Finished reports whether s is a final status with a receipt to replay.
func (s Status) Finished() bool {
	return s == StatusCommitted || s == StatusNoChange || s == StatusFailedBeforeDispatch
}

// Record is one request in the ledger. It holds identifiers and hashes only;
// the receipt is a small result payload that the caller guarantees holds no
// note content (ids, counts, flags, hashes; never bodies or binary data).
type Record struct {
	RequestID    string          `json:"requestId"`
	Tool         string          `json:"tool"`
	Action       string          `json:"action"`
	ArgsDigest   string          `json:"argsDigest"`
	Targets      []string        `json:"targets"`
	Precondition Precondition    `json:"precondition,omitempty"`
	Status       Status          `json:"status"`
	PreviousHash string          `json:"previousHash,omitempty"`
	ResultHash   string          `json:"resultHash,omitempty"`
	IssuedAt     time.Time       `json:"issuedAt"`
	StartedAt    time.Time       `json:"startedAt,omitzero"`
	FinishedAt   time.Time       `json:"finishedAt,omitzero"`
	Receipt      json.RawMessage `json:"receipt,omitempty"`
	// Creation is a staged creation's reserved ids and confirmed stages
	// (see [Creation]); nil for every other write.
	Creation *Creation `json:"creation,omitempty"`
}

// Scope returns the scope the record's request id is bound to.
func (r Record) Scope() Scope {
	return Scope{Tool: r.Tool, Action: r.Action, ArgsDigest: r.ArgsDigest, Targets: r.Targets}
}

// ExpiresAt is the end of the first-execution window (requestIdExpiresAt).
func (r Record) ExpiresAt() time.Time { return r.IssuedAt.Add(RequestIDTTL) }

// Ledger is the persistent idempotency ledger: a bbolt file
// (<stateDir>/ledger.db) that also holds the request id reservations of
// [IDIssuer]. From executing on, every state change is a bbolt transaction,
// fsynced before the method returns: executing is durable before the caller
// dispatches, a finished request before its answer. An issued request is
// kept in memory until it begins, as its lease is (see issued.go): only its
// id's reservation is on disk, durable before the id is handed out, so an
// id is never issued twice, and a request issued before a restart cannot
// begin after it (ErrRequestExpired, as its lease is gone too).
//
// Only one process may open the file (bbolt takes an exclusive lock); a
// second one fails with [ErrLedgerLocked] after the open timeout.
//
// The ledger fails closed: after any storage failure every method returns
// [ErrLedgerUnavailable], and the caller must not dispatch writes.
//
// Retention: executed records (executing or finished) are kept [Retention]
// after they finished (or started, if they never finished); issued requests
// never executed are kept [RequestIDTTL]. [Ledger.Prune] removes older ones.
// The id reservations outlive the records, so ids never repeat.
//
// A Ledger is safe for concurrent use.
type Ledger struct {
	db  *bolt.DB
	ids *IDIssuer
	now func() time.Time
	log *slog.Logger

	mu     sync.Mutex
	broken error // first storage failure; set once

	iss  issuedTable
	fill sync.Mutex // held while a batch of ids is reserved
	// begin makes looking an issued request up and writing it as executing
	// one step: two Begins of one id never both find it issued.
	begin  sync.Mutex
	opened time.Time
}

// LedgerOption configures [OpenLedger].
type LedgerOption func(*ledgerOptions)

type ledgerOptions struct {
	now      func() time.Time
	log      *slog.Logger
	timeout  time.Duration
	openFile func(string, int, os.FileMode) (*os.File, error)
}

// WithLedgerClock sets the ledger's clock (for tests).
func WithLedgerClock(now func() time.Time) LedgerOption {
	return func(o *ledgerOptions) { o.now = now }
}

// WithLedgerLogger sets the logger (slog.Default otherwise).
func WithLedgerLogger(l *slog.Logger) LedgerOption {
	return func(o *ledgerOptions) { o.log = l }
}

// WithOpenTimeout sets how long to wait for another process's lock.
func WithOpenTimeout(d time.Duration) LedgerOption {
	return func(o *ledgerOptions) { o.timeout = d }
}

// withOpenFile replaces the function bbolt opens the file with (for tests
// that need a file that cannot be written).
func withOpenFile(f func(string, int, os.FileMode) (*os.File, error)) LedgerOption {
	return func(o *ledgerOptions) { o.openFile = f }
}

// OpenLedger opens or creates the ledger at path (normally
// <stateDir>/[LedgerFile]), creating the directory (0700) if needed.
func OpenLedger(path string, opts ...LedgerOption) (*Ledger, error) {
	o := ledgerOptions{now: time.Now, log: slog.Default(), timeout: DefaultOpenTimeout}
	for _, opt := range opts {
		opt(&o)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("strict: creating the ledger directory: %w", err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: o.timeout, OpenFile: o.openFile})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("%w: %s is held by another process (is another authority running on this state directory?)", ErrLedgerLocked, path)
	}
	if err != nil {
		return nil, fmt.Errorf("strict: opening the ledger %s: %w", path, err)
	}
	if err := initLedger(db); err != nil {
		db.Close()
		return nil, fmt.Errorf("strict: initialising the ledger %s: %w", path, err)
	}
	ids := &IDIssuer{db: db, rand: defaultRand(), now: o.now}
	return &Ledger{db: db, ids: ids, now: o.now, log: o.log, opened: o.now()}, nil
}

// initLedger checks the schema and creates the buckets, writing only if
// something is missing.
func initLedger(db *bolt.DB) error {
	ready := false
	err := db.View(func(tx *bolt.Tx) error {
		m := tx.Bucket(metaBucket)
		if m == nil {
			return nil
		}
		if v := m.Get(schemaKey); v != nil && string(v) != ledgerSchema {
			return fmt.Errorf("ledger schema %q, this build reads %q", v, ledgerSchema)
		}
		ready = m.Get(schemaKey) != nil && tx.Bucket(ledgerBucket) != nil && tx.Bucket(reservationsBucket) != nil
		return nil
	})
	if err != nil || ready {
		return err
	}
	return db.Update(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{metaBucket, ledgerBucket, reservationsBucket} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		return tx.Bucket(metaBucket).Put(schemaKey, []byte(ledgerSchema))
	})
}

// Close closes the file. Later calls fail with ErrLedgerUnavailable.
func (l *Ledger) Close() error {
	l.mu.Lock()
	if l.broken == nil {
		l.broken = errLedgerClosed
	}
	l.mu.Unlock()
	if err := l.db.Close(); err != nil {
		return fmt.Errorf("strict: closing the ledger: %w", err)
	}
	return nil
}

// DB returns the underlying database, to share with an [IDIssuer].
func (l *Ledger) DB() *bolt.DB { return l.db }

// usable returns the latched failure, if any.
func (l *Ledger) usable(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.broken != nil {
		return fmt.Errorf("%w: an earlier operation failed: %w", ErrLedgerUnavailable, l.broken)
	}
	return nil
}

// result passes domain errors through and latches storage failures.
func (l *Ledger) result(op string, err error) error {
	if err == nil || isDomain(err) {
		return err
	}
	l.mu.Lock()
	if l.broken == nil {
		l.broken = err
		l.log.Error("write ledger failed; refusing every strict write until restart", "op", op, "err", err)
	}
	l.mu.Unlock()
	return fmt.Errorf("%w: %s: %w", ErrLedgerUnavailable, op, err)
}

func (l *Ledger) update(ctx context.Context, op string, fn func(*bolt.Tx) error) error {
	if err := l.usable(ctx); err != nil {
		return err
	}
	return l.result(op, l.db.Update(fn))
}

func (l *Ledger) view(ctx context.Context, op string, fn func(*bolt.Tx) error) error {
	if err := l.usable(ctx); err != nil {
		return err
	}
	return l.result(op, l.db.View(fn))
}

func getRecord(tx *bolt.Tx, id string) (Record, bool, error) {
	v := tx.Bucket(ledgerBucket).Get([]byte(id))
	if v == nil {
		return Record{}, false, nil
	}
	var r Record
	if err := json.Unmarshal(v, &r); err != nil {
		return Record{}, false, fmt.Errorf("%w: %s: %w", ErrRecordUnreadable, id, err)
	}
	return r, true, nil
}

func putRecord(tx *bolt.Tx, r Record) error {
	v, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return tx.Bucket(ledgerBucket).Put([]byte(r.RequestID), v)
}

// Issue records a preflight's request as issued, in memory. If
// rec.RequestID is empty, Issue takes a new id whose reservation is already
// durable (reserving a batch of them first, in one fsynced transaction, when
// none is left); otherwise the id must already be reserved by an [IDIssuer]
// on this database and have no record yet. Tool, Action, ArgsDigest (a full
// digest) are required; Targets are sorted and deduplicated; IssuedAt
// defaults to now. It returns the record as kept.
func (l *Ledger) Issue(ctx context.Context, rec Record) (Record, error) {
	if rec.Tool == "" || rec.Action == "" {
		return Record{}, errors.New("strict: a ledger record needs a tool and an action")
	}
	if _, err := canon.ParseDigest(rec.ArgsDigest); err != nil {
		return Record{}, fmt.Errorf("strict: argument digest: %w", err)
	}
	if rec.RequestID != "" {
		id, err := ParseRequestID(rec.RequestID)
		if err != nil {
			return Record{}, err
		}
		rec.RequestID = string(id)
	}
	rec.Targets = normTargets(rec.Targets)
	if rec.Targets == nil {
		rec.Targets = []string{}
	}
	rec.Status = StatusIssued
	rec.PreviousHash, rec.ResultHash, rec.Receipt = "", "", nil
	rec.StartedAt, rec.FinishedAt = time.Time{}, time.Time{}
	if rec.IssuedAt.IsZero() {
		rec.IssuedAt = l.now()
	}
	if rec.RequestID == "" {
		id, err := l.takeID(ctx)
		if err != nil {
			return Record{}, err
		}
		rec.RequestID = id
		l.iss.put(rec)
		return rec, nil
	}
	// An id reserved elsewhere: reserved, and not yet a request.
	l.begin.Lock()
	defer l.begin.Unlock()
	if _, at := l.iss.find(rec.RequestID); at != notHere {
		return Record{}, fmt.Errorf("%w: %s", ErrRequestExists, rec.RequestID)
	}
	err := l.view(ctx, "issue", func(tx *bolt.Tx) error {
		if _, ok := reservedAt(tx, rec.RequestID); !ok {
			return fmt.Errorf("%w: %s was not reserved by an IDIssuer", ErrUnknownRequest, rec.RequestID)
		}
		if _, found, err := getRecord(tx, rec.RequestID); err != nil {
			return err
		} else if found {
			return fmt.Errorf("%w: %s", ErrRequestExists, rec.RequestID)
		}
		return nil
	})
	if err != nil {
		return Record{}, err
	}
	l.iss.put(rec)
	return rec, nil
}

// Withdraw removes an issued request that was never handed to anyone: a
// preflight that issued its request and then failed (its lease could not be
// stored) withdraws it, so that a failed preflight leaves nothing behind.
// Since the id was never answered, no caller can hold it: it goes back to
// the pool of reserved ids (an issued record left on disk by an earlier
// build is deleted with its reservation). Only an issued request is
// withdrawn; any other status is [ErrBadTransition] and nothing changes.
func (l *Ledger) Withdraw(ctx context.Context, requestID RequestID) error {
	id := string(requestID)
	if err := l.usable(ctx); err != nil {
		return err
	}
	l.begin.Lock()
	defer l.begin.Unlock()
	switch _, at := l.iss.find(id); at {
	case inMemory:
		l.iss.remove(id, true)
		return nil
	case inPool:
		return fmt.Errorf("%w: %s", ErrUnknownRequest, id)
	}
	return l.update(ctx, "withdraw", func(tx *bolt.Tx) error {
		r, found, err := getRecord(tx, id)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("%w: %s", ErrUnknownRequest, id)
		}
		if r.Status != StatusIssued {
			return fmt.Errorf("%w: %s is %s, only an issued request can be withdrawn", ErrBadTransition, id, r.Status)
		}
		if err := tx.Bucket(ledgerBucket).Delete([]byte(id)); err != nil {
			return err
		}
		return tx.Bucket(reservationsBucket).Delete([]byte(id))
	})
}

// Check answers, without changing anything, what [Ledger.Begin] would
// answer for this request id and scope: nil with the issued record if Begin
// would start it, otherwise the same error (and record) Begin would return.
// A coordinator calls Check first, so that a replay, conflict or unknown
// outcome is answered before it looks at leases or rereads state, and calls
// Begin only once the digests matched.
func (l *Ledger) Check(ctx context.Context, requestID RequestID, scope Scope) (Record, error) {
	return l.admit(ctx, requestID, scope, false)
}

// Begin moves an issued request to executing, durably, before the caller
// dispatches. scope is the call being made; it must equal the issued one.
//
// Outcomes: the executing record and nil (dispatch now); [ErrUnknownRequest]
// (never issued, or malformed: precondition_required); [ErrRequestExpired]
// (issued over RequestIDTTL ago and never executed, or pruned: preflight
// again); [ErrIdempotencyConflict] with the record (other tool, action,
// arguments or targets); [ErrAlreadyExecuting] with the record (left
// executing: outcome_unknown, never execute again); [ErrReplay] with the
// finished record (replay its receipt, do not execute); ErrLedgerUnavailable.
func (l *Ledger) Begin(ctx context.Context, requestID RequestID, scope Scope) (Record, error) {
	return l.admit(ctx, requestID, scope, true)
}

func (l *Ledger) admit(ctx context.Context, requestID RequestID, scope Scope, begin bool) (Record, error) {
	return l.admitAs(ctx, requestID, scope, begin, nil)
}

// admitWith begins a request as a creation with its reserved ids.
func (l *Ledger) admitWith(ctx context.Context, requestID RequestID, scope Scope, cr *Creation) (Record, error) {
	return l.admitAs(ctx, requestID, scope, true, cr)
}

func (l *Ledger) admitAs(ctx context.Context, requestID RequestID, scope Scope, begin bool, cr *Creation) (Record, error) {
	id := string(requestID)
	if begin {
		l.begin.Lock()
		defer l.begin.Unlock()
	}
	if r, at := l.iss.find(id); at != notHere {
		return l.admitIssued(ctx, id, r, at, scope, begin, cr)
	}
	var out Record
	var err error
	fn := func(tx *bolt.Tx) error {
		now := l.now()
		r, found, err := getRecord(tx, id)
		if err != nil {
			return err
		}
		if !found {
			at, ok := reservedAt(tx, id)
			switch {
			case ok && at.Before(l.opened):
				return fmt.Errorf("%w: %s was issued at %s, before this ledger was opened: an issued request does not outlive its process", ErrRequestExpired, id, at.UTC().Format(time.RFC3339))
			case ok:
				return fmt.Errorf("%w: %s was issued at %s and its record is gone", ErrRequestExpired, id, at.UTC().Format(time.RFC3339))
			}
			return fmt.Errorf("%w: %s", ErrUnknownRequest, id)
		}
		out = r
		if err := admissible(r, scope, now); err != nil {
			return err
		}
		if !begin {
			return nil
		}
		r.Status = StatusExecuting
		r.StartedAt = now
		r.Creation = cr
		out = r
		return putRecord(tx, r)
	}
	if begin {
		err = l.update(ctx, "begin", fn)
	} else {
		err = l.view(ctx, "check", fn)
	}
	if err != nil && !errors.Is(err, ErrIdempotencyConflict) && !errors.Is(err, ErrAlreadyExecuting) && !errors.Is(err, ErrReplay) {
		return Record{}, err
	}
	return out, err
}

// admissible answers whether the request of r may begin now as scope: nil,
// or the refusal Begin returns.
func admissible(r Record, scope Scope, now time.Time) error {
	id := r.RequestID
	if !r.Scope().Equal(scope) {
		return fmt.Errorf("%w: %s was issued for %s.%s with other arguments or targets", ErrIdempotencyConflict, id, r.Tool, r.Action)
	}
	switch {
	case r.Status == StatusExecuting:
		return fmt.Errorf("%w: %s started at %s", ErrAlreadyExecuting, id, r.StartedAt.UTC().Format(time.RFC3339))
	case r.Status.Finished():
		return fmt.Errorf("%w: %s is %s", ErrReplay, id, r.Status)
	case r.Status != StatusIssued:
		return fmt.Errorf("%w: %s has unknown status %q", ErrRecordUnreadable, id, r.Status)
	case !now.Before(r.ExpiresAt()):
		return fmt.Errorf("%w: %s expired at %s", ErrRequestExpired, id, r.ExpiresAt().UTC().Format(time.RFC3339))
	}
	return nil
}

// Finish records the outcome of an executing request: committed (after
// readback showed the change), no_change (readback equals the previous
// state) or failed_before_dispatch (rejected before anything was sent).
// previousHash and resultHash are full digests or empty. receipt is the
// small result payload to replay (at most [MaxReceiptSize] bytes of JSON,
// never note content). An outcome that is unknown (lost reply, readback
// mismatch) is recorded by not calling Finish: the record stays executing.
func (l *Ledger) Finish(ctx context.Context, requestID RequestID, status Status, previousHash, resultHash string, receipt json.RawMessage) (Record, error) {
	if !status.Finished() {
		return Record{}, fmt.Errorf("strict: Finish with status %q; want committed, no_change or failed_before_dispatch", status)
	}
	for _, h := range []string{previousHash, resultHash} {
		if h == "" {
			continue
		}
		if _, err := canon.ParseDigest(h); err != nil {
			return Record{}, fmt.Errorf("strict: receipt hash: %w", err)
		}
	}
	if len(receipt) > MaxReceiptSize {
		return Record{}, fmt.Errorf("%w: %d bytes, the cap is %d (receipts hold ids, counts and hashes, never content)", ErrReceiptTooLarge, len(receipt), MaxReceiptSize)
	}
	if len(receipt) > 0 {
		var buf bytes.Buffer
		if err := json.Compact(&buf, receipt); err != nil {
			return Record{}, fmt.Errorf("%w: receipt is not JSON: %w", ErrReceiptTooLarge, err)
		}
		receipt = buf.Bytes()
	}
	id := string(requestID)
	if err := l.notBegun(ctx, id); err != nil {
		return Record{}, err
	}
	var out Record
	err := l.update(ctx, "finish", func(tx *bolt.Tx) error {
		r, found, err := getRecord(tx, id)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("%w: %s", ErrUnknownRequest, id)
		}
		if r.Status != StatusExecuting {
			return fmt.Errorf("%w: %s is %s", ErrBadTransition, id, r.Status)
		}
		r.Status = status
		r.PreviousHash, r.ResultHash = previousHash, resultHash
		r.Receipt = receipt
		r.FinishedAt = l.now()
		out = r
		return putRecord(tx, r)
	})
	if err != nil {
		return Record{}, err
	}
	return out, nil
}

// Get returns the record of a request id, if there is one: an issued
// request of this process or a record on disk.
func (l *Ledger) Get(ctx context.Context, requestID RequestID) (Record, bool, error) {
	id := string(requestID)
	if r, at := l.iss.find(id); at == inMemory {
		if err := l.usable(ctx); err != nil {
			return Record{}, false, err
		}
		return r, true, nil
	}
	var (
		r     Record
		found bool
	)
	err := l.view(ctx, "get", func(tx *bolt.Tx) error {
		var err error
		r, found, err = getRecord(tx, id)
		return err
	})
	return r, found, err
}

// Recent returns up to n records that began executing (executing, committed,
// no_change, failed_before_dispatch), the most recently changed first (by
// FinishedAt, else StartedAt). Records only issued are left out: every
// preflight issues one, and they are not outcomes. It only reads; an
// unreadable record is skipped and logged, as Prune keeps it. Records are
// keyed by random ids, so this scans the bucket (bounded by retention).
func (l *Ledger) Recent(ctx context.Context, n int) ([]Record, error) {
	if n <= 0 {
		return nil, nil
	}
	var out []Record
	err := l.view(ctx, "recent", func(tx *bolt.Tx) error {
		return tx.Bucket(ledgerBucket).ForEach(func(k, v []byte) error {
			var r Record
			if err := json.Unmarshal(v, &r); err != nil {
				l.log.Warn("unreadable ledger record skipped", "requestId", string(k), "err", err)
				return nil
			}
			if r.Status == StatusIssued {
				return nil
			}
			// Keep out sorted, newest first, at most n long.
			i, _ := slices.BinarySearchFunc(out, r, newerFirst)
			if i >= n {
				return nil
			}
			out = slices.Insert(out, i, r)
			if len(out) > n {
				out = out[:n]
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// changedAt is when a record last changed state.
func (r Record) changedAt() time.Time {
	if !r.FinishedAt.IsZero() {
		return r.FinishedAt
	}
	if !r.StartedAt.IsZero() {
		return r.StartedAt
	}
	return r.IssuedAt
}

// newerFirst orders records by changedAt, newest first, then by id.
func newerFirst(a, b Record) int {
	if c := b.changedAt().Compare(a.changedAt()); c != 0 {
		return c
	}
	return strings.Compare(a.RequestID, b.RequestID)
}

// Prune deletes records past retention as of now: issued requests whose
// first-execution window has closed (in memory, or on disk from an earlier
// build), and executed records older than [Retention]. Reservations are
// kept, so pruned ids are never reissued. An unreadable record is kept (and
// logged). It returns how many it deleted.
func (l *Ledger) Prune(ctx context.Context, now time.Time) (int, error) {
	var n int
	err := l.update(ctx, "prune", func(tx *bolt.Tx) error {
		b := tx.Bucket(ledgerBucket)
		var doomed [][]byte
		err := b.ForEach(func(k, v []byte) error {
			var r Record
			if err := json.Unmarshal(v, &r); err != nil {
				l.log.Warn("unreadable ledger record kept", "requestId", string(k), "err", err)
				return nil
			}
			if expired(r, now) {
				doomed = append(doomed, slices.Clone(k))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range doomed {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		n = len(doomed)
		return nil
	})
	if err != nil {
		return 0, err
	}
	n += l.iss.prune(now)
	if n > 0 {
		l.log.Info("pruned write ledger", "records", n)
	}
	return n, nil
}

func expired(r Record, now time.Time) bool {
	if r.Status == StatusIssued {
		return !now.Before(r.ExpiresAt())
	}
	ref := r.FinishedAt
	if ref.IsZero() {
		ref = r.StartedAt
	}
	if ref.IsZero() {
		ref = r.IssuedAt
	}
	return !now.Before(ref.Add(Retention))
}
