package contract

import (
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/testvars"
)

// TestLive runs the contract against a real SiYuan kernel when
// SISYPHUS_LIVE_SIYUAN_URL and SISYPHUS_LIVE_SIYUAN_TOKEN are set. Everything
// it creates lives in its own sisyphus-contract-<random> notebook and folders
// (see the package comment for the plugin-storage files) and is removed at
// the end.
func TestLive(t *testing.T) {
	url, token := testvars.Live(t)
	Run(t, Kernel{URL: url, Token: token, Live: true})
}
