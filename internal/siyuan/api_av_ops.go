package siyuan

import (
	"fmt"
	"html"
)

// The /api/transactions operations SiYuan's editor (and upstream
// Sisyphus's av tool) sends for databases, as [Operation] values for
// [Client.Transactions]. The kernel applies a transaction's operations in
// order; one that fails ends its transaction silently (reported only on
// the kernel's websocket, the reply is still code 0) and the ones before
// it stay applied. Read the database back to know what happened.

// DatabaseBlockDOM is the block DOM of a database block as the editor
// inserts one: an insert operation with it as Data (or insertBlock with
// dataType "dom") makes blockID a block showing avID. The database file is
// written by the first [Client.RenderAttributeViewOrCreate].
func DatabaseBlockDOM(blockID, avID string) string {
	return fmt.Sprintf(`<div class="av" data-node-id="%s" data-av-id="%s" data-type="NodeAttributeView" data-av-type="table"></div>`,
		html.EscapeString(blockID), html.EscapeString(avID))
}

// InsertDatabaseBlockOp inserts a database block after previousID, or
// first in parentID when previousID is "".
func InsertDatabaseBlockOp(blockID, avID, previousID, parentID string) Operation {
	return Operation{Action: "insert", ID: blockID, Data: DatabaseBlockDOM(blockID, avID), PreviousID: previousID, ParentID: parentID}
}

// InsertAttrViewBlockOp adds rows (see [AVSrc]) to a database shown by the
// database block dbBlockID, first in every view or after previousItemID.
// The kernel reverses the operation's srcs as it adds them, so the echoed
// operation lists them reversed, and rewrites a src's itemID to the
// existing row's when its block was already bound.
func InsertAttrViewBlockOp(avID, dbBlockID string, srcs []AVSrc, previousItemID string) Operation {
	m := make([]map[string]any, 0, len(srcs))
	for _, s := range srcs {
		src := map[string]any{"isDetached": s.Detached}
		if s.ItemID != "" {
			src["itemID"] = s.ItemID
		}
		if s.ID != "" {
			src["id"] = s.ID
		}
		if s.Detached {
			src["content"] = s.Content
		}
		m = append(m, src)
	}
	return Operation{Action: "insertAttrViewBlock", AvID: avID, BlockID: dbBlockID, Srcs: m, PreviousID: previousItemID}
}

// RemoveAttrViewBlockOp removes rows by item ID.
func RemoveAttrViewBlockOp(avID string, itemIDs []string) Operation {
	return Operation{Action: "removeAttrViewBlock", AvID: avID, SrcIDs: itemIDs}
}

// AddAttrViewColOp adds a key (column) keyID of keyType after the column
// previousKeyID ("" puts it first, before the primary key).
func AddAttrViewColOp(avID, keyID, name, keyType, icon, previousKeyID string) Operation {
	return Operation{Action: "addAttrViewCol", AvID: avID, ID: keyID, Name: name, Type: keyType, Data: icon, PreviousID: previousKeyID}
}

// RemoveAttrViewColOp removes a key; removeDest also removes the other
// side of a two-way relation.
func RemoveAttrViewColOp(avID, keyID string, removeDest bool) Operation {
	return Operation{Action: "removeAttrViewCol", AvID: avID, ID: keyID, RemoveDest: removeDest}
}

// UpdateAttrViewCellOp sets the cell of item itemID in key keyID; the
// value is decoded over the stored cell. (The operation's field is rowID:
// the item ID, as the kernel's transaction reads it.)
func UpdateAttrViewCellOp(avID, keyID, itemID string, value *AVValue) Operation {
	return Operation{Action: "updateAttrViewCell", AvID: avID, KeyID: keyID, RowID: itemID, Data: value}
}

// SetAttrViewNameOp renames a database (trimmed, line breaks as spaces,
// at most 512 characters). The avID goes in the operation's id.
func SetAttrViewNameOp(avID, name string) Operation {
	return Operation{Action: "setAttrViewName", ID: avID, Data: name}
}

// UpdateAttrViewColTemplateOp sets a template column's template
// (.action{…} delimiters; the row's columns by name).
func UpdateAttrViewColTemplateOp(avID, keyID, template string) Operation {
	return Operation{Action: "updateAttrViewColTemplate", AvID: avID, ID: keyID, Type: AVKeyTemplate, Data: template}
}

// UpdateAttrViewColNumberFormatOp sets a number column's format ("",
// "commas", "percent", "USD", "EUR"…).
func UpdateAttrViewColNumberFormatOp(avID, keyID, format string) Operation {
	return Operation{Action: "updateAttrViewColNumberFormat", AvID: avID, ID: keyID, Type: AVKeyNumber, Format: format}
}

// UpdateAttrViewColRelationOp makes keyID (a relation key of avID, renamed
// name) relate to rows of destAvID. Two-way, the key backKeyID of destAvID
// links back (created, named backName or "<database name> <name>", when it
// does not exist).
func UpdateAttrViewColRelationOp(avID, keyID, name, destAvID string, twoWay bool, backKeyID, backName string) Operation {
	return Operation{Action: "updateAttrViewColRelation", AvID: avID, ID: destAvID, KeyID: keyID, IsTwoWay: twoWay,
		BackRelationKeyID: backKeyID, Name: backName, Format: name}
}

// UpdateAttrViewColRollupOp makes keyID (a rollup key of avID) roll up the
// key targetKeyID of the rows the relation key relationKeyID links to,
// with operator ("" shows the values; "Sum", "Count all", "Min"… compute).
func UpdateAttrViewColRollupOp(avID, keyID, relationKeyID, targetKeyID, operator string) Operation {
	return Operation{Action: "updateAttrViewColRollup", AvID: avID, ID: keyID, ParentID: relationKeyID, KeyID: targetKeyID,
		Data: map[string]any{"calc": map[string]any{"operator": operator}}}
}

// DoUpdateUpdatedOp sets a block's updated time (YYYYMMDDHHMMSS), as the
// editor and upstream Sisyphus do for a database block after a change.
func DoUpdateUpdatedOp(blockID, updated string) Operation {
	return Operation{Action: "doUpdateUpdated", ID: blockID, Data: updated}
}

// SetAttrViewFiltersOp replaces the filters of the view the database
// block dbBlockID shows: one root group ({combination:"and"|"or",
// filters:[…]}, groups nesting at most three deep) whose leaves name a
// column, an operator ("=", "Contains", "Is empty"…) and a value of the
// column's type. Leaves sent without a root group are put in an "and" one.
func SetAttrViewFiltersOp(avID, dbBlockID string, filters []*AVViewFilter) Operation {
	if filters == nil {
		filters = []*AVViewFilter{}
	}
	return Operation{Action: "setAttrViewFilters", AvID: avID, BlockID: dbBlockID, Data: filters}
}

// SetAttrViewSortsOp replaces the sorts of the view dbBlockID shows
// (order "ASC" or "DESC"; the first rule sorts first).
func SetAttrViewSortsOp(avID, dbBlockID string, sorts []*AVViewSort) Operation {
	if sorts == nil {
		sorts = []*AVViewSort{}
	}
	return Operation{Action: "setAttrViewSorts", AvID: avID, BlockID: dbBlockID, Data: sorts}
}

// SetAttrViewColCalcOp sets the calculation of a column of the table
// view dbBlockID shows ("" removes it; "Count all", "Sum", "Percent
// checked"…).
func SetAttrViewColCalcOp(avID, dbBlockID, keyID, operator string) Operation {
	return Operation{Action: "setAttrViewColCalc", AvID: avID, BlockID: dbBlockID, ID: keyID,
		Data: map[string]any{"operator": operator}}
}

// SetAttrViewPageSizeOp sets how many rows a page of the view dbBlockID
// shows holds.
func SetAttrViewPageSizeOp(avID, dbBlockID string, size int) Operation {
	return Operation{Action: "setAttrViewPageSize", AvID: avID, BlockID: dbBlockID, Data: size}
}

// SetAttrViewColHiddenOp hides or shows a column of the view dbBlockID
// shows.
func SetAttrViewColHiddenOp(avID, dbBlockID, keyID string, hidden bool) Operation {
	return Operation{Action: "setAttrViewColHidden", AvID: avID, BlockID: dbBlockID, ID: keyID, Data: hidden}
}

// SortAttrViewColOp moves a column of the view dbBlockID shows after the
// column previousKeyID ("" puts it first).
func SortAttrViewColOp(avID, dbBlockID, keyID, previousKeyID string) Operation {
	return Operation{Action: "sortAttrViewCol", AvID: avID, BlockID: dbBlockID, ID: keyID, PreviousID: previousKeyID}
}

// SetAttrViewViewNameOp renames a view (trimmed).
func SetAttrViewViewNameOp(avID, viewID, name string) Operation {
	return Operation{Action: "setAttrViewViewName", AvID: avID, ID: viewID, Data: name}
}

// AddAttrViewViewOp adds a view (layout "table", "gallery" or "kanban")
// with the first view's fields and row order; it becomes the current view
// and the one the database block dbBlockID shows.
func AddAttrViewViewOp(avID, viewID, dbBlockID, layout string) Operation {
	return Operation{Action: "addAttrViewView", AvID: avID, ID: viewID, BlockID: dbBlockID, Layout: layout}
}
