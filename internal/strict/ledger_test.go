package strict

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/sisyphus-go/sisyphus/internal/canon"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func openLedger(t *testing.T, path string, clk *clock, opts ...LedgerOption) *Ledger {
	t.Helper()
	opts = append([]LedgerOption{WithLedgerClock(clk.Now), WithLedgerLogger(quiet)}, opts...)
	l, err := OpenLedger(path, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func testRecord(scope Scope) Record {
	return Record{Tool: scope.Tool, Action: scope.Action, ArgsDigest: scope.ArgsDigest, Targets: scope.Targets, Precondition: ExpectedStateHash}
}

var (
	prevHash   = canon.DigestBytes([]byte("before"))
	resultHash = canon.DigestBytes([]byte("after"))
	blockScope = NewScope("block", "update", argsA, []string{"20260812120000-bbbbbbb", "20260812120000-abcdefg"})
)

func TestLedgerLifecycleAndReplayAcrossRestart(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	path := filepath.Join(t.TempDir(), "state", LedgerFile)
	l := openLedger(t, path, clk)

	issued, err := l.Issue(ctx, testRecord(blockScope))
	if err != nil {
		t.Fatal(err)
	}
	if len(issued.RequestID) < MinRequestIDLen || issued.Status != StatusIssued || !issued.IssuedAt.Equal(clk.Now()) ||
		!slices.Equal(issued.Targets, []string{"20260812120000-abcdefg", "20260812120000-bbbbbbb"}) {
		t.Fatalf("issued %+v", issued)
	}
	if !issued.ExpiresAt().Equal(clk.Now().Add(RequestIDTTL)) {
		t.Fatalf("ExpiresAt %v", issued.ExpiresAt())
	}
	id := issued.RequestID

	clk.Advance(9 * time.Minute)
	rec, err := l.Begin(ctx, rid(strings.ToUpper(id)), blockScope)
	if err != nil || rec.Status != StatusExecuting || !rec.StartedAt.Equal(clk.Now()) {
		t.Fatalf("Begin = %+v, %v", rec, err)
	}
	receipt := json.RawMessage(`{ "success": true, "id": "20260812120000-abcdefg", "targetCount": 2 }`)
	clk.Advance(time.Second)
	fin, err := l.Finish(ctx, rid(id), StatusCommitted, prevHash, resultHash, receipt)
	if err != nil || fin.Status != StatusCommitted || string(fin.Receipt) != `{"success":true,"id":"20260812120000-abcdefg","targetCount":2}` {
		t.Fatalf("Finish = %+v, %v", fin, err)
	}

	// A second, still executing request, and a third only issued.
	second, _ := l.Issue(ctx, testRecord(blockScope))
	if _, err := l.Begin(ctx, rid(second.RequestID), blockScope); err != nil {
		t.Fatal(err)
	}
	third, _ := l.Issue(ctx, testRecord(blockScope))
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	// Restart: the executed records are all there; the request only issued
	// went with the process, as its lease did, and its id stays reserved.
	clk.Advance(time.Second)
	l = openLedger(t, path, clk)
	defer l.Close()
	tests := []struct {
		name   string
		id     string
		err    error
		status Status
	}{
		{"finished replays", id, ErrReplay, StatusCommitted},
		{"replays again", id, ErrReplay, StatusCommitted},
		{"executing stays unknown", second.RequestID, ErrAlreadyExecuting, StatusExecuting},
		{"and never runs again", second.RequestID, ErrAlreadyExecuting, StatusExecuting},
		{"issued before the restart cannot begin", third.RequestID, ErrRequestExpired, ""},
	}
	for _, tt := range tests {
		got, err := l.Begin(ctx, rid(tt.id), blockScope)
		if !errors.Is(err, tt.err) || got.Status != tt.status {
			t.Errorf("%s: Begin = %+v, %v; want %s, %v", tt.name, got, err, tt.status, tt.err)
		}
	}
	got, err := l.Begin(ctx, rid(id), blockScope)
	if !errors.Is(err, ErrReplay) || got.PreviousHash != prevHash || got.ResultHash != resultHash ||
		string(got.Receipt) != string(fin.Receipt) || !got.FinishedAt.Equal(fin.FinishedAt) {
		t.Fatalf("replay record %+v, %v", got, err)
	}
	if r, ok, err := l.Get(ctx, rid(id)); err != nil || !ok || r.Status != StatusCommitted {
		t.Fatalf("Get = %+v, %v, %v", r, ok, err)
	}
	if _, ok, err := l.Get(ctx, rid("ffff0000")); ok || err != nil {
		t.Fatalf("Get(unknown) = %v, %v", ok, err)
	}
	iss, _ := NewIDIssuer(l.DB())
	if _, ok, err := iss.Issued(ctx, third.RequestID); !ok || err != nil {
		t.Fatalf("the issued id's reservation: %v, %v", ok, err)
	}
	if _, ok, err := l.Get(ctx, rid(third.RequestID)); ok || err != nil {
		t.Fatalf("Get(issued before the restart) = %v, %v", ok, err)
	}
}

func TestLedgerBeginRefusals(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	l := openLedger(t, filepath.Join(t.TempDir(), LedgerFile), clk)
	defer l.Close()

	t0 := clk.Now()
	issueAt := func(at time.Time) string {
		rec := testRecord(blockScope)
		rec.IssuedAt = at
		r, err := l.Issue(ctx, rec)
		if err != nil {
			t.Fatal(err)
		}
		return r.RequestID
	}
	finished := issueAt(t0)
	if _, err := l.Begin(ctx, rid(finished), blockScope); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Finish(ctx, rid(finished), StatusNoChange, prevHash, prevHash, nil); err != nil {
		t.Fatal(err)
	}
	fresh := issueAt(t0)
	old := issueAt(t0.Add(-RequestIDTTL))                                   // its window closes exactly now
	pruned := issueAt(t0.Add(-2 * RequestIDTTL))                            // closed ten minutes ago...
	if n, err := l.Prune(ctx, t0.Add(-time.Minute)); err != nil || n != 1 { // ...and is pruned
		t.Fatalf("Prune = %d, %v", n, err)
	}

	iss, err := NewIDIssuer(l.DB())
	if err != nil {
		t.Fatal(err)
	}
	reservedOnly, err := iss.Issue(ctx) // reserved, no record: expired rather than unknown
	if err != nil {
		t.Fatal(err)
	}

	other := func(mut func(*Scope)) Scope {
		s := NewScope(blockScope.Tool, blockScope.Action, blockScope.ArgsDigest, blockScope.Targets)
		mut(&s)
		return s
	}
	tests := []struct {
		name  string
		id    string
		scope Scope
		err   error
	}{
		{"never issued", "abcdef0123", blockScope, ErrUnknownRequest},
		{"malformed", "not-an-id", blockScope, ErrUnknownRequest},
		{"empty", "", blockScope, ErrUnknownRequest},
		{"other args", fresh, other(func(s *Scope) { s.ArgsDigest = canon.DigestBytes([]byte("x")) }), ErrIdempotencyConflict},
		{"other tool", fresh, other(func(s *Scope) { s.Tool = "document" }), ErrIdempotencyConflict},
		{"other action", fresh, other(func(s *Scope) { s.Action = "delete" }), ErrIdempotencyConflict},
		{"other targets", fresh, other(func(s *Scope) { s.Targets = s.Targets[:1] }), ErrIdempotencyConflict},
		{"finished with other args", finished, other(func(s *Scope) { s.Action = "delete" }), ErrIdempotencyConflict},
		{"past the window", old, blockScope, ErrRequestExpired},
		{"pruned", pruned, blockScope, ErrRequestExpired},
		{"reserved without record", reservedOnly, blockScope, ErrRequestExpired},
		{"finished replays", finished, blockScope, ErrReplay},
		{"targets reordered is the same call", fresh, other(func(s *Scope) { slices.Reverse(s.Targets) }), nil},
		{"then it is executing", fresh, blockScope, ErrAlreadyExecuting},
	}
	for _, tt := range tests {
		// Check answers as Begin does, without starting anything.
		crec, cerr := l.Check(ctx, rid(tt.id), tt.scope)
		if tt.err == nil && (cerr != nil || crec.Status != StatusIssued) || tt.err != nil && !errors.Is(cerr, tt.err) {
			t.Errorf("%s: Check = %+v, %v; want %v", tt.name, crec, cerr, tt.err)
		}
		rec, err := l.Begin(ctx, rid(tt.id), tt.scope)
		if tt.err == nil {
			if err != nil || rec.Status != StatusExecuting {
				t.Errorf("%s: Begin = %+v, %v", tt.name, rec, err)
			}
			continue
		}
		if !errors.Is(err, tt.err) {
			t.Errorf("%s: Begin = %+v, %v; want %v", tt.name, rec, err, tt.err)
		}
		if errors.Is(err, ErrLedgerUnavailable) {
			t.Fatalf("%s: a refusal latched the ledger: %v", tt.name, err)
		}
	}
	// Refusals do not break the ledger.
	if _, err := l.Issue(ctx, testRecord(blockScope)); err != nil {
		t.Fatalf("ledger unusable after refusals: %v", err)
	}
}

func TestLedgerIssueAndFinishValidation(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	l := openLedger(t, filepath.Join(t.TempDir(), LedgerFile), clk)
	defer l.Close()

	iss, err := NewIDIssuer(l.DB())
	if err != nil {
		t.Fatal(err)
	}
	reserved, err := iss.Issue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rec := testRecord(blockScope)
	rec.RequestID = strings.ToUpper(reserved)
	got, err := l.Issue(ctx, rec)
	if err != nil || got.RequestID != reserved {
		t.Fatalf("Issue with a reserved id = %+v, %v", got, err)
	}
	issueTests := []struct {
		name string
		mut  func(*Record)
		err  error
	}{
		{"twice", func(r *Record) { r.RequestID = reserved }, ErrRequestExists},
		{"unreserved id", func(r *Record) { r.RequestID = "0123456789abcdef" }, ErrUnknownRequest},
		{"malformed id", func(r *Record) { r.RequestID = "xyz" }, ErrMalformedRequestID},
		{"no tool", func(r *Record) { r.Tool = "" }, nil},
		{"no action", func(r *Record) { r.Action = "" }, nil},
		{"args not a digest", func(r *Record) { r.ArgsDigest = "8ac2" }, canon.ErrMalformedDigest},
	}
	for _, tt := range issueTests {
		r := testRecord(blockScope)
		tt.mut(&r)
		_, err := l.Issue(ctx, r)
		if err == nil || tt.err != nil && !errors.Is(err, tt.err) {
			t.Errorf("Issue %s: %v, want %v", tt.name, err, tt.err)
		}
	}

	if _, err := l.Begin(ctx, rid(reserved), blockScope); err != nil {
		t.Fatal(err)
	}
	finishTests := []struct {
		name          string
		id            string
		status        Status
		prev, result  string
		receipt       json.RawMessage
		err           error
		stillExecutes bool
	}{
		{"status executing", reserved, StatusExecuting, "", "", nil, nil, true},
		{"status issued", reserved, StatusIssued, "", "", nil, nil, true},
		{"short hash", reserved, StatusCommitted, "8ac2", resultHash, nil, nil, true},
		{"receipt too large", reserved, StatusCommitted, prevHash, resultHash, json.RawMessage(`"` + strings.Repeat("x", MaxReceiptSize) + `"`), ErrReceiptTooLarge, true},
		{"receipt not JSON", reserved, StatusCommitted, prevHash, resultHash, json.RawMessage(`{oops`), ErrReceiptTooLarge, true},
		{"unknown id", "beefbeef", StatusCommitted, prevHash, resultHash, nil, ErrUnknownRequest, true},
		{"ok, additive without previous hash", reserved, StatusCommitted, "", resultHash, json.RawMessage(`{"id":"20260812120000-new0001"}`), nil, false},
		{"twice", reserved, StatusCommitted, "", resultHash, nil, ErrBadTransition, false},
	}
	for _, tt := range finishTests {
		_, err := l.Finish(ctx, rid(tt.id), tt.status, tt.prev, tt.result, tt.receipt)
		switch {
		case !tt.stillExecutes && tt.err == nil:
			if err != nil {
				t.Errorf("Finish %s: %v", tt.name, err)
			}
		case err == nil || tt.err != nil && !errors.Is(err, tt.err):
			t.Errorf("Finish %s: %v, want %v", tt.name, err, tt.err)
		}
		if r, _, _ := l.Get(ctx, rid(reserved)); (r.Status == StatusExecuting) != tt.stillExecutes {
			t.Errorf("after Finish %s: status %s", tt.name, r.Status)
		}
	}
	// A Finish on an issued (not begun) record is refused too.
	r2, _ := l.Issue(ctx, testRecord(blockScope))
	if _, err := l.Finish(ctx, rid(r2.RequestID), StatusCommitted, prevHash, resultHash, nil); !errors.Is(err, ErrBadTransition) {
		t.Errorf("Finish on issued: %v", err)
	}
}

func TestLedgerRecordsHoldNoContent(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	l := openLedger(t, filepath.Join(t.TempDir(), LedgerFile), clk)
	defer l.Close()
	r, _ := l.Issue(ctx, testRecord(blockScope))
	if _, err := l.Begin(ctx, rid(r.RequestID), blockScope); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Finish(ctx, rid(r.RequestID), StatusCommitted, prevHash, resultHash, json.RawMessage(`{"ok":true}`)); err != nil {
		t.Fatal(err)
	}
	var keys []string
	if err := l.DB().View(func(tx *bolt.Tx) error {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(tx.Bucket(ledgerBucket).Get([]byte(r.RequestID)), &m); err != nil {
			return err
		}
		for k := range m {
			keys = append(keys, k)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	want := []string{"action", "argsDigest", "finishedAt", "issuedAt", "precondition", "previousHash", "receipt",
		"requestId", "resultHash", "startedAt", "status", "targets", "tool"}
	if !slices.Equal(keys, want) {
		t.Fatalf("stored fields %v, want %v", keys, want)
	}
}

func TestLedgerPrune(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	l := openLedger(t, filepath.Join(t.TempDir(), LedgerFile), clk)
	defer l.Close()
	t0 := clk.Now()

	mk := func(status Status, at time.Time) string {
		rec := testRecord(blockScope)
		rec.IssuedAt = at
		r, err := l.Issue(ctx, rec)
		if err != nil {
			t.Fatal(err)
		}
		if status == StatusIssued {
			return r.RequestID
		}
		clk.t = at
		if _, err := l.Begin(ctx, rid(r.RequestID), blockScope); err != nil {
			t.Fatal(err)
		}
		if status.Finished() {
			if _, err := l.Finish(ctx, rid(r.RequestID), status, prevHash, resultHash, nil); err != nil {
				t.Fatal(err)
			}
		}
		return r.RequestID
	}
	now := t0.Add(30 * 24 * time.Hour)
	records := []struct {
		name   string
		id     string
		pruned bool
	}{
		{"issued 11 min ago", mk(StatusIssued, now.Add(-11*time.Minute)), true},
		{"issued exactly 10 min ago", mk(StatusIssued, now.Add(-RequestIDTTL)), true},
		{"issued 9 min ago", mk(StatusIssued, now.Add(-9*time.Minute)), false},
		{"committed 8 days ago", mk(StatusCommitted, now.Add(-8*24*time.Hour)), true},
		{"committed 6 days ago", mk(StatusCommitted, now.Add(-6*24*time.Hour)), false},
		{"no_change 7 days ago", mk(StatusNoChange, now.Add(-Retention)), true},
		{"failed 1 hour ago", mk(StatusFailedBeforeDispatch, now.Add(-time.Hour)), false},
		{"executing 8 days ago", mk(StatusExecuting, now.Add(-8*24*time.Hour)), true},
		{"executing 2 days ago", mk(StatusExecuting, now.Add(-48*time.Hour)), false},
	}
	n, err := l.Prune(ctx, now)
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	iss, _ := NewIDIssuer(l.DB())
	for _, r := range records {
		_, found, err := l.Get(ctx, rid(r.id))
		if err != nil || found == r.pruned {
			t.Errorf("%s: found = %v, %v; want pruned %v", r.name, found, err, r.pruned)
		}
		if r.pruned {
			want++
		}
		// The reservation outlives the record.
		if _, ok, err := iss.Issued(ctx, r.id); !ok || err != nil {
			t.Errorf("%s: reservation gone (%v)", r.name, err)
		}
	}
	if n != want {
		t.Fatalf("Prune = %d, want %d", n, want)
	}
	if n, err := l.Prune(ctx, now); err != nil || n != 0 {
		t.Fatalf("second Prune = %d, %v", n, err)
	}
}

func TestLedgerSecondProcessIsLockedOut(t *testing.T) {
	clk := newClock()
	path := filepath.Join(t.TempDir(), LedgerFile)
	l := openLedger(t, path, clk)
	defer l.Close()
	start := time.Now()
	_, err := OpenLedger(path, WithOpenTimeout(100*time.Millisecond), WithLedgerLogger(quiet))
	if !errors.Is(err, ErrLedgerLocked) || !strings.Contains(err.Error(), path) {
		t.Fatalf("second open: %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("second open did not time out")
	}
}

func TestLedgerBrokenFiles(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(garbage, []byte(strings.Repeat("not a bolt file ", 1000)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenLedger(garbage, WithLedgerLogger(quiet)); err == nil {
		t.Fatal("garbage file opened")
	}
	asDir := filepath.Join(dir, "isdir.db")
	if err := os.Mkdir(asDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenLedger(asDir, WithLedgerLogger(quiet)); err == nil {
		t.Fatal("directory opened as a ledger")
	}
	// A ledger from a future schema is refused, not rewritten.
	future := filepath.Join(dir, "future.db")
	db := openTestDB(t, future)
	if err := db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket(metaBucket)
		if err != nil {
			return err
		}
		return b.Put(schemaKey, []byte("99"))
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := OpenLedger(future, WithLedgerLogger(quiet)); err == nil || !strings.Contains(err.Error(), "schema") {
		t.Fatalf("future schema: %v", err)
	}
}

// A ledger whose file cannot be written fails closed: the failing write and
// every later call return ErrLedgerUnavailable.
func TestLedgerFailsClosed(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	path := filepath.Join(t.TempDir(), LedgerFile)
	l := openLedger(t, path, clk)
	done, err := l.Issue(ctx, testRecord(blockScope))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Begin(ctx, rid(done.RequestID), blockScope); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Finish(ctx, rid(done.RequestID), StatusCommitted, prevHash, resultHash, nil); err != nil {
		t.Fatal(err)
	}
	iss, _ := NewIDIssuer(l.DB())
	reserved, err := iss.Issue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	l.Close()

	// Reopen on a read-only descriptor (permissions alone do not stop root).
	readOnly := withOpenFile(func(name string, _ int, _ os.FileMode) (*os.File, error) {
		return os.OpenFile(name, os.O_RDONLY, 0)
	})
	l = openLedger(t, path, clk, readOnly)
	defer l.Close()
	if r, ok, err := l.Get(ctx, rid(done.RequestID)); err != nil || !ok || r.Status != StatusCommitted {
		t.Fatalf("read before the failure: %+v, %v, %v", r, ok, err)
	}
	// Issuing an id reserved before only reads; beginning it writes.
	rec := testRecord(blockScope)
	rec.RequestID = reserved
	if rec, err = l.Issue(ctx, rec); err != nil {
		t.Fatalf("Issue of a reserved id: %v", err)
	}
	if _, err := l.Begin(ctx, rid(rec.RequestID), blockScope); !errors.Is(err, ErrLedgerUnavailable) {
		t.Fatalf("Begin on a read-only file: %v", err)
	}
	calls := map[string]func() error{
		"Get":   func() error { _, _, err := l.Get(ctx, rid(rec.RequestID)); return err },
		"Issue": func() error { _, err := l.Issue(ctx, testRecord(blockScope)); return err },
		"Begin": func() error { _, err := l.Begin(ctx, rid(rec.RequestID), blockScope); return err },
		"Finish": func() error {
			_, err := l.Finish(ctx, rid(rec.RequestID), StatusCommitted, prevHash, resultHash, nil)
			return err
		},
		"Prune":    func() error { _, err := l.Prune(ctx, clk.Now()); return err },
		"Withdraw": func() error { return l.Withdraw(ctx, rid(rec.RequestID)) },
		"Check":    func() error { _, err := l.Check(ctx, rid(rec.RequestID), blockScope); return err },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, ErrLedgerUnavailable) {
			t.Errorf("%s after a storage failure: %v", name, err)
		}
	}

	// A closed ledger fails closed as well.
	l2 := openLedger(t, filepath.Join(t.TempDir(), LedgerFile), clk)
	if _, err := l2.Issue(ctx, testRecord(blockScope)); err != nil { // the pool holds ids now
		t.Fatal(err)
	}
	l2.Close()
	if _, err := l2.Issue(ctx, testRecord(blockScope)); !errors.Is(err, ErrLedgerUnavailable) {
		t.Fatalf("Issue on a closed ledger: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	l3 := openLedger(t, filepath.Join(t.TempDir(), LedgerFile), clk)
	defer l3.Close()
	if _, err := l3.Issue(cctx, testRecord(blockScope)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Issue with a cancelled context: %v", err)
	}
}

func TestLedgerConcurrentBegin(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	l := openLedger(t, filepath.Join(t.TempDir(), LedgerFile), clk)
	defer l.Close()
	l.DB().NoSync = true // concurrency is under test here, not durability

	const ids, racers = 20, 6
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		issued []string
	)
	for i := 0; i < ids; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := l.Issue(ctx, testRecord(blockScope))
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			issued = append(issued, r.RequestID)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if uniq := slices.Compact(slices.Sorted(slices.Values(issued))); len(uniq) != ids {
		t.Fatalf("%d unique ids of %d", len(uniq), ids)
	}
	for _, id := range issued {
		started := make(chan error, racers)
		for r := 0; r < racers; r++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := l.Begin(ctx, rid(id), blockScope)
				started <- err
			}()
		}
		wg.Wait()
		close(started)
		wins := 0
		for err := range started {
			switch {
			case err == nil:
				wins++
			case !errors.Is(err, ErrAlreadyExecuting):
				t.Errorf("%s: %v", id, err)
			}
		}
		if wins != 1 {
			t.Fatalf("%s began %d times", id, wins)
		}
	}
}

func TestLedgerRecent(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	l := openLedger(t, filepath.Join(t.TempDir(), LedgerFile), clk)

	if got, err := l.Recent(ctx, 5); err != nil || len(got) != 0 {
		t.Fatalf("empty ledger: %v %v", got, err)
	}
	// start issues and begins one request a second later than the last.
	start := func() RequestID {
		t.Helper()
		clk.Advance(time.Second)
		r, err := l.Issue(ctx, testRecord(blockScope))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Begin(ctx, rid(r.RequestID), blockScope); err != nil {
			t.Fatal(err)
		}
		return rid(r.RequestID)
	}
	committed, noChange, failed := start(), start(), start()
	executing := start() // left executing: outcome unknown
	for _, f := range []struct {
		id     RequestID
		status Status
	}{{committed, StatusCommitted}, {noChange, StatusNoChange}, {failed, StatusFailedBeforeDispatch}} {
		clk.Advance(time.Second)
		if _, err := l.Finish(ctx, f.id, f.status, prevHash, resultHash, json.RawMessage(`{"ok":true}`)); err != nil {
			t.Fatal(err)
		}
	}
	clk.Advance(time.Second)
	if _, err := l.Issue(ctx, testRecord(blockScope)); err != nil { // only issued: not an outcome
		t.Fatal(err)
	}
	// An unreadable record is skipped, and does not break the ledger.
	if err := l.DB().Update(func(tx *bolt.Tx) error { return tx.Bucket(ledgerBucket).Put([]byte("dead"), []byte("{not json")) }); err != nil {
		t.Fatal(err)
	}

	got, err := l.Recent(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	var ids []RequestID
	var statuses []Status
	for _, r := range got {
		ids = append(ids, RequestID(r.RequestID))
		statuses = append(statuses, r.Status)
	}
	// Finished last first, then the one left executing (it changed before
	// the three finished).
	wantIDs := []RequestID{failed, noChange, committed, executing}
	wantStatus := []Status{StatusFailedBeforeDispatch, StatusNoChange, StatusCommitted, StatusExecuting}
	if !slices.Equal(ids, wantIDs) || !slices.Equal(statuses, wantStatus) {
		t.Fatalf("Recent = %v %v, want %v %v", ids, statuses, wantIDs, wantStatus)
	}
	if got[0].PreviousHash != prevHash || got[0].ResultHash != resultHash || got[3].FinishedAt != (time.Time{}) {
		t.Fatalf("records as stored: %+v", got)
	}

	for n, want := range map[int]int{0: 0, -1: 0, 1: 1, 3: 3, 100: 4} {
		got, err := l.Recent(ctx, n)
		if err != nil || len(got) != want {
			t.Fatalf("Recent(%d) = %d records, %v; want %d", n, len(got), err, want)
		}
	}
	if got, _ := l.Recent(ctx, 2); got[0].RequestID != string(failed) || got[1].RequestID != string(noChange) {
		t.Fatalf("Recent(2) must keep the newest: %v", got)
	}

	// Recent only reads: the records keep their states, and the ledger is
	// still usable.
	if r, _, _ := l.Get(ctx, executing); r.Status != StatusExecuting {
		t.Fatalf("executing record after Recent: %+v", r)
	}
	if _, err := l.Issue(ctx, testRecord(blockScope)); err != nil {
		t.Fatalf("ledger after Recent: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := l.Recent(cctx, 3); !errors.Is(err, context.Canceled) {
		t.Fatalf("Recent on a cancelled context: %v", err)
	}
}

func TestLedgerWithdraw(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	l := openLedger(t, filepath.Join(t.TempDir(), LedgerFile), clk)
	defer l.Close()
	issue := func(t *testing.T) string {
		t.Helper()
		r, err := l.Issue(ctx, testRecord(blockScope))
		if err != nil {
			t.Fatal(err)
		}
		return r.RequestID
	}
	reserved := func(id string) (ok bool) {
		l.DB().View(func(tx *bolt.Tx) error { _, ok = reservedAt(tx, id); return nil })
		return ok
	}
	tests := []struct {
		name    string
		prepare func(t *testing.T, id string)
		want    error // nil: withdrawn
	}{
		{"issued is withdrawn, its id back in the pool", func(*testing.T, string) {}, nil},
		{"executing stays", func(t *testing.T, id string) {
			if _, err := l.Begin(ctx, rid(id), blockScope); err != nil {
				t.Fatal(err)
			}
		}, ErrBadTransition},
		{"committed stays", func(t *testing.T, id string) {
			if _, err := l.Begin(ctx, rid(id), blockScope); err != nil {
				t.Fatal(err)
			}
			if _, err := l.Finish(ctx, rid(id), StatusCommitted, prevHash, resultHash, nil); err != nil {
				t.Fatal(err)
			}
		}, ErrBadTransition},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := issue(t)
			tt.prepare(t, id)
			before, _, _ := l.Get(ctx, rid(id))
			err := l.Withdraw(ctx, rid(id))
			if !errors.Is(err, tt.want) {
				t.Fatalf("Withdraw: %v, want %v", err, tt.want)
			}
			after, found, _ := l.Get(ctx, rid(id))
			if tt.want == nil {
				if found || !reserved(id) {
					t.Fatalf("withdrawn %s: record %v, reserved %v", id, found, reserved(id))
				}
				if _, err := l.Begin(ctx, rid(id), blockScope); !errors.Is(err, ErrUnknownRequest) || !strings.Contains(err.Error(), id) {
					t.Fatalf("Begin after Withdraw: %v", err)
				}
				if err := l.Withdraw(ctx, rid(id)); !errors.Is(err, ErrUnknownRequest) {
					t.Fatalf("second Withdraw: %v", err)
				}
				// Never answered, so it is the next one handed out.
				if next := issue(t); next != id {
					t.Fatalf("next issued %s, want the withdrawn %s", next, id)
				}
				return
			}
			if !found || !reserved(id) || after.Status != before.Status {
				t.Fatalf("refused Withdraw changed %s: %+v → %+v (found %v)", id, before, after, found)
			}
		})
	}
	t.Run("unknown id", func(t *testing.T) {
		if err := l.Withdraw(ctx, rid("abcd")); !errors.Is(err, ErrUnknownRequest) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("closed ledger", func(t *testing.T) {
		id := issue(t)
		l.Close()
		if err := l.Withdraw(ctx, rid(id)); !errors.Is(err, ErrLedgerUnavailable) {
			t.Fatalf("got %v", err)
		}
	})
}
