package contract

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
)

// mcpChecks cover SiYuan's own MCP endpoint (POST /mcp), which the
// extension tool bridges: its protocol as 3.7.3 answers it, and the native
// tools the bridge forwards (search, outline). The real kernel runs no
// plugins, so the plugin tools are checked on the embedded kernel only.
var mcpChecks = []check{
	{"mcp_discover", checkMCPDiscover},
	{"mcp_protocol_errors", checkMCPProtocolErrors},
	{"mcp_legacy_sessions", checkMCPLegacySessions},
	{"mcp_tools_list_native", checkMCPListNative},
	{"mcp_native_calls", checkMCPNativeCalls},
	{"mcp_outline_get", checkMCPOutline},
	{"mcp_search_fulltext", checkMCPSearch},
	{"mcp_block_and_attr_reads", checkMCPBlockReads},
	{"mcp_notebook_list", checkMCPNotebookList},
	{"mcp_document_reads", checkMCPDocReads},
	{"mcp_sql_query", checkMCPSQL},
	{"mcp_stateless_answers", checkMCPStatelessAnswers},
	{"mcp_ref_backlinks", checkMCPRef},
	{"mcp_workspace", checkMCPWorkspace},
	{"mcp_tag_list", checkMCPTagList},
	{"mcp_bookmarks", checkMCPBookmarks},
	{"mcp_block_writes", checkMCPBlockWrites},
	{"mcp_notebook_writes", checkMCPNotebookWrites},
	{"mcp_call_errors", checkMCPCallErrors},
	{"mcp_plugin_tools_embedded_only", checkMCPPluginTools},
}

// mcpPost sends one raw request to /mcp.
func (s *suite) mcpPost(t *testing.T, headers map[string]string, body string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, strings.TrimSuffix(s.k.URL, "/")+"/mcp", strings.NewReader(body))
	must(t, "NewRequest", err)
	req.Header.Set("Content-Type", "application/json")
	if _, ok := headers["Authorization"]; !ok {
		req.Header.Set("Authorization", "Token "+s.k.Token)
	}
	for k, v := range headers {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	resp, err := s.k.http().Do(req)
	must(t, "POST /mcp", err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	must(t, "read /mcp", err)
	return resp.StatusCode, resp.Header, bytes.TrimSpace(b)
}

var stateless = map[string]string{"MCP-Protocol-Version": "2026-07-28"}

func checkMCPDiscover(t *testing.T, s *suite) {
	srv, err := s.c.MCPDiscover(t.Context())
	must(t, "MCPDiscover", err)
	v, err := s.c.Version(t.Context())
	must(t, "Version", err)
	if srv.ProtocolVersion != "2026-07-28" || srv.ServerInfo.Name != "SiYuan" || srv.ServerInfo.Version != v {
		t.Fatalf("server/discover = %+v (version %s)", srv, v)
	}
	// The stateless tools/list carries a cache hint; the legacy one not.
	code, _, body := s.mcpPost(t, stateless, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`)
	var r struct {
		Result map[string]json.RawMessage `json:"result"`
	}
	if code != 200 || json.Unmarshal(body, &r) != nil || string(r.Result["ttlMs"]) != "60000" || string(r.Result["cacheScope"]) != `"user"` {
		t.Fatalf("stateless tools/list: %d %.300s", code, body)
	}
}

func checkMCPProtocolErrors(t *testing.T, s *suite) {
	for _, c := range []struct {
		name    string
		headers map[string]string
		body    string
		status  int
		want    string
	}{
		{"no token", map[string]string{"Authorization": "Token wrong-" + s.tag}, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, 401, `{"code":-1,"msg":"Auth failed [header: Authorization]"}`},
		{"not JSON", stateless, `garbage`, 200, `{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":null}`},
		{"wrong jsonrpc", stateless, `{"jsonrpc":"1.0","id":3,"method":"ping"}`, 200, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"},"id":3}`},
		{"no method", stateless, `{"jsonrpc":"2.0","id":4}`, 200, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"},"id":4}`},
		{"unknown method", stateless, `{"jsonrpc":"2.0","id":5,"method":"resources/list"}`, 200, `{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":5}`},
		{"initialize is legacy", stateless, `{"jsonrpc":"2.0","id":6,"method":"initialize","params":{}}`, 200, `{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":6}`},
		{"ping", stateless, `{"jsonrpc":"2.0","id":7,"method":"ping"}`, 200, `{"jsonrpc":"2.0","result":{},"id":7}`},
		{"Mcp-Method mismatch", map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}, `{"jsonrpc":"2.0","id":8,"method":"ping"}`, 400, `{"error":"Mcp-Method header does not match body method"}`},
		{"notification", stateless, `{"jsonrpc":"2.0","method":"notifications/cancelled"}`, 202, ``},
		{"name required", stateless, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"arguments":{}}}`, 200, `{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params: name is required"},"id":9}`},
		{"params required", stateless, `{"jsonrpc":"2.0","id":10,"method":"tools/call"}`, 200, `{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params"},"id":10}`},
	} {
		code, _, body := s.mcpPost(t, c.headers, c.body)
		if code != c.status || !sameJSON(body, c.want) {
			t.Errorf("%s: %d %s, want %d %s", c.name, code, body, c.status, c.want)
		}
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, strings.TrimSuffix(s.k.URL, "/")+"/mcp", nil)
	req.Header.Set("Authorization", "Token "+s.k.Token)
	resp, err := s.k.http().Do(req)
	must(t, "GET /mcp", err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET /mcp: %d, want 405 (no SSE stream)", resp.StatusCode)
	}
}

// sameJSON compares two JSON texts by value ("" is an empty body).
func sameJSON(got []byte, want string) bool {
	if want == "" {
		return len(got) == 0
	}
	var a, b any
	return json.Unmarshal(got, &a) == nil && json.Unmarshal([]byte(want), &b) == nil && fmt.Sprint(a) == fmt.Sprint(b)
}

func checkMCPLegacySessions(t *testing.T, s *suite) {
	// An unsupported revision is answered with 2025-06-18.
	code, h, body := s.mcpPost(t, nil, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`)
	want := `{"jsonrpc":"2.0","result":{"capabilities":{"tools":{"listChanged":false}},"protocolVersion":"2025-06-18","serverInfo":{"name":"SiYuan","version":"%s"}},"id":1}`
	v, err := s.c.Version(t.Context())
	must(t, "Version", err)
	sid := h.Get("Mcp-Session-Id")
	if code != 200 || !sameJSON(body, fmt.Sprintf(want, v)) || len(sid) != 16 {
		t.Fatalf("initialize: %d %s session %q", code, body, sid)
	}
	code, _, body = s.mcpPost(t, nil, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05"}}`)
	if code != 200 || !strings.Contains(string(body), `"protocolVersion":"2024-11-05"`) {
		t.Fatalf("initialize 2024-11-05: %d %s", code, body)
	}
	for _, c := range []struct {
		sid, body string
		status    int
		want      string
	}{
		{sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, 202, ``},
		{sid, `{"jsonrpc":"2.0","id":2,"method":"ping"}`, 200, `{"jsonrpc":"2.0","result":{},"id":2}`},
		{"", `{"jsonrpc":"2.0","id":3,"method":"ping"}`, 400, `{"error":"Mcp-Session-Id required"}`},
		{"nosuchsession" + s.tag, `{"jsonrpc":"2.0","id":4,"method":"ping"}`, 404, `{"error":"session not found"}`},
		{sid, `{"jsonrpc":"2.0","id":5,"method":"server/discover"}`, 200, `{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":5}`},
	} {
		code, _, body := s.mcpPost(t, map[string]string{"Mcp-Session-Id": c.sid}, c.body)
		if code != c.status || !sameJSON(body, c.want) {
			t.Errorf("session %q %s: %d %s, want %d %s", c.sid, c.body, code, body, c.status, c.want)
		}
	}
	// The legacy tools/list has no cache hint.
	code, _, body = s.mcpPost(t, map[string]string{"Mcp-Session-Id": sid}, `{"jsonrpc":"2.0","id":6,"method":"tools/list"}`)
	if code != 200 || strings.Contains(string(body), "ttlMs") || !strings.Contains(string(body), `"name":"outline"`) {
		t.Errorf("legacy tools/list: %d %.200s", code, body)
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodDelete, strings.TrimSuffix(s.k.URL, "/")+"/mcp", nil)
	req.Header.Set("Authorization", "Token "+s.k.Token)
	req.Header.Set("Mcp-Session-Id", sid)
	resp, err := s.k.http().Do(req)
	must(t, "DELETE /mcp", err)
	resp.Body.Close()
	code, _, body = s.mcpPost(t, map[string]string{"Mcp-Session-Id": sid}, `{"jsonrpc":"2.0","id":7,"method":"ping"}`)
	if resp.StatusCode != 200 || code != 404 {
		t.Errorf("after DELETE (%d): %d %s, want 404", resp.StatusCode, code, body)
	}
}

func findTool(tools []siyuan.MCPTool, name string) *siyuan.MCPTool {
	for i := range tools {
		if tools[i].Name == name {
			return &tools[i]
		}
	}
	return nil
}

func checkMCPListNative(t *testing.T, s *suite) {
	tools, err := s.c.MCPListTools(t.Context())
	must(t, "MCPListTools", err)
	if !slices.IsSortedFunc(tools, func(a, b siyuan.MCPTool) int { return strings.Compare(a.Name, b.Name) }) {
		t.Errorf("tools are not sorted by name")
	}
	for _, tool := range tools {
		if tool.Source != "native" && tool.Source != "plugin" && tool.Source != "mcp" {
			t.Errorf("%s: source %q", tool.Name, tool.Source)
		}
	}
	// The native tools are 3.7.3's, each as the declaration the embedded
	// kernel serves: names, order, titles, descriptions, input schemas
	// (action enums included), source and effect scope; never readOnlyHint
	// (3.7.3 sets it only for plugin tools registered read-only).
	var want []siyuan.MCPTool
	must(t, "decode the native tools", json.Unmarshal(endpoint.NativeMCPTools(), &want))
	var got []siyuan.MCPTool
	for _, tool := range tools {
		if tool.Source == "native" {
			got = append(got, tool)
		}
	}
	names := func(l []siyuan.MCPTool) []string {
		var out []string
		for _, t := range l {
			out = append(out, t.Name)
		}
		return out
	}
	if !slices.Equal(names(got), names(want)) {
		t.Fatalf("native tools\n got %v\nwant %v", names(got), names(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Title != w.Title || g.Description != w.Description || g.Source != w.Source || g.EffectScope != w.EffectScope || g.ReadOnlyHint ||
			!sameJSON(g.InputSchema, string(w.InputSchema)) {
			t.Errorf("%s differs:\n got %+v %s\nwant %+v %s", w.Name, g, g.InputSchema, w, w.InputSchema)
		}
	}
}

// checkMCPNativeCalls: what a native tool answers where both kernels
// answer the same: the system tool, and an action outside a tool's enum.
func checkMCPNativeCalls(t *testing.T, s *suite) {
	v, err := s.c.Version(t.Context())
	must(t, "Version", err)
	if text, isErr := s.callText(t, "system", map[string]any{"action": "version"}); isErr || text != v {
		t.Errorf("system version: %q %v, want %q", text, isErr, v)
	}
	text, isErr := s.callText(t, "system", map[string]any{"action": "current_time"})
	if _, err := time.Parse(time.RFC3339, text); isErr || err != nil {
		t.Errorf("system current_time: %q %v", text, isErr)
	}
	text, isErr = s.callText(t, "system", map[string]any{"action": "workspace"})
	if lines := strings.Split(text, "\n"); isErr || len(lines) != 3 || !strings.HasPrefix(lines[0], "Workspace: /") || lines[1] != "Version: "+v || !strings.HasPrefix(lines[2], "Container: ") {
		t.Errorf("system workspace: %q %v", text, isErr)
	}
	for _, c := range []struct {
		tool, action, want string
	}{
		{"notebook", "bogus", "unknown action 'bogus', expected one of: [list, open, close, create, rename, remove, set_icon, random_icon]"},
		{"notebook", "", "unknown action '', expected one of: [list, open, close, create, rename, remove, set_icon, random_icon]"},
		{"system", "reboot", "unknown action 'reboot', expected one of: [version, current_time, workspace]"},
		{"search", "nearby", "unknown action 'nearby', expected one of: [fulltext, semantic, asset, getasset]"},
	} {
		args := map[string]any{}
		if c.action != "" {
			args["action"] = c.action
		}
		if text, isErr := s.callText(t, c.tool, args); !isErr || text != c.want {
			t.Errorf("%s %q: %q %v, want %q", c.tool, c.action, text, isErr, c.want)
		}
	}
}

// callText calls a tool and returns its text and isError.
func (s *suite) callText(t *testing.T, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := s.c.MCPCallTool(t.Context(), name, args, 0)
	must(t, "MCPCallTool "+name, err)
	var parts []string
	for _, c := range res.Content {
		var item struct{ Type, Text string }
		if err := json.Unmarshal(c, &item); err != nil || item.Type != "text" {
			t.Fatalf("%s: content item %s", name, c)
		}
		parts = append(parts, item.Text)
	}
	return strings.Join(parts, "\n"), res.IsError
}

func checkMCPOutline(t *testing.T, s *suite) {
	ctx := t.Context()
	doc, err := s.c.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: s.box, Path: "/mcp-outline-" + s.tag,
		Markdown: "# Intro\n\nhello\n\n## Sub\n\nmore\n\n# Second\n\nend\n"})
	must(t, "CreateDocWithMd", err)
	kids, err := s.c.GetChildBlocks(ctx, doc)
	must(t, "GetChildBlocks", err)
	var heads []string
	for _, k := range kids {
		if k.Type == "h" {
			heads = append(heads, k.ID)
		}
	}
	if len(heads) != 3 {
		t.Fatalf("children %+v", kids)
	}
	want := fmt.Sprintf("Document outline (3 headings):\n\n- [Intro] (id: %s, depth: 0)\n  - [Sub] (id: %s, depth: 1)\n- [Second] (id: %s, depth: 0)\n", heads[0], heads[1], heads[2])
	for _, name := range []string{"outline", "SIYUAN_Outline"} { // looked up in any case, without siyuan_
		if got, isErr := s.callText(t, name, map[string]any{"action": "get", "id": doc}); got != want || isErr {
			t.Errorf("%s get = %q (isError %v), want %q", name, got, isErr, want)
		}
	}
	plain, err := s.c.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: s.box, Path: "/mcp-plain-" + s.tag, Markdown: "no headings\n"})
	must(t, "CreateDocWithMd", err)
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"action": "get", "id": plain}, "document not found or has no headings"},
		{map[string]any{"action": "get", "id": "20200101000000-aaaaaaa"}, "document not found or has no headings"},
		{map[string]any{"action": "get"}, "id is required"},
		{map[string]any{"action": "bogus", "id": doc}, "unknown action 'bogus', expected one of: [get]"},
	} {
		if got, isErr := s.callText(t, "outline", c.args); got != c.want || !isErr {
			t.Errorf("outline %v = %q (isError %v), want %q", c.args, got, isErr, c.want)
		}
	}
}

func checkMCPSearch(t *testing.T, s *suite) {
	ctx := t.Context()
	word := "mcpzebra" + s.tag
	title := "mcp-search-" + s.tag
	doc, err := s.c.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: s.box, Path: "/" + title, Markdown: "hello " + word + " world\n"})
	must(t, "CreateDocWithMd", err)
	must(t, "FlushTransaction", s.c.FlushTransaction(ctx))
	kids, err := s.c.GetChildBlocks(ctx, doc)
	must(t, "GetChildBlocks", err)
	hit := fmt.Sprintf("- [/%s] NodeParagraph\n  hello %s world\n  id: %s\n\n", title, word, kids[0].ID)
	want := "Found 1 results (page 1/1):\n\n" + hit
	for _, args := range []map[string]any{
		{"action": "fulltext", "query": word},
		{"action": "fulltext", "query": word, "notebook": s.box, "page": 1, "pageSize": 5},
	} {
		got, isErr := s.callText(t, "search", args)
		if s.k.Live && got == "Found 2 results (page 1/1):\n\n"+hit+hit {
			// SiYuan 3.7.3's index sometimes holds a just-created block
			// twice for a moment; the embedded kernel never does.
			t.Logf("search %v: the real kernel listed the block twice (a duplicate index row)", args)
			continue
		}
		if got != want || isErr {
			t.Errorf("search %v = %q (isError %v), want %q", args, got, isErr, want)
		}
	}
	for _, c := range []struct {
		args  map[string]any
		want  string
		isErr bool
	}{
		{map[string]any{"action": "fulltext", "query": "nothingmatches" + s.tag}, "No results found.", false},
		// No embedding model is configured on either kernel.
		{map[string]any{"action": "semantic", "query": word}, "No semantic search results. Make sure AI embedding is configured in SiYuan settings.", false},
	} {
		if got, isErr := s.callText(t, "search", c.args); got != c.want || isErr != c.isErr {
			t.Errorf("search %v = %q (isError %v), want %q", c.args, got, isErr, c.want)
		}
	}
	if got, isErr := s.callText(t, "search", map[string]any{"action": "bogus"}); !isErr || !strings.HasPrefix(got, "unknown action 'bogus', expected one of: [fulltext, semantic") {
		t.Errorf("search bogus = %q (isError %v)", got, isErr)
	}
}

func checkMCPCallErrors(t *testing.T, s *suite) {
	if got, isErr := s.callText(t, "nosuch_"+s.tag, nil); got != "tool not found: nosuch_"+s.tag || !isErr {
		t.Errorf("unknown tool: %q %v", got, isErr)
	}
	// A JSON-RPC error is typed, and is a refusal before any tool ran.
	_, err := s.c.MCPCallTool(t.Context(), "", nil, 0)
	if !errors.Is(err, siyuan.ErrInvalidArgument) {
		t.Errorf("empty name: %v", err)
	}
	// A reply over the cap is not decoded.
	_, err = s.c.MCPCallTool(t.Context(), "outline", map[string]any{"action": "get"}, 16)
	var tooLarge *siyuan.ResponseTooLargeError
	if !errors.As(err, &tooLarge) || !siyuan.IsOutcomeUnknown(err) {
		t.Errorf("reply over 16 bytes: %v", err)
	}
}

func checkMCPPluginTools(t *testing.T, s *suite) {
	if s.k.Live {
		t.Skip("the real kernel runs no plugins, so it lists no plugin tools; the embedded kernel's example plugin stands in for one")
	}
	ctx := t.Context()
	tools, err := s.c.MCPListTools(ctx)
	must(t, "MCPListTools", err)
	wc, stamp := findTool(tools, "plugin__sisyphus_example__word_count"), findTool(tools, "plugin__sisyphus_example__stamp")
	if wc == nil || stamp == nil || wc.Source != "plugin" || !wc.ReadOnlyHint || stamp.Source != "plugin" || stamp.ReadOnlyHint ||
		wc.EffectScope != "unknown" || stamp.EffectScope != "unknown" {
		t.Fatalf("plugin tools: %+v %+v", wc, stamp)
	}
	doc, ids := s.docWithParas(t, "mcp-plugin-"+s.tag, "one two three")
	if got, isErr := s.callText(t, wc.Name, map[string]any{"id": doc}); got != "Words: 3" || isErr {
		t.Errorf("word_count = %q %v", got, isErr)
	}
	if got, isErr := s.callText(t, stamp.Name, map[string]any{"id": ids[0], "value": "v" + s.tag}); got != "stamped "+ids[0] || isErr {
		t.Errorf("stamp = %q %v", got, isErr)
	}
	attrs, err := s.c.GetBlockAttrs(ctx, ids[0])
	must(t, "GetBlockAttrs", err)
	if attrs["custom-sisyphus-stamp"] != "v"+s.tag {
		t.Errorf("attrs after stamp: %v", attrs)
	}
	if got, isErr := s.callText(t, stamp.Name, map[string]any{"id": ids[0]}); !isErr || got != "id and value are required" {
		t.Errorf("stamp without value = %q %v", got, isErr)
	}
}

// checkMCPBlockReads: block get, get_kramdown and get_children and attr
// get on a document and its blocks, on both kernels. Only the updated
// stamps vary; 3.7.3 lists attributes in a Go map's order, which changes
// from call to call, so they are compared as a set.
func checkMCPBlockReads(t *testing.T, s *suite) {
	title := "mcp-block-" + s.tag
	doc := s.newDoc(t, title, "# Head\n\nfirst para\n\nsecond para")
	ids := s.childIDs(t, doc)
	if len(ids) != 3 {
		t.Fatalf("children %v", ids)
	}
	s.flush(t)
	s.eventually(t, "the paragraph indexed", func() bool {
		_, isErr := s.callText(t, "block", map[string]any{"action": "get", "id": ids[1]})
		return !isErr
	})
	const unknown = "20200101000000-aaaaaaa"
	for _, c := range []struct {
		args  map[string]any
		want  string
		isErr bool
	}{
		// 3.7.3 reads the row without its times: Created and Updated are
		// always empty, and a document's markdown too.
		{map[string]any{"action": "get", "id": ids[1]},
			fmt.Sprintf("ID: %s\nType: NodeParagraph\nHPath: /%s\nContent: first para\nMarkdown: first para\nTags: \nCreated: \nUpdated: ", ids[1], title), false},
		{map[string]any{"action": "get", "id": doc},
			fmt.Sprintf("ID: %s\nType: NodeDocument\nHPath: /%s\nContent: %s\nMarkdown: \nTags: \nCreated: \nUpdated: ", doc, title, title), false},
		{map[string]any{"action": "get", "id": unknown}, "get block failed: tree not found", true},
		{map[string]any{"action": "get"}, "id is required", true},
		{map[string]any{"action": "get_kramdown", "id": unknown}, "block not found or empty: " + unknown, true},
		{map[string]any{"action": "get_kramdown"}, "id is required", true},
		{map[string]any{"action": "get_children", "id": doc},
			fmt.Sprintf("- [h] # Head (%s)\n- [p] first para (%s)\n- [p] second para (%s)\n", ids[0], ids[1], ids[2]), false},
		{map[string]any{"action": "get_children", "id": ids[1]}, "no child blocks found", false},
		{map[string]any{"action": "get_children", "id": unknown}, "no child blocks found", false},
		{map[string]any{"action": "get_children"}, "id is required", true},
	} {
		if got, isErr := s.callText(t, "block", c.args); got != c.want || isErr != c.isErr {
			t.Errorf("block %v = %q (isError %v), want %q (isError %v)", c.args, got, isErr, c.want, c.isErr)
		}
	}
	kd := regexp.MustCompile(`^first para\n\{: id="` + ids[1] + `" updated="\d{14}"\}$`)
	if got, isErr := s.callText(t, "block", map[string]any{"action": "get_kramdown", "id": ids[1]}); isErr || !kd.MatchString(got) {
		t.Errorf("block get_kramdown = %q (isError %v), want %s", got, isErr, kd)
	}
	got, isErr := s.callText(t, "attr", map[string]any{"action": "get", "id": doc})
	head, body, _ := strings.Cut(got, "\n\n")
	lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
	slices.Sort(lines)
	want := regexp.MustCompile(`^- id: ` + doc + `\n- title: ` + title + `\n- type: doc\n- updated: \d{14}$`)
	if isErr || head != "Attributes for "+doc+":" || !strings.HasSuffix(body, "\n") || !want.MatchString(strings.Join(lines, "\n")) {
		t.Errorf("attr get = %q (isError %v)", got, isErr)
	}
	for _, c := range []struct {
		args  map[string]any
		want  string
		isErr bool
	}{
		{map[string]any{"action": "get", "id": unknown}, "no custom attributes", false},
		{map[string]any{"action": "get"}, "id is required", true},
	} {
		if got, isErr := s.callText(t, "attr", c.args); got != c.want || isErr != c.isErr {
			t.Errorf("attr %v = %q (isError %v), want %q (isError %v)", c.args, got, isErr, c.want, c.isErr)
		}
	}
}

// checkMCPNotebookList: notebook list is lsNotebooks in 3.7.3's layout
// (asked again if another client changed the notebooks in between).
func checkMCPNotebookList(t *testing.T, s *suite) {
	var got, want string
	var isErr bool
	for range 3 {
		nbs, err := s.c.ListNotebooks(t.Context())
		must(t, "ListNotebooks", err)
		var b strings.Builder
		fmt.Fprintf(&b, "Notebooks (%d):\n\n", len(nbs))
		for _, nb := range nbs {
			fmt.Fprintf(&b, "- %s (id: %s, icon: %s, closed: %v)\n", nb.Name, nb.ID, nb.Icon, nb.Closed)
		}
		want = b.String()
		if got, isErr = s.callText(t, "notebook", map[string]any{"action": "list"}); got == want && !isErr {
			return
		}
	}
	t.Errorf("notebook list = %q (isError %v), want %q", got, isErr, want)
}

// checkMCPDocReads: document get, info and list on both kernels. 3.7.3
// lists the attributes of info in a Go map's order, so they are compared
// as a set.
func checkMCPDocReads(t *testing.T, s *suite) {
	title := "mcp-doc-" + s.tag
	doc := s.newDoc(t, title, "body text")
	kid := s.newDocAt(t, "/"+title+"/kid", "kid text")
	para := s.childIDs(t, doc)[0]
	s.flush(t)
	s.eventually(t, "the document indexed", func() bool {
		_, isErr := s.callText(t, "document", map[string]any{"action": "get", "id": doc})
		return !isErr
	})
	const unknown = "20200101000000-aaaaaaa"
	for _, c := range []struct {
		args  map[string]any
		want  string
		isErr bool
	}{
		{map[string]any{"action": "get", "id": doc},
			fmt.Sprintf("ID: %s\nTitle: \nHPath: /%s\nBox: %s\nContent: %s\nMarkdown: \nType: NodeDocument\nCreated: \nUpdated: ", doc, title, s.box, title), false},
		{map[string]any{"action": "get", "id": para},
			fmt.Sprintf("ID: %s\nTitle: \nHPath: /%s\nBox: %s\nContent: body text\nMarkdown: body text\nType: NodeParagraph\nCreated: \nUpdated: ", para, title, s.box), false},
		{map[string]any{"action": "get", "id": unknown}, "load doc failed: tree not found", true},
		{map[string]any{"action": "get"}, "id is required", true},
		{map[string]any{"action": "info", "id": unknown}, "get doc info failed: tree not found", true},
		{map[string]any{"action": "info"}, "id is required", true},
		{map[string]any{"action": "list", "notebook": s.box, "path": "/" + title},
			fmt.Sprintf("Documents in %s (hPath: /%s):\n\n- kid (id: %s, hPath: /%s/kid)\n", s.box, title, kid, title), false},
		{map[string]any{"action": "list", "notebook": s.box, "path": "/" + title + "/kid"},
			fmt.Sprintf("Documents in %s (hPath: /%s/kid):\n\n", s.box, title), false},
		{map[string]any{"action": "list", "notebook": s.box, "path": "/nope-" + s.tag}, "target path not found: /nope-" + s.tag, true},
		{map[string]any{"action": "list"}, "notebook is required", true},
	} {
		if got, isErr := s.callText(t, "document", c.args); got != c.want || isErr != c.isErr {
			t.Errorf("document %v = %q (isError %v), want %q (isError %v)", c.args, got, isErr, c.want, c.isErr)
		}
	}
	for _, id := range []string{doc, para} {
		got, isErr := s.callText(t, "document", map[string]any{"action": "info", "id": id})
		head, ial, _ := strings.Cut(got, "\nIAL:\n")
		lines := strings.Split(ial, "\n")
		slices.Sort(lines)
		want := regexp.MustCompile(`^  id: ` + doc + `\n  title: ` + title + `\n  type: doc\n  updated: \d{14}$`)
		if isErr || head != fmt.Sprintf("ID: %s\nRootID: %s\nName: %s\nRefCount: 0\nSubFileCount: 1\nIcon: ", id, doc, title) || !want.MatchString(strings.Join(lines, "\n")) {
			t.Errorf("document info %s = %q (isError %v)", id, got, isErr)
		}
	}
}

// checkMCPSQL: sql query on both kernels. 3.7.3 orders the columns of the
// header and of each row as a Go map iterates, so a table of several
// columns is compared line by line as sets of cells.
func checkMCPSQL(t *testing.T, s *suite) {
	doc, ids := s.docWithParas(t, "mcp-sql-"+s.tag, "one", "two")
	s.flush(t)
	want := fmt.Sprintf("Query results (3 rows):\n\n| id |\n|---|\n| %s |\n| %s |\n| %s |\n", doc, ids[0], ids[1])
	stmt := "SELECT id FROM blocks WHERE root_id = '" + doc + "' ORDER BY sort, content"
	s.eventually(t, "the rows indexed", func() bool {
		got, _ := s.callText(t, "sql", map[string]any{"action": "query", "stmt": stmt})
		return got == want
	})
	got, isErr := s.callText(t, "sql", map[string]any{"action": "query",
		"stmt": "SELECT count(*) AS n, 1.5 AS f, NULL AS z FROM blocks WHERE root_id = '" + doc + "'"})
	cells := func(line string) []string {
		l := strings.Split(strings.Trim(line, "| "), " | ")
		slices.Sort(l)
		return l
	}
	lines := strings.Split(got, "\n")
	if isErr || len(lines) != 6 || lines[0] != "Query results (1 rows):" || lines[3] != "|---|---|---|" ||
		!slices.Equal(cells(lines[2]), []string{"f", "n", "z"}) || !slices.Equal(cells(lines[4]), []string{"1.5", "3", "<nil>"}) {
		t.Errorf("sql of three columns = %q (isError %v)", got, isErr)
	}
	for _, c := range []struct {
		stmt, want string
		isErr      bool
	}{
		{"SELECT id FROM blocks WHERE id = 'none-" + s.tag + "'", "no results", false},
		{"", "stmt is required", true},
		{"DELETE FROM blocks WHERE id = 'none'", "readonly SQL required: SQL statement is not a read-only query", true},
		{"SELECT nope", "readonly SQL required: no such column: nope", true},
	} {
		if got, isErr := s.callText(t, "sql", map[string]any{"action": "query", "stmt": c.stmt}); got != c.want || isErr != c.isErr {
			t.Errorf("sql %q = %q (isError %v), want %q (isError %v)", c.stmt, got, isErr, c.want, c.isErr)
		}
	}
}

// checkMCPStatelessAnswers: the tools whose answer is the kernel's state
// without cloud sync or skills (a fresh workspace's, and the embedded
// kernel's always) and, when its repository has no key, the repo tool's, and those that refuse direct calls. The
// actions that would write or sync if that state changed (repo create,
// sync perform) are left out.
func checkMCPStatelessAnswers(t *testing.T, s *suite) {
	const keyMissing = "Please initialize the data repo key first in [Settings - Account & Sync - Data repo key]"
	// A workspace whose repository has a key (the repository checks may
	// have given it one) answers the key-dependent repo actions with its
	// snapshots instead.
	_, err := s.c.RepoSnapshots(t.Context(), 1)
	hasKey := !errors.Is(err, siyuan.ErrRepoKeyMissing)
	for _, c := range []struct {
		tool  string
		args  map[string]any
		want  string
		isErr bool
	}{
		{"frontend", map[string]any{"action": "open"}, "frontend actions are only available in the interactive agent chat (not via direct tool invocation)", true},
		{"frontend", nil, "frontend actions are only available in the interactive agent chat (not via direct tool invocation)", true},
		{"question", map[string]any{"question": "why"}, "question tool: should be intercepted by agent loop", false},
		{"todo_write", nil, "todo_write error: missing 'todos' parameter", true},
		{"skill", map[string]any{"action": "list"}, "no skills available", false},
		{"skill", map[string]any{"action": "load", "name": "nope-" + s.tag}, "skill not found: nope-" + s.tag, true},
		{"skill", map[string]any{"action": "load"}, "skill name is required", true},
		{"repo", map[string]any{"action": "list"}, "get snapshots failed: " + keyMissing, true},
		{"repo", map[string]any{"action": "search", "keyword": "x"}, "search repo failed: " + keyMissing, true},
		{"repo", map[string]any{"action": "search"}, "keyword is required", true},
		{"repo", map[string]any{"action": "diff", "left": "a", "right": "b"}, "diff failed: " + keyMissing, true},
		{"repo", map[string]any{"action": "diff"}, "left and right are required", true},
		{"repo", map[string]any{"action": "tag", "id": "a", "name": "b"}, "tag snapshot failed: " + keyMissing, true},
		{"repo", map[string]any{"action": "tag"}, "id and name are required", true},
		{"sync", map[string]any{"action": "status"}, "Sync Status:\n  Enabled: false\n  Mode: 1 (0/1=auto, 2=manual, 3=full-manual)\n  Provider: 0\n  Cloud: main\n  Perception: false\n  Interval: 30s\n  Synced: 0\n  Stat: ", false},
	} {
		if c.tool == "repo" && strings.Contains(c.want, keyMissing) && hasKey {
			continue // the answers with a key are the repository's own checks
		}
		if got, isErr := s.callText(t, c.tool, c.args); got != c.want || isErr != c.isErr {
			t.Errorf("%s %v = %q (isError %v), want %q (isError %v)", c.tool, c.args, got, isErr, c.want, c.isErr)
		}
	}
}

// checkMCPRef: ref backlinks and mentions list the documents of
// getBacklink2, on both kernels; mentions search every notebook, so only
// the suite's own document is looked for among them.
func checkMCPRef(t *testing.T, s *suite) {
	word := "mcpmention" + s.tag
	target, ids := s.docWithParas(t, word, "target para")
	srcTitle := "mcp-ref-src-" + s.tag
	src := s.newDoc(t, srcTitle, "see (("+ids[0]+" 'it'))")
	s.flush(t)
	nbs, err := s.c.ListNotebooks(t.Context())
	must(t, "ListNotebooks", err)
	nb := s.boxName // as some check may have renamed it
	for _, n := range nbs {
		if n.ID == s.box {
			nb = n.Name
		}
	}
	want := fmt.Sprintf("Backlinks (1):\n\n- [NodeDocument] %s/%s (id: %s)\n", nb, srcTitle, src)
	for _, id := range []string{ids[0], target} { // a document's backlinks hold its blocks'
		var got string
		s.eventually(t, "the backlink listed", func() bool {
			got, _ = s.callText(t, "ref", map[string]any{"action": "backlinks", "id": id})
			return got == want
		})
	}
	// A document that names the target without linking it mentions it.
	menTitle := "mcp-ref-mention-" + s.tag
	men := s.newDoc(t, menTitle, "about "+word+" only")
	s.flush(t)
	mention := fmt.Sprintf("- [NodeDocument] %s/%s (id: %s)\n", nb, menTitle, men)
	if got, isErr := s.callText(t, "ref", map[string]any{"action": "mentions", "id": target}); isErr || !strings.HasPrefix(got, "Mentions (") || !strings.Contains(got, mention) {
		t.Errorf("ref mentions = %q (isError %v), want %q among them", got, isErr, mention)
	}
	const unknown = "20200101000000-aaaaaaa"
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"action": "backlinks", "id": unknown}, "no backlinks found"},
		{map[string]any{"action": "backlinks"}, "no backlinks found"},
		{map[string]any{"action": "mentions", "id": unknown}, "no mentions found"},
		{map[string]any{"action": "refresh", "id": unknown}, "backlink refreshed for: " + unknown},
	} {
		if got, isErr := s.callText(t, "ref", c.args); got != c.want || isErr {
			t.Errorf("ref %v = %q (isError %v), want %q", c.args, got, isErr, c.want)
		}
	}
}

// checkMCPWorkspace: workspace info names the kernel's workspace, which
// workspace list holds; the paths are each machine's.
func checkMCPWorkspace(t *testing.T, s *suite) {
	v, err := s.c.Version(t.Context())
	must(t, "Version", err)
	info, isErr := s.callText(t, "workspace", map[string]any{"action": "info"})
	m := regexp.MustCompile(`^Path:    (/.*)\nVersion: ` + regexp.QuoteMeta(v) + `\nValid:   true\n$`).FindStringSubmatch(info)
	if isErr || m == nil {
		t.Fatalf("workspace info = %q (isError %v)", info, isErr)
	}
	list, isErr := s.callText(t, "workspace", map[string]any{"action": "list"})
	if isErr || !regexp.MustCompile(`^Registered workspaces \(\d+\):\n\n(- /.*\n)+$`).MatchString(list) || !strings.Contains(list, "\n- "+m[1]+"\n") {
		t.Errorf("workspace list = %q (isError %v), want it to hold %s", list, isErr, m[1])
	}
}

// checkMCPTagList: tag list names every tag blocks carry by its full
// label, sorted, without a parent label no block carries; other clients'
// tags may be listed too.
func checkMCPTagList(t *testing.T, s *suite) {
	tag, child := "mcptag"+s.tag, "mcpparent"+s.tag+"/kid"
	s.newDoc(t, "mcp-tags-"+s.tag, "x #"+tag+"# and #"+child+"#")
	s.flush(t)
	var got string
	var isErr bool
	s.eventually(t, "the tags listed", func() bool {
		got, isErr = s.callText(t, "tag", map[string]any{"action": "list"})
		return strings.Contains(got, "\n- #"+tag+"\n") && strings.Contains(got, "\n- #"+child+"\n")
	})
	head, body, _ := strings.Cut(got, "\n\n")
	lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
	if isErr || head != fmt.Sprintf("Tags (%d):", len(lines)) || !slices.IsSorted(lines) || strings.Contains(got, "\n- #mcpparent"+s.tag+"\n") {
		t.Errorf("tag list = %q (isError %v)", got, isErr)
	}
}

// checkMCPBookmarks: bookmark list counts each bookmark's blocks and
// labels names them, sorted; other clients' bookmarks may be listed too.
func checkMCPBookmarks(t *testing.T, s *suite) {
	name := "bm" + s.tag
	_, ids := s.docWithParas(t, "mcp-bookmarks-"+s.tag, "one", "two")
	for _, id := range ids {
		must(t, "SetBlockAttrs", s.c.SetBlockAttrs(t.Context(), id, map[string]string{"bookmark": name}))
	}
	s.flush(t)
	var list string
	s.eventually(t, "the bookmark listed", func() bool {
		list, _ = s.callText(t, "bookmark", map[string]any{"action": "list"})
		return strings.Contains(list, "\n- "+name+": 2 blocks\n")
	})
	labels, isErr := s.callText(t, "bookmark", map[string]any{"action": "labels"})
	for _, c := range []struct{ got, head, line string }{{list, "Bookmarks", "- " + name + ": 2 blocks"}, {labels, "Bookmark labels", "- " + name}} {
		head, body, _ := strings.Cut(c.got, "\n\n")
		lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
		if isErr || head != fmt.Sprintf("%s (%d):", c.head, len(lines)) || !slices.Contains(lines, c.line) {
			t.Errorf("bookmark = %q (isError %v), want %q among its lines", c.got, isErr, c.line)
		}
	}
}

// checkMCPBlockWrites: block append, prepend, insert, update, move and
// delete on both kernels: their answers, their argument checks, and the
// document they leave.
func checkMCPBlockWrites(t *testing.T, s *suite) {
	doc, ids := s.docWithParas(t, "mcp-block-writes-"+s.tag, "first", "second")
	for _, c := range []struct {
		args  map[string]any
		want  string
		isErr bool
	}{
		{map[string]any{"action": "append", "parentID": doc, "data": "appended"}, "block appended", false},
		{map[string]any{"action": "prepend", "parentID": doc, "data": "prepended"}, "block prepended", false},
		{map[string]any{"action": "insert", "previousID": ids[0], "data": "inserted"}, "block inserted", false},
		{map[string]any{"action": "update", "id": ids[1], "data": "second updated"}, "block updated", false},
		{map[string]any{"action": "move", "id": ids[0], "parentID": doc, "previousID": ids[1]}, "block moved: " + ids[0], false},
		{map[string]any{"action": "append", "parentID": "20200101000000-aaaaaaa", "data": "x"}, "parent block not found: 20200101000000-aaaaaaa", true},
		{map[string]any{"action": "append", "data": "x"}, "parentID is required", true},
		{map[string]any{"action": "prepend", "parentID": doc}, "data is required", true},
		{map[string]any{"action": "insert"}, "data is required", true},
		{map[string]any{"action": "update", "data": "x"}, "id is required", true},
		{map[string]any{"action": "update", "id": ids[1]}, "data is required", true},
		{map[string]any{"action": "delete"}, "id is required", true},
		{map[string]any{"action": "move"}, "id is required", true},
		{map[string]any{"action": "move", "id": ids[0]}, "parentID is required", true},
	} {
		if got, isErr := s.callText(t, "block", c.args); got != c.want || isErr != c.isErr {
			t.Errorf("block %v = %q (isError %v), want %q (isError %v)", c.args, got, isErr, c.want, c.isErr)
		}
	}
	s.flush(t)
	var md []string
	for _, k := range s.children(t, doc) {
		md = append(md, k.Markdown)
	}
	if want := []string{"prepended", "inserted", "second updated", "first", "appended"}; !slices.Equal(md, want) {
		t.Errorf("document after the writes: %q, want %q", md, want)
	}
	if got, isErr := s.callText(t, "block", map[string]any{"action": "delete", "id": ids[0]}); got != "block deleted: "+ids[0] || isErr {
		t.Errorf("block delete = %q (isError %v)", got, isErr)
	}
	s.flush(t) // the delete is queued, as the API's writes are
	if s.exists(t, ids[0]) {
		t.Errorf("%s still exists after block delete", ids[0])
	}
}

// checkMCPNotebookWrites: notebook create, close, open, set_icon and
// remove on both kernels, with their argument checks. rename is left
// out: the embedded kernel does not back it, and a real kernel is not to
// see a notebook removed right after renames in it.
func checkMCPNotebookWrites(t *testing.T, s *suite) {
	name := "mcp-nb-" + s.tag
	got, isErr := s.callText(t, "notebook", map[string]any{"action": "create", "name": name})
	m := regexp.MustCompile(`^notebook created: ` + regexp.QuoteMeta(name) + ` \(id: (\d{14}-[0-9a-z]{7})\)$`).FindStringSubmatch(got)
	if isErr || m == nil {
		t.Fatalf("notebook create = %q (isError %v)", got, isErr)
	}
	id := m[1]
	removed := false
	t.Cleanup(func() {
		if !removed {
			if err := s.c.RemoveNotebook(context.Background(), id); err != nil {
				t.Errorf("cleanup: RemoveNotebook(%s): %v", id, err)
			}
		}
	})
	for _, c := range []struct {
		args  map[string]any
		want  string
		isErr bool
	}{
		{map[string]any{"action": "close", "id": id}, "notebook closed: " + id, false},
		{map[string]any{"action": "open", "id": id}, "notebook opened: " + id, false},
		{map[string]any{"action": "set_icon", "id": id, "icon": "1f4d4"}, "notebook icon set: " + id + " -> 1f4d4", false},
		{map[string]any{"action": "create"}, "name is required", true},
		{map[string]any{"action": "close"}, "id is required", true},
		{map[string]any{"action": "remove"}, "id is required", true},
		{map[string]any{"action": "open", "id": "20200101000000-aaaaaaa"}, "open notebook failed: can not open file, just support open folder only", true},
	} {
		if got, isErr := s.callText(t, "notebook", c.args); got != c.want || isErr != c.isErr {
			t.Errorf("notebook %v = %q (isError %v), want %q (isError %v)", c.args, got, isErr, c.want, c.isErr)
		}
	}
	nbs, err := s.c.ListNotebooks(t.Context())
	must(t, "ListNotebooks", err)
	for _, nb := range nbs {
		if nb.ID == id && (nb.Closed || nb.Icon != "1f4d4" || nb.Name != name) {
			t.Errorf("notebook after the writes: %+v", nb)
		}
	}
	if got, isErr := s.callText(t, "notebook", map[string]any{"action": "remove", "id": id}); got != "notebook removed: "+id || isErr {
		t.Errorf("notebook remove = %q (isError %v)", got, isErr)
	} else {
		removed = true
	}
}
