package main

import (
	"context"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// Places where a hidden notebook's content could still leak through the
// built binary, probed as an agent would: plugin storage, configuration
// fields naming a hidden notebook, counts that hidden rows fill, database
// ids in attributes, grouped database views.

// TestPluginStorageRefusedWhileHidden: a plugin keeps a cache of the
// person's documents, the hidden notebook's titles among them, in its
// storage. While the notebook is hidden an agent can neither list nor read
// that storage, whichever plugin it names, and the refusal names nothing.
func TestPluginStorageRefusedWhileHidden(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	k := startKernel(t, t.TempDir())
	s := startServeWith(t, "--siyuan-url", k.url, "--siyuan-token", "tok", "--state-dir", t.TempDir())
	a := connect(t, s.url, "2025-11-25")
	c := kernelClient(t, k.url, "tok")
	vault, err := c.CreateNotebook(ctx, "Secret Vault")
	if err != nil {
		t.Fatal(err)
	}
	const plugin = "search-cache"
	for p, body := range map[string]string{
		"/data/plugins/" + plugin + "/plugin.json":      `{"name":"` + plugin + `","author":"E2E","version":"1.0.0","frontends":["all"]}`,
		"/data/storage/petal/" + plugin + "/index.json": `{"docs":[{"box":"` + vault.ID + `","title":"Salary talks"}]}`,
	} {
		if err := c.PutFile(ctx, siyuan.PutFileRequest{Path: p, Body: strings.NewReader(body)}); err != nil {
			t.Fatal(err)
		}
	}
	list := map[string]any{"action": "list_plugin_storage", "pluginName": plugin, "recursive": true}
	read := map[string]any{"action": "read_plugin_storage", "pluginName": plugin, "path": "index.json"}
	if r := a.ok("system", read); !strings.Contains(r["content"].(string), "Salary talks") {
		t.Fatalf("with nothing hidden the storage reads: %v", r)
	}
	a.ok("system", list)

	s.config(t, "permission", vault.ID, "none")
	var first map[string]any
	for _, args := range []map[string]any{list, read,
		{"action": "list_plugin_storage", "pluginName": "no-such-plugin"},
		{"action": "read_plugin_storage", "pluginName": plugin, "path": "missing.json"},
		{"action": "read_plugin_storage", "pluginName": "siyuan-plugins-mcp-sisyphus", "path": "mcpToolsConfig.json"},
	} {
		m := a.fails("system", args, "permission_denied")
		noneOf(t, "a refused storage read", m, []string{"Salary talks", vault.ID, "Secret Vault"})
		e := m["error"].(map[string]any)
		if first == nil {
			first = e
		} else if e["message"] != first["message"] || e["action"] != first["action"] {
			t.Fatalf("the refusal depends on what was asked:\n%v\n%v", first, e)
		}
	}
}
