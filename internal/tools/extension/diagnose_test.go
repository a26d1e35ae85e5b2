package extension

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/embedded"
	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// put writes a workspace file of the fixture.
func put(t *testing.T, s *tooltest.Fixture, path, text string) {
	t.Helper()
	if err := s.C.PutFile(context.Background(), siyuan.PutFileRequest{Path: path, Body: strings.NewReader(text)}); err != nil {
		t.Fatal(err)
	}
}

// installExample installs the bundled example plugin's package (whose tools
// the embedded kernel's MCP endpoint lists), enabled or not.
func installExample(t *testing.T, s *tooltest.Fixture, enabled bool) {
	t.Helper()
	put(t, s, "/data/plugins/sisyphus-example/plugin.json", `{"name":"sisyphus-example","version":"1.0.0","kernels":["all"]}`)
	put(t, s, "/data/plugins/sisyphus-example/index.js", "module.exports = class X extends Plugin {}")
	put(t, s, "/data/plugins/sisyphus-example/kernel.js", `siyuan.mcp.registerTool("word_count", {}, f)`)
	on := "false"
	if enabled {
		on = "true"
	}
	put(t, s, "/data/storage/petal/petals.json", `[{"name":"other","enabled":true},{"name":"sisyphus-example","enabled":`+on+`}]`)
}

func statusOf(res map[string]any) map[string]string {
	out := map[string]string{}
	for _, c := range res["checks"].([]any) {
		c := c.(map[string]any)
		out[c["check"].(string)] = c["status"].(string)
	}
	return out
}

func registeredNames(res map[string]any) []string {
	var out []string
	for _, t := range res["plugin"].(map[string]any)["registeredTools"].([]any) {
		out = append(out, t.(map[string]any)["name"].(string))
	}
	return out
}

// TestDiagnosePluginMCP: each reason a plugin's tools are or are not
// extension actions is the check that says so, and the verdict is the
// first problem.
func TestDiagnosePluginMCP(t *testing.T) {
	both := []string{embedded.ExamplePluginStamp, embedded.ExamplePluginWordCount}
	for _, c := range []struct {
		name    string
		setup   func(t *testing.T, s *tooltest.Fixture)
		plugin  string
		want    map[string]string // check: status
		tools   []string
		visible bool
		verdict string
		note    string // in notes, when set
	}{
		{"not installed", nil, "nosuch",
			map[string]string{"installed": "problem", "enabled": "not_applicable", "kernelPlugin": "not_applicable", "registered": "problem", "exposed": "not_applicable"},
			nil, false, "not installed", ""},
		{"installed, enabled, registered, exposed", func(t *testing.T, s *tooltest.Fixture) { installExample(t, s, true) }, "sisyphus-example",
			map[string]string{"namespace": "ok", "installed": "ok", "enabled": "ok", "kernelPlugin": "ok", "registered": "ok", "exposed": "ok", "callable": "ok", "nameCollision": "ok"},
			both, true, "2 of its MCP tools", ""},
		{"disabled", func(t *testing.T, s *tooltest.Fixture) { installExample(t, s, false) }, "sisyphus-example",
			map[string]string{"installed": "ok", "enabled": "problem"}, both, true, "not enabled", ""},
		{"no kernel.js", func(t *testing.T, s *tooltest.Fixture) {
			installExample(t, s, true)
			if err := s.C.RemoveFile(context.Background(), "/data/plugins/sisyphus-example/kernel.js"); err != nil {
				t.Fatal(err)
			}
		}, "sisyphus-example", map[string]string{"kernelPlugin": "problem"}, both, true, "no kernel.js", ""},
		{"kernel.js but no kernels", func(t *testing.T, s *tooltest.Fixture) {
			installExample(t, s, true)
			put(t, s, "/data/plugins/sisyphus-example/plugin.json", `{"name":"sisyphus-example","kernels":[]}`)
		}, "sisyphus-example", map[string]string{"kernelPlugin": "problem", "enabled": "ok"}, both, true, "lists no kernels", ""},
		{"plugin.json names another plugin", func(t *testing.T, s *tooltest.Fixture) {
			installExample(t, s, true)
			put(t, s, "/data/plugins/sisyphus-example/plugin.json", `{"name":"other","kernels":["all"]}`)
		}, "sisyphus-example", map[string]string{"kernelPlugin": "ok"}, both, true, "2 of its MCP tools", `plugin.json names "other"`},
		{"blocked", func(t *testing.T, s *tooltest.Fixture) {
			installExample(t, s, true)
			s.Policy = &tools.Policy{Default: tools.LevelRead, AllActions: true, Strict: true, Version: "b",
				Extension: tools.ExtensionSettings{Blocked: []string{embedded.ExamplePluginStamp}}}
		}, "sisyphus-example", map[string]string{"exposed": "problem"}, both, true, "extension.blockedTools", ""},
		{"a notebook hidden", func(t *testing.T, s *tooltest.Fixture) {
			installExample(t, s, true)
			s.Policy = &tools.Policy{Notebooks: map[string]tools.Level{s.NB: tools.LevelNone}, Default: tools.LevelRead, AllActions: true, Strict: true, Version: "h"}
		}, "sisyphus-example", map[string]string{"callable": "problem", "exposed": "ok"}, both, true, "hidden", ""},
		{"same tool namespace", func(t *testing.T, s *tooltest.Fixture) {
			installExample(t, s, true)
			put(t, s, "/data/plugins/sisyphus_example/plugin.json", `{"name":"sisyphus_example"}`)
		}, "sisyphus-example", map[string]string{"nameCollision": "problem"}, both, true, "sisyphus_example", ""},
		{"a longer plugin's tools are not its own", func(t *testing.T, s *tooltest.Fixture) {
			put(t, s, "/data/plugins/sisyphus/plugin.json", `{"name":"sisyphus"}`)
			put(t, s, "/data/plugins/sisyphus-example/plugin.json", `{"name":"sisyphus-example"}`)
		}, "sisyphus", map[string]string{"installed": "ok", "registered": "problem"}, nil, false, "not enabled", ""},
		{"upstream Sisyphus itself", nil, "siyuan-plugins-mcp-sisyphus",
			map[string]string{"namespace": "problem", "registered": "not_applicable"}, nil, false, "never forwards", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := tooltest.NewStrict(t, false, toolset)
			if c.setup != nil {
				c.setup(t, s)
			}
			res := s.OK(t, "extension", map[string]any{"action": "diagnose_plugin_mcp", "pluginName": c.plugin})
			got := statusOf(res)
			for k, v := range c.want {
				if got[k] != v {
					t.Errorf("check %s = %q, want %q (%v)", k, got[k], v, res["checks"])
				}
			}
			if names := registeredNames(res); !slices.Equal(names, c.tools) {
				t.Errorf("registered %v, want %v", names, c.tools)
			}
			if res["visible"] != c.visible || !strings.Contains(res["verdict"].(string), c.verdict) {
				t.Errorf("visible %v, verdict %q; want %v, %q", res["visible"], res["verdict"], c.visible, c.verdict)
			}
			if notes, _ := res["notes"].([]any); c.note != "" && (len(notes) != 1 || !strings.Contains(notes[0].(string), c.note)) || c.note == "" && notes != nil {
				t.Errorf("notes %v, want %q", notes, c.note)
			}
			if res["observation"] != "completed" || res["kind"] != "plugin_mcp_registry_observation" {
				t.Errorf("observation %v", res)
			}
		})
	}
}

// TestDiagnoseExpectation: expected tool names are checked, by their
// qualified names, present or absent in the fresh registry; a registry
// that cannot be read meets no expectation.
func TestDiagnoseExpectation(t *testing.T) {
	s := tooltest.NewStrict(t, false, toolset)
	installExample(t, s, true)
	call := func(state string, names ...string) map[string]any {
		return s.OK(t, "extension", map[string]any{"action": "diagnose_plugin_mcp", "pluginName": "sisyphus-example",
			"expectedToolNames": names, "expectedState": state})["expectation"].(map[string]any)
	}
	met := func(e map[string]any) []bool {
		var out []bool
		for _, x := range e["tools"].([]any) {
			out = append(out, x.(map[string]any)["expectationMet"].(bool))
		}
		return out
	}
	e := call("present", "word_count", "gone")
	if !slices.Equal(met(e), []bool{true, false}) || e["allMet"] != false ||
		e["tools"].([]any)[0].(map[string]any)["qualifiedName"] != embedded.ExamplePluginWordCount {
		t.Fatalf("present: %v", e)
	}
	if e = call("absent", "gone"); !slices.Equal(met(e), []bool{true}) || e["allMet"] != true {
		t.Fatalf("absent: %v", e)
	}
	s.SetHook(mcpHook(func(w http.ResponseWriter, _, _, _ string) bool {
		http.Error(w, "404 page not found", http.StatusNotFound)
		return true
	}))
	res := s.OK(t, "extension", map[string]any{"action": "diagnose_plugin_mcp", "pluginName": "sisyphus-example",
		"expectedToolNames": []string{"gone"}, "expectedState": "absent"})
	reg := res["registry"].(map[string]any)
	if res["observation"] != "unavailable" || reg["connected"] != false || reg["errorCode"] != string(failure.ExtensionUnavailable) ||
		statusOf(res)["registered"] != "unknown" || res["expectation"].(map[string]any)["allMet"] != false || len(registeredNames(res)) != 0 {
		t.Fatalf("unavailable registry: %v", res)
	}
}

// TestDiagnoseOnlyReads: a diagnosis reads SiYuan's registry and files and
// nothing else: no tool is called, nothing is written.
func TestDiagnoseOnlyReads(t *testing.T) {
	s := tooltest.NewStrict(t, false, toolset)
	installExample(t, s, true)
	var mu sync.Mutex
	var seen []string
	s.SetHook(func(w http.ResponseWriter, r *http.Request) bool {
		name := r.URL.Path
		if r.URL.Path == "/mcp" {
			method, _, _ := peek(r)
			name += " " + method
		}
		mu.Lock()
		seen = append(seen, name)
		mu.Unlock()
		return false
	})
	s.OK(t, "extension", map[string]any{"action": "diagnose_plugin_mcp", "pluginName": "sisyphus-example", "expectedToolNames": []string{"stamp"}})
	s.OK(t, "extension", map[string]any{"action": "validate_package", "package": goodPlugin()})
	reads := []string{"/api/file/readDir", "/api/file/getFile", "/api/system/version", "/mcp initialize", "/mcp server/discover",
		"/mcp tools/list", "/mcp notifications/initialized", "/api/notebook/lsNotebooks"}
	for _, p := range seen {
		if !slices.Contains(reads, p) {
			t.Errorf("a diagnosis sent %s", p)
		}
	}
	if !slices.Contains(seen, "/mcp tools/list") {
		t.Errorf("no fresh discovery: %v", seen)
	}
}

// TestDiagnoseRefuses: a plugin name that is not a package name (a path
// above all) is refused before anything is read.
func TestDiagnoseRefuses(t *testing.T) {
	s := tooltest.NewStrict(t, false, toolset)
	var reads int
	var mu sync.Mutex
	s.SetHook(func(w http.ResponseWriter, r *http.Request) bool {
		if strings.HasPrefix(r.URL.Path, "/api/file/") {
			mu.Lock()
			reads++
			mu.Unlock()
		}
		return false
	})
	for _, args := range []map[string]any{
		{"pluginName": "../conf"}, {"pluginName": "/etc"}, {"pluginName": "a/b"}, {"pluginName": ".."}, {"pluginName": "a..b"},
		{"pluginName": `a\b`}, {"pluginName": " "}, {"pluginName": ".hidden"}, {"pluginName": strings.Repeat("a", 129)},
		{"pluginName": "a\x00"}, {},
		{"pluginName": "ok", "expectedToolNames": []string{" "}},
		{"pluginName": "ok", "expectedToolNames": []string{strings.Repeat("t", 129)}},
		{"pluginName": "ok", "expectedToolNames": make([]string, maxExpectedTools+1)},
		{"pluginName": "ok", "expectedState": "gone"},
	} {
		args["action"] = "diagnose_plugin_mcp"
		s.WantErr(t, "extension", args, failure.InvalidArguments)
	}
	if reads != 0 {
		t.Fatalf("%d workspace reads for refused calls", reads)
	}
}
