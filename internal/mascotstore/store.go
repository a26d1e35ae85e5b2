package mascotstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Files reads and writes whole workspace files (the kernel's getFile and
// putFile). Read returns found false, without an error, for a file that
// does not exist.
type Files interface {
	Read(ctx context.Context, path string) (data []byte, found bool, err error)
	Write(ctx context.Context, path string, data []byte) error
}

// Options configure a Store; the zero values are the defaults.
type Options struct {
	Logger *slog.Logger
	// Now is the clock (time.Now).
	Now func() time.Time
	// EventCap and AnalyticsCap bound each client's pending display events
	// and analytics records (DefaultEventCap, DefaultAnalyticsCap); the
	// oldest is dropped past them.
	EventCap, AnalyticsCap int
	// MaxAnalyticsBytes is the analytics file's size that rotates it
	// (MaxAnalyticsBytes).
	MaxAnalyticsBytes int
	// AnalyticsBatch and AnalyticsEvery: analytics lines are appended when
	// this many are pending, or this long after the first of them
	// (DefaultAnalyticsBatch, DefaultAnalyticsEvery), or at Settle. Each
	// append reads and rewrites the file, so one per call would cost a
	// busy server more than the calls.
	AnalyticsBatch int
	AnalyticsEvery time.Duration
	// IOTimeout bounds one storage call (DefaultIOTimeout): a batch is
	// written for every caller in it, so no one caller's context bounds it.
	IOTimeout time.Duration
}

// Defaults of Options.
const (
	DefaultEventCap     = 16
	DefaultAnalyticsCap = 256
	DefaultIOTimeout    = 10 * time.Second

	DefaultAnalyticsBatch = 64
	DefaultAnalyticsEvery = 2 * time.Second
)

// Store keeps the mascot's files for one process. Its methods are safe
// for concurrent use.
type Store struct {
	files Files
	opt   Options

	bal balanceWriter

	mu       sync.Mutex
	lastSeq  int64
	events   map[string]*eventQueue
	records  map[string]*recordQueue
	order    []string // clients with pending records, in turn
	draining bool     // the analytics appender runs
	// displaying: the display writer runs.
	displaying bool
	pendingN   int // analytics lines pending, all clients
	wake       chan struct{}
	settling   int // Settle calls waiting: the appender does not wait
	idle       *sync.Cond
	dropped    Dropped
}

// Dropped counts what the bounded queues let go.
type Dropped struct{ Events, Records int64 }

// New returns a Store writing through files.
func New(files Files, opt Options) *Store {
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.EventCap <= 0 {
		opt.EventCap = DefaultEventCap
	}
	if opt.AnalyticsCap <= 0 {
		opt.AnalyticsCap = DefaultAnalyticsCap
	}
	if opt.MaxAnalyticsBytes <= 0 {
		opt.MaxAnalyticsBytes = MaxAnalyticsBytes
	}
	if opt.AnalyticsBatch <= 0 {
		opt.AnalyticsBatch = DefaultAnalyticsBatch
	}
	if opt.AnalyticsEvery <= 0 {
		opt.AnalyticsEvery = DefaultAnalyticsEvery
	}
	if opt.IOTimeout <= 0 {
		opt.IOTimeout = DefaultIOTimeout
	}
	s := &Store{files: files, opt: opt, events: map[string]*eventQueue{}, records: map[string]*recordQueue{}, wake: make(chan struct{}, 1)}
	s.idle = sync.NewCond(&s.mu)
	s.bal.s = s
	return s
}

func (s *Store) ioContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), s.opt.IOTimeout)
}

func (s *Store) nowMs() int64 { return s.opt.Now().UnixMilli() }

// Stats reads puppyStats.json as it is now.
func (s *Store) Stats(ctx context.Context) (Stats, error) {
	data, found, err := s.files.Read(ctx, StatsPath)
	if err != nil {
		return Stats{}, fmt.Errorf("read %s: %w", StatsPath, err)
	}
	if !found {
		return Stats{}, nil
	}
	st, err := ParseStats(data)
	if err == nil {
		s.bal.mu.Lock()
		s.bal.known = st
		s.bal.mu.Unlock()
	}
	return st, err
}

// Earn adds one coin for a call of action ("tool/action") and waits until
// the write that carries it is done (or ctx ends: the coin is still
// written with its batch). It returns the stats that write left.
func (s *Store) Earn(ctx context.Context, action string) (Stats, error) {
	b := s.bal.enqueue(func(b *batch) { b.earn++; b.lastAction = action })
	return b.wait(ctx, nil)
}

// ErrNotWritten marks a balance update that failed before anything was
// written (the file could not be read, or is not upstream's shape).
var ErrNotWritten = errors.New("mascot balance not written")

// ErrInsufficient is a purchase the balance could not pay for at commit.
type ErrInsufficient struct{ Need, Have int64 }

func (e *ErrInsufficient) Error() string {
	return fmt.Sprintf("the balance is %d, the item costs %d", e.Have, e.Need)
}

// Spend takes cost coins for item, in the same writer as the earnings, and
// waits for its write. A balance below cost at that moment is
// *ErrInsufficient, with nothing written for it. The returned stats are
// those its write left (LastPurchase is this purchase).
func (s *Store) Spend(ctx context.Context, itemID string, cost int64) (Stats, error) {
	sp := &spend{item: itemID, cost: cost}
	b := s.bal.enqueue(func(b *batch) { b.spends = append(b.spends, sp) })
	return b.wait(ctx, sp)
}

// batch is what one write of puppyStats.json carries.
type batch struct {
	earn       int64
	lastAction string
	spends     []*spend
	done       chan struct{}
	after      Stats
	err        error
}

type spend struct {
	item  string
	cost  int64
	after Stats
	err   error
}

func (b *batch) wait(ctx context.Context, sp *spend) (Stats, error) {
	select {
	case <-b.done:
	case <-ctx.Done():
		return Stats{}, fmt.Errorf("mascot balance: %w", context.Cause(ctx))
	}
	if b.err != nil {
		return Stats{}, b.err
	}
	if sp != nil {
		return sp.after, sp.err
	}
	return b.after, nil
}

// balanceWriter is the one writer of puppyStats.json: calls add to the
// pending batch; one goroutine at a time writes batches until none is
// pending (a group commit).
type balanceWriter struct {
	s        *Store
	mu       sync.Mutex
	pending  *batch
	flushing bool
	writes   int64 // putFile calls made, for tests and benchmarks
	known    Stats // the stats last read or written
}

func (w *balanceWriter) enqueue(add func(*batch)) *batch {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pending == nil {
		w.pending = &batch{done: make(chan struct{})}
	}
	b := w.pending
	add(b)
	if !w.flushing {
		w.flushing = true
		go w.flush()
	}
	return b
}

func (w *balanceWriter) flush() {
	for {
		w.mu.Lock()
		b := w.pending
		w.pending = nil
		if b == nil {
			w.flushing = false
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
		w.apply(b)
		close(b.done)
	}
}

// apply reads the file, adds the batch and writes it once.
func (w *balanceWriter) apply(b *batch) {
	ctx, cancel := w.s.ioContext()
	defer cancel()
	st, err := w.s.Stats(ctx)
	if err != nil {
		b.err = fmt.Errorf("%w: %w", ErrNotWritten, err)
		w.s.opt.Logger.Warn("mascot balance not updated", "err", err, "coins", b.earn, "purchases", len(b.spends))
		return
	}
	now := w.s.nowMs()
	st.TotalCalls = min(st.TotalCalls+b.earn, MaxCount)
	st.Balance = min(st.Balance+b.earn, MaxCount)
	if b.earn > 0 {
		st.LastAction = b.lastAction
	}
	bought := 0
	for _, sp := range b.spends {
		if st.Balance < sp.cost {
			sp.err = &ErrInsufficient{Need: sp.cost, Have: st.Balance}
			continue
		}
		st.Balance -= sp.cost
		st.Spent += sp.cost
		st.LastAction = "buy:" + sp.item
		st.LastPurchase = &Purchase{ItemID: sp.item, Cost: sp.cost, At: now, SpentAfter: st.Spent}
		sp.after = st
		bought++
	}
	if b.earn == 0 && bought == 0 {
		b.after = st
		return // only refused purchases: nothing to write
	}
	st.UpdatedAt = now
	w.mu.Lock()
	w.writes++
	w.known = st
	w.mu.Unlock()
	if err := w.s.files.Write(ctx, StatsPath, st.Marshal()); err != nil {
		b.err = fmt.Errorf("write %s: %w", StatsPath, err)
		w.s.opt.Logger.Warn("mascot balance not updated", "err", err, "coins", b.earn, "purchases", bought)
		return
	}
	for _, sp := range b.spends {
		if sp.err == nil {
			sp.after.TotalCalls, sp.after.UpdatedAt = st.TotalCalls, st.UpdatedAt
		}
	}
	b.after = st
}

// Known is the balance as this Store last wrote or read it (for display
// events, which do not read the file).
func (s *Store) Known() Stats {
	s.bal.mu.Lock()
	defer s.bal.mu.Unlock()
	return s.bal.known
}

// BalanceWrites counts the writes of puppyStats.json this Store made.
func (s *Store) BalanceWrites() int64 {
	s.bal.mu.Lock()
	defer s.bal.mu.Unlock()
	return s.bal.writes
}

// nextSeq is a strictly growing event sequence: the time in milliseconds,
// or one more than the last.
func (s *Store) nextSeq(now int64) int64 {
	s.lastSeq = max(now, s.lastSeq+1)
	return s.lastSeq
}

// eventQueue is a client's pending display events.
type eventQueue struct {
	pending []Event
}

// Event queues e for the display writer, without waiting. The file holds
// one event, the latest, so the writer writes the newest pending of every
// client's and lets the others go: a burst of calls from any number of
// clients costs one write while one is under way.
func (s *Store) Event(client string, e Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.nowMs()
	e.Seq, e.Ts = s.nextSeq(now), now
	q, ok := s.events[client]
	if !ok {
		q = &eventQueue{}
		s.events[client] = q
	}
	if len(q.pending) >= s.opt.EventCap {
		q.pending = q.pending[1:]
		s.dropped.Events++
	}
	q.pending = append(q.pending, e)
	if !s.displaying {
		s.displaying = true
		go s.writeEvents()
	}
}

func (s *Store) writeEvents() {
	for {
		s.mu.Lock()
		var newest *Event
		for c, q := range s.events {
			for i := range q.pending {
				if newest == nil || q.pending[i].Seq > newest.Seq {
					e := q.pending[i]
					newest = &e
				}
			}
			s.dropped.Events += int64(len(q.pending))
			delete(s.events, c)
		}
		if newest == nil {
			s.displaying = false
			s.idle.Broadcast()
			s.mu.Unlock()
			return
		}
		s.dropped.Events-- // the one written
		s.mu.Unlock()
		data, _ := json.Marshal(newest)
		ctx, cancel := s.ioContext()
		if err := s.files.Write(ctx, EventsPath, data); err != nil {
			s.opt.Logger.Debug("mascot display event not stored", "err", err)
		}
		cancel()
	}
}

// recordQueue is a client's pending analytics records.
type recordQueue struct {
	pending []Record
}

// Record queues r for the analytics appender, without waiting.
func (s *Store) Record(client string, r Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.nowMs()
	r.Seq, r.Ts = now, now
	if r.ParamKeys == nil {
		r.ParamKeys = []string{}
	}
	q, ok := s.records[client]
	if !ok {
		q = &recordQueue{}
		s.records[client] = q
		s.order = append(s.order, client)
	}
	if len(q.pending) >= s.opt.AnalyticsCap {
		q.pending = q.pending[1:]
		s.dropped.Records++
		s.pendingN--
	}
	q.pending = append(q.pending, r)
	s.pendingN++
	if s.pendingN >= s.opt.AnalyticsBatch {
		s.nudge()
	}
	if !s.draining {
		s.draining = true
		go s.appendRecords()
	}
}

// appendRecords writes what every client has pending, a batch at a time,
// each client's records in order and the clients in turn.
func (s *Store) appendRecords() {
	t := time.NewTimer(s.opt.AnalyticsEvery)
	defer t.Stop()
	for {
		s.mu.Lock()
		urgent := s.settling > 0 || s.pendingN >= s.opt.AnalyticsBatch
		s.mu.Unlock()
		if !urgent {
			select {
			case <-t.C:
			case <-s.wake:
			}
		}
		s.mu.Lock()
		s.pendingN = 0
		var lines []Record
		for _, c := range s.order {
			lines = append(lines, s.records[c].pending...)
			delete(s.records, c)
		}
		s.order = s.order[:0]
		if len(lines) == 0 {
			s.draining = false
			s.idle.Broadcast()
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		if err := s.appendLines(lines); err != nil {
			s.opt.Logger.Debug("mascot analytics not stored", "err", err, "records", len(lines))
		}
		t.Reset(s.opt.AnalyticsEvery)
	}
}

// nudge wakes the analytics appender; s.mu is held.
func (s *Store) nudge() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *Store) appendLines(recs []Record) error {
	ctx, cancel := s.ioContext()
	defer cancel()
	var add []byte
	for i, r := range recs {
		if i > 0 {
			add = append(add, '\n')
		}
		b, _ := json.Marshal(r)
		add = append(add, b...)
	}
	old, found, err := s.files.Read(ctx, AnalyticsPath)
	if err != nil {
		return err
	}
	if !found || len(old) == 0 {
		return s.files.Write(ctx, AnalyticsPath, add)
	}
	if len(old)+1+len(add) > s.opt.MaxAnalyticsBytes {
		if err := s.files.Write(ctx, RotatedPath, old); err != nil {
			return err
		}
		return s.files.Write(ctx, AnalyticsPath, add)
	}
	next := make([]byte, 0, len(old)+1+len(add))
	next = append(append(append(next, old...), '\n'), add...)
	return s.files.Write(ctx, AnalyticsPath, next)
}

// Settle waits until every queued event and record has been written or
// let go (tests, and a server going down), or ctx ends.
func (s *Store) Settle(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() {
		s.mu.Lock()
		s.idle.Broadcast()
		s.mu.Unlock()
	})
	defer stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settling++
	defer func() { s.settling-- }()
	s.nudge()
	for s.displaying || s.draining {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		s.idle.Wait()
	}
	return nil
}

// Dropped reports what the bounded queues let go so far.
func (s *Store) Dropped() Dropped {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped
}

// IsInsufficient reports whether err is a purchase the balance could not
// pay for.
func IsInsufficient(err error) (*ErrInsufficient, bool) {
	var e *ErrInsufficient
	return e, errors.As(err, &e)
}
