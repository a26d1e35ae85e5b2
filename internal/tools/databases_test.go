package tools

import (
	"errors"
	"strings"
	"testing"
)

const (
	dbShown  = "20260812120000-shownnn"
	dbHidden = "20260812120000-hiddenn"
)

// shownOnly sees dbShown alone.
func shownOnly(id string) (bool, error) { return id == dbShown, nil }

func TestVeilAvs(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`<div data-node-id="x" custom-avs="` + dbShown + `" av-names="Shown">`, `<div data-node-id="x" custom-avs="` + dbShown + `" av-names="Shown">`},
		{`<div data-node-id="x" custom-avs="` + dbHidden + `" av-names="Secret">`, `<div data-node-id="x">`},
		{`<div data-node-id="x" av-names="a" custom-avs="` + dbHidden + `,` + dbShown + `" class="p">`, `<div data-node-id="x" custom-avs="` + dbShown + `" class="p">`},
		{`{: custom-avs="` + dbHidden + `" id="x" updated="1"}`, `{: id="x" updated="1"}`},
		{`{: av-names="&lt;span data-av-id=&quot;` + dbHidden + `&quot;&gt;S&lt;/span&gt;" custom-avs="` + dbShown + `,` + dbHidden + `" id="x"}`, `{: custom-avs="` + dbShown + `" id="x"}`},
		{`{: id="x"}`, `{: id="x"}`},
		{`<div custom-avs="" av-names="">`, `<div custom-avs="" av-names="">`},
		{`<span data-type="text">custom-avs</span>`, `<span data-type="text">custom-avs</span>`},
	} {
		got, err := VeilAvs(tt.in, shownOnly)
		if err != nil || got != tt.want {
			t.Errorf("VeilAvs(%s) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
	boom := errors.New("kernel down")
	if _, err := VeilAvs(`<div custom-avs="`+dbHidden+`">`, func(string) (bool, error) { return false, boom }); !errors.Is(err, boom) {
		t.Errorf("a failed lookup: %v", err)
	}
}

func TestShownList(t *testing.T) {
	for _, tt := range []struct {
		in, want string
		cut      bool
	}{
		{dbShown, dbShown, false},
		{dbHidden, "", true},
		{dbHidden + "," + dbShown, dbShown, true},
		{" " + dbShown + " ,", " " + dbShown + " ,", false},
		{"", "", false},
	} {
		got, cut, err := shownList(tt.in, shownOnly)
		if err != nil || got != tt.want || cut != tt.cut {
			t.Errorf("shownList(%q) = %q, %v, %v; want %q, %v", tt.in, got, cut, err, tt.want, tt.cut)
		}
	}
}

// FuzzVeilAvs: whatever the tag or IAL, no hidden database's id is left in
// its custom-avs, av-names goes whenever one was taken out, and text
// without custom-avs comes back unchanged.
func FuzzVeilAvs(f *testing.F) {
	f.Add(`<div data-node-id="x" custom-avs="` + dbHidden + `,` + dbShown + `" av-names="S">`)
	f.Add(`{: custom-avs="` + dbHidden + `" id="x"}`)
	f.Add(`<div custom-avs="a" custom-avs="` + dbHidden + `">`)
	f.Add(`plain`)
	f.Fuzz(func(t *testing.T, g string) {
		got, err := VeilAvs(g, shownOnly)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(g, "custom-avs") && got != g {
			t.Fatalf("changed %q into %q", g, got)
		}
		for _, m := range avsAttr.FindAllStringSubmatch(got, -1) {
			if strings.Contains(m[2], dbHidden) {
				t.Fatalf("%q keeps the hidden database: %q", g, got)
			}
		}
		if got != g && namesAttr.MatchString(got) && strings.Count(got, "av-names") >= strings.Count(g, "av-names") {
			t.Fatalf("%q keeps av-names: %q", g, got)
		}
	})
}

// span is a database's span in SiYuan's attribute bar.
func span(id, name string) string {
	return `<span data-av-id="` + id + `" data-popover-url="/api/av/getMirrorDatabaseBlocks" class="popover__block">` + name + `</span>`
}

const barIconHTML = `<svg><use xlink:href="#iconDatabase"></use></svg>`

// para is a paragraph as SiYuan 3.7.3's getDoc renders a row of databases
// (getBlockDOM draws the bar with its icon alone: names "").
func para(avs, names string) string {
	return `<div data-node-id="20260812120000-ppppppp" data-type="NodeParagraph" class="p" custom-avs="` + avs + `" updated="20260812120000">` +
		`<div contenteditable="true" spellcheck="false">plan one</div><div class="protyle-attr" contenteditable="false">` +
		`<div class="protyle-attr--av">` + barIconHTML + names + `</div>` + "\u200b" + `</div></div>`
}

func TestVeilAvDOM(t *testing.T) {
	both := span(dbShown, "Open tasks") + "&nbsp;" + span(dbHidden, "Payroll")
	for _, tt := range []struct{ name, in, want string }{
		{"getDoc, both", para(dbShown+","+dbHidden, both), para(dbShown, span(dbShown, "Open tasks"))},
		{"getDoc, hidden first", para(dbHidden+","+dbShown, span(dbHidden, "Payroll")+"&nbsp;"+span(dbShown, "Open tasks")), para(dbShown, span(dbShown, "Open tasks"))},
		{"getDoc, hidden only", para(dbHidden, span(dbHidden, "Payroll")),
			strings.Replace(strings.Replace(para(dbHidden, ""), ` custom-avs="`+dbHidden+`"`, "", 1), `<div class="protyle-attr--av">`+barIconHTML+`</div>`, "", 1)},
		{"getBlockDOM, hidden only", para(dbHidden, ""),
			strings.Replace(strings.Replace(para(dbHidden, ""), ` custom-avs="`+dbHidden+`"`, "", 1), `<div class="protyle-attr--av">`+barIconHTML+`</div>`, "", 1)},
		{"getBlockDOM, shown", para(dbShown+","+dbHidden, ""), para(dbShown, "")},
		{"nothing hidden", para(dbShown, span(dbShown, "Open tasks")), para(dbShown, span(dbShown, "Open tasks"))},
		{"unclosed bar", `<div class="protyle-attr--av">` + span(dbHidden, "Payroll"), ``},
	} {
		got, err := VeilAvDOM(tt.in, shownOnly)
		if err != nil || got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}

// FuzzVeilAvDOM: whatever the DOM, no block keeps a hidden database in
// its custom-avs and no database bar keeps its span, and a DOM without
// databases comes back unchanged.
func FuzzVeilAvDOM(f *testing.F) {
	f.Add(para(dbShown+","+dbHidden, span(dbShown, "Open")+"&nbsp;"+span(dbHidden, "Payroll")))
	f.Add(para(dbHidden, ""))
	f.Add(`<div class="protyle-attr--av"><div class="protyle-attr--av">` + span(dbHidden, "x") + `</div></div>`)
	f.Add(`<div data-node-id="x" av-names="&lt;span data-av-id=&quot;` + dbHidden + `&quot;&gt;" custom-avs="` + dbHidden + `"></div>`)
	f.Fuzz(func(t *testing.T, dom string) {
		got, err := VeilAvDOM(dom, shownOnly)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(dom, "custom-avs") && !strings.Contains(dom, avBarClass) && got != dom {
			t.Fatalf("changed %q into %q", dom, got)
		}
		for _, loc := range divTag.FindAllStringIndex(got, -1) {
			tag := got[loc[0]:loc[1]]
			if blockDiv.MatchString(tag) {
				for _, m := range avsAttr.FindAllStringSubmatch(tag, -1) {
					if strings.Contains(m[2], dbHidden) {
						t.Fatalf("a block keeps a hidden database in %q: %q", tag, got)
					}
				}
			}
			if avBarOpen.MatchString(tag) {
				content := got[loc[1]:]
				if end := strings.Index(content, "</div>"); end >= 0 {
					content = content[:end]
				}
				for _, m := range barSpan.FindAllStringSubmatch(content, -1) {
					if m[1] == dbHidden {
						t.Fatalf("a bar keeps a hidden database: %q", got)
					}
				}
			}
		}
	})
}
