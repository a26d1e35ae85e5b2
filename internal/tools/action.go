package tools

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/strict"
)

// Tool is one agent-facing tool: a name and its actions.
type Tool struct {
	Name        string
	Title       string
	Description string
	Actions     []*Action
	// Dynamic, when set, supplies actions discovered at run time (the
	// extension tool's forwarded tools), after the declared ones.
	Dynamic Dynamic
}

// Dynamic supplies a tool's actions discovered at run time. Each is built
// like a declared one (a Read or a Write) and passes the same gate.
type Dynamic interface {
	// Actions are the discovered actions the policy shows, in order.
	Actions(p *Policy) []*Action
	// Exposes reports whether the policy shows a discovered action (a
	// call of one it hides is refused as disabled before anything runs).
	Exposes(p *Policy, a *Action) bool
	// Cached returns a discovered action by name from what was discovered
	// last, without asking anyone.
	Cached(name string) (*Action, bool)
	// Lookup returns it, discovering again when the name is not known yet
	// (a call naming a tool that appeared since). A failed discovery is an
	// error; an unknown name is false.
	Lookup(ctx context.Context, env *Env, name string) (*Action, bool, error)
}

// Action is one value of a tool's `action` argument, as the registry runs
// it. Tool packages do not build it by hand: they declare a [Read] or a
// [Write] and call its Action method.
type Action struct {
	Name    string
	Summary string
	Policy  strict.WritePolicy
	Params  []Param
	// Destructive marks actions that remove data (MCP destructiveHint).
	Destructive bool
	// Dangerous actions run only after a person confirmed them (see
	// Confirm); OffByDefault ones are disabled until the configuration
	// enables them.
	Dangerous, OffByDefault bool
	// Example is a complete, valid call an agent can copy (help shows it).
	Example map[string]any
	// HelpExtra are more fields help shows for the action (a forwarded
	// tool's own input schema).
	HelpExtra map[string]any
	// Timeout bounds an external effect's time in the write lane (see
	// Write.Timeout); 0 for other classes.
	Timeout time.Duration

	parse     func(*boundArgs) (any, error)
	policyFor func(parsed any) strict.WritePolicy
	run       func(ctx context.Context, env *Env, parsed any) (any, error)
	write     *writeSteps
	// touches are the notebooks the call touches; global actions touch
	// none by their arguments (they filter what they list themselves).
	touches func(ctx context.Context, env *Env, parsed any) ([]Touch, error)
	global  bool // lists across notebooks, filtering them itself
	none    bool // reads or changes nothing of any notebook
	// sideEffects: a read that must not start before the gate decides.
	sideEffects bool
	// resolves: working out what the call touches reads the kernel
	// (Scope.Resolve), so it may overlap the call's own reads.
	resolves bool

	// writeForm is the write a read becomes when its writeWhen argument
	// is true (av.render with createIfNotExist), or is writeValue
	// (ensure_link_targets with mode "create"): the same name, its own
	// class, parameters and steps.
	writeForm  *Action
	writeWhen  string
	writeValue string
	writeIf    func(ctx context.Context, env *Env, fields map[string]json.RawMessage) (bool, error)

	budget  func(env *Env) int
	front   func(ctx context.Context, env *Env, fields map[string]json.RawMessage) error
	deliver func(ctx context.Context, env *Env, parsed any, result map[string]any) (any, error)
	// localPaths and localEffects: see Write.LocalPaths and LocalEffects.
	localPaths   []string
	localEffects func(ctx context.Context, env *Env, fields map[string]json.RawMessage) ([]string, error)
	// invalid is why the declaration cannot be served (NewRegistry
	// refuses it).
	invalid error
}

// Scope is how an action declares the notebooks it touches, which the gate
// checks before it runs: exactly one of its fields is set.
type Scope[A any] struct {
	// Touches are the notebooks, blocks and documents named by the
	// arguments.
	Touches func(A) []Touch
	// Resolve finds them with the kernel's help (human paths).
	Resolve func(ctx context.Context, env *Env, a A) ([]Touch, error)
	// Global: the action names no notebook but lists across them, and
	// filters its entries with Visible.
	Global bool
	// None: the action reads and changes nothing of any notebook (the
	// server's version, a notification); it runs even when the
	// configuration cannot be read.
	None bool
}

func (s Scope[A]) set(act *Action) {
	switch {
	case s.Touches != nil:
		act.touches = func(_ context.Context, _ *Env, parsed any) ([]Touch, error) { return s.Touches(parsed.(A)), nil }
	case s.Resolve != nil:
		act.touches = func(ctx context.Context, env *Env, parsed any) ([]Touch, error) {
			return s.Resolve(ctx, env, parsed.(A))
		}
		act.resolves = true
	}
	act.global, act.none = s.Global, s.None
}

// touchesOf returns what the parsed call touches.
func (a *Action) touchesOf(ctx context.Context, env *Env, parsed any) ([]Touch, error) {
	if a.touches == nil {
		return nil, nil
	}
	return a.touches(ctx, env, parsed)
}

// writeSteps are a write declaration with its argument type erased.
type writeSteps struct {
	targets func(parsed any) []string
	state   func(ctx context.Context, env *Env, parsed any) (any, error) // nil: none
	check   func(parsed, state any) error                                // nil: none
	// execute returns, beside the payload, what it hands the readback
	// of the same call (nil for a [Write]); readback receives it.
	execute  func(ctx context.Context, env *Env, parsed, state any) (Payload, any, error)
	readback func(ctx context.Context, env *Env, parsed any, p Payload, handed any) (any, error)
	notes    func(parsed, state any) map[string]any
	// plan, for a staged creation, replaces execute.
	plan func(env *Env, parsed any, wait func() error) *strict.Plan
}

// Payload is what a write's Execute returns: small (ids, counts, flags),
// because the ledger keeps it to replay, and public: every key reaches the
// answer. What only the readback needs goes through a [WriteWith] instead.
type Payload = map[string]any

// Read declares a read-only action whose arguments parse into A.
type Read[A any] struct {
	Name, Summary string
	// Validate refuses, or completes, A once its arguments are bound:
	// what the tags declaring them cannot say (one of two arguments, a
	// shape inside an object). A's fields declare the arguments (see
	// declare.go); an A without fields takes none.
	Validate func(*A) error
	// Run answers the read.
	Run func(ctx context.Context, env *Env, a A) (any, error)
	// Example is a complete, valid call for help (defaults to the action
	// and its required arguments).
	Example map[string]any
	// Scope declares the notebooks the read touches.
	Scope Scope[A]
	// Dangerous and OffByDefault: see Action.
	Dangerous, OffByDefault bool
	// SideEffects marks a read whose kernel calls may change something
	// (a template render): it starts only once the gate has decided, where
	// other reads start while the gate looks up their notebooks.
	SideEffects bool
	// WriteForm, with WriteWhen (a boolean argument), is the write the
	// call is when that argument is true: upstream's av.render is a read,
	// and a creation with createIfNotExist:true. It takes the read's name.
	WriteForm *Action
	WriteWhen string
	// WriteValue, when set, makes WriteWhen a string argument and the
	// call the write when it has this value: upstream's
	// document.ensure_link_targets is a read, and a creation with mode
	// "create".
	WriteValue string
	// WriteIf, when set, decides further (with the kernel's help) whether
	// a call whose WriteWhen argument is true is the write: upstream's
	// render with createIfNotExist of a database that exists is a render.
	WriteIf func(ctx context.Context, env *Env, fields map[string]json.RawMessage) (bool, error)
}

// Action turns the declaration into a registry action.
func (r Read[A]) Action() *Action {
	act := &Action{
		Name: r.Name, Summary: r.Summary, Policy: strict.WritePolicy{Class: strict.Read}, Example: r.Example,
		Dangerous: r.Dangerous, OffByDefault: r.OffByDefault, sideEffects: r.SideEffects,
		run: func(ctx context.Context, env *Env, parsed any) (any, error) {
			if r.Run == nil {
				return nil, errors.New("tools: read without Run")
			}
			return r.Run(ctx, env, parsed.(A))
		},
	}
	act.Params, act.parse, act.invalid = declared(r.Validate)
	r.Scope.set(act)
	if r.WriteForm != nil {
		r.WriteForm.Name = r.Name
		act.writeForm, act.writeWhen, act.writeValue, act.writeIf = r.WriteForm, r.WriteWhen, r.WriteValue, r.WriteIf
	}
	return act
}

// form is the action a call with these fields runs: the write form when
// its argument is true, else a itself.
func (a *Action) form(ctx context.Context, env *Env, fields map[string]json.RawMessage) (*Action, error) {
	if a.writeForm == nil {
		return a, nil
	}
	raw, ok := fields[a.writeWhen]
	if !ok {
		return a, nil
	}
	if a.writeValue == "" {
		var on bool
		if json.Unmarshal(raw, &on) != nil || !on {
			return a, nil
		}
	} else {
		var v string
		if json.Unmarshal(raw, &v) != nil || v != a.writeValue {
			return a, nil
		}
	}
	if a.writeIf != nil {
		w, err := a.writeIf(ctx, env, fields)
		if err != nil || !w {
			return a, err
		}
	}
	return a.writeForm, nil
}

// WriteForm returns the write a read becomes and the argument that makes
// it so (nil, "" for most actions).
func (a *Action) WriteForm() (*Action, string) { return a.writeForm, a.writeWhen }

// WriteOn is the value of the WriteForm argument that makes the call the
// write: true, or the string a WriteValue names.
func (a *Action) WriteOn() any {
	if a.writeValue != "" {
		return a.writeValue
	}
	return true
}

// WriteCondition says when the call is its write form, as help shows it:
// createIfNotExist: true, mode: "create".
func (a *Action) WriteCondition() string {
	v, _ := json.Marshal(a.WriteOn())
	return a.writeWhen + ": " + string(v)
}

// Write declares a write whose arguments parse into A and whose state
// reader returns S. The coordinator decides when each step runs:
//
//   - preflight: State, then Check (a refusal executes nothing), then the
//     lease (guarded: on the digest of the state);
//   - commit: State again and (guarded) the full comparison of digests,
//     then Check, then the ledger records executing and Execute runs once,
//     then Readback verifies;
//   - strict mode off and external actions: State and Check, then Execute
//     once.
//
// At a guarded commit, a refusal (*failure.Error) from State means the
// target changed since the preflight passed: the caller gets
// state_changed. At an additive commit it is answered as is.
type Write[A, S any] struct {
	Name, Summary string
	// Policy is the action's class; PolicyFor, when set, decides it per
	// call from the arguments (fs.write: create is additive, overwrite is
	// guarded), and Policy is then the guarded form the schema advertises.
	Policy    strict.WritePolicy
	PolicyFor func(A) strict.WritePolicy
	// Destructive marks actions that remove data (MCP destructiveHint).
	Destructive bool
	// Dangerous and OffByDefault: see Action.
	Dangerous, OffByDefault bool
	Example                 map[string]any
	// Scope declares the notebooks the write touches.
	Scope Scope[A]

	// Validate: see Read.
	Validate func(*A) error
	// Targets are the ids (or paths) the call touches: its lease scope and
	// targetCount.
	Targets func(A) []string
	// State reads the live state: hashed for a guarded mutation; for an
	// additive action (optional) only checked. A failed read fails the
	// call (fail closed); a *failure.Error is a refusal.
	State func(ctx context.Context, env *Env, a A) (S, error)
	// Check refuses what the state proves cannot succeed (a missing target
	// or parent, a name that does not fit), with the code the commit
	// would give. It must not call the kernel.
	Check func(a A, st S) error
	// Execute makes the write, each kernel write attempted once, from the
	// state read at commit. Classify kernel failures with [WriteFailure];
	// a refusal found before any kernel write is [Refuse].
	Execute func(ctx context.Context, env *Env, a A, st S) (Payload, error)
	// Stages, instead of Execute, makes the write a staged creation.
	Stages *Stages[A, S]
	// Readback verifies the change after Execute and returns the state to
	// hash: for a guarded mutation what State reads, so that an unchanged
	// readback is no_change. It may add public keys to the payload. A
	// readback that needs what Execute learnt (the text the kernel
	// applied, the state it changed) is a [WriteWith]'s.
	Readback func(ctx context.Context, env *Env, a A, p Payload) (any, error)

	// Budget, when set, replaces the server's cap on one write's arguments
	// (templates carry more than other writes).
	Budget func(env *Env) int
	// Front runs at a front before the call goes to the authority: it may
	// rewrite the arguments (stage a local file and send its handle).
	Front func(ctx context.Context, env *Env, fields map[string]json.RawMessage) error
	// Deliver runs at a front on the authority's answer: it completes what
	// only the person's machine can do (save a delivery=download manifest).
	Deliver func(ctx context.Context, env *Env, a A, result map[string]any) (any, error)
	// LocalPaths are the arguments that name a file of the person's
	// machine to read (localFilePath): only a front takes them, and its
	// Front hook replaces them. The authority refuses a call that still
	// carries one (local_path_refused) before anything runs: it opens no
	// path a call names.
	LocalPaths []string
	// LocalEffects says, at a front, what the call will do on the person's
	// disk (each line a phrase such as "reads the file /abs/x.png (4 bytes)"),
	// every path decided by Env.Local; none when the call does nothing
	// there. A front has a call with any local effect confirmed by its
	// person, naming each, whatever the action's class and even as a
	// preflight; a path the rule refuses refuses the call before anyone is
	// asked.
	LocalEffects func(ctx context.Context, env *Env, fields map[string]json.RawMessage) ([]string, error)
	// Notes adds fields to the preflight's answer from the state it read.
	Notes func(a A, st S) map[string]any
	// Timeout bounds an external effect (Policy.Class strict.External) in
	// the write lane, from when it takes the lane to its answer (0:
	// DefaultExternalTimeout): the writes queued behind it wait no longer.
	Timeout time.Duration
}

// DefaultExternalTimeout is how long an external effect may hold the write
// lane unless it declares its own Timeout.
const DefaultExternalTimeout = 60 * time.Second

// WriteWith is a write whose Execute hands its Readback a D: what only the
// write learns (the text the kernel applied, the state it changed from).
// D is typed and handed per call beside the payload, never inside it, so
// that a renamed or misspelt key cannot leave the readback checking
// nothing; it never reaches an answer or the ledger. Everything else is
// the embedded Write's, whose own Execute and Readback stay unset.
type WriteWith[A, S, D any] struct {
	Write[A, S]
	// Execute is Write.Execute that also returns what Readback needs.
	Execute func(ctx context.Context, env *Env, a A, st S) (Payload, D, error)
	// Readback is Write.Readback given what this call's Execute handed.
	Readback func(ctx context.Context, env *Env, a A, p Payload, d D) (any, error)
}

// Action turns the declaration into a registry action.
func (w WriteWith[A, S, D]) Action() *Action {
	var execute executeStep
	if w.Execute != nil {
		execute = func(ctx context.Context, env *Env, parsed, state any) (Payload, any, error) {
			st, _ := state.(S) // the zero S without a state reader
			return w.Execute(ctx, env, parsed.(A), st)
		}
	}
	var readback readbackStep
	if w.Readback != nil {
		readback = func(ctx context.Context, env *Env, parsed any, p Payload, handed any) (any, error) {
			d, ok := handed.(D)
			if !ok {
				// Only a bug of the registry gets here: fail the
				// readback rather than verify against nothing.
				return nil, fmt.Errorf("tools: %s: the readback was handed %T, not the %T its Execute hands", w.Name, handed, d)
			}
			return w.Readback(ctx, env, parsed.(A), p, d)
		}
	}
	act := w.Write.build(execute, readback)
	switch {
	case w.Write.Execute != nil || w.Write.Readback != nil:
		act.invalid = errors.New("a WriteWith declares its own Execute and Readback, not the embedded Write's")
	case w.Stages != nil:
		act.invalid = errors.New("a staged creation hands nothing to its readback: declare it as a Write")
	}
	return act
}

// executeStep and readbackStep are a write's Execute and Readback with
// their types erased.
type (
	executeStep  = func(ctx context.Context, env *Env, parsed, state any) (Payload, any, error)
	readbackStep = func(ctx context.Context, env *Env, parsed any, p Payload, handed any) (any, error)
)

// Action turns the declaration into a registry action.
func (w Write[A, S]) Action() *Action {
	var execute executeStep
	if w.Execute != nil {
		execute = func(ctx context.Context, env *Env, parsed, state any) (Payload, any, error) {
			st, _ := state.(S) // the zero S without a state reader
			p, err := w.Execute(ctx, env, parsed.(A), st)
			return p, nil, err
		}
	}
	var readback readbackStep
	if w.Readback != nil {
		readback = func(ctx context.Context, env *Env, parsed any, p Payload, _ any) (any, error) {
			return w.Readback(ctx, env, parsed.(A), p)
		}
	}
	return w.build(execute, readback)
}

// build makes the registry action of a write declaration with its erased
// Execute and Readback steps.
func (w Write[A, S]) build(execute executeStep, readback readbackStep) *Action {
	act := &Action{
		Name: w.Name, Summary: w.Summary, Policy: w.Policy, Destructive: w.Destructive, Example: w.Example,
		Dangerous: w.Dangerous, OffByDefault: w.OffByDefault,
	}
	act.Params, act.parse, act.invalid = declared(w.Validate)
	w.Scope.set(act)
	act.budget, act.front = w.Budget, w.Front
	act.localPaths, act.localEffects = w.LocalPaths, w.LocalEffects
	if act.Policy.Class == strict.External {
		act.Timeout = cmp.Or(w.Timeout, DefaultExternalTimeout)
	}
	if w.Deliver != nil {
		act.deliver = func(ctx context.Context, env *Env, parsed any, result map[string]any) (any, error) {
			return w.Deliver(ctx, env, parsed.(A), result)
		}
	}
	if w.PolicyFor != nil {
		act.policyFor = func(parsed any) strict.WritePolicy { return w.PolicyFor(parsed.(A)) }
	}
	steps := &writeSteps{
		targets: func(parsed any) []string {
			if w.Targets == nil {
				return nil
			}
			return w.Targets(parsed.(A))
		},
		execute:  execute,
		readback: readback,
	}
	if w.State != nil {
		steps.state = func(ctx context.Context, env *Env, parsed any) (any, error) { return w.State(ctx, env, parsed.(A)) }
	}
	if w.Notes != nil {
		steps.notes = func(parsed, state any) map[string]any {
			st, _ := state.(S)
			return w.Notes(parsed.(A), st)
		}
	}
	if w.Check != nil {
		steps.check = func(parsed, state any) error {
			st, ok := state.(S)
			if !ok {
				return fmt.Errorf("tools: %s: state of type %T, want %T", w.Name, state, st)
			}
			return w.Check(parsed.(A), st)
		}
	}
	if w.Stages != nil {
		steps.plan = func(env *Env, parsed any, wait func() error) *strict.Plan {
			return w.Stages.plan(env, parsed.(A), wait)
		}
		steps.execute = nil
	}
	if execute != nil || w.Stages != nil {
		act.write = steps
	}
	return act
}

// NoArgs is the argument type of an action without arguments.
type NoArgs struct{}

// complete checks the action has what its class needs.
func (a *Action) complete() error {
	if a.invalid != nil {
		return a.invalid
	}
	n := 0
	for _, set := range []bool{a.touches != nil, a.global, a.none} {
		if set {
			n++
		}
	}
	if n != 1 {
		return fmt.Errorf("declare the notebooks it touches: Scope needs exactly one of Touches, Resolve, Global or None")
	}
	if a.Policy.Class == strict.Read {
		if a.run == nil {
			return fmt.Errorf("a read needs Run")
		}
		return nil
	}
	switch {
	case a.write == nil:
		return fmt.Errorf("a write needs Execute (or Stages)")
	case a.Policy.Class != strict.External && a.write.readback == nil:
		return fmt.Errorf("a strict write needs Readback")
	case a.Policy.Class == strict.Mutation && a.write.state == nil:
		return fmt.Errorf("a guarded write needs State")
	}
	return nil
}

// Action returns a tool's action by name.
// A name upstream normalises (kebab-case, or a synonym: ls, mv, rm, del)
// finds the action it stands for; the action answers under its own name.
func (t *Tool) Action(name string) (*Action, bool) {
	if a, ok := t.declared(name); ok {
		return a, true
	}
	if t.Dynamic != nil && name != "help" {
		if a, ok := t.Dynamic.Cached(name); ok {
			return a, true
		}
	}
	return t.declared(t.canonical(name))
}

func (t *Tool) declared(name string) (*Action, bool) {
	for _, a := range t.Actions {
		if a.Name == name {
			return a, true
		}
	}
	return nil, false
}

// actionSynonyms are the action names upstream takes for one another: a
// name of a group stands for whichever of the group the tool has.
var actionSynonyms = [][]string{{"list", "ls"}, {"move", "mv"}, {"remove", "rm", "delete", "del"}}

// canonical is the declared action name stands for, as upstream
// normalises it: "-" read as "_", then a synonym the tool has; name
// itself when none.
func (t *Tool) canonical(name string) string {
	n := strings.ReplaceAll(name, "-", "_")
	if _, ok := t.declared(n); ok {
		return n
	}
	for _, group := range actionSynonyms {
		if !slices.Contains(group, n) {
			continue
		}
		for _, g := range group {
			if _, ok := t.declared(g); ok {
				return g
			}
		}
	}
	return name
}

// ActionNames lists the tool's actions, help included.
func (t *Tool) ActionNames() []string { return t.actionNames(Unrestricted()) }

// actionNames lists the actions the policy enables, help included.
func (t *Tool) actionNames(p *Policy) []string {
	names := []string{"help"}
	for _, a := range t.enabled(p) {
		names = append(names, a.Name)
	}
	return names
}

// enabled lists the actions the policy enables.
func (t *Tool) enabled(p *Policy) []*Action {
	var out []*Action
	all := t.Actions
	if t.Dynamic != nil {
		all = append(all[:len(all):len(all)], t.Dynamic.Actions(p)...) // Actions(p) holds only what p exposes
	}
	for _, a := range all {
		if p.ActionOn(t, a) {
			out = append(out, a)
		}
	}
	return out
}

// View is what the agent is shown of the tools under one configuration:
// the enabled actions, and the control fields strict mode adds.
type View struct {
	Policy *Policy
	Strict bool
}

// Annotations are a tool's behaviour hints, as MCP's tool annotations carry
// them.
type Annotations struct {
	Title       string `json:"title"`
	ReadOnly    bool   `json:"readOnlyHint"`
	Destructive bool   `json:"destructiveHint"`
	// Idempotent: calling again with the same arguments changes nothing
	// more (reads only: a strict write replays only with its requestId).
	Idempotent bool `json:"idempotentHint"`
	// OpenWorld: every tool works inside the one SiYuan workspace.
	OpenWorld bool `json:"openWorldHint"`
}

// Annotations returns the tool's behaviour hints under a view, from its
// enabled actions. Only a tool of reads is idempotent: a write repeated
// with a new requestId writes again.
func (t *Tool) Annotations(v View) Annotations {
	ro, destructive := true, false
	for _, a := range t.enabled(v.Policy) {
		ro = ro && a.Policy.Class == strict.Read
		destructive = destructive || a.Destructive || a.Dangerous
	}
	openWorld := false
	if t.Dynamic != nil {
		// Its actions are discovered, come and go, and may forward effects
		// Sisyphus cannot see: hint the most they may do.
		ro, destructive, openWorld = false, true, true
	}
	return Annotations{Title: t.Title, ReadOnly: ro, Destructive: destructive, Idempotent: ro, OpenWorld: openWorld}
}
