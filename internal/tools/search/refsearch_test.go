package search

import (
	"context"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// TestSearchRefs: candidates for a ref typed in the Guide's first
// paragraph; a hidden notebook's blocks are not among them.
func TestSearchRefs(t *testing.T) {
	f := tooltest.New(t, testTools)
	ctx := context.Background()
	hidden, err := f.C.CreateNotebook(ctx, "Hidden")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.C.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: hidden.ID, Path: "/H", Markdown: "a zebra in hiding"}); err != nil {
		t.Fatal(err)
	}
	if err := f.C.FlushTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	call := func(args map[string]any) map[string]any {
		return f.OK(t, "search", tooltest.CopyArgs(args, "action", "search_refs"))
	}
	res := call(map[string]any{"id": f.Blocks[1], "rootID": f.Doc, "k": "zebra", "reqId": "r1"})
	if got := listIDs(res["blocks"]); len(got) != 2 || res["reqId"] != "r1" || res["newDoc"] != true {
		t.Fatalf("unrestricted: %v", res)
	}
	f.Policy = &tools.Policy{Notebooks: map[string]tools.Level{hidden.ID: tools.LevelNone}, Default: tools.LevelRead, AllActions: true}
	res = call(map[string]any{"id": f.Blocks[1], "rootID": f.Doc, "k": "zebra"})
	got := res["blocks"].([]any)
	if len(got) != 1 || got[0].(map[string]any)["id"] != f.Blocks[5] || got[0].(map[string]any)["refText"] != "gamma paragraph with a unique zebra word" {
		t.Fatalf("with the other notebook hidden: %v", res)
	}
	// The block itself is no candidate.
	if got := listIDs(call(map[string]any{"id": f.Blocks[5], "k": "zebra"})["blocks"]); len(got) != 0 {
		t.Fatalf("the current block is a candidate: %v", got)
	}
	f.WantErr(t, "search", map[string]any{"action": "search_refs", "id": "x"}, failure.InvalidArguments)
}
