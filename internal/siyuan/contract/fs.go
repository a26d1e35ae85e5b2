package contract

import (
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/sisyphus-go/sisyphus/internal/tools/markup"
)

// The checks fs.replace relies on: a document's DOM lists every block,
// nested ones included, in document order (no document wrapper), a nested
// paragraph's kramdown is its own body (no list or quote markers), and an
// update of a paragraph inside a list item keeps it there with the
// attributes written in its IAL.
var fsChecks = []check{
	{"fs_document_dom_lists_nested_blocks_in_order", checkDocDOMLayout},
	{"fs_document_kramdown_splits_into_block_kramdowns", checkDocKramdownSplit},
	{"fs_kramdown_rendered_here_shows_the_dom_text", checkKramdownDOMText},
}

// richMD has the inline and nesting forms a paragraph or heading's
// kramdown can take.
const richMD = "# Title **bold** and *em*\n\n## Second `code`\n\n" +
	"plain with [link](https://example.com/a b) and ![img](assets/x.png) and $x^2$ and ==mark== and ~~del~~ and \\*escaped\\*\n\n" +
	"tag #topic# and <u>under</u> and <kbd>Ctrl</kbd> and a line  \nbreak\n\n" +
	"- item one\n  - nested **two**\n- [ ] task three\n\n1. first\n2. second\n\n" +
	"> quoted *text*\n>\n> - quoted item\n\n{{{row\ninside **super**\n\n### in super\n}}}\n\n" +
	"| a | b |\n| - | - |\n| 1 | **2** |\n\n```go\nfmt.Println(\"x\")\n\nreturn\n```\n\n$$\na^2 + b^2\n$$\n\nlast & <b>html</b> &amp; entities"

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

// checkDocKramdownSplit: the document's kramdown, split per block with the
// engine SiYuan uses (markup.BlockKramdowns), gives each paragraph,
// heading, code and math block and table the body the kernel answers for
// that block alone; fs.replace
// reads a document so, in one call.
func checkDocKramdownSplit(t *testing.T, s *suite) {
	for _, md := range []string{richMD, textMD} {
		splitDoc(t, s, md)
	}
}

// textMD holds no code, math, HTML, superblock or embed: a document the
// split cuts into its top-level blocks as text, parsing only theirs.
const textMD = "# Title **bold** and *em*\n\nplain with [link](https://example.com/a b) and ==mark== and ~~del~~ and \\*escaped\\*\n\n" +
	"tag #topic# and <u>under</u> and a line  \nbreak\n\n- item one\n  - nested **two**\n- [ ] task three\n\n1. first\n\n2. loose second\n\n" +
	"> quoted *text*\n>\n> - quoted item\n\n| a | b |\n| - | - |\n| 1 | **2** |\n\n---\n\nlast & entities"

func splitDoc(t *testing.T, s *suite, md string) {
	doc := s.newDoc(t, "fs-split-"+randWord(6), md)
	// A block reference to a block of the document, with its anchor.
	kids := s.childIDs(t, doc)
	s.newDoc(t, "fs-split-ref-"+randWord(6), "see (("+kids[0]+" 'the title')) here")
	// Attributes that sort before id: SiYuan then writes the document's
	// IAL sorted, which the split must read past.
	must(t, "SetBlockAttrs(document)", s.c.SetBlockAttrs(t.Context(), doc, map[string]string{"alias": "split", "custom-a": "1"}))
	dom, err := s.c.GetBlockDOM(t.Context(), doc)
	must(t, "GetBlockDOM(document)", err)
	ids, types := domBlocks(t, dom.DOM)
	leaves := leafBlocks(ids, types)
	if len(leaves) < 10 {
		t.Fatalf("the document has %d leaf blocks, want at least 10: %v", len(leaves), types)
	}
	whole, err := s.c.GetBlockKramdown(t.Context(), doc)
	must(t, "GetBlockKramdown(document)", err)
	split, err := markup.BlockKramdowns(whole.Kramdown, leaves)
	must(t, "BlockKramdowns", err)
	single, err := s.c.GetBlockKramdowns(t.Context(), leaves)
	must(t, "GetBlockKramdowns", err)
	for i, id := range leaves {
		got, ok := split[id]
		if isTable := types[slices.Index(ids, id)] == "NodeTable"; isTable || !ok {
			if isTable == ok {
				t.Errorf("block %d (%s): in the split %v, want %v (tables are read alone: their delimiter row is respelled)", i, id, ok, !isTable)
			}
			continue
		}
		// Byte for byte, but for the order of the IAL's attributes (the
		// kernel's follows its tree; a state sorts them).
		same := func(_, v string) string { return v }
		if sortIALs(got, same) != sortIALs(single[id], same) {
			t.Errorf("block %s: split %q, the kernel's %q", id, got, single[id])
		}
	}
}

// checkKramdownDOMText: each leaf block's kramdown, rendered by the engine
// SiYuan uses (markup.KramdownDOMText), shows the text of the block's DOM
// as the kernel renders it; a strict update's readback compares the
// applied text so and asks the kernel for the DOM only where they differ.
// Every leaf block of the rich document agrees.
func checkKramdownDOMText(t *testing.T, s *suite) {
	doc := s.newDoc(t, "fs-kdtext-"+randWord(6), richMD)
	whole, err := s.c.GetBlockDOM(t.Context(), doc)
	must(t, "GetBlockDOM(document)", err)
	ids, types := domBlocks(t, whole.DOM)
	leaves := leafBlocks(ids, types)
	kds, err := s.c.GetBlockKramdowns(t.Context(), leaves)
	must(t, "GetBlockKramdowns", err)
	doms, err := s.c.GetBlockDOMs(t.Context(), leaves)
	must(t, "GetBlockDOMs", err)
	for _, id := range leaves {
		got, err := markup.KramdownDOMText(kds[id], id)
		must(t, "KramdownDOMText", err)
		if want := markup.DOMText(doms[id]); got != want {
			t.Errorf("block %s (%q): rendered here %q, the kernel's DOM %q", id, kds[id], got, want)
		}
	}
}

// leafBlocks are the ids of the blocks without child blocks (paragraphs,
// headings, code and math blocks, tables) among a DOM's blocks.
func leafBlocks(ids, types []string) []string {
	var leaves []string
	for i, typ := range types {
		switch typ {
		case "NodeParagraph", "NodeHeading", "NodeCodeBlock", "NodeMathBlock", "NodeTable":
			leaves = append(leaves, ids[i])
		}
	}
	return leaves
}
