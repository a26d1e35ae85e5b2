package main

import (
	"context"
	"slices"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// TestAVViewsThroughTheBinary shapes a database's view through the binary
// against the embedded kernel: filters, sorts, a hidden column, the column
// order and a new view, each checked in the render that follows.
func TestAVViewsThroughTheBinary(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	s := startServeWith(t, "--siyuan-url", k.url, "--siyuan-token", "tok", "--state-dir", t.TempDir())
	a := connect(t, s.url, "2025-11-25")
	doc, _ := firstParagraph(a)
	avViewsFlow(t, a, kernelClient(t, k.url, "tok"), doc, false)
}

// TestAVViewsLive runs the same walk against a real SiYuan, and adds a
// gallery and a kanban view, grouped, which only it renders.
func TestAVViewsLive(t *testing.T) {
	a, c, doc := liveDatabaseDoc(t, "views", "/Views", "a paragraph")
	avViewsFlow(t, a, c, doc, true)
}

func avViewsFlow(t *testing.T, a *agent, c *siyuan.Client, doc string, live bool) {
	ctx := context.Background()
	block, av := freshNodeID(), freshNodeID()
	t.Cleanup(func() { c.RemoveFile(context.Background(), "/data/storage/av/"+av+".json") })
	if _, err := c.Transactions(ctx, []siyuan.Transaction{{DoOperations: []siyuan.Operation{siyuan.InsertDatabaseBlockOp(block, av, "", doc)}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RenderAttributeViewOrCreate(ctx, siyuan.RenderAVRequest{ID: av, BlockID: block}); err != nil {
		t.Fatal(err)
	}
	notes := a.strictDo("av", map[string]any{"action": "add_column", "avID": av, "keyName": "Notes", "keyType": "text"})["columnID"].(string)
	a.strictDo("av", map[string]any{"action": "add_rows", "avID": av, "primaryKeyTexts": []string{"alpha", "beta", "gamma"}})
	render := func() map[string]any {
		t.Helper()
		return a.ok("av", map[string]any{"action": "render", "avID": av, "blockID": block})
	}
	first := render()
	view := first["viewID"].(string)
	var pk, sel string
	for _, col := range first["columns"].([]any) {
		m := col.(map[string]any)
		switch m["type"] {
		case "block":
			pk = m["id"].(string)
		case "select":
			sel = m["id"].(string)
		}
	}
	at := func(action string, kv ...any) map[string]any {
		m := map[string]any{"action": action, "avID": av, "blockID": block, "viewID": view}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	texts := func(r map[string]any) []string {
		var out []string
		for _, row := range r["rows"].([]any) {
			out = append(out, row.(map[string]any)["cells"].(map[string]any)[pk].(string))
		}
		return out
	}
	colIDs := func(r map[string]any) (ids []string, hidden []string) {
		for _, col := range r["columns"].([]any) {
			m := col.(map[string]any)
			ids = append(ids, m["id"].(string))
			if m["hidden"] == true {
				hidden = append(hidden, m["id"].(string))
			}
		}
		return ids, hidden
	}

	// Filters and sorts: the render shows only what they keep, in order.
	a.strictDo("av", at("set_filters", "filters", []any{map[string]any{"column": pk, "operator": "Does not contains",
		"value": map[string]any{"type": "block", "block": map[string]any{"content": "beta"}}}}))
	a.strictDo("av", at("set_sorts", "sorts", []any{map[string]any{"column": pk, "order": "DESC"}}))
	if got := texts(render()); !slices.Equal(got, []string{"gamma", "alpha"}) {
		t.Fatalf("filtered and sorted rows %v", got)
	}
	// A hidden column and a new order.
	a.strictDo("av", at("set_column_visibility", "keyID", notes, "hidden", true))
	a.strictDo("av", at("set_column_order", "keyIDs", []string{notes, sel, pk}))
	ids, hidden := colIDs(render())
	if !slices.Equal(ids, []string{notes, sel, pk}) || !slices.Equal(hidden, []string{notes}) {
		t.Fatalf("columns %v, hidden %v", ids, hidden)
	}
	// Cleared again.
	a.strictDo("av", at("set_filters", "filters", []any{}))
	a.strictDo("av", at("set_sorts", "sorts", []any{}))
	if got := texts(render()); len(got) != 3 {
		t.Fatalf("rows after clearing %v", got)
	}

	// A new view, with a replay of its commit: one view added, which the
	// block shows.
	second := freshNodeID()
	args := map[string]any{"action": "add_view", "avID": av, "blockID": block, "viewID": second, "layout": "table", "name": "Second"}
	pre := a.ok("av", with(args, "validateOnly", true))
	res := a.ok("av", commitOf(args, pre))
	rep := a.ok("av", commitOf(args, pre))
	if res["status"] != "committed" || rep["replayed"] != true || res["viewID"] != second {
		t.Fatalf("add_view %v, replay %v", res, rep)
	}
	r := render()
	if r["viewID"] != second || len(r["views"].([]any)) != 2 {
		t.Fatalf("render after add_view: %v", r["views"])
	}
	// The first view is no longer the block's: refused.
	a.fails("av", with(at("set_sorts", "sorts", []any{}), "validateOnly", true), "invalid_arguments")
	if !live {
		return
	}
	// Gallery and kanban views, and grouping, as SiYuan 3.7.3 makes them.
	gallery := freshNodeID()
	a.strictDo("av", map[string]any{"action": "add_view", "avID": av, "blockID": block, "viewID": gallery, "layout": "gallery", "name": "Cards"})
	a.strictDo("av", map[string]any{"action": "set_column_visibility", "avID": av, "blockID": block, "viewID": gallery, "keyID": notes, "hidden": true})
	kanban := freshNodeID()
	a.strictDo("av", map[string]any{"action": "add_view", "avID": av, "blockID": block, "viewID": kanban, "layout": "kanban", "name": "Board"})
	r = render()
	if r["viewID"] != kanban || r["viewType"] != "kanban" || len(r["views"].([]any)) != 4 {
		t.Fatalf("render after the kanban: %v %v %v", r["viewID"], r["viewType"], r["views"])
	}
	g := a.strictDo("av", map[string]any{"action": "set_group", "avID": av, "blockID": block, "viewID": kanban,
		"group": map[string]any{"field": sel, "method": 0, "order": 1, "hideEmpty": true}})
	if _, rewritten := g["order"]; rewritten {
		t.Fatalf("an unchanged group field kept its order: %v", g)
	}
	a.strictDo("av", map[string]any{"action": "set_group", "avID": av, "blockID": block, "viewID": kanban,
		"group": map[string]any{"field": "", "method": 0, "order": 0, "hideEmpty": false}})
	g = a.strictDo("av", map[string]any{"action": "set_group", "avID": av, "blockID": block, "viewID": kanban,
		"group": map[string]any{"field": sel, "method": 0, "order": 0, "hideEmpty": false}})
	if g["order"] != float64(3) {
		t.Fatalf("grouping a select column anew: %v", g)
	}
	if _, ok := render()["groups"]; !ok {
		t.Fatal("the grouped view renders no groups")
	}
}
