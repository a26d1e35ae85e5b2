package main

import (
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// runIn runs the binary with HOME, the configuration and the state dirs
// under home (a person's fresh account), plus env.
func runIn(t *testing.T, home string, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = home
	cmd.Env = append(freshEnv(home), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// freshEnv is this process's environment with HOME and the XDG dirs set to
// home and none of Sisyphus's or SiYuan's variables.
func freshEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "SISYPHUS_") || strings.HasPrefix(k, "SIYUAN_") || strings.HasPrefix(k, "XDG_") || k == "HOME" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_STATE_HOME="+filepath.Join(home, ".local", "state"))
}

func TestProfilesAndPrecedence(t *testing.T) {
	home := t.TempDir()
	good := startKernel(t, t.TempDir())
	other := startKernel(t, t.TempDir())
	if out, err := runIn(t, home, nil, "profile", "add", "work", "--siyuan-url", good.url, "--siyuan-token", "tok"); err != nil || !strings.Contains(out, "added profile work") {
		t.Fatalf("profile add: %v\n%s", err, out)
	}
	path := filepath.Join(home, ".config", "sisyphus", "profiles.json")
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("profiles file %v %v, want mode 0600", st, err)
	}
	out, err := runIn(t, home, nil, "profile", "list")
	if err != nil || !strings.Contains(out, "work") || !strings.Contains(out, good.url) || strings.Contains(out, "tok\n") {
		t.Fatalf("profile list: %v\n%s", err, out)
	}
	// Each source, and which wins: flags > profile > environment > default.
	// The environment names the other kernel; doctor says which it checked.
	env := []string{"SIYUAN_URL=" + other.url, "SIYUAN_TOKEN=tok"}
	tests := []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"env alone", env, nil, "SiYuan answers at " + other.url},
		{"profile over env", env, []string{"--profile", "work"}, "SiYuan answers at " + good.url},
		{"profile by env", append(env, "SISYPHUS_PROFILE=work"), nil, "SiYuan answers at " + good.url},
		{"flag over profile", env, []string{"--profile", "work", "--siyuan-url", other.url}, "SiYuan answers at " + other.url},
		{"default", nil, []string{"--timeout", "2s"}, "http://127.0.0.1:6806"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"doctor", "--state-dir", t.TempDir()}, tt.args...)
			out, _ := runIn(t, home, tt.env, args...)
			if !strings.Contains(out, tt.want) {
				t.Fatalf("%v: want %q in\n%s", args, tt.want, out)
			}
		})
	}
	if out, err := runIn(t, home, nil, "doctor", "--profile", "nope"); err == nil || !strings.Contains(out, `--profile nope: no such profile`) {
		t.Fatalf("unknown profile: %v\n%s", err, out)
	}
	// A profiles file others may read is refused, not read.
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := runIn(t, home, nil, "--profile", "work", "doctor"); err == nil || !strings.Contains(out, "refusing to read") || !strings.Contains(out, "chmod 600") {
		t.Fatalf("world-readable profiles: %v\n%s", err, out)
	}
	os.Chmod(path, 0o600)
	if out, err := runIn(t, home, nil, "profile", "remove", "work"); err != nil || !strings.Contains(out, "removed profile work") {
		t.Fatalf("profile remove: %v\n%s", err, out)
	}
}

func TestInstancesFindsKernels(t *testing.T) {
	home := t.TempDir()
	wsA, wsB := t.TempDir(), t.TempDir()
	a, b := startKernel(t, wsA), startKernel(t, wsB)
	if out, err := runIn(t, home, nil, "profile", "add", "a", "--siyuan-url", a.url, "--siyuan-token", "tok"); err != nil {
		t.Fatalf("profile add: %v\n%s", err, out)
	}
	port := func(u string) string { return u[strings.LastIndex(u, ":")+1:] }
	for _, args := range [][]string{{"instances", "--json"}, {"instances", "--json", "--ports", port(a.url) + "-" + port(a.url)}} {
		out, err := runIn(t, home, nil, args...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		var found []instance
		if err := json.Unmarshal([]byte(out), &found); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		byURL := map[string]instance{}
		for _, in := range found {
			byURL[in.URL] = in
		}
		ia, ok := byURL[a.url]
		if !ok || ia.Version != "3.7.3" || ia.Workspace != evalDir(t, wsA) || len(ia.Profiles) != 1 || ia.Profiles[0] != "a" {
			t.Errorf("%v: kernel a: %+v\n%s", args, ia, out)
		}
		if len(args) == 2 {
			// No profile holds b's token: found, and its workspace too (a
			// kernel tells this machine its workspace without a token, as
			// SiYuan 3.7.3 does).
			if ib, ok := byURL[b.url]; !ok || ib.NeedsToken || ib.Workspace != evalDir(t, wsB) || len(ib.Profiles) != 0 {
				t.Errorf("kernel b: %+v\n%s", ib, out)
			}
		} else if _, ok := byURL[b.url]; ok {
			t.Errorf("--ports named only a's port:\n%s", out)
		}
	}
}

func evalDir(t *testing.T, d string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(d)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestDoctorTellsRefusedTokenFromClosedPort(t *testing.T) {
	home := t.TempDir()
	k := startKernel(t, t.TempDir())
	closed := httptest.NewServer(nil)
	closedURL := closed.URL
	closed.Close()
	out, err := runIn(t, home, nil, "doctor", "--siyuan-url", k.url, "--siyuan-token", "wrong", "--timeout", "5s")
	if err == nil || !strings.Contains(out, "answers but refused the token (HTTP 401)") || !strings.Contains(out, "another workspace") ||
		strings.Contains(out, "nothing answers") {
		t.Fatalf("wrong token: %v\n%s", err, out)
	}
	out, err = runIn(t, home, nil, "doctor", "--siyuan-url", closedURL, "--siyuan-token", "tok", "--timeout", "5s")
	if err == nil || !strings.Contains(out, "nothing answers there") || strings.Contains(out, "refused the token") {
		t.Fatalf("closed port: %v\n%s", err, out)
	}
	if !strings.Contains(out, "note  no write authority runs on") {
		t.Errorf("doctor should say no authority runs:\n%s", out)
	}
}

// TestFrontsFollowTheAuthority: on a fresh account, after the README's
// serve --embedded, call, stdio's configuration and doctor reach the
// authority's kernel without --embedded or a URL.
func TestFrontsFollowTheAuthority(t *testing.T) {
	home := t.TempDir()
	stateDir := filepath.Join(home, ".local", "state", "sisyphus")
	srv := startServeEnv(t, freshEnvDiff(home), "--embedded", filepath.Join(home, "demo-workspace"), "--state-dir", stateDir)
	for _, name := range []string{"kernel.json", "token"} {
		if st, err := os.Stat(filepath.Join(stateDir, name)); err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v, want mode 0600", name, st, err)
		}
	}
	out, err := runIn(t, home, nil, "call", "block", "--json", `{"action":"help"}`)
	if err != nil || !strings.Contains(out, `"get_kramdown"`) {
		t.Fatalf("README's call: %v\n%s", err, out)
	}
	out, err = runIn(t, home, nil, "call", "notebook", "--json", `{"action":"list"}`)
	if err != nil || !strings.Contains(out, "Sisyphus Demo") {
		t.Fatalf("call notebook list: %v\n%s", err, out)
	}
	// The demo says what its configuration does.
	out, _ = runIn(t, home, nil, "call", "block", "--json", `{"action":"delete","id":"20200101000000-aaaaaaa"}`)
	if !strings.Contains(out, "action_disabled") {
		t.Fatalf("block.delete should start disabled:\n%s", out)
	}
	out, err = runIn(t, home, nil, "call", "fs", "--json", `{"action":"read","path":"/Sisyphus Demo/Welcome"}`)
	if err != nil || !strings.Contains(out, "start disabled everywhere, this notebook too") || !strings.Contains(out, "sisyphus config enable block.delete") {
		t.Errorf("the welcome document should say dangerous actions start disabled: %v\n%s", err, out)
	}
	// README's list of actions that start disabled is the registry's.
	out, err = runIn(t, home, nil, "config", "show", "--json")
	if err != nil {
		t.Fatalf("config show: %v\n%s", err, out)
	}
	var view struct {
		Tools []struct {
			Name    string
			Actions []struct {
				Name         string
				OffByDefault bool
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &view); err != nil {
		t.Fatal(err)
	}
	var off []string
	for _, tl := range view.Tools {
		for _, a := range tl.Actions {
			if a.OffByDefault {
				off = append(off, tl.Name+"."+a.Name)
			}
		}
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, list, _ := strings.Cut(string(readme), "The dangerous-by-default\nactions start off:")
	list, _, _ = strings.Cut(list, "(in the demo")
	named := regexp.MustCompile("`([a-z_]+\\.[a-z_]+)`").FindAllStringSubmatch(list, -1)
	var listed []string
	for _, m := range named {
		listed = append(listed, m[1])
	}
	sort.Strings(off)
	sort.Strings(listed)
	if strings.Join(off, " ") != strings.Join(listed, " ") {
		t.Errorf("README lists %v as starting disabled; the registry: %v", listed, off)
	}
	// A config command says what it changed.
	out, err = runIn(t, home, nil, "config", "enable", "block.delete")
	if err != nil || !strings.HasSuffix(strings.TrimSpace(out), "enabled block.delete (was disabled)") {
		t.Errorf("config enable: %v\n%s", err, out)
	}
	out, _ = runIn(t, home, nil, "config", "enable", "block.delete")
	if !strings.HasSuffix(strings.TrimSpace(out), "enabled block.delete (was enabled, unchanged)") {
		t.Errorf("config enable again:\n%s", out)
	}
	// An unauthenticated request says which header is missing, or that the
	// bearer is wrong; still 401 with WWW-Authenticate.
	for _, tc := range []struct{ header, want string }{
		{"", "the Authorization header is missing"},
		{"Basic eDp5", "is not a bearer token"},
		{"Bearer wrong", "the bearer token is wrong"},
	} {
		req, _ := http.NewRequest(http.MethodPost, srv.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Content-Type", "application/json")
		if tc.header != "" {
			req.Header.Set("Authorization", tc.header)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != "Bearer" || !strings.Contains(string(body), tc.want) || !strings.Contains(string(body), `"code":-32600`) {
			t.Errorf("%q: %d %q %s", tc.header, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
		}
	}
	out, err = runIn(t, home, nil, "doctor")
	if err != nil || !strings.Contains(out, "embedded kernel on") || !strings.Contains(out, "the write authority answers") ||
		!strings.Contains(out, "the authority's kernel answers") || !strings.Contains(out, "All checks passed.") {
		t.Fatalf("doctor: %v\n%s", err, out)
	}
}

// freshEnvDiff is what freshEnv sets, as additions to this environment
// (later entries win in exec).
func freshEnvDiff(home string) []string {
	return []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"SISYPHUS_STATE_DIR=", "SIYUAN_URL=", "SIYUAN_TOKEN=", "SISYPHUS_EMBEDDED=", "SISYPHUS_TOKEN=", "SISYPHUS_PROFILE="}
}

// TestGoRunStdioForm: the stdio configuration a `go run` build prints runs
// when pasted: go -C MODULE run ./cmd/sisyphus ARGS, absolute paths, from
// any working directory.
func TestGoRunStdioForm(t *testing.T) {
	gotool, args, ok := goRunForm([]string{"version"})
	if !ok || !filepath.IsAbs(gotool) || len(args) < 4 || args[0] != "-C" || !filepath.IsAbs(args[1]) || args[2] != "run" {
		t.Fatalf("goRunForm = %q %q %v", gotool, args, ok)
	}
	cmd := exec.Command(gotool, args...)
	cmd.Dir = t.TempDir() // a client spawns from its own folder
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "sisyphus ") {
		t.Fatalf("%s %q: %v\n%s", gotool, args, err, out)
	}
}

// TestReleaseScript runs scripts/release for this platform and runs what it
// built: a static binary whose version names the stamped version and commit.
func TestReleaseScript(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a release binary")
	}
	dir := t.TempDir()
	cmd := exec.Command("sh", "../../scripts/release", "v9.8.7-test")
	cmd.Env = append(os.Environ(), "RELEASE_TARGETS="+runtime.GOOS+"/"+runtime.GOARCH, "RELEASE_DIR="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/release: %v\n%s", err, out)
	}
	name := "sisyphus-v9.8.7-test-" + runtime.GOOS + "-" + runtime.GOARCH
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	sums, err := os.ReadFile(filepath.Join(dir, "SHA256SUMS"))
	if err != nil || !strings.Contains(string(sums), "  "+name+"\n") {
		t.Fatalf("SHA256SUMS: %v\n%s", err, sums)
	}
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if !strings.HasPrefix(string(sums), hex.EncodeToString(sum[:])) {
		t.Errorf("SHA256SUMS does not hold the binary's digest %x:\n%s", sum, sums)
	}
	commit, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skip("not a git checkout")
	}
	out, err := exec.Command(filepath.Join(dir, name), "version").CombinedOutput()
	want := "sisyphus v9.8.7-test (" + string(commit[:12]) + ") " + runtime.GOOS + "/" + runtime.GOARCH
	if err != nil || !strings.HasPrefix(string(out), want) {
		t.Fatalf("version: %v %q, want %q", err, out, want)
	}
	if runtime.GOOS == "linux" {
		// Static: no program interpreter (the ELF has no PT_INTERP).
		f, err := elf.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Error("the release binary is dynamically linked")
			}
		}
	}
}

// TestKernelOptionsFromThePluginSettings: the plugin's kernelOptions in the
// workspace apply, clamped to their ranges, a flag wins over them, and
// config show and /health show what is in force.
func TestKernelOptionsFromThePluginSettings(t *testing.T) {
	home := t.TempDir()
	ws := filepath.Join(home, "ws")
	dir := filepath.Join(ws, "data", "storage", "petal", "siyuan-plugins-mcp-sisyphus")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	settings := `{"port":36806,"kernelOptions":{"readMaxRequests":9999,"readMaxMiB":2,"readTimeoutMs":5,"readRetries":3,` +
		`"allowedOrigins":["https://app.example","bad"]}}`
	if err := os.WriteFile(filepath.Join(dir, "mcpHttpSettings"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	stateDir := filepath.Join(home, ".local", "state", "sisyphus")
	srv := startServeEnv(t, freshEnvDiff(home), "--embedded", ws, "--state-dir", stateDir, "--read-retries", "1", "--token", "sekret")
	out, err := runIn(t, home, nil, "config", "show", "--json")
	if err != nil {
		t.Fatalf("config show: %v\n%s", err, out)
	}
	var view struct {
		KernelOptions struct {
			Options []struct{ Name, Value, Source string }
			Notes   []string
		}
	}
	if err := json.Unmarshal([]byte(out), &view); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, o := range view.KernelOptions.Options {
		got[o.Name] = o.Value + " from " + o.Source
	}
	want := map[string]string{
		"readMaxRequests": "512 from configuration", "readMaxMiB": "2 MiB from configuration", "readTimeoutMs": "1000 ms from configuration",
		"readRetries": "1 from --read-retries", "templateMaxMiB": "16 MiB from default", "allowedOrigins": "https://app.example from configuration",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("kernel options\n got %v\nwant %v", got, want)
	}
	notes := strings.Join(view.KernelOptions.Notes, "\n")
	for _, n := range []string{"readMaxRequests 9999 is outside 16–512", "readTimeoutMs 5 is outside 1000–120000", `"bad" is not an origin`} {
		if !strings.Contains(notes, n) {
			t.Errorf("notes lack %q:\n%s", n, notes)
		}
	}
	if out, _ := runIn(t, home, nil, "config", "show"); !strings.Contains(out, "Kernel options (kernelOptions in /data/storage/petal/siyuan-plugins-mcp-sisyphus/mcpHttpSettings") {
		t.Errorf("config show lacks the kernel options:\n%s", out)
	}
	// In force: the read budget /health shows, and the allowed origin.
	out, err = runIn(t, home, nil, "health")
	if err != nil || !strings.Contains(out, `"maxCalls": 512`) || !strings.Contains(out, fmt.Sprintf(`"maxBytes": %d`, 2<<20)) {
		t.Errorf("health: %v\n%s", err, out)
	}
	for origin, wantStatus := range map[string]int{"https://app.example": 200, "https://evil.example": 403} {
		req, _ := http.NewRequest(http.MethodPost, srv.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer sekret")
		req.Header.Set("Origin", origin)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if (resp.StatusCode == 403) != (wantStatus == 403) {
			t.Errorf("Origin %s: HTTP %d", origin, resp.StatusCode)
		}
	}
	// A flag out of range is refused, not clamped: the person typed it.
	out, err = runIn(t, home, nil, "serve", "--embedded", t.TempDir(), "--state-dir", t.TempDir(), "--listen", "127.0.0.1:0", "--read-max-requests", "9")
	if err == nil || !strings.Contains(out, "--read-max-requests must be between 16 and 512") {
		t.Errorf("out-of-range flag: %v\n%s", err, out)
	}
}

// TestFrontsFollowASiYuanAuthority: an authority serving a SiYuan URL (not
// the embedded kernel) is followed too: call and doctor on its state dir,
// given neither URL nor token, reach that kernel.
func TestFrontsFollowASiYuanAuthority(t *testing.T) {
	home := t.TempDir()
	k := startKernel(t, t.TempDir())
	stateDir := filepath.Join(home, "state")
	startServeEnv(t, freshEnvDiff(home), "--siyuan-url", k.url, "--siyuan-token", "tok", "--state-dir", stateDir)
	out, err := runIn(t, home, nil, "call", "notebook", "--state-dir", stateDir, "--json", `{"action":"list"}`)
	if err != nil || !strings.Contains(out, "Sisyphus Demo") {
		t.Fatalf("call: %v\n%s", err, out)
	}
	out, err = runIn(t, home, nil, "doctor", "--state-dir", stateDir)
	if err != nil || !strings.Contains(out, "SiYuan at "+k.url) || !strings.Contains(out, "All checks passed.") {
		t.Fatalf("doctor: %v\n%s", err, out)
	}
	// A URL given wins over the authority's: here a closed port.
	out, err = runIn(t, home, nil, "doctor", "--state-dir", stateDir, "--siyuan-url", "http://127.0.0.1:1", "--timeout", "3s")
	if err == nil || !strings.Contains(out, "nothing answers there") {
		t.Fatalf("doctor with a URL: %v\n%s", err, out)
	}
}
