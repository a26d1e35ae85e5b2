// Package notebook is the notebook tool: list notebooks, read their
// configuration, create, rename, remove, configure, open and close them.
package notebook

import (
	"context"
	"errors"
	"fmt"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/kernelview"
	"github.com/sisyphus-go/sisyphus/internal/tools/markup"
)

// Tool returns the notebook tool.
func Tool() *tools.Tool {
	return &tools.Tool{
		Name:  "notebook",
		Title: "Notebooks",
		Description: "List SiYuan notebooks, their root documents and configuration, and what agents may do in each; create, rename, configure, " +
			"set the icon of, open, close and remove them. " +
			"Writes are strict: call with validateOnly:true first, then repeat with the requestId (and for guarded actions expectedStateHash) it returns.",
		Actions: []*tools.Action{
			list.Action(), getConf.Action(), getPermissions.Action(),
			create.Action(), rename.Action(), remove.Action(), setConf.Action(), setOpenState.Action(), setPermission.Action(),
			setIcon.Action(), getChildDocs.Action(),
		},
	}
}

var list = tools.Read[tools.NoArgs]{
	Name: "list", Summary: "the notebooks you may see, open and closed, with your permission in each (r, rw, rwd)",
	Scope: tools.Scope[tools.NoArgs]{Global: true},
	Run: func(ctx context.Context, env *tools.Env, _ tools.NoArgs) (any, error) {
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
			Permission   string `json:"permission"`
		}
		out := make([]nb, 0, len(nbs))
		for _, n := range nbs {
			if !tools.Visible(ctx, n.ID) {
				continue // hidden from agents
			}
			out = append(out, nb{n.ID, n.Name, n.Icon, n.Closed, n.SortMode, n.SubFileCount, tools.LevelOf(ctx, n.ID).String()})
		}
		return map[string]any{"notebooks": out, "total": len(out)}, nil
	},
}

// nbArgs are the arguments of an action on one notebook.
type nbArgs struct {
	Notebook string `arg:"notebook" help:"the notebook" id:"" required:""`
}

// onNotebook is the scope of an action on the notebook its arguments name.
func onNotebook(need tools.Level) tools.Scope[nbArgs] {
	return tools.Scope[nbArgs]{Touches: func(a nbArgs) []tools.Touch { return []tools.Touch{tools.OnNotebook(a.Notebook, need)} }}
}

var getConf = tools.Read[nbArgs]{
	Name: "get_conf", Summary: "a notebook's configuration",
	Scope: onNotebook(tools.LevelRead),
	Run: func(ctx context.Context, env *tools.Env, a nbArgs) (any, error) {
		conf, err := env.Kernel.GetNotebookConf(ctx, a.Notebook)
		if err != nil {
			return nil, kernelview.NotebookErr(a.Notebook, err)
		}
		// A save box in a notebook the call may not see, and the path of
		// its titles beside it, read as "".
		return map[string]any{"notebook": conf.Box, "name": conf.Name, "conf": tools.VeilBoxConf(ctx, conf.Conf)}, nil
	},
}

var guarded = strict.WritePolicy{Class: strict.Mutation, Precondition: strict.ExpectedStateHash}

type nbState = kernelview.NotebookState

// readState reads the notebook a guarded action acts on.
func readState(ctx context.Context, env *tools.Env, id string) (nbState, error) {
	return kernelview.ReadNotebookState(ctx, env, id)
}

// mustExist is the check of a guarded notebook action.
func mustExist(st nbState) error {
	if st.Missing {
		return failure.Missing("notebook", st.ID)
	}
	return nil
}

// readback polls the notebook's state until want accepts it.
func readback(ctx context.Context, env *tools.Env, id string, want func(nbState) error) (any, error) {
	return tools.Await(ctx, func(ctx context.Context) (nbState, error) { return readState(ctx, env, id) }, want)
}

// ---- create ---------------------------------------------------------------

type createArgs struct {
	Name string `arg:"name" help:"the notebook's name" required:""`
	Icon string `arg:"icon" help:"an emoji code point in hex, like 1f4d4"`
}

// create hands its readback the new notebook's id typed, not through the
// payload's "notebook".
var create = tools.WriteWith[createArgs, struct{}, string]{Write: tools.Write[createArgs, struct{}]{
	Name: "create", Summary: "create a notebook (name, optional icon); duplicate names are allowed", Policy: strict.WritePolicy{Class: strict.Additive},
	Example:  map[string]any{"name": "Research", "icon": "1f4d4", "validateOnly": true},
	Validate: func(a *createArgs) error { return nameNotEmpty(a.Name) },
	// A new notebook touches none that exists; it starts at the default
	// permission (r) until the person grants more.
	Scope: tools.Scope[createArgs]{Global: true},
},
	Execute: func(ctx context.Context, env *tools.Env, a createArgs, _ struct{}) (tools.Payload, string, error) {
		nb, err := env.Kernel.CreateNotebook(ctx, a.Name)
		if err != nil {
			return nil, "", tools.WriteFailure(err, false)
		}
		if nb.ID == "" {
			return nil, "", errors.New("the kernel answered createNotebook without a notebook id")
		}
		// A new notebook starts at the configuration's default: say when
		// the agent that made it cannot write in it.
		level := tools.LevelOf(ctx, nb.ID)
		out := tools.Payload{"notebook": nb.ID, "permission": level.String()}
		if level < tools.LevelWrite {
			out["writable"] = false
			out["note"] = fmt.Sprintf("the new notebook is %q for agents (the configured default), so you cannot write in it; "+
				"ask the person to allow it: sisyphus config permission %s rw", level, nb.ID)
		}
		if a.Icon != "" {
			if err := env.Kernel.SetNotebookIcon(ctx, nb.ID, a.Icon); err != nil {
				// The notebook exists already: not a clean rejection.
				return nil, "", tools.WriteFailure(fmt.Errorf("notebook %s created, setting its icon failed: %w", nb.ID, err), true)
			}
		}
		return out, nb.ID, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a createArgs, _ tools.Payload, id string) (any, error) {
		name := markup.NormalizeTitle(a.Name)
		return readback(ctx, env, id, func(st nbState) error {
			switch {
			case st.Missing:
				return fmt.Errorf("notebook %s does not appear in lsNotebooks", id)
			case st.Entry.Name != name:
				return fmt.Errorf("notebook %s reads back a different name", id)
			case a.Icon != "" && st.Conf.Icon != a.Icon:
				return fmt.Errorf("notebook %s reads back icon %q, want %q", id, st.Conf.Icon, a.Icon)
			}
			return nil
		})
	},
}

// ---- rename ---------------------------------------------------------------

type renameArgs struct {
	nbArgs
	Name string `arg:"name" help:"the new name" required:""`
}

// nameNotEmpty refuses a name SiYuan would store as nothing.
func nameNotEmpty(name string) error {
	if markup.NormalizeTitle(name) == "" {
		return failure.Invalid("name must not be empty")
	}
	return nil
}

var rename = tools.Write[renameArgs, nbState]{
	Name: "rename", Summary: "rename a notebook", Policy: guarded,
	Example:  map[string]any{"notebook": "20260812115959-nbnbnbn", "name": "Archive 2026", "validateOnly": true},
	Validate: func(a *renameArgs) error { return nameNotEmpty(a.Name) },
	Scope:    tools.Scope[renameArgs]{Touches: func(a renameArgs) []tools.Touch { return []tools.Touch{tools.OnNotebook(a.Notebook, tools.LevelWrite)} }},
	Targets:  func(a renameArgs) []string { return []string{a.Notebook} },
	State: func(ctx context.Context, env *tools.Env, a renameArgs) (nbState, error) {
		return readState(ctx, env, a.Notebook)
	},
	Check: func(_ renameArgs, st nbState) error { return mustExist(st) },
	Execute: func(ctx context.Context, env *tools.Env, a renameArgs, _ nbState) (tools.Payload, error) {
		if err := env.Kernel.RenameNotebook(ctx, a.Notebook, a.Name); err != nil {
			return nil, tools.WriteFailure(err, false)
		}
		return tools.Payload{"notebook": a.Notebook}, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a renameArgs, p tools.Payload) (any, error) {
		name := markup.NormalizeTitle(a.Name)
		return readback(ctx, env, a.Notebook, func(st nbState) error {
			if st.Missing || st.Entry.Name != name || st.Conf.Name != name {
				return fmt.Errorf("notebook %s does not read back the new name", a.Notebook)
			}
			return nil
		})
	},
}

// ---- remove ---------------------------------------------------------------

var remove = tools.Write[nbArgs, nbState]{
	Name: "remove", Summary: "delete a notebook and every document in it (SiYuan keeps a copy in its history)", Policy: guarded, Destructive: true,
	Dangerous: true, OffByDefault: true, Scope: onNotebook(tools.LevelDelete),
	Example: map[string]any{"notebook": "20260812115959-nbnbnbn", "validateOnly": true},
	Targets: func(a nbArgs) []string { return []string{a.Notebook} },
	State: func(ctx context.Context, env *tools.Env, a nbArgs) (nbState, error) {
		return readState(ctx, env, a.Notebook)
	},
	Check: func(_ nbArgs, st nbState) error { return mustExist(st) },
	Execute: func(ctx context.Context, env *tools.Env, a nbArgs, _ nbState) (tools.Payload, error) {
		if err := env.Kernel.RemoveNotebook(ctx, a.Notebook); err != nil {
			return nil, tools.WriteFailure(err, false)
		}
		return tools.Payload{"notebook": a.Notebook, "removed": true}, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a nbArgs, p tools.Payload) (any, error) {
		// Proof of removal is absence from a successful listing, never a
		// failed read.
		return readback(ctx, env, a.Notebook, func(st nbState) error {
			if !st.Missing {
				return fmt.Errorf("notebook %s is still listed", a.Notebook)
			}
			return nil
		})
	},
}

// ---- set_conf -------------------------------------------------------------

type setConfArgs struct {
	nbArgs
	Patch map[string]any `arg:"conf" help:"the fields to change; the others keep their values" required:""`
}

var setConf = tools.Write[setConfArgs, nbState]{
	Name: "set_conf", Summary: "change notebook settings (conf: name, icon, sort, sortMode, doc/ref create save box and path, daily note save and template path)", Policy: guarded,
	Example: map[string]any{"notebook": "20260812115959-nbnbnbn", "conf": map[string]any{"sortMode": 6, "dailyNoteSavePath": "/daily/{{now | date \"2006-01-02\"}}"}, "validateOnly": true},
	Validate: func(a *setConfArgs) (err error) {
		a.Patch, err = confPatch(a.Patch)
		return err
	},
	Scope: tools.Scope[setConfArgs]{Touches: func(a setConfArgs) []tools.Touch {
		return []tools.Touch{tools.OnNotebook(a.Notebook, tools.LevelWrite)}
	}},
	Targets: func(a setConfArgs) []string { return []string{a.Notebook} },
	State: func(ctx context.Context, env *tools.Env, a setConfArgs) (nbState, error) {
		return readState(ctx, env, a.Notebook)
	},
	Check: func(_ setConfArgs, st nbState) error { return mustExist(st) },
	Execute: func(ctx context.Context, env *tools.Env, a setConfArgs, st nbState) (tools.Payload, error) {
		if st.Conf == nil {
			return nil, tools.Refuse(failure.Missing("notebook", a.Notebook))
		}
		// The client sends a whole conf: start from the one just read.
		conf := *st.Conf
		applyConf(&conf, a.Patch)
		if _, err := env.Kernel.SetNotebookConf(ctx, a.Notebook, conf); err != nil {
			return nil, tools.WriteFailure(err, false)
		}
		return tools.Payload{"notebook": a.Notebook, "fields": len(a.Patch)}, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a setConfArgs, p tools.Payload) (any, error) {
		return readback(ctx, env, a.Notebook, func(st nbState) error {
			if st.Missing {
				return fmt.Errorf("notebook %s is gone", a.Notebook)
			}
			for k, v := range a.Patch {
				if got := confField(*st.Conf, k); !confMatches(k, v, got) {
					return fmt.Errorf("conf.%s reads back %v, want %v", k, got, v)
				}
			}
			return nil
		})
	},
}

// ---- set_open_state -------------------------------------------------------

type openArgs struct {
	nbArgs
	Opened bool `arg:"opened" help:"true opens, false closes" required:""`
}

var setOpenState = tools.Write[openArgs, nbState]{
	Name: "set_open_state", Summary: "open or close a notebook", Policy: guarded,
	Example: map[string]any{"notebook": "20260812115959-nbnbnbn", "opened": false, "validateOnly": true},
	// Opening and closing change what SiYuan shows, not the notes: upstream
	// asks read permission for both.
	Scope:   tools.Scope[openArgs]{Touches: func(a openArgs) []tools.Touch { return []tools.Touch{tools.OnNotebook(a.Notebook, tools.LevelRead)} }},
	Targets: func(a openArgs) []string { return []string{a.Notebook} },
	State: func(ctx context.Context, env *tools.Env, a openArgs) (nbState, error) {
		return readState(ctx, env, a.Notebook)
	},
	Check: func(_ openArgs, st nbState) error { return mustExist(st) },
	Execute: func(ctx context.Context, env *tools.Env, a openArgs, _ nbState) (tools.Payload, error) {
		var err error
		if a.Opened {
			err = env.Kernel.OpenNotebook(ctx, a.Notebook)
		} else {
			err = env.Kernel.CloseNotebook(ctx, a.Notebook)
		}
		if err != nil {
			return nil, tools.WriteFailure(err, false)
		}
		return tools.Payload{"notebook": a.Notebook, "opened": a.Opened}, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a openArgs, p tools.Payload) (any, error) {
		return readback(ctx, env, a.Notebook, func(st nbState) error {
			if st.Missing {
				return fmt.Errorf("notebook %s is gone", a.Notebook)
			}
			if st.Entry.Closed == a.Opened {
				return fmt.Errorf("notebook %s reads back closed=%v", a.Notebook, st.Entry.Closed)
			}
			return nil
		})
	},
}
