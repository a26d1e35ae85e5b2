package strict

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// Creation limits: a creation's record holds ids and a small receipt only.
const (
	// MaxCreationIDs caps the ids a creation reserves or learns (database,
	// block, keys, rows, anchors).
	MaxCreationIDs = 256
	// MaxCreationIDLen caps one id's name and value.
	MaxCreationIDLen = 64
	// MaxCreationSize caps a creation's encoded progress (ids, stages and
	// the receipt so far).
	MaxCreationSize = MaxReceiptSize
)

// ErrCreationTooLarge: a creation's ids or receipt exceed the caps.
var ErrCreationTooLarge = errors.New("strict: creation record is too large")

// Creation is the progress of a staged creation (a database made by
// several kernel writes), kept in its ledger record so that a replay
// answers its receipt and a crash between stages resumes instead of
// creating a second object.
//
//	Begin (executing + IDs) ─▶ stage 1 pending ─▶ stage 1 done ─▶ stage 2 pending ─▶ … ─▶ Finish
//
// IDs are the ids the creation uses, reserved before its first dispatch
// (and, for a stage whose kernel chooses an id, learned when the stage is
// confirmed). Done lists the confirmed stages in order; Pending names the
// stage whose dispatch may have reached the kernel and is not confirmed:
// after a crash it is in doubt. Receipt is the receipt so far: ids,
// stages and counts, never cell text or note bodies.
type Creation struct {
	IDs     map[string]string `json:"ids"`
	Done    []string          `json:"done,omitempty"`
	Pending string            `json:"pending,omitempty"`
	Receipt json.RawMessage   `json:"receipt,omitempty"`
}

// clone returns a copy that shares nothing with c.
func (c *Creation) clone() *Creation {
	if c == nil {
		return nil
	}
	return &Creation{IDs: maps.Clone(c.IDs), Done: slices.Clone(c.Done), Pending: c.Pending, Receipt: slices.Clone(c.Receipt)}
}

// check enforces the caps.
func (c *Creation) check() error {
	if len(c.IDs) > MaxCreationIDs {
		return fmt.Errorf("%w: %d ids, the cap is %d", ErrCreationTooLarge, len(c.IDs), MaxCreationIDs)
	}
	for k, v := range c.IDs {
		if k == "" || len(k) > MaxCreationIDLen || len(v) > MaxCreationIDLen {
			return fmt.Errorf("%w: id %q=%q is empty or longer than %d bytes", ErrCreationTooLarge, k, v, MaxCreationIDLen)
		}
	}
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrCreationTooLarge, err)
	}
	if len(b) > MaxCreationSize {
		return fmt.Errorf("%w: %d bytes, the cap is %d", ErrCreationTooLarge, len(b), MaxCreationSize)
	}
	return nil
}

// BeginCreation is [Ledger.Begin] for a staged creation: in the same
// fsynced transaction that makes the request executing, it stores the ids
// the creation reserved, so that they are durable before the first
// dispatch and a resumed creation uses exactly them.
func (l *Ledger) BeginCreation(ctx context.Context, requestID RequestID, scope Scope, ids map[string]string) (Record, error) {
	cr := &Creation{IDs: maps.Clone(ids)}
	if cr.IDs == nil {
		cr.IDs = map[string]string{}
	}
	if err := cr.check(); err != nil {
		return Record{}, err
	}
	return l.admitWith(ctx, requestID, scope, cr)
}

// StageMark is one step of a creation's progress: a stage about to be
// dispatched (Pending), confirmed (Done, with the ids the kernel chose
// and the receipt so far), or proven not applied (Rejected: the kernel
// refused it, so it is no longer in doubt).
type StageMark struct {
	Stage   string
	Kind    StageKind
	Learned map[string]string
	Receipt json.RawMessage
}

// StageKind says what a [StageMark] records.
type StageKind int

// Stage marks.
const (
	// StagePending: the stage is being dispatched; in doubt until Done.
	StagePending StageKind = iota + 1
	// StageDone: the kernel shows the stage applied.
	StageDone
	// StageCleared: the stage's dispatch is proven not applied (refused).
	StageCleared
)

// Stage records a creation's progress durably (one fsynced transaction).
// The record must be executing with a creation. Pending needs no other
// stage pending; Done and Cleared need this stage pending (Done: or, when
// a resume found it applied, still pending from before the crash).
func (l *Ledger) Stage(ctx context.Context, requestID RequestID, m StageMark) (Record, error) {
	if m.Stage == "" || len(m.Stage) > MaxCreationIDLen {
		return Record{}, fmt.Errorf("strict: stage name %q is empty or too long", m.Stage)
	}
	if len(m.Receipt) > 0 {
		var buf bytes.Buffer
		if err := json.Compact(&buf, m.Receipt); err != nil {
			return Record{}, fmt.Errorf("%w: receipt is not JSON: %w", ErrCreationTooLarge, err)
		}
		m.Receipt = buf.Bytes()
	}
	id := string(requestID)
	if err := l.notBegun(ctx, id); err != nil {
		return Record{}, err
	}
	var out Record
	err := l.update(ctx, "stage", func(tx *bolt.Tx) error {
		r, found, err := getRecord(tx, id)
		if err != nil {
			return err
		}
		switch {
		case !found:
			return fmt.Errorf("%w: %s", ErrUnknownRequest, id)
		case r.Status != StatusExecuting || r.Creation == nil:
			return fmt.Errorf("%w: %s is %s, not an executing creation", ErrBadTransition, id, r.Status)
		case slices.Contains(r.Creation.Done, m.Stage):
			return fmt.Errorf("%w: stage %s of %s is already done", ErrBadTransition, m.Stage, id)
		}
		cr := r.Creation.clone()
		switch m.Kind {
		case StagePending:
			if cr.Pending != "" {
				return fmt.Errorf("%w: stage %s of %s is still pending", ErrBadTransition, cr.Pending, id)
			}
			cr.Pending = m.Stage
		case StageDone, StageCleared:
			if cr.Pending != m.Stage {
				return fmt.Errorf("%w: stage %s of %s is not pending (pending: %q)", ErrBadTransition, m.Stage, id, cr.Pending)
			}
			cr.Pending = ""
			if m.Kind == StageDone {
				cr.Done = append(cr.Done, m.Stage)
				for k, v := range m.Learned {
					if old, ok := cr.IDs[k]; ok && old != v {
						return fmt.Errorf("%w: stage %s of %s learned %s=%s, reserved as %s", ErrBadTransition, m.Stage, id, k, v, old)
					}
					cr.IDs[k] = v
				}
			}
		default:
			return fmt.Errorf("strict: unknown stage mark %d", m.Kind)
		}
		if m.Receipt != nil {
			cr.Receipt = m.Receipt
		}
		if err := cr.check(); err != nil {
			return err
		}
		r.Creation = cr
		out = r
		return putRecord(tx, r)
	})
	if err != nil {
		return Record{}, err
	}
	return out, nil
}
