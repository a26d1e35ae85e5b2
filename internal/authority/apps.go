package authority

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/sisyphus-go/sisyphus/internal/admission"
	"github.com/sisyphus-go/sisyphus/internal/apps"
	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/jsonobj"
	"github.com/sisyphus-go/sisyphus/internal/mcp"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// The MCP Apps (package apps) as the server offers them: a launcher the
// model calls, which reads through an ordinary tool action and hands the
// view what it shows; an app-only action tool the view calls, each of
// whose actions runs as a call of the tool action of the same name
// (Runner.Run: gate, confirmation, admission and Strict Safe Writes as for
// the agent's own call); and the view, a ui:// resource. The mcp layer
// offers all three only to clients that declare the extension. An App the
// configuration switches off is hidden (list_changed) and refuses its
// calls; so does an App action switched off, or whose tool action is.

// appsOn are the Apps this build serves: declared Ready, with their
// target tool in the registry.
func (r *Runner) appsOn() []apps.App {
	var out []apps.App
	for _, a := range apps.All() {
		if _, ok := r.Registry.Tool(a.Target); ok && a.Ready && a.Open != nil && a.Present != nil {
			out = append(out, a)
		}
	}
	return out
}

// appActions are the actions of a the view may offer under p: on in the
// App's switches and, as tool actions, in the tool's.
func appActions(rn *Runner, a apps.App, p *tools.Policy) []string {
	t, _ := rn.Registry.Tool(a.Target)
	out := []string{}
	for _, name := range p.Apps.Enabled(a) {
		if act, ok := t.Action(name); ok && p.ActionOn(t, act) {
			out = append(out, name)
		}
	}
	return out
}

// appTools are a's launcher and action tool under v.
func appTools(rn *Runner, a apps.App, v tools.View) []mcp.Tool {
	on := v.Policy.Apps.On(a.Key)
	acts := appActions(rn, a, v.Policy)
	enum := acts
	if len(enum) == 0 {
		enum = a.Actions // a hidden tool's schema: what it would offer
	}
	launcher := mcp.Tool{Name: a.Launcher, Title: a.Title, Description: a.Launch, InputSchema: launcherSchema(a),
		Annotations: &mcp.ToolAnnotations{Title: a.Title, ReadOnlyHint: mcp.Bool(true), OpenWorldHint: mcp.Bool(false)},
		UI:          &mcp.ToolUI{ResourceURI: a.View, Visibility: []string{mcp.VisibleModel}},
		Hidden:      !on, Handler: launcherHandler(rn, a), InvalidArguments: invalidArguments}
	action := mcp.Tool{Name: a.ActionTool, Title: a.Title + " (App actions)",
		Description: fmt.Sprintf("Called by the %s App only: runs %s's action of the same name.", a.Title, a.Target),
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"action": map[string]any{"type": "string", "enum": enum}},
			"required": []string{"action"}, "additionalProperties": true},
		UI:     &mcp.ToolUI{ResourceURI: a.View, Visibility: []string{mcp.VisibleApp}},
		Hidden: !on || len(acts) == 0, Handler: appActionHandler(rn, a), InvalidArguments: invalidArguments}
	return []mcp.Tool{launcher, action}
}

func invalidArguments(msg string) *mcp.CallResult {
	e := failure.Invalid("%s", msg)
	return errorResult(e)
}

// launcherSchema are a launcher's arguments, as its App declares them.
func launcherSchema(a apps.App) map[string]any {
	return map[string]any{"type": "object", "properties": a.Args, "additionalProperties": false}
}

// appOff is the refusal of a call of an App the configuration switched
// off, or of one of its actions.
func appOff(a apps.App, action string) *mcp.CallResult {
	e := failure.New(failure.ActionDisabled, "the %s App is switched off in Sisyphus's configuration (mcpApps.%s); nothing was run", a.Title, a.Key)
	if action != "" {
		e = failure.New(failure.ActionDisabled, "the %s App's action %s is switched off in Sisyphus's configuration (mcpApps.%s.actions.%s); nothing was run", a.Title, action, a.Key, action)
	}
	return errorResult(e.With("app", a.Key))
}

// appCall is the Call of one tool action on behalf of an MCP request.
// Only an action call takes the request's taskId: a launcher runs one or
// two reads, which one task cannot name.
func appCall(req *mcp.CallRequest, tool string, args json.RawMessage, task bool) (Call, *mcp.CallResult) {
	taskID, ok := taskIDFromMeta(req.Meta)
	if !ok {
		return Call{}, errorResult(admissionError(admission.ErrInvalidTask, false))
	}
	if !task {
		taskID = ""
	}
	return Call{Tool: tool, Args: args, Principal: req.Principal, TaskID: taskID, Caller: req.Client(),
		CancelOnDone: req.Era != mcp.EraModern || taskID == "", Confirmer: mcpConfirmer{&req.Request}}, nil
}

// appActionHandler runs an action of a's view as the call of a.Target's
// action of the same name, its arguments as sent.
func appActionHandler(rn *Runner, a apps.App) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallRequest) (*mcp.CallResult, error) {
		action, _ := jsonobj.String(req.ArgumentFields["action"])
		if !a.Has(action) {
			e := failure.New(failure.UnknownAction, "the %s App has no action %q; it has %v", a.Title, action, a.Actions)
			return errorResult(e), nil
		}
		v, err := rn.Registry.View(ctx)
		if err == nil && !v.Policy.Apps.ActionOn(a.Key, action) {
			if !v.Policy.Apps.On(a.Key) {
				return appOff(a, ""), nil
			}
			return appOff(a, action), nil
		}
		// An unreadable configuration: the call's own gate says why.
		c, refused := appCall(req, a.Target, req.Arguments, true)
		if refused != nil {
			return refused, nil
		}
		c.Fields = req.ArgumentFields
		return rn.Run(ctx, c)
	}
}

// launcherHandler opens a's view: it runs the reads of a.Target its App
// names (each a call as the agent's own, through Runner.Run) and answers
// what the App makes of them as structuredContent, which the view renders,
// with one sentence of text for the model. A refused read is the answer.
func launcherHandler(rn *Runner, a apps.App) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallRequest) (*mcp.CallResult, error) {
		v, err := rn.Registry.View(ctx)
		if err == nil && !v.Policy.Apps.On(a.Key) {
			return appOff(a, ""), nil
		}
		acts := []string{}
		if err == nil {
			acts = appActions(rn, a, v.Policy)
		}
		var in apps.Args
		if err := json.Unmarshal(req.Arguments, &in); err != nil {
			return invalidArguments(err.Error()), nil
		}
		for k := range in {
			if _, ok := a.Args[k]; !ok {
				// As every action here: an argument it does not take is
				// refused, never dropped.
				return invalidArguments(fmt.Sprintf("%s takes no argument %q", a.Launcher, k)), nil
			}
		}
		reads, err := a.Open(in)
		if err != nil {
			return invalidArguments(err.Error()), nil
		}
		answers := make([]map[string]any, 0, len(reads))
		for _, args := range reads {
			raw, _ := json.Marshal(args)
			c, refused := appCall(req, a.Target, raw, false)
			if refused != nil {
				return refused, nil
			}
			res, err := rn.Run(ctx, c)
			if err != nil || res.IsError {
				return res, err
			}
			var out map[string]any
			b, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(b, &out); err != nil {
				return errorResult(failure.Wrap(failure.Internal, err, "internal error")), nil
			}
			answers = append(answers, out)
		}
		view, text := a.Present(in, answers)
		view["app"], view["appActions"] = a.Key, acts
		res := mcp.StructuredResult(view)
		// The model gets the sentence only: the person acts in the App.
		res.Content = []mcp.Content{mcp.TextContent(text)}
		return res, nil
	}
}

// viewResource is a's view as a ui:// resource.
func viewResource(a apps.App) mcp.Resource {
	html := a.HTML()
	meta := apps.ViewMeta()
	content := mcp.ResourceContents{URI: a.View, MimeType: mcp.MimeApp, Text: html, Meta: meta}
	return mcp.Resource{URI: a.View, Name: a.ViewName, Title: a.Title, Description: a.ViewDescription, MimeType: mcp.MimeApp,
		Size: int64(len(html)), Meta: meta,
		Handler: func(context.Context, *mcp.ResourceRequest) (*mcp.ResourceResult, error) {
			return &mcp.ResourceResult{Contents: []mcp.ResourceContents{content}}, nil
		}}
}
