package av

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// ---- set_filters ----------------------------------------------------------

// filterOperators, filterQuantifiers and filterValueTypes are what a
// filter leaf may say (SiYuan 3.7.3's av.FilterOperator and value types).
var (
	filterOperators = []string{"=", "!=", ">", ">=", "<", "<=", "Contains", "Does not contains", "Is empty", "Is not empty",
		"Starts with", "Ends with", "Is between", "Is true", "Is false"}
	filterQuantifiers = []string{"Any", "All", "None"}
	filterValueTypes  = []string{"block", "text", "number", "date", "select", "mSelect", "url", "email", "phone", "mAsset",
		"template", "created", "updated", "checkbox", "relation", "rollup"}
)

// maxFilterLevels is how many levels of groups a filter tree may have,
// counting the root group (SiYuan's MaxFilterNestingDepth, 3, below it).
const maxFilterLevels = 4

// maxViewRules bounds the rules (filter nodes, sorts) of one call.
const maxViewRules = 100

type setFiltersArgs struct {
	viewArgs
	Given []map[string]any       `arg:"filters" help:"the complete filter tree replacing the view's: leaves {column, operator, value (a typed SiYuan value or null), quantifier?, relativeDate?, relativeDate2?} and groups {combination: and|or, filters}; groups nest at most 4 levels (the root counts); [] clears" required:""`
	Tree  []*siyuan.AVViewFilter // checked, as sent
	Want  []*siyuan.AVViewFilter // as SiYuan stores it
}

type relDate struct {
	Count     *int `json:"count"`
	Unit      *int `json:"unit"`
	Direction *int `json:"direction"`
}

// parseFilter checks one node of a filter tree at path.
func parseFilter(path string, m map[string]any, count *int) (*siyuan.AVViewFilter, error) {
	if *count++; *count > maxViewRules {
		return nil, failure.Invalid("filters: more than %d nodes", maxViewRules)
	}
	_, isGroup := m["combination"]
	if _, ok := m["filters"]; ok {
		isGroup = true
	}
	if isGroup {
		var g struct {
			Combination string           `json:"combination"`
			Filters     []map[string]any `json:"filters"`
		}
		if err := decodeStrict(path, m, &g); err != nil {
			return nil, failure.Invalid("%s (a group takes combination and filters only)", err.Error())
		}
		if g.Combination != "and" && g.Combination != "or" {
			return nil, failure.Invalid("%s.combination must be and or or", path)
		}
		out := &siyuan.AVViewFilter{Combination: g.Combination}
		for i, c := range g.Filters {
			f, err := parseFilter(fmt.Sprintf("%s.filters[%d]", path, i), c, count)
			if err != nil {
				return nil, err
			}
			out.Filters = append(out.Filters, f)
		}
		return out, nil
	}
	var l struct {
		Column        string          `json:"column"`
		Operator      string          `json:"operator"`
		Quantifier    string          `json:"quantifier"`
		Value         json.RawMessage `json:"value"`
		RelativeDate  *relDate        `json:"relativeDate"`
		RelativeDate2 *relDate        `json:"relativeDate2"`
	}
	if err := decodeStrict(path, m, &l); err != nil {
		return nil, err
	}
	if l.Column == "" {
		return nil, failure.Invalid("%s.column is missing (a column's key ID)", path)
	}
	if !slices.Contains(filterOperators, l.Operator) {
		return nil, failure.Invalid("%s.operator %q is not one of %s", path, l.Operator, strings.Join(filterOperators, ", "))
	}
	if l.Quantifier != "" && !slices.Contains(filterQuantifiers, l.Quantifier) {
		return nil, failure.Invalid("%s.quantifier must be Any, All or None", path)
	}
	out := &siyuan.AVViewFilter{Column: l.Column, Operator: l.Operator, Qualifier: l.Quantifier}
	if len(l.Value) > 0 && string(l.Value) != "null" {
		var v siyuan.AVValue
		dec := json.NewDecoder(strings.NewReader(string(l.Value)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			return nil, failure.Invalid("%s.value: %s", path, strings.TrimPrefix(err.Error(), "json: "))
		}
		if !slices.Contains(filterValueTypes, v.Type) {
			return nil, failure.Invalid("%s.value.type %q is not a SiYuan value type", path, v.Type)
		}
		out.Value = &v
	}
	for _, rd := range []struct {
		name string
		d    *relDate
		to   *json.RawMessage
	}{{"relativeDate", l.RelativeDate, &out.RelativeDate}, {"relativeDate2", l.RelativeDate2, &out.RelativeDate2}} {
		if rd.d == nil {
			continue
		}
		d := rd.d
		if d.Count == nil || d.Unit == nil || d.Direction == nil {
			return nil, failure.Invalid("%s.%s needs count, unit and direction", path, rd.name)
		}
		if *d.Unit < 0 || *d.Unit > 3 {
			return nil, failure.Invalid("%s.%s.unit must be 0 (day), 1 (week), 2 (month) or 3 (year)", path, rd.name)
		}
		if *d.Direction < -1 || *d.Direction > 1 {
			return nil, failure.Invalid("%s.%s.direction must be -1, 0 or 1", path, rd.name)
		}
		enc, _ := json.Marshal(map[string]int{"count": *d.Count, "unit": *d.Unit, "direction": *d.Direction})
		*rd.to = enc
	}
	return out, nil
}

// storedFilters is a filter list as SiYuan stores it: one root group
// (a list that is not one group is put in an and group).
func storedFilters(l []*siyuan.AVViewFilter) []*siyuan.AVViewFilter {
	if len(l) == 1 && (l[0].Combination != "" || len(l[0].Filters) > 0) {
		return l
	}
	return []*siyuan.AVViewFilter{{Combination: "and", Filters: l}}
}

// groupLevels is how many levels of groups f holds (f counted).
func groupLevels(f *siyuan.AVViewFilter) int {
	if f.Combination == "" && len(f.Filters) == 0 {
		return 0
	}
	deepest := 0
	for _, c := range f.Filters {
		deepest = max(deepest, groupLevels(c))
	}
	return deepest + 1
}

func parseSetFilters(a *setFiltersArgs) error {
	a.Tree = []*siyuan.AVViewFilter{}
	count := 0
	for i, m := range a.Given {
		f, err := parseFilter(fmt.Sprintf("filters[%d]", i), m, &count)
		if err != nil {
			return err
		}
		a.Tree = append(a.Tree, f)
	}
	a.Want = storedFilters(a.Tree)
	if groupLevels(a.Want[0]) > maxFilterLevels {
		return failure.Invalid("filters nest groups more than %d levels deep (the root group counts)", maxFilterLevels)
	}
	return nil
}

// filterColumns calls fn with every leaf's path and column.
func filterColumns(path string, l []*siyuan.AVViewFilter, fn func(path, column string) error) error {
	for i, f := range l {
		p := fmt.Sprintf("%s[%d]", path, i)
		if f.Combination != "" || len(f.Filters) > 0 {
			if err := filterColumns(p+".filters", f.Filters, fn); err != nil {
				return err
			}
			continue
		}
		if err := fn(p+".column", f.Column); err != nil {
			return err
		}
	}
	return nil
}

// canonicalJSON is v through JSON and back (objects' keys sorted), so
// that a stored form and a sent one compare equal whatever their spacing
// and key order.
func canonicalJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	var x any
	if json.Unmarshal(b, &x) != nil {
		return ""
	}
	b, _ = json.Marshal(x)
	return string(b)
}

var setFilters = tools.Write[setFiltersArgs, viewsState]{
	Name: "set_filters", Summary: "replace the complete filter tree of the view a database block shows", Policy: guarded,
	Example: map[string]any{"avID": "20260812120000-abcdefg", "blockID": "20260812120000-hijklmn", "viewID": "20260812120000-opqrstu",
		"filters": []any{map[string]any{"column": "20260812120000-vwxyzab", "operator": "Contains", "value": map[string]any{"type": "text", "text": map[string]any{"content": "x"}}}}, "validateOnly": true},
	Validate: parseSetFilters,
	Scope:    viewScope(func(a setFiltersArgs) viewArgs { return a.viewArgs }),
	Targets:  func(a setFiltersArgs) []string { return []string{a.AvID} },
	State: func(ctx context.Context, env *tools.Env, a setFiltersArgs) (viewsState, error) {
		return readViewsState(ctx, env, a.AvID, a.BlockID, a.ViewID, partFilters)
	},
	Check: func(a setFiltersArgs, st viewsState) error {
		if err := checkCarrier(a.viewArgs, st); err != nil {
			return err
		}
		return filterColumns("filters", a.Tree, func(path, column string) error { return checkColumn(st, path, column) })
	},
	Execute: func(ctx context.Context, env *tools.Env, a setFiltersArgs, _ viewsState) (tools.Payload, error) {
		if err := sendViewOps(ctx, env, siyuan.SetAttrViewFiltersOp(a.AvID, a.BlockID, a.Tree)); err != nil {
			return nil, err
		}
		return tools.Payload{"avID": a.AvID, "blockID": a.BlockID, "viewID": a.ViewID}, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a setFiltersArgs, _ tools.Payload) (any, error) {
		want := canonicalJSON(a.Want)
		return awaitView(ctx, env, a.viewArgs, partFilters, func(st viewsState) error {
			if canonicalJSON(st.View.Filters) != want {
				return fmt.Errorf("view %s does not hold the filters sent", a.ViewID)
			}
			return nil
		})
	},
}

// ---- set_sorts ------------------------------------------------------------

type setSortsArgs struct {
	viewArgs
	Given []map[string]any `arg:"sorts" help:"the complete sorts replacing the view's, first sorts first: [{column, order: ASC|DESC}]; [] clears" required:""`
	Sorts []*siyuan.AVViewSort
}

func parseSetSorts(a *setSortsArgs) error {
	if len(a.Given) > maxViewRules {
		return failure.Invalid("sorts: more than %d rules", maxViewRules)
	}
	a.Sorts = []*siyuan.AVViewSort{}
	for i, m := range a.Given {
		path := fmt.Sprintf("sorts[%d]", i)
		var s siyuan.AVViewSort
		if err := decodeStrict(path, m, &s); err != nil {
			return err
		}
		if s.Column == "" {
			return failure.Invalid("%s.column is missing (a column's key ID)", path)
		}
		if s.Order != "ASC" && s.Order != "DESC" {
			return failure.Invalid("%s.order must be ASC or DESC", path)
		}
		if j := slices.IndexFunc(a.Sorts, func(o *siyuan.AVViewSort) bool { return o.Column == s.Column }); j >= 0 {
			return failure.Invalid("%s.column repeats sorts[%d]'s", path, j)
		}
		a.Sorts = append(a.Sorts, &s)
	}
	return nil
}

var setSorts = tools.Write[setSortsArgs, viewsState]{
	Name: "set_sorts", Summary: "replace the complete sorts of the view a database block shows", Policy: guarded,
	Example: map[string]any{"avID": "20260812120000-abcdefg", "blockID": "20260812120000-hijklmn", "viewID": "20260812120000-opqrstu",
		"sorts": []any{map[string]any{"column": "20260812120000-vwxyzab", "order": "DESC"}}, "validateOnly": true},
	Validate: parseSetSorts,
	Scope:    viewScope(func(a setSortsArgs) viewArgs { return a.viewArgs }),
	Targets:  func(a setSortsArgs) []string { return []string{a.AvID} },
	State: func(ctx context.Context, env *tools.Env, a setSortsArgs) (viewsState, error) {
		return readViewsState(ctx, env, a.AvID, a.BlockID, a.ViewID, partSorts)
	},
	Check: func(a setSortsArgs, st viewsState) error {
		if err := checkCarrier(a.viewArgs, st); err != nil {
			return err
		}
		for i, s := range a.Sorts {
			if err := checkColumn(st, fmt.Sprintf("sorts[%d].column", i), s.Column); err != nil {
				return err
			}
		}
		return nil
	},
	Execute: func(ctx context.Context, env *tools.Env, a setSortsArgs, _ viewsState) (tools.Payload, error) {
		if err := sendViewOps(ctx, env, siyuan.SetAttrViewSortsOp(a.AvID, a.BlockID, a.Sorts)); err != nil {
			return nil, err
		}
		return tools.Payload{"avID": a.AvID, "blockID": a.BlockID, "viewID": a.ViewID, "sortCount": len(a.Sorts)}, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a setSortsArgs, _ tools.Payload) (any, error) {
		want := canonicalJSON(a.Sorts)
		return awaitView(ctx, env, a.viewArgs, partSorts, func(st viewsState) error {
			got := st.View.Sorts
			if got == nil {
				got = []*siyuan.AVViewSort{}
			}
			if canonicalJSON(got) != want {
				return fmt.Errorf("view %s does not hold the sorts sent", a.ViewID)
			}
			return nil
		})
	},
}

// ---- set_group ------------------------------------------------------------

type setGroupArgs struct {
	viewArgs
	Given map[string]any `arg:"group" help:"{field (a column's key ID; \"\" clears), method (0 value, 1 number range, 2 relative date, 3 day, 4 week, 5 month, 6 year), range? {numStart, numEnd, numStep} (method 1 needs it), order (0 ascending, 1 descending, 2 manual, 3 select options), hideEmpty}" required:""`
	Group viewGroup
}

func parseSetGroup(a *setGroupArgs) error {
	var g struct {
		Field     *string     `json:"field"`
		Method    *int        `json:"method"`
		Range     *groupRange `json:"range"`
		Order     *int        `json:"order"`
		HideEmpty *bool       `json:"hideEmpty"`
	}
	if err := decodeStrict("group", a.Given, &g); err != nil {
		return err
	}
	switch {
	case g.Field == nil:
		return failure.Invalid("group.field is missing (a column's key ID, or \"\" to clear)")
	case g.Method == nil || *g.Method < 0 || *g.Method > 6:
		return failure.Invalid("group.method must be an integer 0-6")
	case g.Order == nil || *g.Order < 0 || *g.Order > 3:
		return failure.Invalid("group.order must be an integer 0-3")
	case g.HideEmpty == nil:
		return failure.Invalid("group.hideEmpty is missing (true or false)")
	case *g.Method == 1 && g.Range == nil && *g.Field != "":
		return failure.Invalid("group.range {numStart, numEnd, numStep} is needed by method 1 (number range)")
	case g.Range != nil && g.Range.NumStep <= 0:
		return failure.Invalid("group.range.numStep must be greater than 0")
	case g.Range != nil && g.Range.NumEnd < g.Range.NumStart:
		return failure.Invalid("group.range.numEnd must not be less than numStart")
	}
	if *g.Field != "" {
		if err := tools.CheckID("group.field", *g.Field); err != nil {
			return err
		}
	}
	a.Group = viewGroup{Field: *g.Field, Method: *g.Method, Range: g.Range, Order: *g.Order, HideEmpty: *g.HideEmpty}
	return nil
}

// storedGroup is the grouping SiYuan stores when group replaces before on
// a view: grouping a select or multi-select column anew orders its groups
// by the options (3), a checkbox column manually (2).
func storedGroup(st viewsState, before *viewGroup, g viewGroup) viewGroup {
	if before != nil && before.Field == g.Field {
		return g
	}
	if k, ok := st.key(g.Field); ok {
		switch k.Type {
		case siyuan.AVKeySelect, siyuan.AVKeyMSelect:
			g.Order = 3
		case siyuan.AVKeyCheckbox:
			g.Order = 2
		}
	}
	return g
}

var setGroup = tools.WriteWith[setGroupArgs, viewsState, viewsState]{Write: tools.Write[setGroupArgs, viewsState]{
	Name: "set_group", Summary: "set or clear the grouping of the view a database block shows", Policy: guarded,
	Example: map[string]any{"avID": "20260812120000-abcdefg", "blockID": "20260812120000-hijklmn", "viewID": "20260812120000-opqrstu",
		"group": map[string]any{"field": "20260812120000-vwxyzab", "method": 0, "order": 0, "hideEmpty": false}, "validateOnly": true},
	Validate: parseSetGroup,
	Scope:    viewScope(func(a setGroupArgs) viewArgs { return a.viewArgs }),
	Targets:  func(a setGroupArgs) []string { return []string{a.AvID} },
	State: func(ctx context.Context, env *tools.Env, a setGroupArgs) (viewsState, error) {
		return readViewsState(ctx, env, a.AvID, a.BlockID, a.ViewID, partGroup)
	},
	Check: func(a setGroupArgs, st viewsState) error {
		if err := checkCarrier(a.viewArgs, st); err != nil {
			return err
		}
		if a.Group.Field == "" {
			return nil
		}
		k, ok := st.key(a.Group.Field)
		if !ok {
			return failure.New(failure.NotFound, "group.field: database %s has no column %s", a.AvID, a.Group.Field)
		}
		switch m := a.Group.Method; {
		case m == 1 && k.Type != siyuan.AVKeyNumber:
			return failure.Invalid("group.method 1 (number range) needs a number column; %s is %s", k.ID, k.Type)
		case m >= 2 && k.Type != siyuan.AVKeyDate && k.Type != siyuan.AVKeyCreated && k.Type != siyuan.AVKeyUpdated:
			return failure.Invalid("group.method %d groups dates; column %s is %s", m, k.ID, k.Type)
		}
		return nil
	},
},
	Execute: func(ctx context.Context, env *tools.Env, a setGroupArgs, st viewsState) (tools.Payload, viewsState, error) {
		op := siyuan.Operation{Action: "setAttrViewGroup", AvID: a.AvID, BlockID: a.BlockID, Data: a.Group}
		if err := sendViewOps(ctx, env, op); err != nil {
			return nil, st, err
		}
		return tools.Payload{"avID": a.AvID, "blockID": a.BlockID, "viewID": a.ViewID, "field": a.Group.Field}, st, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a setGroupArgs, p tools.Payload, before viewsState) (any, error) {
		var prior *viewGroup
		if before.View != nil {
			prior = before.View.Group
		}
		want := storedGroup(before, prior, a.Group)
		st, err := awaitView(ctx, env, a.viewArgs, partGroup, func(st viewsState) error {
			if st.View.Group == nil || canonicalJSON(*st.View.Group) != canonicalJSON(want) {
				return fmt.Errorf("view %s is not grouped as sent", a.ViewID)
			}
			return nil
		})
		if err == nil && want.Order != a.Group.Order {
			p["order"] = want.Order // SiYuan's rule for select and checkbox columns
		}
		return st, err
	},
}

// ---- set_column_visibility --------------------------------------------------

type setColumnVisibilityArgs struct {
	viewArgs
	KeyID  string `arg:"keyID" help:"the column (key ID) to hide or show in that view" id:"" required:""`
	Hidden bool   `arg:"hidden" help:"true hides the column in the view, false shows it" required:""`
}

// fieldIndex is the index of a key among a view's fields (-1 if absent).
func fieldIndex(fields []viewField, id string) int {
	return slices.IndexFunc(fields, func(f viewField) bool { return f.ID == id })
}

var setColumnVisibility = tools.Write[setColumnVisibilityArgs, viewsState]{
	Name: "set_column_visibility", Summary: "hide or show one column in the view a database block shows", Policy: guarded,
	Example: map[string]any{"avID": "20260812120000-abcdefg", "blockID": "20260812120000-hijklmn", "viewID": "20260812120000-opqrstu",
		"keyID": "20260812120000-vwxyzab", "hidden": true, "validateOnly": true},
	Scope:   viewScope(func(a setColumnVisibilityArgs) viewArgs { return a.viewArgs }),
	Targets: func(a setColumnVisibilityArgs) []string { return []string{a.AvID} },
	State: func(ctx context.Context, env *tools.Env, a setColumnVisibilityArgs) (viewsState, error) {
		return readViewsState(ctx, env, a.AvID, a.BlockID, a.ViewID, partFields)
	},
	Check: func(a setColumnVisibilityArgs, st viewsState) error {
		if err := checkCarrier(a.viewArgs, st); err != nil {
			return err
		}
		if fieldIndex(st.View.Fields, a.KeyID) < 0 {
			return failure.New(failure.NotFound, "keyID %s: view %s has no such column", a.KeyID, a.ViewID)
		}
		return nil
	},
	Execute: func(ctx context.Context, env *tools.Env, a setColumnVisibilityArgs, _ viewsState) (tools.Payload, error) {
		if err := sendViewOps(ctx, env, siyuan.SetAttrViewColHiddenOp(a.AvID, a.BlockID, a.KeyID, a.Hidden)); err != nil {
			return nil, err
		}
		return tools.Payload{"avID": a.AvID, "blockID": a.BlockID, "viewID": a.ViewID, "keyID": a.KeyID, "hidden": a.Hidden}, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a setColumnVisibilityArgs, _ tools.Payload) (any, error) {
		return awaitView(ctx, env, a.viewArgs, partFields, func(st viewsState) error {
			i := fieldIndex(st.View.Fields, a.KeyID)
			if i < 0 || st.View.Fields[i].Hidden != a.Hidden {
				return fmt.Errorf("column %s of view %s is not hidden=%t", a.KeyID, a.ViewID, a.Hidden)
			}
			return nil
		})
	},
}

// ---- set_column_order -------------------------------------------------------

type setColumnOrderArgs struct {
	viewArgs
	KeyIDs []string `arg:"keyIDs" help:"every column (key ID) of the view, in the new order" id:"" required:""`
}

func ids(fields []viewField) []string {
	out := make([]string, 0, len(fields))
	for _, f := range fields {
		out = append(out, f.ID)
	}
	return out
}

var setColumnOrder = tools.Write[setColumnOrderArgs, viewsState]{
	Name: "set_column_order", Summary: "put the columns of the view a database block shows in a complete new order", Policy: guarded,
	Example: map[string]any{"avID": "20260812120000-abcdefg", "blockID": "20260812120000-hijklmn", "viewID": "20260812120000-opqrstu",
		"keyIDs": []string{"20260812120000-vwxyzab", "20260812120000-cdefghi"}, "validateOnly": true},
	Validate: func(a *setColumnOrderArgs) error {
		if len(a.KeyIDs) == 0 {
			return failure.Invalid("keyIDs is empty: give every column of the view")
		}
		for i, id := range a.KeyIDs {
			if j := slices.Index(a.KeyIDs[:i], id); j >= 0 {
				return failure.Invalid("keyIDs[%d] repeats keyIDs[%d] (%s)", i, j, id)
			}
		}
		return nil
	},
	Scope:   viewScope(func(a setColumnOrderArgs) viewArgs { return a.viewArgs }),
	Targets: func(a setColumnOrderArgs) []string { return []string{a.AvID} },
	State: func(ctx context.Context, env *tools.Env, a setColumnOrderArgs) (viewsState, error) {
		return readViewsState(ctx, env, a.AvID, a.BlockID, a.ViewID, partFields)
	},
	Check: func(a setColumnOrderArgs, st viewsState) error {
		if err := checkCarrier(a.viewArgs, st); err != nil {
			return err
		}
		have := ids(st.View.Fields)
		for i, id := range a.KeyIDs {
			if !slices.Contains(have, id) {
				return failure.New(failure.NotFound, "keyIDs[%d]: view %s has no column %s", i, a.ViewID, id)
			}
		}
		if len(a.KeyIDs) != len(have) {
			var left []string
			for _, id := range have {
				if !slices.Contains(a.KeyIDs, id) {
					left = append(left, id)
				}
			}
			return failure.Invalid("keyIDs must list every column of view %s; missing: %s", a.ViewID, strings.Join(left, ", "))
		}
		return nil
	},
	Execute: func(ctx context.Context, env *tools.Env, a setColumnOrderArgs, _ viewsState) (tools.Payload, error) {
		// Each column in turn after the one before it: the transaction
		// ends in exactly the order given.
		ops := make([]siyuan.Operation, 0, len(a.KeyIDs))
		prev := ""
		for _, id := range a.KeyIDs {
			ops = append(ops, siyuan.SortAttrViewColOp(a.AvID, a.BlockID, id, prev))
			prev = id
		}
		if err := sendViewOps(ctx, env, ops...); err != nil {
			return nil, err
		}
		return tools.Payload{"avID": a.AvID, "blockID": a.BlockID, "viewID": a.ViewID, "columnCount": len(a.KeyIDs)}, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a setColumnOrderArgs, _ tools.Payload) (any, error) {
		return awaitView(ctx, env, a.viewArgs, partFields, func(st viewsState) error {
			if !slices.Equal(ids(st.View.Fields), a.KeyIDs) {
				return fmt.Errorf("the columns of view %s are not in the order sent", a.ViewID)
			}
			return nil
		})
	},
}

// ---- add_view ---------------------------------------------------------------

type viewLayout string

func (viewLayout) ArgEnum() []string { return []string{"table", "gallery", "kanban"} }

type addViewArgs struct {
	AvID    string     `arg:"avID" help:"the database" id:"" required:""`
	BlockID string     `arg:"blockID" help:"the database block (carrier) showing avID; it shows the new view after" id:"" required:""`
	ViewID  string     `arg:"viewID" help:"add_view: the new view's ID, chosen before the preflight (a SiYuan ID no view of the database has)" id:"" required:""`
	Layout  viewLayout `arg:"layout" help:"the new view's layout; a kanban groups by the first select column (SiYuan adds one when there is none)" required:""`
	Name    string     `arg:"name" help:"add_view: the new view's name (trimmed; 1-255 characters)" required:""`
}

func (a addViewArgs) name() string { return strings.TrimSpace(a.Name) }

var addView = tools.Write[addViewArgs, viewsState]{
	Name: "add_view", Summary: "add a named table, gallery or kanban view (the first view's columns and row order), shown by the database block", Policy: guarded,
	Example: map[string]any{"avID": "20260812120000-abcdefg", "blockID": "20260812120000-hijklmn", "viewID": "20260812120000-opqrstu",
		"layout": "gallery", "name": "Cards", "validateOnly": true},
	Validate: func(a *addViewArgs) error {
		if n := utf8.RuneCountInString(a.name()); n == 0 || n > 255 {
			return failure.Invalid("name must have 1-255 characters once trimmed")
		}
		return nil
	},
	Scope:   viewScope(func(a addViewArgs) viewArgs { return viewArgs{AvID: a.AvID, BlockID: a.BlockID} }),
	Targets: func(a addViewArgs) []string { return []string{a.AvID} },
	State: func(ctx context.Context, env *tools.Env, a addViewArgs) (viewsState, error) {
		return readViewsState(ctx, env, a.AvID, a.BlockID, "", partViews)
	},
	Check: func(a addViewArgs, st viewsState) error {
		switch {
		case st.Missing:
			return failure.Missing("database", a.AvID)
		case !st.Carries:
			return failure.Invalid("block %s does not show database %s", a.BlockID, a.AvID)
		case len(st.Views) == 0:
			return failure.Invalid("database %s has no view to copy columns from; SiYuan would add none", a.AvID)
		case slices.ContainsFunc(st.Views, func(v viewListItem) bool { return v.ID == a.ViewID }):
			e := failure.Invalid("viewID %s is already a view of database %s", a.ViewID, a.AvID)
			e.Action = "choose a new ID for the view"
			return e
		}
		return nil
	},
	Stages: &tools.Stages[addViewArgs, viewsState]{
		Reserve: func(a addViewArgs, st viewsState) (map[string]string, error) {
			return map[string]string{"view": a.ViewID, "viewCount": strconv.Itoa(len(st.Views))}, nil
		},
		Steps: func(addViewArgs) []tools.Step[addViewArgs] {
			return []tools.Step[addViewArgs]{{
				Name: "view",
				// Not Redo: SiYuan adds a view with an ID that exists
				// as a second one.
				Do: func(ctx context.Context, env *tools.Env, a addViewArgs, _ map[string]string) (map[string]string, error) {
					return nil, sendViewOps(ctx, env,
						siyuan.AddAttrViewViewOp(a.AvID, a.ViewID, a.BlockID, string(a.Layout)),
						siyuan.SetAttrViewViewNameOp(a.AvID, a.ViewID, a.name()))
				},
				Present: func(ctx context.Context, env *tools.Env, a addViewArgs, _ map[string]string) (bool, error) {
					return tools.Poll(ctx, func() (bool, error) {
						st, err := readViewsState(ctx, env, a.AvID, a.BlockID, "", partViews)
						if err != nil {
							return false, err
						}
						return slices.ContainsFunc(st.Views, func(v viewListItem) bool { return v.ID == a.ViewID }), nil
					})
				},
			}}
		},
		Receipt: func(a addViewArgs, ids map[string]string, done []string) tools.Payload {
			n, _ := strconv.Atoi(ids["viewCount"])
			return tools.Payload{"avID": a.AvID, "blockID": a.BlockID, "viewID": ids["view"], "layout": string(a.Layout),
				"viewCountBefore": n, "stage": last(done)}
		},
	},
	Readback: func(ctx context.Context, env *tools.Env, a addViewArgs, p tools.Payload) (any, error) {
		before, err := tools.PayloadKey[int](p, "viewCountBefore")
		if err != nil {
			return nil, err
		}
		return tools.Await(ctx, func(ctx context.Context) (viewsState, error) {
			return readViewsState(ctx, env, a.AvID, a.BlockID, "", partViews)
		}, func(st viewsState) error {
			i := slices.IndexFunc(st.Views, func(v viewListItem) bool { return v.ID == a.ViewID })
			switch {
			case st.Missing:
				return fmt.Errorf("database %s is gone", a.AvID)
			case i < 0:
				return fmt.Errorf("database %s has no view %s", a.AvID, a.ViewID)
			case len(st.Views) != before+1 || i != before:
				return fmt.Errorf("database %s has %d views, the new one at %d; want %d, last", a.AvID, len(st.Views), i+1, before+1)
			case st.Views[i].Type != string(a.Layout) || st.Views[i].Name != a.name():
				return fmt.Errorf("view %s is a %s named %q, want a %s named %q", a.ViewID, st.Views[i].Type, st.Views[i].Name, a.Layout, a.name())
			case st.Attr != a.ViewID:
				return fmt.Errorf("block %s does not show view %s", a.BlockID, a.ViewID)
			}
			return nil
		})
	},
}
