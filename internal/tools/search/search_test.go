package search

import (
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

func testTools() []*tools.Tool { return []*tools.Tool{Tool()} }

func TestSearch(t *testing.T) {
	f := tooltest.New(t, testTools)
	ft := f.OK(t, "search", map[string]any{"action": "fulltext", "query": "zebra"})
	blocks := ft["blocks"].([]any)
	if len(blocks) != 1 || blocks[0].(map[string]any)["id"] != f.Blocks[5] {
		t.Fatalf("fulltext: %v", ft)
	}
	all := f.OK(t, "search", map[string]any{"action": "query_sql", "stmt": "SELECT id FROM blocks WHERE root_id='" + f.Doc + "' ORDER BY id;", "maxRows": 3})
	if all["truncated"] != true || all["rowCount"].(float64) != 3 {
		t.Fatalf("query_sql truncation: %v", all)
	}
	few := f.OK(t, "search", map[string]any{"action": "query_sql", "stmt": "/* heads */ WITH h AS (SELECT id FROM blocks WHERE type='h' AND root_id='" + f.Doc + "') SELECT count(*) AS n FROM h"})
	if few["truncated"] != false || few["rows"].([]any)[0].(map[string]any)["n"].(float64) != 3 {
		t.Fatalf("query_sql with: %v", few)
	}
}

// TestFulltextPathsMustApply: a paths filter that names nothing is refused,
// never dropped into a whole-workspace search (issue 9).
func TestFulltextPathsMustApply(t *testing.T) {
	f := tooltest.New(t, testTools)
	where := f.Where(t, f.Doc)
	ok := f.OK(t, "search", map[string]any{"action": "fulltext", "query": "zebra", "paths": []string{f.NB + where.Path}})
	if len(ok["blocks"].([]any)) != 1 {
		t.Fatalf("a valid filter: %v", ok)
	}
	for _, bad := range [][]string{
		{"20200101000000-aaaaaaa"},
		{f.NB + "/20200101000000-aaaaaaa.sy"},
		{f.NB + "/not-a-path"},
		{f.NB, "nonsense"},
	} {
		f.WantErr(t, "search", map[string]any{"action": "fulltext", "query": "zebra", "paths": bad}, failure.NotFound)
	}
}

// TestHitOfDropsRepeatedChildren: real SiYuan's index briefly holds a new
// document's rows twice, and a grouped hit then lists a block twice; it is
// shown once, in the kernel's order.
func TestHitOfDropsRepeatedChildren(t *testing.T) {
	b := siyuan.Block{ID: "20260101000000-dddddd1", Children: []*siyuan.Block{
		{ID: "20260101000000-aaaaaa1"}, {ID: "20260101000000-bbbbbb1"}, {ID: "20260101000000-aaaaaa1"}, {ID: "20260101000000-bbbbbb1"},
	}}
	h := hitOf(b)
	if len(h.Children) != 2 || h.Children[0].ID != "20260101000000-aaaaaa1" || h.Children[1].ID != "20260101000000-bbbbbb1" {
		t.Fatalf("children %+v", h.Children)
	}
}
