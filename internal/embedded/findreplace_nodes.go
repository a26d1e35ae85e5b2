package embedded

import (
	"bytes"
	"html"
	"regexp"
	"strings"

	"github.com/88250/lute"
	"github.com/88250/lute/ast"
	"github.com/88250/lute/editor"
	"github.com/88250/lute/parse"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/mdexport"
)

// replacer holds one findReplace's keyword, replacement and kinds.
type replacer struct {
	keyword, escapedKey, replacement string
	method                           int
	types                            map[string]bool
	re, escapedRE                    *regexp.Regexp
	lute                             *lute.Lute
	stamp                            string
}

func newReplacer(keyword, replacement string, method int, types map[string]bool) *replacer {
	esc := html.EscapeString(keyword)
	esc = strings.ReplaceAll(strings.ReplaceAll(esc, "&#34;", "&quot;"), "&#39;", "'")
	re, _ := regexp.Compile(keyword)
	escRE, _ := regexp.Compile(esc)
	return &replacer{keyword: keyword, escapedKey: esc, replacement: replacement, method: method, types: types,
		re: re, escapedRE: escRE, lute: mdexport.NewLute(), stamp: nowStamp()}
}

// docTitle replaces in a document's title (returned for a rename) and tags.
func (f *replacer) docTitle(doc *ast.Node) (string, bool) {
	if !f.types["docTitle"] {
		return "", false
	}
	title, tags := doc.IALAttr("title"), doc.IALAttr("tags")
	titleRepl := strings.ReplaceAll(f.replacement, "/", "／")
	tagRepl := strings.TrimSuffix(strings.TrimPrefix(f.replacement, "#"), "#")
	var newTitle string
	renamed := false
	switch f.method {
	case 0:
		if strings.Contains(title, f.keyword) {
			newTitle, renamed = strings.ReplaceAll(title, f.keyword, titleRepl), true
		}
		if strings.Contains(tags, f.keyword) {
			doc.SetIALAttr("tags", strings.ReplaceAll(strings.ReplaceAll(tags, f.keyword, tagRepl), editor.Zwsp, ""))
		}
	case 3:
		if f.re != nil && f.re.MatchString(title) {
			newTitle, renamed = f.re.ReplaceAllString(title, titleRepl), true
		}
		if f.re != nil && f.re.MatchString(tags) {
			doc.SetIALAttr("tags", strings.ReplaceAll(f.re.ReplaceAllString(tags, tagRepl), editor.Zwsp, ""))
		}
	}
	return newTitle, renamed
}

// replaceIn replaces in s by the method: plain (case-sensitive) or regex.
func (f *replacer) replaceIn(s, repl string) string {
	switch f.method {
	case 0:
		return strings.ReplaceAll(s, f.keyword, repl)
	case 3:
		if f.re != nil {
			return f.re.ReplaceAllString(s, repl)
		}
	}
	return s
}

// block walks a block's subtree, replacing in what the kinds enable.
func (f *replacer) block(node *ast.Node) {
	var unlinks []*ast.Node
	ast.Walk(node, func(n *ast.Node, entering bool) ast.WalkStatus {
		if !entering {
			return ast.WalkContinue
		}
		switch n.Type {
		case ast.NodeText:
			if f.types["text"] && f.text(n) {
				unlinks = append(unlinks, n)
			}
		case ast.NodeLinkDest:
			if f.types["imgSrc"] {
				f.tokens(n, strings.TrimSpace(f.replacement))
				if len(n.Tokens) == 0 {
					unlinks = append(unlinks, n.Parent)
					mergeSamePreNext(n)
				}
			}
		case ast.NodeLinkText, ast.NodeLinkTitle, ast.NodeCodeBlockCode, ast.NodeMathBlockContent, ast.NodeHTMLBlock:
			if f.types[tokenKind(n.Type)] {
				f.tokens(n, f.replacement)
			}
		case ast.NodeTextMark:
			if f.textMark(n) {
				unlinks = append(unlinks, n)
			}
		}
		return ast.WalkContinue
	})
	for _, n := range unlinks {
		n.Unlink()
	}
}

// tokenKind is the replace kind that enables replacing in a node's
// tokens, by the node's type.
func tokenKind(t ast.NodeType) string {
	switch t {
	case ast.NodeLinkText:
		return "imgText"
	case ast.NodeLinkTitle:
		return "imgTitle"
	case ast.NodeCodeBlockCode:
		return "codeBlock"
	case ast.NodeMathBlockContent:
		return "mathBlock"
	case ast.NodeHTMLBlock:
		return "htmlBlock"
	}
	return ""
}

// tokens is SiYuan's replaceNodeTokens (case-sensitive).
func (f *replacer) tokens(n *ast.Node, repl string) {
	switch f.method {
	case 0:
		if bytes.Contains(n.Tokens, []byte(f.keyword)) {
			n.Tokens = bytes.ReplaceAll(n.Tokens, []byte(f.keyword), []byte(repl))
		}
	case 3:
		if f.re != nil && f.re.Match(n.Tokens) {
			n.Tokens = []byte(f.re.ReplaceAllString(string(n.Tokens), repl))
		}
	}
}

// text is SiYuan's replaceTextNode: the replaced text is parsed as inline
// markdown and its nodes take the text node's place (the caller unlinks it).
// The plain keyword matches case-insensitively, each space-separated word
// lowered; the replacement goes through a regexp, so "$1" in it expands.
func (f *replacer) text(n *ast.Node) bool {
	var content []byte
	switch f.method {
	case 0:
		kw := f.keyword
		if strings.TrimSpace(kw) != "" {
			words := strings.Split(kw, " ")
			for i, w := range words {
				words[i] = strings.ToLower(w)
			}
			kw = strings.Join(words, " ")
		}
		if !bytes.Contains(bytes.ToLower(n.Tokens), []byte(kw)) {
			return false
		}
		re := regexp.MustCompile("(?i)" + regexp.QuoteMeta(kw))
		content = []byte(re.ReplaceAllString(string(n.Tokens), f.replacement))
		if bytes.Equal(content, n.Tokens) {
			return false
		}
	case 3:
		if f.re == nil || !f.re.Match(n.Tokens) {
			return false
		}
		content = []byte(f.re.ReplaceAllString(string(n.Tokens), f.replacement))
	default:
		return false
	}
	tree := parse.Inline("", content, f.lute.ParseOptions)
	if tree.Root.FirstChild == nil {
		return false
	}
	if f.method == 0 {
		parse.NestedInlines2FlattedSpans(tree, false)
	}
	var nodes []*ast.Node
	for c := tree.Root.FirstChild.FirstChild; c != nil; c = c.Next {
		nodes = append(nodes, c)
	}
	for _, c := range nodes {
		n.InsertBefore(c)
	}
	if b := parentBlockOf(n); b != nil {
		b.SetIALAttr("updated", f.stamp)
	}
	return true
}

// textMark replaces in one inline span by its first enabled type, in
// SiYuan's order; it reports whether the span is now empty and goes.
func (f *replacer) textMark(n *ast.Node) (unlink bool) {
	merge := func() bool {
		if n.TextMarkTextContent == "" {
			mergeSamePreNext(n)
			return true
		}
		return false
	}
	empty := func() bool { return n.TextMarkTextContent == "" }
	switch {
	case n.IsTextMarkType("code"):
		if !f.types["code"] {
			return false
		}
		switch f.method {
		case 0:
			if strings.Contains(n.TextMarkTextContent, f.escapedKey) {
				n.TextMarkTextContent = strings.ReplaceAll(n.TextMarkTextContent, f.escapedKey, html.EscapeString(f.replacement))
			}
		case 3:
			if f.escapedRE != nil && f.escapedRE.MatchString(n.TextMarkTextContent) {
				n.TextMarkTextContent = f.escapedRE.ReplaceAllString(n.TextMarkTextContent, html.EscapeString(f.replacement))
			}
		}
		return merge()
	case n.IsTextMarkType("a"):
		if f.types["aText"] {
			f.unescapedSpan(&n.TextMarkTextContent)
			if merge() {
				return true
			}
		}
		if f.types["aTitle"] {
			f.unescapedSpan(&n.TextMarkATitle)
		}
		if f.types["aHref"] {
			f.unescapedSpan(&n.TextMarkAHref)
			if n.TextMarkAHref == "" {
				// A link without its target is text.
				n.Type, n.Tokens = ast.NodeText, []byte(n.TextMarkTextContent)
			}
		}
		return false
	case n.IsTextMarkType("em"), n.IsTextMarkType("strong"), n.IsTextMarkType("mark"), n.IsTextMarkType("s"), n.IsTextMarkType("u"):
		typ := spanType(n, "em", "strong", "mark", "s", "u")
		if !f.types[typ] {
			return false
		}
		f.span(n, typ)
		return merge()
	case n.IsTextMarkType("kbd"), n.IsTextMarkType("sub"), n.IsTextMarkType("sup"), n.IsTextMarkType("tag"):
		typ := spanType(n, "kbd", "sub", "sup", "tag")
		if !f.types[typ] {
			return false
		}
		f.span(n, typ)
		return empty()
	case n.IsTextMarkType("inline-math"):
		if !f.types["inlineMath"] {
			return false
		}
		n.TextMarkInlineMathContent = f.replaceIn(n.TextMarkInlineMathContent, f.replacement)
		return n.TextMarkInlineMathContent == ""
	case n.IsTextMarkType("inline-memo"):
		if !f.types["inlineMemo"] {
			return false
		}
		if f.method == 0 && strings.Contains(n.TextMarkInlineMemoContent, f.keyword) ||
			f.method == 3 && f.re != nil && f.re.MatchString(n.TextMarkInlineMemoContent) {
			n.TextMarkInlineMemoContent = f.replaceIn(n.TextMarkInlineMemoContent, f.replacement)
			n.TextMarkTextContent = f.replaceIn(n.TextMarkTextContent, f.replacement)
		}
		return empty()
	case n.IsTextMarkType("text"):
		if !f.types["text"] {
			return false
		}
		f.span(n, "text")
		return merge()
	case n.IsTextMarkType("block-ref"):
		if !f.types["blockRef"] {
			return false
		}
		if f.method == 0 && strings.Contains(n.TextMarkTextContent, f.keyword) ||
			f.method == 3 && f.re != nil && f.re.MatchString(n.TextMarkTextContent) {
			n.TextMarkTextContent = f.replaceIn(n.TextMarkTextContent, f.replacement)
			n.TextMarkBlockRefSubtype = "s" // the anchor text is now static
		}
		return empty()
	case n.IsTextMarkType("file-annotation-ref"):
		if !f.types["fileAnnotationRef"] {
			return false
		}
		n.TextMarkTextContent = f.replaceIn(n.TextMarkTextContent, f.replacement)
		return empty()
	}
	return false
}

// spanType is the first of types the span carries (SiYuan tests them in
// this order).
func spanType(n *ast.Node, types ...string) string {
	for _, t := range types {
		if n.IsTextMarkType(t) {
			return t
		}
	}
	return ""
}

// unescapedSpan is the link-field replacement: on the unescaped value in
// plain mode, on the value as stored with a regex.
func (f *replacer) unescapedSpan(field *string) {
	switch f.method {
	case 0:
		v := html.UnescapeString(*field)
		if strings.Contains(v, f.escapedKey) {
			*field = strings.ReplaceAll(v, f.escapedKey, f.replacement)
		} else if strings.Contains(v, f.keyword) {
			*field = strings.ReplaceAll(v, f.keyword, f.replacement)
		}
	case 3:
		if f.re != nil && f.re.MatchString(*field) {
			*field = f.re.ReplaceAllString(*field, f.replacement)
		}
	}
}

// span is SiYuan's replaceNodeTextMarkTextContent.
func (f *replacer) span(n *ast.Node, typ string) {
	keyword, escapedKey, repl := f.keyword, f.escapedKey, f.replacement
	if f.method == 3 {
		if f.re != nil && f.re.MatchString(n.TextMarkTextContent) {
			n.TextMarkTextContent = f.re.ReplaceAllString(n.TextMarkTextContent, repl)
		}
		n.TextMarkTextContent = strings.ReplaceAll(n.TextMarkTextContent, editor.Zwsp, "")
		return
	}
	if f.method != 0 {
		return
	}
	if strings.Contains(typ, "tag") {
		trim := func(s string) string { return strings.TrimSuffix(strings.TrimPrefix(s, "#"), "#") }
		keyword, escapedKey = trim(keyword), trim(escapedKey)
		switch {
		case strings.HasPrefix(repl, "#") && strings.HasSuffix(repl, "#"):
			repl = trim(repl)
		case n.TextMarkTextContent == keyword || n.TextMarkTextContent == escapedKey:
			if n.TextMarkType == "tag" {
				// The whole tag is replaced: it becomes the replacement's inline markdown.
				content := n.TextMarkTextContent
				if strings.Contains(content, escapedKey) {
					content = strings.ReplaceAll(content, escapedKey, repl)
				} else if strings.Contains(content, keyword) {
					content = strings.ReplaceAll(content, keyword, repl)
				}
				tree := parse.Inline("", []byte(strings.ReplaceAll(content, editor.Zwsp, "")), f.lute.ParseOptions)
				if tree.Root.FirstChild == nil {
					return
				}
				parse.NestedInlines2FlattedSpans(tree, false)
				var nodes []*ast.Node
				for c := tree.Root.FirstChild.FirstChild; c != nil; c = c.Next {
					nodes = append(nodes, c)
				}
				for _, c := range nodes {
					n.InsertBefore(c)
				}
				n.TextMarkTextContent = ""
				return
			}
			n.TextMarkType = strings.TrimSpace(strings.ReplaceAll(n.TextMarkType, "tag", ""))
		case strings.Contains(n.TextMarkTextContent, keyword) || strings.Contains(n.TextMarkTextContent, escapedKey):
			if n.TextMarkType == "tag" {
				content := n.TextMarkTextContent
				if strings.Contains(content, escapedKey) {
					content = strings.ReplaceAll(content, escapedKey, repl)
				} else if strings.Contains(content, keyword) {
					content = strings.ReplaceAll(content, keyword, repl)
				}
				n.TextMarkTextContent = strings.ReplaceAll(content, editor.Zwsp, "")
				return
			}
		}
	}
	if strings.Contains(n.TextMarkTextContent, escapedKey) {
		n.TextMarkTextContent = strings.ReplaceAll(n.TextMarkTextContent, escapedKey, html.EscapeString(repl))
	} else if strings.Contains(n.TextMarkTextContent, keyword) {
		n.TextMarkTextContent = strings.ReplaceAll(n.TextMarkTextContent, keyword, repl)
	}
	n.TextMarkTextContent = strings.ReplaceAll(n.TextMarkTextContent, editor.Zwsp, "")
}

// mergeSamePreNext joins the neighbours of a removed span when they are of
// one kind, as SiYuan does.
func mergeSamePreNext(n *ast.Node) {
	prev, next := n.Previous, n.Next
	if n.Parent != nil && n.Parent.Type == ast.NodeImage {
		prev, next = n.Parent.Previous, n.Parent.Next
	}
	if prev == nil || next == nil || prev.Type != next.Type || prev.Type == ast.NodeKramdownSpanIAL {
		return
	}
	switch prev.Type {
	case ast.NodeText:
		prev.Tokens = append(prev.Tokens, next.Tokens...)
		next.Unlink()
	case ast.NodeTextMark:
		if prev.TextMarkType != next.TextMarkType {
			return
		}
		switch prev.TextMarkType {
		case "em", "strong", "mark", "s", "u", "text":
			prev.TextMarkTextContent += next.TextMarkTextContent
			next.Unlink()
		}
	}
}
