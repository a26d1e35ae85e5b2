package fs

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

func TestFsTree(t *testing.T) {
	s := newStrictFixture(t, false)
	s.fsNotebook(t, "T", "/A", "/A/B", "/A/B/C", "/A/B/C/D", "/E")
	full := s.OK(t, "fs", map[string]any{"action": "tree", "path": "/T"})
	tree := full["tree"].([]any)
	a := tree[0].(map[string]any)
	b := a["children"].([]any)[0].(map[string]any)
	c := b["children"].([]any)[0].(map[string]any)
	if len(tree) != 2 || a["path"] != "/T/A" || b["path"] != "/T/A/B" || c["path"] != "/T/A/B/C" || c["children"].([]any)[0].(map[string]any)["children"] != float64(0) ||
		full["maxDepth"] != float64(3) || full["partial"] != false || len(full["errors"].([]any)) != 0 {
		t.Fatalf("tree /T: %v", full)
	}
	if e := tree[1].(map[string]any); e["path"] != "/T/E" || len(e["children"].([]any)) != 0 {
		t.Fatalf("leaf: %v", e)
	}
	for _, tc := range []struct {
		path  string
		depth int
		check func(tree []any) bool
	}{
		{"/T", 0, func(tr []any) bool { return tr[0].(map[string]any)["children"] == float64(1) }},
		{"/T/A", 1, func(tr []any) bool {
			b := tr[0].(map[string]any)
			return b["path"] == "/T/A/B" && len(b["children"].([]any)) == 1 && b["children"].([]any)[0].(map[string]any)["children"] == float64(1)
		}},
		{"/", 1, func(tr []any) bool {
			return tr[0].(map[string]any)["path"] == "/AGENTS.md" && tr[1].(map[string]any)["path"] == "/USER_RULES.md"
		}},
	} {
		got := s.OK(t, "fs", map[string]any{"action": "tree", "path": tc.path, "maxDepth": tc.depth})
		if !tc.check(got["tree"].([]any)) {
			t.Errorf("tree %s depth %d: %v", tc.path, tc.depth, got)
		}
	}
	// A closed notebook is listed, marked, with its count.
	closed, _ := s.fsNotebook(t, "Shut", "/X")
	if err := s.C.CloseNotebook(context.Background(), closed); err != nil {
		t.Fatal(err)
	}
	var shut map[string]any
	for _, n := range s.OK(t, "fs", map[string]any{"action": "tree", "path": "/"})["tree"].([]any) {
		if n.(map[string]any)["id"] == closed {
			shut = n.(map[string]any)
		}
	}
	if shut == nil || shut["closed"] != true {
		t.Fatalf("closed notebook in tree /: %v", shut)
	}
	s.WantErr(t, "fs", map[string]any{"action": "tree", "path": "/T/Nope"}, failure.NotFound)
	s.WantErr(t, "fs", map[string]any{"action": "tree", "path": "/T", "maxDepth": 21}, failure.InvalidArguments)
}

// Hidden notebooks never appear in tree or search from /.
func TestFsTreeAndSearchHideNotebooks(t *testing.T) {
	s := newStrictFixture(t, false)
	hidden, _ := s.fsNotebook(t, "Hidden", "/Secret")
	pol := tools.Unrestricted()
	pol.Notebooks = map[string]tools.Level{hidden: tools.LevelNone}
	ctx := tools.WithPolicy(context.Background(), pol)
	for _, args := range []map[string]any{
		{"action": "tree", "path": "/"},
		{"action": "search", "path": "/", "query": "text of"},
	} {
		raw, _ := json.Marshal(args)
		res, err := s.R.Call(ctx, "fs", raw)
		if err != nil {
			t.Fatal(err)
		}
		if text := fmt.Sprint(res); strings.Contains(text, "Hidden") || strings.Contains(text, "Secret") || strings.Contains(text, hidden) {
			t.Fatalf("%v shows the hidden notebook: %s", args, text)
		}
	}
	if _, err := s.R.Call(ctx, "fs", json.RawMessage(`{"action":"tree","path":"/Hidden"}`)); err == nil {
		t.Fatal("tree of a hidden notebook answered")
	}
}

func TestFsSearch(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	nb, ids := s.fsNotebook(t, "S", "/One", "/One/Two")
	if _, err := s.C.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: nb, Path: "/Many", Markdown: "alpha 1\n\nALPHA 2\n\nbeta\n\nalpha 3"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args  map[string]any
		total int
		first string
	}{
		{map[string]any{"path": "/S", "query": "alpha"}, 3, "/S/Many"},
		{map[string]any{"path": "/S", "query": "alpha", "caseSensitive": true}, 2, "/S/Many"},
		{map[string]any{"path": "/S", "query": `^ALPHA \d$`, "regex": true, "caseSensitive": true}, 1, "/S/Many"},
		{map[string]any{"path": "/S/One", "query": "text of"}, 2, "/S/One"},
		{map[string]any{"path": "/S/One/Two", "query": "text of"}, 1, "/S/One/Two"},
		{map[string]any{"path": "/S", "query": "nothing like it"}, 0, ""},
	} {
		args := tc.args
		args["action"] = "search"
		got := s.OK(t, "fs", args)
		data := got["data"].([]any)
		if got["total"] != float64(tc.total) || tc.total > 0 && data[0].(map[string]any)["path"] != tc.first {
			t.Errorf("search %v: %v", tc.args, got)
		}
	}
	page := s.OK(t, "fs", map[string]any{"action": "search", "path": "/S", "query": "alpha", "pageSize": 2, "page": 2})
	if page["total"] != float64(3) || len(page["data"].([]any)) != 1 || page["hasNextPage"] != false {
		t.Fatalf("page 2: %v", page)
	}
	line := s.OK(t, "fs", map[string]any{"action": "search", "path": "/S/One/Two", "query": "text"})["data"].([]any)[0].(map[string]any)
	if line["line"].(float64) < 1 || line["text"] != "text of /One/Two" {
		t.Fatalf("match line: %v (doc %s)", line, ids["/One/Two"])
	}
	s.WantErr(t, "fs", map[string]any{"action": "search", "path": "/S", "query": "(", "regex": true}, failure.InvalidArguments)
	s.WantErr(t, "fs", map[string]any{"action": "search", "path": "/S", "query": ""}, failure.InvalidArguments)
	s.WantErr(t, "fs", map[string]any{"action": "search", "path": "/S", "query": "x", "pageSize": 201}, failure.InvalidArguments)
	s.WantErr(t, "fs", map[string]any{"action": "search", "path": "/S/Nope", "query": "x"}, failure.NotFound)
}

func TestMatchLines(t *testing.T) {
	long := ""
	for range 300 {
		long += "é"
	}
	m, _ := matcher("é", false, false)
	got := matchLines("/p", "a\n"+long+"\r\nb é", m)
	if len(got) != 2 || got[0].Line != 2 || !got[0].TextTruncated || got[0].OriginalTextLength != 300 || len([]rune(got[0].Text)) != maxMatchRunes || got[1].Line != 3 {
		t.Fatalf("matchLines: %+v", got)
	}
	if _, err := matcher("a(?=b)", true, false); err == nil {
		t.Fatal("look-ahead compiled")
	}
}

// A tree past its listing bound is cut short, not failed: deeper
// documents keep their child count.
func TestFsTreeBounded(t *testing.T) {
	s := newStrictFixture(t, false)
	nb, _ := s.fsNotebook(t, "Big", "/A", "/A/A1", "/A/A1/A2", "/B", "/B/B1")
	env := &tools.Env{Kernel: s.C}
	for _, tc := range []struct {
		max  int32
		cut  bool
		want []string // subtrees are listed concurrently: which one the bound reaches first varies
	}{
		{2, true, []string{"[A:[A1:1] B:1]", "[A:1 B:[B1:[]]]"}},
		{96, false, []string{"[A:[A1:[A2:[]]] B:[B1:[]]]"}},
	} {
		l := newLister(tc.max)
		nodes, errs, err := walk(context.Background(), env, l, scope{Notebook: nb, Storage: "/", Path: humanPathOf("/Big")}, 3)
		if err != nil || len(errs) != 0 {
			t.Fatal(err, errs)
		}
		if got := shape(nodes); !slices.Contains(tc.want, got) || l.cut.Load() != tc.cut {
			t.Errorf("bound %d: %s (cut %v), want %s (cut %v)", tc.max, got, l.cut.Load(), tc.want, tc.cut)
		}
	}
}

// shape renders a tree as name:children, children a count or a list.
func shape(nodes []node) string {
	parts := make([]string, len(nodes))
	for i, n := range nodes {
		switch c := n.Children.(type) {
		case []node:
			parts[i] = n.Name + ":" + shape(c)
		default:
			parts[i] = fmt.Sprintf("%s:%v", n.Name, c)
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// TestSearchReadsExportSettingsOnce: while a notebook is hidden a search
// renders each document's export itself, from SiYuan's export settings:
// they are read once per search, not once per document.
func TestSearchReadsExportSettingsOnce(t *testing.T) {
	s := newStrictFixture(t, false)
	hidden, _ := s.fsNotebook(t, "Hidden", "/Secret")
	s.fsNotebook(t, "Few", "/A", "/B")
	s.fsNotebook(t, "Many", "/A", "/B", "/C", "/D", "/E", "/F")
	var mu sync.Mutex
	asked := map[string]int{}
	s.SetHook(func(_ http.ResponseWriter, r *http.Request) bool {
		mu.Lock()
		asked[r.URL.Path]++
		mu.Unlock()
		return false
	})
	pol := tools.Unrestricted()
	pol.Notebooks = map[string]tools.Level{hidden: tools.LevelNone}
	ctx := tools.WithPolicy(context.Background(), pol)
	count := func(path string) map[string]int {
		mu.Lock()
		clear(asked)
		mu.Unlock()
		raw, _ := json.Marshal(map[string]any{"action": "search", "path": path, "query": "text of"})
		res, err := s.R.Call(ctx, "fs", raw)
		if err != nil {
			t.Fatal(err)
		}
		if res.(map[string]any)["searchedDocuments"] == 0 {
			t.Fatalf("search %s searched nothing: %v", path, res)
		}
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(asked)
	}
	few, many := count("/Few"), count("/Many")
	if few["/api/system/getConf"] != 1 || many["/api/system/getConf"] != 1 {
		t.Fatalf("SiYuan's configuration read per search: %d for 2 documents, %d for 6", few["/api/system/getConf"], many["/api/system/getConf"])
	}
}
