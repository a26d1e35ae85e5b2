package authority

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sisyphus-go/sisyphus/internal/settings"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// confirmAuthority is an authority whose confirmations expire after wait,
// with block.delete enabled, and a delete's commit arguments.
func confirmAuthority(t *testing.T, wait time.Duration) (url string, commit map[string]any, c *siyuan.Client, para string) {
	t.Helper()
	ctx := context.Background()
	url, c, _ = newAuthorityWith(t, func(c *siyuan.Client, cfg *ServiceConfig) {
		on := true
		if _, err := settings.NewStore(c).Apply(ctx, settings.Change{Tool: "block", Action: "delete", Enabled: &on}); err != nil {
			t.Fatal(err)
		}
		cfg.ConfirmTimeout = wait
	})
	nbs, _ := c.ListNotebooks(ctx)
	ids, _ := c.GetIDsByHPath(ctx, nbs[0].ID, "/Welcome")
	kids, _ := c.GetChildBlocks(ctx, ids[0])
	para = kids[0].ID
	_, res := rpc(t, url+"/mcp", "t", "tools/call", "block", map[string]any{"name": "block", "arguments": map[string]any{"action": "delete", "id": para, "validateOnly": true}})
	pre := res["structuredContent"].(map[string]any)
	commit = map[string]any{"action": "delete", "id": para, "requestId": pre["requestId"], "expectedStateHash": pre["expectedStateHash"]}
	return url, commit, c, para
}

// formCall posts a modern tools/call declaring form elicitation.
func formCall(t *testing.T, url string, args map[string]any, extra map[string]any) map[string]any {
	t.Helper()
	params := map[string]any{"name": "block", "arguments": args, "_meta": map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "t", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{}}}}
	for k, v := range extra {
		params[k] = v
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
	req, _ := http.NewRequest("POST", url+"/mcp", bytes.NewReader(body))
	for k, v := range map[string]string{"Authorization": "Bearer t", "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "block"} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var m map[string]any
	json.Unmarshal(data, &m)
	return m
}

// TestConfirmationExpires: a modern confirmation answered after its state
// expired is rejected, and nothing runs.
func TestConfirmationExpires(t *testing.T) {
	url, commit, c, para := confirmAuthority(t, 150*time.Millisecond)
	m := formCall(t, url, commit, nil)
	state, _ := m["result"].(map[string]any)["requestState"].(string)
	if state == "" {
		t.Fatalf("round 1: %v", m)
	}
	time.Sleep(300 * time.Millisecond)
	m = formCall(t, url, commit, map[string]any{"requestState": state,
		"inputResponses": map[string]any{"dangerous-action-confirmation": map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}})
	e, _ := m["error"].(map[string]any)
	if e == nil || !strings.Contains(e["message"].(string), "expired") {
		t.Fatalf("an expired confirmation: %v", m)
	}
	if ok, _ := c.CheckBlockExist(context.Background(), para); !ok {
		t.Fatal("an expired confirmation deleted the block")
	}
}

// TestLegacyConfirmationIsBounded: a legacy client that never answers the
// form gets confirmation_required when the wait ends; nothing runs.
func TestLegacyConfirmationIsBounded(t *testing.T) {
	url, commit, c, para := confirmAuthority(t, 200*time.Millisecond)
	client := sdk.NewClient(&sdk.Implementation{Name: "silent", Version: "1"}, &sdk.ClientOptions{
		ElicitationHandler: func(ctx context.Context, _ *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			<-ctx.Done() // the person never answers
			return nil, ctx.Err()
		}})
	cs, err := client.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: url + "/mcp",
		HTTPClient: &http.Client{Transport: tokenRT{"t"}}, MaxRetries: -1}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	start := time.Now()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "block", Arguments: commit})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if !res.IsError || !strings.Contains(string(b), "confirmation_required") || !strings.Contains(string(b), "not confirmed within") {
		t.Fatalf("an unanswered form: %s", b)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("the wait was not bounded: %v", d)
	}
	if ok, _ := c.CheckBlockExist(context.Background(), para); !ok {
		t.Fatal("an unanswered confirmation deleted the block")
	}
}

type tokenRT struct{ tok string }

func (b tokenRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.tok)
	return http.DefaultTransport.RoundTrip(r)
}
