package mcp

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzHTTPHeaders drives the HTTP handler with arbitrary header values (and
// a body naming an arbitrary method and tool). It must never panic, answer
// 5xx, or write a malformed JSON body.
func FuzzHTTPHeaders(f *testing.F) {
	f.Add("2026-07-28", "tools/call", "header", "eu", "", "127.0.0.1:80", "application/json, text/event-stream", "application/json", "", "tools/call", "header")
	f.Add("2025-11-25", "tools/list", "", "", "http://127.0.0.1", "localhost", "*/*", "application/json; charset=utf-8", "abc", "tools/list", "")
	f.Add("v999", "x", "=?base64?ZWNobw==?=", "=?base64?SGVs!!!bG8=?=", "null", "[::1]:9", "text/event-stream", "text/plain", "", "server/discover", "echo")
	f.Add("", "", "=?base64?", "?=", "http://evil", "evil", "", "", "", "initialize", "")
	f.Add(" 2026-07-28 ", " tools/call ", " echo ", "\t", "https://a", "127.0.0.1", "application/*,text/*", "application/json", "x", "tools/call", "echo")
	s := NewServer(Options{})
	f.Cleanup(s.Close)
	s.AddTool(Tool{Name: "echo", Handler: func(ctx context.Context, req *CallRequest) (*CallResult, error) { return TextResult("ok"), nil }})
	s.AddTool(Tool{Name: "header", InputSchema: map[string]any{"type": "object", "properties": map[string]any{
		"region": map[string]any{"type": "string", "x-mcp-header": "Region"},
	}}, Handler: func(ctx context.Context, req *CallRequest) (*CallResult, error) { return TextResult("ok"), nil }})
	h := s.HTTPHandler(HTTPOptions{AllowedOrigins: []string{"https://a"}})
	loopback := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80}

	f.Fuzz(func(t *testing.T, version, method, name, param, origin, host, accept, ctype, session, bodyMethod, bodyName string) {
		for _, httpMethod := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
			params := map[string]any{"name": bodyName, "arguments": map[string]any{"region": param}}
			if version != "" {
				params["_meta"] = map[string]any{MetaProtocolVersion: version, MetaClientCapabilities: map[string]any{}}
			}
			body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": bodyMethod, "params": params})
			req := httptest.NewRequest(httpMethod, "/mcp", strings.NewReader(string(body)))
			req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, loopback))
			set := func(k, v string) {
				if v != "" {
					req.Header[k] = []string{v}
				}
			}
			set("Mcp-Protocol-Version", version)
			set("Mcp-Method", method)
			set("Mcp-Name", name)
			set("Mcp-Param-Region", param)
			set("Origin", origin)
			set("Accept", accept)
			set("Content-Type", ctype)
			set("Mcp-Session-Id", session)
			if host != "" {
				req.Host = host
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			switch rec.Code {
			case 200, 202, 204, 400, 403, 404, 405, 406, 413, 415, 421, 429:
			default:
				t.Fatalf("%s: status %d: %s", httpMethod, rec.Code, rec.Body.String())
			}
			if strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") && !json.Valid(rec.Body.Bytes()) {
				t.Fatalf("invalid JSON body %q", rec.Body.String())
			}
		}
	})
}

func TestDecodeHeaderValue(t *testing.T) {
	tests := []struct {
		in, out string
		ok      bool
	}{
		{"us-west1", "us-west1", true},
		{"=?base64?SGVsbG8sIOS4lueVjA==?=", "Hello, 世界", true},
		{"=?base64?SGVsbG8?=", "", false},
		{"=?base64?SGVs!!!bG8=?=", "", false},
		{"=?base64?SGVsbG8=", "=?base64?SGVsbG8=", true},
		{"SGVsbG8=", "SGVsbG8=", true},
		{"=?BASE64?SGVsbG8=?=", "=?BASE64?SGVsbG8=?=", true},
		{"a\x01b", "", false},
		{"caf\xc3\xa9", "", false},
	}
	for _, tt := range tests {
		got, err := decodeHeaderValue(tt.in)
		if (err == nil) != tt.ok || got != tt.out {
			t.Errorf("decodeHeaderValue(%q) = %q, %v", tt.in, got, err)
		}
	}
}

func TestParamHeaderDefinitions(t *testing.T) {
	bad := []string{
		`{"type":"object","properties":{"a":{"type":"number","x-mcp-header":"A"}}}`,
		`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":""}}}`,
		`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A B"}}}`,
		`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"X"},"b":{"type":"string","x-mcp-header":"x"}}}`,
	}
	for _, schema := range bad {
		if _, err := parseParamHeaders(json.RawMessage(schema)); err == nil {
			t.Errorf("accepted %s", schema)
		}
	}
	hs, err := parseParamHeaders(json.RawMessage(`{"type":"object","properties":{"o":{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"R"}}}}}`))
	if err != nil || len(hs) != 1 || strings.Join(hs[0].path, ".") != "o.r" {
		t.Fatalf("nested: %v %v", hs, err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("AddTool accepted an invalid x-mcp-header")
			}
		}()
		NewServer(Options{}).AddTool(Tool{Name: "x", InputSchema: json.RawMessage(bad[0]), Handler: func(context.Context, *CallRequest) (*CallResult, error) { return nil, nil }})
	}()
}

func TestTemplates(t *testing.T) {
	segs, err := parseTemplate("test://template/{id}/data")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		uri string
		id  string
		ok  bool
	}{
		{"test://template/123/data", "123", true},
		{"test://template//data", "", false},
		{"test://template/1/2/data", "", false},
		{"test://template/123/datax", "", false},
		{"test://other/123/data", "", false},
	}
	for _, tt := range tests {
		vars, ok := matchTemplate(segs, tt.uri)
		if ok != tt.ok || (ok && vars["id"] != tt.id) {
			t.Errorf("match(%q) = %v %v", tt.uri, vars, ok)
		}
	}
	for _, bad := range []string{"x/{", "x/{}", "x/{a}{b}"} {
		if _, err := parseTemplate(bad); err == nil {
			t.Errorf("parseTemplate(%q) accepted", bad)
		}
	}
}
