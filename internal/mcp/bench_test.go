package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkHTTP measures tools/list and tools/call of an in-memory tool over
// real loopback HTTP with 1 and 64 concurrent clients, against this package
// (modern and legacy era) and, in the same run, against go-sdk's own
// Streamable HTTP server serving an equivalent tool (stateless for the
// modern era, stateful for legacy; JSON responses). Every target is driven
// by the same raw HTTP client code. Reported: p50 and p99 latency in
// microseconds and requests per second.
//
//	go test ./internal/mcp -run '^$' -bench BenchmarkHTTP -benchtime 2000x
func BenchmarkHTTP(b *testing.B) {
	ours := NewServer(Options{Name: "bench", Version: "1"})
	defer ours.Close()
	ours.AddTool(Tool{Name: "echo", Description: "echo", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}},
		Handler: func(ctx context.Context, req *CallRequest) (*CallResult, error) {
			var a struct {
				Text string `json:"text"`
			}
			_ = json.Unmarshal(req.Arguments, &a)
			return TextResult(a.Text), nil
		}})
	oursHTTP := httptest.NewServer(ours.HTTPHandler(HTTPOptions{}))
	defer oursHTTP.Close()

	newSDK := func() *sdk.Server {
		s := sdk.NewServer(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
		s.AddTool(&sdk.Tool{Name: "echo", Description: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
			func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				var a struct {
					Text string `json:"text"`
				}
				_ = json.Unmarshal(req.Params.Arguments, &a)
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: a.Text}}}, nil
			})
		return s
	}
	sdkStateless, sdkStateful := newSDK(), newSDK()
	sdkModernHTTP := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return sdkStateless },
		&sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true}))
	defer sdkModernHTTP.Close()
	sdkLegacyHTTP := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return sdkStateful },
		&sdk.StreamableHTTPOptions{JSONResponse: true}))
	defer sdkLegacyHTTP.Close()

	client := &http.Client{Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256, IdleConnTimeout: time.Minute}}
	defer client.CloseIdleConnections()

	targets := []struct {
		name   string
		url    string
		modern bool
	}{
		{"sisyphus/modern", oursHTTP.URL, true},
		{"sisyphus/legacy", oursHTTP.URL, false},
		{"gosdk/modern-stateless", sdkModernHTTP.URL, true},
		{"gosdk/legacy-stateful", sdkLegacyHTTP.URL, false},
	}
	for _, tg := range targets {
		for _, op := range []string{"tools_list", "tools_call"} {
			for _, clients := range []int{1, 64} {
				b.Run(fmt.Sprintf("%s/%s/clients=%d", tg.name, op, clients), func(b *testing.B) {
					benchTarget(b, client, tg.url, tg.modern, op, clients)
				})
			}
		}
	}
}

type benchClient struct {
	http    *http.Client
	url     string
	modern  bool
	session string
	id      int64
}

func (c *benchClient) post(body []byte, method, name string) ([]byte, error) {
	req, err := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.modern {
		req.Header.Set("Mcp-Protocol-Version", ModernProtocolVersion)
		req.Header.Set("Mcp-Method", method)
		if name != "" {
			req.Header.Set("Mcp-Name", name)
		}
	} else if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("status %d: %s", resp.StatusCode, out)
	}
	if method == "initialize" {
		c.session = resp.Header.Get("Mcp-Session-Id")
	}
	return out, nil
}

func (c *benchClient) request(method, name string, params map[string]any) error {
	c.id++
	if params == nil {
		params = map[string]any{}
	}
	if c.modern {
		params["_meta"] = map[string]any{
			MetaProtocolVersion:    ModernProtocolVersion,
			MetaClientInfo:         map[string]any{"name": "bench", "version": "1"},
			MetaClientCapabilities: map[string]any{},
		}
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	out, err := c.post(body, method, name)
	if err != nil {
		return err
	}
	if bytes.Contains(out, []byte(`"error":{`)) {
		return fmt.Errorf("%s: %s", method, out)
	}
	return nil
}

func (c *benchClient) init() error {
	if c.modern {
		return nil
	}
	if err := c.request("initialize", "", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "bench", "version": "1"}}); err != nil {
		return err
	}
	_, err := c.post([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), "notifications/initialized", "")
	return err
}

func (c *benchClient) op(op string) error {
	if op == "tools_list" {
		return c.request("tools/list", "", nil)
	}
	return c.request("tools/call", "echo", map[string]any{"name": "echo", "arguments": map[string]any{"text": "hello"}})
}

func benchTarget(b *testing.B, hc *http.Client, url string, modern bool, op string, clients int) {
	cs := make([]*benchClient, clients)
	for i := range cs {
		cs[i] = &benchClient{http: hc, url: url, modern: modern}
		if err := cs[i].init(); err != nil {
			b.Fatal(err)
		}
		if err := cs[i].op(op); err != nil { // warm up the connection
			b.Fatal(err)
		}
	}
	lat := make([]time.Duration, b.N)
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for _, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				t0 := time.Now()
				if err := c.op(op); err != nil {
					failed.Store(err)
					return
				}
				lat[i] = time.Since(t0)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) float64 {
		return float64(lat[int(p*float64(len(lat)-1))].Nanoseconds()) / 1e3
	}
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
}
