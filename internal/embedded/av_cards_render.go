package embedded

import (
	"bytes"
	"encoding/json"
	stdhtml "html"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/88250/lute/ast"
	"github.com/88250/lute/html"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/mdexport"
	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// Rendering gallery and kanban views as SiYuan 3.7.3 does
// (sql.RenderAttributeViewGallery, RenderAttributeViewKanban): the same
// pipeline as a table's (the rows a card per item, their values filled,
// filters, sorts, groups and paging), answered as cards. The renderer
// sees a card view as a table of its fields (cardTableView); cardsOf
// turns that table into the card answer.

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
		card.CoverURL, card.CoverContent = r.cardCover(av, l, row)
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

// cardCover is fillAttributeViewGalleryCardCover: a bound block's cover
// from its content's image (a document's title image first), an asset
// column's first image, or the block itself rendered (coverContent) for
// a cover from the content block and for a content without an image. A
// detached row has no content cover.
func (r *avRenderer) cardCover(av *wire.AttributeView, l *avCardLayout, row *wire.AVRow) (url, content string) {
	switch l.CoverFrom {
	case avCoverFromContentImage, avCoverFromContentBlock:
		bv := avBlockValue(av, row.ID)
		if bv == nil || bv.IsDetached || bv.Block == nil || bv.Block.ID == "" {
			return "", ""
		}
		_, node, err := r.k.loadTreeOf(bv.Block.ID)
		if err != nil || node == nil {
			return "", ""
		}
		if l.CoverFrom == avCoverFromContentBlock {
			return "", coverContent(node)
		}
		if node.Type == ast.NodeDocument {
			if img := docTitleImage(node.IALAttr("title-img")); img != "" {
				return img, ""
			}
			if css := node.IALAttr("title-img"); css != "" {
				return css, ""
			}
		}
		ast.Walk(node, func(n *ast.Node, entering bool) ast.WalkStatus {
			if !entering || n.Type != ast.NodeImage {
				return ast.WalkContinue
			}
			if dest := n.ChildByType(ast.NodeLinkDest); dest != nil {
				url = dest.TokensStr()
				return ast.WalkStop
			}
			return ast.WalkContinue
		})
		if url == "" {
			return "", coverContent(node)
		}
		return url, ""
	case avCoverFromAssetField:
		if l.CoverFromAssetKeyID == "" {
			return "", ""
		}
		kv := avKeyValues(av, l.CoverFromAssetKeyID)
		if kv == nil {
			return "", ""
		}
		v := avValueOf(kv, row.ID)
		if v == nil {
			return "", ""
		}
		for _, a := range v.MAsset {
			if a.Type == "image" && possiblyImage(a.Content) {
				return a.Content, ""
			}
		}
	}
	return "", ""
}

// avCoverFromContentBlock is CoverFromContentBlock: the cover is the
// bound block, rendered.
const avCoverFromContentBlock = 3

// coverContent is renderCoverContentBlock: the block rendered read-only
// (a document its first blocks, a heading its section, up to about 4 KiB
// of DOM), each block with a fresh id and without its database marks.
// A web frame, video or audio in it gets autoplay=0 (noAutoplay).
func coverContent(node *ast.Node) string {
	isDoc := node.Type == ast.NodeDocument
	if isDoc {
		node = node.FirstChild
	}
	if node == nil {
		return ""
	}
	heading, isHeading, level := node, node.Type == ast.NodeHeading, node.HeadingLevel
	if isHeading {
		node = node.Next
	}
	l := mdexport.NewLute()
	l.RenderOptions.ProtyleContenteditable = false
	one := func(n *ast.Node) string {
		c := cloneSubtree(n)
		ast.Walk(c, func(b *ast.Node, entering bool) ast.WalkStatus {
			if entering && b.IsBlock() && b.ID != "" {
				id := ast.NewNodeID()
				b.ID = id
				b.SetIALAttr("id", id)
				b.RemoveIALAttr(avAttrAvs)
				if b.Type == ast.NodeIFrame || b.Type == ast.NodeAudio || b.Type == ast.NodeVideo {
					noAutoplay(b)
				}
			}
			return ast.WalkContinue
		})
		(&ast.Node{Type: ast.NodeDocument}).AppendChild(c)
		out := strings.TrimSpace(l.RenderNodeBlockDOM(c))
		if strings.HasPrefix(out, "<li") {
			out = "<ul>" + out + "</ul>"
		}
		return out
	}
	var b strings.Builder
	for c := node; c != nil; c = c.Next {
		if isHeading && c.Type == ast.NodeHeading && c.HeadingLevel <= level {
			if b.Len() == 0 {
				b.WriteString(one(heading))
			}
			break
		}
		b.WriteString(one(c))
		if (!isDoc && !isHeading) || b.Len() > 4096 {
			break
		}
	}
	return b.String()
}

// noAutoplay keeps a card's media from playing by itself, as SiYuan does:
// an http(s) src address that does not name autoplay gains autoplay=0
// (its query re-encoded, keys sorted) everywhere it occurs in the block's
// HTML, data-src too. The node is the cover's copy, so the document keeps
// its address.
func noAutoplay(n *ast.Node) {
	i := bytes.Index(n.Tokens, []byte(`src="`))
	if i <= 0 {
		return
	}
	raw, _, ok := bytes.Cut(n.Tokens[i+len(`src="`):], []byte(`"`))
	if !ok {
		return
	}
	old := strings.TrimSpace(string(raw))
	if !(strings.HasPrefix(old, "http://") || strings.HasPrefix(old, "https://")) || strings.Contains(old, "autoplay") {
		return
	}
	u, err := url.Parse(html.UnescapeHTMLStr(old))
	if err != nil {
		return
	}
	q := u.Query()
	q.Set("autoplay", "0")
	u.RawQuery = q.Encode()
	n.Tokens = bytes.ReplaceAll(n.Tokens, []byte(old), []byte(html.EscapeHTMLStr(u.String())))
}

// docTitleImage is GetDocTitleImgPath: the address in a document's
// title-img background-image style, unquoted.
func docTitleImage(style string) string {
	const bg = "background-image: url("
	s := stdhtml.UnescapeString(strings.TrimSpace(style))
	s = strings.ReplaceAll(s, "background-image:url(", bg)
	if !strings.Contains(s, bg) {
		return ""
	}
	start, end := strings.Index(s, bg)+len(bg), strings.LastIndex(s, ")")
	if end < start {
		return ""
	}
	s = strings.TrimPrefix(strings.TrimPrefix(s[start:end], `"`), "'")
	return strings.TrimSuffix(strings.TrimSuffix(s, `"`), "'")
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
