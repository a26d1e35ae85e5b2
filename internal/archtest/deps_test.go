package archtest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// testOnlyModules are the modules that only tests use: the browser driver
// of the settings page's test, the linearizability checker of the history
// tests, the reference MCP client the endpoint is tested and measured
// against, and the pseudo-terminal the command line's prompt is answered
// on. A user's binary carries none of them: they would add size and
// code that never runs, and the MCP layer is written here (see
// docs/ARCHITECTURE.md) rather than taken from go-sdk.
var testOnlyModules = []string{
	"github.com/chromedp/chromedp",
	"github.com/chromedp/cdproto",
	"github.com/anishathalye/porcupine",
	"github.com/modelcontextprotocol/go-sdk",
	"github.com/creack/pty",
}

// testOnlyLeaks returns the packages of deps that belong to a test-only
// module.
func testOnlyLeaks(deps []string) []string {
	var leaks []string
	for _, d := range deps {
		for _, m := range testOnlyModules {
			if d == m || strings.HasPrefix(d, m+"/") {
				leaks = append(leaks, d)
			}
		}
	}
	return leaks
}

// TestBinaryLeavesOutTestOnlyModules fails when the sisyphus binary links a
// package of a test-only module (a test helper imported from product code,
// say).
func TestBinaryLeavesOutTestOnlyModules(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	// A module that left go.mod would make its entry here guard nothing.
	for _, m := range testOnlyModules {
		if !bytes.Contains(gomod, []byte("\t"+m+" ")) {
			t.Errorf("%s is no longer required by go.mod: drop it from testOnlyModules", m)
		}
	}
	cmd := exec.Command("go", "list", "-deps", "./cmd/sisyphus")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/sisyphus: %v\n%s", err, stderr.Bytes())
	}
	deps := strings.Fields(string(out))
	// The list must be the binary's: its own main package and a module it
	// does use are in it, or an empty answer would pass.
	for _, want := range []string{module + "/cmd/sisyphus", "go.etcd.io/bbolt"} {
		if !slices.Contains(deps, want) {
			t.Fatalf("go list -deps ./cmd/sisyphus does not list %s; got %d packages", want, len(deps))
		}
	}
	for _, leak := range testOnlyLeaks(deps) {
		t.Errorf("the sisyphus binary links %s, of a test-only module: import it from tests only", leak)
	}
}

// TestTestOnlyGuardCatchesLeaks proves the guard is not vacuous: a binary
// linking any test-only module, or a package under one, is reported.
func TestTestOnlyGuardCatchesLeaks(t *testing.T) {
	clean := []string{"fmt", "go.etcd.io/bbolt", "github.com/chromedp/chromedpx", module + "/internal/mcp"}
	if leaks := testOnlyLeaks(clean); len(leaks) != 0 {
		t.Errorf("reported %v in a clean list", leaks)
	}
	for _, bad := range []string{
		"github.com/chromedp/chromedp",
		"github.com/chromedp/cdproto/cdp",
		"github.com/anishathalye/porcupine",
		"github.com/modelcontextprotocol/go-sdk/mcp",
	} {
		if leaks := testOnlyLeaks(append(clean, bad)); len(leaks) != 1 || leaks[0] != bad {
			t.Errorf("a binary linking %s: reported %v", bad, leaks)
		}
	}
}
