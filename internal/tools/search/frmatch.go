package search

import (
	"html"
	"regexp"
	"strings"

	"github.com/88250/lute"
	"github.com/88250/lute/ast"
	"github.com/88250/lute/parse"

	"github.com/sisyphus-go/sisyphus/internal/tools/kernelview"
)

// matcher tells whether SiYuan's findReplace would change a block: it
// walks the node kinds the replace types enable, matching as the kernel
// does (text in any case; spans, code and titles case-sensitively, spans
// and code spans also in their HTML-escaped form).
type matcher struct {
	a              frArgs
	re, escapedRE  *regexp.Regexp
	escaped, lower string
	lute           *lute.Lute
}

func newMatcher(a frArgs) *matcher {
	esc := html.EscapeString(a.K)
	esc = strings.ReplaceAll(strings.ReplaceAll(esc, "&#34;", "&quot;"), "&#39;", "'")
	m := &matcher{a: a, escaped: esc, lower: strings.ToLower(a.K), lute: lute.New()}
	if a.Regex {
		m.re, _ = regexp.Compile(a.K)
		m.escapedRE, _ = regexp.Compile(esc)
	}
	for _, set := range []func(bool){m.lute.SetTextMark, m.lute.SetBlockRef, m.lute.SetFileAnnotationRef, m.lute.SetKramdownIAL,
		m.lute.SetTag, m.lute.SetSuperBlock, m.lute.SetSup, m.lute.SetSub, m.lute.SetInlineMath, m.lute.SetMark,
		m.lute.SetGFMStrikethrough, m.lute.SetInlineAsterisk, m.lute.SetInlineUnderscore} {
		set(true)
	}
	m.lute.SetGFMAutoLink(false)
	return m
}

// has matches s plainly (case-sensitive) or by the regex.
func (m *matcher) has(s string) bool {
	if m.re != nil {
		return m.re.MatchString(s)
	}
	return strings.Contains(s, m.a.K)
}

var ialSpanRE = regexp.MustCompile(`\{:[^}\n]*\}`)

// state decides for one read block: a document by its title and tags, any
// other block by its tree.
func (m *matcher) state(b kernelview.BlockState) (string, bool) {
	if b.Attrs["type"] == "doc" {
		return "docTitle", m.a.Kinds["docTitle"] && (m.has(b.Attrs["title"]) || m.has(b.Attrs["tags"]))
	}
	return "block", m.block(b.Kramdown)
}

// block parses a block's kramdown (IALs removed) and walks it.
func (m *matcher) block(kramdown string) (hit bool) {
	defer func() {
		if recover() != nil {
			hit = true // a tree Lute cannot parse is guarded as touched
		}
	}()
	tree := parse.Parse("", []byte(ialSpanRE.ReplaceAllString(kramdown, "")), m.lute.ParseOptions)
	parse.NestedInlines2FlattedSpans(tree, false)
	k := m.a.Kinds
	ast.Walk(tree.Root, func(n *ast.Node, entering bool) ast.WalkStatus {
		if !entering || hit {
			return ast.WalkContinue
		}
		switch n.Type {
		case ast.NodeText:
			hit = k["text"] && m.text(string(n.Tokens))
		case ast.NodeLinkDest:
			hit = k["imgSrc"] && m.has(string(n.Tokens))
		case ast.NodeLinkText:
			hit = k["imgText"] && m.has(string(n.Tokens))
		case ast.NodeLinkTitle:
			hit = k["imgTitle"] && m.has(string(n.Tokens))
		case ast.NodeCodeBlockCode:
			hit = k["codeBlock"] && m.has(string(n.Tokens))
		case ast.NodeMathBlockContent:
			hit = k["mathBlock"] && m.has(string(n.Tokens))
		case ast.NodeHTMLBlock:
			hit = k["htmlBlock"] && m.has(string(n.Tokens))
		case ast.NodeTextMark:
			hit = m.span(n)
		}
		return ast.WalkContinue
	})
	return hit
}

// text: the kernel lowers the keyword and the text in plain mode.
func (m *matcher) text(s string) bool {
	if m.re != nil {
		return m.re.MatchString(s)
	}
	return strings.Contains(strings.ToLower(s), m.lower)
}

// span follows the kernel's order of span types: the first the span
// carries decides.
func (m *matcher) span(n *ast.Node) bool {
	k := m.a.Kinds
	plainOrEscaped := func(s string) bool {
		if m.re != nil {
			return m.re.MatchString(s)
		}
		return strings.Contains(s, m.escaped) || strings.Contains(s, m.a.K)
	}
	switch {
	case n.IsTextMarkType("code"):
		if m.re != nil {
			return k["code"] && m.escapedRE != nil && m.escapedRE.MatchString(n.TextMarkTextContent)
		}
		return k["code"] && strings.Contains(n.TextMarkTextContent, m.escaped)
	case n.IsTextMarkType("a"):
		unesc := func(s string) bool {
			if m.re != nil {
				return m.re.MatchString(s)
			}
			return plainOrEscaped(html.UnescapeString(s))
		}
		return k["aText"] && unesc(n.TextMarkTextContent) || k["aTitle"] && unesc(n.TextMarkATitle) || k["aHref"] && unesc(n.TextMarkAHref)
	case n.IsTextMarkType("em"), n.IsTextMarkType("strong"), n.IsTextMarkType("kbd"), n.IsTextMarkType("mark"),
		n.IsTextMarkType("s"), n.IsTextMarkType("sub"), n.IsTextMarkType("sup"):
		return k[spanKind(n, "em", "strong", "kbd", "mark", "s", "sub", "sup")] && plainOrEscaped(n.TextMarkTextContent)
	case n.IsTextMarkType("tag"):
		if !k["tag"] {
			return false
		}
		if m.re != nil {
			return m.re.MatchString(n.TextMarkTextContent)
		}
		trim := func(s string) string { return strings.TrimSuffix(strings.TrimPrefix(s, "#"), "#") }
		return strings.Contains(n.TextMarkTextContent, trim(m.a.K)) || strings.Contains(n.TextMarkTextContent, trim(m.escaped))
	case n.IsTextMarkType("u"):
		return k["u"] && plainOrEscaped(n.TextMarkTextContent)
	case n.IsTextMarkType("inline-math"):
		return k["inlineMath"] && m.has(n.TextMarkInlineMathContent)
	case n.IsTextMarkType("inline-memo"):
		return k["inlineMemo"] && m.has(n.TextMarkInlineMemoContent)
	case n.IsTextMarkType("text"):
		return k["text"] && plainOrEscaped(n.TextMarkTextContent)
	case n.IsTextMarkType("block-ref"):
		return k["blockRef"] && m.has(n.TextMarkTextContent)
	case n.IsTextMarkType("file-annotation-ref"):
		return k["fileAnnotationRef"] && m.has(n.TextMarkTextContent)
	}
	return false
}

func spanKind(n *ast.Node, kinds ...string) string {
	for _, t := range kinds {
		if n.IsTextMarkType(t) {
			return t
		}
	}
	return ""
}
