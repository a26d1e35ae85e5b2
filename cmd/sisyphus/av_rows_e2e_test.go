package main

import (
	"context"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// TestAVRowsThroughTheBinary walks set_column_options and duplicate_rows
// through the binary against the embedded kernel: each preflighted,
// refused without the person's confirmation, committed with it, replayed,
// and checked against the kernel.
func TestAVRowsThroughTheBinary(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	s := startServeWith(t, "--siyuan-url", k.url, "--siyuan-token", "tok", "--state-dir", t.TempDir())
	a := connect(t, s.url, "2025-11-25")
	doc, _ := firstParagraph(a)
	avRowsFlow(t, a, kernelClient(t, k.url, "tok"), doc)
}

// TestAVRowsLive runs the same walk against a real SiYuan when
// SISYPHUS_LIVE_SIYUAN_URL and SISYPHUS_LIVE_SIYUAN_TOKEN are set, in a
// notebook it creates and removes.
func TestAVRowsLive(t *testing.T) {
	a, c, doc := liveDatabaseDoc(t, "avrows", "/Rows", "first")
	avRowsFlow(t, a, c, doc)
}

// confirmedDo preflights a dangerous write, sees the commit refused
// without confirmation, commits it confirmed and replays it.
func confirmedDo(t *testing.T, a *agent, args map[string]any) map[string]any {
	t.Helper()
	pre := a.ok("av", with(args, "validateOnly", true))
	a.fails("av", commitOf(args, pre), "confirmation_required")
	res := a.ok("av", with(commitOf(args, pre), "confirm", true))
	if res["status"] != "committed" {
		t.Fatalf("%s: %v", args["action"], res)
	}
	if rep := a.ok("av", with(commitOf(args, pre), "confirm", true)); rep["replayed"] != true || rep["resultHash"] != res["resultHash"] {
		t.Fatalf("%s replay: %v", args["action"], rep)
	}
	return res
}

func avRowsFlow(t *testing.T, a *agent, c *siyuan.Client, doc string) {
	ctx := context.Background()
	db := a.strictDo("av", map[string]any{"action": "create", "parentID": doc, "name": "Rows",
		"columns": []map[string]any{{"name": "Tags", "type": "mSelect"}}, "primaryKeyTexts": []string{"one", "two"}})
	av := db["avID"].(string)
	t.Cleanup(func() { c.RemoveFile(context.Background(), "/data/storage/av/"+av+".json") })
	tags := db["columnIDs"].([]any)[0].(string)
	rows := db["rowIDs"].([]any)
	stored := func() *siyuan.AttributeView {
		t.Helper()
		v, err := c.GetAttributeView(ctx, av)
		if err != nil || v == nil {
			t.Fatalf("GetAttributeView: %v, %v", v, err)
		}
		return v
	}
	options := func() string {
		t.Helper()
		out := ""
		for _, kv := range stored().KeyValues {
			if kv.Key.ID == tags {
				for _, o := range kv.Key.Options {
					out += o.Name + ":" + o.Color + ":" + o.Desc + ","
				}
			}
		}
		return out
	}
	a.strictDo("av", map[string]any{"action": "set_cells", "avID": av, "rowID": rows[0], "columnID": tags, "valueType": "multi_select", "options": []string{"a", "b"}})

	// set_column_options: the complete list, in order.
	confirmedDo(t, a, map[string]any{"action": "set_column_options", "avID": av, "keyID": tags,
		"options": []map[string]any{{"name": "c", "color": "3", "desc": "new"}, {"name": "b", "color": "7"}}})
	if got := options(); got != "c:3:new,b:7:," {
		t.Fatalf("options %q", got)
	}
	a.fails("av", map[string]any{"action": "set_column_options", "avID": av, "keyID": rows[0], "options": []map[string]any{}, "validateOnly": true}, "not_found")

	// duplicate_rows: copies after the first row, in order.
	res := confirmedDo(t, a, map[string]any{"action": "duplicate_rows", "avID": av, "sourceRowIDs": rows, "previousID": rows[0]})
	copies := res["rowIDs"].([]any)
	order := stored().Views[0].ItemIDs
	if len(copies) != 2 || len(order) != 4 || order[1] != copies[0] || order[2] != copies[1] {
		t.Fatalf("copies %v, order %v", copies, order)
	}
	if r := a.ok("av", map[string]any{"action": "render", "id": av}); r["rowCount"] != float64(4) {
		t.Fatalf("render after copies: %v", r)
	}
	a.fails("av", map[string]any{"action": "duplicate_rows", "avID": av, "sourceRowIDs": []string{av}, "validateOnly": true}, "not_found")

	// set_new_item_templates: stored as sent.
	tpl := freshNodeID()
	confirmedDo(t, a, map[string]any{"action": "set_new_item_templates", "avID": av, "blockID": db["blockID"], "defaultTemplateID": tpl,
		"templates": []map[string]any{{"id": tpl, "name": "Task", "targetType": "detached", "primaryKeyTemplate": "Task",
			"fieldValues": map[string]any{tags: map[string]any{"mode": "static", "value": map[string]any{"mSelect": []map[string]any{{"content": "c", "color": "3"}}}}}}}})
	if v := stored(); v.DefaultTemplateID != tpl || len(v.NewItemTemplates) < 10 {
		t.Fatalf("templates %s, default %q", v.NewItemTemplates, v.DefaultTemplateID)
	}
}
