package embedded

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// closeCounter is a request body that reports being closed.
type closeCounter struct {
	io.Reader
	closed atomic.Bool
}

func (c *closeCounter) Close() error { c.closed.Store(true); return nil }

func TestHandlerTransport(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<19) // 8 MiB, written in 64 KiB pieces
	for _, c := range []struct {
		name     string
		h        http.HandlerFunc
		status   int
		body     string
		header   string
		tripErr  bool // RoundTrip fails: no answer
		bodyErr  bool // the answer's body fails part way
		wantBody []byte
	}{
		{name: "an answer", status: http.StatusTeapot, body: `{"ok":true}`, header: "application/json",
			h: func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				if string(b) != `{"id":"x"}` || r.Method != http.MethodPost || r.URL.Path != "/api/x" || r.RequestURI != "/api/x?q=1" ||
					r.Host != "kernel.test" || r.RemoteAddr != "127.0.0.1:0" || r.Header.Get("Authorization") != "Token t" {
					http.Error(w, "unexpected request", http.StatusBadRequest)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusTeapot)
				w.Header().Set("Content-Type", "text/late") // after WriteHeader: not sent, as on a socket
				io.WriteString(w, `{"ok":true}`)
			}},
		{name: "a handler that replaces its request's body", status: http.StatusOK, body: "read",
			h: func(w http.ResponseWriter, r *http.Request) {
				r.Body = http.MaxBytesReader(w, r.Body, 4)
				if _, err := io.ReadAll(r.Body); err == nil {
					http.Error(w, "the cap did not hold", http.StatusBadRequest)
					return
				}
				io.WriteString(w, "read")
			}},
		{name: "nothing written is an empty 200", status: http.StatusOK, body: "",
			h: func(w http.ResponseWriter, r *http.Request) {}},
		{name: "a body streamed in pieces", status: http.StatusOK, wantBody: big,
			h: func(w http.ResponseWriter, r *http.Request) {
				for b := big; len(b) > 0; b = b[64<<10:] {
					if _, err := w.Write(b[:64<<10]); err != nil {
						return
					}
					w.(http.Flusher).Flush()
				}
			}},
		{name: "a panic before the answer is a dropped exchange", tripErr: true,
			h: func(w http.ResponseWriter, r *http.Request) { panic("boom") }},
		{name: "an aborted handler before the answer", tripErr: true,
			h: func(w http.ResponseWriter, r *http.Request) { panic(http.ErrAbortHandler) }},
		{name: "a long body unflushed streams past the buffer", status: http.StatusOK, wantBody: big,
			h: func(w http.ResponseWriter, r *http.Request) {
				for b := big; len(b) > 0; b = b[64<<10:] {
					if _, err := w.Write(b[:64<<10]); err != nil {
						return
					}
				}
			}},
		{name: "an abort after the answer started fails the body", status: http.StatusOK, bodyErr: true,
			h: func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, "partial")
				w.(http.Flusher).Flush()
				panic(http.ErrAbortHandler)
			}},
		{name: "an abort before a kept answer was handed over is a dropped exchange", tripErr: true,
			h: func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, "partial")
				panic(http.ErrAbortHandler)
			}},
	} {
		for _, inline := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/inline=%v", c.name, inline), func(t *testing.T) {
				reqBody := &closeCounter{Reader: strings.NewReader(`{"id":"x"}`)}
				var wrote atomic.Bool
				ctx := httptrace.WithClientTrace(t.Context(), &httptrace.ClientTrace{WroteHeaders: func() { wrote.Store(true) }})
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://kernel.test/api/x?q=1", reqBody)
				req.Header.Set("Authorization", "Token t")
				tr := handlerTransport{h: c.h}
				if inline {
					tr.inline = func(*http.Request) bool { return true }
				}
				resp, err := tr.RoundTrip(req)
				if !wrote.Load() {
					t.Error("the request never counted as sent")
				}
				// The handler had a request of its own: the caller's is as it was.
				if req.Body != reqBody || req.RemoteAddr != "" || req.RequestURI != "" {
					t.Errorf("the caller's request changed: body %T, RemoteAddr %q, RequestURI %q", req.Body, req.RemoteAddr, req.RequestURI)
				}
				// Inline nothing is handed over before the handler's end: an
				// abort is a dropped exchange, however much it wrote.
				if c.tripErr || c.bodyErr && inline {
					if err == nil || !errors.Is(err, errAborted) {
						t.Fatalf("RoundTrip = %v, %v; want the exchange dropped", resp, err)
					}
					waitClosed(t, reqBody)
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				got, rerr := io.ReadAll(resp.Body)
				resp.Body.Close()
				if c.bodyErr {
					if rerr == nil || string(got) != "partial" {
						t.Fatalf("body %q, %v; want partial then an error", got, rerr)
					}
					return
				}
				if rerr != nil {
					t.Fatal(rerr)
				}
				if resp.StatusCode != c.status || resp.Header.Get("Content-Type") != c.header && c.header != "" {
					t.Fatalf("status %d, header %v", resp.StatusCode, resp.Header)
				}
				if c.wantBody != nil && !bytes.Equal(got, c.wantBody) || c.wantBody == nil && string(got) != c.body {
					t.Fatalf("body of %d bytes, want %d", len(got), max(len(c.body), len(c.wantBody)))
				}
				// A kept answer says its length, as a socket's Content-Length would.
				if (c.wantBody == nil || inline) && resp.ContentLength != int64(len(got)) {
					t.Fatalf("ContentLength %d, want %d", resp.ContentLength, len(got))
				}
				waitClosed(t, reqBody)
			})
		}
	}
}

func waitClosed(t *testing.T, b *closeCounter) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !b.closed.Load(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the request body was never closed")
		}
	}
}

// TestHandlerTransportStreams: what a handler flushed reaches the reader
// while the handler still runs (a download is not held until its end).
func TestHandlerTransportStreams(t *testing.T) {
	read := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "first ")
		w.(http.Flusher).Flush()
		<-read
		io.WriteString(w, "second")
	})
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://kernel.test/api/file", nil)
	resp, err := handlerTransport{h: h}.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	first := make([]byte, len("first "))
	if _, err := io.ReadFull(resp.Body, first); err != nil || string(first) != "first " {
		t.Fatalf("first part %q, %v", first, err)
	}
	close(read)
	if rest, err := io.ReadAll(resp.Body); err != nil || string(rest) != "second" || resp.ContentLength != -1 {
		t.Fatalf("rest %q, %v, length %d", rest, err, resp.ContentLength)
	}
}

// TestHandlerTransportCancel: a caller giving up ends its wait at once, and
// the handler sees its context end.
func TestHandlerTransportCancel(t *testing.T) {
	seen := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
		seen <- r.Context().Err()
	})
	ctx, cancel := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://kernel.test/api/slow", nil)
	time.AfterFunc(20*time.Millisecond, cancel)
	if _, err := (handlerTransport{h: h}).RoundTrip(req); !errors.Is(err, context.Canceled) {
		t.Fatalf("RoundTrip = %v, want context.Canceled", err)
	}
	select {
	case err := <-seen:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("the handler saw %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the handler never saw the cancellation")
	}
	// Inline: the handler sees the end, and the caller its context's error
	// (the answer, if any, came too late).
	ctx2, cancel2 := context.WithCancel(t.Context())
	req, _ = http.NewRequestWithContext(ctx2, http.MethodPost, "http://kernel.test/api/slow", nil)
	time.AfterFunc(20*time.Millisecond, cancel2)
	if _, err := (handlerTransport{h: h, inline: func(*http.Request) bool { return true }}).RoundTrip(req); !errors.Is(err, context.Canceled) {
		t.Fatalf("inline RoundTrip = %v, want context.Canceled", err)
	}
	if err := <-seen; !errors.Is(err, context.Canceled) {
		t.Fatalf("the inline handler saw %v", err)
	}
	// Already cancelled: the handler never runs.
	req, _ = http.NewRequestWithContext(ctx, http.MethodPost, "http://kernel.test/api/slow", nil)
	if _, err := (handlerTransport{h: h}).RoundTrip(req); !errors.Is(err, context.Canceled) {
		t.Fatalf("RoundTrip after cancel = %v", err)
	}
}

// TestTransportWriteDroppedIsOutcomeUnknown: a write the kernel applies and
// then drops without an answer is of unknown outcome through the
// in-process transport, as over a socket; it was applied once.
func TestTransportWriteDroppedIsOutcomeUnknown(t *testing.T) {
	k, err := Open(t.Context(), Options{Dir: t.TempDir(), Token: "tok", SQLFlushInterval: time.Hour,
		Faults: []Fault{{Endpoint: "/api/notebook/createNotebook", Kind: DropAfterApply}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	c, err := siyuan.New(siyuan.Config{BaseURL: "http://embedded.invalid", Token: "tok", HTTPClient: &http.Client{Transport: k.Transport()}})
	if err != nil {
		t.Fatal(err)
	}
	before, err := c.ListNotebooks(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateNotebook(t.Context(), "dropped"); !siyuan.IsOutcomeUnknown(err) {
		t.Fatalf("CreateNotebook = %v, want an unknown outcome", err)
	}
	after, err := c.ListNotebooks(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before)+1 {
		t.Fatalf("notebooks %d -> %d, want the write applied once", len(before), len(after))
	}
}

// TestKernelTransportInline: the kernel's JSON routes run in the caller's
// goroutine; a file read streams beside it.
func TestKernelTransportInline(t *testing.T) {
	k, err := Open(t.Context(), Options{Dir: t.TempDir(), Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	tr := k.Transport().(handlerTransport)
	for path, want := range map[string]bool{"/api/block/getBlockKramdown": true, "/api/block/updateBlock": true, "/api/query/sql": true, "/api/file/getFile": false} {
		req, _ := http.NewRequest(http.MethodPost, "http://kernel.test"+path, nil)
		if got := tr.inline(req); got != want {
			t.Errorf("%s inline = %v, want %v", path, got, want)
		}
	}
}
