package document

import (
	"regexp"
	"strings"
	"testing"
)

// FuzzRecount rewrites fuzzed DOMs with every block's visible count set
// to 1 and every database hidden: it never panics, never shows a count
// other than 1 beside a block, never keeps a database id in custom-avs,
// and leaves a DOM without counts or databases as it was.
func FuzzRecount(f *testing.F) {
	const id = "20260812120000-abcdefg"
	for _, seed := range []string{
		`<div data-node-id="` + id + `" class="p" refcount="3"><div contenteditable="true">x</div><div class="protyle-attr" contenteditable="false"><div class="protyle-attr--refcount popover__block">3</div>` + "\u200b" + `</div></div>`,
		`<div data-node-id="` + id + `" custom-avs="20260812120000-avavava" av-names="Secret DB"><div>x</div></div>`,
		`<div data-node-id="` + id + `"><div data-node-id="20260812120001-bcdefgh" refcount="2"><div class="protyle-attr--refcount">2</div></div><div class="protyle-attr--refcount">9</div></div>`,
		`<div class="protyle-attr--refcount">5</div></div></div><div>`,
		`<div data-node-id="` + id + `" refcount="">`,
		`plain text`,
	} {
		f.Add(seed)
	}
	counts := map[string]int{id: 1, "20260812120001-bcdefgh": 1}
	hidden := func(string) (bool, error) { return false, nil }
	block := regexp.MustCompile(`<div\b[^>]*\bdata-node-id="[^"]*"[^>]*>`)
	attr := regexp.MustCompile(`\srefcount="(\d*)"`)
	avs := regexp.MustCompile(`\scustom-avs="([^"]*)"`)
	f.Fuzz(func(t *testing.T, html string) {
		out, err := recount(html, counts, hidden)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(html, "refcount") && !strings.Contains(html, "custom-avs") && out != html {
			t.Fatalf("changed a DOM without counts:\n%q\n%q", html, out)
		}
		for _, tag := range block.FindAllString(out, -1) {
			if m := nodeID.FindStringSubmatch(tag); m != nil {
				if c := attr.FindStringSubmatch(tag); c != nil && (counts[m[1]] != 1 || c[1] != "1") {
					t.Fatalf("a block shows a count it may not: %q in %q", tag, out)
				}
				if ids := avs.FindStringSubmatch(tag); ids != nil && strings.Trim(ids[1], ", \t\n\r\f") != "" {
					t.Fatalf("a hidden database's id stayed: %q", tag)
				}

			}
		}
	})
}
