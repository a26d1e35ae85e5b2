package authority

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
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
