package contract

import (
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// The checks fs.replace relies on: a document's DOM lists every block,
// nested ones included, in document order (no document wrapper), a nested
// paragraph's kramdown is its own body (no list or quote markers), and an
// update of a paragraph inside a list item keeps it there with the
// attributes written in its IAL.
var fsChecks = []check{
	{"fs_document_dom_lists_nested_blocks_in_order", checkDocDOMLayout},
}

const layoutMD = "# H\n\npara\n\n- item one\n- item two\n\n{{{row\ninside\n\nsecond\n}}}\n\n> quote para\n\n```go\ncode\n```\n\n<div>html</div>\n\nlast"

// domBlocks lists (id, data-type) of a DOM's elements with a node id.
func domBlocks(t *testing.T, dom string) (ids, types []string) {
	t.Helper()
	z := html.NewTokenizer(strings.NewReader(dom))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return ids, types
		case html.StartTagToken, html.SelfClosingTagToken:
			var id, typ string
			for _, a := range z.Token().Attr {
				switch a.Key {
				case "data-node-id":
					id = a.Val
				case "data-type":
					typ = a.Val
				}
			}
			if id != "" {
				ids, types = append(ids, id), append(types, typ)
			}
		}
	}
}

func checkDocDOMLayout(t *testing.T, s *suite) {
	doc := s.newDoc(t, "fs-layout-"+randWord(6), layoutMD)
	dom, err := s.c.GetBlockDOM(t.Context(), doc)
	must(t, "GetBlockDOM(document)", err)
	ids, types := domBlocks(t, dom.DOM)
	want := []string{"NodeHeading", "NodeParagraph", "NodeList", "NodeListItem", "NodeParagraph", "NodeListItem", "NodeParagraph",
		"NodeSuperBlock", "NodeParagraph", "NodeParagraph", "NodeBlockquote", "NodeParagraph", "NodeCodeBlock", "NodeHTMLBlock", "NodeParagraph"}
	if !slices.Equal(types, want) {
		t.Fatalf("document DOM block types\n got %v\nwant %v", types, want)
	}
	if slices.Contains(ids, doc) {
		t.Fatalf("the document DOM carries the document's own id %s", doc)
	}
	var paras []string
	for i, typ := range types {
		if typ == "NodeParagraph" {
			paras = append(paras, ids[i])
		}
	}
	kds, err := s.c.GetBlockKramdowns(t.Context(), paras)
	must(t, "GetBlockKramdowns(paragraphs)", err)
	for i, body := range []string{"para", "item one", "item two", "inside", "second", "quote para", "last"} {
		if got, _, _ := strings.Cut(kds[paras[i]], "\n{:"); got != body {
			t.Fatalf("kramdown of paragraph %d = %q, want its own body %q", i, kds[paras[i]], body)
		}
	}
	// A nested paragraph updated in place stays where it was.
	_, err = s.c.UpdateBlock(t.Context(), paras[1], "markdown", "item ONE\n{: custom-fs=\"1\"}")
	must(t, "UpdateBlock(list paragraph)", err)
	dom, err = s.c.GetBlockDOM(t.Context(), doc)
	must(t, "GetBlockDOM(document) after the update", err)
	after, types2 := domBlocks(t, dom.DOM)
	if !slices.Equal(after, ids) || !slices.Equal(types2, want) {
		t.Fatalf("the update moved blocks: ids %v → %v", ids, after)
	}
	if got := s.attrs(t, paras[1])["custom-fs"]; got != "1" {
		t.Fatalf("custom-fs after the update = %q, want 1", got)
	}
	if got := s.kramdown(t, paras[1]); !strings.HasPrefix(got, "item ONE\n{:") {
		t.Fatalf("kramdown after the update = %q", got)
	}
}
