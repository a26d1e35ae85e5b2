package search

import (
	"context"
	"slices"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

func listIDs(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(map[string]any)["id"].(string))
	}
	return out
}

// TestGetBacklinks: references and mentions of "alpha paragraph", scoped,
// filtered, and never from a hidden notebook.
func TestGetBacklinks(t *testing.T) {
	f := tooltest.New(t, testTools)
	ctx := context.Background()
	target := f.Blocks[1]
	hidden, err := f.C.CreateNotebook(ctx, "Hidden")
	if err != nil {
		t.Fatal(err)
	}
	mk := func(nb, path, md string) (string, []string) {
		doc, err := f.C.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: nb, Path: path, Markdown: md})
		if err != nil {
			t.Fatal(err)
		}
		kids, err := f.C.GetChildBlocks(ctx, doc)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, k := range kids {
			ids = append(ids, k.ID)
		}
		return doc, ids
	}
	src, s := mk(f.NB, "/Src", "see (("+target+" 'the alpha')) here\n\nwe said alpha paragraph once\n\nother (("+target+" 'again')) words")
	_, h := mk(hidden.ID, "/H", "hidden (("+target+" 'x'))\n\nhidden alpha paragraph")
	if err := f.C.FlushTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	res := f.OK(t, "search", map[string]any{"action": "get_backlinks", "id": target})
	links, mentions := listIDs(res["backlinks"]), listIDs(res["backmentions"])
	slices.Sort(links)
	if want := sorted(s[0], s[2], h[0]); !slices.Equal(links, want) {
		t.Fatalf("backlinks %v, want %v", links, want)
	}
	if want := sorted(s[1], h[1]); !slices.Equal(sorted(mentions...), want) {
		t.Fatalf("backmentions %v, want %v (the target itself and its referrers are no mentions)", mentions, want)
	}
	kw := f.OK(t, "search", map[string]any{"action": "get_backlinks", "id": target, "keyword": "other", "mode": "links"})
	if got := listIDs(kw["backlinks"]); len(got) != 1 || got[0] != s[2] || len(kw["backmentions"].([]any)) != 0 {
		t.Fatalf("keyword, links only: %v", kw)
	}
	sc := f.OK(t, "search", map[string]any{"action": "get_backlinks", "id": target, "scopeRootId": src, "mode": "mentions"})
	if got := listIDs(sc["backmentions"]); len(got) != 1 || got[0] != s[1] || sc["refTreeID"] != src {
		t.Fatalf("scoped mentions: %v", sc)
	}
	f.Policy = &tools.Policy{Notebooks: map[string]tools.Level{hidden.ID: tools.LevelNone}, Default: tools.LevelRead, AllActions: true}
	res = f.OK(t, "search", map[string]any{"action": "get_backlinks", "id": target})
	if got := append(listIDs(res["backlinks"]), listIDs(res["backmentions"])...); slices.Contains(got, h[0]) || slices.Contains(got, h[1]) || res["linkRefsCount"].(float64) != 2 {
		t.Fatalf("hidden notebook shown: %v", res)
	}
	f.WantMissing(t, "search", map[string]any{"action": "get_backlinks", "id": h[0]}, map[string]string{h[0]: tooltest.NewID()})
	f.Policy = nil
	f.WantErr(t, "search", map[string]any{"action": "get_backlinks", "id": "20200101000000-aaaaaaa"}, failure.NotFound)
}
