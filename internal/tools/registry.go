package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
)

// Env is what actions run against.
type Env struct {
	Kernel *siyuan.Client
	// Version of this server, for system.version and bootstrap.
	Version string
	// Coordinator runs every non-read action in this process.
	Coordinator *strict.Coordinator
	// Delegate, used when Coordinator is nil, sends a non-read call (its
	// arguments exactly as received, control fields included) to the
	// authority that owns the coordinator, and returns its answer; a failure
	// is a *Error. With neither, writes answer write_coordinator_unavailable.
	Delegate func(ctx context.Context, tool string, args json.RawMessage) (any, error)
	// DelegateStrict tells, for a delegating front, whether the authority
	// runs strict mode (it decides which control fields the schemas show).
	DelegateStrict bool

	// catalog lists the registry's tools, for system.bootstrap.
	catalog func() []*Tool
}

// strictOn reports whether writes go through preflight and commit.
func (e *Env) strictOn() bool {
	switch {
	case e.Coordinator != nil:
		return e.Coordinator.Strict()
	case e.Delegate != nil:
		return e.DelegateStrict
	}
	return true
}

// Tool is one agent-facing tool: a name and its actions.
type Tool struct {
	Name        string
	Title       string
	Description string
	Actions     []*Action
	strict      bool // strict mode decides which control fields the schema shows
}

// Action is one value of a tool's `action` argument.
type Action struct {
	Name    string
	Summary string
	Policy  strict.Policy
	Params  []Param
	// PolicyFor, when set, decides the class of one call from its arguments
	// (fs.write: create is additive, overwrite is guarded); Policy is then
	// the guarded form, which the schema and help advertise.
	PolicyFor func(a *Args) strict.Policy
	// Run answers a read.
	Run func(ctx context.Context, env *Env, a *Args) (any, error)
	// Write carries out a non-read action through the coordinator.
	Write *Write
	// Destructive marks actions that remove data (MCP destructiveHint).
	Destructive bool
}

// Write is how a non-read action is carried out; the coordinator decides
// when each part runs.
type Write struct {
	// Targets are the ids the call touches (its lease scope and targetCount).
	Targets func(a *Args) []string
	// State reads the targets' live state (guarded mutations only).
	State func(ctx context.Context, env *Env, a *Args) (any, error)
	// Execute makes the write once and returns a small payload (ids, flags).
	Execute func(ctx context.Context, env *Env, a *Args) (map[string]any, error)
	// Readback verifies the change after Execute and returns the state to
	// hash (what State reads, for guarded mutations).
	Readback func(ctx context.Context, env *Env, a *Args, payload map[string]any) (any, error)
}

// ParamType is a JSON Schema type of an argument.
type ParamType string

// Argument types.
const (
	String  ParamType = "string"
	Integer ParamType = "integer"
	Boolean ParamType = "boolean"
	Object  ParamType = "object"
	Strings ParamType = "array" // an array of strings
	Objects ParamType = "array-of-objects"
)

// Param declares one argument of an action; schema, help and validation all
// come from it.
type Param struct {
	Name        string
	Type        ParamType
	Description string
	Required    bool
	Enum        []string
	Default     any
	Min, Max    *int // integers only
	hidden      bool // accepted but not advertised
}

func intp(n int) *int { return &n }

// Registry holds the tools.
type Registry struct {
	tools map[string]*Tool
	order []string
	env   *Env
}

// NewRegistry returns the registry of every Sisyphus tool bound to env. It
// fails if an action is unclassified or declared twice: a tool whose safety
// class is unknown must not be served.
func NewRegistry(env *Env) (*Registry, error) {
	r := &Registry{tools: map[string]*Tool{}, env: env}
	env.catalog = r.Tools
	for _, t := range []*Tool{notebookTool(), documentTool(), blockTool(), searchTool(), systemTool(), fsTool()} {
		t.strict = env.strictOn()
		if err := r.add(t); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func (r *Registry) add(t *Tool) error {
	if _, dup := r.tools[t.Name]; dup {
		return fmt.Errorf("tool %s declared twice", t.Name)
	}
	seen := map[string]bool{"help": true}
	for _, a := range t.Actions {
		if seen[a.Name] {
			return fmt.Errorf("tool %s: action %s declared twice", t.Name, a.Name)
		}
		seen[a.Name] = true
		if err := a.Policy.Validate(); err != nil {
			return fmt.Errorf("tool %s action %s: %w", t.Name, a.Name, err)
		}
		if err := a.complete(); err != nil {
			return fmt.Errorf("tool %s action %s: %w", t.Name, a.Name, err)
		}
	}
	r.tools[t.Name] = t
	r.order = append(r.order, t.Name)
	return nil
}

// complete checks the action has what its class needs.
func (a *Action) complete() error {
	if a.Policy.Class == strict.Read {
		if a.Run == nil {
			return fmt.Errorf("a read needs Run")
		}
		return nil
	}
	switch {
	case a.Write == nil || a.Write.Execute == nil:
		return fmt.Errorf("a write needs Write.Execute")
	case a.Policy.Class != strict.External && a.Write.Readback == nil:
		return fmt.Errorf("a strict write needs Write.Readback")
	case a.Policy.Class == strict.Mutation && a.Write.State == nil:
		return fmt.Errorf("a guarded write needs Write.State")
	}
	return nil
}

// Tools lists the tools in registration order.
func (r *Registry) Tools() []*Tool {
	ret := make([]*Tool, 0, len(r.order))
	for _, n := range r.order {
		ret = append(ret, r.tools[n])
	}
	return ret
}

// Tool returns a tool by name.
func (r *Registry) Tool(name string) (*Tool, bool) {
	t, ok := r.tools[name]
	return t, ok
}

// Action returns a tool's action by name.
func (t *Tool) Action(name string) (*Action, bool) {
	for _, a := range t.Actions {
		if a.Name == name {
			return a, true
		}
	}
	return nil, false
}

// Control fields: how a strict call is steered, never part of its business
// arguments.
const (
	fieldValidateOnly = "validateOnly"
	fieldRequestID    = "requestId"
)

// params are the action's own parameters plus, for strict writes, the
// control fields the coordinator reads.
func (a *Action) params(strictOn bool) []Param {
	if a.Policy.Class == strict.Read {
		return a.Params
	}
	ps := append([]Param(nil), a.Params...)
	if a.Policy.Class == strict.External || !strictOn {
		// Not advertised; accepted only to refuse a preflight clearly.
		return append(ps, Param{Name: fieldValidateOnly, Type: Boolean, hidden: true})
	}
	ps = append(ps,
		Param{Name: fieldValidateOnly, Type: Boolean, Description: "preflight: read, hash and lease without writing; returns requestId and the credential"},
		Param{Name: fieldRequestID, Type: String, Description: "the requestId the preflight returned, copied unchanged (also when retrying)"},
	)
	if f := a.Policy.Precondition; f != strict.NoPrecondition {
		ps = append(ps, Param{Name: string(f), Type: String, Description: "the credential the preflight returned under this name (sha256:v1:<hex> or bare hex)"})
	}
	return ps
}

func isControl(name string) bool {
	switch name {
	case fieldValidateOnly, fieldRequestID, string(strict.ExpectedStateHash), string(strict.ExpectedStructureHash),
		string(strict.ExpectedManifestHash), string(strict.ExpectedSourceHash):
		return true
	}
	return false
}

// ActionNames lists the tool's actions, help included.
func (t *Tool) ActionNames() []string {
	names := []string{"help"}
	for _, a := range t.Actions {
		names = append(names, a.Name)
	}
	return names
}

// Destructive reports whether an action of the tool can remove data.
func (t *Tool) Destructive() bool {
	for _, a := range t.Actions {
		if a.Destructive {
			return true
		}
	}
	return false
}

// ReadOnly reports whether every action of the tool is a read.
func (t *Tool) ReadOnly() bool {
	for _, a := range t.Actions {
		if a.Policy.Class != strict.Read {
			return false
		}
	}
	return true
}

// InputSchema is the JSON Schema (2020-12) of the tool's arguments: an
// `action` enum and the union of every action's parameters, with each
// parameter's description naming the actions it applies to.
func (t *Tool) InputSchema() map[string]any {
	props := map[string]any{
		"action": map[string]any{"type": "string", "enum": t.ActionNames(),
			"description": "What to do; \"help\" lists the actions and their arguments."},
		"topic": map[string]any{"type": "string", "description": "With action \"help\": the action to describe."},
	}
	users := map[string][]string{}
	var names []string
	for _, a := range t.Actions {
		for _, p := range a.params(t.strict) {
			if p.hidden {
				continue
			}
			if _, ok := users[p.Name]; !ok {
				names = append(names, p.Name)
				props[p.Name] = p.schema()
			}
			users[p.Name] = append(users[p.Name], a.Name)
		}
	}
	for _, n := range names {
		s := props[n].(map[string]any)
		desc, _ := s["description"].(string)
		s["description"] = strings.TrimSpace(desc + " (actions: " + strings.Join(users[n], ", ") + ")")
	}
	return map[string]any{
		"$schema":              "https://json-schema.org/draft/2020-12/schema",
		"type":                 "object",
		"properties":           props,
		"required":             []string{"action"},
		"additionalProperties": false,
	}
}

func (p Param) schema() map[string]any {
	s := map[string]any{"type": string(p.Type)}
	if p.Description != "" {
		s["description"] = p.Description
	}
	if p.Type == Strings {
		s["items"] = map[string]any{"type": "string"}
	}
	if p.Type == Objects {
		s["type"] = "array"
		s["items"] = map[string]any{"type": "object"}
	}
	if len(p.Enum) > 0 {
		s["enum"] = p.Enum
	}
	if p.Default != nil {
		s["default"] = p.Default
	}
	if p.Min != nil {
		s["minimum"] = *p.Min
	}
	if p.Max != nil {
		s["maximum"] = *p.Max
	}
	return s
}

// Call runs one tool call. The result is a JSON-ready value; a failure is an
// *Error carrying an agent-facing code.
func (r *Registry) Call(ctx context.Context, tool string, raw json.RawMessage) (any, error) {
	t, ok := r.tools[tool]
	if !ok {
		return nil, &Error{Code: CodeUnknownTool, Message: fmt.Sprintf("unknown tool %q", tool),
			Action: "call tools/list to see the tools"}
	}
	fields, err := decodeObject(raw)
	if err != nil {
		return nil, err
	}
	var name string
	if v, ok := fields["action"]; !ok {
		return nil, &Error{Code: CodeInvalidArguments, Message: "missing argument \"action\"",
			Action: "pass one of: " + strings.Join(t.ActionNames(), ", "), ValidActions: t.ActionNames()}
	} else if err := json.Unmarshal(v, &name); err != nil {
		return nil, &Error{Code: CodeInvalidArguments, Message: "argument \"action\" must be a string"}
	}
	if name == "help" {
		return t.help(fields)
	}
	a, ok := t.Action(name)
	if !ok {
		return nil, &Error{Code: CodeUnknownAction, Message: fmt.Sprintf("tool %s has no action %q", t.Name, name),
			Action: "pass one of: " + strings.Join(t.ActionNames(), ", "), ValidActions: t.ActionNames()}
	}
	args, err := a.bind(fields, r.env.strictOn())
	if err != nil {
		return nil, err
	}
	if a.Policy.Class != strict.Read {
		return r.write(ctx, t, a, args, fields)
	}
	v, err := a.Run(ctx, r.env, args)
	if err != nil {
		return nil, kernelError(err)
	}
	return v, nil
}

// write hands a non-read action to the coordinator.
func (r *Registry) write(ctx context.Context, t *Tool, a *Action, args *Args, fields map[string]json.RawMessage) (any, error) {
	env := r.env
	if env.Coordinator == nil && env.Delegate != nil {
		raw, err := json.Marshal(fields)
		if err != nil {
			return nil, &Error{Code: CodeInvalidArguments, Message: "arguments cannot be encoded"}
		}
		return env.Delegate(ctx, t.Name, raw)
	}
	if env.Coordinator == nil {
		return nil, &Error{Code: strict.CodeCoordinatorUnavailable, Message: "this process has no write coordinator; nothing was written",
			Action: "check that the Sisyphus authority is running (sisyphus serve), then preflight again", WriteAttempted: boolp(false)}
	}
	business := map[string]any{}
	for k, raw := range fields {
		if isControl(k) {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, &Error{Code: CodeInvalidArguments, Message: fmt.Sprintf("argument %q is not valid JSON", k)}
		}
		business[k] = v
	}
	var targets []string
	if a.Write.Targets != nil {
		targets = a.Write.Targets(args)
	}
	policy := a.Policy
	if a.PolicyFor != nil {
		policy = a.PolicyFor(args)
	}
	op := strict.Op{
		Tool: t.Name, Action: a.Name, Policy: policy, Business: business, Targets: targets,
		ValidateOnly: args.Bool(fieldValidateOnly), RequestID: args.String(fieldRequestID),
		Credential: args.String(string(policy.Precondition)),
		Execute:    func(ctx context.Context) (map[string]any, error) { return a.Write.Execute(ctx, env, args) },
	}
	if a.Write.State != nil {
		op.ReadState = func(ctx context.Context) (any, error) { return a.Write.State(ctx, env, args) }
	}
	if a.Write.Readback != nil {
		op.Readback = func(ctx context.Context, p map[string]any) (any, error) { return a.Write.Readback(ctx, env, args, p) }
	}
	v, err := env.Coordinator.Do(ctx, op)
	if err != nil {
		return nil, writeError(err)
	}
	return v, nil
}

func boolp(b bool) *bool { return &b }

// writeError maps coordinator failures to agent-facing errors.
func writeError(err error) error {
	var f *strict.Failure
	if errors.As(err, &f) {
		return &Error{Code: f.Code, Message: f.Message, Action: f.Action(), WriteAttempted: boolp(f.WriteAttempted),
			RequestID: f.RequestID, ExpectedHash: f.ExpectedHash, CurrentHash: f.CurrentHash, Cause: f.Cause}
	}
	// A state read failed before anything was written.
	e := kernelError(err).(*Error)
	if e.WriteAttempted == nil {
		e.WriteAttempted = boolp(false)
	}
	return e
}

// decodeObject parses the arguments object; keys keep their raw values.
func decodeObject(raw json.RawMessage) (map[string]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return nil, &Error{Code: CodeInvalidArguments, Message: "arguments must be a JSON object"}
	}
	return fields, nil
}

// bind checks the arguments against the action's parameters.
func (a *Action) bind(fields map[string]json.RawMessage, strictOn bool) (*Args, error) {
	known := map[string]Param{}
	params := a.params(strictOn)
	for _, p := range params {
		known[p.Name] = p
	}
	args := &Args{values: map[string]any{}}
	var unknown []string
	for k, v := range fields {
		if k == "action" {
			continue
		}
		p, ok := known[k]
		if !ok {
			unknown = append(unknown, k)
			continue
		}
		val, err := p.decode(v)
		if err != nil {
			return nil, &Error{Code: CodeInvalidArguments, Message: err.Error(), Action: "see {\"action\":\"help\",\"topic\":\"" + a.Name + "\"}"}
		}
		if val != nil {
			args.values[k] = val
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, &Error{Code: CodeInvalidArguments, Message: fmt.Sprintf("action %s does not take %s", a.Name, strings.Join(unknown, ", ")),
			Action: "see {\"action\":\"help\",\"topic\":\"" + a.Name + "\"}"}
	}
	for _, p := range params {
		if _, ok := args.values[p.Name]; !ok {
			if p.Required {
				return nil, &Error{Code: CodeInvalidArguments, Message: fmt.Sprintf("missing argument %q", p.Name),
					Action: "see {\"action\":\"help\",\"topic\":\"" + a.Name + "\"}"}
			}
			if p.Default != nil {
				args.values[p.Name] = p.Default
			}
		}
	}
	return args, nil
}

func (p Param) decode(raw json.RawMessage) (any, error) {
	if string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	switch p.Type {
	case String:
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("argument %q must be a string", p.Name)
		}
		if len(p.Enum) > 0 && !contains(p.Enum, s) {
			return nil, fmt.Errorf("argument %q must be one of %s", p.Name, strings.Join(p.Enum, ", "))
		}
		return s, nil
	case Integer:
		var f float64
		if err := json.Unmarshal(raw, &f); err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			return nil, fmt.Errorf("argument %q must be an integer", p.Name)
		}
		n := int(f)
		if p.Min != nil && n < *p.Min || p.Max != nil && n > *p.Max {
			return nil, fmt.Errorf("argument %q must be between %s and %s", p.Name, bound(p.Min), bound(p.Max))
		}
		return n, nil
	case Boolean:
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, fmt.Errorf("argument %q must be a boolean", p.Name)
		}
		return b, nil
	case Strings:
		var l []string
		if err := json.Unmarshal(raw, &l); err != nil {
			return nil, fmt.Errorf("argument %q must be an array of strings", p.Name)
		}
		return l, nil
	case Object:
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil || m == nil {
			return nil, fmt.Errorf("argument %q must be an object", p.Name)
		}
		return m, nil
	case Objects:
		var l []map[string]any
		if err := json.Unmarshal(raw, &l); err != nil {
			return nil, fmt.Errorf("argument %q must be an array of objects", p.Name)
		}
		for _, m := range l {
			if m == nil {
				return nil, fmt.Errorf("argument %q must be an array of objects", p.Name)
			}
		}
		return l, nil
	}
	return nil, fmt.Errorf("argument %q has an unsupported type", p.Name)
}

func bound(n *int) string {
	if n == nil {
		return "any"
	}
	return fmt.Sprint(*n)
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// Args are an action's validated arguments.
type Args struct{ values map[string]any }

// Has reports whether an argument was given (or has a default).
func (a *Args) Has(name string) bool { _, ok := a.values[name]; return ok }

// String returns a string argument ("" when absent).
func (a *Args) String(name string) string { s, _ := a.values[name].(string); return s }

// Int returns an integer argument (0 when absent).
func (a *Args) Int(name string) int { n, _ := a.values[name].(int); return n }

// Bool returns a boolean argument.
func (a *Args) Bool(name string) bool { b, _ := a.values[name].(bool); return b }

// Strings returns a string-array argument.
func (a *Args) Strings(name string) []string { l, _ := a.values[name].([]string); return l }

// Object returns an object argument.
func (a *Args) Object(name string) map[string]any { m, _ := a.values[name].(map[string]any); return m }

// help answers {"action":"help"} with the tool's actions, or one action's
// arguments with a topic.
func (t *Tool) help(fields map[string]json.RawMessage) (any, error) {
	var topic string
	if v, ok := fields["topic"]; ok {
		json.Unmarshal(v, &topic)
	}
	if topic == "" || topic == "overview" {
		var actions []map[string]any
		for _, a := range t.Actions {
			actions = append(actions, map[string]any{"action": a.Name, "summary": a.Summary, "class": a.Policy.Class.String()})
		}
		return map[string]any{"tool": t.Name, "description": t.Description, "actions": actions,
			"hint": "call {\"action\":\"help\",\"topic\":\"<action>\"} for an action's arguments"}, nil
	}
	a, ok := t.Action(topic)
	if !ok {
		return nil, &Error{Code: CodeUnknownHelpTopic, Message: fmt.Sprintf("tool %s has no action %q", t.Name, topic),
			Action: "pass one of: " + strings.Join(t.ActionNames()[1:], ", "), ValidActions: t.ActionNames()[1:]}
	}
	var params []map[string]any
	for _, p := range a.params(t.strict) {
		if p.hidden {
			continue
		}
		m := p.schema()
		m["name"] = p.Name
		m["required"] = p.Required
		params = append(params, m)
	}
	if params == nil {
		params = []map[string]any{}
	}
	return map[string]any{"tool": t.Name, "action": a.Name, "summary": a.Summary, "class": a.Policy.Class.String(),
		"arguments": params, "example": example(t.Name, a)}, nil
}

func example(tool string, a *Action) map[string]any {
	ex := map[string]any{"action": a.Name}
	for _, p := range a.Params {
		if !p.Required {
			continue
		}
		switch p.Type {
		case Integer:
			ex[p.Name] = 1
		case Boolean:
			ex[p.Name] = true
		case Strings:
			ex[p.Name] = []string{"..."}
		case Object:
			ex[p.Name] = map[string]any{}
		default:
			if strings.HasSuffix(strings.ToLower(p.Name), "id") || p.Name == "notebook" {
				ex[p.Name] = "20260812120000-abcdefg"
			} else {
				ex[p.Name] = "..."
			}
		}
	}
	return ex
}

// Agent-facing error codes of the tools.
const (
	CodeUnknownTool       = "unknown_tool"
	CodeUnknownAction     = "unknown_action"
	CodeUnknownHelpTopic  = "unknown_help_topic"
	CodeInvalidArguments  = "invalid_arguments"
	CodeNotFound          = "not_found"
	CodeKernelError       = "kernel_error"
	CodeKernelAuth        = "kernel_auth_failed"
	CodeKernelUnreachable = "kernel_unreachable"
	CodeOutcomeUnknown    = "outcome_unknown"
)

// Error is an agent-facing failure: a stable code, a message, and what the
// caller should do. Internal causes stay in Cause and are not shown.
type Error struct {
	Code         string   `json:"code"`
	Message      string   `json:"message"`
	Action       string   `json:"action,omitempty"`
	ValidActions []string `json:"validActions,omitempty"`
	// Write outcome fields, shown beside the error (not inside it).
	WriteAttempted *bool  `json:"-"`
	RequestID      string `json:"-"`
	ExpectedHash   string `json:"-"`
	CurrentHash    string `json:"-"`
	Cause          error  `json:"-"`
}

// Result is the structured object of an error answer: {error:{code,message,
// action}} plus, for writes, writeAttempted and requestId, and for
// state_changed the expected and current hashes.
func (e *Error) Result() map[string]any {
	out := map[string]any{"error": e}
	if e.WriteAttempted != nil {
		out["writeAttempted"] = *e.WriteAttempted
	}
	if e.RequestID != "" {
		out["requestId"] = e.RequestID
	}
	if e.ExpectedHash != "" {
		out["expectedHash"] = e.ExpectedHash
		out["currentHash"] = e.CurrentHash
	}
	return out
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Unwrap returns the internal cause.
func (e *Error) Unwrap() error { return e.Cause }

// kernelError maps client failures to agent-facing codes.
func kernelError(err error) error {
	var te *Error
	if errors.As(err, &te) {
		return te
	}
	var auth *siyuan.AuthError
	var api *siyuan.APIError
	var tr *siyuan.TransportError
	switch {
	case siyuan.IsOutcomeUnknown(err):
		return &Error{Code: CodeOutcomeUnknown, Message: "the kernel's reply was lost after the request was sent",
			Action: "inspect the target before retrying", Cause: err}
	case errors.As(err, &auth):
		return &Error{Code: CodeKernelAuth, Message: "SiYuan refused Sisyphus's API token",
			Action: "check the SiYuan token Sisyphus is configured with (sisyphus doctor)", Cause: err}
	case errors.As(err, &api):
		return &Error{Code: CodeKernelError, Message: fmt.Sprintf("SiYuan answered code %d: %s", api.Code, api.Msg),
			Action: "check the arguments; read the target again", Cause: err}
	case errors.As(err, &tr), errors.Is(err, context.DeadlineExceeded):
		return &Error{Code: CodeKernelUnreachable, Message: "SiYuan could not be reached",
			Action: "check that SiYuan is running (sisyphus doctor), then retry the read", Cause: err}
	case errors.Is(err, context.Canceled):
		return &Error{Code: "cancelled", Message: "the call was cancelled", Cause: err}
	}
	return &Error{Code: CodeKernelError, Message: "the kernel call failed", Action: "retry the read; run sisyphus doctor if it persists", Cause: err}
}

func notFound(what, id string) error {
	return &Error{Code: CodeNotFound, Message: fmt.Sprintf("%s %s not found", what, id),
		Action: "check the id; find ids with document.lookup or search.fulltext"}
}

func badArg(format string, a ...any) error {
	return &Error{Code: CodeInvalidArguments, Message: fmt.Sprintf(format, a...)}
}
