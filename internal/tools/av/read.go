package av

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// ---- get ------------------------------------------------------------------

type getArgs struct {
	avRef
	blockArg
}

// blockArg is the database block whose view a read means.
type blockArg struct {
	BlockID string `arg:"blockID" help:"a database block showing it (its view is the one meant)" id:""`
}

func parseGet(a *getArgs) error { return a.resolve() }

// read checks the block shows the database and reads the database: the
// database blocks the call may see, and the database as stored.
func (a getArgs) read(ctx context.Context, env *tools.Env) ([]string, *siyuan.AttributeView, error) {
	blocks, err := checkBlock(ctx, env, a.AvID, a.BlockID)
	if err != nil {
		return nil, nil, err
	}
	av, err := env.Kernel.GetAttributeView(ctx, a.AvID)
	if err != nil {
		return nil, nil, err
	}
	if av == nil {
		return nil, nil, failure.Missing("database", a.AvID)
	}
	return blocks, av, nil
}

var readGet = scopeOn(func(a getArgs) string { return a.AvID }, tools.LevelRead)

// checkBlock refuses a blockID that does not show the database; it
// answers the database blocks showing it that the call may see (a block
// in a hidden notebook does not show it, to the call).
func checkBlock(ctx context.Context, env *tools.Env, avID, blockID string) ([]string, error) {
	blocks, err := tools.DatabaseBlocks(ctx, env, avID)
	if err != nil {
		return nil, err
	}
	if blockID != "" && !contains(blocks, blockID) {
		return nil, failure.Invalid("block %s does not show database %s (its database blocks: %s)", blockID, avID, strings.Join(blocks, ", "))
	}
	return blocks, nil
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

var get = tools.Read[getArgs]{
	Name: "get", Summary: "a whole database as SiYuan stores it: keys (columns) with every cell, views, row order",
	Example:  map[string]any{"avID": "20260812120000-abcdefg"},
	Validate: parseGet, Scope: readGet,
	Run: func(ctx context.Context, env *tools.Env, a getArgs) (any, error) {
		blocks, av, err := a.read(ctx, env)
		if err != nil {
			return nil, err
		}
		out := map[string]any{"avID": a.AvID, "blockIDs": blocks}
		v, err := veilOf(ctx, env, av)
		if err != nil {
			return nil, err
		}
		if v != nil {
			var w withheld
			if av, err = v.attributeView(av, &w); err != nil {
				return nil, err
			}
			out["withheld"] = w
		}
		out["av"] = av
		c := dbContext{avID: a.AvID, blockID: a.BlockID, blocks: blocks, columns: keysOf(av), bound: boundBlocks(av),
			columnsAt: "av.keyValues[].key.id", rowsAt: "av.keyValues[].values[].blockID (a value's blockID is its row's item ID)"}
		if out["databaseContext"], err = c.answer(ctx, env); err != nil {
			return nil, err
		}
		coverDatabase(ctx, out, "database "+a.AvID, "as stored", nil)
		return out, nil
	},
}

// ---- render ---------------------------------------------------------------

type renderArgs struct {
	avRef
	blockArg
	ViewID      string         `arg:"viewID" help:"the view to render (default: the block's view, else the current one); rendering a view makes it current" id:""`
	Page        int            `arg:"page" help:"1-based page" default:"1" min:"1"`
	PageSize    int            `arg:"pageSize" help:"rows per page, 1 to 500; -1 is the view's own page size (SiYuan's default; the answer says which), bounded as every read by the call's read budget" default:"10" min:"-1" max:"500"`
	Query       string         `arg:"query" help:"keep the rows one of whose cells contains every word (case-insensitive)"`
	IgnoreRows  bool           `arg:"ignoreRows" help:"answer the columns only" default:"false"`
	Verbose     bool           `arg:"verbose" help:"answer SiYuan's full render (every value's fields) instead of cell texts" default:"false"`
	GroupPaging map[string]any `arg:"groupPaging" help:"a grouped view: each group's own page, {\"<groupID>\": {\"page\": n, \"pageSize\": n}} (pageSize as above); other groups take page and pageSize"`
	createFlag
}

// checkPaging refuses a pageSize of 0 and a groupPaging not of SiYuan's
// shape (which its render would fail on).
func checkPaging(a *renderArgs) error {
	if a.PageSize == 0 {
		return failure.Invalid("pageSize is 1 to 500, or -1 for the view's own page size")
	}
	for id, v := range a.GroupPaging {
		if err := tools.CheckID("groupPaging key", id); err != nil {
			return err
		}
		m, ok := v.(map[string]any)
		if !ok {
			return failure.Invalid("groupPaging[%s] must be an object {page, pageSize}", id)
		}
		for k, x := range m {
			n, ok := x.(float64)
			switch {
			case k != "page" && k != "pageSize":
				return failure.Invalid("groupPaging[%s] does not take %s (page, pageSize)", id, k)
			case !ok || n != math.Trunc(n):
				return failure.Invalid("groupPaging[%s].%s must be an integer", id, k)
			case k == "page" && n < 1:
				return failure.Invalid("groupPaging[%s].page must be at least 1", id)
			case k == "pageSize" && (n == 0 || n < -1 || n > 500):
				return failure.Invalid("groupPaging[%s].pageSize is 1 to 500, or -1 for the view's own page size", id)
			}
		}
	}
	return nil
}

// groupPage is the page and page size of a group: its groupPaging entry's,
// else the call's.
func (a renderArgs) groupPage(id string) (page, size int) {
	page, size = a.Page, a.PageSize
	if m, ok := a.GroupPaging[id].(map[string]any); ok {
		if n, ok := m["page"].(float64); ok {
			page = int(n)
		}
		if n, ok := m["pageSize"].(float64); ok {
			size = int(n)
		}
	}
	return page, size
}

// pageSizeOf is a page size as SiYuan applies it: below 1, the view's own;
// that below 1 too, every row.
func pageSizeOf(size, viewSize, rows int) int {
	if size < 1 {
		size = viewSize
	}
	if size < 1 {
		size = max(rows, 1)
	}
	return size
}

var render = tools.Read[renderArgs]{
	Name: "render", Summary: "a view of a database as a compact table: columns, a page of rows with each cell's text (verbose: SiYuan's full render)",
	Example: map[string]any{"avID": "20260812120000-abcdefg", "pageSize": 10},
	// With createIfNotExist:true, render creates a database: a strict
	// additive write (renderCreate).
	WriteForm: renderCreate.Action(), WriteWhen: "createIfNotExist", WriteIf: createsDatabase,
	Validate: func(a *renderArgs) error {
		if err := a.resolve(); err != nil {
			return err
		}
		return checkPaging(a)
	},
	Scope: scopeOn(func(a renderArgs) string { return a.AvID }, tools.LevelRead),
	Run: func(ctx context.Context, env *tools.Env, a renderArgs) (any, error) {
		if _, err := checkBlock(ctx, env, a.AvID, a.BlockID); err != nil {
			return nil, err
		}
		if tools.Hiding(ctx) {
			return renderVeiled(ctx, env, a)
		}
		r, err := env.Kernel.RenderAttributeView(ctx, siyuan.RenderAVRequest{ID: a.AvID, BlockID: a.BlockID, ViewID: a.ViewID,
			Page: a.Page, PageSize: a.PageSize, Query: a.Query, IgnoreRows: a.IgnoreRows, GroupPaging: a.GroupPaging})
		if err != nil {
			return nil, notFoundAV(err, a.AvID)
		}
		out, err := compact(r, a)
		if err != nil {
			return nil, err
		}
		if out["databaseContext"], err = renderContext(ctx, env, a, out); err != nil {
			return nil, err
		}
		coverRender(ctx, out, a)
		return out, nil
	},
}

// allRows is the page size that renders a view whole: SiYuan pages the
// rows of hidden notebooks with the others, so a veiled render pages
// itself.
const allRows = 1 << 20

// renderVeiled is render while a notebook is hidden: the view rendered
// whole, without what the call cannot see (veil.go), then filtered by the
// query and paged here, so that no count, page or match tells of it.
func renderVeiled(ctx context.Context, env *tools.Env, a renderArgs) (any, error) {
	av, err := env.Kernel.GetAttributeView(ctx, a.AvID)
	if err != nil {
		return nil, err
	}
	if av == nil {
		return nil, failure.Missing("database", a.AvID)
	}
	v, err := veilOf(ctx, env, av)
	if err != nil {
		return nil, err
	}
	r, err := env.Kernel.RenderAttributeView(ctx, siyuan.RenderAVRequest{ID: a.AvID, BlockID: a.BlockID, ViewID: a.ViewID,
		Page: 1, PageSize: allRows})
	if err != nil {
		return nil, notFoundAV(err, a.AvID)
	}
	var w withheld
	if r.View != nil {
		view, err := veilView(*r.View, v, a, &w)
		if err != nil {
			return nil, err
		}
		r.View = &view
	}
	out, err := compact(r, a)
	if err != nil {
		return nil, err
	}
	out["withheld"] = w
	if out["databaseContext"], err = renderContext(ctx, env, a, out); err != nil {
		return nil, err
	}
	coverRender(ctx, out, a)
	return out, nil
}

// coverRender says what a rendered page leaves out: the rows of later
// pages (with the call that reads the next one; a grouped view pages each
// group, so its next page is asked per group with groupPaging), and,
// while a notebook is hidden, its rows.
func coverRender(ctx context.Context, out map[string]any, a renderArgs) {
	more, _ := out["hasNextPage"].(bool)
	var lims []string
	var steps []tools.NextStep
	if more && !a.IgnoreRows {
		lims = append(lims, fmt.Sprintf("page %d of the rows only; more pages exist", a.Page))
		if _, grouped := out["groups"]; grouped {
			lims[0] += " in some groups (each group's hasNextPage says which; groupPaging reads them)"
		} else {
			next := map[string]any{"action": "render", "avID": a.AvID, "page": a.Page + 1, "pageSize": a.PageSize}
			for k, v := range map[string]string{"blockID": a.BlockID, "viewID": a.ViewID, "query": a.Query} {
				if v != "" {
					next[k] = v
				}
			}
			if a.Verbose {
				next["verbose"] = true
			}
			steps = append(steps, tools.NextStep{Purpose: "read the next page of rows", Tool: "av", Arguments: next})
		}
	}
	coverDatabase(ctx, out, "database "+a.AvID+" view rows", "compact table", lims, steps...)
}

// coverDatabase completes a database read's answer: lims are what the
// read itself left out; while a notebook is hidden, what it holds is
// left out too (withheld counts it).
func coverDatabase(ctx context.Context, out map[string]any, scope, repr string, lims []string, steps ...tools.NextStep) {
	info := tools.ReadInfo{Scope: scope, Representation: repr, Limitations: append(lims, withheldLimit(out)...)}
	tools.Cover(ctx, out, info, steps...)
}

// coverUnsure is coverDatabase for a read that cannot tell whether it
// left something out (a full page of a kernel answer with no total).
func coverUnsure(ctx context.Context, out map[string]any, scope, repr, lim string, steps ...tools.NextStep) {
	info := tools.ReadInfo{Scope: scope, Coverage: tools.CoverageUnknown, Representation: repr, Limitations: append([]string{lim}, withheldLimit(out)...)}
	tools.Cover(ctx, out, info, steps...)
}

// withheldLimit is the limitation of an answer that withheld what hidden
// notebooks hold (the answer's withheld counts say how much already).
func withheldLimit(out map[string]any) []string {
	if w, ok := out["withheld"].(withheld); ok && (w.Rows > 0 || w.Cells > 0) {
		return []string{fmt.Sprintf("%d rows and %d cells of notebooks hidden from agents were left out", w.Rows, w.Cells)}
	}
	return nil
}

// veilView is a view rendered whole as the call may see it: rows it may
// not see left out (each counted once in w, whichever groups hold it),
// cells veiled, the rows kept that match the query, paged; column and
// group calculations (worked out over every row) dropped. In a grouped
// view SiYuan puts the rows in the groups, none in the view: each group
// is veiled so, and a group whose rows were all left out is left out too
// (its name may be a value of a row left out); a group SiYuan shows empty
// stays. The view's row count is then of the distinct rows its groups
// show.
func veilView(view siyuan.AVTable, v *veil, a renderArgs, w *withheld) (siyuan.AVTable, error) {
	rv := rowVeil{v: v, query: a.Query, w: w, seen: map[string]*veiledRow{}}
	rows, _ := rv.rows(view.Rows)
	view.Columns = columnsWithoutResults(view.Columns)
	view.GroupCalc = nil
	view.RowCount = len(rows)
	view.Rows = tools.PageSlice(rows, a.Page, pageSizeOf(a.PageSize, view.PageSize, len(rows)))
	if a.IgnoreRows {
		view.Rows = []*siyuan.AVRow{}
	}
	groups, err := groupsOf(&view)
	if err != nil || groups == nil {
		view.Groups = nil
		return view, err
	}
	kept := make([]*siyuan.AVTable, 0, len(groups))
	shown := map[string]bool{}
	for _, g := range groups {
		c := *g
		rows, hidden := rv.rows(g.Rows)
		if hidden > 0 && len(rows) == 0 && rv.allHidden(g.Rows) {
			continue
		}
		for _, r := range rows {
			shown[r.ID] = true
		}
		c.Columns = columnsWithoutResults(g.Columns)
		c.GroupCalc = nil
		c.RowCount = len(rows)
		page, size := a.groupPage(g.ID)
		c.Rows = tools.PageSlice(rows, page, pageSizeOf(size, view.PageSize, len(rows)))
		if a.IgnoreRows {
			c.Rows = []*siyuan.AVRow{}
		}
		kept = append(kept, &c)
	}
	raw, err := json.Marshal(kept)
	if err != nil {
		return view, err
	}
	view.Groups, view.RowCount = raw, len(shown)
	return view, nil
}

// rowVeil veils the rows of one render: each row once, however many
// groups hold it.
type rowVeil struct {
	v     *veil
	query string
	w     *withheld
	seen  map[string]*veiledRow // by row ID; nil: left out
}

// veiledRow is a row as the call may see it, and whether it matches the
// query.
type veiledRow struct {
	row   *siyuan.AVRow
	match bool
}

// rows are the rows of in the call may see that match the query, and how
// many were left out.
func (rv *rowVeil) rows(in []*siyuan.AVRow) (out []*siyuan.AVRow, hidden int) {
	out = make([]*siyuan.AVRow, 0, len(in))
	for _, row := range in {
		if row == nil {
			continue
		}
		vr, done := rv.seen[row.ID]
		if !done {
			vr = rv.one(row)
			rv.seen[row.ID] = vr
		}
		switch {
		case vr == nil:
			hidden++
		case vr.match:
			out = append(out, vr.row)
		}
	}
	return out, hidden
}

// allHidden reports whether every row of in is left out.
func (rv *rowVeil) allHidden(in []*siyuan.AVRow) bool {
	for _, row := range in {
		if row != nil && rv.seen[row.ID] != nil {
			return false
		}
	}
	return true
}

// one veils a row not seen before (nil: left out, counted in w).
func (rv *rowVeil) one(row *siyuan.AVRow) *veiledRow {
	if rv.v.row(row.ID) {
		rv.w.Rows++
		return nil
	}
	c := *row
	c.Cells = make([]*siyuan.AVCell, 0, len(row.Cells))
	var texts []string
	for _, cell := range row.Cells {
		if cell == nil {
			continue
		}
		cc := *cell
		cc.Value = rv.v.value(row.ID, nil, cell.Value, rv.w)
		if cc.Value == nil && cell.Value != nil {
			cc.Value = &siyuan.AVValue{ID: cell.Value.ID, KeyID: cell.Value.KeyID, BlockID: cell.Value.BlockID, Type: cell.Value.Type}
		}
		texts = append(texts, CellText(cc.Value))
		c.Cells = append(c.Cells, &cc)
	}
	return &veiledRow{row: &c, match: matchesQuery(rv.query, texts)}
}

// columnsWithoutResults are a view's columns without their calculations'
// results (worked out over every row); their operators stay.
func columnsWithoutResults(in []*siyuan.AVColumn) []*siyuan.AVColumn {
	cols := make([]*siyuan.AVColumn, 0, len(in))
	for _, col := range in {
		if col != nil {
			cc := *col
			cc.Calc = calcWithoutResult(col.Calc)
			cols = append(cols, &cc)
		}
	}
	return cols
}

// groupsOf are the groups of a grouped view as SiYuan renders them (each
// a table of its rows); nil for a view without groups.
func groupsOf(view *siyuan.AVTable) ([]*siyuan.AVTable, error) {
	if len(view.Groups) == 0 || string(view.Groups) == "null" {
		return nil, nil
	}
	var groups []*siyuan.AVTable
	if err := json.Unmarshal(view.Groups, &groups); err != nil {
		return nil, fmt.Errorf("the groups of a rendered view: %w", err)
	}
	return slices.DeleteFunc(groups, func(g *siyuan.AVTable) bool { return g == nil }), nil
}

// notFoundAV turns the kernel's "not found" answers for a database into
// not_found.
func notFoundAV(err error, avID string) error {
	var api *siyuan.APIError
	if errors.As(err, &api) && strings.Contains(api.Msg, "not found") {
		return failure.Missing("database", avID)
	}
	return err
}

// compact is a render as an agent reads it: the columns (id, name, type)
// and each row's cells as text keyed by column ID.
func compact(r siyuan.AVRender, a renderArgs) (map[string]any, error) {
	out := map[string]any{"avID": r.ID, "name": r.Name, "viewID": r.ViewID, "viewType": r.ViewType, "isMirror": r.IsMirror,
		"page": a.Page, "pageSize": a.PageSize}
	viewSize := 0
	if r.View != nil {
		viewSize = r.View.PageSize
	}
	views := make([]map[string]any, 0, len(r.Views))
	for _, v := range r.Views {
		views = append(views, map[string]any{"id": v.ID, "name": v.Name, "type": v.Type})
	}
	out["views"] = views
	if r.View == nil {
		return out, nil
	}
	if a.Verbose {
		out["view"] = r.View
	}
	cols := make([]map[string]any, 0, len(r.View.Columns))
	for _, c := range r.View.Columns {
		col := map[string]any{"id": c.ID, "name": c.Name, "type": c.Type}
		if c.Hidden {
			col["hidden"] = true
		}
		if len(c.Options) > 0 {
			var names []string
			for _, o := range c.Options {
				names = append(names, o.Name)
			}
			col["options"] = names
		}
		cols = append(cols, col)
	}
	out["columns"] = cols
	out["rowCount"] = r.View.RowCount
	size := pageSizeOf(a.PageSize, viewSize, r.View.RowCount)
	out["pageSize"] = size
	pages := func(n, size int) int { return max(1, (n+size-1)/size) }
	out["pageCount"] = pages(r.View.RowCount, size)
	out["hasNextPage"] = a.Page*size < r.View.RowCount
	groups, err := groupsOf(r.View)
	if err != nil {
		return nil, err
	}
	if groups != nil {
		// A grouped view: SiYuan pages each group, and puts the rows in
		// the groups only.
		out["pageCount"], out["hasNextPage"] = 1, false
		gs := make([]map[string]any, 0, len(groups))
		for _, g := range groups {
			page, size := a.groupPage(g.ID)
			size = pageSizeOf(size, viewSize, g.RowCount)
			m := map[string]any{"id": g.ID, "name": g.Name, "rowCount": g.RowCount, "pageCount": pages(g.RowCount, size),
				"hasNextPage": page*size < g.RowCount}
			if _, ok := a.GroupPaging[g.ID]; ok {
				m["page"], m["pageSize"] = page, size
			}
			if g.GroupHidden != 0 {
				m["hidden"] = true
			}
			if g.GroupFolded {
				m["folded"] = true
			}
			if !a.IgnoreRows && !a.Verbose {
				m["rows"] = compactRows(g.Rows)
			}
			out["pageCount"] = max(out["pageCount"].(int), pages(g.RowCount, size))
			out["hasNextPage"] = out["hasNextPage"].(bool) || page*size < g.RowCount
			gs = append(gs, m)
		}
		out["groups"] = gs
		return out, nil
	}
	if a.IgnoreRows || a.Verbose {
		return out, nil
	}
	out["rows"] = compactRows(r.View.Rows)
	return out, nil
}

// compactRows are rendered rows as an agent reads them: each row's id,
// its bound block and its cells' texts by column ID.
func compactRows(in []*siyuan.AVRow) []map[string]any {
	rows := make([]map[string]any, 0, len(in))
	for _, row := range in {
		if row == nil {
			continue
		}
		cells := map[string]string{}
		m := map[string]any{"id": row.ID, "cells": cells}
		for _, c := range row.Cells {
			if c == nil || c.Value == nil {
				continue
			}
			if c.Value.Type == siyuan.AVKeyBlock && c.Value.Block != nil && !c.Value.IsDetached && c.Value.Block.ID != "" {
				m["blockID"] = c.Value.Block.ID
			}
			if t := CellText(c.Value); t != "" {
				cells[c.Value.KeyID] = t
			}
		}
		rows = append(rows, m)
	}
	return rows
}

// CellText is a value as one line of text: what SiYuan's table shows.
func CellText(v *siyuan.AVValue) string {
	if v == nil {
		return ""
	}
	content := func(c *siyuan.AVValueContent) string {
		if c == nil {
			return ""
		}
		return c.Content
	}
	switch v.Type {
	case siyuan.AVKeyBlock:
		if v.Block != nil {
			return v.Block.Content
		}
	case siyuan.AVKeyText:
		return content(v.Text)
	case siyuan.AVKeyURL:
		return content(v.URL)
	case siyuan.AVKeyEmail:
		return content(v.Email)
	case siyuan.AVKeyPhone:
		return content(v.Phone)
	case siyuan.AVKeyTemplate:
		return content(v.Template)
	case siyuan.AVKeyNumber:
		if v.Number != nil && v.Number.IsNotEmpty {
			if v.Number.FormattedContent != "" {
				return v.Number.FormattedContent
			}
			return strconv.FormatFloat(v.Number.Content, 'f', -1, 64)
		}
	case siyuan.AVKeyDate:
		if v.Date != nil && v.Date.IsNotEmpty {
			return dateText(v.Date.Content, v.Date.IsNotTime) + endDate(v.Date)
		}
	case siyuan.AVKeyCreated, siyuan.AVKeyUpdated:
		t := v.Created
		if v.Type == siyuan.AVKeyUpdated {
			t = v.Updated
		}
		if t != nil && t.IsNotEmpty {
			return dateText(t.Content, false)
		}
	case siyuan.AVKeySelect, siyuan.AVKeyMSelect:
		var names []string
		for _, o := range v.MSelect {
			names = append(names, o.Content)
		}
		return strings.Join(names, ", ")
	case siyuan.AVKeyCheckbox:
		if v.Checkbox != nil && v.Checkbox.Checked {
			return "true"
		}
		return ""
	case siyuan.AVKeyMAsset:
		var names []string
		for _, a := range v.MAsset {
			names = append(names, a.Content)
		}
		return strings.Join(names, ", ")
	case siyuan.AVKeyRelation:
		if v.Relation != nil {
			var names []string
			for _, c := range v.Relation.Contents {
				names = append(names, CellText(c))
			}
			return strings.Join(names, ", ")
		}
	case siyuan.AVKeyRollup:
		if v.Rollup != nil {
			var names []string
			for _, c := range v.Rollup.Contents {
				names = append(names, CellText(c))
			}
			return strings.Join(names, ", ")
		}
	}
	return ""
}

func dateText(ms int64, dateOnly bool) string {
	t := time.UnixMilli(ms)
	if dateOnly {
		return t.Format("2006-01-02")
	}
	return t.Format("2006-01-02 15:04")
}

func endDate(d *siyuan.AVValueDate) string {
	if d.HasEndDate && d.IsNotEmpty2 {
		return " → " + dateText(d.Content2, d.IsNotTime)
	}
	return ""
}

// ---- get_attribute_view_keys ----------------------------------------------

type keysArgs struct {
	AvID    string `arg:"avID" help:"the database: its keys (columns) in stored order" id:""`
	BlockID string `arg:"id" help:"a block bound to databases: each database with the block's row's cells; a database's id here is read as avID (upstream 0.6.8's alias)" id:""`
}

// asDatabase completes a call whose id names a database the agent may
// see: upstream 0.6.8 documents id as an alias of avID, SiYuan's endpoint
// takes a block there, and the two never share an id. A database only a
// hidden notebook shows stays a block id that names nothing, so that the
// answer does not tell it exists.
func (a *keysArgs) asDatabase(ctx context.Context, env *tools.Env) error {
	if a.BlockID == "" {
		return nil
	}
	blocks, err := env.Kernel.GetMirrorDatabaseBlocks(ctx, a.BlockID)
	if err != nil {
		return fmt.Errorf("find the blocks showing database %s: %w", a.BlockID, err)
	}
	if len(blocks) == 0 {
		return nil
	}
	if tools.Hiding(ctx) {
		if blocks, err = tools.VisibleBlocks(ctx, env, blocks); err != nil || len(blocks) == 0 {
			return err
		}
	}
	a.AvID, a.BlockID = a.BlockID, ""
	return nil
}

var getKeys = tools.Read[keysArgs]{
	Name: "get_attribute_view_keys", Summary: "a database's columns (avID), or the databases a bound block is a row of with its cells (id: the block)",
	Example: map[string]any{"avID": "20260812120000-abcdefg"},
	Validate: func(a *keysArgs) error {
		if (a.AvID == "") == (a.BlockID == "") {
			return failure.Invalid("pass avID (a database's columns) or id (a block bound to databases), one of them")
		}
		return nil
	},
	Scope: tools.Scope[keysArgs]{Resolve: func(ctx context.Context, env *tools.Env, a keysArgs) ([]tools.Touch, error) {
		if err := a.asDatabase(ctx, env); err != nil {
			return nil, err
		}
		if a.AvID != "" {
			return dbTouches(ctx, env, a.AvID, tools.LevelRead)
		}
		// The block and every database it is a row of (custom-avs), each
		// through its own blocks: the answer shows all of them.
		out := []tools.Touch{tools.OnBlock(a.BlockID, tools.LevelRead)}
		attrs, err := env.Kernel.GetBlockAttrs(ctx, a.BlockID)
		if err != nil {
			return nil, fmt.Errorf("read the attributes of %s: %w", a.BlockID, err)
		}
		for _, id := range strings.Split(attrs["custom-avs"], ",") {
			if id = strings.TrimSpace(id); id == "" {
				continue
			}
			ts, err := dbTouches(ctx, env, id, tools.LevelRead)
			var fe *failure.Error
			if errors.As(err, &fe) && fe.Code == failure.NotFound {
				continue // a stale binding: nothing of it is shown
			}
			if err != nil {
				return nil, err
			}
			out = append(out, ts...)
		}
		return out, nil
	}},
	Run: func(ctx context.Context, env *tools.Env, a keysArgs) (any, error) {
		if err := a.asDatabase(ctx, env); err != nil {
			return nil, err
		}
		if a.AvID != "" {
			av, err := env.Kernel.GetAttributeView(ctx, a.AvID)
			if err != nil {
				return nil, err
			}
			if av == nil {
				return nil, failure.Missing("database", a.AvID)
			}
			keys, err := env.Kernel.GetAttributeViewKeysByAvID(ctx, a.AvID)
			if err != nil {
				return nil, err
			}
			if tools.Hiding(ctx) {
				// A rollup's stored result is computed over every row.
				for i := range keys {
					if r := keys[i].Rollup; r != nil && r.Calc != nil && r.Calc.Result != nil {
						rc, calc := *r, *r.Calc
						calc.Result = nil
						rc.Calc = &calc
						keys[i].Rollup = &rc
					}
				}
			}
			blocks, err := tools.DatabaseBlocks(ctx, env, a.AvID)
			if err != nil {
				return nil, err
			}
			c := dbContext{avID: a.AvID, blocks: blocks, columns: keys, columnsAt: "keys[].id"}
			dc, err := c.answer(ctx, env)
			if err != nil {
				return nil, err
			}
			out := map[string]any{"avID": a.AvID, "keys": keys, "count": len(keys), "databaseContext": dc}
			info := tools.ReadInfo{Scope: "database " + a.AvID + " columns", Representation: "keys"}
			if tools.Hiding(ctx) {
				info.Limitations = []string{"rollup results are left out while a notebook is hidden from agents (they are computed over every row)"}
			}
			tools.Cover(ctx, out, info)
			return out, nil
		}
		ok, err := env.Kernel.CheckBlockExist(ctx, a.BlockID)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, failure.Missing("block", a.BlockID)
		}
		dbs, err := env.Kernel.GetAttributeViewKeys(ctx, a.BlockID)
		if err != nil {
			return nil, err
		}
		out := map[string]any{"id": a.BlockID}
		if tools.Hiding(ctx) {
			var w withheld
			if dbs, err = veiledKeys(ctx, env, dbs, &w); err != nil {
				return nil, err
			}
			out["withheld"] = w
		}
		out["databases"], out["count"] = dbs, len(dbs)
		return out, nil
	},
}

// veiledKeys are a block's databases (get_attribute_view_keys by id) as
// the call may see them: without the databases shown only where it may
// not look (the block's row there is left out, as the database is), and
// each row's cells veiled. The block itself is visible (the gate saw to
// it), so its rows are.
func veiledKeys(ctx context.Context, env *tools.Env, dbs []siyuan.AVBlockKeys, w *withheld) ([]siyuan.AVBlockKeys, error) {
	out := make([]siyuan.AVBlockKeys, 0, len(dbs))
	for _, db := range dbs {
		shown, err := tools.VisibleBlocks(ctx, env, db.BlockIDs)
		if err != nil {
			return nil, err
		}
		if len(shown) == 0 {
			w.Rows++
			continue
		}
		av, err := env.Kernel.GetAttributeView(ctx, db.AvID)
		if err != nil {
			return nil, err
		}
		v, err := veilOf(ctx, env, av)
		if err != nil {
			return nil, err
		}
		db.BlockIDs = shown
		kvs := make([]*siyuan.AVKeyValues, 0, len(db.KeyValues))
		for _, kv := range db.KeyValues {
			if kv == nil {
				continue
			}
			c := *kv
			c.Values = nil
			for _, val := range kv.Values {
				if val = v.value(val.BlockID, c.Key, val, w); val != nil {
					c.Values = append(c.Values, val)
				}
			}
			kvs = append(kvs, &c)
		}
		db.KeyValues = kvs
		out = append(out, db)
	}
	return out, nil
}

// ---- get_attribute_view_filter_sort ---------------------------------------

var getFilterSort = tools.Read[getArgs]{
	Name: "get_attribute_view_filter_sort", Summary: "the filters and sorts of a database's view (the blockID's, else the current one)",
	Example:  map[string]any{"avID": "20260812120000-abcdefg"},
	Validate: parseGet, Scope: readGet,
	Run: func(ctx context.Context, env *tools.Env, a getArgs) (any, error) {
		blocks, av, err := a.read(ctx, env)
		if err != nil {
			return nil, err
		}
		fs, err := env.Kernel.GetAttributeViewFilterSort(ctx, a.AvID, a.BlockID)
		if err != nil {
			return nil, err
		}
		c := dbContext{avID: a.AvID, blockID: a.BlockID, blocks: blocks, columns: keysOf(av), columnsAt: "filters[].column, sorts[].column"}
		dc, err := c.answer(ctx, env)
		if err != nil {
			return nil, err
		}
		return map[string]any{"avID": a.AvID, "filters": fs.Filters, "sorts": fs.Sorts, "databaseContext": dc}, nil
	},
}

// ---- search ---------------------------------------------------------------

type searchArgs struct {
	Keyword  string   `arg:"keyword" help:"words of the database's name"`
	Excludes []string `arg:"excludes" help:"database IDs to leave out"`
}

var search = tools.Read[searchArgs]{
	Name: "search", Summary: "databases whose name contains every word of keyword (\"\" finds all; at most 12), with a block showing each and its views",
	Example: map[string]any{"keyword": "projects"},
	Scope:   tools.Scope[searchArgs]{Global: true},
	Run: func(ctx context.Context, env *tools.Env, a searchArgs) (any, error) {
		hits, err := env.Kernel.SearchAttributeView(ctx, a.Keyword, a.Excludes)
		if err != nil {
			return nil, err
		}
		// A hit is shown when the notebook of its block is visible; a
		// hit SiYuan found through a block in a hidden notebook is shown
		// through another block showing the database, if one is visible,
		// and is left out if none is (as a database that does not exist).
		out := make([]siyuan.AVSearchResult, 0, len(hits))
		var names map[string]string // notebook names, listed once when a hit needs them
		for _, h := range hits {
			loc, err := env.Kernel.GetPathByID(ctx, h.BlockID)
			if err != nil {
				var api *siyuan.APIError
				if errors.As(err, &api) {
					continue // a block gone since the index saw it
				}
				return nil, err
			}
			if loc.Notebook != "" && tools.Visible(ctx, loc.Notebook) {
				out = append(out, h)
				continue
			}
			if !tools.Hiding(ctx) {
				continue
			}
			if names == nil {
				if names, err = notebookNames(ctx, env); err != nil {
					return nil, err
				}
			}
			if h, ok, err := shownElsewhere(ctx, env, h, names); err != nil {
				return nil, err
			} else if ok {
				out = append(out, h)
			}
		}
		return map[string]any{"results": out, "count": len(out)}, nil
	},
}

// notebookNames are the notebooks' names by id.
func notebookNames(ctx context.Context, env *tools.Env) (map[string]string, error) {
	nbs, err := env.Kernel.ListNotebooks(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(nbs))
	for _, n := range nbs {
		out[n.ID] = n.Name
	}
	return out, nil
}

// shownElsewhere is a search hit through a visible block showing its
// database, with that block's human path (after its notebook's name, from
// names); false when no block the call may see shows it.
func shownElsewhere(ctx context.Context, env *tools.Env, h siyuan.AVSearchResult, names map[string]string) (siyuan.AVSearchResult, bool, error) {
	shown, err := tools.DatabaseBlocks(ctx, env, h.AvID)
	if err != nil || len(shown) == 0 {
		return h, false, err
	}
	loc, err := env.Kernel.GetPathByID(ctx, shown[0])
	if err != nil {
		return h, false, err
	}
	hpath, err := env.Kernel.GetHPathByID(ctx, shown[0])
	if err != nil {
		return h, false, err
	}
	h.BlockID, h.HPath = shown[0], names[loc.Notebook]+hpath
	return h, true, nil
}

// ---- get_primary_key_values -----------------------------------------------

type pkArgs struct {
	avRef
	Keyword  string `arg:"keyword" help:"keep the values containing it"`
	Page     int    `arg:"page" help:"1-based page" default:"1" min:"1"`
	PageSize int    `arg:"pageSize" help:"values per page" default:"16" min:"1" max:"200"`
}

var getPrimaryKeyValues = tools.Read[pkArgs]{
	Name: "get_primary_key_values", Summary: "a page of a database's rows' primary-key values (their texts) containing keyword, most recently changed first",
	Example:  map[string]any{"avID": "20260812120000-abcdefg", "keyword": ""},
	Validate: func(a *pkArgs) error { return a.resolve() },
	Scope:    scopeOn(func(a pkArgs) string { return a.AvID }, tools.LevelRead),
	Run: func(ctx context.Context, env *tools.Env, a pkArgs) (any, error) {
		req := siyuan.AVPrimaryKeyValuesRequest{ID: a.AvID, Keyword: a.Keyword, Page: a.Page, PageSize: a.PageSize}
		hiding := tools.Hiding(ctx)
		if hiding {
			// SiYuan pages the rows of hidden notebooks with the others:
			// every value is read, and paged here without them.
			req.Page, req.PageSize = 1, allRows
		}
		r, err := env.Kernel.GetAttributeViewPrimaryKeyValues(ctx, req)
		if err != nil {
			return nil, notFoundAV(err, a.AvID)
		}
		var rows []*siyuan.AVValue
		if r.Rows != nil {
			rows = r.Rows.Values
		}
		out := map[string]any{"avID": a.AvID, "name": r.Name, "blockIDs": r.BlockIDs, "page": a.Page, "pageSize": a.PageSize}
		if hiding {
			av, err := env.Kernel.GetAttributeView(ctx, a.AvID)
			if err != nil {
				return nil, err
			}
			v, err := veilOf(ctx, env, av)
			if err != nil {
				return nil, err
			}
			var w withheld
			rows = slices.DeleteFunc(slices.Clone(rows), func(val *siyuan.AVValue) bool {
				hidden := val == nil || v.row(val.BlockID)
				if hidden {
					w.Rows++
				}
				return hidden
			})
			rows = tools.PageSlice(rows, a.Page, a.PageSize)
			if out["blockIDs"], err = tools.VisibleBlocks(ctx, env, r.BlockIDs); err != nil {
				return nil, err
			}
			out["withheld"] = w
		}
		values := []map[string]any{}
		for _, v := range rows {
			m := map[string]any{"rowID": v.BlockID, "text": CellText(v), "detached": v.IsDetached}
			if v.Block != nil && !v.IsDetached && v.Block.ID != "" {
				m["blockID"] = v.Block.ID
			}
			values = append(values, m)
		}
		out["values"] = values
		scope := "database " + a.AvID + " primary-key values"
		if len(values) == a.PageSize {
			// The kernel gives no total: a full page may be the last.
			coverUnsure(ctx, out, scope, "texts", fmt.Sprintf("page %d only, a full page: more values may exist", a.Page),
				tools.NextStep{Purpose: "read the next page of values", Tool: "av",
					Arguments: map[string]any{"action": "get_primary_key_values", "avID": a.AvID, "keyword": a.Keyword, "page": a.Page + 1, "pageSize": a.PageSize}})
		} else {
			coverDatabase(ctx, out, scope, "texts", nil)
		}
		return out, nil
	},
}
