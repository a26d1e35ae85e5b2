package embedded

import (
	"encoding/json"
	"slices"

	"github.com/88250/lute/ast"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// Gallery and kanban views as SiYuan 3.7.3 keeps them (av.LayoutGallery,
// av.LayoutKanban): card settings and the fields a card shows, in the
// kernel's field order. The wire format keeps both layouts as raw JSON;
// these decode and encode them where the kernel edits them.

// avCardLayout is the kernel's LayoutGallery and LayoutKanban with their
// BaseLayout flattened. CardIDs is the gallery's (deprecated, null in a
// new one); FillColBackgroundColor the kanban's.
type avCardLayout struct {
	Spec                   int             `json:"spec"`
	ID                     string          `json:"id"`
	ShowIcon               bool            `json:"showIcon"`
	WrapField              bool            `json:"wrapField"`
	Filters                json.RawMessage `json:"filters,omitempty"`  // deprecated, kept as read
	Sorts                  json.RawMessage `json:"sorts,omitempty"`    // deprecated, kept as read
	PageSize               int             `json:"pageSize,omitempty"` // deprecated, kept as read
	CoverFrom              int             `json:"coverFrom"`
	CoverFromAssetKeyID    string          `json:"coverFromAssetKeyID,omitempty"`
	CardAspectRatio        int             `json:"cardAspectRatio"`
	CardSize               int             `json:"cardSize"`
	FitImage               bool            `json:"fitImage"`
	DisplayFieldName       bool            `json:"displayFieldName"`
	FillColBackgroundColor *bool           `json:"fillColBackgroundColor,omitempty"` // kanban only
	Fields                 []*avCardField  `json:"fields"`
	CardIDs                json.RawMessage `json:"cardIds,omitempty"` // gallery only (deprecated), null when new
}

// avCardField is the kernel's BaseField: a field of a card.
type avCardField struct {
	ID     string          `json:"id"`
	Wrap   bool            `json:"wrap"`
	Hidden bool            `json:"hidden"`
	Desc   string          `json:"desc,omitempty"`
	Calc   json.RawMessage `json:"calc,omitempty"`
}

// The card defaults of a new gallery or kanban: a cover from the
// content's image, 16:9, medium cards.
const (
	avCoverFromContentImage = 1
	avCardSizeMedium        = 1
)

// newCardLayout is NewLayoutGallery or NewLayoutKanban.
func newCardLayout(layout string) *avCardLayout {
	l := &avCardLayout{ID: ast.NewNodeID(), ShowIcon: true, CoverFrom: avCoverFromContentImage, CardSize: avCardSizeMedium}
	if layout == "kanban" {
		l.FillColBackgroundColor = new(bool)
	} else {
		l.CardIDs = json.RawMessage("null")
	}
	return l
}

// newCardView is NewGalleryView or NewKanbanView: named "Card" or
// "Kanban", an empty "and" filter group, 50 cards a page.
func newCardView(layout string) *wire.AVView {
	name := avLangGallery
	if layout == "kanban" {
		name = avLangKanban
	}
	v := &wire.AVView{ID: ast.NewNodeID(), Name: name,
		Filters: []*wire.AVViewFilter{{Combination: "and"}}, Sorts: []*wire.AVViewSort{},
		PageSize: avDefaultPageSize, LayoutType: layout}
	setCardLayout(v, newCardLayout(layout))
	return v
}

// The names SiYuan's English locale gives new gallery and kanban views.
const (
	avLangGallery = "Card"
	avLangKanban  = "Kanban"
)

// cardLayout decodes a gallery or kanban view's layout (nil for a table
// or an unreadable one).
func cardLayout(v *wire.AVView) *avCardLayout {
	raw := v.Gallery
	if v.LayoutType == "kanban" {
		raw = v.Kanban
	}
	if v.LayoutType == "table" || len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var l avCardLayout
	if json.Unmarshal(raw, &l) != nil {
		return nil
	}
	return &l
}

// setCardLayout stores a gallery or kanban view's layout.
func setCardLayout(v *wire.AVView, l *avCardLayout) {
	enc, err := json.Marshal(l)
	if err != nil {
		return // a layout of plain fields always encodes
	}
	if v.LayoutType == "kanban" {
		v.Kanban = enc
	} else {
		v.Gallery = enc
	}
}

// editCardFields edits the fields of a gallery or kanban view; a table
// or a layout that cannot be read is left alone.
func editCardFields(v *wire.AVView, edit func(fields []*avCardField) []*avCardField) {
	l := cardLayout(v)
	if l == nil {
		return
	}
	l.Fields = edit(l.Fields)
	setCardLayout(v, l)
}

// viewFieldIDs are the keys a view shows, in its order, whatever its
// layout.
func viewFieldIDs(v *wire.AVView) []string {
	var ids []string
	if v.Table != nil {
		for _, c := range v.Table.Columns {
			ids = append(ids, c.ID)
		}
		return ids
	}
	if l := cardLayout(v); l != nil {
		for _, f := range l.Fields {
			ids = append(ids, f.ID)
		}
	}
	return ids
}

// avNewView is the view addAttrViewView makes: of the layout, showing
// the first view's fields (a table keeps a table's widths and
// alignments), in its row order.
func avNewView(first *wire.AVView, layout string) (*wire.AVView, error) {
	switch layout {
	case "table":
		v := newTableView("")
		v.Table.Columns = nil
		if first.Table != nil {
			for _, c := range first.Table.Columns {
				v.Table.Columns = append(v.Table.Columns, &wire.AVViewColumn{ID: c.ID, Width: c.Width, Align: c.Align})
			}
		} else {
			for _, id := range viewFieldIDs(first) {
				v.Table.Columns = append(v.Table.Columns, &wire.AVViewColumn{ID: id})
			}
		}
		v.ItemIDs = first.ItemIDs
		return v, nil
	case "gallery", "kanban":
		v := newCardView(layout)
		l := cardLayout(v)
		for _, id := range viewFieldIDs(first) {
			l.Fields = append(l.Fields, &avCardField{ID: id})
		}
		setCardLayout(v, l)
		v.ItemIDs = first.ItemIDs
		return v, nil
	}
	return nil, errAVLayout
}

// kanbanGroupKey is getKanbanPreferredGroupKey: the first select key, or
// a new one named "Select" added last to the database and to every view
// (with the view's wrap setting).
func kanbanGroupKey(av *wire.AttributeView) *wire.AVKey {
	for _, kv := range av.KeyValues {
		if kv.Key.Type == wire.AVKeySelect {
			return kv.Key
		}
	}
	key := &wire.AVKey{ID: ast.NewNodeID(), Name: avLangSelect, Type: wire.AVKeySelect}
	av.KeyValues = append(av.KeyValues, &wire.AVKeyValues{Key: key})
	for _, v := range av.Views {
		appendViewField(v, key.ID, true)
	}
	return key
}

// appendViewField adds a key last to a view's columns or card fields;
// withWrap takes the view's wrap setting for it.
func appendViewField(v *wire.AVView, keyID string, withWrap bool) {
	if v.Table != nil {
		v.Table.Columns = append(v.Table.Columns, &wire.AVViewColumn{ID: keyID, Wrap: withWrap && v.Table.WrapField})
		return
	}
	l := cardLayout(v)
	if l == nil {
		return
	}
	l.Fields = append(l.Fields, &avCardField{ID: keyID, Wrap: withWrap && l.WrapField})
	setCardLayout(v, l)
}

// insertCardField is addAttrViewCol on a gallery or kanban: the field,
// with the view's wrap setting, goes after previousID, else last.
func insertCardField(v *wire.AVView, keyID, previousID string) {
	editCardFields(v, func(fields []*avCardField) []*avCardField {
		l := cardLayout(v)
		f := &avCardField{ID: keyID, Wrap: l != nil && l.WrapField}
		if i := slices.IndexFunc(fields, func(f *avCardField) bool { return f.ID == previousID }); previousID != "" && i >= 0 {
			return slices.Insert(fields, i+1, f)
		}
		return append(fields, f)
	})
}

// removeCardField drops a removed key from a gallery's or kanban's
// fields.
func removeCardField(v *wire.AVView, keyID string) {
	editCardFields(v, func(fields []*avCardField) []*avCardField {
		if i := slices.IndexFunc(fields, func(f *avCardField) bool { return f.ID == keyID }); i >= 0 {
			return slices.Delete(fields, i, i+1)
		}
		return fields
	})
}

// setCardFieldHidden is setAttrViewColHidden on a gallery or kanban.
func setCardFieldHidden(v *wire.AVView, keyID string, hidden bool) {
	editCardFields(v, func(fields []*avCardField) []*avCardField {
		for _, f := range fields {
			if f.ID == keyID {
				f.Hidden = hidden
				break
			}
		}
		return fields
	})
}

// moveCardField is sortAttrViewCol on a gallery or kanban: the field goes
// after previousID, first when that is not a field. A field that is not
// there moves nothing.
func moveCardField(v *wire.AVView, keyID, previousID string) {
	editCardFields(v, func(fields []*avCardField) []*avCardField {
		cur := slices.IndexFunc(fields, func(f *avCardField) bool { return f.ID == keyID })
		if cur < 0 {
			return fields
		}
		f := fields[cur]
		fields = slices.Delete(fields, cur, cur+1)
		at := 0
		if i := slices.IndexFunc(fields, func(f *avCardField) bool { return f.ID == previousID }); i >= 0 {
			at = i + 1
		}
		return slices.Insert(fields, at, f)
	})
}

// cardTableView is a gallery or kanban view seen as a table of its
// fields, for the parts of the renderer that work on tables (the rows a
// grouping splits).
func cardTableView(v *wire.AVView) *wire.AVView {
	c := *v
	c.LayoutType = "table"
	c.Table = &wire.AVLayoutTable{ID: v.ID, ShowIcon: true}
	if l := cardLayout(v); l != nil {
		c.Table.ID, c.Table.ShowIcon, c.Table.WrapField = l.ID, l.ShowIcon, l.WrapField
		for _, f := range l.Fields {
			c.Table.Columns = append(c.Table.Columns, &wire.AVViewColumn{ID: f.ID, Wrap: f.Wrap, Hidden: f.Hidden})
		}
	}
	return &c
}
