package siyuan

import (
	"context"
	"encoding/json"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
)

// The system tool's kernel reads: configuration, network, workspace,
// installed packages and snippets, and the one sync trigger. They answer
// raw JSON where the kernel's shape is large and versioned (conf, packages):
// the tool masks and summarises it, it does not model it.

// Conf is /api/system/getConf. The kernel returns its configuration with
// only accessAuthCode, userData and mcpOAuth masked: api.token, cookieKey,
// the repository key and sync credentials arrive in clear.
type Conf struct {
	Conf      json.RawMessage `json:"conf"`
	Start     bool            `json:"start"`
	IsPublish bool            `json:"isPublish"`
}

// GetConf reads the kernel's configuration.
func (c *Client) GetConf(ctx context.Context) (Conf, error) {
	var out Conf
	if err := c.invoke(ctx, endpoint.GetConf, nil, &out); err != nil {
		return out, err
	}
	if len(out.Conf) == 0 || string(out.Conf) == "null" {
		return out, missingResult(endpoint.GetConf, "conf")
	}
	return out, nil
}

// NetworkProxy is conf.system.networkProxy as getNetwork answers it.
type NetworkProxy struct {
	Scheme string `json:"scheme"`
	Host   string `json:"host"`
	Port   string `json:"port"`
}

// GetNetwork reads the kernel's proxy settings.
func (c *Client) GetNetwork(ctx context.Context) (NetworkProxy, error) {
	var out struct {
		Proxy *NetworkProxy `json:"proxy"`
	}
	if err := c.invoke(ctx, endpoint.GetNetwork, nil, &out); err != nil {
		return NetworkProxy{}, err
	}
	if out.Proxy == nil {
		return NetworkProxy{}, missingResult(endpoint.GetNetwork, "proxy")
	}
	return *out.Proxy, nil
}

// WorkspaceInfo is /api/system/getWorkspaceInfo: the absolute workspace
// directory and the kernel version.
type WorkspaceInfo struct {
	WorkspaceDir string `json:"workspaceDir"`
	SiyuanVer    string `json:"siyuanVer"`
}

// GetWorkspaceInfo reads the workspace's location.
func (c *Client) GetWorkspaceInfo(ctx context.Context) (WorkspaceInfo, error) {
	var out WorkspaceInfo
	err := c.invoke(ctx, endpoint.GetWorkspaceInfo, nil, &out)
	return out, err
}

// PackageKinds are the installed package kinds, in upstream's order.
var PackageKinds = []string{"plugin", "widget", "theme", "icon", "template"}

func installedEndpoint(kind string) (string, bool) {
	switch kind {
	case "plugin":
		return endpoint.GetInstalledPlugin, true
	case "widget":
		return endpoint.GetInstalledWidget, true
	case "theme":
		return endpoint.GetInstalledTheme, true
	case "icon":
		return endpoint.GetInstalledIcon, true
	case "template":
		return endpoint.GetInstalledTemplate, true
	}
	return "", false
}

// InstalledPackages lists the installed packages of a kind (plugin, widget,
// theme, icon, template) whose name, author or description match keyword
// ("" lists all). frontend matters to plugins only (their compatibility);
// the kernel requires it there. Each package is the kernel's object as is.
func (c *Client) InstalledPackages(ctx context.Context, kind, frontend, keyword string) ([]map[string]any, error) {
	ep, ok := installedEndpoint(kind)
	if !ok {
		return nil, invalidArg(endpoint.GetInstalledPlugin, "kind must be one of plugin, widget, theme, icon, template, got %q", kind)
	}
	req := map[string]any{"keyword": keyword}
	if kind == "plugin" {
		if frontend == "" {
			frontend = "desktop"
		}
		req["frontend"] = frontend
	}
	var out struct {
		Packages []map[string]any `json:"packages"`
	}
	if err := c.invoke(ctx, ep, req, &out); err != nil {
		return nil, err
	}
	if out.Packages == nil {
		out.Packages = []map[string]any{}
	}
	return out.Packages, nil
}

// Snippet is one CSS or JavaScript snippet.
type Snippet struct {
	ID                string `json:"id"`
	Name              string `json:"name"`
	Type              string `json:"type"`
	Enabled           bool   `json:"enabled"`
	DisabledInPublish bool   `json:"disabledInPublish"`
	Content           string `json:"content"`
}

// Snippets lists snippets: typ is js, css or all; enabled 0 (disabled), 1
// (enabled) or 2 (all); keyword matches name or content, case-insensitively.
func (c *Client) Snippets(ctx context.Context, typ string, enabled int, keyword string) ([]Snippet, error) {
	switch typ {
	case "js", "css", "all":
	default:
		return nil, invalidArg(endpoint.GetSnippet, "type must be js, css or all, got %q", typ)
	}
	if enabled < 0 || enabled > 2 {
		return nil, invalidArg(endpoint.GetSnippet, "enabled must be 0, 1 or 2, got %d", enabled)
	}
	req := map[string]any{"type": typ, "enabled": enabled, "keyword": keyword}
	var out struct {
		Snippets []Snippet `json:"snippets"`
	}
	if err := c.invoke(ctx, endpoint.GetSnippet, req, &out); err != nil {
		return nil, err
	}
	if out.Snippets == nil {
		out.Snippets = []Snippet{}
	}
	return out.Snippets, nil
}

// PerformSync asks the kernel to sync with its cloud provider now. It is an
// external side effect, attempted once; the kernel answers at once (the
// sync runs in the background, and does nothing when sync is not enabled).
func (c *Client) PerformSync(ctx context.Context) error {
	return c.invoke(ctx, endpoint.PerformSync, struct{}{}, nil)
}
