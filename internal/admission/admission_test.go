package admission

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/failure"
)

var bg = context.Background()

func uuid(n int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012x", n) }

func admit(t *testing.T, c *Controller, req Request) *Call {
	t.Helper()
	call, err := c.Admit(bg, req)
	if err != nil {
		t.Fatalf("admit %+v: %v", req, err)
	}
	return call
}

// started starts call in the background and reports Start's error.
func started(call *Call) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- call.Start(bg) }()
	return ch
}

func waitErr(t *testing.T, ch <-chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(5 * time.Second):
		t.Fatal("Start did not return")
	}
	return nil
}

func blocked(t *testing.T, ch <-chan error) {
	t.Helper()
	select {
	case err := <-ch:
		t.Fatalf("Start returned %v, want it queued", err)
	case <-time.After(30 * time.Millisecond):
	}
}

func TestReadLaneConcurrencyFour(t *testing.T) {
	c := New(Config{})
	var calls []*Call
	for i := 0; i < 4; i++ {
		call := admit(t, c, Request{Lane: LaneRead, Caller: fmt.Sprint("caller-", i)})
		if err := waitErr(t, started(call)); err != nil {
			t.Fatal(err)
		}
		calls = append(calls, call)
	}
	fifth := admit(t, c, Request{Lane: LaneRead})
	ch := started(fifth)
	blocked(t, ch)
	st := c.Stats()
	if st.Lanes["read"].Running != 4 || st.Lanes["read"].Queued != 1 || st.InFlight != 5 {
		t.Fatalf("stats %+v", st.Lanes)
	}
	// A write does not wait for reads.
	w := admit(t, c, Request{Lane: LaneWrite})
	if err := waitErr(t, started(w)); err != nil {
		t.Fatal(err)
	}
	w.Finish(Outcome{})
	calls[0].Finish(Outcome{})
	if err := waitErr(t, ch); err != nil {
		t.Fatal(err)
	}
	for _, call := range append(calls[1:], fifth) {
		call.Finish(Outcome{})
	}
	if st := c.Stats(); st.InFlight != 0 || st.Lanes["read"].Running != 0 {
		t.Fatalf("after settling: %+v", st)
	}
}

func TestWriteLaneIsFIFO(t *testing.T) {
	c := New(Config{})
	first := admit(t, c, Request{Lane: LaneWrite})
	if err := waitErr(t, started(first)); err != nil {
		t.Fatal(err)
	}
	var order []int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		call := admit(t, c, Request{Lane: LaneWrite})
		ch := started(call)
		blocked(t, ch) // queued in admission order
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := <-ch; err != nil {
				t.Error(err)
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			if c.Stats().Lanes["write"].Running != 1 {
				t.Error("two writes running")
			}
			call.Finish(Outcome{})
		}()
	}
	first.Finish(Outcome{})
	wg.Wait()
	for i, v := range order {
		if v != i {
			t.Fatalf("order %v", order)
		}
	}
}

func TestQueueFullAt129(t *testing.T) {
	c := New(Config{})
	var calls []*Call
	for i := 0; i < 128; i++ {
		calls = append(calls, admit(t, c, Request{Lane: LaneWrite, TaskID: uuid(i), Caller: fmt.Sprint(i % 4)}))
	}
	if _, err := c.Admit(bg, Request{Lane: LaneRead}); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("129th: %v", err)
	}
	// Refused without being registered: its taskId stays free.
	calls[0].Finish(Outcome{})
	if _, err := c.Admit(bg, Request{Lane: LaneRead, TaskID: uuid(1000)}); err != nil {
		t.Fatalf("after one settled: %v", err)
	}
	if got := c.Stats().Events["queueFull"]; got != 1 {
		t.Fatalf("queueFull events %d", got)
	}
}

func TestCancelQueuedCallNeverRuns(t *testing.T) {
	c := New(Config{})
	running := admit(t, c, Request{Lane: LaneWrite})
	waitErr(t, started(running))
	queued := admit(t, c, Request{Lane: LaneWrite, TaskID: uuid(1)})
	ch := started(queued)
	blocked(t, ch)
	behind := admit(t, c, Request{Lane: LaneWrite})
	chBehind := started(behind)
	blocked(t, chBehind)

	r, err := c.Control(bg, "", uuid(1), OpCancel)
	if err != nil || !r.Found || r.Accepted == nil || !*r.Accepted || r.State != StateQueued {
		t.Fatalf("cancel reply %+v %v", r, err)
	}
	if err := waitErr(t, ch); !errors.Is(err, ErrCancelled) {
		t.Fatalf("cancelled queued call: %v", err)
	}
	queued.Finish(Outcome{Result: []byte(`{"cancelled":true}`), IsError: true, Cancelled: true})
	// The one behind it still waits for the running write, then runs.
	blocked(t, chBehind)
	running.Finish(Outcome{})
	if err := waitErr(t, chBehind); err != nil {
		t.Fatal(err)
	}
	behind.Finish(Outcome{})
	r, _ = c.Control(bg, "", uuid(1), OpStatus)
	if r.State != StateCancelled || !r.CancelRequested || !r.Settled {
		t.Fatalf("status %+v", r)
	}
}

func TestCancelRunningReadStopsAtCheckpoint(t *testing.T) {
	c := New(Config{})
	call := admit(t, c, Request{Lane: LaneRead, TaskID: uuid(2)})
	waitErr(t, started(call))
	b := call.Budget()
	if err := b.ChargeCall("/api/a"); err != nil {
		t.Fatal(err)
	}
	if !call.Cancel() {
		t.Fatal("cancel of a running read refused")
	}
	// Issue 9: a read's kernel call is aborted at once, so that it gives its
	// slot back instead of holding it until the kernel answers.
	if !errors.Is(context.Cause(call.Context()), ErrCancelled) {
		t.Fatalf("a cancelled read's execution context must end: %v", context.Cause(call.Context()))
	}
	if st := c.Stats(); st.CancelledRunningReads != 1 {
		t.Fatalf("cancelledRunningReads %d", st.CancelledRunningReads)
	}
	err := b.ChargeCall("/api/b")
	if !errors.Is(err, context.Canceled) || !errors.Is(err, ErrCancelled) {
		t.Fatalf("checkpoint: %v", err)
	}
	call.Finish(Outcome{Cancelled: true, IsError: true, Result: []byte(`{}`)})
	if st := c.Stats(); st.CancelledRunningReads != 0 || st.InFlight != 0 {
		t.Fatalf("after settle %+v", st)
	}
}

func TestCommitBarrier(t *testing.T) {
	c := New(Config{})
	t.Run("cancelled before the commit starts", func(t *testing.T) {
		call := admit(t, c, Request{Lane: LaneWrite})
		waitErr(t, started(call))
		if !call.Cancel() {
			t.Fatal("cancel refused")
		}
		if err := call.EnterCommit(); !errors.Is(err, ErrCancelled) {
			t.Fatalf("barrier: %v", err)
		}
		call.Finish(Outcome{Cancelled: true})
	})
	t.Run("cancellation rejected once committing", func(t *testing.T) {
		call := admit(t, c, Request{Lane: LaneWrite, TaskID: uuid(3)})
		waitErr(t, started(call))
		if err := call.EnterCommit(); err != nil {
			t.Fatal(err)
		}
		r, _ := c.Control(bg, "", uuid(3), OpCancel)
		if *r.Accepted || !r.Committing || r.State != StateCommitting || r.CancelRequested {
			t.Fatalf("cancel while committing: %+v", r)
		}
		call.Finish(Outcome{Result: []byte(`{"status":"committed"}`)})
		r, _ = c.Control(bg, "", uuid(3), OpResult)
		if r.State != StateCompleted || string(r.Result) != `{"status":"committed"}` || r.Committing {
			t.Fatalf("result %+v", r)
		}
		r, _ = c.Control(bg, "", uuid(3), OpCancel)
		if *r.Accepted {
			t.Fatal("cancel of a settled task accepted")
		}
	})
}

func TestDelegatedCallContextCancelled(t *testing.T) {
	c := New(Config{})
	call := admit(t, c, Request{Lane: LaneDelegated})
	if err := waitErr(t, started(call)); err != nil {
		t.Fatal(err)
	}
	if c.Stats().Delegated != 1 {
		t.Fatal("delegated not counted")
	}
	call.Cancel()
	if !errors.Is(context.Cause(call.Context()), ErrCancelled) {
		t.Fatalf("delegated context: %v", context.Cause(call.Context()))
	}
	call.Finish(Outcome{})
}

func TestTaskRecords(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	version := "v1"
	perms := func(context.Context, string) (Snapshot, error) { return Snapshot{Version: version}, nil }
	c := New(Config{Now: clock, Permissions: perms, Limits: Limits{ResultWait: 50 * time.Millisecond}})
	run := func(id string, result string) {
		t.Helper()
		call := admit(t, c, Request{Lane: LaneRead, TaskID: id, Principal: "p"})
		waitErr(t, started(call))
		call.Finish(Outcome{Result: []byte(result)})
	}

	if _, err := c.Admit(bg, Request{Lane: LaneRead, TaskID: "not-a-uuid"}); !errors.Is(err, ErrInvalidTask) {
		t.Fatalf("invalid task id: %v", err)
	}
	live := admit(t, c, Request{Lane: LaneRead, TaskID: uuid(10), Principal: "p"})
	if _, err := c.Admit(bg, Request{Lane: LaneRead, TaskID: uuid(10), Principal: "p"}); !errors.Is(err, ErrTaskConflict) {
		t.Fatalf("live task id reused: %v", err)
	}
	if _, err := c.Control(bg, "q", uuid(10), OpStatus); !errors.Is(err, ErrForbidden) {
		t.Fatalf("another context: %v", err)
	}
	if _, err := c.Control(bg, "p", uuid(10), "explode"); !errors.Is(err, ErrBadOperation) {
		t.Fatalf("bad op: %v", err)
	}
	// result waits a little for a live task, then answers without a body.
	r, _ := c.Control(bg, "p", uuid(10), OpResult)
	if !r.Found || r.Settled || r.Result != nil || r.State != StateQueued {
		t.Fatalf("live result %+v", r)
	}
	waitErr(t, started(live))
	go func() { time.Sleep(10 * time.Millisecond); live.Finish(Outcome{Result: []byte(`{"a":1}`)}) }()
	r, _ = c.Control(bg, "p", uuid(10), OpResult)
	if string(r.Result) != `{"a":1}` || !r.Settled {
		t.Fatalf("result after waiting %+v", r)
	}
	// Retained: reuse rejected; status omits the body.
	if _, err := c.Admit(bg, Request{Lane: LaneRead, TaskID: uuid(10)}); !errors.Is(err, ErrTaskConflict) {
		t.Fatalf("retained task id reused: %v", err)
	}
	if r, _ := c.Control(bg, "p", uuid(10), OpStatus); r.Result != nil || r.State != StateCompleted {
		t.Fatalf("status %+v", r)
	}
	// Changed permissions: access_changed, no body.
	version = "v2"
	if r, _ := c.Control(bg, "p", uuid(10), OpResult); r.Error == nil || r.Error.Code != failure.AccessChanged || r.Result != nil {
		t.Fatalf("access changed %+v", r)
	}
	version = "v1"
	// Too large: kept without its body.
	run(uuid(11), `"`+strings.Repeat("x", 1<<20)+`"`)
	if r, _ := c.Control(bg, "p", uuid(11), OpResult); r.Error == nil || r.Error.Code != failure.ResultTooLarge || r.Result != nil || !r.Found {
		t.Fatalf("too large %+v", r)
	}
	// An input_required round is not terminal: nothing kept, the id is free again.
	call := admit(t, c, Request{Lane: LaneRead, TaskID: uuid(12), Principal: "p"})
	call.Finish(Outcome{})
	if r, _ := c.Control(bg, "p", uuid(12), OpStatus); r.Found {
		t.Fatalf("input_required round kept: %+v", r)
	}
	admit(t, c, Request{Lane: LaneRead, TaskID: uuid(12)}).Finish(Outcome{})
	// Unknown: found false, with the note.
	if r, _ := c.Control(bg, "p", uuid(99), OpCancel); r.Found || r.Note == "" || r.Accepted != nil {
		t.Fatalf("unknown %+v", r)
	}
	// Expiry after 10 minutes frees the id.
	advance(10*time.Minute + time.Second)
	if r, _ := c.Control(bg, "p", uuid(10), OpStatus); r.Found {
		t.Fatalf("expired record still found: %+v", r)
	}
	admit(t, c, Request{Lane: LaneRead, TaskID: uuid(10)}).Finish(Outcome{})

	// At most 128 records: the oldest go first.
	for i := 0; i < 130; i++ {
		run(uuid(100+i), `{}`)
	}
	st := c.Stats()
	if st.TaskResults.Records != 128 {
		t.Fatalf("records %d", st.TaskResults.Records)
	}
	if r, _ := c.Control(bg, "p", uuid(100), OpStatus); r.Found {
		t.Fatal("oldest record not evicted")
	}
	if r, _ := c.Control(bg, "p", uuid(229), OpStatus); !r.Found {
		t.Fatal("newest record evicted")
	}
	// At most 8 MiB in all.
	big := `"` + strings.Repeat("y", 1<<20-16) + `"`
	for i := 0; i < 10; i++ {
		run(uuid(300+i), big)
	}
	st = c.Stats()
	if st.TaskResults.Bytes > 8<<20 || st.TaskResults.Bytes < 7<<20 {
		t.Fatalf("bytes %d", st.TaskResults.Bytes)
	}
	if r, _ := c.Control(bg, "p", uuid(300), OpResult); r.Found {
		t.Fatal("the oldest big result should have been evicted")
	}
	if r, _ := c.Control(bg, "p", uuid(309), OpResult); r.Result == nil {
		t.Fatal("the newest big result must be kept")
	}
}

func TestReadBudget(t *testing.T) {
	c := New(Config{})
	call := admit(t, c, Request{Lane: LaneRead})
	waitErr(t, started(call))
	b := call.Budget()
	if calls, bytes := b.Left(); calls != 128 || bytes != 8<<20 {
		t.Fatalf("left before any read: %d calls, %d bytes", calls, bytes)
	}
	for i := 0; i < 128; i++ {
		if err := b.ChargeCall("/api/x"); err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
	}
	err := b.ChargeCall("/api/x")
	var be *BudgetError
	if !errors.As(err, &be) || be.Limit != "calls" || b.Exceeded() == nil {
		t.Fatalf("129th kernel call: %v", err)
	}
	// Sticky, whatever the caller did with the error.
	if err := b.ChargeBytes("/api/x", 1); err == nil {
		t.Fatal("charges after the budget was exceeded must fail")
	}
	call.Finish(Outcome{})

	call = admit(t, c, Request{Lane: LaneRead})
	waitErr(t, started(call))
	if err := call.Budget().ChargeBytes("/api/x", 8<<20-10); err != nil {
		t.Fatal(err)
	}
	if calls, bytes := call.Budget().Left(); calls != 128 || bytes != 10 {
		t.Fatalf("left after 8 MiB - 10 bytes: %d calls, %d bytes", calls, bytes)
	}
	if err := call.Budget().ChargeBytes("/api/x", 10); err != nil {
		t.Fatal(err)
	}
	if err := call.Budget().ChargeBytes("/api/x", 1); err == nil || call.Budget().Exceeded().Limit != "bytes" {
		t.Fatalf("past 8 MiB: %v", err)
	}
	call.Finish(Outcome{})
	if w := admit(t, c, Request{Lane: LaneWrite}); w.Budget() != nil || w.Budget().Exceeded() != nil {
		t.Fatal("writes have no read budget")
	}
	st := c.Stats().ReadBudget
	if st.ExceededCalls != 1 || st.ExceededBytes != 1 || st.KernelCalls != 128 || st.MaxCalls != 128 || st.MaxBytes != 8<<20 {
		t.Fatalf("budget stats %+v", st)
	}
}

func TestPermissionSnapshotLoadedAtExecution(t *testing.T) {
	var version atomic.Value
	version.Store("before")
	var loads atomic.Int32
	c := New(Config{Permissions: func(context.Context, string) (Snapshot, error) {
		loads.Add(1)
		v := version.Load().(string)
		return Snapshot{Version: v, Allow: func(tool, action string) bool { return v == "before" || action != "update" }}, nil
	}})
	first := admit(t, c, Request{Lane: LaneWrite})
	waitErr(t, started(first))
	queued := admit(t, c, Request{Lane: LaneWrite})
	ch := started(queued)
	blocked(t, ch)
	if loads.Load() != 1 {
		t.Fatal("a queued call must not load its snapshot yet")
	}
	version.Store("after")
	first.Finish(Outcome{})
	waitErr(t, ch)
	if s := queued.Snapshot(); s.Version != "after" || s.Allowed("block", "update") || !s.Allowed("block", "get") {
		t.Fatalf("snapshot %+v", s)
	}
	queued.Finish(Outcome{})

	failing := New(Config{Permissions: func(context.Context, string) (Snapshot, error) { return Snapshot{}, errors.New("no") }})
	call := admit(t, failing, Request{Lane: LaneRead})
	if err := call.Start(bg); err == nil {
		t.Fatal("a failing snapshot must stop the call")
	}
	call.Finish(Outcome{})
	if failing.Stats().InFlight != 0 {
		t.Fatal("leak")
	}
}

func TestDrain(t *testing.T) {
	c := New(Config{})
	committing := admit(t, c, Request{Lane: LaneWrite})
	waitErr(t, started(committing))
	if err := committing.EnterCommit(); err != nil {
		t.Fatal(err)
	}
	queued := admit(t, c, Request{Lane: LaneWrite})
	ch := started(queued)
	blocked(t, ch)
	read := admit(t, c, Request{Lane: LaneRead})
	waitErr(t, started(read))

	drained := make(chan error, 1)
	go func() { drained <- c.Drain(bg) }()
	if err := waitErr(t, ch); !errors.Is(err, ErrDraining) {
		t.Fatalf("queued call during drain: %v", err)
	}
	queued.Finish(Outcome{Cancelled: true})
	if err := read.Budget().ChargeCall("/x"); !errors.Is(err, ErrDraining) {
		t.Fatalf("read checkpoint during drain: %v", err)
	}
	read.Finish(Outcome{Cancelled: true})
	if _, err := c.Admit(bg, Request{Lane: LaneRead}); !errors.Is(err, ErrDraining) {
		t.Fatalf("admission while draining: %v", err)
	}
	select {
	case <-drained:
		t.Fatal("drain returned while a commit runs")
	case <-time.After(30 * time.Millisecond):
	}
	committing.Finish(Outcome{})
	if err := <-drained; err != nil {
		t.Fatal(err)
	}
	if !c.Stats().Draining {
		t.Fatal("stats must say draining")
	}

	// Bounded: a commit that never finishes does not hold the drain forever.
	c2 := New(Config{})
	stuck := admit(t, c2, Request{Lane: LaneWrite})
	waitErr(t, started(stuck))
	stuck.EnterCommit()
	ctx, cancel := context.WithTimeout(bg, 20*time.Millisecond)
	defer cancel()
	if err := c2.Drain(ctx); err == nil || !strings.Contains(err.Error(), "1 writes still in flight") {
		t.Fatalf("bounded drain: %v", err)
	}
}

// TestNoGrowthAfter128InFlight: 128 calls in flight across both lanes, then
// settled, leave no goroutine and no task state behind, over many rounds.
func TestNoGrowthAfter128InFlight(t *testing.T) {
	c := New(Config{})
	round := func(r int) {
		var wg sync.WaitGroup
		calls := make([]*Call, 128)
		for i := range calls {
			lane := LaneRead
			if i%8 == 0 {
				lane = LaneWrite
			}
			calls[i] = admit(t, c, Request{Lane: lane, Caller: fmt.Sprint(i % 2)})
		}
		if _, err := c.Admit(bg, Request{Lane: LaneRead}); !errors.Is(err, ErrQueueFull) {
			t.Fatalf("129th: %v", err)
		}
		for i, call := range calls {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if i%5 == 0 {
					call.Cancel()
				}
				if err := call.Start(bg); err == nil && call.Budget() != nil {
					call.Budget().ChargeCall("/x")
					call.Budget().ChargeBytes("/x", 10)
				}
				call.Finish(Outcome{})
			}()
		}
		wg.Wait()
	}
	round(0)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	g0 := runtime.NumGoroutine()
	for r := 1; r <= 50; r++ {
		round(r)
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	st := c.Stats()
	if st.InFlight != 0 || st.Lanes["read"].Running != 0 || st.Lanes["write"].Queued != 0 || len(c.calls) != 0 || len(c.tasks.live) != 0 {
		t.Fatalf("state left behind: %+v", st)
	}
	if g := runtime.NumGoroutine(); g > g0+2 {
		t.Fatalf("goroutines %d -> %d", g0, g)
	}
	if growth := int64(after.HeapAlloc) - int64(before.HeapAlloc); growth > 1<<20 {
		t.Fatalf("heap grew by %d bytes over 50 rounds of 128 calls", growth)
	}
	t.Logf("heap %d -> %d bytes, goroutines %d", before.HeapAlloc, after.HeapAlloc, runtime.NumGoroutine())
}

func TestValidTaskID(t *testing.T) {
	for s, want := range map[string]bool{
		"123e4567-e89b-12d3-a456-426614174000": true, "123E4567-E89B-12D3-A456-426614174000": true,
		"123e4567e89b12d3a456426614174000": false, "123e4567-e89b-12d3-a456-42661417400g": false, "": false,
		"123e4567-e89b-12d3-a456_426614174000": false,
	} {
		if ValidTaskID(s) != want {
			t.Errorf("%q: want %v", s, want)
		}
	}
}

// TestFairnessAcrossCallers: a caller that floods the read lane delays
// another caller by one slot's turn, not by its whole queue.
func TestFairnessAcrossCallers(t *testing.T) {
	c := New(Config{})
	var running []*Call
	for i := 0; i < 3; i++ {
		call := admit(t, c, Request{Lane: LaneRead, Caller: "flood"})
		waitErr(t, started(call))
		running = append(running, call)
	}
	// One caller never holds every read slot: the fourth stays free.
	var flood []<-chan error
	for i := 0; i < 40; i++ {
		flood = append(flood, started(admit(t, c, Request{Lane: LaneRead, Caller: "flood"})))
	}
	blocked(t, flood[0])
	if st := c.Stats(); st.Lanes["read"].Running != 3 || st.Lanes["read"].Queued != 40 {
		t.Fatalf("one caller took more than three read slots: %+v", st.Lanes["read"])
	}
	// Another caller starts at once, in the slot the flood may not take.
	other := admit(t, c, Request{Lane: LaneRead, Caller: "other"})
	if err := waitErr(t, started(other)); err != nil {
		t.Fatal(err)
	}
	// Its next call waits; when a slot frees it goes before the flood,
	// which runs more calls.
	other2 := admit(t, c, Request{Lane: LaneRead, Caller: "other"})
	ch := started(other2)
	blocked(t, ch)
	running[0].Finish(Outcome{})
	if err := waitErr(t, ch); err != nil {
		t.Fatal(err)
	}
	if st := c.Stats(); st.Lanes["read"].Queued != 40 {
		t.Fatalf("the flood must still be queued whole: %+v", st.Lanes["read"])
	}
	other.Finish(Outcome{})
	other2.Finish(Outcome{})
	for _, r := range running[1:] {
		r.Finish(Outcome{})
	}
	// The freed slots go to the flood, three at most.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		st := c.Stats().Lanes["read"]
		if st.Running == 3 && st.Queued == 37 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the others finished: %+v, want 3 running and 37 queued", st)
		}
	}
	time.Sleep(30 * time.Millisecond)
	if st := c.Stats().Lanes["read"]; st.Running != 3 {
		t.Fatalf("the flood took the reserved slot: %+v", st)
	}
}

// A lane of one slot (the write lane) is not held back by the rule that
// keeps a read slot free.
func TestSingleSlotLaneServesOneCaller(t *testing.T) {
	c := New(Config{})
	w := admit(t, c, Request{Lane: LaneWrite, Caller: "solo"})
	if err := waitErr(t, started(w)); err != nil {
		t.Fatal(err)
	}
	w2 := admit(t, c, Request{Lane: LaneWrite, Caller: "solo"})
	ch := started(w2)
	blocked(t, ch)
	w.Finish(Outcome{})
	if err := waitErr(t, ch); err != nil {
		t.Fatal(err)
	}
	w2.Finish(Outcome{})
}

// TestCallerCap: one caller cannot take every place in flight; another
// still gets in.
func TestCallerCap(t *testing.T) {
	c := New(Config{})
	for i := 0; i < 96; i++ {
		admit(t, c, Request{Lane: LaneRead, Caller: "flood"})
	}
	if _, err := c.Admit(bg, Request{Lane: LaneRead, Caller: "flood"}); !errors.Is(err, ErrCallerFull) {
		t.Fatalf("97th call of one caller: %v", err)
	}
	admit(t, c, Request{Lane: LaneWrite, Caller: "other"})
}

// TestReadDeadline: a read is stopped at its deadline, its context ends
// with ErrReadTimeout, and a write is never given one.
func TestReadDeadline(t *testing.T) {
	c := New(Config{Limits: Limits{ReadTimeout: 30 * time.Millisecond}})
	read := admit(t, c, Request{Lane: LaneRead})
	waitErr(t, started(read))
	select {
	case <-read.Context().Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the read's context did not end at its deadline")
	}
	if !read.TimedOut() || !errors.Is(context.Cause(read.Context()), ErrReadTimeout) {
		t.Fatalf("cause %v", context.Cause(read.Context()))
	}
	read.Finish(Outcome{IsError: true})
	write := admit(t, c, Request{Lane: LaneWrite})
	waitErr(t, started(write))
	time.Sleep(60 * time.Millisecond)
	if write.Context().Err() != nil || write.TimedOut() {
		t.Fatal("a write must never be stopped by the read deadline")
	}
	write.Finish(Outcome{})
}

// TestDrainDoesNotWaitForReads: a read still running does not hold a
// drain; its context ends at once.
func TestDrainDoesNotWaitForReads(t *testing.T) {
	c := New(Config{})
	read := admit(t, c, Request{Lane: LaneRead})
	waitErr(t, started(read))
	ctx, cancel := context.WithTimeout(bg, 2*time.Second)
	defer cancel()
	if err := c.Drain(ctx); err != nil {
		t.Fatalf("drain waited for a read: %v", err)
	}
	if !errors.Is(context.Cause(read.Context()), ErrDraining) {
		t.Fatalf("the read was not stopped: %v", context.Cause(read.Context()))
	}
	read.Finish(Outcome{Cancelled: true})
}
