package embedded

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/88250/lute/ast"
	"github.com/88250/lute/html"
	"github.com/sisyphus-go/sisyphus/internal/siyuan/mdexport"
	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// Databases in documents: a database block is a NodeAttributeView whose
// AttributeViewID names the database (several blocks may show one: its
// mirrors), and a bound row's block carries custom-avs, the comma list of
// the databases it is in. SiYuan keeps the database-to-blocks index in
// data/storage/av/blocks.msgpack; this kernel derives it from the block
// tree, which holds the same facts.

// Attributes SiYuan sets on blocks for databases.
const (
	avAttrAvs        = "custom-avs"           // a bound block's databases
	avAttrView       = "custom-sy-av-view"    // a database block's view
	avStaticTextAttr = "custom-sy-av-s-text-" // + avID: a bound row's static primary-key text
)

// mirrorBlocks are the database blocks showing a database, by ID.
func (k *Kernel) mirrorBlocks(avID string) []string {
	k.mu.RLock()
	defer k.mu.RUnlock()
	ret := []string{}
	for id, loc := range k.blocks {
		if loc.Type == "av" && loc.AvID == avID {
			ret = append(ret, id)
		}
	}
	slices.Sort(ret)
	return ret
}

// isMirror is av.IsMirror: more than one block shows the database.
func (k *Kernel) isMirror(avID string) bool { return len(k.mirrorBlocks(avID)) > 1 }

// blockViewID is the view a database block shows (custom-sy-av-view).
func (k *Kernel) blockViewID(blockID string) string {
	if blockID == "" {
		return ""
	}
	_, node, err := k.viewOf(blockID)
	if err != nil {
		return ""
	}
	return node.IALAttr(avAttrView)
}

// bindBlock adds a database to a block's custom-avs (bindBlockAv0) and
// writes its document. Callers hold writeMu.
func (k *Kernel) bindBlock(avID, blockID string) error {
	return k.editAvs(blockID, func(ids []string) []string { return dedupe(append(ids, avID)) })
}

// unbindBlock removes a database from a block's custom-avs (an empty list
// removes the attribute). Callers hold writeMu.
func (k *Kernel) unbindBlock(avID, blockID string) error {
	return k.editAvs(blockID, func(ids []string) []string {
		return slices.DeleteFunc(ids, func(s string) bool { return s == avID })
	})
}

func (k *Kernel) editAvs(blockID string, edit func([]string) []string) error {
	tree, node, err := k.loadTreeOf(blockID)
	if err != nil {
		return nil // as the kernel: a block that is gone is not bound
	}
	var ids []string
	if s := node.IALAttr(avAttrAvs); s != "" {
		ids = strings.Split(s, ",")
	}
	ids = edit(ids)
	if len(ids) == 0 {
		node.RemoveIALAttr(avAttrAvs)
	} else {
		node.SetIALAttr(avAttrAvs, strings.Join(ids, ","))
	}
	return k.writeTree(tree)
}

// setBlockAttr sets (or, with "", removes) one attribute of a block and
// writes its document, as setNodeAttrs does for databases. Callers hold
// writeMu.
func (k *Kernel) setBlockAttr(blockID, name, value string) error {
	tree, node, err := k.loadTreeOf(blockID)
	if err != nil {
		return nil
	}
	if value == "" {
		node.RemoveIALAttr(name)
	} else {
		node.SetIALAttr(name, value)
	}
	return k.writeTree(tree)
}

// avBlockText is getNodeAvBlockText: a bound block's icon and primary-key
// text, its name attribute or its text (a document's title), at most 1024
// characters, "Untitled" when empty.
func (k *Kernel) avBlockText(blockID string) (icon, text string) {
	_, node, err := k.viewOf(blockID)
	if err != nil {
		return "", ""
	}
	icon = node.IALAttr("icon")
	if name := strings.TrimSpace(node.IALAttr("name")); name != "" {
		text = name
	} else {
		text = k.nodeRefText(node)
	}
	text = strings.TrimSpace(text)
	if text == "" {
		text = avLangUntitled
	}
	return icon, unescapeHTML(text)
}

// nodeRefText is getNodeRefText0 with 1024 characters: placeholder texts
// for media and embeds, a database's name, a document's title, else the
// first leaf block's text.
func (k *Kernel) nodeRefText(node *ast.Node) string {
	switch node.Type {
	case ast.NodeBlockQueryEmbed:
		return "Query Embed Block..."
	case ast.NodeIFrame:
		return "IFrame..."
	case ast.NodeThematicBreak:
		return "Thematic Break..."
	case ast.NodeVideo:
		return "Video..."
	case ast.NodeAudio:
		return "Audio..."
	case ast.NodeAttributeView:
		if a, err := k.readAV(node.AttributeViewID); err == nil && a.Name != "" {
			return a.Name
		}
		return "Database..."
	case ast.NodeDocument:
		return node.IALAttr("title")
	}
	if node.IsContainerBlock() {
		if leaf := mdexport.FirstLeafBlock(node); leaf != nil {
			node = leaf
		}
	}
	text := strings.TrimSpace(sqlStaticContent(node))
	if r := []rune(text); len(r) > 1024 {
		text = string(r[:1024]) + "..."
	}
	return text
}

// unescapeHTML is util.UnescapeHTML: blank text is left as it is.
func unescapeHTML(s string) string {
	if strings.TrimSpace(s) == "" {
		return s
	}
	return html.UnescapeString(s)
}

// splitList splits a comma list; "" is no element.
func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func joinList(s []string) string { return strings.Join(s, ",") }

// avContentRows sets the content of database blocks' rows in the blocks
// table as SiYuan indexes them: the database's text (its name, view
// names, then each column's name and cells) when the index is flushed
// (read without avMu: database files are replaced atomically).
func (k *Kernel) avContentRows(rows []sqlBlockRow) {
	for i := range rows {
		if rows[i].Type != "av" {
			continue
		}
		loc, ok := k.lookup(rows[i].ID)
		if !ok {
			continue
		}
		content := ""
		if av, err := k.readAV(loc.AvID); err == nil {
			content = strings.NewReplacer("\u200b", "", "\u200d#", "#").Replace(avContent(av))
		}
		rows[i].Content = content
		rows[i].Length = utf8.RuneCountInString(content)
	}
}

// avContent is getAttributeViewContent0.
func avContent(av *wire.AttributeView) string {
	var b strings.Builder
	b.WriteString(av.Name + " ")
	for _, v := range av.Views {
		b.WriteString(v.Name + " ")
	}
	for _, kv := range av.KeyValues {
		b.WriteString(kv.Key.Name + " ")
		for _, v := range kv.Values {
			b.WriteString(valueString(v, true) + " ")
		}
	}
	return strings.TrimSpace(b.String())
}
