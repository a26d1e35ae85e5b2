package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

// countingBody is a request body that counts what was read of it and can
// fail after some bytes.
type countingBody struct {
	r       io.Reader
	read    int
	chunk   int   // at most this many bytes per Read (0: any)
	failAt  int   // fail once this many bytes were read (0: never)
	failErr error // the failure
}

func (c *countingBody) Read(p []byte) (int, error) {
	if c.failAt > 0 && c.read >= c.failAt {
		return 0, c.failErr
	}
	if c.chunk > 0 && len(p) > c.chunk {
		p = p[:c.chunk]
	}
	n, err := c.r.Read(p)
	c.read += n
	return n, err
}

func (c *countingBody) Close() error { return nil }

func bodyHandler(limit, budget int64) *httpHandler {
	s := NewServer(Options{})
	return s.HTTPHandler(HTTPOptions{MaxBodyBytes: limit, BodyBudgetBytes: budget, BodyBudgetWait: 50 * time.Millisecond}).(*httpHandler)
}

func postWith(body *countingBody, declared int64) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r.Body, r.ContentLength = body, declared
	return r
}

func TestReadBody(t *testing.T) {
	const limit = 256 << 10
	slow := fmt.Errorf("read tcp: %w", os.ErrDeadlineExceeded)
	tests := []struct {
		name     string
		size     int   // bytes the client sends
		declared int64 // Content-Length (-1: none)
		chunk    int
		failAt   int
		status   int   // 0: read whole
		maxRead  int   // the most that may be read of the body
		taken    int64 // budget held until the answer starts
	}{
		{"small declared", 100, 100, 0, 0, 0, 100, 0},
		{"small undeclared", 100, -1, 7, 0, 0, 100, 0},
		{"large declared", 200 << 10, 200 << 10, 0, 0, 0, 200 << 10, 200 << 10},
		{"large undeclared", 200 << 10, -1, 4096, 0, 0, 200 << 10, limit + 1},
		{"at the cap", limit, limit, 0, 0, 0, limit, limit},
		{"declared over the cap", 40 << 20, 40 << 20, 0, 0, 413, 0, 0},
		{"undeclared over the cap", 40 << 20, -1, 0, 0, 413, limit + 1, 0},
		{"declared shorter than sent", 300 << 10, 1000, 0, 0, 0, 1000, 0},
		{"cut for arriving too slowly", 200 << 10, 200 << 10, 10, 10, 408, 10, 0},
		{"broken off", 200 << 10, -1, 4096, 100 << 10, 400, 100<<10 + 4096, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := bodyHandler(limit, 4*limit)
			cb := &countingBody{r: bytes.NewReader(bytes.Repeat([]byte("x"), tt.size)), chunk: tt.chunk, failAt: tt.failAt, failErr: slow}
			if tt.name == "broken off" {
				cb.failErr = io.ErrUnexpectedEOF
			}
			body, release, refusal := h.readBody(postWith(cb, tt.declared))
			if cb.read > tt.maxRead {
				t.Fatalf("read %d bytes, at most %d allowed", cb.read, tt.maxRead)
			}
			if tt.status != 0 {
				if refusal == nil || refusal.status != tt.status {
					t.Fatalf("refusal %+v, want %d", refusal, tt.status)
				}
			} else {
				if refusal != nil {
					t.Fatalf("refused with %d", refusal.status)
				}
				want := min(tt.size, int(max(tt.declared, int64(tt.size))))
				if tt.declared >= 0 {
					want = int(tt.declared)
				}
				if len(body) != want {
					t.Fatalf("body of %d bytes, want %d", len(body), want)
				}
			}
			if taken := 4*limit - h.budget.available(); taken != tt.taken {
				t.Fatalf("%d bytes of budget held, want %d", taken, tt.taken)
			}
			release()
			release()
			if h.budget.available() != 4*limit {
				t.Fatalf("budget not given back: %d", h.budget.available())
			}
		})
	}
}

// A large post that finds the budget taken is refused with 503 and
// Retry-After without a byte of its body read; small posts still go.
func TestBodyBudgetExhausted(t *testing.T) {
	const limit = 256 << 10
	h := bodyHandler(limit, 2*limit)
	var held []func()
	for i := 0; i < 2; i++ {
		_, release, refusal := h.readBody(postWith(&countingBody{r: bytes.NewReader(make([]byte, limit))}, limit))
		if refusal != nil {
			t.Fatalf("post %d: %d", i, refusal.status)
		}
		held = append(held, release)
	}
	cb := &countingBody{r: bytes.NewReader(make([]byte, limit))}
	if _, _, refusal := h.readBody(postWith(cb, limit)); refusal == nil || refusal.status != 503 || !refusal.retry || cb.read != 0 {
		t.Fatalf("a post beyond the budget: %+v, %d bytes read", refusal, cb.read)
	}
	if _, _, refusal := h.readBody(postWith(&countingBody{r: strings.NewReader("{}")}, 2)); refusal != nil {
		t.Fatalf("a small post beside a spent budget: %d", refusal.status)
	}
	// A waiting post gets the budget a finished one gives back.
	got := make(chan *bodyRefusal, 1)
	h.opts.BodyBudgetWait = 5 * time.Second
	go func() {
		_, release, refusal := h.readBody(postWith(&countingBody{r: bytes.NewReader(make([]byte, limit))}, limit))
		release()
		got <- refusal
	}()
	time.Sleep(20 * time.Millisecond)
	held[0]()
	if refusal := <-got; refusal != nil {
		t.Fatalf("the waiting post: %d", refusal.status)
	}
	held[1]()
}

// Over HTTP: 413 closes the connection, and the JSON-RPC error is the body.
func TestBodyTooLargeClosesTheConnection(t *testing.T) {
	s := testServer(t, nil)
	ts := newHTTPTest(t, s, HTTPOptions{MaxBodyBytes: 1024})
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, ts.URL, strings.NewReader(strings.Repeat("x", 4096)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 413 || !resp.Close || !strings.Contains(string(b), `"code":-32600`) {
		t.Fatalf("%d close=%v %s", resp.StatusCode, resp.Close, b)
	}
}

// FuzzReadBody reads bodies of any length, declared or not, in any
// chunking: a body is never read past the cap, its bytes are the ones
// sent, and the budget always comes back whole.
func FuzzReadBody(f *testing.F) {
	f.Add(uint32(10), int64(10), uint16(0), uint32(0))
	f.Add(uint32(70000), int64(-1), uint16(3), uint32(0))
	f.Add(uint32(300000), int64(-1), uint16(4096), uint32(0))
	f.Add(uint32(300000), int64(300000), uint16(0), uint32(1000))
	f.Add(uint32(5), int64(100), uint16(1), uint32(0))
	f.Fuzz(func(t *testing.T, size uint32, declared int64, chunk uint16, failAt uint32) {
		const limit = 256 << 10
		size %= 1 << 20
		if declared < -1 {
			declared = -1
		}
		h := bodyHandler(limit, 2*limit)
		data := bytes.Repeat([]byte("ab"), int(size+1)/2)[:size]
		cb := &countingBody{r: bytes.NewReader(data), chunk: int(chunk), failAt: int(failAt), failErr: errors.New("broken")}
		body, release, refusal := h.readBody(postWith(cb, declared))
		if cb.read > limit+1 {
			t.Fatalf("read %d bytes past the cap %d", cb.read, limit)
		}
		if refusal == nil {
			if int64(len(body)) > limit || !bytes.HasPrefix(data, body) {
				t.Fatalf("body of %d bytes is not a prefix of what was sent", len(body))
			}
			if declared < 0 && len(body) != len(data) {
				t.Fatalf("an undeclared body of %d bytes read as %d", len(data), len(body))
			}
		}
		release()
		if h.budget.available() != 2*limit {
			t.Fatalf("budget %d after release", h.budget.available())
		}
	})
}

// budgetProbe is a response writer that notes how much body budget is
// free when the first byte of the answer is written: what a client that
// never reads its answer would leave held.
type budgetProbe struct {
	h       *httpHandler
	header  http.Header
	status  int
	freeAt  int64 // -1 until the answer starts
	written bytes.Buffer
}

func (p *budgetProbe) Header() http.Header { return p.header }

func (p *budgetProbe) note() {
	if p.freeAt < 0 {
		p.freeAt = p.h.budget.available()
	}
}

func (p *budgetProbe) WriteHeader(code int) { p.note(); p.status = code }

func (p *budgetProbe) Write(b []byte) (int, error) { p.note(); return p.written.Write(b) }

// A large post gives its body budget back before the first byte of its
// answer goes out, whether that is the call's result or the first event
// of its stream (a progress notice): a client that never reads what it is
// sent holds none of the budget other clients' large posts wait for.
func TestBudgetGoesBackBeforeTheAnswer(t *testing.T) {
	const limit, budget = 1 << 20, 4 << 20
	pad := strings.Repeat("x", 200<<10)
	tests := []struct {
		name   string
		tool   string
		params map[string]any
		want   string // in the answer
	}{
		{"a result", "echo", map[string]any{"name": "echo", "arguments": map[string]any{"text": pad}}, pad[:1000]},
		{"a stream", "progress", map[string]any{"name": "progress", "arguments": map[string]any{"pad": pad},
			"_meta": func() map[string]any { m := modernMeta(nil); m["progressToken"] = "p"; return m }()}, "notifications/progress"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := testServer(t, nil)
			h := s.HTTPHandler(HTTPOptions{MaxBodyBytes: limit, BodyBudgetBytes: budget}).(*httpHandler)
			body, hdr := modernReq(1, "tools/call", tt.params)
			if len(body) <= smallBody {
				t.Fatalf("the post of %d bytes is not large", len(body))
			}
			r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range hdr {
				r.Header.Set(k, v)
			}
			p := &budgetProbe{h: h, header: http.Header{}, freeAt: -1}
			h.ServeHTTP(p, r)
			if p.status != 200 || !strings.Contains(p.written.String(), tt.want) {
				t.Fatalf("answer %d: %.300s", p.status, p.written.String())
			}
			if p.freeAt != budget {
				t.Fatalf("%d bytes of budget were free as the answer started, want all %d", p.freeAt, budget)
			}
			if h.budget.available() != budget {
				t.Fatalf("budget after the answer: %d", h.budget.available())
			}
		})
	}
}
