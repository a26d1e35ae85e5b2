package strict

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/canon"
	"github.com/sisyphus-go/sisyphus/internal/failure"
)

// ErrRejected marks an Execute error that proves nothing was applied (the
// kernel refused the request before applying it). Any other Execute error
// leaves the outcome unknown. Wrap causes with [Reject].
var ErrRejected = errors.New("strict: write rejected, nothing applied")

type rejected struct{ cause error }

func (r rejected) Error() string        { return r.cause.Error() }
func (r rejected) Unwrap() error        { return r.cause }
func (r rejected) Is(target error) bool { return target == ErrRejected }

// Reject marks cause as a refusal that applied nothing. When cause is (or
// wraps) a *failure.Error, the agent sees that error; otherwise
// write_rejected.
func Reject(cause error) error { return rejected{cause} }

// Op is one call of a non-read action, as the tool layer hands it over.
type Op struct {
	Tool, Action string
	Policy       WritePolicy
	// Business are the arguments without control fields, action included,
	// as decoded JSON (numbers as json.Number); their digest scopes leases
	// and ledger records.
	Business map[string]any
	// Targets are the ids the call touches.
	Targets []string

	ValidateOnly bool
	// Direct runs this call with strict mode off (the configuration the
	// call runs under turned it off): attempted once, no guarantee.
	Direct bool
	// RequestID and Credential are the control fields as the caller sent
	// them ("" when absent); the coordinator parses each once.
	RequestID  string
	Credential string

	// ReadState reads the live state. A guarded mutation's state is hashed
	// and compared; an additive action's (optional) state is only checked.
	ReadState func(ctx context.Context) (any, error)
	// Check, when set, refuses (with a *failure.Error) what the state just
	// read proves cannot succeed: a missing target or parent, a name that
	// does not fit. It runs at preflight, and at commit after the digest
	// comparison and before anything is recorded as executing. It must not
	// call the kernel.
	Check func(state any) error
	// Execute makes the write, attempting each kernel write once, from the
	// state read at commit (nil without ReadState), and returns the
	// action's payload: small, ids and flags only, because it is kept in
	// the ledger to replay, and public: what only Readback needs the
	// caller hands it beside the payload. (Keys starting with "_" are
	// still dropped before an answer or the ledger, a guard against a
	// leak; no tool sends one.) The ledger
	// records executing immediately before Execute runs, so Execute should
	// do no heavy preparation before its first kernel write.
	Execute func(ctx context.Context, state any) (map[string]any, error)
	// Plan, when set, makes the call a staged creation and replaces
	// Execute (see [Plan]): reserved ids, stages recorded in the ledger,
	// resumed by a replay after a crash.
	Plan *Plan
	// Readback checks after the write that the requested change shows and
	// returns the state to hash (for a guarded action, what ReadState
	// reads). An error is readback_mismatch. It may add public keys to the
	// payload.
	Readback func(ctx context.Context, payload map[string]any) (any, error)
	// Notes, when set, adds fields to a preflight's answer from the state
	// it read (an upload's staged source handle, for a replay without the
	// local file). They never override the protocol's fields.
	Notes func(state any) map[string]any
	// Timeout bounds an external effect's time in the write lane, from
	// when it takes the lane: its state read and its one dispatch (0: no
	// bound). Whatever waits behind it waits no longer; an effect cut off
	// after it was sent is outcome_unknown, never sent again.
	Timeout time.Duration
}

// Coordinator is the one write coordinator of an authority: one alias pool,
// one lease pool, one ledger, one write lane.
type Coordinator struct {
	aliases *AliasPool
	leases  *LeasePool
	ledger  *Ledger
	lane    sync.Mutex
	now     func() time.Time
	strict  bool
	log     *slog.Logger
	observe func(Dispatch)
}

// CoordinatorConfig configures a Coordinator.
type CoordinatorConfig struct {
	Ledger *Ledger
	// StrictOff restores direct calls: writes are still attempted once, but
	// every answer says writeSafetyGuaranteed: false.
	StrictOff bool
	Now       func() time.Time
	Logger    *slog.Logger
	// OnDispatch, when set, learns the timing of every strict dispatch: the
	// window between the last comparison and the kernel's answer is where a
	// writer that bypasses Sisyphus can slip in unnoticed.
	OnDispatch func(Dispatch)
}

// Dispatch is the timing of one strict write.
type Dispatch struct {
	Tool, Action, RequestID string
	// Checked is when the final comparison of digests passed (for additive
	// writes: when the lease was taken); Returned is when the write's
	// dispatch returned.
	Checked, Returned time.Time
}

// NewCoordinator returns a coordinator over a ledger.
func NewCoordinator(cfg CoordinatorConfig) *Coordinator {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	aliases := NewAliasPool()
	return &Coordinator{aliases: aliases, leases: NewLeasePool(aliases, now), ledger: cfg.Ledger, now: now, strict: !cfg.StrictOff, log: log, observe: cfg.OnDispatch}
}

// Strict reports whether strict mode is on.
func (c *Coordinator) Strict() bool { return c.strict }

// Aliases returns the alias pool, for any hash a response shows.
func (c *Coordinator) Aliases() *AliasPool { return c.aliases }

// Ledger returns the coordinator's ledger, for read-only views of it (the
// settings page's recent outcomes).
func (c *Coordinator) Ledger() *Ledger { return c.ledger }

// Answer is a non-read call's answer: what its caller shows the agent,
// and what the caller acts on, typed, so that no caller reads the
// coordinator's decisions back out of the JSON by key.
type Answer struct {
	// Fields are the JSON-ready answer the agent gets.
	Fields map[string]any
	// Status is the ledger's outcome of a strict commit or of its replay
	// ("" for a preflight and for a write without the guarantee).
	Status Status
	// Replayed: the ledger answered a request it had finished before;
	// nothing ran now.
	Replayed bool
}

// Do runs a non-read call and returns its answer or a *failure.Error (an
// error of another type is a failed state read, before anything was
// written).
func (c *Coordinator) Do(ctx context.Context, op Op) (Answer, error) {
	switch {
	case op.Policy.Class == External:
		return c.external(ctx, op)
	case op.Policy.Class != Mutation && op.Policy.Class != Additive:
		return Answer{}, fmt.Errorf("strict: %s.%s is %s, not a write", op.Tool, op.Action, op.Policy.Class)
	case !c.strict || op.Direct:
		return c.direct(ctx, op)
	case op.ValidateOnly:
		return c.preflight(ctx, op)
	}
	return c.commit(ctx, op)
}

// fail is a failure of this package; writeAttempted is always shown.
func fail(code failure.Code, attempted bool, cause error, format string, a ...any) *failure.Error {
	return failure.Wrap(code, cause, format, a...).Attempted(attempted)
}

// external runs an action whose effects cannot be read back: once, with no
// strict guarantee; a preflight is refused without executing anything.
func (c *Coordinator) external(ctx context.Context, op Op) (Answer, error) {
	if op.ValidateOnly {
		return Answer{}, fail(failure.PreflightUnavailable, false, nil, "%s.%s has external effects that cannot be read back, so it has no preflight; nothing was executed", op.Tool, op.Action)
	}
	return c.once(ctx, op)
}

// direct runs a write with strict mode off.
func (c *Coordinator) direct(ctx context.Context, op Op) (Answer, error) {
	if op.ValidateOnly {
		return Answer{}, fail(failure.StrictModeDisabled, false, nil, "strict mode is off, so there is no preflight; nothing was executed")
	}
	return c.once(ctx, op)
}

// once dispatches a write without the strict guarantee: still through the
// lane and its commit barrier, still attempted exactly once, still checked
// first when the action can be.
func (c *Coordinator) once(ctx context.Context, op Op) (Answer, error) {
	c.lane.Lock()
	defer c.lane.Unlock()
	if op.Policy.Class == External && op.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, op.Timeout)
		defer cancel()
	}
	state, err := c.checkedState(ctx, op)
	if err != nil {
		return Answer{}, err
	}
	if err := CommitBarrier(ctx, ""); err != nil {
		return Answer{}, err
	}
	var payload map[string]any
	if op.Plan != nil {
		payload, err = stagedOnce(ctx, op, state)
	} else {
		payload, err = op.Execute(ctx, state)
	}
	if err != nil {
		return Answer{}, c.dispatchFailure(err, "")
	}
	payload = public(payload)
	payload["writeAttempted"] = true
	payload["writeSafetyGuaranteed"] = false
	return Answer{Fields: payload}, nil
}

// checkedState reads and checks the state of an op without a comparison.
func (c *Coordinator) checkedState(ctx context.Context, op Op) (any, error) {
	if op.ReadState == nil {
		return nil, nil
	}
	st, err := op.ReadState(ctx)
	if err != nil {
		return nil, err
	}
	if op.Check != nil {
		if err := op.Check(st); err != nil {
			return nil, refusal(err)
		}
	}
	return st, nil
}

// refusal is a Check's verdict as the caller sees it: nothing was written.
func refusal(err error) error {
	var fe *failure.Error
	if errors.As(err, &fe) {
		return fe.OrAttempted(false)
	}
	return err
}

// public drops the "_"-prefixed keys of a payload: no tool sends one any
// more, and none may reach an answer or the ledger if one did.
func public(payload map[string]any) map[string]any {
	out := make(map[string]any, len(payload))
	for k, v := range payload {
		if len(k) == 0 || k[0] != '_' {
			out[k] = v
		}
	}
	return out
}

func (c *Coordinator) scope(op Op) (Scope, error) {
	d, err := canon.Digest(op.Business)
	if err != nil {
		return Scope{}, fail(failure.InvalidArguments, false, err, "the arguments cannot be canonicalised: %v", err)
	}
	return NewScope(op.Tool, op.Action, d, op.Targets), nil
}

func digestOf(st any) (string, error) {
	d, err := canon.Digest(st)
	if err != nil {
		return "", fmt.Errorf("strict: hash state: %w", err)
	}
	return d, nil
}

// preflight reads without mutating, checks, issues a request id and a lease.
func (c *Coordinator) preflight(ctx context.Context, op Op) (Answer, error) {
	scope, err := c.scope(op)
	if err != nil {
		return Answer{}, err
	}
	st, err := c.checkedState(ctx, op)
	if err != nil {
		return Answer{}, err
	}
	var digest string
	if op.Policy.Class == Mutation {
		if digest, err = digestOf(st); err != nil {
			return Answer{}, err
		}
	}
	// Issued in memory, its id reserved on disk beforehand (see Ledger):
	// only one preflight in a batch of ids waits for an fsync.
	rec, err := c.ledger.Issue(ctx, Record{Tool: op.Tool, Action: op.Action, ArgsDigest: scope.ArgsDigest,
		Targets: scope.Targets, Precondition: op.Policy.Precondition})
	if err != nil {
		return Answer{}, c.ledgerFailure(err)
	}
	lease, err := c.leases.Put(Lease{Scope: scope, Precondition: op.Policy.Precondition, Digest: digest,
		RequestID: rec.RequestID, IssuedAt: c.now()})
	if err != nil {
		c.withdraw(ctx, rec)
		return Answer{}, fmt.Errorf("strict: store lease: %w", err)
	}
	out := map[string]any{
		"action": op.Action, "validateOnly": true, "writeAttempted": false,
		"requestId": rec.RequestID, "requestIdExpiresAt": rec.ExpiresAt().UnixMilli(),
		"targetCount": len(scope.Targets), "leaseExpiresAt": lease.ExpiresAt.UnixMilli(),
	}
	// The next call, exactly: this one without validateOnly, with what
	// the commit needs added (its arguments are not echoed: a write's
	// content may be large).
	add := map[string]any{"requestId": rec.RequestID}
	if op.Policy.Class == Mutation {
		field := string(op.Policy.Precondition)
		out["preconditionField"] = field
		out[field] = lease.Credential
		out["hashPrefixLength"] = len(lease.Credential)
		add[field] = lease.Credential
		out["nextStep"] = "repeat the call without validateOnly, with this requestId and " + field + " copied unchanged"
	} else {
		out["nextStep"] = "repeat the call without validateOnly, with this requestId; no hash is needed"
	}
	out["nextCall"] = map[string]any{"tool": op.Tool, "action": op.Action, "arguments": "the same as this call's", "remove": []string{"validateOnly"}, "add": add}
	if op.Notes != nil {
		for k, v := range op.Notes(st) {
			if _, taken := out[k]; !taken {
				out[k] = v
			}
		}
	}
	return Answer{Fields: out}, nil
}

// withdraw removes the request of a preflight that failed after issuing it
// (its lease could not be stored). If that fails too, the request stays
// issued, unknown to any caller, until it expires and is pruned.
func (c *Coordinator) withdraw(ctx context.Context, rec Record) {
	if err := c.ledger.Withdraw(context.WithoutCancel(ctx), RequestID(rec.RequestID)); err != nil {
		c.log.Warn("withdrawing the request of a failed preflight", "tool", rec.Tool, "action", rec.Action, "request", rec.RequestID, "err", err)
	}
}

// controls are a commit's parsed control fields.
type controls struct {
	requestID  RequestID
	credential Credential
}

// parseControls parses the request id and the credential of a commit, once.
func parseControls(op Op) (controls, error) {
	var ctl controls
	field := string(op.Policy.Precondition)
	missing := func(format string, a ...any) *failure.Error {
		f := fail(failure.PreconditionRequired, false, nil, format, a...)
		if op.Policy.Class == Mutation {
			f.With("expectedField", field)
		}
		return f.With("requestIdField", "requestId")
	}
	if op.RequestID == "" {
		return ctl, missing("requestId is missing: a write needs the requestId its preflight issued")
	}
	id, err := ParseRequestID(op.RequestID)
	if err != nil {
		f := missing("requestId %q was not issued by a preflight", op.RequestID)
		f.Cause = err
		return ctl, f
	}
	ctl.requestID = id
	if op.Policy.Class == Mutation {
		if op.Credential == "" {
			return ctl, missing("%s is missing: copy it from the preflight's answer", field)
		}
		cred, err := ParseCredential(op.Credential)
		if err != nil {
			f := missing("%s must be sha256:v1:<4-64 hex> or bare hex, as the preflight returned it", field)
			f.Cause = err
			return ctl, f
		}
		ctl.credential = cred
	}
	return ctl, nil
}

// commit runs a strict write: through the single lane, after the ledger and
// lease checks and a fresh comparison of full digests, dispatched once and
// read back.
func (c *Coordinator) commit(ctx context.Context, op Op) (Answer, error) {
	ctl, err := parseControls(op)
	if err != nil {
		return Answer{}, err
	}
	id := ctl.requestID
	scope, err := c.scope(op)
	if err != nil {
		return Answer{}, err
	}

	c.lane.Lock()
	defer c.lane.Unlock()

	rec, err := c.ledger.Check(ctx, id, scope)
	if errors.Is(err, ErrAlreadyExecuting) && rec.Creation != nil && op.Plan != nil {
		return c.resume(ctx, op, id, rec)
	}
	if err != nil {
		return c.admitFailure(id, rec, err)
	}
	var lease Lease
	if op.Policy.Class == Mutation {
		lease, err = c.leases.Take(scope, ctl.credential, c.now())
	} else {
		lease, err = c.leases.ForRequest(scope, string(id), c.now())
	}
	if err != nil {
		return Answer{}, leaseFailure(err)
	}
	previous := lease.Digest
	var state any
	if op.ReadState != nil {
		if state, err = op.ReadState(ctx); err != nil {
			return Answer{}, err
		}
	}
	if op.Policy.Class == Mutation {
		current, err := digestOf(state)
		if err != nil {
			return Answer{}, err
		}
		if current != lease.Digest {
			f := fail(failure.StateChanged, false, nil, "the target changed after preflight; nothing was written. Read it again before any new write: a new write needs a fresh preflight").
				With("revalidateRequired", true)
			f.ExpectedHash, f.CurrentHash = c.aliases.Alias(lease.Digest), c.aliases.Alias(current)
			return Answer{}, f
		}
	}
	if op.Check != nil {
		if err := op.Check(state); err != nil {
			return Answer{}, refusal(err)
		}
	}
	checked := time.Now()
	// Past this barrier the write is irrevocable: cancellation is refused
	// so that mutation, readback and ledger finish together.
	if err := CommitBarrier(ctx, string(id)); err != nil {
		return Answer{}, err
	}
	if op.Plan != nil {
		return c.stagedCommit(ctx, op, id, scope, lease, state)
	}
	if _, err := c.ledger.Begin(ctx, id, scope); err != nil {
		// Check passed under the lane, so only storage can fail here.
		return c.admitFailure(id, rec, err)
	}
	c.leases.Consume(lease)

	payload, err := op.Execute(ctx, state)
	if c.observe != nil {
		c.observe(Dispatch{Tool: op.Tool, Action: op.Action, RequestID: string(id), Checked: checked, Returned: time.Now()})
	}
	if err != nil {
		if errors.Is(err, ErrRejected) {
			receipt, _ := json.Marshal(map[string]any{"error": failure.Rejected})
			c.ledger.Finish(ctx, id, StatusFailedBeforeDispatch, previous, "", receipt)
		}
		return Answer{}, c.dispatchFailure(err, id)
	}
	after, err := op.Readback(ctx, payload)
	if err != nil {
		c.log.Warn("readback mismatch", "tool", op.Tool, "action", op.Action, "request", id, "err", err)
		f := fail(failure.ReadbackMismatch, true, err, "the write was sent but the readback could not verify it: %s", err.Error())
		f.RequestID = string(id)
		return Answer{}, f
	}
	result, err := digestOf(after)
	if err != nil {
		f := fail(failure.ReadbackMismatch, true, err, "the readback state cannot be hashed")
		f.RequestID = string(id)
		return Answer{}, f
	}
	status := StatusCommitted
	if previous != "" && result == previous {
		status = StatusNoChange
	}
	payload = public(payload)
	receipt, err := json.Marshal(payload)
	if err != nil || len(receipt) > MaxReceiptSize {
		receipt, _ = json.Marshal(map[string]any{"receiptOmitted": true})
	}
	if _, err := c.ledger.Finish(ctx, id, status, previous, result, receipt); err != nil {
		f := fail(failure.OutcomeUnknown, true, err, "the write was verified but the ledger could not record it")
		f.RequestID = string(id)
		return Answer{}, f
	}
	return c.success(payload, id, status, previous, result, scope, false, true), nil
}

func (c *Coordinator) success(payload map[string]any, id RequestID, status Status, previous, result string, scope Scope, replayed, attempted bool) Answer {
	out := make(map[string]any, len(payload)+8)
	for k, v := range payload {
		out[k] = v
	}
	if h, ok := payload[PartHashesKey]; ok {
		out[PartHashesKey] = c.aliasParts(h)
	}
	out["requestId"] = string(id)
	out["status"] = string(status)
	out["replayed"] = replayed
	out["writeAttempted"] = attempted
	out["writeSafetyGuaranteed"] = true
	if previous != "" {
		out["previousHash"] = c.aliases.Alias(previous)
	}
	if result != "" {
		out["resultHash"] = c.aliases.Alias(result)
	}
	out["targetCount"] = len(scope.Targets)
	return Answer{Fields: out, Status: status, Replayed: replayed}
}

// admitFailure answers the ledger's verdict on a request id.
func (c *Coordinator) admitFailure(id RequestID, rec Record, err error) (Answer, error) {
	with := func(f *failure.Error) (Answer, error) {
		f.RequestID = string(id)
		return Answer{}, f
	}
	switch {
	case errors.Is(err, ErrReplay):
		if rec.Status == StatusFailedBeforeDispatch {
			return with(fail(failure.Rejected, false, nil, "this request was rejected by the kernel before; nothing was applied"))
		}
		var payload map[string]any
		if err := json.Unmarshal(rec.Receipt, &payload); err != nil || payload == nil {
			payload = map[string]any{}
		}
		return c.success(payload, id, rec.Status, rec.PreviousHash, rec.ResultHash, rec.Scope(), true, false), nil
	case errors.Is(err, ErrAlreadyExecuting):
		return with(fail(failure.OutcomeUnknown, false, err, "this request started executing before and its outcome was never confirmed; it will not run again"))
	case errors.Is(err, ErrIdempotencyConflict):
		return with(fail(failure.IdempotencyConflict, false, err, "this requestId was issued for a different call (tool, action, arguments or targets)"))
	case errors.Is(err, ErrUnknownRequest):
		return Answer{}, fail(failure.PreconditionRequired, false, err, "requestId %q was not issued by a preflight of this authority", id)
	case errors.Is(err, ErrRequestExpired):
		return Answer{}, fail(failure.PreflightLeaseInvalid, false, err, "requestId %q can no longer start: it expired (10 minutes after its preflight) or was issued before Sisyphus restarted; nothing was written, run the preflight again", id).With("revalidateRequired", true)
	}
	return Answer{}, c.ledgerFailure(err)
}

func (c *Coordinator) ledgerFailure(err error) *failure.Error {
	return fail(failure.LedgerUnavailable, false, err, "the write ledger is unavailable; no write was attempted")
}

// dispatchFailure classifies an Execute error: a proven rejection (with
// the tool's own error when it gave one), or an unknown outcome. Writes are
// never retried.
func (c *Coordinator) dispatchFailure(err error, id RequestID) *failure.Error {
	var f *failure.Error
	switch {
	case errors.As(err, &f) && errors.Is(err, ErrRejected):
		f = f.OrAttempted(false)
	case errors.As(err, &f):
		f = f.OrAttempted(true)
	case errors.Is(err, ErrRejected):
		f = fail(failure.Rejected, true, err, "the kernel refused the write; nothing was applied: %s", err.Error())
	default:
		f = fail(failure.OutcomeUnknown, true, err, "the write was sent but its outcome is unknown (the reply was lost or incomplete); it will not be retried")
	}
	if id != "" && f.RequestID == "" {
		f.RequestID = string(id)
	}
	return f
}

// leaseFailure is preflight_lease_invalid saying which check failed, when
// the lease pool knows.
func leaseFailure(err error) *failure.Error {
	msg := "no live preflight lease matches this call (expired, used, from another process, or other arguments)"
	var why *LeaseInvalidError
	reason := LeaseNone
	if errors.As(err, &why) {
		reason = why.Reason
		switch reason {
		case LeaseUnknownCredential:
			msg = "the credential was not issued by this authority's preflights (mistyped, or issued before Sisyphus restarted)"
		case LeaseOtherArguments:
			msg = "the preflight was made for other arguments or targets than this call's: the commit must repeat the preflight's arguments exactly"
		case LeaseExpired:
			msg = "the preflight's lease expired (ten minutes)"
		case LeaseNone:
			msg = "no live preflight lease matches this call: it expired, a commit used it, or Sisyphus restarted since"
		}
	}
	return fail(failure.PreflightLeaseInvalid, false, err, "%s; nothing was written, run the preflight again", msg).
		With("revalidateRequired", true).With("reason", reason)
}
