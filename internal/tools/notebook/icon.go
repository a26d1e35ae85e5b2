package notebook

import (
	"context"
	"fmt"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/kernelview"
)

type iconArgs struct {
	nbArgs
	Icon string `arg:"icon" help:"the icon: a Unicode code point in hex such as 1f4d4 (📔), or a custom icon path" required:""`
}

var setIcon = tools.Write[iconArgs, nbState]{
	Name: "set_icon", Summary: "set a notebook's icon: an emoji code point in hex (like 1f4d4, preferred: raw emoji may not render) or a custom icon path", Policy: guarded,
	Example: map[string]any{"notebook": "20260812115959-nbnbnbn", "icon": "1f4d4", "validateOnly": true},
	Validate: func(a *iconArgs) error {
		if strings.TrimSpace(a.Icon) == "" {
			return failure.Invalid("icon must not be empty")
		}
		return nil
	},
	Scope:   tools.Scope[iconArgs]{Touches: func(a iconArgs) []tools.Touch { return []tools.Touch{tools.OnNotebook(a.Notebook, tools.LevelWrite)} }},
	Targets: func(a iconArgs) []string { return []string{a.Notebook} },
	State: func(ctx context.Context, env *tools.Env, a iconArgs) (nbState, error) {
		return readState(ctx, env, a.Notebook)
	},
	// SiYuan sets a closed notebook's icon too.
	Check: func(_ iconArgs, st nbState) error { return mustExist(st) },
	Execute: func(ctx context.Context, env *tools.Env, a iconArgs, _ nbState) (tools.Payload, error) {
		if err := env.Kernel.SetNotebookIcon(ctx, a.Notebook, a.Icon); err != nil {
			return nil, tools.WriteFailure(err, false)
		}
		return tools.Payload{"notebook": a.Notebook, "icon": a.Icon}, nil
	},
	// The readback reads getNotebookConf (and lsNotebooks) again.
	Readback: func(ctx context.Context, env *tools.Env, a iconArgs, p tools.Payload) (any, error) {
		return readback(ctx, env, a.Notebook, func(st nbState) error {
			if st.Missing || st.Conf.Icon != a.Icon || st.Entry.Icon != a.Icon {
				return fmt.Errorf("notebook %s does not read back icon %q", a.Notebook, a.Icon)
			}
			return nil
		})
	},
}

type childDocsArgs struct {
	nbArgs
	tools.Paging
}

var getChildDocs = tools.Read[childDocsArgs]{
	Name: "get_child_docs", Summary: "the documents at a notebook's root, in its sort order, paginated",
	Example: map[string]any{"notebook": "20260812115959-nbnbnbn", "pageSize": 20},
	Scope: tools.Scope[childDocsArgs]{Touches: func(a childDocsArgs) []tools.Touch {
		return []tools.Touch{tools.OnNotebook(a.Notebook, tools.LevelRead)}
	}},
	Run: func(ctx context.Context, env *tools.Env, a childDocsArgs) (any, error) {
		nbs, err := env.Kernel.ListNotebooks(ctx)
		if err != nil {
			return nil, err
		}
		found := false
		for _, n := range nbs {
			if n.ID == a.Notebook {
				found = true
				if n.Closed {
					return nil, failure.Invalid("notebook %s is closed: open it first (set_open_state opened:true) to list its documents", a.Notebook)
				}
			}
		}
		if !found {
			return nil, failure.Missing("notebook", a.Notebook)
		}
		docs, err := kernelview.ListChildren(ctx, env, a.Notebook, "/")
		if err != nil {
			return nil, kernelview.NotebookErr(a.Notebook, err)
		}
		return tools.Paginate(docs, a.Page, a.PageSize).Fields(map[string]any{"notebook": a.Notebook}), nil
	},
}
