package block

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/embedded"
	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

func testTools() []*tools.Tool { return []*tools.Tool{Tool()} }

// sfix is a strict fixture with this package's helpers.
type sfix struct{ *tooltest.Fixture }

func newStrictFixture(t *testing.T, strictOff bool) *sfix {
	return &sfix{tooltest.NewStrict(t, strictOff, testTools)}
}

func TestStrictUpdateFlow(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	id := s.Blocks[0]
	if err := s.C.SetBlockAttrs(ctx, id, map[string]string{"custom-keep": "me"}); err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"action": "update", "id": id, "data": "new **content**"}

	pre := s.OK(t, "block", tooltest.CopyArgs(args, "validateOnly", true))
	cred, _ := pre["expectedStateHash"].(string)
	if pre["validateOnly"] != true || pre["writeAttempted"] != false || pre["preconditionField"] != "expectedStateHash" ||
		len(cred) < 4 || pre["hashPrefixLength"].(float64) != float64(len(cred)) || pre["targetCount"].(float64) != 1 ||
		len(pre["requestId"].(string)) < 4 || pre["leaseExpiresAt"] == nil || pre["requestIdExpiresAt"] == nil {
		t.Fatalf("preflight: %v", pre)
	}
	if strings.Contains(s.Text(t, id), "new") {
		t.Fatal("preflight wrote")
	}

	// Commit without the control fields is refused before anything happens.
	s.WantErr(t, "block", args, failure.PreconditionRequired)
	s.WantErr(t, "block", tooltest.CopyArgs(args, "requestId", pre["requestId"]), failure.PreconditionRequired)
	s.WantErr(t, "block", tooltest.CopyArgs(args, "requestId", "ffffffff", "expectedStateHash", cred), failure.PreconditionRequired)
	s.WantErr(t, "block", tooltest.CopyArgs(args, "requestId", pre["requestId"], "expectedStateHash", tooltest.OtherCredential(cred)), failure.PreflightLeaseInvalid)
	s.WantErr(t, "block", tooltest.CopyArgs(args, "requestId", pre["requestId"], "expectedStateHash", "xyz!"), failure.PreconditionRequired)

	res := s.OK(t, "block", tooltest.CommitArgs(args, pre))
	if res["status"] != "committed" || res["replayed"] != false || res["writeAttempted"] != true ||
		res["writeSafetyGuaranteed"] != true || res["previousHash"] == nil || res["resultHash"] == nil ||
		res["previousHash"] == res["resultHash"] || res["targetCount"].(float64) != 1 || res["requestId"] != pre["requestId"] {
		t.Fatalf("commit: %v", res)
	}
	if _, leaked := res["_appliedText"]; leaked {
		t.Fatal("verification detail leaked into the answer")
	}
	if kd := s.Text(t, id); !strings.Contains(kd, "new **content**") || !strings.Contains(kd, `custom-keep="me"`) {
		t.Fatalf("after commit: %s", kd)
	}

	// A retry with the same requestId replays without executing.
	if err := s.C.SetBlockAttrs(ctx, id, map[string]string{"custom-drift": "x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.C.UpdateBlock(ctx, id, "markdown", "someone else wrote this"); err != nil {
		t.Fatal(err)
	}
	rep := s.OK(t, "block", tooltest.CommitArgs(args, pre))
	if rep["replayed"] != true || rep["writeAttempted"] != false || rep["status"] != "committed" || rep["resultHash"] != res["resultHash"] {
		t.Fatalf("replay: %v", rep)
	}
	if !strings.Contains(s.Text(t, id), "someone else") {
		t.Fatal("a replay executed the write again")
	}
	// The same id with other arguments conflicts.
	other := tooltest.CommitArgs(tooltest.CopyArgs(args, "data", "different"), pre)
	s.WantErr(t, "block", other, failure.IdempotencyConflict)
	// The lease was consumed: a second commit under a new id needs a new preflight.
	if e := s.WantErr(t, "block", tooltest.CopyArgs(args, "requestId", "abcd", "expectedStateHash", cred), failure.PreconditionRequired); e.WriteAttempted == nil || *e.WriteAttempted {
		t.Fatal("writeAttempted must be false")
	}
}

func TestStrictStateChanged(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	id := s.Blocks[1]
	for _, tt := range []struct {
		name  string
		drift func()
	}{
		{"content changed", func() { s.C.UpdateBlock(ctx, id, "markdown", "changed by the UI") }},
		{"attribute drift", func() { s.C.SetBlockAttrs(ctx, id, map[string]string{"custom-x": "y"}) }},
		{"inline mark changed", func() { s.C.UpdateBlock(ctx, id, "markdown", "changed by **the** UI") }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := map[string]any{"action": "update", "id": id, "data": "agent text"}
			pre := s.OK(t, "block", tooltest.CopyArgs(args, "validateOnly", true))
			before := s.Text(t, id)
			tt.drift()
			drifted := s.Text(t, id)
			e := s.WantErr(t, "block", tooltest.CommitArgs(args, pre), failure.StateChanged)
			if e.ExpectedHash != pre["expectedStateHash"] || e.CurrentHash == "" || e.CurrentHash == e.ExpectedHash || *e.WriteAttempted {
				t.Fatalf("state_changed details: %+v", e)
			}
			if s.Text(t, id) != drifted || drifted == before {
				t.Fatal("a state_changed call must write nothing")
			}
		})
	}
}

func TestStrictNoChangeAndBatch(t *testing.T) {
	s := newStrictFixture(t, false)
	id := s.Blocks[2]
	same := map[string]any{"action": "update", "id": id, "data": "paragraph 2"}
	pre := s.OK(t, "block", tooltest.CopyArgs(same, "validateOnly", true))
	res := s.OK(t, "block", tooltest.CommitArgs(same, pre))
	if res["status"] != "no_change" || res["previousHash"] != res["resultHash"] {
		t.Fatalf("no_change: %v", res)
	}
	var items []any
	for i := 0; i < 11; i++ {
		items = append(items, map[string]any{"id": s.Blocks[i], "data": fmt.Sprintf("batch %d", i)})
	}
	items = append(items, map[string]any{"id": s.Blocks[0], "data": "batch 0 again"})
	batch := map[string]any{"action": "update", "items": items}
	pre = s.OK(t, "block", tooltest.CopyArgs(batch, "validateOnly", true))
	if pre["targetCount"].(float64) != 11 {
		t.Fatalf("11 distinct blocks must count 11, got %v", pre["targetCount"])
	}
	res = s.OK(t, "block", tooltest.CommitArgs(batch, pre))
	if res["status"] != "committed" || res["targetCount"].(float64) != 11 {
		t.Fatalf("batch: %v", res)
	}
	if !strings.HasPrefix(s.Text(t, s.Blocks[0]), "batch 0 again") || !strings.HasPrefix(s.Text(t, s.Blocks[10]), "batch 10") {
		t.Fatal("batch not applied")
	}
}

func TestStrictAdditiveAppend(t *testing.T) {
	s := newStrictFixture(t, false)
	args := map[string]any{"action": "append", "parentID": s.Doc, "data": "appended once"}
	pre := s.OK(t, "block", tooltest.CopyArgs(args, "validateOnly", true))
	if _, hasHash := pre["preconditionField"]; hasHash || pre["requestId"] == nil {
		t.Fatalf("additive preflight: %v", pre)
	}
	s.WantErr(t, "block", args, failure.PreconditionRequired)
	res := s.OK(t, "block", tooltest.CommitArgs(args, pre))
	ids, _ := res["ids"].([]any)
	if res["status"] != "committed" || len(ids) != 1 {
		t.Fatalf("append: %v", res)
	}
	rep := s.OK(t, "block", tooltest.CommitArgs(args, pre))
	if rep["replayed"] != true || rep["id"] != res["id"] {
		t.Fatalf("replay: %v", rep)
	}
	if n := strings.Count(s.Text(t, s.Doc), "appended once"); n != 1 {
		t.Fatalf("appended %d times", n)
	}
}

func TestStrictOutcomeUnknownAndRejection(t *testing.T) {
	s := newStrictFixture(t, false)
	id := s.Blocks[3]
	s.K.Faults().Set(embedded.Fault{Endpoint: "/api/block/updateBlock", Kind: embedded.DropAfterApply})
	args := map[string]any{"action": "update", "id": id, "data": "reply lost"}
	pre := s.OK(t, "block", tooltest.CopyArgs(args, "validateOnly", true))
	e := s.WantErr(t, "block", tooltest.CommitArgs(args, pre), failure.OutcomeUnknown)
	if !*e.WriteAttempted || e.RequestID != pre["requestId"] {
		t.Fatalf("outcome_unknown details: %+v", e)
	}
	s.K.Faults().Clear()
	// Forever unknown, never executed again.
	s.WantErr(t, "block", tooltest.CommitArgs(args, pre), failure.OutcomeUnknown)
	if n := strings.Count(s.Text(t, id), "reply lost"); n != 1 {
		t.Fatalf("applied %d times", n)
	}
	// A definite refusal is not unknown: appending under a leaf is refused.
	bad := map[string]any{"action": "append", "parentID": s.Blocks[4], "data": "x"}
	pre = s.OK(t, "block", tooltest.CopyArgs(bad, "validateOnly", true))
	e = s.WantErr(t, "block", tooltest.CommitArgs(bad, pre), failure.Rejected)
	if !*e.WriteAttempted {
		t.Fatal("a rejected write was attempted")
	}
}

func TestStrictRestart(t *testing.T) {
	s := newStrictFixture(t, false)
	args := map[string]any{"action": "set_attrs", "id": s.Blocks[5], "attrs": map[string]any{"custom-a": "1"}}
	done := s.OK(t, "block", tooltest.CommitArgs(args, s.OK(t, "block", tooltest.CopyArgs(args, "validateOnly", true))))
	pending := map[string]any{"action": "set_attrs", "id": s.Blocks[6], "attrs": map[string]any{"custom-b": "2"}}
	pre := s.OK(t, "block", tooltest.CopyArgs(pending, "validateOnly", true))
	s.CloseLedger()
	s.Reopen(t, false)
	// Leases were in memory: gone.
	s.WantErr(t, "block", tooltest.CommitArgs(pending, pre), failure.PreflightLeaseInvalid)
	// The ledger was on disk: the committed request still replays.
	rep := s.OK(t, "block", tooltest.CommitArgs(args, map[string]any{"requestId": done["requestId"], "preconditionField": "expectedStateHash", "expectedStateHash": "ffff"}))
	if rep["replayed"] != true {
		t.Fatalf("replay after restart: %v", rep)
	}
}

func TestStrictOff(t *testing.T) {
	s := newStrictFixture(t, true)
	props := tooltest.Schema(t, s.R, "block")["properties"].(map[string]any)
	for _, f := range []string{"validateOnly", "requestId", "expectedStateHash"} {
		if _, ok := props[f]; ok {
			t.Errorf("strict off: schema still advertises %s", f)
		}
	}
	res := s.OK(t, "block", map[string]any{"action": "update", "id": s.Blocks[7], "data": "direct"})
	if res["writeSafetyGuaranteed"] != false || res["writeAttempted"] != true {
		t.Fatalf("direct write: %v", res)
	}
	for k := range res {
		if strings.HasPrefix(k, "_") {
			t.Fatalf("a private detail leaked into a direct write's answer: %v", res)
		}
	}
	s.WantErr(t, "block", map[string]any{"action": "update", "id": s.Blocks[7], "data": "x", "validateOnly": true}, failure.StrictModeDisabled)
}

func TestStrictRacingAgents(t *testing.T) {
	s := newStrictFixture(t, false)
	id := s.Blocks[8]
	const agents = 8
	var wg sync.WaitGroup
	start := make(chan struct{})
	type outcome struct {
		committed bool
		code      string
	}
	results := make([]outcome, agents)
	// All preflight the same state first.
	pres := make([]map[string]any, agents)
	argss := make([]map[string]any, agents)
	for i := range agents {
		argss[i] = map[string]any{"action": "update", "id": id, "data": fmt.Sprintf("agent %d", i)}
		pres[i] = s.OK(t, "block", tooltest.CopyArgs(argss[i], "validateOnly", true))
	}
	for i := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			raw, _ := json.Marshal(tooltest.CommitArgs(argss[i], pres[i]))
			_, err := s.R.Call(context.Background(), "block", raw)
			var te *failure.Error
			switch {
			case err == nil:
				results[i] = outcome{committed: true}
			case errors.As(err, &te):
				results[i] = outcome{code: string(te.Code)}
			default:
				results[i] = outcome{code: err.Error()}
			}
		}()
	}
	close(start)
	wg.Wait()
	won := 0
	for _, r := range results {
		switch {
		case r.committed:
			won++
		case r.code != string(failure.StateChanged):
			t.Errorf("a loser must see state_changed, got %s", r.code)
		}
	}
	if won != 1 {
		t.Fatalf("%d commits from one state, want exactly 1", won)
	}
}

// TestDelegate: a front without a coordinator hands every non-read call,
// control fields included, to its authority, and answers reads itself.
func TestDelegate(t *testing.T) {
	f := tooltest.New(t, testTools)
	var got []string
	r, err := tools.NewRegistry(&tools.Env{Kernel: f.C, DelegateStrict: true, Delegate: func(ctx context.Context, tool string, args json.RawMessage) (any, error) {
		got = append(got, tool+" "+string(args))
		if strings.Contains(string(args), "fail") {
			return nil, failure.New(failure.StateChanged, "remote said so").Attempted(false)
		}
		return map[string]any{"delegated": true}, nil
	}}, testTools()...)
	if err != nil {
		t.Fatal(err)
	}
	v, err := r.Call(context.Background(), "block", json.RawMessage(`{"action":"update","id":"`+f.Blocks[1]+`","data":"x","validateOnly":true}`))
	if err != nil || v.(map[string]any)["delegated"] != true {
		t.Fatalf("delegated write: %v %v", v, err)
	}
	if len(got) != 1 || !strings.Contains(got[0], `"validateOnly":true`) || !strings.HasPrefix(got[0], "block ") {
		t.Fatalf("delegate saw %v", got)
	}
	_, err = r.Call(context.Background(), "block", json.RawMessage(`{"action":"update","id":"`+f.Blocks[1]+`","data":"fail"}`))
	var te *failure.Error
	if !errors.As(err, &te) || te.Code != failure.StateChanged {
		t.Fatalf("remote failure: %v", err)
	}
	if _, err := r.Call(context.Background(), "block", json.RawMessage(`{"action":"get_kramdown","id":"`+f.Blocks[1]+`"}`)); err != nil || len(got) != 2 {
		t.Fatalf("a read must not be delegated: %v %v", err, got)
	}
	if _, ok := tooltest.Schema(t, r, "block")["properties"].(map[string]any)["validateOnly"]; !ok {
		t.Fatal("a strict front advertises the control fields")
	}
}

// TestAgentTextHidesKernelInternals: a readback that fails on the kernel's
// transport answers readback_mismatch in plain words, without the kernel's
// address or the transport's error text.
func TestAgentTextHidesKernelInternals(t *testing.T) {
	s := &sfix{tooltest.NewHooked(t, testTools)}
	args := map[string]any{"action": "update", "id": s.Blocks[0], "data": "changed"}
	pre := s.Preflight(t, "block", args, "expectedStateHash", 1)
	var wrote atomic.Bool
	s.Wrap(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if wrote.Load() && r.URL.Path == "/api/block/getBlockKramdown" {
				conn, _, err := w.(http.Hijacker).Hijack()
				if err == nil {
					conn.Close()
				}
				return
			}
			next.ServeHTTP(w, r)
			if r.URL.Path == "/api/block/updateBlock" {
				wrote.Store(true)
			}
		})
	})
	e := s.WantErr(t, "block", tooltest.CommitArgs(args, pre), failure.ReadbackMismatch)
	raw, _ := json.Marshal(e.Result())
	for _, leak := range []string{"127.0.0.1", "http://", "EOF", "connection"} {
		if strings.Contains(string(raw), leak) {
			t.Fatalf("the answer shows the kernel's internals (%q): %s", leak, raw)
		}
	}
	if !strings.Contains(e.Message, "SiYuan could not be reached") {
		t.Fatalf("the readback failure is not described: %s", e.Message)
	}
}

// TestLargeUpdatePreparesBeforeExecuting: everything CPU-heavy in a large
// update on a block with attributes happens before the ledger records
// executing, so what lies between the final comparison and the kernel
// receiving the write (the barrier, the ledger record, encoding the
// request) is small next to the kernel's own handling of it. It used to
// hold a quadratic parse there, which a crash turned into a permanent
// outcome_unknown for a write that never left. Compared as a ratio in one
// run, never as a time.
func TestLargeUpdatePreparesBeforeExecuting(t *testing.T) {
	s := newStrictFixture(t, false)
	var mu sync.Mutex
	var d strict.Dispatch
	s.CloseLedger()
	s.OnDispatch = func(x strict.Dispatch) { mu.Lock(); d = x; mu.Unlock() }
	s.Reopen(t, false)
	id := s.Blocks[0]
	attrs := map[string]any{"action": "set_attrs", "id": id, "attrs": map[string]any{"custom-tag": "1"}}
	s.OK(t, "block", tooltest.CommitArgs(attrs, s.OK(t, "block", tooltest.CopyArgs(attrs, "validateOnly", true))))
	var arrived atomic.Int64
	s.Wrap(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/api/block/updateBlock" {
				arrived.Store(time.Now().UnixNano())
			}
			next.ServeHTTP(w, r)
		})
	})
	data := strings.Repeat("lorem ipsum dolor sit amet, https://example.com/x www.example.org ", 2<<20/64)
	args := map[string]any{"action": "update", "id": id, "data": data}
	if res := s.OK(t, "block", tooltest.CommitArgs(args, s.OK(t, "block", tooltest.CopyArgs(args, "validateOnly", true)))); res["status"] != "committed" {
		t.Fatalf("commit: %v", res)
	}
	mu.Lock()
	defer mu.Unlock()
	at := time.Unix(0, arrived.Load())
	before, kernel := at.Sub(d.Checked), d.Returned.Sub(at)
	t.Logf("2 MiB update: %v from the final comparison to the kernel, %v in the kernel", before, kernel)
	if arrived.Load() == 0 || before > kernel {
		t.Fatalf("%v passed between the final comparison and the dispatch, more than the kernel's %v: heavy work runs after executing is recorded", before, kernel)
	}
}

// TestWriteSizeLimit: a write larger than the cap is refused at preflight
// (and at commit) before anything is read or written.
func TestWriteSizeLimit(t *testing.T) {
	s := newStrictFixture(t, false)
	big := strings.Repeat("x", tools.DefaultMaxWriteBytes)
	args := map[string]any{"action": "update", "id": s.Blocks[0], "data": big}
	for _, extra := range [][]any{{"validateOnly", true}, {"requestId", "abcd", "expectedStateHash", "abcd"}} {
		e := s.WantErr(t, "block", tooltest.CopyArgs(args, extra...), failure.InvalidArguments)
		if *e.WriteAttempted || e.Details["limit"] != tools.DefaultMaxWriteBytes || !strings.Contains(e.Message, "--max-write-size") {
			t.Fatalf("oversize write: %+v", e)
		}
	}
	if strings.Contains(s.Text(t, s.Blocks[0]), "xxx") {
		t.Fatal("an oversize write changed the block")
	}
}

// TestBatchUpdateIsOneKernelWrite: an items[] update is one batchUpdateBlock
// whatever the number of items; user attributes survive it, in a single
// block's IAL or restored after an item with an IAL of its own; a later item for the
// same block wins; an unknown block refuses the whole batch at preflight.
func TestBatchUpdateIsOneKernelWrite(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := t.Context()
	b0, b1, b2 := s.Blocks[0], s.Blocks[1], s.Blocks[2]
	for _, id := range []string{b0, b1} {
		if err := s.C.SetBlockAttrs(ctx, id, map[string]string{"custom-kept": "yes " + id}); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	writes := map[string]int{}
	s.SetHook(func(w http.ResponseWriter, r *http.Request) bool {
		if p := strings.ToLower(r.URL.Path); strings.Contains(p, "update") || strings.Contains(p, "setblockattrs") {
			mu.Lock()
			writes[r.URL.Path]++
			mu.Unlock()
		}
		return false
	})
	items := []any{
		map[string]any{"id": b0, "data": "first for b0"},
		map[string]any{"id": b1, "data": "b1 line one\n{: custom-own=\"1\"}"},
		map[string]any{"id": b2, "data": "b2 **bold**"},
		map[string]any{"id": b0, "data": "b0 wins"},
	}
	batch := map[string]any{"action": "update", "items": items}
	pre := s.OK(t, "block", tooltest.CopyArgs(batch, "validateOnly", true))
	clear(writes)
	res := s.OK(t, "block", tooltest.CommitArgs(batch, pre))
	if res["status"] != "committed" {
		t.Fatalf("batch: %v", res)
	}
	if writes["/api/block/batchUpdateBlock"] != 1 || writes["/api/block/updateBlock"] != 0 || writes["/api/attr/setBlockAttrs"] != 1 {
		t.Fatalf("kernel writes of the batch: %v (want one batchUpdateBlock and one attribute restore for the item with an IAL of its own)", writes)
	}
	for id, want := range map[string]string{b0: "b0 wins", b1: "b1 line one", b2: "b2 **bold**"} {
		if got := s.Text(t, id); !strings.HasPrefix(got, want) {
			t.Fatalf("block %s reads %q, want %q", id, got, want)
		}
	}
	for _, id := range []string{b0, b1} {
		a, err := s.C.GetBlockAttrs(ctx, id)
		if err != nil || a["custom-kept"] != "yes "+id {
			t.Fatalf("attributes of %s after the batch: %v %v", id, a, err)
		}
	}
	s.Replay(t, "block", batch, pre, res)

	bad := map[string]any{"action": "update", "items": []any{map[string]any{"id": b2, "data": "x"}, map[string]any{"id": "20200101000000-aaaaaaa", "data": "y"}}}
	s.WantErr(t, "block", tooltest.CopyArgs(bad, "validateOnly", true), failure.NotFound)
}

// TestUpdateWithSeveralBlocks: SiYuan's update of a block with several
// blocks keeps the first and drops the rest, so such an update is refused
// at preflight (a document's whole body may be several blocks).
func TestUpdateWithSeveralBlocks(t *testing.T) {
	s := newStrictFixture(t, false)
	before := s.Text(t, s.Doc)
	for _, args := range []map[string]any{
		{"action": "update", "id": s.Blocks[1], "data": "first of two\n\nsecond of two"},
		{"action": "update", "items": []any{map[string]any{"id": s.Blocks[2], "data": "one"}, map[string]any{"id": s.Blocks[1], "data": "a\n\nb"}}},
	} {
		e := s.WantErr(t, "block", tooltest.CopyArgs(args, "validateOnly", true), failure.InvalidArguments)
		if !strings.Contains(e.Message, "2 blocks") || e.RequestID != "" {
			t.Fatalf("refusal: %+v", e)
		}
	}
	if s.Text(t, s.Doc) != before {
		t.Fatal("a refused update wrote")
	}
	whole := map[string]any{"action": "update", "id": s.Doc, "data": "new first\n\nnew second"}
	pre := s.OK(t, "block", tooltest.CopyArgs(whole, "validateOnly", true))
	if res := s.OK(t, "block", tooltest.CommitArgs(whole, pre)); res["status"] != "committed" {
		t.Fatalf("a document's body of two blocks: %v", res)
	}
}

// TestStrictUpdateKernelCalls counts the kernel calls of one strict update:
// at preflight the block's content (kramdown, attributes) and, where the
// configuration needs it, its notebook; at commit the same, the update and
// the readback (kramdown, attributes, DOM). Nothing else reaches the kernel.
func TestStrictUpdateKernelCalls(t *testing.T) {
	s := newStrictFixture(t, false)
	var mu sync.Mutex
	calls := map[string]int{}
	s.SetHook(func(w http.ResponseWriter, r *http.Request) bool {
		mu.Lock()
		calls[r.URL.Path]++
		mu.Unlock()
		return false
	})
	count := func() (n int, got map[string]int) {
		mu.Lock()
		defer mu.Unlock()
		got = maps.Clone(calls)
		for _, c := range calls {
			n += c
		}
		clear(calls)
		return n, got
	}
	for _, c := range []struct {
		name              string
		policy            *tools.Policy
		preflight, commit int
	}{
		{"open configuration", &tools.Policy{Default: tools.LevelWrite, AllActions: true, Strict: true, Version: "open"}, 2, 5},
		{"notebook looked up", &tools.Policy{Default: tools.LevelRead, Notebooks: map[string]tools.Level{s.NB: tools.LevelWrite}, AllActions: true, Strict: true, Version: "nb"}, 3, 6},
	} {
		s.Policy = c.policy
		args := map[string]any{"action": "update", "id": s.Blocks[3], "data": "counted " + c.name}
		count()
		pre := s.OK(t, "block", tooltest.CopyArgs(args, "validateOnly", true))
		if n, got := count(); n != c.preflight {
			t.Errorf("%s: preflight made %d kernel calls, want %d: %v", c.name, n, c.preflight, got)
		}
		if res := s.OK(t, "block", tooltest.CommitArgs(args, pre)); res["status"] != "committed" {
			t.Fatalf("%s: %v", c.name, res)
		}
		if n, got := count(); n != c.commit {
			t.Errorf("%s: commit made %d kernel calls, want %d: %v", c.name, n, c.commit, got)
		}
	}
}

// TestStrictBatchUpdateKernelCalls counts what a strict items[] update of
// eleven blocks of one document asks of the kernel, endpoint by endpoint,
// with the gate looking up their notebook: the gate places them with one
// lookup and the indexes of the first one's document (not one lookup per
// block: SiYuan loads the document for each), the states come from the
// document the SQL index names, read once, the update is one batch.
func TestStrictBatchUpdateKernelCalls(t *testing.T) {
	s := newStrictFixture(t, false)
	var mu sync.Mutex
	calls := map[string]int{}
	s.SetHook(func(w http.ResponseWriter, r *http.Request) bool {
		mu.Lock()
		calls[strings.TrimPrefix(r.URL.Path, "/api/")]++
		mu.Unlock()
		return false
	})
	take := func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		got := maps.Clone(calls)
		clear(calls)
		return got
	}
	s.Policy = &tools.Policy{Default: tools.LevelRead, Notebooks: map[string]tools.Level{s.NB: tools.LevelWrite}, AllActions: true, Strict: true, Version: "nb"}
	var items []any
	for i, id := range s.Blocks[1:12] {
		items = append(items, map[string]any{"id": id, "data": fmt.Sprintf("batch counted %d", i)})
	}
	args := map[string]any{"action": "update", "items": items}
	if err := s.C.FlushTransaction(t.Context()); err != nil { // the SQL index holds the blocks
		t.Fatal(err)
	}
	take()
	pre := s.OK(t, "block", tooltest.CopyArgs(args, "validateOnly", true))
	gateAndState := map[string]int{
		"filetree/getPathByID": 1, "block/getBlocksIndexes": 1, // the gate's placement
		// The state: the document the index names, its kramdown, the attributes.
		"query/sql": 1, "block/getBlockKramdown": 1, "attr/batchGetBlockAttrs": 1,
	}
	if got := take(); !maps.Equal(got, gateAndState) {
		t.Errorf("preflight's kernel calls\n got %v\nwant %v", got, gateAndState)
	}
	if res := s.OK(t, "block", tooltest.CommitArgs(args, pre)); res["status"] != "committed" {
		t.Fatal(res)
	}
	commit := maps.Clone(gateAndState)
	commit["block/batchUpdateBlock"] = 1
	// The readback: the document's kramdown, named by the index, and the
	// attributes (the texts shown are rendered from the kramdown).
	commit["query/sql"]++
	commit["block/getBlockKramdown"]++
	commit["attr/batchGetBlockAttrs"]++
	if got := take(); !maps.Equal(got, commit) {
		t.Errorf("commit's kernel calls\n got %v\nwant %v", got, commit)
	}
}

// TestStrictControlFieldForms: expectedHash (upstream's name) commits as
// expectedStateHash; the two disagreeing is refused; a commit that still
// carries validateOnly:true is refused instead of preflighting again.
func TestStrictControlFieldForms(t *testing.T) {
	s := newStrictFixture(t, false)
	id := s.Blocks[0]
	args := map[string]any{"action": "update", "id": id, "data": "by the alias"}
	pre := s.OK(t, "block", tooltest.CopyArgs(args, "validateOnly", true))
	cred := pre["expectedStateHash"].(string)
	// The preflight names the next call exactly.
	next, _ := pre["nextCall"].(map[string]any)
	add, _ := next["add"].(map[string]any)
	if next["tool"] != "block" || next["action"] != "update" || add["requestId"] != pre["requestId"] || add["expectedStateHash"] != cred ||
		fmt.Sprint(next["remove"]) != "[validateOnly]" || !strings.Contains(fmt.Sprint(pre["nextStep"]), "expectedStateHash") {
		t.Fatalf("nextCall: %v / %v", pre["nextCall"], pre["nextStep"])
	}

	e := s.WantErr(t, "block", tooltest.CopyArgs(args, "requestId", pre["requestId"], "expectedStateHash", cred, "validateOnly", true), failure.InvalidArguments)
	if e.Details["reason"] != "validate_only_with_request_id" || e.WriteAttempted == nil || *e.WriteAttempted || !strings.Contains(e.Action, "without validateOnly") {
		t.Fatalf("commit with validateOnly: %+v", e)
	}
	s.WantErr(t, "block", tooltest.CopyArgs(args, "requestId", pre["requestId"], "expectedStateHash", cred, "expectedHash", tooltest.OtherCredential(cred)), failure.InvalidArguments)

	res := s.OK(t, "block", tooltest.CopyArgs(args, "requestId", pre["requestId"], "expectedHash", cred))
	if res["status"] != "committed" || res["requestId"] != pre["requestId"] {
		t.Fatalf("commit with expectedHash: %v", res)
	}
	if !strings.Contains(s.Text(t, id), "by the alias") {
		t.Fatal("the commit did not write")
	}
	// The replay answers the same with either name.
	if rep := s.OK(t, "block", tooltest.CommitArgs(args, pre)); rep["replayed"] != true {
		t.Fatalf("replay: %v", rep)
	}
}

// TestKebabActionNames: get-kramdown is get_kramdown, as upstream
// normalises action names.
func TestKebabActionNames(t *testing.T) {
	s := newStrictFixture(t, false)
	res := s.OK(t, "block", map[string]any{"action": "get-kramdown", "id": s.Blocks[0]})
	if res["id"] != s.Blocks[0] || res["kramdown"] == "" {
		t.Fatalf("get-kramdown: %v", res)
	}
}

// TestReadWithValidateOnly: a read sent with validateOnly runs as the read
// it is (upstream's behaviour) and says that nothing needed a preflight.
func TestReadWithValidateOnly(t *testing.T) {
	s := newStrictFixture(t, false)
	res := s.OK(t, "block", map[string]any{"action": "get_kramdown", "id": s.Blocks[0], "validateOnly": true})
	if res["id"] != s.Blocks[0] || res["kramdown"] == "" || res["requestId"] != nil || !strings.Contains(fmt.Sprint(res["preflight"]), "not needed") {
		t.Fatalf("read with validateOnly: %v", res)
	}
}
