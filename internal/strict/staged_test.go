package strict

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
)

// fakeStore is a kernel of named objects that counts every write it gets.
type fakeStore struct {
	objects map[string]int // object id → times created
	writes  int
	// fault, when set, decides a stage's dispatch: "lost-after" applies it
	// and loses the reply, "lost-before" loses the request, "reject"
	// refuses it.
	fault map[string]string
}

func newFakeStore() *fakeStore {
	return &fakeStore{objects: map[string]int{}, fault: map[string]string{}}
}

// stagedOp creates a block, a database and two columns, each with an id
// reserved up front; "database" is Redo (creating it twice makes one).
func stagedOp(fs *fakeStore) Op {
	stage := func(name, idKey string, redo bool) Stage {
		return Stage{Name: name, Redo: redo,
			Do: func(_ context.Context, ids map[string]string) (map[string]string, error) {
				fs.writes++
				switch fs.fault[name] {
				case "lost-before":
					delete(fs.fault, name)
					return nil, errors.New("connection reset")
				case "reject":
					delete(fs.fault, name)
					return nil, Reject(errors.New("refused"))
				}
				if !(redo && fs.objects[ids[idKey]] > 0) {
					fs.objects[ids[idKey]]++
				}
				if fs.fault[name] == "lost-after" {
					delete(fs.fault, name)
					return nil, errors.New("reply lost")
				}
				return nil, nil
			},
			Present: func(_ context.Context, ids map[string]string) (bool, error) { return fs.objects[ids[idKey]] > 0, nil },
		}
	}
	n := 0
	return Op{
		Tool: "av", Action: "create", Policy: WritePolicy{Class: Additive},
		Business: map[string]any{"action": "create", "name": "Tasks"}, Targets: []string{"doc1"},
		Plan: &Plan{
			Reserve: func(any) (map[string]string, error) {
				n++
				return map[string]string{"block": fmt.Sprintf("blk-%d", n), "av": fmt.Sprintf("av-%d", n), "key0": fmt.Sprintf("k0-%d", n), "key1": fmt.Sprintf("k1-%d", n)}, nil
			},
			Stages: []Stage{stage("block", "block", false), stage("database", "av", true), stage("column:0", "key0", false), stage("column:1", "key1", false)},
			Receipt: func(ids map[string]string, done []string) map[string]any {
				return map[string]any{"avID": ids["av"], "blockID": ids["block"], "stage": strings.Join(done, ",")}
			},
		},
		Readback: func(context.Context, map[string]any) (any, error) {
			return map[string]any{"objects": len(fs.objects)}, nil
		},
	}
}

func commitStaged(t *testing.T, c *Coordinator, op Op) (string, map[string]any, error) {
	t.Helper()
	pre := op
	pre.ValidateOnly = true
	out, err := fields(c.Do(context.Background(), pre))
	if err != nil {
		t.Fatal(err)
	}
	op.RequestID = out["requestId"].(string)
	res, err := fields(c.Do(context.Background(), op))
	return op.RequestID, res, err
}

func receiptOf(t *testing.T, err error) map[string]any {
	t.Helper()
	var f *failure.Error
	if !errors.As(err, &f) {
		t.Fatalf("not a failure: %v", err)
	}
	r, _ := f.Details["receipt"].(map[string]any)
	return r
}

func TestStagedCreationCommitsAndReplays(t *testing.T) {
	c, l := newCoord(t, false)
	fs := newFakeStore()
	op := stagedOp(fs)
	id, out, err := commitStaged(t, c, op)
	if err != nil {
		t.Fatal(err)
	}
	if out["status"] != "committed" || out["avID"] != "av-1" || !slices.Equal(out["stages"].([]string), []string{"block", "database", "column:0", "column:1"}) {
		t.Fatalf("answer %v", out)
	}
	rec, _, _ := l.Get(context.Background(), rid(id))
	if rec.Status != StatusCommitted || rec.Creation == nil || rec.Creation.IDs["key1"] != "k1-1" || len(rec.Creation.Done) != 4 || rec.Creation.Pending != "" {
		t.Fatalf("record %+v", rec)
	}
	writes := fs.writes
	op.RequestID = id
	again, err := fields(c.Do(context.Background(), op))
	if err != nil || again["replayed"] != true || again["avID"] != "av-1" || fs.writes != writes {
		t.Fatalf("replay %v, %v (writes %d → %d)", again, err, writes, fs.writes)
	}
}

// TestStagedCreationCrashPoints: a process dies at each point of a
// creation; a new process on the same ledger replays the request id. It
// finishes what is safe to finish and never creates an object twice.
func TestStagedCreationCrashPoints(t *testing.T) {
	stages := []string{"block", "database", "column:0", "column:1"}
	cases := []struct {
		name string
		// done stages confirmed before the crash; pending is the stage
		// in doubt ("" none: the crash came between stages) and applied
		// whether the kernel got it.
		done    int
		pending bool
		applied bool
		want    failure.Code // "" committed
		inDoubt string
	}{
		{name: "after executing, before the first stage", done: 0},
		{name: "block sent and applied", done: 0, pending: true, applied: true},
		{name: "block sent, not applied: never sent again", done: 0, pending: true, want: failure.OutcomeUnknown, inDoubt: "block"},
		{name: "between block and database", done: 1},
		{name: "database sent, not applied: Redo", done: 1, pending: true},
		{name: "database sent and applied", done: 1, pending: true, applied: true},
		{name: "between database and columns", done: 2},
		{name: "column sent and applied", done: 2, pending: true, applied: true},
		{name: "column sent, not applied: never sent again", done: 2, pending: true, want: failure.OutcomeUnknown, inDoubt: "column:0"},
		{name: "last column sent and applied", done: 3, pending: true, applied: true},
		{name: "all stages done, before Finish", done: 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), LedgerFile)
			l, err := OpenLedger(path, WithLedgerLogger(quiet))
			if err != nil {
				t.Fatal(err)
			}
			fs := newFakeStore()
			op := stagedOp(fs)
			c := NewCoordinator(CoordinatorConfig{Ledger: l})
			pre := op
			pre.ValidateOnly = true
			out, err := fields(c.Do(ctx, pre))
			if err != nil {
				t.Fatal(err)
			}
			id := rid(out["requestId"].(string))
			// The first process: executing with the reserved ids, then
			// the stages up to the crash, as runStages records them.
			scope, _ := c.scope(op)
			ids, _ := op.Plan.Reserve(nil)
			if _, err := l.BeginCreation(ctx, id, scope, ids); err != nil {
				t.Fatal(err)
			}
			key := map[string]string{"block": "block", "database": "av", "column:0": "key0", "column:1": "key1"}
			for _, s := range stages[:tc.done] {
				fs.objects[ids[key[s]]]++
				if _, err := l.Stage(ctx, id, StageMark{Stage: s, Kind: StagePending}); err != nil {
					t.Fatal(err)
				}
				if _, err := l.Stage(ctx, id, StageMark{Stage: s, Kind: StageDone}); err != nil {
					t.Fatal(err)
				}
			}
			if tc.pending {
				s := stages[tc.done]
				if _, err := l.Stage(ctx, id, StageMark{Stage: s, Kind: StagePending}); err != nil {
					t.Fatal(err)
				}
				if tc.applied {
					fs.objects[ids[key[s]]]++
				}
			}
			l.Close()

			// The restarted process: a new ledger handle and coordinator
			// (no lease), the same request replayed.
			l2, err := OpenLedger(path, WithLedgerLogger(quiet))
			if err != nil {
				t.Fatal(err)
			}
			defer l2.Close()
			c2 := NewCoordinator(CoordinatorConfig{Ledger: l2})
			op.RequestID = string(id)
			res, err := fields(c2.Do(ctx, op))
			for obj, n := range fs.objects {
				if n != 1 {
					t.Fatalf("object %s created %d times", obj, n)
				}
			}
			if tc.want != "" {
				if code(err) != tc.want {
					t.Fatalf("got %v, %v; want %s", res, err, tc.want)
				}
				r := receiptOf(t, err)
				if r["avID"] != ids["av"] || r["inDoubt"] != tc.inDoubt || len(r["stages"].([]string)) != tc.done {
					t.Fatalf("receipt so far %v", r)
				}
				// Asking again changes nothing: still in doubt, nothing sent.
				w := fs.writes
				if _, err := fields(c2.Do(ctx, op)); code(err) != tc.want || fs.writes != w {
					t.Fatalf("second replay: %v (writes %d → %d)", err, w, fs.writes)
				}
				return
			}
			if err != nil || res["status"] != "committed" || res["avID"] != ids["av"] {
				t.Fatalf("resume: %v, %v", res, err)
			}
			if len(fs.objects) != 4 {
				t.Fatalf("objects %v", fs.objects)
			}
			w := fs.writes
			if again, err := fields(c2.Do(ctx, op)); err != nil || again["replayed"] != true || fs.writes != w {
				t.Fatalf("replay after resume: %v, %v", again, err)
			}
		})
	}
}

// TestStagedCreationDispatchFaults: faults of one process's dispatches,
// then a replay in the same process.
func TestStagedCreationDispatchFaults(t *testing.T) {
	cases := []struct {
		stage, fault string
		first        failure.Code
		replay       failure.Code // "" committed
		attempted    bool
	}{
		{"block", "reject", failure.Rejected, failure.Rejected, true},
		{"column:0", "reject", failure.Rejected, "", true},
		{"database", "lost-before", failure.OutcomeUnknown, "", true},
		{"database", "lost-after", failure.OutcomeUnknown, "", true},
		{"column:1", "lost-after", failure.OutcomeUnknown, "", true},
		{"column:1", "lost-before", failure.OutcomeUnknown, failure.OutcomeUnknown, true},
		{"block", "lost-after", failure.OutcomeUnknown, "", true},
	}
	for _, tc := range cases {
		t.Run(tc.stage+"/"+tc.fault, func(t *testing.T) {
			c, _ := newCoord(t, false)
			fs := newFakeStore()
			fs.fault[tc.stage] = tc.fault
			op := stagedOp(fs)
			id, _, err := commitStaged(t, c, op)
			var f *failure.Error
			if !errors.As(err, &f) || f.Code != tc.first || attempted(f) != tc.attempted || f.RequestID != id {
				t.Fatalf("first: %v", err)
			}
			op.RequestID = id
			res, err := fields(c.Do(context.Background(), op))
			if tc.replay != "" {
				if code(err) != tc.replay {
					t.Fatalf("replay: %v, %v", res, err)
				}
			} else if err != nil || res["status"] != "committed" {
				t.Fatalf("replay: %v, %v", res, err)
			}
			for obj, n := range fs.objects {
				if n != 1 {
					t.Fatalf("object %s created %d times", obj, n)
				}
			}
		})
	}
}

func TestStagedCreationStrictOffRunsOnce(t *testing.T) {
	c, _ := newCoord(t, true)
	fs := newFakeStore()
	out, err := fields(c.Do(context.Background(), stagedOp(fs)))
	if err != nil || out["writeSafetyGuaranteed"] != false || len(fs.objects) != 4 || fs.writes != 4 {
		t.Fatalf("%v, %v, %v", out, err, fs.objects)
	}
}

func TestLedgerStageTransitions(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	l := openLedger(t, filepath.Join(t.TempDir(), LedgerFile), clk)
	defer l.Close()
	scope := NewScope("av", "create", argsA, []string{"doc"})
	issued, _ := l.Issue(ctx, testRecord(scope))
	id := rid(issued.RequestID)
	if _, err := l.Stage(ctx, id, StageMark{Stage: "a", Kind: StagePending}); !errors.Is(err, ErrBadTransition) {
		t.Fatalf("stage before begin: %v", err)
	}
	big := map[string]string{}
	for i := range MaxCreationIDs + 1 {
		big[fmt.Sprint(i)] = "x"
	}
	if _, err := l.BeginCreation(ctx, id, scope, big); !errors.Is(err, ErrCreationTooLarge) {
		t.Fatalf("too many ids: %v", err)
	}
	if _, err := l.BeginCreation(ctx, id, scope, map[string]string{"av": "a1"}); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		m    StageMark
		fail bool
	}{
		{StageMark{Stage: "a", Kind: StageDone}, true}, // not pending
		{StageMark{Stage: "a", Kind: StagePending}, false},
		{StageMark{Stage: "b", Kind: StagePending}, true}, // a still pending
		{StageMark{Stage: "a", Kind: StageDone, Learned: map[string]string{"av": "other"}}, true},
		{StageMark{Stage: "a", Kind: StageDone, Learned: map[string]string{"blk": "b1"}, Receipt: []byte(`{ "x": 1 }`)}, false},
		{StageMark{Stage: "a", Kind: StagePending}, true}, // done already
		{StageMark{Stage: "b", Kind: StagePending, Receipt: []byte(`{"big":"` + strings.Repeat("x", MaxCreationSize) + `"}`)}, true},
		{StageMark{Stage: "b", Kind: StagePending}, false},
		{StageMark{Stage: "b", Kind: StageCleared}, false},
	}
	for i, s := range steps {
		_, err := l.Stage(ctx, id, s.m)
		if (err != nil) != s.fail {
			t.Fatalf("step %d %+v: %v", i, s.m, err)
		}
	}
	rec, _, err := l.Get(ctx, id)
	if err != nil || !slices.Equal(rec.Creation.Done, []string{"a"}) || rec.Creation.Pending != "" || rec.Creation.IDs["blk"] != "b1" || string(rec.Creation.Receipt) != `{"x":1}` {
		t.Fatalf("record %+v, %v", rec.Creation, err)
	}
	// A cap refusal is an answer, not a storage failure: the ledger works.
	if _, err := l.Stage(ctx, id, StageMark{Stage: "b", Kind: StagePending}); err != nil {
		t.Fatalf("ledger after a refused mark: %v", err)
	}
}

// TestPartHashesAreAliases: a write's per-object hashes are kept whole in
// the ledger and answered, also on replay, as aliases from the one pool.
func TestPartHashesAreAliases(t *testing.T) {
	c, l := newCoord(t, false)
	tg := &fakeTarget{"a"}
	op := guardedOp(tg, "b", nil)
	op.Readback = func(context.Context, map[string]any) (any, error) {
		return map[string]any{"value": tg.value}, nil
	}
	op.Execute = func(context.Context, any) (map[string]any, error) {
		tg.value = "b"
		return map[string]any{PartHashesKey: map[string]any{
			"db1": map[string]any{"previousHash": prevHash, "resultHash": resultHash},
			"db2": map[string]any{"previousHash": resultHash, "resultHash": "not a digest"},
		}}, nil
	}
	pre := op
	pre.ValidateOnly = true
	out, err := fields(c.Do(context.Background(), pre))
	if err != nil {
		t.Fatal(err)
	}
	op.RequestID, op.Credential = out["requestId"].(string), out["expectedStateHash"].(string)
	res, err := fields(c.Do(context.Background(), op))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"db1": map[string]any{"previousHash": c.Aliases().Alias(prevHash), "resultHash": c.Aliases().Alias(resultHash)},
		"db2": map[string]any{"previousHash": c.Aliases().Alias(resultHash)}}
	if fmt.Sprint(res[PartHashesKey]) != fmt.Sprint(want) {
		t.Fatalf("hashes %v, want %v", res[PartHashesKey], want)
	}
	rec, _, _ := l.Get(context.Background(), rid(op.RequestID))
	if !strings.Contains(string(rec.Receipt), prevHash) {
		t.Fatalf("the ledger keeps %s", rec.Receipt)
	}
	rep, err := fields(c.Do(context.Background(), op))
	if err != nil || fmt.Sprint(rep[PartHashesKey]) != fmt.Sprint(want) {
		t.Fatalf("replay %v, %v", rep, err)
	}
}

// TestStagedCreationGateRefusal: a plan whose gate refuses marks nothing
// and sends nothing; the request can still run once the gate allows it.
func TestStagedCreationGateRefusal(t *testing.T) {
	c, l := newCoord(t, false)
	fs := newFakeStore()
	op := stagedOp(fs)
	refused := true
	op.Plan.Gate = func() error {
		if refused {
			return failure.New(failure.PermissionDenied, "no").Attempted(false)
		}
		return nil
	}
	id, _, err := commitStaged(t, c, op)
	if code(err) != failure.PermissionDenied || fs.writes != 0 {
		t.Fatalf("refused: %v, %d writes", err, fs.writes)
	}
	rec, _, _ := l.Get(context.Background(), rid(id))
	if rec.Creation == nil || rec.Creation.Pending != "" || len(rec.Creation.Done) != 0 {
		t.Fatalf("record %+v", rec.Creation)
	}
	refused = false
	op.RequestID = id
	if res, err := fields(c.Do(context.Background(), op)); err != nil || res["status"] != "committed" || len(fs.objects) != 4 {
		t.Fatalf("after the gate allows it: %v, %v", res, err)
	}
}
