package wire

import "encoding/json"

// Attribute views (databases) as SiYuan 3.7.3 keeps them in
// data/storage/av/<avID>.json (kernel/av: AttributeView, KeyValues, Key,
// View, LayoutTable, Value and the value types), field for field and in the
// kernel's field order, so that encoding one of these with encoding/json
// gives the bytes the kernel writes.
//
// The parts of the format Sisyphus does not work with (gallery and kanban
// layouts, groups, column calculations, new-item templates, relative dates
// in filters) are kept as raw JSON: read and written back unchanged.

// AttributeView is the kernel's av.AttributeView: a database. KeyValues
// holds the columns (keys) with every cell (value) of each; Views the
// layouts that show them.
type AttributeView struct {
	Spec              int             `json:"spec"`
	ID                string          `json:"id"`
	Name              string          `json:"name"`
	KeyValues         []*AVKeyValues  `json:"keyValues"`
	KeyIDs            []string        `json:"keyIDs"`
	ViewID            string          `json:"viewID"`
	Views             []*AVView       `json:"views"`
	NewItemTemplates  json.RawMessage `json:"newItemTemplates,omitempty"`
	DefaultTemplateID string          `json:"defaultTemplateID,omitempty"`
}

// AVKeyValues is one column: its key and the cells that have a value.
type AVKeyValues struct {
	Key    *AVKey     `json:"key"`
	Values []*AVValue `json:"values,omitempty"`
}

// The key (column) types of SiYuan 3.7.3.
const (
	AVKeyBlock      = "block" // the primary key: one per database
	AVKeyText       = "text"
	AVKeyNumber     = "number"
	AVKeyDate       = "date"
	AVKeySelect     = "select"
	AVKeyMSelect    = "mSelect"
	AVKeyURL        = "url"
	AVKeyEmail      = "email"
	AVKeyPhone      = "phone"
	AVKeyMAsset     = "mAsset"
	AVKeyTemplate   = "template"
	AVKeyCreated    = "created"
	AVKeyUpdated    = "updated"
	AVKeyCheckbox   = "checkbox"
	AVKeyRelation   = "relation"
	AVKeyRollup     = "rollup"
	AVKeyLineNumber = "lineNumber"
)

// AVKey is the kernel's av.Key: a column's definition.
type AVKey struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Type string `json:"type"`
	Icon string `json:"icon"`
	Desc string `json:"desc"`

	Options      []*AVSelectOption `json:"options,omitempty"` // select, mSelect
	NumberFormat string            `json:"numberFormat"`      // number: "", commas, percent, USD, CNY…
	Template     string            `json:"template"`          // template: .action{…} source
	Relation     *AVRelation       `json:"relation,omitempty"`
	Rollup       *AVRollup         `json:"rollup,omitempty"`
	Date         *AVDateConf       `json:"date,omitempty"`
	Created      *AVIncludeTime    `json:"created,omitempty"`
	Updated      *AVIncludeTime    `json:"updated,omitempty"`
}

// AVSelectOption is one option of a select or mSelect column. Color is
// "1".."14".
type AVSelectOption struct {
	Name  string `json:"name"`
	Color string `json:"color"`
	Desc  string `json:"desc"`
}

// AVRelation links a relation column to the database whose rows it
// holds; a two-way relation names the column that links back.
type AVRelation struct {
	AvID      string `json:"avID"`
	IsTwoWay  bool   `json:"isTwoWay"`
	BackKeyID string `json:"backKeyID"`
}

// AVRollup computes a rollup column from the rows a relation column links
// to: KeyID is a column of the related database.
type AVRollup struct {
	RelationKeyID string        `json:"relationKeyID"`
	KeyID         string        `json:"keyID"`
	Calc          *AVRollupCalc `json:"calc"`
}

// AVRollupCalc is a rollup's operator ("", "Sum", "Count all"…) and its
// last result, which the kernel stores as it computed it (usually null).
type AVRollupCalc struct {
	Operator string   `json:"operator"`
	Result   *AVValue `json:"result"`
}

// AVDateConf is a date column's settings.
type AVDateConf struct {
	AutoFillNow      bool `json:"autoFillNow"`
	FillSpecificTime bool `json:"fillSpecificTime"`
}

// AVIncludeTime is a created or updated column's setting.
type AVIncludeTime struct {
	IncludeTime bool `json:"includeTime"`
}

// AVView is the kernel's av.View: one way of showing the database.
type AVView struct {
	ID               string          `json:"id"`
	Icon             string          `json:"icon"`
	Name             string          `json:"name"`
	HideAttrViewName bool            `json:"hideAttrViewName"`
	Desc             string          `json:"desc"`
	Filters          []*AVViewFilter `json:"filters,omitempty"`
	Sorts            []*AVViewSort   `json:"sorts,omitempty"`
	PageSize         int             `json:"pageSize"`
	LayoutType       string          `json:"type"` // table, gallery, kanban
	Table            *AVLayoutTable  `json:"table,omitempty"`
	Gallery          json.RawMessage `json:"gallery,omitempty"`
	Kanban           json.RawMessage `json:"kanban,omitempty"`
	ItemIDs          []string        `json:"itemIds,omitempty"` // the manual row order

	Group        json.RawMessage `json:"group,omitempty"`
	GroupCreated int64           `json:"groupCreated"`
	Groups       json.RawMessage `json:"groups,omitempty"`
	GroupItemIDs []string        `json:"groupItemIds"`
	GroupCalc    json.RawMessage `json:"groupCalc,omitempty"`
	GroupKey     json.RawMessage `json:"groupKey,omitempty"`
	GroupVal     json.RawMessage `json:"groupVal,omitempty"`
	GroupFolded  bool            `json:"groupFolded"`
	GroupHidden  int             `json:"groupHidden"`
	GroupSort    int             `json:"groupSort"`
}

// AVViewFilter is the kernel's av.ViewFilter: since spec 5 a view's
// filters are one root group ({combination:"and", filters:[…]}) whose
// leaves name a column, an operator and a value.
type AVViewFilter struct {
	Column        string          `json:"column"`
	Qualifier     string          `json:"quantifier,omitempty"`
	Operator      string          `json:"operator"`
	Value         *AVValue        `json:"value"`
	RelativeDate  json.RawMessage `json:"relativeDate,omitempty"`
	RelativeDate2 json.RawMessage `json:"relativeDate2,omitempty"`
	Combination   string          `json:"combination,omitempty"`
	Filters       []*AVViewFilter `json:"filters,omitempty"`
}

// AVViewSort is one sort rule: a column and ASC or DESC.
type AVViewSort struct {
	Column string `json:"column"`
	Order  string `json:"order"`
}

// AVLayoutTable is the kernel's av.LayoutTable (with its embedded
// BaseLayout flattened): a table view's columns in display order.
type AVLayoutTable struct {
	Spec      int             `json:"spec"`
	ID        string          `json:"id"`
	ShowIcon  bool            `json:"showIcon"`
	WrapField bool            `json:"wrapField"`
	Filters   json.RawMessage `json:"filters,omitempty"`  // deprecated, kept as read
	Sorts     json.RawMessage `json:"sorts,omitempty"`    // deprecated, kept as read
	PageSize  int             `json:"pageSize,omitempty"` // deprecated, kept as read
	Columns   []*AVViewColumn `json:"columns"`
	RowIDs    []string        `json:"rowIds"` // deprecated
}

// AVViewColumn is the kernel's av.ViewTableColumn (BaseField flattened; its
// own calc outranks BaseField's, as encoding/json resolves the two).
type AVViewColumn struct {
	ID     string          `json:"id"`
	Wrap   bool            `json:"wrap"`
	Hidden bool            `json:"hidden"`
	Desc   string          `json:"desc,omitempty"`
	Pin    bool            `json:"pin"`
	Width  string          `json:"width"`
	Align  string          `json:"align,omitempty"`
	Calc   json.RawMessage `json:"calc,omitempty"`
}

// AVValue is the kernel's av.Value: one cell. BlockID is the row's item
// ID (not a block of a document); only the primary key's value says
// whether the row is detached and, in Block.ID, which block it is bound to.
type AVValue struct {
	ID         string `json:"id,omitempty"`
	KeyID      string `json:"keyID,omitempty"`
	BlockID    string `json:"blockID,omitempty"`
	Type       string `json:"type,omitempty"`
	IsDetached bool   `json:"isDetached,omitempty"`

	CreatedAt int64 `json:"createdAt,omitempty"`
	UpdatedAt int64 `json:"updatedAt,omitempty"`

	Block    *AVValueBlock    `json:"block,omitempty"`
	Text     *AVValueContent  `json:"text,omitempty"`
	Number   *AVValueNumber   `json:"number,omitempty"`
	Date     *AVValueDate     `json:"date,omitempty"`
	MSelect  []*AVValueSelect `json:"mSelect,omitempty"` // select (at most one) and mSelect
	URL      *AVValueContent  `json:"url,omitempty"`
	Email    *AVValueContent  `json:"email,omitempty"`
	Phone    *AVValueContent  `json:"phone,omitempty"`
	MAsset   []*AVValueAsset  `json:"mAsset,omitempty"`
	Template *AVValueContent  `json:"template,omitempty"`
	Created  *AVValueTime     `json:"created,omitempty"`
	Updated  *AVValueTime     `json:"updated,omitempty"`
	Checkbox *AVValueCheckbox `json:"checkbox,omitempty"`
	Relation *AVValueRelation `json:"relation,omitempty"`
	Rollup   *AVValueRollup   `json:"rollup,omitempty"`
}

// AVValueBlock is a primary-key cell: the row's text and, for a bound row,
// the bound block's ID. Created and Updated are in milliseconds.
type AVValueBlock struct {
	ID      string `json:"id,omitempty"`
	Icon    string `json:"icon,omitempty"`
	Content string `json:"content"`
	Created int64  `json:"created,omitempty"`
	Updated int64  `json:"updated,omitempty"`
}

// AVValueContent is a text, URL, email, phone or template cell (distinct
// types of one shape in the kernel).
type AVValueContent struct {
	Content string `json:"content"`
}

// AVValueNumber is a number cell; FormattedContent is Content in the
// column's NumberFormat. IsNotEmpty false means the cell is empty.
type AVValueNumber struct {
	Content          float64 `json:"content"`
	IsNotEmpty       bool    `json:"isNotEmpty"`
	Format           string  `json:"format"`
	FormattedContent string  `json:"formattedContent"`
}

// AVValueDate is a date cell; Content and Content2 (the end) are Unix
// milliseconds.
type AVValueDate struct {
	Content          int64  `json:"content"`
	IsNotEmpty       bool   `json:"isNotEmpty"`
	HasEndDate       bool   `json:"hasEndDate"`
	IsNotTime        bool   `json:"isNotTime"`
	Content2         int64  `json:"content2"`
	IsNotEmpty2      bool   `json:"isNotEmpty2"`
	FormattedContent string `json:"formattedContent"`
}

// AVValueSelect is one chosen option.
type AVValueSelect struct {
	Content string `json:"content"`
	Color   string `json:"color"`
}

// AVValueAsset is one asset of an mAsset cell (type "file" or "image").
type AVValueAsset struct {
	Type    string `json:"type"`
	Name    string `json:"name"`
	Content string `json:"content"`
}

// AVValueTime is a created or updated cell, filled when rendered.
type AVValueTime struct {
	Content          int64  `json:"content"`
	IsNotEmpty       bool   `json:"isNotEmpty"`
	Content2         int64  `json:"content2"`
	IsNotEmpty2      bool   `json:"isNotEmpty2"`
	FormattedContent string `json:"formattedContent"`
}

// AVValueCheckbox is a checkbox cell.
type AVValueCheckbox struct {
	Checked bool `json:"checked"`
}

// AVValueRelation is a relation cell: the item IDs of the related rows;
// Contents (their primary-key values) is filled when rendered.
type AVValueRelation struct {
	BlockIDs []string   `json:"blockIDs"`
	Contents []*AVValue `json:"contents"`
}

// AVValueRollup is a rollup cell, computed when rendered.
type AVValueRollup struct {
	Contents []*AVValue `json:"contents"`
}
