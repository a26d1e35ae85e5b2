package tag

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

func toolset() []*tools.Tool { return []*tools.Tool{Tool()} }

func TestNewLabel(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"project", "project", true},
		{"/a/b/", "a/b", true},
		// Trimmed in SiYuan's order: slashes, then spaces.
		{" /a/b/ ", "/a/b/", true},
		{"a#b", "", false},
		{"a*b", "", false},
		{"a&b", "", false},
		{"/", "", false},
		{"  ", "", false},
		// SiYuan checks markers only in an all-ASCII label.
		{"标签#x", "标签#x", true},
	} {
		got, err := newLabelOf(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("newLabelOf(%q) = %q, %v; want %q ok=%v", c.in, got, err, c.want, c.ok)
		}
		var fe *failure.Error
		if err != nil && (!asFailure(err, &fe) || fe.Code != failure.InvalidArguments) {
			t.Errorf("newLabelOf(%q): %v is not invalid_arguments", c.in, err)
		}
	}
}

func asFailure(err error, fe **failure.Error) bool {
	e, ok := err.(*failure.Error)
	*fe = e
	return ok
}

func TestCarriesAndRenamed(t *testing.T) {
	a := renameArgs{"a", "z"}
	for _, c := range []struct {
		label, renamed string
		carried        bool
	}{
		{"a", "z", true}, {"a/b", "z/b", true}, {"ab", "ab", false}, {"A", "A", false}, {"b/a", "b/a", false},
	} {
		if got := carries(c.label, "a", true); got != c.carried {
			t.Errorf("carries(%q) = %v", c.label, got)
		}
		if got := a.renamed(c.label); got != c.renamed {
			t.Errorf("renamed(%q) = %q, want %q", c.label, got, c.renamed)
		}
	}
	if carries("a/b", "a", false) {
		t.Error("a removal touches nested tags")
	}
}

func TestPruneTags(t *testing.T) {
	tree := []siyuan.Tag{
		{Name: "a", Label: "a", Count: 2, Children: []siyuan.Tag{{Name: "b", Label: "a/b", Count: 1, Depth: 1}}},
		{Name: "hid", Label: "hid", Count: 1},
		{Name: "x&amp;y", Label: "x&amp;y", Count: 3},
	}
	got := pruneTags(tree, map[string]int{"a/b": 1, "x&y": 2}, 0)
	b, _ := json.Marshal(got)
	want := `[{"name":"a","label":"a","children":[{"name":"b","label":"a/b","children":null,"type":"","depth":1,"count":1}],"type":"","depth":0,"count":0},` +
		`{"name":"x\u0026amp;y","label":"x\u0026amp;y","children":null,"type":"","depth":0,"count":2}]`
	if string(b) != want {
		t.Errorf("pruneTags = %s\nwant %s", b, want)
	}
	if n := countTags(got); n != 3 {
		t.Errorf("countTags = %d", n)
	}
	if got := unmark("<mark>lt</mark>&amp;x"); got != "lt&x" {
		t.Errorf("unmark = %q", got)
	}
}

// tagged makes a document of paragraphs and returns its paragraph ids.
func tagged(t *testing.T, s *tooltest.Fixture, nb, path string, paras ...string) []string {
	t.Helper()
	doc := s.MkDoc(t, nb, path, strings.Join(paras, "\n\n"))
	return s.Kids(t, doc)
}

func blockTags(t *testing.T, s *tooltest.Fixture, id string) string {
	t.Helper()
	if err := s.C.FlushTransaction(context.Background()); err != nil {
		t.Fatal(err)
	}
	rows, err := s.C.QuerySQL(context.Background(), "SELECT tag FROM blocks WHERE id = '"+id+"'")
	if err != nil || len(rows) != 1 {
		t.Fatalf("tags of %s: %v %v", id, rows, err)
	}
	return fmt.Sprint(rows[0]["tag"])
}

// tagsJSON is the list's tree encoded in the kernel's field order.
func tagsJSON(t *testing.T, res map[string]any) []byte {
	t.Helper()
	raw, _ := json.Marshal(res["tags"])
	var tags []siyuan.Tag
	if err := json.Unmarshal(raw, &tags); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(tags)
	return b
}

func TestList(t *testing.T) {
	s := tooltest.NewStrict(t, false, toolset)
	other, err := s.C.CreateNotebook(context.Background(), "Hidden")
	if err != nil {
		t.Fatal(err)
	}
	tagged(t, s, s.NB, "/T", "#proj# and #proj/a#", "#proj#")
	tagged(t, s, other.ID, "/H", "#proj# #secret# #proj/h#")
	res := s.OK(t, "tag", map[string]any{"action": "list"})
	b := tagsJSON(t, res)
	if !strings.Contains(string(b), `"label":"secret"`) || !strings.Contains(string(b), `"label":"proj","children":[{"name":"a","label":"proj/a","children":null,"type":"tag","depth":1,"count":1},{"name":"h"`) {
		t.Fatalf("list = %s", b)
	}
	// Hidden notebooks' tags are not listed, and counts are of the
	// visible notebooks only.
	s.Policy = &tools.Policy{Notebooks: map[string]tools.Level{other.ID: tools.LevelNone}, Default: tools.LevelRead, AllActions: true, Strict: true, Version: "hide"}
	res = s.OK(t, "tag", map[string]any{"action": "list"})
	b = tagsJSON(t, res)
	if want := `[{"name":"proj","label":"proj","children":[{"name":"a","label":"proj/a","children":null,"type":"tag","depth":1,"count":1}],"type":"tag","depth":0,"count":2}]`; string(b) != want {
		t.Errorf("hidden list = %s\nwant %s", b, want)
	}
	for _, c := range []struct {
		args map[string]any
		want []string
	}{
		{map[string]any{"keyword": "pro"}, []string{"<mark>pro</mark>j", "<mark>pro</mark>j/a"}},
		{map[string]any{"query": "proj a"}, []string{"<mark>proj</mark>/<mark>a</mark>"}},
		{map[string]any{"keyword": "secret"}, []string{}},
	} {
		res := s.OK(t, "tag", tooltest.CopyArgs(c.args, "action", "list"))
		got := []string{}
		for _, x := range res["tags"].([]any) {
			got = append(got, x.(string))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("list %v = %q, want %q", c.args, got, c.want)
		}
		if (len(c.want) == 0) != (res["warning"] != nil) {
			t.Errorf("list %v warning: %v", c.args, res["warning"])
		}
	}
}

// TestListOrderWhileHidden: ordered by count, the tags a call sees are
// ordered by the counts it sees (SiYuan orders them by every notebook's),
// at every level; ordered by name nothing moves.
func TestListOrderWhileHidden(t *testing.T) {
	s := tooltest.NewStrict(t, false, toolset)
	other, err := s.C.CreateNotebook(context.Background(), "Hidden")
	if err != nil {
		t.Fatal(err)
	}
	tagged(t, s, s.NB, "/T", "#alpha# #beta# #p/x# #p/y#", "#beta# #p/y#", "#beta#")
	tagged(t, s, other.ID, "/H", "#alpha# #p/x#", "#alpha# #p/x#", "#alpha# #p/x#", "#alpha# #p/x#", "#alpha# #p/x#")
	order := func(sort int) string {
		res := s.OK(t, "tag", map[string]any{"action": "list", "sort": sort})
		var tags []siyuan.Tag
		raw, _ := json.Marshal(res["tags"])
		if err := json.Unmarshal(raw, &tags); err != nil {
			t.Fatal(err)
		}
		var out []string
		var walk func([]siyuan.Tag)
		walk = func(ts []siyuan.Tag) {
			for _, tg := range ts {
				out = append(out, fmt.Sprintf("%s:%d", tg.Label, tg.Count))
				walk(tg.Children)
			}
		}
		walk(tags)
		return strings.Join(out, " ")
	}
	if got := order(8); !strings.HasPrefix(got, "alpha:6") {
		t.Fatalf("with nothing hidden SiYuan's counts order the tags: %s", got)
	}
	s.Policy = &tools.Policy{Notebooks: map[string]tools.Level{other.ID: tools.LevelNone}, Default: tools.LevelRead, AllActions: true, Strict: true, Version: "hide"}
	for sort, want := range map[int]string{
		8: "beta:3 alpha:1 p:0 p/y:2 p/x:1",
		7: "p:0 p/x:1 p/y:2 alpha:1 beta:3",
		0: "alpha:1 beta:3 p:0 p/x:1 p/y:2",
	} {
		if got := order(sort); got != want {
			t.Errorf("sort %d while hidden: %s, want %s", sort, got, want)
		}
	}
}

func TestCutTags(t *testing.T) {
	tree := []siyuan.Tag{{Label: "a"}, {Label: "b", Children: []siyuan.Tag{{Label: "b/x"}, {Label: "b/y"}}}, {Label: "c"}}
	for _, c := range []struct {
		limit int
		want  int
	}{{100, 3}, {4, 3}, {3, 2}, {1, 2}, {0, 1}} {
		if got := cutTags(tree, c.limit); len(got) != c.want {
			t.Errorf("cut at %d keeps %d top-level tags, want %d", c.limit, len(got), c.want)
		}
	}
}

func TestRename(t *testing.T) {
	s := tooltest.NewStrict(t, false, toolset)
	ids := tagged(t, s, s.NB, "/T", "x #old# y #old/kid# #keep#", "#older#")
	args := map[string]any{"action": "rename", "oldLabel": "old", "newLabel": "new/one"}
	pre := s.Preflight(t, "tag", args, "expectedManifestHash", 1)
	if pre["blockCount"] != float64(1) || pre["notebookCount"] != float64(1) {
		t.Errorf("preflight notes: %v", pre)
	}
	res := s.Commit(t, "tag", args, pre)
	if res["newLabel"] != "new/one" || res["blockCount"] != float64(1) || res["_expect"] != nil {
		t.Errorf("commit: %v", res)
	}
	if got := blockTags(t, s, ids[0]); got != "#new/one# #new/one/kid# #keep#" {
		t.Errorf("renamed: %q", got)
	}
	if got := blockTags(t, s, ids[1]); got != "#older#" {
		t.Errorf("a longer label changed: %q", got)
	}
	s.Replay(t, "tag", args, pre, res)
	// Nothing carries the old tag any more.
	s.WantErr(t, "tag", tooltest.CopyArgs(args, "validateOnly", true), failure.NotFound)
	for _, bad := range []map[string]any{
		{"oldLabel": "a", "newLabel": "a"},
		{"oldLabel": "a", "newLabel": "a/b"},
		{"oldLabel": "a", "newLabel": "x#y"},
		{"oldLabel": " ", "newLabel": "x"},
	} {
		s.InvalidAt(t, "tag", tooltest.CopyArgs(bad, "action", "rename"), false)
	}
}

func TestRenameDrift(t *testing.T) {
	s := tooltest.NewStrict(t, false, toolset)
	ids := tagged(t, s, s.NB, "/T", "#d# one", "#d# two")
	args := map[string]any{"action": "rename", "oldLabel": "d", "newLabel": "e"}
	pre := s.Preflight(t, "tag", args, "expectedManifestHash", 1)
	s.Drifted(t, "tag", args, pre, func() {
		if _, err := s.C.UpdateBlock(context.Background(), ids[1], "markdown", "#d# changed"); err != nil {
			t.Fatal(err)
		}
	})
	if got := blockTags(t, s, ids[0]); got != "#d#" {
		t.Errorf("a stale rename ran: %q", got)
	}
	// A block newly tagged after the preflight changes the manifest too.
	pre = s.Preflight(t, "tag", args, "expectedManifestHash", 1)
	s.Drifted(t, "tag", args, pre, func() { tagged(t, s, s.NB, "/T2", "#d# three") })
}

func TestRemove(t *testing.T) {
	s := tooltest.NewStrict(t, false, toolset)
	ids := tagged(t, s, s.NB, "/T", "a #gone# b #gone/kid# c", "#gone#")
	doc := s.MkDoc(t, s.NB, "/D", "text")
	if err := s.C.SetBlockAttrs(context.Background(), doc, map[string]string{"tags": "gone,stay"}); err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"action": "remove", "label": "gone"}
	pre := s.Preflight(t, "tag", args, "expectedManifestHash", 1)
	if pre["blockCount"] != float64(3) {
		t.Errorf("preflight: %v", pre)
	}
	res := s.Commit(t, "tag", args, pre)
	if got := blockTags(t, s, ids[0]); got != "#gone/kid#" {
		t.Errorf("after remove: %q", got)
	}
	if got := blockTags(t, s, doc); got != "#stay#" {
		t.Errorf("document tags after remove: %q", got)
	}
	s.Replay(t, "tag", args, pre, res)
}

// TestGateEveryNotebook: a rename needs write, a removal delete, on every
// notebook that uses the tag, hidden ones included.
func TestGateEveryNotebook(t *testing.T) {
	s := tooltest.NewStrict(t, false, toolset)
	other, err := s.C.CreateNotebook(context.Background(), "Other")
	if err != nil {
		t.Fatal(err)
	}
	tagged(t, s, s.NB, "/T", "#g#")
	tagged(t, s, other.ID, "/T", "#g# secret text")
	for _, c := range []struct {
		level  tools.Level
		action map[string]any
		ok     bool
	}{
		{tools.LevelWrite, map[string]any{"action": "rename", "oldLabel": "g", "newLabel": "h"}, true},
		{tools.LevelRead, map[string]any{"action": "rename", "oldLabel": "g", "newLabel": "h"}, false},
		{tools.LevelNone, map[string]any{"action": "rename", "oldLabel": "g", "newLabel": "h"}, false},
		{tools.LevelWrite, map[string]any{"action": "remove", "label": "g"}, false},
		{tools.LevelDelete, map[string]any{"action": "remove", "label": "g"}, true},
	} {
		s.Policy = &tools.Policy{Notebooks: map[string]tools.Level{other.ID: c.level}, Default: tools.LevelDelete, AllActions: true, Strict: true, Version: "v" + c.level.String()}
		res, e := s.Call(t, "tag", tooltest.CopyArgs(c.action, "validateOnly", true))
		switch {
		case c.ok && e != nil:
			t.Errorf("%v at %s: %v", c.action, c.level, e)
		case !c.ok && (e == nil || e.Code != failure.PermissionDenied):
			t.Errorf("%v at %s: got %v %v, want permission_denied", c.action, c.level, res, e)
		case !c.ok && strings.Contains(e.Message, "secret"):
			t.Errorf("the refusal shows the hidden notebook's content: %v", e)
		}
	}
}
