package strict

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/failure"
)

// Plan makes an Op a staged creation: several kernel writes (insert a
// database block, create the database, add its columns, …), each a stage
// the ledger records once the kernel shows it. It replaces Execute.
//
// Reserve chooses every id the creation will use before anything is
// recorded as executing; the ledger stores them with executing, in one
// fsync, so a resume after a crash uses exactly the same ids and can ask
// the kernel what already exists with them. Stages run in order; each is
// marked pending (fsync) before its dispatch and done (fsync) once its
// Present check sees it. Receipt is the small receipt (ids, stages,
// counts; never content), kept with every confirmed stage.
//
// A commit whose request is still executing resumes instead of answering
// outcome_unknown: confirmed stages are skipped, a stage never dispatched
// is dispatched, and the stage in doubt (pending when the process died or
// its reply was lost) counts as done when Present sees it; when Present
// does not, it is sent again only if it is Redo (sending it twice cannot
// make a second object: a render that creates a reserved id only if it is
// missing), and otherwise the answer is outcome_unknown with the receipt
// so far. A stage whose kernel chooses an id (a duplicate's new database)
// reports it as learned; in doubt, it has no id to look for, so it is
// never sent again.
type Plan struct {
	Reserve func(state any) (map[string]string, error)
	Stages  []Stage
	Receipt func(ids map[string]string, done []string) map[string]any
	// Gate, when set, is awaited before the first stage is marked: a call
	// refused there (a resume whose notebook became read-only) leaves no
	// stage pending that was never sent.
	Gate func() error
}

// Stage is one kernel write of a [Plan].
type Stage struct {
	Name string
	// Do dispatches the stage once; it returns the ids the kernel chose.
	// Errors are classified as Execute's: [Reject] proves nothing applied.
	Do func(ctx context.Context, ids map[string]string) (learned map[string]string, err error)
	// Present reads (never writes) whether the kernel shows the stage
	// applied, waiting briefly for a kernel that applies asynchronously.
	Present func(ctx context.Context, ids map[string]string) (bool, error)
	// Redo: dispatching the stage again after an unconfirmed dispatch is
	// harmless.
	Redo bool
}

// stagedCommit runs a creation admitted by commit: executing with its
// reserved ids, then its stages, readback and Finish.
func (c *Coordinator) stagedCommit(ctx context.Context, op Op, id RequestID, scope Scope, lease Lease, state any) (Answer, error) {
	ids, err := op.Plan.Reserve(state)
	if err != nil {
		return Answer{}, refusal(err)
	}
	rec, err := c.ledger.BeginCreation(ctx, id, scope, ids)
	if err != nil {
		return c.admitFailure(id, rec, err)
	}
	c.leases.Consume(lease)
	return c.runStages(ctx, op, id, scope, lease.Digest, rec.Creation, time.Now())
}

// resume continues a creation left executing (crash, lost reply).
func (c *Coordinator) resume(ctx context.Context, op Op, id RequestID, rec Record) (Answer, error) {
	if err := CommitBarrier(ctx, string(id)); err != nil {
		return Answer{}, err
	}
	c.log.Info("resuming a creation", "tool", op.Tool, "action", op.Action, "request", id, "done", rec.Creation.Done, "pending", rec.Creation.Pending)
	return c.runStages(ctx, op, id, rec.Scope(), rec.PreviousHash, rec.Creation, time.Now())
}

// receiptSoFar is the creation's receipt from its ids and confirmed stages.
func receiptSoFar(op Op, cr *Creation) map[string]any {
	out := map[string]any{}
	if op.Plan.Receipt != nil {
		out = op.Plan.Receipt(maps.Clone(cr.IDs), slices.Clone(cr.Done))
	}
	out["stages"] = append([]string{}, cr.Done...)
	return out
}

// unknownCreation is outcome_unknown with the receipt so far.
func unknownCreation(op Op, id RequestID, cr *Creation, cause error, format string, a ...any) *failure.Error {
	f := fail(failure.OutcomeUnknown, true, cause, format, a...)
	f.RequestID = string(id)
	r := receiptSoFar(op, cr)
	if cr.Pending != "" {
		r["inDoubt"] = cr.Pending
	}
	return f.With("receipt", r)
}

func (c *Coordinator) runStages(ctx context.Context, op Op, id RequestID, scope Scope, previous string, cr *Creation, checked time.Time) (Answer, error) {
	if op.Plan.Gate != nil {
		if err := op.Plan.Gate(); err != nil {
			return Answer{}, err
		}
	}
	cr = cr.clone()
	mark := func(m StageMark) error {
		rec, err := c.ledger.Stage(ctx, id, m)
		if err == nil {
			cr = rec.Creation
		}
		return err
	}
	for i, st := range op.Plan.Stages {
		if slices.Contains(cr.Done, st.Name) {
			continue
		}
		if cr.Pending == st.Name {
			// In doubt: sent before, never confirmed.
			present, err := st.Present(ctx, maps.Clone(cr.IDs))
			if err != nil {
				return Answer{}, unknownCreation(op, id, cr, err, "stage %s of this creation was sent and could not be checked (%v); nothing was sent again", st.Name, err)
			}
			if present {
				if err := mark(StageMark{Stage: st.Name, Kind: StageDone, Receipt: c.receipt(op, cr, st.Name)}); err != nil {
					return Answer{}, unknownCreation(op, id, cr, err, "stage %s is applied but the ledger could not record it", st.Name)
				}
				continue
			}
			if !st.Redo {
				return Answer{}, unknownCreation(op, id, cr, nil, "stage %s of this creation was sent and never confirmed, and the kernel does not show it with the ids this creation holds; sending it again could make a second object, so it is not sent again", st.Name)
			}
		} else if err := mark(StageMark{Stage: st.Name, Kind: StagePending}); err != nil {
			if i == 0 && len(cr.Done) == 0 {
				return Answer{}, c.ledgerFailure(err)
			}
			return Answer{}, unknownCreation(op, id, cr, err, "the ledger could not record stage %s; it was not sent", st.Name)
		}
		learned, err := st.Do(ctx, maps.Clone(cr.IDs))
		if c.observe != nil && i == 0 {
			c.observe(Dispatch{Tool: op.Tool, Action: op.Action, RequestID: string(id), Checked: checked, Returned: time.Now()})
		}
		if err != nil {
			return Answer{}, c.stageFailure(ctx, op, id, cr, st, err, previous)
		}
		ids := maps.Clone(cr.IDs)
		maps.Copy(ids, learned)
		present, err := st.Present(ctx, ids)
		if err != nil || !present {
			if err == nil {
				err = fmt.Errorf("the kernel does not show stage %s", st.Name)
			}
			f := unknownCreation(op, id, cr, err, "stage %s was sent but the kernel does not show it: %v", st.Name, err)
			f.Code = failure.ReadbackMismatch
			return Answer{}, f
		}
		next := cr.clone()
		maps.Copy(next.IDs, learned)
		if err := mark(StageMark{Stage: st.Name, Kind: StageDone, Learned: learned, Receipt: c.receipt(op, next, st.Name)}); err != nil {
			return Answer{}, unknownCreation(op, id, next, err, "stage %s is applied but the ledger could not record it", st.Name)
		}
	}
	payload := receiptSoFar(op, cr)
	after, err := op.Readback(ctx, payload)
	if err != nil {
		c.log.Warn("readback mismatch", "tool", op.Tool, "action", op.Action, "request", id, "err", err)
		f := fail(failure.ReadbackMismatch, true, err, "the creation was sent but the readback could not verify it: %s", err.Error())
		f.RequestID = string(id)
		return Answer{}, f.With("receipt", payload)
	}
	result, err := digestOf(after)
	if err != nil {
		f := fail(failure.ReadbackMismatch, true, err, "the readback state cannot be hashed")
		f.RequestID = string(id)
		return Answer{}, f
	}
	payload = public(payload)
	receipt, err := json.Marshal(payload)
	if err != nil || len(receipt) > MaxReceiptSize {
		receipt, _ = json.Marshal(map[string]any{"receiptOmitted": true})
	}
	if _, err := c.ledger.Finish(ctx, id, StatusCommitted, previous, result, receipt); err != nil {
		f := fail(failure.OutcomeUnknown, true, err, "the creation was verified but the ledger could not record it")
		f.RequestID = string(id)
		return Answer{}, f.With("receipt", payload)
	}
	return c.success(payload, id, StatusCommitted, previous, result, scope, false, true), nil
}

// receipt is the receipt once stage is done, encoded for the ledger.
func (c *Coordinator) receipt(op Op, cr *Creation, stage string) json.RawMessage {
	next := cr.clone()
	next.Done = append(next.Done, stage)
	b, err := json.Marshal(receiptSoFar(op, next))
	if err != nil {
		return nil
	}
	return b
}

// stageFailure answers a stage's failed dispatch. A refusal of the first
// stage applied nothing: the request is finished as rejected. A refusal of
// a later one leaves the earlier stages applied: the stage is cleared (a
// replay resumes there) and the answer carries the receipt so far. Any
// other failure leaves the stage in doubt: outcome_unknown.
func (c *Coordinator) stageFailure(ctx context.Context, op Op, id RequestID, cr *Creation, st Stage, err error, previous string) error {
	if !errors.Is(err, ErrRejected) {
		return unknownCreation(op, id, cr, err, "stage %s was sent but its outcome is unknown (the reply was lost or incomplete); a replay of this requestId checks the kernel and never makes a second object", st.Name)
	}
	if len(cr.Done) == 0 {
		receipt, _ := json.Marshal(map[string]any{"error": failure.Rejected})
		if _, lerr := c.ledger.Stage(ctx, id, StageMark{Stage: st.Name, Kind: StageCleared}); lerr == nil {
			c.ledger.Finish(ctx, id, StatusFailedBeforeDispatch, previous, "", receipt)
		}
		return c.dispatchFailure(err, id)
	}
	if _, lerr := c.ledger.Stage(ctx, id, StageMark{Stage: st.Name, Kind: StageCleared}); lerr != nil {
		return unknownCreation(op, id, cr, lerr, "stage %s was refused but the ledger could not record it", st.Name)
	}
	cr = cr.clone()
	cr.Pending = ""
	f := c.dispatchFailure(err, id)
	f.WriteAttempted = nil
	f.Attempted(true)
	return f.With("receipt", receiptSoFar(op, cr)).With("resumable", true)
}

// stagedOnce runs a creation's stages with strict mode off: once each, no
// ledger.
func stagedOnce(ctx context.Context, op Op, state any) (map[string]any, error) {
	ids, err := op.Plan.Reserve(state)
	if err != nil {
		return nil, refusal(err)
	}
	cr := &Creation{IDs: ids}
	for _, st := range op.Plan.Stages {
		learned, err := st.Do(ctx, maps.Clone(cr.IDs))
		if err != nil {
			return nil, err
		}
		maps.Copy(cr.IDs, learned)
		cr.Done = append(cr.Done, st.Name)
	}
	return receiptSoFar(op, cr), nil
}
