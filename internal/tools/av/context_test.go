package av

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// TestDatabaseContext: get, render and the keys reads say which id is the
// database, which blocks show it (with their views), the column ids by
// name and, where rows are shown, the blocks bound rows are bound to;
// with a notebook hidden, a mirror block only it holds and a row bound
// there are left out of it.
func TestDatabaseContext(t *testing.T) {
	s := newVeiled(t)
	ctx := context.Background()
	// A mirror of the database in the hidden notebook.
	hdoc := s.MkDoc(t, s.hidden, "/Mirror", "m")
	mirror := tooltest.NewID()
	if _, err := s.C.Transactions(ctx, []siyuan.Transaction{{DoOperations: []siyuan.Operation{siyuan.InsertDatabaseBlockOp(mirror, s.db.AV, "", hdoc)}}}); err != nil {
		t.Fatal(err)
	}
	av := s.db.AV
	check := func(name string, got map[string]any, wantBound bool) map[string]any {
		t.Helper()
		dc, _ := got["databaseContext"].(map[string]any)
		raw, _ := json.Marshal(dc)
		if dc["avID"] != av || dc["idUsage"] == nil {
			t.Fatalf("%s: databaseContext %s", name, raw)
		}
		blocks, _ := dc["blocks"].([]any)
		if len(blocks) != 1 || blocks[0].(map[string]any)["blockID"] != s.db.Block {
			t.Fatalf("%s: blocks %s", name, raw)
		}
		if cols, _ := dc["columnIDs"].(map[string]any); cols["Notes"] != s.text {
			t.Fatalf("%s: columnIDs %s", name, raw)
		}
		if strings.Contains(string(raw), mirror) || strings.Contains(string(raw), s.rowH) || strings.Contains(string(raw), s.hiddenBlock) {
			t.Fatalf("%s: the hidden notebook shows through: %s", name, raw)
		}
		bound, _ := dc["boundBlocks"].(map[string]any)
		if wantBound && bound[s.rowV] != s.Blocks[0] {
			t.Fatalf("%s: boundBlocks %s", name, raw)
		}
		return dc
	}
	check("get", s.OK(t, "av", map[string]any{"action": "get", "id": av}), true)
	dc := check("render", s.OK(t, "av", map[string]any{"action": "render", "avID": av, "blockID": s.db.Block}), true)
	if dc["blockID"] != s.db.Block || dc["viewID"] != s.OK(t, "av", map[string]any{"action": "render", "avID": av})["viewID"] {
		t.Fatalf("render: %v", dc)
	}
	check("keys", s.OK(t, "av", map[string]any{"action": "get_attribute_view_keys", "avID": av}), false)
	check("filter_sort", s.OK(t, "av", map[string]any{"action": "get_attribute_view_filter_sort", "id": av}), false)

	// Nothing hidden: both blocks show it, the hidden row is bound.
	s.Policy = nil
	dc = s.OK(t, "av", map[string]any{"action": "get", "id": av})["databaseContext"].(map[string]any)
	if len(dc["blocks"].([]any)) != 2 || dc["boundBlocks"].(map[string]any)[s.rowH] != s.hiddenBlock {
		t.Fatalf("unhidden: %v", dc)
	}
}
