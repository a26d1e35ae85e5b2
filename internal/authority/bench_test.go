package authority

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sisyphus-go/sisyphus/internal/embedded"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// BenchmarkServe measures the real endpoint: tools/list, and a tools/call of
// a read served from the embedded kernel (block get_kramdown), over loopback
// HTTP at 1 and 64 concurrent clients, in both eras. In the same run it
// measures go-sdk's own Streamable HTTP server serving an equivalent
// in-memory tool, so the two can be compared as a ratio.
//
//	go test ./internal/authority -run '^$' -bench BenchmarkServe -benchtime 3000x
func BenchmarkServe(b *testing.B) {
	env := newBenchEnv(b, "a paragraph to read", false)
	kids, svc, ours := env.kids, env.svc, env.ours
	reg := svc.Registry

	// go-sdk serves the same five tools (names, descriptions, schemas), each
	// answering from memory what block get_kramdown answers from the kernel.
	newSDK := func() *sdk.Server {
		s := sdk.NewServer(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
		for _, t := range reg.Tools() {
			schema, _ := json.Marshal(t.InputSchema(tools.View{Policy: tools.Unrestricted(), Strict: true}))
			s.AddTool(&sdk.Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: json.RawMessage(schema)},
				func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
					out := map[string]any{"id": kids[0].ID, "kramdown": "a paragraph to read\n{: id=\"" + kids[0].ID + "\"}"}
					txt, _ := json.Marshal(out)
					return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(txt)}}, StructuredContent: out}, nil
				})
		}
		return s
	}
	sdkModernServer := newSDK()
	sdkModern := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return sdkModernServer },
		&sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true}))
	defer sdkModern.Close()
	sdkLegacyServer := newSDK()
	sdkLegacy := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return sdkLegacyServer },
		&sdk.StreamableHTTPOptions{JSONResponse: true}))
	defer sdkLegacy.Close()

	hc := &http.Client{Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256}}
	args := map[string]any{"action": "get_kramdown", "id": kids[0].ID}
	for _, tg := range []struct {
		name, url string
		modern    bool
	}{
		{"sisyphus/modern", ours.URL + "/mcp", true},
		{"gosdk/modern", sdkModern.URL, true},
		{"sisyphus/legacy", ours.URL + "/mcp", false},
		{"gosdk/legacy", sdkLegacy.URL, false},
	} {
		for _, op := range []string{"tools_list", "tools_call"} {
			for _, n := range []int{1, 64} {
				b.Run(fmt.Sprintf("%s/%s/clients=%d", tg.name, op, n), func(b *testing.B) {
					run(b, hc, tg.url, tg.modern, op, n, args)
				})
			}
		}
	}
}

// benchEnv is an embedded kernel on loopback HTTP with one document of md,
// and Sisyphus's service over it on loopback HTTP (token "t"). inProcess
// reaches the kernel as serve --embedded does; otherwise over its socket.
type benchEnv struct {
	k    *embedded.Kernel
	ks   *httptest.Server
	c    *siyuan.Client
	kids []siyuan.ChildBlock
	svc  *Service
	ours *httptest.Server
}

func newBenchEnv(b *testing.B, md string, inProcess bool) *benchEnv {
	ctx := context.Background()
	k, err := embedded.Open(ctx, embedded.Options{Dir: b.TempDir(), Token: "k"})
	if err != nil {
		b.Fatal(err)
	}
	ks := httptest.NewServer(k.Handler())
	b.Cleanup(func() { ks.Close(); k.Close() })
	cfg := siyuan.Config{BaseURL: ks.URL, Token: "k"}
	if inProcess {
		cfg.HTTPClient = &http.Client{Transport: k.Transport()}
	}
	c, _ := siyuan.New(cfg)
	nbs, _ := c.ListNotebooks(ctx)
	doc, err := c.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: nbs[0].ID, Path: "/bench", Markdown: md})
	if err != nil {
		b.Fatal(err)
	}
	kids, _ := c.GetChildBlocks(ctx, doc)
	l, err := strict.OpenLedger(filepath.Join(b.TempDir(), "ledger.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	svc, err := NewService(ServiceConfig{Kernel: c, Coordinator: strict.NewCoordinator(strict.CoordinatorConfig{Ledger: l}), Version: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	ours := httptest.NewServer(Routes(svc.MCP, RoutesConfig{Token: "t", Admission: svc.Admission}))
	b.Cleanup(func() { ours.Close(); svc.Close() })
	return &benchEnv{k: k, ks: ks, c: c, kids: kids, svc: svc, ours: ours}
}

type client struct {
	hc      *http.Client
	url     string
	modern  bool
	session string
	id      atomic.Int64
}

func (c *client) do(method, name string, params map[string]any) error {
	if params == nil {
		params = map[string]any{}
	}
	if c.modern {
		params["_meta"] = map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
			"io.modelcontextprotocol/clientInfo": map[string]any{"name": "b", "version": "1"}, "io.modelcontextprotocol/clientCapabilities": map[string]any{}}
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id.Add(1), "method": method, "params": params})
	req, _ := http.NewRequest("POST", c.url, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer t")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.modern {
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", method)
		if name != "" {
			req.Header.Set("Mcp-Name", name)
		}
	} else if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 || bytes.Contains(out, []byte(`"error":{`)) || bytes.Contains(out, []byte(`"isError":true`)) {
		return fmt.Errorf("%s: %d %s", method, resp.StatusCode, out)
	}
	if method == "initialize" {
		c.session = resp.Header.Get("Mcp-Session-Id")
	}
	return nil
}

func run(b *testing.B, hc *http.Client, url string, modern bool, op string, n int, args map[string]any) {
	cs := make([]*client, n)
	for i := range cs {
		cs[i] = &client{hc: hc, url: url, modern: modern}
		if !modern {
			if err := cs[i].do("initialize", "", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
				"clientInfo": map[string]any{"name": "b", "version": "1"}}); err != nil {
				b.Fatal(err)
			}
		}
	}
	call := func(c *client) error {
		if op == "tools_list" {
			return c.do("tools/list", "", nil)
		}
		return c.do("tools/call", "block", map[string]any{"name": "block", "arguments": args})
	}
	for _, c := range cs {
		if err := call(c); err != nil {
			b.Fatal(err)
		}
	}
	lat := make([]time.Duration, b.N)
	var next atomic.Int64
	var fail atomic.Value
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for _, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(b.N); i = next.Add(1) - 1 {
				t0 := time.Now()
				if err := call(c); err != nil {
					fail.Store(err)
					return
				}
				lat[i] = time.Since(t0)
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	b.StopTimer()
	if err, _ := fail.Load().(error); err != nil {
		b.Fatal(err)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(b.N)/el.Seconds(), "req/s")
}
