package system

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// secrets are credentials a configuration may hold; none may reach an
// answer.
var secrets = []string{"AKIAIOSFODNN7EXAMPLE", "s3-secret-value-123", "dav-user-name", "dav-password-456", "cmVwby1rZXktYmFzZTY0",
	"sk-abcdefghijklmnopqrstuvwx", "proxyuser", "proxypass", "rerank-key-789", "publish-pass-000", "1234-access-code"}

// withSecrets stores a configuration holding every secret above in the
// embedded kernel's conf/conf.json (which its getConf lays over its
// template, as SiYuan keeps its whole configuration there).
func withSecrets(t *testing.T, f *tooltest.Fixture) {
	t.Helper()
	conf := map[string]any{
		"api":            map[string]any{"token": "t"},
		"accessAuthCode": "1234-access-code",
		"sync": map[string]any{"provider": 2,
			"s3":     map[string]any{"accessKey": "AKIAIOSFODNN7EXAMPLE", "secretKey": "s3-secret-value-123", "bucket": "notes"},
			"webdav": map[string]any{"username": "dav-user-name", "password": "dav-password-456"}},
		"repo":    map[string]any{"key": "cmVwby1rZXktYmFzZTY0"},
		"ai":      map[string]any{"embedding": map[string]any{"apiKey": "sk-abcdefghijklmnopqrstuvwx"}, "rerank": map[string]any{"apiKey": "rerank-key-789"}},
		"system":  map[string]any{"networkProxy": map[string]any{"scheme": "http", "host": "proxyuser:proxypass@proxy.local", "port": "3128"}},
		"publish": map[string]any{"auth": map[string]any{"enable": true, "accounts": []any{map[string]any{"username": "reader", "password": "publish-pass-000"}}}},
	}
	b, _ := json.Marshal(conf)
	if err := os.WriteFile(filepath.Join(f.K.Dir(), "conf", "conf.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func noSecret(t *testing.T, what string, v any) {
	t.Helper()
	b, _ := json.Marshal(v)
	for _, s := range secrets {
		if bytes.Contains(b, []byte(s)) {
			t.Errorf("%s shows the secret %q: %.300s", what, s, b)
		}
	}
}

func TestConfMasksEverySecret(t *testing.T) {
	f := newStrictFixture(t, false)
	withSecrets(t, f.Fixture)
	whole := f.OK(t, "system", map[string]any{"action": "conf", "mode": "get", "keyPath": "conf", "maxDepth": 5, "maxItems": 100})
	noSecret(t, "conf", whole)
	sum := f.OK(t, "system", map[string]any{"action": "conf"})
	noSecret(t, "conf summary", sum)
	if sum["mode"] != "summary" || sum["totalTopLevelKeys"] != float64(3) {
		t.Fatalf("summary: %v", sum)
	}
	for path, want := range map[string]any{
		"conf.api.token": Redacted, "conf.sync.s3.secretKey": Redacted, "conf.sync.s3.bucket": "notes", "conf.cookieKey": Redacted,
		"conf.accessAuthCode": Redacted, "conf.repo.key": Redacted, "conf.sync.enabled": false, "conf.langs[2].name": "en",
		"conf.publish.auth.enable": true, "conf.publish.auth.accounts[0].password": Redacted, "conf.system.networkProxy.port": "3128",
	} {
		v := f.OK(t, "system", map[string]any{"action": "conf", "mode": "get", "keyPath": path})["value"].(map[string]any)
		if v["value"] != want {
			t.Errorf("%s: %v, want %v", path, v, want)
		}
	}
	host := f.OK(t, "system", map[string]any{"action": "conf", "mode": "get", "keyPath": "conf.system.networkProxy.host"})["value"].(map[string]any)
	if host["value"] != Redacted+"@proxy.local" {
		t.Errorf("proxy host %v", host)
	}
	// Bounded: depth 0 shows only the keys, maxItems cuts them.
	v := f.OK(t, "system", map[string]any{"action": "conf", "mode": "get", "keyPath": "conf", "maxDepth": 0, "maxItems": 3})["value"].(map[string]any)
	if v["type"] != "object" || len(v["keysPreview"].([]any)) != 3 || v["truncated"] != true || v["entries"] != nil {
		t.Errorf("bounded: %v", v)
	}
	f.WantErr(t, "system", map[string]any{"action": "conf", "mode": "get", "keyPath": "conf.nothing.here"}, failure.NotFound)
	f.WantErr(t, "system", map[string]any{"action": "conf", "mode": "get", "keyPath": "conf.langs[999]"}, failure.NotFound)
	f.WantErr(t, "system", map[string]any{"action": "conf", "mode": "get"}, failure.InvalidArguments)
	f.WantErr(t, "system", map[string]any{"action": "conf", "maxDepth": 6}, failure.InvalidArguments)

	// Off by default: a configuration that does not enable it refuses it.
	f.Policy = &tools.Policy{Default: tools.LevelDelete, Strict: true}
	f.WantErr(t, "system", map[string]any{"action": "conf"}, failure.ActionDisabled)
	f.WantErr(t, "system", map[string]any{"action": "workspace_info"}, failure.ActionDisabled)
	noSecret(t, "audit_environment", f.OK(t, "system", map[string]any{"action": "audit_environment"}))
}

func TestNetworkAndWorkspace(t *testing.T) {
	f := newStrictFixture(t, false)
	withSecrets(t, f.Fixture)
	n := f.OK(t, "system", map[string]any{"action": "network"})
	noSecret(t, "network", n)
	p := n["proxy"].(map[string]any)
	if p["scheme"] != "http" || p["host"] != Redacted+"@proxy.local" || p["port"] != "3128" || n["configured"] != true || n["redacted"] != true {
		t.Fatalf("network: %v", n)
	}
	w := f.OK(t, "system", map[string]any{"action": "workspace_info"})
	if w["workspaceDir"] != f.K.Dir() || w["siyuanVer"] != "3.7.3" {
		t.Fatalf("workspace_info: %v", w)
	}
	f.Unconfirmed = true
	f.WantErr(t, "system", map[string]any{"action": "workspace_info"}, failure.ConfirmationRequired)
	f.Unconfirmed = false
	for _, name := range []string{"get_version", "version"} {
		v := f.OK(t, "system", map[string]any{"action": name})
		if _, ok := v["sisyphus"]; v["version"] != "3.7.3" || v["siyuan"] != "3.7.3" || !ok {
			t.Errorf("%s: %v", name, v)
		}
	}
	now := f.OK(t, "system", map[string]any{"action": "get_current_time"})
	if ms, _ := now["currentTime"].(float64); ms < 1.7e12 || !strings.HasSuffix(now["iso"].(string), "Z") {
		t.Errorf("get_current_time: %v", now)
	}
}

func TestMaskHost(t *testing.T) {
	for in, want := range map[string]string{
		"": "", "proxy.local": "proxy.local", "u:p@proxy.local": Redacted + "@proxy.local", "http://u:p@h:1": Redacted + "@h:1",
		"a@b@c": Redacted + "@c",
	} {
		if got, _ := maskHost(in); got != want {
			t.Errorf("maskHost(%q) = %q, want %q", in, got, want)
		}
	}
}

// install puts a plugin in data/plugins the way the bazaar leaves one.
func install(t *testing.T, f *tooltest.Fixture, name string) {
	t.Helper()
	put(t, f, "/data/plugins/"+name+"/plugin.json", `{"name":"`+name+`","author":"Tester","version":"1.0.0","url":"https://github.com/t/`+name+
		`","displayName":{"default":"Demo"},"description":{"default":"A <b>demo</b> &amp; more"},"keywords":["demo"],"frontends":["all"]}`)
}

func put(t *testing.T, f *tooltest.Fixture, p, body string) {
	t.Helper()
	if err := f.C.PutFile(context.Background(), siyuan.PutFileRequest{Path: p, Body: strings.NewReader(body)}); err != nil {
		t.Fatal(err)
	}
}

func TestPackages(t *testing.T) {
	f := newStrictFixture(t, false)
	install(t, f.Fixture, "demo-plugin")
	put(t, f.Fixture, "/data/widgets/w1/widget.json", `{"name":"w1","version":"0.1.0"}`)
	l := f.OK(t, "system", map[string]any{"action": "list_packages", "kind": "plugin"})
	items := l["items"].([]any)
	if l["total"] != float64(1) || len(items) != 1 {
		t.Fatalf("list_packages: %v", l)
	}
	p := items[0].(map[string]any)
	if p["name"] != "demo-plugin" || p["displayName"] != "Demo" || p["description"] != "A demo & more" || p["enabled"] != false ||
		p["compatible"] != true || p["repository"] != "https://github.com/t/demo-plugin" {
		t.Errorf("package: %v", p)
	}
	if l := f.OK(t, "system", map[string]any{"action": "list_packages", "kind": "plugin", "keyword": "nothing"}); l["total"] != float64(0) || len(l["items"].([]any)) != 0 {
		t.Errorf("keyword: %v", l)
	}
	if l := f.OK(t, "system", map[string]any{"action": "list_packages", "kind": "widget", "page": 2, "pageSize": 1}); l["total"] != float64(1) || len(l["items"].([]any)) != 0 || l["pageCount"] != float64(1) {
		t.Errorf("page past the end: %v", l)
	}
	f.WantErr(t, "system", map[string]any{"action": "list_packages", "kind": "font"}, failure.InvalidArguments)
	g := f.OK(t, "system", map[string]any{"action": "get_plugin", "pluginName": "demo-plugin"})
	if g["plugin"].(map[string]any)["version"] != "1.0.0" || g["storage"].(map[string]any)["exists"] != false {
		t.Errorf("get_plugin: %v", g)
	}
	f.WantErr(t, "system", map[string]any{"action": "get_plugin", "pluginName": "demo"}, failure.NotFound)
	f.WantErr(t, "system", map[string]any{"action": "get_plugin", "pluginName": "../conf"}, failure.InvalidArguments)
	a := f.OK(t, "system", map[string]any{"action": "audit_environment"})
	pk := a["packages"].(map[string]any)
	if pk["totals"].(map[string]any)["plugin"] != float64(1) || pk["totals"].(map[string]any)["widget"] != float64(1) || pk["plugins"].(map[string]any)["disabled"] != float64(1) {
		t.Errorf("audit_environment: %v", a)
	}
}

func TestSnippets(t *testing.T) {
	f := newStrictFixture(t, false)
	put(t, f.Fixture, "/data/snippets/conf.json", `[{"id":"20240101120000-aaaaaaa","name":"Dark","type":"css","enabled":true,"content":".a{}"},`+
		`{"id":"20240101120000-bbbbbbb","name":"Hook","type":"js","enabled":false,"content":"const token = \"abcdefghijkl1234\"; fetch(u)"}]`)
	l := f.OK(t, "system", map[string]any{"action": "list_snippets"})
	items := l["items"].([]any)
	if len(items) != 2 || items[0].(map[string]any)["content"] != nil || items[1].(map[string]any)["contentLength"] != float64(42) {
		t.Fatalf("list_snippets: %v", l)
	}
	noSecret(t, "list", l)
	one := f.OK(t, "system", map[string]any{"action": "list_snippets", "snippetID": "20240101120000-bbbbbbb", "includeContent": true, "maxChars": 20})
	it := one["items"].([]any)[0].(map[string]any)
	if strings.Contains(it["content"].(string), "abcdefghijkl1234") || it["redacted"] != true || it["truncated"] != true || len([]rune(it["content"].(string))) != 20 {
		t.Errorf("one snippet: %v", it)
	}
	if l := f.OK(t, "system", map[string]any{"action": "list_snippets", "type": "css", "enabled": "enabled"}); len(l["items"].([]any)) != 1 {
		t.Errorf("css enabled: %v", l)
	}
	f.WantErr(t, "system", map[string]any{"action": "list_snippets", "includeContent": true}, failure.InvalidArguments)
	f.WantErr(t, "system", map[string]any{"action": "list_snippets", "snippetID": "20240101120000-ccccccc"}, failure.NotFound)
}

func TestPluginStorage(t *testing.T) {
	f := newStrictFixture(t, false)
	install(t, f.Fixture, "demo-plugin")
	install(t, f.Fixture, sisyphusPlugin)
	root := "/data/storage/petal/demo-plugin"
	put(t, f.Fixture, root+"/config.json", `{"theme":"dark","apiToken":"tok-0123456789abcdef","nested":{"password":"hunter22","n":1}}`)
	put(t, f.Fixture, root+"/notes.txt", "hello\napi_key = \"zyxwvutsrq987654\"\n")
	put(t, f.Fixture, root+"/sub/deeper/x.md", "# x")
	put(t, f.Fixture, root+"/.env", "SECRET=1")
	put(t, f.Fixture, root+"/data.db", "x")
	put(t, f.Fixture, root+"/big.txt", strings.Repeat("a", maxFileBytes+1))
	put(t, f.Fixture, "/data/storage/petal/other/settings.json", `{"x":1}`)
	dir := filepath.Join(f.K.Dir(), "data", "storage", "petal", "demo-plugin")
	if err := os.Symlink(filepath.Join(f.K.Dir(), "conf"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}

	l := f.OK(t, "system", map[string]any{"action": "list_plugin_storage", "pluginName": "demo-plugin", "recursive": true})
	var paths []string
	for _, e := range l["entries"].([]any) {
		paths = append(paths, e.(map[string]any)["path"].(string))
	}
	if got := strings.Join(paths, ","); got != ".env,big.txt,config.json,data.db,link,notes.txt,sub,sub/deeper,sub/deeper/x.md" {
		t.Errorf("listing: %s", got)
	}
	if l := f.OK(t, "system", map[string]any{"action": "list_plugin_storage", "pluginName": "demo-plugin"}); len(l["entries"].([]any)) != 7 {
		t.Errorf("not recursive: %v", l)
	}
	if l := f.OK(t, "system", map[string]any{"action": "list_plugin_storage", "pluginName": "demo-plugin", "path": "sub", "recursive": true, "maxDepth": 0}); len(l["entries"].([]any)) != 1 {
		t.Errorf("sub at depth 0: %v", l)
	}

	r := f.OK(t, "system", map[string]any{"action": "read_plugin_storage", "pluginName": "demo-plugin", "path": "config.json"})
	if r["format"] != "json" || r["redacted"] != true || strings.Contains(r["content"].(string), "tok-0123456789abcdef") ||
		strings.Contains(r["content"].(string), "hunter22") || !strings.Contains(r["content"].(string), `"theme": "dark"`) {
		t.Errorf("read json: %v", r)
	}
	r = f.OK(t, "system", map[string]any{"action": "read_plugin_storage", "pluginName": "demo-plugin", "path": "notes.txt", "maxChars": 3})
	if r["format"] != "text" || r["content"] != "hel" || r["truncated"] != true || r["redacted"] != true {
		t.Errorf("read text: %v", r)
	}
	if r := f.OK(t, "system", map[string]any{"action": "read_plugin_storage", "pluginName": "demo-plugin", "path": "notes.txt"}); strings.Contains(r["content"].(string), "zyxwvutsrq987654") {
		t.Errorf("text secret shown: %v", r)
	}
	for _, c := range []struct {
		plugin, path string
		code         failure.Code
	}{
		{"demo-plugin", "../other/settings.json", failure.InvalidArguments},
		{"demo-plugin", "/data/storage/petal/other/settings.json", failure.InvalidArguments},
		{"demo-plugin", "sub/../../other/settings.json", failure.InvalidArguments},
		{"demo-plugin", "%2e%2e/other/settings.json", failure.InvalidArguments},
		{"demo-plugin", `sub\..\..\other\settings.json`, failure.InvalidArguments},
		{"demo-plugin", "./config.json", failure.InvalidArguments},
		{"demo-plugin", "sub//x.md", failure.InvalidArguments},
		{"demo-plugin", ".. /x.json", failure.InvalidArguments},
		{"demo-plugin", "config.json\x00.txt", failure.InvalidArguments},
		{"demo-plugin", "C:config.json", failure.InvalidArguments},
		{"demo-plugin", "~/config.json", failure.InvalidArguments},
		{"demo-plugin", "link/conf.json", failure.PermissionDenied},
		{"demo-plugin", ".env", failure.PermissionDenied},
		{"demo-plugin", "data.db", failure.PermissionDenied},
		{"demo-plugin", "big.txt", failure.ResultTooLarge},
		{"demo-plugin", "missing.json", failure.NotFound},
		{"demo-plugin", "sub", failure.InvalidArguments},
		{"..", "config.json", failure.InvalidArguments},
		{"demo-plugin/../other", "settings.json", failure.InvalidArguments},
		{"other", "settings.json", failure.NotFound}, // storage of a plugin that is not installed
		{sisyphusPlugin, "notebookPermissions", failure.PermissionDenied},
		{strings.ToUpper(sisyphusPlugin), "mcpToolsConfig", failure.PermissionDenied},
	} {
		f.WantErr(t, "system", map[string]any{"action": "read_plugin_storage", "pluginName": c.plugin, "path": c.path}, c.code)
	}
	f.WantErr(t, "system", map[string]any{"action": "list_plugin_storage", "pluginName": "demo-plugin", "path": "link"}, failure.PermissionDenied)
	f.WantErr(t, "system", map[string]any{"action": "list_plugin_storage", "pluginName": sisyphusPlugin}, failure.PermissionDenied)
	f.WantErr(t, "system", map[string]any{"action": "list_plugin_storage", "pluginName": "demo-plugin", "path": "../"}, failure.InvalidArguments)
	f.WantErr(t, "system", map[string]any{"action": "list_plugin_storage", "pluginName": "demo-plugin", "maxDepth": 5}, failure.InvalidArguments)
}

func TestPluginStorageBounds(t *testing.T) {
	f := newStrictFixture(t, false)
	install(t, f.Fixture, "many")
	dir := filepath.Join(f.K.Dir(), "data", "storage", "petal", "many")
	deep := filepath.Join(dir, "a", "b", "c", "d", "e", "f")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 250; i++ {
		os.WriteFile(filepath.Join(dir, "f"+strings.Repeat("0", 3-len(itoa(i)))+itoa(i)+".json"), []byte("{}"), 0o644)
	}
	l := f.OK(t, "system", map[string]any{"action": "list_plugin_storage", "pluginName": "many", "recursive": true, "maxDepth": 4, "pageSize": 100})
	if l["total"] != float64(maxStorageEntries) || l["truncatedBySafetyLimit"] != true || len(l["entries"].([]any)) != 100 {
		t.Errorf("entries: total %v truncated %v", l["total"], l["truncatedBySafetyLimit"])
	}
	for _, e := range l["entries"].([]any) {
		if d := e.(map[string]any)["depth"].(float64); d > maxStorageDepth {
			t.Errorf("depth %v", d)
		}
	}
	l = f.OK(t, "system", map[string]any{"action": "list_plugin_storage", "pluginName": "many", "path": "a", "recursive": true, "maxDepth": 4})
	var deepest float64
	for _, e := range l["entries"].([]any) {
		deepest = max(deepest, e.(map[string]any)["depth"].(float64))
	}
	if deepest != 4 || len(l["entries"].([]any)) != 5 {
		t.Errorf("depth bound: %v", l["entries"])
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestPerformSync(t *testing.T) {
	f := newStrictFixture(t, false)
	f.WantErr(t, "system", map[string]any{"action": "perform_sync", "validateOnly": true}, failure.PreflightUnavailable)
	res := f.OK(t, "system", map[string]any{"action": "perform_sync"})
	if res["requested"] != true || res["syncEnabled"] != false || res["writeSafetyGuaranteed"] != false || res["writeAttempted"] != true ||
		!strings.Contains(res["note"].(string), "not enabled") {
		t.Fatalf("perform_sync: %v", res)
	}
	f.Unconfirmed = true
	f.WantErr(t, "system", map[string]any{"action": "perform_sync"}, failure.ConfirmationRequired)
}
