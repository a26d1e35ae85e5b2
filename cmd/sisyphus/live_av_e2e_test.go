package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/testvars"
)

// liveDatabaseDoc is where a database walk runs on a real SiYuan (or
// skips without the live variables): an authority on it, a notebook named
// sisyphus-live-<name>-<time> the agent may delete in, removed at the end,
// and a document at path with markdown in it.
func liveDatabaseDoc(t *testing.T, name, path, markdown string) (*agent, *siyuan.Client, string) {
	t.Helper()
	url, tok := testvars.Live(t)
	s := startServeWith(t, "--siyuan-url", url, "--siyuan-token", tok, "--state-dir", t.TempDir())
	a := connect(t, s.url, "2025-11-25")
	nb := a.strictDo("notebook", map[string]any{"action": "create", "name": fmt.Sprintf("sisyphus-live-%s-%d", name, time.Now().UnixNano())})["notebook"].(string)
	s.config(t, "permission", nb, "rwd")
	s.config(t, "enable", "notebook.remove")
	t.Cleanup(func() { a.strictDo("notebook", map[string]any{"action": "remove", "notebook": nb, "confirm": true}) })
	doc := a.strictDo("document", map[string]any{"action": "create", "notebook": nb, "path": path, "markdown": markdown})["id"].(string)
	return a, kernelClient(t, url, tok), doc
}

// firstChild is a block's first child block.
func firstChild(a *agent, id string) string {
	return a.ok("block", map[string]any{"action": "get_children", "id": id})["data"].([]any)[0].(map[string]any)["id"].(string)
}
