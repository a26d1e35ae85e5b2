package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a settable clock for expiry tests.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// gate lets a test hold a tool handler and observe that it started, ended,
// and whether its context was cancelled.
type gate struct {
	started   chan struct{}
	release   chan struct{}
	cancelled chan struct{}
	finished  chan struct{}
}

func newGate() *gate {
	return &gate{started: make(chan struct{}, 8), release: make(chan struct{}), cancelled: make(chan struct{}, 8), finished: make(chan struct{}, 8)}
}

// testServer builds a server with the tools the tests use.
func testServer(t testing.TB, g *gate) *Server {
	t.Helper()
	s := NewServer(Options{Name: "test-server", Version: "1.2.3", Instructions: "be careful"})
	t.Cleanup(s.Close)
	obj := map[string]any{"type": "object"}
	s.AddTool(Tool{Name: "echo", Description: "echoes its arguments", InputSchema: map[string]any{
		"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}, "n": map[string]any{"type": "integer"}},
		"required": []string{"text"},
	}, Annotations: &ToolAnnotations{ReadOnlyHint: Bool(true)}, Handler: func(ctx context.Context, req *CallRequest) (*CallResult, error) {
		var a map[string]any
		_ = json.Unmarshal(req.Arguments, &a)
		// Every call of echo checks that the decoded arguments handed to
		// the handler are the arguments.
		var fields map[string]json.RawMessage
		_ = json.Unmarshal(req.Arguments, &fields)
		if !reflect.DeepEqual(fields, req.ArgumentFields) {
			return nil, fmt.Errorf("ArgumentFields %v are not Arguments %s", req.ArgumentFields, req.Arguments)
		}
		return StructuredResult(map[string]any{"args": a, "era": req.Era.String(), "principal": req.Principal, "version": req.ProtocolVersion}), nil
	}})
	s.AddTool(Tool{Name: "fail", InputSchema: obj, Handler: func(ctx context.Context, req *CallRequest) (*CallResult, error) {
		return nil, errors.New("it broke")
	}})
	s.AddTool(Tool{Name: "rpcfail", InputSchema: obj, Handler: func(ctx context.Context, req *CallRequest) (*CallResult, error) {
		return nil, NewError(-31000, "custom", map[string]any{"why": "because"})
	}})
	s.AddTool(Tool{Name: "panic", InputSchema: obj, Handler: func(ctx context.Context, req *CallRequest) (*CallResult, error) {
		panic("boom")
	}})
	s.AddTool(Tool{Name: "progress", InputSchema: obj, Handler: func(ctx context.Context, req *CallRequest) (*CallResult, error) {
		for i := 1; i <= 3; i++ {
			_ = req.Progress(ctx, float64(i), 3, "step")
		}
		_ = req.Log(ctx, LogInfo, "test", "info line")
		_ = req.Log(ctx, LogDebug, "test", "debug line")
		return TextResult("done"), nil
	}})
	s.AddTool(Tool{Name: "confirm", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"target": map[string]any{"type": "string"}}},
		Handler: func(ctx context.Context, req *CallRequest) (*CallResult, error) {
			res, err := req.Elicit(ctx, ElicitParams{Message: "Delete it?", RequestedSchema: map[string]any{
				"type": "object", "properties": map[string]any{"confirm": map[string]any{"type": "boolean"}}, "required": []string{"confirm"},
			}})
			if err != nil {
				return nil, err
			}
			return StructuredResult(map[string]any{"action": res.Action, "content": res.Content}), nil
		}})
	s.AddTool(Tool{Name: "twostep", InputSchema: obj, Handler: func(ctx context.Context, req *CallRequest) (*CallResult, error) {
		a, err := req.Elicit(ctx, ElicitParams{Key: "first", Message: "first?"})
		if err != nil {
			return nil, err
		}
		b, err := req.Elicit(ctx, ElicitParams{Key: "second", Message: "second?"})
		if err != nil {
			return nil, err
		}
		return TextResult(a.Action + "+" + b.Action), nil
	}})
	s.AddTool(Tool{Name: "sample", InputSchema: obj, Handler: func(ctx context.Context, req *CallRequest) (*CallResult, error) {
		ans, err := req.Input(ctx, map[string]InputRequest{"s": {Method: "sampling/createMessage", Params: map[string]any{"messages": []any{}, "maxTokens": 5}}})
		if err != nil {
			return nil, err
		}
		return TextResult(string(ans["s"])), nil
	}})
	s.AddTool(Tool{Name: "raw", InputSchema: obj, Handler: func(ctx context.Context, req *CallRequest) (*CallResult, error) {
		if a, ok := req.InputResponses["k"]; ok {
			return TextResult("raw:" + string(a)), nil
		}
		return nil, InputRequired(map[string]InputRequest{"k": {Method: "roots/list"}})
	}})
	s.AddTool(Tool{Name: "header", InputSchema: map[string]any{"type": "object", "properties": map[string]any{
		"region": map[string]any{"type": "string", "x-mcp-header": "Region"},
		"count":  map[string]any{"type": "integer", "x-mcp-header": "Count"},
		"flag":   map[string]any{"type": "boolean", "x-mcp-header": "Flag"},
	}}, Handler: func(ctx context.Context, req *CallRequest) (*CallResult, error) { return TextResult("ok"), nil }})
	if g != nil {
		s.AddTool(Tool{Name: "slow", InputSchema: obj, Handler: func(ctx context.Context, req *CallRequest) (*CallResult, error) {
			g.started <- struct{}{}
			defer func() { g.finished <- struct{}{} }()
			select {
			case <-ctx.Done():
				g.cancelled <- struct{}{}
				return nil, ctx.Err()
			case <-g.release:
				return TextResult("released"), nil
			}
		}})
	}
	return s
}

func modernMeta(caps map[string]any) map[string]any {
	if caps == nil {
		caps = map[string]any{}
	}
	return map[string]any{
		MetaProtocolVersion:    ModernProtocolVersion,
		MetaClientInfo:         map[string]any{"name": "test", "version": "1"},
		MetaClientCapabilities: caps,
	}
}

// modernReq builds a modern request body and its standard headers.
func modernReq(id any, method string, params map[string]any) (string, map[string]string) {
	if params == nil {
		params = map[string]any{}
	}
	if m, ok := params["_meta"]; !ok {
		params["_meta"] = modernMeta(nil)
	} else if m == nil {
		delete(params, "_meta") // explicitly without _meta
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	h := map[string]string{"Mcp-Protocol-Version": ModernProtocolVersion, "Mcp-Method": method}
	switch method {
	case "tools/call", "prompts/get":
		if n, ok := params["name"].(string); ok {
			h["Mcp-Name"] = n
		}
	case "resources/read":
		if u, ok := params["uri"].(string); ok {
			h["Mcp-Name"] = u
		}
	}
	return string(body), h
}

type httpResult struct {
	status int
	header http.Header
	// contentLength and transferEncoding are the response's framing.
	contentLength    int64
	transferEncoding []string
	body             []byte
	msgs             []map[string]any // JSON body or SSE events
}

// last returns the final JSON-RPC message (the response).
func (r httpResult) last() map[string]any {
	if len(r.msgs) == 0 {
		return nil
	}
	return r.msgs[len(r.msgs)-1]
}

func (r httpResult) errCode() int {
	e, _ := r.last()["error"].(map[string]any)
	if e == nil {
		return 0
	}
	return int(e["code"].(float64))
}

func (r httpResult) result() map[string]any {
	res, _ := r.last()["result"].(map[string]any)
	return res
}

func do(t testing.TB, client *http.Client, method, url, body string, hdr map[string]string) httpResult {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	r := httpResult{status: resp.StatusCode, header: resp.Header, contentLength: resp.ContentLength, transferEncoding: resp.TransferEncoding, body: b}
	r.msgs = parseBody(resp.Header.Get("Content-Type"), b)
	return r
}

func parseBody(ct string, b []byte) []map[string]any {
	var out []map[string]any
	if strings.HasPrefix(ct, "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var m map[string]any
				if json.Unmarshal([]byte(d), &m) == nil {
					out = append(out, m)
				}
			}
		}
		return out
	}
	var m map[string]any
	if json.Unmarshal(b, &m) == nil {
		out = append(out, m)
	}
	return out
}

// legacyInit opens a legacy session and returns its id.
func legacyInit(t testing.TB, url string, hdr map[string]string, caps map[string]any) string {
	t.Helper()
	if caps == nil {
		caps = map[string]any{}
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": caps, "clientInfo": map[string]any{"name": "t", "version": "1"},
	}})
	r := do(t, nil, http.MethodPost, url, string(body), hdr)
	if r.status != http.StatusOK {
		t.Fatalf("initialize: %d %s", r.status, r.body)
	}
	sid := r.header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatal("no session id")
	}
	h := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"}
	for k, v := range hdr {
		h[k] = v
	}
	if r := do(t, nil, http.MethodPost, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, h); r.status != http.StatusAccepted {
		t.Fatalf("initialized: %d", r.status)
	}
	return sid
}

func legacyHeaders(sid string) map[string]string {
	return map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"}
}

func newHTTPTest(t testing.TB, s *Server, opts HTTPOptions) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(s.HTTPHandler(opts))
	t.Cleanup(ts.Close)
	return ts
}

func toolText(res map[string]any) string {
	content, _ := res["content"].([]any)
	var parts []string
	for _, c := range content {
		if m, ok := c.(map[string]any); ok {
			if s, ok := m["text"].(string); ok {
				parts = append(parts, s)
			}
		}
	}
	return strings.Join(parts, "")
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func waitFor(t testing.TB, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}
