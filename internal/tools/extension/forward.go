package extension

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// A forwarded call is one tools/call to SiYuan's endpoint, sent once.
const (
	// callTimeout bounds it: a tool that answers later has its answer
	// lost (for a tool with effects, an outcome unknown).
	callTimeout = 60 * time.Second
	// maxResult bounds its reply: a larger one is not relayed.
	maxResult = 1 << 20
)

// fwd is a forwarded call's arguments.
type fwd struct {
	Arguments map[string]any `arg:"arguments" help:"the forwarded tool's own arguments, passed unchanged (help with topic:\"<tool>\" shows its input schema)" required:""`
}

// forwardAction is the action a discovered tool becomes: a read when the
// allowlist or the plugin's readOnlyHint says it only reads, else an
// external effect, dangerous (a person confirms each call) and without
// preflight.
func forwardAction(b *bridge, e *entry) *tools.Action {
	name, src := e.tool.Name, e.source
	check := func(f *fwd) error {
		if src == "native" {
			return checkNative(name, f.Arguments)
		}
		return nil
	}
	need := tools.LevelRead
	if !e.read {
		need = tools.LevelWrite
	}
	scope := tools.Scope[fwd]{Resolve: func(ctx context.Context, env *tools.Env, _ fwd) ([]tools.Touch, error) {
		return everyNotebook(ctx, env, need)
	}}
	if src == "native" && !workspaceNatives[name] {
		// inbox and the web tools read no notebook, so they need no
		// notebook's permission; like every forward they do not run while
		// a notebook is hidden, and a configuration that cannot be read
		// refuses them.
		scope = tools.Scope[fwd]{Resolve: func(ctx context.Context, _ *tools.Env, _ fwd) ([]tools.Touch, error) {
			return nil, tools.RefuseWhileHidden(ctx, "a forwarded SiYuan tool")
		}}
	}
	title := e.tool.Title
	if title == "" {
		title = e.tool.Description
	}
	title = clip(title, 160)
	example := map[string]any{"arguments": exampleArguments(e)}
	var act *tools.Action
	if e.read {
		act = tools.Read[fwd]{
			Name: name, Summary: fmt.Sprintf("forward to SiYuan's %s tool %s (a read: %s): %s", src, name, readWhy(e), title),
			Validate: check, Scope: scope, Example: example,
			// The gate decides before anything is sent: a refused call
			// must not reach SiYuan.
			SideEffects: true,
			Run: func(ctx context.Context, env *tools.Env, f fwd) (any, error) {
				res, err := call(ctx, env, name, f.Arguments)
				if err != nil {
					return nil, readFailure(name, err)
				}
				if res.IsError {
					return nil, toolError(name, res).Attempted(false)
				}
				return answer(name, src, res), nil
			},
		}.Action()
	} else {
		act = tools.Write[fwd, struct{}]{
			Name: name, Summary: fmt.Sprintf("forward to SiYuan's plugin tool %s (an external effect: no preflight, no strict guarantee, confirmed by a person, sent once): %s", name, title),
			Policy: strict.WritePolicy{Class: strict.External}, Dangerous: true, Timeout: callTimeout,
			Validate: check, Scope: scope, Example: example,
			Execute: func(ctx context.Context, env *tools.Env, f fwd, _ struct{}) (tools.Payload, error) {
				res, err := call(ctx, env, name, f.Arguments)
				if err != nil {
					return nil, effectFailure(name, err)
				}
				if res.IsError {
					// The tool ran, or SiYuan could not find it: either
					// way nothing says it did nothing.
					return nil, toolError(name, res).Attempted(true)
				}
				return answer(name, src, res), nil
			},
		}.Action()
	}
	act.HelpExtra = map[string]any{"source": src, "readOnlyHint": e.tool.ReadOnlyHint, "inputSchema": e.schema,
		"description": e.tool.Description}
	if e.tool.EffectScope != "" {
		act.HelpExtra["effectScope"] = e.tool.EffectScope
	}
	if src == "native" {
		act.HelpExtra["actionPolicy"] = policyOf(name).describe()
	}
	if e.degraded {
		act.HelpExtra["schemaDegraded"] = true
	}
	return act
}

func readWhy(e *entry) string {
	if e.source == "plugin" {
		return "the plugin declares readOnlyHint"
	}
	return "only the allowlisted sub-actions are forwarded"
}

// everyNotebook is a forwarded call's touch: SiYuan's tool sees the whole
// workspace and Sisyphus cannot filter what it reads or scope what it
// changes. A read needs every notebook readable; a tool with effects can
// change any notebook, so it needs rw on every one (the person's
// confirmation of each call comes on top, never instead). While a
// notebook is hidden from agents every forward is refused (as query_sql
// is), by a refusal that names no notebook: the answer is the same
// whatever the hidden notebooks are.
func everyNotebook(ctx context.Context, env *tools.Env, need tools.Level) ([]tools.Touch, error) {
	if err := tools.RefuseWhileHidden(ctx, "a forwarded SiYuan tool"); err != nil {
		return nil, err
	}
	nbs, err := env.Kernel.ListNotebooks(ctx)
	if err != nil {
		return nil, err
	}
	why := ""
	if need > tools.LevelRead {
		why = "a forwarded plugin tool with effects can write in any notebook, so it needs rw on every notebook"
	}
	out := make([]tools.Touch, 0, len(nbs))
	for _, nb := range nbs {
		out = append(out, tools.Touch{Notebook: nb.ID, Need: need, Why: why})
	}
	return out, nil
}

// call sends one tools/call, bounded in time and size, outside the read
// budget (extension calls are not Sisyphus's own reads).
func call(ctx context.Context, env *tools.Env, name string, args map[string]any) (*siyuan.MCPCallResult, error) {
	ctx, cancel := context.WithTimeout(siyuan.WithoutReadMeter(ctx), callTimeout)
	defer cancel()
	return env.Kernel.MCPCallTool(ctx, name, args, maxResult)
}

// answer is a forwarded result: the tool's content as SiYuan sent it.
func answer(name, src string, res *siyuan.MCPCallResult) map[string]any {
	content := make([]any, 0, len(res.Content))
	for _, c := range res.Content {
		var v any
		if json.Unmarshal(c, &v) == nil {
			content = append(content, v)
		}
	}
	out := map[string]any{"tool": name, "source": src, "content": content}
	if len(res.StructuredContent) > 0 {
		var v any
		if json.Unmarshal(res.StructuredContent, &v) == nil && v != nil {
			out["structuredContent"] = v
		}
	}
	return out
}

// text joins a result's text items.
func text(res *siyuan.MCPCallResult) string {
	var parts []string
	for _, c := range res.Content {
		var item struct{ Type, Text string }
		if json.Unmarshal(c, &item) == nil && item.Type == "text" {
			parts = append(parts, item.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// clip shortens s to at most n bytes on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// toolError is the forwarded tool's own failure.
func toolError(name string, res *siyuan.MCPCallResult) *failure.Error {
	msg := clip(text(res), 2000)
	return failure.New(failure.ExtensionToolError, "SiYuan's tool %s answered an error: %s", name, msg).With("tool", name)
}

// readFailure is a failed forwarded read: nothing changed, whatever the
// transport says.
func readFailure(name string, err error) error {
	var rpc *siyuan.MCPError
	var tooLarge *siyuan.ResponseTooLargeError
	switch {
	case errors.As(err, &rpc):
		return failure.New(failure.ExtensionToolError, "SiYuan's MCP endpoint refused the call of %s: %s (JSON-RPC %d)", name, rpc.Message, rpc.Code).
			With("tool", name).Attempted(false)
	case errors.As(err, &tooLarge):
		e := failure.New(failure.ReadBudgetExceeded, "SiYuan's tool %s answered more than %d bytes, which extension does not relay", name, maxResult)
		e.Action = "narrow the call (a smaller page, a tighter query)"
		return e
	}
	if errors.Is(err, siyuan.ErrMCPEmptyReply) {
		return failure.Wrap(failure.ExtensionToolError, err, "SiYuan answered nothing for %s: the tool failed inside SiYuan (3.7.3 does this for tools it "+
			"cannot run through /mcp, such as image); nothing was changed (it is a read), and calling again will not help", name).With("tool", name).Attempted(false)
	}
	var out *siyuan.OutcomeUnknownError
	if errors.As(err, &out) {
		// Sent once as every forwarded call is; for a read a lost reply
		// is only a failed read.
		return failure.Wrap(failure.KernelUnreachable, err, "SiYuan's reply to %s was lost; nothing was changed (it is a read), call again", name)
	}
	return tools.KernelError(err)
}

// effectFailure classifies a failed call of a tool with effects for the
// coordinator: refused before it ran is a rejection; a lost or oversized
// reply leaves the outcome unknown, and it is never sent again.
func effectFailure(name string, err error) error {
	var rpc *siyuan.MCPError
	var tooLarge *siyuan.ResponseTooLargeError
	switch {
	case errors.As(err, &rpc):
		return strict.Reject(failure.New(failure.Rejected, "SiYuan's MCP endpoint refused the call of %s before any tool ran: %s (JSON-RPC %d)",
			name, rpc.Message, rpc.Code).With("tool", name))
	case errors.As(err, &tooLarge):
		return failure.New(failure.OutcomeUnknown, "SiYuan's tool %s ran but answered more than %d bytes, which extension does not relay; it will not be sent again",
			name, maxResult).With("tool", name).Attempted(true)
	case siyuan.IsOutcomeUnknown(err):
		return failure.Wrap(failure.OutcomeUnknown, err, "the call of %s was sent but its reply was lost; the tool may have run, and it will not be sent again", name).
			With("tool", name).Attempted(true)
	}
	return tools.WriteFailure(err, false)
}

// exampleArguments is a valid arguments object for help: the first allowed
// sub-action of a native tool, and a placeholder for each required
// property.
func exampleArguments(e *entry) map[string]any {
	out := map[string]any{}
	var s struct {
		Properties map[string]struct {
			Type string   `json:"type"`
			Enum []string `json:"enum"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	json.Unmarshal(e.schema, &s)
	for _, r := range s.Required {
		p := s.Properties[r]
		switch {
		case len(p.Enum) > 0:
			out[r] = p.Enum[0]
		case p.Type == "number" || p.Type == "integer":
			out[r] = 1
		case p.Type == "boolean":
			out[r] = true
		case strings.Contains(strings.ToLower(r), "id"):
			out[r] = "20260812120000-abcdefg"
		default:
			out[r] = "..."
		}
	}
	if p := policyOf(e.tool.Name); e.source == "native" && !p.actionless && len(p.allowed) > 0 {
		// The example must pass the allowlist, whatever the schema's
		// enum lists first.
		out["action"] = p.allowed[0]
		if slices.Contains(p.allowed, "fulltext") {
			out["action"] = "fulltext" // semantic needs an embedding model
		}
		if _, ok := s.Properties["query"]; ok {
			out["query"] = "..."
		}
	}
	return out
}
