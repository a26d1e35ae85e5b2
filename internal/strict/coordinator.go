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
)

// Failure codes of Strict Safe Writes (the seed's table, plus the ledger's
// own unavailability).
const (
	CodePreconditionRequired   = "precondition_required"
	CodePreflightLeaseInvalid  = "preflight_lease_invalid"
	CodeStateChanged           = "state_changed"
	CodeOutcomeUnknown         = "outcome_unknown"
	CodeReadbackMismatch       = "readback_mismatch"
	CodeIdempotencyConflict    = "idempotency_conflict"
	CodeCoordinatorUnavailable = "write_coordinator_unavailable"
	CodePreflightUnavailable   = "preflight_unavailable"
	CodeLedgerUnavailable      = "write_ledger_unavailable"
	CodeStrictModeDisabled     = "strict_mode_disabled"
	CodeRejected               = "write_rejected"
)

// callerAction says what the caller should do after each failure.
var callerAction = map[string]string{
	CodePreconditionRequired:   "run the same call with validateOnly:true first, then copy requestId and the credential it returns; never invent them",
	CodePreflightLeaseInvalid:  "run the same validateOnly call again",
	CodeStateChanged:           "stop; read the target again before deciding to write, then preflight again",
	CodeOutcomeUnknown:         "do not retry with a new requestId; inspect the target to learn whether the write happened",
	CodeReadbackMismatch:       "treat the outcome as unknown: inspect the target before acting",
	CodeIdempotencyConflict:    "this requestId belongs to another call: preflight this call to get its own requestId",
	CodeCoordinatorUnavailable: "check that the Sisyphus authority is running, then preflight again",
	CodePreflightUnavailable:   "this action has external effects that cannot be read back: call it without validateOnly (no strict guarantee) or not at all",
	CodeLedgerUnavailable:      "the write ledger cannot be written; nothing was attempted; check the state directory's disk and restart Sisyphus",
	CodeStrictModeDisabled:     "strict mode is off: call the action without validateOnly",
	CodeRejected:               "the kernel refused the write and applied nothing: fix the arguments, then preflight again",
	CodeCancelled:              "nothing was written; the requestId and its lease stay usable until they expire: repeat the same call to write after all",
}

// Failure is a strict-write failure as the agent sees it.
type Failure struct {
	Code           string
	Message        string
	WriteAttempted bool
	RequestID      string
	// ExpectedHash and CurrentHash are aliases, for state_changed.
	ExpectedHash, CurrentHash string
	Cause                     error
}

func (f *Failure) Error() string { return f.Code + ": " + f.Message }

// Unwrap returns the internal cause.
func (f *Failure) Unwrap() error { return f.Cause }

// Action is what the caller should do.
func (f *Failure) Action() string { return callerAction[f.Code] }

func fail(code string, attempted bool, cause error, format string, a ...any) *Failure {
	return &Failure{Code: code, Message: fmt.Sprintf(format, a...), WriteAttempted: attempted, Cause: cause}
}

// ErrRejected marks an Execute error that proves nothing was applied (the
// kernel refused the request before applying it). Any other Execute error
// leaves the outcome unknown. Wrap causes with [Reject].
var ErrRejected = errors.New("strict: write rejected, nothing applied")

type rejected struct{ cause error }

func (r rejected) Error() string        { return r.cause.Error() }
func (r rejected) Unwrap() error        { return r.cause }
func (r rejected) Is(target error) bool { return target == ErrRejected }

// Reject marks cause as a refusal that applied nothing.
func Reject(cause error) error { return rejected{cause} }

// Op is one call of a non-read action, as the tool layer hands it over.
type Op struct {
	Tool, Action string
	Policy       Policy
	// Business are the arguments without control fields, action included,
	// as decoded JSON (numbers as json.Number); their digest scopes leases
	// and ledger records.
	Business map[string]any
	// Targets are the ids the call touches.
	Targets []string

	ValidateOnly bool
	RequestID    string
	// Credential is the value of the precondition field ("" when absent).
	Credential string

	// ReadState reads the live state of the targets (guarded mutations).
	ReadState func(ctx context.Context) (any, error)
	// Execute makes the write, attempting each kernel write once, and
	// returns the action's payload: small, ids and flags only, because it
	// is kept in the ledger to replay. Keys starting with "_" are private
	// details for Readback: they never reach an answer or the ledger.
	Execute func(ctx context.Context) (map[string]any, error)
	// Readback checks after the write that the requested change shows and
	// returns the state to hash (for a guarded action, what ReadState
	// reads). An error is readback_mismatch.
	Readback func(ctx context.Context, payload map[string]any) (any, error)
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

// Do runs a non-read call and returns its JSON-ready answer or a *Failure.
func (c *Coordinator) Do(ctx context.Context, op Op) (map[string]any, error) {
	switch {
	case op.Policy.Class == External:
		return c.external(ctx, op)
	case op.Policy.Class != Mutation && op.Policy.Class != Additive:
		return nil, fmt.Errorf("strict: %s.%s is %s, not a write", op.Tool, op.Action, op.Policy.Class)
	case !c.strict:
		return c.direct(ctx, op)
	case op.ValidateOnly:
		return c.preflight(ctx, op)
	}
	return c.commit(ctx, op)
}

// external runs an action whose effects cannot be read back: once, with no
// strict guarantee; a preflight is refused without executing anything.
func (c *Coordinator) external(ctx context.Context, op Op) (map[string]any, error) {
	if op.ValidateOnly {
		return nil, fail(CodePreflightUnavailable, false, nil, "%s.%s has external effects that cannot be read back, so it has no preflight; nothing was executed", op.Tool, op.Action)
	}
	return c.once(ctx, op)
}

// direct runs a write with strict mode off.
func (c *Coordinator) direct(ctx context.Context, op Op) (map[string]any, error) {
	if op.ValidateOnly {
		return nil, fail(CodeStrictModeDisabled, false, nil, "strict mode is off, so there is no preflight; nothing was executed")
	}
	return c.once(ctx, op)
}

// once dispatches a write without the strict guarantee: still through the
// lane and its commit barrier, still attempted exactly once.
func (c *Coordinator) once(ctx context.Context, op Op) (map[string]any, error) {
	c.lane.Lock()
	defer c.lane.Unlock()
	if err := CommitBarrier(ctx, ""); err != nil {
		return nil, err
	}
	payload, err := op.Execute(ctx)
	if err != nil {
		return nil, c.dispatchFailure(op, err)
	}
	payload = public(payload)
	payload["writeAttempted"] = true
	payload["writeSafetyGuaranteed"] = false
	return payload, nil
}

// public drops the private ("_"-prefixed) keys of a payload.
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
		return Scope{}, fail(CodeRejected, false, err, "the arguments cannot be canonicalised: %v", err)
	}
	return NewScope(op.Tool, op.Action, d, op.Targets), nil
}

func (c *Coordinator) stateDigest(ctx context.Context, op Op) (string, error) {
	st, err := op.ReadState(ctx)
	if err != nil {
		return "", err
	}
	d, err := canon.Digest(st)
	if err != nil {
		return "", fmt.Errorf("strict: hash state: %w", err)
	}
	return d, nil
}

// preflight reads without mutating, issues a request id and a lease.
func (c *Coordinator) preflight(ctx context.Context, op Op) (map[string]any, error) {
	scope, err := c.scope(op)
	if err != nil {
		return nil, err
	}
	var digest string
	if op.Policy.Class == Mutation {
		if digest, err = c.stateDigest(ctx, op); err != nil {
			return nil, err
		}
	}
	rec, err := c.ledger.Issue(ctx, Record{Tool: op.Tool, Action: op.Action, ArgsDigest: scope.ArgsDigest,
		Targets: scope.Targets, Precondition: op.Policy.Precondition})
	if err != nil {
		return nil, c.ledgerFailure(err, false)
	}
	lease, err := c.leases.Put(Lease{Scope: scope, Precondition: op.Policy.Precondition, Digest: digest,
		RequestID: rec.RequestID, IssuedAt: c.now()})
	if err != nil {
		return nil, fmt.Errorf("strict: store lease: %w", err)
	}
	out := map[string]any{
		"action": op.Action, "validateOnly": true, "writeAttempted": false,
		"requestId": rec.RequestID, "requestIdExpiresAt": rec.ExpiresAt().UnixMilli(),
		"targetCount": len(scope.Targets),
	}
	if op.Policy.Class == Mutation {
		field := string(op.Policy.Precondition)
		out["preconditionField"] = field
		out[field] = lease.Credential
		out["hashPrefixLength"] = len(lease.Credential)
		out["leaseExpiresAt"] = lease.ExpiresAt.UnixMilli()
	} else {
		out["leaseExpiresAt"] = lease.ExpiresAt.UnixMilli()
		out["nextStep"] = "repeat the call without validateOnly, with this requestId; no hash is needed"
	}
	return out, nil
}

// commit runs a strict write: through the single lane, after the ledger and
// lease checks and a fresh comparison of full digests, dispatched once and
// read back.
func (c *Coordinator) commit(ctx context.Context, op Op) (map[string]any, error) {
	if op.RequestID == "" {
		return nil, fail(CodePreconditionRequired, false, nil, "requestId is missing: a write needs the requestId its preflight issued")
	}
	if _, err := ParseRequestID(op.RequestID); err != nil {
		return nil, fail(CodePreconditionRequired, false, err, "requestId %q was not issued by a preflight", op.RequestID)
	}
	field := string(op.Policy.Precondition)
	if op.Policy.Class == Mutation {
		if op.Credential == "" {
			return nil, fail(CodePreconditionRequired, false, nil, "%s is missing: copy it from the preflight's answer", field)
		}
		if _, err := ParseCredential(op.Credential); err != nil {
			return nil, fail(CodePreconditionRequired, false, err, "%s must be sha256:v1:<4-64 hex> or bare hex, as the preflight returned it", field)
		}
	}
	scope, err := c.scope(op)
	if err != nil {
		return nil, err
	}

	c.lane.Lock()
	defer c.lane.Unlock()

	rec, err := c.ledger.Check(ctx, op.RequestID, scope)
	if err != nil {
		return c.admitFailure(op, rec, err)
	}
	var lease Lease
	if op.Policy.Class == Mutation {
		lease, err = c.leases.Take(scope, op.Credential, c.now())
	} else {
		lease, err = c.leases.ForRequest(scope, op.RequestID, c.now())
	}
	switch {
	case errors.Is(err, ErrMalformedCredential):
		return nil, fail(CodePreconditionRequired, false, err, "%s is malformed", field)
	case err != nil:
		return nil, fail(CodePreflightLeaseInvalid, false, err, "no live preflight lease matches this call (expired, used, from another process, or other arguments)")
	}
	previous := lease.Digest
	if op.Policy.Class == Mutation {
		current, err := c.stateDigest(ctx, op)
		if err != nil {
			return nil, err
		}
		if current != lease.Digest {
			f := fail(CodeStateChanged, false, nil, "the target changed after preflight; nothing was written")
			f.ExpectedHash, f.CurrentHash = c.aliases.Alias(lease.Digest), c.aliases.Alias(current)
			return nil, f
		}
	}
	checked := time.Now()
	// Past this barrier the write is irrevocable: cancellation is refused
	// so that mutation, readback and ledger finish together.
	if err := CommitBarrier(ctx, op.RequestID); err != nil {
		return nil, err
	}
	if _, err := c.ledger.Begin(ctx, op.RequestID, scope); err != nil {
		// Check passed under the lane, so only storage can fail here.
		return c.admitFailure(op, rec, err)
	}
	c.leases.Consume(lease)

	payload, err := op.Execute(ctx)
	if c.observe != nil {
		c.observe(Dispatch{Tool: op.Tool, Action: op.Action, RequestID: op.RequestID, Checked: checked, Returned: time.Now()})
	}
	if err != nil {
		if errors.Is(err, ErrRejected) {
			receipt, _ := json.Marshal(map[string]any{"error": CodeRejected})
			c.ledger.Finish(ctx, op.RequestID, StatusFailedBeforeDispatch, previous, "", receipt)
		}
		f := c.dispatchFailure(op, err)
		f.RequestID = op.RequestID
		return nil, f
	}
	after, err := op.Readback(ctx, payload)
	if err != nil {
		c.log.Warn("readback mismatch", "tool", op.Tool, "action", op.Action, "request", op.RequestID, "err", err)
		return nil, &Failure{Code: CodeReadbackMismatch, Message: "the write was sent but the readback could not verify it: " + err.Error(),
			WriteAttempted: true, RequestID: op.RequestID, Cause: err}
	}
	result, err := canon.Digest(after)
	if err != nil {
		return nil, &Failure{Code: CodeReadbackMismatch, Message: "the readback state cannot be hashed", WriteAttempted: true, RequestID: op.RequestID, Cause: err}
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
	if _, err := c.ledger.Finish(ctx, op.RequestID, status, previous, result, receipt); err != nil {
		return nil, &Failure{Code: CodeOutcomeUnknown, Message: "the write was verified but the ledger could not record it",
			WriteAttempted: true, RequestID: op.RequestID, Cause: err}
	}
	return c.success(payload, op, status, previous, result, scope, false, true), nil
}

func (c *Coordinator) success(payload map[string]any, op Op, status Status, previous, result string, scope Scope, replayed, attempted bool) map[string]any {
	out := make(map[string]any, len(payload)+8)
	for k, v := range payload {
		out[k] = v
	}
	out["requestId"] = op.RequestID
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
	return out
}

// admitFailure answers the ledger's verdict on a request id.
func (c *Coordinator) admitFailure(op Op, rec Record, err error) (map[string]any, error) {
	switch {
	case errors.Is(err, ErrReplay):
		if rec.Status == StatusFailedBeforeDispatch {
			return nil, &Failure{Code: CodeRejected, Message: "this request was rejected by the kernel before; nothing was applied", RequestID: op.RequestID}
		}
		var payload map[string]any
		if err := json.Unmarshal(rec.Receipt, &payload); err != nil || payload == nil {
			payload = map[string]any{}
		}
		return c.success(payload, op, rec.Status, rec.PreviousHash, rec.ResultHash, rec.Scope(), true, false), nil
	case errors.Is(err, ErrAlreadyExecuting):
		return nil, &Failure{Code: CodeOutcomeUnknown, Message: "this request started executing before and its outcome was never confirmed; it will not run again",
			RequestID: op.RequestID, Cause: err}
	case errors.Is(err, ErrIdempotencyConflict):
		return nil, &Failure{Code: CodeIdempotencyConflict, Message: "this requestId was issued for a different call (tool, action, arguments or targets)", RequestID: op.RequestID, Cause: err}
	case errors.Is(err, ErrUnknownRequest):
		return nil, fail(CodePreconditionRequired, false, err, "requestId %q was not issued by a preflight of this authority", op.RequestID)
	case errors.Is(err, ErrRequestExpired):
		return nil, fail(CodePreflightLeaseInvalid, false, err, "requestId %q expired before it was used (10 minutes)", op.RequestID)
	}
	return nil, c.ledgerFailure(err, false)
}

func (c *Coordinator) ledgerFailure(err error, attempted bool) *Failure {
	return &Failure{Code: CodeLedgerUnavailable, Message: "the write ledger is unavailable; no write was attempted", WriteAttempted: attempted, Cause: err}
}

// dispatchFailure classifies an Execute error: a proven rejection, or an
// unknown outcome. Writes are never retried.
func (c *Coordinator) dispatchFailure(op Op, err error) *Failure {
	var f *Failure
	if errors.As(err, &f) {
		return f
	}
	if errors.Is(err, ErrRejected) {
		return &Failure{Code: CodeRejected, Message: "the kernel refused the write; nothing was applied: " + err.Error(), WriteAttempted: true, Cause: err}
	}
	return &Failure{Code: CodeOutcomeUnknown, Message: "the write was sent but its outcome is unknown (the reply was lost or incomplete); it will not be retried",
		WriteAttempted: true, Cause: err}
}
