package embedded

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/88250/lute/ast"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// Grouped views, as SiYuan 3.7.3 keeps and renders them
// (model.setAttributeViewGroup, genAttrViewGroups, renderAttributeViewGroups).
//
// A view's group ({field, method, range, order, hideEmpty}) splits its rows
// by one column. The groups are stored in the view's file as views of
// their own ("groups"): each names its value (groupVal), its column
// (groupKey) and its rows (groupItemIds, in their manual order), with its
// folded and hidden states and its place in a manual order (groupSort).
// The kernel regenerates them whenever rows or values change; each
// regeneration keeps the ID, states and row order of the groups whose
// value survives.
//
// A render of a grouped view answers the view with no rows (its rowCount
// counts them all) and, in "groups", a rendered table per group: the
// view's columns, filters, sorts and page size, the group's rows after
// them, paged by the request's page or its groupPaging entry for the group.

// avGroupConf is the kernel's av.ViewGroup, in its field order.
type avGroupConf struct {
	Field     string        `json:"field"`
	Method    int           `json:"method"`
	Range     *avGroupRange `json:"range,omitempty"`
	Order     int           `json:"order"`
	HideEmpty bool          `json:"hideEmpty"`
}

type avGroupRange struct {
	NumStart float64 `json:"numStart"`
	NumEnd   float64 `json:"numEnd"`
	NumStep  float64 `json:"numStep"`
}

// The group methods and orders of SiYuan 3.7.3.
const (
	avGroupValue = iota
	avGroupRangeNum
	avGroupDateRelative
	avGroupDateDay
	avGroupDateWeek
	avGroupDateMonth
	avGroupDateYear
)

const (
	avGroupOrderAsc = iota
	avGroupOrderDesc
	avGroupOrderManual
	avGroupOrderSelectOption
)

// The group values the kernel gives groups that are not a cell's text.
const (
	avGroupDefault    = "_@default@_"    // rows whose cell is blank
	avGroupNotInRange = "_@notInRange@_" // numbers outside a range grouping
	avGroupLast30Days = "_@last30Days@_"
	avGroupLast7Days  = "_@last7Days@_"
	avGroupYesterday  = "_@yesterday@_"
	avGroupToday      = "_@today@_"
	avGroupTomorrow   = "_@tomorrow@_"
	avGroupNext7Days  = "_@next7Days@_"
	avGroupNext30Days = "_@next30Days@_"
)

// viewGroupConf is a view's group, nil when it has none or its field is
// empty (IsGroupView).
func viewGroupConf(v *wire.AVView) *avGroupConf {
	if len(v.Group) == 0 {
		return nil
	}
	g := &avGroupConf{}
	if json.Unmarshal(v.Group, &g) != nil || g == nil || g.Field == "" {
		return nil
	}
	return g
}

// viewGroups decodes a view's stored groups (nil when it has none).
func viewGroups(v *wire.AVView) []*wire.AVView {
	if len(v.Groups) == 0 {
		return nil
	}
	var gs []*wire.AVView
	if json.Unmarshal(v.Groups, &gs) != nil {
		return nil
	}
	return slices.DeleteFunc(gs, func(g *wire.AVView) bool { return g == nil })
}

// setViewGroups stores a view's groups; nil removes them.
func setViewGroups(v *wire.AVView, gs []*wire.AVView) {
	if gs == nil {
		v.Groups = nil
		return
	}
	data, err := json.Marshal(gs)
	if err != nil {
		return // views always encode
	}
	v.Groups = data
}

// groupValueOf is a group's value as text (GetGroupValue).
func groupValueOf(g *wire.AVView) string {
	if len(g.GroupVal) == 0 {
		return ""
	}
	var v wire.AVValue
	if json.Unmarshal(g.GroupVal, &v) != nil {
		return ""
	}
	return valueString(&v, false)
}

func groupValue(g *wire.AVView) *wire.AVValue {
	var v wire.AVValue
	if len(g.GroupVal) == 0 || json.Unmarshal(g.GroupVal, &v) != nil {
		return nil
	}
	return &v
}

// valueBlank is Value.IsBlank: blank text after trimming; a checkbox is
// never blank.
func valueBlank(v *wire.AVValue) bool {
	if v == nil {
		return true
	}
	blank := func(c *wire.AVValueContent) bool { return c == nil || strings.TrimSpace(c.Content) == "" }
	switch v.Type {
	case wire.AVKeyBlock:
		return v.Block == nil || strings.TrimSpace(v.Block.Content) == ""
	case wire.AVKeyText:
		return blank(v.Text)
	case wire.AVKeyURL:
		return blank(v.URL)
	case wire.AVKeyEmail:
		return blank(v.Email)
	case wire.AVKeyPhone:
		return blank(v.Phone)
	case wire.AVKeyTemplate:
		return blank(v.Template)
	case wire.AVKeySelect:
		return len(v.MSelect) == 0 || strings.TrimSpace(v.MSelect[0].Content) == ""
	case wire.AVKeyCheckbox:
		return v.Checkbox == nil
	}
	return avValueEmpty(v)
}

// avGroupState is what a regeneration keeps of a group whose value
// survives (GroupState).
type avGroupState struct {
	id      string
	folded  bool
	hidden  int
	sort    int
	itemIDs []string
}

func groupStates(v *wire.AVView) map[string]*avGroupState {
	states := map[string]*avGroupState{}
	if viewGroupConf(v) == nil {
		return states
	}
	for _, g := range viewGroups(v) {
		if g.LayoutType == "kanban" {
			g.GroupFolded = false // kanban groups never fold
		}
		states[groupValueOf(g)] = &avGroupState{id: g.ID, folded: g.GroupFolded, hidden: g.GroupHidden,
			sort: g.GroupSort, itemIDs: g.GroupItemIDs}
	}
	return states
}

// applyGroupStates is setAttrViewGroupStates: groups whose value had a
// state take it back (their rows in the old order, new ones as the old
// first); the others are numbered by their place, a new blank group last.
func applyGroupStates(gs []*wire.AVView, states map[string]*avGroupState) []*wire.AVView {
	for _, g := range gs {
		st, ok := states[groupValueOf(g)]
		if !ok {
			continue
		}
		g.ID, g.GroupFolded, g.GroupHidden, g.GroupSort = st.id, st.folded, st.hidden, st.sort
		pos := map[string]int{}
		for i, id := range st.itemIDs {
			pos[id] = i
		}
		sort.SliceStable(g.GroupItemIDs, func(i, j int) bool { return pos[g.GroupItemIDs[i]] < pos[g.GroupItemIDs[j]] })
	}
	var def *wire.AVView
	for i, g := range gs {
		if groupValueOf(g) == avGroupDefault {
			if g.GroupSort == -1 {
				def = g
				gs = slices.Delete(slices.Clone(gs), i, i+1)
			}
			break
		}
	}
	for i, g := range gs {
		if g.GroupSort == -1 {
			g.GroupSort = i
		}
	}
	if def != nil {
		gs = append(gs, def)
		def.GroupSort = len(gs) - 1
	}
	return gs
}

// genGroups is genAttrViewGroups: the view's groups made anew from rows
// (the view's rows as the renderer has them), keeping the states of the
// groups whose value survives.
func (r *avRenderer) genGroups(av *wire.AttributeView, view *wire.AVView, now time.Time) {
	conf := viewGroupConf(view)
	if conf == nil {
		return
	}
	states := groupStates(view)
	view.Groups = nil
	key := avKey(av, conf.Field)
	if key == nil {
		return
	}
	var rows []*wire.AVRow
	if t := r.table(av, view, ""); t != nil {
		rows = slices.Clone(t.Rows)
	}
	val := func(row *wire.AVRow) *wire.AVValue { return rowValue(row, conf.Field) }
	num := func(row *wire.AVRow) float64 {
		if v := val(row); v != nil && v.Number != nil {
			return v.Number.Content
		}
		return 0
	}
	timeOf := func(row *wire.AVRow) int64 {
		v := val(row)
		switch {
		case v == nil:
		case key.Type == wire.AVKeyDate && v.Date != nil:
			return v.Date.Content
		case key.Type == wire.AVKeyCreated && v.Created != nil:
			return v.Created.Content
		case key.Type == wire.AVKeyUpdated && v.Updated != nil:
			return v.Updated.Content
		}
		return 0
	}
	switch conf.Method {
	case avGroupValue:
		if conf.Order != avGroupOrderManual {
			sort.SliceStable(rows, func(i, j int) bool { return valueString(val(rows[i]), false) < valueString(val(rows[j]), false) })
		}
	case avGroupRangeNum:
		if conf.Range == nil {
			return
		}
		sort.SliceStable(rows, func(i, j int) bool { return num(rows[i]) < num(rows[j]) })
	case avGroupDateRelative, avGroupDateDay, avGroupDateWeek, avGroupDateMonth, avGroupDateYear:
		sort.SliceStable(rows, func(i, j int) bool { return timeOf(rows[i]) < timeOf(rows[j]) })
	}

	y, m, d := now.Date()
	today := time.Date(y, m, d, 0, 0, 0, 0, time.Local)
	var dest *wire.AttributeView
	if key.Type == wire.AVKeyRelation && key.Relation != nil {
		dest = r.av(key.Relation.AvID)
	}

	members := map[string][]string{}
	var order []string // group values in the order first met
	add := func(gv, itemID string) {
		if _, ok := members[gv]; !ok {
			order = append(order, gv)
		}
		members[gv] = append(members[gv], itemID)
	}
	var rangeStart, rangeEnd float64
	if conf.Range != nil {
		rangeStart, rangeEnd = conf.Range.NumStart, conf.Range.NumStart+conf.Range.NumStep
	}
	for _, row := range rows {
		v := val(row)
		if valueBlank(v) {
			add(avGroupDefault, row.ID)
			continue
		}
		var gv string
		switch conf.Method {
		case avGroupValue:
			switch key.Type {
			case wire.AVKeySelect, wire.AVKeyMSelect:
				for _, o := range v.MSelect {
					add(o.Content, row.ID)
				}
				continue
			case wire.AVKeyRelation:
				if dest != nil && v.Relation != nil {
					for _, id := range v.Relation.BlockIDs {
						add(id, row.ID)
					}
				}
				continue
			}
			gv = valueString(v, false)
		case avGroupRangeNum:
			n := num(row)
			if conf.Range.NumStart > n || conf.Range.NumEnd < n {
				gv = avGroupNotInRange
				break
			}
			// The bounds only grow: the rows come in ascending order. A
			// step that does not advance leaves the loop at once.
			for rangeEnd <= conf.Range.NumEnd && rangeEnd <= n && conf.Range.NumStep > 0 {
				rangeStart += conf.Range.NumStep
				rangeEnd += conf.Range.NumStep
			}
			if rangeStart <= n && rangeEnd > n {
				gv = strconv.FormatFloat(rangeStart, 'f', -1, 64) + " - " + strconv.FormatFloat(rangeEnd, 'f', -1, 64)
			}
		default:
			gv = dateGroupValue(conf.Method, time.UnixMilli(timeOf(row)), today)
		}
		add(gv, row.ID)
	}
	switch key.Type {
	case wire.AVKeySelect, wire.AVKeyMSelect:
		for _, o := range key.Options {
			if _, ok := members[o.Name]; !ok {
				add(o.Name, "")
			}
		}
	}
	if key.Type != wire.AVKeyCheckbox {
		if _, ok := members[avGroupDefault]; !ok {
			add(avGroupDefault, "") // the blank group is always kept
		}
	} else {
		// Unchecked rows are the "" group, kept as the checked one is.
		for _, gv := range []string{"", avCheckedText} {
			if _, ok := members[gv]; !ok {
				add(gv, "")
			}
		}
	}

	// The kernel makes the groups in a map's order; this kernel in the
	// order their values were first met.
	var gs []*wire.AVView
	for _, gv := range order {
		g := newGroupView(view.LayoutType)
		g.GroupItemIDs = []string{}
		for _, id := range members[gv] {
			if id != "" {
				g.GroupItemIDs = append(g.GroupItemIDs, id)
			}
		}
		g.GroupHidden = 1
		g.GroupSort = -1
		g.GroupKey, _ = json.Marshal(key)
		gval := &wire.AVValue{Type: wire.AVKeyText, Text: &wire.AVValueContent{Content: gv}}
		switch key.Type {
		case wire.AVKeySelect, wire.AVKeyMSelect:
			for _, o := range key.Options {
				if o.Name == gv {
					gval = &wire.AVValue{Type: wire.AVKeySelect, MSelect: []*wire.AVValueSelect{{Content: o.Name, Color: o.Color}}}
					break
				}
			}
		case wire.AVKeyRelation:
			if dest != nil && gv != avGroupDefault {
				gval = &wire.AVValue{Type: wire.AVKeyRelation, Relation: &wire.AVValueRelation{BlockIDs: []string{gv}}}
				if bv := avBlockValue(dest, gv); bv != nil {
					gval.Relation.Contents = []*wire.AVValue{bv}
				}
			}
		case wire.AVKeyCheckbox:
			gval = &wire.AVValue{Type: wire.AVKeyCheckbox, Checkbox: &wire.AVValueCheckbox{Checked: gv != ""}}
		}
		g.GroupVal, _ = json.Marshal(gval)
		gs = append(gs, g)
	}
	view.GroupCreated = now.UnixMilli()
	setViewGroups(view, applyGroupStates(gs, states))
}

// newGroupView is a group's view: a new view of the grouped view's
// layout with an empty name (named when rendered); a kanban's keeps no
// fields.
func newGroupView(layout string) *wire.AVView {
	if layout == "kanban" || layout == "gallery" {
		v := newCardView(layout)
		v.Name = ""
		return v
	}
	v := newTableView("")
	v.Name = ""
	v.Table.Columns = nil
	return v
}

// dateGroupValue is the group of a time by day, ISO week, month, year or
// relative to today (before 30 days ago and after 30 days from now: by
// month).
func dateGroupValue(method int, t, today time.Time) string {
	switch method {
	case avGroupDateDay:
		return t.Format("2006-01-02")
	case avGroupDateWeek:
		y, w := t.ISOWeek()
		return fmt.Sprintf("%d-W%02d", y, w)
	case avGroupDateMonth:
		return t.Format("2006-01")
	case avGroupDateYear:
		return t.Format("2006")
	}
	day := func(n int) time.Time { return today.AddDate(0, 0, n) }
	switch {
	case t.Before(day(-30)):
		return t.Format("2006-01")
	case t.Before(day(-7)):
		return avGroupLast30Days
	case t.Before(day(-1)):
		return avGroupLast7Days
	case t.Before(today):
		return avGroupYesterday
	case t.Before(day(1)):
		return avGroupToday
	case t.After(day(30)):
		return t.Format("2006-01")
	case t.After(day(7)):
		return avGroupNext30Days
	case !t.Before(day(2)):
		return avGroupNext7Days
	}
	return avGroupTomorrow
}

// regenGroups is regenAttrViewGroups: the groups of every grouped view
// made anew, as the kernel does after rows or values change. It renders
// with its own renderer and strips what that render filled in.
func (k *Kernel) regenGroups(av *wire.AttributeView, r *avRenderer) {
	if r == nil {
		r = k.newAVRenderer(context.Background(), av)
		defer r.strip(av)
	}
	for _, v := range av.Views {
		if conf := viewGroupConf(v); conf != nil && avKey(av, conf.Field) != nil {
			r.genGroups(av, v, time.Now())
		}
	}
}

// setViewGroup is setAttributeViewGroup.
func (k *Kernel) setViewGroup(av *wire.AttributeView, view *wire.AVView, conf *avGroupConf) error {
	var oldHideEmpty, firstInit, changeField bool
	if len(view.Group) > 0 && string(view.Group) != "null" {
		var prev avGroupConf
		if json.Unmarshal(view.Group, &prev) == nil {
			oldHideEmpty, changeField = prev.HideEmpty, conf.Field != prev.Field
		}
	} else {
		firstInit = true
	}
	states := groupStates(view)
	enc, err := json.Marshal(conf)
	if err != nil {
		return fmt.Errorf("encode group: %w", err)
	}
	view.Group = enc
	r := k.newAVRenderer(context.Background(), av)
	k.regenGroups(av, r)
	gs := applyGroupStates(viewGroups(view), states)

	if conf.HideEmpty != oldHideEmpty {
		for _, g := range gs {
			n := r.groupRowCount(av, view, g)
			switch {
			case conf.HideEmpty && g.GroupHidden == 0 && n < 1:
				g.GroupHidden = 1
			case !conf.HideEmpty && g.GroupHidden == 1 && n < 1:
				g.GroupHidden = 0
			}
		}
	}
	if firstInit || changeField {
		if key := avKey(av, conf.Field); key != nil {
			switch key.Type {
			case wire.AVKeySelect, wire.AVKeyMSelect:
				// A select column's groups follow its options.
				conf.Order = avGroupOrderSelectOption
				gs = sortGroupsBySelectOption(gs, key)
			case wire.AVKeyCheckbox:
				// Checked first, in a manual order.
				conf.Order = avGroupOrderManual
				var checked, unchecked *wire.AVView
				for _, g := range gs {
					switch groupValueOf(g) {
					case avCheckedText:
						checked = g
					case "":
						unchecked = g
					}
				}
				gs = []*wire.AVView{checked, unchecked}
			default:
				// The kernel numbers the groups in a map's order; this
				// kernel in the order they render.
				gs = sortGroups(av, view, conf, gs, time.Now())
			}
			if enc, err = json.Marshal(conf); err != nil {
				return fmt.Errorf("encode group: %w", err)
			}
			view.Group = enc
		}
		for i, g := range gs {
			g.GroupSort = i
		}
	}
	r.strip(av)
	setViewGroups(view, gs)
	return nil
}

// groupRowCount is how many rows of a group its view's filters keep.
func (r *avRenderer) groupRowCount(av *wire.AttributeView, view, g *wire.AVView) int {
	t := r.groupTable(av, view, g, "")
	if t == nil {
		return 0
	}
	filterRows(t)
	return len(t.Rows)
}

// groupTable is RenderGroupView: the group rendered with the view's
// columns, layout settings, filters and sorts (not yet applied).
func (r *avRenderer) groupTable(av *wire.AttributeView, view, g *wire.AVView, query string) *wire.AVTable {
	gv := *g
	gv.Filters, gv.Sorts = view.Filters, view.Sorts
	if view.Table == nil && cardLayout(view) != nil {
		// A gallery's or kanban's group shows the view's fields.
		view = cardTableView(view)
	}
	if view.Table != nil {
		gv.LayoutType = "table"
		gv.Table = &wire.AVLayoutTable{ID: idOr(g.Table), ShowIcon: view.Table.ShowIcon, WrapField: view.Table.WrapField}
		for _, c := range view.Table.Columns {
			cc := *c
			gv.Table.Columns = append(gv.Table.Columns, &cc)
		}
	}
	t := r.view(av, &gv, query)
	if t == nil {
		return nil
	}
	// A copy, so that filtering it leaves the cached one whole.
	c := *t
	c.Rows = slices.Clone(t.Rows)
	cols := make([]*wire.AVColumn, len(t.Columns))
	for i, col := range t.Columns {
		cc := *col
		cols[i] = &cc
	}
	c.Columns = cols
	return &c
}

func idOr(t *wire.AVLayoutTable) string {
	if t != nil {
		return t.ID
	}
	return ast.NewNodeID()
}

// sortGroups is sortGroupViews: groups in the view's group order, the
// blank group last (relative dates: by month around the named spans).
func sortGroups(av *wire.AttributeView, view *wire.AVView, conf *avGroupConf, gs []*wire.AVView, now time.Time) []*wire.AVView {
	gs = slices.Clone(gs)
	switch {
	case conf.Order == avGroupOrderManual:
		sort.Slice(gs, func(i, j int) bool { return gs[i].GroupSort < gs[j].GroupSort })
		return gs
	case conf.Method == avGroupDateRelative:
		named := map[string]*wire.AVView{}
		var months []*wire.AVView
		for _, g := range gs {
			v := groupValueOf(g)
			if _, err := time.Parse("2006-01", v); err == nil {
				months = append(months, g)
			} else {
				named[v] = g
			}
		}
		sort.SliceStable(months, func(i, j int) bool { return groupValueOf(months[i]) < groupValueOf(months[j]) })
		var spans []*wire.AVView
		for _, v := range []string{avGroupNext30Days, avGroupNext7Days, avGroupTomorrow, avGroupToday,
			avGroupYesterday, avGroupLast7Days, avGroupLast30Days} {
			if g := named[v]; g != nil {
				spans = append(spans, g)
			}
		}
		thisMonth := now.Format("2006-01")
		at := 0
		for i, g := range months {
			if groupValueOf(g) < thisMonth {
				at = i + 1
			}
		}
		// Each span is inserted at the same place, so they end up in the
		// reverse of the list above: last 30 days first.
		for _, g := range spans {
			months = slices.Insert(months, at, g)
		}
		if conf.Order == avGroupOrderDesc {
			slices.Reverse(months)
		}
		if g := named[avGroupDefault]; g != nil {
			months = append(months, g)
		}
		return months
	case conf.Order == avGroupOrderAsc || conf.Order == avGroupOrderDesc:
		var def *wire.AVView
		gs = slices.DeleteFunc(gs, func(g *wire.AVView) bool {
			if def == nil && groupValueOf(g) == avGroupDefault {
				def = g
				return true
			}
			return false
		})
		sort.SliceStable(gs, func(i, j int) bool {
			a, b := groupValueOf(gs[i]), groupValueOf(gs[j])
			if conf.Order == avGroupOrderAsc {
				return naturalLess(a, b)
			}
			return naturalLess(b, a)
		})
		if def != nil {
			gs = append(gs, def)
		}
		return gs
	case conf.Order == avGroupOrderSelectOption:
		if key := avKey(av, conf.Field); key != nil && (key.Type == wire.AVKeySelect || key.Type == wire.AVKeyMSelect) {
			return sortGroupsBySelectOption(gs, key)
		}
	}
	return gs
}

// sortGroupsBySelectOption orders groups as their column's options, the
// blank group last.
func sortGroupsBySelectOption(gs []*wire.AVView, key *wire.AVKey) []*wire.AVView {
	pos := map[string]int{}
	for i, o := range key.Options {
		pos[o.Name] = i
	}
	var def *wire.AVView
	gs = slices.DeleteFunc(slices.Clone(gs), func(g *wire.AVView) bool {
		if def == nil && groupValueOf(g) == avGroupDefault {
			def = g
			return true
		}
		return false
	})
	sort.SliceStable(gs, func(i, j int) bool { return pos[groupValueOf(gs[i])] < pos[groupValueOf(gs[j])] })
	if def != nil {
		gs = append(gs, def)
	}
	return gs
}

// groupName is the name a group renders with: its value, or the kernel's
// English text for the values that are not a cell's.
func groupName(value, keyName string) string {
	switch value {
	case avGroupDefault:
		return "Field [" + keyName + "] is empty"
	case avGroupNotInRange:
		return "Out of range"
	case avGroupLast30Days:
		return "Last 30 days"
	case avGroupLast7Days:
		return "Last 7 days"
	case avGroupYesterday:
		return "Yesterday"
	case avGroupToday:
		return "Today"
	case avGroupTomorrow:
		return "Tomorrow"
	case avGroupNext7Days:
		return "Next 7 days"
	case avGroupNext30Days:
		return "Next 30 days"
	}
	return value
}

// avGroupPage is one group's entry of renderAttributeView's groupPaging.
type avGroupPage struct {
	page, pageSize int
}

// parseGroupPaging reads groupPaging ({groupID: {page, pageSize}}); the
// kernel takes numbers only and ignores the rest.
func parseGroupPaging(raw any) map[string]avGroupPage {
	m, ok := raw.(map[string]any)
	if !ok {
		return nil
	}
	ret := map[string]avGroupPage{}
	for id, x := range m {
		p, ok := x.(map[string]any)
		if !ok {
			continue
		}
		gp := avGroupPage{page: jsonInt(p["page"]), pageSize: jsonInt(p["pageSize"])}
		ret[id] = gp
	}
	return ret
}

// jsonInt is a request's number as an int, -1 when it is none.
func jsonInt(x any) int {
	switch n := x.(type) {
	case json.Number:
		if f, err := n.Float64(); err == nil {
			return int(f)
		}
	case float64:
		return int(n)
	}
	return -1
}

// renderGroups is renderAttributeViewGroups for a table view: it answers
// whether the database was changed (groups made or remade) and must be
// saved.
func (r *avRenderer) renderGroups(av *wire.AttributeView, view *wire.AVView, t *wire.AVTable, query string,
	page, pageSize int, paging map[string]avGroupPage) (changed bool) {
	conf := viewGroupConf(view)
	if conf == nil {
		return false
	}
	key := avKey(av, conf.Field)
	if key == nil {
		return false
	}
	now := time.Now()
	byDate := conf.Method >= avGroupDateRelative && conf.Method <= avGroupDateYear
	switch {
	case byDate && time.UnixMilli(view.GroupCreated).Format("2006-01-02") != now.Format("2006-01-02"),
		key.Type == wire.AVKeyTemplate,
		view.Groups == nil || string(view.Groups) == "null":
		// Remade from the rows rendered so far: the kernel's render
		// cache hands its generation the view as filtered, sorted and
		// paged above.
		r.genGroups(av, view, now)
		changed = true
	}
	gs := sortGroups(av, view, conf, viewGroups(view), now)
	var rendered []*wire.AVTable
	for _, g := range gs {
		gt := r.groupTable(av, view, g, query)
		if gt == nil {
			continue
		}
		gt.Name = groupName(groupValueOf(g), key.Name)
		gt.Group = json.RawMessage("null")
		gt.GroupKey, gt.GroupValue = g.GroupKey, g.GroupVal
		gt.GroupFolded, gt.GroupHidden = g.GroupFolded, g.GroupHidden
		filterRows(gt)
		sortRows(av, gt)
		calcColumns(gt)
		gt.RowCount = len(gt.Rows)
		gt.PageSize = view.PageSize
		gp, gps := page, pageSize
		if p, ok := paging[g.ID]; ok {
			if p.page >= 0 {
				gp = p.page
			}
			if p.pageSize >= 0 {
				gps = p.pageSize
			}
		}
		if gps < 1 {
			gps = view.PageSize
		}
		if gps < 1 {
			gps = avDefaultPageSize
		}
		start := min(len(gt.Rows), max(0, (gp-1)*gps))
		gt.Rows = gt.Rows[start:min(len(gt.Rows), start+gps)]
		// hideEmptyGroupViews: counted on the page shown.
		switch {
		case !conf.HideEmpty:
			if gt.GroupHidden != 2 {
				gt.GroupHidden = 0
			}
		case gt.GroupHidden == 1 && len(gt.Rows) > 0:
			gt.GroupHidden = 0
		}
		rendered = append(rendered, gt)
	}
	if rendered == nil {
		rendered = []*wire.AVTable{}
	}
	data, err := json.Marshal(rendered)
	if err == nil {
		t.Groups = data
	}
	t.Rows = []*wire.AVRow{}
	return changed
}

// applyAVGroupOp applies the group operations of /api/transactions:
//
//	setAttrViewGroup  avID, blockID, data ({field, method, range, order, hideEmpty})
func (k *Kernel) applyAVGroupOp(op *wire.Operation) (handled bool, err error) {
	switch op.Action {
	case "setAttrViewGroup":
		err = k.avEditBlockView(op.AvID, op.BlockID, func(av *wire.AttributeView, v *wire.AVView) error {
			data, err := json.Marshal(op.Data)
			if err != nil {
				return fmt.Errorf("encode group: %w", err)
			}
			conf := &avGroupConf{}
			if err := json.Unmarshal(data, conf); err != nil {
				return err
			}
			return k.setViewGroup(av, v, conf)
		})
	default:
		return false, nil
	}
	if err != nil {
		return true, &txFailure{op.Action, err}
	}
	return true, nil
}

func groupByID(view *wire.AVView, id string) *wire.AVView {
	if id == "" {
		return nil
	}
	for _, g := range viewGroups(view) {
		if g.ID == id {
			return g
		}
	}
	return nil
}

// nearItem is getNearItem: the row previousItemID of the view or group as
// filtered and sorted, else its first row. The render stays in the
// renderer's cache, filtered and sorted, as the kernel's does.
func (r *avRenderer) nearItem(av *wire.AttributeView, view, groupView *wire.AVView, previousItemID string) *wire.AVRow {
	gv := *groupView
	gv.Filters, gv.Sorts = view.Filters, view.Sorts
	if view.Table != nil {
		gv.LayoutType = "table"
		gv.Table = &wire.AVLayoutTable{ID: idOr(groupView.Table), ShowIcon: view.Table.ShowIcon, WrapField: view.Table.WrapField,
			Columns: view.Table.Columns}
	}
	t := r.table(av, &gv, "")
	if t == nil {
		return nil
	}
	filterRows(t)
	sortRows(av, t)
	for _, row := range t.Rows {
		if previousItemID == "" || row.ID == previousItemID {
			return row
		}
	}
	return nil
}
