package authority

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/mascotstore"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/testvars"
	"github.com/sisyphus-go/sisyphus/internal/tools/mascot"
)

// BenchmarkMascotOverhead is one block read through the runner with the
// mascot's books kept (a coin awaited per call, events and an analytics
// line queued) and without (as with the tool switched off), in one run;
// one client calling in turn, then 16 at once (whose coins share
// writes: writes/op):
//
//	go test ./internal/authority -run '^$' -bench BenchmarkMascotOverhead -benchtime 1000x
func BenchmarkMascotOverhead(b *testing.B) {
	ctx := context.Background()
	env, target, _, _, _ := newReadBench(b)
	raw, _ := json.Marshal(map[string]any{"action": "get_kramdown", "id": target})
	store := env.svc.Runner.Mascot
	call := func(b *testing.B, caller string) {
		res, err := env.svc.Runner.Run(ctx, Call{Tool: "block", Args: raw, Principal: "bench", Caller: caller, CancelOnDone: true})
		if err != nil || res.IsError {
			b.Errorf("%v %+v", err, res)
		}
	}
	for _, parallel := range []bool{false, true} {
		for _, on := range []bool{false, true} {
			b.Run(fmt.Sprintf("parallel=%t/mascot=%t", parallel, on), func(b *testing.B) {
				env.svc.Runner.Mascot = nil
				if on {
					env.svc.Runner.Mascot = store
				}
				w0 := store.BalanceWrites()
				if parallel {
					b.SetParallelism(8) // 16 goroutines on 2 cores
					var n atomic.Int64
					b.RunParallel(func(pb *testing.PB) {
						caller := fmt.Sprint("client", n.Add(1))
						for pb.Next() {
							call(b, caller)
						}
					})
				} else {
					for b.Loop() {
						call(b, "bench")
					}
				}
				b.ReportMetric(float64(store.BalanceWrites()-w0)/float64(b.N), "writes/op")
				store.Settle(ctx)
			})
		}
	}
}

// BenchmarkMascotOverheadLive is BenchmarkMascotOverhead's one client
// against a real SiYuan (SISYPHUS_LIVE_SIYUAN_URL and _TOKEN), reading the
// notebook list; the person's books are put back afterwards:
//
//	go test ./internal/authority -run '^$' -bench BenchmarkMascotOverheadLive -benchtime 200x
func BenchmarkMascotOverheadLive(b *testing.B) {
	url, tok := testvars.Live(b)
	ctx := context.Background()
	c, err := siyuan.New(siyuan.Config{BaseURL: url, Token: tok})
	if err != nil {
		b.Fatal(err)
	}
	files := mascot.KernelFiles{Kernel: c}
	for _, p := range []string{mascotstore.StatsPath, mascotstore.EventsPath, mascotstore.AnalyticsPath, mascotstore.RotatedPath} {
		saved, found, err := files.Read(ctx, p)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			if found {
				files.Write(ctx, p, saved)
			} else {
				c.RemoveFile(ctx, p)
			}
		})
	}
	l, err := strict.OpenLedger(filepath.Join(b.TempDir(), "ledger.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	svc, err := NewService(ServiceConfig{Kernel: c, Coordinator: strict.NewCoordinator(strict.CoordinatorConfig{Ledger: l}), Version: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(svc.Close)
	store := svc.Runner.Mascot
	raw := json.RawMessage(`{"action":"list"}`)
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("mascot=%t", on), func(b *testing.B) {
			svc.Runner.Mascot = nil
			if on {
				svc.Runner.Mascot = store
			}
			w0 := store.BalanceWrites()
			for b.Loop() {
				res, err := svc.Runner.Run(ctx, Call{Tool: "notebook", Args: raw, Principal: "bench", Caller: "bench", CancelOnDone: true})
				if err != nil || res.IsError {
					b.Fatalf("%v %+v", err, res)
				}
			}
			b.ReportMetric(float64(store.BalanceWrites()-w0)/float64(b.N), "writes/op")
			store.Settle(ctx)
		})
	}
}
