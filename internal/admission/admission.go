package admission

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Lane is the admission lane of a call.
type Lane int

const (
	// LaneRead is for owned read actions (concurrency 4).
	LaneRead Lane = iota + 1
	// LaneWrite is the FIFO lane of mutations, external effects, extension
	// calls and app entry points (concurrency 1).
	LaneWrite
	// LaneDelegated is a front's call that the authority admits: counted in
	// flight here, but queued in no local lane.
	LaneDelegated
)

func (l Lane) String() string {
	switch l {
	case LaneRead:
		return "read"
	case LaneWrite:
		return "write"
	case LaneDelegated:
		return "delegated"
	}
	return fmt.Sprintf("Lane(%d)", int(l))
}

// Limits are the numbers admission works with; [DefaultLimits] has the
// ones Sisyphus runs with.
type Limits struct {
	ReadConcurrency  int
	WriteConcurrency int
	MaxInFlight      int
	// MaxCallerInFlight caps one caller's calls in flight, so that one
	// client cannot take every place (default: three quarters of
	// MaxInFlight).
	MaxCallerInFlight int
	// ReadTimeout is the deadline of an owned read, from when it starts
	// executing; past it the read is stopped and its kernel call aborted.
	ReadTimeout time.Duration
	// Task records.
	TaskTTL        time.Duration
	MaxTaskRecords int
	MaxTaskBytes   int64
	MaxResultBytes int64
	// ResultWait is how long a result query waits for a live task to settle
	// before answering without the result.
	ResultWait time.Duration
	// Read budget of one owned read action.
	ReadCalls int
	ReadBytes int64
}

// DefaultLimits returns the limits Sisyphus runs with: four owned reads
// and one write at a time (writes keep their order), and caps on calls in
// flight, task records and read budgets.
func DefaultLimits() Limits {
	return Limits{
		ReadConcurrency: 4, WriteConcurrency: 1, MaxInFlight: 128, MaxCallerInFlight: 96, ReadTimeout: 30 * time.Second,
		TaskTTL: 10 * time.Minute, MaxTaskRecords: 128, MaxTaskBytes: 8 << 20, MaxResultBytes: 1 << 20,
		ResultWait: 1500 * time.Millisecond,
		ReadCalls:  128, ReadBytes: 8 << 20,
	}
}

// Snapshot is the permission state a call executes under.
type Snapshot struct {
	// Version identifies the permissions and the tool configuration. A task
	// result recorded under another version answers access_changed.
	Version string
	// Allow reports whether the call's principal may run tool/action; nil
	// allows everything.
	Allow func(tool, action string) bool
	// Policy is the configuration the call runs under, for the layer that
	// applies it (opaque here).
	Policy any
}

// Allowed reports whether s allows tool/action.
func (s Snapshot) Allowed(tool, action string) bool { return s.Allow == nil || s.Allow(tool, action) }

// Permissions loads the permission snapshot of a principal. It is called
// when a call starts executing (after its wait in a lane), so a call queued
// before a change runs under the new permissions.
type Permissions func(ctx context.Context, principal string) (Snapshot, error)

// Config configures a Controller.
type Config struct {
	Limits Limits // zero fields take the defaults
	// Permissions, nil: everything is allowed under version "".
	Permissions Permissions
	Now         func() time.Time
}

// Errors of admission. Each is answered without running the call.
var (
	ErrQueueFull    = errors.New("admission: too many calls in flight")
	ErrDraining     = errors.New("admission: the server is draining")
	ErrCancelled    = errors.New("admission: the call was cancelled")
	ErrTaskConflict = errors.New("admission: taskId names a live or retained task")
	ErrInvalidTask  = errors.New("admission: taskId must be a UUID")
	// ErrCallerFull: this caller has MaxCallerInFlight calls in flight.
	ErrCallerFull = errors.New("admission: this client has too many calls in flight")
	// ErrReadTimeout is the cause of a read stopped at its deadline.
	ErrReadTimeout = errors.New("admission: the read passed its deadline")
)

// Controller admits calls. It is safe for concurrent use.
type Controller struct {
	lim   Limits
	perms Permissions
	now   func() time.Time

	mu       sync.Mutex
	inFlight int
	byCaller map[string]int // calls in flight per caller
	writes   int            // calls in flight that are not reads
	lanes    map[Lane]*lane
	calls    map[*Call]struct{}
	draining bool
	idle     chan struct{} // closed and replaced when inFlight reaches 0
	// writesIdle is closed and replaced when writes reaches 0.
	writesIdle chan struct{}
	tasks      taskStore

	ev events
}

// lane grants a free slot to the waiting caller that runs the fewest calls
// in it (round-robin among equals), FIFO within one caller. In a lane of
// more than one slot no caller holds them all: one stays free for the other
// callers, so a client that floods a lane with slow calls never makes
// another client wait for one of them to end.
type lane struct {
	limit     int
	perCaller int // slots one caller may hold
	running   int
	waiting   int
	runningBy map[string]int        // caller → its calls holding a slot
	queues    map[string]*list.List // caller → its waiting *Call, FIFO
	ring      list.List             // callers with waiting calls, in turn order
	inRing    map[string]*list.Element
}

func newLane(limit int) *lane {
	return &lane{limit: limit, perCaller: max(1, limit-1), runningBy: map[string]int{}, queues: map[string]*list.List{}, inRing: map[string]*list.Element{}}
}

// grant gives call a slot.
func (l *lane) grant(call *Call) {
	l.running++
	l.runningBy[call.req.Caller]++
	call.granted = true
}

// free returns call's slot.
func (l *lane) free(call *Call) {
	l.running--
	if l.runningBy[call.req.Caller]--; l.runningBy[call.req.Caller] <= 0 {
		delete(l.runningBy, call.req.Caller)
	}
	call.granted = false
}

// push queues call behind its caller's earlier calls.
func (l *lane) push(call *Call) {
	caller := call.req.Caller
	q := l.queues[caller]
	if q == nil {
		q = list.New()
		l.queues[caller] = q
	}
	call.waiter = q.PushBack(call)
	if _, ok := l.inRing[caller]; !ok {
		l.inRing[caller] = l.ring.PushBack(caller)
	}
	l.waiting++
}

// remove takes a waiting call out of its queue.
func (l *lane) remove(call *Call) {
	caller := call.req.Caller
	if q := l.queues[caller]; q != nil {
		q.Remove(call.waiter)
		l.waiting--
		if q.Len() == 0 {
			delete(l.queues, caller)
			l.ring.Remove(l.inRing[caller])
			delete(l.inRing, caller)
		}
	}
	call.waiter = nil
}

// next pops the oldest call of the waiting caller with the fewest calls
// running (the first in turn order among equals), and moves that caller to
// the end of the turn order.
func (l *lane) next() *Call {
	var pick *list.Element
	for e := l.ring.Front(); e != nil; e = e.Next() {
		n := l.runningBy[e.Value.(string)]
		if n < l.perCaller && (pick == nil || n < l.runningBy[pick.Value.(string)]) {
			pick = e
		}
	}
	if pick == nil {
		return nil
	}
	caller := pick.Value.(string)
	call := l.queues[caller].Front().Value.(*Call)
	l.remove(call)
	if e, ok := l.inRing[caller]; ok {
		l.ring.MoveToBack(e)
	}
	return call
}

// New returns a controller.
func New(cfg Config) *Controller {
	d := DefaultLimits()
	l := cfg.Limits
	l.ReadConcurrency = positiveOr(l.ReadConcurrency, d.ReadConcurrency)
	l.WriteConcurrency = positiveOr(l.WriteConcurrency, d.WriteConcurrency)
	l.MaxInFlight = positiveOr(l.MaxInFlight, d.MaxInFlight)
	l.MaxCallerInFlight = positiveOr(l.MaxCallerInFlight, max(1, l.MaxInFlight*3/4))
	l.ReadTimeout = positiveOr(l.ReadTimeout, d.ReadTimeout)
	l.TaskTTL = positiveOr(l.TaskTTL, d.TaskTTL)
	l.MaxTaskRecords = positiveOr(l.MaxTaskRecords, d.MaxTaskRecords)
	l.MaxTaskBytes = positiveOr(l.MaxTaskBytes, d.MaxTaskBytes)
	l.MaxResultBytes = positiveOr(l.MaxResultBytes, d.MaxResultBytes)
	l.ResultWait = positiveOr(l.ResultWait, d.ResultWait)
	l.ReadCalls = positiveOr(l.ReadCalls, d.ReadCalls)
	l.ReadBytes = positiveOr(l.ReadBytes, d.ReadBytes)
	perms := cfg.Permissions
	if perms == nil {
		perms = func(context.Context, string) (Snapshot, error) { return Snapshot{}, nil }
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	c := &Controller{lim: l, perms: perms, now: now,
		lanes: map[Lane]*lane{LaneRead: newLane(l.ReadConcurrency), LaneWrite: newLane(l.WriteConcurrency)},
		calls: map[*Call]struct{}{}, byCaller: map[string]int{}, idle: make(chan struct{}), writesIdle: make(chan struct{})}
	c.tasks.init()
	return c
}

// Limits returns the controller's limits.
func (c *Controller) Limits() Limits { return c.lim }

// Request describes a call at admission.
type Request struct {
	Lane      Lane
	Principal string
	// TaskID is the call's io.siyuan.sisyphus/taskId ("" without task
	// control); it must be a UUID (see [ValidTaskID]).
	TaskID       string
	Tool, Action string
	// Caller identifies the client for fairness (a legacy session, a
	// modern client's name, a front); "" is one anonymous caller.
	Caller string
}

// State is where a call is in its life.
type State string

// States of a call; the last three are terminal.
const (
	StateQueued     State = "queued"
	StateRunning    State = "running"
	StateCommitting State = "committing"
	StateCompleted  State = "completed"
	StateFailed     State = "failed"
	StateCancelled  State = "cancelled"
)

// Call is one admitted call. Start it, run it under Context, then Finish it.
type Call struct {
	c   *Controller
	req Request

	ready    chan struct{} // closed when a lane slot is granted
	cancelCh chan struct{} // closed on the first accepted cancellation
	done     chan struct{} // closed when the call settles

	cancelFlag atomic.Bool
	budget     *Budget

	execCtx    context.Context
	execCancel context.CancelCauseFunc
	stopTimer  func() bool // the read deadline's timer (nil otherwise)

	// Guarded by c.mu.
	state      State
	cause      error // why cancellation was requested
	committing bool
	granted    bool
	waiter     *list.Element
	snapshot   Snapshot
	finished   bool
	record     *record // terminal record, once settled with a result
}

// Admit counts a call in flight (or refuses it with ErrQueueFull, ErrDraining,
// ErrTaskConflict or ErrInvalidTask) and registers its taskId. parent is the
// context the call's execution context derives its values from; the
// execution context is not cancelled by parent (see [Call.Context]).
func (c *Controller) Admit(parent context.Context, req Request) (*Call, error) {
	if req.TaskID != "" && !ValidTaskID(req.TaskID) {
		c.ev.invalidTask.Add(1)
		return nil, ErrInvalidTask
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.draining:
		c.ev.refusedDraining.Add(1)
		return nil, ErrDraining
	case req.TaskID != "" && c.tasks.known(req.TaskID, c.now(), c.lim.TaskTTL):
		c.ev.taskConflict.Add(1)
		return nil, ErrTaskConflict
	case c.inFlight >= c.lim.MaxInFlight:
		c.ev.queueFull.Add(1)
		return nil, ErrQueueFull
	case c.byCaller[req.Caller] >= c.lim.MaxCallerInFlight:
		c.ev.queueFull.Add(1)
		return nil, ErrCallerFull
	}
	call := &Call{c: c, req: req, ready: make(chan struct{}), cancelCh: make(chan struct{}), done: make(chan struct{}), state: StateQueued}
	call.execCtx, call.execCancel = context.WithCancelCause(context.WithoutCancel(parent))
	if req.Lane == LaneRead {
		call.budget = &Budget{call: call, maxCalls: int64(c.lim.ReadCalls), maxBytes: c.lim.ReadBytes}
		c.ev.metered.Add(1)
	}
	c.inFlight++
	c.byCaller[req.Caller]++
	if req.Lane != LaneRead {
		c.writes++
	}
	c.calls[call] = struct{}{}
	if req.TaskID != "" {
		c.tasks.live[req.TaskID] = call
	}
	c.ev.admitted.Add(1)
	return call, nil
}

// Start waits for the call's lane (FIFO), then loads its permission
// snapshot. It fails with the cancellation cause (ErrCancelled, or
// ErrDraining when the server drains) if the call was cancelled before it
// could execute, or with the Permissions error. After a failure the call has
// not executed; Finish it all the same.
func (call *Call) Start(ctx context.Context) error {
	c := call.c
	c.mu.Lock()
	if call.cancelFlag.Load() {
		err := call.cause
		c.mu.Unlock()
		c.ev.cancelledQueued.Add(1)
		return err
	}
	l := c.lanes[call.req.Lane]
	queued := false
	if l != nil {
		// Behind the callers already waiting, unless it is this caller's
		// turn now (a slot may be free that they may not take).
		l.push(call)
		c.release(l)
		queued = !call.granted
	}
	c.mu.Unlock()
	if queued {
		select {
		case <-call.ready:
		case <-call.cancelCh:
			c.mu.Lock()
			if call.waiter != nil {
				l.remove(call)
			}
			err := call.cause
			c.mu.Unlock()
			c.ev.cancelledQueued.Add(1)
			return err // a slot granted in the meantime is released by Finish
		}
	}
	snap, err := c.perms(call.execCtx, call.req.Principal)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if call.cancelFlag.Load() {
		c.ev.cancelledQueued.Add(1)
		return call.cause
	}
	call.snapshot = snap
	call.state = StateRunning
	if call.req.Lane == LaneRead {
		// The deadline runs from execution, not from the wait in the lane.
		t := time.AfterFunc(c.lim.ReadTimeout, func() { call.execCancel(ErrReadTimeout) })
		call.stopTimer = t.Stop
	}
	return nil
}

// TimedOut reports whether a read was stopped at its deadline.
func (call *Call) TimedOut() bool { return errors.Is(context.Cause(call.execCtx), ErrReadTimeout) }

// Snapshot is the permission snapshot Start loaded.
func (call *Call) Snapshot() Snapshot {
	call.c.mu.Lock()
	defer call.c.mu.Unlock()
	return call.snapshot
}

// Context is the call's execution context: it carries the values of the
// context given to Admit but is not cancelled by it. A read's context ends
// on cancellation and at the read's deadline, aborting its kernel call (a
// read has no effect to leave half-done), so the read gives its slot back
// at once. A write's context is never cancelled: a write stops only at its
// commit barrier, and no kernel write is interrupted half-way. For a
// delegated call it ends on cancellation, so that the delegate relays it.
func (call *Call) Context() context.Context { return call.execCtx }

// Budget is the read budget of a read call (nil for other lanes).
func (call *Call) Budget() *Budget { return call.budget }

// Lane returns the call's lane.
func (call *Call) Lane() Lane { return call.req.Lane }

// TaskID returns the call's taskId.
func (call *Call) TaskID() string { return call.req.TaskID }

// Cancel requests cancellation with ErrCancelled as the cause; see
// [Call.CancelWith].
func (call *Call) Cancel() bool { return call.CancelWith(ErrCancelled) }

// CancelWith requests cancellation and reports whether it was accepted:
// true for a queued or running call whose commit has not started (it stops
// before executing, at its next checkpoint, or at its commit barrier), false
// once its commit started or it settled. Acceptance stops subsequent steps;
// it does not interrupt a kernel call in progress.
func (call *Call) CancelWith(cause error) bool {
	c := call.c
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ev.cancelRequests.Add(1)
	if call.finished || call.committing {
		c.ev.cancelRejected.Add(1)
		return false
	}
	if call.cancelFlag.Load() {
		return true
	}
	call.cause = cause
	call.cancelFlag.Store(true)
	close(call.cancelCh)
	if call.req.Lane == LaneDelegated || call.req.Lane == LaneRead {
		call.execCancel(cause)
	}
	c.ev.cancelAccepted.Add(1)
	return true
}

// CancelRequested reports whether a cancellation was accepted.
func (call *Call) CancelRequested() bool { return call.cancelFlag.Load() }

// EnterCommit is the call's commit barrier: it fails with the cancellation
// cause if cancellation was accepted; otherwise it marks the call
// committing, after which cancellation is rejected.
func (call *Call) EnterCommit() error {
	c := call.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if call.cancelFlag.Load() {
		c.ev.cancelledAtBarrier.Add(1)
		return call.cause
	}
	call.committing = true
	call.state = StateCommitting
	return nil
}

// Outcome is how a call settled.
type Outcome struct {
	// Result is the call's tool result as sent on the wire (a JSON object);
	// nil when there is none to keep: an input_required round, which is not
	// a terminal result, or a protocol-level failure.
	Result []byte
	// IsError tells a tool error result.
	IsError bool
	// Cancelled tells that the call stopped because it was cancelled.
	Cancelled bool
}

// Finish settles the call: it releases its lane slot and its place in
// flight, and keeps its result for task control when it has a taskId.
// Calling it twice is a no-op.
func (call *Call) Finish(out Outcome) {
	c := call.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if call.finished {
		return
	}
	call.finished = true
	switch {
	case out.Cancelled:
		call.state = StateCancelled
		c.ev.cancelled.Add(1)
	case out.IsError:
		call.state = StateFailed
		c.ev.failed.Add(1)
	default:
		call.state = StateCompleted
		c.ev.completed.Add(1)
	}
	if call.waiter != nil {
		c.lanes[call.req.Lane].remove(call)
	}
	if call.granted {
		l := c.lanes[call.req.Lane]
		l.free(call)
		c.release(l)
	}
	if call.stopTimer != nil {
		call.stopTimer()
	}
	c.inFlight--
	if c.byCaller[call.req.Caller]--; c.byCaller[call.req.Caller] == 0 {
		delete(c.byCaller, call.req.Caller)
	}
	if call.req.Lane != LaneRead {
		if c.writes--; c.writes == 0 {
			close(c.writesIdle)
			c.writesIdle = make(chan struct{})
		}
	}
	delete(c.calls, call)
	if id := call.req.TaskID; id != "" {
		delete(c.tasks.live, id)
		if out.Result != nil {
			call.record = c.tasks.keep(call, out.Result, c.lim, c.now(), &c.ev)
		}
	}
	call.execCancel(context.Canceled)
	close(call.done)
	if c.inFlight == 0 {
		close(c.idle)
		c.idle = make(chan struct{})
	}
}

// release grants l's free slots to the next waiters in turn. c.mu is held.
func (c *Controller) release(l *lane) {
	for l.running < l.limit {
		w := l.next()
		if w == nil {
			return
		}
		l.grant(w)
		close(w.ready)
	}
}

// Done is closed when the call settles.
func (call *Call) Done() <-chan struct{} { return call.done }

// Drain stops admitting (new calls get ErrDraining), cancels every call that
// has not started its commit (with ErrDraining as the cause: queued calls
// stop before executing, reads at once, their kernel calls aborted, writes
// at their commit barrier), and waits until no write is in flight or ctx
// ends. Writes already committing finish; reads are never waited for.
func (c *Controller) Drain(ctx context.Context) error {
	c.mu.Lock()
	c.draining = true
	calls := make([]*Call, 0, len(c.calls))
	for call := range c.calls {
		calls = append(calls, call)
	}
	c.mu.Unlock()
	for _, call := range calls {
		call.CancelWith(ErrDraining)
	}
	for {
		c.mu.Lock()
		n, idle := c.writes, c.writesIdle
		c.mu.Unlock()
		if n == 0 {
			return nil
		}
		select {
		case <-idle:
		case <-ctx.Done():
			return fmt.Errorf("admission: %d writes still in flight: %w", n, ctx.Err())
		}
	}
}

// Draining reports whether Drain was called.
func (c *Controller) Draining() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.draining
}

// ValidTaskID reports whether s is a UUID in its canonical textual form
// (8-4-4-4-12 hex digits, either case).
func ValidTaskID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch i {
		case 8, 13, 18, 23:
			if ch != '-' {
				return false
			}
		default:
			if !(ch >= '0' && ch <= '9' || ch >= 'a' && ch <= 'f' || ch >= 'A' && ch <= 'F') {
				return false
			}
		}
	}
	return true
}

// positiveOr is v, or def when v is not positive (a limit left unset).
func positiveOr[T int | int64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}
