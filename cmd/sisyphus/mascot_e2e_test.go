package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/mascotstore"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/testvars"
)

// TestMascotThroughTheBinary: calls of other tools earn one coin each,
// from several clients at once and from the command line, none lost;
// failed calls and the mascot's own earn none; buy is preflighted,
// committed, replayed and refused when the balance is short; the books
// are upstream's files in the workspace; with the tool switched off
// nothing is counted.
func TestMascotThroughTheBinary(t *testing.T) {
	t.Parallel()
	c := newToolCLI(t)
	a := connect(t, c.s.url, "2025-11-25")
	file := func(name string) []byte {
		b, _ := os.ReadFile(filepath.Join(c.ws, filepath.FromSlash(mascotstore.Dir), name))
		return b
	}
	balance := func() int {
		m := a.ok("mascot", map[string]any{"action": "get_balance"})
		return int(m["balance"].(float64))
	}
	mascotFlow(t, a, c.s.url, balance, func(body string) {
		if err := os.WriteFile(filepath.Join(c.ws, filepath.FromSlash(mascotstore.StatsPath)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}, func() mascotstore.Stats {
		st, err := mascotstore.ParseStats(file("puppyStats.json"))
		if err != nil {
			t.Fatal(err)
		}
		return st
	})

	// The command line's reads earn at the front, its writes at the
	// authority, each once.
	b0 := balance()
	c.ok(t, "system", "get-version", "--json")
	var got map[string]any
	if err := json.Unmarshal([]byte(c.ok(t, "mascot", "get-balance", "--json")), &got); err != nil || int(got["balance"].(float64)) != b0+1 {
		t.Fatalf("sisyphus mascot get-balance after one call (was %d): %v %v", b0, got, err)
	}
	c.ok(t, "block", "update", "--id", c.para, "--data", "only checked", "--validate-only", "--json")
	if got := balance(); got != b0+2 {
		t.Fatalf("a write from the command line, delegated to the authority, earned %d coins, want 1", got-b0-1)
	}

	// The books, in upstream's shapes.
	var st map[string]any
	if err := json.Unmarshal(file("puppyStats.json"), &st); err != nil || st["totalCalls"] == nil || st["balance"] == nil || st["updatedAt"] == nil {
		t.Fatalf("puppyStats.json: %s", file("puppyStats.json"))
	}
	waitUntil(t, func() bool {
		var ev map[string]any
		return json.Unmarshal(file("puppyEvents.json"), &ev) == nil && ev["tool"] != nil && ev["seq"] != nil && ev["status"] != nil
	})
	waitUntil(t, func() bool {
		return strings.Contains(string(file("analytics.jsonl")), `"tool":"system","action":"get_version","status":"success"`)
	})
	if strings.Contains(string(file("analytics.jsonl")), "only checked") {
		t.Fatal("analytics carry arguments")
	}

	// Listed in the configuration, on by default; switched off, nothing
	// is counted.
	if show := c.s.config(t, "show"); !strings.Contains(show, "mascot") {
		t.Fatalf("config show lists no mascot:\n%s", show)
	}
	c.s.config(t, "disable", "mascot")
	before := string(file("puppyStats.json"))
	a.ok("system", map[string]any{"action": "get_version"})
	if after := string(file("puppyStats.json")); after != before {
		t.Fatalf("counted while off: %s -> %s", before, after)
	}
}

// mascotFlow is the walk the embedded and the live tests share. put
// writes puppyStats.json behind the server's back.
func mascotFlow(t *testing.T, a *agent, url string, balance func() int, put func(string), stats func() mascotstore.Stats) {
	t.Helper()
	b0 := balance()
	if b1 := balance(); b1 != b0 {
		t.Fatalf("the mascot's own call earned: %d -> %d", b0, b1)
	}
	// Two clients, ten calls each, at once.
	b := connect(t, url, "2026-07-28")
	var wg sync.WaitGroup
	for _, ag := range []*agent{a, b} {
		for range 10 {
			wg.Add(1)
			go func() { defer wg.Done(); ag.ok("system", map[string]any{"action": "get_version"}) }()
		}
	}
	wg.Wait()
	if got := balance(); got != b0+20 {
		t.Fatalf("20 calls from two clients: balance %d, want %d", got, b0+20)
	}
	if _, isErr := a.call("block", map[string]any{"action": "get_kramdown", "id": "20990101000000-zzzzzzz"}); !isErr {
		t.Fatal("a missing block read")
	}
	if got := balance(); got != b0+20 {
		t.Fatalf("a failed call earned: %d", got)
	}

	shop := a.ok("mascot", map[string]any{"action": "shop"})
	if items, _ := shop["items"].([]any); len(items) != 7 {
		t.Fatalf("shop: %v", shop)
	}
	put(`{"totalCalls":100,"balance":10,"updatedAt":1,"hat":"red"}`)
	buy := map[string]any{"action": "buy", "item_id": "milk"}
	pre := a.ok("mascot", with(buy, "validateOnly", true))
	res := a.ok("mascot", commitOf(buy, pre))
	if res["status"] != "committed" || res["item_id"] != "milk" || res["cost"] != float64(3) {
		t.Fatalf("buy: %v", res)
	}
	// The commit itself earns nothing, the calls since its write do.
	if got := balance(); got != 7 {
		t.Fatalf("balance after buying milk for 3 of 10: %d", got)
	}
	if st := stats(); st.LastPurchase == nil || st.Spent != 3 || st.LastPurchase.ItemID != "milk" || st.TotalCalls != 100 || st.Balance != 7 {
		t.Fatalf("puppyStats.json after the purchase: %+v", st)
	}
	rep := a.ok("mascot", commitOf(buy, pre))
	if rep["replayed"] != true || balance() != 7 {
		t.Fatalf("replay: %v, balance %d", rep, balance())
	}
	put(`{"totalCalls":100,"balance":2}`)
	e := a.fails("mascot", with(buy, "validateOnly", true), "insufficient_balance")
	if d, _ := e["error"].(map[string]any); d["need"] != float64(3) || d["have"] != float64(2) {
		t.Fatalf("insufficient: %v", e)
	}
	if m, isErr := a.call("mascot", map[string]any{"action": "buy", "item_id": "caviar", "validateOnly": true}); !isErr || m["error"].(map[string]any)["code"] != "not_found" {
		t.Fatalf("an unknown item: %v", m)
	}
}

// waitUntil waits for what a background queue writes.
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	for range 400 {
		if cond() {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatal("condition never held")
}

// TestMascotLive runs the walk against a real SiYuan 3.7.3 when
// SISYPHUS_LIVE_SIYUAN_URL and SISYPHUS_LIVE_SIYUAN_TOKEN are set. The
// balance file there is the person's: it is saved first and put back.
func TestMascotLive(t *testing.T) {
	url, tok := testvars.Live(t)
	k := kernelClient(t, url, tok)
	ctx := context.Background()
	keepMascotBooks(t, k)
	put := func(body string) {
		if err := k.PutFile(ctx, siyuan.PutFileRequest{Path: mascotstore.StatsPath, Body: strings.NewReader(body)}); err != nil {
			t.Fatal(err)
		}
	}
	s := startServeWith(t, "--siyuan-url", url, "--siyuan-token", tok, "--state-dir", t.TempDir())
	a := connect(t, s.url, "2025-11-25")
	balance := func() int {
		m := a.ok("mascot", map[string]any{"action": "get_balance"})
		return int(m["balance"].(float64))
	}
	mascotFlow(t, a, s.url, balance, put, func() mascotstore.Stats {
		b, _ := readWorkspaceFile(t, k, mascotstore.StatsPath)
		st, err := mascotstore.ParseStats(b)
		if err != nil {
			t.Fatal(err)
		}
		return st
	})
}

// keepMascotBooks saves the person's mascot files on a live kernel and
// puts them back (or removes the ones there were not) when the test ends;
// called before the server starts, it runs after the server is gone
// (cleanups run last first).
func keepMascotBooks(t *testing.T, k *siyuan.Client) {
	t.Helper()
	for _, p := range []string{mascotstore.StatsPath, mascotstore.EventsPath, mascotstore.AnalyticsPath, mascotstore.RotatedPath} {
		saved, found := readWorkspaceFile(t, k, p)
		t.Cleanup(func() {
			ctx := context.Background()
			if found {
				k.PutFile(ctx, siyuan.PutFileRequest{Path: p, Body: strings.NewReader(string(saved))})
			} else {
				k.RemoveFile(ctx, p)
			}
		})
	}
}

func readWorkspaceFile(t *testing.T, k *siyuan.Client, p string) ([]byte, bool) {
	t.Helper()
	rc, _, err := k.GetFile(context.Background(), p)
	if err != nil {
		return nil, false
	}
	defer rc.Close()
	var b strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := rc.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return []byte(b.String()), true
}
