package file

import (
	"fmt"
	"slices"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// TestRefKey: what two references share when they name the same image.
func TestRefKey(t *testing.T) {
	for ref, want := range map[string]string{
		"assets/cover.png":                           "cover.png",
		"assets/cover-20260101120000-abcdefg.png":    "cover.png",
		"/data/assets/sub/cover.png?w=3#frag":        "cover.png",
		`C:\pics\cover.png`:                          "cover.png",
		"https://example.com/a/b/x.png?size=large":   "x.png",
		"assets/my%20pic-20260101120000-0a1b2c3.jpg": "my pic.jpg",
		"assets/noext-20260101120000-abcdefg":        "noext",
		"assets/.hidden":                             ".hidden",
		"assets/cover-2026-abcdefg.png":              "cover-2026-abcdefg.png", // not SiYuan's suffix
		"assets/cover-20260101120000-ABCDEFG.png":    "cover-20260101120000-ABCDEFG.png",
	} {
		if got := refKey(ref); got != want {
			t.Errorf("refKey(%q) = %q, want %q", ref, got, want)
		}
	}
}

// TestUnmatchedRefs: a multiset difference in the first list's order.
func TestUnmatchedRefs(t *testing.T) {
	for _, c := range []struct {
		refs, against, want []string
	}{
		{[]string{"a.png", "b.png"}, []string{"assets/a-20260101120000-abcdefg.png"}, []string{"b.png"}},
		{[]string{"a.png", "a.png"}, []string{"assets/a.png"}, []string{"a.png"}},  // twice needs two
		{[]string{"x/a.png", "y/a.png"}, []string{"z/a.png"}, []string{"y/a.png"}}, // the first matches
		{[]string{"a.png", ""}, nil, []string{"a.png"}},                            // empty ignored
		{nil, []string{"a.png"}, []string{}},                                       // nothing expected
		{[]string{"a.png?x=1"}, []string{"a.png#top"}, []string{}},
	} {
		if got := unmatchedRefs(c.refs, c.against); !slices.Equal(got, c.want) {
			t.Errorf("unmatchedRefs(%q, %q) = %q, want %q", c.refs, c.against, got, c.want)
		}
	}
}

// TestAuditImageRefs: the document's own image references against the
// expected ones, through the tool; refusals; permission.
func TestAuditImageRefs(t *testing.T) {
	s := newFixture(t)
	doc := s.MkDoc(t, s.NB, "/Imported", "![a](assets/cover-20260101120000-abcdefg.png)\n\n"+
		"text [not an image](assets/doc.pdf)\n\n![b](assets/figure.png)\n\n![c](https://example.com/x.png?w=1)\n\n"+
		"![d](assets/cover-20260101120000-hijklmn.png)\n\n![e](assets/my%20pic.png)\n")
	plain := s.MkDoc(t, s.NB, "/Plain", "no images")
	call := func(id string, refs ...string) map[string]any {
		if refs == nil {
			refs = []string{}
		}
		return map[string]any{"action": "audit_image_refs", "id": id, "expectedRefs": refs}
	}
	cases := []struct {
		name           string
		args           map[string]any
		missing, extra []string
		actual         int
	}{
		{"some missing, some extra", call(doc, "assets/cover.png", "assets/figure.png", "/local/missing.png", "assets/my pic.png"),
			[]string{"/local/missing.png"}, []string{"https://example.com/x.png?w=1", "assets/cover-20260101120000-hijklmn.png"}, 5},
		{"all present", call(doc, "cover.png", "figure.png", "https://cdn.example.org/x.png", "cover.png", "assets/my%20pic.png"),
			[]string{}, []string{}, 5},
		{"by a block of it", call(s.Kids(t, doc)[0], "cover.png", "figure.png", "x.png", "cover.png", "my pic.png"), []string{}, []string{}, 5},
		{"nothing expected", call(doc), []string{}, []string{"assets/cover-20260101120000-abcdefg.png", "assets/figure.png",
			"https://example.com/x.png?w=1", "assets/cover-20260101120000-hijklmn.png", "assets/my%20pic.png"}, 5},
		{"no images", call(plain, "a.png"), []string{"a.png"}, []string{}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := s.OK(t, "file", c.args)
			got := func(k string) []string {
				out := []string{}
				for _, v := range res[k].([]any) {
					out = append(out, v.(string))
				}
				return out
			}
			if !slices.Equal(got("missingRefs"), c.missing) {
				t.Errorf("missing %v, want %v", res["missingRefs"], c.missing)
			}
			if !slices.Equal(got("extraRefs"), c.extra) {
				t.Errorf("extra %v, want %v", res["extraRefs"], c.extra)
			}
			expected, _ := c.args["expectedRefs"].([]string)
			if res["actualCount"] != float64(c.actual) || len(got("actualRefs")) != c.actual || res["expectedCount"] != float64(len(expected)) ||
				res["ok"] != (len(c.missing) == 0 && len(c.extra) == 0) || res["id"] != c.args["id"] || res["comparison"] == nil {
				t.Errorf("answer %v", res)
			}
		})
	}

	many := make([]string, 4097)
	for i := range many {
		many[i] = fmt.Sprintf("assets/%d.png", i)
	}
	for name, c := range map[string]struct {
		args map[string]any
		code failure.Code
	}{
		"4097 refs":        {call(doc, many...), failure.InvalidArguments},
		"an empty ref":     {call(doc, "a.png", ""), failure.InvalidArguments},
		"no expectedRefs":  {map[string]any{"action": "audit_image_refs", "id": doc}, failure.InvalidArguments},
		"a malformed id":   {call("../x", "a.png"), failure.InvalidArguments},
		"a missing doc":    {call(tooltest.NewID(), "a.png"), failure.NotFound},
		"a ref not a list": {map[string]any{"action": "audit_image_refs", "id": doc, "expectedRefs": "a.png"}, failure.InvalidArguments},
	} {
		t.Run(name, func(t *testing.T) { s.WantErr(t, "file", c.args, c.code) })
	}
	s.OK(t, "file", call(doc, many[:4096]...))

	// Read permission suffices; a hidden notebook answers as a missing
	// document does.
	s.Policy = &tools.Policy{Notebooks: map[string]tools.Level{s.NB: tools.LevelRead}, Default: tools.LevelNone, AllActions: true, Strict: true, Version: "r"}
	s.OK(t, "file", call(doc, "a.png"))
	s.Policy = &tools.Policy{Notebooks: map[string]tools.Level{s.NB: tools.LevelNone}, Default: tools.LevelRead, AllActions: true, Strict: true, Version: "none"}
	s.WantMissing(t, "file", call(doc, "a.png"), map[string]string{s.NB: tooltest.NewID(), doc: tooltest.NewID()})
}
