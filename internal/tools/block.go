package tools

import (
	"context"
)

func blockTool() *Tool {
	one := func(desc string) []Param { return []Param{idParam("id", desc, true)} }
	return &Tool{
		Name:  "block",
		Title: "Blocks",
		Description: "Read and change SiYuan blocks: kramdown (Markdown with block attributes), children, attributes, position and " +
			"rendered DOM; update, append, prepend, insert, delete, set attributes and fold state. Writes are strict: " +
			"call with validateOnly:true first, then repeat with the requestId (and for guarded actions expectedStateHash) it returns.",
		Actions: append([]*Action{
			{
				Name: "get_kramdown", Summary: "a block (with its descendants) as kramdown, attributes included", Policy: read,
				Params: one("the block"),
				Run: func(ctx context.Context, env *Env, a *Args) (any, error) {
					id := a.String("id")
					if err := checkID("id", id); err != nil {
						return nil, err
					}
					kd, err := env.Kernel.GetBlockKramdown(ctx, id)
					if err != nil {
						return nil, err
					}
					// The kernel answers an unknown id with an empty kramdown.
					if kd.Kramdown == "" {
						if err := mustExist(ctx, env, id); err != nil {
							return nil, err
						}
					}
					return map[string]any{"id": id, "kramdown": kd.Kramdown}, nil
				},
			},
			{
				Name: "get_children", Summary: "a block's child blocks (a heading's: the blocks under it)", Policy: read,
				Params: append(one("the parent block"), pageParams...),
				Run: func(ctx context.Context, env *Env, a *Args) (any, error) {
					id, err := blockID(ctx, env, a)
					if err != nil {
						return nil, err
					}
					kids, err := env.Kernel.GetChildBlocks(ctx, id)
					if err != nil {
						return nil, err
					}
					p := paginate(kids, a)
					return map[string]any{"id": id, "data": p.Data, "total": p.Total, "page": p.Page,
						"pageSize": p.PageSize, "pageCount": p.PageCount, "hasNextPage": p.HasNextPage}, nil
				},
			},
			{
				Name: "get_attrs", Summary: "a block's attributes (id, updated, custom-*, name, alias, ...)", Policy: read,
				Params: one("the block"),
				Run: func(ctx context.Context, env *Env, a *Args) (any, error) {
					id := a.String("id")
					if err := checkID("id", id); err != nil {
						return nil, err
					}
					attrs, err := env.Kernel.GetBlockAttrs(ctx, id)
					if err != nil {
						return nil, err
					}
					// Every block has an id attribute; none means no block.
					if attrs["id"] == "" {
						return nil, notFound("block", id)
					}
					return map[string]any{"id": id, "attrs": attrs}, nil
				},
			},
			{
				Name: "info", Summary: "where a block lives: notebook, document, paths", Policy: read,
				Params: one("the block"),
				Run: func(ctx context.Context, env *Env, a *Args) (any, error) {
					id, err := blockID(ctx, env, a)
					if err != nil {
						return nil, err
					}
					ref, err := describe(ctx, env, id)
					if err != nil {
						return nil, err
					}
					return map[string]any{"id": id, "document": ref, "isDocument": ref.ID == id}, nil
				},
			},
			{
				Name: "dom", Summary: "a block's rendered DOM, as SiYuan's editor shows it", Policy: read,
				Params: one("the block"),
				Run: func(ctx context.Context, env *Env, a *Args) (any, error) {
					id := a.String("id")
					if err := checkID("id", id); err != nil {
						return nil, err
					}
					d, err := env.Kernel.GetBlockDOM(ctx, id)
					if err != nil {
						return nil, err
					}
					if d.DOM == "" {
						if err := mustExist(ctx, env, id); err != nil {
							return nil, err
						}
					}
					return map[string]any{"id": id, "dom": d.DOM}, nil
				},
			},
		}, append(blockWriteActions(), blockMoveActions()...)...),
	}
}

// blockID validates the id argument and checks the block exists: SiYuan
// answers an unknown id with an empty success on several read endpoints.
func blockID(ctx context.Context, env *Env, a *Args) (string, error) {
	id := a.String("id")
	if err := checkID("id", id); err != nil {
		return "", err
	}
	return id, mustExist(ctx, env, id)
}

// mustExist answers not_found for a block the kernel does not know.
func mustExist(ctx context.Context, env *Env, id string) error {
	ok, err := env.Kernel.CheckBlockExist(ctx, id)
	if err != nil {
		return err
	}
	if !ok {
		return notFound("block", id)
	}
	return nil
}
