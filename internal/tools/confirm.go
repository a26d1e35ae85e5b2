package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
)

// Confirmation of dangerous actions. A dangerous call runs only after its
// person said yes: the entry point that has the client (the authority's MCP
// handler, a front, `sisyphus call`) asks before the call is admitted, so
// no lane waits for a person, and marks the context it then runs under
// (WithConfirmed). Registry.Call refuses a dangerous call whose context is
// not marked, so no entry point can forget to ask.

// Confirmer is how a call's client asks its person.
type Confirmer interface {
	// CanForm reports whether the client shows forms (MCP form
	// elicitation, a terminal prompt).
	CanForm() bool
	// Form asks the person; the answer is accept (with content), decline or
	// cancel. An error the entry point must pass on unchanged (an MCP
	// input_required round) is returned as is.
	Form(ctx context.Context, message string, schema map[string]any) (FormAnswer, error)
}

// FormAnswer is the person's answer to a form.
type FormAnswer struct {
	Action  string // accept, decline or cancel
	Content map[string]any
}

// Answers of a form.
const (
	FormAccept  = "accept"
	FormDecline = "decline"
	FormCancel  = "cancel"
)

// Pending is a call that needs its person's confirmation.
type Pending struct {
	Tool, Action string
	// Dangerous: the action itself needs confirmation (Action.Dangerous).
	Dangerous bool
	// Local says what the call does on the person's disk, at a front (see
	// Write.LocalEffects): files it reads, destinations it creates, each
	// path resolved.
	Local []string
	// Args are the business arguments, for the person to read.
	Args map[string]json.RawMessage
	// Confirm is the confirm argument as sent (nil when absent).
	Confirm *bool
}

// Pending reports whether a call needs confirmation: a dangerous action,
// not a preflight (validateOnly executes nothing). A call that is
// malformed, unknown or disabled needs none here; Call refuses it. What a
// front must also confirm (a call on its person's disk) is ToConfirm's.
func (r *Registry) Pending(tool string, in Input) (Pending, bool) {
	t, ok := r.tools[tool]
	if !ok {
		return Pending{}, false
	}
	fields, err := in.fields()
	if err != nil {
		return Pending{}, false
	}
	return pendingOf(t, fields)
}

// ToConfirm is what an entry point asks its person before it runs a call:
// a dangerous action (Pending) and, at a front, any call that reads a file
// of the person's machine or creates one there (Write.LocalEffects), even
// one that is not dangerous, even a preflight, because the file leaves or
// lands on the person's disk then; the confirmation names each path,
// resolved. A path the front's rule refuses refuses the call (the error)
// before anyone is asked.
func (r *Registry) ToConfirm(ctx context.Context, tool string, in Input) (Pending, bool, error) {
	t, ok := r.tools[tool]
	if !ok {
		return Pending{}, false, nil
	}
	fields, err := in.fields()
	if err != nil {
		return Pending{}, false, nil
	}
	return r.toConfirm(ctx, t, fields)
}

func (r *Registry) toConfirm(ctx context.Context, t *Tool, fields map[string]json.RawMessage) (Pending, bool, error) {
	p, pending := pendingOf(t, fields)
	name, ok := actionOf(fields)
	if !ok || !r.env.front() {
		return p, pending, nil
	}
	a, ok := t.Action(name)
	if !ok || a.localEffects == nil {
		return p, pending, nil
	}
	local, err := a.localEffects(ctx, r.env, fields)
	if err != nil {
		return Pending{}, false, refused(err, a.Policy.Class != strict.Read)
	}
	if len(local) == 0 {
		return p, pending, nil
	}
	if !pending {
		p = pendingArgs(t.Name, a, fields)
	}
	p.Local = local
	return p, true, nil
}

// pendingOf is Pending of arguments already decoded.
func pendingOf(t *Tool, fields map[string]json.RawMessage) (Pending, bool) {
	name, ok := actionOf(fields)
	if !ok {
		return Pending{}, false
	}
	a, ok := t.Action(name)
	if !ok || !a.Dangerous {
		return Pending{}, false
	}
	// A write's preflight changes nothing, and its commit is confirmed; a
	// read sent with validateOnly runs as the read it is, confirmed.
	var validateOnly bool
	if v, ok := fields[fieldValidateOnly]; ok && json.Unmarshal(v, &validateOnly) == nil && validateOnly && a.Policy.Class != strict.Read {
		return Pending{}, false
	}
	return pendingArgs(t.Name, a, fields), true
}

// pendingArgs is the Pending of a call of a: its business arguments and
// its confirm argument.
func pendingArgs(tool string, a *Action, fields map[string]json.RawMessage) Pending {
	p := Pending{Tool: tool, Action: a.Name, Dangerous: a.Dangerous, Args: map[string]json.RawMessage{}}
	for k, v := range fields {
		if k == FieldConfirm {
			var c bool
			if json.Unmarshal(v, &c) == nil {
				p.Confirm = &c
			}
			continue
		}
		if !isControl(k) && k != "action" {
			p.Args[k] = v
		}
	}
	return p
}

// Prime discovers a run-time action a call names before Pending looks at
// it: an action discovered only once the call runs would reach Call
// unconfirmed, and be refused. A failed discovery is left to Call, which
// answers it.
func (r *Registry) Prime(ctx context.Context, tool string, in Input) {
	t, ok := r.tools[tool]
	if !ok || t.Dynamic == nil {
		return
	}
	name, ok := in.Action()
	if !ok || name == "help" {
		return
	}
	if _, ok := t.Action(name); !ok {
		t.Dynamic.Lookup(siyuan.WithoutReadMeter(ctx), r.env, name)
	}
}

// maxShown bounds the arguments a confirmation form shows.
const maxShown = 1800

// Message is what the person is asked: the call, what it does on their
// disk, and its arguments.
func (p Pending) Message() string {
	keys := make([]string, 0, len(p.Args))
	for k := range p.Args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "\n  %s: %s", k, p.Args[k])
	}
	args := b.String()
	if len(args) > maxShown {
		args = args[:maxShown] + "…"
	}
	var head strings.Builder
	fmt.Fprintf(&head, "An agent asks to run %s.%s", p.Tool, p.Action)
	if p.Dangerous {
		head.WriteString(", which cannot be undone from Sisyphus")
	}
	head.WriteString(".")
	for _, l := range p.Local {
		fmt.Fprintf(&head, "\nOn this computer it %s.", l)
	}
	return fmt.Sprintf("%s%s\nAllow it?", head.String(), args)
}

// why says what makes the call need its person: the action's danger, and
// what it does on their disk.
func (p Pending) why() string {
	var parts []string
	if p.Dangerous {
		parts = append(parts, "it is dangerous")
	}
	for _, l := range p.Local {
		parts = append(parts, "on this computer it "+l)
	}
	return strings.Join(parts, "; ")
}

// confirmSchema is the form: one required boolean.
var confirmSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		FieldConfirm: map[string]any{"type": "boolean", "title": "Run it", "description": "Allow this one call"},
	},
	"required": []string{FieldConfirm},
}

// Confirm asks the person about a pending call and returns nil when they
// said yes. A client with forms is always asked (a confirm argument alone
// never passes); one without them must pass confirm:true, which its agent
// may only send after the person approved.
func Confirm(ctx context.Context, c Confirmer, p Pending) error {
	if c == nil || !c.CanForm() {
		switch {
		case p.Confirm == nil:
			e := failure.New(failure.ConfirmationRequired, "%s.%s needs the person's confirmation (%s); nothing was run", p.Tool, p.Action, p.why())
			e = e.Attempted(false).With("tool", p.Tool).With("action", p.Action)
			if len(p.Local) > 0 {
				// The agent must show the person exactly these paths.
				e = e.With("local", p.Local)
			}
			return e
		case !*p.Confirm:
			return declined(p, "confirm was false")
		}
		return nil
	}
	ans, err := c.Form(ctx, p.Message(), confirmSchema)
	if err != nil {
		return err
	}
	switch ans.Action {
	case FormDecline:
		return declined(p, "the person declined")
	case FormCancel:
		e := failure.New(failure.ConfirmationCancelled, "the person dismissed the confirmation of %s.%s; nothing was run", p.Tool, p.Action)
		return e.Attempted(false).SetCancelled(true)
	case FormAccept:
		v, ok := ans.Content[FieldConfirm].(bool)
		switch {
		case !ok:
			e := failure.New(failure.ConfirmationInvalid, "the confirmation of %s.%s came back without a boolean %q; it does not mean the person declined; nothing was run",
				p.Tool, p.Action, FieldConfirm)
			return e.Attempted(false).SetCancelled(false)
		case !v:
			return declined(p, "the person answered no")
		}
		return nil
	}
	e := failure.New(failure.ConfirmationInvalid, "the confirmation of %s.%s came back as %q; nothing was run", p.Tool, p.Action, ans.Action)
	return e.Attempted(false).SetCancelled(false)
}

func declined(p Pending, why string) error {
	e := failure.New(failure.ConfirmationDeclined, "%s.%s was not confirmed (%s); nothing was run", p.Tool, p.Action, why)
	return e.Attempted(false).SetCancelled(false)
}

type confirmedKey struct{}

// WithConfirmed marks ctx: the person confirmed this call of tool.action.
func WithConfirmed(ctx context.Context, tool, action string) context.Context {
	return context.WithValue(ctx, confirmedKey{}, tool+"."+action)
}

// confirmed reports whether ctx is marked for tool.action.
func confirmed(ctx context.Context, tool, action string) bool {
	v, _ := ctx.Value(confirmedKey{}).(string)
	return v == tool+"."+action
}
