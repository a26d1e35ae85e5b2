package strict

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/sisyphus-go/sisyphus/internal/failure"
)

// count is how many issued requests and pooled ids the table holds.
func (t *issuedTable) count() (issued, pooled int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.recs), len(t.pool)
}

// onDisk is how many records and reservations the ledger's file holds.
func onDisk(t *testing.T, l *Ledger) (records, reservations int) {
	t.Helper()
	err := l.DB().View(func(tx *bolt.Tx) error {
		records, reservations = tx.Bucket(ledgerBucket).Stats().KeyN, tx.Bucket(reservationsBucket).Stats().KeyN
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return records, reservations
}

// TestIssueReservesAhead: an issued request is kept in memory, its id
// reserved on disk before Issue returns, ids reserved a batch at a time.
func TestIssueReservesAhead(t *testing.T) {
	ctx := context.Background()
	l := openLedger(t, filepath.Join(t.TempDir(), LedgerFile), newClock())
	defer l.Close()
	iss, _ := NewIDIssuer(l.DB())
	seen := map[string]bool{}
	steps := []struct {
		issue                 int // requests issued in this step
		reservations, records int // on disk after it
	}{
		{1, idPoolSize, 0},
		{idPoolSize - 1, idPoolSize, 0}, // the batch is used up
		{1, 2 * idPoolSize, 0},          // the next batch
		{3 * idPoolSize, 5 * idPoolSize, 0},
	}
	for i, st := range steps {
		for range st.issue {
			r, err := l.Issue(ctx, testRecord(blockScope))
			if err != nil {
				t.Fatal(err)
			}
			if seen[r.RequestID] {
				t.Fatalf("step %d: %s issued twice", i, r.RequestID)
			}
			seen[r.RequestID] = true
			if _, ok, err := iss.Issued(ctx, r.RequestID); !ok || err != nil {
				t.Fatalf("step %d: %s handed out before its reservation was committed (%v)", i, r.RequestID, err)
			}
			if got, ok, err := l.Get(ctx, rid(r.RequestID)); !ok || err != nil || got.Status != StatusIssued {
				t.Fatalf("step %d: Get(%s) = %+v, %v, %v", i, r.RequestID, got, ok, err)
			}
		}
		if recs, res := onDisk(t, l); recs != st.records || res != st.reservations {
			t.Fatalf("step %d: %d records and %d reservations on disk, want %d and %d", i, recs, res, st.records, st.reservations)
		}
	}
	if issued, _ := l.iss.count(); issued != len(seen) {
		t.Fatalf("%d issued in memory, want %d", issued, len(seen))
	}
	// Beginning one writes its first record.
	var one string
	for id := range seen {
		one = id
		break
	}
	if _, err := l.Begin(ctx, rid(one), blockScope); err != nil {
		t.Fatal(err)
	}
	if recs, _ := onDisk(t, l); recs != 1 {
		t.Fatalf("%d records after Begin", recs)
	}
	if issued, _ := l.iss.count(); issued != len(seen)-1 {
		t.Fatalf("the begun request is still kept as issued")
	}
}

// TestReservedIDsNeverReturn: the ids a batch reserved and a restart left
// unissued are never issued afterwards, and neither is one issued before.
func TestReservedIDsNeverReturn(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	path := filepath.Join(t.TempDir(), LedgerFile)
	l := openLedger(t, path, clk)
	first, err := l.Issue(ctx, testRecord(blockScope))
	if err != nil {
		t.Fatal(err)
	}
	l.iss.mu.Lock()
	before := append([]string{first.RequestID}, l.iss.pool...)
	l.iss.mu.Unlock()
	if len(before) != idPoolSize {
		t.Fatalf("%d ids in the first batch", len(before))
	}
	l.Close()

	clk.Advance(time.Minute)
	l = openLedger(t, path, clk)
	defer l.Close()
	for range 3 * idPoolSize {
		r, err := l.Issue(ctx, testRecord(blockScope))
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(before, r.RequestID) {
			t.Fatalf("%s was reserved before the restart and issued again after it", r.RequestID)
		}
	}
	// The one issued before the restart is refused, as its lease is gone.
	if _, err := l.Begin(ctx, rid(first.RequestID), blockScope); !errors.Is(err, ErrRequestExpired) {
		t.Fatalf("Begin of a request issued before the restart: %v", err)
	}
	// One reserved and never issued answers as one issued before the
	// restart: its reservation is all there is.
	if _, err := l.Check(ctx, rid(before[1]), blockScope); !errors.Is(err, ErrRequestExpired) {
		t.Fatalf("Check of an id reserved before the restart: %v", err)
	}
}

func TestIssuedTable(t *testing.T) {
	rec := func(id string, at time.Time) Record { return Record{RequestID: id, Status: StatusIssued, IssuedAt: at} }
	t0 := newClock().Now()
	tests := []struct {
		name string
		run  func(t *testing.T, tb *issuedTable)
		kept []string // issued after run
		pool []string
	}{
		{"the oldest beyond the bound goes", func(t *testing.T, tb *issuedTable) {
			for i := range maxIssued + 2 {
				tb.put(rec(fmt.Sprintf("%04x", i), t0))
			}
		}, []string{"0002", fmt.Sprintf("%04x", maxIssued+1)}, nil},
		{"an id withdrawn and issued again keeps its new place", func(t *testing.T, tb *issuedTable) {
			tb.put(rec("aaaa", t0))
			tb.remove("aaaa", true)
			id, _ := tb.pop()
			for i := range maxIssued - 1 {
				tb.put(rec(fmt.Sprintf("%04x", i), t0))
			}
			tb.put(rec(id, t0)) // its first key is the oldest now
			tb.put(rec("ffff", t0))
		}, []string{"aaaa", "ffff"}, []string{}},
		{"a withdrawn id goes back to the pool once", func(t *testing.T, tb *issuedTable) {
			tb.put(rec("abcd", t0))
			tb.remove("abcd", true)
			tb.remove("abcd", true)
		}, nil, []string{"abcd"}},
		{"begun ids do not go back", func(t *testing.T, tb *issuedTable) {
			tb.put(rec("abcd", t0))
			tb.remove("abcd", false)
		}, nil, []string{}},
		{"prune drops what expired", func(t *testing.T, tb *issuedTable) {
			tb.put(rec("0001", t0.Add(-RequestIDTTL)))
			tb.put(rec("0002", t0.Add(-RequestIDTTL+time.Second)))
			if n := tb.prune(t0); n != 1 {
				t.Errorf("pruned %d, want 1", n)
			}
		}, []string{"0002"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tb issuedTable
			tt.run(t, &tb)
			for _, id := range tt.kept {
				if _, at := tb.find(id); at != inMemory {
					t.Errorf("%s is not kept", id)
				}
			}
			if tt.pool != nil && !slices.Equal(tb.pool, tt.pool) {
				t.Errorf("pool %v, want %v", tb.pool, tt.pool)
			}
			if n, _ := tb.count(); n > maxIssued {
				t.Errorf("%d kept, the bound is %d", n, maxIssued)
			}
		})
	}
	t.Run("an evicted id is not kept", func(t *testing.T) {
		var tb issuedTable
		for i := range maxIssued + 1 {
			tb.put(rec(fmt.Sprintf("%04x", i), t0))
		}
		if _, at := tb.find("0000"); at != notHere {
			t.Fatalf("the oldest is still kept")
		}
	})
}

// TestLedgerIssuedOnDisk: a ledger file from a build that wrote issued
// records still begins, checks and withdraws them.
func TestLedgerIssuedOnDisk(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	l := openLedger(t, filepath.Join(t.TempDir(), LedgerFile), clk)
	defer l.Close()
	put := func(id string) {
		t.Helper()
		r := testRecord(blockScope)
		r.RequestID, r.Status, r.IssuedAt = id, StatusIssued, clk.Now()
		r.Targets = normTargets(r.Targets)
		err := l.DB().Update(func(tx *bolt.Tx) error {
			if err := tx.Bucket(reservationsBucket).Put([]byte(id), make([]byte, 8)); err != nil {
				return err
			}
			return putRecord(tx, r)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	put("a0a0")
	put("b0b0")
	if r, err := l.Check(ctx, rid("a0a0"), blockScope); err != nil || r.Status != StatusIssued {
		t.Fatalf("Check = %+v, %v", r, err)
	}
	if r, err := l.Begin(ctx, rid("a0a0"), blockScope); err != nil || r.Status != StatusExecuting {
		t.Fatalf("Begin = %+v, %v", r, err)
	}
	if _, err := l.Begin(ctx, rid("a0a0"), blockScope); !errors.Is(err, ErrAlreadyExecuting) {
		t.Fatalf("second Begin: %v", err)
	}
	if err := l.Withdraw(ctx, rid("b0b0")); err != nil {
		t.Fatal(err)
	}
	if recs, res := onDisk(t, l); recs != 1 || res != 1 {
		t.Fatalf("%d records and %d reservations after the withdraw, want 1 and 1", recs, res)
	}
}

// TestCommitAcrossRestart: what a commit answers for each kind of request
// after the process restarted (a new ledger on the same file, a new
// coordinator: no leases, no issued requests).
func TestCommitAcrossRestart(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), LedgerFile)
	l, err := OpenLedger(path, WithLedgerLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	c := NewCoordinator(CoordinatorConfig{Ledger: l, Logger: quiet})
	tg := &fakeTarget{"a"}
	commitOf := func(op Op, pre map[string]any) Op {
		op.RequestID, op.Credential = pre["requestId"].(string), pre["expectedStateHash"].(string)
		return op
	}
	preflight := func(op Op) map[string]any {
		t.Helper()
		op.ValidateOnly = true
		pre, err := fields(c.Do(ctx, op))
		if err != nil {
			t.Fatal(err)
		}
		return pre
	}
	committed := guardedOp(tg, "b", nil)
	committedCall := commitOf(committed, preflight(committed))
	if out, err := fields(c.Do(ctx, committedCall)); err != nil || out["status"] != string(StatusCommitted) {
		t.Fatalf("commit before the restart: %v, %v", out, err)
	}
	lost := guardedOp(tg, "c", nil)
	lost.Execute = func(context.Context, any) (map[string]any, error) { return nil, errors.New("connection reset") }
	lostCall := commitOf(lost, preflight(lost))
	if _, err := fields(c.Do(ctx, lostCall)); code(err) != failure.OutcomeUnknown {
		t.Fatalf("a lost reply: %v", err)
	}
	issued := guardedOp(tg, "d", nil)
	issuedCall := commitOf(issued, preflight(issued))
	l.Close()

	l, err = OpenLedger(path, WithLedgerLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c = NewCoordinator(CoordinatorConfig{Ledger: l, Logger: quiet})
	tests := []struct {
		name    string
		op      Op
		code    failure.Code // "" for a replay
		recheck bool         // revalidateRequired
	}{
		{"a committed request replays", committedCall, "", false},
		{"one left executing stays unknown", lostCall, failure.OutcomeUnknown, false},
		{"one only issued needs a new preflight", issuedCall, failure.PreflightLeaseInvalid, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ran := false
			op := tt.op
			op.Execute = func(context.Context, any) (map[string]any, error) { ran = true; return map[string]any{}, nil }
			out, err := fields(c.Do(ctx, op))
			if ran {
				t.Fatal("the write ran again after the restart")
			}
			if tt.code == "" {
				if err != nil || out["replayed"] != true || out["writeAttempted"] != false || out["status"] != string(StatusCommitted) {
					t.Fatalf("replay: %v, %v", out, err)
				}
				return
			}
			var f *failure.Error
			if !errors.As(err, &f) || f.Code != tt.code {
				t.Fatalf("got %v, want %s", err, tt.code)
			}
			if got := f.Details["revalidateRequired"] == true; got != tt.recheck {
				t.Fatalf("revalidateRequired %v, want %v (%+v)", got, tt.recheck, f)
			}
		})
	}
	if tg.value != "b" {
		t.Fatalf("the target is %q after the restart, want the committed %q", tg.value, "b")
	}
}
