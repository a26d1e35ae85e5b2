package av

import (
	"context"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// view is the ID of the fixture database's view its block shows.
func (s *fix) view(t *testing.T) string {
	t.Helper()
	st, err := readViewsState(context.Background(), &tools.Env{Kernel: s.C}, s.db.AV, s.db.Block, "", partViews)
	if err != nil || st.Shown == "" {
		t.Fatalf("shown view: %+v, %v", st, err)
	}
	return st.Shown
}

func (s *fix) viewOp(t *testing.T, ops ...siyuan.Operation) {
	t.Helper()
	if _, err := s.C.Transactions(context.Background(), []siyuan.Transaction{{DoOperations: ops}}); err != nil {
		t.Fatal(err)
	}
}

// stored is the fixture database's view by ID, as stored.
func (s *fix) stored(t *testing.T, viewID string) *siyuan.AVView {
	t.Helper()
	av, err := s.C.GetAttributeView(context.Background(), s.db.AV)
	if err != nil || av == nil {
		t.Fatalf("database: %v", err)
	}
	for _, v := range av.Views {
		if v.ID == viewID {
			return v
		}
	}
	t.Fatalf("no view %s", viewID)
	return nil
}

func textFilter(column, content string) map[string]any {
	return map[string]any{"column": column, "operator": "Contains", "value": map[string]any{"type": "text", "text": map[string]any{"content": content}}}
}

// TestViewWrites: each view-shaping write's preflight, commit (exactly the
// change asked for), replay (nothing done twice) and stale commit.
func TestViewWrites(t *testing.T) {
	type tc struct {
		name  string
		args  func(s *fix, view, fresh string) map[string]any
		check func(t *testing.T, s *fix, view, fresh string, res map[string]any)
		drift func(t *testing.T, s *fix, view string)
	}
	at := func(action string, s *fix, view string, kv ...any) map[string]any {
		m := map[string]any{"action": action, "avID": s.db.AV, "blockID": s.db.Block, "viewID": view}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	cases := []tc{
		{"set_filters", func(s *fix, view, _ string) map[string]any {
			return at("set_filters", s, view, "filters", []any{map[string]any{"combination": "or", "filters": []any{
				textFilter(s.text, "a"), map[string]any{"combination": "and", "filters": []any{textFilter(s.text, "b")}}}}})
		}, func(t *testing.T, s *fix, view, _ string, _ map[string]any) {
			f := s.stored(t, view).Filters
			if len(f) != 1 || f[0].Combination != "or" || len(f[0].Filters) != 2 || f[0].Filters[1].Filters[0].Value.Text.Content != "b" {
				t.Fatalf("filters %s", canonicalJSON(f))
			}
		}, func(t *testing.T, s *fix, _ string) {
			s.viewOp(t, siyuan.SetAttrViewFiltersOp(s.db.AV, s.db.Block, []*siyuan.AVViewFilter{{Column: s.text, Operator: "Is empty"}}))
		}},
		{"set_sorts", func(s *fix, view, _ string) map[string]any {
			return at("set_sorts", s, view, "sorts", []any{map[string]any{"column": s.text, "order": "DESC"}, map[string]any{"column": s.db.Primary, "order": "ASC"}})
		}, func(t *testing.T, s *fix, view, _ string, _ map[string]any) {
			if got := canonicalJSON(s.stored(t, view).Sorts); !strings.Contains(got, `"DESC"`) || !strings.Contains(got, s.db.Primary) {
				t.Fatalf("sorts %s", got)
			}
		}, func(t *testing.T, s *fix, _ string) {
			s.viewOp(t, siyuan.SetAttrViewSortsOp(s.db.AV, s.db.Block, []*siyuan.AVViewSort{{Column: s.text, Order: "ASC"}}))
		}},
		{"set_column_visibility", func(s *fix, view, _ string) map[string]any {
			return at("set_column_visibility", s, view, "keyID", s.text, "hidden", true)
		}, func(t *testing.T, s *fix, view, _ string, _ map[string]any) {
			f := fieldsOf(s.stored(t, view))
			if i := fieldIndex(f, s.text); i < 0 || !f[i].Hidden {
				t.Fatalf("fields %+v", f)
			}
			for _, c := range f {
				if c.ID != s.text && c.Hidden {
					t.Fatalf("another column hid: %+v", f)
				}
			}
		}, func(t *testing.T, s *fix, _ string) {
			s.viewOp(t, siyuan.SetAttrViewColHiddenOp(s.db.AV, s.db.Block, s.db.Select, true))
		}},
		{"set_column_order", func(s *fix, view, _ string) map[string]any {
			return at("set_column_order", s, view, "keyIDs", []string{s.text, s.db.Primary, s.db.Select})
		}, func(t *testing.T, s *fix, view, _ string, _ map[string]any) {
			if got := ids(fieldsOf(s.stored(t, view))); strings.Join(got, ",") != strings.Join([]string{s.text, s.db.Primary, s.db.Select}, ",") {
				t.Fatalf("order %v", got)
			}
		}, func(t *testing.T, s *fix, _ string) {
			s.viewOp(t, siyuan.SortAttrViewColOp(s.db.AV, s.db.Block, s.db.Select, ""))
		}},
		{"set_group", func(s *fix, view, _ string) map[string]any {
			return at("set_group", s, view, "group", map[string]any{"field": s.db.Select, "method": 0, "order": 0, "hideEmpty": false})
		}, func(t *testing.T, s *fix, view, _ string, res map[string]any) {
			g := groupOf(s.stored(t, view))
			if g == nil || g.Field != s.db.Select || g.Order != 3 || res["order"] != float64(3) {
				t.Fatalf("group %+v, answer %v", g, res)
			}
		}, func(t *testing.T, s *fix, _ string) {
			s.viewOp(t, siyuan.Operation{Action: "setAttrViewGroup", AvID: s.db.AV, BlockID: s.db.Block, Data: viewGroup{Field: s.text}})
		}},
		{"add_view", func(s *fix, _, fresh string) map[string]any {
			m := at("add_view", s, fresh, "layout", "table", "name", "  Second ")
			return m
		}, func(t *testing.T, s *fix, _, fresh string, res map[string]any) {
			v := s.stored(t, fresh)
			if v.Name != "Second" || v.LayoutType != "table" || res["viewID"] != fresh {
				t.Fatalf("view %+v, answer %v", v, res)
			}
			if s.view(t) != fresh {
				t.Fatal("the block does not show the new view")
			}
		}, func(t *testing.T, s *fix, view string) {
			s.viewOp(t, siyuan.SetAttrViewViewNameOp(s.db.AV, view, "drift"))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newFix(t)
			fresh := tooltest.NewID()
			view := s.view(t)
			args := c.args(s, view, fresh)
			before := s.state(t)
			pre := s.Preflight(t, "av", args, "expectedStateHash", 1)
			if !same(s.state(t), before) {
				t.Fatal("the preflight wrote")
			}
			res := s.Commit(t, "av", args, pre)
			c.check(t, s, view, fresh, res)
			after := s.state(t)
			s.Replay(t, "av", args, pre, res)
			if !same(s.state(t), after) {
				t.Fatal("the replay wrote")
			}

			s2 := newFix(t)
			view2 := s2.view(t)
			args = c.args(s2, view2, tooltest.NewID())
			pre = s2.Preflight(t, "av", args, "expectedStateHash", 1)
			var drifted DBState
			s2.Drifted(t, "av", args, pre, func() { c.drift(t, s2, view2); drifted = s2.state(t) })
			if !same(s2.state(t), drifted) {
				t.Fatal("a state_changed commit wrote")
			}
		})
	}
}

// write preflights and commits a view write (a commit that changes
// nothing answers no_change).
func (s *fix) write(t *testing.T, args map[string]any) map[string]any {
	t.Helper()
	pre := s.OK(t, "av", tooltest.CopyArgs(args, "validateOnly", true))
	return s.OK(t, "av", tooltest.CommitArgs(args, pre))
}

// TestViewWritesAreExact: [] clears filters (the empty and root SiYuan
// stores) and sorts; leaves without a root are stored in an and group.
func TestViewWritesAreExact(t *testing.T) {
	s := newFix(t)
	view := s.view(t)
	base := map[string]any{"avID": s.db.AV, "blockID": s.db.Block, "viewID": view}
	s.write(t, tooltest.CopyArgs(base, "action", "set_filters", "filters", []any{textFilter(s.text, "x"), textFilter(s.db.Primary, "y")}))
	f := s.stored(t, view).Filters
	if len(f) != 1 || f[0].Combination != "and" || len(f[0].Filters) != 2 {
		t.Fatalf("filters %s", canonicalJSON(f))
	}
	s.write(t, tooltest.CopyArgs(base, "action", "set_filters", "filters", []any{}))
	if f := s.stored(t, view).Filters; len(f) != 1 || len(f[0].Filters) != 0 {
		t.Fatalf("cleared filters %s", canonicalJSON(f))
	}
	s.write(t, tooltest.CopyArgs(base, "action", "set_sorts", "sorts", []any{map[string]any{"column": s.text, "order": "ASC"}}))
	s.write(t, tooltest.CopyArgs(base, "action", "set_sorts", "sorts", []any{}))
	if got := s.stored(t, view).Sorts; len(got) != 0 {
		t.Fatalf("sorts %s", canonicalJSON(got))
	}
	// A column already where it is asked: no_change, nothing else moves.
	s.write(t, tooltest.CopyArgs(base, "action", "set_column_visibility", "keyID", s.text, "hidden", false))
}

// TestViewWriteRefusals: what the arguments or the state show wrong is
// refused at preflight, naming where.
func TestViewWriteRefusals(t *testing.T) {
	s := newFix(t)
	view := s.view(t)
	base := map[string]any{"avID": s.db.AV, "blockID": s.db.Block, "viewID": view, "validateOnly": true}
	deep := textFilter(s.text, "x")
	for range 5 {
		deep = map[string]any{"combination": "and", "filters": []any{deep}}
	}
	for _, c := range []struct {
		args map[string]any
		code failure.Code
		says string
	}{
		{tooltest.CopyArgs(base, "action", "set_filters", "filters", []any{map[string]any{"column": s.text, "operator": "Like"}}), failure.InvalidArguments, "filters[0].operator"},
		{tooltest.CopyArgs(base, "action", "set_filters", "filters", []any{map[string]any{"combination": "xor", "filters": []any{}}}), failure.InvalidArguments, "filters[0].combination"},
		{tooltest.CopyArgs(base, "action", "set_filters", "filters", []any{map[string]any{"combination": "and", "filters": []any{map[string]any{"column": s.text, "operator": "=", "bogus": 1}}}}), failure.InvalidArguments, "filters[0].filters[0]"},
		{tooltest.CopyArgs(base, "action", "set_filters", "filters", []any{map[string]any{"column": s.text, "operator": "=", "value": map[string]any{"type": "nope"}}}), failure.InvalidArguments, "filters[0].value.type"},
		{tooltest.CopyArgs(base, "action", "set_filters", "filters", []any{deep}), failure.InvalidArguments, "4 levels"},
		{tooltest.CopyArgs(base, "action", "set_filters", "filters", []any{textFilter(tooltest.NewID(), "x")}), failure.NotFound, "filters[0].column"},
		{tooltest.CopyArgs(base, "action", "set_sorts", "sorts", []any{map[string]any{"column": s.text, "order": "UP"}}), failure.InvalidArguments, "sorts[0].order"},
		{tooltest.CopyArgs(base, "action", "set_sorts", "sorts", []any{map[string]any{"column": tooltest.NewID(), "order": "ASC"}}), failure.NotFound, "sorts[0].column"},
		{tooltest.CopyArgs(base, "action", "set_group", "group", map[string]any{"field": s.text, "method": 9, "order": 0, "hideEmpty": false}), failure.InvalidArguments, "group.method"},
		{tooltest.CopyArgs(base, "action", "set_group", "group", map[string]any{"field": s.text, "method": 1, "order": 0, "hideEmpty": false}), failure.InvalidArguments, "group.range"},
		{tooltest.CopyArgs(base, "action", "set_group", "group", map[string]any{"field": s.text, "method": 1, "range": map[string]any{"numStart": 0, "numEnd": 10, "numStep": 1}, "order": 0, "hideEmpty": false}), failure.InvalidArguments, "number column"},
		{tooltest.CopyArgs(base, "action", "set_group", "group", map[string]any{"field": tooltest.NewID(), "method": 0, "order": 0, "hideEmpty": false}), failure.NotFound, "group.field"},
		{tooltest.CopyArgs(base, "action", "set_column_visibility", "keyID", tooltest.NewID(), "hidden", true), failure.NotFound, "keyID"},
		{tooltest.CopyArgs(base, "action", "set_column_order", "keyIDs", []string{s.text, s.db.Primary}), failure.InvalidArguments, "missing: " + s.db.Select},
		{tooltest.CopyArgs(base, "action", "set_column_order", "keyIDs", []string{s.text, s.text}), failure.InvalidArguments, "keyIDs[1]"},
		{tooltest.CopyArgs(base, "action", "set_sorts", "viewID", tooltest.NewID(), "sorts", []any{}), failure.NotFound, "no such view"},
		{tooltest.CopyArgs(base, "action", "set_sorts", "blockID", s.Blocks[0], "sorts", []any{}), failure.InvalidArguments, "does not show"},
		{tooltest.CopyArgs(base, "action", "add_view", "layout", "table", "name", " "), failure.InvalidArguments, "name"},
		{tooltest.CopyArgs(base, "action", "add_view", "layout", "table", "name", "Again"), failure.InvalidArguments, "already a view"},
	} {
		e := s.WantErr(t, "av", c.args, c.code)
		if e.WriteAttempted == nil || *e.WriteAttempted || !strings.Contains(e.Message, c.says) {
			t.Errorf("%v: %+v", c.args, e)
		}
	}

	// Once the block shows another view, the first is refused: the
	// kernel would change the view the block shows.
	second := tooltest.NewID()
	s.viewOp(t, siyuan.AddAttrViewViewOp(s.db.AV, second, s.db.Block, "table"))
	e := s.WantErr(t, "av", tooltest.CopyArgs(base, "action", "set_sorts", "sorts", []any{}), failure.InvalidArguments)
	if !strings.Contains(e.Message, second) {
		t.Fatal(e)
	}
	s.write(t, tooltest.CopyArgs(base, "action", "set_sorts", "viewID", second, "sorts", []any{}, "validateOnly", false))
}
