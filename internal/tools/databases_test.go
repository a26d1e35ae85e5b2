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
