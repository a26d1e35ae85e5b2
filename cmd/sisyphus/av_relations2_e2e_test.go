package main

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// TestAVRelationActionsThroughTheBinary: a one-way relation made two-way
// (configure_two_way_relation), a cell set by item IDs (set_relation)
// linking back, and a rollup reconfigured with SiYuan's calc
// (configure_rollup), through the binary against the embedded kernel;
// the reads carry databaseContext.
func TestAVRelationActionsThroughTheBinary(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	s := startServeWith(t, "--siyuan-url", k.url, "--siyuan-token", "tok", "--state-dir", t.TempDir())
	a := connect(t, s.url, "2025-11-25")
	doc, _ := firstParagraph(a)
	avRelationActionsFlow(t, a, kernelClient(t, k.url, "tok"), doc)
}

// TestAVRelationActionsLive is the same against a real SiYuan.
func TestAVRelationActionsLive(t *testing.T) {
	a, c, doc := liveDatabaseDoc(t, "avrel2", "/Related2", "first")
	avRelationActionsFlow(t, a, c, doc)
}

func avRelationActionsFlow(t *testing.T, a *agent, c *siyuan.Client, doc string) {
	ctx := context.Background()
	mk := func(name string, cols []any, rows ...any) map[string]any {
		res := a.strictDo("av", map[string]any{"action": "create", "parentID": doc, "name": name, "columns": cols, "primaryKeyTexts": rows})
		av := res["avID"].(string)
		t.Cleanup(func() { c.RemoveFile(context.Background(), "/data/storage/av/"+av+".json") })
		return res
	}
	projects := mk("Projects", []any{}, "Sisyphus")
	tasks := mk("Tasks", []any{map[string]any{"name": "Hours", "type": "number"}}, "write", "test")
	pAV, tAV := projects["avID"].(string), tasks["avID"].(string)
	pBlock, tBlock := projects["blockID"].(string), tasks["blockID"].(string)
	pRow := projects["rowIDs"].([]any)[0].(string)
	tRows := tasks["rowIDs"].([]any)
	hours := tasks["columnIDs"].([]any)[0].(string)
	a.strictDo("av", map[string]any{"action": "set_cells", "avID": tAV, "rowID": tRows[0], "columnID": hours, "value": "3"})
	a.strictDo("av", map[string]any{"action": "set_cells", "avID": tAV, "rowID": tRows[1], "columnID": hours, "value": "4"})

	// A one-way relation, made two-way: both databases change.
	relKey := a.strictDo("av", map[string]any{"action": "add_column", "avID": pAV, "keyName": "Rel", "keyType": "relation", "relationAvID": tAV})["columnID"].(string)
	back := fmt.Sprintf("%s-%s", time.Now().Format("20060102150405"), "bk2e2ex")
	tw := map[string]any{"action": "configure_two_way_relation", "avID": pAV, "blockID": pBlock, "keyID": relKey, "destinationAvID": tAV,
		"destinationBlockID": tBlock, "backRelationKeyID": back, "sourceName": "Tasks", "destinationName": "Project", "confirm": true}
	pre := a.ok("av", with(tw, "validateOnly", true))
	if pre["targetCount"] != float64(2) {
		t.Fatalf("preflight %v", pre)
	}
	res := a.ok("av", commitOf(tw, pre))
	bothHashes(t, res, pAV, tAV)
	if rep := a.ok("av", commitOf(tw, pre)); rep["replayed"] != true {
		t.Fatalf("replay %v", rep)
	}

	// set_relation: the tasks link back.
	res = a.strictDo("av", map[string]any{"action": "set_relation", "avID": pAV, "blockID": pBlock, "itemID": pRow, "keyID": relKey,
		"relatedItemIDs": tRows, "confirm": true})
	bothHashes(t, res, pAV, tAV)
	tv, err := c.GetAttributeView(ctx, tAV)
	if err != nil || tv == nil {
		t.Fatal(err)
	}
	var linked []string
	for _, kv := range tv.KeyValues {
		for _, v := range kv.Values {
			if kv.Key.ID == back && v.Relation != nil && slices.Contains(v.Relation.BlockIDs, pRow) {
				linked = append(linked, v.BlockID)
			}
		}
	}
	if len(linked) != 2 {
		t.Fatalf("back links %v", linked)
	}

	// A rollup listing the hours, reconfigured to their sum.
	roll := a.strictDo("av", map[string]any{"action": "add_column", "avID": pAV, "keyName": "Total", "keyType": "rollup", "rollupRelationKeyID": relKey, "rollupKeyID": hours})["columnID"].(string)
	a.strictDo("av", map[string]any{"action": "configure_rollup", "avID": pAV, "blockID": pBlock, "keyID": roll, "relationKeyID": relKey,
		"destinationKeyID": hours, "calc": map[string]any{"operator": "Sum"}, "confirm": true})
	r := a.ok("av", map[string]any{"action": "render", "id": pAV, "blockID": pBlock})
	if cells := r["rows"].([]any)[0].(map[string]any)["cells"].(map[string]any); cells[roll] != "7" {
		t.Fatalf("rollup cell %v", cells)
	}
	dc, _ := r["databaseContext"].(map[string]any)
	if dc["avID"] != pAV || dc["blockID"] != pBlock || dc["columnIDs"].(map[string]any)["Total"] != roll {
		t.Fatalf("databaseContext %v", dc)
	}
	// An item ID is not a row of the other database: refused at preflight.
	a.fails("av", map[string]any{"action": "set_relation", "avID": pAV, "blockID": pBlock, "itemID": pRow, "keyID": relKey,
		"relatedItemIDs": []any{pRow}, "validateOnly": true}, "not_found")
}
