package embedded

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/88250/lute/ast"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// renderAV is model.RenderAttributeViewWithTarget and the API's
// renderAttrView (without targets): a database that does not exist is
// created (a table view, a primary key and a select key) unless
// createIfNotExist is false; the view is the one asked for, else the
// database block's (custom-sy-av-view), else the current one, and
// becomes the current one. The answer's page size is always the view's,
// whatever pageSize asked for.
func (k *Kernel) renderAV(ctx context.Context, blockID, avID, viewID, query string, page, pageSize int,
	groupPaging map[string]avGroupPage, createIfNotExist, ignoreRows bool) (*wire.AVRender, error) {
	ret, _, err := k.renderAVAny(ctx, blockID, avID, viewID, query, page, pageSize, groupPaging, createIfNotExist, ignoreRows)
	return ret, err
}

// renderAVAny is renderAV for every layout: a gallery or kanban answers
// its cards (with a render whose view is nil).
func (k *Kernel) renderAVAny(ctx context.Context, blockID, avID, viewID, query string, page, pageSize int,
	groupPaging map[string]avGroupPage, createIfNotExist, ignoreRows bool) (*wire.AVRender, *avCardsRender, error) {
	if !validID(avID) {
		return nil, nil, errf("invalid id")
	}
	k.avMu.Lock()
	defer k.avMu.Unlock()
	if !k.avExists(avID) {
		if !createIfNotExist {
			return nil, nil, errAVNotFound
		}
		if err := k.saveAV(newAV(avID)); err != nil {
			return nil, nil, err
		}
	}
	av, err := k.readAV(avID)
	if err != nil {
		return nil, nil, err
	}
	view, err := k.renderedView(av, viewID, blockID)
	if err != nil {
		return nil, nil, err
	}
	cards := cardLayout(view)
	if view.Table == nil && cards == nil {
		return nil, nil, errAVLayout
	}
	tview := view
	if cards != nil {
		tview = cardTableView(view)
	}
	if checkAV(av, view) || av.Spec < avSpec {
		upgradeAVSpec(av)
		if err := k.saveAV(av); err != nil {
			return nil, nil, err
		}
	}
	r := k.newAVRenderer(ctx, av)
	var t *wire.AVTable
	if ignoreRows {
		// Only the columns: the kernel skips rows, filters and paging.
		t = tableShell(tview)
		for _, col := range tview.Table.Columns {
			if key := avKey(av, col.ID); key != nil {
				t.Columns = append(t.Columns, columnOf(key, col))
			}
		}
	} else {
		t = r.view(av, view, query)
		// renderViewableInstance: filters, sorts and calculations apply
		// to the view rendered, not to the views its rollups render.
		filterRows(t)
		sortRows(av, t)
		calcColumns(t)
		t.RowCount = len(t.Rows)
		t.PageSize = view.PageSize
		if pageSize < 1 {
			pageSize = view.PageSize
		}
		if pageSize < 1 {
			pageSize = avDefaultPageSize
		}
		start := min(len(t.Rows), max(0, (page-1)*pageSize))
		end := min(len(t.Rows), start+pageSize)
		t.Rows = t.Rows[start:end]
		if r.renderGroups(av, view, t, query, page, pageSize, groupPaging) {
			if err := r.save(av); err != nil {
				return nil, nil, err
			}
		}
	}
	ret := &wire.AVRender{DefaultTemplateID: av.DefaultTemplateID, ID: av.ID, IsMirror: k.isMirror(av.ID), Name: av.Name,
		NewItemTemplates: av.NewItemTemplates, View: t, ViewID: view.ID, ViewType: view.LayoutType, Views: []*wire.AVViewData{}}
	if ret.NewItemTemplates == nil {
		ret.NewItemTemplates = json.RawMessage("null")
	}
	for _, v := range av.Views {
		ret.Views = append(ret.Views, &wire.AVViewData{ID: v.ID, Icon: v.Icon, Name: v.Name, Desc: v.Desc,
			HideAttrViewName: v.HideAttrViewName, Type: v.LayoutType, PageSize: v.PageSize})
	}
	if cards != nil {
		cr := &avCardsRender{DefaultTemplateID: ret.DefaultTemplateID, ID: ret.ID, IsMirror: ret.IsMirror, Name: ret.Name,
			NewItemTemplates: ret.NewItemTemplates, View: r.cardsOf(av, view, cards, t), ViewID: ret.ViewID,
			ViewType: ret.ViewType, Views: ret.Views}
		ret.View = nil
		return ret, cr, nil
	}
	return ret, nil, nil
}

// renderedView is getRenderAttributeViewView: a database without views
// gets a table view; a view asked for by ID (or the block's) becomes the
// current view and is saved as such.
func (k *Kernel) renderedView(av *wire.AttributeView, viewID, blockID string) (*wire.AVView, error) {
	if len(av.Views) == 0 {
		// The kernel's new view shows a primary key and a select key it
		// does not add: both columns are dropped when rendered.
		v := newTableView(ast.NewNodeID())
		v.Table.Columns = append(v.Table.Columns, &wire.AVViewColumn{ID: ast.NewNodeID()})
		av.Views, av.ViewID = append(av.Views, v), v.ID
		if err := k.saveAV(av); err != nil {
			return nil, err
		}
	}
	if viewID == "" && blockID != "" {
		viewID = k.blockViewID(blockID)
	}
	var view *wire.AVView
	if viewID != "" {
		view, _ = avCurrentView(av, viewID)
		if view != nil && view.ID != av.ViewID {
			av.ViewID = view.ID
			if err := k.saveAV(av); err != nil {
				return nil, err
			}
		}
	} else {
		view = avViewByID(av, av.ViewID)
	}
	if view == nil {
		view = av.Views[0]
	}
	return view, nil
}

// checkAV is checkAttrView: filters and sorts on columns that are gone are
// dropped (an emptied filter tree becomes an empty "and" group), values
// take their column's type, the name loses line breaks and is cut to 512
// characters. It reports whether the kernel would save.
func checkAV(av *wire.AttributeView, view *wire.AVView) bool {
	valid := map[string]bool{}
	for _, kv := range av.KeyValues {
		valid[kv.Key.ID] = true
	}
	filters, changed := pruneFilters(view.Filters, valid)
	if len(filters) == 0 {
		filters = []*wire.AVViewFilter{{Combination: "and"}}
	}
	view.Filters = filters
	sorts := []*wire.AVViewSort{}
	for _, s := range view.Sorts {
		if valid[s.Column] {
			sorts = append(sorts, s)
		}
	}
	changed = changed || len(sorts) != len(view.Sorts)
	view.Sorts = sorts
	for _, kv := range av.KeyValues {
		for _, v := range kv.Values {
			if v.Type == kv.Key.Type {
				continue
			}
			v.Type, changed = kv.Key.Type, true
			if v.Type == wire.AVKeyBlock && v.Block == nil {
				v.Block = &wire.AVValueBlock{}
				if v.Text != nil {
					v.Block.Content = v.Text.Content
				}
				if v.BlockID == "" {
					v.BlockID = ast.NewNodeID()
				}
				v.Block.Created = msFromID(v.BlockID)
				v.Block.Updated = v.Block.Created
			}
		}
	}
	name := strings.ReplaceAll(av.Name, "\n", " ")
	if cut := truncateRunes(name, 512); cut != name {
		name, changed = cut, true
	}
	av.Name = name
	return changed
}

// pruneFilters is PruneInvalidColumnFilters.
func pruneFilters(fs []*wire.AVViewFilter, valid map[string]bool) (ret []*wire.AVViewFilter, changed bool) {
	for _, f := range fs {
		if f == nil {
			continue
		}
		if isFilterGroup(f) {
			children, childChanged := pruneFilters(f.Filters, valid)
			if len(children) > 0 {
				f.Filters = children
				ret = append(ret, f)
			} else if len(f.Filters) > 0 {
				changed = true
			}
			changed = changed || childChanged
			continue
		}
		if valid[f.Column] {
			ret = append(ret, f)
		} else {
			changed = true
		}
	}
	return ret, changed
}
