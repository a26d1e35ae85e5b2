package siyuan

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
)

// testMeter records charges and fails past its limits.
type testMeter struct {
	mu       sync.Mutex
	calls    []string
	bytes    int64
	maxCalls int
	maxBytes int64
}

var errBudget = errors.New("budget exceeded")

func (m *testMeter) ChargeCall(endpoint string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls = append(m.calls, endpoint)
	if len(m.calls) > m.maxCalls {
		return errBudget
	}
	return nil
}

func (m *testMeter) ChargeBytes(_ string, n int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.bytes += n
	if m.bytes > m.maxBytes {
		return errBudget
	}
	return nil
}

func TestReadMeterChargesReadsOnly(t *testing.T) {
	fk := newFakeKernel(t, func(w http.ResponseWriter, r *http.Request, _ seen) {
		switch r.URL.Path {
		case endpoint.GetFile:
			w.Write([]byte(strings.Repeat("x", 1000)))
		case endpoint.Version:
			replyJSON(w, 0, "", "3.7.3")
		default:
			replyJSON(w, 0, "", nil)
		}
	})
	c := newTestClient(t, fk.URL)
	m := &testMeter{maxCalls: 3, maxBytes: 10 << 10}
	ctx := WithReadMeter(context.Background(), m)
	if ReadMeterFrom(ctx) != m || ReadMeterFrom(context.Background()) != nil {
		t.Fatal("ReadMeterFrom")
	}
	if _, err := c.Version(ctx); err != nil {
		t.Fatal(err)
	}
	// A write is never charged.
	c.UpdateBlock(ctx, "20200101000000-aaaaaaa", "markdown", "x") // its answer does not matter here
	if len(m.calls) != 1 {
		t.Fatalf("a write was charged: %v", m.calls)
	}
	before := m.bytes
	if before <= 0 {
		t.Fatalf("reply bytes not charged: %d", before)
	}
	// A streamed file is charged as it is read.
	rc, _, err := c.GetFile(ctx, "/data/x")
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, rc)
	rc.Close()
	if err != nil || n != 1000 || m.bytes != before+1000 {
		t.Fatalf("stream: %d %v, charged %d", n, err, m.bytes-before)
	}
	// Past the call limit the call fails before it is sent.
	hits := fk.hits.Load()
	if _, err := c.Version(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Version(ctx); !errors.Is(err, errBudget) {
		t.Fatalf("4th read: %v, want the meter's error", err)
	}
	if fk.hits.Load() != hits+1 {
		t.Fatalf("a refused read reached the kernel")
	}
}

func TestReadMeterBytesLimit(t *testing.T) {
	fk := newFakeKernel(t, func(w http.ResponseWriter, r *http.Request, _ seen) {
		if r.URL.Path == endpoint.GetFile {
			w.Write([]byte(strings.Repeat("y", 4096)))
			return
		}
		replyJSON(w, 0, "", strings.Repeat("v", 300))
	})
	c := newTestClient(t, fk.URL)
	m := &testMeter{maxCalls: 100, maxBytes: 200}
	ctx := WithReadMeter(context.Background(), m)
	if _, err := c.Version(ctx); !errors.Is(err, errBudget) {
		t.Fatalf("oversized reply: %v", err)
	}
	// Not retried: one hit.
	if fk.hits.Load() != 1 {
		t.Fatalf("hits %d", fk.hits.Load())
	}
	m2 := &testMeter{maxCalls: 100, maxBytes: 1000}
	rc, _, err := c.GetFile(WithReadMeter(context.Background(), m2), "/data/x")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if _, err := io.Copy(io.Discard, rc); !errors.Is(err, errBudget) {
		t.Fatalf("stream past the limit: %v", err)
	}
	if _, err := rc.Read(make([]byte, 10)); !errors.Is(err, errBudget) {
		t.Fatalf("the failure must stick: %v", err)
	}
}
