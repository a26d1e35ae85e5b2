package authority

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/testvars"
)

// BenchmarkReadOverMCP is the read of issue 14 as serve --embedded serves
// it: block get_kramdown over a legacy session, the kernel reached in
// process, against the bare getBlockKramdown over loopback HTTP and an MCP
// ping, on a paragraph of a 1,000-paragraph document; http_static is one
// loopback exchange with a fixed answer, the floor of every row. Compare the
// sub-benchmarks of one run as ratios.
//
//	go test ./internal/authority -run '^$' -bench BenchmarkReadOverMCP -benchtime 5000x
//	SISYPHUS_BENCH_SETTLE=100ms go test ./internal/authority -run '^$' -bench BenchmarkReadOverMCP -benchtime 100x
func BenchmarkReadOverMCP(b *testing.B) {
	ctx := context.Background()
	env, target, hc, bare, m := newReadBench(b)
	k, c := env.k, env.c
	// One loopback HTTP exchange with a fixed answer: what any of the
	// rows below pays before its own work.
	floor := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"code":0,"msg":"","data":null}`)
	}))
	defer floor.Close()
	static := &client{hc: hc, url: floor.URL}
	args := map[string]any{"action": "get_kramdown", "id": target}
	// SISYPHUS_BENCH_SETTLE=100ms idles between calls, as bench-e2e does:
	// a call then meets a machine at rest, as an agent's does.
	settle := testvars.BenchSettle.Duration(b, 0)
	for _, op := range []struct {
		name string
		do   func() error
	}{
		{"bare_getBlockKramdown", func() error { return bare.kernel(map[string]any{"id": target}) }},
		{"http_static", func() error { return static.kernel(map[string]any{"id": target}) }},
		{"mcp_ping", func() error { return m.do("ping", "", nil) }},
		{"handler_direct", func() error {
			rec := httptest.NewRecorder()
			req := httptest.NewRequest("POST", "/api/block/getBlockKramdown", strings.NewReader(`{"id":"`+target+`"}`))
			req.Header.Set("Authorization", "Token k")
			k.Handler().ServeHTTP(rec, req)
			if rec.Code != 200 {
				return fmt.Errorf("%d", rec.Code)
			}
			return nil
		}},
		{"inproc_kernel", func() error { _, err := c.GetBlockKramdown(ctx, target); return err }},
		{"mcp_help", func() error {
			return m.do("tools/call", "block", map[string]any{"name": "block", "arguments": map[string]any{"action": "help", "topic": "get_kramdown"}})
		}},
		{"mcp_get_kramdown", func() error { return m.do("tools/call", "block", map[string]any{"name": "block", "arguments": args}) }},
	} {
		b.Run(op.name, func(b *testing.B) {
			lat := make([]time.Duration, b.N)
			for i := range b.N {
				if settle > 0 {
					b.StopTimer()
					time.Sleep(settle)
					b.StartTimer()
				}
				t0 := time.Now()
				if err := op.do(); err != nil {
					b.Fatal(err)
				}
				lat[i] = time.Since(t0)
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-µs")
		})
	}
}

// BenchmarkReadLayers takes the read of BenchmarkReadOverMCP apart by
// layer, each row the one below it plus one layer, interleaved in every
// iteration so that all rows meet the same minute of a noisy machine:
// kernel_handler (the embedded kernel's handler, called directly), inproc
// (the kernel client's in-process call: request, transport, decoding),
// registry (the tool: arguments, gate, action), runner (admission, the
// read lane, the result), mcp_handler (the routes and the MCP server:
// authentication, JSON-RPC, session, encoding; no socket), and over
// loopback HTTP the bare getBlockKramdown and the whole read over MCP.
// The difference of two rows is what the upper layer costs; run it with
// SISYPHUS_BENCH_SETTLE (20ms, 100ms) for what a call after a pause costs.
//
//	SISYPHUS_BENCH_SETTLE=20ms go test ./internal/authority -run '^$' -bench BenchmarkReadLayers -benchtime 300x
//	SISYPHUS_BENCH_ROW=mcp_handler go test ./internal/authority -run '^$' -bench BenchmarkReadLayers -benchmem -benchtime 5000x
func BenchmarkReadLayers(b *testing.B) {
	ctx := context.Background()
	env, target, _, bare, m := newReadBench(b)
	args := map[string]any{"action": "get_kramdown", "id": target}
	raw, _ := json.Marshal(args)
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": map[string]any{"name": "block", "arguments": args}})
	routes := Routes(env.svc.MCP, RoutesConfig{Token: "t", Admission: env.svc.Admission})
	kernel := env.k.Handler()
	settle := testvars.BenchSettle.Duration(b, 0)
	type row struct {
		name string
		do   func() error
	}
	rows := []row{
		{"kernel_handler", func() error {
			rec := httptest.NewRecorder()
			req := httptest.NewRequest("POST", "/api/block/getBlockKramdown", strings.NewReader(`{"id":"`+target+`"}`))
			req.Header.Set("Authorization", "Token k")
			kernel.ServeHTTP(rec, req)
			if rec.Code != 200 {
				return fmt.Errorf("%d %s", rec.Code, rec.Body)
			}
			return nil
		}},
		{"inproc", func() error { _, err := env.c.GetBlockKramdown(ctx, target); return err }},
		{"registry", func() error { _, err := env.svc.Registry.Call(ctx, "block", raw); return err }},
		{"runner", func() error {
			res, err := env.svc.Runner.Run(ctx, Call{Tool: "block", Args: raw, Principal: "bench", Caller: "bench", CancelOnDone: true})
			if err == nil && res.IsError {
				err = fmt.Errorf("%+v", res)
			}
			return err
		}},
		{"mcp_handler", func() error {
			rec := httptest.NewRecorder()
			req := httptest.NewRequest("POST", "/mcp", bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer t")
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Session-Id", m.session)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
			routes.ServeHTTP(rec, req)
			if rec.Code != 200 || bytes.Contains(rec.Body.Bytes(), []byte(`"isError":true`)) {
				return fmt.Errorf("%d %s", rec.Code, rec.Body)
			}
			return nil
		}},
		{"bare_http", func() error { return bare.kernel(map[string]any{"id": target}) }},
		{"mcp_http", func() error { return m.do("tools/call", "block", map[string]any{"name": "block", "arguments": args}) }},
	}
	// SISYPHUS_BENCH_ROW=name times that row alone; with -benchmem its
	// allocations are then the row's own.
	if only := testvars.BenchRow.Value(); only != "" {
		rows = slices.DeleteFunc(rows, func(r row) bool { return r.name != only })
		if len(rows) == 0 {
			b.Fatalf("SISYPHUS_BENCH_ROW=%s: no such row", only)
		}
	}
	lat := make([][]time.Duration, len(rows))
	b.ResetTimer() // the document's setup is not a row's
	for range b.N {
		for i, r := range rows {
			if settle > 0 {
				b.StopTimer()
				time.Sleep(settle)
				b.StartTimer()
			}
			t0 := time.Now()
			if err := r.do(); err != nil {
				b.Fatalf("%s: %v", r.name, err)
			}
			lat[i] = append(lat[i], time.Since(t0))
		}
	}
	for i, r := range rows {
		slices.Sort(lat[i])
		b.ReportMetric(float64(lat[i][len(lat[i])/2].Nanoseconds())/1e3, r.name+"-p50-µs")
	}
}

// newReadBench is the read benchmarks' setting: the service in process over
// a 1,000-paragraph document, its paragraph 500, a bare client of the
// kernel's getBlockKramdown and an MCP client in a legacy session.
func newReadBench(b *testing.B) (env *benchEnv, target string, hc *http.Client, bare, m *client) {
	var md strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&md, "Paragraph %d of the benchmark document, with **some** text in it.\n\n", i)
	}
	env = newBenchEnv(b, md.String(), true)
	hc = &http.Client{}
	bare = &client{hc: hc, url: env.ks.URL + "/api/block/getBlockKramdown"}
	m = &client{hc: hc, url: env.ours.URL + "/mcp"}
	if err := m.do("initialize", "", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "b", "version": "1"}}); err != nil {
		b.Fatal(err)
	}
	return env, env.kids[499].ID, hc, bare, m
}

// kernel posts body to the kernel endpoint at c.url and checks the envelope.
func (c *client) kernel(body any) error {
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", c.url, bytes.NewReader(raw))
	req.Header.Set("Authorization", "Token k")
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var env struct {
		Code int `json:"code"`
	}
	out, _ := io.ReadAll(resp.Body)
	if json.Unmarshal(out, &env) != nil || env.Code != 0 {
		return fmt.Errorf("%s: %s", c.url, out)
	}
	return nil
}
