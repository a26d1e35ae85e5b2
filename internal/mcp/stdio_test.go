package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// stdioPeer is the client end of a ServeStdio connection.
type stdioPeer struct {
	in   *io.PipeWriter
	msgs chan map[string]any
	done chan error
}

func startStdio(t *testing.T, s *Server) *stdioPeer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &stdioPeer{in: inW, msgs: make(chan map[string]any, 64), done: make(chan error, 1)}
	go func() {
		err := s.ServeStdio(context.Background(), inR, outW)
		outW.Close()
		p.done <- err
	}()
	go func() {
		defer close(p.msgs)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("server wrote a non-JSON line %q", sc.Text())
				continue
			}
			p.msgs <- m
		}
	}()
	t.Cleanup(func() { inW.Close() })
	return p
}

func (p *stdioPeer) send(t *testing.T, v any) {
	t.Helper()
	var line string
	if s, ok := v.(string); ok {
		line = s
	} else {
		line = mustJSON(v)
	}
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

func (p *stdioPeer) next(t *testing.T) map[string]any {
	t.Helper()
	select {
	case m, ok := <-p.msgs:
		if !ok {
			t.Fatal("stdout closed")
		}
		return m
	case <-time.After(5 * time.Second):
		t.Fatal("no message from server")
		return nil
	}
}

func (p *stdioPeer) quiet(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case m := <-p.msgs:
		t.Fatalf("unexpected message %v", m)
	case <-time.After(d):
	}
}

func stdioErrCode(m map[string]any) int {
	e, _ := m["error"].(map[string]any)
	if e == nil {
		return 0
	}
	return int(e["code"].(float64))
}

func TestStdioBothEras(t *testing.T) {
	g := newGate()
	s := testServer(t, g)
	p := startStdio(t, s)
	modern := func(id any, method string, params map[string]any) map[string]any {
		if params == nil {
			params = map[string]any{}
		}
		if _, ok := params["_meta"]; !ok {
			params["_meta"] = modernMeta(map[string]any{"elicitation": map[string]any{}})
		}
		return map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}
	}

	p.send(t, modern(1, "server/discover", nil))
	if r := p.next(t); r["result"].(map[string]any)["resultType"] != "complete" {
		t.Fatalf("discover: %v", r)
	}
	p.send(t, map[string]any{"jsonrpc": "2.0", "id": 2, "method": "server/discover"})
	if r := p.next(t); stdioErrCode(r) != CodeInvalidParams {
		t.Fatalf("discover without _meta: %v", r)
	}
	p.send(t, map[string]any{"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
	if r := p.next(t); stdioErrCode(r) != CodeInvalidRequest {
		t.Fatalf("legacy before initialize: %v", r)
	}
	p.send(t, map[string]any{"jsonrpc": "2.0", "id": 4, "method": "ping"})
	if r := p.next(t); r["id"] != float64(4) || r["result"] == nil {
		t.Fatalf("ping before initialize: %v", r)
	}
	p.send(t, `{"jsonrpc":"2.0","id":`)
	if r := p.next(t); stdioErrCode(r) != CodeParseError || r["id"] != nil {
		t.Fatalf("parse error: %v", r)
	}
	p.send(t, modern(5, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "m"}}))
	if r := p.next(t); r["result"].(map[string]any)["structuredContent"].(map[string]any)["era"] != "modern" {
		t.Fatalf("modern call: %v", r)
	}

	p.send(t, map[string]any{"jsonrpc": "2.0", "id": 6, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{"elicitation": map[string]any{}}, "clientInfo": map[string]any{"name": "c", "version": "1"}}})
	if r := p.next(t); r["result"].(map[string]any)["protocolVersion"] != "2025-06-18" {
		t.Fatalf("initialize: %v", r)
	}
	p.send(t, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	p.send(t, map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": map[string]any{"name": "echo", "arguments": map[string]any{"text": "l"}}})
	r := p.next(t)
	res := r["result"].(map[string]any)
	if res["structuredContent"].(map[string]any)["era"] != "legacy" {
		t.Fatalf("legacy call: %v", r)
	}
	if _, ok := res["resultType"]; ok {
		t.Fatal("legacy result with resultType")
	}
	// The modern era keeps working next to the session.
	p.send(t, modern(8, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "m"}}))
	if r := p.next(t); r["result"].(map[string]any)["structuredContent"].(map[string]any)["era"] != "modern" {
		t.Fatalf("modern after initialize: %v", r)
	}

	// Legacy elicitation: the request comes on stdout, the answer on stdin.
	p.send(t, map[string]any{"jsonrpc": "2.0", "id": "e", "method": "tools/call", "params": map[string]any{"name": "confirm"}})
	req := p.next(t)
	if req["method"] != "elicitation/create" {
		t.Fatalf("want elicitation/create, got %v", req)
	}
	if _, ok := req["params"].(map[string]any)["mode"]; ok {
		t.Fatal("2025-06-18 elicitation must not carry mode")
	}
	p.send(t, map[string]any{"jsonrpc": "2.0", "id": req["id"], "result": map[string]any{"action": "decline"}})
	if r := p.next(t); r["id"] != "e" || r["result"].(map[string]any)["structuredContent"].(map[string]any)["action"] != "decline" {
		t.Fatalf("elicitation result: %v", r)
	}
	// The same tool in the modern era: input_required.
	p.send(t, modern(9, "tools/call", map[string]any{"name": "confirm"}))
	if r := p.next(t); r["result"].(map[string]any)["resultType"] != "input_required" {
		t.Fatalf("modern confirm: %v", r)
	}

	// Typed cancellation on stdio.
	p.send(t, map[string]any{"jsonrpc": "2.0", "id": "5", "method": "tools/call", "params": map[string]any{"name": "slow"}})
	waitFor(t, g.started, "handler start")
	p.send(t, map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": map[string]any{"requestId": 5}})
	noSignal(t, g.cancelled, 100*time.Millisecond, "cancel by the number 5 of the string \"5\"")
	p.send(t, map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": map[string]any{"requestId": "5"}})
	waitFor(t, g.cancelled, "handler cancellation")
	p.quiet(t, 100*time.Millisecond) // no response for a cancelled request

	// List changes reach the initialized legacy session.
	s.AddTool(Tool{Name: "late", Handler: func(ctx context.Context, req *CallRequest) (*CallResult, error) { return nil, nil }})
	if m := p.next(t); m["method"] != "notifications/tools/list_changed" {
		t.Fatalf("list_changed: %v", m)
	}
	// Several replaced at once: one announcement, after all of them.
	nop := func(ctx context.Context, req *CallRequest) (*CallResult, error) { return nil, nil }
	s.AddTools(Tool{Name: "late", Title: "again", Handler: nop}, Tool{Name: "later", Handler: nop})
	if m := p.next(t); m["method"] != "notifications/tools/list_changed" {
		t.Fatalf("list_changed: %v", m)
	}
	p.quiet(t, 100*time.Millisecond)
	p.send(t, map[string]any{"jsonrpc": "2.0", "id": "tl", "method": "tools/list"})
	if r := p.next(t); !strings.Contains(fmt.Sprint(r["result"]), "again") || !strings.Contains(fmt.Sprint(r["result"]), "later") {
		t.Fatalf("tools after AddTools: %v", r)
	}
	s.RemoveTool("later")
	if m := p.next(t); m["method"] != "notifications/tools/list_changed" {
		t.Fatalf("list_changed: %v", m)
	}

	// Modern listen on stdio, ended by the client.
	p.send(t, modern("L", "subscriptions/listen", map[string]any{"notifications": map[string]any{"toolsListChanged": true}}))
	if m := p.next(t); m["method"] != "notifications/subscriptions/acknowledged" {
		t.Fatalf("ack: %v", m)
	}
	s.RemoveTool("late")
	got := map[string]bool{}
	for i := 0; i < 2; i++ { // one for the session, one for the subscription
		m := p.next(t)
		tag := ""
		if params, ok := m["params"].(map[string]any); ok {
			if meta, ok := params["_meta"].(map[string]any); ok {
				tag, _ = meta[MetaSubscriptionID].(string)
			}
		}
		got[tag] = m["method"] == "notifications/tools/list_changed"
	}
	if !got[""] || !got["L"] {
		t.Fatalf("list_changed deliveries: %v", got)
	}
	p.send(t, map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": map[string]any{"requestId": "L"}})
	time.Sleep(50 * time.Millisecond)
	s.PromptsChanged()
	s.ToolsChanged()
	if m := p.next(t); m["params"] != nil && m["params"].(map[string]any)["_meta"] != nil {
		t.Fatalf("cancelled subscription still delivering: %v", m)
	}

	// A line over the limit is rejected and the connection goes on.
	p.send(t, `{"jsonrpc":"2.0","id":"big","method":"ping","params":{"x":"`+strings.Repeat("a", 5<<20)+`"}}`)
	if r := p.next(t); stdioErrCode(r) != CodeInvalidRequest {
		t.Fatalf("too long: %v", r)
	}
	p.send(t, map[string]any{"jsonrpc": "2.0", "id": 10, "method": "ping"})
	if r := p.next(t); r["id"] != float64(10) {
		t.Fatalf("after long line: %v", r)
	}

	// EOF ends the connection once the calls already sent are answered
	// (issue 9: they used to be cancelled unanswered).
	p.send(t, map[string]any{"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": map[string]any{"name": "slow"}})
	waitFor(t, g.started, "second slow start")
	p.in.Close()
	select {
	case <-p.done:
		t.Fatal("ServeStdio returned at EOF before answering the running call")
	case <-time.After(50 * time.Millisecond):
	}
	close(g.release)
	if r := p.next(t); r["id"] != float64(11) || r["result"] == nil {
		t.Fatalf("the call running at EOF: %v", r)
	}
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("ServeStdio: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ServeStdio did not return at EOF")
	}
}

func TestStdioContextEnds(t *testing.T) {
	s := testServer(t, nil)
	inR, inW := io.Pipe()
	defer inW.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.ServeStdio(ctx, inR, io.Discard) }()
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("ServeStdio did not return when ctx ended")
	}
}

// TestStdioAnswersCallsRunningAtEOF: a client that writes its requests and
// closes stdin still gets every answer (issue 9: calls running at EOF got
// none).
func TestStdioAnswersCallsRunningAtEOF(t *testing.T) {
	s := NewServer(Options{Name: "t", Version: "1"})
	s.AddTool(Tool{Name: "slow", InputSchema: map[string]any{"type": "object"},
		Handler: func(ctx context.Context, req *CallRequest) (*CallResult, error) {
			select {
			case <-time.After(200 * time.Millisecond):
				return TextResult("done"), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}})
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}` + "\n")
	var out strings.Builder
	if err := s.ServeStdio(context.Background(), in, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"done"`) {
		t.Fatalf("no answer to the call running at EOF: %q", out.String())
	}
}

// A panic while a stdio request is served outside a tool's own handler
// (here, a tool's InvalidArguments hook) answers that request with an
// internal error, in both eras; the connection and the process go on.
func TestStdioPanicAnswersThatRequest(t *testing.T) {
	s := testServer(t, nil)
	s.AddTool(Tool{Name: "fragile", InputSchema: map[string]any{"type": "object", "required": []string{"text"},
		"properties": map[string]any{"text": map[string]any{"type": "string"}}},
		InvalidArguments: func(string) *CallResult { panic("a bug rendering invalid arguments") },
		Handler:          func(context.Context, *CallRequest) (*CallResult, error) { return TextResult("ok"), nil }})
	p := startStdio(t, s)
	modern := func(id any, method string, params map[string]any) map[string]any {
		params["_meta"] = modernMeta(nil)
		return map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}
	}
	legacy := func(id any, method string, params map[string]any) map[string]any {
		return map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}
	}
	p.send(t, legacy(0, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t"}}))
	p.next(t)
	p.send(t, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	for i, req := range []func(any, string, map[string]any) map[string]any{modern, legacy} {
		id := 10 * (i + 1)
		p.send(t, req(id, "tools/call", map[string]any{"name": "fragile", "arguments": map[string]any{}}))
		if r := p.next(t); r["id"] != float64(id) || stdioErrCode(r) != CodeInternalError {
			t.Fatalf("the request that panicked (%d): %v", id, r)
		}
		p.send(t, req(id+1, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "after"}}))
		if r := p.next(t); r["id"] != float64(id+1) || r["result"] == nil {
			t.Fatalf("the next request (%d): %v", id+1, r)
		}
	}
}
