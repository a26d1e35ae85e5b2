package tooltest

import (
	"sort"
	"testing"
	"time"
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
