package timeline

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/failure"
)

func TestTagNames(t *testing.T) {
	const doc = "20260805200000-abcdefg"
	now := time.Date(2026, 12, 6, 5, 4, 3, 0, time.UTC)
	cases := []struct {
		name, doc string
		existing  []string
		want      string
	}{
		{"Before rewrite", doc, nil, "sisyphustimeline_" + doc + "_Beforerewrite"},
		{"release", "", nil, "sisyphustimeline_global_release"},
		{"  !!  ", doc, nil, "sisyphustimeline_" + doc + "_snapshot"},
		{"改稿前 v2", doc, nil, "sisyphustimeline_" + doc + "_改稿前v2"},
		{"release", "", []string{"sisyphustimeline_global_release"}, "sisyphustimeline_global_release20261206050403"},
		{"release", "", []string{"sisyphustimeline_global_release", "sisyphustimeline_global_release20261206050403"}, "sisyphustimeline_global_release20261206050403_2"},
		{strings.Repeat("a", 60), "", nil, "sisyphustimeline_global_" + strings.Repeat("a", 48)},
	}
	for _, c := range cases {
		existing := map[string]bool{}
		for _, e := range c.existing {
			existing[e] = true
		}
		if got := newTag(c.name, c.doc, existing, now); got != c.want {
			t.Errorf("newTag(%q, %q) = %q, want %q", c.name, c.doc, got, c.want)
		}
	}
	for tag, want := range map[string][2]string{
		"sisyphustimeline_" + doc + "_Beforerewrite": {doc, "Beforerewrite"},
		"sisyphustimeline_global_release":            {"", "release"},
		"sisyphustimelineold":                        {"", "old"},
		"other":                                      {"", "other"},
		"sisyphustimeline_2026-x_y":                  {"", "_2026-x_y"},
	} {
		if d, l := tagDocument(tag), tagLabel(tag); d != want[0] || l != want[1] {
			t.Errorf("%s: document %q label %q, want %q", tag, d, l, want)
		}
	}
}

func TestIndex(t *testing.T) {
	// An index as upstream writes it, with a field this project does not
	// know: kept as it is when an entry is added.
	in := `[{"name":"a <b>","created":1,"snapshotId":"s1","tag":"sisyphustimeline_20260805200000-abcdefg_a","scope":"document","extra":true}]`
	nodes, err := parseIndex(in, true)
	if err != nil || len(nodes) != 1 || nodes[0].Name != "a <b>" || nodes[0].Created != 1 {
		t.Fatalf("parse: %+v %v", nodes, err)
	}
	nodes = append(nodes, nodeRecord{Name: "c&d", Created: 2, SnapshotID: "s2", Tag: "t2", Scope: "document"}, nodeRecord{Name: "g", SnapshotID: "s3", Scope: "global"})
	out, err := formatIndex(nodes)
	want := `[{"name":"a <b>","created":1,"snapshotId":"s1","tag":"sisyphustimeline_20260805200000-abcdefg_a","scope":"document","extra":true},{"name":"c&d","created":2,"snapshotId":"s2","tag":"t2","scope":"document"}]`
	if err != nil || out != want {
		t.Fatalf("format:\n%s\nwant\n%s (%v)", out, want, err)
	}
	for _, bad := range []string{`{}`, `[1]`, `[{"name":1,"snapshotId":"s"}]`, `[{"name":"n","snapshotId":"s","scope":"x"}]`, `nope`} {
		if _, err := parseIndex(bad, true); err == nil {
			t.Errorf("strict parse of %s: no error", bad)
		}
		if nodes, err := parseIndex(bad, false); err != nil || len(nodes) != 0 {
			t.Errorf("lenient parse of %s: %v %v", bad, nodes, err)
		}
	}
	if nodes, err := parseIndex("", true); err != nil || nodes != nil {
		t.Errorf("empty index: %v %v", nodes, err)
	}
}

func TestListNodesOf(t *testing.T) {
	const doc = "20260805200000-abcdefg"
	idx := []nodeRecord{{Name: "A", Created: 10, SnapshotID: "s1", Tag: "sisyphustimeline_" + doc + "_A", Scope: "document"},
		{Name: "Gone", Created: 5, SnapshotID: "s0", Tag: "sisyphustimeline_" + doc + "_Gone", Scope: "document"}}
	tagged := []snapshot{{ID: "s1", Created: 10, Tag: "sisyphustimeline_" + doc + "_A"},
		{ID: "s2", Created: 20, Tag: "sisyphustimeline_" + doc + "_B"},
		{ID: "s3", Created: 15, Tag: "sisyphustimeline_global_G"},
		{ID: "s4", Created: 30, Tag: "sisyphustimeline_20260805200000-zzzzzzz_Other"},
		{ID: "s5", Created: 40, Tag: "unrelated"}}
	names := func(ns []node) (out []string) {
		for _, n := range ns {
			out = append(out, n.Name)
		}
		return strings.Fields(strings.Join(out, " "))
	}
	for scope, want := range map[string]string{"document": "B A Gone", "global": "G", "all": "B G A Gone"} {
		got := listNodesOf(scope, doc, idx, tagged)
		if strings.Join(names(got), " ") != want {
			t.Errorf("%s: %v, want %s", scope, names(got), want)
		}
		for _, n := range got {
			if n.Name == "Gone" && n.Tagged {
				t.Errorf("an entry whose tag is gone is listed as tagged")
			}
		}
	}
}

func TestCheckTagOf(t *testing.T) {
	const doc = "20260805200000-abcdefg"
	for _, c := range []struct {
		tag, doc string
		need     bool
		code     string
	}{
		{"sisyphustimeline_" + doc + "_A", doc, true, ""},
		{"sisyphustimeline_" + doc + "_A", "20260805200000-zzzzzzz", true, "timeline_tag_mismatch"},
		{"sisyphustimeline_" + doc + "_A", "", false, "timeline_tag_mismatch"},
		{"sisyphustimeline_global_G", "", false, ""},
		{"sisyphustimeline_global_G", "", true, "invalid_arguments"},
		{"sisyphustimeline_global_G", doc, true, ""},
		{"sisyphustimelineOld", doc, true, "invalid_arguments"},
		{"release", doc, true, "invalid_arguments"},
	} {
		err := checkTagOf(c.tag, c.doc, c.need)
		got := ""
		if err != nil {
			got = codeOf(err)
		}
		if got != c.code {
			t.Errorf("checkTagOf(%q, %q): %v, want %s", c.tag, c.doc, err, c.code)
		}
	}
}

func codeOf(err error) string {
	var e *failure.Error
	if errors.As(err, &e) {
		return string(e.Code)
	}
	return "?"
}
