package embedded

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"sync"
)

// Transport returns an http.RoundTripper that serves each request with the
// kernel's handler in this process: the same HTTP API, routes, checks and
// answers as over a socket, without a loopback connection and the wake-ups
// of each exchange over it.
//
// A JSON route runs in the caller's goroutine and its answer is handed
// over whole: handing the call to another goroutine costs a thread's
// wake-up, often on a core that has been idle, which a quick read feels
// most (see BenchmarkReadOverMCP). A caller giving up then waits for the
// handler's end: the kernel's handlers are short or follow their request's
// context (SQL, injected latency), and a write's lane is not freed while
// its handler still writes. A file read (getFile) runs beside the
// caller: an answer within responseBuffer bytes is handed over whole, a
// longer one or one the handler flushes streams as it is written (a
// download is never held whole in memory), and a caller giving up ends its
// wait at once.
//
// A request counts as sent once the handler may have started (the
// httptrace WroteHeaders hook fires first, as a socket transport fires it
// once headers are out), so that a write cut short is reported as of
// unknown outcome, never as not sent.
func (k *Kernel) Transport() http.RoundTripper {
	return handlerTransport{h: k.Handler(), inline: func(r *http.Request) bool { return r.URL.Path != "/api/file/getFile" }}
}

// handlerTransport serves requests with h; inline (nil: none) says which
// run in the caller's goroutine.
type handlerTransport struct {
	h      http.Handler
	inline func(*http.Request) bool
}

// errAborted stands for the connection a handler aborts (http.ErrAbortHandler,
// a panic): the client sees the exchange end without an answer.
var errAborted = errors.New("embedded kernel: the handler aborted the exchange")

// aborted is the error of a handler that panicked with v.
func aborted(v any) error {
	if v == http.ErrAbortHandler {
		return errAborted
	}
	return fmt.Errorf("%w: panic: %v", errAborted, v)
}

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if err := ctx.Err(); err != nil {
		closeBody(req)
		return nil, err
	}
	if tr := httptrace.ContextClientTrace(ctx); tr != nil && tr.WroteHeaders != nil {
		tr.WroteHeaders()
	}
	inline := t.inline != nil && t.inline(req)
	var sreq *http.Request
	if inline {
		// The handler's own request value (it may set Body, as a server's
		// handler may) over the caller's header map and URL: the caller
		// reads neither again, and the handler has returned before the
		// caller goes on. A deep copy was a tenth of a quick read's time.
		s := *req
		sreq = &s
	} else {
		sreq = req.Clone(ctx) // the handler may run on after the answer
	}
	sreq.RemoteAddr = "127.0.0.1:0"
	sreq.RequestURI = req.URL.RequestURI()
	sreq.Host = req.URL.Host
	if sreq.Body == nil {
		sreq.Body = http.NoBody
	}
	if inline {
		return t.serveInline(req, sreq)
	}
	pr, pw := io.Pipe()
	w := &pipeResponse{header: http.Header{}, pr: pr, pw: pw, started: make(chan struct{})}
	go func() {
		defer closeBody(req)
		defer func() {
			if v := recover(); v != nil {
				w.abort(aborted(v))
				return
			}
			w.finish()
		}()
		t.h.ServeHTTP(w, sreq)
	}()
	select {
	case <-w.started:
	case <-ctx.Done():
		// The handler sees the same context; whatever it still writes
		// goes nowhere.
		pr.CloseWithError(ctx.Err())
		return nil, ctx.Err()
	}
	if w.err != nil {
		pr.Close()
		return nil, w.err
	}
	return w.response(req), nil
}

// serveInline runs the handler in the caller's goroutine and hands its
// answer over whole. A caller that gave up meanwhile gets its context's
// error, as from a socket whose answer came too late.
func (t handlerTransport) serveInline(req, sreq *http.Request) (resp *http.Response, err error) {
	defer closeBody(req)
	w := &pipeResponse{header: http.Header{}, inline: true}
	defer func() {
		if v := recover(); v != nil {
			resp, err = nil, aborted(v)
		}
	}()
	t.h.ServeHTTP(w, sreq)
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	w.keepWhole()
	return w.response(req), nil
}

// response is the handed-over answer as the client sees it.
func (w *pipeResponse) response(req *http.Request) *http.Response {
	return &http.Response{
		Status:        strconv.Itoa(w.code) + " " + http.StatusText(w.code),
		StatusCode:    w.code,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        w.sent,
		Body:          w.body,
		ContentLength: w.length,
		Request:       req,
	}
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// responseBuffer is how much of an answer is kept before it streams: the
// kernel's JSON answers fit, so that most exchanges hand over once instead
// of once per write.
const responseBuffer = 256 << 10

// pipeResponse is the handler's side of one exchange. Inline, it keeps the
// whole answer (the caller waits for the handler's end anyway). Otherwise,
// until the handler returns, flushes or writes more than responseBuffer,
// its status, headers and body are kept here; then they are handed over
// (started closes), the rest of the body through the pipe as it is
// written. Only the handler's goroutine calls its methods.
type pipeResponse struct {
	header      http.Header
	inline      bool
	pr          *io.PipeReader
	pw          *io.PipeWriter
	wroteHeader bool
	streaming   bool
	buf         []byte
	once        sync.Once
	started     chan struct{}
	// Set before started is closed, read after.
	code   int
	sent   http.Header
	body   io.ReadCloser
	length int64
	err    error
}

func (w *pipeResponse) Header() http.Header { return w.header }

func (w *pipeResponse) WriteHeader(code int) {
	if !w.wroteHeader {
		w.wroteHeader = true
		w.code, w.sent = code, w.header.Clone()
	}
}

func (w *pipeResponse) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	if !w.streaming {
		if w.inline || len(w.buf)+len(b) <= responseBuffer {
			w.buf = append(w.buf, b...)
			return len(b), nil
		}
		w.stream()
	}
	return w.pw.Write(b)
}

// Flush hands over what was written; later writes reach the reader at
// once. Inline there is no reader yet: the answer goes over at the end.
func (w *pipeResponse) Flush() {
	w.WriteHeader(http.StatusOK)
	if !w.streaming && !w.inline {
		w.stream()
	}
}

// stream hands the answer over with a body that reads what was kept, then
// the pipe.
func (w *pipeResponse) stream() {
	w.streaming = true
	kept := w.buf
	w.buf = nil
	w.once.Do(func() {
		w.body, w.length = pipeBody{io.MultiReader(bytes.NewReader(kept), w.pr), w.pr}, -1
		close(w.started)
	})
}

// finish ends a handler that returned: a kept answer is handed over whole.
func (w *pipeResponse) finish() {
	if w.streaming {
		w.pw.Close()
		return
	}
	w.once.Do(func() {
		w.keepWhole()
		close(w.started)
	})
}

// keepWhole makes what the handler wrote, all of it kept, the answer.
func (w *pipeResponse) keepWhole() {
	w.WriteHeader(http.StatusOK) // a handler that wrote nothing answered 200
	w.body, w.length = io.NopCloser(bytes.NewReader(w.buf)), int64(len(w.buf))
}

// pipeBody reads the kept part and then the pipe; closing it closes the
// pipe, so that the handler's further writes fail.
type pipeBody struct {
	io.Reader
	pr *io.PipeReader
}

func (b pipeBody) Close() error { return b.pr.Close() }

// abort ends the exchange as a dropped connection would: before the
// answer was handed over, RoundTrip fails; after, the body's read fails.
func (w *pipeResponse) abort(err error) {
	w.once.Do(func() {
		w.err = err
		close(w.started)
	})
	w.pw.CloseWithError(err)
}
