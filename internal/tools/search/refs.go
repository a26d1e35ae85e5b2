package search

import (
	"context"

	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// invalidRefsPage is how many blocks one kernel call asks for, and
// invalidRefsMax how many are read in all before the answer says it was cut.
const (
	invalidRefsPage = 512
	invalidRefsMax  = 20 * invalidRefsPage
)

type pageArgs struct {
	Page     int `arg:"page" help:"1-based page (past the end: the last page)" default:"1" min:"1"`
	PageSize int `arg:"pageSize" help:"blocks per page" default:"32" min:"1" max:"128"`
}

// listInvalidRefs reads every invalid-reference holder and pages the
// visible ones itself: the kernel's counts include hidden notebooks.
func listInvalidRefs(ctx context.Context, env *tools.Env, a pageArgs) (any, error) {
	var all []searchHit
	roots, seen := map[string]bool{}, map[string]bool{}
	cut := false
	for page := 1; ; page++ {
		res, err := env.Kernel.ListInvalidBlockRefs(ctx, page, invalidRefsPage)
		if err != nil {
			return nil, err
		}
		for _, b := range res.Blocks {
			if tools.Visible(ctx, b.Box) && !seen[b.ID] {
				seen[b.ID] = true
				all = append(all, hitOf(b))
				roots[b.RootID] = true
			}
		}
		if page >= res.PageCount || len(res.Blocks) == 0 {
			break
		}
		if page*invalidRefsPage >= invalidRefsMax {
			cut = true
			break
		}
	}
	p := tools.Paginate(all, a.Page, a.PageSize)
	extra := map[string]any{"blocks": p.Data, "matchedRootCount": len(roots),
		"hint": "each block holds a reference (((id)) or siyuan://blocks/id) to a block that no longer exists; the blocks come from the index, which lags writes by a few seconds"}
	if cut {
		extra["truncated"] = true
		extra["warning"] = "more than 10,240 blocks hold invalid references; only the first 10,240 (by id) were read"
	}
	return p.Fields(extra), nil
}

func listInvalidRefsAction() *tools.Action {
	return tools.Read[pageArgs]{
		Name: "list_invalid_refs", Summary: "blocks whose references point at blocks that no longer exist, by block id",
		Example: map[string]any{"page": 1, "pageSize": 20},
		// Workspace-wide; blocks of hidden notebooks are dropped.
		Scope: tools.Scope[pageArgs]{Global: true},
		Run:   listInvalidRefs,
	}.Action()
}
