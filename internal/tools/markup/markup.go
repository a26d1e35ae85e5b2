// Package markup holds SiYuan's text rules that several tools need: how it
// normalises titles, the visible text of block DOM, the block references it
// reads in what it stores. Pure functions, no kernel calls.
package markup

import (
	stdhtml "html"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// NormalizeTitle mirrors SiYuan's normalizeDocTitle (notebook names and
// document titles): no "/", no invisible or private-use characters, NBSP
// as a space, trimmed.
func NormalizeTitle(s string) string {
	s = strings.ReplaceAll(s, "/", "")
	s = strings.ReplaceAll(s, "\u00a0", " ")
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\u200d': // kept: emoji sequences need the zero-width joiner
			return r
		case r == '\u200b' || r == '\u200c' || r == '\ufeff' || r == '\u2060':
			return -1
		case r >= 0xe000 && r <= 0xf8ff, r >= 0xf0000 && r <= 0xffffd, r >= 0x100000 && r <= 0x10fffd:
			return -1
		case !unicode.IsPrint(r) && r != '\u3000':
			return -1
		}
		return r
	}, s)
	return strings.TrimSpace(s)
}

var (
	tagRE   = regexp.MustCompile(`<[^>]*>`)
	spaceRE = regexp.MustCompile(`\s+`)
)

// DOMText is the visible text of block DOM, for comparing what the kernel
// applied with what a readback shows. A block's attribute bar (its
// name, alias, memo, bookmark, reference count and the names of the
// databases it is a row of) is not its content, and SiYuan does not render
// it alike everywhere: a real 3.7.3 put a bound block's database name in
// the DOM an update answered but not in the DOM getBlockDOM answered right
// after. It is left out.
func DOMText(dom string) string {
	t := tagRE.ReplaceAllString(withoutAttrBars(dom), " ")
	t = stdhtml.UnescapeString(t)
	t = strings.NewReplacer("\u200b", "", "\u2060", "").Replace(t)
	return strings.TrimSpace(spaceRE.ReplaceAllString(t, " "))
}

// withoutAttrBars is dom without the subtrees of its elements of class
// protyle-attr. A bar holds text only in its child elements
// (protyle-attr--name, --av, ...): without one, dom is returned as is.
func withoutAttrBars(dom string) string {
	if !strings.Contains(dom, "protyle-attr--") {
		return dom
	}
	var b strings.Builder
	z := html.NewTokenizer(strings.NewReader(dom))
	skip := 0 // depth inside a bar
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return b.String()
		case html.StartTagToken:
			name, hasAttr := z.TagName()
			void := voidElement[string(name)] // no end tag follows
			if skip > 0 {
				if !void {
					skip++
				}
				continue
			}
			if hasAttr && !void && isAttrBar(z) {
				skip = 1
				continue
			}
		case html.EndTagToken:
			if skip > 0 {
				skip--
				continue
			}
		default:
			if skip > 0 {
				continue
			}
		}
		b.Write(z.Raw())
	}
}

// voidElement are the HTML elements that never have an end tag.
var voidElement = map[string]bool{"area": true, "base": true, "br": true, "col": true, "embed": true, "hr": true, "img": true,
	"input": true, "link": true, "meta": true, "source": true, "track": true, "wbr": true}

// isAttrBar reports whether the start tag z holds has the class
// protyle-attr (not one of its protyle-attr--* children).
func isAttrBar(z *html.Tokenizer) bool {
	for {
		k, v, more := z.TagAttr()
		if string(k) == "class" && slices.Contains(strings.Fields(string(v)), "protyle-attr") {
			return true
		}
		if !more {
			return false
		}
	}
}

// BlockDOMText is the visible text of the block id in an update's DOM: an
// update whose data holds several blocks keeps the id on the first and
// inserts the others after it, so only that block's text is what the
// block itself shows. Without such a block it is DOMText of it all.
func BlockDOMText(dom, id string) string {
	nodes, err := html.ParseFragment(strings.NewReader(dom), &html.Node{Type: html.ElementNode, Data: "body", DataAtom: atom.Body})
	if err != nil {
		return DOMText(dom)
	}
	var find func(n *html.Node) *html.Node
	find = func(n *html.Node) *html.Node {
		if n.Type == html.ElementNode {
			for _, a := range n.Attr {
				if a.Key == "data-node-id" && a.Val == id {
					return n
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if f := find(c); f != nil {
				return f
			}
		}
		return nil
	}
	for _, n := range nodes {
		if f := find(n); f != nil {
			var b strings.Builder
			if html.Render(&b, f) == nil {
				return DOMText(b.String())
			}
		}
	}
	return DOMText(dom)
}

// BlockOf is the SiYuan block an element of its DOM is: its
// data-node-id and data-type ("" on an element that is not a block).
func BlockOf(n *html.Node) (id, typ string) {
	for _, a := range n.Attr {
		switch a.Key {
		case "data-node-id":
			id = a.Val
		case "data-type":
			typ = a.Val
		}
	}
	return id, typ
}
