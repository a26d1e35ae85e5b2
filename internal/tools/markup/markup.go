// Package markup holds SiYuan's text rules that several tools need: how it
// normalises titles, and the visible text of block DOM. Pure functions, no
// kernel calls.
package markup

import (
	stdhtml "html"
	"regexp"
	"strings"
	"unicode"
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
