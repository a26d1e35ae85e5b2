package mcp

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestIdleSessionsAndStreamsMemory: 200 idle legacy sessions plus 64 open
// GET notification streams cost under 50 MiB. The measurement includes the
// in-process clients' side of the 64 streams, so it overstates the server's
// share.
func TestIdleSessionsAndStreamsMemory(t *testing.T) {
	srv := NewServer(Options{Name: "mem", Version: "1"})
	defer srv.Close()
	srv.AddTool(Tool{Name: "t", Description: "t", Handler: func(ctx context.Context, req *CallRequest) (*CallResult, error) { return TextResult("ok"), nil }})
	h := srv.HTTPHandler(HTTPOptions{
		// One principal per X-Principal header, so 64 streams fit the
		// per-principal cap of 4.
		Authenticate:       func(r *http.Request) (string, bool) { return r.Header.Get("X-Principal"), true },
		StreamPollInterval: time.Hour,
	})
	ts := httptest.NewServer(h)
	defer ts.Close()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 128}}

	measure := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse + m.StackInuse
	}
	base := measure()

	initialize := func(principal string) string {
		body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"m","version":"1"}}}`
		req, _ := http.NewRequest("POST", ts.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("X-Principal", principal)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		sid := resp.Header.Get("Mcp-Session-Id")
		if sid == "" {
			t.Fatalf("no session: %d", resp.StatusCode)
		}
		return sid
	}
	sessions := make([]string, 200)
	for i := range sessions {
		sessions[i] = initialize(fmt.Sprintf("p%d", i/4))
	}
	var bodies []*bufio.Reader
	for i := 0; i < 64; i++ {
		req, _ := http.NewRequest("GET", ts.URL, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", sessions[i])
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		req.Header.Set("X-Principal", fmt.Sprintf("p%d", i/4))
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("stream %d: status %d", i, resp.StatusCode)
		}
		br := bufio.NewReader(resp.Body)
		line, err := br.ReadBytes('\n')
		for err == nil && !bytes.HasPrefix(line, []byte("data:")) {
			line, err = br.ReadBytes('\n')
		}
		if err != nil || !bytes.Contains(line, []byte("notifications/tools/list_changed")) {
			t.Fatalf("stream %d: first event %q %v", i, line, err)
		}
		bodies = append(bodies, br)
	}
	if st := srv.Stats(); st.Streams != 64 {
		t.Fatalf("stats: %+v", st)
	}
	used := int64(measure()) - int64(base)
	t.Logf("200 idle sessions + 64 GET streams: %.1f MiB (heap+stacks, clients included)", float64(used)/(1<<20))
	if used > 50<<20 {
		t.Fatalf("%.1f MiB, want under 50 MiB", float64(used)/(1<<20))
	}
	runtime.KeepAlive(bodies)
}
