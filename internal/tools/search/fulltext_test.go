package search

import (
	"context"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

func ids(t *testing.T, res map[string]any) []string {
	t.Helper()
	var out []string
	for _, b := range res["blocks"].([]any) {
		out = append(out, b.(map[string]any)["id"].(string))
	}
	return out
}

// TestFulltextArguments: upstream's arguments reach the kernel and the
// post-filters apply; blocks are [# One, alpha, ## One.A, beta, # Two, gamma zebra].
func TestFulltextArguments(t *testing.T) {
	f := tooltest.New(t, testTools)
	b := f.Blocks
	// alpha gets a tag inline so that the index's tag column has it.
	if _, err := f.C.UpdateBlock(context.Background(), b[1], "markdown", "alpha paragraph #tagged#"); err != nil {
		t.Fatal(err)
	}
	if err := f.C.FlushTransaction(context.Background()); err != nil {
		t.Fatal(err)
	}
	search := func(args map[string]any) map[string]any {
		// Only the fixture's notebook: the workspace also has a welcome document.
		return f.OK(t, "search", tooltest.CopyArgs(args, "action", "fulltext", "paths", []string{f.NB}))
	}
	for _, c := range []struct {
		name string
		args map[string]any
		want []string
	}{
		{"headings by shortcode", map[string]any{"query": "One", "typeShortcodes": []string{"h"}}, []string{b[0], b[2]}},
		{"types by shortcode key", map[string]any{"query": "paragraph", "types": map[string]any{"p": true}, "sortBy": "created_asc"}, []string{b[1], b[3], b[5]}},
		{"regex by methodName", map[string]any{"query": "^(beta|gamma)", "methodName": "regex", "orderBy": 1}, []string{b[3], b[5]}},
		{"regex by method", map[string]any{"query": "z.bra", "method": 3}, []string{b[5]}},
		{"sql", map[string]any{"query": "SELECT * FROM blocks WHERE content LIKE '%zebra%'", "method": 2}, []string{b[5]}},
		{"hasTags true", map[string]any{"query": "paragraph", "hasTags": true}, []string{b[1]}},
		{"parentId of the document", map[string]any{"query": "paragraph", "parentId": f.Doc, "sortBy": "created_asc"}, []string{b[1], b[3], b[5]}},
		{"parentId elsewhere", map[string]any{"query": "paragraph", "parentId": f.Child}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := ids(t, search(c.args))
			if len(got) != len(c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Fatalf("got %v, want %v", got, c.want)
				}
			}
		})
	}
	res := search(map[string]any{"query": "paragraph", "hasTags": false, "sortBy": "created_asc"})
	if got := ids(t, res); len(got) != 2 || res["paginationMode"] != "post_filtered_window" || res["kernelMatchedBlockCount"].(float64) != 3 {
		t.Fatalf("hasTags false: %v", res)
	}
	if ra := res["resolvedArgs"].(map[string]any); ra["orderBy"].(float64) != 1 || ra["sortBy"] != "created_asc" {
		t.Fatalf("resolvedArgs: %v", ra)
	}
	grouped := search(map[string]any{"query": "paragraph", "groupBy": 1})
	docs := grouped["blocks"].([]any)
	if len(docs) != 1 || docs[0].(map[string]any)["id"] != f.Doc || len(docs[0].(map[string]any)["children"].([]any)) != 3 {
		t.Fatalf("grouped by document: %v", grouped)
	}
	hit := search(map[string]any{"query": "zebra"})["blocks"].([]any)[0].(map[string]any)
	if hit["content"] != "gamma paragraph with a unique <mark>zebra</mark> word" || hit["plainContent"] != "gamma paragraph with a unique zebra word" {
		t.Fatalf("marks: %v", hit)
	}
	f.WantErr(t, "search", map[string]any{"action": "fulltext", "query": "x", "orderBy": 5}, failure.InvalidArguments)
	f.WantErr(t, "search", map[string]any{"action": "fulltext", "query": "x", "typeShortcodes": []string{"zz"}}, failure.InvalidArguments)
}

// TestFulltextSQLRefusedWhileHidden: method 2 runs raw SQL, which cannot be
// filtered by notebook.
func TestFulltextSQLRefusedWhileHidden(t *testing.T) {
	f := tooltest.New(t, testTools)
	other, err := f.C.CreateNotebook(context.Background(), "Hidden")
	if err != nil {
		t.Fatal(err)
	}
	f.Policy = &tools.Policy{Notebooks: map[string]tools.Level{other.ID: tools.LevelNone}, Default: tools.LevelRead, AllActions: true}
	f.WantErr(t, "search", map[string]any{"action": "fulltext", "query": "SELECT * FROM blocks", "method": 2}, failure.PermissionDenied)
	if got := ids(t, f.OK(t, "search", map[string]any{"action": "fulltext", "query": "zebra"})); len(got) != 1 {
		t.Fatalf("keyword search while a notebook is hidden: %v", got)
	}
}
