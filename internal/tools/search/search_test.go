package search

import (
	"context"
	"fmt"
	"strings"
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

// TestSearchReadInfo: a row limit, a page and hidden notebooks each make a
// search partial; the next step is the same search, further on.
func TestSearchReadInfo(t *testing.T) {
	f := tooltest.New(t, testTools)
	stmt := "SELECT id FROM blocks WHERE root_id='" + f.Doc + "' ORDER BY id"
	cut := f.OK(t, "search", map[string]any{"action": "query_sql", "stmt": stmt, "maxRows": 3})
	if info := cut["readInfo"].(map[string]any); info["coverage"] != "partial" {
		t.Fatalf("query_sql readInfo: %v", cut)
	}
	step := cut["nextSteps"].([]any)[0].(map[string]any)
	if args := step["arguments"].(map[string]any); step["tool"] != "search" || args["action"] != "query_sql" || args["stmt"] != stmt || args["maxRows"].(float64) != 1000 {
		t.Fatalf("query_sql nextSteps: %v", step)
	}
	whole := f.OK(t, "search", map[string]any{"action": "query_sql", "stmt": stmt})
	if _, ok := whole["readInfo"]; ok {
		t.Fatalf("a whole answer has readInfo: %v", whole)
	}

	page := f.OK(t, "search", map[string]any{"action": "fulltext", "query": "paragraph", "pageSize": 1})
	if page["hasNextPage"] != true || page["readInfo"].(map[string]any)["coverage"] != "partial" {
		t.Fatalf("fulltext page: %v", page)
	}
	args := page["nextSteps"].([]any)[0].(map[string]any)["arguments"].(map[string]any)
	if args["action"] != "fulltext" || args["page"].(float64) != 2 || args["pageSize"].(float64) != 1 || args["query"] != "paragraph" {
		t.Fatalf("fulltext nextSteps: %v", args)
	}
	next := f.OK(t, "search", args)
	if next["page"].(float64) != 2 || len(next["blocks"].([]any)) != 1 {
		t.Fatalf("fulltext next page: %v", next)
	}
	if one := f.OK(t, "search", map[string]any{"action": "fulltext", "query": "zebra"}); one["readInfo"] != nil {
		t.Fatalf("a whole search has readInfo: %v", one)
	}

	hidden, err := f.C.CreateNotebook(context.Background(), "Hidden")
	if err != nil {
		t.Fatal(err)
	}
	f.Policy = &tools.Policy{Notebooks: map[string]tools.Level{hidden.ID: tools.LevelNone}, Default: tools.LevelRead, AllActions: true}
	veiled := f.OK(t, "search", map[string]any{"action": "fulltext", "query": "zebra"})
	info := veiled["readInfo"].(map[string]any)
	if info["coverage"] != "partial" || !strings.Contains(fmt.Sprint(info["limitations"]), "hidden") || veiled["nextSteps"] != nil {
		t.Fatalf("fulltext while a notebook is hidden: %v", veiled)
	}
}
