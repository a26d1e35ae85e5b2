package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/testvars"
)

// TestSystemToolThroughTheBinary walks the system tool's actions and
// feedback.submit through the binary against the embedded kernel, its
// configuration holding sync, AI and proxy credentials that no answer may
// show.
func TestSystemToolThroughTheBinary(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	secrets := []string{"s3-secret-value-123", "dav-password-456", "sk-abcdefghijklmnopqrstuvwx", "proxypass"}
	conf := fmt.Sprintf(`{"api":{"token":"tok"},"sync":{"s3":{"secretKey":%q},"webdav":{"password":%q}},"ai":{"embedding":{"apiKey":%q}},`+
		`"system":{"networkProxy":{"scheme":"http","host":"proxyuser:%s@proxy.local","port":"3128"}}}`, secrets[0], secrets[1], secrets[2], secrets[3])
	if err := os.MkdirAll(filepath.Join(dir, "conf"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "conf", "conf.json"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	k := startKernel(t, dir)
	s := startServeWith(t, "--siyuan-url", k.url, "--siyuan-token", "tok", "--state-dir", t.TempDir())
	a := connect(t, s.url, "2025-11-25")
	systemFlow(t, s, a, kernelClient(t, k.url, "tok"), "tok", append(secrets, "proxyuser"), true)
	if p := a.ok("system", map[string]any{"action": "network"})["proxy"].(map[string]any); p["host"] != "[REDACTED]@proxy.local" {
		t.Fatalf("network: %v", p)
	}
}

// TestSystemToolLive runs the same walk against a real SiYuan when
// SISYPHUS_LIVE_SIYUAN_URL and SISYPHUS_LIVE_SIYUAN_TOKEN are set; the
// plugin, its storage and the snippets it makes are removed (the snippets
// file restored) when it ends.
func TestSystemToolLive(t *testing.T) {
	url, tok := testvars.Live(t)
	s := startServeWith(t, "--siyuan-url", url, "--siyuan-token", tok, "--state-dir", t.TempDir())
	a := connect(t, s.url, "2025-11-25")
	systemFlow(t, s, a, kernelClient(t, url, tok), tok, nil, false)
}

// feedbackSink is a local feedback endpoint that records every POST.
type feedbackSink struct {
	mu    sync.Mutex
	posts []map[string]any
	srv   *httptest.Server
}

func newFeedbackSink(t *testing.T) *feedbackSink {
	f := &feedbackSink{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" || json.Unmarshal(b, &m) != nil {
			m = map[string]any{"unexpected": r.Method + " " + r.Header.Get("Content-Type") + " " + string(b)}
		}
		f.mu.Lock()
		f.posts = append(f.posts, m)
		f.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *feedbackSink) got() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]any(nil), f.posts...)
}

// refused requires a read to be refused with code, a message and what to
// do.
func refused(a *agent, tool string, args map[string]any, code string) {
	a.t.Helper()
	m, isErr := a.call(tool, args)
	e, _ := m["error"].(map[string]any)
	if !isErr || e == nil || e["code"] != code || e["message"] == "" || e["action"] == "" {
		a.t.Fatalf("%s %v: got %v, want error %s with message and action", tool, args, m, code)
	}
}

// noneOf fails when an answer shows any of the strings.
func noneOf(t *testing.T, what string, v any, secrets []string) {
	t.Helper()
	b, _ := json.Marshal(v)
	for _, s := range secrets {
		// Shorter strings (the embedded kernel's token "tok") occur in
		// ordinary words; conf.api.token is checked by path instead.
		if len(s) >= 8 && strings.Contains(string(b), s) {
			t.Fatalf("%s shows the secret %q: %.300s", what, s, b)
		}
	}
}

// systemFlow walks every system action and feedback.submit; token is the
// kernel's API token (which getConf answers in clear) and secrets more
// strings no answer may show. fresh tells a workspace Sisyphus has never
// configured (the defaults apply); on another, the switches the walk
// uses are set first. The switches are put back as the defaults have them
// when it ends.
func systemFlow(t *testing.T, s *serveProc, a *agent, c *siyuan.Client, token string, secrets []string, fresh bool) {
	ctx := context.Background()
	if !fresh {
		s.config(t, "disable", "system.conf")
		s.config(t, "disable", "system.workspace_info")
		s.config(t, "enable", "system.list_packages")
		s.config(t, "feedback", "off")
	}
	t.Cleanup(func() {
		s.config(t, "disable", "system.conf")
		s.config(t, "disable", "system.workspace_info")
		s.config(t, "enable", "system.list_packages")
		s.config(t, "feedback", "off")
	})
	secrets = append(secrets, token)
	tag := fmt.Sprintf("%d", time.Now().UnixNano())
	plugin := "sisyphus-e2e-" + tag
	storage := "/data/storage/petal/" + plugin
	put := func(p, body string) {
		t.Helper()
		if err := c.PutFile(ctx, siyuan.PutFileRequest{Path: p, Body: strings.NewReader(body)}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		c.RemoveFile(context.Background(), "/data/plugins/"+plugin)
		c.RemoveFile(context.Background(), storage)
	})
	put("/data/plugins/"+plugin+"/plugin.json", `{"name":"`+plugin+`","author":"E2E","version":"2.0.0","displayName":{"default":"E2E Plugin"},"frontends":["all"]}`)
	put(storage+"/config.json", `{"theme":"dark","apiToken":"e2e-token-0123456789","servers":[{"url":"https://u:e2e-pass-987@host/x"}]}`)
	put(storage+"/sub/notes.md", "# notes")
	secrets = append(secrets, "e2e-token-0123456789", "e2e-pass-987")

	// Versions, clock, changelog.
	for _, name := range []string{"get_version", "version"} {
		if v := a.ok("system", map[string]any{"action": name}); v["version"] != "3.7.3" || v["sisyphus"] == "" {
			t.Fatalf("%s: %v", name, v)
		}
	}
	if now := a.ok("system", map[string]any{"action": "get_current_time"}); now["currentTime"].(float64) < 1.7e12 {
		t.Fatalf("get_current_time: %v", now)
	}
	if cl := a.ok("system", map[string]any{"action": "changelog", "limit": 1}); len(cl["entries"].([]any)) != 1 || cl["latestVersion"] == "" {
		t.Fatalf("changelog: %v", cl)
	}

	// conf is off by default; enabled, it masks every secret.
	refused(a, "system", map[string]any{"action": "conf"}, "action_disabled")
	s.config(t, "enable", "system.conf")
	whole := a.ok("system", map[string]any{"action": "conf", "mode": "get", "keyPath": "conf", "maxDepth": 5, "maxItems": 100})
	noneOf(t, "conf", whole, secrets)
	if v := a.ok("system", map[string]any{"action": "conf", "mode": "get", "keyPath": "conf.api.token"})["value"].(map[string]any); v["value"] != "[REDACTED]" {
		t.Fatalf("conf.api.token: %v", v)
	}
	if sum := a.ok("system", map[string]any{"action": "conf"}); sum["mode"] != "summary" || sum["totalTopLevelKeys"] != float64(3) {
		t.Fatalf("conf summary: %v", sum)
	}
	noneOf(t, "network", a.ok("system", map[string]any{"action": "network"}), secrets)
	noneOf(t, "audit_environment", a.ok("system", map[string]any{"action": "audit_environment"}), secrets)

	// workspace_info: off by default, then dangerous.
	refused(a, "system", map[string]any{"action": "workspace_info"}, "action_disabled")
	s.config(t, "enable", "system.workspace_info")
	refused(a, "system", map[string]any{"action": "workspace_info"}, "confirmation_required")
	if w := a.ok("system", map[string]any{"action": "workspace_info", "confirm": true}); w["workspaceDir"] == "" || w["siyuanVer"] != "3.7.3" {
		t.Fatalf("workspace_info: %v", w)
	}

	// Packages and the plugin's storage.
	l := a.ok("system", map[string]any{"action": "list_packages", "kind": "plugin", "keyword": plugin})
	if items := l["items"].([]any); len(items) != 1 || items[0].(map[string]any)["displayName"] != "E2E Plugin" {
		t.Fatalf("list_packages: %v", l)
	}
	if g := a.ok("system", map[string]any{"action": "get_plugin", "pluginName": plugin}); g["storage"].(map[string]any)["exists"] != true {
		t.Fatalf("get_plugin: %v", g)
	}
	ls := a.ok("system", map[string]any{"action": "list_plugin_storage", "pluginName": plugin, "recursive": true})
	if ls["total"] != float64(3) {
		t.Fatalf("list_plugin_storage: %v", ls)
	}
	rd := a.ok("system", map[string]any{"action": "read_plugin_storage", "pluginName": plugin, "path": "config.json"})
	noneOf(t, "read_plugin_storage", rd, secrets)
	if rd["redacted"] != true || !strings.Contains(rd["content"].(string), `"theme": "dark"`) {
		t.Fatalf("read_plugin_storage: %v", rd)
	}
	for _, p := range []string{"../siyuan-plugins-mcp-sisyphus/mcpToolsConfig", "/conf/conf.json", "sub/../../x.json", "%2e%2e/x.json"} {
		refused(a, "system", map[string]any{"action": "read_plugin_storage", "pluginName": plugin, "path": p}, "invalid_arguments")
	}
	refused(a, "system", map[string]any{"action": "read_plugin_storage", "pluginName": "siyuan-plugins-mcp-sisyphus", "path": "mcpToolsConfig"}, "permission_denied")

	// Snippets: bodies only one at a time, redacted.
	const snippets = "/data/snippets/conf.json"
	var old []byte
	if rc, _, err := c.GetFile(ctx, snippets); err == nil {
		old, _ = io.ReadAll(rc)
		rc.Close()
	} else if !errors.Is(err, siyuan.ErrFileNotFound) {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if old != nil {
			c.PutFile(context.Background(), siyuan.PutFileRequest{Path: snippets, Body: strings.NewReader(string(old))})
		} else {
			c.RemoveFile(context.Background(), snippets)
		}
	})
	id := freshNodeID()
	put(snippets, `[{"id":"`+id+`","name":"E2E","type":"js","enabled":true,"disabledInPublish":false,"content":"const password = 'e2e-snippet-secret'"}]`)
	if l := a.ok("system", map[string]any{"action": "list_snippets"}); len(l["items"].([]any)) != 1 || strings.Contains(fmt.Sprint(l), "e2e-snippet-secret") {
		t.Fatalf("list_snippets: %v", l)
	}
	one := a.ok("system", map[string]any{"action": "list_snippets", "snippetID": id, "includeContent": true})
	if it := one["items"].([]any)[0].(map[string]any); it["redacted"] != true || strings.Contains(it["content"].(string), "e2e-snippet-secret") {
		t.Fatalf("one snippet: %v", it)
	}

	// A switched-off action is refused by the gate.
	s.config(t, "disable", "system.list_packages")
	refused(a, "system", map[string]any{"action": "list_packages", "kind": "plugin"}, "action_disabled")

	// perform_sync: no preflight, confirmed, sent once.
	a.fails("system", map[string]any{"action": "perform_sync", "validateOnly": true}, "preflight_unavailable")
	a.fails("system", map[string]any{"action": "perform_sync"}, "confirmation_required")
	if ps := a.ok("system", map[string]any{"action": "perform_sync", "confirm": true}); ps["requested"] != true || ps["syncEnabled"] != false ||
		ps["writeSafetyGuaranteed"] != false || ps["writeAttempted"] != true {
		t.Fatalf("perform_sync: %v", ps)
	}

	// feedback: nothing configured sends nothing; configured, exactly one
	// POST with the business fields only.
	sink := newFeedbackSink(t)
	fb := map[string]any{"action": "submit", "description": "## Summary\nls is slow", "impact": "browsing", "agent": "e2e agent"}
	a.fails("feedback", fb, "not_configured")
	a.fails("feedback", with(fb, "validateOnly", true), "preflight_unavailable")
	if out := s.config(t, "feedback", sink.srv.URL+"/in"); !strings.Contains(out, "Feedback endpoint: "+sink.srv.URL+"/in") {
		t.Fatalf("config feedback: %s", out)
	}
	if res := a.ok("feedback", fb); res["submitted"] != true || res["writeSafetyGuaranteed"] != false {
		t.Fatalf("submit: %v", res)
	}
	posts := sink.got()
	want := `{"agent":"e2e agent","description":"## Summary\nls is slow","impact":"browsing"}`
	if b, _ := json.Marshal(posts); len(posts) != 1 || string(b) != "["+want+"]" {
		t.Fatalf("posted %s, want exactly [%s]", b, want)
	}
	s.config(t, "feedback", "off")
	a.fails("feedback", fb, "not_configured")
	if len(sink.got()) != 1 {
		t.Fatal("a refused submit posted")
	}
}
