package av

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// ---- set_cells ------------------------------------------------------------

// cellEdit is one cell to set: the row (item ID), the column, the type the
// caller expects it to have ("" takes the column's; upstream's
// multi_select is read as mSelect), and the value as sent: value or
// values, or one of upstream's typed fields (Field names it).
type cellEdit struct {
	Row, Key, Type string
	// Value is a string, number or boolean; Values the options of an
	// mSelect or a relation's rows.
	Value  any
	Values []string
	// Field is the typed field the value came in ("" for value or
	// values); Assets an mAsset's files.
	Field  string
	Assets []*siyuan.AVValueAsset
	// NumberFormat, EndDate and IncludeTime qualify a number or a date
	// (nil when not given).
	NumberFormat *string
	EndDate      any
	IncludeTime  *bool
}

// typedArgs are upstream 0.6.8's typed value fields, which set_cells takes
// at top level (one cell) and in each object of cells or items.
type typedArgs struct {
	Text             *string          `arg:"text" help:"a text cell's text (valueType text; also a primary key's)"`
	Number           *float64         `arg:"number" help:"a number cell's number (valueType number)"`
	NumberFormat     *string          `arg:"numberFormat" help:"with number: the format stored on the cell (\"\", commas, percent, USD, CNY, EUR, GBP, JPY, …); SiYuan shows every number in its column's format, and rewrites the cell's on render"`
	Date             any              `arg:"date" help:"a date cell (valueType date): ISO text or Unix milliseconds; YYYY-MM-DD is a date without time (local time unless the text says)"`
	EndDate          any              `arg:"endDate" help:"with date (or value): the range's end, ISO text or Unix milliseconds"`
	IncludeTime      *bool            `arg:"includeTime" help:"with date (or value): false stores the date without its time; true with it (default: whether the text has a time)"`
	Checked          *bool            `arg:"checked" help:"a checkbox (valueType checkbox)"`
	Option           *string          `arg:"option" help:"a select's option name (valueType select); a new name adds the option"`
	Options          []string         `arg:"options" help:"a multi-select's option names in order (valueType multi_select or mSelect)"`
	RelationBlockIDs []string         `arg:"relationBlockIDs" help:"a relation's related rows (valueType relation): their item IDs in the related database" id:""`
	URL              *string          `arg:"url" help:"a URL cell (valueType url)"`
	Email            *string          `arg:"email" help:"an email cell (valueType email)"`
	Phone            *string          `arg:"phone" help:"a phone cell (valueType phone)"`
	Assets           []map[string]any `arg:"assets" help:"an assets cell's files in order (valueType mAsset): [{type: image|file, content: a path like assets/x.png or a URL, name?}]; at least one (emptying is not available)"`
}

// fields puts the typed fields given into m, as a cell object holds them.
func (t typedArgs) fields(m map[string]any) {
	text := func(k string, p *string) {
		if p != nil {
			m[k] = *p
		}
	}
	flag := func(k string, p *bool) {
		if p != nil {
			m[k] = *p
		}
	}
	list := func(k string, l []string) {
		if l != nil {
			m[k] = anyList(l)
		}
	}
	text("text", t.Text)
	if t.Number != nil {
		m["number"] = *t.Number
	}
	text("numberFormat", t.NumberFormat)
	if t.Date != nil {
		m["date"] = t.Date
	}
	if t.EndDate != nil {
		m["endDate"] = t.EndDate
	}
	flag("includeTime", t.IncludeTime)
	flag("checked", t.Checked)
	text("option", t.Option)
	list("options", t.Options)
	list("relationBlockIDs", t.RelationBlockIDs)
	text("url", t.URL)
	text("email", t.Email)
	text("phone", t.Phone)
	if t.Assets != nil {
		l := make([]any, 0, len(t.Assets))
		for _, a := range t.Assets {
			l = append(l, a)
		}
		m["assets"] = l
	}
}

func anyList(l []string) []any {
	out := make([]any, 0, len(l))
	for _, s := range l {
		out = append(out, s)
	}
	return out
}

type cellsArgs struct {
	dbArg
	ctxBlock
	RowID     string       `arg:"rowID" help:"one cell: the row (its item ID, as render shows it; not the bound block's ID)" id:""`
	ColumnID  string       `arg:"columnID" help:"one cell: the column (keyID is an alias)" id:""`
	KeyID     string       `arg:"keyID" help:"alias of columnID" id:""`
	ValueType settableType `arg:"valueType" help:"the column's type, checked when given (upstream's multi_select is mSelect)"`
	Value     *string      `arg:"value" help:"the value as text: a number, true/false, a date (YYYY-MM-DD, YYYY-MM-DD HH:MM, RFC 3339), an option name; \"\" empties a number, date or text; or pass upstream's typed field instead (text, number, date, checked, option, options, relationBlockIDs, url, email, phone, assets), not both"`
	Values    []string     `arg:"values" help:"a multi-select's option names, in order; a relation's related rows (item IDs of the related database)"`
	typedArgs
	List  []map[string]any `arg:"cells" help:"many cells: [{rowID, columnID, valueType, value | values | a typed field (text, number + numberFormat, date + endDate + includeTime, checked, option, options, relationBlockIDs, url, email, phone, assets)}] (value may be a JSON number or boolean); at most 100"`
	Items []map[string]any `arg:"items" help:"alias of cells"`
	Cells []cellEdit       // the cells set, checked
}

// settableType is a column type set_cells writes, by SiYuan's name or
// upstream's.
type settableType string

func (settableType) ArgEnum() []string { return valueTypes }

// settable are the column types set_cells writes; the others are computed
// (template, rollup, created, updated, line number).
var settable = []string{siyuan.AVKeyBlock, siyuan.AVKeyText, siyuan.AVKeyNumber, siyuan.AVKeyDate, siyuan.AVKeySelect,
	siyuan.AVKeyMSelect, siyuan.AVKeyURL, siyuan.AVKeyEmail, siyuan.AVKeyPhone, siyuan.AVKeyCheckbox, siyuan.AVKeyRelation, siyuan.AVKeyMAsset}

// multiSelect is upstream 0.6.8's name of an mSelect column's values.
const multiSelect = "multi_select"

// valueTypes are the valueType names set_cells takes: SiYuan's and
// upstream's multi_select.
var valueTypes = append(slices.Clone(settable), multiSelect)

// typedFields are upstream's typed value fields and the column types each
// fills, in upstream's order.
var typedFields = []struct {
	name  string
	types []string
}{
	{"text", []string{siyuan.AVKeyText, siyuan.AVKeyBlock}},
	{"number", []string{siyuan.AVKeyNumber}},
	{"date", []string{siyuan.AVKeyDate}},
	{"checked", []string{siyuan.AVKeyCheckbox}},
	{"option", []string{siyuan.AVKeySelect}},
	{"options", []string{siyuan.AVKeyMSelect}},
	{"relationBlockIDs", []string{siyuan.AVKeyRelation}},
	{"url", []string{siyuan.AVKeyURL}},
	{"email", []string{siyuan.AVKeyEmail}},
	{"phone", []string{siyuan.AVKeyPhone}},
	{"assets", []string{siyuan.AVKeyMAsset}},
}

// fieldFor is the typed field that fills a column type ("" for none).
func fieldFor(colType string) string {
	for _, f := range typedFields {
		if f.types[0] == colType {
			return f.name
		}
	}
	return ""
}

// fieldFits reports whether a typed field fills a column type.
func fieldFits(field, colType string) bool {
	for _, f := range typedFields {
		if f.name == field {
			return slices.Contains(f.types, colType)
		}
	}
	return false
}

// numberFormats are SiYuan 3.7.3's number formats.
var numberFormats = []string{"", "commas", "percent", "USD", "CNY", "EUR", "GBP", "JPY", "RUB", "INR", "KRW", "TRY", "CAD",
	"CHF", "THB", "AUD", "HKD", "TWD", "MOP", "SGD", "NZD", "ILS", "SKK"}

// cellKeys are the keys a cell object takes.
var cellKeys = []string{"rowID", "columnID", "keyID", "valueType", "value", "values", "numberFormat", "endDate", "includeTime",
	"text", "number", "date", "checked", "option", "options", "relationBlockIDs", "url", "email", "phone", "assets"}

func parseCell(field string, m map[string]any) (cellEdit, error) {
	str := func(k string) string { s, _ := m[k].(string); return s }
	c := cellEdit{Row: str("rowID"), Key: str("columnID"), Type: str("valueType"), Value: m["value"]}
	for k := range m {
		if !slices.Contains(cellKeys, k) {
			return c, failure.Invalid("%s does not take %s", strings.TrimSuffix(field, "."), k)
		}
	}
	if c.Key == "" {
		c.Key = str("keyID")
	} else if k := str("keyID"); k != "" && k != c.Key {
		return c, failure.Invalid("%scolumnID and keyID name the same column; pass one of them", field)
	}
	if err := tools.CheckID(field+"rowID", c.Row); err != nil {
		return c, err
	}
	if err := tools.CheckID(field+"columnID", c.Key); err != nil {
		return c, err
	}
	if c.Type != "" && !slices.Contains(valueTypes, c.Type) {
		return c, failure.Invalid("%svalueType must be one of %s", field, strings.Join(valueTypes, ", "))
	}
	if c.Type == multiSelect {
		c.Type = siyuan.AVKeyMSelect
	}
	if raw, ok := m["values"]; ok && raw != nil {
		l, err := stringList(field+"values", raw)
		if err != nil {
			return c, err
		}
		c.Values = l
	}
	switch c.Value.(type) {
	case nil, string, float64, bool:
	default:
		return c, failure.Invalid("%svalue must be a string, a number or a boolean", field)
	}
	if err := parseTyped(field, m, &c); err != nil {
		return c, err
	}
	if c.Value == nil && c.Values == nil && c.Assets == nil {
		if want := fieldFor(c.Type); want != "" {
			return c, failure.Invalid("%s%s (or value) is required when valueType=%q", field, want, m["valueType"])
		}
		return c, failure.Invalid("%svalue (or values, or a typed field: text, number, date, checked, option, options, relationBlockIDs, url, email, phone, assets) is required", field)
	}
	return c, parseQualifiers(field, m, &c)
}

// parseTyped reads the typed field of a cell, if any: one at most, not
// with value or values, and of the valueType when one is given.
func parseTyped(field string, m map[string]any, c *cellEdit) error {
	var given []string
	for _, f := range typedFields {
		if v, ok := m[f.name]; ok && v != nil {
			given = append(given, f.name)
		}
	}
	switch {
	case len(given) == 0:
		return nil
	case len(given) > 1:
		return failure.Invalid("%sa cell takes one value field; got %s", field, strings.Join(given, " and "))
	case c.Value != nil || c.Values != nil:
		return failure.Invalid("%spass value (or values) or the typed field %s, not both", field, given[0])
	}
	name := given[0]
	if c.Type != "" && !fieldFits(name, c.Type) {
		want := fieldFor(c.Type)
		if want == "" {
			want = "value"
		}
		return failure.Invalid("%svalueType %s takes %s, not %s", field, m["valueType"], want, name)
	}
	c.Field = name
	raw := m[name]
	where := field + name
	switch name {
	case "text", "option", "url", "email", "phone":
		s, ok := raw.(string)
		if !ok {
			return failure.Invalid("%s must be a string", where)
		}
		c.Value = s
	case "number":
		n, ok := raw.(float64)
		if !ok {
			return failure.Invalid("%s must be a number", where)
		}
		c.Value = n
	case "date":
		switch raw.(type) {
		case string, float64:
		default:
			return failure.Invalid("%s must be ISO text or Unix milliseconds", where)
		}
		c.Value = raw
	case "checked":
		b, ok := raw.(bool)
		if !ok {
			return failure.Invalid("%s must be true or false", where)
		}
		c.Value = b
	case "options", "relationBlockIDs":
		l, err := stringList(where, raw)
		if err != nil {
			return err
		}
		c.Values = l
	case "assets":
		l, err := assetsOf(where, raw)
		if err != nil {
			return err
		}
		c.Assets = l
	}
	return nil
}

// parseQualifiers reads numberFormat (of a number), endDate and
// includeTime (of a date).
func parseQualifiers(field string, m map[string]any, c *cellEdit) error {
	qualifies := func(arg, typ, typed string) error {
		if c.Type != "" && c.Type != typ || c.Field != "" && c.Field != typed || c.Values != nil {
			return failure.Invalid("%s%s is for a %s cell (with %s or value)", field, arg, typ, typed)
		}
		return nil
	}
	if raw, ok := m["numberFormat"]; ok && raw != nil {
		s, ok := raw.(string)
		if !ok || !slices.Contains(numberFormats, s) {
			return failure.Invalid("%snumberFormat must be one of \"\", %s", field, strings.Join(numberFormats[1:], ", "))
		}
		if err := qualifies("numberFormat", siyuan.AVKeyNumber, "number"); err != nil {
			return err
		}
		c.NumberFormat = &s
	}
	if raw, ok := m["endDate"]; ok && raw != nil {
		switch raw.(type) {
		case string, float64:
		default:
			return failure.Invalid("%sendDate must be ISO text or Unix milliseconds", field)
		}
		if err := qualifies("endDate", siyuan.AVKeyDate, "date"); err != nil {
			return err
		}
		c.EndDate = raw
	}
	if raw, ok := m["includeTime"]; ok && raw != nil {
		b, ok := raw.(bool)
		if !ok {
			return failure.Invalid("%sincludeTime must be true or false", field)
		}
		if err := qualifies("includeTime", siyuan.AVKeyDate, "date"); err != nil {
			return err
		}
		c.IncludeTime = &b
	}
	return nil
}

// stringList reads a JSON array of strings.
func stringList(where string, raw any) ([]string, error) {
	l, ok := raw.([]any)
	if !ok {
		return nil, failure.Invalid("%s must be an array of strings", where)
	}
	out := make([]string, 0, len(l))
	for _, v := range l {
		s, ok := v.(string)
		if !ok {
			return nil, failure.Invalid("%s must be an array of strings", where)
		}
		out = append(out, s)
	}
	return out, nil
}

// assetsOf reads an mAsset cell's files: [{type: image|file, content,
// name?}].
func assetsOf(where string, raw any) ([]*siyuan.AVValueAsset, error) {
	l, ok := raw.([]any)
	if !ok {
		return nil, failure.Invalid("%s must be an array of {type, content, name?}", where)
	}
	if len(l) == 0 {
		// SiYuan's value carries no empty list of assets: the cell would
		// keep its files.
		return nil, failure.Invalid("%s must name at least one file (emptying an assets cell is not available)", where)
	}
	out := make([]*siyuan.AVValueAsset, 0, len(l))
	for i, x := range l {
		m, ok := x.(map[string]any)
		if !ok {
			return nil, failure.Invalid("%s[%d] must be an object {type, content, name?}", where, i)
		}
		for k := range m {
			if k != "type" && k != "content" && k != "name" {
				return nil, failure.Invalid("%s[%d] does not take %s (type, content, name)", where, i, k)
			}
		}
		a := &siyuan.AVValueAsset{}
		a.Type, _ = m["type"].(string)
		a.Content, _ = m["content"].(string)
		name, isText := m["name"].(string)
		if m["name"] != nil && !isText {
			return nil, failure.Invalid("%s[%d].name must be a string", where, i)
		}
		a.Name = name
		if a.Type != "image" && a.Type != "file" {
			return nil, failure.Invalid("%s[%d].type must be image or file", where, i)
		}
		if strings.TrimSpace(a.Content) == "" {
			return nil, failure.Invalid("%s[%d].content must name the asset (a path like assets/x.png, or a URL)", where, i)
		}
		out = append(out, a)
	}
	return out, nil
}

func parseCells(out *cellsArgs) error {
	list, raw := "cells", out.List
	if out.Items != nil {
		list, raw = "items", out.Items
	}
	if out.List != nil && out.Items != nil {
		return failure.Invalid("cells and items are the same list; pass one")
	}
	single := out.RowID != ""
	if single == (raw != nil) {
		return failure.Invalid("pass one cell (rowID, columnID, value) or many (cells[]), not both")
	}
	if single {
		m := map[string]any{"rowID": out.RowID, "columnID": out.ColumnID}
		if out.ValueType != "" {
			m["valueType"] = string(out.ValueType)
		}
		if out.KeyID != "" {
			m["keyID"] = out.KeyID
		}
		if out.Value != nil {
			m["value"] = *out.Value
		}
		if out.Values != nil {
			m["values"] = anyList(out.Values)
		}
		out.typedArgs.fields(m)
		c, err := parseCell("", m)
		out.Cells = []cellEdit{c}
		return err
	}
	if out.ColumnID != "" || out.KeyID != "" || out.ValueType != "" || out.Value != nil || out.Values != nil || len(out.typedArgs.given()) > 0 {
		return failure.Invalid("with cells[] (or items[]), each cell holds its own columnID and value; pass none at top level")
	}
	if len(raw) == 0 || len(raw) > 100 {
		return failure.Invalid("%s[] must hold 1 to 100 cells", list)
	}
	seen := map[[2]string]bool{}
	for i, m := range raw {
		c, err := parseCell(fmt.Sprintf("%s[%d].", list, i), m)
		if err != nil {
			return err
		}
		if seen[[2]string{c.Row, c.Key}] {
			return failure.Invalid("%s[%d] sets the cell of row %s in column %s again; one value per cell", list, i, c.Row, c.Key)
		}
		seen[[2]string{c.Row, c.Key}] = true
		out.Cells = append(out.Cells, c)
	}
	return nil
}

// given are the names of the typed fields given at top level.
func (t typedArgs) given() []string {
	m := map[string]any{}
	t.fields(m)
	return slices.Sorted(maps.Keys(m))
}

// cellsState is set_cells' manifest: the columns and the cells it sets, as
// stored (a row or key that is not there is marked).
type cellsState struct {
	AvID    string      `json:"avID"`
	Missing bool        `json:"missing,omitempty"`
	Keys    []KeyState  `json:"keys"`
	Cells   []cellState `json:"cells"`
	// Related are, for relation cells, the rows of the related databases
	// they link before and after (with their back-link cells, which a
	// two-way relation changes).
	Related []relatedCells `json:"related,omitempty"`
	// dbs are the whole databases read, when relation cells are set: their
	// preimage hashes (not hashed here).
	dbs map[string]DBState
	// hiddenLinks are, per relation cell set (row, key), the rows it links
	// that the call cannot see: the write keeps them (not hashed).
	hiddenLinks map[[2]string][]string
	// formats are the stored number formats of the number cells set, by
	// (row, key): not hashed (a render rewrites them), read back.
	formats map[[2]string]string
}

type cellState struct {
	Row        string          `json:"row"`
	Key        string          `json:"key"`
	RowMissing bool            `json:"rowMissing,omitempty"`
	Value      *siyuan.AVValue `json:"value,omitempty"`
}

func readCells(ctx context.Context, env *tools.Env, a cellsArgs) (cellsState, error) {
	db, v, av, err := readDBStored(ctx, env, a.AvID)
	if err != nil {
		return cellsState{}, err
	}
	st := cellsOf(db, a)
	st.formats = numberFormatsOf(av, a)
	for _, c := range a.Cells {
		if ids := v.hiddenTargets(c.Row, c.Key); len(ids) > 0 {
			if st.hiddenLinks == nil {
				st.hiddenLinks = map[[2]string][]string{}
			}
			st.hiddenLinks[[2]string{c.Row, c.Key}] = ids
		}
	}
	return st, readRelated(ctx, env, a, db, &st)
}

// numberFormatsOf are the stored formats of the number cells a call sets
// a numberFormat of.
func numberFormatsOf(av *siyuan.AttributeView, a cellsArgs) map[[2]string]string {
	if av == nil {
		return nil
	}
	out := map[[2]string]string{}
	for _, c := range a.Cells {
		if c.NumberFormat == nil {
			continue
		}
		for _, kv := range av.KeyValues {
			if kv == nil || kv.Key == nil || kv.Key.ID != c.Key {
				continue
			}
			for _, v := range kv.Values {
				if v != nil && v.BlockID == c.Row && v.Number != nil {
					out[[2]string{c.Row, c.Key}] = v.Number.Format
				}
			}
		}
	}
	return out
}

func cellsOf(db DBState, a cellsArgs) cellsState {
	st := cellsState{AvID: a.AvID, Missing: db.Missing, Keys: []KeyState{}, Cells: []cellState{}}
	var keys []string
	for _, c := range a.Cells {
		if k, ok := db.key(c.Key); ok && !slices.Contains(keys, c.Key) {
			keys = append(keys, c.Key)
			st.Keys = append(st.Keys, k)
		}
		cs := cellState{Row: c.Row, Key: c.Key}
		if r, ok := db.row(c.Row); ok {
			cs.Value = r.Cells[c.Key]
		} else {
			cs.RowMissing = true
		}
		st.Cells = append(st.Cells, cs)
	}
	sort.Slice(st.Keys, func(i, j int) bool { return st.Keys[i].ID < st.Keys[j].ID })
	sort.Slice(st.Cells, func(i, j int) bool {
		if st.Cells[i].Row != st.Cells[j].Row {
			return st.Cells[i].Row < st.Cells[j].Row
		}
		return st.Cells[i].Key < st.Cells[j].Key
	})
	return st
}

func (s cellsState) key(id string) (KeyState, bool) {
	for _, k := range s.Keys {
		if k.ID == id {
			return k, true
		}
	}
	return KeyState{}, false
}

// valueOf builds the value SiYuan stores for an edit in a column: only
// the part of the column's type (the kernel decodes it over the cell).
func valueOf(c cellEdit, k KeyState) (*siyuan.AVValue, error) {
	where := fmt.Sprintf("the cell of row %s in column %s (%s)", c.Row, k.Name, k.Type)
	if c.Type != "" && c.Type != k.Type {
		return nil, failure.Invalid("%s: valueType %s does not match the column's type %s", where, c.Type, k.Type)
	}
	if c.Field != "" && !fieldFits(c.Field, k.Type) {
		want := fieldFor(k.Type)
		if want == "" {
			want = "value"
		}
		return nil, failure.Invalid("%s: %s does not fit a %s column; pass %s", where, c.Field, k.Type, want)
	}
	if c.NumberFormat != nil && k.Type != siyuan.AVKeyNumber || (c.EndDate != nil || c.IncludeTime != nil) && k.Type != siyuan.AVKeyDate {
		return nil, failure.Invalid("%s: numberFormat is for a number column, endDate and includeTime for a date column", where)
	}
	if k.Type == siyuan.AVKeyMAsset && c.Assets == nil {
		return nil, failure.Invalid("%s: an mAsset column takes assets ([{type, content, name?}])", where)
	}
	text := func() (string, error) {
		switch v := c.Value.(type) {
		case string:
			return v, nil
		case float64:
			return strconv.FormatFloat(v, 'f', -1, 64), nil
		case bool:
			return strconv.FormatBool(v), nil
		}
		return "", failure.Invalid("%s needs a value", where)
	}
	v := &siyuan.AVValue{Type: k.Type}
	switch k.Type {
	case siyuan.AVKeyBlock, siyuan.AVKeyText, siyuan.AVKeyURL, siyuan.AVKeyEmail, siyuan.AVKeyPhone:
		s, err := text()
		if err != nil {
			return nil, err
		}
		content := &siyuan.AVValueContent{Content: s}
		switch k.Type {
		case siyuan.AVKeyBlock:
			if strings.TrimSpace(s) == "" {
				return nil, failure.Invalid("%s: a primary key needs a text", where)
			}
			v.Block = &siyuan.AVValueBlock{Content: s}
		case siyuan.AVKeyText:
			v.Text = content
		case siyuan.AVKeyURL:
			v.URL = content
		case siyuan.AVKeyEmail:
			v.Email = content
		case siyuan.AVKeyPhone:
			v.Phone = content
		}
	case siyuan.AVKeyNumber:
		switch x := c.Value.(type) {
		case float64:
			v.Number = &siyuan.AVValueNumber{Content: x, IsNotEmpty: true}
		case string:
			if strings.TrimSpace(x) == "" {
				v.Number = &siyuan.AVValueNumber{}
				break
			}
			n, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
			if err != nil || math.IsInf(n, 0) || math.IsNaN(n) {
				return nil, failure.Invalid("%s: %q is not a number", where, x)
			}
			v.Number = &siyuan.AVValueNumber{Content: n, IsNotEmpty: true}
		default:
			return nil, failure.Invalid("%s needs a number", where)
		}
		if c.NumberFormat != nil {
			v.Number.Format = *c.NumberFormat
		}
	case siyuan.AVKeyCheckbox:
		switch x := c.Value.(type) {
		case bool:
			v.Checkbox = &siyuan.AVValueCheckbox{Checked: x}
		case string:
			b, err := strconv.ParseBool(x)
			if err != nil {
				return nil, failure.Invalid("%s: %q is not true or false", where, x)
			}
			v.Checkbox = &siyuan.AVValueCheckbox{Checked: b}
		default:
			return nil, failure.Invalid("%s needs true or false", where)
		}
	case siyuan.AVKeyDate:
		d, err := dateOf(c.Value)
		if err != nil {
			return nil, failure.Invalid("%s: %s", where, err.Error())
		}
		if c.EndDate != nil {
			end, err := dateOf(c.EndDate)
			switch {
			case err != nil:
				return nil, failure.Invalid("%s: endDate: %s", where, err.Error())
			case !d.IsNotEmpty || !end.IsNotEmpty:
				return nil, failure.Invalid("%s: a range needs a date and an endDate", where)
			}
			d.Content2, d.IsNotEmpty2, d.HasEndDate = end.Content, true, true
		}
		if c.IncludeTime != nil && d.IsNotEmpty {
			d.IsNotTime = !*c.IncludeTime
		}
		v.Date = d
	case siyuan.AVKeySelect, siyuan.AVKeyMSelect:
		names := c.Values
		if names == nil {
			s, err := text()
			if err != nil {
				return nil, err
			}
			names = []string{s}
		}
		names = slices.DeleteFunc(slices.Clone(names), func(s string) bool { return strings.TrimSpace(s) == "" })
		if len(names) == 0 {
			// SiYuan does not store a select left without options.
			return nil, failure.Invalid("%s: name at least one option (clearing a select is not available)", where)
		}
		if k.Type == siyuan.AVKeySelect && len(names) > 1 {
			return nil, failure.Invalid("%s: a select holds one option; use an mSelect column for several", where)
		}
		for _, n := range names {
			color := ""
			for _, o := range k.Options {
				if o.Name == n {
					color = o.Color
				}
			}
			if color == "" {
				color = "1" // a new option: SiYuan would pick a random colour
			}
			v.MSelect = append(v.MSelect, &siyuan.AVValueSelect{Content: n, Color: color})
		}
	case siyuan.AVKeyRelation:
		ids, err := relationIDs(c, where)
		if err != nil {
			return nil, err
		}
		v.Relation = &siyuan.AVValueRelation{BlockIDs: ids}
	case siyuan.AVKeyMAsset:
		v.MAsset = c.Assets
	default:
		return nil, failure.Invalid("%s: set_cells does not set %s columns (settable: %s)", where, k.Type, strings.Join(settable, ", "))
	}
	return v, nil
}

// dateOf reads a date: Unix milliseconds, or YYYY-MM-DD (a date without
// time), YYYY-MM-DD HH:MM or RFC 3339 (local time unless it says);
// "" empties the cell.
func dateOf(x any) (*siyuan.AVValueDate, error) {
	switch v := x.(type) {
	case float64:
		return &siyuan.AVValueDate{Content: int64(v), IsNotEmpty: true}, nil
	case string:
		s := strings.TrimSpace(v)
		if s == "" {
			return &siyuan.AVValueDate{}, nil
		}
		if t, err := time.ParseInLocation("2006-01-02", s, time.Local); err == nil {
			return &siyuan.AVValueDate{Content: t.UnixMilli(), IsNotEmpty: true, IsNotTime: true}, nil
		}
		for _, layout := range []string{"2006-01-02 15:04", "2006-01-02T15:04", "2006-01-02 15:04:05"} {
			if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
				return &siyuan.AVValueDate{Content: t.UnixMilli(), IsNotEmpty: true}, nil
			}
		}
		if t, err := time.Parse(time.RFC3339, s); err == nil {
			return &siyuan.AVValueDate{Content: t.UnixMilli(), IsNotEmpty: true}, nil
		}
		return nil, fmt.Errorf("%q is not a date (YYYY-MM-DD, YYYY-MM-DD HH:MM, RFC 3339 or Unix milliseconds)", s)
	}
	return nil, fmt.Errorf("a date is a string or Unix milliseconds")
}

// matches reports whether a stored cell holds what was set.
func matches(stored, want *siyuan.AVValue) bool {
	if want.Block != nil {
		return stored != nil && stored.Block != nil && stored.Block.Content == want.Block.Content
	}
	content := func(c *siyuan.AVValueContent) string {
		if c == nil {
			return ""
		}
		return c.Content
	}
	if want.Relation != nil {
		return slices.Equal(relationOf(stored), want.Relation.BlockIDs)
	}
	if stored == nil {
		// An emptied cell may be stored as nothing at all.
		return want.Number != nil && !want.Number.IsNotEmpty || want.Date != nil && !want.Date.IsNotEmpty || want.MAsset != nil && len(want.MAsset) == 0 ||
			want.Checkbox != nil && !want.Checkbox.Checked || content(want.Text)+content(want.URL)+content(want.Email)+content(want.Phone) == "" && want.MSelect == nil
	}
	switch {
	case want.Text != nil:
		return content(stored.Text) == want.Text.Content
	case want.URL != nil:
		return content(stored.URL) == want.URL.Content
	case want.Email != nil:
		return content(stored.Email) == want.Email.Content
	case want.Phone != nil:
		return content(stored.Phone) == want.Phone.Content
	case want.Number != nil:
		n := stored.Number
		return n != nil && n.IsNotEmpty == want.Number.IsNotEmpty && (!n.IsNotEmpty || n.Content == want.Number.Content)
	case want.Checkbox != nil:
		return stored.Checkbox != nil && stored.Checkbox.Checked == want.Checkbox.Checked ||
			stored.Checkbox == nil && !want.Checkbox.Checked
	case want.Date != nil:
		d, w := stored.Date, want.Date
		if d == nil || d.IsNotEmpty != w.IsNotEmpty {
			return false
		}
		return !d.IsNotEmpty || d.Content == w.Content && d.HasEndDate == w.HasEndDate && (!w.HasEndDate || d.Content2 == w.Content2) &&
			d.IsNotTime == w.IsNotTime
	case want.MAsset != nil:
		return sameAssets(stored.MAsset, want.MAsset)
	case want.MSelect != nil:
		if len(stored.MSelect) != len(want.MSelect) {
			return false
		}
		for i := range want.MSelect {
			if stored.MSelect[i].Content != want.MSelect[i].Content {
				return false
			}
		}
		return true
	}
	return false
}

// formatted requires each number cell given a numberFormat to hold it, or
// its column's format (which SiYuan's renders give every number cell).
func formatted(a cellsArgs, st cellsState) error {
	for _, c := range a.Cells {
		if c.NumberFormat == nil {
			continue
		}
		k, _ := st.key(c.Key)
		if f := st.formats[[2]string{c.Row, c.Key}]; f != *c.NumberFormat && f != k.NumberFormat {
			return fmt.Errorf("the number of row %s in column %s has the format %q, want %q", c.Row, c.Key, f, *c.NumberFormat)
		}
	}
	return nil
}

// sameAssets reports whether stored assets are those set, in order.
func sameAssets(stored, want []*siyuan.AVValueAsset) bool {
	if len(stored) != len(want) {
		return false
	}
	for i, w := range want {
		if stored[i] == nil || *stored[i] != *w {
			return false
		}
	}
	return true
}

// buildCells turns the edits into the kernel's updates, against the
// columns as they are.
func buildCells(a cellsArgs, st cellsState) ([]siyuan.AVCellUpdate, error) {
	var out []siyuan.AVCellUpdate
	for _, c := range a.Cells {
		k, ok := st.key(c.Key)
		if !ok {
			return nil, failure.New(failure.NotFound, "columnID %s: database %s has no such column", c.Key, a.AvID)
		}
		v, err := valueOf(c, k)
		if err != nil {
			return nil, err
		}
		out = append(out, siyuan.AVCellUpdate{KeyID: c.Key, ItemID: c.Row, Value: v})
	}
	return out, nil
}

// cellsSet are what set_cells hands its readback: the updates it sent
// (as the call sees them) and, when it changes related databases, every
// database as it was before, by id.
type cellsSet struct {
	updates []siyuan.AVCellUpdate
	dbs     map[string]DBState
}

var setCells = tools.WriteWith[cellsArgs, cellsState, cellsSet]{Write: tools.Write[cellsArgs, cellsState]{
	Name: "set_cells", Summary: "set one cell (rowID, columnID, value) or many (cells[]: {rowID, columnID, value | values, valueType})", Policy: manifest,
	Example: map[string]any{"avID": "20260812120000-abcdefg", "rowID": "20260812120100-hijklmn", "columnID": "20260812120200-opqrstu",
		"value": "done", "validateOnly": true},
	Validate: parseCells,
	// The database's blocks, and the block bound to each row whose primary
	// key the call sets: SiYuan writes that text onto the bound block, which
	// may live in another notebook.
	Scope: tools.Scope[cellsArgs]{Resolve: func(ctx context.Context, env *tools.Env, a cellsArgs) ([]tools.Touch, error) {
		ts, err := dbTouchesAt(ctx, env, a.AvID, a.BlockID, tools.LevelWrite)
		if err != nil {
			return nil, err
		}
		more, err := cellTouches(ctx, env, a)
		if err != nil {
			return nil, err
		}
		return append(ts, more...), nil
	}},
	Targets: func(a cellsArgs) []string { return []string{a.AvID} },
	State:   readCells,
	Check: func(a cellsArgs, st cellsState) error {
		if st.Missing {
			return failure.Missing("database", a.AvID)
		}
		for _, c := range st.Cells {
			if c.RowMissing {
				return failure.New(failure.NotFound, "rowID %s: database %s has no such row (row IDs are item IDs, as render shows them)", c.Row, a.AvID)
			}
		}
		if _, err := buildCells(a, st); err != nil {
			return err
		}
		return checkRelated(a, st)
	},
},
	Execute: func(ctx context.Context, env *tools.Env, a cellsArgs, st cellsState) (tools.Payload, cellsSet, error) {
		updates, err := buildCells(a, st)
		if err != nil {
			return nil, cellsSet{}, tools.Refuse(err)
		}
		// A relation cell keeps the rows it links that the call cannot
		// see (after those it names): the call neither sees nor changes
		// them. The readback compares what the call sees.
		sent := updates
		if len(st.hiddenLinks) > 0 {
			sent = slices.Clone(updates)
			for i, u := range sent {
				if keep := st.hiddenLinks[[2]string{u.ItemID, u.KeyID}]; len(keep) > 0 && u.Value != nil && u.Value.Relation != nil {
					v := *u.Value
					v.Relation = &siyuan.AVValueRelation{BlockIDs: append(slices.Clone(u.Value.Relation.BlockIDs), keep...)}
					sent[i].Value = &v
				}
			}
		}
		if err := env.Kernel.BatchSetAttributeViewBlockAttrs(ctx, a.AvID, sent); err != nil {
			// The kernel sets the cells in order and saves once at the end.
			return nil, cellsSet{}, tools.WriteFailure(err, false)
		}
		return tools.Payload{"avID": a.AvID, "set": len(updates)}, cellsSet{updates, st.dbs}, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a cellsArgs, p tools.Payload, set cellsSet) (any, error) {
		updates := set.updates
		var st cellsState
		var last error
		ok, err := tools.Poll(ctx, func() (bool, error) {
			var err error
			if st, err = readCells(ctx, env, a); err != nil {
				return false, err
			}
			last = nil
			for _, u := range updates {
				for _, c := range st.Cells {
					if c.Row == u.ItemID && c.Key == u.KeyID && !matches(c.Value, u.Value) {
						last = fmt.Errorf("the cell of row %s in column %s does not hold the value set", u.ItemID, u.KeyID)
					}
				}
			}
			if last == nil {
				last = formatted(a, st)
			}
			if last == nil {
				last = backLinked(a, st)
			}
			return last == nil, nil
		})
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, last
		}
		if before := set.dbs; before != nil {
			if h, err := dbHashes(before, st.dbs); err == nil {
				p["hashes"] = h
			}
		}
		return st, nil
	},
}

// ---- remove_rows ----------------------------------------------------------

type removeRowsArgs struct {
	dbArg
	ctxBlock
	SrcIDs []string `arg:"srcIDs" help:"the rows' item IDs (as render shows them; not the bound blocks' IDs); at most 100" id:"" required:""`
}

// rowsState is remove_rows' manifest: the rows it removes, whole (cells
// included: removing a row removes them), or marked missing.
type rowsState struct {
	AvID    string     `json:"avID"`
	Missing bool       `json:"missing,omitempty"`
	Rows    []rowEntry `json:"rows"`
	// bound maps a block ID to its row's item ID, for a helpful refusal
	// of a block ID passed as a row ID (not hashed).
	bound map[string]string
}

type rowEntry struct {
	ID      string    `json:"id"`
	Missing bool      `json:"missing,omitempty"`
	Row     *RowState `json:"row,omitempty"`
}

func readRows(ctx context.Context, env *tools.Env, a removeRowsArgs) (rowsState, error) {
	db, err := ReadDBState(ctx, env, a.AvID)
	if err != nil {
		return rowsState{}, err
	}
	st := rowsState{AvID: a.AvID, Missing: db.Missing, Rows: []rowEntry{}, bound: map[string]string{}}
	for _, r := range db.Rows {
		if r.Block != "" {
			st.bound[r.Block] = r.ID
		}
	}
	ids := slices.Sorted(slices.Values(a.SrcIDs))
	for _, id := range ids {
		if r, ok := db.row(id); ok {
			st.Rows = append(st.Rows, rowEntry{ID: id, Row: &r})
		} else {
			st.Rows = append(st.Rows, rowEntry{ID: id, Missing: true})
		}
	}
	return st, nil
}

var removeRows = tools.Write[removeRowsArgs, rowsState]{
	Name: "remove_rows", Summary: "remove rows by row (item) ID, with their cells; a bound block keeps its content and loses the binding (a person must confirm)",
	Policy: manifest, Destructive: true, Dangerous: true,
	Example: map[string]any{"avID": "20260812120000-abcdefg", "srcIDs": []string{"20260812120100-hijklmn"}, "validateOnly": true},
	Validate: func(out *removeRowsArgs) error {
		if len(out.SrcIDs) == 0 || len(out.SrcIDs) > 100 {
			return failure.Invalid("srcIDs must hold 1 to 100 row IDs")
		}
		for i, id := range out.SrcIDs {
			if slices.Index(out.SrcIDs, id) != i {
				return failure.Invalid("srcIDs names %s twice", id)
			}
		}
		return nil
	},
	// Delete in the notebooks of the database's blocks; the bound blocks
	// of the rows lose their binding (an attribute): write in theirs.
	Scope: tools.Scope[removeRowsArgs]{Resolve: func(ctx context.Context, env *tools.Env, a removeRowsArgs) ([]tools.Touch, error) {
		ts, err := dbTouchesAt(ctx, env, a.AvID, a.BlockID, tools.LevelDelete)
		if err != nil {
			return nil, err
		}
		av, err := env.Kernel.GetAttributeView(ctx, a.AvID)
		if err != nil || av == nil {
			return ts, err
		}
		db := canonical(av, nil)
		for _, id := range a.SrcIDs {
			if r, ok := db.row(id); ok && r.Block != "" {
				// One the call cannot see is passed over: the state has
				// no such row, and refuses it.
				ts = append(ts, tools.OnBound(r.Block, tools.LevelWrite))
			}
		}
		return ts, nil
	}},
	Targets: func(a removeRowsArgs) []string { return []string{a.AvID} },
	State:   readRows,
	Check: func(a removeRowsArgs, st rowsState) error {
		if st.Missing {
			return failure.Missing("database", a.AvID)
		}
		for _, r := range st.Rows {
			if !r.Missing {
				continue
			}
			if item, ok := st.bound[r.ID]; ok {
				e := failure.Invalid("%s is the block bound to row %s; srcIDs are row (item) IDs, so nothing was removed", r.ID, item)
				return e.With("rowID", item)
			}
			return failure.New(failure.NotFound, "srcIDs: database %s has no row %s", a.AvID, r.ID)
		}
		return nil
	},
	Execute: func(ctx context.Context, env *tools.Env, a removeRowsArgs, _ rowsState) (tools.Payload, error) {
		if err := env.Kernel.RemoveAttributeViewBlocks(ctx, a.AvID, a.SrcIDs); err != nil {
			return nil, tools.WriteFailure(err, false)
		}
		return tools.Payload{"avID": a.AvID, "removed": slices.Sorted(slices.Values(a.SrcIDs))}, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a removeRowsArgs, _ tools.Payload) (any, error) {
		var st rowsState
		ok, err := tools.Poll(ctx, func() (bool, error) {
			var err error
			if st, err = readRows(ctx, env, a); err != nil {
				return false, err
			}
			return !slices.ContainsFunc(st.Rows, func(r rowEntry) bool { return !r.Missing }), nil
		})
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("database %s still shows some of the removed rows", a.AvID)
		}
		return st, nil
	},
}

// ---- remove_column --------------------------------------------------------

type removeColumnArgs struct {
	dbArg
	ctxBlock
	Key        string `arg:"keyID" help:"the column" id:""`
	Column     string `arg:"columnID" help:"alias of keyID" id:""`
	RemoveDest bool   `arg:"removeRelationDest" help:"a two-way relation column: true also removes its back column in the related database (with its cells); false keeps that column, made one-way (SiYuan's removeRelationDest)" default:"false"`
}

// backOf is the back column a two-way relation column has ("" when none)
// and the database holding it.
func backOf(k KeyState) (avID, keyID string) {
	if k.Type != siyuan.AVKeyRelation || k.Relation == nil || !k.Relation.IsTwoWay {
		return "", ""
	}
	return k.Relation.AvID, k.Relation.BackKeyID
}

// readRemoveColumn reads the database and, for a two-way relation column
// with another database, that database (whose back column changes).
func readRemoveColumn(ctx context.Context, env *tools.Env, a removeColumnArgs) (colState, error) {
	db, err := ReadDBState(ctx, env, a.AvID)
	if err != nil {
		return colState{}, err
	}
	st := colState{DB: db}
	if k, ok := db.key(a.Key); ok {
		if other, _ := backOf(k); other != "" && other != a.AvID {
			r, err := ReadDBState(ctx, env, other)
			if err != nil {
				return colState{}, err
			}
			st.Related = &r
		}
	}
	return st, nil
}

// removedColumn is the state remove_column leaves: the column gone and,
// for a two-way relation, its back column removed (removeRelationDest)
// or made one-way, wherever it is.
func removedColumn(a removeColumnArgs, before colState) colState {
	k, _ := before.DB.key(a.Key)
	other, back := backOf(k)
	want := colState{DB: before.DB.without(nil, []string{a.Key})}
	if before.Related != nil {
		r := before.Related.clone()
		want.Related = &r
	}
	target := &want.DB
	if other != a.AvID {
		target = want.Related
	}
	if back == "" || target == nil {
		return want
	}
	if a.RemoveDest {
		*target = target.without(nil, []string{back})
		return want
	}
	for i, bk := range target.Keys {
		if bk.ID == back && bk.Relation != nil && bk.Relation.AvID == a.AvID && bk.Relation.IsTwoWay {
			r := *bk.Relation
			r.IsTwoWay, r.BackKeyID = false, ""
			target.Keys[i].Relation = &r
		}
	}
	return want
}

// removeColumn hands its readback the state as it was before.
var removeColumn = tools.WriteWith[removeColumnArgs, colState, colState]{Write: tools.Write[removeColumnArgs, colState]{
	Name: "remove_column", Summary: "remove a column (key) with all its cells; not the primary key; a two-way relation's back column is made one-way, or removed with removeRelationDest:true, and both databases' hashes are answered (a person must confirm)",
	Policy: guarded, Destructive: true, Dangerous: true,
	Example: map[string]any{"avID": "20260812120000-abcdefg", "keyID": "20260812120200-opqrstu", "validateOnly": true},
	Validate: func(out *removeColumnArgs) error {
		if c := out.Column; c != "" {
			if out.Key != "" && out.Key != c {
				return failure.Invalid("keyID and columnID name the same column; pass one of them")
			}
			out.Key = c
		}
		// keyID (or columnID) is required: "" is refused as the
		// malformed id it is.
		return tools.CheckID("keyID", out.Key)
	},
	Scope: tools.Scope[removeColumnArgs]{Resolve: func(ctx context.Context, env *tools.Env, a removeColumnArgs) ([]tools.Touch, error) {
		ts, err := dbTouchesAt(ctx, env, a.AvID, a.BlockID, tools.LevelDelete)
		if err != nil {
			return nil, err
		}
		if err := refuseWithheld(ctx, env, a.AvID, "removing a column removes their cells too"); err != nil {
			return nil, err
		}
		// A two-way relation's back column changes in the related
		// database: write there, or delete with removeRelationDest.
		keys, err := env.Kernel.GetAttributeViewKeysByAvID(ctx, a.AvID)
		if err != nil {
			return nil, fmt.Errorf("read the columns of database %s: %w", a.AvID, err)
		}
		for _, k := range keys {
			if k.ID != a.Key || k.Type != siyuan.AVKeyRelation || k.Relation == nil || !k.Relation.IsTwoWay || k.Relation.AvID == a.AvID {
				continue
			}
			need := tools.LevelWrite
			if a.RemoveDest {
				need = tools.LevelDelete
			}
			other, err := dbTouches(ctx, env, k.Relation.AvID, need)
			var fe *failure.Error
			if err != nil && !(errors.As(err, &fe) && fe.Code == failure.NotFound) {
				// A related database that is gone changes nothing.
				return nil, err
			}
			if a.RemoveDest {
				if err := refuseWithheld(ctx, env, k.Relation.AvID, "removing the back column removes their cells too"); err != nil {
					return nil, err
				}
			}
			ts = append(ts, other...)
		}
		return ts, nil
	}},
	Targets: func(a removeColumnArgs) []string { return []string{a.AvID} },
	State:   readRemoveColumn,
	Check: func(a removeColumnArgs, st colState) error {
		if err := exists(st.DB); err != nil {
			return err
		}
		k, ok := st.DB.key(a.Key)
		switch {
		case !ok:
			return failure.New(failure.NotFound, "keyID %s: database %s has no such column", a.Key, a.AvID)
		case k.Type == siyuan.AVKeyBlock:
			return failure.Invalid("column %s is the primary key, which a database cannot lose", a.Key)
		}
		return nil
	},
},
	Execute: func(ctx context.Context, env *tools.Env, a removeColumnArgs, st colState) (tools.Payload, colState, error) {
		if err := env.Kernel.RemoveAttributeViewKey(ctx, a.AvID, a.Key, a.RemoveDest); err != nil {
			return nil, st, tools.WriteFailure(err, false)
		}
		p := tools.Payload{"avID": a.AvID, "keyID": a.Key, "removed": true}
		if k, _ := st.DB.key(a.Key); k.Relation != nil && k.Relation.IsTwoWay {
			p["backKeyID"], p["removeRelationDest"] = k.Relation.BackKeyID, a.RemoveDest
		}
		return p, st, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a removeColumnArgs, p tools.Payload, before colState) (any, error) {
		want := removedColumn(a, before)
		var after colState
		_, err := tools.Await(ctx, func(ctx context.Context) (colState, error) {
			st := colState{}
			db, err := ReadDBState(ctx, env, a.AvID)
			if err != nil {
				return st, err
			}
			st.DB = db
			if before.Related != nil {
				r, err := ReadDBState(ctx, env, before.Related.ID)
				if err != nil {
					return st, err
				}
				st.Related = &r
			}
			after = st
			return st, nil
		}, func(st colState) error {
			if _, ok := st.DB.key(a.Key); ok {
				return fmt.Errorf("database %s still has column %s", a.AvID, a.Key)
			}
			if !same(shapeOf(st.DB), shapeOf(want.DB)) {
				return fmt.Errorf("database %s changed beyond the removed column", a.AvID)
			}
			if want.Related != nil && (st.Related == nil || !same(shapeOf(*st.Related), shapeOf(*want.Related))) {
				return fmt.Errorf("the related database %s changed beyond the back column", want.Related.ID)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if before.Related != nil && after.Related != nil {
			if h, err := dbHashes(map[string]DBState{a.AvID: before.DB, before.Related.ID: *before.Related},
				map[string]DBState{a.AvID: after.DB, after.Related.ID: *after.Related}); err == nil {
				p["hashes"] = h
			}
		}
		return after, nil
	},
}

// cellTouches are what set_cells touches beyond the database's blocks: the
// blocks bound to rows whose primary key it sets, and the related
// databases of the relation cells it sets (read; written when two-way:
// their back links change).
func cellTouches(ctx context.Context, env *tools.Env, a cellsArgs) ([]tools.Touch, error) {
	keys, err := env.Kernel.GetAttributeViewKeysByAvID(ctx, a.AvID)
	if err != nil {
		return nil, fmt.Errorf("read the columns of database %s: %w", a.AvID, err)
	}
	bound, err := boundOf(ctx, env, a, keys)
	if err != nil {
		return nil, err
	}
	// A row bound to a block the call cannot see is a row the state does
	// not have: its block is passed over here, and the state refuses it.
	var ts []tools.Touch
	for _, b := range bound {
		ts = append(ts, tools.OnBound(b, tools.LevelWrite))
	}
	for _, c := range a.Cells {
		for _, k := range keys {
			if k.ID != c.Key || k.Type != siyuan.AVKeyRelation || k.Relation == nil || k.Relation.AvID == "" || k.Relation.AvID == a.AvID {
				continue
			}
			need := tools.LevelRead
			if k.Relation.IsTwoWay {
				need = tools.LevelWrite
			}
			other, err := dbTouches(ctx, env, k.Relation.AvID, need)
			if err != nil {
				return nil, err
			}
			ts = append(ts, other...)
		}
	}
	return ts, nil
}

// boundOf are the blocks bound to the rows whose primary-key cell the
// call sets (detached rows have none), from the columns already read; the
// columns come first (a small read): most calls set no primary key and
// need not read a large database whole.
func boundOf(ctx context.Context, env *tools.Env, a cellsArgs, keys []siyuan.AVKey) ([]string, error) {
	pkID := ""
	for _, k := range keys {
		if k.Type == siyuan.AVKeyBlock {
			pkID = k.ID
		}
	}
	setsPK := false
	for _, c := range a.Cells {
		setsPK = setsPK || pkID != "" && c.Key == pkID
	}
	if !setsPK {
		return nil, nil
	}
	av, err := env.Kernel.GetAttributeView(ctx, a.AvID)
	if err != nil {
		return nil, fmt.Errorf("read database %s: %w", a.AvID, err)
	}
	if av == nil {
		return nil, nil // the state read refuses a missing database
	}
	boundTo := map[string]string{}
	for _, kv := range av.KeyValues {
		if kv.Key == nil || kv.Key.ID != pkID {
			continue
		}
		for _, v := range kv.Values {
			if v != nil && !v.IsDetached && v.Block != nil && v.Block.ID != "" {
				boundTo[v.BlockID] = v.Block.ID
			}
		}
	}
	var out []string
	for _, c := range a.Cells {
		if c.Key == pkID {
			if b := boundTo[c.Row]; b != "" {
				out = append(out, b)
			}
		}
	}
	return out, nil
}
