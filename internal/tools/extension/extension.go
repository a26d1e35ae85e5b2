// Package extension is the extension tool: the bridge to SiYuan's own MCP
// endpoint (POST /mcp, SiYuan 3.7.0 and later). Its list action discovers
// the endpoint's tools; each one Sisyphus may forward becomes an action of
// its own, named as SiYuan names the tool, with the tool's arguments under
// "arguments" ({"action":"search","arguments":{"action":"fulltext",...}}).
//
// Tools of SiYuan plugins are exposed by default; SiYuan's native tools
// only with includeNativeTools, and then only upstream's read allowlist
// (search, ref, outline, history, repo, image, inbox with their reading
// sub-actions; web_fetch and web_search when SiYuan declares them
// read-only). A forwarded call is a read when the allowlist or the plugin's
// readOnlyHint says so; every other one is an external effect: validateOnly
// is refused (preflight_unavailable), a person confirms each call, it is
// sent once and never retried, and its answer says writeSafetyGuaranteed
// false. SiYuan's tools see the whole workspace, so a forwarded read needs
// every notebook readable and a forwarded tool with effects rw on every
// notebook; while a notebook is hidden from agents every forward is
// refused, without naming it.
//
// Two actions are Sisyphus's own diagnostics, never forwarded:
// validate_package checks a package given inline, and
// diagnose_plugin_mcp explains why one plugin's tools are or are not
// exposed here.
package extension

import (
	"context"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// Tool returns the extension tool, with its own discovery cache.
func Tool() *tools.Tool {
	b := &bridge{}
	return &tools.Tool{
		Name:  "extension",
		Title: "SiYuan MCP bridge",
		Description: "Bridge to the tools of SiYuan's own MCP endpoint (SiYuan 3.7.0+). Call {\"action\":\"list\"} to discover them; " +
			"each exposed tool is an action named as SiYuan names it, its own arguments under \"arguments\". " +
			"Plugin tools are exposed by default; native SiYuan tools only with includeNativeTools, and only a read allowlist. " +
			"A tool that does not declare readOnlyHint may change anything: a person confirms each call, it has no preflight, " +
			"is sent once and never retried, and answers writeSafetyGuaranteed:false. Forwarded reads need every notebook readable, " +
			"forwarded tools with effects rw on every notebook; none runs while a notebook is hidden. " +
			"validate_package (a package given inline) and diagnose_plugin_mcp (one plugin's tools) are read-only diagnostics: " +
			"neither reads a path of the host, installs, enables, reloads or calls anything.",
		Actions: []*tools.Action{b.listAction(), validatePkg.Action(), b.diagnoseAction()},
		Dynamic: b,
	}
}

type listArgs struct {
	Refresh bool `arg:"refresh" help:"discover again (checks SiYuan's version first), instead of answering from the cache"`
}

func (b *bridge) listAction() *tools.Action {
	return tools.Read[listArgs]{
		Name: "list", Summary: "discover the tools of SiYuan's MCP endpoint (cached; refresh:true discovers again) and which are exposed",
		Example: map[string]any{"refresh": true},
		// It names tools, not notes; a configuration that cannot be read
		// still refuses it.
		Scope: tools.Scope[listArgs]{Global: true},
		Run: func(ctx context.Context, env *tools.Env, a listArgs) (any, error) {
			s := b.current()
			if a.Refresh || s.attempted.IsZero() || s.err != nil {
				var err error
				if s, err = b.refresh(ctx, env); err != nil {
					return nil, err
				}
			}
			return b.describe(s, tools.PolicyFrom(ctx)), nil
		},
	}.Action()
}

// describe is list's answer. Without includeNativeTools only counts are
// shown (upstream's compact answer: the native tools' details would only
// cost the agent context).
func (b *bridge) describe(s snapshot, p *tools.Policy) map[string]any {
	if p == nil {
		p = tools.Unrestricted()
	}
	bySource := map[string]int{"plugin": 0, "native": 0}
	var exposed []string
	var details []map[string]any
	for _, e := range s.entries {
		bySource[e.source]++
		on := e.exposed(p)
		if on {
			exposed = append(exposed, e.tool.Name)
		}
		if !p.Extension.NativeTools && e.source == "native" {
			continue
		}
		d := map[string]any{"name": e.tool.Name, "source": e.source, "readOnlyHint": e.tool.ReadOnlyHint, "exposed": on}
		if e.tool.Title != "" {
			d["title"] = e.tool.Title
		}
		if e.tool.EffectScope != "" {
			d["effectScope"] = e.tool.EffectScope
		}
		switch {
		case reserved[e.tool.Name]:
			d["reservedActionConflict"] = true
		case e.action != nil:
			d["class"] = e.action.Policy.Class.String()
			d["requiresConfirmation"] = e.action.Dangerous
		}
		if e.source == "native" {
			d["actionPolicy"] = policyOf(e.tool.Name).describe()
		} else {
			d["actionPolicy"] = map[string]any{"mode": "plugin-owned"}
		}
		if e.degraded {
			d["schemaDegraded"] = true
		}
		if on {
			// Only what can be called is described: the rest would cost the
			// agent context for nothing.
			d["description"] = e.tool.Description
		}
		details = append(details, d)
	}
	if exposed == nil {
		exposed = []string{}
	}
	out := map[string]any{
		"connected": s.err == nil, "supported": true,
		"siyuanVersion": s.siyuanVersion, "minSupportedVersion": minVersion,
		"protocolVersion": siyuan.MCPProtocolVersion, "serverVersion": s.server.Info().Version,
		"refreshedAt":        s.refreshed.UTC().Format(time.RFC3339),
		"discoveredCount":    len(s.entries),
		"discoveredBySource": bySource,
		"nativeToolsEnabled": p.Extension.NativeTools,
		"exposedCount":       len(exposed), "exposed": exposed,
		"detailsIncluded": p.Extension.NativeTools,
		"hint":            "call {\"action\":\"<tool>\",\"arguments\":{...}}; {\"action\":\"help\",\"topic\":\"<tool>\"} shows a tool's input schema",
	}
	if p.Extension.NativeTools {
		if details == nil {
			details = []map[string]any{}
		}
		out["tools"] = details
	} else {
		out["hint"] = "plugin tools are exposed; native SiYuan tools need includeNativeTools in Sisyphus's settings. " + out["hint"].(string)
	}
	return out
}
