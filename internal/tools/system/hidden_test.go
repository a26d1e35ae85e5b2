package system

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// TestConfWhileHidden: while a notebook is hidden, conf withholds SiYuan's
// window layout (the documents open there, with their titles) and shows a
// hidden notebook's id as ""; a visible notebook's stays.
func TestConfWhileHidden(t *testing.T) {
	f := newStrictFixture(t, false)
	nb, err := f.C.CreateNotebook(context.Background(), "Vault")
	if err != nil {
		t.Fatal(err)
	}
	conf := map[string]any{
		"fileTree": map[string]any{"docCreateSaveBox": nb.ID, "refCreateSaveBox": f.NB},
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
	if all := get(); !strings.Contains(all, "Salary talks") || !strings.Contains(all, nb.ID) {
		t.Fatalf("without a hidden notebook conf is whole: %s", all)
	}
	f.Policy = &tools.Policy{Default: tools.LevelDelete, Notebooks: map[string]tools.Level{nb.ID: tools.LevelNone}, AllActions: true, Strict: true, Version: "hidden"}
	veiled := get()
	if strings.Contains(veiled, "Salary talks") || strings.Contains(veiled, nb.ID) || !strings.Contains(veiled, f.NB) {
		t.Fatalf("conf while a notebook is hidden: %s", veiled)
	}
}
