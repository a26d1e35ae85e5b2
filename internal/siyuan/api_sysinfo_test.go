package siyuan

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
)

// sysinfoAPICases are the system tool's reads and the sync trigger.
func sysinfoAPICases() []apiCase {
	return []apiCase{
		{"GetConf", func(ctx context.Context, c *Client) (any, error) {
			cf, err := c.GetConf(ctx)
			return string(cf.Conf) + "/" + map[bool]string{true: "start", false: "ready"}[cf.Start], err
		}, endpoint.GetConf, `{}`, `{"conf":{"api":{"token":"t"}},"start":true,"isPublish":false}`, `{"api":{"token":"t"}}/start`, Read},
		{"GetNetwork", func(ctx context.Context, c *Client) (any, error) { return c.GetNetwork(ctx) },
			endpoint.GetNetwork, `{}`, `{"proxy":{"scheme":"http","host":"h","port":"8080"}}`, NetworkProxy{"http", "h", "8080"}, Read},
		{"GetWorkspaceInfo", func(ctx context.Context, c *Client) (any, error) { return c.GetWorkspaceInfo(ctx) },
			endpoint.GetWorkspaceInfo, `{}`, `{"workspaceDir":"/w","siyuanVer":"3.7.3"}`, WorkspaceInfo{"/w", "3.7.3"}, Read},
		{"InstalledPackages plugin", func(ctx context.Context, c *Client) (any, error) {
			return c.InstalledPackages(ctx, "plugin", "", "demo")
		}, endpoint.GetInstalledPlugin, `{"frontend":"desktop","keyword":"demo"}`, `{"packages":[{"name":"p"}]}`, []map[string]any{{"name": "p"}}, Read},
		{"InstalledPackages theme", func(ctx context.Context, c *Client) (any, error) {
			return c.InstalledPackages(ctx, "theme", "mobile", "")
		}, endpoint.GetInstalledTheme, `{"keyword":""}`, `{"packages":null}`, []map[string]any{}, Read},
		{"Snippets", func(ctx context.Context, c *Client) (any, error) { return c.Snippets(ctx, "css", 1, "x") },
			endpoint.GetSnippet, `{"type":"css","enabled":1,"keyword":"x"}`,
			`{"snippets":[{"id":"20240101120000-aaaaaaa","name":"n","type":"css","enabled":true,"disabledInPublish":false,"content":"a{}"}]}`,
			[]Snippet{{ID: "20240101120000-aaaaaaa", Name: "n", Type: "css", Enabled: true, Content: "a{}"}}, Read},
		{"PerformSync", func(ctx context.Context, c *Client) (any, error) { return nil, c.PerformSync(ctx) },
			endpoint.PerformSync, `{}`, `null`, nil, Write},
	}
}

func TestSysinfoRefusesBadArguments(t *testing.T) {
	c, err := New(Config{BaseURL: "http://127.0.0.1:1", Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.InstalledPackages(ctx, "font", "", ""); err == nil {
		t.Error("an unknown package kind was sent")
	}
	if _, err := c.Snippets(ctx, "html", 2, ""); err == nil {
		t.Error("an unknown snippet type was sent")
	}
	if _, err := c.Snippets(ctx, "all", 3, ""); err == nil {
		t.Error("enabled 3 was sent")
	}
	var cf Conf
	if err := json.Unmarshal([]byte(`{"conf":{},"start":false,"isPublish":true}`), &cf); err != nil || !cf.IsPublish {
		t.Fatalf("%+v %v", cf, err)
	}
}
