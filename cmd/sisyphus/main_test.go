package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/testvars"
)

// bin is the sisyphus binary built once for the tests in this package.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "sisyphus-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "sisyphus")
	// SISYPHUS_TEST_BINARY runs the tests against another build (an older
	// commit's, to measure what a change fixed).
	if other := testvars.TestBinary.Value(); other != "" {
		bin = other
	} else if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build sisyphus: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// kernelProc is a running `sisyphus kernel`.
type kernelProc struct {
	cmd *exec.Cmd
	url string
}

var bannerRE = regexp.MustCompile(`on (http://\S+) \(token (\S+)\)`)

// startKernel runs `sisyphus kernel` on a fresh workspace and waits for its banner.
func startKernel(t *testing.T, dir string, extra ...string) *kernelProc {
	t.Helper()
	args := append([]string{"kernel", "--dir", dir, "--listen", "127.0.0.1:0", "--token", "tok"}, extra...)
	cmd := exec.Command(bin, args...)
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	select {
	case line, ok := <-lines:
		m := bannerRE.FindStringSubmatch(line)
		if !ok || m == nil || m[2] != "tok" {
			t.Fatalf("unexpected banner %q", line)
		}
		return &kernelProc{cmd: cmd, url: m[1]}
	case <-time.After(30 * time.Second):
		t.Fatal("kernel did not print its banner")
	}
	return nil
}

func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, err := exec.Command(bin, args...).CombinedOutput()
	return string(out), err
}

func TestVersion(t *testing.T) {
	out, err := run(t, "version")
	if err != nil || !strings.HasPrefix(out, "sisyphus ") || !strings.Contains(out, runtime.GOOS) {
		t.Fatalf("version: %q %v", out, err)
	}
}

func TestKernelServesAndInjectsFaults(t *testing.T) {
	k := startKernel(t, t.TempDir(), "--fault", "/api/block/appendBlock=drop-after-apply")
	ctx := context.Background()
	c, err := siyuan.New(siyuan.Config{BaseURL: k.url, Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	nbs, err := c.ListNotebooks(ctx)
	if err != nil || len(nbs) != 1 || nbs[0].Name != "Sisyphus Demo" {
		t.Fatalf("notebooks %+v %v", nbs, err)
	}
	ids, err := c.GetIDsByHPath(ctx, nbs[0].ID, "/Welcome")
	if err != nil || len(ids) != 1 {
		t.Fatalf("welcome document: %v %v", ids, err)
	}
	if _, err := c.AppendBlock(ctx, "markdown", "lost reply", ids[0]); !siyuan.IsOutcomeUnknown(err) {
		t.Fatalf("append under drop-after-apply: %v, want outcome unknown", err)
	}
	kd, err := c.GetBlockKramdown(ctx, ids[0])
	if err != nil || strings.Count(kd.Kramdown, "lost reply") != 1 {
		t.Fatalf("the dropped append must be applied once: %v\n%s", err, kd.Kramdown)
	}
	// SIGTERM shuts the kernel down cleanly.
	stopWithSIGTERM(t, k.cmd, "kernel", 15*time.Second)
}

// stopWithSIGTERM sends SIGTERM and requires a clean exit within timeout.
func stopWithSIGTERM(t *testing.T, cmd *exec.Cmd, what string, timeout time.Duration) {
	t.Helper()
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s exit after SIGTERM: %v", what, err)
		}
	case <-time.After(timeout):
		t.Fatalf("%s did not stop on SIGTERM", what)
	}
}

func TestKernelFlagErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"kernel"}, "--dir is required"},
		{[]string{"kernel", "--dir", t.TempDir(), "--fault", "/api/x=explode"}, `unknown fault "explode"`},
		{[]string{"kernel", "--dir", t.TempDir(), "--fault", "nope"}, "want ENDPOINT="},
		{[]string{"kernel", "--dir", t.TempDir(), "--listen", "256.0.0.1:1"}, "listen on 256.0.0.1:1"},
	}
	for _, tt := range tests {
		out, err := run(t, tt.args...)
		if err == nil || !strings.Contains(out, tt.want) {
			t.Errorf("%v: err=%v out=%q, want it to mention %q", tt.args, err, out, tt.want)
		}
	}
}

func TestKernelRefusesBusyWorkspace(t *testing.T) {
	dir := t.TempDir()
	startKernel(t, dir)
	out, err := run(t, "kernel", "--dir", dir, "--listen", "127.0.0.1:0")
	if err == nil || !strings.Contains(out, "in use by another kernel") {
		t.Fatalf("second kernel: %v %q", err, out)
	}
}

func TestDoctor(t *testing.T) {
	k := startKernel(t, t.TempDir())
	fake := func(version string, progress int) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			switch r.URL.Path {
			case "/api/system/version":
				fmt.Fprintf(w, `{"code":0,"msg":"","data":%q}`, version)
			case "/api/system/bootProgress":
				fmt.Fprintf(w, `{"code":0,"msg":"","data":{"progress":%d,"details":"Indexing"}}`, progress)
			default:
				fmt.Fprint(w, `{"code":0,"msg":"","data":{"notebooks":[]}}`)
			}
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()
	nf := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(nf.Close)
	notSiYuan := nf.URL
	sisyphusURL := strings.TrimSuffix(startServeWith(t, "--siyuan-url", k.url, "--siyuan-token", "tok", "--state-dir", t.TempDir()).url, "/mcp")
	tests := []struct {
		name, url, token string
		ok               bool
		want             []string
	}{
		{"healthy", k.url, "tok", true, []string{"ok    SiYuan version 3.7.3", "ok    token accepted; 1 notebooks (1 open)", "All checks passed."}},
		{"wrong token", k.url, "bad", false, []string{"answers but refused the token (HTTP 401)", "Settings → About"}},
		{"no token", k.url, "", false, []string{"refused the request without a token", "--siyuan-token"}},
		{"unreachable", closedURL, "tok", false, []string{"FAIL  cannot reach SiYuan", "Is SiYuan running?"}},
		{"too old", fake("3.6.4", 100), "tok", false, []string{"FAIL  SiYuan 3.6.4 is too old", "3.7 or newer"}},
		{"booting", fake("3.7.3", 42), "tok", false, []string{"FAIL  SiYuan is still booting (42%: Indexing)"}},
		{"newer major", fake("4.0.1", 100), "tok", true, []string{"ok    SiYuan version 4.0.1"}},
		// Issue 9: plain words instead of a parse error or "request not delivered: 404".
		{"no scheme", strings.TrimPrefix(k.url, "http://"), "tok", false, []string{"has no scheme", "like http://127.0.0.1"}},
		{"not siyuan", notSiYuan, "tok", false, []string{"answers HTTP 404", "not a SiYuan kernel"}},
		{"sisyphus itself", sisyphusURL, "tok", false, []string{"is a Sisyphus server (sisyphus serve), not a SiYuan kernel"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := run(t, "doctor", "--siyuan-url", tt.url, "--siyuan-token", tt.token, "--timeout", "5s", "--state-dir", t.TempDir())
			if (err == nil) != tt.ok {
				t.Fatalf("exit error %v, want ok=%v\n%s", err, tt.ok, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestParseVersion(t *testing.T) {
	tests := []struct {
		in           string
		major, minor int
		err          bool
	}{
		{"3.7.3", 3, 7, false}, {"v3.10", 3, 10, false}, {" 4.0.0 ", 4, 0, false},
		{"3", 0, 0, true}, {"x.y", 0, 0, true}, {"", 0, 0, true},
	}
	for _, tt := range tests {
		ma, mi, err := parseVersion(tt.in)
		if (err != nil) != tt.err || ma != tt.major || mi != tt.minor {
			t.Errorf("parseVersion(%q) = %d.%d %v", tt.in, ma, mi, err)
		}
	}
}
