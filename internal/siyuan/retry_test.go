package siyuan

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

type errClass int

const (
	classOK errClass = iota
	classAPI
	classNullData
	classDecode
	classUnknown        // *OutcomeUnknownError
	classDefinite       // *TransportError with Sent=false
	classSentTransport  // *TransportError with Sent=true (reads only)
	classStatusDefinite // *TransportError{Sent:false} caused by a *StatusError
)

func classify(t *testing.T, err error) errClass {
	t.Helper()
	if err == nil {
		return classOK
	}
	if IsOutcomeUnknown(err) {
		return classUnknown
	}
	var ae *APIError
	var ne *NullDataError
	var de *DecodeError
	var te *TransportError
	switch {
	case errors.As(err, &ae):
		return classAPI
	case errors.As(err, &ne):
		return classNullData
	case errors.As(err, &de):
		return classDecode
	case errors.As(err, &te):
		var se *StatusError
		if te.Sent {
			return classSentTransport
		}
		if errors.As(err, &se) {
			return classStatusDefinite
		}
		return classDefinite
	}
	t.Fatalf("unclassified error %T: %v", err, err)
	return -1
}

// TestFailureClassesAndAttempts drives every server-side failure mode through
// a read and a write and checks the error class and how many requests the
// kernel saw: reads retry transient failures up to ReadAttempts (3); writes
// are attempted exactly once, whatever happens.
func TestFailureClassesAndAttempts(t *testing.T) {
	status := func(code int) func(http.ResponseWriter, *http.Request, seen) {
		return func(w http.ResponseWriter, _ *http.Request, _ seen) {
			w.WriteHeader(code)
			_, _ = w.Write([]byte("failure"))
		}
	}
	tests := []struct {
		name                        string
		reply                       func(http.ResponseWriter, *http.Request, seen)
		readClass, writeClass       errClass
		readAttempts, writeAttempts int32
	}{
		{"ok", replyOK("x"), classOK, classOK, 1, 1},
		{"api error", func(w http.ResponseWriter, _ *http.Request, _ seen) { replyJSON(w, -1, "nope", nil) },
			classAPI, classAPI, 1, 1},
		{"null data", replyOK(nil), classNullData, classNullData, 1, 1},
		{"undecodable 2xx", func(w http.ResponseWriter, _ *http.Request, _ seen) { _, _ = w.Write([]byte("<html>")) },
			classDecode, classUnknown, 1, 1},
		{"drop after apply", func(w http.ResponseWriter, _ *http.Request, _ seen) { dropConnection(w) },
			classSentTransport, classUnknown, 3, 1},
		{"truncated reply", func(w http.ResponseWriter, _ *http.Request, _ seen) { truncatedReply(w) },
			classSentTransport, classUnknown, 3, 1},
		{"400", status(400), classStatusDefinite, classStatusDefinite, 1, 1},
		{"404", status(404), classStatusDefinite, classStatusDefinite, 1, 1},
		{"429", status(429), classStatusDefinite, classStatusDefinite, 3, 1},
		{"500", status(500), classSentTransport, classUnknown, 1, 1},
		{"502", status(502), classSentTransport, classUnknown, 3, 1},
		{"503", status(503), classSentTransport, classUnknown, 3, 1},
		{"504", status(504), classSentTransport, classUnknown, 3, 1},
		{"307 redirect not followed", func(w http.ResponseWriter, r *http.Request, _ seen) {
			http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
		}, classStatusDefinite, classStatusDefinite, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, kind := range []CallKind{Read, Write} {
				fk := newFakeKernel(t, tt.reply)
				c := newTestClient(t, fk.URL)
				var out string
				err := c.Do(context.Background(), "/api/x", map[string]string{"id": "1"}, &out, kind)
				wantClass, wantAttempts := tt.readClass, tt.readAttempts
				if kind == Write {
					wantClass, wantAttempts = tt.writeClass, tt.writeAttempts
				}
				if got := classify(t, err); got != wantClass {
					t.Errorf("%v: class %d, want %d (err: %v)", kind, got, wantClass, err)
				}
				if got := fk.hits.Load(); got != wantAttempts {
					t.Errorf("%v: kernel saw %d requests, want %d", kind, got, wantAttempts)
				}
			}
		})
	}
}

func TestReadRetrySucceedsAfterTransientFailures(t *testing.T) {
	var n atomic.Int32
	fk := newFakeKernel(t, func(w http.ResponseWriter, _ *http.Request, _ seen) {
		if n.Add(1) < 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		replyJSON(w, 0, "", "3.7.3")
	})
	c := newTestClient(t, fk.URL)
	v, err := c.Version(context.Background())
	if err != nil || v != "3.7.3" || fk.hits.Load() != 3 {
		t.Fatalf("Version = %q, %v after %d attempts", v, err, fk.hits.Load())
	}
}

func TestReadAttemptsIsConfigurable(t *testing.T) {
	fk := newFakeKernel(t, func(w http.ResponseWriter, _ *http.Request, _ seen) { w.WriteHeader(502) })
	c := newTestClient(t, fk.URL, func(c *Config) { c.ReadAttempts = 5 })
	_ = c.Do(context.Background(), "/api/x", nil, nil, Read)
	if n := fk.hits.Load(); n != 5 {
		t.Fatalf("%d attempts, want 5", n)
	}
}

func TestReadRetryStopsWhenContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	fk := newFakeKernel(t, func(w http.ResponseWriter, _ *http.Request, _ seen) {
		cancel() // the caller gives up while the first attempt fails
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	c := newTestClient(t, fk.URL, func(c *Config) { c.ReadBackoff = 40 * time.Millisecond })
	err := c.Do(ctx, "/api/x", nil, nil, Read)
	if err == nil || fk.hits.Load() != 1 {
		t.Fatalf("err = %v after %d attempts, want failure after 1", err, fk.hits.Load())
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want it to mention the cancellation", err)
	}
}

func TestConnectionRefusedIsDefinite(t *testing.T) {
	url := closedURL(t)
	for _, kind := range []CallKind{Read, Write} {
		ct := &countingTransport{base: http.DefaultTransport.(*http.Transport).Clone()}
		c := newTestClient(t, url, func(c *Config) { c.HTTPClient = &http.Client{Transport: ct} })
		err := c.Do(context.Background(), "/api/x", nil, nil, kind)
		var te *TransportError
		if !errors.As(err, &te) || te.Sent || IsOutcomeUnknown(err) {
			t.Fatalf("%v: err = %#v, want definite *TransportError", kind, err)
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("%v: err = %v, want ECONNREFUSED in the chain", kind, err)
		}
		want := int32(3) // a booting kernel refuses connections: reads retry
		if kind == Write {
			want = 1
		}
		if n := ct.n.Load(); n != want {
			t.Errorf("%v: %d attempts, want %d", kind, n, want)
		}
	}
}

func TestCancelledBeforeSendIsDefinite(t *testing.T) {
	fk := newFakeKernel(t, replyOK("x"))
	c := newTestClient(t, fk.URL)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := c.Do(ctx, "/api/x", nil, nil, Write)
	var te *TransportError
	if !errors.As(err, &te) || te.Sent || IsOutcomeUnknown(err) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %#v, want definite *TransportError wrapping context.Canceled", err)
	}
	if n := fk.hits.Load(); n != 0 {
		t.Fatalf("kernel saw %d requests, want 0", n)
	}
}

// slowKernel reads the request (so a write has "arrived") and then stalls
// until the client goes away.
func slowKernel(t *testing.T) *fakeKernel {
	return newFakeKernel(t, func(w http.ResponseWriter, r *http.Request, _ seen) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
}

func TestLatencyPastDeadlineAfterSending(t *testing.T) {
	t.Run("write via caller deadline", func(t *testing.T) {
		fk := slowKernel(t)
		c := newTestClient(t, fk.URL)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		defer cancel()
		err := c.Do(ctx, "/api/x", map[string]string{"id": "1"}, nil, Write)
		if !IsOutcomeUnknown(err) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want OutcomeUnknown wrapping DeadlineExceeded", err)
		}
		if n := fk.hits.Load(); n != 1 {
			t.Fatalf("kernel saw %d requests, want 1", n)
		}
	})
	t.Run("write via per-attempt Timeout", func(t *testing.T) {
		fk := slowKernel(t)
		c := newTestClient(t, fk.URL, func(c *Config) { c.Timeout = 30 * time.Millisecond })
		err := c.Do(context.Background(), "/api/x", nil, nil, Write)
		if !IsOutcomeUnknown(err) {
			t.Fatalf("err = %v, want OutcomeUnknown", err)
		}
		if n := fk.hits.Load(); n != 1 {
			t.Fatalf("kernel saw %d requests, want 1", n)
		}
	})
	t.Run("read via per-attempt Timeout is retried", func(t *testing.T) {
		fk := slowKernel(t)
		c := newTestClient(t, fk.URL, func(c *Config) { c.Timeout = 20 * time.Millisecond })
		err := c.Do(context.Background(), "/api/x", nil, nil, Read)
		var te *TransportError
		if !errors.As(err, &te) || !te.Sent || IsOutcomeUnknown(err) {
			t.Fatalf("err = %#v, want *TransportError{Sent:true}", err)
		}
		if n := fk.hits.Load(); n != 3 {
			t.Fatalf("kernel saw %d requests, want 3", n)
		}
	})
	t.Run("read via caller deadline is not retried", func(t *testing.T) {
		fk := slowKernel(t)
		c := newTestClient(t, fk.URL)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		err := c.Do(ctx, "/api/x", nil, nil, Read)
		if err == nil || fk.hits.Load() != 1 {
			t.Fatalf("err = %v after %d attempts, want failure after 1", err, fk.hits.Load())
		}
	})
}

// TestTransportDoesNotReplayWrites sets up the one situation in which
// net/http resends a request by itself: a reused keep-alive connection that
// the server closes after reading the request. A replayable request (here a
// POST with Idempotency-Key) is sent twice; our writes must be sent once.
func TestTransportDoesNotReplayWrites(t *testing.T) {
	newKernel := func(t *testing.T) *fakeKernel {
		var n atomic.Int32
		return newFakeKernel(t, func(w http.ResponseWriter, r *http.Request, _ seen) {
			if n.Add(1) == 1 {
				replyJSON(w, 0, "", "warm-up") // leaves an idle keep-alive connection
				return
			}
			dropConnection(w)
		})
	}

	t.Run("control: replayable request is resent by net/http", func(t *testing.T) {
		fk := newKernel(t)
		hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
		post := func() error {
			req, _ := http.NewRequest(http.MethodPost, fk.URL+"/api/x", strings.NewReader("{}"))
			req.Header.Set("Idempotency-Key", "k")
			resp, err := hc.Do(req)
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
			}
			return err
		}
		if err := post(); err != nil {
			t.Fatal(err)
		}
		_ = post()
		if n := fk.hits.Load(); n < 3 {
			t.Fatalf("kernel saw %d requests; expected net/http to replay (>=3), so this test would prove nothing", n)
		}
	})

	t.Run("write is sent exactly once", func(t *testing.T) {
		fk := newKernel(t)
		c := newTestClient(t, fk.URL)
		var s string
		if err := c.Do(context.Background(), "/api/x", nil, &s, Read); err != nil {
			t.Fatal(err)
		}
		err := c.Do(context.Background(), "/api/x", map[string]string{"id": "1"}, nil, Write)
		if !IsOutcomeUnknown(err) {
			t.Fatalf("err = %v, want OutcomeUnknown", err)
		}
		if n := fk.hits.Load(); n != 2 {
			t.Fatalf("kernel saw %d requests, want 2 (warm-up + one write)", n)
		}
	})
}
