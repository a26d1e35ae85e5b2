package strict

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/canon"
)

func TestPruneEvery(t *testing.T) {
	var clock atomic.Int64
	clock.Store(time.Now().UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()) }
	l, err := OpenLedger(filepath.Join(t.TempDir(), "ledger.db"), WithLedgerClock(now))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	d, _ := canon.Digest(map[string]any{"a": 1})
	rec, err := l.Issue(ctx, Record{Tool: "t", Action: "a", ArgsDigest: d})
	if err != nil {
		t.Fatal(err)
	}
	clock.Add(int64(8 * 24 * time.Hour))
	pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	l.PruneEvery(pctx, 20*time.Millisecond)
	if _, found, err := l.Get(ctx, rid(rec.RequestID)); err != nil || found {
		t.Fatalf("record after a pruning pass: found=%v err=%v", found, err)
	}
	// The id stays reserved: a reuse is an expired request, never a new one.
	if _, err := l.Begin(ctx, rid(rec.RequestID), rec.Scope()); err == nil {
		t.Fatal("a pruned request id must not start again")
	}
}
