package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/authority"
	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/settingsui"
)

// The tests of this file hold the two credentials apart through the built
// binary, each written as the attack it stops: an agent holding the
// bearer token tries every administrative route, a local process floods
// the settings sign-in to lock the person out, and the admin token is
// looked for wherever serve writes.

// adminTokenOf runs `sisyphus admin-token` on stateDir, as the person does.
func adminTokenOf(t *testing.T, stateDir string) string {
	t.Helper()
	cmd := exec.Command(bin, "admin-token", "--state-dir", stateDir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	tok := strings.TrimSpace(string(out))
	if err != nil || len(tok) < authority.MinAdminTokenLen {
		t.Fatalf("sisyphus admin-token: %v %q\n%s", err, tok, stderr.String())
	}
	return tok
}

// noRedirects is a client that shows a redirect instead of following it.
var noRedirects = &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// withToken sends one request with a bearer credential ("" for none).
func withToken(t *testing.T, method, u, tok, ctype, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, u, strings.NewReader(body))
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if strings.HasSuffix(req.URL.Path, "/mcp") {
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "notebook")
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// signInWith posts the settings page's sign-in form from a browser-less
// client; it returns the status and the session cookie (if one was set).
func signInWith(ctx context.Context, u, tok string) (int, string, error) {
	req, _ := http.NewRequestWithContext(ctx, "POST", u, strings.NewReader(url.Values{"token": {tok}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := noRedirects.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	for _, c := range resp.Cookies() {
		if c.Name == settingsui.CookieName && c.Value != "" {
			return resp.StatusCode, c.Value, nil
		}
	}
	return resp.StatusCode, "", nil
}

func typedError(t *testing.T, body string, code failure.Code) {
	t.Helper()
	var e struct {
		Error struct{ Code, Message string }
	}
	if json.Unmarshal([]byte(body), &e) != nil || failure.Code(e.Error.Code) != code || e.Error.Message == "" {
		t.Fatalf("want a typed %s error body, got:\n%s", code, body)
	}
}

// TestAgentBearerCannotAdminister: an agent holding the MCP bearer token
// tries every administrative route under both prefixes, to read the
// configuration (which shows hidden notebooks), to un-hide a notebook, to
// enable notebook.set_permission, to point the feedback at itself, and to
// sign in to the settings page; each is refused and nothing changes. The
// person's admin token does each of them. The bearer token still works on
// the agents' routes, where the admin token is refused; a front serves no
// /config and no settings page at all.
func TestAgentBearerCannotAdminister(t *testing.T) {
	t.Parallel()
	state, ws := t.TempDir(), t.TempDir()
	s := startServeWith(t, "--embedded", ws, "--state-dir", state)
	base := strings.TrimSuffix(s.url, "/mcp")
	admin := adminTokenOf(t, state)
	const bearer = "sekret"
	a := connect(t, s.url, "2026-07-28")
	nb := a.ok("notebook", map[string]any{"action": "list"})["notebooks"].([]any)[0].(map[string]any)
	nbID, nbName := nb["id"].(string), nb["name"].(string)
	// The person hides the notebook.
	s.config(t, "permission", nbID, "none")

	attacks := []struct{ name, method, path, body string }{
		{"read the configuration", "GET", "/config", ""},
		{"un-hide the notebook", "POST", "/config", `{"notebook":"` + nbID + `","permission":"rwd"}`},
		{"enable set_permission", "POST", "/config", `{"tool":"notebook","action":"set_permission","enabled":true}`},
		{"take the feedback", "POST", "/config", `{"feedbackUrl":"http://127.0.0.1:9/steal"}`},
		{"turn strict off", "POST", "/config", `{"strict":false}`},
	}
	for _, prefix := range []string{"", authority.PluginPrefix} {
		for _, at := range attacks {
			st, body := withToken(t, at.method, base+prefix+at.path, bearer, "application/json", at.body)
			if st != http.StatusForbidden || strings.Contains(body, nbName) || !strings.Contains(body, "admin token") {
				t.Fatalf("%s%s with the bearer (%s): HTTP %d\n%s", prefix, at.path, at.name, st, body)
			}
			typedError(t, body, failure.Forbidden)
			for _, tok := range []string{"", "garbage-garbage-garbage-garbage-garbage"} {
				st, body := withToken(t, at.method, base+prefix+at.path, tok, "application/json", at.body)
				if st != http.StatusUnauthorized || strings.Contains(body, nbName) {
					t.Fatalf("%s%s with %q: HTTP %d\n%s", prefix, at.path, tok, st, body)
				}
				typedError(t, body, failure.Unauthorized)
			}
		}
		st, cookie, err := signInWith(context.Background(), base+prefix+"/settings/login", bearer)
		if err != nil || st != http.StatusUnauthorized || cookie != "" {
			t.Fatalf("settings sign-in with the bearer under %q: %d %q %v", prefix, st, cookie, err)
		}
	}
	// Nothing of it happened: the notebook is still hidden from agents,
	// set_permission still off, no feedback endpoint, strict still on.
	if nbs := a.ok("notebook", map[string]any{"action": "list"})["notebooks"].([]any); len(nbs) != 0 {
		t.Fatalf("the hidden notebook is visible again: %v", nbs)
	}
	var v authority.ConfigView
	st, body := withToken(t, "GET", base+"/config", admin, "", "")
	if st != 200 || json.Unmarshal([]byte(body), &v) != nil {
		t.Fatalf("GET /config with the admin token: %d\n%s", st, body)
	}
	if v.Notebooks[0].Permission != "none" || v.FeedbackEndpoint != "" || !v.Strict.Config {
		t.Fatalf("the configuration changed: %+v", v)
	}
	for _, tv := range v.Tools {
		for _, av := range tv.Actions {
			if tv.Name == "notebook" && av.Name == "set_permission" && av.Enabled {
				t.Fatal("notebook.set_permission was enabled")
			}
		}
	}

	// The person's admin token does each, under both prefixes.
	for i, prefix := range []string{"", authority.PluginPrefix} {
		level := []string{"r", "rw"}[i]
		st, body := withToken(t, "POST", base+prefix+"/config", admin, "application/json", `{"notebook":"`+nbID+`","permission":"`+level+`"}`)
		if st != 200 || !strings.Contains(body, nbName) {
			t.Fatalf("POST %s/config with the admin token: %d\n%s", prefix, st, body)
		}
		if st, body := withToken(t, "GET", base+prefix+"/config", admin, "", ""); st != 200 || !strings.Contains(body, `"permission":"`+level+`"`) {
			t.Fatalf("GET %s/config with the admin token: %d\n%s", prefix, st, body)
		}
		st, cookie, err := signInWith(context.Background(), base+prefix+"/settings/login", admin)
		if err != nil || st != http.StatusSeeOther || cookie == "" {
			t.Fatalf("settings sign-in with the admin token under %q: %d %v", prefix, st, err)
		}
	}

	// The agents' routes take the bearer and refuse the admin token.
	listCall := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"notebook","arguments":{"action":"list"},"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"e2e","version":"1"},` +
		`"io.modelcontextprotocol/clientCapabilities":{}}}}`
	agentRoutes := []struct{ method, path, ctype, body string }{
		{"POST", "/mcp", "application/json", listCall},
		{"GET", "/health", "", ""},
		{"POST", "/tasks", "application/json", `{"taskId":"00000000-0000-4000-8000-000000000000","operation":"status"}`},
		{"POST", "/transfer/upload", "application/json", `{"fileName":"a.png","dataBase64":"aGk="}`},
		{"POST", "/transfer/lookup", "application/json", `{"fileName":"a.png","sha256":"` + strings.Repeat("0", 64) + `","size":2}`},
	}
	for _, prefix := range []string{"", authority.PluginPrefix} {
		for _, r := range agentRoutes {
			if st, body := withToken(t, r.method, base+prefix+r.path, bearer, r.ctype, r.body); st != 200 {
				t.Fatalf("%s %s%s with the bearer: %d\n%s", r.method, prefix, r.path, st, body)
			}
			st, body := withToken(t, r.method, base+prefix+r.path, admin, r.ctype, r.body)
			if st != http.StatusForbidden || strings.Contains(body, admin) {
				t.Fatalf("%s %s%s with the admin token: %d\n%s", r.method, prefix, r.path, st, body)
			}
			typedError(t, body, failure.Forbidden)
		}
	}

	// A front on the same workspace serves neither /config nor the page,
	// to either token: it would have to forward a change with a credential
	// of its own.
	front := startServeWith(t, "--authority", base, "--embedded", ws, "--state-dir", state)
	fbase := strings.TrimSuffix(front.url, "/mcp")
	for _, prefix := range []string{"", authority.PluginPrefix} {
		for _, tok := range []string{bearer, admin} {
			for _, m := range []string{"GET", "POST"} {
				st, body := withToken(t, m, fbase+prefix+"/config", tok, "application/json", `{"strict":false}`)
				if st != http.StatusNotFound {
					t.Fatalf("front %s %s/config: %d\n%s", m, prefix, st, body)
				}
				typedError(t, body, failure.NotAuthority)
			}
			if st, _, err := signInWith(context.Background(), fbase+prefix+"/settings/login", tok); err != nil || st != http.StatusNotFound {
				t.Fatalf("front sign-in under %q: %d %v", prefix, st, err)
			}
		}
	}
	if st, body := withToken(t, "GET", base+"/config", admin, "", ""); st != 200 || !strings.Contains(body, `"strict":{"config":true`) {
		t.Fatalf("strict mode after the front was asked: %d\n%s", st, body)
	}
}

// configCmd runs `sisyphus config ARGS` and returns its output and exit
// code, with the bearer token in the environment (it must not be used).
func configCmd(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"config"}, args...)...)
	cmd.Env = append(os.Environ(), "SISYPHUS_TOKEN=sekret")
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

// TestConfigCommandUsesTheAdminToken: sisyphus config needs nothing but
// the state dir (it reads the admin token there); given a wrong admin
// token, or the bearer token's file, it fails and says which, and nothing
// changes.
func TestConfigCommandUsesTheAdminToken(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	s := startServeEnv(t, []string{"SISYPHUS_TOKEN="}, "--embedded", t.TempDir(), "--state-dir", state)
	base := strings.TrimSuffix(s.url, "/mcp")

	out, code := configCmd(t, "permission", "Sisyphus Demo", "r", "--state-dir", state)
	if code != 0 || !regexp.MustCompile(`Sisyphus Demo\s+\S+\s+r\s`).MatchString(out) {
		t.Fatalf("config permission with the state dir only: exit %d\n%s", code, out)
	}
	wrong := filepath.Join(t.TempDir(), "admin-token")
	os.WriteFile(wrong, []byte(strings.Repeat("0f", 32)+"\n"), 0o600)
	for _, c := range []struct {
		name string
		args []string
		says []string
	}{
		{"a wrong admin token", []string{"--admin-token-file", wrong}, []string{"unauthorized", "refused the admin token read from " + wrong}},
		{"the bearer token's file", []string{"--admin-token-file", filepath.Join(state, "token")},
			[]string{"forbidden", "for the agents' bearer token", "not the bearer token's"}},
		{"another state dir", []string{"--authority", base, "--state-dir", t.TempDir()}, []string{"no admin token in", "--state-dir"}},
	} {
		for _, sub := range [][]string{{"show"}, {"permission", "Sisyphus Demo", "rwd"}, {"strict", "off"}} {
			args := append(append([]string{}, sub...), c.args...)
			if len(c.args) > 0 && c.args[0] == "--admin-token-file" {
				args = append(args, "--state-dir", state)
			}
			out, code := configCmd(t, args...)
			if code == 0 {
				t.Fatalf("config %v with %s succeeded:\n%s", sub, c.name, out)
			}
			for _, w := range c.says {
				if !strings.Contains(out, w) {
					t.Fatalf("config %v with %s does not say %q:\n%s", sub, c.name, w, out)
				}
			}
		}
	}
	out, code = configCmd(t, "show", "--json", "--state-dir", state)
	var v authority.ConfigView
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil || v.Notebooks[0].Permission != "r" || !v.Strict.Config {
		t.Fatalf("the refused commands changed the configuration: exit %d\n%s", code, out)
	}
}

// servedProc is a `sisyphus serve` whose whole output is kept.
type servedProc struct {
	cmd            *exec.Cmd
	url            string
	stdout, stderr *lockedBuffer
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startServeKept runs serve with args at debug level, keeping stdout and
// stderr, and waits for its ready line.
func startServeKept(t *testing.T, args ...string) *servedProc {
	t.Helper()
	p := &servedProc{stdout: &lockedBuffer{}, stderr: &lockedBuffer{}}
	p.cmd = exec.Command(bin, append([]string{"serve", "--listen", "127.0.0.1:0", "--log-level", "debug"}, args...)...)
	p.cmd.Env = append(os.Environ(), "SISYPHUS_TOKEN=")
	p.cmd.Stderr = p.stderr
	pipe, _ := p.cmd.StdoutPipe()
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.cmd.Process.Kill(); p.cmd.Wait() })
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			fmt.Fprintln(p.stdout, sc.Text())
			if m := readyRE.FindStringSubmatch(sc.Text()); m != nil {
				ready <- m[1]
			}
		}
		close(ready)
	}()
	select {
	case u, ok := <-ready:
		if !ok {
			t.Fatalf("serve exited before it was ready:\n%s", p.stderr)
		}
		p.url = u
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not print its ready line")
	}
	return p
}

// TestAdminTokenOnUpgrade: a state dir from before the admin token (only
// the bearer's token file) gets one when serve starts: mode 0600, not the
// bearer token, printed by sisyphus admin-token, and never by serve, an
// authority or a front, on stdout or in its log, whatever happens.
func TestAdminTokenOnUpgrade(t *testing.T) {
	t.Parallel()
	state, ws := t.TempDir(), t.TempDir()
	bearer := strings.Repeat("5e", 24)
	if err := os.WriteFile(filepath.Join(state, "token"), []byte(bearer+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServeKept(t, "--embedded", ws, "--state-dir", state)
	base := strings.TrimSuffix(s.url, "/mcp")
	p := filepath.Join(state, authority.AdminTokenFile)
	st, err := os.Stat(p)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("admin-token after serve started: %v %v", st, err)
	}
	admin := adminTokenOf(t, state)
	if disk, _ := os.ReadFile(p); strings.TrimSpace(string(disk)) != admin || admin == bearer || strings.Contains(admin, bearer) {
		t.Fatalf("sisyphus admin-token printed %q, the file holds %q, the bearer is %q", admin, disk, bearer)
	}
	if again := adminTokenOf(t, state); again != admin {
		t.Fatal("sisyphus admin-token printed another token the second time")
	}
	out := s.stdout.String()
	for _, want := range []string{"Token:     " + bearer, "Admin token: kept in " + p, "sign in with the admin token: sisyphus admin-token --state-dir " + state} {
		if !strings.Contains(out, want) {
			t.Fatalf("serve's output lacks %q:\n%s", want, out)
		}
	}

	// Use everything that logs: the page (signed in, refused, changed),
	// /config, a front with its own output, and a drain.
	_, cookie, _ := signInWith(context.Background(), base+"/settings/login", admin)
	signInWith(context.Background(), base+"/settings/login", bearer)
	signInWith(context.Background(), base+"/settings/login", admin+"x")
	withToken(t, "POST", base+"/config", admin, "application/json", `{"strict":true}`)
	withToken(t, "GET", base+"/config", bearer, "", "")
	withToken(t, "GET", base+"/health", admin, "", "")
	if cookie == "" {
		t.Fatal("the admin token did not sign in")
	}
	front := startServeKept(t, "--authority", base, "--embedded", ws, "--state-dir", state)
	stopWithSIGTERM(t, front.cmd, "front", 20*time.Second)
	stopWithSIGTERM(t, s.cmd, "serve", 20*time.Second)
	for name, text := range map[string]string{"authority stdout": s.stdout.String(), "authority log": s.stderr.String(),
		"front stdout": front.stdout.String(), "front log": front.stderr.String()} {
		if strings.Contains(text, admin) {
			t.Fatalf("the admin token is in the %s:\n%s", name, text)
		}
	}
	if !strings.Contains(s.stderr.String(), "created the admin token") {
		t.Fatalf("the authority's log does not say it created the admin token:\n%s", s.stderr)
	}

	// The person cannot make the two the same: serve refuses to start.
	out2, err := exec.Command(bin, "serve", "--listen", "127.0.0.1:0", "--embedded", t.TempDir(), "--state-dir", state, "--token", admin).CombinedOutput()
	if err == nil || !strings.Contains(string(out2), "is the admin token") || strings.Contains(string(out2), admin) {
		t.Fatalf("serve with the admin token as its bearer: %v\n%s", err, out2)
	}
}

// TestSettingsSignInCannotBeLockedOut: a local process (any process of the
// machine reaches the page from 127.0.0.1, as the person's browser does)
// sends 50 wrong tokens in parallel; while they are being answered, the
// person signs in with the admin token and gets in at once, before the
// flood has been answered.
func TestSettingsSignInCannotBeLockedOut(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	s := startServeWith(t, "--embedded", t.TempDir(), "--state-dir", state)
	login := strings.TrimSuffix(s.url, "/mcp") + "/settings/login"
	admin := adminTokenOf(t, state)

	const flood = 50
	var answered, tooMany atomic.Int32
	statuses := make(chan int, flood)
	var wg sync.WaitGroup
	for i := range flood {
		wg.Go(func() {
			tok := fmt.Sprintf("guess-%02d-%s", i, strings.Repeat("0", 40))
			if i%10 == 0 {
				tok = "sekret" // the agents' bearer token is no way in either
			}
			st, cookie, err := signInWith(context.Background(), login, tok)
			if err != nil || cookie != "" {
				t.Errorf("wrong sign-in %d: %d %q %v", i, st, cookie, err)
			}
			if st == http.StatusTooManyRequests {
				tooMany.Add(1)
			}
			answered.Add(1)
			statuses <- st
		})
	}
	// The flood is at the server once some of it has been turned away
	// (more than the gate holds arrived at once).
	waitFor(t, "the flood to fill the sign-in gate", func() bool { return tooMany.Load() > 0 })

	began := time.Now()
	st, cookie, err := signInWith(context.Background(), login, admin)
	took := time.Since(began) // reported, not asserted
	pending := flood - answered.Load()
	if err != nil || st != http.StatusSeeOther || cookie == "" {
		t.Fatalf("the person's sign-in during the flood: %d %v", st, err)
	}
	if pending == 0 {
		t.Fatal("the person's sign-in was answered only after the whole flood")
	}
	req, _ := http.NewRequest("GET", strings.TrimSuffix(login, "/login"), nil)
	req.AddCookie(&http.Cookie{Name: settingsui.CookieName, Value: cookie})
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(page), "Sisyphus Demo") {
		t.Fatalf("the person's session: %d\n%s", resp.StatusCode, page)
	}

	wg.Wait()
	close(statuses)
	for st := range statuses {
		if st != http.StatusUnauthorized && st != http.StatusTooManyRequests {
			t.Fatalf("a wrong sign-in was answered %d", st)
		}
	}
	// And once the flood is over, the person signs in again as at first.
	if st, cookie, err := signInWith(context.Background(), login, admin); err != nil || st != http.StatusSeeOther || cookie == "" {
		t.Fatalf("sign-in after the flood: %d %v", st, err)
	}
	t.Logf("the person got in after %v, with %d of %d wrong sign-ins still unanswered; %d were turned away with 429",
		took.Round(time.Microsecond), pending, flood, tooMany.Load())
}
