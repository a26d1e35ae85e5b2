package embedded

import (
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
// answers as over a socket, without a loopback connection and the two
// wake-ups of each exchange over it. The answer's body streams from the
// handler as it writes (a download is never held whole in memory).
//
// A request counts as sent once the handler may have started (the
// httptrace WroteHeaders hook fires first, as a socket transport fires it
// once headers are out), so that a write cut short is reported as of
// unknown outcome, never as not sent.
func (k *Kernel) Transport() http.RoundTripper { return handlerTransport{k.Handler()} }

type handlerTransport struct{ h http.Handler }

// errAborted stands for the connection a handler aborts (http.ErrAbortHandler,
// a panic): the client sees the exchange end without an answer.
var errAborted = errors.New("embedded kernel: the handler aborted the exchange")

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if err := ctx.Err(); err != nil {
		closeBody(req)
		return nil, err
	}
	if tr := httptrace.ContextClientTrace(ctx); tr != nil && tr.WroteHeaders != nil {
		tr.WroteHeaders()
	}
	sreq := req.Clone(ctx)
	sreq.RemoteAddr = "127.0.0.1:0"
	sreq.RequestURI = req.URL.RequestURI()
	sreq.Host = req.URL.Host
	if sreq.Body == nil {
		sreq.Body = http.NoBody
	}
	pr, pw := io.Pipe()
	w := &pipeResponse{header: http.Header{}, pw: pw, started: make(chan struct{})}
	go func() {
		defer closeBody(req)
		defer func() {
			if v := recover(); v != nil {
				err := errAborted
				if v != http.ErrAbortHandler {
					err = fmt.Errorf("%w: panic: %v", errAborted, v)
				}
				w.abort(err)
				return
			}
			w.WriteHeader(http.StatusOK) // a handler that wrote nothing answered 200
			pw.Close()
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
	return &http.Response{
		Status:        strconv.Itoa(w.code) + " " + http.StatusText(w.code),
		StatusCode:    w.code,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        w.sent,
		Body:          pr,
		ContentLength: -1,
		Request:       req,
	}, nil
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// pipeResponse is the handler's side of one exchange: the status and
// headers are handed over at the first WriteHeader or Write, the body goes
// through the pipe as it is written.
type pipeResponse struct {
	header  http.Header
	pw      *io.PipeWriter
	once    sync.Once
	started chan struct{}
	// Set before started is closed, read after.
	code int
	sent http.Header
	err  error
}

func (w *pipeResponse) Header() http.Header { return w.header }

func (w *pipeResponse) WriteHeader(code int) {
	w.once.Do(func() {
		w.code, w.sent = code, w.header.Clone()
		close(w.started)
	})
}

func (w *pipeResponse) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.pw.Write(b)
}

// Flush has nothing to do: every Write reaches the reader at once.
func (w *pipeResponse) Flush() {}

// abort ends the exchange as a dropped connection would: before the
// answer started, RoundTrip fails; after, the body's read fails.
func (w *pipeResponse) abort(err error) {
	w.once.Do(func() {
		w.err = err
		close(w.started)
	})
	w.pw.CloseWithError(err)
}
