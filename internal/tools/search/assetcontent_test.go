package search

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

func TestFulltextAssetContent(t *testing.T) {
	f := tooltest.New(t, testTools)
	ctx := context.Background()
	up := func(name, body string) string {
		res, err := f.C.UploadAsset(ctx, siyuan.AssetUploadRequest{AssetsDirPath: "/assets/", Files: []siyuan.UploadFile{{Name: name, Body: bytes.NewReader([]byte(body))}}})
		if err != nil {
			t.Fatal(err)
		}
		return res.SuccMap[name]
	}
	kept := up("notes.txt", "the narwhal swims\n")
	gone := up("old.md", "a narwhal of old\n")
	call := func(args map[string]any) map[string]any {
		return f.OK(t, "search", tooltest.CopyArgs(args, "action", "fulltext_asset_content"))
	}
	res := call(map[string]any{"query": "narwhal", "sortBy": "updated_asc"})
	if res["total"].(float64) != 2 || res["resolvedArgs"].(map[string]any)["orderBy"].(float64) != 2 {
		t.Fatalf("keyword: %v", res)
	}
	txt := call(map[string]any{"query": "narwhal", "types": map[string]any{".txt": true}})["data"].([]any)
	if len(txt) != 1 || txt[0].(map[string]any)["path"] != kept || txt[0].(map[string]any)["content"] != "the <mark>narwhal</mark> swims\n" {
		t.Fatalf("txt only: %v", txt)
	}
	id := txt[0].(map[string]any)["id"].(string)
	one := call(map[string]any{"assetId": id, "query": "swims"})["assetContent"].(map[string]any)
	if one["content"] != "the narwhal <mark>swims</mark><br>" {
		t.Fatalf("by id: %v", one)
	}
	if rx := call(map[string]any{"query": "narw[a-z]+ of", "methodName": "regex"}); rx["total"].(float64) != 1 {
		t.Fatalf("regex: %v", rx)
	}
	if sq := call(map[string]any{"query": "SELECT * FROM asset_contents_fts_case_insensitive WHERE ext = '.md'", "method": 2}); sq["total"].(float64) != 1 {
		t.Fatalf("sql: %v", sq)
	}
	// A removed asset stays in the kernel's index; it is not shown.
	if err := f.C.RemoveFile(ctx, "/data/"+gone); err != nil {
		t.Fatal(err)
	}
	res = call(map[string]any{"query": "narwhal"})
	if res["total"].(float64) != 1 || res["staleDropped"].(float64) != 1 || res["matchedAssetCount"].(float64) != 2 {
		t.Fatalf("after a removal: %v", res)
	}
	e := f.WantErr(t, "search", map[string]any{"action": "fulltext_asset_content", "assetId": id, "query": "absent"}, failure.NotFound)
	if !strings.Contains(e.Message, "does not match") {
		t.Fatalf("no match by id: %v", e)
	}
	f.WantErr(t, "search", map[string]any{"action": "fulltext_asset_content"}, failure.InvalidArguments)
	f.WantErr(t, "search", map[string]any{"action": "fulltext_asset_content", "query": "DELETE FROM blocks", "method": 2}, failure.InvalidArguments)
}

// TestAssetIDCheckedWhenBound: a malformed assetId is refused with the
// message the hand check gave, and "" is no asset id (query alone reads).
func TestAssetIDCheckedWhenBound(t *testing.T) {
	act := assetContentAction()
	_, err := act.ParseArgs(json.RawMessage(`{"assetId":"nope","query":"x"}`))
	if err == nil || !strings.Contains(err.Error(), `argument "assetId" must be a SiYuan id like 20260812120000-abcdefg, got "nope"`) {
		t.Fatalf("malformed assetId: %v", err)
	}
	if _, err := act.ParseArgs(json.RawMessage(`{"assetId":"","query":"x"}`)); err != nil {
		t.Fatalf("empty assetId with a query: %v", err)
	}
	if _, err := act.ParseArgs(json.RawMessage(`{"assetId":""}`)); err == nil || !strings.Contains(err.Error(), "give query") {
		t.Fatalf("empty assetId alone: %v", err)
	}
}
