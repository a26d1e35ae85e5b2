package tools

import (
	"context"
	"errors"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

func notebookTool() *Tool {
	return &Tool{
		Name:        "notebook",
		Title:       "Notebooks",
		Description: "List SiYuan notebooks and read their configuration.",
		Actions: append([]*Action{
			{
				Name: "list", Summary: "all notebooks, open and closed", Policy: read,
				Run: func(ctx context.Context, env *Env, a *Args) (any, error) {
					nbs, err := env.Kernel.ListNotebooks(ctx)
					if err != nil {
						return nil, err
					}
					type nb struct {
						ID           string `json:"id"`
						Name         string `json:"name"`
						Icon         string `json:"icon"`
						Closed       bool   `json:"closed"`
						SortMode     int    `json:"sortMode"`
						SubFileCount int    `json:"subFileCount"`
					}
					out := make([]nb, 0, len(nbs))
					for _, n := range nbs {
						out = append(out, nb{n.ID, n.Name, n.Icon, n.Closed, n.SortMode, n.SubFileCount})
					}
					return map[string]any{"notebooks": out, "total": len(out)}, nil
				},
			},
			{
				Name: "get_conf", Summary: "a notebook's configuration", Policy: read,
				Params: []Param{idParam("notebook", "the notebook", true)},
				Run: func(ctx context.Context, env *Env, a *Args) (any, error) {
					id := a.String("notebook")
					if err := checkID("notebook", id); err != nil {
						return nil, err
					}
					conf, err := env.Kernel.GetNotebookConf(ctx, id)
					if err != nil {
						return nil, notebookErr(id, err)
					}
					return map[string]any{"notebook": conf.Box, "name": conf.Name, "conf": conf.Conf}, nil
				},
			},
		}, notebookWriteActions()...),
	}
}

// notebookErr turns the kernel's "notebook not found" into not_found.
func notebookErr(id string, err error) error {
	var api *siyuan.APIError
	if errors.As(err, &api) && strings.Contains(api.Msg, "not found") {
		return notFound("notebook", id)
	}
	return err
}
