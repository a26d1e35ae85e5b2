package contract

// Databases: grouped views. A view grouped by a column is rendered as its
// groups, each a table of its own rows; the groups are stored in the view
// and made anew when rows or values change.

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// renderedGroup is one group of a render, as much as the checks compare.
type renderedGroup struct {
	ID          string             `json:"id"`
	Name        string             `json:"name"`
	Group       json.RawMessage    `json:"group"`
	GroupKey    *siyuan.AVKey      `json:"groupKey"`
	GroupValue  json.RawMessage    `json:"groupValue"`
	GroupHidden int                `json:"groupHidden"`
	PageSize    int                `json:"pageSize"`
	Columns     []*siyuan.AVColumn `json:"columns"`
	Rows        []*siyuan.AVRow    `json:"rows"`
	RowCount    int                `json:"rowCount"`
}

func renderedGroups(t *testing.T, r siyuan.AVRender) []renderedGroup {
	t.Helper()
	var gs []renderedGroup
	if len(r.View.Groups) > 0 {
		mustJSON(t, string(r.View.Groups), &gs)
	}
	return gs
}

// groupText is a render's groups, one a line: name, value, hidden state,
// row count and the rows of the page.
func (v viewDB) groupText(t *testing.T, r siyuan.AVRender) string {
	t.Helper()
	var lines []string
	for _, g := range renderedGroups(t, r) {
		var rows []string
		for _, row := range g.Rows {
			rows = append(rows, v.names[row.ID])
		}
		lines = append(lines, fmt.Sprintf("%q %s hidden=%d count=%d: %s", g.Name, g.GroupValue, g.GroupHidden, g.RowCount,
			strings.Join(rows, " ")))
	}
	return strings.Join(lines, "\n")
}

func groupByName(t *testing.T, r siyuan.AVRender, name string) renderedGroup {
	t.Helper()
	for _, g := range renderedGroups(t, r) {
		if g.Name == name {
			return g
		}
	}
	t.Fatalf("no group %q in the render", name)
	return renderedGroup{}
}

func setGroupOp(avID, blockID string, group map[string]any) siyuan.Operation {
	return siyuan.Operation{Action: "setAttrViewGroup", AvID: avID, BlockID: blockID, Data: group}
}

// storedGroups are the groups a view stores, in their manual order, as
// "value sort=N hidden=N: rows". The kernel stores them in no fixed
// order; their manual order (groupSort) is fixed for select and checkbox
// columns only.
func (v viewDB) storedGroups(t *testing.T, s *suite) string {
	t.Helper()
	view := s.storedAV(t, v.av).Views[0]
	var gs []struct {
		GroupVal     json.RawMessage `json:"groupVal"`
		GroupSort    int             `json:"groupSort"`
		GroupHidden  int             `json:"groupHidden"`
		GroupItemIDs []string        `json:"groupItemIds"`
	}
	mustJSON(t, string(view.Groups), &gs)
	sort.SliceStable(gs, func(i, j int) bool { return gs[i].GroupSort < gs[j].GroupSort })
	var lines []string
	for _, g := range gs {
		var rows []string
		for _, id := range g.GroupItemIDs {
			rows = append(rows, v.names[id])
		}
		lines = append(lines, fmt.Sprintf("%s sort=%d hidden=%d: %s", g.GroupVal, g.GroupSort, g.GroupHidden, strings.Join(rows, " ")))
	}
	return strings.Join(lines, "\n")
}

// checkAVGroups: a view grouped by select, multi-select, number ranges,
// dates (day, week, month, year, relative), checkbox and text; the
// groups' order, names, rows and hidden states; paging, one group paged
// apart; a row added to a group and a value changed.
func checkAVGroups(t *testing.T, s *suite) {
	v := s.newViewDB(t)
	render := func() siyuan.AVRender {
		return s.render(t, siyuan.RenderAVRequest{ID: v.av, BlockID: v.block})
	}
	for _, tc := range []struct {
		name  string
		group map[string]any
		conf  string // the group as stored after the operation
		want  string
	}{
		{"select", map[string]any{"field": v.sel}, `{"field":"SEL","method":0,"order":3,"hideEmpty":false}`, avGroupsSelect},
		{"mSelect ascending", map[string]any{"field": v.ms, "method": 0, "order": 0}, `{"field":"MS","method":0,"order":3,"hideEmpty":false}`, avGroupsMSelect},
		{"number range", map[string]any{"field": v.num, "method": 1, "order": 0, "range": map[string]any{"numStart": 0, "numEnd": 10, "numStep": 5}},
			`{"field":"NUM","method":1,"range":{"numStart":0,"numEnd":10,"numStep":5},"order":0,"hideEmpty":false}`, avGroupsNumRange},
		{"date by day descending", map[string]any{"field": v.date, "method": 3, "order": 1}, `{"field":"DATE","method":3,"order":1,"hideEmpty":false}`, avGroupsDay},
		{"date by week", map[string]any{"field": v.date, "method": 4}, `{"field":"DATE","method":4,"order":0,"hideEmpty":false}`, avGroupsWeek},
		{"date by month", map[string]any{"field": v.date, "method": 5}, `{"field":"DATE","method":5,"order":0,"hideEmpty":false}`, avGroupsMonth},
		{"date by year", map[string]any{"field": v.date, "method": 6, "hideEmpty": true}, `{"field":"DATE","method":6,"order":0,"hideEmpty":true}`, avGroupsYear},
		{"date relative (all long ago)", map[string]any{"field": v.date, "method": 2}, `{"field":"DATE","method":2,"order":0,"hideEmpty":false}`, avGroupsMonth},
		{"checkbox", map[string]any{"field": v.cb}, `{"field":"CB","method":0,"order":2,"hideEmpty":false}`, avGroupsCheckbox},
		{"text", map[string]any{"field": v.text, "hideEmpty": true}, `{"field":"TEXT","method":0,"order":0,"hideEmpty":true}`, avGroupsText},
	} {
		s.tx(t, setGroupOp(v.av, v.block, tc.group))
		names := map[string]string{v.sel: "SEL", v.ms: "MS", v.num: "NUM", v.date: "DATE", v.cb: "CB", v.text: "TEXT"}
		if got := normJSON(t, s.storedAV(t, v.av).Views[0].Group, names); got != tc.conf {
			t.Errorf("%s: stored group %s, want %s", tc.name, got, tc.conf)
		}
		r := render()
		if got := v.groupText(t, r); got != tc.want {
			t.Errorf("%s: groups\n%s\nwant\n%s", tc.name, got, tc.want)
		}
		// The view itself answers no rows and counts them all.
		if len(r.View.Rows) != 0 || r.View.RowCount != 5 {
			t.Errorf("%s: view rows %d, rowCount %d", tc.name, len(r.View.Rows), r.View.RowCount)
		}
	}

	// A group renders the view's columns, with the group's column and
	// value; the group itself is null.
	r := render()
	g := groupByName(t, r, "Apple pie")
	if len(g.Columns) != len(r.View.Columns) || g.GroupKey == nil || g.GroupKey.ID != v.text || string(g.Group) != "null" || g.PageSize != 50 {
		t.Fatalf("group Apple pie: %d columns, key %+v, group %s, page size %d", len(g.Columns), g.GroupKey, g.Group, g.PageSize)
	}

	// Paging pages each group; groupPaging pages one apart. With hidden
	// empty groups, a group whose page is empty stays hidden.
	s.tx(t, siyuan.SetAttrViewPageSizeOp(v.av, v.block, 1))
	r = s.render(t, siyuan.RenderAVRequest{ID: v.av, BlockID: v.block, GroupPaging: map[string]any{g.ID: map[string]any{"page": 2, "pageSize": 1}}})
	wantEqual(t, "groups, Apple pie on page 2", v.groupText(t, r), avGroupsTextPaged)

	// Rows added to a select group take its option, first in it.
	s.tx(t, siyuan.SetAttrViewPageSizeOp(v.av, v.block, 50), setGroupOp(v.av, v.block, map[string]any{"field": v.sel}))
	b := groupByName(t, render(), "B")
	id := freshID()
	v.names[id] = "new"
	op := siyuan.InsertAttrViewBlockOp(v.av, v.block, []siyuan.AVSrc{{ItemID: id, Detached: true, Content: "new"}}, "")
	op.GroupID = b.ID
	s.tx(t, op)
	// A value changed moves its row to its new group.
	s.setCells(t, v.avDB, [3]string{v.sel, v.items[2], `{"mSelect":[{"content":"C","color":"3"}]}`})
	r = render()
	wantEqual(t, "groups after an add and a change", v.groupText(t, r), avGroupsSelectAfter)
	wantEqual(t, "stored groups after an add and a change", v.storedGroups(t, s), avGroupsSelectStored)
	if c := cellOf(t, siyuan.AVRender{View: &siyuan.AVTable{Rows: groupByName(t, r, "B").Rows}}, id, v.sel); cellText(c.Value, nil) != `{"type":"select","mSelect":[{"content":"B","color":"2"}]}` {
		t.Fatalf("new row's select: %s", cellText(c.Value, nil))
	}

	// Relative dates around today.
	day := func(n int) string {
		d := time.Now().AddDate(0, 0, n)
		ms := time.Date(d.Year(), d.Month(), d.Day(), 12, 0, 0, 0, time.Local).UnixMilli()
		return fmt.Sprintf(`{"date":{"content":%d,"isNotEmpty":true,"isNotTime":true}}`, ms)
	}
	it := v.items
	s.setCells(t, v.avDB, [3]string{v.date, it[0], day(0)}, [3]string{v.date, it[1], day(1)}, [3]string{v.date, it[2], day(-1)},
		[3]string{v.date, it[3], day(-3)}, [3]string{v.date, it[4], day(-10)})
	s.tx(t, setGroupOp(v.av, v.block, map[string]any{"field": v.date, "method": 2}))
	wantEqual(t, "relative date groups", v.groupText(t, render()), avGroupsRelative)
}

// The groups of checkAVGroups as SiYuan 3.7.3 renders and stores them.
const (
	avGroupsSelect = `"A" {"type":"select","mSelect":[{"content":"A","color":"1"}]} hidden=0 count=2: r0 r3
"B" {"type":"select","mSelect":[{"content":"B","color":"2"}]} hidden=0 count=1: r1
"C" {"type":"select","mSelect":[{"content":"C","color":"3"}]} hidden=0 count=1: r4
"Field [Select] is empty" {"type":"text","text":{"content":"_@default@_"}} hidden=0 count=1: r2`
	avGroupsMSelect = `"x" {"type":"select","mSelect":[{"content":"x","color":"1"}]} hidden=0 count=1: r0
"y" {"type":"select","mSelect":[{"content":"y","color":"2"}]} hidden=0 count=2: r0 r1
"z" {"type":"select","mSelect":[{"content":"z","color":"3"}]} hidden=0 count=1: r3
"Field [Tags] is empty" {"type":"text","text":{"content":"_@default@_"}} hidden=0 count=2: r2 r4`
	avGroupsNumRange = `"0 - 5" {"type":"text","text":{"content":"0 - 5"}} hidden=0 count=1: r4
"10 - 15" {"type":"text","text":{"content":"10 - 15"}} hidden=0 count=1: r0
"Out of range" {"type":"text","text":{"content":"_@notInRange@_"}} hidden=0 count=2: r1 r3
"Field [Num] is empty" {"type":"text","text":{"content":"_@default@_"}} hidden=0 count=1: r2`
	avGroupsDay = `"2025-03-01" {"type":"text","text":{"content":"2025-03-01"}} hidden=0 count=1: r1
"2025-01-10" {"type":"text","text":{"content":"2025-01-10"}} hidden=0 count=2: r0 r3
"2024-12-31" {"type":"text","text":{"content":"2024-12-31"}} hidden=0 count=1: r4
"Field [Date] is empty" {"type":"text","text":{"content":"_@default@_"}} hidden=0 count=1: r2`
	avGroupsWeek = `"2025-W01" {"type":"text","text":{"content":"2025-W01"}} hidden=0 count=1: r4
"2025-W02" {"type":"text","text":{"content":"2025-W02"}} hidden=0 count=2: r0 r3
"2025-W09" {"type":"text","text":{"content":"2025-W09"}} hidden=0 count=1: r1
"Field [Date] is empty" {"type":"text","text":{"content":"_@default@_"}} hidden=0 count=1: r2`
	avGroupsMonth = `"2024-12" {"type":"text","text":{"content":"2024-12"}} hidden=0 count=1: r4
"2025-01" {"type":"text","text":{"content":"2025-01"}} hidden=0 count=2: r0 r3
"2025-03" {"type":"text","text":{"content":"2025-03"}} hidden=0 count=1: r1
"Field [Date] is empty" {"type":"text","text":{"content":"_@default@_"}} hidden=0 count=1: r2`
	avGroupsYear = `"2024" {"type":"text","text":{"content":"2024"}} hidden=0 count=1: r4
"2025" {"type":"text","text":{"content":"2025"}} hidden=0 count=3: r0 r3 r1
"Field [Date] is empty" {"type":"text","text":{"content":"_@default@_"}} hidden=0 count=1: r2`
	avGroupsCheckbox = `"√" {"type":"checkbox","checkbox":{"checked":true}} hidden=0 count=2: r0 r4
"" {"type":"checkbox","checkbox":{"checked":false}} hidden=0 count=3: r1 r2 r3`
	avGroupsText = `"Apple pie" {"type":"text","text":{"content":"Apple pie"}} hidden=0 count=1: r0
"Cherry APPLE" {"type":"text","text":{"content":"Cherry APPLE"}} hidden=0 count=1: r4
"apple" {"type":"text","text":{"content":"apple"}} hidden=0 count=1: r3
"banana" {"type":"text","text":{"content":"banana"}} hidden=0 count=1: r1
"Field [Text] is empty" {"type":"text","text":{"content":"_@default@_"}} hidden=0 count=1: r2`
	avGroupsTextPaged = `"Apple pie" {"type":"text","text":{"content":"Apple pie"}} hidden=1 count=1: 
"Cherry APPLE" {"type":"text","text":{"content":"Cherry APPLE"}} hidden=0 count=1: r4
"apple" {"type":"text","text":{"content":"apple"}} hidden=0 count=1: r3
"banana" {"type":"text","text":{"content":"banana"}} hidden=0 count=1: r1
"Field [Text] is empty" {"type":"text","text":{"content":"_@default@_"}} hidden=0 count=1: r2`
	avGroupsSelectAfter = `"A" {"type":"select","mSelect":[{"content":"A","color":"1"}]} hidden=0 count=2: r0 r3
"B" {"type":"select","mSelect":[{"content":"B","color":"2"}]} hidden=0 count=2: new r1
"C" {"type":"select","mSelect":[{"content":"C","color":"3"}]} hidden=0 count=2: r2 r4
"Field [Select] is empty" {"type":"text","text":{"content":"_@default@_"}} hidden=0 count=0: `
	avGroupsSelectStored = `{"type":"select","mSelect":[{"content":"A","color":"1"}]} sort=0 hidden=1: r0 r3
{"type":"select","mSelect":[{"content":"B","color":"2"}]} sort=1 hidden=1: new r1
{"type":"select","mSelect":[{"content":"C","color":"3"}]} sort=2 hidden=1: r2 r4
{"type":"text","text":{"content":"_@default@_"}} sort=3 hidden=1: `
	avGroupsRelative = `"Last 30 days" {"type":"text","text":{"content":"_@last30Days@_"}} hidden=0 count=1: r4
"Last 7 days" {"type":"text","text":{"content":"_@last7Days@_"}} hidden=0 count=1: r3
"Yesterday" {"type":"text","text":{"content":"_@yesterday@_"}} hidden=0 count=1: r2
"Today" {"type":"text","text":{"content":"_@today@_"}} hidden=0 count=1: r0
"Tomorrow" {"type":"text","text":{"content":"_@tomorrow@_"}} hidden=0 count=1: r1
"Field [Date] is empty" {"type":"text","text":{"content":"_@default@_"}} hidden=0 count=1: new`
)
