package siyuan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// rpcReply answers a JSON-RPC request with result for its id.
func rpcReply(w http.ResponseWriter, s seen, result any) {
	var req struct {
		ID json.RawMessage `json:"id"`
	}
	json.Unmarshal(s.Body, &req)
	b, _ := json.Marshal(result)
	fmt.Fprintf(w, `{"jsonrpc":"2.0","result":%s,"id":%s}`, b, req.ID)
}

func TestMCPSendsTheStatelessRevision(t *testing.T) {
	var headers http.Header
	fk := newFakeKernel(t, func(w http.ResponseWriter, r *http.Request, s seen) {
		headers = r.Header.Clone()
		rpcReply(w, s, map[string]any{"protocolVersion": "2026-07-28", "serverInfo": map[string]any{"name": "SiYuan", "version": "3.7.3"}})
	})
	c := newTestClient(t, fk.URL)
	srv, err := c.MCPDiscover(context.Background())
	if err != nil || srv.ProtocolVersion != "2026-07-28" || srv.ServerInfo.Version != "3.7.3" {
		t.Fatalf("discover: %+v %v", srv, err)
	}
	last := fk.last(t)
	var body map[string]any
	json.Unmarshal(last.Body, &body)
	if last.Path != "/mcp" || last.Auth != "Token test-token" || headers.Get("MCP-Protocol-Version") != "2026-07-28" ||
		headers.Get("Mcp-Method") != "server/discover" || body["method"] != "server/discover" || body["jsonrpc"] != "2.0" {
		t.Fatalf("request %s %v %s", last.Path, headers, last.Body)
	}
}

func TestMCPListFollowsCursors(t *testing.T) {
	fk := newFakeKernel(t, func(w http.ResponseWriter, r *http.Request, s seen) {
		if strings.Contains(string(s.Body), `"cursor":"p2"`) {
			rpcReply(w, s, map[string]any{"tools": []any{map[string]any{"name": "b", "source": "plugin", "readOnlyHint": true}}})
			return
		}
		rpcReply(w, s, map[string]any{"tools": []any{map[string]any{"name": "a"}}, "nextCursor": "p2"})
	})
	tools, err := newTestClient(t, fk.URL).MCPListTools(context.Background())
	if err != nil || len(tools) != 2 || tools[0].Name != "a" || tools[0].Source != "" || !tools[1].ReadOnlyHint {
		t.Fatalf("tools %+v %v", tools, err)
	}
}

func TestMCPListRetriesButCallIsSentOnce(t *testing.T) {
	fk := newFakeKernel(t, func(w http.ResponseWriter, r *http.Request, s seen) {
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	c := newTestClient(t, fk.URL)
	if _, err := c.MCPListTools(context.Background()); err == nil {
		t.Fatal("list over 503 succeeded")
	}
	if n := fk.hits.Load(); n != DefaultReadAttempts {
		t.Fatalf("list sent %d times, want %d (a read)", n, DefaultReadAttempts)
	}
	fk.hits.Store(0)
	_, err := c.MCPCallTool(context.Background(), "plugin__a__b", map[string]any{"x": 1}, 0)
	if !IsOutcomeUnknown(err) || fk.hits.Load() != 1 {
		t.Fatalf("call over 503: %v, sent %d times", err, fk.hits.Load())
	}
}

func TestMCPCallAnswers(t *testing.T) {
	for _, c := range []struct {
		name  string
		reply string // %s is the request id
		check func(*MCPCallResult, error) bool
	}{
		{"result", `{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"hi"}]},"id":%s}`,
			func(r *MCPCallResult, err error) bool { return err == nil && len(r.Content) == 1 && !r.IsError }},
		{"tool error", `{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"tool not found: x"}],"isError":true},"id":%s}`,
			func(r *MCPCallResult, err error) bool { return err == nil && r.IsError }},
		{"rpc error", `{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params"},"id":%s}`,
			func(_ *MCPCallResult, err error) bool {
				var e *MCPError
				return errors.As(err, &e) && e.Code == -32602 && !IsOutcomeUnknown(err)
			}},
		{"other id", `{"jsonrpc":"2.0","result":{"content":[]},"id":"x%s"}`,
			func(_ *MCPCallResult, err error) bool {
				var d *DecodeError
				return errors.As(err, &d) && IsOutcomeUnknown(err)
			}},
		{"no result", `{"jsonrpc":"2.0","id":%s}`,
			func(_ *MCPCallResult, err error) bool { return IsOutcomeUnknown(err) }},
		{"empty 200 (a panicked handler)", ``,
			func(_ *MCPCallResult, err error) bool {
				return errors.Is(err, ErrMCPEmptyReply) && IsOutcomeUnknown(err)
			}},
		{"not JSON", `<html>%s</html>`,
			func(_ *MCPCallResult, err error) bool { return IsOutcomeUnknown(err) }},
	} {
		fk := newFakeKernel(t, func(w http.ResponseWriter, r *http.Request, s seen) {
			var req struct {
				ID json.RawMessage `json:"id"`
			}
			json.Unmarshal(s.Body, &req)
			if c.reply != "" {
				fmt.Fprintf(w, c.reply, req.ID)
			}
		})
		res, err := newTestClient(t, fk.URL).MCPCallTool(context.Background(), "t", nil, 0)
		if !c.check(res, err) {
			t.Errorf("%s: %+v %v", c.name, res, err)
		}
	}
}

func TestMCPCallBoundsItsReply(t *testing.T) {
	fk := newFakeKernel(t, func(w http.ResponseWriter, r *http.Request, s seen) {
		rpcReply(w, s, map[string]any{"content": []any{map[string]any{"type": "text", "text": strings.Repeat("x", 4096)}}})
	})
	_, err := newTestClient(t, fk.URL).MCPCallTool(context.Background(), "t", nil, 1024)
	var tl *ResponseTooLargeError
	if !errors.As(err, &tl) || tl.Limit != 1024 || !IsOutcomeUnknown(err) {
		t.Fatalf("oversized reply: %v", err)
	}
}

func TestMCPCallNeedsAName(t *testing.T) {
	fk := newFakeKernel(t, func(w http.ResponseWriter, r *http.Request, s seen) {})
	if _, err := newTestClient(t, fk.URL).MCPCallTool(context.Background(), "", nil, 0); !errors.Is(err, ErrInvalidArgument) || fk.hits.Load() != 0 {
		t.Fatalf("empty name: %v (%d sent)", err, fk.hits.Load())
	}
}

// FuzzDecodeRPC: any reply decodes to a result, an *MCPError or a
// *DecodeError, never a panic.
func FuzzDecodeRPC(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","result":{"tools":[]},"id":7}`,
		`{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":7}`,
		`{"jsonrpc":"2.0","result":null,"id":7}`,
		`{"id":"7","result":{"tools":[{"name":1}]}}`,
		`[]`, `null`, ``, `{"error":null,"result":{}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var out struct {
			Tools []MCPTool `json:"tools"`
		}
		err := decodeRPC("tools/list", 7, b, &out)
		var rpc *MCPError
		var dec *DecodeError
		if err != nil && !errors.As(err, &rpc) && !errors.As(err, &dec) {
			t.Fatalf("%q: untyped error %v", b, err)
		}
	})
}

func TestMCPCallRoutingHeadersAndMeta(t *testing.T) {
	var name string
	fk := newFakeKernel(t, func(w http.ResponseWriter, r *http.Request, s seen) {
		name = r.Header.Get("Mcp-Name")
		rpcReply(w, s, map[string]any{"content": []any{}})
	})
	if _, err := newTestClient(t, fk.URL).MCPCallTool(context.Background(), "plugin__a__b", map[string]any{"k": "v"}, 0); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Params struct {
			Name      string         `json:"name"`
			Arguments map[string]any `json:"arguments"`
			Meta      map[string]any `json:"_meta"`
		} `json:"params"`
	}
	json.Unmarshal(fk.last(t).Body, &body)
	if name != "plugin__a__b" || body.Params.Name != "plugin__a__b" || body.Params.Arguments["k"] != "v" ||
		body.Params.Meta["io.modelcontextprotocol/protocolVersion"] != MCPProtocolVersion || body.Params.Meta["io.modelcontextprotocol/clientCapabilities"] == nil {
		t.Fatalf("Mcp-Name %q, body %s", name, fk.last(t).Body)
	}
	for in, want := range map[string]string{"search": "search", "a b": "a b", " x": "=?base64?IHg=?=", "é": "=?base64?w6k=?=", "=?base64?x?=": "=?base64?PT9iYXNlNjQ/eD89?="} {
		if got := headerValue(in); got != want {
			t.Errorf("headerValue(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMCPServerShapes(t *testing.T) {
	var siyuanShape, specShape MCPServer
	json.Unmarshal([]byte(`{"capabilities":{"tools":{"listChanged":false}},"protocolVersion":"2026-07-28","serverInfo":{"name":"SiYuan","version":"3.7.3"}}`), &siyuanShape)
	json.Unmarshal([]byte(`{"resultType":"complete","supportedVersions":["2026-07-28","2025-11-25"],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"X","version":"2"}}}`), &specShape)
	if !siyuanShape.Speaks() || siyuanShape.Info().Version != "3.7.3" || !specShape.Speaks() || specShape.Info().Name != "X" {
		t.Fatalf("%+v %+v", siyuanShape, specShape)
	}
	if (MCPServer{ProtocolVersion: "2025-06-18"}).Speaks() {
		t.Fatal("an older revision is not the client's")
	}
}
