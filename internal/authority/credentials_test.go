package authority

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/settings"
	"github.com/sisyphus-go/sisyphus/internal/strict"
)

// credentialRequest is one request of the matrix: a route, and how each
// credential is sent on it.
type credentialRequest struct {
	name, method, path, ctype, body string
	// form: the credential goes in the sign-in form, not the header.
	form bool
}

func (c credentialRequest) send(t *testing.T, base, tok string) (int, string) {
	t.Helper()
	body := c.body
	if c.form {
		body = url.Values{"token": {tok}}.Encode()
	}
	req, _ := http.NewRequest(c.method, base+c.path, strings.NewReader(body))
	if c.ctype != "" {
		req.Header.Set("Content-Type", c.ctype)
	}
	if !c.form && tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	if strings.HasSuffix(c.path, "/mcp") {
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/list")
	}
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestEachRouteTakesItsOwnCredential: every route, under both prefixes,
// with no credential, a wrong one, the agents' bearer token and the
// person's admin token. The administrative routes (/config, the settings
// sign-in) take the admin token only and refuse the bearer token with 403
// forbidden; the agents' routes take the bearer token only and refuse the
// admin token the same way; anything else is 401.
func TestEachRouteTakesItsOwnCredential(t *testing.T) {
	a := newPageAuthority(t)
	const listTools = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	const (
		none     = ""
		garbage  = "not-a-token-of-this-server-0123456789"
		agent    = pageToken
		person   = adminToken
		jsonType = "application/json"
		formType = "application/x-www-form-urlencoded"
	)
	type want map[string]int // credential → status
	admin := want{none: 401, garbage: 401, agent: 403, person: 200}
	agents := want{none: 401, garbage: 401, agent: 200, person: 403}
	routes := []struct {
		req  credentialRequest
		want want
	}{
		{credentialRequest{name: "GET /config", method: "GET", path: "/config"}, admin},
		{credentialRequest{name: "POST /config", method: "POST", path: "/config", ctype: jsonType, body: `{"strict":true}`}, admin},
		{credentialRequest{name: "sign-in", method: "POST", path: "/settings/login", ctype: formType, form: true},
			want{none: 401, garbage: 401, agent: 401, person: 303}},
		{credentialRequest{name: "/mcp", method: "POST", path: "/mcp", ctype: jsonType, body: listTools}, agents},
		{credentialRequest{name: "/health", method: "GET", path: "/health"}, agents},
		{credentialRequest{name: "/tasks", method: "POST", path: "/tasks", ctype: jsonType,
			body: `{"taskId":"00000000-0000-4000-8000-000000000000","operation":"status"}`}, agents},
		{credentialRequest{name: "/transfer/lookup", method: "POST", path: "/transfer/lookup", ctype: jsonType,
			body: `{"fileName":"a.png","sha256":"` + strings.Repeat("0", 64) + `","size":1}`}, agents},
		{credentialRequest{name: "/transfer/upload", method: "POST", path: "/transfer/upload", ctype: jsonType,
			body: `{"fileName":"a.png","dataBase64":"aGk="}`}, agents},
	}
	for _, prefix := range []string{"", PluginPrefix} {
		for _, r := range routes {
			for _, cred := range []string{none, garbage, agent, person} {
				name := map[string]string{none: "none", garbage: "garbage", agent: "bearer", person: "admin"}[cred]
				t.Run(prefix+r.req.name+"/"+name, func(t *testing.T) {
					t.Parallel() // a refused sign-in is held a second
					req := r.req
					req.path = prefix + req.path
					status, body := req.send(t, a.url, cred)
					if status != r.want[cred] {
						t.Fatalf("HTTP %d, want %d\n%s", status, r.want[cred], body)
					}
					if strings.Contains(body, agent) || strings.Contains(body, person) {
						t.Fatalf("a token is in the answer:\n%s", body)
					}
					switch {
					case req.form && cred == agent:
						if !strings.Contains(body, "bearer token agents use") || !strings.Contains(body, "sisyphus admin-token") {
							t.Fatalf("the sign-in does not say which token to use:\n%s", body)
						}
					case req.form:
					case status == 403 || status == 401:
						var e struct {
							Error struct{ Code, Message string }
						}
						if json.Unmarshal([]byte(body), &e) != nil || e.Error.Message == "" ||
							failure.Code(e.Error.Code) != map[int]failure.Code{401: failure.Unauthorized, 403: failure.Forbidden}[status] {
							if !(status == 401 && req.name == "/mcp") { // the MCP layer answers its own 401
								t.Fatalf("not a typed error body:\n%s", body)
							}
						}
						if status == 403 && cred == agent && !strings.Contains(body, "admin token") {
							t.Fatalf("the refusal of the bearer token does not name the admin token:\n%s", body)
						}
					}
				})
			}
		}
	}
}

// TestAdminTokenEqualToTheBearerOpensNothing: were the two tokens equal
// (a misconfigured server), every agent would hold the admin token; then
// the admin token matches nothing.
func TestAdminTokenEqualToTheBearerOpensNothing(t *testing.T) {
	_, _, svc := newAuthorityWith(t, nil)
	h := Routes(svc.MCP, RoutesConfig{Token: "same-token-for-both-0123456789abcdef", AdminToken: "same-token-for-both-0123456789abcdef",
		Admission: svc.Admission, Config: svc.Configurator()})
	for _, method := range []string{"GET", "POST"} {
		req, _ := http.NewRequest(method, "/config", strings.NewReader(`{"strict":false}`))
		req.Header.Set("Authorization", "Bearer same-token-for-both-0123456789abcdef")
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusForbidden {
			t.Fatalf("%s /config with the shared token: %d", method, w.Code)
		}
	}
	v, err := svc.View(context.Background())
	if err != nil || !v.Strict.Config {
		t.Fatalf("the configuration changed: %+v %v", v.Strict, err)
	}
}

// TestAdminClient: sisyphus config's client reads and changes the
// configuration with the admin token, and says which token is wrong when
// it is refused.
func TestAdminClient(t *testing.T) {
	a := newPageAuthority(t)
	ctx := context.Background()
	cfg := DelegatorConfig{URL: a.url, StateDir: t.TempDir(), Token: pageToken}
	on := false
	v, err := NewAdminClient(cfg, adminToken, "/state/admin-token").Config(ctx, &settings.Change{Strict: &on})
	if err != nil || v.Strict.Config {
		t.Fatalf("change with the admin token: %+v %v", v.Strict, err)
	}
	for _, c := range []struct {
		tok  string
		code failure.Code
		says string
	}{
		{"wrong-0123456789abcdef0123456789abcdef", failure.Unauthorized, "refused the admin token read from /elsewhere/admin-token"},
		{pageToken, failure.Forbidden, "took the token read from /elsewhere/admin-token for the agents' bearer token"},
	} {
		_, err := NewAdminClient(cfg, c.tok, "/elsewhere/admin-token").Config(ctx, nil)
		if err == nil || errCodeOf(err) != c.code || !strings.Contains(err.Error(), c.says) {
			t.Fatalf("with %q: %v", c.tok, err)
		}
	}
	if v := a.view(t); v.Strict.Config {
		t.Fatal("a refused client changed the configuration")
	}
}

// fixedConfig is a Configurator that answers an empty view and records
// whether a change was asked for.
type fixedConfig struct{ applied atomic.Bool }

func (c *fixedConfig) View(context.Context) (ConfigView, error) {
	return ConfigView{Version: "fixed"}, nil
}

func (c *fixedConfig) Apply(context.Context, string, settings.Change) (ConfigView, error) {
	c.applied.Store(true)
	return ConfigView{Version: "fixed"}, nil
}

// FuzzConfigCredential: whatever Authorization header a client sends,
// /config answers 200 only to exactly the admin token (after "Bearer ",
// surrounding space aside), 403 only to the bearer token, and 401 to
// anything else; a change is made only for the admin token.
func FuzzConfigCredential(f *testing.F) {
	const bearer, admin = "bearer-token-0123456789abcdef0123", "admin-token-0123456789abcdef0123456789"
	for _, h := range []string{"", "Bearer " + admin, "Bearer " + bearer, "bearer " + admin, "Bearer  " + admin + " ", "Token " + admin,
		"Bearer " + admin + "x", "Bearer " + admin[:len(admin)-1], "Bearer", "Bearer " + bearer + admin} {
		f.Add(h, true)
	}
	_, _, c := testKernel(f)
	l, err := strict.OpenLedger(filepath.Join(f.TempDir(), "ledger.db"))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { l.Close() })
	svc, err := NewService(ServiceConfig{Kernel: c, Coordinator: strict.NewCoordinator(strict.CoordinatorConfig{Ledger: l}), Version: "test"})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(svc.Close)
	cfg := &fixedConfig{}
	h := Routes(svc.MCP, RoutesConfig{Token: bearer, AdminToken: admin, Admission: svc.Admission, Config: cfg})
	f.Fuzz(func(t *testing.T, header string, post bool) {
		cfg.applied.Store(false)
		method, body := "GET", ""
		if post {
			method, body = "POST", `{"strict":true}`
		}
		req := httptest.NewRequest(method, "/config", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header["Authorization"] = []string{header}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		tok, isBearer := strings.CutPrefix(header, "Bearer ")
		tok = strings.TrimSpace(tok)
		want := http.StatusUnauthorized
		switch {
		case isBearer && tok == admin:
			want = http.StatusOK
		case isBearer && tok == bearer:
			want = http.StatusForbidden
		}
		if w.Code != want || cfg.applied.Load() != (post && want == http.StatusOK) {
			t.Fatalf("%s with Authorization %q: HTTP %d (changed %v), want %d", method, header, w.Code, cfg.applied.Load(), want)
		}
		if strings.Contains(w.Body.String(), admin) || strings.Contains(w.Body.String(), bearer) {
			t.Fatalf("a token is in the answer: %s", w.Body)
		}
	})
}
