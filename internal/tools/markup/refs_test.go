package markup

import (
	"slices"
	"strings"
	"testing"

	"github.com/88250/lute/ast"
	"github.com/88250/lute/parse"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/mdexport"
)

const refT = "20261205140017-2ac4ku1"

// TestRefIDs: every form SiYuan 3.7.3 stored as a reference when given it
// through appendBlock (checked against a real kernel), and forms it does
// not read as one. Found in excess is allowed (the block is only looked
// up); missed is not.
func TestRefIDs(t *testing.T) {
	para := func(inner string) string {
		return `<div data-type="NodeParagraph" class="p"><div contenteditable="true">` + inner + `</div></div>`
	}
	entities := ""
	for _, c := range refT {
		entities += "&#" + string(rune('0'+c/100%10)) + string(rune('0'+c/10%10)) + string(rune('0'+c%10)) + ";"
	}
	for _, c := range []struct {
		name, text string
		want       bool
	}{
		{"markdown", "see ((" + refT + "))", true},
		{"markdown with anchor", "see ((" + refT + " 'anchor'))", true},
		{"markdown dynamic anchor", "see ((" + refT + ` "anchor"))`, true},
		{"markdown line break before id", "see ((\n" + refT + "))", true},
		{"markdown vertical tab before id", "see ((\v" + refT + "))", true},
		{"markdown inline span", `i <span data-type="block-ref" data-subtype="d" data-id="` + refT + `">x</span>`, true},
		{"dom", para(`a <span data-type="block-ref" data-subtype="d" data-id="` + refT + `">x</span>`), true},
		{"dom unquoted and single quoted", para(`b <span data-type='block-ref' data-subtype=d data-id=` + refT + `>x</span>`), true},
		{"dom id as character references", para(`c <span data-type="block-ref" data-subtype="d" data-id="` + entities + `">x</span>`), true},
		{"dom type as character reference", para(`d <span data-type="&#98;lock-ref" data-subtype="d" data-id="` + refT + `">x</span>`), true},
		{"dom with other marks", para(`e <span data-type="strong block-ref" data-subtype="d" data-id="` + refT + `">x</span>`), true},
		{"dom caret in the id", para(`f <span data-type="block-ref" data-subtype="d" data-id="` + refT[:4] + `<wbr>` + refT[4:] + `">x</span>`), true},
		{"dom upper-case names", para(`g <span DATA-TYPE="block-ref" Data-Id="` + refT + `" data-subtype="d">x</span>`), true},
		{"dom inside svg title", para(`n <svg><title><span data-type="block-ref" data-subtype="d" data-id="` + refT + `">x</span></title></svg>`), true},
		{"dom id after the type, no space", para(`<span data-type="block-ref"data-id="` + refT + `">x</span>`), true},
		{"markdown in a title element", "<title>\n\nx <span data-type=\"block-ref\" data-id=\"" + refT + "\">x</span>", true},
		{"plain text", "no reference to " + refT, false},
		{"full-width parentheses", "（（" + refT + "））", false},
		{"a link", "[x](siyuan://blocks/" + refT + ")", false},
		{"a data-id without block-ref", `<span data-type="a" data-id="` + refT + `">x</span>`, false},
		{"a node id", `<div data-node-id="` + refT + `" data-type="NodeParagraph"></div>`, false},
	} {
		got := RefIDs(c.text)
		if has := slices.Contains(got, refT); has != c.want {
			t.Errorf("%s: RefIDs(%q) = %v, want the reference found: %v", c.name, c.text, got, c.want)
		}
	}
	if got := RefIDs("((" + refT + ")) and ((" + refT + ` 'again')) and <span data-type="block-ref" data-id="` + refT + `">`); len(got) != 1 {
		t.Errorf("a block referenced three times: %v", got)
	}
}

// luteRefs are the references SiYuan's engine reads in text given to
// appendBlock: as Markdown (Md2BlockDOMTree with HTML tags as text marks,
// then the DOM it makes read back) and as block DOM (BlockDOM2Tree).
func luteRefs(text string) (ids []string, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false // Lute panics on some malformed input: SiYuan fails the call
		}
	}()
	collect := func(tree *parse.Tree) {
		if tree == nil || tree.Root == nil {
			return
		}
		ast.Walk(tree.Root, func(n *ast.Node, entering bool) ast.WalkStatus {
			if !entering {
				return ast.WalkContinue
			}
			var id string
			switch {
			case n.Type == ast.NodeBlockRef:
				if c := n.ChildByType(ast.NodeBlockRefID); c != nil {
					id = string(c.Tokens)
				}
			case n.Type == ast.NodeTextMark && n.IsTextMarkType("block-ref"):
				id = n.TextMarkBlockRefID
			}
			if id = strings.ReplaceAll(id, caret, ""); ast.IsNodeIDPattern(id) {
				ids = append(ids, id)
			}
			return ast.WalkContinue
		})
	}
	l := mdexport.NewLute()
	l.SetHTMLTag2TextMark(true)
	dom, tree := l.Md2BlockDOMTree(text, true)
	collect(tree)
	collect(l.BlockDOM2Tree(dom))
	collect(mdexport.NewLute().BlockDOM2Tree(text))
	return ids, true
}

// FuzzRefIDs: every reference SiYuan's engine reads in a text, as
// Markdown or as block DOM, RefIDs finds.
func FuzzRefIDs(f *testing.F) {
	for _, s := range []string{
		"see ((" + refT + " 'anchor'))",
		`<div data-type="NodeParagraph" class="p"><div contenteditable="true"><span data-type='block-ref' data-subtype=d data-id=` + refT + `>x</span></div></div>`,
		`<span data-type="&#98;lock-ref" data-id="&#50;0261205140017-2ac4ku1">x</span>`,
		`<span data-type="block-ref" data-id="2026<wbr>1205140017-2ac4ku1">x</span>`,
		"((\n" + refT + "))",
		"x <span data-type=\"block-ref\" data-subtype=\"s\" data-id=\"" + refT + "\">y</span> z",
		"<p><svg><title><span data-type=\"block-ref\" data-id=\"" + refT + "\">x</span></title></svg></p>",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		want, ok := luteRefs(text)
		if !ok {
			return
		}
		got := RefIDs(text)
		for _, id := range want {
			if !slices.Contains(got, id) {
				t.Fatalf("SiYuan's engine reads a reference to %s in %q; RefIDs found %v", id, text, got)
			}
		}
	})
}
