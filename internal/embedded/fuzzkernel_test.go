package embedded

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// fuzzKernel opens a kernel for a fuzz target and returns it with a poster
// that serves one request through the kernel's handler and fails the test
// unless the answer is an envelope without a recovered panic.
func fuzzKernel(f *testing.F) (*Kernel, func(t testing.TB, path, body string) map[string]any) {
	f.Helper()
	k, err := Open(context.Background(), Options{Dir: f.TempDir(), Token: "tok", SQLFlushInterval: time.Hour})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { k.Close() })
	h := k.Handler()
	return k, func(t testing.TB, path, body string) map[string]any {
		req := httptest.NewRequest("POST", path, strings.NewReader(body))
		req.Header.Set("Authorization", "Token tok")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		var env map[string]any
		if err := json.Unmarshal(w.Body.Bytes(), &env); err != nil {
			t.Fatalf("%s %s: not an envelope: %q", path, body, w.Body.String())
		}
		if msg, _ := env["msg"].(string); strings.HasPrefix(msg, "internal error") {
			t.Fatalf("%s %s: recovered panic: %s", path, body, msg)
		}
		return env
	}
}

// jsonPoster is a fuzzKernel poster taking its body as a value to encode.
func jsonPoster(post func(t testing.TB, path, body string) map[string]any) func(t testing.TB, path string, body any) map[string]any {
	return func(t testing.TB, path string, body any) map[string]any {
		raw, _ := json.Marshal(body)
		return post(t, path, string(raw))
	}
}
