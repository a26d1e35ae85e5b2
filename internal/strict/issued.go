package strict

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Issued requests live in memory until their commit begins, beside their
// leases: an issued request can only start with its lease, and a restart
// clears the leases, so a record of it on disk served nobody and cost every
// preflight an fsynced transaction (two fdatasyncs, most of a preflight's
// own time after a pause). What must outlive the process is the id's
// reservation, so that no id is ever issued twice; that is made durable
// ahead of time: ids are reserved in batches of idPoolSize, in one fsynced
// transaction, before the first of them is handed out. A restart leaves
// the unissued rest of a batch reserved and never used.
const (
	// idPoolSize is how many ids one reserving transaction draws.
	idPoolSize = 32
	// maxIssued bounds the issued requests kept; a new one evicts the
	// oldest. Beyond MaxLeases an issued request has likely lost its lease
	// anyway, and without one it cannot start.
	maxIssued = 4 * MaxLeases
)

// issuedTable holds the issued requests and the reserved, unissued ids.
type issuedTable struct {
	mu   sync.Mutex
	pool []string              // reserved on disk, not yet issued
	recs map[string]issuedNote // issued, not begun
	seq  uint64
}

// issuedNote is an issued request and when it was put, in puts: the oldest
// is the one with the lowest seq (an id withdrawn and issued again counts
// from its second put).
type issuedNote struct {
	rec Record
	seq uint64
}

// where an id stands in the table.
type where int

const (
	notHere  where = iota
	inPool         // reserved, never issued
	inMemory       // issued, not begun
)

func (t *issuedTable) find(id string) (Record, where) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n, ok := t.recs[id]; ok {
		return n.rec, inMemory
	}
	if slices.Contains(t.pool, id) {
		return Record{}, inPool
	}
	return Record{}, notHere
}

// put keeps an issued request, evicting the oldest beyond maxIssued. The
// scan for it runs only past the bound, which takes thousands of
// preflights never committed.
func (t *issuedTable) put(r Record) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.recs == nil {
		t.recs = map[string]issuedNote{}
	}
	t.seq++
	t.recs[r.RequestID] = issuedNote{r, t.seq}
	if len(t.recs) > maxIssued {
		oldest, low := "", t.seq
		for id, n := range t.recs {
			if n.seq <= low {
				oldest, low = id, n.seq
			}
		}
		delete(t.recs, oldest)
	}
}

// remove forgets an issued request. With toPool its id goes back to the
// pool: it was never answered, so handing it out again is safe.
func (t *issuedTable) remove(id string, toPool bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.recs[id]; !ok {
		return
	}
	delete(t.recs, id)
	if toPool {
		t.pool = append(t.pool, id)
	}
}

// fill adds reserved ids to the pool.
func (t *issuedTable) fill(ids []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pool = append(t.pool, ids...)
}

// pop takes a reserved id from the pool, if there is one.
func (t *issuedTable) pop() (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(t.pool)
	if n == 0 {
		return "", false
	}
	id := t.pool[n-1]
	t.pool = t.pool[:n-1]
	return id, true
}

// prune forgets the issued requests whose first-execution window has closed
// as of now.
func (t *issuedTable) prune(now time.Time) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for id, r := range t.recs {
		if expired(r.rec, now) {
			delete(t.recs, id)
			n++
		}
	}
	return n
}

// takeID returns a new request id whose reservation is already durable,
// reserving a new batch first when the pool is empty.
func (l *Ledger) takeID(ctx context.Context) (string, error) {
	if err := l.usable(ctx); err != nil {
		return "", err
	}
	l.fill.Lock()
	defer l.fill.Unlock()
	if id, ok := l.iss.pop(); ok {
		return id, nil
	}
	ids := make([]string, 0, idPoolSize)
	err := l.update(ctx, "reserve", func(tx *bolt.Tx) error {
		ids = ids[:0]
		now := l.now()
		for range idPoolSize {
			id, err := l.ids.reserve(tx, now)
			if err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	l.iss.fill(ids[1:])
	return ids[0], nil
}

// admitIssued is [Ledger.admitAs] for id, a request issued by this process
// (r) or an id still in the pool. Begin writes the executing record, the
// request's first record on disk, and then forgets the issued one.
func (l *Ledger) admitIssued(ctx context.Context, id string, r Record, at where, scope Scope, begin bool, cr *Creation) (Record, error) {
	if err := l.usable(ctx); err != nil {
		return Record{}, err
	}
	if at == inPool {
		return Record{}, fmt.Errorf("%w: %s", ErrUnknownRequest, id)
	}
	now := l.now()
	if err := admissible(r, scope, now); err != nil {
		return r, err
	}
	if !begin {
		return r, nil
	}
	r.Status = StatusExecuting
	r.StartedAt = now
	r.Creation = cr
	err := l.update(ctx, "begin", func(tx *bolt.Tx) error {
		if _, found, err := getRecord(tx, r.RequestID); err != nil {
			return err
		} else if found {
			return fmt.Errorf("%w: %s", ErrRequestExists, r.RequestID)
		}
		return putRecord(tx, r)
	})
	if err != nil {
		return Record{}, err
	}
	l.iss.remove(r.RequestID, false)
	return r, nil
}

// notBegun refuses a step that needs an executing request for one that is
// only issued (after a latched failure, which is answered first).
func (l *Ledger) notBegun(ctx context.Context, id string) error {
	if err := l.usable(ctx); err != nil {
		return err
	}
	if _, at := l.iss.find(id); at == inMemory {
		return fmt.Errorf("%w: %s is %s, not executing", ErrBadTransition, id, StatusIssued)
	}
	return nil
}
