package mcp

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// asyncPost starts a POST and returns a channel with its result.
func asyncPost(t *testing.T, ctx context.Context, url, body string, hdr map[string]string) <-chan httpResult {
	t.Helper()
	out := make(chan httpResult, 1)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			out <- httpResult{status: -1}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		out <- httpResult{status: resp.StatusCode, header: resp.Header, body: b, msgs: parseBody(resp.Header.Get("Content-Type"), b)}
	}()
	return out
}

func noSignal(t *testing.T, ch <-chan struct{}, d time.Duration, what string) {
	t.Helper()
	select {
	case <-ch:
		t.Fatalf("unexpected %s", what)
	case <-time.After(d):
	}
}

func TestLegacyCancellationIsTyped(t *testing.T) {
	tests := []struct {
		name     string
		id       string // id of the call
		wrong    string // a cancel that must NOT match
		matching string
	}{
		{"numeric id", `1`, `"1"`, `1`},
		{"string id", `"1"`, `1`, `"1"`},
		{"float form", `7`, `"7"`, `7.0`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGate()
			s := testServer(t, g)
			ts := newHTTPTest(t, s, HTTPOptions{})
			sid := legacyInit(t, ts.URL, nil, nil)
			res := asyncPost(t, context.Background(), ts.URL, `{"jsonrpc":"2.0","id":`+tt.id+`,"method":"tools/call","params":{"name":"slow"}}`, legacyHeaders(sid))
			waitFor(t, g.started, "handler start")
			cancel := func(id string) {
				r := do(t, nil, http.MethodPost, ts.URL, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+id+`,"reason":"test"}}`, legacyHeaders(sid))
				if r.status != 202 {
					t.Fatalf("cancel: %d", r.status)
				}
			}
			cancel(tt.wrong)
			noSignal(t, g.cancelled, 150*time.Millisecond, "cancellation by a differently typed id")
			// A cancel from another session does not reach this call either.
			other := legacyInit(t, ts.URL, nil, nil)
			do(t, nil, http.MethodPost, ts.URL, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+tt.id+`}}`, legacyHeaders(other))
			noSignal(t, g.cancelled, 100*time.Millisecond, "cancellation from another session")
			cancel(tt.matching)
			waitFor(t, g.cancelled, "handler cancellation")
			r := <-res
			if r.status != 200 || len(r.msgs) != 0 {
				t.Fatalf("a cancelled call gets no response: %d %s", r.status, r.body)
			}
		})
	}
}

func TestLegacyCancelBeforeExecution(t *testing.T) {
	g := newGate()
	s := testServer(t, g)
	hold := make(chan struct{})
	registered := make(chan struct{}, 1)
	s.beforeCall = func(*Request) {
		registered <- struct{}{}
		<-hold
	}
	ts := newHTTPTest(t, s, HTTPOptions{})
	sid := legacyInit(t, ts.URL, nil, nil)
	res := asyncPost(t, context.Background(), ts.URL, `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"slow"}}`, legacyHeaders(sid))
	waitFor(t, registered, "call registration")
	do(t, nil, http.MethodPost, ts.URL, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":42}}`, legacyHeaders(sid))
	close(hold)
	r := <-res
	if len(r.msgs) != 0 {
		t.Fatalf("cancelled pending call answered: %s", r.body)
	}
	noSignal(t, g.started, 100*time.Millisecond, "handler start of a cancelled pending call")
}

func TestLegacyDisconnectDoesNotCancel(t *testing.T) {
	g := newGate()
	s := testServer(t, g)
	ts := newHTTPTest(t, s, HTTPOptions{})
	sid := legacyInit(t, ts.URL, nil, nil)
	ctx, cancel := context.WithCancel(context.Background())
	res := asyncPost(t, ctx, ts.URL, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`, legacyHeaders(sid))
	waitFor(t, g.started, "handler start")
	cancel()
	<-res
	noSignal(t, g.cancelled, 200*time.Millisecond, "cancellation by disconnect (legacy)")
	close(g.release)
	waitFor(t, g.finished, "handler end")
}

func TestLegacyDeleteCancelsCalls(t *testing.T) {
	g := newGate()
	s := testServer(t, g)
	ts := newHTTPTest(t, s, HTTPOptions{})
	sid := legacyInit(t, ts.URL, nil, nil)
	res := asyncPost(t, context.Background(), ts.URL, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`, legacyHeaders(sid))
	waitFor(t, g.started, "handler start")
	if r := do(t, nil, http.MethodDelete, ts.URL, "", legacyHeaders(sid)); r.status != 204 {
		t.Fatalf("delete: %d", r.status)
	}
	waitFor(t, g.cancelled, "cancellation by DELETE")
	<-res
}

func TestModernDisconnectCancels(t *testing.T) {
	g := newGate()
	s := testServer(t, g)
	ts := newHTTPTest(t, s, HTTPOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	body, h := modernReq(1, "tools/call", map[string]any{"name": "slow"})
	res := asyncPost(t, ctx, ts.URL, body, h)
	waitFor(t, g.started, "handler start")
	cancel()
	<-res
	waitFor(t, g.cancelled, "cancellation by disconnect (modern)")
}

func TestCloseCancelsEverything(t *testing.T) {
	g := newGate()
	s := testServer(t, g)
	ts := newHTTPTest(t, s, HTTPOptions{})
	sid := legacyInit(t, ts.URL, nil, nil)
	res1 := asyncPost(t, context.Background(), ts.URL, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`, legacyHeaders(sid))
	body, h := modernReq(2, "tools/call", map[string]any{"name": "slow"})
	res2 := asyncPost(t, context.Background(), ts.URL, body, h)
	waitFor(t, g.started, "first start")
	waitFor(t, g.started, "second start")
	s.Close()
	waitFor(t, g.cancelled, "first cancel")
	waitFor(t, g.cancelled, "second cancel")
	<-res1
	<-res2
}
