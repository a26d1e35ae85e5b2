package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// TestRenderRaceThroughTheBinary: while the person hides "Vault", an agent
// renders a harmless template and, from a second session, rewrites it
// with update_template to call querySQL over the vault, timed to land
// after render's check and before SiYuan reads the file: the rewrite is
// sent 300 ms after the render, every putFile waits 1 s before it writes
// and SiYuan waits 3 s before it reads a template to render, so the render
// is checked long before the rewrite lands, which lands long before
// SiYuan reads. What the agent gets is
// the template that was checked; rendered again, the rewrite is refused.
func TestRenderRaceThroughTheBinary(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	k := startKernel(t, t.TempDir(), "--fault", "/api/template/render=latency:3s", "--fault", "/api/file/putFile=latency:1s")
	s := startServeWith(t, "--siyuan-url", k.url, "--siyuan-token", "tok", "--state-dir", t.TempDir())
	reader, writer := connect(t, s.url, "2026-07-28"), connect(t, s.url, "2025-11-25")
	c := kernelClient(t, k.url, "tok")
	open, err := c.CreateNotebook(ctx, "Open")
	if err != nil {
		t.Fatal(err)
	}
	vault, err := c.CreateNotebook(ctx, "Vault")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := c.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: open.ID, Path: "/Plan", Markdown: "plan"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: vault.ID, Path: "/Salary", Markdown: "salary secret 4711"}); err != nil {
		t.Fatal(err)
	}
	if err := c.FlushTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.PutFile(ctx, siyuan.PutFileRequest{Path: "/data/templates/daily.md", Body: strings.NewReader("# .action{.title}\n")}); err != nil {
		t.Fatal(err)
	}
	s.config(t, "permission", vault.ID, "none")

	evil := `.action{ range (querySQL "SELECT content FROM blocks WHERE content LIKE 'salary%'") }leak:.action{ .content }.action{ end }` + "\n"
	rewrite := map[string]any{"action": "update_template", "path": "daily.md", "content": evil}
	pre := writer.ok("file", with(rewrite, "validateOnly", true))
	render := map[string]any{"action": "render", "id": doc, "path": "daily.md"}

	type answer struct {
		m     map[string]any
		isErr bool
	}
	rendered := make(chan answer, 1)
	go func() {
		m, isErr := reader.call("file", render)
		rendered <- answer{m, isErr}
	}()
	time.Sleep(300 * time.Millisecond)
	committed, isErr := writer.call("file", commitOf(rewrite, pre))
	if isErr || committed["status"] != "committed" {
		t.Fatalf("the rewrite: %v", committed)
	}
	got := <-rendered
	if errCodeOf(got.m) == "permission_denied" {
		t.Fatalf("the render was checked after the rewrite landed (a machine too slow for the test's timing): %v", got.m)
	}
	if content, _ := got.m["content"].(string); got.isErr || strings.Contains(content, "4711") || strings.Contains(content, "leak:") || !strings.Contains(content, ">Plan<") {
		t.Fatalf("the render raced by a rewrite answers %v", got.m)
	}
	if m := reader.fails("file", render, "permission_denied"); strings.Contains(fmt.Sprint(m), "4711") {
		t.Fatalf("the rewrite's refusal shows the vault: %v", m)
	}
}
