package strict

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Request id lengths, in hex digits.
const (
	MinRequestIDLen = 4
	// MaxRequestIDLen bounds the growth: 128 random bits. Reaching it would
	// take collisions at every shorter length, which never happens.
	MaxRequestIDLen = 32
)

// reservationsBucket holds one key per request id ever reserved, with the
// time it was reserved (8 bytes, big-endian Unix nanoseconds) as value: its
// issue time, or for an id a [Ledger] reserved in a batch, a little before
// it. Keys are never deleted.
var reservationsBucket = []byte("strict.requestIds")

// ErrMalformedRequestID is wrapped by [ParseRequestID] errors.
var ErrMalformedRequestID = errors.New("strict: malformed request id")

// RequestID is a request id as issued: 4 to 32 lowercase hex digits. Get
// one from [ParseRequestID] (a submitted id, parsed once at the edge) or
// from the ledger; the ledger's methods take it without parsing again.
type RequestID string

// errIDSpaceExhausted is returned if every length up to MaxRequestIDLen
// collided: only a broken random source can cause it.
var errIDSpaceExhausted = errors.New("strict: no free request id up to the maximum length (is the random source broken?)")

// ParseRequestID checks a request id as submitted (4 to 32 hex digits, any
// letter case) and returns it in lowercase, the form ids are issued in.
func ParseRequestID(s string) (RequestID, error) {
	if len(s) < MinRequestIDLen || len(s) > MaxRequestIDLen {
		return "", fmt.Errorf("%w: want %d to %d hex digits, got %d characters", ErrMalformedRequestID, MinRequestIDLen, MaxRequestIDLen, len(s))
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return "", fmt.Errorf("%w: %q is not a hex digit", ErrMalformedRequestID, c)
		}
	}
	return RequestID(strings.ToLower(s)), nil
}

// IDIssuer issues request ids and reserves every one of them on disk, so no
// id is ever issued twice: not after its first-execution window expires, not
// after its ledger record is pruned, not after a restart.
//
// A new id is 4 random lowercase hex digits. If that id was ever issued
// before, a new one is drawn with one more digit, and so on. The reservation
// is committed (bbolt fsyncs the file) before the id is returned. A
// reservation holds the id and its issue time only, never note content, and
// is never deleted: about 40 bytes of file per id ever issued.
//
// How ids grow with the number N already issued: the first draw is uniform
// over the 65,536 four-digit ids, so P(4 digits) = e^(-N/65536), and a
// longer id needs a collision at every shorter length. The share of each
// length for the next id, and its mean length (simulated with this
// algorithm; TestRequestIDGrowth re-checks the rows up to 1,000,000):
//
//	issued N     4 digits  5 digits  6 digits  7+ digits  mean length
//	1,000          98.5%      1.5%      0         0          4.02
//	10,000         85.9%     14.1%      0         0          4.14
//	65,536         36.8%     61.8%      1.4%      0          4.65
//	100,000        21.6%     74.8%      3.6%      0          4.82
//	300,000         1.1%     79.0%     19.8%      0          5.19
//	1,000,000       0        41.1%     57.8%      1.1%       5.60
//	3,000,000       0         6.1%     83.6%     10.3%       6.04
//	10,000,000      0         0        58.9%     41.1%       6.41
//
// So ids stay at 4 to 5 digits for the first hundred thousand preflights
// and then gain roughly one digit per sixteen-fold growth of the count.
//
// An IDIssuer shares the bbolt database of the [Ledger] ([Ledger.DB]); the
// ledger reserves ids through the same bucket, in the same transaction as
// its record, when it issues a request itself. It is safe for concurrent
// use: bbolt serialises the writing transactions.
type IDIssuer struct {
	db   *bolt.DB
	rand io.Reader
	now  func() time.Time
}

// NewIDIssuer returns an issuer reserving ids in db, creating its bucket if
// needed.
func NewIDIssuer(db *bolt.DB) (*IDIssuer, error) {
	if err := db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(reservationsBucket)
		return err
	}); err != nil {
		return nil, fmt.Errorf("strict: creating the request id bucket: %w", err)
	}
	return &IDIssuer{db: db, rand: defaultRand(), now: time.Now}, nil
}

func defaultRand() io.Reader { return rand.Reader }

// Issue returns a new request id, reserved on disk before it is returned.
func (i *IDIssuer) Issue(ctx context.Context) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	var id string
	err := i.db.Update(func(tx *bolt.Tx) error {
		var err error
		id, err = i.reserve(tx, i.now())
		return err
	})
	if err != nil {
		return "", fmt.Errorf("strict: reserving a request id: %w", err)
	}
	return id, nil
}

// reserve draws and reserves a new id inside a writing transaction.
func (i *IDIssuer) reserve(tx *bolt.Tx, now time.Time) (string, error) {
	b := tx.Bucket(reservationsBucket)
	if b == nil {
		return "", errors.New("strict: request id bucket is missing")
	}
	id, err := drawID(i.rand, func(id []byte) bool { return b.Get(id) != nil })
	if err != nil {
		return "", err
	}
	var v [8]byte
	binary.BigEndian.PutUint64(v[:], uint64(now.UnixNano()))
	if err := b.Put([]byte(id), v[:]); err != nil {
		return "", err
	}
	return id, nil
}

// drawID draws random ids of 4, 5, 6, ... hex digits until one is not taken.
func drawID(r io.Reader, taken func(id []byte) bool) (string, error) {
	var raw [MaxRequestIDLen / 2]byte
	var hexBuf [MaxRequestIDLen]byte
	for n := MinRequestIDLen; n <= MaxRequestIDLen; n++ {
		if _, err := io.ReadFull(r, raw[:(n+1)/2]); err != nil {
			return "", fmt.Errorf("strict: random source: %w", err)
		}
		hex.Encode(hexBuf[:], raw[:(n+1)/2])
		if id := hexBuf[:n]; !taken(id) {
			return string(id), nil
		}
	}
	return "", errIDSpaceExhausted
}

// Issued reports whether id was ever issued and when. Any letter case is
// accepted; a malformed id is simply not issued.
func (i *IDIssuer) Issued(ctx context.Context, id string) (issuedAt time.Time, ok bool, err error) {
	if err := ctx.Err(); err != nil {
		return time.Time{}, false, err
	}
	rid, perr := ParseRequestID(id)
	if perr != nil {
		return time.Time{}, false, nil
	}
	err = i.db.View(func(tx *bolt.Tx) error {
		issuedAt, ok = reservedAt(tx, string(rid))
		return nil
	})
	if err != nil {
		return time.Time{}, false, fmt.Errorf("strict: reading request id reservations: %w", err)
	}
	return issuedAt, ok, nil
}

func reservedAt(tx *bolt.Tx, id string) (time.Time, bool) {
	b := tx.Bucket(reservationsBucket)
	if b == nil {
		return time.Time{}, false
	}
	v := b.Get([]byte(id))
	switch {
	case v == nil:
		return time.Time{}, false
	case len(v) != 8: // reserved all the same; the time is unreadable
		return time.Time{}, true
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64(v))), true
}
