package system

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// TestConfWhileHidden: while a notebook is hidden, conf withholds SiYuan's
// window layout (the documents open there, with their titles) and shows a
// hidden notebook's id as "", and the save path beside it (a path of its
// titles); a visible notebook's stay.
func TestConfWhileHidden(t *testing.T) {
	f := newStrictFixture(t, false)
	nb, err := f.C.CreateNotebook(context.Background(), "Vault")
	if err != nil {
		t.Fatal(err)
	}
	conf := map[string]any{
		"fileTree": map[string]any{"docCreateSaveBox": nb.ID, "docCreateSavePath": "/Bonus plans", "refCreateSaveBox": f.NB, "refCreateSavePath": "/Refs"},
		"uiLayout": map[string]any{"layout": map[string]any{"children": []any{map[string]any{"instance": "Tab", "title": "Salary talks"}}}},
	}
	b, _ := json.Marshal(conf)
	if err := os.WriteFile(filepath.Join(f.K.Dir(), "conf", "conf.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	get := func() string {
		res := f.OK(t, "system", map[string]any{"action": "conf", "mode": "get", "keyPath": "conf", "maxDepth": 5, "maxItems": 100})
		out, _ := json.Marshal(res)
		return string(out)
	}
	f.Policy = &tools.Policy{Default: tools.LevelDelete, AllActions: true, Strict: true, Version: "shown"}
	if all := get(); !strings.Contains(all, "Salary talks") || !strings.Contains(all, nb.ID) || !strings.Contains(all, "Bonus plans") {
		t.Fatalf("without a hidden notebook conf is whole: %s", all)
	}
	f.Policy = &tools.Policy{Default: tools.LevelDelete, Notebooks: map[string]tools.Level{nb.ID: tools.LevelNone}, AllActions: true, Strict: true, Version: "hidden"}
	veiled := get()
	if strings.Contains(veiled, "Salary talks") || strings.Contains(veiled, nb.ID) || strings.Contains(veiled, "Bonus plans") ||
		!strings.Contains(veiled, f.NB) || !strings.Contains(veiled, "/Refs") {
		t.Fatalf("conf while a notebook is hidden: %s", veiled)
	}
}

// TestPluginStorageWhileHidden: plugins keep content of any notebook in
// their storage (a search index, cached documents), so while a notebook is
// hidden the storage is neither listed nor read, and the refusal is the
// same for an installed plugin, one that is not, and Sisyphus's own folder
// (it depends on the configuration alone).
func TestPluginStorageWhileHidden(t *testing.T) {
	f := newStrictFixture(t, false)
	install(t, f.Fixture, "demo-plugin")
	put(t, f.Fixture, "/data/storage/petal/demo-plugin/index.json", `{"docs":[{"title":"Salary talks"}]}`)
	vault, err := f.C.CreateNotebook(context.Background(), "Vault")
	if err != nil {
		t.Fatal(err)
	}
	list := map[string]any{"action": "list_plugin_storage", "pluginName": "demo-plugin", "recursive": true}
	read := map[string]any{"action": "read_plugin_storage", "pluginName": "demo-plugin", "path": "index.json"}
	f.Policy = &tools.Policy{Default: tools.LevelRead, AllActions: true, Strict: true, Version: "shown"}
	if r := f.OK(t, "system", read); !strings.Contains(r["content"].(string), "Salary talks") {
		t.Fatalf("without a hidden notebook the storage reads: %v", r)
	}
	f.OK(t, "system", list)
	f.Policy = &tools.Policy{Default: tools.LevelRead, Notebooks: map[string]tools.Level{vault.ID: tools.LevelNone}, AllActions: true, Strict: true, Version: "hidden"}
	var first string
	for _, args := range []map[string]any{list, read,
		{"action": "list_plugin_storage", "pluginName": "not-installed"},
		{"action": "read_plugin_storage", "pluginName": "not-installed", "path": "index.json"},
		{"action": "read_plugin_storage", "pluginName": sisyphusPlugin, "path": "config.json"},
	} {
		e := f.WantErr(t, "system", args, failure.PermissionDenied)
		if strings.Contains(e.Message, vault.ID) || strings.Contains(e.Message, "Vault") {
			t.Fatalf("the refusal names the hidden notebook: %v", e)
		}
		if first == "" {
			first = e.Message
		} else if e.Message != first {
			t.Fatalf("the refusal depends on the plugin: %q, then %q", first, e.Message)
		}
	}
}
