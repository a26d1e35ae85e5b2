package av

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// set_column_options replaces a select or mSelect column's options with a
// complete list, in one transaction: removeAttrViewColOption for each
// option not in the list (which also drops it from the column's cells and
// from the filters on the column), then updateAttrViewColOptions with the
// list twice: the first appends new names (SiYuan does not reorder when a
// name is new), the second, with no name new, puts the options in the
// list's order. The result is exactly the list.

type setOptionsArgs struct {
	dbArg
	ctxBlock
	KeyID   string           `arg:"keyID" help:"the select or mSelect column" id:"" required:""`
	Given   []map[string]any `arg:"options" help:"the complete list, in order (may be empty): [{name, color?, desc?}]; options left out are removed, also from the column's cells and filters; color is \"1\" to \"14\"; an omitted color or desc keeps the option's own (a new option's color: by its place)" required:""`
	Options []*siyuan.AVSelectOption
	// Keep marks the options whose color (0) or desc (1) was omitted.
	Keep [][2]bool
}

func parseSetOptions(a *setOptionsArgs) error {
	if len(a.Given) > 200 {
		return failure.Invalid("pass at most 200 options")
	}
	seen := map[string]bool{}
	for i, m := range a.Given {
		for k := range m {
			if k != "name" && k != "color" && k != "desc" {
				return failure.Invalid("options[%d] has %q; an option is {name, color?, desc?}", i, k)
			}
		}
		name, ok := m["name"].(string)
		if !ok || name == "" {
			return failure.Invalid("options[%d].name must be a non-empty string", i)
		}
		if seen[name] {
			return failure.Invalid("options[%d].name: %q is listed twice", i, name)
		}
		seen[name] = true
		o := &siyuan.AVSelectOption{Name: name}
		var keep [2]bool
		if c, has := m["color"]; has {
			s, ok := c.(string)
			if n, err := strconv.Atoi(s); !ok || err != nil || n < 1 || n > 14 || strconv.Itoa(n) != s {
				return failure.Invalid("options[%d].color must be one of \"1\" to \"14\"", i)
			}
			o.Color = s
		} else {
			keep[0] = true
		}
		if d, has := m["desc"]; has {
			s, ok := d.(string)
			if !ok {
				return failure.Invalid("options[%d].desc must be a string", i)
			}
			o.Desc = s
		} else {
			keep[1] = true
		}
		a.Options = append(a.Options, o)
		a.Keep = append(a.Keep, keep)
	}
	return nil
}

// optState is what set_column_options changes: the column (its options),
// its cells by row, and each view's filters (removing an option drops it
// from filters on the column). db is the whole database, not hashed, for
// the readback to see nothing else changed.
type optState struct {
	Missing bool                              `json:"missing,omitempty"`
	Key     *KeyState                         `json:"key"`
	Cells   map[string]*siyuan.AVValue        `json:"cells"`
	Filters map[string][]*siyuan.AVViewFilter `json:"filters"`
	db      DBState
}

func readOptState(ctx context.Context, env *tools.Env, avID, keyID string) (optState, error) {
	db, err := ReadDBState(ctx, env, avID)
	if err != nil {
		return optState{}, err
	}
	st := optState{Missing: db.Missing, Cells: map[string]*siyuan.AVValue{}, Filters: map[string][]*siyuan.AVViewFilter{}, db: db}
	if k, ok := db.key(keyID); ok {
		st.Key = &k
	}
	for _, r := range db.Rows {
		if c := r.Cells[keyID]; c != nil {
			st.Cells[r.ID] = c
		}
	}
	for _, v := range db.Views {
		st.Filters[v.ID] = v.Filters
	}
	return st, nil
}

// wanted is the list to send: omitted colours and descriptions filled
// from the column's options, a new option without a colour given one by
// its place in the list.
func (a setOptionsArgs) wanted(k KeyState) []*siyuan.AVSelectOption {
	out := make([]*siyuan.AVSelectOption, 0, len(a.Options))
	for i, o := range a.Options {
		c := *o
		var have *siyuan.AVSelectOption
		for _, h := range k.Options {
			if h != nil && h.Name == o.Name {
				have = h
			}
		}
		if a.Keep[i][0] {
			if have != nil && have.Color != "" {
				c.Color = have.Color
			} else {
				c.Color = strconv.Itoa(i%14 + 1)
			}
		}
		if a.Keep[i][1] && have != nil {
			c.Desc = have.Desc
		}
		out = append(out, &c)
	}
	return out
}

// removedOptions are the column's option names not in the list, in the
// column's order.
func (a setOptionsArgs) removedOptions(k KeyState) []string {
	out := []string{}
	for _, h := range k.Options {
		if h != nil && !slices.ContainsFunc(a.Options, func(o *siyuan.AVSelectOption) bool { return o.Name == h.Name }) {
			out = append(out, h.Name)
		}
	}
	return out
}

func checkSetOptions(a setOptionsArgs, st optState) error {
	if st.Missing {
		return failure.Missing("database", a.AvID)
	}
	if st.Key == nil {
		return failure.New(failure.NotFound, "keyID %s: database %s has no such column", a.KeyID, a.AvID)
	}
	if st.Key.Type != siyuan.AVKeySelect && st.Key.Type != siyuan.AVKeyMSelect {
		return failure.Invalid("keyID %s is a %s column; options are for select and mSelect columns", a.KeyID, st.Key.Type)
	}
	return nil
}

var setColumnOptions = tools.WriteWith[setOptionsArgs, optState, optState]{Write: tools.Write[setOptionsArgs, optState]{
	Name: "set_column_options", Summary: "replace a select or mSelect column's options with the complete list given, in its order (not a patch: options left out are removed, also from the column's cells and the filters on it)",
	Policy: guarded, Dangerous: true,
	Example:  map[string]any{"avID": "20260812120000-abcdefg", "keyID": "20260812120000-hijklmn", "options": []map[string]any{{"name": "Todo", "color": "4"}, {"name": "Done"}}, "validateOnly": true},
	Validate: parseSetOptions,
	Scope: tools.Scope[setOptionsArgs]{Resolve: func(ctx context.Context, env *tools.Env, a setOptionsArgs) ([]tools.Touch, error) {
		return dbTouchesAt(ctx, env, a.AvID, a.BlockID, tools.LevelWrite)
	}},
	Targets: func(a setOptionsArgs) []string { return []string{a.AvID} },
	State: func(ctx context.Context, env *tools.Env, a setOptionsArgs) (optState, error) {
		return readOptState(ctx, env, a.AvID, a.KeyID)
	},
	Check: checkSetOptions,
},
	Execute: func(ctx context.Context, env *tools.Env, a setOptionsArgs, st optState) (tools.Payload, optState, error) {
		want, removed := a.wanted(*st.Key), a.removedOptions(*st.Key)
		var ops []siyuan.Operation
		for _, name := range removed {
			ops = append(ops, siyuan.RemoveAttrViewColOptionOp(a.AvID, a.KeyID, name))
		}
		if len(want) > 0 {
			ops = append(ops, siyuan.UpdateAttrViewColOptionsOp(a.AvID, a.KeyID, want), siyuan.UpdateAttrViewColOptionsOp(a.AvID, a.KeyID, want))
		}
		if len(ops) > 0 {
			if _, err := env.Kernel.Transactions(ctx, []siyuan.Transaction{{DoOperations: ops}}); err != nil {
				return nil, st, tools.WriteFailure(err, false)
			}
		}
		names := make([]string, 0, len(want))
		for _, o := range want {
			names = append(names, o.Name)
		}
		return tools.Payload{"avID": a.AvID, "keyID": a.KeyID, "options": names, "removed": removed}, st, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a setOptionsArgs, _ tools.Payload, before optState) (any, error) {
		want, removed := a.wanted(*before.Key), a.removedOptions(*before.Key)
		var after optState
		_, err := tools.Await(ctx, func(ctx context.Context) (optState, error) {
			st, err := readOptState(ctx, env, a.AvID, a.KeyID)
			after = st
			return st, err
		}, func(st optState) error { return optionsSet(a, before, st, want, removed) })
		if err != nil {
			return nil, err
		}
		return after, nil
	},
}

// optionsSet requires exactly the list, the removed options gone from the
// column's cells and from the filters on it, and nothing else changed.
func optionsSet(a setOptionsArgs, before, st optState, want []*siyuan.AVSelectOption, removed []string) error {
	if st.Missing || st.Key == nil {
		return fmt.Errorf("database %s shows no column %s", a.AvID, a.KeyID)
	}
	got := st.Key.Options
	if len(got) != len(want) {
		return fmt.Errorf("column %s has %d options, want %d", a.KeyID, len(got), len(want))
	}
	for i, o := range want {
		if got[i] == nil || *got[i] != *o {
			return fmt.Errorf("column %s's option %d is %+v, want %+v", a.KeyID, i, got[i], o)
		}
	}
	exp := before.db.clone()
	for i := range exp.Keys {
		if exp.Keys[i].ID == a.KeyID {
			exp.Keys[i].Options = st.Key.Options
		}
	}
	for i := range exp.Rows {
		if c := exp.Rows[i].Cells[a.KeyID]; c != nil {
			c.MSelect = slices.DeleteFunc(c.MSelect, func(o *siyuan.AVValueSelect) bool { return o != nil && slices.Contains(removed, o.Content) })
			if len(c.MSelect) == 0 {
				c.MSelect = nil
			}
		}
	}
	for i := range exp.Views {
		fs := exp.Views[i].Filters
		for _, name := range removed {
			fs = dropOptionFilters(fs, a.KeyID, name)
		}
		if len(removed) > 0 && len(fs) == 0 {
			fs = []*siyuan.AVViewFilter{{Combination: "and"}}
		}
		exp.Views[i].Filters = fs
	}
	if !same(exp, st.db) {
		return fmt.Errorf("database %s changed beyond the options of column %s", a.AvID, a.KeyID)
	}
	return nil
}

// dropOptionFilters is what SiYuan does to filters when an option goes:
// the option leaves every select or mSelect leaf on the column (but "Is
// empty" and "Is not empty"), a leaf left without one goes, and so does a
// group left empty.
func dropOptionFilters(fs []*siyuan.AVViewFilter, column, name string) []*siyuan.AVViewFilter {
	var out []*siyuan.AVViewFilter
	for _, f := range fs {
		if f == nil {
			continue
		}
		if f.Combination != "" || len(f.Filters) > 0 {
			if kids := dropOptionFilters(f.Filters, column, name); len(kids) > 0 {
				f.Filters = kids
				out = append(out, f)
			}
			continue
		}
		if f.Column != column || f.Value == nil || (f.Value.Type != siyuan.AVKeySelect && f.Value.Type != siyuan.AVKeyMSelect) ||
			f.Operator == "Is empty" || f.Operator == "Is not empty" {
			out = append(out, f)
			continue
		}
		f.Value.MSelect = slices.DeleteFunc(f.Value.MSelect, func(o *siyuan.AVValueSelect) bool { return o != nil && o.Content == name })
		if len(f.Value.MSelect) > 0 {
			out = append(out, f)
		}
	}
	return out
}
