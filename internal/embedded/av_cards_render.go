package embedded

import (
	"encoding/json"
	"path"
	"slices"
	"strings"

	"github.com/88250/lute/ast"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// Rendering gallery and kanban views as SiYuan 3.7.3 does
// (sql.RenderAttributeViewGallery, RenderAttributeViewKanban): the same
// pipeline as a table's (the rows a card per item, their values filled,
// filters, sorts, groups and paging), answered as cards. The renderer
// sees a card view as a table of its fields (cardTableView); cardsOf
// turns that table into the card answer.
//
// Not done here: a bound block's cover when it has no image (the kernel
// renders the block's DOM into coverContent) and a document's title image.

// avCardsRender is renderAttributeView's answer for a gallery or kanban.
type avCardsRender struct {
	DefaultTemplateID string             `json:"defaultTemplateID"`
	ID                string             `json:"id"`
	IsMirror          bool               `json:"isMirror"`
	Name              string             `json:"name"`
	NewItemTemplates  json.RawMessage    `json:"newItemTemplates"`
	View              *avCards           `json:"view"`
	ViewID            string             `json:"viewID"`
	ViewType          string             `json:"viewType"`
	Views             []*wire.AVViewData `json:"views"`
}

// avCards is the kernel's av.Gallery and av.Kanban with their
// BaseInstance flattened; FillColBackgroundColor is the kanban's.
type avCards struct {
	ID               string               `json:"id"`
	Icon             string               `json:"icon"`
	Name             string               `json:"name"`
	Desc             string               `json:"desc"`
	HideAttrViewName bool                 `json:"hideAttrViewName"`
	Filters          []*wire.AVViewFilter `json:"filters"`
	Sorts            []*wire.AVViewSort   `json:"sorts"`
	Group            json.RawMessage      `json:"group"`
	PageSize         int                  `json:"pageSize"`
	ShowIcon         bool                 `json:"showIcon"`
	WrapField        bool                 `json:"wrapField"`
	GroupKey         json.RawMessage      `json:"groupKey,omitempty"`
	GroupValue       json.RawMessage      `json:"groupValue,omitempty"`
	Groups           []*avCards           `json:"groups,omitempty"`
	GroupCalc        json.RawMessage      `json:"groupCalc,omitempty"`
	GroupFolded      bool                 `json:"groupFolded"`
	GroupHidden      int                  `json:"groupHidden"`

	CoverFrom              int               `json:"coverFrom"`
	CoverFromAssetKeyID    string            `json:"coverFromAssetKeyID,omitempty"`
	CardAspectRatio        int               `json:"cardAspectRatio"`
	CardSize               int               `json:"cardSize"`
	FitImage               bool              `json:"fitImage"`
	DisplayFieldName       bool              `json:"displayFieldName"`
	FillColBackgroundColor *bool             `json:"fillColBackgroundColor,omitempty"`
	Fields                 []*avCardFieldOut `json:"fields"`
	Cards                  []*avCard         `json:"cards"`
	CardCount              int               `json:"cardCount"`
}

// avCardFieldOut is the kernel's BaseInstanceField: a field as rendered,
// with its key's definition (a table column without pin, width, align).
type avCardFieldOut struct {
	ID           string                 `json:"id"`
	Name         string                 `json:"name"`
	Type         string                 `json:"type"`
	Icon         string                 `json:"icon"`
	Wrap         bool                   `json:"wrap"`
	Hidden       bool                   `json:"hidden"`
	Desc         string                 `json:"desc"`
	Calc         json.RawMessage        `json:"calc"`
	Options      []*wire.AVSelectOption `json:"options,omitempty"`
	NumberFormat string                 `json:"numberFormat"`
	Template     string                 `json:"template"`
	Relation     *wire.AVRelation       `json:"relation,omitempty"`
	Rollup       *wire.AVRollup         `json:"rollup,omitempty"`
	Date         *wire.AVDateConf       `json:"date,omitempty"`
	Created      *wire.AVIncludeTime    `json:"created,omitempty"`
	Updated      *wire.AVIncludeTime    `json:"updated,omitempty"`
}

// avCard is the kernel's GalleryCard (KanbanCard): a card's values and
// its cover.
type avCard struct {
	ID           string         `json:"id"`
	Values       []*avCardValue `json:"values"`
	CoverURL     string         `json:"coverURL"`
	CoverContent string         `json:"coverContent"`
}

// avCardValue is the kernel's BaseValue: a table cell without colors.
type avCardValue struct {
	ID        string        `json:"id"`
	Value     *wire.AVValue `json:"value"`
	ValueType string        `json:"valueType"`
}

// cardsOf is a rendered card view: t, its table rendering, as cards,
// with the covers layout l asks for; t's groups (tables too) likewise.
func (r *avRenderer) cardsOf(av *wire.AttributeView, view *wire.AVView, l *avCardLayout, t *wire.AVTable) *avCards {
	c := &avCards{ID: t.ID, Icon: t.Icon, Name: t.Name, Desc: t.Desc, HideAttrViewName: t.HideAttrViewName,
		Filters: t.Filters, Sorts: t.Sorts, Group: t.Group, PageSize: t.PageSize, ShowIcon: t.ShowIcon,
		WrapField: t.WrapField, GroupKey: t.GroupKey, GroupValue: t.GroupValue, GroupCalc: t.GroupCalc,
		GroupFolded: t.GroupFolded, GroupHidden: t.GroupHidden,
		CoverFrom: l.CoverFrom, CoverFromAssetKeyID: l.CoverFromAssetKeyID, CardAspectRatio: l.CardAspectRatio,
		CardSize: l.CardSize, FitImage: l.FitImage, DisplayFieldName: l.DisplayFieldName,
		Fields: []*avCardFieldOut{}, Cards: []*avCard{}, CardCount: t.RowCount}
	if view.LayoutType == "kanban" {
		fill := l.FillColBackgroundColor != nil && *l.FillColBackgroundColor
		c.FillColBackgroundColor = &fill
	}
	if c.Sorts == nil {
		c.Sorts = []*wire.AVViewSort{}
	}
	for _, col := range t.Columns {
		c.Fields = append(c.Fields, &avCardFieldOut{ID: col.ID, Name: col.Name, Type: col.Type, Icon: col.Icon,
			Wrap: col.Wrap, Hidden: col.Hidden, Desc: col.Desc, Calc: col.Calc, Options: col.Options,
			NumberFormat: col.NumberFormat, Template: col.Template, Relation: col.Relation, Rollup: col.Rollup,
			Date: col.Date, Created: col.Created, Updated: col.Updated})
	}
	for _, row := range t.Rows {
		card := &avCard{ID: row.ID, Values: make([]*avCardValue, 0, len(row.Cells))}
		for _, cell := range row.Cells {
			card.Values = append(card.Values, &avCardValue{ID: cell.ID, Value: cell.Value, ValueType: cell.ValueType})
		}
		card.CoverURL = r.cardCover(av, l, row)
		c.Cards = append(c.Cards, card)
	}
	if len(t.Groups) > 0 && string(t.Groups) != "null" {
		var gs []*wire.AVTable
		if json.Unmarshal(t.Groups, &gs) == nil {
			c.Groups = []*avCards{}
			for _, g := range gs {
				c.Groups = append(c.Groups, r.cardsOf(av, view, l, g))
			}
		}
	}
	return c
}

// cardCover is fillAttributeViewGalleryCardCover's address: a bound
// block's first image (cover from the content's image), or the first
// image of an asset column (cover from a field). A detached row has no
// content cover.
func (r *avRenderer) cardCover(av *wire.AttributeView, l *avCardLayout, row *wire.AVRow) string {
	switch l.CoverFrom {
	case avCoverFromContentImage:
		bv := avBlockValue(av, row.ID)
		if bv == nil || bv.IsDetached || bv.Block == nil || bv.Block.ID == "" {
			return ""
		}
		_, node, err := r.k.loadTreeOf(bv.Block.ID)
		if err != nil || node == nil {
			return ""
		}
		cover := ""
		ast.Walk(node, func(n *ast.Node, entering bool) ast.WalkStatus {
			if !entering || n.Type != ast.NodeImage {
				return ast.WalkContinue
			}
			if dest := n.ChildByType(ast.NodeLinkDest); dest != nil {
				cover = dest.TokensStr()
				return ast.WalkStop
			}
			return ast.WalkContinue
		})
		return cover
	case avCoverFromAssetField:
		if l.CoverFromAssetKeyID == "" {
			return ""
		}
		kv := avKeyValues(av, l.CoverFromAssetKeyID)
		if kv == nil {
			return ""
		}
		v := avValueOf(kv, row.ID)
		if v == nil {
			return ""
		}
		for _, a := range v.MAsset {
			if a.Type == "image" && possiblyImage(a.Content) {
				return a.Content
			}
		}
	}
	return ""
}

// avCoverFromAssetField is CoverFromAssetField: the cover is an asset
// column's first image.
const avCoverFromAssetField = 2

// avImageExts are SiYuanAssetsImage: the extensions SiYuan takes for
// images.
var avImageExts = []string{".apng", ".ico", ".cur", ".jpg", ".jpe", ".jpeg", ".jfif", ".pjp", ".pjpeg", ".png", ".gif", ".webp", ".bmp", ".svg", ".avif"}

// possiblyImage is IsPossiblyImage without its local-file probe: an image
// extension, else any web address (those need none).
func possiblyImage(p string) bool {
	if ext := strings.ToLower(path.Ext(p)); ext != "" {
		return slices.Contains(avImageExts, ext)
	}
	return strings.HasPrefix(p, "https://") || strings.HasPrefix(p, "http://")
}
