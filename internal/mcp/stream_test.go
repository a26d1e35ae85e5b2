package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// liveStream reads an SSE response in the background.
type liveStream struct {
	status int
	header http.Header
	msgs   chan map[string]any // closed at end of stream
	cancel context.CancelFunc
}

func openStream(t *testing.T, method, url, body string, hdr map[string]string) *liveStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	ls := &liveStream{status: resp.StatusCode, header: resp.Header, msgs: make(chan map[string]any, 64), cancel: cancel}
	t.Cleanup(cancel)
	go func() {
		defer close(ls.msgs)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			line := sc.Text()
			var m map[string]any
			switch {
			case strings.HasPrefix(line, "data: "):
				if json.Unmarshal([]byte(line[6:]), &m) != nil {
					continue
				}
			case strings.HasPrefix(line, "{"):
				if json.Unmarshal([]byte(line), &m) != nil {
					continue
				}
			default:
				continue
			}
			ls.msgs <- m
		}
	}()
	return ls
}

// next waits for the next message; nil means the stream ended.
func (ls *liveStream) next(t *testing.T, within time.Duration) map[string]any {
	t.Helper()
	select {
	case m := <-ls.msgs:
		return m
	case <-time.After(within):
		t.Fatalf("no message within %v", within)
		return nil
	}
}

// quiet asserts nothing arrives for d.
func (ls *liveStream) quiet(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case m, ok := <-ls.msgs:
		if ok {
			t.Fatalf("unexpected message %v", m)
		}
	case <-time.After(d):
	}
}

// ended waits for the stream to end.
func (ls *liveStream) ended(t *testing.T, within time.Duration) {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case _, ok := <-ls.msgs:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatalf("stream still open after %v", within)
		}
	}
}

func getHeaders(sid string, extra ...string) map[string]string {
	h := legacyHeaders(sid)
	h["Accept"] = "text/event-stream"
	for i := 0; i+1 < len(extra); i += 2 {
		h[extra[i]] = extra[i+1]
	}
	return h
}

func TestGETStreamNotifications(t *testing.T) {
	s := testServer(t, nil)
	var snap atomic.Value
	snap.Store("v1")
	ts := newHTTPTest(t, s, HTTPOptions{
		ToolsSnapshot:      func() string { return snap.Load().(string) },
		StreamPollInterval: 20 * time.Millisecond,
	})
	s.AddResource(Resource{URI: "test://r", Name: "r", Handler: func(ctx context.Context, req *ResourceRequest) (*ResourceResult, error) {
		return &ResourceResult{Contents: []ResourceContents{{URI: req.URI, Text: "x"}}}, nil
	}})
	sid := legacyInit(t, ts.URL, nil, nil)
	st := openStream(t, http.MethodGet, ts.URL, "", getHeaders(sid))
	if st.status != 200 || st.header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET: %d %s", st.status, st.header.Get("Content-Type"))
	}
	if m := st.next(t, time.Second); m["method"] != "notifications/tools/list_changed" {
		t.Fatalf("first event: %v", m)
	}
	// Unchanged snapshot: nothing, even on ToolsChanged.
	s.ToolsChanged()
	st.quiet(t, 100*time.Millisecond)
	// Changed snapshot: one notification, found by polling.
	snap.Store("v2")
	if m := st.next(t, time.Second); m["method"] != "notifications/tools/list_changed" {
		t.Fatalf("after change: %v", m)
	}
	st.quiet(t, 100*time.Millisecond)

	// Resource updates only for subscribed URIs; list changes always.
	s.ResourceUpdated("test://r")
	st.quiet(t, 50*time.Millisecond)
	do(t, nil, http.MethodPost, ts.URL, `{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"test://r"}}`, legacyHeaders(sid))
	s.ResourceUpdated("test://other")
	s.ResourceUpdated("test://r")
	if m := st.next(t, time.Second); m["method"] != "notifications/resources/updated" || m["params"].(map[string]any)["uri"] != "test://r" {
		t.Fatalf("resource update: %v", m)
	}
	s.ResourcesChanged()
	if m := st.next(t, time.Second); m["method"] != "notifications/resources/list_changed" {
		t.Fatalf("resources list: %v", m)
	}

	// DELETE closes the stream.
	do(t, nil, http.MethodDelete, ts.URL, "", legacyHeaders(sid))
	st.ended(t, time.Second)
}

func TestGETStreamDefaultSnapshotFollowsTools(t *testing.T) {
	s := testServer(t, nil)
	ts := newHTTPTest(t, s, HTTPOptions{})
	sid := legacyInit(t, ts.URL, nil, nil)
	st := openStream(t, http.MethodGet, ts.URL, "", getHeaders(sid))
	st.next(t, time.Second)
	s.AddTool(Tool{Name: "new_tool", Handler: func(ctx context.Context, req *CallRequest) (*CallResult, error) { return nil, nil }})
	if m := st.next(t, time.Second); m["method"] != "notifications/tools/list_changed" {
		t.Fatalf("after AddTool: %v", m)
	}
}

func TestGETStreamLimitsAndLifetime(t *testing.T) {
	s := testServer(t, nil)
	clock := &fakeClock{now: time.Now()}
	s.now = clock.Now
	auth := func(r *http.Request) (string, bool) { return r.Header.Get("X-User"), true }
	ts := newHTTPTest(t, s, HTTPOptions{Authenticate: auth, MaxStreamsPerPrincipal: 2, MaxStreams: 3,
		StreamPollInterval: 20 * time.Millisecond, StreamMaxDuration: 300 * time.Millisecond})
	user := func(u string) (string, map[string]string) {
		sid := legacyInit(t, ts.URL, map[string]string{"X-User": u}, nil)
		return sid, getHeaders(sid, "X-User", u)
	}
	_, a := user("a")
	_, b := user("b")
	_, c := user("c")
	open := func(h map[string]string) *liveStream {
		st := openStream(t, http.MethodGet, ts.URL, "", h)
		if st.status == 200 {
			st.next(t, time.Second)
		}
		return st
	}
	a1, a2 := open(a), open(a)
	if a3 := open(a); a3.status != 429 {
		t.Fatalf("third stream of one principal: %d", a3.status)
	}
	b1 := open(b)
	if c1 := open(c); c1.status != 429 {
		t.Fatalf("stream over the total cap: %d", c1.status)
	}
	// A second handler of the same server shares the caps.
	ts2 := newHTTPTest(t, s, HTTPOptions{Authenticate: auth, MaxStreamsPerPrincipal: 2, MaxStreams: 3})
	sidE := legacyInit(t, ts2.URL, map[string]string{"X-User": "e"}, nil)
	if e1 := openStream(t, http.MethodGet, ts2.URL, "", getHeaders(sidE, "X-User", "e")); e1.status != 429 {
		t.Fatalf("caps not shared across handlers: %d", e1.status)
	}
	if st := s.Stats(); st.Streams != 3 || st.Sessions < 4 {
		t.Fatalf("stats: %+v", st)
	}
	// Closing a stream frees its slot.
	a1.cancel()
	a1.ended(t, time.Second)
	var c2 *liveStream
	for i := 0; i < 50; i++ {
		if c2 = open(c); c2.status == 200 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if c2.status != 200 {
		t.Fatalf("slot not freed: %d", c2.status)
	}
	// Streams end after StreamMaxDuration.
	a2.ended(t, 2*time.Second)
	b1.ended(t, 2*time.Second)

	// An expired session closes its stream.
	sid, h := user("d")
	d1 := open(h)
	clock.Advance(31 * time.Minute)
	d1.ended(t, time.Second)
	if r := do(t, nil, http.MethodPost, ts.URL, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, map[string]string{"Mcp-Session-Id": sid, "X-User": "d"}); r.status != 404 {
		t.Fatalf("expired session: %d", r.status)
	}
}

func TestClosingGETStreamKeepsCalls(t *testing.T) {
	g := newGate()
	s := testServer(t, g)
	ts := newHTTPTest(t, s, HTTPOptions{})
	sid := legacyInit(t, ts.URL, nil, nil)
	st := openStream(t, http.MethodGet, ts.URL, "", getHeaders(sid))
	st.next(t, time.Second)
	res := asyncPost(t, context.Background(), ts.URL, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`, legacyHeaders(sid))
	waitFor(t, g.started, "handler start")
	st.cancel()
	st.ended(t, time.Second)
	noSignal(t, g.cancelled, 150*time.Millisecond, "call cancelled by stream close")
	close(g.release)
	if r := <-res; toolText(r.result()) != "released" {
		t.Fatalf("call result: %s", r.body)
	}
}

func TestSubscriptionsListen(t *testing.T) {
	s := testServer(t, nil)
	s.AddPrompt(Prompt{Name: "p", Handler: func(ctx context.Context, req *PromptRequest) (*PromptResult, error) { return &PromptResult{}, nil }})
	ts := newHTTPTest(t, s, HTTPOptions{KeepAliveInterval: 20 * time.Millisecond})
	listen := func(id any, filter map[string]any) *liveStream {
		body, h := modernReq(id, "subscriptions/listen", map[string]any{"notifications": filter})
		return openStream(t, http.MethodPost, ts.URL, body, h)
	}
	tools := listen("L1", map[string]any{"toolsListChanged": true, "resourcesListChanged": true, "taskIds": []string{"x"}})
	prompts := listen(7, map[string]any{"promptsListChanged": true})
	ack := tools.next(t, time.Second)
	if ack["method"] != "notifications/subscriptions/acknowledged" {
		t.Fatalf("first message: %v", ack)
	}
	p := ack["params"].(map[string]any)
	if p["_meta"].(map[string]any)[MetaSubscriptionID] != "L1" {
		t.Fatalf("ack tag: %v", p)
	}
	honoured := p["notifications"].(map[string]any)
	if honoured["toolsListChanged"] != true || len(honoured) != 1 {
		t.Fatalf("honoured subset: %v (no resources on this server)", honoured)
	}
	if m := prompts.next(t, time.Second); m["params"].(map[string]any)["_meta"].(map[string]any)[MetaSubscriptionID] != float64(7) {
		t.Fatalf("numeric subscription id: %v", m)
	}
	s.AddTool(Tool{Name: "late", Handler: func(ctx context.Context, req *CallRequest) (*CallResult, error) { return nil, nil }})
	m := tools.next(t, time.Second)
	if m["method"] != "notifications/tools/list_changed" || m["params"].(map[string]any)["_meta"].(map[string]any)[MetaSubscriptionID] != "L1" {
		t.Fatalf("tools change: %v", m)
	}
	prompts.quiet(t, 100*time.Millisecond) // filtered out
	s.PromptsChanged()
	if m := prompts.next(t, time.Second); m["method"] != "notifications/prompts/list_changed" {
		t.Fatalf("prompts change: %v", m)
	}
	// Shutdown ends each subscription with a result carrying its id.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); s.Close() }()
	final := tools.next(t, time.Second)
	if final["id"] != "L1" || final["result"].(map[string]any)["_meta"].(map[string]any)[MetaSubscriptionID] != "L1" {
		t.Fatalf("final: %v", final)
	}
	tools.ended(t, time.Second)
	wg.Wait()
}

func TestOutboundRequestViaGETStream(t *testing.T) {
	s := testServer(t, nil)
	ts := newHTTPTest(t, s, HTTPOptions{})
	sid := legacyInit(t, ts.URL, nil, map[string]any{"roots": map[string]any{}})
	st := openStream(t, http.MethodGet, ts.URL, "", getHeaders(sid))
	st.next(t, time.Second)
	sess := s.sessions.get(sid)
	type reply struct {
		res json.RawMessage
		err error
	}
	done := make(chan reply, 1)
	go func() {
		res, err := sess.call(context.Background(), nil, "roots/list", map[string]any{})
		done <- reply{res, err}
	}()
	req := st.next(t, time.Second)
	if req["method"] != "roots/list" {
		t.Fatalf("want roots/list on the GET stream, got %v", req)
	}
	do(t, nil, http.MethodPost, ts.URL, mustJSON(map[string]any{"jsonrpc": "2.0", "id": req["id"], "result": map[string]any{"roots": []any{}}}), legacyHeaders(sid))
	r := <-done
	if r.err != nil || string(r.res) != `{"roots":[]}` {
		t.Fatalf("call: %s %v", r.res, r.err)
	}
}

func TestClientRequestTimeout(t *testing.T) {
	s := NewServer(Options{ClientRequestTimeout: 100 * time.Millisecond})
	t.Cleanup(s.Close)
	s.AddTool(Tool{Name: "confirm", Handler: func(ctx context.Context, req *CallRequest) (*CallResult, error) {
		res, err := req.Elicit(ctx, ElicitParams{Message: "ok?"})
		if err != nil {
			return nil, err
		}
		return TextResult(res.Action), nil
	}})
	ts := newHTTPTest(t, s, HTTPOptions{})
	sid := legacyInit(t, ts.URL, nil, map[string]any{"elicitation": map[string]any{}})
	st := openStream(t, http.MethodPost, ts.URL, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"confirm"}}`, legacyHeaders(sid))
	req := st.next(t, time.Second)
	if req["method"] != "elicitation/create" {
		t.Fatalf("want elicitation/create, got %v", req)
	}
	note := st.next(t, time.Second)
	if note["method"] != "notifications/cancelled" || note["params"].(map[string]any)["requestId"] != req["id"] {
		t.Fatalf("want notifications/cancelled for %v, got %v", req["id"], note)
	}
	final := st.next(t, time.Second)
	if res := final["result"].(map[string]any); res["isError"] != true || !strings.Contains(toolText(res), "did not answer") {
		t.Fatalf("final: %v", final)
	}
}
