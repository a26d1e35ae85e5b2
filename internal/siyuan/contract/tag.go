package contract

// Tags: getTag's tree and searchTag's marked labels over the spans index,
// renameTag (nested labels follow) and removeTag (exact label only). Tags
// are global to the workspace, so every label the checks use carries the
// suite's random tag and no user's label is touched.

import (
	"slices"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

var tagChecks = []check{
	{"TagTree", checkTagTree},
	{"TagSearch", checkTagSearch},
	{"TagRename", checkTagRename},
	{"TagRenameRefused", checkTagRenameRefused},
	{"TagRemove", checkTagRemove},
}

// findTag finds a label in getTag's tree.
func findTag(tags []siyuan.Tag, label string) (siyuan.Tag, bool) {
	for _, t := range tags {
		if t.Label == label {
			return t, true
		}
		if c, ok := findTag(t.Children, label); ok {
			return c, true
		}
	}
	return siyuan.Tag{}, false
}

func (s *suite) tags(t *testing.T) []siyuan.Tag {
	t.Helper()
	tags, err := s.c.GetTag(t.Context(), siyuan.GetTagRequest{Sort: 0, IgnoreMaxListHint: true, App: "sisyphus-contract"})
	must(t, "GetTag", err)
	return tags
}

// blockTag is the blocks.tag column of a block (flushed first).
func (s *suite) blockTag(t *testing.T, id string) string {
	t.Helper()
	s.flush(t)
	rows := s.sqlRows(t, "SELECT tag FROM blocks WHERE id = '"+id+"'")
	if len(rows) == 0 {
		t.Fatalf("block %s is not in the index", id)
	}
	return str(rows[0]["tag"])
}

func checkTagTree(t *testing.T, s *suite) {
	base := "ct" + s.tag
	doc, ids := s.docWithParas(t, "tags-tree", "one #"+base+"# and #"+base+"/sub#", "two #"+base+"#")
	// Real SiYuan sometimes never indexes the spans of a tags attribute
	// set while the new document's own indexing is still queued (blocks.tag
	// shows it, spans do not): flush first.
	s.flush(t)
	must(t, "SetBlockAttrs tags", s.c.SetBlockAttrs(t.Context(), doc, map[string]string{"tags": base + "doc," + base}))
	// Real SiYuan indexes a document's tags attribute as spans a moment
	// after blocks.tag shows it, even past a flush.
	var tags []siyuan.Tag
	s.eventually(t, "the document's tags in GetTag", func() bool {
		tags = s.tags(t)
		_, ok := findTag(tags, base+"doc")
		return ok
	})
	top, ok := findTag(tags, base)
	if !ok {
		t.Fatalf("GetTag has no %s: %+v", base, tags)
	}
	// Three spans: two inline marks and the document's attribute.
	if top.Count != 3 || top.Depth != 0 || top.Type != "tag" || top.Name != base {
		t.Errorf("GetTag %s = %+v, want count 3 at depth 0", base, top)
	}
	if len(top.Children) != 1 || top.Children[0].Label != base+"/sub" || top.Children[0].Name != "sub" ||
		top.Children[0].Depth != 1 || top.Children[0].Count != 1 || top.Children[0].Children != nil {
		t.Errorf("GetTag %s children = %+v, want only sub (count 1, depth 1)", base, top.Children)
	}
	if d, ok := findTag(tags, base+"doc"); !ok || d.Count != 1 || d.Children != nil {
		t.Errorf("GetTag %sdoc = %+v (%v), want the document's tag with count 1", base, d, ok)
	}
	if got := s.blockTag(t, ids[0]); got != "#"+base+"# #"+base+"/sub#" {
		t.Errorf("blocks.tag of the paragraph = %q", got)
	}
	if got := s.blockTag(t, doc); got != "#"+base+"doc# #"+base+"#" {
		t.Errorf("blocks.tag of the document = %q", got)
	}
	spans := s.sqlRows(t, "SELECT block_id, content, type FROM spans WHERE root_id = '"+doc+"' ORDER BY block_id, content")
	var got []string
	for _, r := range spans {
		got = append(got, str(r["block_id"])+" "+str(r["type"])+" "+str(r["content"]))
	}
	slices.Sort(got)
	want := []string{
		doc + " tag " + base, doc + " tag " + base + "doc",
		ids[0] + " textmark tag " + base, ids[0] + " textmark tag " + base + "/sub",
		ids[1] + " textmark tag " + base,
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("spans = %q, want %q", got, want)
	}
}

func checkTagSearch(t *testing.T, s *suite) {
	base := "cs" + s.tag
	s.docWithParas(t, "tags-search", "#"+base+"x# #"+base+"/deep# #"+strings.ToUpper(base)+"q#")
	res, err := s.c.SearchTag(t.Context(), base)
	must(t, "SearchTag", err)
	// Case-insensitive (LIKE), marked, sorted; the upper-case label is
	// marked in its own case.
	want := []string{"<mark>" + strings.ToUpper(base) + "</mark>q", "<mark>" + base + "</mark>/deep", "<mark>" + base + "</mark>x"}
	slices.Sort(want)
	if !slices.Equal(res, want) {
		t.Errorf("SearchTag(%s) = %q, want %q", base, res, want)
	}
	res, err = s.c.SearchTag(t.Context(), base+" deep")
	must(t, "SearchTag two words", err)
	if want := []string{"<mark>" + base + "</mark>/<mark>deep</mark>"}; !slices.Equal(res, want) {
		t.Errorf("SearchTag(%s deep) = %q, want %q", base, res, want)
	}
	res, err = s.c.SearchTag(t.Context(), "nothing"+s.tag)
	must(t, "SearchTag none", err)
	if len(res) != 0 || res == nil {
		t.Errorf("SearchTag(nothing) = %#v, want []", res)
	}
}

func checkTagRename(t *testing.T, s *suite) {
	base := "cr" + s.tag
	doc, ids := s.docWithParas(t, "tags-rename", "a #"+base+"# b #"+base+"/kid#", "c #"+base+"long#", "d #"+strings.ToUpper(base)+"#")
	s.flush(t) // see checkTagTree
	must(t, "SetBlockAttrs tags", s.c.SetBlockAttrs(t.Context(), doc, map[string]string{"tags": base + ",other" + s.tag}))
	before := s.attrs(t, ids[0])["updated"]
	s.flush(t)
	must(t, "RenameTag", s.c.RenameTag(t.Context(), base, "/ n"+s.tag+"/x /"))
	nw := "n" + s.tag + "/x"
	if got := s.blockTag(t, ids[0]); got != "#"+nw+"# #"+nw+"/kid#" {
		t.Errorf("renamed paragraph's tags = %q, want the label and its nested one renamed", got)
	}
	if k := s.kramdown(t, ids[0]); !strings.Contains(k, "#"+nw+"#") || strings.Contains(k, "#"+base) {
		t.Errorf("renamed paragraph's kramdown = %q", k)
	}
	if got := s.blockTag(t, ids[1]); got != "#"+base+"long#" {
		t.Errorf("a longer label that contains the old one = %q, want it unchanged", got)
	}
	if got := s.blockTag(t, ids[2]); got != "#"+strings.ToUpper(base)+"#" {
		t.Errorf("the label in another case = %q, want it unchanged", got)
	}
	if got := s.blockTag(t, doc); got != "#"+nw+"# #other"+s.tag+"#" {
		t.Errorf("the document's tags = %q, want its label renamed in place", got)
	}
	if after := s.attrs(t, ids[0])["updated"]; after != before {
		t.Errorf("updated %q → %q: renameTag does not stamp the blocks it rewrites", before, after)
	}
	tags := s.tags(t)
	if _, ok := findTag(tags, base); ok {
		t.Errorf("GetTag still lists %s", base)
	}
	if n, ok := findTag(tags, "n"+s.tag); !ok || len(n.Children) != 1 || n.Children[0].Label != nw || n.Count != 0 {
		t.Errorf("GetTag n%s = %+v (%v), want a parent of count 0 with x under it", s.tag, n, ok)
	}
	// A nested label renamed alone leaves its parent.
	must(t, "RenameTag nested", s.c.RenameTag(t.Context(), nw+"/kid", "k"+s.tag))
	if got := s.blockTag(t, ids[0]); got != "#"+nw+"# #k"+s.tag+"#" {
		t.Errorf("after renaming the nested label: %q", got)
	}
	must(t, "RenameTag nested back", s.c.RenameTag(t.Context(), "k"+s.tag, nw+"/kid"))
	// A label nobody uses and a rename to itself succeed and change nothing.
	must(t, "RenameTag unused", s.c.RenameTag(t.Context(), "unused"+s.tag, "u"+s.tag))
	must(t, "RenameTag same", s.c.RenameTag(t.Context(), nw, nw))
	if got := s.blockTag(t, ids[0]); got != "#"+nw+"# #"+nw+"/kid#" {
		t.Errorf("after no-op renames: %q", got)
	}
}

func checkTagRenameRefused(t *testing.T, s *suite) {
	for _, tc := range []struct{ newLabel, msg string }{
		{"", "Field [newLabel] must not be empty"},
		{"  ", "Field [newLabel] must not be empty"},
		{"a#b", "Do not include Markdown syntax marker [#]"},
		{"a*b", "Do not include Markdown syntax marker [*]"},
		{"/", "Tag cannot be empty"},
	} {
		err := s.c.RenameTag(t.Context(), "any"+s.tag, tc.newLabel)
		api := apiError(t, "RenameTag "+tc.newLabel, err)
		if api.Code != -1 || api.Msg != tc.msg {
			t.Errorf("RenameTag(%q) = %d %q, want -1 %q", tc.newLabel, api.Code, api.Msg, tc.msg)
		}
	}
}

func checkTagRemove(t *testing.T, s *suite) {
	base := "cd" + s.tag
	doc, ids := s.docWithParas(t, "tags-remove", "keep #"+base+"# and #"+base+"/kid# end", "#"+base+"more#")
	s.flush(t) // see checkTagTree
	must(t, "SetBlockAttrs tags", s.c.SetBlockAttrs(t.Context(), doc, map[string]string{"tags": "x" + s.tag + "," + base}))
	s.flush(t)
	must(t, "RemoveTag", s.c.RemoveTag(t.Context(), base))
	if got := s.blockTag(t, ids[0]); got != "#"+base+"/kid#" {
		t.Errorf("paragraph's tags after remove = %q, want only the nested label", got)
	}
	k := s.kramdown(t, ids[0])
	if strings.Contains(k, "#"+base+"#") || !strings.HasPrefix(k, "keep ") || !strings.Contains(k, " and #"+base+"/kid# end") {
		t.Errorf("kramdown after remove = %q, want the mark and its text gone, the rest kept", k)
	}
	if got := s.blockTag(t, ids[1]); got != "#"+base+"more#" {
		t.Errorf("longer label after remove = %q, want it kept", got)
	}
	if got := s.blockTag(t, doc); got != "#x"+s.tag+"#" {
		t.Errorf("document's tags after remove = %q", got)
	}
	must(t, "RemoveTag unused", s.c.RemoveTag(t.Context(), "unused"+s.tag))
	// The last label of a document goes: SiYuan keeps an empty tags="".
	must(t, "RemoveTag last", s.c.RemoveTag(t.Context(), "x"+s.tag))
	s.flush(t)
	rows := s.sqlRows(t, "SELECT tag, ial FROM blocks WHERE id = '"+doc+"'")
	if len(rows) == 0 || str(rows[0]["tag"]) != "" || !strings.Contains(str(rows[0]["ial"]), `tags=""`) {
		t.Errorf("document after its last tag went: %v", rows)
	}
}
