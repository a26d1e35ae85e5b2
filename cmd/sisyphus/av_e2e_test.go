package main

import (
	"context"
	"crypto/rand"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// TestAVToolThroughTheBinary walks every action of the av tool through the
// binary against the embedded kernel: the reads, each strict write
// preflighted and committed (one replayed), the removals confirmed, and
// each checked against the kernel.
func TestAVToolThroughTheBinary(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	s := startServeWith(t, "--siyuan-url", k.url, "--siyuan-token", "tok", "--state-dir", t.TempDir())
	a := connect(t, s.url, "2025-11-25")
	doc, para := firstParagraph(a)
	avFlow(t, a, kernelClient(t, k.url, "tok"), doc, para)
}

// TestAVToolLive runs the same walk against a real SiYuan when
// SISYPHUS_LIVE_SIYUAN_URL and SISYPHUS_LIVE_SIYUAN_TOKEN are set, in a
// notebook it creates and removes (and the database file with it).
func TestAVToolLive(t *testing.T) {
	a, c, doc := liveDatabaseDoc(t, "av", "/Databases", "a row block\n\nsecond")
	avFlow(t, a, c, doc, firstChild(a, doc))
}

// avFlow walks every av action on a database it makes first in doc (para
// becomes a bound row).
func avFlow(t *testing.T, a *agent, c *siyuan.Client, doc, para string) {
	ctx := context.Background()
	// A database first in the document, as SiYuan's editor makes one.
	block, av := freshNodeID(), freshNodeID()
	t.Cleanup(func() { c.RemoveFile(context.Background(), "/data/storage/av/"+av+".json") })
	if _, err := c.Transactions(ctx, []siyuan.Transaction{{DoOperations: []siyuan.Operation{siyuan.InsertDatabaseBlockOp(block, av, "", doc)}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RenderAttributeViewOrCreate(ctx, siyuan.RenderAVRequest{ID: av, BlockID: block}); err != nil {
		t.Fatal(err)
	}
	stored := func() *siyuan.AttributeView {
		t.Helper()
		v, err := c.GetAttributeView(ctx, av)
		if err != nil || v == nil {
			t.Fatalf("GetAttributeView: %v, %v", v, err)
		}
		return v
	}

	// Writes.
	a.strictDo("av", map[string]any{"action": "rename", "avID": av, "name": "Reading list"})
	if n := stored().Name; n != "Reading list" {
		t.Fatalf("name %q", n)
	}
	col := a.strictDo("av", map[string]any{"action": "add_column", "avID": av, "keyName": "Notes", "keyType": "text"})["columnID"].(string)
	add := map[string]any{"action": "add_rows", "avID": av, "blockIDs": []string{para}, "primaryKeyTexts": []string{"Dune"}}
	pre := a.ok("av", with(add, "validateOnly", true))
	res := a.ok("av", commitOf(add, pre))
	rep := a.ok("av", commitOf(add, pre))
	if res["status"] != "committed" || rep["replayed"] != true {
		t.Fatalf("add_rows %v, replay %v", res, rep)
	}
	rows := res["rowIDs"].([]any)
	if len(rows) != 2 || len(stored().Views[0].ItemIDs) != 2 {
		t.Fatalf("rows %v: %v", rows, stored().Views[0].ItemIDs)
	}
	bound, detached := rows[0].(string), rows[1].(string)
	a.strictDo("av", map[string]any{"action": "set_cells", "avID": av, "rowID": detached, "columnID": col, "value": "a classic"})
	a.strictDo("av", map[string]any{"action": "set_cells", "avID": av, "items": []any{map[string]any{"rowID": bound, "columnID": col, "value": "bound"}}})

	// Reads.
	r := a.ok("av", map[string]any{"action": "render", "id": av})
	if r["rowCount"] != float64(2) || r["name"] != "Reading list" {
		t.Fatalf("render %v", r)
	}
	// A page that leaves rows out says so and names the next page.
	p1 := a.ok("av", map[string]any{"action": "render", "id": av, "pageSize": 1})
	if p1["readInfo"].(map[string]any)["coverage"] != "partial" || r["readInfo"] != nil {
		t.Fatalf("render pages: %v, %v", p1, r)
	}
	if p2 := a.ok("av", p1["nextSteps"].([]any)[0].(map[string]any)["arguments"].(map[string]any)); p2["page"] != float64(2) || p2["hasNextPage"] != false || p2["readInfo"] != nil {
		t.Fatalf("render next page: %v", p2)
	}
	if pk := a.ok("av", map[string]any{"action": "get_primary_key_values", "id": av, "pageSize": 1}); pk["readInfo"].(map[string]any)["coverage"] != "unknown" {
		t.Fatalf("get_primary_key_values full page: %v", pk)
	}
	// createIfNotExist of a database that exists renders it (upstream's
	// way); the creation is av_create_e2e_test.go's.
	if m := a.ok("av", map[string]any{"action": "render", "id": av, "createIfNotExist": true}); m["rowCount"] != float64(2) || m["requestId"] != nil {
		t.Fatalf("render createIfNotExist: %v", m)
	}
	if g := a.ok("av", map[string]any{"action": "get", "id": av}); g["avID"] != av {
		t.Fatalf("get %v", g)
	}
	if kk := a.ok("av", map[string]any{"action": "get_attribute_view_keys", "avID": av}); kk["count"] != float64(3) {
		t.Fatalf("keys %v", kk)
	}
	if kk := a.ok("av", map[string]any{"action": "get_attribute_view_keys", "id": para}); kk["count"] != float64(1) {
		t.Fatalf("keys of the bound block %v", kk)
	}
	a.ok("av", map[string]any{"action": "get_attribute_view_filter_sort", "id": av, "blockID": block})
	if pk := a.ok("av", map[string]any{"action": "get_primary_key_values", "id": av, "keyword": "Dune"}); len(pk["values"].([]any)) != 1 {
		t.Fatalf("primary keys %v", pk)
	}
	if f := a.ok("av", map[string]any{"action": "search", "keyword": "reading"}); f["count"] != float64(1) {
		t.Fatalf("search %v", f)
	}

	// The removals need a confirmation.
	rm := map[string]any{"action": "remove_rows", "avID": av, "srcIDs": []string{detached}}
	pre = a.ok("av", with(rm, "validateOnly", true))
	a.fails("av", commitOf(rm, pre), "confirmation_required")
	if res := a.ok("av", with(commitOf(rm, pre), "confirm", true)); res["status"] != "committed" {
		t.Fatalf("remove_rows %v", res)
	}
	if ids := stored().Views[0].ItemIDs; len(ids) != 1 || ids[0] != bound {
		t.Fatalf("rows after the removal %v", ids)
	}
	rc := map[string]any{"action": "remove_column", "avID": av, "keyID": col}
	pre = a.ok("av", with(rc, "validateOnly", true))
	if res := a.ok("av", with(commitOf(rc, pre), "confirm", true)); res["status"] != "committed" {
		t.Fatalf("remove_column %v", res)
	}
	if n := len(stored().KeyValues); n != 2 {
		t.Fatalf("keys after the removal: %d", n)
	}
}

// freshNodeID is a new, well-formed SiYuan ID.
func freshNodeID() string {
	const alphabet = "0123456789abcdefghijklmnopqrstuvwxyz"
	b := make([]byte, 7)
	rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return time.Now().Format("20060102150405") + "-" + string(b)
}
