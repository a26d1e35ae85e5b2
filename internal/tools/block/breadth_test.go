package block

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

func TestBreadthReads(t *testing.T) {
	f := tooltest.New(t, testTools)
	gone := tooltest.NewID()
	// Blocks: # One, alpha, ## One.A, beta, # Two, gamma.
	for _, tc := range []struct {
		name string
		args map[string]any
		want func(t *testing.T, res map[string]any)
	}{
		{"breadcrumb under two headings", map[string]any{"action": "breadcrumb", "id": f.Blocks[3]}, func(t *testing.T, res map[string]any) {
			var names []string
			for _, c := range res["breadcrumb"].([]any) {
				names = append(names, c.(map[string]any)["name"].(string))
			}
			if strings.Join(names, "|") != "Tools/Guide|One|One.A|" {
				t.Fatalf("crumbs %v", names)
			}
		}},
		{"word count of two paragraphs", map[string]any{"action": "word_count", "ids": []string{f.Blocks[1], f.Blocks[3]}}, func(t *testing.T, res map[string]any) {
			st := res["stat"].(map[string]any)
			if st["wordCount"] != float64(4) || st["blockCount"] != float64(2) || st["runeCount"] != float64(27) {
				t.Fatalf("stat %v", st)
			}
		}},
		{"docs info of a block answers its document", map[string]any{"action": "docs_info", "id": f.Blocks[1]}, func(t *testing.T, res map[string]any) {
			d := res["documents"].([]any)[0].(map[string]any)
			if d["rootID"] != f.Doc || d["name"] != "Guide" || d["subFileCount"] != float64(1) || res["count"] != float64(1) {
				t.Fatalf("info %v", res)
			}
		}},
		{"batch keeps order, duplicates and per-item errors", map[string]any{"action": "batch_kramdown", "ids": []string{f.Blocks[1], gone, f.Blocks[1]}}, func(t *testing.T, res map[string]any) {
			items := res["items"].([]any)
			if len(items) != 3 || res["succeeded"] != float64(2) || res["failed"] != float64(1) || res["partial"] != true {
				t.Fatalf("batch %v", res)
			}
			first, miss := items[0].(map[string]any), items[1].(map[string]any)
			if first["id"] != f.Blocks[1] || !strings.HasPrefix(first["kramdown"].(string), "alpha paragraph") ||
				miss["ok"] != false || miss["error"].(map[string]any)["code"] != string(failure.NotFound) || miss["error"].(map[string]any)["type"] != "not_found" {
				t.Fatalf("items %v", items)
			}
			if info := res["readInfo"].(map[string]any); info["coverage"] != "partial" || len(info["limitations"].([]any)) != 1 {
				t.Fatalf("batch readInfo %v", res)
			}
		}},
		{"a batch read whole says nothing more", map[string]any{"action": "batch_kramdown", "ids": []string{f.Blocks[1]}}, func(t *testing.T, res map[string]any) {
			if res["failed"] != float64(0) || res["readInfo"] != nil {
				t.Fatalf("batch %v", res)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.want(t, f.OK(t, "block", tc.args)) })
	}
	for _, tc := range []struct {
		name string
		args map[string]any
		code failure.Code
	}{
		{"breadcrumb of nothing", map[string]any{"action": "breadcrumb", "id": gone}, failure.NotFound},
		{"word count of nothing", map[string]any{"action": "word_count", "ids": []string{f.Blocks[1], gone}}, failure.NotFound},
		{"docs info of nothing", map[string]any{"action": "docs_info", "ids": []string{gone}}, failure.NotFound},
		{"docs info with id and ids", map[string]any{"action": "docs_info", "id": f.Doc, "ids": []string{f.Doc}}, failure.InvalidArguments},
		{"batch of 21", map[string]any{"action": "batch_kramdown", "ids": make21(f.Blocks[0])}, failure.InvalidArguments},
		{"batch of none", map[string]any{"action": "batch_kramdown", "ids": []string{}}, failure.InvalidArguments},
		{"batch with a bad mode", map[string]any{"action": "batch_kramdown", "ids": []string{f.Blocks[0]}, "mode": "html"}, failure.InvalidArguments},
	} {
		t.Run(tc.name, func(t *testing.T) { f.WantErr(t, "block", tc.args, tc.code) })
	}
}

func make21(id string) []string {
	out := make([]string, 21)
	for i := range out {
		out[i] = id
	}
	return out
}

// TestBreadthReadsFilterNotebooks: an unreadable notebook's blocks are
// per-item not_found in a batch (like a missing block) and never listed
// among recent blocks.
func TestBreadthReadsFilterNotebooks(t *testing.T) {
	f := tooltest.New(t, testTools)
	ctx := context.Background()
	other, err := f.C.CreateNotebook(ctx, "Open")
	if err != nil {
		t.Fatal(err)
	}
	open := f.MkDoc(t, other.ID, "/Seen", "seen paragraph")
	seen := f.Kids(t, open)[0]
	if err := f.C.FlushTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	f.Policy = &tools.Policy{Notebooks: map[string]tools.Level{f.NB: tools.LevelNone}, Default: tools.LevelRead, AllActions: true, Strict: true, Version: "t"}
	res := f.OK(t, "block", map[string]any{"action": "batch_kramdown", "ids": []string{f.Blocks[1], seen}})
	items := res["items"].([]any)
	hidden, shown := items[0].(map[string]any), items[1].(map[string]any)
	if hidden["ok"] != false || hidden["error"].(map[string]any)["code"] != string(failure.NotFound) || shown["ok"] != true {
		t.Fatalf("batch %v", res)
	}
	rec := f.OK(t, "block", map[string]any{"action": "recent_updated"})
	if strings.Contains(encode(t, rec), f.NB) || !strings.Contains(encode(t, rec), seen) {
		t.Fatalf("recent shows the hidden notebook or misses the open one: %v", rec)
	}
	if rec["grouping"] != "document" || rec["documentCount"].(float64) < 1 || rec["count"].(float64) < 1 {
		t.Fatalf("recent %v", rec)
	}
	one := f.OK(t, "block", map[string]any{"action": "recent_updated", "count": 1})
	if one["count"] != float64(1) || len(one["items"].([]any)) != 1 {
		t.Fatalf("recent count 1: %v", one)
	}
}

func encode(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
