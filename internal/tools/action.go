package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/strict"
)

// Tool is one agent-facing tool: a name and its actions.
type Tool struct {
	Name        string
	Title       string
	Description string
	Actions     []*Action
	strict      bool // strict mode decides which control fields the schema shows
}

// Action is one value of a tool's `action` argument, as the registry runs
// it. Tool packages do not build it by hand: they declare a [Read] or a
// [Write] and call its Action method.
type Action struct {
	Name    string
	Summary string
	Policy  strict.Policy
	Params  []Param
	// Destructive marks actions that remove data (MCP destructiveHint).
	Destructive bool
	// Example is a complete, valid call an agent can copy (help shows it).
	Example map[string]any

	parse     func(*Args) (any, error)
	policyFor func(parsed any) strict.Policy
	run       func(ctx context.Context, env *Env, parsed any) (any, error)
	write     *writeSteps
}

// writeSteps are a write declaration with its argument type erased.
type writeSteps struct {
	targets  func(parsed any) []string
	state    func(ctx context.Context, env *Env, parsed any) (any, error) // nil: none
	check    func(parsed, state any) error                                // nil: none
	execute  func(ctx context.Context, env *Env, parsed, state any) (Payload, error)
	readback func(ctx context.Context, env *Env, parsed any, p Payload) (any, error)
}

// Payload is what a write's Execute returns: small (ids, counts, flags),
// because the ledger keeps it to replay. Keys starting with "_" are private
// details for the readback and never reach an answer or the ledger.
type Payload = map[string]any

// Read declares a read-only action whose arguments parse into A.
type Read[A any] struct {
	Name, Summary string
	Params        []Param
	// Parse turns the bound arguments into A; it refuses what the
	// arguments alone show is wrong. Nil decodes them into A by their JSON
	// names.
	Parse func(*Args) (A, error)
	// Run answers the read.
	Run func(ctx context.Context, env *Env, a A) (any, error)
	// Example is a complete, valid call for help (defaults to the action
	// and its required arguments).
	Example map[string]any
}

// Action turns the declaration into a registry action.
func (r Read[A]) Action() *Action {
	return &Action{
		Name: r.Name, Summary: r.Summary, Policy: strict.Policy{Class: strict.Read}, Params: r.Params, Example: r.Example,
		parse: parser(r.Parse),
		run: func(ctx context.Context, env *Env, parsed any) (any, error) {
			if r.Run == nil {
				return nil, errors.New("tools: read without Run")
			}
			return r.Run(ctx, env, parsed.(A))
		},
	}
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
	Policy    strict.Policy
	PolicyFor func(A) strict.Policy
	Params    []Param
	// Destructive marks actions that remove data (MCP destructiveHint).
	Destructive bool
	Example     map[string]any

	// Parse turns the bound arguments into A, once; nil decodes them by
	// their JSON names.
	Parse func(*Args) (A, error)
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
	// Readback verifies the change after Execute and returns the state to
	// hash: for a guarded mutation what State reads, so that an unchanged
	// readback is no_change. It may add public keys to the payload.
	Readback func(ctx context.Context, env *Env, a A, p Payload) (any, error)
}

// Action turns the declaration into a registry action.
func (w Write[A, S]) Action() *Action {
	act := &Action{
		Name: w.Name, Summary: w.Summary, Policy: w.Policy, Params: w.Params, Destructive: w.Destructive, Example: w.Example,
		parse: parser(w.Parse),
	}
	if w.PolicyFor != nil {
		act.policyFor = func(parsed any) strict.Policy { return w.PolicyFor(parsed.(A)) }
	}
	steps := &writeSteps{
		targets: func(parsed any) []string {
			if w.Targets == nil {
				return nil
			}
			return w.Targets(parsed.(A))
		},
		execute: func(ctx context.Context, env *Env, parsed, state any) (Payload, error) {
			st, _ := state.(S) // the zero S without a state reader
			return w.Execute(ctx, env, parsed.(A), st)
		},
	}
	if w.Readback != nil {
		steps.readback = func(ctx context.Context, env *Env, parsed any, p Payload) (any, error) {
			return w.Readback(ctx, env, parsed.(A), p)
		}
	}
	if w.State != nil {
		steps.state = func(ctx context.Context, env *Env, parsed any) (any, error) { return w.State(ctx, env, parsed.(A)) }
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
	if w.Execute != nil {
		act.write = steps
	}
	return act
}

// parser returns the erased parse step: parse, or decoding by JSON names.
func parser[A any](parse func(*Args) (A, error)) func(*Args) (any, error) {
	if parse != nil {
		return func(a *Args) (any, error) { return parse(a) }
	}
	return func(a *Args) (any, error) {
		var out A
		raw, err := json.Marshal(a.values)
		if err != nil {
			return nil, failure.Invalid("the arguments cannot be encoded")
		}
		if err := json.Unmarshal(raw, &out); err != nil {
			return nil, failure.Invalid("the arguments do not fit the action: %v", err)
		}
		return out, nil
	}
}

// NoArgs is the argument type of an action without arguments.
type NoArgs struct{}

// complete checks the action has what its class needs.
func (a *Action) complete() error {
	if a.Policy.Class == strict.Read {
		if a.run == nil {
			return fmt.Errorf("a read needs Run")
		}
		return nil
	}
	switch {
	case a.write == nil:
		return fmt.Errorf("a write needs Execute")
	case a.Policy.Class != strict.External && a.write.readback == nil:
		return fmt.Errorf("a strict write needs Readback")
	case a.Policy.Class == strict.Mutation && a.write.state == nil:
		return fmt.Errorf("a guarded write needs State")
	}
	return nil
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

// Annotations returns the tool's behaviour hints. Only a tool of reads is
// idempotent: a write repeated with a new requestId writes again.
func (t *Tool) Annotations() Annotations {
	ro := t.ReadOnly()
	return Annotations{Title: t.Title, ReadOnly: ro, Destructive: t.Destructive(), Idempotent: ro}
}
