package notebook

import (
	"context"
	"fmt"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/settings"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// ---- get_permissions ------------------------------------------------------

// permArgs name one notebook or, as upstream's "all", none: the id is
// checked by Validate, since "all" is not one.
type permArgs struct {
	Notebook string `arg:"notebook" help:"one notebook; omit (or \"all\") for every notebook you may see (a SiYuan id like 20260812120000-abcdefg)"`
}

var getPermissions = tools.Read[permArgs]{
	Name: "get_permissions", Summary: "your permission in each notebook you may see (none, r, rw, rwd), or in one notebook",
	Example: map[string]any{"notebook": "20260812115959-nbnbnbn"},
	Validate: func(a *permArgs) error {
		if a.Notebook == "all" {
			a.Notebook = ""
		}
		if a.Notebook == "" {
			return nil
		}
		return tools.CheckID("notebook", a.Notebook)
	},
	// Reading one's own permission is always allowed; a hidden notebook
	// is not one of them: asked by id, it answers as a notebook that does
	// not exist.
	Scope: tools.Scope[permArgs]{Global: true},
	Run: func(ctx context.Context, env *tools.Env, a permArgs) (any, error) {
		nbs, err := env.Kernel.ListNotebooks(ctx)
		if err != nil {
			return nil, err
		}
		type entry struct {
			ID         string `json:"id"`
			Name       string `json:"name,omitempty"`
			Permission string `json:"permission"`
		}
		var out []entry
		for _, n := range nbs {
			if a.Notebook != "" && n.ID != a.Notebook {
				continue
			}
			if l := tools.LevelOf(ctx, n.ID); l != tools.LevelNone {
				out = append(out, entry{n.ID, n.Name, l.String()})
			}
		}
		if a.Notebook != "" && len(out) == 0 {
			return nil, failure.Missing("notebook", a.Notebook)
		}
		if out == nil {
			out = []entry{}
		}
		return map[string]any{"notebooks": out, "default": tools.DefaultLevel.String(),
			"levels": "none: hidden; r: read; rw: read and write; rwd: read, write and delete"}, nil
	},
}

// ---- set_permission -------------------------------------------------------

type setPermArgs struct {
	nbArgs
	Permission string `arg:"permission" help:"none, r, rw or rwd" enum:"none,r,rw,rwd" required:""`
	Level      tools.Level
}

// permState is one notebook's permission entry as the configuration
// stores it: what set_permission guards.
type permState struct {
	Notebook   string `json:"notebook"`
	Missing    bool   `json:"missing,omitempty"`
	Permission string `json:"permission"`
	Explicit   bool   `json:"explicit"`
}

func readPermState(ctx context.Context, env *tools.Env, nb string) (permState, error) {
	st, err := readState(ctx, env, nb)
	if err != nil {
		return permState{}, err
	}
	cfg, err := settings.NewStore(env.Kernel).Load(ctx)
	if err != nil {
		return permState{}, err
	}
	if probs := cfg.Problems(); len(probs) > 0 {
		return permState{}, failure.New(failure.ConfigUnavailable, "the configuration cannot be read: %s", probs[0])
	}
	l, explicit := cfg.Levels()[nb]
	if !explicit {
		l = tools.DefaultLevel
	}
	return permState{Notebook: nb, Missing: st.Missing, Permission: l.String(), Explicit: explicit}, nil
}

var setPermission = tools.Write[setPermArgs, permState]{
	Name: "set_permission", Summary: "set what agents may do in a notebook: none (hidden), r, rw or rwd (a person must confirm; off by default)",
	Policy: guarded, Dangerous: true, OffByDefault: true,
	Example: map[string]any{"notebook": "20260812115959-nbnbnbn", "permission": "rw", "validateOnly": true},
	Validate: func(a *setPermArgs) error {
		l, ok := tools.ParseLevel(a.Permission)
		if !ok {
			return failure.Invalid("permission must be one of none, r, rw, rwd")
		}
		a.Level = l
		return nil
	},
	// Not gated by the notebook's own level (as upstream): only by being
	// enabled and confirmed.
	Scope:   tools.Scope[setPermArgs]{None: true},
	Targets: func(a setPermArgs) []string { return []string{"permission:" + a.Notebook} },
	State: func(ctx context.Context, env *tools.Env, a setPermArgs) (permState, error) {
		if tools.LevelOf(ctx, a.Notebook) == tools.LevelNone {
			// A hidden notebook is not there for agents: its permission
			// is the person's to change (sisyphus config), and the answer
			// is a missing notebook's.
			return permState{Notebook: a.Notebook, Missing: true}, nil
		}
		return readPermState(ctx, env, a.Notebook)
	},
	Check: func(a setPermArgs, st permState) error {
		if st.Missing {
			return failure.Missing("notebook", a.Notebook)
		}
		return nil
	},
	Execute: func(ctx context.Context, env *tools.Env, a setPermArgs, _ permState) (tools.Payload, error) {
		_, err := settings.NewStore(env.Kernel).Apply(ctx, settings.Change{Notebook: a.Notebook, Permission: a.Level.String()})
		if env.ConfigChanged != nil {
			env.ConfigChanged() // whatever came of it: read the files again
		}
		if err != nil {
			return nil, tools.WriteFailure(err, false)
		}
		return tools.Payload{"notebook": a.Notebook, "permission": a.Level.String()}, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a setPermArgs, _ tools.Payload) (any, error) {
		st, err := readPermState(ctx, env, a.Notebook)
		if err != nil {
			return nil, err
		}
		if st.Permission != a.Level.String() {
			return nil, fmt.Errorf("the permission of %s reads back %s, want %s", a.Notebook, st.Permission, a.Level)
		}
		return st, nil
	},
}
