package authority

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"sort"
	"sync"
	"testing"
	"time"
)

// BenchmarkDelegatedStrictWrite measures one strict write (preflight, then
// commit, of block update) made on the authority itself, the same write made
// by a front (stdio, sisyphus call, serve --authority) that delegates both
// calls over loopback HTTP, and, for scale, an agent calling the
// authority's /mcp directly. The three alternate within each iteration so
// that ledger fsync noise hits them alike; "overhead" is the p50 of the
// per-iteration difference front − authority.
//
//	go test ./internal/authority -run '^$' -bench BenchmarkDelegatedStrictWrite -benchtime 2000x
func BenchmarkDelegatedStrictWrite(b *testing.B) {
	a := startAuth(b, authOpts{})
	para := a.paragraph(b)
	front, _ := a.newFront(b, a.hs.URL, DelegatorConfig{})
	hc := &http.Client{}
	viaHTTP := func(args map[string]any) map[string]any {
		_, body := postCallWith(b, hc, a.hs.URL, "t", "block", args, "")
		var m struct {
			Result struct {
				Structured map[string]any `json:"structuredContent"`
				IsError    bool           `json:"isError"`
			} `json:"result"`
		}
		json.Unmarshal(body, &m)
		if m.Result.IsError {
			b.Fatalf("%v: %s", args, body)
		}
		return m.Result.Structured
	}
	modes := []struct {
		name string
		do   func(args map[string]any) map[string]any
	}{
		{"authority", func(args map[string]any) map[string]any { return ok(b, a.rn, "block", args) }},
		{"front", func(args map[string]any) map[string]any { return ok(b, front, "block", args) }},
		{"mcp-http", viaHTTP},
	}
	lat := make([][]time.Duration, len(modes))
	diff := make([]time.Duration, 0, b.N)
	seq := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var took [3]time.Duration
		for j := range modes {
			m := modes[(i+j)%len(modes)]
			seq++
			upd := map[string]any{"action": "update", "id": para, "data": fmt.Sprintf("%s write %d", m.name, seq)}
			t0 := time.Now()
			pre := m.do(plus(upd, "validateOnly", true))
			res := m.do(commitArgs(upd, pre))
			took[(i+j)%len(modes)] = time.Since(t0)
			if res["status"] != "committed" {
				b.Fatalf("commit: %v", res)
			}
		}
		for k := range modes {
			lat[k] = append(lat[k], took[k])
		}
		diff = append(diff, took[1]-took[0])
	}
	b.StopTimer()
	p := func(l []time.Duration, q int) float64 {
		s := append([]time.Duration(nil), l...)
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
		return float64(s[len(s)*q/100].Microseconds())
	}
	for k, m := range modes {
		b.ReportMetric(p(lat[k], 50), m.name+"-p50-µs")
	}
	b.ReportMetric(p(diff, 50), "overhead-p50-µs")
	b.ReportMetric(p(diff, 90), "overhead-p90-µs")
}

// BenchmarkAdmission128InFlight runs rounds of 128 concurrent calls (120
// reads of the kernel, 8 strict preflights in the write lane) through the
// authority's Runner, so that admission holds 128 calls in flight each
// round, and reports the goroutines and live heap left once they settle,
// against the same numbers after the first round.
//
//	go test ./internal/authority -run '^$' -bench BenchmarkAdmission128InFlight -benchtime 50x
func BenchmarkAdmission128InFlight(b *testing.B) {
	a := startAuth(b, authOpts{})
	para := a.paragraph(b)
	read := mustJSON(map[string]any{"action": "get_kramdown", "id": para})
	pre := mustJSON(map[string]any{"action": "update", "id": para, "data": "x", "validateOnly": true})
	round := func() {
		var wg sync.WaitGroup
		for i := 0; i < 128; i++ {
			args := read
			if i%16 == 0 {
				args = pre
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if res, _ := a.rn.Run(context.Background(), Call{Tool: "block", Args: args}); res.IsError {
					b.Errorf("%s", res.Content[0].Text)
				}
			}()
		}
		wg.Wait()
	}
	settle := func() (int, uint64) {
		runtime.GC()
		time.Sleep(20 * time.Millisecond)
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return runtime.NumGoroutine(), ms.HeapAlloc
	}
	round()
	g0, h0 := settle()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		round()
	}
	b.StopTimer()
	g1, h1 := settle()
	if st := a.adm.Stats(); st.InFlight != 0 {
		b.Fatalf("in flight after settling: %d", st.InFlight)
	}
	b.ReportMetric(float64(g1-g0), "goroutines-left")
	b.ReportMetric((float64(h1)-float64(h0))/1024, "heap-growth-KiB")
}
