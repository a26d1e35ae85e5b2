package authority

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/embedded"
	"github.com/sisyphus-go/sisyphus/internal/settings"
	"github.com/sisyphus-go/sisyphus/internal/settingsui"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
)

// pageToken is the agents' bearer token; adminToken the person's.
const (
	pageToken  = "settings-page-token-5d1e9a"
	adminToken = "admin-token-for-the-page-0123456789abcdef"
)

// pageAuthority is an authority serving the settings page, over an
// embedded kernel whose server the test can stop.
type pageAuthority struct {
	url    string
	kernel *siyuan.Client
	ks     *httptest.Server
	hc     *http.Client
	// bodies are every answer the test read, to look for the token.
	bodies []string
}

func newPageAuthority(t *testing.T) *pageAuthority {
	t.Helper()
	k, err := embedded.Open(context.Background(), embedded.Options{Dir: t.TempDir(), Token: "k", SQLFlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ks := httptest.NewServer(k.Handler())
	t.Cleanup(func() { ks.Close(); k.Close() })
	c, _ := siyuan.New(siyuan.Config{BaseURL: ks.URL, Token: "k", ReadAttempts: 1})
	l, err := strict.OpenLedger(filepath.Join(t.TempDir(), "ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	svc, err := NewService(ServiceConfig{Kernel: c, Coordinator: strict.NewCoordinator(strict.CoordinatorConfig{Ledger: l}), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	hs := httptest.NewServer(Routes(svc.MCP, RoutesConfig{Token: pageToken, AdminToken: adminToken, Admission: svc.Admission, Role: "authority",
		Version: "test", Strict: true, Config: svc, Settings: svc.SettingsPage(), Staging: svc.Staging}))
	t.Cleanup(hs.Close)
	hc := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &pageAuthority{url: hs.URL, kernel: c, ks: ks, hc: hc}
}

// send makes one request as a browser on the page would.
func (a *pageAuthority) send(t *testing.T, method, path string, form url.Values, cookie string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, a.url+path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if cookie != "" {
		req.AddCookie(&http.Cookie{Name: settingsui.CookieName, Value: cookie})
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := a.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var h bytes.Buffer
	resp.Header.Write(&h)
	a.bodies = append(a.bodies, h.String()+string(b))
	return resp, string(b)
}

// signIn signs in at prefix and returns the session and the CSRF token.
func (a *pageAuthority) signIn(t *testing.T, prefix string) (cookie, csrf string) {
	t.Helper()
	resp, _ := a.send(t, "POST", prefix+"/settings/login", url.Values{"token": {adminToken}}, "", nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != prefix+"/settings" {
		t.Fatalf("sign-in at %q: %d %v", prefix, resp.StatusCode, resp.Header)
	}
	for _, c := range resp.Cookies() {
		if c.Name == settingsui.CookieName {
			cookie = c.Value
			if c.Path != prefix+"/settings" || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode {
				t.Fatalf("cookie %+v", c)
			}
		}
	}
	_, page := a.send(t, "GET", prefix+"/settings", nil, cookie, nil)
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
	if cookie == "" || m == nil {
		t.Fatalf("no session or CSRF token:\n%s", page)
	}
	return cookie, m[1]
}

// change posts one form of the page and returns the page after the
// redirect.
func (a *pageAuthority) change(t *testing.T, cookie, csrf, what string, form url.Values) string {
	t.Helper()
	form.Set("csrf", csrf)
	resp, body := a.send(t, "POST", "/settings/"+what, form, cookie, nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/settings" {
		t.Fatalf("POST /settings/%s: %d %s", what, resp.StatusCode, body)
	}
	_, page := a.send(t, "GET", "/settings", nil, cookie, nil)
	return page
}

// view is GET /config, what `sisyphus config show` prints.
func (a *pageAuthority) view(t *testing.T) ConfigView {
	t.Helper()
	req, _ := http.NewRequest("GET", a.url+"/config", nil)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := a.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v ConfigView
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func (a *pageAuthority) noToken(t *testing.T) {
	t.Helper()
	for _, b := range a.bodies {
		if strings.Contains(b, pageToken) || strings.Contains(b, adminToken) {
			t.Fatalf("the token is in an answer:\n%s", b)
		}
	}
}

func flashOf(page string) string {
	m := regexp.MustCompile(`<div class="(?:ok|alert)" role="(?:status|alert)"><p>([^<]*)</p>`).FindStringSubmatch(page)
	if m == nil {
		return ""
	}
	return m[1]
}

// TestSettingsPageMakesConfigChanges: each form of the page is the same
// mutation as `sisyphus config`, seen in GET /config and by agents.
func TestSettingsPageMakesConfigChanges(t *testing.T) {
	a := newPageAuthority(t)
	cookie, csrf := a.signIn(t, "")
	nb := a.view(t).Notebooks[0]
	if nb.Name != "Sisyphus Demo" || nb.Permission != "rwd" {
		t.Fatalf("demo notebook %+v", nb)
	}

	page := a.change(t, cookie, csrf, "notebook", url.Values{"notebook": {nb.ID}, "permission": {"none"}})
	if f := flashOf(page); f != "Saved: the permission of notebook “Sisyphus Demo” is now none." {
		t.Fatalf("flash %q", f)
	}
	if v := a.view(t); v.Notebooks[0].Permission != "none" || !v.Notebooks[0].Explicit {
		t.Fatalf("config after the page set none: %+v", v.Notebooks)
	}
	_, res := rpc(t, a.url+"/mcp", pageToken, "tools/call", "notebook", map[string]any{"name": "notebook", "arguments": map[string]any{"action": "list"}})
	if nbs := res["structuredContent"].(map[string]any)["notebooks"].([]any); len(nbs) != 0 {
		t.Fatalf("agents still see the notebook: %v", nbs)
	}

	a.change(t, cookie, csrf, "tool", url.Values{"tool": {"block"}, "action": {"delete"}, "enabled": {"true"}})
	a.change(t, cookie, csrf, "tool", url.Values{"tool": {"fs"}, "enabled": {"false"}})
	page = a.change(t, cookie, csrf, "strict", url.Values{"strict": {"off"}})
	v := a.view(t)
	action := func(tool, name string) ActionView {
		for _, tv := range v.Tools {
			for _, av := range tv.Actions {
				if tv.Name == tool && av.Name == name {
					return av
				}
			}
		}
		t.Fatalf("no %s.%s", tool, name)
		return ActionView{}
	}
	if !action("block", "delete").Enabled || action("fs", "write").Enabled || v.Strict.Config {
		t.Fatalf("config after the page's changes: block.delete %v, fs.write %v, strict %v", action("block", "delete"), action("fs", "write"), v.Strict)
	}
	if !strings.Contains(page, `<dt>In the configuration</dt><dd><span class="state off">off</span></dd>`) {
		t.Fatal("the page does not show strict mode off")
	}

	// A refused change says why, in words.
	page = a.change(t, cookie, csrf, "notebook", url.Values{"notebook": {"20200101000000-zzzzzzz"}, "permission": {"rw"}})
	if f := flashOf(page); !strings.Contains(f, "Not saved") || !strings.Contains(f, "20200101000000-zzzzzzz not found (not_found)") {
		t.Fatalf("unknown notebook: %q", f)
	}
	page = a.change(t, cookie, csrf, "notebook", url.Values{"notebook": {nb.ID}, "permission": {"all"}})
	if f := flashOf(page); !strings.Contains(f, "permission must be one of none, r, rw, rwd") {
		t.Fatalf("bad permission: %q", f)
	}
	a.noToken(t)
}

// TestSettingsPageShowsLedgerOutcomes: a strict write appears with its
// request id, outcome and the same hash aliases the agent was shown, and
// nothing of its content or targets.
func TestSettingsPageShowsLedgerOutcomes(t *testing.T) {
	a := newPageAuthority(t)
	ctx := context.Background()
	nbs, _ := a.kernel.ListNotebooks(ctx)
	ids, _ := a.kernel.GetIDsByHPath(ctx, nbs[0].ID, "/Welcome")
	kids, _ := a.kernel.GetChildBlocks(ctx, ids[0])
	call := func(args map[string]any) map[string]any {
		_, res := rpc(t, a.url+"/mcp", pageToken, "tools/call", "block", map[string]any{"name": "block", "arguments": args})
		return res["structuredContent"].(map[string]any)
	}
	const secret = "marmoset secret paragraph"
	pre := call(map[string]any{"action": "update", "id": kids[0].ID, "data": secret, "validateOnly": true})
	done := call(map[string]any{"action": "update", "id": kids[0].ID, "data": secret, "requestId": pre["requestId"],
		pre["preconditionField"].(string): pre[pre["preconditionField"].(string)]})
	if done["status"] != "committed" {
		t.Fatalf("commit: %v", done)
	}
	cookie, _ := a.signIn(t, "")
	_, page := a.send(t, "GET", "/settings", nil, cookie, nil)
	ledger := page[strings.Index(page, `id="ledger"`):]
	for _, want := range []string{"<code>" + done["requestId"].(string) + "</code>", "<code>block.update</code>", "<code>committed</code>",
		"<code>" + done["previousHash"].(string) + "</code>", "<code>" + done["resultHash"].(string) + "</code>"} {
		if !strings.Contains(ledger, want) {
			t.Errorf("the ledger section lacks %s", want)
		}
	}
	if strings.Contains(page, secret) || strings.Contains(page, kids[0].ID) {
		t.Errorf("the page shows the write's content or target")
	}
	if t.Failed() {
		t.Log(ledger)
	}
}

// TestSettingsPageShowsConfigProblems: a configuration file that cannot be
// parsed is shown first, in words, and changes of it are refused.
func TestSettingsPageShowsConfigProblems(t *testing.T) {
	a := newPageAuthority(t)
	err := a.kernel.PutFile(context.Background(), siyuan.PutFileRequest{Path: settings.ToolsFile, Body: strings.NewReader("{broken"), ModTime: time.Now().UnixMilli()})
	if err != nil {
		t.Fatal(err)
	}
	cookie, csrf := a.signIn(t, "")
	_, page := a.send(t, "GET", "/settings", nil, cookie, nil)
	if !strings.Contains(page, "The configuration files cannot be used") || !strings.Contains(page, settings.ToolsFile+" is not a JSON object") {
		t.Fatalf("problem not shown:\n%s", page)
	}
	page = a.change(t, cookie, csrf, "strict", url.Values{"strict": {"off"}})
	if f := flashOf(page); !strings.Contains(f, "Not saved") || !strings.Contains(f, "cannot be parsed") {
		t.Fatalf("change of an unparsable file: %q", f)
	}
}

// TestSettingsPageWithoutKernel: the page says the configuration cannot be
// read, and still shows the queues.
func TestSettingsPageWithoutKernel(t *testing.T) {
	a := newPageAuthority(t)
	cookie, _ := a.signIn(t, "")
	a.ks.Close()
	resp, page := a.send(t, "GET", "/settings", nil, cookie, nil)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(page, "The configuration could not be read") ||
		!strings.Contains(page, "kernel_unreachable") || !strings.Contains(page, `id="queues"`) {
		t.Fatalf("without a kernel: %d\n%s", resp.StatusCode, page)
	}
}

// TestSettingsRoutes: the page is served under the plugin prefix too,
// behind the routes' Origin and Host checks, and not by a front.
func TestSettingsRoutes(t *testing.T) {
	a := newPageAuthority(t)
	cookie, csrf := a.signIn(t, PluginPrefix)
	resp, page := a.send(t, "GET", PluginPrefix+"/settings", nil, cookie, nil)
	if resp.StatusCode != 200 || !strings.Contains(page, `action="`+PluginPrefix+`/settings/notebook"`) {
		t.Fatalf("under the plugin prefix: %d", resp.StatusCode)
	}
	if resp, _ := a.send(t, "GET", "/settings", nil, cookie, nil); resp.StatusCode != 200 {
		t.Fatalf("GET /settings: %d", resp.StatusCode)
	}

	form := url.Values{"csrf": {csrf}, "strict": {"on"}}
	for _, c := range []struct {
		name string
		path string
		hdr  map[string]string
		code int
	}{
		{"foreign origin", PluginPrefix + "/settings/strict", map[string]string{"Origin": "http://evil.example"}, 403},
		{"null origin from another site", PluginPrefix + "/settings/strict", map[string]string{"Origin": "null", "Sec-Fetch-Site": "cross-site"}, 403},
		{"null origin, no fetch metadata", PluginPrefix + "/settings/strict", map[string]string{"Origin": "null"}, 403},
		{"rebinding host", PluginPrefix + "/settings/strict", map[string]string{"Host": "evil.example"}, 421},
		// The page's own forms: no-referrer makes the browser say "null".
		{"the page's own form", PluginPrefix + "/settings/strict", map[string]string{"Origin": "null", "Sec-Fetch-Site": "same-origin"}, 303},
		{"same origin", PluginPrefix + "/settings/strict", map[string]string{"Origin": a.url}, 303},
	} {
		req, _ := http.NewRequest("POST", a.url+c.path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.AddCookie(&http.Cookie{Name: settingsui.CookieName, Value: cookie})
		for k, v := range c.hdr {
			req.Header.Set(k, v)
		}
		if h, ok := c.hdr["Host"]; ok {
			req.Host = h
		}
		resp, err := a.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.code {
			t.Errorf("%s: HTTP %d, want %d", c.name, resp.StatusCode, c.code)
		}
	}
	// "null" passes only for the settings page, not for the other routes.
	req, _ := http.NewRequest("GET", a.url+"/health", nil)
	req.Header.Set("Authorization", "Bearer "+pageToken)
	req.Header.Set("Origin", "null")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	if resp, err := a.hc.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("null origin on /health: %v %v", resp, err)
	}

	// A front serves no settings page.
	d := NewDelegator(DelegatorConfig{URL: a.url, Token: pageToken, StateDir: t.TempDir()})
	front, err := NewService(ServiceConfig{Kernel: a.kernel, Delegator: d, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer front.Close()
	if front.SettingsPage() != nil {
		t.Fatal("a front has a settings page")
	}
	fs := httptest.NewServer(Routes(front.MCP, RoutesConfig{Token: pageToken, Admission: front.Admission, Role: "front", Config: front.Configurator(),
		Settings: front.SettingsPage()}))
	defer fs.Close()
	for _, p := range []string{"/settings", "/settings/login", PluginPrefix + "/settings"} {
		resp, err := http.Get(fs.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("front %s: HTTP %d, want 404", p, resp.StatusCode)
		}
	}
	// Nor any /config, to either token: it would have to forward a change
	// with a credential of its own.
	for _, p := range []string{"/config", PluginPrefix + "/config"} {
		for _, tok := range []string{pageToken, adminToken} {
			for _, method := range []string{"GET", "POST"} {
				req, _ := http.NewRequest(method, fs.URL+p, strings.NewReader(`{"strict":false}`))
				req.Header.Set("Authorization", "Bearer "+tok)
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), `"not_authority"`) {
					t.Errorf("front %s %s: HTTP %d %s, want 404 not_authority", method, p, resp.StatusCode, body)
				}
			}
		}
	}
	if _, err := front.Apply(context.Background(), PrincipalAdmin, settings.Change{Strict: new(bool)}); err == nil {
		t.Error("a front's Apply made a change")
	}
	if v := a.view(t); !v.Strict.Config {
		t.Error("strict mode changed through the front")
	}
	a.noToken(t)
}
