package mascot

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/mascotstore"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// shopOf is a shop a test may change between a preflight and its commit.
type shopOf struct {
	mu    sync.Mutex
	items []Item
}

func (s *shopOf) get() []Item {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Item(nil), s.items...)
}

func (s *shopOf) set(items []Item) { s.mu.Lock(); s.items = items; s.mu.Unlock() }

func putStats(t *testing.T, c *siyuan.Client, body string) {
	t.Helper()
	if err := c.PutFile(context.Background(), siyuan.PutFileRequest{Path: mascotstore.StatsPath, Body: strings.NewReader(body)}); err != nil {
		t.Fatal(err)
	}
}

func stats(t *testing.T, c *siyuan.Client) mascotstore.Stats {
	t.Helper()
	rc, _, err := c.GetFile(context.Background(), mascotstore.StatsPath)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var b bytes.Buffer
	io.Copy(&b, rc)
	st, err := mascotstore.ParseStats(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestReads(t *testing.T) {
	f := tooltest.New(t, func() []*tools.Tool { return []*tools.Tool{Tool()} })
	if got := f.OK(t, Name, map[string]any{"action": "get_balance"}); got["balance"] != float64(0) || got["totalEarned"] != float64(0) {
		t.Fatalf("no file: %v", got)
	}
	putStats(t, f.C, `{"totalCalls":12}`)
	if got := f.OK(t, Name, map[string]any{"action": "get_balance"}); got["balance"] != float64(12) || got["totalEarned"] != float64(12) {
		t.Fatalf("upstream file without balance: %v", got)
	}
	got := f.OK(t, Name, map[string]any{"action": "shop"})
	items, _ := got["items"].([]any)
	if len(items) != len(Inventory()) {
		t.Fatalf("shop: %v", got)
	}
	first, _ := items[0].(map[string]any)
	if first["id"] != "cat-food" || first["cost"] != float64(5) || first["type"] != "food" || first["emoji"] != "🍖" {
		t.Fatalf("shop item: %v", first)
	}
}

func TestBuy(t *testing.T) {
	shop := &shopOf{items: Inventory()}
	f := tooltest.NewStrict(t, false, func() []*tools.Tool { return []*tools.Tool{toolOf(shop.get)} })
	putStats(t, f.C, `{"totalCalls":20,"balance":9,"updatedAt":1,"hat":"red"}`)
	buy := map[string]any{"action": "buy", "item_id": "chicken-leg"}

	pre := f.Preflight(t, Name, buy, "expectedStateHash", 1)
	if pre["balance"] != float64(9) {
		t.Fatalf("preflight notes: %v", pre)
	}
	res := f.Commit(t, Name, buy, pre)
	if res["item_id"] != "chicken-leg" || res["cost"] != float64(7) || res["balance"] != float64(2) || res["emoji"] != "🍗" || res["totalEarned"] != float64(20) {
		t.Fatalf("commit: %v", res)
	}
	st := stats(t, f.C)
	if st.Balance != 2 || st.Spent != 7 || st.TotalCalls != 20 || st.LastPurchase == nil || st.LastPurchase.ItemID != "chicken-leg" {
		t.Fatalf("file: %+v", st)
	}
	f.Replay(t, Name, buy, pre, res)
	if st := stats(t, f.C); st.Balance != 2 {
		t.Fatalf("the replay spent again: %+v", st)
	}

	// Insufficient at preflight, and at commit (the balance fell after
	// the preflight passed).
	e := f.WantErr(t, Name, tooltest.CopyArgs(buy, "validateOnly", true), failure.InsufficientBalance)
	if e.Details["need"] != int64(7) && e.Details["need"] != float64(7) {
		t.Fatalf("details %+v", e.Details)
	}
	milk := map[string]any{"action": "buy", "item_id": "milk"}
	putStats(t, f.C, `{"totalCalls":20,"balance":5}`)
	pre = f.Preflight(t, Name, milk, "expectedStateHash", 1)
	putStats(t, f.C, `{"totalCalls":20,"balance":2}`)
	e = f.WantErr(t, Name, tooltest.CommitArgs(milk, pre), failure.InsufficientBalance)
	if e.WriteAttempted == nil || *e.WriteAttempted {
		t.Fatalf("insufficient at commit: %+v", e)
	}
	if st := stats(t, f.C); st.Balance != 2 {
		t.Fatalf("spent: %+v", st)
	}

	// Earnings between preflight and commit do not make it stale.
	putStats(t, f.C, `{"totalCalls":20,"balance":5}`)
	pre = f.Preflight(t, Name, milk, "expectedStateHash", 1)
	putStats(t, f.C, `{"totalCalls":30,"balance":15}`)
	f.Commit(t, Name, milk, pre)
	if st := stats(t, f.C); st.Balance != 12 || st.TotalCalls != 30 {
		t.Fatalf("after earnings: %+v", st)
	}

	// A price that changed since the preflight is stale.
	pre = f.Preflight(t, Name, milk, "expectedStateHash", 1)
	f.Drifted(t, Name, milk, pre, func() {
		items := Inventory()
		items[1].Cost = 4
		shop.set(items)
	})
	if st := stats(t, f.C); st.Balance != 12 {
		t.Fatalf("a stale commit spent: %+v", st)
	}

	// An unknown item.
	f.WantErr(t, Name, map[string]any{"action": "buy", "item_id": "caviar", "validateOnly": true}, failure.NotFound)
}

// A file the store cannot read as upstream's is never written over.
func TestBuyMalformedFile(t *testing.T) {
	f := tooltest.NewStrict(t, false, func() []*tools.Tool { return []*tools.Tool{Tool()} })
	putStats(t, f.C, `[]`)
	f.WantErr(t, Name, map[string]any{"action": "buy", "item_id": "milk", "validateOnly": true}, failure.Internal)
}
