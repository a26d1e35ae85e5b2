// Package markup holds SiYuan's text rules that several tools need: how it
// normalises titles, the visible text of block DOM, the block references it
// reads in what it stores. Pure functions, no kernel calls.
package markup

import (
	stdhtml "html"
	"regexp"
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
// applied with what a readback shows.
func DOMText(dom string) string {
	t := tagRE.ReplaceAllString(dom, " ")
	t = stdhtml.UnescapeString(t)
	t = strings.NewReplacer("\u200b", "", "\u2060", "").Replace(t)
	return strings.TrimSpace(spaceRE.ReplaceAllString(t, " "))
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
