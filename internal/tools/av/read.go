package av

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// ---- get ------------------------------------------------------------------

type getArgs struct{ AvID, BlockID string }

func parseGet(a *tools.Args) (getArgs, error) {
	id, err := avIDOf(a)
	if err != nil {
		return getArgs{}, err
	}
	out := getArgs{AvID: id, BlockID: a.String("blockID")}
	if out.BlockID != "" {
		if err := tools.CheckID("blockID", out.BlockID); err != nil {
			return out, err
		}
	}
	return out, nil
}

func blockParam() tools.Param {
	return tools.IDParam("blockID", "a database block showing it (its view is the one meant)", false)
}

var readGet = scopeOn(func(a getArgs) string { return a.AvID }, tools.LevelRead)

// checkBlock refuses a blockID that does not show the database.
func checkBlock(ctx context.Context, env *tools.Env, avID, blockID string) ([]string, error) {
	blocks, err := env.Kernel.GetMirrorDatabaseBlocks(ctx, avID)
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
	Example: map[string]any{"avID": "20260812120000-abcdefg"},
	Params:  append(avIDParams(), blockParam()),
	Parse:   parseGet, Scope: readGet,
	Run: func(ctx context.Context, env *tools.Env, a getArgs) (any, error) {
		blocks, err := checkBlock(ctx, env, a.AvID, a.BlockID)
		if err != nil {
			return nil, err
		}
		av, err := env.Kernel.GetAttributeView(ctx, a.AvID)
		if err != nil {
			return nil, err
		}
		if av == nil {
			return nil, failure.Missing("database", a.AvID)
		}
		return map[string]any{"avID": a.AvID, "blockIDs": blocks, "av": av}, nil
	},
}

// ---- render ---------------------------------------------------------------

type renderArgs struct {
	AvID, BlockID, ViewID, Query string
	Page, PageSize               int
	IgnoreRows, Verbose          bool
}

var render = tools.Read[renderArgs]{
	Name: "render", Summary: "a view of a database as a compact table: columns, a page of rows with each cell's text (verbose: SiYuan's full render)",
	Example: map[string]any{"avID": "20260812120000-abcdefg", "pageSize": 10},
	Params: append(avIDParams(), blockParam(),
		tools.IDParam("viewID", "the view to render (default: the block's view, else the current one); rendering a view makes it current", false),
		tools.Param{Name: "page", Type: tools.Integer, Description: "1-based page", Default: 1, Min: tools.IntP(1)},
		tools.Param{Name: "pageSize", Type: tools.Integer, Description: "rows per page", Default: 10, Min: tools.IntP(1), Max: tools.IntP(500)},
		tools.Param{Name: "query", Type: tools.String, Description: "keep the rows one of whose cells contains every word (case-insensitive)"},
		tools.Param{Name: "ignoreRows", Type: tools.Boolean, Description: "answer the columns only", Default: false},
		tools.Param{Name: "verbose", Type: tools.Boolean, Description: "answer SiYuan's full render (every value's fields) instead of cell texts", Default: false},
		createParam(),
	),
	// With createIfNotExist:true, render creates a database: a strict
	// additive write (renderCreate).
	WriteForm: renderCreate.Action(), WriteWhen: "createIfNotExist", WriteIf: createsDatabase,
	Parse: func(a *tools.Args) (renderArgs, error) {
		id, err := avIDOf(a)
		if err != nil {
			return renderArgs{}, err
		}
		out := renderArgs{AvID: id, BlockID: a.String("blockID"), ViewID: a.String("viewID"), Query: a.String("query"),
			Page: a.Int("page"), PageSize: a.Int("pageSize"), IgnoreRows: a.Bool("ignoreRows"), Verbose: a.Bool("verbose")}
		for _, f := range [][2]string{{"blockID", out.BlockID}, {"viewID", out.ViewID}} {
			if f[1] != "" {
				if err := tools.CheckID(f[0], f[1]); err != nil {
					return out, err
				}
			}
		}
		return out, nil
	},
	Scope: scopeOn(func(a renderArgs) string { return a.AvID }, tools.LevelRead),
	Run: func(ctx context.Context, env *tools.Env, a renderArgs) (any, error) {
		if _, err := checkBlock(ctx, env, a.AvID, a.BlockID); err != nil {
			return nil, err
		}
		r, err := env.Kernel.RenderAttributeView(ctx, siyuan.RenderAVRequest{ID: a.AvID, BlockID: a.BlockID, ViewID: a.ViewID,
			Page: a.Page, PageSize: a.PageSize, Query: a.Query, IgnoreRows: a.IgnoreRows})
		if err != nil {
			return nil, notFoundAV(err, a.AvID)
		}
		return compact(r, a), nil
	},
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
func compact(r siyuan.AVRender, a renderArgs) map[string]any {
	out := map[string]any{"avID": r.ID, "name": r.Name, "viewID": r.ViewID, "viewType": r.ViewType, "isMirror": r.IsMirror,
		"page": a.Page, "pageSize": a.PageSize}
	views := make([]map[string]any, 0, len(r.Views))
	for _, v := range r.Views {
		views = append(views, map[string]any{"id": v.ID, "name": v.Name, "type": v.Type})
	}
	out["views"] = views
	if r.View == nil {
		return out
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
	out["pageCount"] = max(1, (r.View.RowCount+a.PageSize-1)/a.PageSize)
	out["hasNextPage"] = a.Page*a.PageSize < r.View.RowCount
	if a.IgnoreRows || a.Verbose {
		return out
	}
	rows := make([]map[string]any, 0, len(r.View.Rows))
	for _, row := range r.View.Rows {
		cells := map[string]string{}
		m := map[string]any{"id": row.ID, "cells": cells}
		for _, c := range row.Cells {
			if c.Value == nil {
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
	out["rows"] = rows
	return out
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

type keysArgs struct{ AvID, BlockID string }

var getKeys = tools.Read[keysArgs]{
	Name: "get_attribute_view_keys", Summary: "a database's columns (avID), or the databases a bound block is a row of with its cells (id: the block)",
	Example: map[string]any{"avID": "20260812120000-abcdefg"},
	Params: []tools.Param{
		tools.IDParam("avID", "the database: its keys (columns) in stored order", false),
		tools.IDParam("id", "a block bound to databases: each database with the block's row's cells", false),
	},
	Parse: func(a *tools.Args) (keysArgs, error) {
		out := keysArgs{AvID: a.String("avID"), BlockID: a.String("id")}
		if (out.AvID == "") == (out.BlockID == "") {
			return out, failure.Invalid("pass avID (a database's columns) or id (a block bound to databases), one of them")
		}
		if out.AvID != "" {
			return out, tools.CheckID("avID", out.AvID)
		}
		return out, tools.CheckID("id", out.BlockID)
	},
	Scope: tools.Scope[keysArgs]{Resolve: func(ctx context.Context, env *tools.Env, a keysArgs) ([]tools.Touch, error) {
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
			return map[string]any{"avID": a.AvID, "keys": keys, "count": len(keys)}, nil
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
		return map[string]any{"id": a.BlockID, "databases": dbs, "count": len(dbs)}, nil
	},
}

// ---- get_attribute_view_filter_sort ---------------------------------------

var getFilterSort = tools.Read[getArgs]{
	Name: "get_attribute_view_filter_sort", Summary: "the filters and sorts of a database's view (the blockID's, else the current one)",
	Example: map[string]any{"avID": "20260812120000-abcdefg"},
	Params:  append(avIDParams(), blockParam()),
	Parse:   parseGet, Scope: readGet,
	Run: func(ctx context.Context, env *tools.Env, a getArgs) (any, error) {
		if _, err := checkBlock(ctx, env, a.AvID, a.BlockID); err != nil {
			return nil, err
		}
		av, err := env.Kernel.GetAttributeView(ctx, a.AvID)
		if err != nil {
			return nil, err
		}
		if av == nil {
			return nil, failure.Missing("database", a.AvID)
		}
		fs, err := env.Kernel.GetAttributeViewFilterSort(ctx, a.AvID, a.BlockID)
		if err != nil {
			return nil, err
		}
		return map[string]any{"avID": a.AvID, "filters": fs.Filters, "sorts": fs.Sorts}, nil
	},
}

// ---- search ---------------------------------------------------------------

type searchArgs struct {
	Keyword  string
	Excludes []string
}

var search = tools.Read[searchArgs]{
	Name: "search", Summary: "databases whose name contains every word of keyword (\"\" finds all; at most 12), with a block showing each and its views",
	Example: map[string]any{"keyword": "projects"},
	Params: []tools.Param{
		{Name: "keyword", Type: tools.String, Description: "words of the database's name"},
		{Name: "excludes", Type: tools.Strings, Description: "database IDs to leave out"},
	},
	Parse: func(a *tools.Args) (searchArgs, error) {
		return searchArgs{a.String("keyword"), a.Strings("excludes")}, nil
	},
	Scope: tools.Scope[searchArgs]{Global: true},
	Run: func(ctx context.Context, env *tools.Env, a searchArgs) (any, error) {
		hits, err := env.Kernel.SearchAttributeView(ctx, a.Keyword, a.Excludes)
		if err != nil {
			return nil, err
		}
		// A hit is shown when the notebook of its block is visible.
		out := make([]siyuan.AVSearchResult, 0, len(hits))
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
			}
		}
		return map[string]any{"results": out, "count": len(out)}, nil
	},
}

// ---- get_primary_key_values -----------------------------------------------

type pkArgs struct {
	AvID, Keyword  string
	Page, PageSize int
}

var getPrimaryKeyValues = tools.Read[pkArgs]{
	Name: "get_primary_key_values", Summary: "a page of a database's rows' primary-key values (their texts) containing keyword, most recently changed first",
	Example: map[string]any{"avID": "20260812120000-abcdefg", "keyword": ""},
	Params: append(avIDParams(),
		tools.Param{Name: "keyword", Type: tools.String, Description: "keep the values containing it"},
		tools.Param{Name: "page", Type: tools.Integer, Description: "1-based page", Default: 1, Min: tools.IntP(1)},
		tools.Param{Name: "pageSize", Type: tools.Integer, Description: "values per page", Default: 16, Min: tools.IntP(1), Max: tools.IntP(200)}),
	Parse: func(a *tools.Args) (pkArgs, error) {
		id, err := avIDOf(a)
		return pkArgs{AvID: id, Keyword: a.String("keyword"), Page: a.Int("page"), PageSize: a.Int("pageSize")}, err
	},
	Scope: scopeOn(func(a pkArgs) string { return a.AvID }, tools.LevelRead),
	Run: func(ctx context.Context, env *tools.Env, a pkArgs) (any, error) {
		r, err := env.Kernel.GetAttributeViewPrimaryKeyValues(ctx, siyuan.AVPrimaryKeyValuesRequest{ID: a.AvID, Keyword: a.Keyword, Page: a.Page, PageSize: a.PageSize})
		if err != nil {
			return nil, notFoundAV(err, a.AvID)
		}
		var values []map[string]any
		if r.Rows != nil {
			for _, v := range r.Rows.Values {
				m := map[string]any{"rowID": v.BlockID, "text": CellText(v), "detached": v.IsDetached}
				if v.Block != nil && !v.IsDetached && v.Block.ID != "" {
					m["blockID"] = v.Block.ID
				}
				values = append(values, m)
			}
		}
		if values == nil {
			values = []map[string]any{}
		}
		return map[string]any{"avID": a.AvID, "name": r.Name, "blockIDs": r.BlockIDs, "values": values, "page": a.Page, "pageSize": a.PageSize}, nil
	},
}
