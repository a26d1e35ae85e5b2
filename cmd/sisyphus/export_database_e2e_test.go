package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/testvars"
)

// TestHiddenDatabaseRowsStayOutOfExports: a database in the agent's
// notebook has a row bound to a block of the hidden notebook (the
// person's doing). SiYuan exports a database block as a table of every
// row, the bound block's text in it. While the notebook is visible the
// agent's exports show that table (SiYuan's own export); once it is
// hidden, export_md, extract_doc, an embed of the database block and
// fs.search show no table at all (the block reads as a database SiYuan
// cannot read), so the hidden block's text never shows; av.render still
// shows the visible row and counts the hidden one as withheld.
func TestHiddenDatabaseRowsStayOutOfExports(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	s := startServeWith(t, "--siyuan-url", k.url, "--siyuan-token", "tok", "--state-dir", t.TempDir())
	hiddenDatabaseFlow(t, s, kernelClient(t, k.url, "tok"), "e", 0)
}

// TestHiddenDatabaseRowsLive runs the same against a real SiYuan when
// SISYPHUS_LIVE_SIYUAN_URL and SISYPHUS_LIVE_SIYUAN_TOKEN are set, in two
// notebooks it creates and removes.
func TestHiddenDatabaseRowsLive(t *testing.T) {
	url, tok := testvars.Live(t)
	s := startServeWith(t, "--siyuan-url", url, "--siyuan-token", tok, "--state-dir", t.TempDir())
	hiddenDatabaseFlow(t, s, kernelClient(t, url, tok), fmt.Sprint(time.Now().UnixNano()), 3*time.Second)
}

// hiddenDatabaseFlow is the scenario in two new notebooks, named for tag;
// settle is how long the kernel needs after creating them (see
// buildHiddenWorld).
func hiddenDatabaseFlow(t *testing.T, s *serveProc, c *siyuan.Client, tag string, settle time.Duration) {
	ctx := context.Background()
	a := connect(t, s.url, "2026-07-28")
	open, err := c.CreateNotebook(ctx, "sisyphus-dbexport-open-"+tag)
	if err != nil {
		t.Fatal(err)
	}
	vault, err := c.CreateNotebook(ctx, "sisyphus-dbexport-vault-"+tag)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, nb := range []string{open.ID, vault.ID} {
			c.RemoveNotebook(context.Background(), nb)
		}
	})
	time.Sleep(settle)
	odoc, err := c.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: open.ID, Path: "/Plan", Markdown: "plan text\n"})
	if err != nil {
		t.Fatal(err)
	}
	vdoc, err := c.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: vault.ID, Path: "/Salary", Markdown: "the salary is 9000\n"})
	if err != nil {
		t.Fatal(err)
	}
	vb, err := c.GetChildBlocks(ctx, vdoc)
	if err != nil {
		t.Fatal(err)
	}
	s.config(t, "permission", open.ID, "rwd")
	db := a.strictDo("av", map[string]any{"action": "create", "parentID": odoc, "name": "Mixed", "primaryKeyTexts": []string{"open row"}})
	av, block := db["avID"].(string), db["blockID"].(string)
	if err := c.AddAttributeViewBlocks(ctx, siyuan.AddAVBlocksRequest{AvID: av, BlockID: block,
		Srcs: []siyuan.AVSrc{{ItemID: fresh(), ID: vb[0].ID}}}); err != nil {
		t.Fatal(err)
	}
	embedding := a.strictDo("document", map[string]any{"action": "create", "notebook": open.ID, "path": "/Embeds",
		"markdown": "before\n\n{{SELECT * FROM blocks WHERE id='" + block + "'}}\n\nafter"})["id"].(string)
	if err := c.FlushTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	exports := func() string {
		t.Helper()
		md := a.ok("file", map[string]any{"action": "export_md", "id": odoc})
		ex := a.ok("file", map[string]any{"action": "extract_doc", "id": odoc})
		emb := a.ok("file", map[string]any{"action": "export_md", "id": embedding})
		found := a.ok("fs", map[string]any{"action": "search", "path": "/" + open.Name, "query": "salary"})
		return fmt.Sprint(md["content"], "\n", ex["markdown"], "\n", emb["content"], "\n", found["data"])
	}

	// Visible: SiYuan's table, with the bound block's text.
	if got := exports(); !strings.Contains(got, "|open row|") || !strings.Contains(got, "|the salary is 9000|") {
		t.Fatalf("the exports while nothing is hidden show no table:\n%s", got)
	}

	s.config(t, "permission", vault.ID, "none")
	got := exports()
	if strings.Contains(got, "9000") || strings.Contains(got, "salary") {
		t.Fatalf("an export shows the hidden row:\n%s", got)
	}
	placeholder := `<div data-type="NodeAttributeView" data-av-id="` + av + `" data-av-type="table"></div>`
	if strings.Count(got, placeholder) != 3 || !strings.Contains(got, "plan text") || !strings.Contains(got, "before") {
		t.Fatalf("the exports while the vault is hidden:\n%s", got)
	}
	r := a.ok("av", map[string]any{"action": "render", "avID": av})
	if r["rowCount"] != float64(1) || r["withheld"].(map[string]any)["rows"] != float64(1) || strings.Contains(fmt.Sprint(r), "salary") {
		t.Fatalf("av.render of the database: %v", r)
	}
}
