package embedded

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"
)

// FuzzMCPEndpoint sends fuzzed JSON-RPC bodies to /mcp in both eras: the
// endpoint answers JSON (or an empty 202 for a notification), with one of
// SiYuan's statuses, and never panics.
func FuzzMCPEndpoint(f *testing.F) {
	k, err := Open(context.Background(), Options{Dir: f.TempDir(), Token: "tok", SQLFlushInterval: time.Hour})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { k.Close() })
	h := k.Handler()
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"action":"fulltext","query":"a","page":-3,"pageSize":1e9}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"outline","arguments":{"action":"get","id":"../../x"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"plugin__sisyphus_example__stamp","arguments":{"id":"20200101000000-aaaaaaa","value":"v"}}}`,
		`{"jsonrpc":"2.0","id":{"a":1},"method":"initialize","params":[]}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`not json`,
	} {
		f.Add([]byte(s), true)
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, body []byte, stateless bool) {
		req := httptest.NewRequest("POST", "/mcp", bytes.NewReader(body))
		req.Header.Set("Authorization", "Token tok")
		if stateless {
			req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch rec.Code {
		case 200, 400, 404:
			var v map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
				t.Fatalf("%q: %d %q is not a JSON object", body, rec.Code, rec.Body.String())
			}
		case 202:
			if rec.Body.Len() != 0 {
				t.Fatalf("%q: 202 with a body", body)
			}
		default:
			t.Fatalf("%q: status %d", body, rec.Code)
		}
	})
}
