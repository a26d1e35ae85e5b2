package av

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// render with createIfNotExist:true is upstream's way to make a database:
// a database block first in blockID (its parent), showing a new database
// (id, or one Sisyphus reserves), which a render then writes. Strict and
// additive (request id only), staged like create.

// createFlag is render's createIfNotExist, which makes the call its write
// form.
type createFlag struct {
	CreateIfNotExist bool `arg:"createIfNotExist" help:"true creates a database unless id names one that exists (then it renders it): a strict write making a database block first in blockID that shows database id (omit id and one is reserved; while a notebook is hidden from agents, only without id)" default:"false"`
}

// createsDatabase tells whether a render with createIfNotExist:true
// creates: without an id, or with the id of no database. Of a database
// that exists it is a render, as upstream's is.
func createsDatabase(ctx context.Context, env *tools.Env, fields map[string]json.RawMessage) (bool, error) {
	var id string
	for _, name := range []string{"id", "avID"} {
		if raw, ok := fields[name]; ok {
			var s string
			if json.Unmarshal(raw, &s) == nil && s != "" {
				id = s
			}
		}
	}
	if id == "" || tools.CheckID("id", id) != nil {
		return true, nil // the write form refuses a malformed id
	}
	if tools.Hiding(ctx) {
		// Whether a database with this id exists must not decide the
		// answer while one could be shown only in a hidden notebook:
		// the call is a render, which answers not_found for a database
		// the call cannot see, whether it exists or not.
		return false, nil
	}
	av, err := env.Kernel.GetAttributeView(ctx, id)
	if err != nil {
		return false, fmt.Errorf("read database %s: %w", id, err)
	}
	return av == nil, nil
}

// renderCreateArgs take every argument of render: those a creation does
// not use are accepted and ignored, as upstream's are.
type renderCreateArgs struct {
	avRef
	Parent string `arg:"blockID" help:"the document (or container block) the new database block goes first in" id:"" required:""`
	createFlag
	ViewID      string         `arg:"viewID" help:"ignored when creating" id:""`
	Page        *int           `arg:"page" help:"ignored when creating" min:"1"`
	PageSize    *int           `arg:"pageSize" help:"ignored when creating" min:"-1" max:"500"`
	Query       string         `arg:"query" help:"ignored when creating"`
	IgnoreRows  bool           `arg:"ignoreRows" help:"ignored when creating"`
	Verbose     bool           `arg:"verbose" help:"ignored when creating"`
	GroupPaging map[string]any `arg:"groupPaging" help:"ignored when creating"`
	Generated   bool           // no id given: one is reserved
}

// renderCreateState is whether the parent exists and the database does.
type renderCreateState struct {
	Place    placeState `json:"place"`
	AVExists bool       `json:"avExists"`
}

var renderCreate = tools.Write[renderCreateArgs, renderCreateState]{
	Summary: "with createIfNotExist:true: create a database shown by a new database block first in blockID (id optional: one is reserved); answers the creation receipt and the new database's columns",
	Policy:  additive,
	Example: map[string]any{"blockID": "20260812120000-abcdefg", "createIfNotExist": true, "validateOnly": true},
	Validate: func(a *renderCreateArgs) error {
		if a.Alias != "" || a.Given != "" {
			if err := a.resolve(); err != nil {
				return err
			}
		}
		a.Generated = a.AvID == ""
		return nil
	},
	Scope: tools.Scope[renderCreateArgs]{Touches: func(a renderCreateArgs) []tools.Touch {
		return []tools.Touch{tools.OnBlock(a.Parent, tools.LevelWrite)}
	}},
	Targets: func(a renderCreateArgs) []string { return []string{a.Parent} },
	State: func(ctx context.Context, env *tools.Env, a renderCreateArgs) (renderCreateState, error) {
		place, err := readPlace(ctx, env, a.Parent)
		if err != nil || a.AvID == "" {
			return renderCreateState{Place: place}, err
		}
		av, err := env.Kernel.GetAttributeView(ctx, a.AvID)
		if err != nil {
			return renderCreateState{}, fmt.Errorf("read database %s: %w", a.AvID, err)
		}
		return renderCreateState{Place: place, AVExists: av != nil}, nil
	},
	Check: func(a renderCreateArgs, st renderCreateState) error {
		if !st.Place.Exists {
			return failure.Missing("block", a.Parent)
		}
		if st.AVExists {
			e := failure.Invalid("database %s exists; createIfNotExist:true would create nothing, so nothing was run", a.AvID)
			e.Action = "render it without createIfNotExist"
			return e
		}
		return nil
	},
	Stages: &tools.Stages[renderCreateArgs, renderCreateState]{
		Reserve: func(a renderCreateArgs, _ renderCreateState) (map[string]string, error) {
			id := a.AvID
			if id == "" {
				id = newID()
			}
			return map[string]string{idAV: id, idBlock: newID(), idParent: a.Parent, idPrev: ""}, nil
		},
		Steps: func(renderCreateArgs) []tools.Step[renderCreateArgs] {
			return []tools.Step[renderCreateArgs]{insertBlockStep[renderCreateArgs](), renderCreateStep[renderCreateArgs]()}
		},
		Receipt: func(a renderCreateArgs, ids map[string]string, done []string) tools.Payload {
			return tools.Payload{"avID": ids[idAV], "id": ids[idAV], "blockID": ids[idBlock], "parentID": a.Parent,
				"generatedAvID": a.Generated, "materialized": slices.Contains(done, "block"), "stage": last(done)}
		},
	},
	Readback: func(ctx context.Context, env *tools.Env, a renderCreateArgs, p tools.Payload) (any, error) {
		avID, blockID, err := createdDB(p)
		if err != nil {
			return nil, err
		}
		st, err := readChanged(ctx, env, avID, func(st DBState) error {
			if !slices.Contains(st.Blocks, blockID) {
				return fmt.Errorf("database %s is not shown by block %s", avID, blockID)
			}
			if len(st.Keys) != 2 || st.primary().ID == "" || len(st.Rows) != 0 {
				return fmt.Errorf("database %s is not a new database (%d columns, %d rows)", avID, len(st.Keys), len(st.Rows))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		cols := make([]map[string]any, 0, len(st.Keys))
		for _, k := range st.Keys {
			cols = append(cols, map[string]any{"id": k.ID, "name": k.Name, "type": k.Type})
		}
		p["columns"], p["primaryKeyID"] = cols, st.primary().ID
		if len(st.Views) > 0 {
			p["viewID"] = st.Views[0].ID
		}
		return st, nil
	},
}
