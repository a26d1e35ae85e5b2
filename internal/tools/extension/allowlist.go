package extension

import (
	"slices"

	"github.com/sisyphus-go/sisyphus/internal/failure"
)

// nativeAllowlist is upstream's read allowlist of SiYuan's native MCP tools:
// each tool's downstream sub-actions (arguments.action) that only read. A
// nil list is a tool without sub-actions, forwarded only when the call names
// none and SiYuan declares the tool read-only. Every other native tool
// (document, block, sql, file, ...) is never exposed: they write, or read
// the whole workspace past Sisyphus's permissions.
var nativeAllowlist = map[string][]string{
	"search":     {"semantic", "fulltext"},
	"ref":        {"backlinks", "forwardlinks"},
	"outline":    {"get"},
	"history":    {"list", "search", "get"},
	"repo":       {"list", "diff", "search", "file_get", "file_open"},
	"image":      {"list", "analyze"},
	"inbox":      {"list", "get"},
	"web_fetch":  nil,
	"web_search": nil,
}

// workspaceNatives are the allowlisted native tools that read notebooks:
// their answers cannot be filtered by notebook, so they need every
// notebook readable (inbox is SiYuan's cloud inbox, the web tools the web).
var workspaceNatives = map[string]bool{"search": true, "ref": true, "outline": true, "history": true, "repo": true, "image": true}

// actionPolicy is how the allowlist treats one native tool.
type actionPolicy struct {
	listed     bool     // in the allowlist
	actionless bool     // listed without sub-actions
	allowed    []string // the sub-actions, when not actionless
}

func policyOf(tool string) actionPolicy {
	acts, ok := nativeAllowlist[tool]
	return actionPolicy{listed: ok, actionless: ok && acts == nil, allowed: acts}
}

// mode names the policy as list and help show it.
func (p actionPolicy) describe() map[string]any {
	switch {
	case !p.listed:
		return map[string]any{"mode": "blocked"}
	case p.actionless:
		return map[string]any{"mode": "actionless-readonly"}
	}
	return map[string]any{"mode": "allowlist", "allowedActions": p.allowed}
}

// checkNative refuses forwarded arguments outside the allowlist, before
// anything is sent: a sub-action must be one of the listed ones, and an
// actionless tool must get none (a forged selector could reach a writing
// branch SiYuan adds later).
func checkNative(tool string, args map[string]any) error {
	p := policyOf(tool)
	sub, named := args["action"]
	s, isString := sub.(string)
	switch {
	case !p.listed:
		return failure.New(failure.NativeActionNotAllowed, "native tool %q is not on the read allowlist; nothing was sent", tool).Attempted(false)
	case p.actionless && named:
		return failure.New(failure.NativeActionNotAllowed, "native tool %q takes no action selector, and arguments.action was given; nothing was sent", tool).
			Attempted(false)
	case p.actionless:
		return nil
	case !isString || !slices.Contains(p.allowed, s):
		shown := "<missing>"
		if named {
			shown = s
			if !isString {
				shown = "<not a string>"
			}
		}
		e := failure.New(failure.NativeActionNotAllowed, "native action %s.%s is not on the read allowlist; nothing was sent", tool, shown).
			With("allowedActions", p.allowed)
		e.Action = "pass one of allowedActions as arguments.action"
		return e.Attempted(false)
	}
	return nil
}
