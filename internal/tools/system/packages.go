package system

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/kernelview"
)

// Installed packages (plugins, widgets, themes, icons, templates): compact
// metadata only, never a README or a plugin's configuration.

// frontendArg is the SiYuan frontend a package is judged for: one of
// SiYuan's frontends, for plugin compatibility.
type frontendArg struct {
	Frontend string `arg:"frontend" help:"SiYuan frontend used for plugin compatibility" enum:"desktop,desktop-window,mobile,browser-desktop,browser-mobile" default:"desktop"`
}

// paging are this tool's paging arguments (pages of at most 100 entries).
type paging struct {
	Page     int `arg:"page" help:"result page, from 1" default:"1" min:"1" max:"100000"`
	PageSize int `arg:"pageSize" help:"entries per page" default:"50" min:"1" max:"100"`
}

// packageKind is one of the package kinds SiYuan installs.
type packageKind string

func (packageKind) ArgEnum() []string { return siyuan.PackageKinds }

// page is one page of n entries: the slice bounds and the page fields.
func page[T any](all []T, page, size int) ([]T, map[string]any) {
	count := 0
	if len(all) > 0 {
		count = (len(all) + size - 1) / size
	}
	return tools.PageSlice(all, page, size), map[string]any{"total": len(all), "page": page, "pageSize": size, "pageCount": count}
}

type listPackagesArgs struct {
	Kind    packageKind `arg:"kind" help:"package kind" required:""`
	Keyword string      `arg:"keyword" help:"words that must all appear in the name, author, display name, description or keywords"`
	frontendArg
	paging
}

var listPackages = tools.Read[listPackagesArgs]{
	Name: "list_packages", Summary: "installed plugins, widgets, themes, icons or templates: compact metadata, paged",
	Example: map[string]any{"kind": "plugin"},
	Scope:   tools.Scope[listPackagesArgs]{None: true},
	Validate: func(l *listPackagesArgs) error {
		l.Keyword = strings.TrimSpace(l.Keyword)
		if len(l.Keyword) > 200 {
			return failure.Invalid("keyword is longer than 200 characters")
		}
		return nil
	},
	Run: func(ctx context.Context, env *tools.Env, a listPackagesArgs) (any, error) {
		pkgs, err := env.Kernel.InstalledPackages(ctx, string(a.Kind), a.Frontend, a.Keyword)
		if err != nil {
			return nil, err
		}
		items := make([]map[string]any, len(pkgs))
		for i, p := range pkgs {
			items[i] = compactPackage(p, string(a.Kind))
		}
		shown, pg := page(items, a.Page, a.PageSize)
		out := map[string]any{"readonly": true, "kind": a.Kind, "frontend": a.Frontend, "keyword": a.Keyword, "items": shown,
			"hints": []string{"Compact metadata only: READMEs and plugin configuration are not included.",
				`Call {"action":"get_plugin","pluginName":"<name>"} for one plugin and its storage.`}}
		for k, v := range pg {
			out[k] = v
		}
		return out, nil
	},
}

type pluginArgs struct {
	PluginName string `arg:"pluginName" help:"the plugin's exact package name" required:""`
	frontendArg
}

// trimPluginName trims a plugin name and refuses one that is not a
// package's folder name.
func trimPluginName(n *string) error {
	*n = strings.TrimSpace(*n)
	return checkPluginName(*n)
}

// pluginName is an installed package's folder name: no path in it.
var pluginName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

func checkPluginName(n string) error {
	if !pluginName.MatchString(n) || strings.Contains(n, "..") {
		return failure.Invalid("pluginName %q is not an installed package name (letters, digits, '.', '_', '-'; at most 128)", n)
	}
	return nil
}

var getPlugin = tools.Read[pluginArgs]{
	Name: "get_plugin", Summary: "one installed plugin's compact metadata and whether its storage folder exists",
	Example:  map[string]any{"pluginName": "siyuan-plugin-example"},
	Scope:    tools.Scope[pluginArgs]{None: true},
	Validate: func(p *pluginArgs) error { return trimPluginName(&p.PluginName) },
	Run: func(ctx context.Context, env *tools.Env, a pluginArgs) (any, error) {
		pkg, err := installedPlugin(ctx, env, a.PluginName, a.Frontend)
		if err != nil {
			return nil, err
		}
		storage := map[string]any{"root": petalRoot + "/" + a.PluginName, "exists": false}
		if a.PluginName == sisyphusPlugin {
			storage["readable"] = false
			storage["note"] = "Sisyphus's own configuration is never shown to agents"
		} else if entries, err := env.Kernel.ReadDir(ctx, petalRoot); err == nil {
			for _, e := range entries {
				if e.Name == a.PluginName {
					storage["exists"] = e.IsDir && !e.IsSymlink
				}
			}
		}
		return map[string]any{"readonly": true, "frontend": a.Frontend, "plugin": compactPackage(pkg, "plugin"), "storage": storage}, nil
	},
}

// installedPlugin finds an installed plugin by its exact name.
func installedPlugin(ctx context.Context, env *tools.Env, name, frontend string) (map[string]any, error) {
	pkgs, err := env.Kernel.InstalledPackages(ctx, "plugin", frontend, name)
	if err != nil {
		return nil, err
	}
	for _, p := range pkgs {
		if p["name"] == name {
			return p, nil
		}
	}
	e := failure.Missing("installed plugin", name)
	e.Action = `call {"action":"list_packages","kind":"plugin"} for the installed plugins' names`
	return nil, e
}

// compactPackage is upstream's normalized package: what an agent needs to
// tell packages apart, with the description as plain text.
func compactPackage(p map[string]any, kind string) map[string]any {
	name := str(p["name"])
	if name == "" {
		name = "unknown"
	}
	out := map[string]any{"name": name, "displayName": orDefault(str(p["preferredName"]), name)}
	set := func(k string, v any) {
		switch x := v.(type) {
		case string:
			if x != "" {
				out[k] = x
			}
		case []string:
			if len(x) > 0 {
				out[k] = x
			}
		case *bool:
			if x != nil {
				out[k] = *x
			}
		}
	}
	set("description", plainDescription(str(p["preferredDesc"])))
	set("version", str(p["version"]))
	set("author", str(p["author"]))
	set("repository", orDefault(str(p["repoURL"]), str(p["url"])))
	set("minAppVersion", str(p["minAppVersion"]))
	if kind == "plugin" {
		out["enabled"] = p["enabled"] == true
	}
	if b, ok := p["installedIncompatible"].(bool); ok {
		out["compatible"] = !b
	}
	set("outdated", boolP(p["outdated"]))
	set("current", boolP(p["current"]))
	set("installedAt", str(p["hInstallDate"]))
	set("frontends", strs(p["frontends"]))
	set("backends", strs(p["backends"]))
	set("keywords", strs(p["keywords"]))
	return out
}

var htmlTag = regexp.MustCompile(`<[^>]*>`)

// plainDescription is a description without markup, at most 300 characters.
func plainDescription(s string) string {
	s = strings.Join(strings.Fields(htmlTag.ReplaceAllString(s, " ")), " ")
	for _, ent := range [][2]string{{"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", `"`}, {"&#39;", "'"}, {"&nbsp;", " "}, {"&amp;", "&"}} {
		s = strings.ReplaceAll(s, ent[0], ent[1])
	}
	if r := []rune(s); len(r) > 300 {
		return string(r[:300]) + "…"
	}
	return s
}

func str(v any) string { s, _ := v.(string); return s }

func toString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case float64:
		return fmt.Sprint(x)
	}
	return ""
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func boolP(v any) *bool {
	b, ok := v.(bool)
	if !ok {
		return nil
	}
	return &b
}

func strs(v any) []string {
	l, _ := v.([]any)
	var out []string
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

type auditArgs struct{ frontendArg }

var auditEnvironment = tools.Read[auditArgs]{
	Name:    "audit_environment",
	Summary: "a compact masked overview: SiYuan's version, the configuration's top level, and how many packages of each kind are installed",
	Example: map[string]any{"frontend": "desktop"},
	Scope:   tools.Scope[auditArgs]{None: true},
	Run: func(ctx context.Context, env *tools.Env, a auditArgs) (any, error) {
		v, err := env.Kernel.Version(ctx)
		if err != nil {
			return nil, err
		}
		root, err := maskedConf(ctx, env)
		if err != nil {
			return nil, err
		}
		conf, err := confAnswer(root, confArgs{Mode: "summary", MaxDepth: 0, MaxItems: 20})
		if err != nil {
			return nil, err
		}
		delete(conf, "hints")
		// The kinds are read side by side: SiYuan looks a kind's local
		// packages up in the online bazaar, which takes seconds (8 s each,
		// measured on 3.7.3 offline) when any is installed.
		kinds := kernelview.SortedUnique(siyuan.PackageKinds)
		lists, err := kernelview.ReadEach(kinds, func(kind string) ([]map[string]any, error) {
			return env.Kernel.InstalledPackages(ctx, kind, a.Frontend, "")
		})
		if err != nil {
			return nil, err
		}
		totals := map[string]any{}
		var plugins []map[string]any
		for i, kind := range kinds {
			totals[kind] = len(lists[i])
			if kind == "plugin" {
				plugins = lists[i]
			}
		}
		states := map[string]int{"enabled": 0, "disabled": 0, "incompatible": 0, "outdated": 0}
		for _, p := range plugins {
			if p["enabled"] == true {
				states["enabled"]++
			} else {
				states["disabled"]++
			}
			if p["installedIncompatible"] == true {
				states["incompatible"]++
			}
			if p["outdated"] == true {
				states["outdated"]++
			}
		}
		return map[string]any{
			"readonly": true, "version": v, "sisyphus": env.Version, "frontend": a.Frontend,
			"configuration": conf,
			"packages":      map[string]any{"totals": totals, "plugins": states},
			"hints": []string{
				`Call {"action":"list_packages","kind":"plugin"} (or widget, theme, icon, template) for package details.`,
				"This audit shows only the configuration's top level, masked; it reads no plugin storage and changes nothing.",
			},
		}, nil
	},
}
