package admission

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/failure"
)

// Task-control operations (io.siyuan.sisyphus/task-control).
const (
	OpStatus = "status"
	OpCancel = "cancel"
	OpResult = "result"
)

// Codes a task-control reply may carry in its error.
const ()

// Errors of task control.
var (
	// ErrForbidden: the task belongs to another authentication context.
	ErrForbidden = errors.New("admission: the task belongs to another authentication context")
	// ErrBadOperation: operation is not status, cancel or result.
	ErrBadOperation = errors.New("admission: operation must be status, cancel or result")
)

// notFoundNote is what found:false means, said every time.
const notFoundNote = "found:false proves nothing: the task may never have existed here, or its record expired, was evicted or was lost on restart; reconcile writes with the original requestId"

// Reply is the answer to a task-control request.
type Reply struct {
	Found           bool   `json:"found"`
	State           State  `json:"state,omitempty"`
	CancelRequested bool   `json:"cancelRequested"`
	Committing      bool   `json:"committing"`
	Accepted        *bool  `json:"accepted,omitempty"` // cancel only
	Settled         bool   `json:"settled"`
	Note            string `json:"note,omitempty"`
	// Result is the original tool result (result only, once settled).
	Result json.RawMessage `json:"result,omitempty"`
	// Error tells why a settled result is not returned.
	Error *ReplyError `json:"error,omitempty"`
}

// ReplyError is result_too_large or access_changed.
type ReplyError struct {
	Code    failure.Code `json:"code"`
	Message string       `json:"message"`
}

// record is a settled task kept for task control.
type record struct {
	taskID, principal string
	state             State
	cancelRequested   bool
	result            json.RawMessage
	tooLarge          bool
	version           string
	at                time.Time
	size              int64
}

type taskStore struct {
	live  map[string]*Call
	done  map[string]*record
	order []*record // oldest first
	bytes int64
}

func (s *taskStore) init() {
	s.live = map[string]*Call{}
	s.done = map[string]*record{}
}

// known reports whether id is live or retained. c.mu is held.
func (s *taskStore) known(id string, now time.Time, ttl time.Duration) bool {
	if _, ok := s.live[id]; ok {
		return true
	}
	r, ok := s.done[id]
	return ok && now.Sub(r.at) < ttl
}

// keep records a settled call's result, then enforces the limits. c.mu is held.
func (s *taskStore) keep(call *Call, result []byte, lim Limits, now time.Time, ev *events) *record {
	r := &record{taskID: call.req.TaskID, principal: call.req.Principal, state: call.state,
		cancelRequested: call.cancelFlag.Load(), version: call.snapshot.Version, at: now}
	if int64(len(result)) > lim.MaxResultBytes {
		r.tooLarge = true
		ev.resultTooLarge.Add(1)
	} else {
		r.result = append(json.RawMessage(nil), result...)
		r.size = int64(len(result))
	}
	s.done[r.taskID] = r
	s.order = append(s.order, r)
	s.bytes += r.size
	s.prune(lim, now, ev)
	return r
}

// prune drops expired records, then the oldest ones beyond the count and
// byte limits. c.mu is held.
func (s *taskStore) prune(lim Limits, now time.Time, ev *events) {
	i := 0
	for ; i < len(s.order); i++ {
		r := s.order[i]
		over := len(s.order)-i > lim.MaxTaskRecords || s.bytes > lim.MaxTaskBytes
		if now.Sub(r.at) < lim.TaskTTL && !over {
			break
		}
		if over {
			ev.evicted.Add(1)
		} else {
			ev.expired.Add(1)
		}
		delete(s.done, r.taskID)
		s.bytes -= r.size
	}
	if i > 0 {
		s.order = append(s.order[:0:0], s.order[i:]...)
	}
}

// TaskStats are the task-result counters of /health.
type TaskStats struct {
	Live           int   `json:"live"`
	Records        int   `json:"records"`
	Bytes          int64 `json:"bytes"`
	MaxRecords     int   `json:"maxRecords"`
	MaxBytes       int64 `json:"maxBytes"`
	MaxResultBytes int64 `json:"maxResultBytes"`
	TTLSeconds     int   `json:"ttlSeconds"`
}

// Control answers a task-control request from principal. It fails with
// ErrForbidden when the task belongs to another authentication context and
// ErrBadOperation for an unknown operation; an unknown or malformed taskId
// answers found:false.
func (c *Controller) Control(ctx context.Context, principal, taskID, op string) (Reply, error) {
	switch op {
	case OpStatus:
		c.ev.statusQueries.Add(1)
	case OpCancel:
		c.ev.cancelQueries.Add(1)
	case OpResult:
		c.ev.resultQueries.Add(1)
	default:
		return Reply{}, ErrBadOperation
	}
	c.mu.Lock()
	c.tasks.prune(c.lim, c.now(), &c.ev)
	call := c.tasks.live[taskID]
	rec := c.tasks.done[taskID]
	c.mu.Unlock()
	switch {
	case call != nil && call.req.Principal != principal, rec != nil && rec.principal != principal:
		c.ev.forbidden.Add(1)
		return Reply{}, ErrForbidden
	case call == nil && rec == nil:
		return Reply{Found: false, Note: notFoundNote}, nil
	}
	if call != nil {
		switch op {
		case OpCancel:
			accepted := call.Cancel()
			r := call.reply()
			r.Accepted = &accepted
			return r, nil
		case OpResult:
			t := time.NewTimer(c.lim.ResultWait)
			defer t.Stop()
			select {
			case <-call.done:
			case <-t.C:
			case <-ctx.Done():
			}
			c.mu.Lock()
			rec = call.record
			c.mu.Unlock()
			if rec == nil {
				return call.reply(), nil // still running, or settled without a result to keep
			}
		default:
			return call.reply(), nil
		}
	}
	r := rec.reply()
	switch op {
	case OpCancel:
		f := false
		r.Accepted = &f
		c.ev.cancelRejected.Add(1)
	case OpResult:
		switch {
		case rec.tooLarge:
			r.Error = &ReplyError{Code: failure.ResultTooLarge, Message: "the result exceeded 1 MiB and was not kept; the call itself settled"}
		default:
			snap, err := c.perms(ctx, principal)
			if err != nil || snap.Version != rec.version {
				c.ev.accessChanged.Add(1)
				r.Error = &ReplyError{Code: failure.AccessChanged, Message: "permissions or the tool configuration changed since the call ran; its result is not disclosed"}
			} else {
				r.Result = rec.result
				c.ev.resultsServed.Add(1)
			}
		}
	}
	return r, nil
}

func (call *Call) reply() Reply {
	c := call.c
	c.mu.Lock()
	defer c.mu.Unlock()
	return Reply{Found: true, State: call.state, CancelRequested: call.cancelFlag.Load(), Committing: call.committing && !call.finished, Settled: call.finished}
}

func (r *record) reply() Reply {
	return Reply{Found: true, State: r.state, CancelRequested: r.cancelRequested, Committing: false, Settled: true}
}
