package search

import (
	"context"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// TestListInvalidRefs: holders of references to removed blocks are listed
// and paged; those of a hidden notebook are not, nor counted.
func TestListInvalidRefs(t *testing.T) {
	f := tooltest.New(t, testTools)
	ctx := context.Background()
	hidden, err := f.C.CreateNotebook(ctx, "Hidden")
	if err != nil {
		t.Fatal(err)
	}
	target := f.Blocks[1]
	var holders []string
	for _, nb := range []string{f.NB, f.NB, hidden.ID} {
		doc, err := f.C.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: nb, Path: "/Refs", Markdown: "see ((" + target + " 'alpha'))"})
		if err != nil {
			t.Fatal(err)
		}
		kids, err := f.C.GetChildBlocks(ctx, doc)
		if err != nil {
			t.Fatal(err)
		}
		holders = append(holders, kids[0].ID)
	}
	if got := f.OK(t, "search", map[string]any{"action": "list_invalid_refs"}); got["total"].(float64) != 0 {
		t.Fatalf("before the target is removed: %v", got)
	}
	if _, err := f.C.DeleteBlock(ctx, target); err != nil {
		t.Fatal(err)
	}
	if err := f.C.FlushTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	all := f.OK(t, "search", map[string]any{"action": "list_invalid_refs"})
	if all["total"].(float64) != 3 {
		t.Fatalf("unrestricted: %v", all)
	}
	f.Policy = &tools.Policy{Notebooks: map[string]tools.Level{hidden.ID: tools.LevelNone}, Default: tools.LevelRead, AllActions: true}
	p1 := f.OK(t, "search", map[string]any{"action": "list_invalid_refs", "pageSize": 1})
	p2 := f.OK(t, "search", map[string]any{"action": "list_invalid_refs", "pageSize": 1, "page": 2})
	if p1["total"].(float64) != 2 || p1["pageCount"].(float64) != 2 || p1["hasNextPage"] != true || p1["matchedRootCount"].(float64) != 2 {
		t.Fatalf("page 1 with a hidden notebook: %v", p1)
	}
	got := map[string]bool{}
	for _, p := range []map[string]any{p1, p2} {
		for _, b := range p["data"].([]any) {
			got[b.(map[string]any)["id"].(string)] = true
		}
	}
	if !got[holders[0]] || !got[holders[1]] || got[holders[2]] {
		t.Fatalf("listed %v, want %v without the hidden %s", got, holders[:2], holders[2])
	}
}
