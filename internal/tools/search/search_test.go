package search

import (
	"testing"

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
