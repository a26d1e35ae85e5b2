package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// TestOmittedHiddenNotebookThroughTheBinary: the person hides "Vault";
// then its .siyuan/conf.json is left half-written (a sync, a crash), so
// SiYuan's lsNotebooks leaves the notebook out while its documents stay
// indexed and placed. An agent probing all the while, through the
// authority and through a stdio front, gets neither SQL over the index nor
// a block of the vault. Only once the notebook is removed for good does
// its none entry stop refusing SQL.
func TestOmittedHiddenNotebookThroughTheBinary(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	k := startKernel(t, t.TempDir())
	kernel := []string{"--siyuan-url", k.url, "--siyuan-token", "tok"}
	state := t.TempDir()
	s := startServeWith(t, append(kernel, "--state-dir", state)...)
	a := connect(t, s.url, "2026-07-28")
	c := kernelClient(t, k.url, "tok")
	vault, err := c.CreateNotebook(ctx, "Vault")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := c.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: vault.ID, Path: "/Salary", Markdown: "salary secret\n"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.FlushTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	s.config(t, "permission", vault.ID, "none")

	sql := map[string]any{"action": "query_sql", "stmt": "SELECT content FROM blocks WHERE box = '" + vault.ID + "'"}
	read := map[string]any{"action": "get_kramdown", "id": doc}
	probe := func(who string, a *agent) {
		t.Helper()
		if m, _ := a.call("search", sql); errCodeOf(m) != "permission_denied" {
			t.Fatalf("%s: SQL while the vault is hidden answers %v", who, m)
		}
		if m, _ := a.call("block", read); errCodeOf(m) != "not_found" {
			t.Fatalf("%s: a vault document answers %v", who, m)
		}
	}
	probe("before", a)

	conf := "/data/" + vault.ID + "/.siyuan/conf.json"
	body, _, err := c.GetFile(ctx, conf)
	if err != nil {
		t.Fatal(err)
	}
	good, err := io.ReadAll(body)
	body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.PutFile(ctx, siyuan.PutFileRequest{Path: conf, Body: strings.NewReader(`{"name": "Vau`)}); err != nil {
		t.Fatal(err)
	}
	nbs, err := c.ListNotebooks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nbs {
		if n.ID == vault.ID {
			t.Fatal("the kernel lists a notebook whose conf.json cannot be parsed: the test shows nothing")
		}
	}
	// Past what the authority keeps of the configuration and of what the
	// kernel said about hidden notebooks (2 s each), probing throughout.
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		probe("omitted", a)
	}
	st := stdioAgent(t, append(kernel, "--state-dir", state, "--token", "sekret")...)
	probe("omitted, through stdio", st)

	// Removed for good: the entry stays none and hides nothing.
	if err := c.PutFile(ctx, siyuan.PutFileRequest{Path: conf, Body: bytes.NewReader(good)}); err != nil {
		t.Fatal(err)
	}
	if err := c.RemoveNotebook(ctx, vault.ID); err != nil {
		t.Fatal(err)
	}
	if err := c.FlushTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	for end := time.Now().Add(20 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		var isErr bool
		if m, isErr = a.call("search", sql); !isErr || time.Now().After(end) {
			break
		}
	}
	if raw, _ := json.Marshal(m); errCodeOf(m) != "" || strings.Contains(string(raw), "salary") {
		t.Fatalf("SQL once the hidden notebook is removed for good: %v", m)
	}
	if m, _ := a.call("block", read); errCodeOf(m) != "not_found" {
		t.Fatalf("a removed document answers %v", m)
	}
}
