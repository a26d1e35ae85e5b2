package embedded

import (
	"context"
	"strconv"
	"strings"

	"github.com/88250/lute/ast"
	"github.com/88250/lute/lex"
	"github.com/88250/lute/parse"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// AttributeView is the table SiYuan 3.7.3 exports a database block as
// (kernel/model/export.go exportTree, with avHiddenCol off and markers
// escaped, as exportMdContent calls it): the block's view (its
// custom-sy-av-view, else the database's current view, else the first)
// rendered whole, a column per view column (hidden ones too), a row per
// rendered row; a gallery or kanban as the table of its fields, as
// getAttrViewTable does. A database this kernel cannot read keeps the
// block as it is, as SiYuan keeps a database block it cannot read; filters and sorts are not applied (this
// kernel's renderer shows every row in manual order).
func (s exportSource) AttributeView(ctx context.Context, _ *parse.Tree, n *ast.Node) (*ast.Node, error) {
	k := s.k
	k.avMu.Lock()
	defer k.avMu.Unlock()
	if !k.avExists(n.AttributeViewID) {
		return nil, nil
	}
	av, err := k.readAV(n.AttributeViewID)
	if err != nil {
		k.log.Warn("export: parse attribute view", "id", n.AttributeViewID, "err", err)
		return nil, nil
	}
	view, err := avCurrentView(av, n.IALAttr(avAttrView))
	if err != nil {
		return nil, nil
	}
	t := k.newAVRenderer(ctx, av).view(av, view, "")
	if t == nil {
		return nil, nil
	}
	return avExportTable(av, t), nil
}

// avExportTable is the Markdown table of a rendered view, cell for cell
// as SiYuan's export writes it.
func avExportTable(av *wire.AttributeView, t *wire.AVTable) *ast.Node {
	aligns := make([]int, len(t.Columns))
	cols := make(map[string]*wire.AVColumn, len(t.Columns))
	for i, col := range t.Columns {
		cols[col.ID] = col
		switch col.Align {
		case "left":
			aligns[i] = 1
		case "center":
			aligns[i] = 2
		case "right":
			aligns[i] = 3
		}
	}
	table := &ast.Node{Type: ast.NodeTable, TableAligns: aligns}
	head := &ast.Node{Type: ast.NodeTableHead}
	table.AppendChild(head)
	headRow := &ast.Node{Type: ast.NodeTableRow, TableAligns: aligns}
	head.AppendChild(headRow)
	for _, col := range t.Columns {
		cell := &ast.Node{Type: ast.NodeTableCell}
		cell.AppendChild(textNode(escapeCell(col.Name)))
		headRow.AppendChild(cell)
	}
	rowNum := 1
	for _, row := range t.Rows {
		mdRow := &ast.Node{Type: ast.NodeTableRow, TableAligns: aligns}
		table.AppendChild(mdRow)
		for _, cell := range row.Cells {
			mdCell := &ast.Node{Type: ast.NodeTableCell}
			mdRow.AppendChild(mdCell)
			v := cell.Value
			if v == nil {
				mdCell.AppendChild(textNode(""))
				continue
			}
			wrap := cols[v.KeyID] != nil && cols[v.KeyID].Wrap
			var val string
			switch v.Type {
			case wire.AVKeyBlock:
				if v.Block != nil {
					appendCellText(mdCell, escapeCell(v.Block.Content), wrap)
					continue
				}
			case wire.AVKeyText:
				if v.Text != nil {
					appendCellText(mdCell, escapeCell(v.Text.Content), wrap)
					continue
				}
			case wire.AVKeyTemplate:
				if v.Template != nil {
					appendCellText(mdCell, escapePipes(v.Template.Content), wrap)
					continue
				}
			case wire.AVKeyCreated, wire.AVKeyUpdated:
				// Shown in the export's own format: with the time unless
				// the column says to leave it out.
				tv, conf := v.Created, (*wire.AVIncludeTime)(nil)
				if key := avKey(av, v.KeyID); key != nil {
					conf = key.Created
					if v.Type == wire.AVKeyUpdated {
						conf = key.Updated
					}
				}
				if v.Type == wire.AVKeyUpdated {
					tv = v.Updated
				}
				if tv != nil {
					val = formatTime(tv.Content, conf != nil && !conf.IncludeTime)
				}
			case wire.AVKeyURL:
				if v.URL != nil {
					if strings.TrimSpace(v.URL.Content) != "" {
						mdCell.AppendChild(linkNode(v.URL.Content, v.URL.Content))
					}
					continue
				}
			case wire.AVKeyMAsset:
				if v.MAsset != nil {
					appendAssets(mdCell, v.MAsset)
					continue
				}
			case wire.AVKeyLineNumber:
				val = strconv.Itoa(rowNum)
				rowNum++
			case wire.AVKeyRelation:
				var contents []*wire.AVValue
				if v.Relation != nil {
					contents = v.Relation.Contents
				}
				for i, c := range contents {
					if c == nil {
						continue
					}
					if c.Type == wire.AVKeyBlock && c.Block != nil {
						appendCellText(mdCell, escapeCell(c.Block.Content), wrap)
					}
					if i < len(contents)-1 {
						mdCell.AppendChild(textNode(", "))
					}
				}
				continue
			case wire.AVKeyRollup:
				var contents []*wire.AVValue
				if v.Rollup != nil {
					contents = v.Rollup.Contents
				}
				for i, c := range contents {
					if c == nil {
						continue
					}
					switch {
					case c.Type == wire.AVKeyBlock:
						if c.Block != nil {
							appendCellText(mdCell, escapeCell(c.Block.Content), wrap)
						}
					case c.Type == wire.AVKeyText:
						if c.Text != nil {
							appendCellText(mdCell, escapeCell(c.Text.Content), wrap)
						}
					default:
						mdCell.AppendChild(textNode(valueString(c, true)))
					}
					if i < len(contents)-1 {
						mdCell.AppendChild(textNode(", "))
					}
				}
				continue
			}
			if val == "" {
				val = valueString(v, true)
			}
			mdCell.AppendChild(textNode(val))
		}
	}
	return table
}

func textNode(s string) *ast.Node { return &ast.Node{Type: ast.NodeText, Tokens: []byte(s)} }

// escapeCell escapes Markdown markers and the table's pipes in a cell's
// text (a template's output keeps its markers).
func escapeCell(s string) string { return escapePipes(string(lex.EscapeProtyleMarkers([]byte(s)))) }

func escapePipes(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\\|", "|"), "|", "\\|")
}

// appendCellText adds a cell's text: each line followed by a hard break
// in a wrapped column, the lines joined by spaces in another.
func appendCellText(cell *ast.Node, s string, wrap bool) {
	if !wrap {
		cell.AppendChild(textNode(strings.ReplaceAll(s, "\n", " ")))
		return
	}
	for line := range strings.SplitSeq(s, "\n") {
		cell.AppendChild(textNode(line))
		cell.AppendChild(&ast.Node{Type: ast.NodeHardBreak})
	}
}

func linkNode(text, dest string) *ast.Node {
	link := &ast.Node{Type: ast.NodeLink}
	link.AppendChild(&ast.Node{Type: ast.NodeOpenBracket})
	link.AppendChild(&ast.Node{Type: ast.NodeLinkText, Tokens: []byte(text)})
	link.AppendChild(&ast.Node{Type: ast.NodeCloseBracket})
	link.AppendChild(&ast.Node{Type: ast.NodeOpenParen})
	link.AppendChild(&ast.Node{Type: ast.NodeLinkDest, Tokens: []byte(dest)})
	link.AppendChild(&ast.Node{Type: ast.NodeCloseParen})
	return link
}

// appendAssets adds an mAsset cell: images as images (styled to 128
// pixels high; the size SiYuan also works out for a taller one never
// shows in Markdown), files as links (their path when unnamed, plain text
// when they have no path), separated by spaces.
func appendAssets(cell *ast.Node, assets []*wire.AVValueAsset) {
	for i, a := range assets {
		switch {
		case a == nil:
		case a.Type == "image":
			img := &ast.Node{Type: ast.NodeImage}
			img.AppendChild(&ast.Node{Type: ast.NodeBang})
			img.AppendChild(&ast.Node{Type: ast.NodeOpenBracket})
			img.AppendChild(&ast.Node{Type: ast.NodeLinkText, Tokens: []byte(a.Name)})
			img.AppendChild(&ast.Node{Type: ast.NodeCloseBracket})
			img.AppendChild(&ast.Node{Type: ast.NodeOpenParen})
			img.AppendChild(&ast.Node{Type: ast.NodeLinkDest, Tokens: []byte(a.Content)})
			img.AppendChild(&ast.Node{Type: ast.NodeCloseParen})
			cell.AppendChild(img)
			img.SetIALAttr("style", "max-height: 128px;")
		case a.Type == "file":
			text := strings.TrimSpace(a.Name)
			if text == "" {
				text = a.Content
			}
			if strings.TrimSpace(a.Content) != "" {
				cell.AppendChild(linkNode(text, a.Content))
			} else {
				cell.AppendChild(textNode(text))
			}
		}
		if i < len(assets)-1 {
			cell.AppendChild(textNode(" "))
		}
	}
}
