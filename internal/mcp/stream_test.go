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

// TestGETStreamCapsAreFair: past a session's, a client's or the total
// cap a new stream closes the oldest of the session, of the client, or of
// the client holding the most; a client already holding as many as every
// other is refused. The places are shared by the handlers of one server.
func TestGETStreamCapsAreFair(t *testing.T) {
	s := testServer(t, nil)
	auth := func(r *http.Request) (string, bool) { return r.Header.Get("X-User"), true }
	opts := HTTPOptions{Authenticate: auth, MaxStreamsPerSession: 2, MaxStreamsPerClient: 3, MaxStreams: 4}
	ts := newHTTPTest(t, s, opts)
	session := func(url, u string) map[string]string {
		sid := legacyInit(t, url, map[string]string{"X-User": u}, nil)
		return getHeaders(sid, "X-User", u)
	}
	open := func(url string, h map[string]string) *liveStream {
		st := openStream(t, http.MethodGet, url, "", h)
		if st.status == 200 {
			st.next(t, time.Second)
		}
		return st
	}
	a1 := session(ts.URL, "a")
	s1, s2 := open(ts.URL, a1), open(ts.URL, a1)
	// A third stream of one session closes the session's oldest.
	s3 := open(ts.URL, a1)
	if s3.status != 200 {
		t.Fatalf("a session's third stream: %d", s3.status)
	}
	s1.ended(t, time.Second)
	// A fourth stream of one client (another session) closes the client's
	// oldest.
	a2 := session(ts.URL, "a")
	s4 := open(ts.URL, a2)
	s5 := open(ts.URL, a2)
	if s4.status != 200 || s5.status != 200 {
		t.Fatalf("the client's streams: %d %d", s4.status, s5.status)
	}
	s2.ended(t, time.Second)
	// Client a holds 3 of 4; b takes the last place; c then pushes out
	// a's oldest, and so does e through another handler of the server.
	b1 := open(ts.URL, session(ts.URL, "b"))
	c1 := open(ts.URL, session(ts.URL, "c"))
	if b1.status != 200 || c1.status != 200 {
		t.Fatalf("b and c: %d %d", b1.status, c1.status)
	}
	s3.ended(t, time.Second)
	ts2 := newHTTPTest(t, s, opts)
	e1 := open(ts2.URL, session(ts2.URL, "e"))
	if e1.status != 200 {
		t.Fatalf("e through another handler: %d", e1.status)
	}
	s4.ended(t, time.Second)
	// Now a, b, c and e hold one each: nobody holds more than b would.
	if b2 := open(ts.URL, session(ts.URL, "b")); b2.status != 429 {
		t.Fatalf("a second stream of b among equals: %d", b2.status)
	}
	if st := s.Stats(); st.Streams != 4 {
		t.Fatalf("stats: %+v", st)
	}
	for _, st := range []*liveStream{s5, b1, c1, e1} {
		st.quiet(t, 50*time.Millisecond)
	}
}

func TestGETStreamLifetime(t *testing.T) {
	s := testServer(t, nil)
	clock := &fakeClock{now: time.Now()}
	s.now = clock.Now
	ts := newHTTPTest(t, s, HTTPOptions{StreamPollInterval: 20 * time.Millisecond, StreamMaxDuration: 300 * time.Millisecond})
	// Closing a stream frees its place.
	sid := legacyInit(t, ts.URL, nil, nil)
	a := openStream(t, http.MethodGet, ts.URL, "", getHeaders(sid))
	a.next(t, time.Second)
	a.cancel()
	a.ended(t, time.Second)
	for i := 0; i < 100 && s.Stats().Streams != 0; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if st := s.Stats(); st.Streams != 0 || s.streamSlots.len() != 0 {
		t.Fatalf("a closed stream kept its place: %+v", st)
	}
	// Streams end after StreamMaxDuration.
	b := openStream(t, http.MethodGet, ts.URL, "", getHeaders(sid))
	b.next(t, time.Second)
	b.ended(t, 2*time.Second)
	// An expired session closes its stream.
	c := openStream(t, http.MethodGet, ts.URL, "", getHeaders(legacyInit(t, ts.URL, nil, nil)))
	c.next(t, time.Second)
	sid2 := legacyInit(t, ts.URL, nil, nil)
	d := openStream(t, http.MethodGet, ts.URL, "", getHeaders(sid2))
	d.next(t, time.Second)
	clock.Advance(31 * time.Minute)
	d.ended(t, time.Second)
	c.ended(t, time.Second)
	if r := do(t, nil, http.MethodPost, ts.URL, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, map[string]string{"Mcp-Session-Id": sid2}); r.status != 404 {
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
