package embedded

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// demoPermissions is where Sisyphus keeps notebook permissions (the
// upstream plugin's storage; see internal/settings). The demo notebook is
// a sandbox: agents may read, write and delete in it, while every other
// notebook starts read-only.
const demoPermissions = "data/storage/petal/siyuan-plugins-mcp-sisyphus/notebookPermissions"

const welcomeMarkdown = `Sisyphus serves this workspace to AI agents over MCP and makes every write it owns safe.

## What is here

- This notebook, **Sisyphus Demo**, with this document. Agents may read, write and delete here (rwd); every other notebook starts read-only.
- The dangerous actions (` + "`block.delete`, `document.remove`, `notebook.remove`" + ` and a few more) start disabled everywhere, this notebook too: a call answers action_disabled until you enable one, with ` + "`sisyphus config enable block.delete`" + ` or on the settings page, and then you confirm each call.
- A child document, *Getting started*, below it.

## Try it

Ask your agent to read this document, then to change this paragraph. Sisyphus will ask it to preflight first: read, hash, lease, then commit once.
`

// seed fills a fresh workspace with a sample notebook and a welcome document.
func (k *Kernel) seed(ctx context.Context) error {
	box, err := k.createBox(ctx, "Sisyphus Demo")
	if err != nil {
		return err
	}
	if _, err := k.createDocWithMd(ctx, args{"notebook": box, "path": "/Welcome", "markdown": welcomeMarkdown}); err != nil {
		return fmt.Errorf("welcome document: %w", err)
	}
	_, err = k.createDocWithMd(ctx, args{"notebook": box, "path": "/Welcome/Getting started",
		"markdown": "Point an MCP client at `sisyphus serve`, or run `sisyphus doctor` to check a SiYuan connection.\n"})
	if err != nil {
		return fmt.Errorf("getting-started document: %w", err)
	}
	data, _ := json.MarshalIndent(map[string]string{box: "rwd"}, "", "  ")
	p := filepath.Join(k.dir, filepath.FromSlash(demoPermissions))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("demo permissions: %w", err)
	}
	if err := writeFileAtomic(p, data, 0o644); err != nil {
		return fmt.Errorf("demo permissions: %w", err)
	}
	return nil
}
