package embedded

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// The view settings of /api/transactions, as SiYuan 3.7.3's editor sends
// them (model/attribute_view.go). Each acts on the view the database
// block blockID shows (custom-sy-av-view), else the current view:
//
//	setAttrViewFilters   avID, blockID, data (the filter tree: [root group] or leaves)
//	setAttrViewSorts     avID, blockID, data ([{column, order}])
//	setAttrViewPageSize  avID, blockID, data (a number)
//	setAttrViewColCalc   avID, blockID, id (a key), data ({operator})
//	setAttrViewColHidden avID, blockID, id (a key), data (a bool)
//	sortAttrViewCol      avID, blockID, id (a key), previousID (the key it follows; "" first)
//	setAttrViewViewName  avID, id (a view), data (the name, trimmed)
//	addAttrViewView      avID, id (the new view), blockID, layout ("" for table, gallery or kanban)

// avMaxFilterDepth is MaxFilterNestingDepth: how deep filter groups nest
// below the root.
const avMaxFilterDepth = 3

var errAVFilterTooDeep = fmt.Errorf("filter nesting depth exceeds the maximum %d", avMaxFilterDepth)

// applyAVViewOp applies a view-setting operation; handled is false for
// actions that are not one.
func (k *Kernel) applyAVViewOp(op *wire.Operation) (handled bool, err error) {
	switch op.Action {
	case "setAttrViewFilters":
		err = k.avSetFilters(op.AvID, op.BlockID, op.Data)
	case "setAttrViewSorts":
		err = k.avSetSorts(op.AvID, op.BlockID, op.Data)
	case "setAttrViewPageSize":
		err = k.avEditBlockView(op.AvID, op.BlockID, func(_ *wire.AttributeView, v *wire.AVView) error {
			n, ok := op.Data.(float64)
			if !ok {
				return errf("data must be a number")
			}
			v.PageSize = int(n)
			return nil
		})
	case "setAttrViewColCalc":
		err = k.avEditBlockView(op.AvID, op.BlockID, func(_ *wire.AttributeView, v *wire.AVView) error {
			data, err := json.Marshal(op.Data)
			if err != nil {
				return fmt.Errorf("encode calc: %w", err)
			}
			var calc avFieldCalc
			if err := json.Unmarshal(data, &calc); err != nil {
				return err
			}
			if v.LayoutType != "table" || v.Table == nil {
				return errAVNoSave // the kernel calculates table columns only
			}
			enc, err := json.Marshal(calc)
			if err != nil {
				return fmt.Errorf("encode calc: %w", err)
			}
			for _, c := range v.Table.Columns {
				if c.ID == op.ID {
					c.Calc = enc
					break
				}
			}
			return nil
		})
	case "setAttrViewColHidden":
		err = k.avEditBlockView(op.AvID, op.BlockID, func(_ *wire.AttributeView, v *wire.AVView) error {
			hidden, ok := op.Data.(bool)
			if !ok {
				return errf("data must be a bool")
			}
			if v.Table != nil {
				for _, c := range v.Table.Columns {
					if c.ID == op.ID {
						c.Hidden = hidden
						break
					}
				}
			}
			setCardFieldHidden(v, op.ID, hidden)
			return nil
		})
	case "sortAttrViewCol":
		if op.ID == op.PreviousID {
			return true, nil // dropped on its own right: nothing moves
		}
		err = k.avEditBlockView(op.AvID, op.BlockID, func(_ *wire.AttributeView, v *wire.AVView) error {
			if v.Table == nil {
				moveCardField(v, op.ID, op.PreviousID)
				return nil
			}
			cur := columnIndex(v.Table.Columns, op.ID)
			if cur < 0 {
				return errAVNoSave
			}
			col := v.Table.Columns[cur]
			cols := append(v.Table.Columns[:cur:cur], v.Table.Columns[cur+1:]...)
			at := 0
			if i := columnIndex(cols, op.PreviousID); i >= 0 {
				at = i + 1
			}
			v.Table.Columns = append(cols[:at:at], append([]*wire.AVViewColumn{col}, cols[at:]...)...)
			return nil
		})
	case "setAttrViewViewName":
		name, ok := op.Data.(string)
		if !ok {
			return true, &txFailure{op.Action, errf("data must be a string")}
		}
		err = k.editAV(op.AvID, func(av *wire.AttributeView) error {
			v := avViewByID(av, op.ID)
			if v == nil {
				return errAVViewNotFound
			}
			v.Name = strings.TrimSpace(name)
			return nil
		})
	case "addAttrViewView":
		err = k.avAddView(op.AvID, op.ID, op.BlockID, op.Layout)
	default:
		return k.applyAVGroupOp(op)
	}
	if err != nil {
		return true, &txFailure{op.Action, err}
	}
	return true, nil
}

// avAddView is addAttrViewView: a new view of the layout, with the
// first view's fields and row order (av_cards.go), becomes the current
// view and the one the database block shows. A kanban is grouped by the
// first select column, made when there is none. A database without
// views, or a block that is gone, changes nothing.
func (k *Kernel) avAddView(avID, viewID, blockID, layout string) error {
	if layout == "" {
		layout = "table"
	}
	if layout != "table" && layout != "gallery" && layout != "kanban" {
		return errAVLayout
	}
	return k.editAV(avID, func(av *wire.AttributeView) error {
		if len(av.Views) == 0 {
			return errAVNoSave
		}
		v, err := avNewView(av.Views[0], layout)
		if err != nil {
			return err
		}
		v.ID = viewID
		av.ViewID = viewID
		av.Views = append(av.Views, v)
		if layout == "kanban" {
			key := kanbanGroupKey(av)
			if err := k.setViewGroup(av, v, &avGroupConf{Field: key.ID}); err != nil {
				return err
			}
		}
		tree, node, err := k.loadTreeOf(blockID)
		if err != nil {
			return errAVNoSave
		}
		node.AttributeViewType = v.LayoutType
		node.SetIALAttr(avAttrView, viewID)
		return k.writeTree(tree)
	})
}

// avEditBlockView edits the view a database block shows and saves.
func (k *Kernel) avEditBlockView(avID, blockID string, edit func(av *wire.AttributeView, v *wire.AVView) error) error {
	viewID := k.blockViewID(blockID)
	return k.editAV(avID, func(av *wire.AttributeView) error {
		v, err := avCurrentView(av, viewID)
		if err != nil {
			return err
		}
		return edit(av, v)
	})
}

// avSetFilters replaces a view's filters. Leaves sent without a root
// group are wrapped in an "and" one; groups nested deeper than
// avMaxFilterDepth are refused.
func (k *Kernel) avSetFilters(avID, blockID string, data any) error {
	list, ok := data.([]any)
	if !ok {
		return errf("data must be an array")
	}
	enc, err := json.Marshal(list)
	if err != nil {
		return fmt.Errorf("encode filters: %w", err)
	}
	var filters []*wire.AVViewFilter
	if err := json.Unmarshal(enc, &filters); err != nil {
		return err
	}
	if len(filters) != 1 || !isFilterGroup(filters[0]) {
		filters = []*wire.AVViewFilter{{Combination: "and", Filters: filters}}
	}
	for _, f := range filters {
		if filterDepth(f, 0) > avMaxFilterDepth {
			return errAVFilterTooDeep
		}
	}
	return k.avEditBlockView(avID, blockID, func(_ *wire.AttributeView, v *wire.AVView) error {
		v.Filters = filters
		return nil
	})
}

// filterDepth is the deepest group level under f (f at depth).
func filterDepth(f *wire.AVViewFilter, depth int) int {
	if !isFilterGroup(f) {
		return 0
	}
	deepest := depth
	for _, c := range f.Filters {
		deepest = max(deepest, filterDepth(c, depth+1))
	}
	return deepest
}

// avSetSorts replaces a view's sorts.
func (k *Kernel) avSetSorts(avID, blockID string, data any) error {
	list, ok := data.([]any)
	if !ok {
		return errf("data must be an array")
	}
	enc, err := json.Marshal(list)
	if err != nil {
		return fmt.Errorf("encode sorts: %w", err)
	}
	var sorts []*wire.AVViewSort
	if err := json.Unmarshal(enc, &sorts); err != nil {
		return err
	}
	return k.avEditBlockView(avID, blockID, func(_ *wire.AttributeView, v *wire.AVView) error {
		v.Sorts = sorts
		return nil
	})
}
