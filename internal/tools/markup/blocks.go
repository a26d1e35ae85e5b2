package markup

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/88250/lute"
	"github.com/88250/lute/ast"
	"github.com/88250/lute/parse"
	"github.com/88250/lute/render"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/mdexport"
)

// leaf are the block types BlockKramdowns splits out: blocks without
// child blocks whose kramdown survives a parse and render unchanged (a
// table's does not: the delimiter row is respelled).
var leaf = map[ast.NodeType]bool{ast.NodeParagraph: true, ast.NodeHeading: true, ast.NodeCodeBlock: true, ast.NodeMathBlock: true}

// BlockKramdowns splits a document's kramdown (getBlockKramdown of the
// document: every block with its IAL) into the kramdown of the blocks
// named by ids, rendered as SiYuan renders one block's kramdown (the block
// and its IAL alone through the format renderer). One document read then
// stands for a batch read, which SiYuan answers by loading the document
// once per block. Only leaf blocks (paragraphs, headings, code and math
// blocks; not tables) are split out:
// rendering detaches them from the parsed tree. An id the kramdown does not
// hold is absent from the answer.
//
// Parsing a long document is most of the cost (about 15 ms for 1,000
// paragraphs), so where the document's top-level blocks can be told apart
// without parsing (segments), only those holding the ids are parsed.
func BlockKramdowns(docKramdown string, ids []string) (out map[string]string, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("malformed kramdown: %v", r)
		}
	}()
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	kd := withoutDocIAL(docKramdown)
	if out, ok := splitSegments(kd, want); ok {
		return out, nil
	}
	return splitWhole(kd, want), nil
}

// splitWhole is BlockKramdowns by parsing the whole document.
func splitWhole(kd string, want map[string]bool) map[string]string {
	l := mdexport.NewLute()
	out := map[string]string{}
	renderLeaves(l, parse.Parse("", []byte(kd), l.ParseOptions), want, out)
	return out
}

// renderLeaves renders each wanted leaf block of tree into out, detaching
// it from the tree.
func renderLeaves(l *lute.Lute, tree *parse.Tree, want map[string]bool, out map[string]string) {
	var nodes []*ast.Node
	ast.Walk(tree.Root, func(n *ast.Node, entering bool) ast.WalkStatus {
		if entering && n.IsBlock() && want[n.ID] && leaf[n.Type] {
			nodes = append(nodes, n)
		}
		return ast.WalkContinue
	})
	for _, n := range nodes {
		root := &ast.Node{Type: ast.NodeDocument}
		if ial := n.Next; ial != nil && ial.Type == ast.NodeKramdownBlockIAL {
			root.AppendChild(ial)
		}
		root.PrependChild(n)
		one := &parse.Tree{Root: root, Context: tree.Context}
		// As SiYuan's getBlockKramdown (mode md) answers: trimmed.
		out[n.ID] = strings.TrimSpace(string(render.NewFormatRenderer(one, l.RenderOptions, l.ParseOptions).Render()))
	}
}

// unsegmented are the constructs that can hold, inside one top-level
// block, a blank line followed by a line that looks like a top-level IAL:
// code and math fences, HTML and other raw blocks, superblocks (whose
// children's IALs are not indented), embeds and custom blocks (and HTML,
// rawHTMLLine). A document holding any of them is parsed whole.
var unsegmented = []string{"```", "~~~", "$$", "{{", ";;;"}

// rawHTMLLine reports whether some line of kd starts an HTML block (its
// first character, after at most three spaces, is <).
func rawHTMLLine(kd string) bool {
	for line := range strings.SplitSeq(kd, "\n") {
		if t := strings.TrimLeft(line, " "); len(line)-len(t) <= 3 && strings.HasPrefix(t, "<") {
			return true
		}
	}
	return false
}

var closingIDRE = regexp.MustCompile(`^\{: (?:.* )?id="([^"]+)"`)

// splitSegments is BlockKramdowns for a document whose top-level blocks can
// be told apart as text: each is its kramdown closed by its IAL at the
// start of a line, then a blank line (nested blocks' IALs are indented or
// quoted). Only the segments holding a wanted id are parsed, and each must
// parse as one block carrying its closing IAL's id; an id written twice,
// or anything else unexpected, sends the whole document to the parser
// (false).
func splitSegments(kd string, want map[string]bool) (map[string]string, bool) {
	if rawHTMLLine(kd) {
		return nil, false
	}
	for _, u := range unsegmented {
		if strings.Contains(kd, u) {
			return nil, false
		}
	}
	body := strings.TrimRight(kd, "\n")
	// Each segment is body[starts[i]:ends[i]], its closing IAL starting at
	// closers[i].
	var starts, ends, closers []int
	start := 0
	for off := 0; ; {
		next := strings.Index(body[off:], "\n\n")
		end := len(body)
		if next >= 0 {
			end = off + next
		}
		line := strings.LastIndexByte(body[:end], '\n') + 1
		if last := body[line:end]; strings.HasPrefix(last, "{: ") && strings.HasSuffix(last, "}") {
			if line <= start {
				return nil, false // an IAL without a block
			}
			starts, ends, closers = append(starts, start), append(ends, end), append(closers, line)
			start = end + 2
		}
		if next < 0 {
			if start < len(body) {
				return nil, false // text after the last IAL: parse it whole
			}
			break
		}
		off = end + 2
	}
	holding := map[int]bool{}
	for id := range want {
		needle := `id="` + id + `"`
		at := strings.Index(body, needle)
		if at < 0 {
			continue // not in this document
		}
		if strings.Contains(body[at+len(needle):], needle) {
			return nil, false
		}
		i := sort.SearchInts(ends, at+1) // the first segment ending after at
		if i == len(ends) || at < starts[i] {
			return nil, false
		}
		holding[i] = true
	}
	l := mdexport.NewLute()
	out := map[string]string{}
	for i := range holding {
		m := closingIDRE.FindStringSubmatch(body[closers[i]:ends[i]])
		if m == nil {
			return nil, false
		}
		tree := parse.Parse("", []byte(body[starts[i]:ends[i]]), l.ParseOptions)
		var top []*ast.Node
		for c := tree.Root.FirstChild; c != nil; c = c.Next {
			if c.Type != ast.NodeKramdownBlockIAL {
				top = append(top, c)
			}
		}
		if len(top) != 1 || top[0].ID != m[1] {
			return nil, false
		}
		renderLeaves(l, tree, want, out)
	}
	return out, true
}

// withoutDocIAL drops the document's own IAL, the line that closes its
// kramdown after a blank line (a block's IAL follows the block on the next
// line). It holds no block, and the engine takes a document IAL's first
// attribute for the document's id, which panics the parse when that is not
// id: SiYuan writes a document's attributes sorted once one is set (alias,
// custom-..., icon come before id), the embedded kernel title first.
func withoutDocIAL(kd string) string {
	body := strings.TrimRight(kd, "\n")
	i := strings.LastIndex(body, "\n\n{: ")
	tail := body
	if i >= 0 {
		tail = body[i+2:]
	}
	if strings.Contains(tail, "\n") || !strings.HasPrefix(tail, "{: ") || !strings.HasSuffix(tail, "}") || !strings.Contains(tail, ` type="doc"`) {
		return kd
	}
	if i < 0 {
		return ""
	}
	return body[:i+1]
}

// KramdownDOMText is the visible text (DOMText) of block id rendered from
// its kramdown as SiYuan renders an update's markdown data (Md2BlockDOM),
// so that a readback can compare the text an update applied without
// asking the kernel for the block's DOM. The kernel's own rendering can
// differ (a reference's anchor follows its target, the kernel resolves
// embeds): where the two texts differ the caller asks the kernel.
func KramdownDOMText(kd, id string) (text string, err error) {
	defer func() {
		if r := recover(); r != nil {
			text, err = "", fmt.Errorf("malformed kramdown: %v", r)
		}
	}()
	l := mdexport.NewLute()
	l.SetHTMLTag2TextMark(true) // as the kernel's /api/block/* do: <u>, <kbd> are marks
	return BlockDOMText(l.Md2BlockDOM(kd, true), id), nil
}
