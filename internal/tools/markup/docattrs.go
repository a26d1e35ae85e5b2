package markup

import (
	"github.com/88250/lute/parse"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/mdexport"
)

// DocAttrs is the document attributes a Markdown file gives its document
// (a {: id="..." ... type="doc"} line, as SiYuan saves a document as a
// template), parsed as SiYuan parses a template it renders, without id
// and updated (which Lute makes up for every document): empty for none.
// ok is false for text Lute cannot parse (a document line whose first
// attribute is not its id, say), which SiYuan cannot render either.
func DocAttrs(md string) (attrs map[string]string, ok bool) {
	defer func() {
		if recover() != nil {
			attrs, ok = nil, false
		}
	}()
	l := mdexport.NewLute()
	tree := parse.Parse("", []byte(md), l.ParseOptions)
	if tree == nil || tree.Root == nil || len(tree.Root.KramdownIAL) == 0 {
		return nil, true
	}
	attrs = parse.IAL2Map(tree.Root.KramdownIAL)
	delete(attrs, "id")
	delete(attrs, "updated")
	return attrs, true
}
