package strict

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/failure"
)

// fakeTarget is a register the fake ops read and write.
type fakeTarget struct{ value string }

func newCoord(t *testing.T, strictOff bool) (*Coordinator, *Ledger) {
	t.Helper()
	l, err := OpenLedger(filepath.Join(t.TempDir(), "ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return NewCoordinator(CoordinatorConfig{Ledger: l, StrictOff: strictOff}), l
}

func guardedOp(tg *fakeTarget, newValue string, readback func() (any, error)) Op {
	op := Op{
		Tool: "fake", Action: "set", Policy: WritePolicy{Class: Mutation, Precondition: ExpectedStateHash},
		Business: map[string]any{"action": "set", "value": newValue}, Targets: []string{"t1"},
		ReadState: func(context.Context) (any, error) { return map[string]any{"value": tg.value}, nil },
		Execute: func(context.Context, any) (map[string]any, error) {
			tg.value = newValue
			return map[string]any{"set": true}, nil
		},
		Readback: func(context.Context, map[string]any) (any, error) { return map[string]any{"value": tg.value}, nil },
	}
	if readback != nil {
		op.Readback = func(context.Context, map[string]any) (any, error) { return readback() }
	}
	return op
}

func code(err error) failure.Code {
	var f *failure.Error
	if errors.As(err, &f) {
		return f.Code
	}
	if err == nil {
		return ""
	}
	return failure.Code("other: " + err.Error())
}

func TestCoordinatorFailureCodes(t *testing.T) {
	ctx := context.Background()
	preflight := func(c *Coordinator, op Op) (string, string) {
		op.ValidateOnly = true
		out, err := fields(c.Do(ctx, op))
		if err != nil {
			t.Fatal(err)
		}
		return out["requestId"].(string), out["expectedStateHash"].(string)
	}
	t.Run("readback_mismatch leaves the request unknown forever", func(t *testing.T) {
		c, _ := newCoord(t, false)
		tg := &fakeTarget{"a"}
		op := guardedOp(tg, "b", func() (any, error) { return nil, errors.New("not visible") })
		op.RequestID, op.Credential = preflight(c, op)
		_, err := fields(c.Do(ctx, op))
		var f *failure.Error
		if !errors.As(err, &f) || f.Code != failure.ReadbackMismatch || !attempted(f) || f.CallerAction() == "" {
			t.Fatalf("got %v", err)
		}
		if _, err := fields(c.Do(ctx, op)); code(err) != failure.OutcomeUnknown {
			t.Fatalf("retry after readback_mismatch: %v", err)
		}
	})
	t.Run("a lost reply is outcome_unknown, a rejection is not", func(t *testing.T) {
		c, _ := newCoord(t, false)
		tg := &fakeTarget{"a"}
		op := guardedOp(tg, "b", nil)
		op.Execute = func(context.Context, any) (map[string]any, error) { return nil, errors.New("connection reset") }
		op.RequestID, op.Credential = preflight(c, op)
		if _, err := fields(c.Do(ctx, op)); code(err) != failure.OutcomeUnknown {
			t.Fatalf("got %v", err)
		}
		op2 := guardedOp(tg, "c", nil)
		op2.Execute = func(context.Context, any) (map[string]any, error) { return nil, Reject(errors.New("code -1")) }
		op2.RequestID, op2.Credential = preflight(c, op2)
		if _, err := fields(c.Do(ctx, op2)); code(err) != failure.Rejected {
			t.Fatalf("got %v", err)
		}
		// A rejected request replays as rejected, never runs again.
		if _, err := fields(c.Do(ctx, op2)); code(err) != failure.Rejected {
			t.Fatalf("replay of a rejection: %v", err)
		}
	})
	t.Run("a ledger that cannot be written fails closed", func(t *testing.T) {
		c, l := newCoord(t, false)
		tg := &fakeTarget{"a"}
		op := guardedOp(tg, "b", nil)
		op.RequestID, op.Credential = preflight(c, op)
		l.Close()
		if _, err := fields(c.Do(ctx, op)); code(err) != failure.LedgerUnavailable {
			t.Fatalf("got %v", err)
		}
		if tg.value != "a" {
			t.Fatal("a write was dispatched without a ledger")
		}
		op.ValidateOnly = true
		if _, err := fields(c.Do(ctx, op)); code(err) != failure.LedgerUnavailable {
			t.Fatalf("preflight without a ledger: %v", err)
		}
	})
	t.Run("external actions refuse preflight and run once unguaranteed", func(t *testing.T) {
		c, _ := newCoord(t, false)
		runs := 0
		op := Op{Tool: "system", Action: "notify", Policy: WritePolicy{Class: External}, ValidateOnly: true,
			Execute: func(context.Context, any) (map[string]any, error) { runs++; return map[string]any{}, nil }}
		if _, err := fields(c.Do(ctx, op)); code(err) != failure.PreflightUnavailable || runs != 0 {
			t.Fatalf("preflight of external: %v, runs %d", err, runs)
		}
		op.ValidateOnly = false
		out, err := fields(c.Do(ctx, op))
		if err != nil || out["writeSafetyGuaranteed"] != false || runs != 1 {
			t.Fatalf("external: %v %v", out, err)
		}
	})
	t.Run("an external effect holds the lane no longer than its timeout", func(t *testing.T) {
		c, _ := newCoord(t, false)
		started := make(chan struct{})
		slow := Op{Tool: "feedback", Action: "submit", Policy: WritePolicy{Class: External}, Timeout: 50 * time.Millisecond,
			Execute: func(ctx context.Context, _ any) (map[string]any, error) {
				close(started)
				<-ctx.Done() // an endpoint that never answers
				return nil, failure.Wrap(failure.OutcomeUnknown, ctx.Err(), "no answer").Attempted(true)
			}}
		slowDone := make(chan error, 1)
		go func() { _, err := fields(c.Do(ctx, slow)); slowDone <- err }()
		<-started
		// A write queued behind it in the lane runs once the effect is cut.
		ran := 0
		next := Op{Tool: "system", Action: "notify", Policy: WritePolicy{Class: External},
			Execute: func(context.Context, any) (map[string]any, error) { ran++; return map[string]any{}, nil }}
		if _, err := fields(c.Do(ctx, next)); err != nil || ran != 1 {
			t.Fatalf("the write behind: %v, ran %d", err, ran)
		}
		if err := <-slowDone; code(err) != failure.OutcomeUnknown {
			t.Fatalf("the cut effect: %v", err)
		}
	})
	t.Run("request ids expire ten minutes after issue", func(t *testing.T) {
		now := time.Now()
		l, err := OpenLedger(filepath.Join(t.TempDir(), "ledger.db"), WithLedgerClock(func() time.Time { return now }))
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		c := NewCoordinator(CoordinatorConfig{Ledger: l, Now: func() time.Time { return now }})
		tg := &fakeTarget{"a"}
		op := guardedOp(tg, "b", nil)
		op.RequestID, op.Credential = preflight(c, op)
		now = now.Add(11 * time.Minute)
		if _, err := fields(c.Do(ctx, op)); code(err) != failure.PreflightLeaseInvalid || tg.value != "a" {
			t.Fatalf("expired request: %v", err)
		}
	})
	t.Run("a 64-digit credential still needs a live lease", func(t *testing.T) {
		c, _ := newCoord(t, false)
		tg := &fakeTarget{"a"}
		op := guardedOp(tg, "b", nil)
		op.RequestID, _ = preflight(c, op)
		op.Credential = "sha256:v1:" + "ab" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcd"
		if _, err := fields(c.Do(ctx, op)); code(err) != failure.PreflightLeaseInvalid {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("dispatch timing is observed", func(t *testing.T) {
		var got []Dispatch
		l, _ := OpenLedger(filepath.Join(t.TempDir(), "ledger.db"))
		defer l.Close()
		c := NewCoordinator(CoordinatorConfig{Ledger: l, OnDispatch: func(d Dispatch) { got = append(got, d) }})
		tg := &fakeTarget{"a"}
		op := guardedOp(tg, "b", nil)
		op.RequestID, op.Credential = preflight(c, op)
		if _, err := fields(c.Do(ctx, op)); err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Returned.Before(got[0].Checked) || got[0].RequestID != op.RequestID {
			t.Fatalf("observed %+v", got)
		}
	})
}

func attempted(f *failure.Error) bool { return f.WriteAttempted != nil && *f.WriteAttempted }

// resolveStr resolves a credential as an agent submits it.
func resolveStr(p *AliasPool, s string) (string, bool) {
	c, err := ParseCredential(s)
	if err != nil {
		return "", false
	}
	return p.Resolve(c)
}

// rid parses a request id as the coordinator does at its edge; a malformed
// one is passed on as is (the ledger then knows no such request).
func rid(s string) RequestID {
	id, err := ParseRequestID(s)
	if err != nil {
		return RequestID(s)
	}
	return id
}

// cred parses a credential as the coordinator does; a malformed one is
// passed on as is (it resolves to nothing).
func cred(s string) Credential {
	c, err := ParseCredential(s)
	if err != nil {
		return Credential(s)
	}
	return c
}

// TestPreflightIssues: a preflight issues its request in memory once its
// state is read, writing nothing to the file but a batch of reserved ids now
// and then, and a preflight that fails leaves no request and no used-up id
// behind.
func TestPreflightIssues(t *testing.T) {
	ctx := context.Background()
	// count is how many requests are issued (in memory), how many records
	// the file holds, and how many reserved ids were handed out.
	count := func(t *testing.T, l *Ledger) (issued, records, used int) {
		t.Helper()
		records, reservations := onDisk(t, l)
		issued, pooled := l.iss.count()
		if pooled+issued > reservations {
			t.Fatalf("%d ids pooled and %d issued, %d reserved on disk", pooled, issued, reservations)
		}
		return issued, records, reservations - pooled
	}
	t.Run("a preflight writes nothing but reservations", func(t *testing.T) {
		c, l := newCoord(t, false)
		tg := &fakeTarget{"a"}
		op := guardedOp(tg, "b", nil)
		var out map[string]any
		for i := range idPoolSize {
			pre := op
			pre.ValidateOnly = true
			var err error
			if out, err = fields(c.Do(ctx, pre)); err != nil {
				t.Fatal(err)
			}
			if recs, res := onDisk(t, l); recs != 0 || res != idPoolSize {
				t.Fatalf("after preflight %d: %d records and %d reservations on disk", i+1, recs, res)
			}
		}
		if issued, _, used := count(t, l); issued != idPoolSize || used != idPoolSize {
			t.Fatalf("%d issued, %d ids used", issued, used)
		}
		rec, found, err := l.Get(ctx, rid(out["requestId"].(string)))
		if err != nil || !found || rec.Status != StatusIssued {
			t.Fatalf("record %+v found %v: %v", rec, found, err)
		}
		op.RequestID, op.Credential = out["requestId"].(string), out["expectedStateHash"].(string)
		if _, err := fields(c.Do(ctx, op)); err != nil || tg.value != "b" {
			t.Fatalf("commit: %v (value %q)", err, tg.value)
		}
		if recs, _ := onDisk(t, l); recs != 1 {
			t.Fatalf("%d records on disk after the commit", recs)
		}
	})
	failing := []struct {
		name  string
		setup func(op *Op)
		want  failure.Code
	}{
		{"the read fails", func(op *Op) {
			op.ReadState = func(context.Context) (any, error) {
				return nil, fail(failure.NotFound, false, nil, "no such block")
			}
		}, failure.NotFound},
		{"the check refuses", func(op *Op) {
			op.Check = func(any) error { return fail(failure.InvalidArguments, false, nil, "not this block") }
		}, failure.InvalidArguments},
		{"the state cannot be hashed", func(op *Op) {
			op.ReadState = func(context.Context) (any, error) { return map[string]any{"f": func() {}}, nil }
		}, ""},
		{"the lease cannot be stored", func(op *Op) {
			op.Policy.Precondition = "" // a digest without a field to carry it
		}, ""},
	}
	for _, tt := range failing {
		t.Run(tt.name+": nothing is left", func(t *testing.T) {
			c, l := newCoord(t, false)
			op := guardedOp(&fakeTarget{"a"}, "b", nil)
			op.ValidateOnly = true
			tt.setup(&op)
			_, err := fields(c.Do(ctx, op))
			if err == nil || (tt.want != "" && code(err) != tt.want) {
				t.Fatalf("got %v, want %s", err, tt.want)
			}
			if issued, recs, used := count(t, l); issued != 0 || recs != 0 || used != 0 {
				t.Fatalf("a failed preflight left %d requests issued, %d records, %d ids used up", issued, recs, used)
			}
		})
	}
	t.Run("a failed read is answered before an unusable ledger", func(t *testing.T) {
		c, l := newCoord(t, false)
		op := guardedOp(&fakeTarget{"a"}, "b", nil)
		op.ValidateOnly = true
		failing[0].setup(&op)
		l.log = quiet
		l.Close()
		if _, err := fields(c.Do(ctx, op)); code(err) != failure.NotFound {
			t.Fatalf("got %v", err)
		}
	})
}
