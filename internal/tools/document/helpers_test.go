package document

import "testing"

func TestSortModeNames(t *testing.T) {
	for _, tc := range []struct {
		attr     string
		declared any
		name     any
	}{
		{"", nil, nil},
		{"6", 6, "custom"},
		{" 14 ", 14, "child_count_descending"},
		{"15", nil, nil}, // 15 (the file tree) is no document's own mode
		{"-1", nil, nil},
		{"x", nil, nil},
	} {
		d := declaredSortMode(tc.attr)
		var got any
		if d != nil {
			got = *d
		}
		if got != tc.declared || sortModeName(d) != tc.name {
			t.Errorf("%q: declared %v name %v, want %v %v", tc.attr, got, sortModeName(d), tc.declared, tc.name)
		}
	}
	n := 15
	if sortModeName(&n) != "file_tree" {
		t.Errorf("15 is %v", sortModeName(&n))
	}
	n = 99
	if sortModeName(&n) != "unknown_99" {
		t.Errorf("99 is %v", sortModeName(&n))
	}
}

func TestUnderPath(t *testing.T) {
	const p = "/20260812120000-aaaaaaa.sy"
	for _, tc := range []struct {
		path, root string
		want       bool
	}{
		{p, "/", true},
		{p, p, true},
		{"/20260812120000-aaaaaaa/20260812120000-bbbbbbb.sy", p, true},
		{"/20260812120000-aaaaaaab.sy", p, false},
		{"/20260812120000-ccccccc.sy", p, false},
	} {
		if got := underPath(tc.path, tc.root); got != tc.want {
			t.Errorf("underPath(%s, %s) = %v", tc.path, tc.root, got)
		}
	}
}

func TestOutlineText(t *testing.T) {
	for in, want := range map[string]string{
		"Doc&nbsp;A":                         "Doc A",
		`One <strong>bold</strong> &amp; so`: "One bold & so",
		"  plain  ":                          "plain",
		"<span style=\"x\">Styled</span>":    "Styled",
	} {
		if got := outlineText(in); got != want {
			t.Errorf("outlineText(%q) = %q, want %q", in, got, want)
		}
	}
}
