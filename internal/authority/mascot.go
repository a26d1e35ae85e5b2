package authority

import (
	"context"
	"encoding/json"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/admission"
	"github.com/sisyphus-go/sisyphus/internal/mascotstore"
	"github.com/sisyphus-go/sisyphus/internal/mcp"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/mascot"
)

// The mascot's books: every call the runner runs here (not one it hands
// to the authority, which counts it there) records display events and an
// analytics line, and every successful call of another tool than the
// mascot earns a coin, awaited before the answer. All of it only while
// the configuration enables the mascot tool; none of it fails the call.

// accounting reports whether the call is counted here, and the action's
// declared name. A call of an action no tool declares is not counted: the
// books hold only names the server knows, never a string an agent made up.
func (r *Runner) accounting(call *admission.Call, c Call, lane admission.Lane, action string) (string, bool) {
	if r.Mascot == nil || lane == admission.LaneDelegated || action == "" {
		return "", false
	}
	called, ok := r.Registry.Tool(c.Tool)
	if !ok {
		return "", false
	}
	if action != "help" {
		a, ok := called.Action(action)
		if !ok {
			return "", false
		}
		action = a.Name
	}
	t, ok := r.Registry.Tool(mascot.Name)
	if !ok {
		return "", false
	}
	p, _ := call.Snapshot().Policy.(*tools.Policy)
	if p == nil {
		p = tools.Unrestricted() // a registry without a configuration source
	}
	return action, p.ToolOn(t)
}

// client names the call's storage queues: its principal and MCP client.
func (c Call) client() string { return c.Principal + "/" + c.Caller }

// accountStart queues the call's running event.
func (r *Runner) accountStart(c Call, action string) {
	k := r.Mascot.Known()
	r.Mascot.Event(c.client(), mascotstore.Event{Tool: c.Tool, Action: action, Status: mascotstore.Running, TotalCalls: k.TotalCalls, Balance: k.Balance})
}

// accountEnd earns the call's coin (a successful call of another tool),
// then queues its final event and its analytics line.
func (r *Runner) accountEnd(ctx context.Context, c Call, action string, res *mcp.CallResult, started time.Time) {
	status, code := mascotstore.Success, ""
	if res.IsError {
		status, code = mascotstore.Failed, errorCode(res)
	}
	ev := mascotstore.Event{Tool: c.Tool, Action: action, Status: status}
	if c.Tool != mascot.Name && !res.IsError {
		if _, err := r.Mascot.Earn(ctx, c.Tool+"/"+action); err != nil && r.Logger != nil {
			r.Logger.Warn("the mascot's coin for a call was not stored", "tool", c.Tool, "action", action, "err", err)
		}
	}
	if c.Tool == mascot.Name && action == "buy" && !res.IsError {
		ev.ItemID, ev.ItemLabel, ev.ItemType, ev.ItemEmoji = purchased(res)
	}
	k := r.Mascot.Known()
	ev.TotalCalls, ev.Balance = k.TotalCalls, k.Balance
	r.Mascot.Event(c.client(), ev)
	r.Mascot.Record(c.client(), mascotstore.Record{Tool: c.Tool, Action: action, Status: status,
		DurationMs: time.Since(started).Milliseconds(), ErrorCode: code, Transport: r.transport()})
}

func (r *Runner) transport() string {
	if r.Transport == "" {
		return "http"
	}
	return r.Transport
}

// errorCode is the failure code of an error result.
func errorCode(res *mcp.CallResult) string {
	var probe struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if raw, ok := res.StructuredContent.(json.RawMessage); ok && json.Unmarshal(raw, &probe) == nil {
		return probe.Error.Code
	}
	return ""
}

// purchased is the item a committed buy answered, for the mascot's
// display (upstream's event carries it).
func purchased(res *mcp.CallResult) (id, label, kind, emoji string) {
	var p struct {
		ItemID string `json:"item_id"`
		Item   string `json:"item"`
		Type   string `json:"type"`
		Emoji  string `json:"emoji"`
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err == nil && json.Unmarshal(raw, &p) == nil {
		return p.ItemID, p.Item, p.Type, p.Emoji
	}
	return "", "", "", ""
}
