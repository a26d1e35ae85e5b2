package markup

import (
	"strings"
	"testing"
)

func TestNormalizeTitle(t *testing.T) {
	for in, want := range map[string]string{
		" a/b ": "ab", "x\ty\n": "xy", "\u00a0nb\u00a0": "nb", "z\u200bw": "zw", "e\ue000f": "ef", "👨\u200d👩": "👨\u200d👩",
	} {
		if got := NormalizeTitle(in); got != want {
			t.Errorf("NormalizeTitle(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestBlockDOMText(t *testing.T) {
	two := `<div data-node-id="20260101000000-aaaaaaa" data-type="NodeParagraph" class="p"><div contenteditable="true">first &amp; <strong>bold</strong></div><div class="protyle-attr">` + "\u200b" + `</div></div>` +
		`<div data-node-id="20260101000000-bbbbbbb" data-type="NodeParagraph" class="p"><div contenteditable="true">second</div></div>`
	for _, c := range []struct{ dom, id, want string }{
		{two, "20260101000000-aaaaaaa", "first & bold"},
		{two, "20260101000000-bbbbbbb", "second"},
		{two, "20260101000000-ccccccc", "first & bold second"},
		{"plain text", "20260101000000-aaaaaaa", "plain text"},
	} {
		if got := BlockDOMText(c.dom, c.id); got != c.want {
			t.Errorf("BlockDOMText(%s) = %q, want %q", c.id, got, c.want)
		}
	}
}

func TestBlockTypes(t *testing.T) {
	for _, tc := range []struct{ md, want string }{
		{"plain text", "NodeParagraph"},
		{"# Title", "NodeHeading"},
		{"- item", "NodeList"},
		{"one\n\ntwo", "NodeParagraph NodeParagraph"},
		{"text\n{: custom-a=\"1\"}", "NodeParagraph"},
		{"", ""},
	} {
		got, err := BlockTypes(tc.md)
		if err != nil || strings.Join(got, " ") != tc.want {
			t.Errorf("BlockTypes(%q) = %v %v, want %s", tc.md, got, err, tc.want)
		}
	}
}

// TestBlockKramdownsDocIAL: a document IAL that does not start with id
// (SiYuan sorts a document's attributes once one is set; the embedded
// kernel writes title first) is dropped before the parse, which it would
// otherwise panic; only a closing IAL after a blank line with type="doc"
// is the document's.
func TestBlockKramdownsDocIAL(t *testing.T) {
	const p = "para\n{: id=\"20260101000000-ppppppp\" updated=\"20260101000000\"}"
	for _, c := range []struct{ name, kd, cut string }{
		{"id first", p + "\n\n{: id=\"20260101000000-dddddd0\" title=\"A\" type=\"doc\" updated=\"20260101000000\"}", p + "\n"},
		{"sorted with alias and custom attributes", p + "\n\n{: alias=\"al\" custom-aa=\"2\" icon=\"1f4d6\" id=\"20260101000000-dddddd0\" title=\"A\" type=\"doc\" updated=\"20260101000000\"}", p + "\n"},
		{"title first, trailing newline", p + "\n\n{: title=\"Doc\" id=\"20260101000000-dddddd0\" updated=\"20260101000000\" type=\"doc\"}\n", p + "\n"},
		{"an empty document", "{: title=\"Doc\" id=\"20260101000000-dddddd0\" type=\"doc\"}", ""},
		{"no document IAL", p, p},
		{"nothing", "", ""},
		{"newlines only", "\n\n", "\n\n"},
		{"a block's IAL is kept", "x\n\n" + p, "x\n\n" + p},
		{"a closing IAL of no document is kept", p + "\n\n{: id=\"20260101000000-eeeeeee\" title=\"A\"}", p + "\n\n{: id=\"20260101000000-eeeeeee\" title=\"A\"}"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := withoutDocIAL(c.kd); got != c.cut {
				t.Fatalf("withoutDocIAL(%q)\n got %q\nwant %q", c.kd, got, c.cut)
			}
			got, err := BlockKramdowns(c.kd, []string{"20260101000000-ppppppp"})
			if err != nil {
				t.Fatal(err)
			}
			if body, _ := SplitIAL(got["20260101000000-ppppppp"]); strings.Contains(c.cut, "para") && body != "para" {
				t.Fatalf("BlockKramdowns = %q", got)
			}
		})
	}
}

func TestBlockKramdowns(t *testing.T) {
	kd := "# H **b**\n{: id=\"20260101000000-hhhhhhh\"}\n\npara **b** ((20260101000000-zzzzzzz 'ref')) #tag#\n{: id=\"20260101000000-ppppppp\" custom-x=\"1\"}\n\n" +
		"* {: id=\"20260101000000-iiiiiii\"}item one\n  {: id=\"20260101000000-qqqqqqq\"}\n{: id=\"20260101000000-lllllll\"}\n\n{: id=\"20260101000000-dddddd0\" title=\"d\"}"
	got, err := BlockKramdowns(kd, []string{"20260101000000-hhhhhhh", "20260101000000-ppppppp", "20260101000000-qqqqqqq", "20260101000000-lllllll", "20260101000000-nnnnnnn"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"20260101000000-hhhhhhh": "# H **b**",
		"20260101000000-ppppppp": "para **b** ((20260101000000-zzzzzzz 'ref')) #tag#",
		"20260101000000-qqqqqqq": "item one",
	}
	if len(got) != len(want) {
		t.Fatalf("BlockKramdowns = %q", got)
	}
	for id, w := range want {
		// The bodies as the kernel's; the IAL keeps the block's attributes
		// (the engine stamps updated where it is missing).
		if body, ial := SplitIAL(got[id]); body != w || !strings.Contains(ial, `id="`+id+`"`) {
			t.Errorf("%s: %q, want body %q", id, got[id], w)
		}
	}
	if _, ial := SplitIAL(got["20260101000000-ppppppp"]); !strings.Contains(ial, `custom-x="1"`) {
		t.Errorf("attributes lost: %q", ial)
	}
}

func TestKramdownDOMText(t *testing.T) {
	const id = "20260101000000-ppppppp"
	ial := "\n{: id=\"" + id + "\" updated=\"20260101000000\"}"
	for _, c := range []struct{ name, kd, want string }{
		{"marks", "a **b** *c* `d` ==e== ~~f~~" + ial, "a b c d e f"},
		{"inline html tags are marks, as the kernel's block API makes them", "<u>under</u> and <kbd>Ctrl</kbd>" + ial, "under and Ctrl"},
		// Inline math is rendered from an attribute: no text (so in the
		// kernel's DOM too; the contract suite compares both on every kind
		// of leaf block).
		{"tag and math", "tag #t# and $x^2$" + ial, "tag t and"},
		{"entities and an html tag", "a &amp; b <b>c</b>" + ial, "a & b c"},
		{"heading", "## Title **x**" + ial, "Title x"},
		{"code block: its language label shows", "```go\nfmt.Println(1)\n```" + ial, "go fmt.Println(1)"},
		{"a reference shows its anchor", "see ((20260101000000-zzzzzzz 'the anchor'))" + ial, "see the anchor"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := KramdownDOMText(c.kd, id)
			if err != nil || got != c.want {
				t.Fatalf("KramdownDOMText(%q) = %q, %v; want %q", c.kd, got, err, c.want)
			}
		})
	}
}

// TestDOMTextLeavesAttributeBarsOut: a block's attribute bar is not its
// text. A real SiYuan 3.7.3 answered an update of a database-bound block
// with the database's name in the bar, and getBlockDOM right after without
// it: the two must read as the same text.
func TestDOMTextLeavesAttributeBarsOut(t *testing.T) {
	const open = `<div data-node-id="20260101000000-aaaaaaa" data-type="NodeParagraph" class="p" custom-avs="20260101000000-bbbbbbb">` +
		`<div contenteditable="true" spellcheck="false">v3 &amp; <strong>more</strong></div>`
	for _, tc := range []struct{ name, dom, want string }{
		{"bar with the database's name", open + `<div class="protyle-attr" contenteditable="false"><div class="protyle-attr--av"><svg><use xlink:href="#iconDatabase"></use></svg>Untitled</div>` + "\u200b</div></div>", "v3 & more"},
		{"bar without it", open + `<div class="protyle-attr" contenteditable="false"><div class="protyle-attr--av"><svg><use xlink:href="#iconDatabase"></use></svg></div>` + "\u200b</div></div>", "v3 & more"},
		{"name, alias, memo and refcount", open + `<div class="protyle-attr" contenteditable="false"><div class="protyle-attr--name"><svg><use xlink:href="#iconN"></use></svg>nm</div>` +
			`<div class="protyle-attr--alias">al</div><div class="protyle-attr--memo" data-type="a">memo<br></div><div class="protyle-attr--refcount popover__block">3</div>` + "\u200b</div></div>", "v3 & more"},
		{"two blocks, text after a bar kept", open + `<div class="protyle-attr"><div class="protyle-attr--av">X</div></div></div><div class="p"><div>next</div></div>`, "v3 & more next"},
		{"the class named in text stays", `<div contenteditable="true">protyle-attr--av is a class</div>`, "protyle-attr--av is a class"},
		{"a nested class list", `<div class="x protyle-attr y"><div class="protyle-attr--av">gone</div></div>kept`, "kept"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := DOMText(tc.dom); got != tc.want {
				t.Fatalf("DOMText = %q, want %q", got, tc.want)
			}
		})
	}
	if a, b := BlockDOMText(open+`<div class="protyle-attr"><div class="protyle-attr--av">Untitled</div></div></div>`, "20260101000000-aaaaaaa"), "v3 & more"; a != b {
		t.Fatalf("BlockDOMText = %q, want %q", a, b)
	}
}

// FuzzDOMText: any DOM a kernel answers reads as text without a panic,
// and leaving the bars out never adds text.
func FuzzDOMText(f *testing.F) {
	f.Add(`<div class="p"><div>a</div><div class="protyle-attr"><div class="protyle-attr--av">X</div></div></div>`)
	f.Add(`<div class="protyle-attr"><img src=x><div class="protyle-attr--memo">m<br>m</div></div>after`)
	f.Add(`<div class="protyle-attr"><div class="protyle-attr--`)
	f.Fuzz(func(t *testing.T, dom string) {
		got := DOMText(dom)
		if !strings.Contains(dom, "protyle-attr--") && got != DOMText(dom+"") {
			t.Fatal("not deterministic")
		}
		if len(got) > len(dom)+len(dom)/2+8 {
			t.Fatalf("text %q longer than its DOM %q", got, dom)
		}
	})
}

func TestDocAttrs(t *testing.T) {
	for _, c := range []struct {
		md   string
		want map[string]string
		ok   bool
	}{
		{"# Meeting\n\n- item\n\n{: id=\"20200101000000-abcdefg\" title=\"T\" type=\"doc\" icon=\"1f4c5\" custom-kind=\"meeting\" name=\"m\"}\n",
			map[string]string{"title": "T", "type": "doc", "icon": "1f4c5", "custom-kind": "meeting", "name": "m"}, true},
		// A block's attributes are its own, not the document's.
		{"# Meeting\n\n- item\n\n{: icon=\"1f4c5\"}\n", nil, true},
		{"# Meeting .action{.title}\n\nbody\n", nil, true},
		{"", nil, true},
		// SiYuan takes a document line's first attribute as its id.
		{"para\n\n{: icon=\"1f4c5\" type=\"doc\"}\n", nil, false},
	} {
		got, ok := DocAttrs(c.md)
		if ok != c.ok || len(got) != len(c.want) {
			t.Errorf("DocAttrs(%q) = %v, %t; want %v, %t", c.md, got, ok, c.want, c.ok)
			continue
		}
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("DocAttrs(%q)[%s] = %q, want %q", c.md, k, got[k], v)
			}
		}
	}
}
