package embedded

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
)

// TestMCPNativeActions calls every action of every native tool with no
// other argument: each answers one text item, and an action this kernel
// does not carry out is an error that says so, never a success.
func TestMCPNativeActions(t *testing.T) {
	k, err := Open(context.Background(), Options{Dir: t.TempDir(), Token: "tok", SQLFlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	var natives []struct {
		Name        string `json:"name"`
		InputSchema struct {
			Properties struct {
				Action struct {
					Enum []string `json:"enum"`
				} `json:"action"`
			} `json:"properties"`
		} `json:"inputSchema"`
	}
	if err := json.Unmarshal(endpoint.NativeMCPTools(), &natives); err != nil {
		t.Fatal(err)
	}
	call := func(name string, args map[string]any) mcpResult {
		t.Helper()
		tool := lookupMCPTool(k.mcpTools(), name)
		if tool == nil {
			t.Fatalf("%s not listed", name)
		}
		res := tool.handler(httptest.NewRequest("POST", "/mcp", nil).Context(), args)
		if len(res.Content) != 1 || res.Content[0].Type != "text" {
			t.Fatalf("%s %v: %+v", name, args, res)
		}
		return res
	}
	for _, n := range natives {
		actions := n.InputSchema.Properties.Action.Enum
		if actions == nil {
			actions = []string{""}
		}
		for _, a := range actions {
			res := call(n.Name, map[string]any{"action": a})
			if strings.Contains(res.Content[0].Text, "does not carry out") && !res.IsError {
				t.Errorf("%s %s: a refusal that is not an error", n.Name, a)
			}
		}
	}
	// What 3.7.3 answers with cloud sync disabled and no data repo key.
	for _, c := range []struct {
		tool  string
		args  map[string]any
		want  string
		isErr bool
	}{
		{"sync", map[string]any{"action": "perform"}, "sync done: ", false},
		{"sync", map[string]any{"action": "upload"}, "sync upload done: ", false},
		{"sync", map[string]any{"action": "download"}, "sync download done: ", false},
		{"repo", map[string]any{"action": "create"}, "create snapshot failed: " + mcpRepoKeyMissing, true},
		{"notebook", map[string]any{"action": "rename", "id": "x", "name": "y"}, "the embedded kernel does not carry out notebook rename (SiYuan's own kernel does); nothing was done", true},
	} {
		if res := call(c.tool, c.args); res.Content[0].Text != c.want || res.IsError != c.isErr {
			t.Errorf("%s %v = %+v, want %q (isError %v)", c.tool, c.args, res, c.want, c.isErr)
		}
	}
}
