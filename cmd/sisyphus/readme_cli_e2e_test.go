package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// readmeBlock is the fenced block that follows marker in README.md.
func readmeBlock(t *testing.T, marker string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(data), marker)
	if !ok {
		t.Fatalf("README.md has no %q", marker)
	}
	_, body, ok := strings.Cut(after, "```sh\n")
	if !ok {
		t.Fatal("no ```sh block after the marker")
	}
	body, _, ok = strings.Cut(body, "```")
	if !ok {
		t.Fatal("the block is not closed")
	}
	return body
}

// TestReadmeCommandLine runs the README's command-line examples as
// printed, in the folder where the demo's `serve --embedded
// ./demo-workspace` runs, with a fresh home and the binary on PATH.
func TestReadmeCommandLine(t *testing.T) {
	t.Parallel()
	block := readmeBlock(t, "<!-- command-line examples: TestReadmeCommandLine runs this block as printed -->")
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	binDir := filepath.Join(dir, "bin")
	os.MkdirAll(binDir, 0o755)
	if err := os.Symlink(bin, filepath.Join(binDir, "sisyphus")); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "HOME="+home, "XDG_STATE_HOME=", "SISYPHUS_STATE_DIR=", "SISYPHUS_EMBEDDED=", "SIYUAN_URL=", "SIYUAN_TOKEN=",
		"PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"))

	serve := exec.Command(bin, "serve", "--embedded", "./demo-workspace", "--listen", "127.0.0.1:0")
	serve.Dir, serve.Env = dir, env
	stdout, _ := serve.StdoutPipe()
	serve.Stderr = io.Discard
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { serve.Process.Kill(); serve.Wait() })
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if readyRE.MatchString(sc.Text()) {
				ready <- true
			}
		}
		close(ready)
	}()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatal("serve exited before it was ready")
		}
	case <-time.After(60 * time.Second):
		t.Fatal("serve was not ready")
	}

	// One shell, as a person pastes the block: each command must succeed.
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash to run the block in")
	}
	sh := exec.Command("bash", "-e", "-x", "-c", block)
	sh.Dir, sh.Env = dir, env
	out, err := sh.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's command-line examples failed: %v\n%s", err, out)
	}
	for _, want := range []string{"sisyphus fs write [--flags]", "Sisyphus Demo", "Sisyphus serves this workspace", "preflight fs.write", "rye bread", "removed:"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the examples' output lacks %q:\n%s", want, out)
		}
	}
}
