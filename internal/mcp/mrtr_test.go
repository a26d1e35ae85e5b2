package mcp

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestMRTRModern(t *testing.T) {
	s := testServer(t, nil)
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	s.now = clock.Now
	auth := func(r *http.Request) (string, bool) { return r.Header.Get("X-User"), true }
	ts := newHTTPTest(t, s, HTTPOptions{Authenticate: auth})
	elicitCaps := map[string]any{"elicitation": map[string]any{}}

	call := func(user, tool string, args map[string]any, responses map[string]any, state any, caps map[string]any) httpResult {
		t.Helper()
		if caps == nil {
			caps = elicitCaps
		}
		params := map[string]any{"name": tool, "arguments": args, "_meta": modernMeta(caps)}
		if responses != nil {
			params["inputResponses"] = responses
		}
		if state != nil {
			params["requestState"] = state
		}
		body, h := modernReq(1, "tools/call", params)
		h["X-User"] = user
		return do(t, nil, http.MethodPost, ts.URL, body, h)
	}
	accept := map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}
	args := map[string]any{"target": "doc-1"}

	// Round 1: input_required with an integrity-protected state.
	r1 := call("alice", "confirm", args, nil, nil, nil)
	res := r1.result()
	if res["resultType"] != "input_required" {
		t.Fatalf("round 1: %s", r1.body)
	}
	if _, ok := res["content"]; ok {
		t.Fatal("input_required must not carry content")
	}
	if _, ok := res["ttlMs"]; ok {
		t.Fatal("input_required is not cacheable")
	}
	state, _ := res["requestState"].(string)
	ir := res["inputRequests"].(map[string]any)["elicitation-1"].(map[string]any)
	if state == "" || ir["method"] != "elicitation/create" || ir["params"].(map[string]any)["mode"] != "form" {
		t.Fatalf("round 1 shape: %s", r1.body)
	}

	// Answers without a requestState are never trusted by Elicit.
	if r := call("alice", "confirm", args, map[string]any{"elicitation-1": accept}, nil, nil); r.result()["resultType"] != "input_required" {
		t.Fatalf("answer without state accepted: %s", r.body)
	}

	tamper := func(s string) string {
		parts := strings.Split(s, ".")
		b := []byte(parts[1])
		if b[5] == 'A' {
			b[5] = 'B'
		} else {
			b[5] = 'A'
		}
		parts[1] = string(b)
		return strings.Join(parts, ".")
	}
	fresh := func() string {
		return call("alice", "confirm", args, nil, nil, nil).result()["requestState"].(string)
	}
	type rej struct {
		name  string
		user  string
		tool  string
		args  map[string]any
		state func() any
		resp  map[string]any
		code  int
	}
	rejects := []rej{
		{name: "tampered", user: "alice", tool: "confirm", args: args, state: func() any { return tamper(fresh()) }, code: CodeInvalidParams},
		{name: "suffix", user: "alice", tool: "confirm", args: args, state: func() any { return fresh() + "-TAMPERED" }, code: CodeInvalidParams},
		{name: "garbage", user: "alice", tool: "confirm", args: args, state: func() any { return "not-a-state" }, code: CodeInvalidParams},
		{name: "not a string", user: "alice", tool: "confirm", args: args, state: func() any { return 42 }, code: CodeInvalidParams},
		{name: "other principal", user: "mallory", tool: "confirm", args: args, state: func() any { return fresh() }, code: CodeInvalidParams},
		{name: "other arguments", user: "alice", tool: "confirm", args: map[string]any{"target": "doc-2"}, state: func() any { return fresh() }, code: CodeInvalidParams},
		{name: "other tool", user: "alice", tool: "twostep", args: args, state: func() any { return fresh() }, code: CodeInvalidParams},
		{name: "bad action", user: "alice", tool: "confirm", args: args, state: func() any { return fresh() }, resp: map[string]any{"elicitation-1": map[string]any{"action": "maybe"}}, code: CodeInvalidParams},
		{name: "content not object", user: "alice", tool: "confirm", args: args, state: func() any { return fresh() }, resp: map[string]any{"elicitation-1": map[string]any{"action": "accept", "content": 5}}, code: CodeInvalidParams},
		{name: "response not object", user: "alice", tool: "confirm", args: args, state: func() any { return fresh() }, resp: map[string]any{"elicitation-1": 12345}, code: CodeInvalidParams},
		{name: "expired", user: "alice", tool: "confirm", args: args, state: func() any {
			st := fresh()
			clock.Advance(5*time.Minute + time.Second)
			return st
		}, code: CodeInvalidParams},
	}
	for _, tc := range rejects {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.state()
			resp := tc.resp
			if resp == nil {
				resp = map[string]any{"elicitation-1": accept}
			}
			r := call(tc.user, tc.tool, tc.args, resp, st, nil)
			if r.status != 400 || r.errCode() != tc.code {
				t.Fatalf("got %d/%d: %s", r.status, r.errCode(), r.body)
			}
		})
	}

	// A valid retry completes; the same state cannot be used twice.
	state = fresh()
	r2 := call("alice", "confirm", args, map[string]any{"elicitation-1": accept, "extra": map[string]any{"x": 1}}, state, nil)
	sc, _ := r2.result()["structuredContent"].(map[string]any)
	if r2.result()["resultType"] != "complete" || sc["action"] != "accept" {
		t.Fatalf("round 2: %s", r2.body)
	}
	if r := call("alice", "confirm", args, map[string]any{"elicitation-1": accept}, state, nil); r.errCode() != CodeInvalidParams || !strings.Contains(string(r.body), "already used") {
		t.Fatalf("reuse: %s", r.body)
	}

	// A valid state without the expected answer asks again with a new state.
	state = fresh()
	r3 := call("alice", "confirm", args, map[string]any{"wrong": accept}, state, nil)
	if r3.result()["resultType"] != "input_required" || r3.result()["requestState"] == state {
		t.Fatalf("missing answer: %s", r3.body)
	}

	// Decline and cancel reach the handler.
	for _, action := range []string{"decline", "cancel"} {
		r := call("alice", "confirm", args, map[string]any{"elicitation-1": map[string]any{"action": action}}, fresh(), nil)
		if sc, _ := r.result()["structuredContent"].(map[string]any); sc["action"] != action {
			t.Fatalf("%s: %s", action, r.body)
		}
	}

	// Capability checks: none, URL-only.
	for _, caps := range []map[string]any{{}, {"elicitation": map[string]any{"url": map[string]any{}}}} {
		r := call("alice", "confirm", args, nil, nil, caps)
		e := r.last()["error"].(map[string]any)
		req := e["data"].(map[string]any)["requiredCapabilities"].(map[string]any)
		if r.status != 400 || r.errCode() != CodeMissingClientCapability || req["elicitation"] == nil {
			t.Fatalf("caps %v: %s", caps, r.body)
		}
	}
	if r := call("alice", "confirm", args, nil, nil, map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}); r.result()["resultType"] != "input_required" {
		t.Fatalf("form caps: %s", r.body)
	}

	// Multi-round: answers accumulate in the state; each round has a new one.
	m1 := call("alice", "twostep", map[string]any{}, nil, nil, nil).result()
	s1 := m1["requestState"].(string)
	m2 := call("alice", "twostep", map[string]any{}, map[string]any{"first": accept}, s1, nil).result()
	s2, _ := m2["requestState"].(string)
	if m2["resultType"] != "input_required" || s2 == s1 || m2["inputRequests"].(map[string]any)["second"] == nil {
		t.Fatalf("round 2 of 2: %v", m2)
	}
	m3 := call("alice", "twostep", map[string]any{}, map[string]any{"second": map[string]any{"action": "decline"}}, s2, nil).result()
	if toolText(m3) != "accept+decline" {
		t.Fatalf("round 3: %v", m3)
	}

	// Raw inputResponses: visible to the handler, shape-checked.
	if r := call("alice", "raw", map[string]any{}, map[string]any{"k": map[string]any{"roots": []any{}}}, nil, map[string]any{"roots": map[string]any{}}); toolText(r.result()) != `raw:{"roots":[]}` {
		t.Fatalf("raw: %s", r.body)
	}
	body := strings.Replace(mustJSON(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{
		"name": "raw", "inputResponses": "X", "_meta": modernMeta(nil)}}), `"X"`, "null", 1)
	_, h := modernReq(1, "tools/call", map[string]any{"name": "raw"})
	if r := do(t, nil, http.MethodPost, ts.URL, body, h); r.errCode() != CodeInvalidParams {
		t.Fatalf("null inputResponses: %s", r.body)
	}
	// InputRequired for a capability the client lacks: -32021.
	if r := call("alice", "raw", map[string]any{}, nil, nil, map[string]any{}); r.errCode() != CodeMissingClientCapability {
		t.Fatalf("raw without roots: %s", r.body)
	}
}

// sseReader reads JSON-RPC messages from an SSE response as they arrive.
type sseReader struct {
	resp *http.Response
	sc   *bufio.Scanner
}

func openSSE(t *testing.T, url, body string, hdr map[string]string) *sseReader {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	return &sseReader{resp: resp, sc: sc}
}

func (r *sseReader) next(t *testing.T) map[string]any {
	t.Helper()
	for r.sc.Scan() {
		line := r.sc.Text()
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			var m map[string]any
			if err := json.Unmarshal([]byte(d), &m); err != nil {
				t.Fatalf("bad event %q", d)
			}
			return m
		}
		if strings.HasPrefix(line, "{") { // a plain JSON body
			var m map[string]any
			_ = json.Unmarshal([]byte(line), &m)
			return m
		}
	}
	return nil
}

func TestLegacyElicitationRoundTrip(t *testing.T) {
	s := testServer(t, nil)
	ts := newHTTPTest(t, s, HTTPOptions{})
	for _, caps := range []map[string]any{{"elicitation": map[string]any{}}, {"elicitation": map[string]any{"form": map[string]any{}}}} {
		sid := legacyInit(t, ts.URL, nil, caps)
		st := openSSE(t, ts.URL, `{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"confirm","arguments":{"target":"a"}}}`, legacyHeaders(sid))
		req := st.next(t)
		if req["method"] != "elicitation/create" || req["id"] == nil {
			t.Fatalf("want elicitation/create, got %v", req)
		}
		if req["params"].(map[string]any)["message"] != "Delete it?" {
			t.Fatalf("params: %v", req["params"])
		}
		answer := mustJSON(map[string]any{"jsonrpc": "2.0", "id": req["id"], "result": map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}})
		if r := do(t, nil, http.MethodPost, ts.URL, answer, legacyHeaders(sid)); r.status != 202 {
			t.Fatalf("answer: %d", r.status)
		}
		final := st.next(t)
		sc := final["result"].(map[string]any)["structuredContent"].(map[string]any)
		if final["id"] != "c1" || sc["action"] != "accept" {
			t.Fatalf("final: %v", final)
		}
	}

	// Without the capability: -32021, no request sent.
	sid := legacyInit(t, ts.URL, nil, map[string]any{"elicitation": map[string]any{"url": map[string]any{}}})
	r := do(t, nil, http.MethodPost, ts.URL, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"confirm"}}`, legacyHeaders(sid))
	if r.errCode() != CodeMissingClientCapability {
		t.Fatalf("no elicitation capability: %s", r.body)
	}

	// The InputRequired bridge: the request goes out, the handler reruns.
	sid = legacyInit(t, ts.URL, nil, map[string]any{"roots": map[string]any{}})
	st := openSSE(t, ts.URL, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"raw"}}`, legacyHeaders(sid))
	req := st.next(t)
	if req["method"] != "roots/list" {
		t.Fatalf("want roots/list, got %v", req)
	}
	do(t, nil, http.MethodPost, ts.URL, mustJSON(map[string]any{"jsonrpc": "2.0", "id": req["id"], "result": map[string]any{"roots": []any{}}}), legacyHeaders(sid))
	final := st.next(t)
	if toolText(final["result"].(map[string]any)) != `raw:{"roots":[]}` {
		t.Fatalf("bridge: %v", final)
	}

	// A client error answer surfaces as a tool error.
	sid = legacyInit(t, ts.URL, nil, map[string]any{"sampling": map[string]any{}})
	st = openSSE(t, ts.URL, `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"sample"}}`, legacyHeaders(sid))
	req = st.next(t)
	do(t, nil, http.MethodPost, ts.URL, mustJSON(map[string]any{"jsonrpc": "2.0", "id": req["id"], "error": map[string]any{"code": -1, "message": "user said no"}}), legacyHeaders(sid))
	final = st.next(t)
	if res := final["result"].(map[string]any); res["isError"] != true || !strings.Contains(toolText(res), "user said no") {
		t.Fatalf("client error: %v", final)
	}
}

func TestStateKeeperUnit(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1000, 0)}
	k := newStateKeeper([32]byte{1}, clock.Now, 2)
	b := stateBinding{principal: "p", method: "tools/call", name: "t", params: json.RawMessage(`{"b":1,"a":[1,2]}`), decl: "form"}
	if paramsDigest(json.RawMessage(`{"a":[1,2], "b":1}`)) != b.digest() {
		t.Fatal("digest must not depend on key order or spacing")
	}
	issue := func() string {
		s, err := k.issue(b, time.Minute, map[string]string{"x": "roots/list"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for i := 0; i < 2; i++ {
		if _, err := k.verify(issue(), b); err != nil {
			t.Fatal(err)
		}
	}
	// Consumed once: a second use is rejected.
	s := issue()
	if _, err := k.verify(s, b); err != nil {
		t.Fatal(err)
	}
	if _, err := k.verify(s, b); err == nil || !strings.Contains(err.Message, "already used") {
		t.Fatalf("reuse: %v", err)
	}
	// At most two outstanding: the oldest is forgotten.
	first, second, third := issue(), issue(), issue()
	if k.outstanding() != 2 {
		t.Fatalf("outstanding %d, want 2", k.outstanding())
	}
	if _, err := k.verify(first, b); err == nil {
		t.Fatal("an evicted state must be rejected")
	}
	for _, s := range []string{second, third} {
		if _, err := k.verify(s, b); err != nil {
			t.Fatalf("a retained state: %v", err)
		}
	}
	// Expired, and bound to the declaration it was issued under.
	late := issue()
	clock.Advance(2 * time.Minute)
	if _, err := k.verify(late, b); err == nil || !strings.Contains(err.Message, "expired") {
		t.Fatalf("expired: %v", err)
	}
	// The declaration is recorded in the state, for the handler to hold a
	// retry that declares less to what was asked.
	undeclared := b
	undeclared.decl = ""
	if p, err := k.verify(issue(), undeclared); err != nil || p.C != "form" {
		t.Fatalf("a state keeps the declaration it was issued under: %v %v", p, err)
	}
	other := newStateKeeper([32]byte{2}, clock.Now, 128)
	if _, err := other.verify(issue(), b); err == nil {
		t.Fatal("a state from another process key must be rejected")
	}
}
