package contract

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/embedded"
)

// TestEmbedded runs the contract against an in-process embedded kernel. The
// SQL index flush interval is long, so the index lag is always observable.
func TestEmbedded(t *testing.T) {
	k := openKernel(t)
	srv := httptest.NewServer(k.Handler())
	t.Cleanup(srv.Close)
	Run(t, Kernel{URL: srv.URL, Token: k.Token()})
}

// TestEmbeddedInProcess runs the contract through the embedded kernel's
// in-process transport (what `serve --embedded` reaches its kernel by): the
// same answers as over a socket, down to status codes, streamed files and
// dropped exchanges.
func TestEmbeddedInProcess(t *testing.T) {
	k := openKernel(t)
	Run(t, Kernel{URL: "http://embedded.invalid", Token: k.Token(), HTTPClient: &http.Client{Transport: k.Transport()}})
}

// openKernel opens an embedded kernel on a fresh workspace. Its SQL index
// flush interval is long, so the index lag is always observable.
func openKernel(t *testing.T) *embedded.Kernel {
	t.Helper()
	k, err := embedded.Open(t.Context(), embedded.Options{
		Dir:              t.TempDir(),
		Token:            "contract-test-token",
		SQLFlushInterval: time.Hour,
	})
	if err != nil {
		t.Fatalf("embedded.Open: %v", err)
	}
	t.Cleanup(func() {
		if err := k.Close(); err != nil {
			t.Errorf("embedded kernel Close: %v", err)
		}
	})
	return k
}
