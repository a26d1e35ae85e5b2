package fs

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// ---- mv -------------------------------------------------------------------

// location is where a path points: a notebook root, a document, or nothing.
type location struct {
	Path     string `json:"path"`
	Missing  bool   `json:"missing,omitempty"`
	Notebook string `json:"notebook,omitempty"`
	ID       string `json:"id,omitempty"`      // "" for a notebook root
	Storage  string `json:"storage,omitempty"` // "/" for a notebook root
	Title    string `json:"title,omitempty"`
}

func locate(ctx context.Context, env *tools.Env, p humanPath) (location, error) {
	t, err := resolve(ctx, env, p)
	if err != nil {
		return location{}, err
	}
	switch {
	case t.Missing:
		return location{Path: p.Raw, Missing: true}, nil
	case t.DocID == "":
		return location{Path: p.Raw, Notebook: t.Notebook.ID, Storage: "/"}, nil
	}
	info, err := env.Kernel.GetBlockInfo(ctx, t.DocID)
	if err != nil {
		return location{}, err
	}
	return location{Path: p.Raw, Notebook: info.Box, ID: t.DocID, Storage: info.Path, Title: info.RootTitle}, nil
}

// dir is the storage directory children of loc live in.
func (l location) dir() string {
	if l.ID == "" {
		return "/"
	}
	return strings.TrimSuffix(l.Storage, ".sy")
}

// mvArgs are fs.mv's arguments.
type mvArgs struct {
	FromPath string `arg:"from" help:"the document's current path" required:""`
	ToPath   string `arg:"to" help:"its new path; the last segment is the new title" required:""`
	// From and To are the paths parsed.
	From, To humanPath
}

func (m *mvArgs) parse() error {
	var err error
	if m.From, err = parseDocPath("from", m.FromPath); err != nil {
		return err
	}
	if m.To, err = parseDocPath("to", m.ToPath); err != nil {
		return err
	}
	for _, p := range []humanPath{m.From, m.To} {
		if p.Virtual != "" {
			return failure.Invalid("%s is a fixed virtual file and cannot be moved or renamed, nor be moved onto: nothing was run", p.Virtual)
		}
	}
	if m.From.Raw == m.To.Raw {
		return failure.Invalid("from and to are the same path")
	}
	return nil
}

// mvState is the structure fs.mv guards: the document, the destination
// path and the destination's parent.
type mvState struct {
	From     location `json:"from"`
	To       location `json:"to"`
	ToParent location `json:"toParent"`
}

func readMv(ctx context.Context, env *tools.Env, m mvArgs) (mvState, error) {
	var st mvState
	var err error
	if st.From, err = locate(ctx, env, m.From); err != nil {
		return st, err
	}
	if st.To, err = locate(ctx, env, m.To); err != nil {
		return st, err
	}
	st.ToParent, err = locate(ctx, env, m.To.Parent())
	return st, err
}

func checkMv(m mvArgs, st mvState) error {
	src, dst, into := st.From, st.To, st.ToParent
	switch {
	case src.Missing:
		return noDoc(m.From)
	case !dst.Missing:
		return failure.Invalid("a document already exists at %s (%s); move to a free path", m.To.Raw, dst.ID)
	case into.Missing:
		e := failure.New(failure.NotFound, "no document at %s, the parent of %s", m.To.Parent().Raw, m.To.Raw)
		e.Action = "create the parent first (fs.write), or move to an existing parent"
		return e
	case into.Notebook == src.Notebook && (into.ID == src.ID || strings.HasPrefix(into.Storage, src.dir()+"/")):
		return failure.Invalid("cannot move %s under itself", m.From.Raw)
	}
	return nil
}

// mv hands its readback the document's id typed, not through the
// payload's "id".
var mv = tools.WriteWith[mvArgs, mvState, string]{Write: tools.Write[mvArgs, mvState]{
	Name: "mv", Summary: "move and/or rename a document (with its children): from one path to a free path whose parent exists",
	Example:   map[string]any{"from": "/Research/Draft", "to": "/Archive/Draft 2026", "validateOnly": true},
	Policy:    strict.WritePolicy{Class: strict.Mutation, Precondition: strict.ExpectedStructureHash},
	Dangerous: true,
	Validate:  (*mvArgs).parse,
	Scope: tools.Scope[mvArgs]{Resolve: func(ctx context.Context, env *tools.Env, m mvArgs) ([]tools.Touch, error) {
		return onPaths(ctx, env, tools.LevelWrite, m.From, m.To)
	}},
	Targets: func(m mvArgs) []string { return sortedTargets(m.From.Raw, m.To.Raw) },
	State:   readMv,
	Check:   checkMv,
},
	Execute: func(ctx context.Context, env *tools.Env, m mvArgs, st mvState) (tools.Payload, string, error) {
		src, into := st.From, st.ToParent
		moved, renamed := false, false
		if into.Notebook != src.Notebook || path.Dir(src.Storage) != into.dir() {
			target := into.ID
			if target == "" {
				target = into.Notebook
			}
			if err := env.Kernel.MoveDocsByID(ctx, []string{src.ID}, target); err != nil {
				return nil, "", tools.WriteFailure(err, false)
			}
			moved = true
		}
		if m.To.Title() != src.Title {
			if err := env.Kernel.RenameDocByID(ctx, src.ID, m.To.Title()); err != nil {
				return nil, "", tools.WriteFailure(err, moved)
			}
			renamed = true
		}
		return tools.Payload{"from": m.From.Raw, "to": m.To.Raw, "id": src.ID, "moved": moved, "renamed": renamed}, src.ID, nil
	},
	Readback: mvReadback,
}

// mvReadback: the document resolves at to, and from no longer resolves to it.
func mvReadback(ctx context.Context, env *tools.Env, a mvArgs, _ tools.Payload, id string) (any, error) {
	from, to := a.From, a.To
	var src, dst, into location
	err := waitFor(ctx, func() (bool, error) {
		var err error
		if dst, err = locate(ctx, env, to); err != nil {
			return false, err
		}
		if src, err = locate(ctx, env, from); err != nil {
			return false, err
		}
		return dst.ID == id && src.ID != id, nil
	})
	if err != nil {
		return nil, fmt.Errorf("document %s at %s (and not at %s): %w", id, to.Raw, from.Raw, err)
	}
	if into, err = locate(ctx, env, to.Parent()); err != nil {
		return nil, err
	}
	return mvState{From: src, To: dst, ToParent: into}, nil
}
