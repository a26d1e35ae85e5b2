package admission

import (
	"context"
	"fmt"
	"sync/atomic"
)

// BudgetError is a read that went past its budget.
type BudgetError struct {
	// Limit is "calls" or "bytes".
	Limit string
	Max   int64
}

func (e *BudgetError) Error() string {
	if e.Limit == "calls" {
		return fmt.Sprintf("read budget exceeded: more than %d kernel calls in one read action", e.Max)
	}
	return fmt.Sprintf("read budget exceeded: more than %d bytes of kernel replies in one read action", e.Max)
}

// Budget is the read budget of one owned read action, and its cancellation
// checkpoint. It implements siyuan.ReadMeter: the kernel client charges it
// once per read call and with every reply's size. Once exceeded it stays
// exceeded, and every later charge fails, so a handler that catches the
// error cannot complete the read; the caller checks [Budget.Exceeded] after
// the action returns.
type Budget struct {
	call     *Call
	maxCalls int64
	maxBytes int64
	calls    atomic.Int64
	bytes    atomic.Int64
	exceeded atomic.Pointer[BudgetError]
}

// cancelledError wraps context.Canceled so that callers mapping errors see a
// cancellation.
type cancelledError struct{ cause error }

func (e cancelledError) Error() string { return "cancelled at a checkpoint: " + e.cause.Error() }
func (e cancelledError) Unwrap() []error {
	return []error{e.cause, context.Canceled}
}

// ChargeCall is the checkpoint before each kernel call of the read: it
// fails once the call was cancelled, or past the call budget.
func (b *Budget) ChargeCall(string) error {
	if b.call.cancelFlag.Load() {
		b.call.c.mu.Lock()
		cause := b.call.cause
		b.call.c.mu.Unlock()
		return cancelledError{cause}
	}
	if e := b.exceeded.Load(); e != nil {
		return e
	}
	if b.calls.Add(1) > b.maxCalls {
		return b.exceed("calls", b.maxCalls)
	}
	b.call.c.ev.budgetCalls.Add(1)
	return nil
}

// ChargeBytes charges n bytes of kernel reply.
func (b *Budget) ChargeBytes(_ string, n int64) error {
	if e := b.exceeded.Load(); e != nil {
		return e
	}
	total := b.bytes.Add(n)
	b.call.c.ev.budgetBytes.Add(n)
	if total > b.maxBytes {
		return b.exceed("bytes", b.maxBytes)
	}
	return nil
}

func (b *Budget) exceed(limit string, max int64) error {
	e := &BudgetError{Limit: limit, Max: max}
	if b.exceeded.CompareAndSwap(nil, e) {
		if limit == "calls" {
			b.call.c.ev.exceededCalls.Add(1)
		} else {
			b.call.c.ev.exceededBytes.Add(1)
		}
		return e
	}
	return b.exceeded.Load()
}

// Exceeded returns the budget failure, or nil.
func (b *Budget) Exceeded() *BudgetError {
	if b == nil {
		return nil
	}
	return b.exceeded.Load()
}

// Left returns the kernel calls and bytes the read may still use (0 once
// spent): a read that can stop early and say where to continue (a
// paginated export) asks it instead of failing past the budget.
func (b *Budget) Left() (calls, bytes int64) {
	return max(b.maxCalls-b.calls.Load(), 0), max(b.maxBytes-b.bytes.Load(), 0)
}

// Used returns the kernel calls and bytes charged so far.
func (b *Budget) Used() (calls, bytes int64) { return b.calls.Load(), b.bytes.Load() }
