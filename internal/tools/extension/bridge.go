package extension

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// minVersion is the first SiYuan with an MCP endpoint.
const minVersion = "3.7.0"

// discoveryTimeout bounds one discovery (version, server/discover,
// tools/list).
const discoveryTimeout = 15 * time.Second

// selfPrefix names the upstream Sisyphus plugin's own tools: forwarding
// them would loop back into a second Sisyphus.
const selfPrefix = "plugin__siyuan_plugins_mcp_sisyphus__"

// reserved are the extension tool's own action names: a discovered tool
// with one of them is reported, never exposed.
var reserved = map[string]bool{"help": true, "list": true, "validate_package": true, "diagnose_plugin_mcp": true}

// entry is one discovered tool and what Sisyphus makes of it.
type entry struct {
	tool     siyuan.MCPTool
	source   string          // "native" or "plugin"
	schema   json.RawMessage // its input schema, an object schema
	degraded bool            // the schema it sent was not an object schema
	read     bool            // forwarded as a read (else an external effect)
	// exposable: a call may be forwarded under some configuration (plugin
	// tools; allowlisted native ones that can be read).
	exposable bool
	action    *tools.Action // nil unless exposable
}

// snapshot is the last discovery.
type snapshot struct {
	attempted, refreshed time.Time
	siyuanVersion        string
	server               siyuan.MCPServer
	entries              []*entry // by name
	err                  error    // the last discovery's failure, if it failed
}

// bridge is the extension tool's state in one registry: the discovery
// cache, shared by its calls.
type bridge struct {
	mu   sync.Mutex // guards snap
	snap snapshot
	// discover serialises discoveries: calls that find a name unknown at
	// once wait for one refresh instead of each sending their own.
	discover sync.Mutex
}

func (b *bridge) current() snapshot {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.snap
}

func (b *bridge) find(name string) (*entry, bool) {
	s := b.current()
	i, ok := slices.BinarySearchFunc(s.entries, name, func(e *entry, n string) int {
		switch {
		case e.tool.Name < n:
			return -1
		case e.tool.Name > n:
			return 1
		}
		return 0
	})
	if !ok {
		return nil, false
	}
	return s.entries[i], true
}

// refresh discovers the endpoint's tools again. A failure keeps no tools
// (a stale list could forward to a tool that is gone) and is returned.
func (b *bridge) refresh(ctx context.Context, env *tools.Env) (snapshot, error) {
	return b.refreshSince(ctx, env, time.Time{})
}

// refreshSince is refresh, unless a discovery that ended after since
// succeeded while this one waited for its turn: calls that miss the cache
// while one runs share it. (A tool registered while that discovery ran
// may be missing from it; list with refresh:true finds it.)
func (b *bridge) refreshSince(ctx context.Context, env *tools.Env, since time.Time) (snapshot, error) {
	b.discover.Lock()
	defer b.discover.Unlock()
	if s := b.current(); !since.IsZero() && s.err == nil && s.refreshed.After(since) {
		return s, nil
	}
	ctx, cancel := context.WithTimeout(ctx, discoveryTimeout)
	defer cancel()
	next := snapshot{attempted: time.Now()}
	entries, err := b.discoverOnce(ctx, env, &next)
	if err != nil {
		next.err = err
	} else {
		next.entries = entries
		next.refreshed = time.Now()
	}
	b.mu.Lock()
	b.snap = next
	b.mu.Unlock()
	return next, err
}

func (b *bridge) discoverOnce(ctx context.Context, env *tools.Env, next *snapshot) ([]*entry, error) {
	if env == nil || env.Kernel == nil {
		return nil, failure.New(failure.ExtensionUnavailable, "this process has no SiYuan kernel to discover tools on; nothing was sent").Attempted(false)
	}
	v, err := env.Kernel.Version(ctx)
	if err != nil {
		return nil, tools.KernelError(err)
	}
	next.siyuanVersion = v
	if !supports(v) {
		e := failure.New(failure.ExtensionUnsupported, "SiYuan %s has no MCP endpoint: extension needs SiYuan %s or newer; nothing was sent", v, minVersion).
			With("siyuanVersion", v).With("minSupportedVersion", minVersion)
		return nil, e.Attempted(false)
	}
	srv, err := env.Kernel.MCPDiscover(ctx)
	if err != nil {
		return nil, unavailable(err)
	}
	if !srv.Speaks() {
		return nil, failure.New(failure.ExtensionUnavailable, "SiYuan's MCP endpoint does not serve revision %s (it answered %q %v); nothing was forwarded",
			siyuan.MCPProtocolVersion, srv.ProtocolVersion, srv.SupportedVersions).Attempted(false)
	}
	next.server = srv
	listed, err := env.Kernel.MCPListTools(ctx)
	if err != nil {
		return nil, unavailable(err)
	}
	return b.select_(listed), nil
}

// unavailable is a failed discovery as the agent sees it.
func unavailable(err error) error {
	var auth *siyuan.AuthError
	if errors.As(err, &auth) {
		return tools.KernelError(err)
	}
	return failure.Wrap(failure.ExtensionUnavailable, err, "SiYuan's MCP endpoint did not answer the discovery (%s); nothing was forwarded",
		tools.KernelError(err).Message).Attempted(false)
}

// select_ keeps the tools Sisyphus knows how to treat, sorted by name: a
// missing source is native (SiYuan's own default), tools of MCP servers
// SiYuan connects to (source "mcp") and the upstream plugin's own are left
// out, and a later duplicate name replaces an earlier one.
func (b *bridge) select_(listed []siyuan.MCPTool) []*entry {
	byName := map[string]*entry{}
	for _, t := range listed {
		src := t.Source
		if src == "" {
			src = "native"
		}
		if t.Name == "" || src != "native" && src != "plugin" || len(t.Name) >= len(selfPrefix) && t.Name[:len(selfPrefix)] == selfPrefix {
			continue
		}
		e := &entry{tool: t, source: src}
		e.schema, e.degraded = objectSchema(t.InputSchema)
		switch {
		case reserved[t.Name]:
		case src == "plugin":
			e.exposable, e.read = true, t.ReadOnlyHint
		default:
			p := policyOf(t.Name)
			// An actionless native tool is read only when SiYuan says so
			// (3.7.3 says it of none, so web_fetch and web_search stay
			// hidden there).
			e.exposable = p.listed && (!p.actionless || t.ReadOnlyHint)
			e.read = true
		}
		if e.exposable {
			e.action = forwardAction(b, e)
		}
		byName[t.Name] = e
	}
	out := make([]*entry, 0, len(byName))
	for _, e := range byName {
		out = append(out, e)
	}
	slices.SortFunc(out, func(x, y *entry) int {
		switch {
		case x.tool.Name < y.tool.Name:
			return -1
		case x.tool.Name > y.tool.Name:
			return 1
		}
		return 0
	})
	return out
}

// objectSchema returns the schema as an object schema, or a generic one
// (degraded) when what the tool sent is not one.
func objectSchema(raw json.RawMessage) (json.RawMessage, bool) {
	generic := json.RawMessage(`{"type":"object","additionalProperties":true}`)
	var s map[string]any
	if json.Unmarshal(raw, &s) != nil || s == nil {
		return generic, true
	}
	typ, hasType := s["type"]
	_, props := s["properties"].(map[string]any)
	composed := s["oneOf"] != nil || s["anyOf"] != nil || s["allOf"] != nil || s["$ref"] != nil
	switch {
	case hasType && typ != "object":
		return generic, true
	case !hasType && !composed && !props:
		return generic, true
	}
	return raw, false
}

// exposed reports whether the policy shows a discovered tool: a plugin
// tool unless blocked; a native one only with includeNativeTools.
func (e *entry) exposed(p *tools.Policy) bool {
	if !e.exposable || slices.Contains(p.Extension.Blocked, e.tool.Name) {
		return false
	}
	return e.source == "plugin" || p.Extension.NativeTools
}

var versionRE = regexp.MustCompile(`^v?(\d+)\.(\d+)\.(\d+)`)

// supports reports whether a SiYuan version has the MCP endpoint; a version
// that does not parse has not.
func supports(v string) bool {
	m := versionRE.FindStringSubmatch(v)
	if m == nil {
		return false
	}
	have := [3]int{}
	for i := range have {
		have[i], _ = strconv.Atoi(m[i+1])
	}
	want := [3]int{3, 7, 0}
	for i := range have {
		if have[i] != want[i] {
			return have[i] > want[i]
		}
	}
	return true
}

// Actions, Exposes, Cached and Lookup make the bridge the tool's
// tools.Dynamic.

func (b *bridge) Actions(p *tools.Policy) []*tools.Action {
	var out []*tools.Action
	for _, e := range b.current().entries {
		if e.exposed(p) {
			out = append(out, e.action)
		}
	}
	return out
}

func (b *bridge) Exposes(p *tools.Policy, a *tools.Action) bool {
	e, ok := b.find(a.Name)
	return ok && e.action == a && e.exposed(p)
}

func (b *bridge) Cached(name string) (*tools.Action, bool) {
	e, ok := b.find(name)
	if !ok || e.action == nil {
		return nil, false
	}
	return e.action, true
}

func (b *bridge) Lookup(ctx context.Context, env *tools.Env, name string) (*tools.Action, bool, error) {
	if e, ok := b.find(name); ok {
		// Known: exposable or not, another discovery would not change it.
		return e.action, e.action != nil, nil
	}
	if _, err := b.refreshSince(ctx, env, time.Now()); err != nil {
		return nil, false, err
	}
	a, ok := b.Cached(name)
	return a, ok, nil
}
