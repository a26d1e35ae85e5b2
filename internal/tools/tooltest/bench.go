package tooltest

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"sort"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/embedded"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/testvars"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// Op is one operation a latency benchmark times.
type Op struct {
	Name string
	// Fn runs the operation once; n is unique across every run of every
	// op (the framework runs a benchmark more than once), for writes that
	// need new names.
	Fn func(n int)
}

// BenchLatency runs each op as a sub-benchmark and reports its p50 and
// p99 latencies (p50-ms, p99-ms) beside the mean.
func BenchLatency(b *testing.B, ops []Op) {
	n := 0
	for _, op := range ops {
		b.Run(op.Name, func(b *testing.B) {
			lat := make([]time.Duration, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				n++
				t0 := time.Now()
				op.Fn(n)
				lat[i] = time.Since(t0)
			}
			b.StopTimer()
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}

// BenchKernel is the kernel a benchmark runs against: the one
// SISYPHUS_BENCH_URL and SISYPHUS_BENCH_TOKEN name, or an embedded kernel
// of its own.
func BenchKernel(b *testing.B) *siyuan.Client {
	b.Helper()
	url, token := testvars.BenchKernel(b)
	if url == "" {
		k, err := embedded.Open(context.Background(), embedded.Options{Dir: b.TempDir(), Token: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		srv := httptest.NewServer(k.Handler())
		b.Cleanup(func() { srv.Close(); k.Close() })
		url, token = srv.URL, "bench"
	}
	c, err := siyuan.New(siyuan.Config{BaseURL: url, Token: token})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// Caller returns a function that calls tool on r and returns the answer as
// generic JSON, failing the benchmark on an error.
func Caller(b *testing.B, ctx context.Context, r *tools.Registry, tool string) func(args map[string]any) map[string]any {
	return func(args map[string]any) map[string]any {
		raw, _ := json.Marshal(args)
		v, err := r.Call(ctx, tool, raw)
		if err != nil {
			b.Fatal(err)
		}
		out, _ := json.Marshal(v)
		var m map[string]any
		json.Unmarshal(out, &m)
		return m
	}
}
