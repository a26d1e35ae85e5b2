package siyuan

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// seen is one request as observed by a fake kernel.
type seen struct {
	Method, Path, Auth, ContentType, UserAgent string
	Body                                       []byte
}

// fakeKernel is an httptest server that records requests and lets each test
// decide the reply.
type fakeKernel struct {
	*httptest.Server
	hits atomic.Int32
	mu   sync.Mutex
	reqs []seen
}

// newFakeKernel starts a server; reply is called after the request body has
// been read in full (so a write "reached the kernel" before reply runs).
func newFakeKernel(t *testing.T, reply func(w http.ResponseWriter, r *http.Request, s seen)) *fakeKernel {
	t.Helper()
	fk := &fakeKernel{}
	fk.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s := seen{
			Method: r.Method, Path: r.URL.Path, Auth: r.Header.Get("Authorization"),
			ContentType: r.Header.Get("Content-Type"), UserAgent: r.Header.Get("User-Agent"), Body: body,
		}
		fk.hits.Add(1)
		fk.mu.Lock()
		fk.reqs = append(fk.reqs, s)
		fk.mu.Unlock()
		reply(w, r, s)
	}))
	t.Cleanup(fk.Close)
	return fk
}

func (fk *fakeKernel) last(t *testing.T) seen {
	t.Helper()
	fk.mu.Lock()
	defer fk.mu.Unlock()
	if len(fk.reqs) == 0 {
		t.Fatal("no request reached the fake kernel")
	}
	return fk.reqs[len(fk.reqs)-1]
}

// newTestClient builds a client with a tiny backoff so retry tests stay fast.
func newTestClient(t *testing.T, baseURL string, mods ...func(*Config)) *Client {
	t.Helper()
	cfg := Config{BaseURL: baseURL, Token: "test-token", ReadBackoff: time.Millisecond}
	for _, m := range mods {
		m(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

// replyJSON writes an envelope with the given data.
func replyJSON(w http.ResponseWriter, code int, msg string, data any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"code": code, "msg": msg, "data": data})
}

func replyOK(data any) func(http.ResponseWriter, *http.Request, seen) {
	return func(w http.ResponseWriter, _ *http.Request, _ seen) { replyJSON(w, 0, "", data) }
}

// dropConnection hijacks the connection and closes it without a reply: the
// request was read (and, for a real kernel, applied) but the reply is lost.
func dropConnection(w http.ResponseWriter) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		_ = conn.Close()
	}
}

// truncatedReply promises a longer body than it sends, then closes.
func truncatedReply(w http.ResponseWriter) {
	conn, buf, err := w.(http.Hijacker).Hijack()
	if err != nil {
		return
	}
	_, _ = buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"code\":0,")
	_ = buf.Flush()
	_ = conn.Close()
}

// closedURL returns the URL of a listener that has been closed, so dialing it
// is refused.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return "http://" + addr
}

// countingTransport counts round trips, including ones that never reach a
// server (e.g. refused dials).
type countingTransport struct {
	base http.RoundTripper
	n    atomic.Int32
}

func (ct *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	ct.n.Add(1)
	return ct.base.RoundTrip(r)
}
