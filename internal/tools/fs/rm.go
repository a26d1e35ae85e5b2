package fs

import (
	"context"
	"errors"
	"fmt"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// pathArgs are the arguments of an action on the document at one path.
type pathArgs struct {
	RawPath string `arg:"path" help:"the document's path /<notebook>/<title>" required:""`
	Path    humanPath
}

func (a *pathArgs) parse() (err error) {
	a.Path, err = parseDocPath("path", a.RawPath)
	if err == nil && a.Path.Virtual == rulesFile {
		err = readOnly(a.Path.Virtual)
	}
	return err
}

// rm hands its readback the document's id typed, not through the
// payload's "id".
var rm = tools.WriteWith[pathArgs, docState, string]{Write: tools.Write[pathArgs, docState]{
	Name: "rm", Summary: "remove the document at a path, with its child documents (SiYuan keeps a copy in its history); on " + memoryFile + " it clears the memory",
	Example: map[string]any{"path": "/Research/Old notes", "validateOnly": true},
	Policy:  strict.WritePolicy{Class: strict.Mutation, Precondition: strict.ExpectedStateHash}, Destructive: true, Dangerous: true,
	Validate: (*pathArgs).parse,
	Scope: tools.Scope[pathArgs]{Resolve: func(ctx context.Context, env *tools.Env, a pathArgs) ([]tools.Touch, error) {
		return onPaths(ctx, env, tools.LevelDelete, a.Path)
	}},
	Targets: func(a pathArgs) []string { return []string{a.Path.Raw} },
	State: func(ctx context.Context, env *tools.Env, a pathArgs) (docState, error) {
		if a.Path.Virtual != "" {
			return virtualState(ctx, env, a.Path.Virtual)
		}
		return pathState(ctx, env, a.Path, true)
	},
	Check: func(a pathArgs, st docState) error {
		if st.Virtual && st.Missing {
			return failure.New(failure.NotFound, "%s is already empty: nothing to clear", a.Path.Raw)
		}
		if st.Missing {
			return noDoc(a.Path)
		}
		return nil
	},
},
	Execute: func(ctx context.Context, env *tools.Env, a pathArgs, st docState) (tools.Payload, string, error) {
		if st.Virtual {
			out, err := setMemory(ctx, env, "")
			if out != nil {
				out["cleared"] = true
			}
			return out, "", err
		}
		if err := env.Kernel.RemoveDocByID(ctx, st.RootID); err != nil {
			return nil, "", tools.WriteFailure(err, false)
		}
		return tools.Payload{"path": a.Path.Raw, "id": st.RootID, "removed": true}, st.RootID, nil
	},
	Readback: rmReadback,
}

// rmReadback proves the removal by the live existence of the removed id,
// checked before any tree is read: a stale path or SQL index cannot make a
// done removal look undone, and a failed existence query is an error (the
// outcome stays unknown), never proof of deletion.
func rmReadback(ctx context.Context, env *tools.Env, a pathArgs, _ tools.Payload, id string) (any, error) {
	p := a.Path
	if p.Virtual != "" {
		return memoryReadback(ctx, env, "")
	}
	if err := waitFor(ctx, func() (bool, error) {
		ok, err := env.Kernel.CheckBlockExist(ctx, id)
		return !ok, err
	}); err != nil {
		if errors.Is(err, errNotYet) {
			return nil, fmt.Errorf("document %s still exists", id)
		}
		return nil, fmt.Errorf("existence of %s unknown: %w", id, err)
	}
	return pathState(ctx, env, p, true)
}
