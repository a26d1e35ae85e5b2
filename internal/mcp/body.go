package mcp

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"sync"
	"time"
)

// smallBody is the size up to which a POST body is read without the byte
// budget: the server's connection cap bounds how many there are at once,
// and nearly every request is this small.
const smallBody = 64 << 10

// byteBudget bounds the bytes of the large bodies a handler holds at once,
// from before the first byte is read until the server first answers (the
// decoded call keeps referring to its body while it runs). It is a
// counting semaphore in bytes; waiters are woken on every release and try
// again.
type byteBudget struct {
	mu   sync.Mutex
	free int64
	wake chan struct{} // closed and replaced on every release
}

func newByteBudget(n int64) *byteBudget { return &byteBudget{free: n, wake: make(chan struct{})} }

// acquire takes n bytes, waiting until ctx ends; false when it could not.
func (b *byteBudget) acquire(ctx context.Context, n int64) bool {
	for {
		b.mu.Lock()
		if n <= b.free {
			b.free -= n
			b.mu.Unlock()
			return true
		}
		wake := b.wake
		b.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return false
		}
	}
}

func (b *byteBudget) release(n int64) {
	if n <= 0 {
		return
	}
	b.mu.Lock()
	b.free += n
	close(b.wake)
	b.wake = make(chan struct{})
	b.mu.Unlock()
}

// available is the budget not taken (tests).
func (b *byteBudget) available() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.free
}

// bodyRefusal is why a POST body was not read: its HTTP status and the
// JSON-RPC error to answer. The connection is closed after the answer,
// since what is left of the body is not read.
type bodyRefusal struct {
	status int
	err    *Error
	retry  bool // 503: the client may retry after Retry-After
}

func (e *bodyRefusal) write(w http.ResponseWriter) {
	w.Header().Set("Connection", "close")
	if e.retry {
		w.Header().Set("Retry-After", "1")
	}
	writeError(w, e.status, ID{}, e.err)
}

var (
	refuseTooLarge = &bodyRefusal{status: http.StatusRequestEntityTooLarge, err: errInvalidRequest("Request body too large")}
	refuseBusy     = &bodyRefusal{status: http.StatusServiceUnavailable, retry: true,
		err: &Error{Code: CodeInternalError, Message: "Server busy: too many large requests are being read or run; nothing was read, retry in a moment"}}
	refuseSlow = &bodyRefusal{status: http.StatusRequestTimeout, err: errInvalidRequest("Request Timeout: the body did not arrive in time")}
	refuseRead = &bodyRefusal{status: http.StatusBadRequest, err: errInvalidRequest("Cannot read request body")}
)

// readBody reads a POST body of at most MaxBodyBytes. A declared length
// over the cap is refused before anything is read; a body without one is
// refused as soon as it passes the cap. A body over smallBody takes its
// size from the budget first (the whole cap when its length is unknown)
// and is read into one buffer of that size; release gives the budget back
// (releaseOnAnswer calls it before the first byte of the answer). A body
// that cannot get budget within BodyBudgetWait is refused with 503 without
// being read.
func (h *httpHandler) readBody(r *http.Request) (body []byte, release func(), refusal *bodyRefusal) {
	limit, n := h.opts.MaxBodyBytes, r.ContentLength
	release = func() {}
	if n > limit {
		return nil, release, refuseTooLarge
	}
	take := func(size int64) bool {
		ctx, cancel := context.WithTimeout(r.Context(), h.opts.BodyBudgetWait)
		defer cancel()
		if !h.budget.acquire(ctx, size) {
			return false
		}
		release = sync.OnceFunc(func() { h.budget.release(size) })
		return true
	}
	if n >= 0 {
		if n > smallBody && !take(n) {
			return nil, release, refuseBusy
		}
		buf := make([]byte, n)
		if _, err := io.ReadFull(r.Body, buf); err != nil {
			release()
			return nil, func() {}, readRefusal(err)
		}
		return buf, release, nil
	}
	// No declared length (chunked): the first smallBody bytes for free,
	// then the whole cap from the budget.
	buf := make([]byte, 0, smallBody+1)
	buf, err := readUpTo(r.Body, buf)
	if err != nil {
		return nil, release, readRefusal(err)
	}
	if len(buf) <= smallBody {
		return buf, release, nil
	}
	if !take(limit + 1) {
		return nil, release, refuseBusy
	}
	big := make([]byte, len(buf), limit+1)
	copy(big, buf)
	big, err = readUpTo(r.Body, big)
	switch {
	case err != nil:
		release()
		return nil, func() {}, readRefusal(err)
	case int64(len(big)) > limit:
		release()
		return nil, func() {}, refuseTooLarge
	}
	return big, release, nil
}

// readUpTo reads r into buf until EOF or until buf is full; a full buffer
// means the body is longer than buf holds.
func readUpTo(r io.Reader, buf []byte) ([]byte, error) {
	for len(buf) < cap(buf) {
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// readRefusal is the answer to a body that broke off: 408 when the server
// cut it for arriving too slowly, 400 otherwise.
func readRefusal(err error) *bodyRefusal {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return refuseSlow
	}
	return refuseRead
}

// defaultBodyBudgetWait is how long a large body waits for budget.
const defaultBodyBudgetWait = 5 * time.Second

// releaseOnAnswer gives a request's body budget back just before its
// response starts: the final answer of a call (its work done), or the
// first event of a stream (a progress notice, a question to the client).
// From then on the server waits on the client, to read what it is sent
// or to answer, and a client that does neither must not hold the budget
// others' large posts wait for (the connection guard cuts it, or evicts
// it, on its own). What a call still holds after its stream starts is
// bounded by the caps on calls in flight and on questions awaiting an
// answer.
type releaseOnAnswer struct {
	http.ResponseWriter
	release func()
}

func (r *releaseOnAnswer) WriteHeader(code int) {
	r.release()
	r.ResponseWriter.WriteHeader(code)
}

func (r *releaseOnAnswer) Write(b []byte) (int, error) {
	r.release()
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (Flush,
// deadlines).
func (r *releaseOnAnswer) Unwrap() http.ResponseWriter { return r.ResponseWriter }
