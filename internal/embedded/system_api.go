package embedded

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
)

// The system endpoints the system tool reads (configuration, network,
// workspace, installed packages, snippets) and the sync trigger, answering
// as SiYuan 3.7.3 does for a client that is not the SiYuan app (its
// User-Agent does not start with "SiYuan/", so the configuration's
// absolute paths are blanked).

// confTemplate is a 3.7.3 configuration as getConf answers it on a fresh
// workspace, with its per-workspace values (token, cookie key, ids)
// emptied; getConf fills them in.
//
//go:embed conf_template.json
var confTemplate []byte

// maskedAccessAuthCode is what getConf shows for a set access code.
const maskedAccessAuthCode = "*******"

// syncNotEnabled is conf.sync.stat when sync is off (SiYuan's language
// string 53, English).
const syncNotEnabled = "Data synchronization has not been enabled"

func (k *Kernel) systemRoutes() map[string]route {
	return map[string]route{
		endpoint.GetConf:          {json: k.getConf, emptyOK: true, anyBody: true},
		endpoint.GetNetwork:       {json: k.getNetwork, emptyOK: true, anyBody: true},
		endpoint.GetWorkspaceInfo: {json: k.getWorkspaceInfo, emptyOK: true, anyBody: true},
		endpoint.GetInstalledPlugin: {json: func(ctx context.Context, a args) (any, error) {
			return k.getInstalled(a, "plugins")
		}},
		endpoint.GetInstalledWidget: {json: func(ctx context.Context, a args) (any, error) {
			return k.getInstalled(a, "widgets")
		}},
		endpoint.GetInstalledTheme: {json: func(ctx context.Context, a args) (any, error) {
			return k.getInstalled(a, "themes")
		}},
		endpoint.GetInstalledIcon: {json: func(ctx context.Context, a args) (any, error) {
			return k.getInstalled(a, "icons")
		}},
		endpoint.GetInstalledTemplate: {json: func(ctx context.Context, a args) (any, error) {
			return k.getInstalled(a, "templates")
		}},
		endpoint.GetSnippet:  {json: k.getSnippet},
		endpoint.PerformSync: {json: k.performSync},
	}
}

// conf is the workspace's configuration: the template, with what
// conf/conf.json stores laid over it (the embedded kernel keeps its token
// there; a test may store more, such as sync credentials).
func (k *Kernel) conf() (map[string]any, error) {
	var c map[string]any
	if err := json.Unmarshal(confTemplate, &c); err != nil {
		return nil, fmt.Errorf("conf template: %w", err)
	}
	data, err := os.ReadFile(filepath.Join(k.dir, "conf", "conf.json"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if len(data) > 0 {
		var stored map[string]any
		if err := json.Unmarshal(data, &stored); err != nil {
			return nil, fmt.Errorf("conf/conf.json: %w", err)
		}
		overlay(c, stored)
	}
	api, _ := c["api"].(map[string]any)
	if api == nil {
		api = map[string]any{}
		c["api"] = api
	}
	api["token"] = k.token
	if s, _ := c["cookieKey"].(string); s == "" {
		c["cookieKey"] = k.derived("cookieKey", 16)
	}
	if sys, ok := c["system"].(map[string]any); ok && sys["id"] == "" {
		sys["id"] = k.derived("system.id", 12)
	}
	return c, nil
}

// derived is a stable per-workspace value (the kernel keeps no random
// state of its own for these).
func (k *Kernel) derived(what string, n int) string {
	h := sha256.Sum256([]byte(k.dir + "\x00" + what))
	return hex.EncodeToString(h[:])[:n]
}

// overlay sets dst's keys from src, recursing into objects both have.
func overlay(dst, src map[string]any) {
	for key, v := range src {
		sm, sok := v.(map[string]any)
		dm, dok := dst[key].(map[string]any)
		if sok && dok {
			overlay(dm, sm)
			continue
		}
		dst[key] = v
	}
}

// getConf is /api/system/getConf: GetMaskedConf (access code, user data
// and MCP OAuth masked, nothing else), the sync status word when sync is
// off, the absolute paths blanked for a non-app client (every client of
// this kernel: none is the SiYuan app).
func (k *Kernel) getConf(ctx context.Context, a args) (any, error) {
	c, err := k.conf()
	if err != nil {
		k.log.Error("get conf", "err", err)
		return nil, errf("get conf failed: %s", err)
	}
	if s, _ := c["accessAuthCode"].(string); s != "" {
		c["accessAuthCode"] = maskedAccessAuthCode
	}
	c["userData"] = ""
	c["mcpOAuth"] = ""
	if sync, ok := c["sync"].(map[string]any); ok {
		if on, _ := sync["enabled"].(bool); !on {
			sync["stat"] = syncNotEnabled
		}
	}
	if sys, ok := c["system"].(map[string]any); ok {
		for _, key := range []string{"workspaceDir", "appDir", "confDir", "dataDir", "homeDir"} {
			sys[key] = ""
		}
	}
	// start is !IsUILoaded: no UI ever loads from an embedded kernel.
	return map[string]any{"conf": c, "start": true, "isPublish": false}, nil
}

// getNetwork is /api/system/getNetwork: the proxy settings.
func (k *Kernel) getNetwork(ctx context.Context, a args) (any, error) {
	c, err := k.conf()
	if err != nil {
		return nil, errf("get conf failed: %s", err)
	}
	sys, _ := c["system"].(map[string]any)
	proxy, _ := sys["networkProxy"].(map[string]any)
	if proxy == nil {
		proxy = map[string]any{"scheme": "", "host": "", "port": ""}
	}
	return map[string]any{"proxy": proxy}, nil
}

// getWorkspaceInfo is /api/system/getWorkspaceInfo: the absolute workspace
// directory, whatever the client.
func (k *Kernel) getWorkspaceInfo(ctx context.Context, a args) (any, error) {
	return map[string]any{"workspaceDir": k.dir, "siyuanVer": Version}, nil
}

// performSync is /api/sync/performSync. Sync needs a cloud account or a
// configured provider, which no embedded workspace has: as SiYuan with sync
// off, it does nothing and answers success.
func (k *Kernel) performSync(ctx context.Context, a args) (any, error) {
	k.log.Info("perform sync: sync is not enabled, nothing done")
	return nil, nil
}

// getSnippet is /api/snippet/getSnippet: data/snippets/conf.json filtered
// by type (js, css or all; another word matches nothing), enabled (0
// disabled, 2 all, anything else enabled) and keyword (trimmed, in name or
// content, case-insensitive).
func (k *Kernel) getSnippet(ctx context.Context, a args) (any, error) {
	typ, err := a.field("type", true)
	if err != nil {
		return nil, err
	}
	enabledArg, err := a.number("enabled")
	if err != nil {
		return nil, err
	}
	keyword, err := a.optStr("keyword")
	if err != nil {
		return nil, err
	}
	snippets, err := k.loadSnippets()
	if err != nil {
		return nil, errf("load snippets failed: %s", err)
	}
	enabled := int(enabledArg) != 0
	keyword = strings.ToLower(strings.TrimSpace(keyword))
	out := []snippet{}
	for _, s := range snippets {
		if typ != "all" && s.Type != typ {
			continue
		}
		if enabledArg != 2 && s.Enabled != enabled {
			continue
		}
		if keyword != "" && !strings.Contains(strings.ToLower(s.Name), keyword) && !strings.Contains(strings.ToLower(s.Content), keyword) {
			continue
		}
		out = append(out, s)
	}
	return map[string]any{"snippets": out}, nil
}

type snippet struct {
	ID                string `json:"id"`
	Name              string `json:"name"`
	Type              string `json:"type"`
	Enabled           bool   `json:"enabled"`
	DisabledInPublish bool   `json:"disabledInPublish"`
	Content           string `json:"content"`
}

func (k *Kernel) loadSnippets() ([]snippet, error) {
	data, err := os.ReadFile(filepath.Join(k.dataDir, "snippets", "conf.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []snippet
	if err := json.Unmarshal(data, &out); err != nil {
		// SiYuan logs the error and answers no snippets.
		k.log.Error("unmarshal snippets", "err", err)
		return nil, nil
	}
	return out, nil
}

// number is SiYuan's BindJsonArg for a required number.
func (a args) number(key string) (float64, error) {
	v, ok := a[key]
	if !ok || v == nil {
		return 0, errf("Field [%s] is required", key)
	}
	n, ok := v.(json.Number)
	if !ok {
		return 0, errf("Field [%s] should be of type [Number]", key)
	}
	f, err := n.Float64()
	if err != nil {
		return 0, errf("Field [%s] should be of type [Number]", key)
	}
	return f, nil
}

// The packages each kind is installed as: its folder, its manifest, the
// URL prefix of its files, and the built-in ones SiYuan does not list.
var packageKinds = map[string]struct {
	dir, manifest, urlPrefix string
	builtin                  []string
}{
	"plugins":   {"data/plugins", "plugin.json", "/plugins/", nil},
	"widgets":   {"data/widgets", "widget.json", "/widgets/", nil},
	"templates": {"data/templates", "template.json", "/templates/", nil},
	"themes":    {"conf/appearance/themes", "theme.json", "/appearance/themes/", []string{"daylight", "midnight"}},
	"icons":     {"conf/appearance/icons", "icon.json", "/appearance/icons/", []string{"ant", "material", "litheness"}},
}

// getInstalled is /api/bazaar/getInstalled{Plugin,Widget,Theme,Icon,
// Template}: every folder of the kind with a parsable manifest, with the
// metadata SiYuan adds offline (no bazaar is reachable from here).
func (k *Kernel) getInstalled(a args, kind string) (any, error) {
	if kind == "plugins" {
		if _, err := a.field("frontend", true); err != nil {
			return nil, err
		}
	}
	keyword, err := a.optStr("keyword")
	if err != nil {
		return nil, err
	}
	pk := packageKinds[kind]
	base := filepath.Join(k.dir, filepath.FromSlash(pk.dir))
	entries, err := os.ReadDir(base)
	if err != nil {
		return map[string]any{"packages": []any{}}, nil
	}
	var petals map[string]bool
	if kind == "plugins" {
		petals = k.petalsEnabled()
	}
	pkgs := []map[string]any{}
	for _, e := range entries {
		if !e.IsDir() && e.Type()&fs.ModeSymlink == 0 {
			continue
		}
		if contains(pk.builtin, e.Name()) {
			continue
		}
		dir := filepath.Join(base, e.Name())
		pkg, ok := readPackage(filepath.Join(dir, pk.manifest))
		if !ok {
			continue
		}
		name, _ := pkg["name"].(string)
		installedMeta(pkg, dir, pk.urlPrefix+e.Name()+"/", name)
		if !packageMatches(pkg, keyword) {
			continue
		}
		switch kind {
		case "plugins":
			pkg["installedIncompatible"] = false
			pkg["bazaarIncompatible"] = false
			if on, ok := petals[name]; ok {
				pkg["enabled"] = on
			}
		case "themes":
			pkg["current"] = false
		}
		pkgs = append(pkgs, pkg)
	}
	return map[string]any{"packages": pkgs}, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// readPackage parses a manifest, keeping the fields SiYuan's Package has.
func readPackage(p string) (map[string]any, bool) {
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, false
	}
	var m map[string]any
	if json.Unmarshal(data, &m) != nil || m == nil {
		return nil, false
	}
	pkg := map[string]any{
		"author": "", "url": "", "version": "", "minAppVersion": "", "disabledInPublish": false,
		"kernels": nil, "backends": nil, "frontends": nil, "displayName": nil, "description": nil,
		"readme": nil, "funding": nil, "keywords": nil, "name": "",
	}
	for key := range pkg {
		if v, ok := m[key]; ok {
			pkg[key] = v
		}
	}
	return pkg, true
}

// installedMeta adds what SetInstalledPackageMetadata does offline.
func installedMeta(pkg map[string]any, dir, baseURL, name string) {
	pkg["iconURL"] = baseURL + "icon.png"
	pkg["previewURL"] = baseURL + "preview.png"
	pkg["preferredName"] = preferredLocale(pkg["displayName"], name)
	pkg["preferredDesc"] = preferredLocale(pkg["description"], "")
	pkg["preferredReadme"] = ""
	pkg["preferredFunding"] = ""
	pkg["repoURL"] = pkg["url"]
	pkg["repoHash"] = ""
	pkg["installed"] = true
	pkg["outdated"] = false
	pkg["current"] = false
	for _, key := range []string{"updated", "hSize", "hUpdated"} {
		pkg[key] = ""
	}
	for _, key := range []string{"stars", "openIssues", "size", "downloads"} {
		pkg[key] = 0
	}
	pkg["disallowInstall"] = false
	pkg["disallowUpdate"] = false
	var size int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				size += fi.Size()
			}
		}
		return nil
	})
	pkg["installSize"] = size
	pkg["hInstallSize"] = humanBytes(size)
	date := ""
	if fi, err := os.Stat(dir); err == nil {
		date = fi.ModTime().Format("2006-01-02")
	}
	pkg["hInstallDate"] = date
}

// preferredLocale is GetPreferredLocaleString for the English UI: the
// "en", "en_US", "default" entry, trimmed, else the fallback.
func preferredLocale(v any, fallback string) string {
	m, _ := v.(map[string]any)
	for _, key := range []string{"en", "en_US", "default"} {
		if s, _ := m[key].(string); strings.TrimSpace(s) != "" {
			return strings.TrimSpace(s)
		}
	}
	return fallback
}

// humanBytes is humanize.BytesCustomCeil(n, 2): SI units, two decimals.
func humanBytes(n int64) string {
	units := []string{"B", "kB", "MB", "GB", "TB"}
	f, i := float64(n), 0
	for f >= 1000 && i < len(units)-1 {
		f /= 1000
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d B", n)
	}
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", f), "0"), ".") + " " + units[i]
}

// packageMatches is FilterPackages: every space-separated word (lower
// case) in the name, author, a display name, a description or a keyword.
func packageMatches(pkg map[string]any, keyword string) bool {
	for _, kw := range strings.Fields(strings.ToLower(keyword)) {
		var hay []string
		for _, key := range []string{"name", "author"} {
			s, _ := pkg[key].(string)
			hay = append(hay, s)
		}
		for _, key := range []string{"displayName", "description"} {
			m, _ := pkg[key].(map[string]any)
			for _, v := range m {
				s, _ := v.(string)
				hay = append(hay, s)
			}
		}
		list, _ := pkg["keywords"].([]any)
		for _, v := range list {
			s, _ := v.(string)
			hay = append(hay, s)
		}
		found := false
		for _, h := range hay {
			if strings.Contains(strings.ToLower(h), kw) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// petalsEnabled reads data/storage/petal/petals.json, where SiYuan keeps
// which plugins are enabled.
func (k *Kernel) petalsEnabled() map[string]bool {
	data, err := os.ReadFile(filepath.Join(k.dataDir, "storage", "petal", "petals.json"))
	if err != nil {
		return nil
	}
	var petals []struct {
		Name    string `json:"name"`
		Enabled bool   `json:"enabled"`
	}
	if json.Unmarshal(data, &petals) != nil {
		return nil
	}
	out := map[string]bool{}
	for _, p := range petals {
		out[p.Name] = p.Enabled
	}
	return out
}
