package search

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzMatcher: the find_replace matcher takes any kramdown a kernel
// answers and any keyword an agent sends, never panics, and agrees with a
// plain search of the text for a keyword that is plain text.
func FuzzMatcher(f *testing.F) {
	f.Add("Apple pie", "apple", false)
	f.Add("**apple** `code` $x$ ((20200101000000-aaaaaaa 'a'))\n{: id=\"20200101000000-bbbbbbb\"}", "a", false)
	f.Add("x 12", `[0-9`, true)
	f.Fuzz(func(t *testing.T, md, k string, regex bool) {
		if k == "" {
			return
		}
		kinds := map[string]bool{}
		for _, kind := range replaceKinds {
			kinds[kind] = true
		}
		m := newMatcher(frArgs{K: k, Kinds: kinds, Regex: regex})
		hit := m.block(md)
		// A plain word in a plain paragraph is always found.
		if !regex && isWord(k) && isWord(md) && strings.Contains(strings.ToLower(md), strings.ToLower(k)) && !hit {
			t.Fatalf("%q in %q not found", k, md)
		}
	})
}

func isWord(s string) bool {
	if !utf8.ValidString(s) || s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == ' ') {
			return false
		}
	}
	return strings.TrimSpace(s) == s
}

// FuzzTokens: anchor tokens are normalised, trimmed and never empty.
func FuzzTokens(f *testing.F) {
	f.Add("Ａtlas , b，C")
	f.Add(" ,\u200b, ")
	f.Fuzz(func(t *testing.T, s string) {
		for _, tok := range splitTokens(s) {
			if tok == "" || tok != strings.TrimSpace(tok) || tok != normToken(tok) {
				t.Fatalf("splitTokens(%q) gave %q", s, tok)
			}
		}
	})
}
