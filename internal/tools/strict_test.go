package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/embedded"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
)

// sfix is a kernel, a ledger and a registry with a strict coordinator.
type sfix struct {
	*fixture
	k      *embedded.Kernel
	ledger string
}

func newStrictFixture(t *testing.T, strictOff bool) *sfix {
	t.Helper()
	ctx := context.Background()
	k, err := embedded.Open(ctx, embedded.Options{Dir: t.TempDir(), Token: "t", SQLFlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(k.Handler())
	t.Cleanup(func() { srv.Close(); k.Close() })
	c, _ := siyuan.New(siyuan.Config{BaseURL: srv.URL, Token: "t"})
	nb, err := c.CreateNotebook(ctx, "Strict")
	if err != nil {
		t.Fatal(err)
	}
	var md strings.Builder
	for i := 0; i < 12; i++ {
		fmt.Fprintf(&md, "paragraph %d\n\n", i)
	}
	doc, err := c.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: nb.ID, Path: "/Doc", Markdown: md.String()})
	if err != nil {
		t.Fatal(err)
	}
	kids, _ := c.GetChildBlocks(ctx, doc)
	var ids []string
	for _, kd := range kids {
		ids = append(ids, kd.ID)
	}
	s := &sfix{fixture: &fixture{c: c, nb: nb.ID, doc: doc, blocks: ids}, k: k, ledger: filepath.Join(t.TempDir(), "ledger.db")}
	s.reopen(t, strictOff)
	return s
}

// reopen starts a new coordinator (a process restart) on the same ledger.
func (s *sfix) reopen(t *testing.T, strictOff bool) {
	t.Helper()
	l, err := strict.OpenLedger(s.ledger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	coord := strict.NewCoordinator(strict.CoordinatorConfig{Ledger: l, StrictOff: strictOff})
	r, err := NewRegistry(&Env{Kernel: s.c, Coordinator: coord})
	if err != nil {
		t.Fatal(err)
	}
	s.r = r
	s.closeLedger = func() { l.Close() }
}

func copyArgs(m map[string]any, extra ...any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(extra); i += 2 {
		out[extra[i].(string)] = extra[i+1]
	}
	return out
}

// commitArgs turns a preflight answer into the commit call.
func commitArgs(args, pre map[string]any) map[string]any {
	out := copyArgs(args)
	delete(out, "validateOnly")
	out["requestId"] = pre["requestId"]
	if f, ok := pre["preconditionField"].(string); ok {
		out[f] = pre[f]
	}
	return out
}

func (s *sfix) wantErr(t *testing.T, tool string, args map[string]any, code string) *Error {
	t.Helper()
	_, err := s.call(t, tool, args)
	if err == nil || err.Code != code {
		t.Fatalf("%s %v: got %v, want %s", tool, args, err, code)
	}
	return err
}

func (s *sfix) text(t *testing.T, id string) string {
	t.Helper()
	kd, err := s.c.GetBlockKramdown(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return kd.Kramdown
}

func TestStrictUpdateFlow(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	id := s.blocks[0]
	if err := s.c.SetBlockAttrs(ctx, id, map[string]string{"custom-keep": "me"}); err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"action": "update", "id": id, "data": "new **content**"}

	pre := s.ok(t, "block", copyArgs(args, "validateOnly", true))
	cred, _ := pre["expectedStateHash"].(string)
	if pre["validateOnly"] != true || pre["writeAttempted"] != false || pre["preconditionField"] != "expectedStateHash" ||
		len(cred) < 4 || pre["hashPrefixLength"].(float64) != float64(len(cred)) || pre["targetCount"].(float64) != 1 ||
		len(pre["requestId"].(string)) < 4 || pre["leaseExpiresAt"] == nil || pre["requestIdExpiresAt"] == nil {
		t.Fatalf("preflight: %v", pre)
	}
	if strings.Contains(s.text(t, id), "new") {
		t.Fatal("preflight wrote")
	}

	// Commit without the control fields is refused before anything happens.
	s.wantErr(t, "block", args, strict.CodePreconditionRequired)
	s.wantErr(t, "block", copyArgs(args, "requestId", pre["requestId"]), strict.CodePreconditionRequired)
	s.wantErr(t, "block", copyArgs(args, "requestId", "ffffffff", "expectedStateHash", cred), strict.CodePreconditionRequired)
	s.wantErr(t, "block", copyArgs(args, "requestId", pre["requestId"], "expectedStateHash", "0000"), strict.CodePreflightLeaseInvalid)
	s.wantErr(t, "block", copyArgs(args, "requestId", pre["requestId"], "expectedStateHash", "xyz!"), strict.CodePreconditionRequired)

	res := s.ok(t, "block", commitArgs(args, pre))
	if res["status"] != "committed" || res["replayed"] != false || res["writeAttempted"] != true ||
		res["writeSafetyGuaranteed"] != true || res["previousHash"] == nil || res["resultHash"] == nil ||
		res["previousHash"] == res["resultHash"] || res["targetCount"].(float64) != 1 || res["requestId"] != pre["requestId"] {
		t.Fatalf("commit: %v", res)
	}
	if _, leaked := res["_appliedText"]; leaked {
		t.Fatal("verification detail leaked into the answer")
	}
	if kd := s.text(t, id); !strings.Contains(kd, "new **content**") || !strings.Contains(kd, `custom-keep="me"`) {
		t.Fatalf("after commit: %s", kd)
	}

	// A retry with the same requestId replays without executing.
	if err := s.c.SetBlockAttrs(ctx, id, map[string]string{"custom-drift": "x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.c.UpdateBlock(ctx, id, "markdown", "someone else wrote this"); err != nil {
		t.Fatal(err)
	}
	rep := s.ok(t, "block", commitArgs(args, pre))
	if rep["replayed"] != true || rep["writeAttempted"] != false || rep["status"] != "committed" || rep["resultHash"] != res["resultHash"] {
		t.Fatalf("replay: %v", rep)
	}
	if !strings.Contains(s.text(t, id), "someone else") {
		t.Fatal("a replay executed the write again")
	}
	// The same id with other arguments conflicts.
	other := commitArgs(copyArgs(args, "data", "different"), pre)
	s.wantErr(t, "block", other, strict.CodeIdempotencyConflict)
	// The lease was consumed: a second commit under a new id needs a new preflight.
	if e := s.wantErr(t, "block", copyArgs(args, "requestId", "abcd", "expectedStateHash", cred), strict.CodePreconditionRequired); e.WriteAttempted == nil || *e.WriteAttempted {
		t.Fatal("writeAttempted must be false")
	}
}

func TestStrictStateChanged(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()
	id := s.blocks[1]
	for _, tt := range []struct {
		name  string
		drift func()
	}{
		{"content changed", func() { s.c.UpdateBlock(ctx, id, "markdown", "changed by the UI") }},
		{"attribute drift", func() { s.c.SetBlockAttrs(ctx, id, map[string]string{"custom-x": "y"}) }},
		{"inline mark changed", func() { s.c.UpdateBlock(ctx, id, "markdown", "changed by **the** UI") }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := map[string]any{"action": "update", "id": id, "data": "agent text"}
			pre := s.ok(t, "block", copyArgs(args, "validateOnly", true))
			before := s.text(t, id)
			tt.drift()
			drifted := s.text(t, id)
			e := s.wantErr(t, "block", commitArgs(args, pre), strict.CodeStateChanged)
			if e.ExpectedHash != pre["expectedStateHash"] || e.CurrentHash == "" || e.CurrentHash == e.ExpectedHash || *e.WriteAttempted {
				t.Fatalf("state_changed details: %+v", e)
			}
			if s.text(t, id) != drifted || drifted == before {
				t.Fatal("a state_changed call must write nothing")
			}
		})
	}
}

func TestStrictNoChangeAndBatch(t *testing.T) {
	s := newStrictFixture(t, false)
	id := s.blocks[2]
	same := map[string]any{"action": "update", "id": id, "data": "paragraph 2"}
	pre := s.ok(t, "block", copyArgs(same, "validateOnly", true))
	res := s.ok(t, "block", commitArgs(same, pre))
	if res["status"] != "no_change" || res["previousHash"] != res["resultHash"] {
		t.Fatalf("no_change: %v", res)
	}
	var items []any
	for i := 0; i < 11; i++ {
		items = append(items, map[string]any{"id": s.blocks[i], "data": fmt.Sprintf("batch %d", i)})
	}
	items = append(items, map[string]any{"id": s.blocks[0], "data": "batch 0 again"})
	batch := map[string]any{"action": "update", "items": items}
	pre = s.ok(t, "block", copyArgs(batch, "validateOnly", true))
	if pre["targetCount"].(float64) != 11 {
		t.Fatalf("11 distinct blocks must count 11, got %v", pre["targetCount"])
	}
	res = s.ok(t, "block", commitArgs(batch, pre))
	if res["status"] != "committed" || res["targetCount"].(float64) != 11 {
		t.Fatalf("batch: %v", res)
	}
	if !strings.HasPrefix(s.text(t, s.blocks[0]), "batch 0 again") || !strings.HasPrefix(s.text(t, s.blocks[10]), "batch 10") {
		t.Fatal("batch not applied")
	}
}

func TestStrictAdditiveAppend(t *testing.T) {
	s := newStrictFixture(t, false)
	args := map[string]any{"action": "append", "parentID": s.doc, "data": "appended once"}
	pre := s.ok(t, "block", copyArgs(args, "validateOnly", true))
	if _, hasHash := pre["preconditionField"]; hasHash || pre["requestId"] == nil {
		t.Fatalf("additive preflight: %v", pre)
	}
	s.wantErr(t, "block", args, strict.CodePreconditionRequired)
	res := s.ok(t, "block", commitArgs(args, pre))
	ids, _ := res["ids"].([]any)
	if res["status"] != "committed" || len(ids) != 1 {
		t.Fatalf("append: %v", res)
	}
	rep := s.ok(t, "block", commitArgs(args, pre))
	if rep["replayed"] != true || rep["id"] != res["id"] {
		t.Fatalf("replay: %v", rep)
	}
	if n := strings.Count(s.text(t, s.doc), "appended once"); n != 1 {
		t.Fatalf("appended %d times", n)
	}
}

func TestStrictOutcomeUnknownAndRejection(t *testing.T) {
	s := newStrictFixture(t, false)
	id := s.blocks[3]
	s.k.Faults().Set(embedded.Fault{Endpoint: "/api/block/updateBlock", Kind: embedded.DropAfterApply})
	args := map[string]any{"action": "update", "id": id, "data": "reply lost"}
	pre := s.ok(t, "block", copyArgs(args, "validateOnly", true))
	e := s.wantErr(t, "block", commitArgs(args, pre), strict.CodeOutcomeUnknown)
	if !*e.WriteAttempted || e.RequestID != pre["requestId"] {
		t.Fatalf("outcome_unknown details: %+v", e)
	}
	s.k.Faults().Clear()
	// Forever unknown, never executed again.
	s.wantErr(t, "block", commitArgs(args, pre), strict.CodeOutcomeUnknown)
	if n := strings.Count(s.text(t, id), "reply lost"); n != 1 {
		t.Fatalf("applied %d times", n)
	}
	// A definite refusal is not unknown: appending under a leaf is refused.
	bad := map[string]any{"action": "append", "parentID": s.blocks[4], "data": "x"}
	pre = s.ok(t, "block", copyArgs(bad, "validateOnly", true))
	e = s.wantErr(t, "block", commitArgs(bad, pre), strict.CodeRejected)
	if !*e.WriteAttempted {
		t.Fatal("a rejected write was attempted")
	}
}

func TestStrictRestart(t *testing.T) {
	s := newStrictFixture(t, false)
	args := map[string]any{"action": "set_attrs", "id": s.blocks[5], "attrs": map[string]any{"custom-a": "1"}}
	done := s.ok(t, "block", commitArgs(args, s.ok(t, "block", copyArgs(args, "validateOnly", true))))
	pending := map[string]any{"action": "set_attrs", "id": s.blocks[6], "attrs": map[string]any{"custom-b": "2"}}
	pre := s.ok(t, "block", copyArgs(pending, "validateOnly", true))
	s.closeLedger()
	s.reopen(t, false)
	// Leases were in memory: gone.
	s.wantErr(t, "block", commitArgs(pending, pre), strict.CodePreflightLeaseInvalid)
	// The ledger was on disk: the committed request still replays.
	rep := s.ok(t, "block", commitArgs(args, map[string]any{"requestId": done["requestId"], "preconditionField": "expectedStateHash", "expectedStateHash": "ffff"}))
	if rep["replayed"] != true {
		t.Fatalf("replay after restart: %v", rep)
	}
}

func TestStrictOff(t *testing.T) {
	s := newStrictFixture(t, true)
	tool, _ := s.r.Tool("block")
	props := tool.InputSchema()["properties"].(map[string]any)
	for _, f := range []string{"validateOnly", "requestId", "expectedStateHash"} {
		if _, ok := props[f]; ok {
			t.Errorf("strict off: schema still advertises %s", f)
		}
	}
	res := s.ok(t, "block", map[string]any{"action": "update", "id": s.blocks[7], "data": "direct"})
	if res["writeSafetyGuaranteed"] != false || res["writeAttempted"] != true {
		t.Fatalf("direct write: %v", res)
	}
	for k := range res {
		if strings.HasPrefix(k, "_") {
			t.Fatalf("a private detail leaked into a direct write's answer: %v", res)
		}
	}
	s.wantErr(t, "block", map[string]any{"action": "update", "id": s.blocks[7], "data": "x", "validateOnly": true}, strict.CodeStrictModeDisabled)
}

func TestStrictSchemaAdvertisesControlFields(t *testing.T) {
	s := newStrictFixture(t, false)
	tool, _ := s.r.Tool("block")
	props := tool.InputSchema()["properties"].(map[string]any)
	d := props["expectedStateHash"].(map[string]any)["description"].(string)
	if !strings.Contains(d, "update") || strings.Contains(d, "append") || strings.Contains(d, "get_kramdown") {
		t.Fatalf("expectedStateHash must name exactly the guarded actions: %s", d)
	}
	r := props["requestId"].(map[string]any)["description"].(string)
	if !strings.Contains(r, "append") || strings.Contains(r, "get_kramdown") {
		t.Fatalf("requestId must name the strict writes only: %s", r)
	}
	search, _ := s.r.Tool("search")
	if _, ok := search.InputSchema()["properties"].(map[string]any)["validateOnly"]; ok {
		t.Fatal("a read-only tool must not advertise validateOnly")
	}
}

// TestStrictRacingAgents: agents racing on one block, each preflighting and
// committing; per state exactly one commit wins, the rest see state_changed.
func TestStrictRacingAgents(t *testing.T) {
	s := newStrictFixture(t, false)
	id := s.blocks[8]
	const agents = 8
	var wg sync.WaitGroup
	start := make(chan struct{})
	type outcome struct {
		committed bool
		code      string
		pre       string
	}
	results := make([]outcome, agents)
	// All preflight the same state first.
	pres := make([]map[string]any, agents)
	argss := make([]map[string]any, agents)
	for i := range agents {
		argss[i] = map[string]any{"action": "update", "id": id, "data": fmt.Sprintf("agent %d", i)}
		pres[i] = s.ok(t, "block", copyArgs(argss[i], "validateOnly", true))
	}
	for i := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			raw, _ := json.Marshal(commitArgs(argss[i], pres[i]))
			_, err := s.r.Call(context.Background(), "block", raw)
			var te *Error
			switch {
			case err == nil:
				results[i] = outcome{committed: true}
			case errors.As(err, &te):
				results[i] = outcome{code: te.Code}
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
		case r.code != strict.CodeStateChanged:
			t.Errorf("a loser must see state_changed, got %s", r.code)
		}
	}
	if won != 1 {
		t.Fatalf("%d commits from one state, want exactly 1", won)
	}
}

func TestExternalNotify(t *testing.T) {
	s := newStrictFixture(t, false)
	args := map[string]any{"action": "notify", "msg": "hello from an agent"}
	if e := s.wantErr(t, "system", copyArgs(args, "validateOnly", true), strict.CodePreflightUnavailable); *e.WriteAttempted {
		t.Fatal("a refused preflight attempted a write")
	}
	if n := len(s.k.Messages()); n != 0 {
		t.Fatalf("a refused preflight pushed %d messages", n)
	}
	res := s.ok(t, "system", args)
	if res["writeSafetyGuaranteed"] != false || res["writeAttempted"] != true || res["id"] == "" {
		t.Fatalf("notify: %v", res)
	}
	if msgs := s.k.Messages(); len(msgs) != 1 || msgs[0].Text != "hello from an agent" {
		t.Fatalf("messages: %+v", msgs)
	}
	sys, _ := s.r.Tool("system")
	if _, ok := sys.InputSchema()["properties"].(map[string]any)["validateOnly"]; ok {
		t.Fatal("an external action must not advertise validateOnly")
	}
}

// TestDelegate: a front without a coordinator hands every non-read call,
// control fields included, to its authority, and answers reads itself.
func TestDelegate(t *testing.T) {
	f := newFixture(t)
	var got []string
	r, err := NewRegistry(&Env{Kernel: f.c, DelegateStrict: true, Delegate: func(ctx context.Context, tool string, args json.RawMessage) (any, error) {
		got = append(got, tool+" "+string(args))
		if strings.Contains(string(args), "fail") {
			return nil, &Error{Code: strict.CodeStateChanged, Message: "remote said so", WriteAttempted: boolp(false)}
		}
		return map[string]any{"delegated": true}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	v, err := r.Call(context.Background(), "block", json.RawMessage(`{"action":"update","id":"`+f.blocks[1]+`","data":"x","validateOnly":true}`))
	if err != nil || v.(map[string]any)["delegated"] != true {
		t.Fatalf("delegated write: %v %v", v, err)
	}
	if len(got) != 1 || !strings.Contains(got[0], `"validateOnly":true`) || !strings.HasPrefix(got[0], "block ") {
		t.Fatalf("delegate saw %v", got)
	}
	_, err = r.Call(context.Background(), "block", json.RawMessage(`{"action":"update","id":"`+f.blocks[1]+`","data":"fail"}`))
	var te *Error
	if !errors.As(err, &te) || te.Code != strict.CodeStateChanged {
		t.Fatalf("remote failure: %v", err)
	}
	if _, err := r.Call(context.Background(), "block", json.RawMessage(`{"action":"get_kramdown","id":"`+f.blocks[1]+`"}`)); err != nil || len(got) != 2 {
		t.Fatalf("a read must not be delegated: %v %v", err, got)
	}
	tool, _ := r.Tool("block")
	if _, ok := tool.InputSchema()["properties"].(map[string]any)["validateOnly"]; !ok {
		t.Fatal("a strict front advertises the control fields")
	}
}
