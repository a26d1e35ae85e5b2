package main

import (
	"bufio"
	"bytes"
	"context"
	"image"
	"image/png"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/sisyphus-go/sisyphus/internal/testvars"
)

// TestSettingsPageInBrowser drives the settings page of the built binary in
// headless Chromium, by keyboard where a person would type: sign in with
// the admin token (sisyphus admin-token), lower the demo notebook to r, and see the next write refused
// with permission_denied; then hide it (none) and see it vanish from
// notebook.list. With SISYPHUS_SETTINGS_SCREENSHOT=FILE it also saves a
// screenshot of the page (docs/settings.png is made this way). Without
// Chromium it skips, or fails under SISYPHUS_REQUIRE_BROWSER=1 (CI).
func TestSettingsPageInBrowser(t *testing.T) {
	testvars.Long(t)
	exe := testvars.Browser(t)
	s := startServeWith(t, "--embedded", t.TempDir(), "--state-dir", t.TempDir())
	base := strings.TrimSuffix(s.url, "/mcp")
	admin := adminTokenOf(t, s.stateDir)
	a := connect(t, s.url, "2026-07-28")

	// A write or two, so that the page has ledger outcomes to show. The
	// document's title and the paragraph's text must not reach the page.
	const secretTitle, secretText = "Zebracorn Plans", "quokka content"
	nb := a.ok("notebook", map[string]any{"action": "list"})["notebooks"].([]any)[0].(map[string]any)["id"].(string)
	a.strictDo("document", map[string]any{"action": "create", "notebook": nb, "path": "/" + secretTitle, "markdown": "hello"})
	_, para := firstParagraph(a)
	// A second notebook has no entry: the page marks its r as the default.
	a.strictDo("notebook", map[string]any{"action": "create", "name": "Research"})
	a.strictDo("block", map[string]any{"action": "update", "id": para, "data": secretText})

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(1000, 1400))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	defer cancelT()

	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		must(err)
		return v
	}
	location := func() string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Location())
		must(err)
		return v
	}

	// submit presses a key that sends a form and waits for the page the
	// server redirects to.
	submit := func(key chromedp.Action[chromedp.Void]) {
		t.Helper()
		_, err := chromedp.Run(ctx, chromedp.WaitEvent(page.LoadEventFired, nil, key))
		must(err)
	}
	focus := func() string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.activeElement.id || document.activeElement.className`))
		must(err)
		return v
	}

	// Keyboard only: the token field has the focus when the page opens.
	// The agents' bearer token is refused, with the name of the command
	// that prints the right one; then type the admin token and press
	// Enter.
	must(chromedp.Do(ctx, chromedp.Navigate(base+"/settings"), chromedp.WaitVisible(chromedp.ID("token"))))
	if f := focus(); f != "token" {
		t.Fatalf("the sign-in page opens with the focus on %q, want the token field", f)
	}
	must(chromedp.Do(ctx, chromedp.KeyEvent("sekret")))
	submit(chromedp.KeyEvent(kb.Enter))
	if msg := text("div.alert"); !strings.Contains(msg, "bearer token agents use") || !strings.Contains(msg, "sisyphus admin-token") {
		t.Fatalf("signing in with the bearer token: %q", msg)
	}
	if f := focus(); f != "token" {
		t.Fatalf("after a refused sign-in the focus is on %q, want the token field", f)
	}
	must(chromedp.Do(ctx, chromedp.KeyEvent(admin)))
	submit(chromedp.KeyEvent(kb.Enter))
	if url, body := location(), text("body"); url != base+"/settings" || !strings.Contains(body, "Signed in.") {
		t.Fatalf("after signing in: at %s\n%s", url, body)
	}
	// The first Tab stop is the skip link, and it moves the focus to the
	// content.
	must(chromedp.Do(ctx, chromedp.KeyEvent(kb.Tab)))
	if f := focus(); f != "skip" {
		t.Fatalf("the first Tab stop is %q, want the skip link", f)
	}
	must(chromedp.Do(ctx, chromedp.KeyEvent(kb.Enter)))
	if f := focus(); f != "main" {
		t.Fatalf("the skip link moved the focus to %q, want main", f)
	}
	cookies, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{})
	must(err)
	if c := cookies.Cookies; len(c) != 1 || c[0].Value == admin || c[0].Value == "sekret" || !c[0].HTTPOnly || c[0].SameSite != network.CookieSameSiteStrict ||
		c[0].Path != "/settings" {
		t.Fatalf("session cookie: %+v", c)
	}
	// The tools are collapsed: the page is a few screens long, not 129
	// action rows (it was 11,800 px).
	height, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`document.documentElement.scrollHeight`))
	must(err)
	t.Logf("settings page height: %.0f px", height)
	if height > 6000 {
		t.Errorf("the settings page is %.0f px long; the tools should start collapsed", height)
	}
	body := text("body")
	for _, leak := range []string{"sekret", admin, secretTitle, secretText} {
		if strings.Contains(body, leak) {
			t.Fatalf("the page shows %q:\n%s", leak, body)
		}
	}
	if !strings.Contains(body, "Research") || strings.Count(body, "default") < 2 {
		t.Fatalf("the notebook without an entry is not marked default:\n%s", body)
	}
	if !strings.Contains(body, "document.create") || !strings.Contains(body, "block.update") || !strings.Contains(body, "committed") {
		t.Fatalf("the page does not show the writes' outcomes:\n%s", body)
	}

	// Lower the demo notebook to r: pick the option, then submit its form
	// from the Save button with the keyboard.
	sel := "#perm-" + nb
	setPermission := func(level string) {
		t.Helper()
		must(chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS(sel), level), chromedp.Focus(chromedp.CSS(sel+" ~ button"))))
		submit(chromedp.KeyEvent(kb.Enter))
		if url, msg := location(), text("div.ok"); url != base+"/settings" || !strings.Contains(msg, "is now "+level) {
			t.Fatalf("after setting %s: at %s, %q", level, url, msg)
		}
	}
	setPermission("r")
	hc := &http.Client{Timeout: 30 * time.Second}
	st, raw := modernCall(context.Background(), hc, base, "block", map[string]any{"action": "update", "id": para, "data": "x", "validateOnly": true}, "")
	m, isErr := toolResult(t, st, raw)
	if e, _ := m["error"].(map[string]any); !isErr || e["code"] != "permission_denied" {
		t.Fatalf("a write in a notebook set to r: %v", m)
	}

	if path := testvars.Screenshot.Value(); path != "" {
		screenshot(t, ctx, path)
	}

	setPermission("none")
	st, raw = modernCall(context.Background(), hc, base, "notebook", map[string]any{"action": "list"}, "")
	m, isErr = toolResult(t, st, raw)
	if nbs, _ := m["notebooks"].([]any); isErr || len(nbs) != 1 || strings.Contains(string(raw), nb) {
		t.Fatalf("notebook.list after setting none: %v", m)
	}

	// On a phone's width nothing scrolls sideways and the text stays at
	// least 16px.
	must(chromedp.Do(ctx, chromedp.EmulateViewport(390, 844), chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("h-notebooks"))))
	overflow, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth`))
	must(err)
	fontPx, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`parseFloat(getComputedStyle(document.body).fontSize)`))
	must(err)
	if overflow || fontPx < 16 {
		t.Fatalf("on a phone: scrolls sideways %v, body text %vpx", overflow, fontPx)
	}
}

// screenshot saves the top of the page, recompressed as small as PNG goes.
func screenshot(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1000, 1500)); err != nil {
		t.Fatal(err)
	}
	raw, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	img, _, err := image.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&out, img); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", path, out.Len())
}

// TestServePrintsSettingsURL: the authority's start-up output names the
// settings page and the token that opens it (the admin token, by the
// command that prints it), and the page is there (the sign-in form, no
// token in it).
func TestServePrintsSettingsURL(t *testing.T) {
	state := t.TempDir()
	cmd := exec.Command(bin, "serve", "--listen", "127.0.0.1:0", "--token", "sekret", "--embedded", t.TempDir(), "--state-dir", state)
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	settingsRE := regexp.MustCompile(`^Settings page: (http://\S+/settings) \(sign in with the admin token: sisyphus admin-token --state-dir (\S+)\)$`)
	found := make(chan [2]string, 1)
	go func() {
		var page string
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := settingsRE.FindStringSubmatch(sc.Text()); m != nil && m[2] == state {
				page = m[1]
			}
			if m := readyRE.FindStringSubmatch(sc.Text()); m != nil {
				found <- [2]string{page, m[1]}
				break
			}
		}
		close(found)
		io.Copy(io.Discard, stdout)
	}()
	var got [2]string
	select {
	case got = <-found:
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not print its ready line")
	}
	page, mcpURL := got[0], got[1]
	if page == "" || page != strings.TrimSuffix(mcpURL, "/mcp")+"/settings" {
		t.Fatalf("settings URL %q beside MCP URL %q", page, mcpURL)
	}
	resp, err := http.Get(page)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `name="token"`) || strings.Contains(string(body), "sekret") ||
		strings.Contains(string(body), adminTokenOf(t, state)) || !strings.Contains(string(body), "sisyphus admin-token") {
		t.Fatalf("GET %s: %d\n%s", page, resp.StatusCode, body)
	}
}
