package markup

import (
	"regexp"
	"strconv"
)

// SiYuan marks a block other blocks reference with how many do, counted
// over every notebook: a refcount attribute on the block's element (also
// kept in the block's attributes when its editor saved the block with
// one) and a div in the block's attribute bar showing the number. The
// number is not the block's content: a reference added anywhere changes
// it.
var (
	refCountAttr     = regexp.MustCompile(`\s+refcount="[^"]*"`)
	refCountDiv      = regexp.MustCompile(`<div\b[^>]*\bclass="[^"]*\bprotyle-attr--refcount\b[^"]*"[^>]*>[^<]*</div>`)
	refCountDivStart = regexp.MustCompile(`^` + refCountDiv.String())
)

// WithoutRefCounts is block DOM without its reference counts (attributes
// and attribute-bar divs).
func WithoutRefCounts(dom string) string {
	return refCountDiv.ReplaceAllLiteralString(refCountAttr.ReplaceAllLiteralString(dom, ""), "")
}

// SetRefCount is a block's opening tag with its refcount attribute set to
// n, or dropped when n is 0; a tag without one is returned as it is.
func SetRefCount(tag string, n int) string {
	if !refCountAttr.MatchString(tag) {
		return tag
	}
	repl := ""
	if n > 0 {
		repl = ` refcount="` + strconv.Itoa(n) + `"`
	}
	return refCountAttr.ReplaceAllLiteralString(tag, repl)
}

// RefCountDivLen is the length of the count div dom starts with (its
// opening tag, the number and its closing tag), 0 when it starts with
// none.
func RefCountDivLen(dom string) int {
	if loc := refCountDivStart.FindStringIndex(dom); loc != nil {
		return loc[1]
	}
	return 0
}
