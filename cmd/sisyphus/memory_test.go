package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/testvars"
)

// procKiB reads a VmRSS/VmHWM-style field of /proc/PID/status.
func procKiB(t *testing.T, pid int, field string) int {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	t.Fatalf("%s not in /proc/%d/status", field, pid)
	return 0
}

// TestKernelMemory10kBlocks: a 10,000-block workspace, written and read
// through the API, stays under 256 MiB resident (peak).
func TestKernelMemory10kBlocks(t *testing.T) {
	testvars.Long(t)
	k := startKernel(t, t.TempDir())
	ctx := context.Background()
	c, err := siyuan.New(siyuan.Config{BaseURL: k.url, Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	nbs, err := c.ListNotebooks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var docs []string
	for d := 0; d < 10; d++ {
		var md strings.Builder
		for i := 0; i < 1000; i++ {
			fmt.Fprintf(&md, "Document %d paragraph %d, with **bold** and *emphasis* so it is not trivial.\n\n", d, i)
		}
		id, err := c.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: nbs[0].ID, Path: fmt.Sprintf("/mem/doc%d", d), Markdown: md.String()})
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, id)
	}
	if err := c.FlushTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	rows, err := c.QuerySQL(ctx, "SELECT count(*) AS n FROM blocks")
	if err != nil {
		t.Fatal(err)
	}
	if n := fmt.Sprint(rows[0]["n"]); n < "10000" && len(n) <= 5 {
		t.Fatalf("only %s blocks indexed", n)
	}
	for _, d := range docs {
		children, err := c.GetChildBlocks(ctx, d)
		if err != nil || len(children) != 1000 {
			t.Fatalf("children of %s: %d %v", d, len(children), err)
		}
		for i := 0; i < len(children); i += 50 {
			if _, err := c.GetBlockKramdown(ctx, children[i].ID); err != nil {
				t.Fatal(err)
			}
			if _, err := c.UpdateBlock(ctx, children[i].ID, "markdown", "rewritten"); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := c.FullTextSearchBlock(ctx, siyuan.FullTextSearchRequest{Query: "emphasis"}); err != nil {
		t.Fatal(err)
	}
	hwm := procKiB(t, k.cmd.Process.Pid, "VmHWM")
	rss := procKiB(t, k.cmd.Process.Pid, "VmRSS")
	t.Logf("10,000-block workspace: peak RSS %.1f MiB, RSS now %.1f MiB", float64(hwm)/1024, float64(rss)/1024)
	if hwm > 256*1024 {
		t.Fatalf("peak resident memory %.1f MiB exceeds 256 MiB", float64(hwm)/1024)
	}
}
