package contract

import (
	"encoding/json"
	"errors"
	"net/http"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// systemChecks: what the system tool reads of SiYuan (configuration,
// network, workspace, installed packages, snippets) and the sync trigger,
// as SiYuan 3.7.3 answers a client that is not the SiYuan app.
var systemChecks = []check{
	{"system_get_conf_shape_and_clear_secrets", checkSystemConf},
	{"system_get_network_is_the_conf_proxy", checkSystemNetwork},
	{"system_get_workspace_info", checkSystemWorkspaceInfo},
	{"bazaar_installed_plugin_metadata_and_keyword", checkInstalledPlugin},
	{"bazaar_installed_other_kinds", checkInstalledOtherKinds},
	{"snippet_get_snippet_filters", checkGetSnippet},
	{"sync_perform_sync_not_enabled", checkPerformSync},
}

func decodeObj(t *testing.T, what string, raw json.RawMessage) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		t.Fatalf("%s: not a JSON object: %v %.200s", what, err, raw)
	}
	return m
}

func obj(t *testing.T, m map[string]any, keys ...string) map[string]any {
	t.Helper()
	cur := m
	for _, k := range keys {
		next, ok := cur[k].(map[string]any)
		if !ok {
			t.Fatalf("%s is %T, want an object", strings.Join(keys, "."), cur[k])
		}
		cur = next
	}
	return cur
}

// checkSystemConf: getConf answers the whole configuration with its
// secrets in clear (api.token is the API token itself; cookieKey, the sync
// providers' keys are present), only the access code masked, and the
// absolute paths blank for a non-app client; sync off says so in stat.
func checkSystemConf(t *testing.T, s *suite) {
	cf, err := s.c.GetConf(t.Context())
	must(t, "GetConf", err)
	if cf.IsPublish {
		t.Fatalf("isPublish %v for the API token", cf.IsPublish)
	}
	c := decodeObj(t, "conf", cf.Conf)
	for _, k := range []string{"api", "appearance", "editor", "fileTree", "sync", "system", "repo", "accessAuthCode", "cookieKey",
		"userData", "mcpOAuth", "publish", "ai", "secrets", "lang", "langs", "snippet", "bazaar", "keymap", "search", "flashcard"} {
		if _, ok := c[k]; !ok {
			t.Errorf("conf has no %q", k)
		}
	}
	if tok := obj(t, c, "api")["token"]; tok != s.k.Token {
		t.Errorf("conf.api.token is %v, want the API token in clear", tok)
	}
	if code, _ := c["accessAuthCode"].(string); code != "" && code != "*******" {
		t.Errorf("accessAuthCode %q: a set code is masked as *******", code)
	}
	if ck, _ := c["cookieKey"].(string); ck == "" {
		t.Error("cookieKey is empty: SiYuan answers it in clear")
	}
	for _, k := range []string{"userData", "mcpOAuth"} {
		if c[k] != "" {
			t.Errorf("%s is %v, want masked to \"\"", k, c[k])
		}
	}
	sync := obj(t, c, "sync")
	if sync["enabled"] != false || sync["stat"] != "Data synchronization has not been enabled" {
		t.Errorf("sync enabled %v stat %q, want false and SiYuan's not-enabled sentence", sync["enabled"], sync["stat"])
	}
	for _, p := range [][]string{{"sync", "s3"}, {"sync", "webdav"}} {
		o := obj(t, c, p...)
		for _, k := range map[string][]string{"s3": {"endpoint", "accessKey", "secretKey", "bucket", "region"}, "webdav": {"endpoint", "username", "password"}}[p[1]] {
			if _, ok := o[k].(string); !ok {
				t.Errorf("%s.%s is %T, want a string (present even when empty)", strings.Join(p, "."), k, o[k])
			}
		}
	}
	sys := obj(t, c, "system")
	for _, k := range []string{"workspaceDir", "appDir", "confDir", "dataDir", "homeDir"} {
		if sys[k] != "" {
			t.Errorf("system.%s is %q, want blank for a client that is not the SiYuan app", k, sys[k])
		}
	}
	if sys["kernelVersion"] != "3.7.3" {
		t.Errorf("system.kernelVersion %v", sys["kernelVersion"])
	}
	proxy := obj(t, c, "system", "networkProxy")
	if len(proxy) != 3 {
		t.Errorf("networkProxy %v, want scheme, host, port", proxy)
	}
	// The body is not read: none at all is answered the same.
	r := s.rawJSON(t, "/api/system/getConf", "")
	var env struct {
		Code int            `json:"code"`
		Data map[string]any `json:"data"`
	}
	if err := json.Unmarshal(r.body, &env); err != nil || r.status != http.StatusOK || env.Code != 0 || env.Data["conf"] == nil {
		t.Fatalf("getConf without a body: HTTP %d %.200s", r.status, r.body)
	}
	if keys := sortedMapKeys(env.Data); !slices.Equal(keys, []string{"conf", "isPublish", "start"}) {
		t.Errorf("getConf data keys %v", keys)
	}
}

func sortedMapKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// checkSystemNetwork: getNetwork is {proxy} with conf.system.networkProxy,
// body unread.
func checkSystemNetwork(t *testing.T, s *suite) {
	p, err := s.c.GetNetwork(t.Context())
	must(t, "GetNetwork", err)
	cf, err := s.c.GetConf(t.Context())
	must(t, "GetConf", err)
	want := obj(t, decodeObj(t, "conf", cf.Conf), "system", "networkProxy")
	if p.Scheme != want["scheme"] || p.Host != want["host"] || p.Port != want["port"] {
		t.Fatalf("getNetwork %+v, conf proxy %v", p, want)
	}
	r := s.rawJSON(t, "/api/system/getNetwork", "")
	var env struct {
		Code int `json:"code"`
		Data struct {
			Proxy map[string]any `json:"proxy"`
		} `json:"data"`
	}
	if err := json.Unmarshal(r.body, &env); err != nil || env.Code != 0 || len(env.Data.Proxy) != 3 {
		t.Fatalf("getNetwork without a body: %.200s", r.body)
	}
}

// checkSystemWorkspaceInfo: the absolute workspace path, whatever the
// client (getConf blanks it; this does not), and the version.
func checkSystemWorkspaceInfo(t *testing.T, s *suite) {
	w, err := s.c.GetWorkspaceInfo(t.Context())
	must(t, "GetWorkspaceInfo", err)
	if w.SiyuanVer != "3.7.3" || !path.IsAbs(strings.ReplaceAll(w.WorkspaceDir, `\`, "/")) && !strings.Contains(w.WorkspaceDir, `:\`) {
		t.Fatalf("workspace info %+v", w)
	}
	r := s.rawJSON(t, "/api/system/getWorkspaceInfo", "")
	if !strings.Contains(string(r.body), `"siyuanVer":"3.7.3"`) || !strings.HasPrefix(string(r.body), `{"code":0`) {
		t.Fatalf("getWorkspaceInfo without a body: %.200s", r.body)
	}
}

// contractPlugin installs a plugin folder (its manifest and a README) the
// way a bazaar install leaves one, removed when the check ends.
func (s *suite) contractPlugin(t *testing.T, dir, manifest string, body map[string]any) string {
	t.Helper()
	name := "sisyphus-contract-" + s.tag
	body["name"] = name
	b, _ := json.Marshal(body)
	s.put(t, "/data/"+dir+"/"+name+"/"+manifest, b)
	s.put(t, "/data/"+dir+"/"+name+"/README.md", []byte("# Contract\n"))
	s.removeLater(t, dir+"/"+name)
	return name
}

func findPackage(pkgs []map[string]any, name string) map[string]any {
	for _, p := range pkgs {
		if p["name"] == name {
			return p
		}
	}
	return nil
}

// checkInstalledPlugin: an installed plugin's metadata (the manifest's
// fields, the preferred locale strings, install facts, no bazaar data
// offline), the keyword filter (every word, case-insensitive, in name,
// author, display names, descriptions or keywords), and frontend required.
func checkInstalledPlugin(t *testing.T, s *suite) {
	name := s.contractPlugin(t, "plugins", "plugin.json", map[string]any{
		"author": "Contract Tester", "url": "https://github.com/example/contract-plugin", "version": "1.2.3", "minAppVersion": "3.0.0",
		"backends": []string{"all"}, "frontends": []string{"all"},
		"displayName": map[string]string{"default": "Contract Plugin", "zh_CN": "合约"},
		"description": map[string]string{"default": "A <b>contract</b> plugin"}, "readme": map[string]string{"default": "README.md"},
		"keywords": []string{"alpha", "beta"},
	})
	pkgs, err := s.c.InstalledPackages(t.Context(), "plugin", "desktop", "")
	must(t, "InstalledPackages", err)
	p := findPackage(pkgs, name)
	if p == nil {
		t.Fatalf("the installed plugin is not listed: %v", pkgs)
	}
	for k, want := range map[string]any{
		"author": "Contract Tester", "version": "1.2.3", "minAppVersion": "3.0.0", "preferredName": "Contract Plugin",
		"preferredDesc": "A <b>contract</b> plugin", "repoURL": "https://github.com/example/contract-plugin", "repoHash": "",
		"iconURL": "/plugins/" + name + "/icon.png", "previewURL": "/plugins/" + name + "/preview.png",
		"installed": true, "outdated": false, "disallowInstall": false, "disallowUpdate": false,
		"installedIncompatible": false, "bazaarIncompatible": false, "disabledInPublish": false,
	} {
		if p[k] != want {
			t.Errorf("%s: %v, want %v", k, p[k], want)
		}
	}
	if _, ok := p["enabled"]; ok {
		t.Errorf("enabled %v for a plugin SiYuan has never loaded (no petal)", p["enabled"])
	}
	if size, _ := p["installSize"].(float64); size <= 0 || p["hInstallDate"] == "" {
		t.Errorf("installSize %v hInstallDate %v", p["installSize"], p["hInstallDate"])
	}
	for kw, listed := range map[string]bool{"contract": true, "CONTRACT TESTER": true, "alpha beta": true, "alpha nomatchword": false, " 合约 ": true} {
		got, err := s.c.InstalledPackages(t.Context(), "plugin", "desktop", kw)
		must(t, "InstalledPackages "+kw, err)
		if (findPackage(got, name) != nil) != listed {
			t.Errorf("keyword %q: listed %v, want %v", kw, !listed, listed)
		}
	}
	// SiYuan keeps which plugins are enabled in petals.json; a plugin with
	// an entry carries enabled.
	const petals = petalDir + "/petals.json"
	var old []byte
	if rc, _, err := s.c.GetFile(t.Context(), petals); err == nil {
		old = readAll(t, rc)
	} else if !errors.Is(err, siyuan.ErrFileNotFound) {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if old != nil {
			s.c.PutFile(t.Context(), siyuan.PutFileRequest{Path: petals, Body: strings.NewReader(string(old))})
		} else {
			s.c.RemoveFile(t.Context(), petals)
		}
	})
	pb, _ := json.Marshal([]map[string]any{{"name": name, "displayName": "Contract Plugin", "enabled": true}})
	s.put(t, petals, pb)
	got, err := s.c.InstalledPackages(t.Context(), "plugin", "desktop", name)
	must(t, "InstalledPackages", err)
	if p := findPackage(got, name); p == nil || p["enabled"] != true {
		t.Errorf("with a petal: %v", p)
	}
	wantEnvelope(t, "no frontend", s.rawJSON(t, "/api/bazaar/getInstalledPlugin", `{"keyword":""}`), http.StatusOK, -1, "Field [frontend] is required", 1)
	wantEnvelope(t, "empty frontend", s.rawJSON(t, "/api/bazaar/getInstalledPlugin", `{"frontend":" "}`), http.StatusOK, -1, "Field [frontend] must not be empty", 1)
}

// checkInstalledOtherKinds: widgets and templates are listed from their
// folders the same way; themes and icons (under conf/appearance) list no
// built-in one; these take no frontend; an empty body is refused.
func checkInstalledOtherKinds(t *testing.T, s *suite) {
	widget := s.contractPlugin(t, "widgets", "widget.json", map[string]any{"author": "W", "version": "0.1.0",
		"displayName": map[string]string{"default": "Contract Widget"}})
	pkgs, err := s.c.InstalledPackages(t.Context(), "widget", "", "")
	must(t, "InstalledPackages widget", err)
	if p := findPackage(pkgs, widget); p == nil || p["preferredName"] != "Contract Widget" || p["iconURL"] != "/widgets/"+widget+"/icon.png" {
		t.Fatalf("widget: %v", p)
	}
	for _, kind := range []string{"theme", "icon"} {
		pkgs, err := s.c.InstalledPackages(t.Context(), kind, "", "")
		must(t, "InstalledPackages "+kind, err)
		for _, p := range pkgs {
			if slices.Contains([]string{"daylight", "midnight", "ant", "material", "litheness"}, str(p["name"])) {
				t.Errorf("%s lists the built-in %v", kind, p["name"])
			}
		}
	}
	pkgs, err = s.c.InstalledPackages(t.Context(), "template", "", "no-such-template-word")
	must(t, "InstalledPackages template", err)
	if len(pkgs) != 0 {
		t.Errorf("templates for a word nothing has: %v", pkgs)
	}
	wantEnvelope(t, "empty body", s.rawJSON(t, "/api/bazaar/getInstalledWidget", ""), http.StatusOK, -1,
		"Parses request [/api/bazaar/getInstalledWidget] failed: the request body is empty or truncated (EOF)", 1)
}

// checkGetSnippet: data/snippets/conf.json filtered by type (an unknown
// one matches nothing), enabled (0 disabled, 2 all, any other number
// enabled) and keyword (trimmed, case-insensitive, name or body); type and
// enabled are required.
func checkGetSnippet(t *testing.T, s *suite) {
	const conf = "/data/snippets/conf.json"
	old, existed := []byte(nil), true
	if rc, _, err := s.c.GetFile(t.Context(), conf); errors.Is(err, siyuan.ErrFileNotFound) {
		existed = false
	} else {
		must(t, "GetFile "+conf, err)
		old = readAll(t, rc)
	}
	t.Cleanup(func() {
		if existed {
			s.c.PutFile(t.Context(), siyuan.PutFileRequest{Path: conf, Body: strings.NewReader(string(old))})
		} else {
			s.c.RemoveFile(t.Context(), conf)
		}
	})
	a, b := "20240101120000-"+s.tag[:7], "20240101120001-"+s.tag[:7]
	snippets := []siyuan.Snippet{
		{ID: a, Name: "Dark tweak", Type: "css", Enabled: true, Content: ".a{color:red}"},
		{ID: b, Name: "Hook", Type: "js", Enabled: false, DisabledInPublish: true, Content: "const token = 'abcdefghijkl1234'"},
	}
	body, _ := json.Marshal(snippets)
	s.put(t, conf, body)
	ids := func(typ string, enabled int, kw string) []string {
		t.Helper()
		got, err := s.c.Snippets(t.Context(), typ, enabled, kw)
		must(t, "Snippets", err)
		var out []string
		for _, sn := range got {
			out = append(out, sn.ID)
		}
		return out
	}
	for _, c := range []struct {
		typ     string
		enabled int
		kw      string
		want    []string
	}{
		{"all", 2, "", []string{a, b}}, {"css", 2, "", []string{a}}, {"js", 2, "", []string{b}},
		{"all", 0, "", []string{b}}, {"all", 1, "", []string{a}}, {"all", 1, "RED", []string{a}}, {"all", 2, " hook ", []string{b}},
		{"all", 2, "token", []string{b}}, {"all", 2, "nothing-has-this", nil},
	} {
		if got := ids(c.typ, c.enabled, c.kw); !slices.Equal(got, c.want) {
			t.Errorf("type %s enabled %d keyword %q: %v, want %v", c.typ, c.enabled, c.kw, got, c.want)
		}
	}
	got, err := s.c.Snippets(t.Context(), "all", 2, "")
	must(t, "Snippets", err)
	if len(got) != 2 || got[1] != snippets[1] {
		t.Errorf("snippets as stored: %+v", got)
	}
	for body, want := range map[string]string{
		`{"type":"html","enabled":2}`: `{"code":0,"msg":"","data":{"snippets":[]}}`,
	} {
		if r := s.rawJSON(t, "/api/snippet/getSnippet", body); string(r.body) != want {
			t.Errorf("%s: %s, want %s", body, r.body, want)
		}
	}
	r := s.rawJSON(t, "/api/snippet/getSnippet", `{"type":"all","enabled":5}`)
	if !strings.Contains(string(r.body), a) || strings.Contains(string(r.body), b) {
		t.Errorf("enabled 5 is read as enabled: %s", r.body)
	}
	wantEnvelope(t, "no type", s.rawJSON(t, "/api/snippet/getSnippet", `{"enabled":2}`), http.StatusOK, -1, "Field [type] is required", 1)
	wantEnvelope(t, "empty type", s.rawJSON(t, "/api/snippet/getSnippet", `{"type":"","enabled":2}`), http.StatusOK, -1, "Field [type] must not be empty", 1)
	wantEnvelope(t, "no enabled", s.rawJSON(t, "/api/snippet/getSnippet", `{"type":"all"}`), http.StatusOK, -1, "Field [enabled] is required", 1)
	wantEnvelope(t, "enabled text", s.rawJSON(t, "/api/snippet/getSnippet", `{"type":"all","enabled":"2"}`), http.StatusOK, -1, "Field [enabled] should be of type [Number]", 1)
}

// checkPerformSync: with sync off, performSync does nothing and answers
// success (data null); an empty body is refused.
func checkPerformSync(t *testing.T, s *suite) {
	must(t, "PerformSync", s.c.PerformSync(t.Context()))
	if r := s.rawJSON(t, "/api/sync/performSync", `{"upload":"x"}`); string(r.body) != envelopeBytes(0, "") {
		t.Errorf("performSync with an unread argument: %s", r.body)
	}
	wantEnvelope(t, "empty body", s.rawJSON(t, "/api/sync/performSync", ""), http.StatusOK, -1,
		"Parses request [/api/sync/performSync] failed: the request body is empty or truncated (EOF)", 1)
}
