package extension

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/sisyphus-go/sisyphus/internal/failure"
)

// validate_package: a static check of a SiYuan package (plugin, theme or
// widget) whose manifest and text files the call carries inline, as upstream
// 0.6.8 takes them. Nothing is read from a disk, installed, enabled, loaded
// or called: the answer says what the content shows, and the lifecycle it
// cannot show stays "not observed".

// Bounds of a package's content. Upstream sets none; here the content is
// checked in memory by a server several agents share, so a call carrying
// more is refused before any check runs.
const (
	maxPackageFiles    = 64
	maxFileNameBytes   = 255
	maxPackageBytes    = 4 << 20 // all files' content together
	maxManifestBytes   = 64 << 10
	maxRuntimeValueLen = 64
	maxToolNames       = 200 // literal MCP tool names reported
)

// packageTypes are the kinds upstream validates, with the file each needs.
var packageTypes = map[string]string{"plugin": "index.js", "theme": "theme.css", "widget": "index.html"}

// runtimeDerived are the fields SiYuan adds to an installed package's
// metadata: an author who writes them writes nothing SiYuan keeps.
var runtimeDerived = []string{"enabled", "installed", "outdated", "current", "disallowInstall", "disallowUpdate",
	"installedIncompatible", "bazaarIncompatible", "updateRequiredMinAppVer"}

// pkgInput is a validate_package call's content once its shape is checked.
type pkgInput struct {
	Type     string
	Manifest map[string]any
	Files    map[string]string
	Runtime  runtimeInfo
}

// runtimeInfo is the SiYuan the package is judged for; "" is not checked.
type runtimeInfo struct{ AppVersion, Backend, Frontend string }

// parsePackage checks the shape of the package and runtime arguments: what
// upstream's input schema declares (type one of three, manifest an object,
// files an object of strings, no other keys) and, beyond it, file names that
// are plain relative paths and this server's size bounds. Anything else is
// refused, naming the field; what the content says is for validatePackage.
func parsePackage(pkg, runtime map[string]any) (pkgInput, error) {
	var in pkgInput
	for k := range pkg {
		if k != "type" && k != "manifest" && k != "files" {
			return in, failure.Invalid("package.%s is not a package field: package takes type, manifest and files (the content inline; no path is read)", clip(k, 64))
		}
	}
	typ, _ := pkg["type"].(string)
	if _, ok := packageTypes[typ]; !ok {
		return in, failure.Invalid("package.type must be plugin, theme or widget")
	}
	in.Type = typ
	manifest, ok := pkg["manifest"].(map[string]any)
	if !ok {
		return in, failure.Invalid("package.manifest must be the package's manifest as a JSON object (plugin.json, theme.json or widget.json); no path is read")
	}
	if b, err := json.Marshal(manifest); err != nil || len(b) > maxManifestBytes {
		return in, failure.Invalid("package.manifest is larger than %d bytes", maxManifestBytes)
	}
	in.Manifest = manifest
	files, ok := pkg["files"].(map[string]any)
	if !ok {
		return in, failure.Invalid("package.files must be an object of relative file names to their text")
	}
	if len(files) > maxPackageFiles {
		return in, failure.Invalid("package.files has %d files; at most %d are checked (give only the files that matter: index.js, kernel.js, theme.css, index.html)",
			len(files), maxPackageFiles)
	}
	in.Files = make(map[string]string, len(files))
	total := 0
	for name, v := range files {
		if why := unsafeFileName(name); why != "" {
			return in, failure.Invalid("package.files name %q %s: file names are relative paths inside the package", clip(name, 80), why)
		}
		text, ok := v.(string)
		if !ok {
			return in, failure.Invalid("package.files.%s must be the file's text (a string)", name)
		}
		if total += len(text); total > maxPackageBytes {
			return in, failure.Invalid("package.files hold more than %d bytes of text", maxPackageBytes)
		}
		in.Files[name] = text
	}
	for k, v := range runtime {
		var dst *string
		switch k {
		case "appVersion":
			dst = &in.Runtime.AppVersion
		case "backend":
			dst = &in.Runtime.Backend
		case "frontend":
			dst = &in.Runtime.Frontend
		default:
			return in, failure.Invalid("runtime.%s is not a runtime field: runtime takes appVersion, backend and frontend", clip(k, 64))
		}
		s, ok := v.(string)
		if !ok {
			return in, failure.Invalid("runtime.%s must be a string", k)
		}
		if s = strings.TrimSpace(s); len(s) > maxRuntimeValueLen {
			return in, failure.Invalid("runtime.%s is longer than %d characters", k, maxRuntimeValueLen)
		}
		*dst = s
	}
	return in, nil
}

var driveLetter = regexp.MustCompile(`^[A-Za-z]:`)

// unsafeFileName says why a package file name is not a plain relative path
// ("" when it is). The name is never opened; a name that could leave a
// package directory is refused all the same, so that what passes here is
// what an installer may safely write.
func unsafeFileName(name string) string {
	switch {
	case name == "":
		return "is empty"
	case len(name) > maxFileNameBytes:
		return fmt.Sprintf("is longer than %d bytes", maxFileNameBytes)
	case !utf8.ValidString(name):
		return "is not UTF-8"
	case strings.HasPrefix(name, "/") || driveLetter.MatchString(name):
		return "is absolute"
	case strings.ContainsRune(name, '\\'):
		return "has a backslash"
	case strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return "has a control character"
	}
	for _, seg := range strings.Split(name, "/") {
		switch seg {
		case "":
			return "has an empty path segment"
		case ".", "..":
			return "has a . or .. segment"
		}
	}
	return ""
}

// issue is one finding: an error makes the package invalid, a warning does
// not.
type issue struct {
	Severity string `json:"severity"` // error or warning
	Code     string `json:"code"`
	Field    string `json:"field"`
	Message  string `json:"message"`
}

// pkgReport is validate_package's answer, upstream's fields first.
type pkgReport struct {
	Kind               string            `json:"kind"`
	PackageType        string            `json:"packageType"`
	StaticPackage      string            `json:"staticPackage"` // valid or invalid
	Issues             []issue           `json:"issues"`
	Summary            map[string]int    `json:"summary"`
	PackageIdentity    map[string]string `json:"packageIdentity,omitempty"`
	Compatibility      map[string]string `json:"compatibility"`
	ExecutableSurfaces []string          `json:"executableSurfaces"`
	Lifecycle          map[string]string `json:"lifecycle"`
	StaticSignals      *staticSignals    `json:"staticSignals,omitempty"`
	Limitations        []string          `json:"limitations"`
}

type staticSignals struct {
	FrontendOnUnload             string `json:"frontendOnUnload"`
	KernelMCPRegistrationCalls   int    `json:"kernelMcpRegistrationCalls"`
	KernelMCPUnregistrationCalls int    `json:"kernelMcpUnregistrationCalls"`
	// MCPTools are the tools kernel.js registers under a literal name, as
	// SiYuan will name them.
	MCPTools []mcpToolName `json:"mcpTools"`
}

type mcpToolName struct {
	LocalName     string `json:"localName"`
	QualifiedName string `json:"qualifiedName"`
}

// checker collects findings.
type checker struct{ issues []issue }

func (c *checker) add(sev, code, field, format string, a ...any) {
	c.issues = append(c.issues, issue{Severity: sev, Code: code, Field: field, Message: fmt.Sprintf(format, a...)})
}

var (
	semverRE    = regexp.MustCompile(`^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$`)
	safeNameRE  = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
	onunloadRE  = regexp.MustCompile(`\bonunload\s*\(`)
	pluginAPIRE = regexp.MustCompile(`extends\s+Plugin|require\s*\(\s*["']siyuan["']\s*\)`)
	// registerRE finds siyuan.mcp.registerTool calls and, when the first
	// argument is a string literal, the tool's name (SiYuan 3.7's
	// registerTool(name, config, handler)).
	registerRE   = regexp.MustCompile("siyuan\\s*\\.\\s*mcp\\s*\\.\\s*registerTool\\s*\\(\\s*(?:\"([^\"\\\\\\r\\n]{0,300})\"|'([^'\\\\\\r\\n]{0,300})'|`([^`\\\\$]{0,300})`)?")
	unregisterRE = regexp.MustCompile(`siyuan\s*\.\s*mcp\s*\.\s*unregisterTool\s*\(`)
)

// validatePackage checks a package's content as upstream 0.6.8 does, and
// the MCP tool names its kernel.js registers under literal names.
func validatePackage(in pkgInput) *pkgReport {
	c := &checker{}
	r := &pkgReport{Kind: "static_extension_package_validation", PackageType: in.Type, ExecutableSurfaces: []string{},
		Compatibility: map[string]string{"minAppVersion": "not_checked", "backend": "not_checked", "frontend": "not_checked", "kernel": "not_applicable"}}
	if in.Type == "plugin" {
		r.Compatibility["kernel"] = "not_checked"
	}
	m := in.Manifest
	name := ""
	if s, ok := m["name"].(string); !ok || strings.TrimSpace(s) == "" {
		c.add("error", "name_missing", "package.manifest.name", "name is required and must be a non-empty string")
	} else {
		name = strings.TrimSpace(s)
		r.PackageIdentity = map[string]string{"manifestName": name}
		if in.Type == "plugin" {
			r.PackageIdentity["pluginMcpPrefix"] = "plugin__" + sanitizeName(name) + "__"
		}
		switch {
		case strings.ContainsAny(name, "/\\\x00"):
			c.add("error", "name_path_separator", "package.manifest.name", "name must not contain a path separator or NUL")
		case name == "." || name == "..":
			c.add("error", "name_path_separator", "package.manifest.name", "name must not be . or ..")
		case !safeNameRE.MatchString(name):
			c.add("warning", "name_sanitized", "package.manifest.name", "name has characters SiYuan replaces with _ in plugin MCP tool names")
		}
		if in.Type == "plugin" && "plugin__"+sanitizeName(name)+"__" == selfPrefix {
			c.add("warning", "name_reserved_namespace", "package.manifest.name",
				"this is the upstream Sisyphus plugin's namespace: extension never forwards its MCP tools")
		}
	}
	for _, f := range []string{"author", "url", "version", "minAppVersion"} {
		if v, ok := m[f]; ok {
			if _, isString := v.(string); !isString {
				c.add("error", "field_type", "package.manifest."+f, "%s must be a string", f)
			}
		} else if f != "minAppVersion" {
			c.add("warning", "field_absent", "package.manifest."+f, "%s is absent", f)
		}
	}
	if v, _ := m["version"].(string); v != "" && !semverRE.MatchString(strings.TrimSpace(v)) {
		c.add("warning", "version_not_semver", "package.manifest.version", "version is not semver-like")
	}
	c.minAppVersion(m, in.Runtime, r.Compatibility)
	for _, f := range []string{"displayName", "description", "readme"} {
		c.localeMap(m, f)
	}
	c.stringArray(m, "keywords")
	backends, frontends := c.stringArray(m, "backends"), c.stringArray(m, "frontends")
	kernels, modes := c.stringArray(m, "kernels"), c.stringArray(m, "modes")
	r.Compatibility["backend"] = targetCompat(backends, in.Runtime.Backend, false)
	r.Compatibility["frontend"] = targetCompat(frontends, in.Runtime.Frontend, false)
	if r.Compatibility["backend"] == "incompatible" {
		c.add("warning", "backend_incompatible", "package.manifest.backends", "backends does not include runtime.backend %q or \"all\"", in.Runtime.Backend)
	}
	if r.Compatibility["frontend"] == "incompatible" {
		c.add("warning", "frontend_incompatible", "package.manifest.frontends", "frontends does not include runtime.frontend %q or \"all\"", in.Runtime.Frontend)
	}
	for _, f := range runtimeDerived {
		if _, ok := m[f]; ok {
			c.add("warning", "runtime_derived_field", "package.manifest."+f, "%s is set by SiYuan at runtime and should not be written in the manifest", f)
		}
	}
	if in.Type == "theme" {
		if !slices.Contains(modes, "light") && !slices.Contains(modes, "dark") {
			c.add("error", "theme_mode_missing", "package.manifest.modes", "a theme must declare at least one usable mode: light or dark")
		}
		for _, mode := range modes {
			if mode != "light" && mode != "dark" {
				c.add("warning", "theme_mode_unknown", "package.manifest.modes", "unknown theme mode %q: SiYuan knows light and dark", clip(mode, 40))
			}
		}
	}
	_, hasKernel := in.Files["kernel.js"]
	if in.Type == "plugin" && hasKernel {
		r.Compatibility["kernel"] = targetCompat(kernels, in.Runtime.Backend, true)
		switch {
		case len(kernels) == 0:
			r.Compatibility["kernel"] = "incompatible"
			c.add("warning", "kernels_empty", "package.manifest.kernels", "kernel.js is present but kernels is empty: SiYuan will not run the kernel plugin")
		case r.Compatibility["kernel"] == "incompatible":
			c.add("warning", "kernel_incompatible", "package.manifest.kernels", "kernels does not include runtime.backend %q or \"all\"", in.Runtime.Backend)
		}
	}
	need := packageTypes[in.Type]
	if text, ok := in.Files[need]; !ok {
		c.add("error", "required_file_missing", "package.files."+need, "%s is required for a usable %s package", need, in.Type)
	} else if strings.TrimSpace(text) == "" {
		c.add("warning", "required_file_empty", "package.files."+need, "%s is present but empty", need)
	}
	switch in.Type {
	case "theme":
		if _, ok := in.Files["theme.js"]; ok {
			r.ExecutableSurfaces = append(r.ExecutableSurfaces, "theme.js")
		}
	case "widget":
		r.ExecutableSurfaces = append(r.ExecutableSurfaces, "widget package (same-origin authenticated application)")
	case "plugin":
		r.StaticSignals = c.pluginSignals(in, name, r)
	}
	r.Issues = c.issues
	if r.Issues == nil {
		r.Issues = []issue{}
	}
	errs := 0
	for _, is := range r.Issues {
		if is.Severity == "error" {
			errs++
		}
	}
	r.Summary = map[string]int{"errors": errs, "warnings": len(r.Issues) - errs}
	r.StaticPackage = "valid"
	if errs > 0 {
		r.StaticPackage = "invalid"
	}
	trust := "not_applicable"
	if len(r.ExecutableSurfaces) > 0 {
		trust = "required"
	}
	r.Lifecycle = map[string]string{"trustReview": trust, "frontendPluginLoaded": "not_observed", "kernelPluginRunning": "not_observed",
		"mcpToolRegistration": "not_observed", "mcpToolUnregistration": "not_observed", "reload": "not_triggered", "functionAfterReload": "not_verified"}
	r.Limitations = []string{
		"Only the manifest and file text given in this call were checked, in memory: no path was read, nothing was installed, trusted, enabled or reloaded.",
		"A valid package is not shown to be trustworthy, installed, loaded, running or registered, nor its tools to work.",
		"After a separate install or enable, diagnose_plugin_mcp reads back which of its MCP tools SiYuan registers and whether extension exposes them.",
	}
	return r
}

// pluginSignals are a plugin's executable surfaces and what its code shows
// of its lifecycle and MCP tools.
func (c *checker) pluginSignals(in pkgInput, name string, r *pkgReport) *staticSignals {
	index, hasIndex := in.Files["index.js"]
	kernel, hasKernel := in.Files["kernel.js"]
	if hasIndex {
		r.ExecutableSurfaces = append(r.ExecutableSurfaces, "index.js")
	}
	if hasKernel {
		r.ExecutableSurfaces = append(r.ExecutableSurfaces, "kernel.js")
	}
	s := &staticSignals{FrontendOnUnload: "not_applicable", MCPTools: []mcpToolName{},
		KernelMCPUnregistrationCalls: len(unregisterRE.FindAllStringIndex(kernel, -1))}
	if index != "" {
		s.FrontendOnUnload = "not_detected"
		if onunloadRE.MatchString(index) {
			s.FrontendOnUnload = "detected"
		}
		if !pluginAPIRE.MatchString(index) {
			c.add("warning", "plugin_api_not_visible", "package.files.index.js",
				"index.js does not visibly extend or require SiYuan's Plugin API (a bundle may still be valid)")
		}
	}
	seen := map[string]string{}
	for _, m := range registerRE.FindAllStringSubmatchIndex(kernel, -1) {
		s.KernelMCPRegistrationCalls++
		local, literal := "", false
		for g := 1; g <= 3; g++ {
			if m[2*g] >= 0 {
				local, literal = kernel[m[2*g]:m[2*g+1]], true
			}
		}
		if !literal || len(s.MCPTools) >= maxToolNames {
			continue
		}
		q := "plugin__" + sanitizeName(name) + "__" + sanitizeName(local)
		field := "package.files.kernel.js"
		switch prev, dup := seen[q]; {
		case local == "":
			c.add("warning", "mcp_tool_name_empty", field, "a tool is registered with an empty name")
		case dup && prev == local:
			c.add("warning", "mcp_tool_name_duplicate", field, "tool %q is registered more than once: the last registration wins", clip(local, 80))
		case dup:
			c.add("warning", "mcp_tool_name_collision", field, "tools %q and %q both become %s in SiYuan", clip(prev, 80), clip(local, 80), clip(q, 200))
		case local != sanitizeName(local):
			c.add("warning", "mcp_tool_name_sanitized", field, "tool %q is named %s in SiYuan: its characters other than letters and digits become _", clip(local, 80), clip(q, 200))
		}
		if _, dup := seen[q]; dup {
			continue
		}
		if len(q) > 128 {
			c.add("warning", "mcp_tool_name_long", field, "%s is longer than the 128 characters MCP clients are asked to accept", clip(q, 200))
		}
		seen[q] = local
		s.MCPTools = append(s.MCPTools, mcpToolName{LocalName: local, QualifiedName: q})
	}
	if s.KernelMCPRegistrationCalls > 0 && s.KernelMCPUnregistrationCalls == 0 {
		c.add("warning", "mcp_unregister_missing", "package.files.kernel.js",
			"kernel.js registers MCP tools but never calls unregisterTool: stopping the kernel plugin may still clear them; read the registry back after a disable or reload")
	}
	return s
}

// minAppVersion checks minAppVersion, and against runtime.appVersion when
// given.
func (c *checker) minAppVersion(m map[string]any, rt runtimeInfo, compat map[string]string) {
	minVer, _ := m["minAppVersion"].(string)
	minVer = strings.TrimSpace(minVer)
	if minVer == "" {
		if rt.AppVersion != "" {
			compat["minAppVersion"] = "compatible"
		}
		return
	}
	want, ok := parseSemver(minVer)
	if !ok {
		compat["minAppVersion"] = "invalid"
		c.add("warning", "min_app_version_invalid", "package.manifest.minAppVersion", "minAppVersion is not semver-like, so compatibility cannot be checked")
		return
	}
	if rt.AppVersion == "" {
		return
	}
	have, ok := parseSemver(rt.AppVersion)
	switch {
	case !ok:
		c.add("warning", "runtime_app_version_invalid", "runtime.appVersion", "appVersion is not semver-like, so minAppVersion cannot be checked")
	case compareSemver(want, have) > 0:
		compat["minAppVersion"] = "incompatible"
		c.add("error", "min_app_version_newer", "package.manifest.minAppVersion", "minAppVersion %s is newer than runtime.appVersion %s", clip(minVer, 40), rt.AppVersion)
	default:
		compat["minAppVersion"] = "compatible"
	}
}

// localeMap checks a field SiYuan reads as {locale: text}.
func (c *checker) localeMap(m map[string]any, f string) {
	v, ok := m[f]
	if !ok {
		if f != "readme" {
			c.add("warning", "locale_map_absent", "package.manifest."+f, "%s is absent: a locale map with a default value helps people find the package", f)
		}
		return
	}
	lm, isMap := v.(map[string]any)
	nonEmpty := false
	for k, x := range lm {
		s, isString := x.(string)
		if k == "" || !isString {
			isMap = false
			break
		}
		nonEmpty = nonEmpty || strings.TrimSpace(s) != ""
	}
	switch {
	case !isMap:
		c.add("error", "locale_map_invalid", "package.manifest."+f, "%s must be a locale map of strings, such as {\"default\":\"...\"}", f)
	case !nonEmpty:
		c.add("warning", "locale_map_empty", "package.manifest."+f, "%s has no non-empty text", f)
	}
}

// stringArray is a manifest field that must be a list of strings, trimmed
// and without the empty ones.
func (c *checker) stringArray(m map[string]any, f string) []string {
	v, ok := m[f]
	if !ok {
		return nil
	}
	list, isList := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		s, isString := x.(string)
		if !isString {
			isList = false
			break
		}
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	if !isList {
		c.add("error", "string_array_invalid", "package.manifest."+f, "%s must be a list of strings", f)
		return nil
	}
	return out
}

// targetCompat is whether a list of backends, frontends or kernels admits
// the runtime's target. An empty list admits every backend or frontend,
// and no kernel.
func targetCompat(values []string, target string, kernel bool) string {
	switch {
	case target == "":
		return "not_checked"
	case len(values) == 0 && !kernel:
		return "compatible"
	case slices.Contains(values, "all") || slices.Contains(values, target):
		return "compatible"
	}
	return "incompatible"
}

// sanitizeName is SiYuan's rule for the parts of a plugin MCP tool's
// name: every character but an ASCII letter or digit becomes _.
func sanitizeName(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x80 && (r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// semver is a parsed version: the core numbers as digit strings (so that
// no number overflows) and the prerelease identifiers.
type semver struct {
	core [3]string
	pre  []string
}

func parseSemver(s string) (semver, bool) {
	m := semverRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return semver{}, false
	}
	v := semver{core: [3]string{m[1], m[2], m[3]}}
	if m[4] != "" {
		v.pre = strings.Split(m[4], ".")
	}
	return v, true
}

// compareSemver orders versions as semver does: the core numerically, then
// a release after its prereleases, then the prerelease identifiers.
func compareSemver(a, b semver) int {
	for i := range a.core {
		if c := compareDigits(a.core[i], b.core[i]); c != 0 {
			return c
		}
	}
	switch {
	case len(a.pre) == 0 && len(b.pre) == 0:
		return 0
	case len(a.pre) == 0:
		return 1
	case len(b.pre) == 0:
		return -1
	}
	for i := 0; i < len(a.pre) || i < len(b.pre); i++ {
		if i >= len(a.pre) {
			return -1
		}
		if i >= len(b.pre) {
			return 1
		}
		x, y := a.pre[i], b.pre[i]
		xn, yn := isDigits(x), isDigits(y)
		var c int
		switch {
		case xn && yn:
			c = compareDigits(x, y)
		case xn:
			c = -1
		case yn:
			c = 1
		default:
			c = strings.Compare(x, y)
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// compareDigits compares two decimal numbers written as digits.
func compareDigits(a, b string) int {
	a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if len(a) != len(b) {
		if len(a) < len(b) {
			return -1
		}
		return 1
	}
	return strings.Compare(a, b)
}
