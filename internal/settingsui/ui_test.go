package settingsui

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/admission"
	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/settings"
)

// token is the admin token; agentToken the agents' bearer token.
const (
	token      = "tok-3f9a1c0d5e7b2468"
	agentToken = "agent-7c2e90b14d3a"
)

type applied struct {
	principal string
	ch        settings.Change
}

// fakeBackend records changes and serves a fixed page.
type fakeBackend struct {
	mu       sync.Mutex
	page     Page
	applyErr error
	changes  []applied
}

func (b *fakeBackend) Page(context.Context) Page {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.page
}

func (b *fakeBackend) Apply(_ context.Context, principal string, ch settings.Change) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.changes = append(b.changes, applied{principal, ch})
	return b.applyErr
}

func (b *fakeBackend) applied() []applied {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]applied(nil), b.changes...)
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func demoPage() Page {
	return Page{Role: "authority", Version: "test",
		Config: &Config{DefaultPermission: "r", PermissionsFile: "/data/storage/p/notebookPermissions", ToolsFile: "/data/storage/p/mcpToolsConfig",
			UserRules: "answer <briefly>", AgentMemoryBytes: 42,
			KernelOptionsFile: "/data/storage/p/mcpHttpSettings", KernelOptionNotes: []string{"readMaxRequests 9999 is outside 16–512 or not whole: 512 applies"},
			KernelOptions: []KernelOption{{Name: "readMaxRequests", Value: "512", Source: "configuration", Range: "16–512, default 128", Meaning: "kernel calls one read may make"}},
			Notebooks: []Notebook{
				{ID: "20260101000000-aaaaaaa", Name: "Journal", Permission: "rw", Explicit: true},
				{ID: "20260101000000-bbbbbbb", Name: "Research", Permission: "r"},
			},
			Tools: []Tool{{Name: "block", Enabled: true, Actions: []Action{
				{Name: "update", Class: "mutation", Enabled: true},
				{Name: "delete", Class: "mutation", Enabled: false, Dangerous: true, OffByDefault: true},
			}}},
			Apps: []App{{Key: "timeline", Title: "Timeline", Enabled: true, Served: true, Tool: "timeline", Actions: []AppAction{
				{Name: "list_nodes", Enabled: true}, {Name: "rollback_block", Enabled: false, Dangerous: true}}},
				{Key: "mascotShop", Title: "Mascot shop", Enabled: true, Served: true, Tool: "mascot", Actions: []AppAction{
					{Name: "get_balance", Enabled: true}, {Name: "shop", Enabled: true}, {Name: "buy", Enabled: false}}}},
			Strict: Strict{Config: true, Effective: true}},
		Queues: admission.Stats{InFlight: 2, MaxInFlight: 128, Lanes: map[string]admission.LaneStats{
			"read": {Concurrency: 4, Running: 1, Queued: 0}, "write": {Concurrency: 1, Running: 1, Queued: 3}}},
		Outcomes: []Outcome{
			{RequestID: "9c1e", Tool: "block", Action: "update", Status: "committed", At: time.Date(2026, 8, 12, 12, 0, 0, 0, time.UTC), PreviousHash: "8ac2", ResultHash: "51f0"},
			{RequestID: "77ab", Tool: "fs", Action: "write", Status: "executing", At: time.Date(2026, 8, 12, 11, 0, 0, 0, time.UTC)},
		}}
}

// harness is a UI over a fake backend, driven through its handler.
type harness struct {
	t    *testing.T
	ui   *UI
	h    http.Handler
	be   *fakeBackend
	clk  *clock
	logs *bytes.Buffer
	// seen collects every response, to look for the token.
	seen []*httptest.ResponseRecorder
}

func newHarness(t *testing.T, base string) *harness {
	t.Helper()
	hs := &harness{t: t, be: &fakeBackend{page: demoPage()}, clk: &clock{t: time.Date(2026, 8, 12, 12, 0, 0, 0, time.UTC)}, logs: &bytes.Buffer{}}
	ui, err := New(Options{Backend: hs.be, Now: hs.clk.Now, Logger: slog.New(slog.NewTextHandler(hs.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Login: func(tok string) (string, Verdict) {
			switch tok {
			case token:
				return "admin", Admitted
			case agentToken:
				return "", AgentToken
			}
			return "", Wrong
		},
		// Failures are held for a moment only: the tests that look at
		// the holding replace the gate's pause.
		FailureDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	hs.ui, hs.h = ui, ui.Handler(base)
	return hs
}

type req struct {
	method, path string
	form         url.Values
	cookie       string
	header       map[string]string
	remote       string
	tls          bool
}

func (hs *harness) do(r req) *httptest.ResponseRecorder {
	hs.t.Helper()
	var body *strings.Reader
	if r.form != nil {
		body = strings.NewReader(r.form.Encode())
	} else {
		body = strings.NewReader("")
	}
	hr := httptest.NewRequest(r.method, r.path, body)
	if r.form != nil {
		hr.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if r.cookie != "" {
		hr.AddCookie(&http.Cookie{Name: CookieName, Value: r.cookie})
	}
	for k, v := range r.header {
		hr.Header.Set(k, v)
	}
	if r.remote != "" {
		hr.RemoteAddr = r.remote
	}
	if r.tls {
		hr.TLS = &tls.ConnectionState{}
	}
	w := httptest.NewRecorder()
	hs.h.ServeHTTP(w, hr)
	hs.seen = append(hs.seen, w)
	return w
}

// signIn signs in and returns the session cookie's value and the page's
// CSRF token.
func (hs *harness) signIn() (cookie, csrf string) {
	hs.t.Helper()
	w := hs.do(req{method: "POST", path: "/settings/login", form: url.Values{"token": {token}}})
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/settings" {
		hs.t.Fatalf("sign-in: %d %v\n%s", w.Code, w.Header(), w.Body)
	}
	c := sessionCookie(hs.t, w)
	page := hs.do(req{method: "GET", path: "/settings", cookie: c.Value})
	return c.Value, csrfOf(hs.t, page.Body.String())
}

func sessionCookie(t *testing.T, w *httptest.ResponseRecorder) *http.Cookie {
	t.Helper()
	for _, c := range w.Result().Cookies() {
		if c.Name == CookieName {
			return c
		}
	}
	t.Fatalf("no session cookie in %v", w.Header())
	return nil
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func csrfOf(t *testing.T, html string) string {
	t.Helper()
	m := csrfRE.FindStringSubmatch(html)
	if m == nil {
		t.Fatalf("no CSRF token in the page:\n%s", html)
	}
	return m[1]
}

// noToken fails if the token appears in any response or log line so far.
func (hs *harness) noToken() {
	hs.t.Helper()
	for _, w := range hs.seen {
		var hdr strings.Builder
		w.Header().Write(&hdr)
		if strings.Contains(w.Body.String(), token) || strings.Contains(hdr.String(), token) {
			hs.t.Fatalf("the token leaked into a response: %s\n%s", hdr.String(), w.Body)
		}
	}
	if strings.Contains(hs.logs.String(), token) {
		hs.t.Fatalf("the token leaked into the log:\n%s", hs.logs)
	}
}

func TestSignIn(t *testing.T) {
	hs := newHarness(t, "/settings")
	w := hs.do(req{method: "GET", path: "/settings"})
	body := w.Body.String()
	if w.Code != 200 || !strings.Contains(body, `action="/settings/login"`) || !strings.Contains(body, `type="password"`) ||
		!strings.Contains(body, `method="post"`) || strings.Contains(body, "Notebooks") {
		t.Fatalf("without a session GET shows the sign-in form: %d\n%s", w.Code, body)
	}

	// A wrong token: 401, the sign-in page again, no cookie, no echo.
	w = hs.do(req{method: "POST", path: "/settings/login", form: url.Values{"token": {"guess-" + token[:6]}}})
	if w.Code != http.StatusUnauthorized || !strings.Contains(w.Body.String(), "not this server&#39;s admin token") ||
		!strings.Contains(w.Body.String(), "sisyphus admin-token") || len(w.Result().Cookies()) != 0 || strings.Contains(w.Body.String(), "guess-") {
		t.Fatalf("wrong token: %d %v\n%s", w.Code, w.Header(), w.Body)
	}
	// The agents' bearer token is refused, and the page says which token
	// to paste instead.
	w = hs.do(req{method: "POST", path: "/settings/login", form: url.Values{"token": {agentToken}}})
	if w.Code != http.StatusUnauthorized || !strings.Contains(w.Body.String(), "bearer token agents use") ||
		!strings.Contains(w.Body.String(), "sisyphus admin-token") || len(w.Result().Cookies()) != 0 || strings.Contains(w.Body.String(), agentToken) {
		t.Fatalf("the agents' token: %d %v\n%s", w.Code, w.Header(), w.Body)
	}
	if !strings.Contains(hs.logs.String(), "refused the agents' bearer token") || strings.Contains(hs.logs.String(), agentToken) {
		t.Fatalf("the refusal of the agents' token is not logged as such, or the token is:\n%s", hs.logs)
	}
	// The token cannot be passed in the URL: GET /login is not a way in.
	w = hs.do(req{method: "GET", path: "/settings/login?token=" + token})
	if w.Code != http.StatusMethodNotAllowed || len(w.Result().Cookies()) != 0 {
		t.Fatalf("GET /login?token=: %d", w.Code)
	}

	w = hs.do(req{method: "POST", path: "/settings/login", form: url.Values{"token": {"  " + token + "\n"}}})
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/settings" {
		t.Fatalf("sign-in: %d %v", w.Code, w.Header())
	}
	c := sessionCookie(t, w)
	if c.Value == token || strings.Contains(c.Value, token) || len(c.Value) < 40 || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode ||
		c.Path != "/settings" || c.Secure || c.MaxAge != 0 || !c.Expires.IsZero() {
		t.Fatalf("session cookie %+v", c)
	}
	page := hs.do(req{method: "GET", path: "/settings", cookie: c.Value})
	if page.Code != 200 || !strings.Contains(page.Body.String(), "Signed in.") || !strings.Contains(page.Body.String(), "Journal") {
		t.Fatalf("page after sign-in: %d\n%s", page.Code, page.Body)
	}
	if again := hs.do(req{method: "GET", path: "/settings", cookie: c.Value}); strings.Contains(again.Body.String(), "Signed in.") {
		t.Fatal("the message is shown once")
	}
	// Signing in again rotates the id; the old one ends.
	w = hs.do(req{method: "POST", path: "/settings/login", form: url.Values{"token": {token}}, cookie: c.Value})
	if c2 := sessionCookie(t, w); c2.Value == c.Value {
		t.Fatal("a new sign-in keeps the old session id")
	}
	if old := hs.do(req{method: "GET", path: "/settings", cookie: c.Value}); strings.Contains(old.Body.String(), "Journal") {
		t.Fatal("the replaced session still works")
	}
	hs.noToken()
}

func TestCookieSecureOnlyOverTLS(t *testing.T) {
	hs := newHarness(t, "/settings")
	w := hs.do(req{method: "POST", path: "/settings/login", form: url.Values{"token": {token}}, tls: true})
	if c := sessionCookie(t, w); !c.Secure || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode {
		t.Fatalf("cookie over TLS: %+v", c)
	}
}

func TestSecurityHeadersOnEveryAnswer(t *testing.T) {
	hs := newHarness(t, "/settings")
	cookie, csrf := hs.signIn()
	for _, c := range []struct {
		name string
		r    req
		code int
	}{
		{"sign-in page", req{method: "GET", path: "/settings"}, 200},
		{"settings page", req{method: "GET", path: "/settings", cookie: cookie}, 200},
		{"trailing slash", req{method: "GET", path: "/settings/", cookie: cookie}, 200},
		{"stylesheet", req{method: "GET", path: "/settings/style.css"}, 200},
		{"wrong token", req{method: "POST", path: "/settings/login", form: url.Values{"token": {"x"}}}, 401},
		{"no session", req{method: "POST", path: "/settings/strict", form: url.Values{"strict": {"off"}}}, 401},
		{"bad CSRF", req{method: "POST", path: "/settings/strict", form: url.Values{"strict": {"off"}, "csrf": {"x"}}, cookie: cookie}, 403},
		{"redirect", req{method: "POST", path: "/settings/strict", form: url.Values{"strict": {"off"}, "csrf": {csrf}}, cookie: cookie}, 303},
		{"not found", req{method: "GET", path: "/settings/nope"}, 404},
		{"method", req{method: "DELETE", path: "/settings"}, 405},
	} {
		w := hs.do(c.r)
		h := w.Header()
		if w.Code != c.code {
			t.Errorf("%s: HTTP %d, want %d", c.name, w.Code, c.code)
		}
		for k, v := range map[string]string{
			"Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
			"Referrer-Policy":         "no-referrer", "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY",
		} {
			if h.Get(k) != v {
				t.Errorf("%s: %s = %q, want %q", c.name, k, h.Get(k), v)
			}
		}
	}
	if w := hs.do(req{method: "GET", path: "/settings/style.css"}); !strings.HasPrefix(w.Header().Get("Content-Type"), "text/css") {
		t.Fatalf("stylesheet type %q", w.Header().Get("Content-Type"))
	}
}

func TestCSRFAndSessionRefusals(t *testing.T) {
	hs := newHarness(t, "/settings")
	cookie, csrf := hs.signIn()
	_, otherCSRF := hs.signIn()
	nb := url.Values{"notebook": {"20260101000000-bbbbbbb"}, "permission": {"none"}}
	with := func(v url.Values, kv ...string) url.Values {
		out := url.Values{}
		for k, vs := range v {
			out[k] = vs
		}
		for i := 0; i+1 < len(kv); i += 2 {
			out.Set(kv[i], kv[i+1])
		}
		return out
	}
	for _, c := range []struct {
		name string
		r    req
		code int
	}{
		{"no CSRF token", req{method: "POST", path: "/settings/notebook", form: nb, cookie: cookie}, 403},
		{"wrong CSRF token", req{method: "POST", path: "/settings/notebook", form: with(nb, "csrf", csrf+"x"), cookie: cookie}, 403},
		{"another session's token", req{method: "POST", path: "/settings/notebook", form: with(nb, "csrf", otherCSRF), cookie: cookie}, 403},
		{"no session", req{method: "POST", path: "/settings/notebook", form: with(nb, "csrf", csrf)}, 401},
		{"unknown session", req{method: "POST", path: "/settings/notebook", form: with(nb, "csrf", csrf), cookie: "forged"}, 401},
		{"cross-site form", req{method: "POST", path: "/settings/notebook", form: with(nb, "csrf", csrf), cookie: cookie,
			header: map[string]string{"Sec-Fetch-Site": "cross-site"}}, 403},
		{"not a form", req{method: "POST", path: "/settings/notebook", cookie: cookie, header: map[string]string{"Content-Type": "application/json"}}, 415},
		{"logout without token", req{method: "POST", path: "/settings/logout", form: url.Values{}, cookie: cookie}, 403},
		{"GET of a change", req{method: "GET", path: "/settings/notebook?csrf=" + csrf + "&notebook=x&permission=none", cookie: cookie}, 405},
	} {
		if w := hs.do(c.r); w.Code != c.code {
			t.Errorf("%s: HTTP %d, want %d\n%s", c.name, w.Code, c.code, w.Body)
		}
	}
	if got := hs.be.applied(); len(got) != 0 {
		t.Fatalf("refused forms changed something: %v", got)
	}
	// The session survived the refusals.
	if w := hs.do(req{method: "GET", path: "/settings", cookie: cookie}); !strings.Contains(w.Body.String(), "Journal") {
		t.Fatal("the session ended")
	}
}

func TestEachChange(t *testing.T) {
	on, off := true, false
	for _, c := range []struct {
		name, path string
		form       url.Values
		want       settings.Change
		flash      string
	}{
		{"notebook permission", "/settings/notebook", url.Values{"notebook": {"20260101000000-bbbbbbb"}, "permission": {"none"}},
			settings.Change{Notebook: "20260101000000-bbbbbbb", Permission: "none"}, "Saved: the permission of notebook “Research” is now none."},
		{"tool off", "/settings/tool", url.Values{"tool": {"block"}, "enabled": {"false"}},
			settings.Change{Tool: "block", Enabled: &off}, "Saved: tool block is now off."},
		{"action on", "/settings/tool", url.Values{"tool": {"block"}, "action": {"delete"}, "enabled": {"true"}},
			settings.Change{Tool: "block", Action: "delete", Enabled: &on}, "Saved: action block.delete is now on."},
		{"strict off", "/settings/strict", url.Values{"strict": {"off"}}, settings.Change{Strict: &off}, "Saved: strict mode is now off."},
		{"strict on", "/settings/strict", url.Values{"strict": {"on"}}, settings.Change{Strict: &on}, "Saved: strict mode is now on."},
		{"slim off", "/settings/slim", url.Values{"slim": {"off"}}, settings.Change{Slim: &off}, "Saved: the slim answers switch is now off."},
		{"app off", "/settings/app", url.Values{"app": {"timeline"}, "enabled": {"false"}},
			settings.Change{App: "timeline", Enabled: &off}, "Saved: the App timeline is now off."},
		{"app action on", "/settings/app", url.Values{"app": {"timeline"}, "action": {"rollback_block"}, "enabled": {"true"}},
			settings.Change{App: "timeline", AppAction: "rollback_block", Enabled: &on}, "Saved: the App action timeline.rollback_block is now on."},
	} {
		t.Run(c.name, func(t *testing.T) {
			hs := newHarness(t, "/settings")
			cookie, csrf := hs.signIn()
			c.form.Set("csrf", csrf)
			w := hs.do(req{method: "POST", path: c.path, form: c.form, cookie: cookie})
			if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/settings" {
				t.Fatalf("HTTP %d %v", w.Code, w.Header())
			}
			got := hs.be.applied()
			if len(got) != 1 || got[0].principal != "admin" || !sameChange(got[0].ch, c.want) {
				t.Fatalf("applied %+v, want %+v", got, c.want)
			}
			page := hs.do(req{method: "GET", path: "/settings", cookie: cookie}).Body.String()
			if !strings.Contains(page, `role="status"><p>`+c.flash+`</p>`) {
				t.Fatalf("no confirmation %q in:\n%s", c.flash, page)
			}
			hs.noToken()
		})
	}
}

func sameChange(a, b settings.Change) bool {
	eq := func(x, y *bool) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return a.Notebook == b.Notebook && a.Permission == b.Permission && a.Tool == b.Tool && a.Action == b.Action &&
		eq(a.Enabled, b.Enabled) && eq(a.Strict, b.Strict) && eq(a.Slim, b.Slim) &&
		a.App == b.App && a.AppAction == b.AppAction
}

func TestBadFormsChangeNothing(t *testing.T) {
	hs := newHarness(t, "/settings")
	cookie, csrf := hs.signIn()
	for _, f := range []struct {
		path string
		form url.Values
	}{
		{"/settings/tool", url.Values{"tool": {"block"}, "enabled": {"maybe"}}},
		{"/settings/strict", url.Values{"strict": {""}}},
		{"/settings/slim", url.Values{"slim": {"maybe"}}},
		{"/settings/app", url.Values{"app": {"timeline"}, "enabled": {"maybe"}}},
	} {
		f.form.Set("csrf", csrf)
		if w := hs.do(req{method: "POST", path: f.path, form: f.form, cookie: cookie}); w.Code != http.StatusBadRequest {
			t.Errorf("%s %v: HTTP %d", f.path, f.form, w.Code)
		}
	}
	if got := hs.be.applied(); len(got) != 0 {
		t.Fatalf("bad forms changed something: %v", got)
	}
}

func TestErrorsInPlainWords(t *testing.T) {
	hs := newHarness(t, "/settings")
	cookie, csrf := hs.signIn()

	// A refused change: the page says what and why, after the redirect.
	hs.be.applyErr = failure.Missing("notebook", "20260101000000-zzzzzzz")
	w := hs.do(req{method: "POST", path: "/settings/notebook", cookie: cookie,
		form: url.Values{"csrf": {csrf}, "notebook": {"20260101000000-zzzzzzz"}, "permission": {"rw"}}})
	if w.Code != http.StatusSeeOther {
		t.Fatalf("HTTP %d", w.Code)
	}
	page := hs.do(req{method: "GET", path: "/settings", cookie: cookie}).Body.String()
	if !strings.Contains(page, `role="alert"><p>Not saved: the permission of notebook “20260101000000-zzzzzzz” could not be set to rw. notebook 20260101000000-zzzzzzz not found (not_found)</p>`) {
		t.Fatalf("refused change not shown:\n%s", page)
	}
	hs.be.applyErr = errors.New("the kernel at http://127.0.0.1:6806 did not answer")
	hs.do(req{method: "POST", path: "/settings/strict", cookie: cookie, form: url.Values{"csrf": {csrf}, "strict": {"off"}}})
	if page := hs.do(req{method: "GET", path: "/settings", cookie: cookie}).Body.String(); !strings.Contains(page, "Not saved: strict mode could not be set to off. the kernel at") {
		t.Fatalf("kernel failure not shown:\n%s", page)
	}

	// Problems of the configuration files are shown first, as an alert.
	p := demoPage()
	p.Config.Problems = []string{"/data/storage/p/mcpToolsConfig is not a JSON object"}
	hs.be.page = p
	page = hs.do(req{method: "GET", path: "/settings", cookie: cookie}).Body.String()
	alert := strings.Index(page, `<div class="alert big" role="alert">`)
	if alert < 0 || alert > strings.Index(page, `id="notebooks"`) || !strings.Contains(page, "The configuration files cannot be used") ||
		!strings.Contains(page, "<li>/data/storage/p/mcpToolsConfig is not a JSON object</li>") || !strings.Contains(page, "every agent call is refused") {
		t.Fatalf("configuration problems not shown prominently:\n%s", page)
	}

	// A configuration that cannot be read at all: 503, why, and the rest of
	// the page (queues, ledger) still shown.
	hs.be.page = Page{Role: "authority", ConfigError: "the kernel is unreachable (kernel_unreachable)", Queues: demoPage().Queues,
		OutcomesError: "strict: write ledger unavailable"}
	w = hs.do(req{method: "GET", path: "/settings", cookie: cookie})
	page = w.Body.String()
	if w.Code != http.StatusServiceUnavailable || !strings.Contains(page, "The configuration could not be read") ||
		!strings.Contains(page, "the kernel is unreachable (kernel_unreachable)") || !strings.Contains(page, `id="queues"`) ||
		!strings.Contains(page, "The ledger could not be read: strict: write ledger unavailable") || strings.Contains(page, `id="notebooks"`) {
		t.Fatalf("unreadable configuration: %d\n%s", w.Code, page)
	}
}

func TestPageShowsEverything(t *testing.T) {
	hs := newHarness(t, "/settings")
	cookie, _ := hs.signIn()
	page := hs.do(req{method: "GET", path: "/settings", cookie: cookie}).Body.String()
	for _, want := range []string{
		// notebooks, permissions, the default marked
		`Journal`, `<strong>rw</strong> <span class="words">(read and write)</span></td>`,
		`<strong>r</strong> <span class="words">(read)</span> <span class="badge">default</span></td>`,
		`<option value="rw" selected>`, `<label for="perm-20260101000000-bbbbbbb" class="vh">Permission of Research</label>`,
		// tools and actions, dangerous and off by default marked
		`<h3 id="tool-block">block <span class="state on">on</span></h3>`,
		`<code>delete</code> <span class="badge warn">dangerous</span> <span class="badge">off by default</span>`,
		`Turn on<span class="vh"> block.delete</span>`, `Turn off<span class="vh"> block.update</span>`,
		// tools collapsed, buttons told apart: a dangerous action's "on" is red
		`<details class="tool">`, `<summary><h3 id="tool-block">`, `class="danger">Turn on<span class="vh"> block.delete</span>`,
		`class="secondary">Turn off<span class="vh"> block.update</span>`, `class="primary">Save<span class="vh"> the permission of`,
		// the MCP Apps and their actions
		`<h3 id="app-timeline">Timeline <span class="state on">on</span></h3>`, `Turn off<span class="vh"> the App timeline</span>`,
		`<code>rollback_block</code> <span class="badge warn">dangerous</span>`, `Turn on<span class="vh"> timeline.rollback_block</span>`,
		`<h3 id="app-mascotShop">Mascot shop <span class="state on">on</span></h3>`, `<code>mascotShop</code>, actions of <code>mascot</code></span>`,
		`Turn on<span class="vh"> mascotShop.buy</span>`,
		// the kernel options, with where each came from and what was corrected
		`<code>readMaxRequests</code></th><td data-label="Value">512</td><td data-label="From">configuration</td>`,
		`Corrected: readMaxRequests 9999 is outside 16–512`, `/data/storage/p/mcpHttpSettings`,
		// strict mode
		`<dt>In the configuration</dt><dd><span class="state on">on</span></dd>`, `Turn strict mode off`,
		// queues
		`<dd>2 of at most 128</dd>`, `<th scope="row" data-label="Lane">write</th><td data-label="Running">1</td><td data-label="Queued">3</td>`,
		// ledger outcomes: ids, codes, aliases
		`<code>9c1e</code>`, `<code>block.update</code>`, `<code>committed</code>`, `<code>8ac2</code>`, `<code>51f0</code>`,
		`2026-08-12 12:00:00`, `<code>executing</code> <span class="words">outcome unknown`,
		// the user rules (escaped) and the memory's size
		`<pre>answer &lt;briefly&gt;</pre>`, `<dd>42 bytes</dd>`,
		// where the files live, and that this is sisyphus config
		`/data/storage/p/notebookPermissions`, `the same as <code>sisyphus config</code>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if strings.Contains(page, "not served by this build") {
		t.Error("an App served is said not to be")
	}
	if t.Failed() {
		t.Log(page)
	}
	// An App whose tool this build lacks is said not to be served.
	p := demoPage()
	p.Config.Apps[1].Served = false
	hs.be.page = p
	page = hs.do(req{method: "GET", path: "/settings", cookie: cookie}).Body.String()
	if !strings.Contains(page, `<code>mascotShop</code>, actions of <code>mascot</code>; not served by this build yet`) {
		t.Errorf("an App not served is not said to be:\n%s", page)
	}
	// The page strict mode forced off says so.
	p = demoPage()
	p.Config.Strict = Strict{Config: true, ForcedOff: true}
	hs.be.page = p
	page = hs.do(req{method: "GET", path: "/settings", cookie: cookie}).Body.String()
	if !strings.Contains(page, "yes: strict writes are forced off on this server") || !strings.Contains(page, `<dt>In effect now</dt><dd><span class="state off">off</span>`) {
		t.Fatalf("forced off not shown:\n%s", page)
	}
}

// TestAccessibleMarkup checks the structure a keyboard and a screen reader
// rely on, and that the page loads nothing from elsewhere and runs no
// script.
func TestAccessibleMarkup(t *testing.T) {
	hs := newHarness(t, "/settings")
	cookie, _ := hs.signIn()
	pages := map[string]string{
		"sign-in":  hs.do(req{method: "GET", path: "/settings"}).Body.String(),
		"settings": hs.do(req{method: "GET", path: "/settings", cookie: cookie}).Body.String(),
	}
	for name, page := range pages {
		if n := strings.Count(page, "<h1"); n != 1 {
			t.Errorf("%s: %d h1", name, n)
		}
		for _, want := range []string{`<html lang="en">`, `<meta name="viewport" content="width=device-width, initial-scale=1">`,
			`<a class="skip" href="#main">`, `<main id="main" tabindex="-1">`} {
			if !strings.Contains(page, want) {
				t.Errorf("%s lacks %s", name, want)
			}
		}
		for _, id := range regexp.MustCompile(`<(?:select|input) id="([^"]+)"`).FindAllStringSubmatch(page, -1) {
			if !strings.Contains(page, `<label for="`+id[1]+`"`) {
				t.Errorf("%s: control %s has no label", name, id[1])
			}
		}
		if strings.Contains(page, "<script") || strings.Contains(page, " style=") || regexp.MustCompile(` on[a-z]+=`).MatchString(page) {
			t.Errorf("%s has script or inline style", name)
		}
	}
	// Every button is inside a form: each control works without script.
	settings := pages["settings"]
	if strings.Count(settings, "<button") != strings.Count(settings, "<form") {
		t.Errorf("%d buttons, %d forms", strings.Count(settings, "<button"), strings.Count(settings, "<form"))
	}
	// No asset names another host.
	fs.WalkDir(assets, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := assets.ReadFile(p)
		if regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]`).Match(b) {
			t.Errorf("%s refers to another host", p)
		}
		return nil
	})
	css := hs.do(req{method: "GET", path: "/settings/style.css"}).Body.String()
	for _, want := range []string{":focus-visible", "min-height: 44px", "font-size: 1rem", "@media (max-width: 40rem)"} {
		if !strings.Contains(css, want) {
			t.Errorf("the stylesheet lacks %s", want)
		}
	}
}

// holdFailures makes the harness's failure gate hold every wrong sign-in
// until release is called (the test's stand-in for the delay).
func (hs *harness) holdFailures() (release func()) {
	gate := make(chan struct{})
	hs.ui.gate.pause = func(ctx context.Context, _ time.Duration) error {
		select {
		case <-gate:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	var once sync.Once
	release = func() { once.Do(func() { close(gate) }) }
	hs.t.Cleanup(release)
	return release
}

// occupancy is how many wrong sign-ins hold a slot and how many wait.
func (hs *harness) occupancy() (held, waiting int) {
	g := hs.ui.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.slots), g.waiting
}

// TestWrongTokensNeverLockOutTheRightOne: as many wrong tokens as the gate
// holds, from one address and from several, fill it; one more is answered
// 429 at once; the right token, from the same address as the flood, signs
// in while every wrong one is still held. Once released, each wrong one is
// answered 401.
func TestWrongTokensNeverLockOutTheRightOne(t *testing.T) {
	hs := newHarness(t, "/settings")
	release := hs.holdFailures()
	flood := DefaultMaxFailing + DefaultMaxWaiting
	answers := make(chan int, flood)
	for i := range flood {
		remote := "127.0.0.1:4000"
		if i%2 == 1 {
			remote = fmt.Sprintf("192.0.2.%d:4000", i)
		}
		r := req{method: "POST", path: "/settings/login", form: url.Values{"token": {fmt.Sprintf("guess-%d", i)}}, remote: remote}
		go func() {
			w := httptest.NewRecorder()
			hr := httptest.NewRequest(r.method, r.path, strings.NewReader(r.form.Encode()))
			hr.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			hr.RemoteAddr = r.remote
			hs.h.ServeHTTP(w, hr)
			answers <- w.Code
		}()
	}
	for {
		if held, waiting := hs.occupancy(); held == DefaultMaxFailing && waiting == DefaultMaxWaiting {
			break
		}
		time.Sleep(time.Millisecond)
	}

	over := hs.do(req{method: "POST", path: "/settings/login", form: url.Values{"token": {"one-more"}}, remote: "127.0.0.1:4001"})
	if over.Code != http.StatusTooManyRequests || over.Header().Get("Retry-After") != "1" || len(over.Result().Cookies()) != 0 ||
		!strings.Contains(over.Body.String(), "admin token") {
		t.Fatalf("a wrong token beyond the gate: %d %v\n%s", over.Code, over.Header(), over.Body)
	}
	right := hs.do(req{method: "POST", path: "/settings/login", form: url.Values{"token": {token}}, remote: "127.0.0.1:4002"})
	if right.Code != http.StatusSeeOther {
		t.Fatalf("the right token while %d wrong ones are held: %d\n%s", flood, right.Code, right.Body)
	}
	if held, waiting := hs.occupancy(); held+waiting != flood || len(answers) != 0 {
		t.Fatalf("the right token was answered after a wrong one (held %d, waiting %d, answered %d)", held, waiting, len(answers))
	}
	if page := hs.do(req{method: "GET", path: "/settings", cookie: sessionCookie(t, right).Value}); !strings.Contains(page.Body.String(), "Journal") {
		t.Fatalf("the session of the right token does not open the page:\n%s", page.Body)
	}

	release()
	for range flood {
		if code := <-answers; code != http.StatusUnauthorized {
			t.Fatalf("a held wrong token was answered %d, want 401", code)
		}
	}
	if held, waiting := hs.occupancy(); held != 0 || waiting != 0 {
		t.Fatalf("slots still taken after the flood: held %d, waiting %d", held, waiting)
	}
	if n := strings.Count(hs.logs.String(), "settings page: wrong token"); n != flood {
		t.Fatalf("%d wrong tokens logged, want %d (one per held failure, none for the 429)", n, flood)
	}
	hs.noToken()
}

// TestFailureGateLetsGoOfLeavers: a wrong sign-in whose client goes away,
// held or waiting, gives its place back.
func TestFailureGateLetsGoOfLeavers(t *testing.T) {
	hs := newHarness(t, "/settings")
	hs.holdFailures()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	n := DefaultMaxFailing + 2
	for range n {
		go func() {
			defer func() { done <- struct{}{} }()
			hr := httptest.NewRequestWithContext(ctx, "POST", "/settings/login", strings.NewReader("token=nope"))
			hr.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			hs.h.ServeHTTP(httptest.NewRecorder(), hr)
		}()
	}
	for {
		if held, waiting := hs.occupancy(); held == DefaultMaxFailing && waiting == 2 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	for range n {
		<-done
	}
	if held, waiting := hs.occupancy(); held != 0 || waiting != 0 {
		t.Fatalf("leavers keep their places: held %d, waiting %d", held, waiting)
	}
}

func TestSessionsEndIdleAndOnSignOut(t *testing.T) {
	hs := newHarness(t, "/settings")
	cookie, _ := hs.signIn()
	hs.clk.Advance(DefaultIdleTimeout - time.Minute)
	if w := hs.do(req{method: "GET", path: "/settings", cookie: cookie}); !strings.Contains(w.Body.String(), "Journal") {
		t.Fatal("a session used within the idle timeout ended")
	}
	hs.clk.Advance(DefaultIdleTimeout - time.Minute) // idle since the last use: still alive
	if w := hs.do(req{method: "GET", path: "/settings", cookie: cookie}); !strings.Contains(w.Body.String(), "Journal") {
		t.Fatal("use does not extend a session")
	}
	hs.clk.Advance(DefaultIdleTimeout)
	if w := hs.do(req{method: "GET", path: "/settings", cookie: cookie}); strings.Contains(w.Body.String(), "Journal") {
		t.Fatal("an idle session lives on")
	}

	cookie, csrf := hs.signIn()
	w := hs.do(req{method: "POST", path: "/settings/logout", cookie: cookie, form: url.Values{"csrf": {csrf}}})
	if c := sessionCookie(t, w); w.Code != http.StatusSeeOther || c.MaxAge >= 0 || c.Value != "" {
		t.Fatalf("sign-out: %d %+v", w.Code, c)
	}
	if w := hs.do(req{method: "GET", path: "/settings", cookie: cookie}); strings.Contains(w.Body.String(), "Journal") {
		t.Fatal("the session lives on after sign-out")
	}
}

func TestSessionsAreBounded(t *testing.T) {
	clk := &clock{t: time.Unix(0, 0)}
	s := newSessions(time.Hour, 2, clk.Now)
	a := s.create("p")
	clk.Advance(time.Second)
	b := s.create("p")
	clk.Advance(time.Second)
	s.get(a) // a is now the most recently seen
	clk.Advance(time.Second)
	c := s.create("p")
	if _, ok := s.get(b); ok {
		t.Fatal("the session seen longest ago survived")
	}
	for _, id := range []string{a, c} {
		if _, ok := s.get(id); !ok {
			t.Fatal("a recent session was dropped")
		}
	}
	if len(s.byKey) != 2 {
		t.Fatalf("%d sessions kept, the cap is 2", len(s.byKey))
	}
}

func TestUnderAnotherBase(t *testing.T) {
	const base = "/plugin/private/siyuan-plugins-mcp-sisyphus/settings"
	hs := newHarness(t, base)
	page := hs.do(req{method: "GET", path: base}).Body.String()
	if !strings.Contains(page, `action="`+base+`/login"`) || !strings.Contains(page, `href="`+base+`/style.css"`) {
		t.Fatalf("paths under %s:\n%s", base, page)
	}
	w := hs.do(req{method: "POST", path: base + "/login", form: url.Values{"token": {token}}})
	if c := sessionCookie(t, w); c.Path != base || w.Header().Get("Location") != base {
		t.Fatalf("cookie %+v, location %q", c, w.Header().Get("Location"))
	}
}
