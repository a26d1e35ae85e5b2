package strict

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/canon"
)

// BenchmarkLedgerPreflight is the ledger's share of a preflight: take a
// reserved request id and keep the request as issued, in memory; one call in
// idPoolSize reserves the next batch of ids, in one fsynced transaction.
func BenchmarkLedgerPreflight(b *testing.B) {
	ctx := context.Background()
	l, err := OpenLedger(filepath.Join(b.TempDir(), LedgerFile), WithLedgerLogger(quiet))
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	for b.Loop() {
		if _, err := l.Issue(ctx, testRecord(blockScope)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLedgerCommit is the ledger's share of a commit: Begin (executing,
// fsynced before dispatch) and Finish (committed with a receipt).
func BenchmarkLedgerCommit(b *testing.B) {
	ctx := context.Background()
	l, err := OpenLedger(filepath.Join(b.TempDir(), LedgerFile), WithLedgerLogger(quiet))
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	receipt := json.RawMessage(`{"success":true,"id":"20260812120000-abcdefg","targetCount":1}`)
	ids := make([]string, 0, 1024)
	for b.Loop() {
		b.StopTimer()
		if len(ids) == 0 {
			l.DB().NoSync = true
			for i := 0; i < cap(ids); i++ {
				r, err := l.Issue(ctx, testRecord(blockScope))
				if err != nil {
					b.Fatal(err)
				}
				ids = append(ids, r.RequestID)
			}
			l.DB().NoSync = false
		}
		id := ids[len(ids)-1]
		ids = ids[:len(ids)-1]
		b.StartTimer()
		if _, err := l.Begin(ctx, rid(id), blockScope); err != nil {
			b.Fatal(err)
		}
		if _, err := l.Finish(ctx, rid(id), StatusCommitted, prevHash, resultHash, receipt); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLeaseAndAlias is the in-memory part: alias, lease put and take.
func BenchmarkLeaseAndAlias(b *testing.B) {
	aliases := NewAliasPool()
	pool := NewLeasePool(aliases, nil)
	digest := canon.DigestBytes([]byte("state"))
	scope := NewScope("block", "update", argsA, []string{"20260812120000-abcdefg"})
	for b.Loop() {
		l, err := pool.Put(guarded(scope, digest, "b72f"))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := pool.Take(scope, cred(l.Credential), time.Now()); err != nil {
			b.Fatal(err)
		}
		aliases.Alias(resultHash)
	}
}

func FuzzParseCredential(f *testing.F) {
	for _, s := range []string{"8ac2", "sha256:v1:8AC2", strings.Repeat("f", 64), "sha256:v1:", "", "b72f-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCredential(s)
		if err != nil {
			return
		}
		h := string(c)
		if len(h) < MinAliasLen || len(h) > 64 || !isLowerHex(h) {
			t.Fatalf("ParseCredential(%q) = %q", s, h)
		}
		if !strings.HasSuffix(strings.ToLower(s), h) {
			t.Fatalf("ParseCredential(%q) = %q is not its tail", s, h)
		}
		if again, err := ParseCredential(h); err != nil || again != c {
			t.Fatalf("not idempotent: %q → %q, %v", h, again, err)
		}
		if id, err := ParseRequestID(s); err == nil && (!isLowerHex(string(id)) || len(id) > MaxRequestIDLen) {
			t.Fatalf("ParseRequestID(%q) = %q", s, id)
		}
	})
}
