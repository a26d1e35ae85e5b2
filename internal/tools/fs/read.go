package fs

import (
	"context"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/kernelview"
)

type entry struct {
	Name     string `json:"name"`
	Path     string `json:"path"`
	ID       string `json:"id,omitempty"`
	Children int    `json:"children"`
	Closed   bool   `json:"closed,omitempty"`
	// Virtual: a virtual root file (ReadOnly: the user rules). Shadowed: a
	// notebook whose name is a virtual file's, which fs paths cannot reach.
	Virtual  bool `json:"virtual,omitempty"`
	ReadOnly bool `json:"readOnly,omitempty"`
	Shadowed bool `json:"shadowed,omitempty"`
}

// humanPathArg is the path ls and read take, parsed when they run.
type humanPathArg struct {
	Path string `arg:"path" help:"a human path /<notebook name>/<title>/<child title>; / is the list of notebooks" required:""`
}

type lsArgs struct {
	humanPathArg
	tools.Paging
}

func ls(ctx context.Context, env *tools.Env, a lsArgs) (any, error) {
	p, err := parsePath("path", a.Path)
	if err != nil {
		return nil, err
	}
	var entries []entry
	switch {
	case p.Virtual != "":
		return nil, failure.Invalid("%s is a virtual file and has no children: read it with {\"action\":\"read\",\"path\":%q}", p.Virtual, p.Virtual)
	case p.isRoot():
		nbs, err := env.Kernel.ListNotebooks(ctx)
		if err != nil {
			return nil, err
		}
		entries = virtualEntries()
		for _, n := range nbs {
			if !tools.Visible(ctx, n.ID) {
				continue // hidden from agents
			}
			entries = append(entries, entry{Name: n.Name, Path: p.child(n.Name), ID: n.ID, Children: n.SubFileCount, Closed: n.Closed, Shadowed: shadowed(n.Name)})
		}
	default:
		t, err := resolveDoc(ctx, env, p)
		if err != nil {
			return nil, err
		}
		storage := "/"
		if t.DocID != "" {
			info, err := env.Kernel.GetBlockInfo(ctx, t.DocID)
			if err != nil {
				return nil, err
			}
			storage = info.Path
		}
		docs, err := kernelview.ListChildren(ctx, env, t.Notebook.ID, storage)
		if err != nil {
			return nil, kernelview.NotebookErr(t.Notebook.ID, err)
		}
		for _, d := range docs {
			entries = append(entries, entry{Name: d.Title, Path: p.child(d.Title), ID: d.ID, Children: d.SubFileCount})
		}
	}
	if entries == nil {
		entries = []entry{}
	}
	return tools.Paginate(entries, a.Page, a.PageSize).Fields(map[string]any{"path": p.Raw}), nil
}

// readArgs are fs.read's arguments: a path and a window.
type readArgs struct {
	humanPathArg
	kernelview.WindowArgs
}

func readFile(ctx context.Context, env *tools.Env, a readArgs) (any, error) {
	p, err := parseDocPath("path", a.Path)
	if err != nil {
		return nil, err
	}
	if p.Virtual != "" {
		return readVirtualFile(ctx, env, p.Virtual, kernelview.Window{WindowArgs: a.WindowArgs})
	}
	t, err := resolveDoc(ctx, env, p)
	if err != nil {
		return nil, err
	}
	// The window logic is document.get_doc's; only the addressing differs.
	ret, err := kernelview.ReadWindow(ctx, env, kernelview.Window{ID: t.DocID, WindowArgs: a.WindowArgs,
		Tool: "fs", Address: map[string]any{"action": "read", "path": p.Raw}})
	if err != nil {
		return nil, err
	}
	ret["path"] = p.Raw
	return ret, nil
}
