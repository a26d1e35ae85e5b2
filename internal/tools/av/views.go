package av

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// The view-shaping writes (upstream's add_view, set_filters, set_sorts,
// set_group, set_column_visibility, set_column_order) act on one view
// through one database block, the carrier: SiYuan's view operations
// (setAttrViewFilters, setAttrViewSorts, setAttrViewGroup,
// setAttrViewColHidden, sortAttrViewCol) change the view the block shows,
// so viewID must be that view, and a preflight refuses any other. The view
// a block shows is its custom-sy-av-view when that names a view of the
// database, else the database's current view, else its first (SiYuan's
// getAttrViewViewByBlockID); the state covers all three, so a render that
// moves the current view makes a later commit stale.

// viewArgs name the view a write shapes.
type viewArgs struct {
	AvID    string `arg:"avID" help:"the database" id:"" required:""`
	BlockID string `arg:"blockID" help:"the database block (carrier) showing avID; the write acts on the view it shows" id:"" required:""`
	ViewID  string `arg:"viewID" help:"the view blockID shows now; any other view is refused" id:"" required:""`
}

// viewPart is what one action reads and changes of its view.
type viewPart int

const (
	partFilters viewPart = iota
	partSorts
	partGroup
	partFields
	partViews
)

// viewsState is what a view-shaping write hashes: the carrier, the view it
// shows, the keys a rule may name, and the one part of the view the action
// changes (for add_view, the database's views).
type viewsState struct {
	AvID    string `json:"avID"`
	Missing bool   `json:"missing,omitempty"`
	Block   string `json:"blockID"`
	// Carries: the block shows the database.
	Carries bool `json:"carries"`
	// Attr is the block's custom-sy-av-view, Current the database's
	// current view, Shown the view the block shows from the two.
	Attr    string         `json:"attr,omitempty"`
	Current string         `json:"current,omitempty"`
	Shown   string         `json:"shown,omitempty"`
	Keys    []viewKey      `json:"keys,omitempty"`
	View    *shapedView    `json:"view,omitempty"`
	Views   []viewListItem `json:"views,omitempty"`
}

type viewKey struct {
	ID   string `json:"id"`
	Type string `json:"type"`
}

// shapedView is the part of a view an action changes; the others are
// left empty.
type shapedView struct {
	ID      string                 `json:"id"`
	Type    string                 `json:"type"`
	Filters []*siyuan.AVViewFilter `json:"filters,omitempty"`
	Sorts   []*siyuan.AVViewSort   `json:"sorts,omitempty"`
	Group   *viewGroup             `json:"group,omitempty"`
	Fields  []viewField            `json:"fields,omitempty"`
}

// viewGroup is a view's grouping (av.ViewGroup).
type viewGroup struct {
	Field     string      `json:"field"`
	Method    int         `json:"method"`
	Range     *groupRange `json:"range,omitempty"`
	Order     int         `json:"order"`
	HideEmpty bool        `json:"hideEmpty"`
}

type groupRange struct {
	NumStart float64 `json:"numStart"`
	NumEnd   float64 `json:"numEnd"`
	NumStep  float64 `json:"numStep"`
}

// viewField is a column of a table, a field of a gallery's cards or a
// kanban's.
type viewField struct {
	ID     string `json:"id"`
	Hidden bool   `json:"hidden"`
}

type viewListItem struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Type string `json:"type"`
}

// fieldsOf is a view's columns or card fields, in order.
func fieldsOf(v *siyuan.AVView) []viewField {
	out := []viewField{}
	switch v.LayoutType {
	case "gallery", "kanban":
		raw := v.Gallery
		if v.LayoutType == "kanban" {
			raw = v.Kanban
		}
		var l struct {
			Fields []viewField `json:"fields"`
		}
		if len(raw) > 0 && json.Unmarshal(raw, &l) == nil {
			out = append(out, l.Fields...)
		}
	default:
		if v.Table != nil {
			for _, c := range v.Table.Columns {
				if c != nil {
					out = append(out, viewField{ID: c.ID, Hidden: c.Hidden})
				}
			}
		}
	}
	return out
}

// groupOf is a view's stored grouping (nil when it never had one).
func groupOf(v *siyuan.AVView) *viewGroup {
	if len(v.Group) == 0 || string(v.Group) == "null" {
		return nil
	}
	var g viewGroup
	if json.Unmarshal(v.Group, &g) != nil {
		return nil
	}
	return &g
}

// readViewsState reads what a view-shaping write on viewID through
// blockID hashes.
func readViewsState(ctx context.Context, env *tools.Env, avID, blockID, viewID string, part viewPart) (viewsState, error) {
	st := viewsState{AvID: avID, Block: blockID}
	av, err := env.Kernel.AttributeViewShape(ctx, avID)
	if err != nil {
		return st, fmt.Errorf("read database %s: %w", avID, err)
	}
	if av == nil {
		st.Missing = true
		return st, nil
	}
	blocks, err := env.Kernel.GetMirrorDatabaseBlocks(ctx, avID)
	if err != nil {
		return st, fmt.Errorf("find the blocks showing database %s: %w", avID, err)
	}
	st.Carries = slices.Contains(blocks, blockID)
	if st.Carries {
		attrs, err := env.Kernel.GetBlockAttrs(ctx, blockID)
		if err != nil {
			return st, fmt.Errorf("read the attributes of block %s: %w", blockID, err)
		}
		st.Attr = attrs["custom-sy-av-view"]
	}
	st.Current = av.ViewID
	st.Shown = shownView(av, st.Attr)
	for _, kv := range av.KeyValues {
		if kv != nil && kv.Key != nil {
			st.Keys = append(st.Keys, viewKey{ID: kv.Key.ID, Type: kv.Key.Type})
		}
	}
	if part == partViews {
		for _, v := range av.Views {
			if v != nil {
				st.Views = append(st.Views, viewListItem{ID: v.ID, Name: v.Name, Type: v.LayoutType})
			}
		}
		st.Keys = nil // add_view names no key
		return st, nil
	}
	for _, v := range av.Views {
		if v == nil || v.ID != viewID {
			continue
		}
		sv := &shapedView{ID: v.ID, Type: v.LayoutType}
		switch part {
		case partFilters:
			sv.Filters = v.Filters
		case partSorts:
			sv.Sorts = v.Sorts
		case partGroup:
			sv.Group = groupOf(v)
		case partFields:
			sv.Fields = fieldsOf(v)
		}
		st.View = sv
	}
	return st, nil
}

// shownView is the view a block whose custom-sy-av-view is attr shows.
func shownView(av *siyuan.AttributeView, attr string) string {
	has := func(id string) bool {
		return id != "" && slices.ContainsFunc(av.Views, func(v *siyuan.AVView) bool { return v != nil && v.ID == id })
	}
	switch {
	case has(attr):
		return attr
	case has(av.ViewID):
		return av.ViewID
	case len(av.Views) > 0 && av.Views[0] != nil:
		return av.Views[0].ID
	}
	return ""
}

func (s viewsState) key(id string) (viewKey, bool) {
	for _, k := range s.Keys {
		if k.ID == id {
			return k, true
		}
	}
	return viewKey{}, false
}

// checkCarrier refuses a database that does not exist, a block not
// showing it, and a viewID that is not the view the block shows.
func checkCarrier(a viewArgs, st viewsState) error {
	if st.Missing {
		return failure.Missing("database", a.AvID)
	}
	if !st.Carries {
		return failure.Invalid("block %s does not show database %s", a.BlockID, a.AvID)
	}
	if st.View == nil {
		return failure.New(failure.NotFound, "viewID %s: database %s has no such view", a.ViewID, a.AvID)
	}
	if st.Shown != a.ViewID {
		e := failure.Invalid("viewID %s is not the view block %s shows (%s); a view write acts only on the view its block shows", a.ViewID, a.BlockID, st.Shown)
		e.Action = "pass viewID " + st.Shown + ", or show that view in the block first"
		return e
	}
	return nil
}

// checkColumn refuses a rule naming a key the database does not have.
func checkColumn(st viewsState, path, id string) error {
	if _, ok := st.key(id); !ok {
		return failure.New(failure.NotFound, "%s: database %s has no column %s", path, st.AvID, id)
	}
	return nil
}

// viewScope is the permission of a view write: every notebook showing the
// database, write; blockID must show it.
func viewScope[A any](args func(A) viewArgs) tools.Scope[A] {
	return tools.Scope[A]{Resolve: func(ctx context.Context, env *tools.Env, a A) ([]tools.Touch, error) {
		v := args(a)
		return dbTouchesAt(ctx, env, v.AvID, v.BlockID, tools.LevelWrite)
	}}
}

// sendViewOps sends one transaction of view operations.
func sendViewOps(ctx context.Context, env *tools.Env, ops ...siyuan.Operation) error {
	if _, err := env.Kernel.Transactions(ctx, []siyuan.Transaction{{DoOperations: ops}}); err != nil {
		return tools.WriteFailure(err, false)
	}
	return nil
}

// awaitView reads the view until accept passes; the state returned is
// the one hashed.
func awaitView(ctx context.Context, env *tools.Env, a viewArgs, part viewPart, accept func(viewsState) error) (viewsState, error) {
	return tools.Await(ctx, func(ctx context.Context) (viewsState, error) {
		return readViewsState(ctx, env, a.AvID, a.BlockID, a.ViewID, part)
	}, func(st viewsState) error {
		if st.Missing || st.View == nil {
			return fmt.Errorf("view %s of database %s is gone", a.ViewID, a.AvID)
		}
		if st.Shown != a.ViewID {
			return fmt.Errorf("block %s no longer shows view %s", a.BlockID, a.ViewID)
		}
		return accept(st)
	})
}

// decodeStrict decodes an argument object into out, refusing unknown
// fields, with path in the message.
func decodeStrict(path string, in any, out any) error {
	raw, err := json.Marshal(in)
	if err != nil {
		return failure.Invalid("%s: %v", path, err)
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		return failure.Invalid("%s: %s", path, strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}
