package siyuan

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/failure"
)

const userAgent = "sisyphus-go (siyuan client)"

// request describes one logical call; run turns it into one or more attempts.
type request struct {
	endpoint string
	kind     CallKind
	jsonBody []byte
	// multipart, when non-nil, streams a multipart/form-data body instead of
	// jsonBody. It is only used for writes, which get a single attempt, so the
	// body never needs to be produced twice.
	multipart func(*multipart.Writer) error
	out       any
	nullable  bool // data:null is a valid answer (no NullDataError)
	raw       bool // getFile: HTTP 200 carries the file itself
	// headers are sent besides the usual ones (the MCP endpoint's
	// protocol headers).
	headers map[string]string
	// decode, when set, reads a 2xx body that is not SiYuan's envelope
	// (the MCP endpoint answers JSON-RPC); maxBody, when set, caps it
	// instead of Config.MaxResponseBytes.
	decode  func(body []byte) error
	maxBody int64
}

// rawResult is the successful outcome of a raw (getFile) call.
type rawResult struct {
	body        io.ReadCloser
	contentType string
}

// run performs r: once for writes, up to readAttempts times for reads.
func (c *Client) run(ctx context.Context, r *request) (*rawResult, error) {
	attempts := 1
	if r.kind == Read {
		attempts = c.readAttempts
		if m := ReadMeterFrom(ctx); m != nil {
			if err := m.ChargeCall(r.endpoint); err != nil {
				return nil, err
			}
		}
	}
	backoff := c.readBackoff
	for n := 1; ; n++ {
		res, transient, err := c.attempt(ctx, r, n)
		if err == nil {
			return res, nil
		}
		if r.kind != Read || !transient || n >= attempts {
			return nil, err
		}
		if ctx.Err() != nil { // the caller gave up while this attempt failed
			return nil, fmt.Errorf("%w (retry abandoned: %w)", err, context.Cause(ctx))
		}
		c.log.LogAttrs(ctx, slog.LevelWarn, "siyuan read failed, retrying",
			slog.String("endpoint", r.endpoint), slog.Int("attempt", n),
			slog.Duration("backoff", backoff), slog.String("error", err.Error()))
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%w (retry abandoned: %w)", err, context.Cause(ctx))
		case <-t.C:
		}
		backoff *= 2
	}
}

// attempt performs one HTTP exchange. transient reports whether a read may
// be retried after this failure.
func (c *Client) attempt(ctx context.Context, r *request, n int) (res *rawResult, transient bool, err error) {
	start := time.Now()
	status := 0
	trace := &sendTrace{}
	defer func() {
		lvl := slog.LevelDebug
		if IsOutcomeUnknown(err) {
			lvl = slog.LevelWarn
		}
		if c.log.Enabled(ctx, lvl) {
			attrs := []slog.Attr{
				slog.String("endpoint", r.endpoint), slog.String("kind", r.kind.String()),
				slog.Int("attempt", n), slog.Int("status", status),
				slog.Bool("connReused", trace.reused.Load()),
				slog.Duration("elapsed", time.Since(start)),
			}
			if err != nil {
				attrs = append(attrs, slog.String("error", err.Error()))
			}
			c.log.LogAttrs(ctx, lvl, "siyuan call", attrs...)
		}
	}()

	actx, cancel := ctx, context.CancelFunc(func() {})
	if c.timeout > 0 {
		actx, cancel = context.WithTimeout(ctx, c.timeout)
	}
	actx = httptrace.WithClientTrace(actx, trace.clientTrace())

	hreq, localErr, err := c.newHTTPRequest(actx, r)
	if err != nil {
		cancel()
		return nil, false, err
	}
	resp, err := c.hc.Do(hreq)
	// Make sure a streaming body producer never outlives the exchange.
	_ = hreq.Body.Close()
	if err != nil {
		cancel()
		transient, err = c.classifyFailure(ctx, r, trace, localErr(), err)
		return nil, transient, err
	}
	status = resp.StatusCode
	return c.handleResponse(ctx, r, resp, cancel)
}

// classifyFailure maps an error from http.Client.Do (no response received).
func (c *Client) classifyFailure(ctx context.Context, r *request, trace *sendTrace, localErr, err error) (transient bool, _ error) {
	if localErr != nil {
		// Our own body producer failed (e.g. the caller's file reader), so the
		// kernel never received a complete request and cannot have applied it.
		return false, &TransportError{Endpoint: r.endpoint, Cause: fmt.Errorf("producing request body: %w", localErr)}
	}
	sent := trace.mayHaveReachedServer()
	if r.kind == Write && sent {
		return false, &OutcomeUnknownError{Endpoint: r.endpoint, Cause: err}
	}
	return r.kind == Read && isTransient(ctx, err), &TransportError{Endpoint: r.endpoint, Cause: err, Sent: sent}
}

// handleResponse classifies a reply by status, then decodes it.
func (c *Client) handleResponse(ctx context.Context, r *request, resp *http.Response, cancel context.CancelFunc) (*rawResult, bool, error) {
	status := resp.StatusCode
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		snippet := readSnippet(resp.Body)
		release(resp, cancel)
		return nil, false, c.authError(r.endpoint, status, snippet)

	case r.raw && status == http.StatusOK:
		// Stream the file; the per-attempt context lives until Close.
		var body io.ReadCloser = &streamBody{ReadCloser: resp.Body, cancel: cancel}
		if m := ReadMeterFrom(ctx); m != nil && r.kind == Read {
			body = &meteredBody{ReadCloser: body, m: m, endpoint: r.endpoint}
		}
		return &rawResult{
			body:        body,
			contentType: resp.Header.Get("Content-Type"),
		}, false, nil

	case status >= 200 && status < 300:
		defer release(resp, cancel)
		transient, err := c.decodeReply(ctx, r, resp)
		return nil, transient, err

	default:
		se := &StatusError{Status: status, Body: readSnippet(resp.Body)}
		release(resp, cancel)
		if status >= 500 {
			// The kernel (or a proxy in front of it) got the request and
			// failed somewhere: we cannot know whether the handler ran.
			if r.kind == Write {
				return nil, false, &OutcomeUnknownError{Endpoint: r.endpoint, Cause: se}
			}
			transient := status == http.StatusBadGateway || status == http.StatusServiceUnavailable || status == http.StatusGatewayTimeout
			return nil, transient, &TransportError{Endpoint: r.endpoint, Cause: se, Sent: true}
		}
		// 1xx/3xx/4xx: refused by routing or middleware, the handler did not run.
		return nil, r.kind == Read && status == http.StatusTooManyRequests, &TransportError{Endpoint: r.endpoint, Cause: se}
	}
}

// decodeReply reads and decodes a 2xx envelope into r.out.
func (c *Client) decodeReply(ctx context.Context, r *request, resp *http.Response) (bool, error) {
	// unknown wraps failures that happen after the kernel answered 2xx: for a
	// write, the kernel most likely applied it, but we cannot read the result.
	unknown := func(err error) error {
		if r.kind == Write {
			return &OutcomeUnknownError{Endpoint: r.endpoint, Cause: err}
		}
		return err
	}
	limit := c.maxResponse
	if r.maxBody > 0 {
		limit = r.maxBody
	}
	body, err := readCapped(resp.Body, limit, r.endpoint)
	if err != nil {
		var tooLarge *ResponseTooLargeError
		if errors.As(err, &tooLarge) {
			return false, unknown(err)
		}
		if r.kind == Write {
			return false, unknown(err)
		}
		return isTransient(ctx, err), &TransportError{Endpoint: r.endpoint, Cause: err, Sent: true}
	}
	if r.kind == Read {
		if m := ReadMeterFrom(ctx); m != nil {
			if err := m.ChargeBytes(r.endpoint, int64(len(body))); err != nil {
				return false, err
			}
		}
	}
	if r.decode != nil {
		if err := r.decode(body); err != nil {
			var de *DecodeError
			if errors.As(err, &de) {
				return false, unknown(err)
			}
			return false, err
		}
		return false, nil
	}
	return false, decodeData(r, resp.StatusCode, body, unknown)
}

// decodeData decodes a 2xx envelope body into r.out. A reply onePass
// accepts is decoded in one pass, straight into r.out; any other, or one
// whose data does not decode, is decoded in two (the envelope, then its
// data), which tells every kind of failure apart.
func decodeData(r *request, status int, body []byte, unknown func(error) error) error {
	if !r.raw && isPointer(r.out) && onePass(body) {
		// json.Unmarshal validates the whole body before it writes to
		// r.out; a data that fails to decode is decoded again below, into
		// the same r.out, and fails there the same way.
		env := struct {
			Data any `json:"data"`
		}{Data: r.out}
		if json.Unmarshal(body, &env) == nil {
			return nil
		}
	}
	return decodeTwoPass(r, status, body, unknown)
}

// decodeTwoPass decodes the envelope, then its data into r.out.
func decodeTwoPass(r *request, status int, body []byte, unknown func(error) error) error {
	env, err := decodeEnvelope(body)
	if err != nil {
		return unknown(&DecodeError{Endpoint: r.endpoint, Status: status, Cause: err})
	}
	if env.Code != 0 {
		return &APIError{Endpoint: r.endpoint, Code: env.Code, Msg: env.Msg}
	}
	if r.raw {
		// getFile answers errors with HTTP 202 + envelope; anything but 200
		// is not the file, even with code 0.
		return &APIError{Endpoint: r.endpoint, Code: env.Code,
			Msg: strings.TrimSpace(fmt.Sprintf("HTTP %d reply instead of file content %s", status, env.Msg))}
	}
	if r.out == nil {
		return nil
	}
	if env.Data == nil {
		if r.nullable {
			return nil
		}
		return &NullDataError{Endpoint: r.endpoint}
	}
	if err := json.Unmarshal(env.Data, r.out); err != nil {
		return unknown(&DecodeError{Endpoint: r.endpoint, Status: status, Cause: err})
	}
	return nil
}

func (c *Client) authError(endpoint string, status int, body string) *AuthError {
	e := &AuthError{Endpoint: endpoint, Status: status, Msg: body}
	if env, err := decodeEnvelope([]byte(body)); err == nil {
		e.Msg = env.Msg
	}
	switch {
	case status == http.StatusForbidden:
		e.Hint = "the token lacks admin role (or the kernel runs read-only for this caller)"
	case c.token == "":
		e.Hint = "no API token is configured; set it from SiYuan Settings → About"
	default:
		e.Hint = "check the API token in SiYuan Settings → About"
	}
	return e
}

// newHTTPRequest builds the POST for one attempt. localErr reports a failure
// of our own body producer (multipart only).
func (c *Client) newHTTPRequest(ctx context.Context, r *request) (*http.Request, func() error, error) {
	localErr := func() error { return nil }
	var body io.ReadCloser
	contentType := "application/json"
	if r.multipart != nil {
		pr, pw := io.Pipe()
		mw := multipart.NewWriter(pw)
		contentType = mw.FormDataContentType()
		var failed atomic.Pointer[error]
		go func() {
			err := func() (err error) {
				// The producer runs for a call beside its own goroutine:
				// a panic in it is that call's error, not the process's end.
				defer failure.Recover(&err)
				if err = r.multipart(mw); err == nil {
					err = mw.Close()
				}
				return err
			}()
			// ErrClosedPipe means the transport stopped reading (its own
			// failure, classified from the trace), not a local fault.
			if err != nil && !errors.Is(err, io.ErrClosedPipe) {
				failed.Store(&err)
			}
			pw.CloseWithError(err)
		}()
		body = pr
		localErr = func() error {
			if p := failed.Load(); p != nil {
				return *p
			}
			return nil
		}
	} else {
		body = io.NopCloser(bytes.NewReader(r.jsonBody))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.baseURL+r.endpoint, body)
	if err != nil {
		_ = body.Close()
		return nil, nil, invalidArg(r.endpoint, "cannot build request: %v", err)
	}
	if r.multipart == nil {
		req.ContentLength = int64(len(r.jsonBody))
		if r.kind == Read {
			// Reads may be replayed by net/http if the connection died before
			// anything was written; that is harmless for a read.
			req.GetBody = func() (io.ReadCloser, error) {
				return io.NopCloser(bytes.NewReader(r.jsonBody)), nil
			}
		}
	}
	// Writes get no GetBody and no Idempotency-Key: net/http then has no way
	// to resend them on its own, so "attempted once" holds below us too.
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("User-Agent", userAgent)
	if c.token != "" {
		req.Header.Set("Authorization", "Token "+c.token)
	}
	for k, v := range r.headers {
		req.Header.Set(k, v)
	}
	return req, localErr, nil
}

func encodeJSONBody(endpoint string, v any) ([]byte, error) {
	if v == nil {
		return []byte("{}"), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: encode request: %w", ErrInvalidArgument, endpoint, err)
	}
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		return []byte("{}"), nil // SiYuan rejects an empty body; {} is "no parameters"
	}
	if len(b) == 0 || b[0] != '{' {
		return nil, invalidArg(endpoint, "request must encode to a JSON object, got %T", v)
	}
	return b, nil
}

// sendTrace records, via httptrace, whether request bytes may have left us.
// Headers are buffered before they hit the wire, so WroteHeaders is a
// conservative "may have been sent": an ambiguous write becomes
// OutcomeUnknown, never a false definite failure.
type sendTrace struct {
	wrote  atomic.Bool
	reused atomic.Bool
}

func (t *sendTrace) clientTrace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		GotConn:      func(info httptrace.GotConnInfo) { t.reused.Store(info.Reused) },
		WroteHeaders: func() { t.wrote.Store(true) },
		WroteRequest: func(info httptrace.WroteRequestInfo) {
			if info.Err == nil {
				t.wrote.Store(true)
			}
		},
	}
}

func (t *sendTrace) mayHaveReachedServer() bool { return t.wrote.Load() }

// isTransient reports whether a read failing with err is worth retrying.
func isTransient(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false // the caller gave up; that is not the kernel's fault
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded), // per-attempt Timeout
		errors.Is(err, io.EOF),
		errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), // kernel still booting or restarting
		errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.ECONNABORTED),
		errors.Is(err, syscall.EPIPE):
		return true
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return dnsErr.IsTemporary || dnsErr.IsTimeout
	}
	var netErr net.Error
	return errors.As(err, &netErr) && netErr.Timeout()
}

// readSnippet returns the start of an error body for diagnostics.
func readSnippet(r io.Reader) string {
	b, _ := io.ReadAll(io.LimitReader(r, 1024))
	return strings.ToValidUTF8(strings.TrimSpace(string(b)), "\uFFFD")
}

// release lets small leftovers go (so the connection can be reused), then
// closes the body and ends the attempt's context.
func release(resp *http.Response, cancel context.CancelFunc) {
	_, _ = io.CopyN(io.Discard, resp.Body, 4<<10)
	_ = resp.Body.Close()
	cancel()
}

// streamBody ends the attempt's context when the caller closes the stream.
type streamBody struct {
	io.ReadCloser
	cancel context.CancelFunc
	once   sync.Once
}

func (b *streamBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.cancel)
	return err
}
