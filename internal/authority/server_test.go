package authority

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/embedded"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
)

func newAuthority(t *testing.T) (url string, c *siyuan.Client) {
	t.Helper()
	url, c, _ = newAuthorityWith(t, nil)
	return url, c
}

// testKernel is an embedded kernel, its URL (token "k") and a client of it.
func testKernel(t testing.TB) (*embedded.Kernel, string, *siyuan.Client) {
	t.Helper()
	k, err := embedded.Open(context.Background(), embedded.Options{Dir: t.TempDir(), Token: "k", SQLFlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ks := httptest.NewServer(k.Handler())
	t.Cleanup(func() { ks.Close(); k.Close() })
	c, _ := siyuan.New(siyuan.Config{BaseURL: ks.URL, Token: "k"})
	return k, ks.URL, c
}

// newAuthorityWith is an authority's service on an embedded kernel, served
// behind token "t"; prepare may change the kernel and the configuration
// before the service starts.
func newAuthorityWith(t *testing.T, prepare func(c *siyuan.Client, cfg *ServiceConfig)) (url string, c *siyuan.Client, svc *Service) {
	t.Helper()
	_, _, c = testKernel(t)
	l, err := strict.OpenLedger(filepath.Join(t.TempDir(), "ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	cfg := ServiceConfig{Kernel: c, Coordinator: strict.NewCoordinator(strict.CoordinatorConfig{Ledger: l}), Version: "test"}
	if prepare != nil {
		prepare(c, &cfg)
	}
	svc, err = NewService(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	hs := httptest.NewServer(Routes(svc.MCP, RoutesConfig{Token: "t", Admission: svc.Admission, Config: svc, Staging: svc.Staging}))
	t.Cleanup(hs.Close)
	return hs.URL, c, svc
}

// rpc posts one modern (stateless) request and decodes the result.
func rpc(t *testing.T, url, token, method, name string, params map[string]any) (int, map[string]any) {
	t.Helper()
	params["_meta"] = map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
		"io.modelcontextprotocol/clientInfo": map[string]any{"name": "t", "version": "1"}, "io.modelcontextprotocol/clientCapabilities": map[string]any{}}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	json.Unmarshal(raw, &m)
	res, _ := m["result"].(map[string]any)
	return resp.StatusCode, res
}

func TestToolsOverMCP(t *testing.T) {
	url, c := newAuthority(t)
	for _, prefix := range []string{"", PluginPrefix} {
		if status, _ := rpc(t, url+prefix+"/mcp", "wrong", "tools/list", "", map[string]any{}); status != 401 {
			t.Fatalf("%s: wrong token got %d", prefix, status)
		}
	}
	_, list := rpc(t, url+"/mcp", "t", "tools/list", "", map[string]any{})
	ann := map[string]map[string]any{}
	for _, tl := range list["tools"].([]any) {
		m := tl.(map[string]any)
		ann[m["name"].(string)] = m["annotations"].(map[string]any)
	}
	// search writes through find_replace, which a person confirms.
	if ann["search"]["readOnlyHint"] != false || ann["search"]["destructiveHint"] != true || ann["search"]["idempotentHint"] != false {
		t.Fatalf("search annotations: %v", ann["search"])
	}
	if ann["block"]["readOnlyHint"] != false || ann["block"]["destructiveHint"] != true {
		t.Fatalf("block annotations: %v", ann["block"])
	}

	nbs, _ := c.ListNotebooks(context.Background())
	ids, _ := c.GetIDsByHPath(context.Background(), nbs[0].ID, "/Welcome")
	kids, _ := c.GetChildBlocks(context.Background(), ids[0])
	call := func(args map[string]any) map[string]any {
		_, res := rpc(t, url+"/mcp", "t", "tools/call", "block", map[string]any{"name": "block", "arguments": args})
		return res
	}
	pre := call(map[string]any{"action": "update", "id": kids[0].ID, "data": "x", "validateOnly": true})
	sc := pre["structuredContent"].(map[string]any)
	var fromText map[string]any
	json.Unmarshal([]byte(pre["content"].([]any)[0].(map[string]any)["text"].(string)), &fromText)
	if sc["requestId"] == nil || fromText["requestId"] != sc["requestId"] {
		t.Fatalf("structuredContent and text must carry the same object: %v", pre)
	}
	bad := call(map[string]any{"action": "update", "id": kids[0].ID, "data": "x", "requestId": sc["requestId"], "expectedStateHash": "0000"})
	bsc := bad["structuredContent"].(map[string]any)
	e := bsc["error"].(map[string]any)
	if bad["isError"] != true || e["code"] != "preflight_lease_invalid" || e["action"] == "" || bsc["writeAttempted"] != false {
		t.Fatalf("error shape: %v", bad)
	}
}
