package extension

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// diagnose_plugin_mcp: why one plugin's MCP tools are, or are not, extension
// actions here. It reads what SiYuan already holds (the plugin's folder in
// data/plugins, petals.json, where SiYuan records which plugins are
// enabled), discovers the MCP endpoint's tools again (tools/list, a read
// of SiYuan's registry, as upstream 0.6.8 does so that a stale cache is
// never taken for a fresh observation) and Sisyphus's own settings. It
// never calls a plugin or a tool, installs, enables, disables or reloads
// anything.

// Where SiYuan keeps plugins and which of them are enabled, relative to
// the workspace.
const (
	pluginsDir = "/data/plugins"
	petalsFile = "/data/storage/petal/petals.json"
	// maxPetalsBytes bounds the read of petals.json (a few bytes per
	// installed plugin).
	maxPetalsBytes = 1 << 20
	// maxExpectedTools bounds expectedToolNames.
	maxExpectedTools = 64
)

// expectedState is what expectedToolNames should be in the registry.
type expectedState string

func (expectedState) ArgEnum() []string { return []string{"present", "absent"} }

type diagnoseArgs struct {
	PluginName string `arg:"pluginName" help:"the plugin's package name (its folder in data/plugins and its manifest name; letters, digits, '.', '_', '-', at most 128; upstream takes any name, but here it names a workspace folder). SiYuan names its MCP tools plugin__<name>__<tool>, each character other than a letter or digit of both names turned into _" required:""`
	// Upstream's names: the tools' local names, as the plugin registers
	// them.
	ExpectedToolNames []string      `arg:"expectedToolNames" help:"the plugin's own tool names (as its kernel.js registers them, without the plugin__<name>__ prefix) to check in the fresh registry (at most 64)"`
	ExpectedState     expectedState `arg:"expectedState" help:"whether expectedToolNames should be present or absent in the fresh registry" default:"present"`
}

// packageName is an installed package's folder name: no path in it.
var packageName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

func validateDiagnose(a *diagnoseArgs) error {
	a.PluginName = strings.TrimSpace(a.PluginName)
	if !packageName.MatchString(a.PluginName) || strings.Contains(a.PluginName, "..") {
		return failure.Invalid("pluginName %q is not a plugin package name (letters, digits, '.', '_', '-', starting with a letter or digit; at most 128; no path)",
			clip(a.PluginName, 140))
	}
	if len(a.ExpectedToolNames) > maxExpectedTools {
		return failure.Invalid("expectedToolNames has %d names; at most %d", len(a.ExpectedToolNames), maxExpectedTools)
	}
	for i, n := range a.ExpectedToolNames {
		n = strings.TrimSpace(n)
		switch {
		case n == "":
			return failure.Invalid("expectedToolNames[%d] is empty: give the plugin's own tool names", i)
		case len(n) > 128 || strings.ContainsFunc(n, func(r rune) bool { return r < 0x20 || r == 0x7f }):
			return failure.Invalid("expectedToolNames[%d] is not a tool name (at most 128 characters, no control characters)", i)
		}
		a.ExpectedToolNames[i] = n
	}
	return nil
}

func (b *bridge) diagnoseAction() *tools.Action {
	return tools.Read[diagnoseArgs]{
		Name: "diagnose_plugin_mcp",
		Summary: "why one plugin's MCP tools are or are not extension actions: installed, enabled, a kernel plugin, registered in a fresh " +
			"tools/list, blocked, callable, name collisions; optionally checks expected tool names present or absent. Calls no plugin or tool, changes nothing",
		Example: map[string]any{"pluginName": "sisyphus-example", "expectedToolNames": []string{"word_count"}, "expectedState": "present"},
		// It names plugins, not notes, and shows the configuration's
		// blocked tools: a configuration that cannot be read refuses it.
		Scope:    tools.Scope[diagnoseArgs]{Global: true},
		Validate: validateDiagnose,
		Run:      b.diagnose,
	}.Action()
}

// workspace is what SiYuan's workspace holds of the plugin.
type workspace struct {
	Installed   bool     `json:"installed"`
	Enabled     bool     `json:"enabled"`
	HasIndexJS  bool     `json:"hasIndexJs"`
	HasKernelJS bool     `json:"hasKernelJs"`
	Manifest    any      `json:"manifest,omitempty"`
	SameToolNS  []string `json:"sameToolNamespace"` // other installed plugins whose tools SiYuan names alike
	// longer are other installed plugins whose tool prefix starts with
	// this plugin's (plugin "a" and plugin "a__b"): their tools are not
	// this plugin's.
	longer []string
	// kernels is plugin.json's kernels: SiYuan runs kernel.js only on a
	// backend it lists (or "all").
	kernels []string
	notes   []string
}

// installed reads the plugin's folder, manifest and enabled state through
// SiYuan's file API.
func installed(ctx context.Context, env *tools.Env, name string) (workspace, error) {
	var w workspace
	entries, err := env.Kernel.ReadDir(ctx, pluginsDir)
	if err != nil && !errors.Is(err, siyuan.ErrFileNotFound) {
		return w, tools.KernelError(err)
	}
	prefix := "plugin__" + sanitizeName(name) + "__"
	w.SameToolNS = []string{}
	for _, e := range entries {
		if !e.IsDir && !e.IsSymlink {
			continue
		}
		other := "plugin__" + sanitizeName(e.Name) + "__"
		switch {
		case e.Name == name:
			w.Installed = true
		case other == prefix:
			w.SameToolNS = append(w.SameToolNS, e.Name)
		case strings.HasPrefix(other, prefix):
			w.longer = append(w.longer, other)
		}
	}
	if !w.Installed {
		return w, nil
	}
	files, err := env.Kernel.ReadDir(ctx, pluginsDir+"/"+name)
	if err != nil && !errors.Is(err, siyuan.ErrFileNotFound) {
		return w, tools.KernelError(err)
	}
	for _, f := range files {
		switch {
		case f.IsDir:
		case f.Name == "index.js":
			w.HasIndexJS = true
		case f.Name == "kernel.js":
			w.HasKernelJS = true
		}
	}
	if raw, ok, err := readSmall(ctx, env, pluginsDir+"/"+name+"/plugin.json", maxManifestBytes); err != nil {
		return w, err
	} else if ok {
		facts, notes := manifestFacts(raw, name)
		w.Manifest, w.notes = facts, notes
		w.kernels, _ = facts["kernels"].([]string)
	} else {
		w.notes = append(w.notes, "plugin.json is missing or larger than "+fmt.Sprint(maxManifestBytes)+" bytes: SiYuan does not load the plugin without a readable one")
	}
	raw, ok, err := readSmall(ctx, env, petalsFile, maxPetalsBytes)
	if err != nil {
		return w, err
	}
	if ok {
		var petals []struct {
			Name    string `json:"name"`
			Enabled bool   `json:"enabled"`
		}
		if json.Unmarshal(raw, &petals) == nil {
			for _, p := range petals {
				if p.Name == name {
					w.Enabled = p.Enabled
				}
			}
		}
	}
	return w, nil
}

// manifestFacts are what diagnose shows of plugin.json: the fields that
// decide whether SiYuan runs it as a kernel plugin.
func manifestFacts(raw []byte, folder string) (map[string]any, []string) {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return map[string]any{"parsable": false}, []string{"plugin.json is not a JSON object: SiYuan does not load the plugin"}
	}
	out := map[string]any{"parsable": true}
	var notes []string
	for _, f := range []string{"name", "version", "minAppVersion"} {
		if s, ok := m[f].(string); ok {
			out[f] = clip(s, 128)
		}
	}
	if n, _ := m["name"].(string); n != folder {
		notes = append(notes, fmt.Sprintf("plugin.json names %q, not its folder %q: SiYuan names the plugin's tools after its name", clip(n, 128), folder))
	}
	if ks, ok := m["kernels"].([]any); ok {
		var list []string
		for _, k := range ks {
			if s, ok := k.(string); ok && len(list) < 16 {
				list = append(list, clip(s, 32))
			}
		}
		out["kernels"] = list
	}
	return out, notes
}

// readSmall reads a workspace file of at most limit bytes; ok is false when
// it does not exist or is larger.
func readSmall(ctx context.Context, env *tools.Env, path string, limit int) ([]byte, bool, error) {
	rc, _, err := env.Kernel.GetFile(ctx, path)
	if errors.Is(err, siyuan.ErrFileNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, tools.KernelError(err)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, int64(limit)+1))
	if err != nil {
		return nil, false, tools.KernelError(err)
	}
	if len(data) > limit {
		return nil, false, nil
	}
	return data, true, nil
}

// check is one reason a plugin's tools are or are not shown.
type check struct {
	Check  string `json:"check"`
	Status string `json:"status"` // ok, problem, unknown or not_applicable
	Detail string `json:"detail"`
}

func (b *bridge) diagnose(ctx context.Context, env *tools.Env, a diagnoseArgs) (any, error) {
	p := tools.PolicyFrom(ctx)
	if p == nil {
		p = tools.Unrestricted()
	}
	w, err := installed(ctx, env, a.PluginName)
	if err != nil {
		return nil, err
	}
	snap, rerr := b.refresh(ctx, env)
	sanitized := sanitizeName(a.PluginName)
	prefix := "plugin__" + sanitized + "__"
	registry := map[string]any{"connected": rerr == nil, "supported": true, "siyuanVersion": snap.siyuanVersion,
		"lastAttemptAt": snap.attempted.UTC().Format(time.RFC3339)}
	if rerr == nil {
		registry["lastSuccessfulRefreshAt"] = snap.refreshed.UTC().Format(time.RFC3339)
	} else {
		fe := tools.KernelError(rerr)
		registry["error"], registry["errorCode"] = fe.Message, fe.Code
		registry["supported"] = fe.Code != failure.ExtensionUnsupported
	}
	// Only a successful discovery is evidence: a failed one keeps no tools.
	var mine []*entry
	for _, e := range snap.entries {
		if e.source != "plugin" || !strings.HasPrefix(e.tool.Name, prefix) {
			continue
		}
		if slices.ContainsFunc(w.longer, func(other string) bool { return strings.HasPrefix(e.tool.Name, other) }) {
			continue
		}
		mine = append(mine, e)
	}
	registered := make([]map[string]any, 0, len(mine))
	present := map[string]bool{}
	exposed, blocked := 0, []string{}
	for _, e := range mine {
		present[e.tool.Name] = true
		t := map[string]any{"name": e.tool.Name, "title": e.tool.Title, "description": clip(e.tool.Description, 300),
			"readOnlyHint": e.tool.ReadOnlyHint, "effectScope": e.tool.EffectScope, "schemaDegraded": e.degraded,
			"exposed": e.exposed(p), "blocked": slices.Contains(p.Extension.Blocked, e.tool.Name)}
		if e.action != nil {
			t["class"] = e.action.Policy.Class.String()
			t["requiresConfirmation"] = e.action.Dangerous
		}
		if reserved[e.tool.Name] {
			t["reservedActionConflict"] = true
		}
		if e.exposed(p) {
			exposed++
		}
		if t["blocked"] == true {
			blocked = append(blocked, e.tool.Name)
		}
		registered = append(registered, t)
	}
	out := map[string]any{
		"kind": "plugin_mcp_registry_observation", "observation": "completed", "registry": registry,
		"plugin": map[string]any{"manifestName": a.PluginName, "sanitizedName": sanitized, "toolPrefix": prefix, "source": "plugin",
			"registeredTools": registered},
		"workspace": w,
	}
	if rerr != nil {
		out["observation"] = "unavailable"
	}
	checks := diagnoseChecks(ctx, a, w, rerr, prefix, len(mine), exposed, blocked)
	out["checks"] = checks
	out["visible"] = exposed > 0
	// The verdict is the first problem, which decides; when tools are
	// exposed all the same (a plugin disabled but not yet unloaded), it
	// says both.
	verdict := ""
	if exposed > 0 {
		verdict = fmt.Sprintf("%d of its MCP tools are extension actions here", exposed)
	}
	for _, c := range checks {
		if c.Status != "problem" && c.Status != "unknown" {
			continue
		}
		if verdict != "" {
			verdict += "; but " + c.Detail
		} else {
			verdict = c.Detail
		}
		break
	}
	if verdict == "" {
		verdict = "no tool of the plugin is registered, and no check found why"
	}
	out["verdict"] = verdict
	if len(w.notes) > 0 {
		out["notes"] = w.notes
	}
	if len(a.ExpectedToolNames) > 0 {
		results := make([]map[string]any, 0, len(a.ExpectedToolNames))
		all := true
		for _, local := range a.ExpectedToolNames {
			q := prefix + sanitizeName(local)
			met := rerr == nil && present[q] == (a.ExpectedState == "present")
			all = all && met
			results = append(results, map[string]any{"localName": local, "qualifiedName": q, "observed": present[q], "expectationMet": met})
		}
		out["expectation"] = map[string]any{"expectedState": a.ExpectedState, "tools": results, "allMet": all}
	}
	running, registration, unregistration := "not_observed", "not_observed", "not_observed"
	if rerr == nil {
		registration = "observed_from_fresh_registry"
		if len(mine) > 0 {
			running = "inferred_from_registered_tool"
		}
		if a.ExpectedState == "absent" {
			unregistration = "registry_absence_observed_not_proven"
		}
	}
	out["lifecycle"] = map[string]string{"staticPackage": "not_observed", "trustGranted": "not_observed", "frontendPluginLoaded": "not_observed",
		"kernelPluginRunning": running, "mcpToolRegistration": registration, "mcpToolUnregistration": unregistration,
		"reload": "not_triggered", "functionAfterReload": "not_verified"}
	out["limitations"] = []string{
		"Read only: SiYuan's plugin folder and petals.json through its file API, a fresh tools/list of its MCP endpoint, and Sisyphus's settings. " +
			"No plugin or tool was called; nothing was installed, enabled, disabled or reloaded.",
		"A registered tool suggests its kernel plugin runs now; it does not show the frontend loaded or that the tool works.",
		"A tool missing from the registry was absent at this observation only: it does not show that a disable, unload or reload completed.",
	}
	return out, nil
}

// diagnoseChecks are the reasons, in the order they decide: the first
// problem is why the plugin's tools are not extension actions.
func diagnoseChecks(ctx context.Context, a diagnoseArgs, w workspace, rerr error, prefix string, registered, exposed int, blocked []string) []check {
	var cs []check
	add := func(name, status, format string, args ...any) {
		cs = append(cs, check{Check: name, Status: status, Detail: fmt.Sprintf(format, args...)})
	}
	switch {
	case prefix == selfPrefix:
		add("namespace", "problem", "%s is the upstream Sisyphus plugin: extension never forwards its own tools (they would loop back into Sisyphus)", a.PluginName)
	default:
		add("namespace", "ok", "its tools are named %s<tool>", prefix)
	}
	if w.Installed {
		add("installed", "ok", "data/plugins/%s exists", a.PluginName)
	} else {
		add("installed", "problem", "%s is not installed: SiYuan has no folder data/plugins/%s", a.PluginName, a.PluginName)
	}
	switch {
	case !w.Installed:
		add("enabled", "not_applicable", "not installed")
	case w.Enabled:
		add("enabled", "ok", "SiYuan records it enabled (petals.json)")
	default:
		add("enabled", "problem", "%s is installed but not enabled in SiYuan: a disabled plugin registers no MCP tools", a.PluginName)
	}
	switch {
	case !w.Installed:
		add("kernelPlugin", "not_applicable", "not installed")
	case w.HasKernelJS && len(w.kernels) == 0:
		add("kernelPlugin", "problem", "%s has a kernel.js but its plugin.json lists no kernels: SiYuan runs kernel.js only on a backend listed there (or \"all\")", a.PluginName)
	case w.HasKernelJS:
		add("kernelPlugin", "ok", "it has a kernel.js, where a plugin registers MCP tools (siyuan.mcp.registerTool, SiYuan 3.7+)")
	default:
		add("kernelPlugin", "problem", "%s has no kernel.js: only a kernel plugin registers MCP tools (SiYuan 3.7+)", a.PluginName)
	}
	switch {
	case rerr != nil:
		add("registered", "unknown", "SiYuan's MCP registry could not be read, so whether its tools are registered is unknown: %s", clip(tools.KernelError(rerr).Message, 300))
	case registered > 0:
		add("registered", "ok", "SiYuan's fresh registry lists %d of its tools", registered)
	case prefix == selfPrefix:
		add("registered", "not_applicable", "its tools are left out of discovery")
	default:
		add("registered", "problem", "SiYuan's fresh registry lists no tool named %s*: the plugin registers none while it runs, or it does not run", prefix)
	}
	switch {
	case registered == 0:
		add("exposed", "not_applicable", "no registered tool")
	case exposed == registered:
		add("exposed", "ok", "all %d are extension actions", exposed)
	case len(blocked) > 0:
		add("exposed", "problem", "blocked in Sisyphus's settings (extension.blockedTools): %s", strings.Join(blocked, ", "))
	default:
		add("exposed", "problem", "%d of %d are extension actions", exposed, registered)
	}
	if err := tools.RefuseWhileHidden(ctx, "a forwarded SiYuan tool"); err != nil {
		add("callable", "problem", "a notebook is hidden from agents, and every forwarded call is refused while one is")
	} else {
		add("callable", "ok", "a forwarded read needs every notebook readable; a tool without readOnlyHint needs rw on every notebook and a person's confirmation of each call")
	}
	if len(w.SameToolNS) > 0 {
		add("nameCollision", "problem", "installed plugins %s get the same tool prefix %s: their tools cannot be told apart", strings.Join(w.SameToolNS, ", "), prefix)
	} else {
		add("nameCollision", "ok", "no other installed plugin gets the prefix %s", prefix)
	}
	return cs
}
