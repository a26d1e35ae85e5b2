package embedded

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/88250/lute/ast"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// Rendering a table view as SiYuan 3.7.3's sql.RenderAttributeViewTable
// and model.renderAttributeView do it: the view's columns, a row per item
// whose primary key exists (a bound row whose block is gone is left out),
// a cell per column (an empty value of the column's type where the item
// has none, its ID the item's time and a random suffix), numbers in the
// column's format, primary keys with their static text, created and
// updated times, relation contents (the related rows' primary keys),
// rollups and last templates; then the query, the manual row order and
// the page.
//
// The renderer works on a copy of the database and mutates it as the
// kernel mutates its parsed copy: empty cells are appended to the
// database's values (marked as auto-filled, never saved), numbers take
// their column's format, relation values their contents. Where the kernel
// saves that copy after rendering, so does this kernel.
//
// The view rendered then has its filters, sorts and column calculations
// applied (av_filter.go, av_sort.go, av_calc.go).
//
// Gallery and kanban views render as the table of their fields, answered
// as cards (av_cards_render.go). Not rendered here: the line-number
// column's numbers.

// avRenderer is one render request: the databases it parsed, the tables it
// rendered (by database and view, as the kernel's RenderedViewables) and
// the values it auto-filled.
type avRenderer struct {
	k        *Kernel
	ctx      context.Context
	avs      map[string]*wire.AttributeView
	tables   map[string]*wire.AVTable
	autoFill map[*wire.AVValue]bool
	depth    int
}

func (k *Kernel) newAVRenderer(ctx context.Context, main *wire.AttributeView) *avRenderer {
	r := &avRenderer{k: k, ctx: ctx, avs: map[string]*wire.AttributeView{}, tables: map[string]*wire.AVTable{},
		autoFill: map[*wire.AVValue]bool{}, depth: 1}
	if main != nil {
		r.avs[main.ID] = main
	}
	return r
}

// av returns a database parsed once per render (nil when unreadable).
func (r *avRenderer) av(id string) *wire.AttributeView {
	if a, ok := r.avs[id]; ok {
		return a
	}
	a, err := r.k.readAV(id)
	if err != nil {
		return nil
	}
	r.avs[id] = a
	return a
}

// save persists a rendered database without its auto-filled values.
func (r *avRenderer) save(av *wire.AttributeView) error {
	c := *av
	c.KeyValues = make([]*wire.AVKeyValues, 0, len(av.KeyValues))
	for _, kv := range av.KeyValues {
		nkv := &wire.AVKeyValues{Key: kv.Key}
		for _, v := range kv.Values {
			if !r.autoFill[v] {
				nkv.Values = append(nkv.Values, v)
			}
		}
		c.KeyValues = append(c.KeyValues, nkv)
	}
	return r.k.saveAV(&c)
}

// strip removes the values the render filled in from av.
func (r *avRenderer) strip(av *wire.AttributeView) {
	if len(r.autoFill) == 0 {
		return
	}
	for _, kv := range av.KeyValues {
		kv.Values = slices.DeleteFunc(kv.Values, func(v *wire.AVValue) bool { return r.autoFill[v] })
	}
	clear(r.autoFill)
}

// view renders a view of a database (a gallery or kanban as the table of
// its fields), at most 7 levels of rollups deep, as the kernel's
// renderView.
func (r *avRenderer) view(av *wire.AttributeView, view *wire.AVView, query string) *wire.AVTable {
	if r.depth > 7 || (view.Table == nil && cardLayout(view) == nil) {
		return nil
	}
	r.depth++
	return r.table(av, view, query)
}

func (r *avRenderer) table(av *wire.AttributeView, view *wire.AVView, query string) *wire.AVTable {
	cacheKey := av.ID + "/" + view.ID
	if t := r.tables[cacheKey]; t != nil {
		return t
	}
	if view.Table == nil {
		view = cardTableView(view) // a gallery or kanban grouped: its rows
	}
	t := tableShell(view)
	missing := false
	for _, col := range append([]*wire.AVViewColumn(nil), view.Table.Columns...) {
		key := avKey(av, col.ID)
		if key == nil {
			// The kernel drops a column whose key is gone, and saves.
			view.Table.Columns = removeColumn(view.Table.Columns, col.ID)
			missing = true
			continue
		}
		t.Columns = append(t.Columns, columnOf(key, col))
	}
	if missing {
		if err := r.save(av); err != nil {
			r.k.log.Warn("save attribute view", "id", av.ID, "err", err)
		}
	}

	items, order := avItems(av)
	if view.GroupItemIDs != nil {
		// A group's view holds its own rows only.
		in := make(map[string]bool, len(view.GroupItemIDs))
		for _, id := range view.GroupItemIDs {
			in[id] = true
		}
		for id := range items {
			if !in[id] {
				delete(items, id)
			}
		}
	}
	r.dropMissingItems(items)
	for _, itemID := range order {
		kvs, ok := items[itemID]
		if !ok {
			continue
		}
		t.Rows = append(t.Rows, r.row(itemID, kvs, t.Columns))
	}
	r.fillKeyValues(av, t)
	ials := r.boundIALs(t)
	r.fillGenerated(av, t, ials)
	if err := r.fillTemplates(av, t, ials); err != nil {
		// The kernel shows template errors to the user for 30 s.
		r.k.notify(templateRenderMsg(err), true, 30000)
	}
	filterRowsByQuery(query, t)
	manualSort(view, t)
	r.tables[cacheKey] = t
	return t
}

// tableShell is NewViewBaseInstance for a table view.
func tableShell(view *wire.AVView) *wire.AVTable {
	t := &wire.AVTable{ID: view.ID, Icon: view.Icon, Name: view.Name, Desc: view.Desc,
		HideAttrViewName: view.HideAttrViewName, Filters: view.Filters, Sorts: view.Sorts, Group: view.Group,
		GroupKey: view.GroupKey, GroupValue: view.GroupVal, GroupCalc: view.GroupCalc, GroupFolded: view.GroupFolded,
		GroupHidden: view.GroupHidden, PageSize: view.PageSize, ShowIcon: true,
		Columns: []*wire.AVColumn{}, Rows: []*wire.AVRow{}}
	if view.Table != nil {
		t.ShowIcon, t.WrapField = view.Table.ShowIcon, view.Table.WrapField
	}
	if t.Group == nil {
		t.Group = json.RawMessage("null")
	}
	return t
}

func columnOf(key *wire.AVKey, col *wire.AVViewColumn) *wire.AVColumn {
	calc := col.Calc
	if calc == nil {
		calc = json.RawMessage("null")
	}
	return &wire.AVColumn{ID: key.ID, Name: key.Name, Type: key.Type, Icon: key.Icon, Wrap: col.Wrap,
		Hidden: col.Hidden, Desc: key.Desc, Calc: calc, Options: key.Options, NumberFormat: key.NumberFormat,
		Template: key.Template, Relation: key.Relation, Rollup: key.Rollup, Date: key.Date, Created: key.Created,
		Updated: key.Updated, Pin: col.Pin, Width: col.Width, Align: col.Align}
}

func removeColumn(cols []*wire.AVViewColumn, id string) []*wire.AVViewColumn {
	for i, c := range cols {
		if c.ID == id {
			return append(cols[:i:i], cols[i+1:]...)
		}
	}
	return cols
}

// avItems is generateAttrViewItems: each item's cells, in key order, with
// the items in the order their first cell appears.
func avItems(av *wire.AttributeView) (map[string][]*wire.AVKeyValues, []string) {
	items := map[string][]*wire.AVKeyValues{}
	var order []string
	for _, kv := range av.KeyValues {
		for _, v := range kv.Values {
			if _, ok := items[v.BlockID]; !ok {
				order = append(order, v.BlockID)
			}
			items[v.BlockID] = append(items[v.BlockID], &wire.AVKeyValues{Key: kv.Key, Values: []*wire.AVValue{v}})
		}
	}
	return items, order
}

// dropMissingItems is filterNotFoundAttrViewItems: items without a primary
// key, and bound items whose block is not in the block tree, are no rows.
func (r *avRenderer) dropMissingItems(items map[string][]*wire.AVKeyValues) {
	for id, kvs := range items {
		bv := blockValueIn(kvs)
		switch {
		case bv == nil || bv.Block == nil:
			delete(items, id)
		case bv.IsDetached:
		case bv.Block.ID == "":
			delete(items, id)
		default:
			if _, ok := r.k.lookup(bv.Block.ID); !ok {
				delete(items, id)
			}
		}
	}
}

func blockValueIn(kvs []*wire.AVKeyValues) *wire.AVValue {
	for _, kv := range kvs {
		if kv.Key.Type == wire.AVKeyBlock && len(kv.Values) > 0 {
			return kv.Values[0]
		}
	}
	return nil
}

// row builds an item's cells, one per column.
func (r *avRenderer) row(itemID string, kvs []*wire.AVKeyValues, cols []*wire.AVColumn) *wire.AVRow {
	first := map[string]*wire.AVValue{}
	for _, kv := range kvs {
		if _, ok := first[kv.Key.ID]; !ok {
			first[kv.Key.ID] = kv.Values[0]
		}
	}
	row := &wire.AVRow{ID: itemID}
	for _, col := range cols {
		cell := &wire.AVCell{ValueType: col.Type}
		if v := first[col.ID]; v != nil {
			cell.ID, cell.Value = v.ID, v
		} else {
			cell.ID = emptyCellID(itemID)
		}
		dateIsTime := col.Date != nil && col.Date.FillSpecificTime
		fillCell(cell, col.ID, itemID, col.NumberFormat, col.Template, dateIsTime)
		row.Cells = append(row.Cells, cell)
	}
	return row
}

// emptyCellID is the ID of a cell an item has no value for: the item's
// time and a new random part. (The kernel panics on an item ID shorter
// than a time; such an item gets a wholly new ID here.)
func emptyCellID(itemID string) string {
	id := ast.NewNodeID()
	if len(itemID) < 14 {
		return id
	}
	return itemID[:14] + id[14:]
}

// fillCell is fillAttributeViewBaseValue.
func fillCell(cell *wire.AVCell, keyID, itemID, numberFormat, template string, dateIsTime bool) {
	switch cell.ValueType {
	case wire.AVKeyNumber:
		if v := cell.Value; v != nil && v.Number != nil && v.Number.IsNotEmpty {
			v.Number.Format = numberFormat
			formatNumberValue(v.Number)
		}
	case wire.AVKeyTemplate:
		cell.Value = &wire.AVValue{ID: cell.ID, KeyID: keyID, BlockID: itemID, Type: wire.AVKeyTemplate,
			Template: &wire.AVValueContent{Content: template}}
	case wire.AVKeyCreated, wire.AVKeyUpdated:
		cell.Value = &wire.AVValue{ID: cell.ID, KeyID: keyID, BlockID: itemID, Type: cell.ValueType}
	}
	if cell.Value == nil {
		cell.Value = defaultValue(cell.ID, keyID, itemID, cell.ValueType, dateIsTime)
	} else {
		fillNilValue(cell.Value, cell.ValueType)
	}
}

// fillKeyValues is fillAttributeViewKeyValues: the cells made for the
// table join the database's values (auto-filled, never saved).
func (r *avRenderer) fillKeyValues(av *wire.AttributeView, t *wire.AVTable) {
	ids := map[*wire.AVKeyValues]map[string]bool{}
	for _, row := range t.Rows {
		for _, cell := range row.Cells {
			v := cell.Value
			kv := avKeyValues(av, v.KeyID)
			if kv == nil {
				continue
			}
			have := ids[kv]
			if have == nil {
				have = make(map[string]bool, len(kv.Values))
				for _, x := range kv.Values {
					have[x.ID] = true
				}
				ids[kv] = have
			}
			if have[v.ID] {
				continue
			}
			have[v.ID] = true
			r.autoFill[v] = true
			kv.Values = append(kv.Values, v)
		}
	}
}

// boundIALs are the attributes of the rows' bound blocks.
func (r *avRenderer) boundIALs(t *wire.AVTable) map[string]map[string]string {
	ials := map[string]map[string]string{}
	for _, row := range t.Rows {
		if bv := rowBlockValue(row); bv != nil && !bv.IsDetached && bv.Block != nil {
			if m, ok := r.k.attrsOf(bv.Block.ID); ok {
				ials[bv.Block.ID] = m
			}
		}
	}
	return ials
}

func rowBlockValue(row *wire.AVRow) *wire.AVValue {
	for _, c := range row.Cells {
		if c.ValueType == wire.AVKeyBlock {
			return c.Value
		}
	}
	return nil
}

func rowValue(row *wire.AVRow, keyID string) *wire.AVValue {
	for _, c := range row.Cells {
		if c.Value != nil && c.Value.KeyID == keyID {
			return c.Value
		}
	}
	return nil
}

func tableValue(t *wire.AVTable, itemID, keyID string) *wire.AVValue {
	for _, row := range t.Rows {
		if row.ID == itemID {
			return rowValue(row, keyID)
		}
	}
	return nil
}

// fillGenerated is fillAttributeViewAutoGeneratedValues: static primary-key
// texts, created and updated times, relation contents and rollups.
func (r *avRenderer) fillGenerated(av *wire.AttributeView, t *wire.AVTable, ials map[string]map[string]string) {
	for _, row := range t.Rows {
		bv := rowBlockValue(row)
		var ial map[string]string
		if bv != nil && bv.Block != nil {
			ial = ials[bv.Block.ID]
		}
		for _, c := range row.Cells {
			v := c.Value
			switch v.Type {
			case wire.AVKeyBlock:
				if v.Block != nil {
					if s, ok := ials[v.Block.ID][avStaticTextAttr+av.ID]; ok {
						v.Block.Content = s
					}
				}
			case wire.AVKeyCreated:
				isNotTime := false
				if key := avKey(av, v.KeyID); key != nil && key.Created != nil {
					isNotTime = !key.Created.IncludeTime
				}
				id := row.ID
				if ial["id"] != "" {
					id = ial["id"]
				}
				ms, ok := parseIDTime(id)
				if !ok {
					ms = time.Now().UnixMilli()
				}
				v.Created = &wire.AVValueTime{Content: ms, IsNotEmpty: ok, FormattedContent: formatTime(ms, isNotTime)}
			case wire.AVKeyUpdated:
				isNotTime := false
				if key := avKey(av, v.KeyID); key != nil && key.Updated != nil {
					isNotTime = !key.Updated.IncludeTime
				}
				ms, ok := int64(0), false
				if s := ial["updated"]; s == "" && bv != nil && bv.Block != nil {
					ms, ok = bv.Block.Updated, true
				} else if tm, err := time.ParseInLocation("20060102150405", s, time.Local); err == nil {
					ms, ok = tm.UnixMilli(), true
				} else {
					ms = time.Now().UnixMilli()
				}
				v.Updated = &wire.AVValueTime{Content: ms, IsNotEmpty: ok, FormattedContent: formatTime(ms, isNotTime)}
			}
		}
	}
	r.fillRelations(av, t)
	r.fillRollups(av, t)
}

// parseIDTime is the time of an ID's first 14 digits, in milliseconds.
func parseIDTime(id string) (int64, bool) {
	if len(id) < 14 {
		return 0, false
	}
	tm, err := time.ParseInLocation("20060102150405", id[:14], time.Local)
	if err != nil {
		return 0, false
	}
	return tm.UnixMilli(), true
}

// fillRelations sets each relation cell's contents: the primary-key values
// (as stored, unrendered) of the related rows that exist, in the cell's
// order.
func (r *avRenderer) fillRelations(av *wire.AttributeView, t *wire.AVTable) {
	blocks := map[string]map[string]*wire.AVValue{}
	for _, row := range t.Rows {
		for _, c := range row.Cells {
			v := c.Value
			if v.Type != wire.AVKeyRelation || v.Relation == nil {
				continue
			}
			v.Relation.Contents = nil
			key := avKey(av, v.KeyID)
			if key == nil || key.Relation == nil {
				continue
			}
			dest := r.av(key.Relation.AvID)
			if dest == nil {
				continue
			}
			m := blocks[dest.ID]
			if m == nil {
				m = map[string]*wire.AVValue{}
				if bkv := avBlockKeyValues(dest); bkv != nil {
					for _, bv := range bkv.Values {
						m[bv.BlockID] = bv
					}
				}
				blocks[dest.ID] = m
			}
			for _, id := range v.Relation.BlockIDs {
				if bv := m[id]; bv != nil {
					v.Relation.Contents = append(v.Relation.Contents, bv)
				}
			}
		}
	}
}

// templateRenderMsg is the kernel's message for a failed template column
// (language string 44, the error HTML-escaped).
func templateRenderMsg(err error) string {
	return "Parse template failed: " + searchEscape(err.Error())
}

// filterRowsByQuery keeps the rows one of whose cells contains every
// space-separated word of the query, case-insensitively.
func filterRowsByQuery(query string, t *wire.AVTable) {
	words := strings.Fields(query)
	if len(words) == 0 {
		return
	}
	rows := []*wire.AVRow{}
	for _, row := range t.Rows {
		for _, c := range row.Cells {
			s := strings.ToLower(valueString(c.Value, true))
			all := true
			for _, w := range words {
				if !strings.Contains(s, strings.ToLower(w)) {
					all = false
					break
				}
			}
			if all {
				rows = append(rows, row)
				break
			}
		}
	}
	t.Rows = rows
}

// manualSort orders rows by the view's (or group's) item order; an item the order does
// not name sorts as if it were first, and ties go by item ID (the kernel's
// comparator, kept as it is).
func manualSort(view *wire.AVView, t *wire.AVTable) {
	pos := map[string]int{}
	ids := view.ItemIDs
	if len(view.GroupItemIDs) > 0 {
		ids = view.GroupItemIDs // a group's rows in the group's order
	}
	for i, id := range ids {
		pos[id] = i
	}
	sort.SliceStable(t.Rows, func(i, j int) bool {
		a, b := pos[t.Rows[i].ID], pos[t.Rows[j].ID]
		if a == b {
			return t.Rows[i].ID < t.Rows[j].ID
		}
		return a < b
	})
}

// errAVLayout refuses views this kernel does not render.
var errAVLayout = errors.New("the embedded kernel renders table views only")
