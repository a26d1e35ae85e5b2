package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestHTTPHardening(t *testing.T) {
	s := testServer(t, nil)
	auth := func(r *http.Request) (string, bool) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		return "user:" + tok, ok && tok != ""
	}
	ts := newHTTPTest(t, s, HTTPOptions{Authenticate: auth, MaxBodyBytes: 1024, AllowedOrigins: []string{"https://app.example"}})
	discover, dh := modernReq(1, "server/discover", nil)
	withAuth := func(h map[string]string, extra ...string) map[string]string {
		out := map[string]string{"Authorization": "Bearer t1"}
		for k, v := range h {
			out[k] = v
		}
		for i := 0; i+1 < len(extra); i += 2 {
			out[extra[i]] = extra[i+1]
		}
		return out
	}
	tests := []struct {
		name   string
		method string
		body   string
		hdr    map[string]string
		status int
		code   int
	}{
		{"no credentials", http.MethodPost, discover, dh, 401, CodeInvalidRequest},
		{"bad credentials", http.MethodPost, discover, withAuth(dh, "Authorization", "Basic x"), 401, CodeInvalidRequest},
		{"authenticated", http.MethodPost, discover, withAuth(dh), 200, 0},
		{"foreign origin", http.MethodPost, discover, withAuth(dh, "Origin", "http://evil.example.com"), 403, CodeInvalidRequest},
		{"null origin", http.MethodPost, discover, withAuth(dh, "Origin", "null"), 403, CodeInvalidRequest},
		{"allowed origin", http.MethodPost, discover, withAuth(dh, "Origin", "https://app.example"), 200, 0},
		{"same origin", http.MethodPost, discover, withAuth(dh, "Origin", "http://"+strings.TrimPrefix(ts.URL, "http://")), 200, 0},
		{"rebinding host", http.MethodPost, discover, withAuth(dh, "Host", "evil.example.com"), 421, CodeInvalidRequest},
		{"localhost host", http.MethodPost, discover, withAuth(dh, "Host", "localhost:1234"), 200, 0},
		{"body too large", http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", 2000) + `"}}`, withAuth(nil), 413, CodeInvalidRequest},
		{"wrong content type", http.MethodPost, discover, withAuth(dh, "Content-Type", "text/plain"), 415, CodeInvalidRequest},
		{"no accept", http.MethodPost, discover, withAuth(dh, "Accept", ""), 406, CodeInvalidRequest},
		{"json only accept", http.MethodPost, discover, withAuth(dh, "Accept", "application/json"), 406, CodeInvalidRequest},
		{"wildcard accept", http.MethodPost, discover, withAuth(dh, "Accept", "*/*"), 200, 0},
		{"parse error", http.MethodPost, `{"jsonrpc":`, withAuth(nil), 400, CodeParseError},
		{"batch", http.MethodPost, `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, withAuth(nil), 400, CodeInvalidRequest},
		{"put", http.MethodPut, discover, withAuth(dh), 405, CodeInvalidRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, nil, tt.method, ts.URL, tt.body, tt.hdr)
			if r.status != tt.status {
				t.Fatalf("status = %d, want %d (%s)", r.status, tt.status, r.body)
			}
			if r.errCode() != tt.code {
				t.Fatalf("code = %d, want %d (%s)", r.errCode(), tt.code, r.body)
			}
			if tt.status == 401 && r.header.Get("WWW-Authenticate") != "Bearer" {
				t.Fatalf("WWW-Authenticate = %q", r.header.Get("WWW-Authenticate"))
			}
		})
	}
}

func TestHTTPPathAndPanicRecovery(t *testing.T) {
	s := testServer(t, nil)
	h := s.HTTPHandler(HTTPOptions{Path: "/mcp", Authenticate: func(r *http.Request) (string, bool) {
		if r.Header.Get("X-Boom") != "" {
			panic("authenticator exploded")
		}
		return "", true
	}})
	body, hdr := modernReq(1, "server/discover", nil)
	for _, tc := range []struct {
		path   string
		boom   bool
		status int
	}{{"/other", false, 404}, {"/mcp", false, 200}, {"/mcp", true, 500}} {
		req := httptest.NewRequest(http.MethodPost, tc.path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		if tc.boom {
			req.Header.Set("X-Boom", "1")
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tc.status {
			t.Errorf("%s boom=%v: status %d, want %d", tc.path, tc.boom, rec.Code, tc.status)
		}
	}
}

func TestModernErrors(t *testing.T) {
	s := testServer(t, nil)
	ts := newHTTPTest(t, s, HTTPOptions{})
	meta := modernMeta(nil)
	noPV := modernMeta(nil)
	delete(noPV, MetaProtocolVersion)
	noCaps := modernMeta(nil)
	delete(noCaps, MetaClientCapabilities)
	v999 := modernMeta(nil)
	v999[MetaProtocolVersion] = "v999.0.0"
	legacyPV := modernMeta(nil)
	legacyPV[MetaProtocolVersion] = "2025-11-25"
	badLevel := modernMeta(nil)
	badLevel[MetaLogLevel] = "loud"
	capsArray := modernMeta(nil)
	capsArray[MetaClientCapabilities] = []string{"sampling"}

	type tc struct {
		name   string
		method string
		params map[string]any
		hdr    map[string]string // overrides of the standard headers ("" deletes)
		status int
		code   int
	}
	tests := []tc{
		{"missing _meta", "server/discover", map[string]any{"_meta": nil}, nil, 400, CodeInvalidParams},
		{"missing protocolVersion", "server/discover", map[string]any{"_meta": noPV}, nil, 400, CodeInvalidParams},
		{"missing capabilities", "server/discover", map[string]any{"_meta": noCaps}, nil, 400, CodeInvalidParams},
		{"capabilities not an object", "server/discover", map[string]any{"_meta": capsArray}, nil, 400, CodeInvalidParams},
		{"bad log level", "tools/list", map[string]any{"_meta": badLevel}, nil, 400, CodeInvalidParams},
		{"version header missing", "server/discover", map[string]any{"_meta": meta}, map[string]string{"Mcp-Protocol-Version": ""}, 400, CodeHeaderMismatch},
		{"version header mismatch", "server/discover", map[string]any{"_meta": v999}, nil, 400, CodeHeaderMismatch},
		{"unsupported version", "server/discover", map[string]any{"_meta": v999}, map[string]string{"Mcp-Protocol-Version": "v999.0.0"}, 400, CodeUnsupportedProtocolVersion},
		{"legacy version in _meta", "server/discover", map[string]any{"_meta": legacyPV}, map[string]string{"Mcp-Protocol-Version": "2025-11-25"}, 400, CodeUnsupportedProtocolVersion},
		{"method header missing", "tools/list", nil, map[string]string{"Mcp-Method": ""}, 400, CodeHeaderMismatch},
		{"method header mismatch", "tools/list", nil, map[string]string{"Mcp-Method": "prompts/list"}, 400, CodeHeaderMismatch},
		{"method header case", "tools/list", nil, map[string]string{"Mcp-Method": "Tools/List"}, 400, CodeHeaderMismatch},
		{"name header missing", "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}}, map[string]string{"Mcp-Name": ""}, 400, CodeHeaderMismatch},
		{"name header mismatch", "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}}, map[string]string{"Mcp-Name": "fail"}, 400, CodeHeaderMismatch},
		{"name header base64", "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}}, map[string]string{"Mcp-Name": "=?base64?ZWNobw==?="}, 200, 0},
		{"name header bad base64", "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}}, map[string]string{"Mcp-Name": "=?base64?ZWNobw?="}, 400, CodeHeaderMismatch},
		{"removed initialize", "initialize", nil, nil, 404, CodeMethodNotFound},
		{"removed ping", "ping", nil, nil, 404, CodeMethodNotFound},
		{"removed setLevel", "logging/setLevel", map[string]any{"level": "info"}, nil, 404, CodeMethodNotFound},
		{"removed subscribe", "resources/subscribe", map[string]any{"uri": "x"}, nil, 404, CodeMethodNotFound},
		{"unknown method", "unknown/method", nil, nil, 404, CodeMethodNotFound},
		{"prompts not offered", "prompts/list", nil, nil, 404, CodeMethodNotFound},
		{"unknown tool", "tools/call", map[string]any{"name": "nope"}, nil, 400, CodeInvalidParams},
		{"arguments not object", "tools/call", map[string]any{"name": "echo", "arguments": []int{1}}, nil, 400, CodeInvalidParams},
		{"bad cursor", "tools/list", map[string]any{"cursor": "abc"}, nil, 400, CodeInvalidParams},
		{"handler rpc error", "tools/call", map[string]any{"name": "rpcfail"}, nil, 400, -31000},
		{"handler panic", "tools/call", map[string]any{"name": "panic"}, nil, 500, CodeInternalError},
		{"listen without filter", "subscriptions/listen", nil, nil, 400, CodeInvalidParams},
		{"x-mcp-header missing", "tools/call", map[string]any{"name": "header", "arguments": map[string]any{"region": "eu"}}, nil, 400, CodeHeaderMismatch},
		{"x-mcp-header ok", "tools/call", map[string]any{"name": "header", "arguments": map[string]any{"region": "eu", "count": 42, "flag": true}}, map[string]string{"Mcp-Param-Region": "eu", "Mcp-Param-Count": "42.0", "Mcp-Param-Flag": "true"}, 200, 0},
		{"x-mcp-header mismatch", "tools/call", map[string]any{"name": "header", "arguments": map[string]any{"region": "eu"}}, map[string]string{"Mcp-Param-Region": "us"}, 400, CodeHeaderMismatch},
		{"x-mcp-header int mismatch", "tools/call", map[string]any{"name": "header", "arguments": map[string]any{"count": 42}}, map[string]string{"Mcp-Param-Count": "43"}, 400, CodeHeaderMismatch},
		{"x-mcp-header null omitted", "tools/call", map[string]any{"name": "header", "arguments": map[string]any{"region": nil}}, nil, 200, 0},
		{"x-mcp-header base64", "tools/call", map[string]any{"name": "header", "arguments": map[string]any{"region": "Hello, 世界"}}, map[string]string{"Mcp-Param-Region": "=?base64?SGVsbG8sIOS4lueVjA==?="}, 200, 0},
		{"x-mcp-header bad chars", "tools/call", map[string]any{"name": "header", "arguments": map[string]any{"region": "Hello"}}, map[string]string{"Mcp-Param-Region": "=?base64?SGVs!!!bG8=?="}, 400, CodeHeaderMismatch},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			params := tt.params
			if params == nil {
				params = map[string]any{}
			}
			body, hdr := modernReq(100+i, tt.method, params)
			for k, v := range tt.hdr {
				hdr[k] = v
			}
			r := do(t, nil, http.MethodPost, ts.URL, body, hdr)
			if r.status != tt.status || r.errCode() != tt.code {
				t.Fatalf("got %d/%d, want %d/%d: %s", r.status, r.errCode(), tt.status, tt.code, r.body)
			}
			if tt.code != 0 {
				if id, _ := r.last()["id"].(float64); int(id) != 100+i {
					t.Fatalf("error id = %v, want %d", r.last()["id"], 100+i)
				}
			}
			if r.header.Get("Mcp-Session-Id") != "" {
				t.Fatal("modern responses must not carry Mcp-Session-Id")
			}
		})
	}
}

func TestModernResults(t *testing.T) {
	s := testServer(t, nil)
	ts := newHTTPTest(t, s, HTTPOptions{})
	call := func(method string, params map[string]any, hdr ...string) httpResult {
		body, h := modernReq(1, method, params)
		for i := 0; i+1 < len(hdr); i += 2 {
			h[hdr[i]] = hdr[i+1]
		}
		return do(t, nil, http.MethodPost, ts.URL, body, h)
	}

	r := call("server/discover", nil)
	res := r.result()
	if res["resultType"] != "complete" || res["cacheScope"] != "private" || res["ttlMs"] != float64(0) {
		t.Fatalf("discover: %s", r.body)
	}
	if vs, _ := res["supportedVersions"].([]any); len(vs) == 0 || vs[0] != ModernProtocolVersion {
		t.Fatalf("supportedVersions: %v", res["supportedVersions"])
	}
	if info := res["_meta"].(map[string]any)[MetaServerInfo].(map[string]any); info["name"] != "test-server" {
		t.Fatalf("serverInfo: %v", info)
	}
	if _, ok := res["protocolVersion"]; ok {
		t.Fatal("discover must not carry protocolVersion")
	}

	r = call("tools/list", nil)
	if r.result()["ttlMs"] == nil || r.result()["resultType"] != "complete" {
		t.Fatalf("tools/list: %s", r.body)
	}
	tools := r.result()["tools"].([]any)
	if len(tools) < 5 {
		t.Fatalf("tools: %d", len(tools))
	}
	for _, tool := range tools {
		tm := tool.(map[string]any)
		ann, has := tm["annotations"].(map[string]any)
		switch tm["name"] {
		case "echo":
			if ann["readOnlyHint"] != true || len(ann) != 1 {
				t.Fatalf("echo annotations: %v", tm)
			}
		case "fail":
			if has {
				t.Fatalf("zero annotations must be omitted: %v", tm)
			}
			if tm["inputSchema"].(map[string]any)["type"] != "object" {
				t.Fatalf("inputSchema: %v", tm)
			}
		}
	}

	r = call("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}})
	sc := r.result()["structuredContent"].(map[string]any)
	if sc["era"] != "modern" || sc["version"] != ModernProtocolVersion || r.result()["resultType"] != "complete" {
		t.Fatalf("echo: %s", r.body)
	}
	if _, ok := r.result()["ttlMs"]; ok {
		t.Fatal("tools/call result is not cacheable")
	}

	// Ignored legacy leftovers: Mcp-Session-Id and Last-Event-ID.
	r = call("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}}, "Mcp-Session-Id", "bogus", "Last-Event-ID", "5")
	if r.status != 200 {
		t.Fatalf("session id must be ignored: %d %s", r.status, r.body)
	}

	// Tool errors are results; shallow argument checks too.
	r = call("tools/call", map[string]any{"name": "fail"})
	if r.result()["isError"] != true || toolText(r.result()) != "it broke" {
		t.Fatalf("fail: %s", r.body)
	}
	r = call("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"n": 1.5}})
	if r.result()["isError"] != true || !strings.Contains(toolText(r.result()), "text") {
		t.Fatalf("missing arg: %s", r.body)
	}
	r = call("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x", "n": 1.5}})
	if r.result()["isError"] != true || !strings.Contains(toolText(r.result()), "integer") {
		t.Fatalf("wrong type: %s", r.body)
	}

	// Progress only with a token, logs only with a level.
	r = call("tools/call", map[string]any{"name": "progress"})
	if len(r.msgs) != 1 || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("no opt-in must mean no notifications: %s", r.body)
	}
	meta := modernMeta(nil)
	meta[MetaProgressToken] = "tok"
	meta[MetaLogLevel] = "info"
	r = call("tools/call", map[string]any{"name": "progress", "_meta": meta})
	if !strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("want SSE, got %s", r.header.Get("Content-Type"))
	}
	var progress, logs int
	for _, m := range r.msgs[:len(r.msgs)-1] {
		switch m["method"] {
		case "notifications/progress":
			progress++
			if m["params"].(map[string]any)["progressToken"] != "tok" {
				t.Fatalf("token: %v", m)
			}
		case "notifications/message":
			logs++
		}
	}
	if progress != 3 || logs != 1 || toolText(r.result()) != "done" {
		t.Fatalf("progress=%d logs=%d: %s", progress, logs, r.body)
	}

	// Notifications and responses.
	if r := do(t, nil, http.MethodPost, ts.URL, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, map[string]string{"Mcp-Protocol-Version": ModernProtocolVersion}); r.status != 202 {
		t.Fatalf("notification: %d", r.status)
	}
	if r := do(t, nil, http.MethodPost, ts.URL, `{"jsonrpc":"2.0","id":1,"result":{}}`, map[string]string{"Mcp-Protocol-Version": ModernProtocolVersion}); r.status != 400 {
		t.Fatalf("response POST: %d", r.status)
	}
	// GET and DELETE are not part of the modern era.
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		r := do(t, nil, m, ts.URL, "", map[string]string{"Mcp-Protocol-Version": ModernProtocolVersion, "Accept": "text/event-stream"})
		if r.status != 405 || r.header.Get("Allow") != "POST" {
			t.Fatalf("%s: %d allow=%q", m, r.status, r.header.Get("Allow"))
		}
	}
}

func TestLegacySessions(t *testing.T) {
	s := testServer(t, nil)
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	s.now = clock.Now
	auth := func(r *http.Request) (string, bool) { return r.Header.Get("X-User"), r.Header.Get("X-User") != "" }
	ts := newHTTPTest(t, s, HTTPOptions{Authenticate: auth})
	alice := map[string]string{"X-User": "alice"}

	// Version negotiation.
	for _, tc := range []struct{ asked, got string }{
		{"2025-11-25", "2025-11-25"}, {"2025-06-18", "2025-06-18"}, {"2024-11-05", "2024-11-05"},
		{"2026-07-28", LatestLegacyProtocolVersion}, {"1999-01-01", LatestLegacyProtocolVersion},
	} {
		body := mustJSON(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
			"protocolVersion": tc.asked, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "c", "version": "1"}}})
		r := do(t, nil, http.MethodPost, ts.URL, body, alice)
		res := r.result()
		if res["protocolVersion"] != tc.got || r.header.Get("Mcp-Session-Id") == "" {
			t.Fatalf("asked %s: %s", tc.asked, r.body)
		}
		if _, ok := res["resultType"]; ok {
			t.Fatal("legacy results must not carry resultType")
		}
		if res["serverInfo"].(map[string]any)["version"] != "1.2.3" || res["instructions"] != "be careful" {
			t.Fatalf("initialize result: %s", r.body)
		}
		sid := r.header.Get("Mcp-Session-Id")
		for _, c := range sid {
			if c < 0x21 || c > 0x7e {
				t.Fatalf("session id %q not visible ASCII", sid)
			}
		}
	}
	if r := do(t, nil, http.MethodPost, ts.URL, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, alice); r.status != 400 || r.errCode() != CodeInvalidParams {
		t.Fatalf("initialize without version: %d %s", r.status, r.body)
	}

	sid := legacyInit(t, ts.URL, alice, nil)
	h := func(extra ...string) map[string]string {
		out := legacyHeaders(sid)
		out["X-User"] = "alice"
		for i := 0; i+1 < len(extra); i += 2 {
			out[extra[i]] = extra[i+1]
		}
		return out
	}
	ping := `{"jsonrpc":"2.0","id":"p","method":"ping"}`
	tests := []struct {
		name   string
		method string
		body   string
		hdr    map[string]string
		status int
		code   int
	}{
		{"ping", http.MethodPost, ping, h(), 200, 0},
		{"missing session", http.MethodPost, ping, h("Mcp-Session-Id", ""), 400, CodeInvalidRequest},
		{"unknown session", http.MethodPost, ping, h("Mcp-Session-Id", "nope"), 404, CodeInvalidRequest},
		{"other principal", http.MethodPost, ping, h("X-User", "mallory"), 404, CodeInvalidRequest},
		// An unknown version header makes the request modern, and it lacks _meta.
		{"bad version header", http.MethodPost, ping, h("Mcp-Protocol-Version", "1999-01-01"), 400, CodeInvalidParams},
		{"no version header", http.MethodPost, ping, h("Mcp-Protocol-Version", ""), 200, 0},
		{"setLevel", http.MethodPost, `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}}`, h(), 200, 0},
		{"setLevel bad", http.MethodPost, `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"loud"}}`, h(), 200, CodeInvalidParams},
		{"discover is modern-only", http.MethodPost, `{"jsonrpc":"2.0","id":3,"method":"unknown/x"}`, h(), 200, CodeMethodNotFound},
		{"unknown tool", http.MethodPost, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nope"}}`, h(), 200, CodeInvalidParams},
		{"response for nobody", http.MethodPost, `{"jsonrpc":"2.0","id":99,"result":{}}`, h(), 202, 0},
		{"GET needs exact accept", http.MethodGet, "", h("Accept", "text/event-stream, application/json"), 406, CodeInvalidRequest},
		{"GET without session", http.MethodGet, "", h("Accept", "text/event-stream", "Mcp-Session-Id", ""), 400, CodeInvalidRequest},
		{"DELETE unknown", http.MethodDelete, "", h("Mcp-Session-Id", "nope"), 404, CodeInvalidRequest},
		{"DELETE missing", http.MethodDelete, "", h("Mcp-Session-Id", ""), 400, CodeInvalidRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, nil, tt.method, ts.URL, tt.body, tt.hdr)
			if r.status != tt.status || r.errCode() != tt.code {
				t.Fatalf("got %d/%d, want %d/%d: %s", r.status, r.errCode(), tt.status, tt.code, r.body)
			}
			if tt.status == 200 && tt.code == 0 && tt.method == http.MethodPost {
				if _, ok := r.result()["resultType"]; ok {
					t.Fatal("legacy result with resultType")
				}
			}
		})
	}

	// A legacy tool call: no resultType, legacy era, session version.
	r := do(t, nil, http.MethodPost, ts.URL, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`, h())
	sc := r.result()["structuredContent"].(map[string]any)
	if sc["era"] != "legacy" || sc["principal"] != "alice" || sc["version"] != "2025-11-25" {
		t.Fatalf("legacy call: %s", r.body)
	}

	// Idle expiry: 29 minutes keeps it, 31 more ends it.
	clock.Advance(29 * time.Minute)
	if r := do(t, nil, http.MethodPost, ts.URL, ping, h()); r.status != 200 {
		t.Fatalf("session expired too early: %d", r.status)
	}
	clock.Advance(31 * time.Minute)
	if r := do(t, nil, http.MethodPost, ts.URL, ping, h()); r.status != 404 {
		t.Fatalf("idle session still alive: %d", r.status)
	}

	// DELETE ends a session; afterwards it is unknown.
	sid = legacyInit(t, ts.URL, alice, nil)
	if r := do(t, nil, http.MethodDelete, ts.URL, "", h()); r.status != 204 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	if r := do(t, nil, http.MethodPost, ts.URL, ping, h()); r.status != 404 {
		t.Fatalf("deleted session alive: %d", r.status)
	}
}

func TestLegacyProgressAndLogging(t *testing.T) {
	s := testServer(t, nil)
	ts := newHTTPTest(t, s, HTTPOptions{})
	sid := legacyInit(t, ts.URL, nil, nil)
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"progress","_meta":{"progressToken":7}}}`
	r := do(t, nil, http.MethodPost, ts.URL, call, legacyHeaders(sid))
	count := func(method string) int {
		n := 0
		for _, m := range r.msgs {
			if m["method"] == method {
				n++
			}
		}
		return n
	}
	if count("notifications/progress") != 3 || count("notifications/message") != 0 {
		t.Fatalf("before setLevel: %s", r.body)
	}
	do(t, nil, http.MethodPost, ts.URL, `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}}`, legacyHeaders(sid))
	r = do(t, nil, http.MethodPost, ts.URL, call, legacyHeaders(sid))
	if count("notifications/message") != 2 {
		t.Fatalf("after setLevel debug: %s", r.body)
	}
}

// initAs opens a legacy session under a clientInfo name; it returns the
// session id, or "" with the status when refused.
func initAs(t *testing.T, url, name string) (string, int) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": name, "version": "1"}}})
	r := do(t, nil, http.MethodPost, url, string(body), nil)
	return r.header.Get("Mcp-Session-Id"), r.status
}

func pingIn(t *testing.T, url, sid string) int {
	t.Helper()
	return do(t, nil, http.MethodPost, url, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, legacyHeaders(sid)).status
}

// TestSessionCapsAreFair: a client past its own cap loses its least
// recently used idle session; past the total, the client holding the most
// does, never a client holding fewer than the newcomer would; a session
// with a call running is never ended; with nothing to end, 503.
func TestSessionCapsAreFair(t *testing.T) {
	s := NewServer(Options{MaxSessions: 4, MaxSessionsPerClient: 2})
	t.Cleanup(s.Close)
	release := make(chan struct{})
	s.AddTool(Tool{Name: "wait", InputSchema: map[string]any{"type": "object"}, Handler: func(ctx context.Context, req *CallRequest) (*CallResult, error) {
		<-release
		return TextResult("done"), nil
	}})
	ts := newHTTPTest(t, s, HTTPOptions{})
	f1, _ := initAs(t, ts.URL, "flood")
	f2, _ := initAs(t, ts.URL, "flood")
	f3, _ := initAs(t, ts.URL, "flood")
	if pingIn(t, ts.URL, f1) != 404 || pingIn(t, ts.URL, f2) != 200 || pingIn(t, ts.URL, f3) != 200 {
		t.Fatal("the client's third session did not end its least recently used")
	}
	// The flood goes on under other names; the store is full.
	initAs(t, ts.URL, "flood-a")
	initAs(t, ts.URL, "flood-b")
	// A newcomer ends a session of the client holding the most (flood: 2).
	good, st := initAs(t, ts.URL, "good")
	if st != 200 || pingIn(t, ts.URL, good) != 200 {
		t.Fatalf("a newcomer beside a flood: %d", st)
	}
	if pingIn(t, ts.URL, f2) != 404 {
		t.Fatal("the flooding client's least recently used session was not the one ended")
	}
	// Everyone now holds one; a flood under ever new names ends the least
	// recently used, never the newcomer that keeps using its session.
	for i := 0; i < 20; i++ {
		if _, st := initAs(t, ts.URL, fmt.Sprintf("flood-%d", i)); st != 200 {
			t.Fatalf("flood %d: %d", i, st)
		}
		if pingIn(t, ts.URL, good) != 200 {
			t.Fatalf("the well-behaved session was ended by flood %d", i)
		}
	}
	if n := s.sessions.len(); n != 4 {
		t.Fatalf("%d sessions, cap 4", n)
	}
	// Sessions with a call running are never ended: with all four busy, a
	// newcomer gets 503.
	var ids []string
	for i := 0; i < 4; i++ {
		sid, _ := initAs(t, ts.URL, fmt.Sprintf("busy-%d", i))
		ids = append(ids, sid)
	}
	var wg sync.WaitGroup
	for _, sid := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			do(t, nil, http.MethodPost, ts.URL, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"wait","arguments":{}}}`, legacyHeaders(sid))
		}()
	}
	for i := 0; i < 500; i++ {
		busy := 0
		for _, sid := range ids {
			if sess := s.sessions.get(sid); sess != nil && !sess.idle() {
				busy++
			}
		}
		if busy == 4 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, st := initAs(t, ts.URL, "late"); st != 503 {
		t.Fatalf("a newcomer when every session is busy: %d", st)
	}
	close(release)
	wg.Wait()
	if _, st := initAs(t, ts.URL, "late"); st != 200 {
		t.Fatalf("a newcomer after the calls: %d", st)
	}
}

func TestIdleSessionsAreSwept(t *testing.T) {
	s := NewServer(Options{})
	t.Cleanup(s.Close)
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	s.now = clock.Now
	ts := newHTTPTest(t, s, HTTPOptions{})
	for i := 0; i < 3; i++ {
		legacyInit(t, ts.URL, nil, nil)
	}
	if n := s.sessions.len(); n != 3 {
		t.Fatalf("sessions: %d", n)
	}
	clock.Advance(31 * time.Minute)
	legacyInit(t, ts.URL, nil, nil)
	if n := s.sessions.len(); n != 1 {
		t.Fatalf("idle sessions not swept: %d left", n)
	}
}

// A JSON answer declares its length, whatever its size: net/http would
// send one past its buffer chunked.
func TestJSONAnswersDeclareTheirLength(t *testing.T) {
	s := testServer(t, nil)
	ts := newHTTPTest(t, s, HTTPOptions{})
	sid := legacyInit(t, ts.URL, nil, nil)
	for _, tc := range []struct {
		name string
		era  string
		size int
	}{
		{"legacy small", "legacy", 10},
		{"legacy past the buffer", "legacy", 64 << 10},
		{"modern small", "modern", 10},
		{"modern past the buffer", "modern", 64 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := map[string]any{"text": strings.Repeat("x", tc.size)}
			body, hdr := modernReq(1, "tools/call", map[string]any{"name": "echo", "arguments": args})
			if tc.era == "legacy" {
				body, hdr = mustJSON(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{"name": "echo", "arguments": args}}), legacyHeaders(sid)
			}
			r := do(t, nil, http.MethodPost, ts.URL, body, hdr)
			if r.status != http.StatusOK || !strings.Contains(string(r.body), strings.Repeat("x", tc.size)) {
				t.Fatalf("%d: %.200s", r.status, r.body)
			}
			if len(r.transferEncoding) != 0 || r.contentLength != int64(len(r.body)) {
				t.Fatalf("Transfer-Encoding %v, Content-Length %d for %d bytes", r.transferEncoding, r.contentLength, len(r.body))
			}
		})
	}
}
