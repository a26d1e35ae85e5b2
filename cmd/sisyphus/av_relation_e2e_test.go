package main

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// TestAVRelationThroughTheBinary: two databases made with create, a
// two-way relation between them, a rollup, and relation cells, through
// the binary against the embedded kernel; each change reports the
// preimage and postimage hashes of both databases.
func TestAVRelationThroughTheBinary(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	s := startServeWith(t, "--siyuan-url", k.url, "--siyuan-token", "tok", "--state-dir", t.TempDir())
	a := connect(t, s.url, "2025-11-25")
	doc, _ := firstParagraph(a)
	avRelationFlow(t, a, kernelClient(t, k.url, "tok"), doc)
}

// TestAVRelationLive is the same against a real SiYuan.
func TestAVRelationLive(t *testing.T) {
	a, c, doc := liveDatabaseDoc(t, "avrel", "/Related", "first")
	avRelationFlow(t, a, c, doc)
}

// bothHashes requires each database's previousHash and resultHash, and
// that they differ where the change landed.
func bothHashes(t *testing.T, res map[string]any, changed ...string) {
	t.Helper()
	h, _ := res["hashes"].(map[string]any)
	for _, id := range changed {
		x, _ := h[id].(map[string]any)
		p, _ := x["previousHash"].(string)
		r, _ := x["resultHash"].(string)
		if len(p) < 4 || len(r) < 4 || p == r {
			t.Fatalf("hashes of %s in %v", id, res)
		}
	}
}

func avRelationFlow(t *testing.T, a *agent, c *siyuan.Client, doc string) {
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
	pRow := projects["rowIDs"].([]any)[0].(string)
	tRows := tasks["rowIDs"].([]any)
	hours := tasks["columnIDs"].([]any)[0].(string)
	a.strictDo("av", map[string]any{"action": "set_cells", "avID": tAV, "rowID": tRows[0], "columnID": hours, "value": "3"})

	// The two-way relation: both databases change, both hashes.
	rel := map[string]any{"action": "add_column", "avID": pAV, "keyName": "Tasks", "keyType": "relation", "relationAvID": tAV, "isTwoWay": true, "backKeyName": "Project"}
	pre := a.ok("av", with(rel, "validateOnly", true))
	if pre["targetCount"] != float64(2) {
		t.Fatalf("relation preflight %v", pre)
	}
	res := a.ok("av", commitOf(rel, pre))
	bothHashes(t, res, pAV, tAV)
	relKey, back := res["columnID"].(string), res["backKeyID"].(string)
	if rep := a.ok("av", commitOf(rel, pre)); rep["replayed"] != true || fmt.Sprint(rep["hashes"]) != fmt.Sprint(res["hashes"]) {
		t.Fatalf("relation replay %v", rep)
	}

	// Relation cells: the tasks link back.
	set := map[string]any{"action": "set_cells", "avID": pAV, "rowID": pRow, "columnID": relKey, "values": tRows}
	res = a.strictDo("av", set)
	bothHashes(t, res, pAV, tAV)
	tv, err := c.GetAttributeView(ctx, tAV)
	if err != nil || tv == nil {
		t.Fatal(err)
	}
	for _, kv := range tv.KeyValues {
		if kv.Key.ID != back {
			continue
		}
		var linked []string
		for _, v := range kv.Values {
			if v.Relation != nil && slices.Contains(v.Relation.BlockIDs, pRow) {
				linked = append(linked, v.BlockID)
			}
		}
		if len(linked) != 2 {
			t.Fatalf("back links %v", linked)
		}
	}

	// A rollup of the tasks' hours.
	roll := map[string]any{"action": "add_column", "avID": pAV, "keyName": "Total", "keyType": "rollup", "rollupRelationKeyID": relKey, "rollupKeyID": hours, "rollupOperator": "Sum"}
	res = a.strictDo("av", roll)
	bothHashes(t, res, pAV)
	r := a.ok("av", map[string]any{"action": "render", "id": pAV})
	row := r["rows"].([]any)[0].(map[string]any)
	if cells := row["cells"].(map[string]any); cells[res["columnID"].(string)] != "3" {
		t.Fatalf("rollup cell %v (render %v)", cells, r)
	}
}
