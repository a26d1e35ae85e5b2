package system

import (
	"context"

	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// withheldLayout stands in for SiYuan's window layout while a notebook is
// hidden from agents.
const withheldLayout = "(withheld while a notebook is hidden from agents: the layout names the documents open in SiYuan)"

// veilConf is SiYuan's configuration as a call may see it while a
// notebook is hidden: the window layout (uiLayout: the open documents,
// with their titles) is withheld, and a hidden notebook's id (a default
// notebook for new documents, say) reads as "". Without a hidden
// notebook it is conf unchanged.
func veilConf(ctx context.Context, env *tools.Env, conf any) (any, error) {
	if !tools.Hiding(ctx) {
		return conf, nil
	}
	nbs, err := env.Kernel.ListNotebooks(ctx)
	if err != nil {
		return nil, err
	}
	hidden := map[string]bool{}
	for _, n := range nbs {
		if !tools.Visible(ctx, n.ID) {
			hidden[n.ID] = true
		}
	}
	if m, ok := conf.(map[string]any); ok {
		if _, has := m["uiLayout"]; has {
			m["uiLayout"] = withheldLayout
		}
	}
	return withoutIDs(conf, hidden), nil
}

// withoutIDs replaces every string that is one of ids by "".
func withoutIDs(v any, ids map[string]bool) any {
	switch x := v.(type) {
	case string:
		if ids[x] {
			return ""
		}
	case map[string]any:
		for k, e := range x {
			x[k] = withoutIDs(e, ids)
		}
	case []any:
		for i, e := range x {
			x[i] = withoutIDs(e, ids)
		}
	}
	return v
}
