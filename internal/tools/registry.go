package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools/markup"
)

// Registry holds the tools.
type Registry struct {
	tools map[string]*Tool
	order []string
	env   *Env
}

// NewRegistry returns a registry of tools bound to env. It fails if an
// action is unclassified, incomplete for its class, or declared twice: a
// tool whose safety class is unknown must not be served.
func NewRegistry(env *Env, tools ...*Tool) (*Registry, error) {
	r := &Registry{tools: map[string]*Tool{}, env: env}
	env.tools = r.Tools
	for _, t := range tools {
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
		if w := a.writeForm; w != nil {
			if err := w.Policy.Validate(); err != nil || w.Policy.Class == strict.Read {
				return fmt.Errorf("tool %s action %s: its write form must be a write: %v", t.Name, a.Name, err)
			}
			if err := w.complete(); err != nil {
				return fmt.Errorf("tool %s action %s (%s): %w", t.Name, a.Name, a.writeWhen, err)
			}
		}
	}
	r.tools[t.Name] = t
	r.order = append(r.order, t.Name)
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

// View is what the agent is shown under the configuration the env's source
// loads now (every tool, when it has none).
func (r *Registry) View(ctx context.Context) (View, error) {
	p, err := r.policy(ctx)
	if err != nil {
		return View{}, err
	}
	return View{Policy: p, Strict: r.env.strictOn(p)}, nil
}

// Visible lists the tools a view shows: those with an enabled action.
func (r *Registry) Visible(v View) []*Tool {
	var out []*Tool
	for _, t := range r.Tools() {
		if v.Policy.ToolOn(t) {
			out = append(out, t)
		}
	}
	return out
}

// Env is what the registry's actions run against.
func (r *Registry) Env() *Env { return r.env }

// Tool returns a tool by name.
func (r *Registry) Tool(name string) (*Tool, bool) {
	t, ok := r.tools[name]
	return t, ok
}

// Call runs one tool call. The result is a JSON-ready value; a failure is a
// *failure.Error. The call runs under the policy ctx carries (WithPolicy),
// else under the one the env's source loads now.
func (r *Registry) Call(ctx context.Context, tool string, raw json.RawMessage) (any, error) {
	return r.CallInput(ctx, tool, Input{Raw: raw})
}

// Input is a call's arguments as sent and, when its caller decoded them
// already (the MCP layer checks them against the schema), their top-level
// members: every step of the call reads those instead of decoding the
// arguments again, which for a large write is a pass over megabytes each.
type Input struct {
	// Raw is the arguments object as sent.
	Raw json.RawMessage
	// Fields, when set, are Raw's members, decoded from exactly Raw; no
	// step changes them. Nil: each step decodes Raw.
	Fields map[string]json.RawMessage
}

// Action is the action the arguments name, exactly as the call runs it
// (ok false: no "action" string).
func (in Input) Action() (string, bool) {
	fields, err := in.fields()
	if err != nil {
		return "", false
	}
	return actionOf(fields)
}

// actionOf is the "action" string of decoded arguments.
func actionOf(fields map[string]json.RawMessage) (string, bool) {
	return textOf(fields["action"])
}

func (in Input) fields() (map[string]json.RawMessage, error) {
	if in.Fields != nil {
		return in.Fields, nil
	}
	return decodeObject(in.Raw)
}

// CallInput is Call of arguments decoded once for every step.
func (r *Registry) CallInput(ctx context.Context, tool string, in Input) (any, error) {
	pc, err := r.prepare(ctx, tool, in, true)
	if err != nil || pc.answer != nil {
		return pc.answer, err
	}
	_, pending, err := r.toConfirm(ctx, pc.tool, pc.fields)
	if err != nil {
		return nil, err
	}
	if pending && !confirmed(ctx, pc.tool.Name, pc.action.Name) {
		// The entry point asks before admitting the call; reaching here
		// unasked is a bug of the entry point, and nothing runs.
		e := failure.New(failure.ConfirmationRequired, "%s.%s needs the person's confirmation and was not confirmed; nothing was run", pc.tool.Name, pc.action.Name)
		return nil, e.Attempted(false)
	}
	ctx = WithPolicy(ctx, pc.policy)
	if pc.writes {
		v, err := r.write(ctx, pc)
		if gerr := pc.gate.wait(); gerr != nil {
			if isAbsent(gerr) && fromLedger(v, err) {
				// The ledger answered a request it knows (a replay): what
				// it answers was the caller's when the target was there to
				// see, and it answers the same whether the target is gone
				// or hidden since.
				return v, err
			}
			// Whatever ran (a replay answered from the ledger, a refusal),
			// a call the gate refuses answers only the refusal.
			return nil, gerr
		}
		return v, err
	}
	v, err := pc.action.run(ctx, r.env, pc.parsed)
	if gerr := pc.gate.wait(); gerr != nil {
		// The read ran while the gate looked up its notebooks; a refused
		// call shows nothing of what it read, not even an error.
		return nil, gerr
	}
	if err != nil {
		return nil, KernelError(err)
	}
	if pc.args.flag(fieldValidateOnly) {
		return readPreflight(v), nil
	}
	return v, nil
}

// readPreflight is the answer of a read sent with validateOnly:true, which
// upstream runs as the read it is: the read's answer, saying that nothing
// needed a preflight.
func readPreflight(v any) any {
	raw, err := json.Marshal(v)
	var m map[string]any
	if err != nil || json.Unmarshal(raw, &m) != nil || m == nil {
		return v
	}
	m["preflight"] = "not needed: this action only reads, so it ran as a read (validateOnly is for writes)"
	return m
}

// gate is a call's notebook decision still being made: its kernel lookups
// (the notebook of each block the call names) run while the call reads, so
// that they cost no round trip of their own; nothing the call writes or
// answers goes out before the decision.
type gate struct {
	done chan struct{}
	err  error
	// touches, for a gate that worked them out itself, are what the call
	// touches (read only after done).
	touches []Touch
}

// startGate decides the call's touches under p in the background: those
// given, or, with resolve set (a Resolve scope: a kernel read, such as a
// database's columns), those it works out, so that the read overlaps the
// call's own state read instead of preceding it.
func startGate(ctx context.Context, env *Env, p *Policy, touches []Touch, resolve func() ([]Touch, error), writes bool) *gate {
	g := &gate{done: make(chan struct{})}
	go func() {
		defer close(g.done)
		var err error
		func() {
			// A panic here would end the process: the call answers it.
			defer failure.Recover(&err)
			if resolve != nil {
				touches, err = resolve()
				g.touches = touches
			}
			if err == nil {
				err = authorize(ctx, env, p, touches)
			}
		}()
		if err != nil {
			g.err = refused(err, writes)
		}
	}()
	return g
}

// touchesOr is what the call touched: the gate's own resolution, or t.
func (g *gate) touchesOr(t []Touch) []Touch {
	if g == nil {
		return t
	}
	<-g.done
	if g.touches != nil {
		return g.touches
	}
	return t
}

// wait returns the decision (nil: allowed; a nil gate was decided before
// the call started).
func (g *gate) wait() error {
	if g == nil {
		return nil
	}
	<-g.done
	return g.err
}

// Check runs a call's gate and argument checks without running it: what
// Call would refuse before the action starts, it refuses (used before a
// person is asked to confirm a call that cannot run anyway).
func (r *Registry) Check(ctx context.Context, tool string, in Input) error {
	pc, err := r.prepare(ctx, tool, in, false)
	if err != nil && pc.writes && isAbsent(err) && pc.args != nil && pc.args.str(fieldRequestID) != "" && !pc.args.flag(fieldValidateOnly) {
		// A commit of something gone or hidden may be a replay, which
		// the ledger answers (see CallInput): it is asked about like any
		// other, and the gate decides again when it runs.
		return nil
	}
	return err
}

// fromLedger reports whether a write's answer is the ledger's for a
// request it knows: a replay, or a failure it recorded under the request.
// It reads the answer's JSON: at a front, the answer is the authority's,
// decoded from the wire.
func fromLedger(v any, err error) bool {
	if err == nil {
		m, ok := v.(map[string]any)
		return ok && m["replayed"] == true
	}
	var fe *failure.Error
	return errors.As(err, &fe) && fe.RequestID != "" && !isAbsent(fe)
}

// prepared is a call that passed the gate and parsed its arguments.
type prepared struct {
	tool   *Tool
	action *Action
	policy *Policy
	fields map[string]json.RawMessage
	args   *boundArgs
	parsed any
	writes bool
	answer any // help answers here, without an action
	// gate, when set, is the notebook decision still running (see gate).
	gate *gate
	// touches are what the call touches: the gate's input, and what a
	// committed write asks SiYuan's windows to show again.
	touches []Touch
}

// prepare decodes a call, applies the gate (configuration readable, tool
// and action enabled, every touched notebook's level) and parses its
// arguments. With overlap, a notebook decision that needs kernel lookups
// may be left running (prepared.gate) where the call can wait for it: a
// read without side effects, or a write the authority's coordinator runs.
func (r *Registry) prepare(ctx context.Context, tool string, in Input, overlap bool) (prepared, error) {
	pc, name, err := r.decode(ctx, tool, in)
	if err != nil {
		return pc, err
	}
	if name == "help" {
		pc.answer, err = r.help(ctx, pc)
		return pc, err
	}
	if pc.action, err = r.actionNamed(ctx, pc.tool, pc.policy, pc.fields, name); err != nil {
		return pc, err
	}
	if pc.action.Name != name {
		// An alias (rm, ls, kebab-case): the call runs, binds its request
		// and answers under the action's own name.
		pc.fields = maps.Clone(pc.fields)
		pc.fields["action"], _ = json.Marshal(pc.action.Name)
	}
	pc.writes = pc.action.Policy.Class != strict.Read
	if err := enabled(pc); err != nil {
		return pc, err
	}
	if err := r.admit(pc, in.Raw); err != nil {
		return pc, err
	}
	if err := r.parse(&pc); err != nil {
		return pc, refused(err, pc.writes)
	}
	if err := r.decideNotebooks(ctx, &pc, in.Raw, overlap); err != nil {
		return pc, refused(err, pc.writes)
	}
	return pc, nil
}

// decode finds the call's tool, the policy it runs under, its decoded
// arguments and the action they name.
func (r *Registry) decode(ctx context.Context, tool string, in Input) (prepared, string, error) {
	var pc prepared
	t, ok := r.tools[tool]
	if !ok {
		return pc, "", failure.New(failure.UnknownTool, "unknown tool %q", tool)
	}
	pc.tool = t
	policy, err := r.policy(ctx)
	if err != nil {
		return pc, "", err
	}
	pc.policy = policy
	if pc.fields, err = in.fields(); err != nil {
		return pc, "", err
	}
	v, ok := pc.fields["action"]
	if !ok {
		return pc, "", unknownAction(t, policy, failure.Invalid("missing argument \"action\""))
	}
	name, ok := textOf(v)
	if !ok {
		return pc, "", failure.Invalid("argument \"action\" must be a string")
	}
	return pc, name, nil
}

// help answers the tool's help action.
func (r *Registry) help(ctx context.Context, pc prepared) (any, error) {
	t, policy := pc.tool, pc.policy
	if !policy.ToolOn(t) {
		return nil, disabled(t, &Action{Name: "help"}, true)
	}
	var topic string
	if json.Unmarshal(pc.fields["topic"], &topic) == nil && topic != "" && t.Dynamic != nil && !hasAction(t, topic) {
		// A topic may name a tool discovered since (or never, in this
		// process): look for it first; help answers an unknown one.
		t.Dynamic.Lookup(siyuan.WithoutReadMeter(ctx), r.env, topic)
	}
	return t.help(policy, r.env.strictOn(policy), pc.fields)
}

// actionNamed is the action a call of t runs: the one it names, discovered
// now if t has discovered actions, or its write form when its arguments
// ask for that.
func (r *Registry) actionNamed(ctx context.Context, t *Tool, policy *Policy, fields map[string]json.RawMessage, name string) (*Action, error) {
	a, ok := t.Action(name)
	if !ok && t.Dynamic != nil {
		var err error
		if a, ok, err = t.Dynamic.Lookup(siyuan.WithoutReadMeter(ctx), r.env, name); err != nil {
			return nil, KernelError(err)
		}
	}
	if !ok {
		return nil, unknownAction(t, policy, failure.New(failure.UnknownAction, "tool %s has no action %q", t.Name, name))
	}
	// A read with a write form (av.render createIfNotExist) runs as that
	// write when its argument asks; enabled under the same switch.
	form, err := a.form(siyuan.WithoutReadMeter(ctx), r.env, fields)
	if err != nil {
		return nil, KernelError(err).Clone().Attempted(false)
	}
	return form, nil
}

// enabled refuses a call the configuration does not enable: one it could
// not read (but for an action that touches no notebook), or a tool or
// action it turns off.
func enabled(pc prepared) error {
	t, a, policy := pc.tool, pc.action, pc.policy
	switch {
	case policy.Err != nil && (pc.writes || !a.none):
		return configFailure(policy, pc.writes)
	case !policy.ToolOn(t):
		return disabled(t, a, true)
	case !policy.ActionOn(t, a), t.Dynamic != nil && !slices.Contains(t.Actions, a) && !t.Dynamic.Exposes(policy, a):
		return disabled(t, a, false)
	}
	return nil
}

// admit refuses, before anything reads or writes, what the authority never
// runs: a call naming a path on a computer, and a write too large for the
// one write lane or holding what SiYuan cannot store.
func (r *Registry) admit(pc prepared, raw json.RawMessage) error {
	a := pc.action
	if r.env.Coordinator != nil {
		if err := refuseLocalPaths(a, pc.fields); err != nil {
			return err
		}
	}
	if !pc.writes {
		return nil
	}
	max := r.env.maxWriteBytes()
	if a.budget != nil {
		max = a.budget(r.env)
	}
	if len(raw) > max {
		// One write holds the one write lane while it runs: its size is
		// capped before anything reads or writes.
		e := failure.Invalid("the arguments of this write are %d bytes; one write may carry at most %d (the server's --max-write-size)", len(raw), max).
			With("limit", max).With("size", len(raw))
		e.Action = "split the change into smaller writes (several blocks, or several updates)"
		return e.Attempted(false)
	}
	if what := unstorable(raw); what != "" {
		e := failure.Invalid("the arguments hold %s, which SiYuan cannot store as sent (it would keep U+FFFD instead); nothing was written", what)
		e.Action = "remove the character, or escape it as text, and call again"
		return e.Attempted(false)
	}
	return nil
}

// refuseLocalPaths refuses, at the authority, a call that still names a
// path on a computer: a path in a call is its sender's, the authority may
// run where the person's files are, and it opens none.
func refuseLocalPaths(a *Action, fields map[string]json.RawMessage) error {
	for _, k := range a.localPaths {
		if named(fields[k]) {
			e := failure.New(failure.LocalPathRefused, "%s names a path on a computer, and the authority never opens a path a call names; nothing was read or written", k).
				With("argument", k)
			return e.Attempted(false)
		}
	}
	return nil
}

// parse binds the call's arguments to its action's parameters and parses
// them once (pc.args is set once they bind, even when the parse fails).
func (r *Registry) parse(pc *prepared) error {
	a := pc.action
	args, err := bind(a.Name, a.params(r.env.strictOn(pc.policy)), pc.fields)
	if err != nil {
		return err
	}
	pc.args = args
	if err := controlFields(a, args); err != nil {
		return err
	}
	pc.parsed, err = a.parse(args)
	return err
}

// controlFields checks a write's control fields against each other:
// expectedHash (upstream's name) stands for expectedStateHash, and a call
// that carries a requestId with validateOnly:true is refused rather than
// run as a new preflight, which would answer another requestId and leave
// the write undone.
func controlFields(a *Action, args *boundArgs) error {
	if a.Policy.Class == strict.Read {
		return nil
	}
	if alias := args.str(fieldExpectedHash); alias != "" {
		name := string(strict.ExpectedStateHash)
		if cur := args.str(name); cur != "" && cur != alias {
			return failure.Invalid("expectedHash and expectedStateHash differ; pass one (expectedHash is another name of expectedStateHash)").Attempted(false)
		}
		args.values[name] = alias
	}
	if args.flag(fieldValidateOnly) && args.str(fieldRequestID) != "" {
		e := failure.Invalid("validateOnly:true with a requestId: a preflight issues a new requestId, so this call would only preflight again; nothing was run").
			With("reason", "validate_only_with_request_id").Attempted(false)
		e.Action = "to commit, repeat the call without validateOnly, with the requestId and the credential the preflight returned; to preflight again, drop requestId"
		return e
	}
	return nil
}

// decideNotebooks works out what the call touches and decides its
// notebooks: now, or (with overlap, when the call waits in a kernel read
// anyway) in the background, as pc.gate.
func (r *Registry) decideNotebooks(ctx context.Context, pc *prepared, raw json.RawMessage, overlap bool) error {
	a, policy, writes := pc.action, pc.policy, pc.writes
	// The gate's lookups are not the action's reading: they are not
	// charged to its read budget. They run under the call's policy, so
	// that what an action resolves (a path's notebook, a database's
	// blocks) leaves out what agents cannot see.
	gctx := WithPolicy(siyuan.WithoutReadMeter(ctx), policy)
	// A write waits in its state read and its dispatch, so one without a
	// state reader decides first.
	waits := writes && r.env.Coordinator != nil && a.write.state != nil || !writes && !a.sideEffects
	if overlap && waits && a.resolves {
		pc.gate = startGate(gctx, r.env, policy, nil, func() ([]Touch, error) {
			ts, err := a.touchesOf(gctx, r.env, pc.parsed)
			return append(ts, refTouches(policy, raw)...), err
		}, writes)
		return nil
	}
	touches, err := a.touchesOf(gctx, r.env, pc.parsed)
	if err != nil {
		return err
	}
	touches = append(touches, refTouches(policy, raw)...)
	pc.touches = touches
	if overlap && waits && needsLookup(policy, touches) {
		pc.gate = startGate(gctx, r.env, policy, touches, nil, writes)
		return nil
	}
	err = authorize(gctx, r.env, policy, touches)
	if err != nil && writes && r.env.front() && isAbsent(err) {
		// A front hands a write to its authority, whose gate decides
		// again, and lets the ledger answer a replay of something gone or
		// hidden since.
		return nil
	}
	return err
}

// refused is the failure of a call refused before it ran: for a write,
// nothing was attempted unless the error says otherwise.
func refused(err error, writes bool) *failure.Error {
	if !writes {
		return KernelError(err)
	}
	return notAttempted(err)
}

// notAttempted is err as the agent sees it, saying that no write was
// attempted unless err itself says otherwise: a failure before any kernel
// write.
func notAttempted(err error) *failure.Error { return KernelError(err).OrAttempted(false) }

// named reports whether an argument was sent with a value: not absent,
// null or an empty string.
func named(v json.RawMessage) bool {
	if len(v) == 0 {
		return false
	}
	var str string
	if json.Unmarshal(v, &str) == nil && str == "" {
		return false
	}
	return string(bytes.TrimSpace(v)) != "null"
}

// refTouches are the blocks a call's arguments reference, while the
// policy hides a notebook (nil otherwise: a reference to a block that is
// missing is then the kernel's business, and costs no lookup). A
// reference reads its target: SiYuan fills a reference's anchor text with
// the target's text (and keeps it updated), and a template render fills an
// empty one. A reference to a block the call cannot see is refused as that
// block is, whether it is missing or hidden.
//
// Every string of the arguments is read as decoded, keys and duplicate
// members included (a JSON escape such as \u0028 hides nothing), in both
// forms SiYuan reads a reference in, Markdown and block DOM
// (markup.RefIDs), whatever the dataType: the call's action decides
// which string reaches SiYuan, and SiYuan reads both forms in Markdown.
func refTouches(p *Policy, raw json.RawMessage) []Touch {
	if p == nil || !p.Hides() {
		return nil
	}
	var out []Touch
	seen := map[string]bool{}
	dec := json.NewDecoder(bytes.NewReader(raw))
	for {
		tok, err := dec.Token()
		if err != nil {
			// The arguments were validated whole before the gate runs;
			// a decoding error can only be their end.
			return out
		}
		str, ok := tok.(string)
		if !ok {
			continue
		}
		for _, id := range markup.RefIDs(str) {
			if !seen[id] {
				seen[id] = true
				out = append(out, OnBlock(id, LevelRead))
			}
		}
	}
}

// hasAction reports whether a tool has an action by name, declared or
// already discovered.
func hasAction(t *Tool, name string) bool { _, ok := t.Action(name); return ok }

// policy is the policy ctx carries, or the one the env's source loads.
func (r *Registry) policy(ctx context.Context) (*Policy, error) {
	if p := PolicyFrom(ctx); p != nil {
		return p, nil
	}
	if r.env.Policies == nil {
		return Unrestricted(), nil
	}
	p, err := r.env.Policies(ctx)
	if err != nil {
		return nil, KernelError(err)
	}
	return p, nil
}

func unknownAction(t *Tool, p *Policy, e *failure.Error) *failure.Error {
	names := t.actionNames(p)
	e.Action = "pass one of: " + strings.Join(names, ", ")
	return e.With("validActions", names)
}

// write hands a non-read call to the authority (at a front) or to this
// process's coordinator.
func (r *Registry) write(ctx context.Context, pc prepared) (any, error) {
	switch {
	case r.env.front():
		return r.delegate(ctx, pc)
	case r.env.Coordinator == nil:
		return nil, failure.New(failure.CoordinatorUnavailable, "this process has no write coordinator; nothing was written").Attempted(false)
	}
	return r.coordinate(ctx, pc)
}

// delegate sends a front's write to its authority, after the action's
// front hook, and completes the authority's answer with its deliver hook.
func (r *Registry) delegate(ctx context.Context, pc prepared) (any, error) {
	t, a, env := pc.tool, pc.action, r.env
	fields := maps.Clone(pc.fields)
	if a.Dangerous && confirmed(ctx, t.Name, a.Name) {
		// Confirmed here: the authority reads it on the internal hop.
		fields[FieldConfirm] = json.RawMessage("true")
	}
	if a.front != nil {
		if err := a.front(ctx, env, fields); err != nil {
			return nil, notAttempted(err)
		}
	}
	raw, err := json.Marshal(fields)
	if err != nil {
		return nil, failure.Invalid("arguments cannot be encoded").Attempted(false)
	}
	v, err := env.Delegate(ctx, t.Name, raw)
	if err != nil || a.deliver == nil {
		return v, err
	}
	return r.deliver(ctx, pc, v)
}

// deliver runs the action's deliver hook on the authority's answer v.
func (r *Registry) deliver(ctx context.Context, pc prepared, v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("the authority's answer: %w", err)
	}
	var res map[string]any
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, fmt.Errorf("the authority's answer: %w", err)
	}
	out, err := pc.action.deliver(ctx, r.env, pc.parsed, res)
	if err != nil {
		// The authority has acted (an export exists on the kernel);
		// what failed is the front's part of it.
		return nil, KernelError(err).OrAttempted(true)
	}
	return out, nil
}

// coordinate runs a write through this process's coordinator and, once it
// committed, asks SiYuan's windows to show what changed.
func (r *Registry) coordinate(ctx context.Context, pc prepared) (any, error) {
	business, err := businessArgs(pc.fields)
	if err != nil {
		return nil, err
	}
	ans, err := r.env.Coordinator.Do(ctx, r.operation(ctx, pc, business))
	if err != nil {
		// The coordinator says when a write was attempted; otherwise a
		// state read failed before anything was written.
		return nil, notAttempted(err)
	}
	if r.env.UI != nil && ans.Status == strict.StatusCommitted && !ans.Replayed {
		// After the answer is decided and outside the guarantee: a failed
		// nudge never turns the committed write into a failure.
		r.env.UI.Refresh(refreshOf(pc.tool.Name, pc.gate.touchesOr(pc.touches), business, ans.Fields))
	}
	return ans.Fields, nil
}

// businessArgs are the call's arguments without its control fields, as
// decoded JSON (numbers as json.Number): what leases and the ledger scope.
func businessArgs(fields map[string]json.RawMessage) (map[string]any, error) {
	business := map[string]any{}
	for k, raw := range fields {
		if isControl(k) {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, failure.Invalid("argument %q is not valid JSON", k).Attempted(false)
		}
		business[k] = v
	}
	return business, nil
}

// operation is the coordinator's operation of a call: its class, scope and
// control fields, and its steps bound to the parsed arguments, each
// waiting for the call's notebook decision before it acts.
func (r *Registry) operation(ctx context.Context, pc prepared, business map[string]any) strict.Op {
	a, w, env := pc.action, pc.action.write, r.env
	policy := a.Policy
	if a.policyFor != nil {
		policy = a.policyFor(pc.parsed)
	}
	op := strict.Op{
		Tool: pc.tool.Name, Action: a.Name, Policy: policy, Business: business, Targets: w.targets(pc.parsed), Direct: !env.StrictOn(ctx), Timeout: a.Timeout,
		ValidateOnly: pc.args.flag(fieldValidateOnly), RequestID: pc.args.str(fieldRequestID),
		Credential: pc.args.str(string(policy.Precondition)),
	}
	op.Execute, op.Readback = r.executeAndReadback(pc)
	if w.plan != nil {
		op.Plan, op.Execute = w.plan(env, pc.parsed, pc.gate.wait), nil
	}
	if w.state != nil {
		op.ReadState = r.stateReader(pc, policy.Class == strict.Mutation && !op.ValidateOnly && env.StrictOn(ctx))
	}
	if w.check != nil {
		op.Check = func(state any) error { return w.check(pc.parsed, state) }
	}
	if w.notes != nil {
		op.Notes = func(state any) map[string]any { return w.notes(pc.parsed, state) }
	}
	return op
}

// executeAndReadback are the operation's Execute and Readback (nil when
// the action has none), sharing what Execute hands the Readback of the
// same call.
func (r *Registry) executeAndReadback(pc prepared) (execute func(context.Context, any) (map[string]any, error), readback func(context.Context, map[string]any) (any, error)) {
	w, env := pc.action.write, r.env
	// handed is what this call's Execute hands its Readback: the
	// coordinator runs the two one after the other, never concurrently.
	var handed any
	if w.execute != nil {
		execute = func(ctx context.Context, state any) (map[string]any, error) {
			if err := pc.gate.wait(); err != nil {
				return nil, err
			}
			p, d, err := w.execute(ctx, env, pc.parsed, state)
			handed = d
			return p, agentSafe(err)
		}
	}
	if w.readback != nil {
		readback = func(ctx context.Context, p map[string]any) (any, error) {
			st, err := w.readback(ctx, env, pc.parsed, p, handed)
			return st, agentSafe(err)
		}
	}
	return execute, readback
}

// stateReader is the operation's ReadState. At a guarded commit, a
// refusal from the state reader is read as a state, whose digest differs
// from the lease's.
func (r *Registry) stateReader(pc prepared, guardedCommit bool) func(context.Context) (any, error) {
	w, env := pc.action.write, r.env
	return func(ctx context.Context) (any, error) {
		st, err := w.state(ctx, env, pc.parsed)
		// The state is read while the gate decides; nothing is issued,
		// recorded or dispatched before it has (a refusal hides what the
		// read found).
		if gerr := pc.gate.wait(); gerr != nil {
			return nil, gerr
		}
		var e *failure.Error
		if err != nil && guardedCommit && errors.As(err, &e) && isRefusal(e.Code) {
			// The same call passed its preflight: the target changed in
			// between. As a state, the refusal's digest differs from the
			// lease's, and the caller gets state_changed.
			return map[string]any{"refused": string(e.Code), "reason": e.Message}, nil
		}
		return st, err
	}
}

// isRefusal tells the codes a state reader refuses a call with.
func isRefusal(c failure.Code) bool {
	switch c {
	case failure.InvalidArguments, failure.NotFound, failure.AmbiguousPath:
		return true
	}
	return false
}

// Control fields: how a strict call is steered, never part of its business
// arguments.
const (
	fieldValidateOnly = "validateOnly"
	fieldRequestID    = "requestId"
	// fieldExpectedHash is upstream's name of expectedStateHash, accepted
	// beside it.
	fieldExpectedHash = "expectedHash"
	// FieldConfirm is how a client without form elicitation says the
	// person confirmed a dangerous call.
	FieldConfirm = "confirm"
)

func isControl(name string) bool {
	switch name {
	case fieldValidateOnly, fieldRequestID, FieldConfirm, fieldExpectedHash, string(strict.ExpectedStateHash), string(strict.ExpectedStructureHash),
		string(strict.ExpectedManifestHash), string(strict.ExpectedSourceHash):
		return true
	}
	return false
}

// params are the action's own parameters plus, for strict writes, the
// control fields the coordinator reads.
func (a *Action) params(strictOn bool) []Param {
	ps := append([]Param(nil), a.Params...)
	switch {
	case a.Dangerous:
		ps = append(ps, Param{Name: FieldConfirm, Type: Boolean,
			Description: "true only after the person explicitly approved this call (clients without form elicitation; a client with it gets a form instead)"})
	case a.localEffects != nil:
		ps = append(ps, Param{Name: FieldConfirm, Type: Boolean,
			Description: "true only after the person explicitly approved this call, when it saves a file on their computer " +
				"(through stdio, sisyphus call or a front; clients without form elicitation; a client with it gets a form instead)"})
	}
	if a.Policy.Class == strict.Read {
		// Accepted as upstream accepts it, to run the read (see
		// readPreflight); not advertised.
		return append(ps, Param{Name: fieldValidateOnly, Type: Boolean, hidden: true})
	}
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
		if f == strict.ExpectedStateHash {
			ps = append(ps, Param{Name: fieldExpectedHash, Type: String, hidden: true})
		}
	}
	return ps
}
