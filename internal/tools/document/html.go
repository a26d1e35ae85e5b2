package document

import (
	"context"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/kernelview"
)

// getDocArgs are get_doc's: a markdown window, or html with a size.
type getDocArgs struct {
	kernelview.Window
	Mode string
	Size int
}

func parseGetDoc(a *tools.Args) (getDocArgs, error) {
	g := getDocArgs{Window: kernelview.Window{ID: a.String("id"), BlockStart: a.Int("blockStart"), BlockLimit: a.Int("blockLimit"),
		TokenBudget: a.Int("tokenBudget"), IncludeBlockIds: a.Bool("includeBlockIds")}, Mode: a.String("mode"), Size: a.Int("size")}
	if g.Mode == "" {
		g.Mode = "markdown"
	}
	if err := tools.CheckID("id", g.ID); err != nil {
		return g, err
	}
	// The window arguments have defaults and are ignored in mode html.
	if g.Mode != "html" && a.Has("size") {
		return g, failure.Invalid("size is only for mode html; mode markdown takes blockStart, blockLimit and tokenBudget")
	}
	return g, nil
}

// readHTML is get_doc mode html: SiYuan's filetree/getDoc of the document.
func readHTML(ctx context.Context, env *tools.Env, a getDocArgs) (any, error) {
	loc, err := locateDoc(ctx, env, a.ID)
	if err != nil {
		return nil, err
	}
	switch {
	case loc.Missing:
		return nil, failure.Missing("document", a.ID)
	case loc.NotDocument:
		return nil, failure.Invalid("%s is a block inside a document, not a document; read it with block.dom", a.ID)
	}
	d, err := env.Kernel.GetDoc(ctx, a.ID, a.Size)
	if err != nil {
		return nil, err
	}
	return map[string]any{"id": a.ID, "mode": "html", "notebook": d.Box, "path": d.Path, "html": d.Content, "blockCount": d.BlockCount}, nil
}
