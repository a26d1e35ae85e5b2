package markup

import "testing"

// TestRefCounts: the reference counts SiYuan marks a block's DOM with
// (getDoc's), found and changed, and nothing else.
func TestRefCounts(t *testing.T) {
	const bar = `<div class="protyle-attr--refcount popover__block">11</div>`
	block := `<div data-node-id="20261205140017-2ac4ku1" data-node-index="0" data-type="NodeParagraph" class="p" updated="20261205140017" refcount="11">` +
		`<div contenteditable="true" spellcheck="false">secret target text</div><div class="protyle-attr" contenteditable="false">` + bar + "\u200b</div></div>"
	bare := `<div data-node-id="20261205140017-2ac4ku1" data-node-index="0" data-type="NodeParagraph" class="p" updated="20261205140017">` +
		`<div contenteditable="true" spellcheck="false">secret target text</div><div class="protyle-attr" contenteditable="false">` + "\u200b</div></div>"
	for _, c := range []struct{ name, in, want string }{
		{"getDoc's marks", block, bare},
		{"none", bare, bare},
		{"text about refcount stays", `<div contenteditable="true">refcount="3" protyle-attr--refcount</div>`, `<div contenteditable="true">refcount="3" protyle-attr--refcount</div>`},
	} {
		if got := WithoutRefCounts(c.in); got != c.want {
			t.Errorf("%s: WithoutRefCounts\n got %q\nwant %q", c.name, got, c.want)
		}
	}
	tag := `<div data-node-id="x" class="p" refcount="11">`
	for _, c := range []struct {
		tag  string
		n    int
		want string
	}{
		{tag, 3, `<div data-node-id="x" class="p" refcount="3">`},
		{tag, 0, `<div data-node-id="x" class="p">`},
		{`<div data-node-id="x" class="p">`, 3, `<div data-node-id="x" class="p">`},
	} {
		if got := SetRefCount(c.tag, c.n); got != c.want {
			t.Errorf("SetRefCount(%q, %d) = %q, want %q", c.tag, c.n, got, c.want)
		}
	}
	if n := RefCountDivLen(bar + "\u200b</div>"); n != len(bar) {
		t.Errorf("RefCountDivLen = %d, want %d", n, len(bar))
	}
	if n := RefCountDivLen("x" + bar); n != 0 {
		t.Errorf("RefCountDivLen of a div further on = %d", n)
	}
}
