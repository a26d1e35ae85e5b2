package wire

import "encoding/json"

// The answers of the /api/av/* endpoints (kernel/api/av.go and the
// structs of kernel/model/attribute_view*.go). The kernel builds most of
// them as maps, whose keys encoding/json sorts; the structs here declare
// their fields in that sorted order, so they encode to the same bytes.

// AVRender is /api/av/renderAttributeView (a map in the kernel): the
// database's name and views, and the rendered view.
type AVRender struct {
	DefaultTemplateID string          `json:"defaultTemplateID"`
	ID                string          `json:"id"`
	IsMirror          bool            `json:"isMirror"`
	Name              string          `json:"name"`
	NewItemTemplates  json.RawMessage `json:"newItemTemplates"`
	Target            json.RawMessage `json:"target,omitempty"`
	View              *AVTable        `json:"view"`
	ViewID            string          `json:"viewID"`
	ViewType          string          `json:"viewType"`
	Views             []*AVViewData   `json:"views"`
}

// AVViewData is the kernel's av.ViewData: one view of a database, as
// renderAttributeView lists them.
type AVViewData struct {
	ID               string `json:"id"`
	Icon             string `json:"icon"`
	Name             string `json:"name"`
	Desc             string `json:"desc"`
	HideAttrViewName bool   `json:"hideAttrViewName"`
	Type             string `json:"type"`
	PageSize         int    `json:"pageSize"`
}

// AVTable is the kernel's av.Table (its BaseInstance flattened): a table
// view as rendered. Rows is the requested page; RowCount counts every row.
type AVTable struct {
	ID               string          `json:"id"`
	Icon             string          `json:"icon"`
	Name             string          `json:"name"`
	Desc             string          `json:"desc"`
	HideAttrViewName bool            `json:"hideAttrViewName"`
	Filters          []*AVViewFilter `json:"filters"`
	Sorts            []*AVViewSort   `json:"sorts"`
	Group            json.RawMessage `json:"group"`
	PageSize         int             `json:"pageSize"`
	ShowIcon         bool            `json:"showIcon"`
	WrapField        bool            `json:"wrapField"`
	GroupKey         json.RawMessage `json:"groupKey,omitempty"`
	GroupValue       json.RawMessage `json:"groupValue,omitempty"`
	Groups           json.RawMessage `json:"groups,omitempty"`
	GroupCalc        json.RawMessage `json:"groupCalc,omitempty"`
	GroupFolded      bool            `json:"groupFolded"`
	GroupHidden      int             `json:"groupHidden"`

	Columns  []*AVColumn `json:"columns"`
	Rows     []*AVRow    `json:"rows"`
	RowCount int         `json:"rowCount"`
}

// AVColumn is the kernel's av.TableColumn: a column as rendered, with its
// key's definition.
type AVColumn struct {
	ID     string          `json:"id"`
	Name   string          `json:"name"`
	Type   string          `json:"type"`
	Icon   string          `json:"icon"`
	Wrap   bool            `json:"wrap"`
	Hidden bool            `json:"hidden"`
	Desc   string          `json:"desc"`
	Calc   json.RawMessage `json:"calc"`

	Options      []*AVSelectOption `json:"options,omitempty"`
	NumberFormat string            `json:"numberFormat"`
	Template     string            `json:"template"`
	Relation     *AVRelation       `json:"relation,omitempty"`
	Rollup       *AVRollup         `json:"rollup,omitempty"`
	Date         *AVDateConf       `json:"date,omitempty"`
	Created      *AVIncludeTime    `json:"created,omitempty"`
	Updated      *AVIncludeTime    `json:"updated,omitempty"`

	Pin   bool   `json:"pin"`
	Width string `json:"width"`
	Align string `json:"align"`
}

// AVRow is one rendered row; ID is its item ID.
type AVRow struct {
	ID    string    `json:"id"`
	Cells []*AVCell `json:"cells"`
}

// AVCell is the kernel's av.TableCell: ValueType is the column's type;
// Value is filled for every cell, with an empty value of that type where
// the row has none.
type AVCell struct {
	ID        string   `json:"id"`
	Value     *AVValue `json:"value"`
	ValueType string   `json:"valueType"`
	Color     string   `json:"color"`
	BgColor   string   `json:"bgColor"`
}

// AVBlockKeys is the kernel's model.BlockAttributeViewKeys, one entry of
// /api/av/getAttributeViewKeys: a database a block (or item) is in, the
// database blocks showing it, and the block's cells.
type AVBlockKeys struct {
	AvID      string         `json:"avID"`
	AvName    string         `json:"avName"`
	BlockIDs  []string       `json:"blockIDs"`
	KeyValues []*AVKeyValues `json:"keyValues"`
}

// AVFilterSort is /api/av/getAttributeViewFilterSort (a map in the kernel).
type AVFilterSort struct {
	Filters []*AVViewFilter `json:"filters"`
	Sorts   []*AVViewSort   `json:"sorts"`
}

// AVSearchResult is the kernel's model.AvSearchResult, one entry of
// /api/av/searchAttributeView: a database with a block showing it and, as
// children, its views. HPath is the notebook's name followed by the
// document's human path ("Notes/Projects").
type AVSearchResult struct {
	AvID       string            `json:"avID"`
	AvName     string            `json:"avName"`
	ViewName   string            `json:"viewName"`
	ViewID     string            `json:"viewID"`
	ViewLayout string            `json:"viewLayout"`
	BlockID    string            `json:"blockID"`
	HPath      string            `json:"hPath"`
	Children   []*AVSearchResult `json:"children,omitempty"`
}

// AVPrimaryKeyValues is /api/av/getAttributeViewPrimaryKeyValues (a map in
// the kernel): the database's name ("Untitled" when it has none), the
// database blocks showing it and one page of primary-key cells.
type AVPrimaryKeyValues struct {
	BlockIDs []string     `json:"blockIDs"`
	Name     string       `json:"name"`
	Rows     *AVKeyValues `json:"rows"`
}

// AVRefDefs is the kernel's model.RefDefs as getMirrorDatabaseBlocks
// answers it: RefID is a database block, DefIDs always empty.
type AVRefDefs struct {
	RefID  string   `json:"refID"`
	DefIDs []string `json:"defIDs"`
}

// AVDuplicate is /api/av/duplicateAttributeViewBlock (a map in the
// kernel): the new database's ID and the block ID reserved for it.
type AVDuplicate struct {
	AvID    string `json:"avID"`
	BlockID string `json:"blockID"`
}
