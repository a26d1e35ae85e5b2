package embedded

import (
	"context"
	"fmt"
)

const welcomeMarkdown = `Sisyphus serves this workspace to AI agents over MCP and makes every write it owns safe.

## What is here

- This notebook, **Sisyphus Demo**, with this document.
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
	return nil
}
