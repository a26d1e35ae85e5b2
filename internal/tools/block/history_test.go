package block

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/embedded"
	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/histcheck"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/testvars"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// historyFixture is a kernel with faults, a coordinator with a dispatch
// observer, and the tools.
type historyFixture struct {
	k      *embedded.Kernel
	c      *siyuan.Client
	r      *tools.Registry
	doc    string
	blocks []string
	mu     sync.Mutex
	disp   []strict.Dispatch
}

func newHistoryFixture(t *testing.T, nblocks int) *historyFixture {
	t.Helper()
	ctx := context.Background()
	k, err := embedded.Open(ctx, embedded.Options{Dir: t.TempDir(), Token: "t", SQLFlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(k.Handler())
	t.Cleanup(func() { srv.Close(); k.Close() })
	c, _ := siyuan.New(siyuan.Config{BaseURL: srv.URL, Token: "t", ReadBackoff: time.Millisecond})
	nbs, _ := c.ListNotebooks(ctx)
	var md strings.Builder
	for i := 0; i < nblocks; i++ {
		fmt.Fprintf(&md, "initial %d\n\n", i)
	}
	doc, err := c.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: nbs[0].ID, Path: "/history", Markdown: md.String()})
	if err != nil {
		t.Fatal(err)
	}
	kids, _ := c.GetChildBlocks(ctx, doc)
	h := &historyFixture{k: k, c: c, doc: doc}
	for _, kd := range kids {
		h.blocks = append(h.blocks, kd.ID)
	}
	l, err := strict.OpenLedger(filepath.Join(t.TempDir(), "ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	coord := strict.NewCoordinator(strict.CoordinatorConfig{Ledger: l, OnDispatch: func(d strict.Dispatch) {
		h.mu.Lock()
		h.disp = append(h.disp, d)
		h.mu.Unlock()
	}})
	h.r, err = tools.NewRegistry(&tools.Env{Kernel: c, Coordinator: coord}, testTools()...)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *historyFixture) call(ctx context.Context, args map[string]any) (map[string]any, error) {
	raw, _ := json.Marshal(args)
	v, err := h.r.Call(ctx, "block", raw)
	if err != nil {
		return nil, err
	}
	b, _ := json.Marshal(v)
	var m map[string]any
	json.Unmarshal(b, &m)
	return m, nil
}

// outcomeOf classifies a write's answer as the contract defines it.
func outcomeOf(err error) string {
	if err == nil {
		return histcheck.OK
	}
	var te *failure.Error
	if errors.As(err, &te) {
		switch te.Code {
		case failure.StateChanged, failure.Rejected, failure.PreflightLeaseInvalid, failure.PreconditionRequired:
			return histcheck.Fail
		}
	}
	return histcheck.Unknown
}

// TestConcurrentHistory: agents race strict updates, appends and reads on a
// few blocks while the kernel drops replies after applying, fails before
// applying, and stalls. Every block's history must be linearizable when
// committed = happened, rejection = did not happen, outcome_unknown and
// readback_mismatch = may have happened; no additive write may land twice.
func TestConcurrentHistory(t *testing.T) {
	agents, rounds := 4, 12
	if testvars.LongOn(t) {
		agents, rounds = 8, 40
	}
	h := newHistoryFixture(t, 3)
	ctx := context.Background()
	hist := histcheck.New()

	// Chaos: flip the kernel's faults on updateBlock while agents run.
	stop := make(chan struct{})
	var chaos sync.WaitGroup
	chaos.Add(1)
	go func() {
		defer chaos.Done()
		h.k.Faults().Churn(stop, 1, 15*time.Millisecond, 15*time.Millisecond,
			embedded.Fault{Endpoint: "/api/block/updateBlock", Kind: embedded.DropAfterApply},
			embedded.Fault{Endpoint: "/api/block/updateBlock", Kind: embedded.FailBeforeApply},
			embedded.Fault{Endpoint: "/api/block/updateBlock", Kind: embedded.Latency, Delay: 20 * time.Millisecond},
			embedded.Fault{Endpoint: "/api/block/appendBlock", Kind: embedded.DropAfterApply})
	}()

	var appended sync.Map // marker → outcome
	var wg sync.WaitGroup
	for a := 0; a < agents; a++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(a), 7))
			for i := 0; i < rounds; i++ {
				b := r.IntN(len(h.blocks))
				id := h.blocks[b]
				// Read.
				c0 := hist.Now()
				kd, err := h.c.GetBlockKramdown(ctx, id)
				if err == nil {
					hist.Record(b, a, histcheck.Op{Read: true}, c0, histcheck.Content(kd.Kramdown), hist.Now())
				}
				if r.IntN(4) == 0 {
					// Additive: append a unique marker once.
					marker := fmt.Sprintf("append-a%d-i%d", a, i)
					args := map[string]any{"action": "append", "parentID": h.doc, "data": marker}
					pre, err := h.call(ctx, tooltest.CopyArgs(args, "validateOnly", true))
					if err != nil {
						continue
					}
					_, err = h.call(ctx, tooltest.CommitArgs(args, pre))
					appended.Store(marker, outcomeOf(err))
					// A retry with the same requestId must never add it again.
					h.call(ctx, tooltest.CommitArgs(args, pre))
					continue
				}
				// Strict update: preflight sees S, commit sets V.
				value := fmt.Sprintf("v-a%d-i%d", a, i)
				args := map[string]any{"action": "update", "id": id, "data": value}
				c1 := hist.Now()
				before, err1 := h.c.GetBlockKramdown(ctx, id)
				pre, err := h.call(ctx, tooltest.CopyArgs(args, "validateOnly", true))
				if err != nil {
					continue
				}
				after, err2 := h.c.GetBlockKramdown(ctx, id)
				_, err = h.call(ctx, tooltest.CommitArgs(args, pre))
				in := histcheck.Op{Value: value}
				// Contents are unique, so equal reads around the preflight
				// tell what it leased; otherwise the expectation is unknown
				// and the write is checked as a plain write.
				if err1 == nil && err2 == nil && histcheck.Content(before.Kramdown) == histcheck.Content(after.Kramdown) {
					in.Expect = histcheck.Content(before.Kramdown)
				} else {
					in.Blind = true
				}
				hist.Record(b, a, in, c1, outcomeOf(err), hist.Now())
			}
		}()
	}
	wg.Wait()
	close(stop)
	chaos.Wait()

	// Final reads close every block's history.
	for b, id := range h.blocks {
		c0 := hist.Now()
		kd, err := h.c.GetBlockKramdown(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		hist.Record(b, -1, histcheck.Op{Read: true}, c0, histcheck.Content(kd.Kramdown), hist.Now())
	}
	// The preflight read and the commit are separate operations, so the
	// CAS's expected value is what the agent saw just before preflight; a
	// CAS whose preflight saw something else fails by design. Linearizable
	// means: no commit ever overwrote a state it did not preflight.
	for b := range h.blocks {
		if err := hist.Check(b, fmt.Sprintf("initial %d", b), 30*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	counts := hist.Writes()
	t.Logf("%d operations; strict updates: %d committed, %d refused, %d unknown", hist.Len(), counts[histcheck.OK], counts[histcheck.Fail], counts[histcheck.Unknown])

	// No additive write landed twice; committed ones landed exactly once.
	kd, err := h.c.GetBlockKramdown(ctx, h.doc)
	if err != nil {
		t.Fatal(err)
	}
	appended.Range(func(k, v any) bool {
		n := strings.Count(kd.Kramdown, k.(string)+"\n")
		switch {
		case n > 1:
			t.Errorf("%s landed %d times", k, n)
		case v == histcheck.OK && n != 1:
			t.Errorf("%s committed but landed %d times", k, n)
		case v == histcheck.Fail && n != 0:
			t.Errorf("%s was refused but landed", k)
		}
		return true
	})
}

// TestBypassWindow measures how often a writer that bypasses Sisyphus (as
// SiYuan's own UI does) lands between a strict write's final comparison and
// its dispatch: the coordinator cannot see such a write, so the strict write
// overwrites it. This window is real and is reported, not asserted away.
func TestBypassWindow(t *testing.T) {
	h := newHistoryFixture(t, 1)
	ctx := context.Background()
	id := h.blocks[0]
	var bypassMu sync.Mutex
	type span struct{ start, end time.Time }
	var bypass []span
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the "UI": a plain write every few milliseconds
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(3 * time.Millisecond):
			}
			s := time.Now()
			if _, err := h.c.UpdateBlock(ctx, id, "markdown", fmt.Sprintf("ui edit %d", i)); err == nil {
				bypassMu.Lock()
				bypass = append(bypass, span{s, time.Now()})
				bypassMu.Unlock()
			}
		}
	}()
	var committed, changed atomic.Int64
	n := 60
	if testvars.LongOn(t) {
		n = 300
	}
	for i := 0; i < n; i++ {
		args := map[string]any{"action": "update", "id": id, "data": fmt.Sprintf("agent %d", i)}
		pre, err := h.call(ctx, tooltest.CopyArgs(args, "validateOnly", true))
		if err != nil {
			continue
		}
		if _, err := h.call(ctx, tooltest.CommitArgs(args, pre)); err == nil {
			committed.Add(1)
		} else if outcomeOf(err) == histcheck.Fail {
			changed.Add(1)
		}
	}
	close(stop)
	wg.Wait()
	// A slip: a bypass write that overlapped [Checked, Returned] of a
	// committed dispatch.
	slips := 0
	var window time.Duration
	h.mu.Lock()
	for _, d := range h.disp {
		window += d.Returned.Sub(d.Checked)
		for _, b := range bypass {
			if b.start.Before(d.Returned) && b.end.After(d.Checked) {
				slips++
				break
			}
		}
	}
	nd := len(h.disp)
	h.mu.Unlock()
	if nd == 0 {
		t.Fatal("no strict write was dispatched")
	}
	t.Logf("bypass writer: %d UI writes; %d strict commits, %d refused as state_changed; %d of %d dispatches had a UI write inside their window (%.1f%%); mean window %v",
		len(bypass), committed.Load(), changed.Load(), slips, nd, 100*float64(slips)/float64(nd), window/time.Duration(nd))
	if changed.Load() == 0 {
		t.Error("with a writer that fast, some strict writes must have been refused as state_changed")
	}
}
