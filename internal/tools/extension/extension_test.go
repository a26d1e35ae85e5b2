package extension

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/embedded"
	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

func TestToolSnapshot(t *testing.T) { tooltest.Snapshot(t, Tool()) }

func toolset() []*tools.Tool { return []*tools.Tool{Tool()} }

func TestSupports(t *testing.T) {
	for v, want := range map[string]bool{
		"3.7.0": true, "3.7.3": true, "v3.7.1": true, "3.8.0": true, "4.0.0": true, "3.7.0-beta.1": true,
		"3.6.9": false, "2.9.0": false, "3.6": false, "": false, "nightly": false,
	} {
		if got := supports(v); got != want {
			t.Errorf("supports(%q) = %v", v, got)
		}
	}
}

func TestObjectSchema(t *testing.T) {
	for _, c := range []struct {
		in       string
		degraded bool
	}{
		{`{"type":"object","properties":{"a":{"type":"string"}}}`, false},
		{`{"properties":{"a":{}}}`, false},
		{`{"oneOf":[{"type":"object"}]}`, false},
		{`{"type":"string"}`, true},
		{`{}`, true},
		{`[]`, true},
		{`null`, true},
		{``, true},
	} {
		got, degraded := objectSchema(json.RawMessage(c.in))
		if degraded != c.degraded || degraded && string(got) != `{"type":"object","additionalProperties":true}` {
			t.Errorf("objectSchema(%s) = %s, %v", c.in, got, degraded)
		}
	}
}

func TestCheckNative(t *testing.T) {
	for _, c := range []struct {
		tool string
		args map[string]any
		ok   bool
	}{
		{"search", map[string]any{"action": "fulltext", "query": "x"}, true},
		{"search", map[string]any{"action": "semantic"}, true},
		{"search", map[string]any{"action": "asset"}, false},
		{"search", map[string]any{"action": "getasset"}, false},
		{"search", map[string]any{}, false},
		{"search", map[string]any{"action": 1}, false},
		{"ref", map[string]any{"action": "backlinks"}, true},
		{"ref", map[string]any{"action": "refresh"}, false},
		{"repo", map[string]any{"action": "checkout"}, false},
		{"history", map[string]any{"action": "rollback"}, false},
		{"inbox", map[string]any{"action": "convert"}, false},
		{"image", map[string]any{"action": "generate"}, false},
		{"web_fetch", map[string]any{"url": "https://example.com"}, true},
		{"web_fetch", map[string]any{"action": "get", "url": "https://example.com"}, false},
		{"document", map[string]any{"action": "get"}, false},
		{"sql", map[string]any{"action": "query"}, false},
	} {
		err := checkNative(c.tool, c.args)
		var fe *failure.Error
		switch {
		case c.ok && err != nil:
			t.Errorf("%s %v: %v", c.tool, c.args, err)
		case !c.ok && (!asFailure(err, &fe) || fe.Code != failure.NativeActionNotAllowed || fe.WriteAttempted == nil || *fe.WriteAttempted):
			t.Errorf("%s %v: got %v, want native_action_not_allowed", c.tool, c.args, err)
		}
	}
}

func asFailure(err error, fe **failure.Error) bool {
	if err == nil {
		return false
	}
	e, ok := err.(*failure.Error)
	*fe = e
	return ok
}

// TestSelect: which discovered tools become actions, and of which class.
func TestSelect(t *testing.T) {
	b := &bridge{}
	schema := json.RawMessage(`{"type":"object","properties":{"action":{"type":"string"}}}`)
	got := b.select_([]siyuan.MCPTool{
		{Name: "search", InputSchema: schema},                                                 // no source: native
		{Name: "document", Source: "native", InputSchema: schema},                             // not allowlisted
		{Name: "web_fetch", Source: "native", InputSchema: schema},                            // actionless, not read-only
		{Name: "web_search", Source: "native", ReadOnlyHint: true},                            // actionless, read-only
		{Name: "plugin__a__read", Source: "plugin", ReadOnlyHint: true},                       // plugin read
		{Name: "plugin__a__write", Source: "plugin", InputSchema: schema},                     // plugin effect
		{Name: "list", Source: "plugin"},                                                      // reserved
		{Name: "validate_package", Source: "native", ReadOnlyHint: true},                      // reserved: Sisyphus's own
		{Name: "diagnose_plugin_mcp", Source: "plugin"},                                       // reserved: Sisyphus's own
		{Name: "remote", Source: "mcp"},                                                       // another server's
		{Name: "plugin__siyuan_plugins_mcp_sisyphus__fs", Source: "plugin"},                   // upstream's own
		{Name: "", Source: "plugin"},                                                          // nameless
		{Name: "plugin__a__write", Source: "plugin", ReadOnlyHint: true, InputSchema: schema}, // a later duplicate wins
	})
	want := map[string]struct {
		exposable bool
		class     strict.Class
	}{
		"document": {false, 0}, "list": {false, 0}, "validate_package": {false, 0}, "diagnose_plugin_mcp": {false, 0}, "plugin__a__read": {true, strict.Read},
		"plugin__a__write": {true, strict.Read}, "search": {true, strict.Read}, "web_fetch": {false, 0}, "web_search": {true, strict.Read},
	}
	if len(got) != len(want) {
		t.Fatalf("selected %d tools, want %d", len(got), len(want))
	}
	for i, e := range got {
		w, ok := want[e.tool.Name]
		if i > 0 && got[i-1].tool.Name >= e.tool.Name {
			t.Errorf("not sorted at %s", e.tool.Name)
		}
		switch {
		case !ok:
			t.Errorf("%s should not be kept", e.tool.Name)
		case e.exposable != w.exposable:
			t.Errorf("%s exposable = %v", e.tool.Name, e.exposable)
		case e.exposable && e.action.Policy.Class != w.class:
			t.Errorf("%s class = %s", e.tool.Name, e.action.Policy.Class)
		}
	}
	if e, _ := b.find("search"); e != nil {
		t.Fatal("find reads the snapshot, which select_ does not set")
	}
}

// TestExposed: plugin tools unless blocked; native ones only with
// includeNativeTools.
func TestExposed(t *testing.T) {
	plugin := &entry{tool: siyuan.MCPTool{Name: "plugin__a__b"}, source: "plugin", exposable: true}
	native := &entry{tool: siyuan.MCPTool{Name: "search"}, source: "native", exposable: true}
	hidden := &entry{tool: siyuan.MCPTool{Name: "sql"}, source: "native"}
	for _, c := range []struct {
		ext                    tools.ExtensionSettings
		plugin, native, hidden bool
	}{
		{tools.ExtensionSettings{}, true, false, false},
		{tools.ExtensionSettings{NativeTools: true}, true, true, false},
		{tools.ExtensionSettings{NativeTools: true, Blocked: []string{"search", "plugin__a__b", "sql"}}, false, false, false},
	} {
		p := &tools.Policy{Extension: c.ext}
		if plugin.exposed(p) != c.plugin || native.exposed(p) != c.native || hidden.exposed(p) != c.hidden {
			t.Errorf("%+v: plugin %v native %v hidden %v", c.ext, plugin.exposed(p), native.exposed(p), hidden.exposed(p))
		}
	}
}

// peek reads an /mcp request's JSON-RPC method, tool name and id, and
// restores its body.
func peek(r *http.Request) (method, tool, id string) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var req struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	json.Unmarshal(body, &req)
	return req.Method, req.Params.Name, string(req.ID)
}

// mcpHook is a fixture hook that sees /mcp requests only.
func mcpHook(f func(w http.ResponseWriter, method, tool, id string) bool) tooltest.Hook {
	return func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != "/mcp" {
			return false
		}
		method, tool, id := peek(r)
		return f(w, method, tool, id)
	}
}

// TestOldSiYuanIsRefused: below 3.7.0 nothing is sent to /mcp, and the
// refusal names the version.
func TestOldSiYuanIsRefused(t *testing.T) {
	s := tooltest.NewStrict(t, false, toolset)
	var mcpCalls atomic.Int32
	s.SetHook(func(w http.ResponseWriter, r *http.Request) bool {
		switch r.URL.Path {
		case "/api/system/version":
			w.Write([]byte(`{"code":0,"msg":"","data":"3.6.5"}`))
			return true
		case "/mcp":
			mcpCalls.Add(1)
		}
		return false
	})
	e := s.WantErr(t, "extension", map[string]any{"action": "list"}, failure.ExtensionUnsupported)
	if e.Details["siyuanVersion"] != "3.6.5" || !strings.Contains(e.Message, "3.6.5") || !strings.Contains(e.Message, "3.7.0") {
		t.Fatalf("refusal %+v", e)
	}
	s.WantErr(t, "extension", map[string]any{"action": "search", "arguments": map[string]any{"action": "fulltext", "query": "x"}}, failure.ExtensionUnsupported)
	if n := mcpCalls.Load(); n != 0 {
		t.Fatalf("%d requests reached /mcp", n)
	}
}

// TestEndpointUnavailable: an endpoint that does not answer MCP fails the
// discovery, typed, and keeps no tools.
func TestEndpointUnavailable(t *testing.T) {
	s := tooltest.NewStrict(t, false, toolset)
	s.OK(t, "extension", map[string]any{"action": "list"})
	s.SetHook(mcpHook(func(w http.ResponseWriter, _, _, _ string) bool {
		http.Error(w, "404 page not found", http.StatusNotFound)
		return true
	}))
	s.WantErr(t, "extension", map[string]any{"action": "list", "refresh": true}, failure.ExtensionUnavailable)
	ext, _ := s.R.Tool("extension")
	if acts := ext.Dynamic.Actions(tools.Unrestricted()); len(acts) != 0 {
		t.Fatalf("a failed discovery kept %d tools", len(acts))
	}
}

// TestEffectIsSentOnce: a lost reply after the call went out is
// outcome_unknown, writeAttempted true, and the call is not sent again; a
// JSON-RPC refusal is write_rejected with nothing attempted.
func TestEffectIsSentOnce(t *testing.T) {
	s := tooltest.NewStrict(t, false, toolset)
	s.OK(t, "extension", map[string]any{"action": "list"})
	var sent atomic.Int32
	var drop atomic.Bool
	drop.Store(true)
	s.Wrap(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/mcp" {
				next.ServeHTTP(w, r)
				return
			}
			method, tool, id := peek(r)
			if method != "tools/call" || tool != embedded.ExamplePluginStamp {
				next.ServeHTTP(w, r)
				return
			}
			sent.Add(1)
			if !drop.Load() {
				w.Write([]byte(`{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params"},"id":` + id + `}`))
				return
			}
			next.ServeHTTP(httptest.NewRecorder(), r) // it runs
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close() // and its reply is lost
			}
		})
	})
	stamp := map[string]any{"action": embedded.ExamplePluginStamp, "arguments": map[string]any{"id": s.Blocks[0], "value": "once"}}
	e := s.WantErr(t, "extension", stamp, failure.OutcomeUnknown)
	if e.WriteAttempted == nil || !*e.WriteAttempted || sent.Load() != 1 {
		t.Fatalf("lost reply: %+v, sent %d times", e, sent.Load())
	}
	attrs, err := s.C.GetBlockAttrs(context.Background(), s.Blocks[0])
	if err != nil || attrs[embedded.StampAttr] != "once" {
		t.Fatalf("the tool did run: %v %v", attrs, err)
	}
	drop.Store(false)
	e = s.WantErr(t, "extension", stamp, failure.Rejected)
	if e.WriteAttempted == nil || *e.WriteAttempted || sent.Load() != 2 {
		t.Fatalf("refused call: %+v, sent %d times", e, sent.Load())
	}
}

// TestReadAnswers: a read relays the tool's content, its own error is
// typed, and a reply over the bound is refused without relaying it.
func TestReadAnswers(t *testing.T) {
	s := tooltest.NewStrict(t, false, toolset)
	doc := s.MkDoc(t, s.NB, "/Outlined", "# Top\n\ntext\n")
	res := s.OK(t, "extension", map[string]any{"action": "outline", "arguments": map[string]any{"action": "get", "id": doc}})
	content := res["content"].([]any)[0].(map[string]any)
	if res["tool"] != "outline" || res["source"] != "native" || !strings.HasPrefix(content["text"].(string), "Document outline (1 headings):") {
		t.Fatalf("outline: %v", res)
	}
	e := s.WantErr(t, "extension", map[string]any{"action": "outline", "arguments": map[string]any{"action": "get", "id": s.Doc}}, failure.ExtensionToolError)
	if !strings.Contains(e.Message, "document not found or has no headings") {
		t.Fatalf("tool error %+v", e)
	}
	s.SetHook(mcpHook(func(w http.ResponseWriter, method, _, id string) bool {
		if method != "tools/call" {
			return false
		}
		big := strings.Repeat("x", maxResult)
		w.Write([]byte(`{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"` + big + `"}]},"id":` + id + `}`))
		return true
	}))
	s.WantErr(t, "extension", map[string]any{"action": "outline", "arguments": map[string]any{"action": "get", "id": doc}}, failure.ReadBudgetExceeded)
	// SiYuan 3.7.3's answer when a tool's handler panics: 200, no body.
	s.SetHook(mcpHook(func(w http.ResponseWriter, method, _, _ string) bool {
		return method == "tools/call"
	}))
	e = s.WantErr(t, "extension", map[string]any{"action": "outline", "arguments": map[string]any{"action": "get", "id": doc}}, failure.ExtensionToolError)
	if !strings.Contains(e.Message, "answered nothing") {
		t.Fatalf("empty reply: %+v", e)
	}
}

func TestClip(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"}, {"abcdef", 3, "abc…"}, {"ééé", 3, "é…"}, {"ééé", 4, "éé…"},
	} {
		if got := clip(c.in, c.n); got != c.want {
			t.Errorf("clip(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

// TestMissesShareOneDiscovery: calls naming unknown tools at once wait for
// one discovery instead of each sending their own.
func TestMissesShareOneDiscovery(t *testing.T) {
	s := tooltest.NewStrict(t, false, toolset)
	var lists atomic.Int32
	s.SetHook(mcpHook(func(w http.ResponseWriter, method, _, _ string) bool {
		if method == "tools/list" && lists.Add(1) == 1 {
			time.Sleep(300 * time.Millisecond) // the others miss while it runs
		}
		return false
	}))
	done := make(chan struct{})
	for range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			s.Call(t, "extension", map[string]any{"action": "nosuch", "arguments": map[string]any{}})
		}()
	}
	for range 4 {
		<-done
	}
	if n := lists.Load(); n != 1 {
		t.Fatalf("%d discoveries for 4 concurrent misses", n)
	}
}
