package extension

import (
	"context"

	"github.com/sisyphus-go/sisyphus/internal/tools"
)

type validateArgs struct {
	Package map[string]any `arg:"package" help:"the package inline, as upstream 0.6.8 takes it: {\"type\":\"plugin|theme|widget\",\"manifest\":{...plugin.json...},\"files\":{\"index.js\":\"...\",\"kernel.js\":\"...\"}}. No path is read: files maps relative names to their text (no absolute path, backslash, . or .. segment; unlike upstream, which reports such a name as a finding, the call is refused), at most 64 files and 4 MiB of text, a manifest of at most 64 KiB (upstream sets no bound)" required:""`
	Runtime map[string]any `arg:"runtime" help:"the SiYuan the package is judged for, only what was observed: {\"appVersion\":\"3.7.3\",\"backend\":\"linux|darwin|windows|...\",\"frontend\":\"desktop|mobile|browser-desktop|...\"}; an absent value is not checked"`
	in      pkgInput
}

var validatePkg = tools.Read[validateArgs]{
	Name: "validate_package",
	Summary: "statically check a plugin, theme or widget package given inline (manifest fields, required files, version and platform compatibility, " +
		"executable surfaces, the MCP tools kernel.js registers and their names): findings with severity, code and field. Reads no path; installs, enables or calls nothing",
	Example: map[string]any{"package": map[string]any{"type": "plugin",
		"manifest": map[string]any{"name": "example-plugin", "version": "1.0.0", "minAppVersion": "3.7.0", "author": "me", "url": "https://example.com",
			"displayName": map[string]any{"default": "Example"}, "description": map[string]any{"default": "Example"}, "kernels": []any{"all"}},
		"files": map[string]any{"index.js": "module.exports = class Example extends Plugin { onunload() {} };",
			"kernel.js": "siyuan.mcp.registerTool(\"echo\", {description: \"Echo\", inputSchema: {type: \"object\"}}, (a) => a); siyuan.mcp.unregisterTool(\"echo\");"}},
		"runtime": map[string]any{"appVersion": "3.7.3", "backend": "linux", "frontend": "desktop"}},
	// A pure function of its arguments: it reads nothing of SiYuan.
	Scope: tools.Scope[validateArgs]{None: true},
	Validate: func(a *validateArgs) error {
		in, err := parsePackage(a.Package, a.Runtime)
		a.in = in
		return err
	},
	Run: func(_ context.Context, _ *tools.Env, a validateArgs) (any, error) {
		return validatePackage(a.in), nil
	},
}
