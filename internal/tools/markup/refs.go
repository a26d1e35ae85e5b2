package markup

import (
	stdhtml "html"
	"regexp"
	"strings"
)

// Block references in text SiYuan is given to store or render. SiYuan
// fills a reference's anchor with its target's text (and keeps a dynamic
// one updated), so a reference reads its target. It reads them in two
// forms, whichever the data type:
//
//   - Markdown: ((id …)). Lute allows blanks (at most one line break)
//     between (( and the id; the id must be followed by a blank or )).
//   - Block DOM: an element whose data-type holds block-ref and whose
//     data-id names the target. Lute parses DOM with an HTML parser, so
//     attribute names may be in any case, values may be unquoted, single
//     quoted or written with character references, and a <wbr> (the
//     editor's caret, which SiYuan removes) may sit inside the id; inline
//     HTML in Markdown is read the same way (HTMLTag2TextMark).
//
// RefIDs finds both, erring on the side of finding too much: a string
// that names block-ref anywhere has every data-id attribute in it read as
// a reference, wherever the parser would place the element. What it finds
// in excess only costs a lookup of a block the text names anyway.
var (
	markdownRef = regexp.MustCompile(`\(\([\t\n\v\f\r ]*([0-9]{14}-[0-9a-z]{7})\b`)
	dataIDAttr  = regexp.MustCompile(`(?i)\bdata-id[\t\n\v\f\r ]*=[\t\n\v\f\r ]*("[^"]*"|'[^']*'|[^\t\n\v\f\r >]*)`)
	blockRefTyp = regexp.MustCompile(`(?i)block-ref`)
	nodeIDIn    = regexp.MustCompile(`[0-9]{14}-[0-9a-z]{7}`)
)

// caret is the editor's caret mark, which SiYuan strips from what it
// stores (a DOM's <wbr> becomes one before parsing).
const caret = "\u2038"

// bare is s without the editor's carets, as SiYuan stores it.
func bare(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "<wbr>", ""), caret, "")
}

// RefIDs are the ids of the blocks text references, each once, in the
// order first met (see above).
func RefIDs(text string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(id string) {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	if strings.Contains(text, "((") {
		for _, m := range markdownRef.FindAllStringSubmatch(text, -1) {
			add(m[1])
		}
	}
	if !strings.Contains(text, "=") {
		return out // no attribute at all
	}
	dom := strings.ReplaceAll(text, "<wbr>", "")
	if !blockRefTyp.MatchString(bare(dom)) && !blockRefTyp.MatchString(bare(stdhtml.UnescapeString(dom))) {
		return out
	}
	for _, m := range dataIDAttr.FindAllStringSubmatch(dom, -1) {
		v := m[1]
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		// The value as written and as character references decode it.
		for _, s := range []string{v, stdhtml.UnescapeString(v)} {
			for _, id := range nodeIDIn.FindAllString(bare(s), -1) {
				add(id)
			}
		}
	}
	return out
}
