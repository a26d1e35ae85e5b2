package extension

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// goodPlugin is a plugin package without findings.
func goodPlugin() map[string]any {
	return map[string]any{"type": "plugin",
		"manifest": map[string]any{"name": "example-plugin", "version": "1.0.0", "minAppVersion": "3.7.0", "author": "me", "url": "https://example.com",
			"displayName": map[string]any{"default": "Example"}, "description": map[string]any{"default": "Example"}, "kernels": []any{"all"}},
		"files": map[string]any{"index.js": "module.exports = class Example extends Plugin { onunload() {} };",
			"kernel.js": `siyuan.mcp.registerTool("echo", {description: "Echo"}, (a) => a); siyuan.mcp.unregisterTool("echo");`}}
}

// with is a copy of the package with path (manifest.x, files.x, or a
// package field) set to v, or removed when v is nil.
func with(pkg map[string]any, path string, v any) map[string]any {
	var cp map[string]any
	b, _ := json.Marshal(pkg)
	json.Unmarshal(b, &cp)
	obj, key := cp, path
	if i := strings.IndexByte(path, '.'); i > 0 && (path[:i] == "manifest" || path[:i] == "files") {
		obj, key = cp[path[:i]].(map[string]any), path[i+1:]
	}
	if v == nil {
		delete(obj, key)
	} else {
		obj[key] = v
	}
	return cp
}

func codes(res map[string]any) []string {
	var out []string
	for _, is := range res["issues"].([]any) {
		out = append(out, is.(map[string]any)["code"].(string))
	}
	return out
}

// TestValidatePackageFindings: each check reports its finding with its
// code, severity and field, and a package without findings is valid.
func TestValidatePackageFindings(t *testing.T) {
	s := tooltest.NewStrict(t, false, toolset)
	rt := map[string]any{"appVersion": "3.7.3", "backend": "linux", "frontend": "desktop"}
	for _, c := range []struct {
		name    string
		pkg     map[string]any
		runtime map[string]any
		want    []string // codes, in order
		valid   bool
	}{
		{"clean", goodPlugin(), rt, nil, true},
		{"no name", with(goodPlugin(), "manifest.name", " "), nil, []string{"name_missing"}, false},
		{"name with a slash", with(goodPlugin(), "manifest.name", "a/b"), nil, []string{"name_path_separator"}, false},
		{"name SiYuan sanitizes", with(goodPlugin(), "manifest.name", "my plugin"), nil, []string{"name_sanitized"}, true},
		{"Sisyphus's own namespace", with(goodPlugin(), "manifest.name", "siyuan-plugins-mcp-sisyphus"), nil, []string{"name_reserved_namespace"}, true},
		{"author not a string", with(goodPlugin(), "manifest.author", 3.0), nil, []string{"field_type"}, false},
		{"no url", with(goodPlugin(), "manifest.url", nil), nil, []string{"field_absent"}, true},
		{"version not semver", with(goodPlugin(), "manifest.version", "one"), nil, []string{"version_not_semver"}, true},
		{"minAppVersion not semver", with(goodPlugin(), "manifest.minAppVersion", "3.7"), rt, []string{"min_app_version_invalid"}, true},
		{"minAppVersion newer", with(goodPlugin(), "manifest.minAppVersion", "3.8.0"), rt, []string{"min_app_version_newer"}, false},
		{"prerelease runtime below release", goodPlugin(), map[string]any{"appVersion": "3.7.0-beta.2"}, []string{"min_app_version_newer"}, false},
		{"huge version numbers", with(goodPlugin(), "manifest.minAppVersion", "3.99999999999999999999999.0"), rt, []string{"min_app_version_newer"}, false},
		{"runtime appVersion not semver", goodPlugin(), map[string]any{"appVersion": "nightly"}, []string{"runtime_app_version_invalid"}, true},
		{"displayName absent", with(goodPlugin(), "manifest.displayName", nil), nil, []string{"locale_map_absent"}, true},
		{"description not a map", with(goodPlugin(), "manifest.description", "text"), nil, []string{"locale_map_invalid"}, false},
		{"description empty", with(goodPlugin(), "manifest.description", map[string]any{"default": " "}), nil, []string{"locale_map_empty"}, true},
		{"keywords not strings", with(goodPlugin(), "manifest.keywords", []any{1.0}), nil, []string{"string_array_invalid"}, false},
		{"backend excluded", with(goodPlugin(), "manifest.backends", []any{"windows"}), rt, []string{"backend_incompatible"}, true},
		{"frontend excluded", with(goodPlugin(), "manifest.frontends", []any{"mobile"}), rt, []string{"frontend_incompatible"}, true},
		{"runtime-derived field", with(goodPlugin(), "manifest.enabled", true), nil, []string{"runtime_derived_field"}, true},
		{"kernels empty", with(goodPlugin(), "manifest.kernels", nil), rt, []string{"kernels_empty"}, true},
		{"kernel excluded", with(goodPlugin(), "manifest.kernels", []any{"darwin"}), rt, []string{"kernel_incompatible"}, true},
		{"no index.js", with(goodPlugin(), "files.index.js", nil), nil, []string{"required_file_missing"}, false},
		{"empty index.js", with(goodPlugin(), "files.index.js", " "), nil, []string{"required_file_empty", "plugin_api_not_visible"}, true},
		{"no Plugin API", with(goodPlugin(), "files.index.js", "console.log(1)"), nil, []string{"plugin_api_not_visible"}, true},
		{"register without unregister", with(goodPlugin(), "files.kernel.js", `siyuan.mcp.registerTool("a", {}, f)`), nil, []string{"mcp_unregister_missing"}, true},
		{"tool names", with(goodPlugin(), "files.kernel.js", "siyuan.mcp.registerTool('a-b', {}, f); siyuan.mcp.registerTool(`a_b`, {}, f); "+
			`siyuan.mcp.registerTool("", {}, f); siyuan.mcp.registerTool("`+strings.Repeat("x", 120)+`", {}, f); siyuan.mcp.unregisterTool("a-b")`),
			nil, []string{"mcp_tool_name_sanitized", "mcp_tool_name_collision", "mcp_tool_name_empty", "mcp_tool_name_long"}, true},
		{"tool registered twice", with(goodPlugin(), "files.kernel.js", `siyuan.mcp.registerTool("a", {}, f); siyuan.mcp.registerTool("a", {}, f); siyuan.mcp.unregisterTool("a")`),
			nil, []string{"mcp_tool_name_duplicate"}, true},
		{"theme without modes", map[string]any{"type": "theme", "manifest": with(goodPlugin(), "manifest.kernels", nil)["manifest"], "files": map[string]any{"theme.css": "a{}"}},
			nil, []string{"theme_mode_missing"}, false},
		{"theme with an unknown mode", map[string]any{"type": "theme", "manifest": with(goodPlugin(), "manifest.modes", []any{"dark", "sepia"})["manifest"],
			"files": map[string]any{"theme.css": "a{}"}}, nil, []string{"theme_mode_unknown"}, true},
		{"widget without index.html", map[string]any{"type": "widget", "manifest": goodPlugin()["manifest"], "files": map[string]any{}},
			nil, []string{"required_file_missing"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := map[string]any{"action": "validate_package", "package": c.pkg}
			if c.runtime != nil {
				args["runtime"] = c.runtime
			}
			res := s.OK(t, "extension", args)
			got := codes(res)
			if !slices.Equal(got, c.want) {
				t.Fatalf("codes %v, want %v: %v", got, c.want, res["issues"])
			}
			if (res["staticPackage"] == "valid") != c.valid {
				t.Fatalf("staticPackage %v: %v", res["staticPackage"], res["issues"])
			}
			for _, is := range res["issues"].([]any) {
				is := is.(map[string]any)
				if is["severity"] != "error" && is["severity"] != "warning" || !strings.HasPrefix(is["field"].(string), "package.") && !strings.HasPrefix(is["field"].(string), "runtime.") {
					t.Errorf("issue %v", is)
				}
			}
			sum := res["summary"].(map[string]any)
			if int(sum["errors"].(float64)+sum["warnings"].(float64)) != len(got) {
				t.Errorf("summary %v for %d issues", sum, len(got))
			}
		})
	}
}

// TestValidatePackageAnswer: upstream's answer fields, and the tools
// kernel.js registers named as SiYuan names them.
func TestValidatePackageAnswer(t *testing.T) {
	s := tooltest.NewStrict(t, false, toolset)
	res := s.OK(t, "extension", map[string]any{"action": "validate_package", "package": goodPlugin(),
		"runtime": map[string]any{"appVersion": "3.7.3", "backend": "linux", "frontend": "desktop"}})
	id := res["packageIdentity"].(map[string]any)
	compat := res["compatibility"].(map[string]any)
	sig := res["staticSignals"].(map[string]any)
	tools := sig["mcpTools"].([]any)
	switch {
	case res["kind"] != "static_extension_package_validation" || res["packageType"] != "plugin":
		t.Fatalf("kind %v", res)
	case id["manifestName"] != "example-plugin" || id["pluginMcpPrefix"] != "plugin__example_plugin__":
		t.Fatalf("identity %v", id)
	case compat["minAppVersion"] != "compatible" || compat["backend"] != "compatible" || compat["frontend"] != "compatible" || compat["kernel"] != "compatible":
		t.Fatalf("compatibility %v", compat)
	case sig["frontendOnUnload"] != "detected" || sig["kernelMcpRegistrationCalls"] != 1.0 || sig["kernelMcpUnregistrationCalls"] != 1.0:
		t.Fatalf("signals %v", sig)
	case len(tools) != 1 || tools[0].(map[string]any)["qualifiedName"] != "plugin__example_plugin__echo":
		t.Fatalf("tools %v", tools)
	case !slices.Equal(res["executableSurfaces"].([]any), []any{"index.js", "kernel.js"}):
		t.Fatalf("surfaces %v", res["executableSurfaces"])
	case res["lifecycle"].(map[string]any)["trustReview"] != "required" || res["lifecycle"].(map[string]any)["reload"] != "not_triggered":
		t.Fatalf("lifecycle %v", res["lifecycle"])
	}
	theme := s.OK(t, "extension", map[string]any{"action": "validate_package", "package": map[string]any{"type": "theme",
		"manifest": with(goodPlugin(), "manifest.modes", []any{"dark"})["manifest"], "files": map[string]any{"theme.css": "a{}"}}})
	if theme["compatibility"].(map[string]any)["kernel"] != "not_applicable" || theme["staticSignals"] != nil ||
		theme["lifecycle"].(map[string]any)["trustReview"] != "not_applicable" {
		t.Fatalf("theme %v", theme)
	}
}

// TestValidatePackageRefuses: what is not a package inline, or names a
// path, is refused before any check, typed, naming the field.
func TestValidatePackageRefuses(t *testing.T) {
	s := tooltest.NewStrict(t, false, toolset)
	file := func(name string) map[string]any { return with(goodPlugin(), "files."+name, "x") }
	for _, c := range []struct {
		name string
		args map[string]any
		msg  string
	}{
		{"parent segment", map[string]any{"package": file("../index.js")}, "segment"},
		{"inner parent segment", map[string]any{"package": file("a/../../etc/passwd")}, "segment"},
		{"dot segment", map[string]any{"package": file("./index.js")}, "segment"},
		{"absolute", map[string]any{"package": file("/etc/passwd")}, "absolute"},
		{"drive letter", map[string]any{"package": file("C:/Windows/win.ini")}, "absolute"},
		{"backslash", map[string]any{"package": file(`..\index.js`)}, "backslash"},
		{"empty segment", map[string]any{"package": file("a//b")}, "segment"},
		{"NUL", map[string]any{"package": file("index.js\x00.png")}, "control"},
		{"long name", map[string]any{"package": file(strings.Repeat("a", 300))}, "longer"},
		{"a path argument", map[string]any{"package": goodPlugin(), "path": "/data/plugins/x"}, "path"},
		{"a path in the package", map[string]any{"package": with(goodPlugin(), "path", "/home/me/plugin")}, "not a package field"},
		{"no package", map[string]any{}, "package"},
		{"unknown type", map[string]any{"package": with(goodPlugin(), "type", "zip")}, "package.type"},
		{"manifest as text", map[string]any{"package": with(goodPlugin(), "manifest", "plugin.json")}, "package.manifest"},
		{"files as a list", map[string]any{"package": with(goodPlugin(), "files", []any{"index.js"})}, "package.files"},
		{"file not text", map[string]any{"package": with(goodPlugin(), "files.index.js", 1.0)}, "string"},
		{"huge manifest", map[string]any{"package": with(goodPlugin(), "manifest.readme", map[string]any{"default": strings.Repeat("x", maxManifestBytes)})}, "larger than"},
		{"too many files", map[string]any{"package": with(goodPlugin(), "files", manyFiles(maxPackageFiles+1))}, "at most"},
		{"too much text", map[string]any{"package": with(with(goodPlugin(), "files.a.js", strings.Repeat("x", maxPackageBytes/2+1)), "files.b.js", strings.Repeat("x", maxPackageBytes/2+1))}, "bytes of text"},
		{"unknown runtime field", map[string]any{"package": goodPlugin(), "runtime": map[string]any{"os": "linux"}}, "runtime.os"},
		{"runtime not text", map[string]any{"package": goodPlugin(), "runtime": map[string]any{"appVersion": 3.7}}, "runtime.appVersion"},
		{"long runtime value", map[string]any{"package": goodPlugin(), "runtime": map[string]any{"backend": strings.Repeat("x", 65)}}, "longer"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.args["action"] = "validate_package"
			e := s.WantErr(t, "extension", c.args, failure.InvalidArguments)
			if !strings.Contains(e.Message, c.msg) {
				t.Fatalf("message %q does not say %q", e.Message, c.msg)
			}
		})
	}
}

func manyFiles(n int) map[string]any {
	out := map[string]any{"index.js": "class X extends Plugin {}"}
	for len(out) < n {
		out["f"+strings.Repeat("x", len(out))+".js"] = ""
	}
	return out
}

func TestCompareSemver(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"3.7.0", "3.7.0", 0}, {"3.7.1", "3.7.0", 1}, {"3.10.0", "3.9.9", 1}, {"v3.7.0", "3.7.0", 0},
		{"3.7.0-beta", "3.7.0", -1}, {"3.7.0-beta.2", "3.7.0-beta.10", -1}, {"3.7.0-1", "3.7.0-alpha", -1},
		{"3.7.0-alpha", "3.7.0-alpha.1", -1}, {"3.7.0+build", "3.7.0", 0}, {"003.7.0", "3.7.0", 0},
		{"99999999999999999999.0.0", "3.0.0", 1},
	} {
		a, okA := parseSemver(c.a)
		b, okB := parseSemver(c.b)
		if !okA || !okB {
			t.Fatalf("%s %s do not parse", c.a, c.b)
		}
		if got := compareSemver(a, b); got != c.want || compareSemver(b, a) != -c.want {
			t.Errorf("compare(%s, %s) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

// FuzzValidatePackage: whatever the content, parsing refuses it typed or
// the check answers, consistently, without panicking.
func FuzzValidatePackage(f *testing.F) {
	seed, _ := json.Marshal(map[string]any{"package": goodPlugin(), "runtime": map[string]any{"appVersion": "3.7.3", "backend": "linux"}})
	f.Add(seed)
	f.Add([]byte(`{"package":{"type":"theme","manifest":{"name":"t","modes":["dark",1]},"files":{"theme.css":""}}}`))
	f.Add([]byte(`{"package":{"type":"plugin","manifest":{"name":"a b","minAppVersion":"1.2.3-x.1"},"files":{"kernel.js":"siyuan.mcp.registerTool(` + "`a`" + `"}}}`))
	f.Add([]byte(`{"package":{"type":"widget","manifest":{},"files":{"../x":""}},"runtime":{"backend":2}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var call struct {
			Package map[string]any `json:"package"`
			Runtime map[string]any `json:"runtime"`
		}
		if json.Unmarshal(data, &call) != nil {
			return
		}
		in, err := parsePackage(call.Package, call.Runtime)
		if err != nil {
			var fe *failure.Error
			if !errors.As(err, &fe) || fe.Code != failure.InvalidArguments {
				t.Fatalf("refusal %v is not invalid_arguments", err)
			}
			return
		}
		for name := range in.Files {
			if unsafeFileName(name) != "" || strings.Contains(name, "..") && slices.Contains(strings.Split(name, "/"), "..") {
				t.Fatalf("unsafe name %q passed", name)
			}
		}
		r := validatePackage(in)
		errs := 0
		for _, is := range r.Issues {
			if is.Code == "" || is.Field == "" || is.Severity != "error" && is.Severity != "warning" {
				t.Fatalf("issue %+v", is)
			}
			if is.Severity == "error" {
				errs++
			}
		}
		if r.Summary["errors"] != errs || r.Summary["warnings"] != len(r.Issues)-errs || (errs == 0) != (r.StaticPackage == "valid") {
			t.Fatalf("summary %v, %s for %d errors", r.Summary, r.StaticPackage, errs)
		}
		if _, err := json.Marshal(r); err != nil {
			t.Fatal(err)
		}
	})
}
