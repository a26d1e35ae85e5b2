package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/sisyphus-go/sisyphus/internal/embedded"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// The long concurrent history: what Strict Safe Writes must hold at scale.
// Sixteen agents race strict updates on three hot blocks and strict appends
// to one document through a real `sisyphus serve` process, while the kernel
// (in this process, so its faults can change under load) drops replies
// after applying, fails before applying and stalls, and the authority is
// killed with SIGKILL halfway and restarted on the same state dir. Each
// block's history must be linearizable (committed = happened; refused =
// did not; outcome_unknown = may have); no request may reach the kernel
// twice; every committed request must still replay as committed at the end.

// A block is a register; a strict update preflighted at state S is a
// compare-and-set S → V; reads observe the content.
type casInput struct {
	read   bool
	expect string // the content the preflight leased ("" with blind)
	blind  bool   // what the preflight leased is not known: a plain write
	value  string
}

const (
	outOK      = "ok"
	outFail    = "fail"
	outUnknown = "unknown"
)

func casModel(initial string) porcupine.Model {
	return (&porcupine.NondeterministicModel{
		Init: func() []any { return []any{initial} },
		Step: func(state, input, output any) []any {
			s, in, out := state.(string), input.(casInput), output.(string)
			if in.read {
				if s == out {
					return []any{s}
				}
				return nil
			}
			can := in.blind || s == in.expect
			switch {
			case out == outFail:
				return []any{s}
			case out == outOK && can:
				return []any{in.value}
			case out == outOK:
				return nil
			case can: // unknown
				return []any{in.value, s}
			}
			return []any{s}
		},
		DescribeOperation: func(input, output any) string {
			in := input.(casInput)
			if in.read {
				return fmt.Sprintf("read → %v", output)
			}
			return fmt.Sprintf("cas(%q → %q) %v", in.expect, in.value, output)
		},
	}).ToModel()
}

// dispatchCounter counts the write requests that reach the kernel, by the
// unique data each carries: a count above one is a duplicate execution.
type dispatchCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (d *dispatchCounter) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/block/updateBlock" || r.URL.Path == "/api/block/appendBlock" {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var req struct{ Data string }
			if json.Unmarshal(body, &req) == nil {
				d.mu.Lock()
				d.n[strings.TrimSpace(req.Data)]++
				d.mu.Unlock()
			}
		}
		next.ServeHTTP(w, r)
	})
}

// outcome classifies a commit's answer as the contract defines it.
func outcome(status int, body []byte) (out string, res map[string]any) {
	if status != http.StatusOK {
		return outUnknown, nil // the request may have reached the authority
	}
	var env struct {
		Result struct {
			IsError           bool           `json:"isError"`
			StructuredContent map[string]any `json:"structuredContent"`
		} `json:"result"`
	}
	if json.Unmarshal(body, &env) != nil {
		return outUnknown, nil
	}
	res = env.Result.StructuredContent
	if !env.Result.IsError {
		if res["status"] == "committed" {
			return outOK, res
		}
		return outUnknown, res
	}
	switch errCodeOf(res) {
	case "state_changed", "write_rejected", "preflight_lease_invalid", "precondition_required", "idempotency_conflict":
		return outFail, res
	case "outcome_unknown", "readback_mismatch":
		return outUnknown, res
	}
	if res["writeAttempted"] == false {
		return outFail, res
	}
	return outUnknown, res
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func TestConcurrentHistoryLong(t *testing.T) {
	longTests(t)
	const (
		agents    = 16
		hot       = 3
		target    = 10_000 // strict commits
		restartAt = target / 2
	)
	ctx := context.Background()
	k, err := embedded.Open(ctx, embedded.Options{Dir: t.TempDir(), Token: "tok", SQLFlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	counter := &dispatchCounter{n: map[string]int{}}
	srv := httptest.NewServer(counter.wrap(k.Handler()))
	defer func() { srv.Close(); k.Close() }()
	kc, err := siyuan.New(siyuan.Config{BaseURL: srv.URL, Token: "tok", ReadBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	nbs, err := kc.ListNotebooks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var md strings.Builder
	for i := range hot {
		fmt.Fprintf(&md, "initial %d\n\n", i)
	}
	doc, err := kc.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: nbs[0].ID, Path: "/hot", Markdown: md.String()})
	if err != nil {
		t.Fatal(err)
	}
	kids, err := kc.GetChildBlocks(ctx, doc)
	if err != nil || len(kids) != hot {
		t.Fatalf("hot blocks: %v %v", kids, err)
	}
	var blocks []string
	for _, kd := range kids {
		blocks = append(blocks, kd.ID)
	}
	// Appends go to another document, so the hot blocks' document stays small.
	appendDoc, err := kc.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: nbs[0].ID, Path: "/appends", Markdown: "appends\n"})
	if err != nil {
		t.Fatal(err)
	}

	state, addr := t.TempDir(), freeAddr(t)
	serveArgs := []string{"--token", "sekret", "--siyuan-url", srv.URL, "--siyuan-token", "tok", "--state-dir", state, "--listen", addr}
	authority := startServeEnv(t, nil, serveArgs...)
	base := "http://" + addr
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: agents * 2}}

	start := time.Now()
	now := func() int64 { return int64(time.Since(start)) }
	var histMu sync.Mutex
	history := make([][]porcupine.Operation, hot)
	record := func(b, client int, in casInput, call int64, out string, ret int64) {
		if out == outUnknown {
			ret = math.MaxInt64 // may take effect any time after its call
		}
		histMu.Lock()
		history[b] = append(history[b], porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret})
		histMu.Unlock()
	}

	// Chaos: the kernel's faults change every few milliseconds.
	stop := make(chan struct{})
	var bg sync.WaitGroup
	bg.Add(1)
	go func() {
		defer bg.Done()
		faults := []embedded.Fault{
			{Endpoint: "/api/block/updateBlock", Kind: embedded.DropAfterApply},
			{Endpoint: "/api/block/updateBlock", Kind: embedded.FailBeforeApply},
			{Endpoint: "/api/block/updateBlock", Kind: embedded.Latency, Delay: 15 * time.Millisecond},
			{Endpoint: "/api/block/appendBlock", Kind: embedded.DropAfterApply},
			{Endpoint: "/api/block/appendBlock", Kind: embedded.FailBeforeApply},
			{Endpoint: "/api/block/getBlockKramdown", Kind: embedded.Latency, Delay: 5 * time.Millisecond},
		}
		r := rand.New(rand.NewPCG(9, 9))
		for {
			select {
			case <-stop:
				k.Faults().Clear()
				return
			case <-time.After(time.Duration(5+r.IntN(20)) * time.Millisecond):
			}
			if r.IntN(2) == 0 {
				k.Faults().Clear()
			} else {
				k.Faults().Set(faults[r.IntN(len(faults))])
			}
		}
	}()

	// The restart: SIGKILL halfway, with writes in flight, then a new
	// authority on the same state dir and address.
	var commits atomic.Int64
	var restarted atomic.Bool
	var restartMu sync.RWMutex // held while the authority is down
	bg.Add(1)
	go func() {
		defer bg.Done()
		for commits.Load() < restartAt {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
		authority.cmd.Process.Kill()
		authority.cmd.Wait()
		restartMu.Lock()
		authority = startServeEnv(t, nil, serveArgs...)
		restartMu.Unlock()
		restarted.Store(true)
	}()

	type committed struct {
		args map[string]any
		id   string
	}
	var (
		okMu      sync.Mutex
		okCommits []committed
		appended  sync.Map // marker → outcome
		counts    [3]atomic.Int64
		replays   atomic.Int64
	)
	call := func(client, tool string, args map[string]any) (int, []byte) {
		cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		return modernCallAs(cctx, hc, base, client, tool, args, "")
	}
	preflight := func(client, tool string, args map[string]any) map[string]any {
		st, body := call(client, tool, with(args, "validateOnly", true))
		out, res := outcome(st, body)
		if st != http.StatusOK || res == nil || res["requestId"] == nil || out == outFail {
			if st == 0 {
				time.Sleep(20 * time.Millisecond) // the authority is restarting
			}
			return nil
		}
		return res
	}
	// commit sends a commit; a transport failure is followed by one retry
	// with the same requestId (what a client library does), which must
	// replay, never execute twice.
	commit := func(client, tool string, args, pre map[string]any) (string, map[string]any) {
		cargs := commitOf(args, pre)
		st, body := call(client, tool, cargs)
		commits.Add(1)
		out, res := outcome(st, body)
		if st == 0 {
			for try := 0; try < 200 && st == 0; try++ {
				time.Sleep(25 * time.Millisecond)
				restartMu.RLock()
				st, body = call(client, tool, cargs)
				restartMu.RUnlock()
			}
			out, res = outcome(st, body)
		}
		if out == outOK {
			okMu.Lock()
			okCommits = append(okCommits, committed{cargs, tool})
			okMu.Unlock()
		}
		return out, res
	}

	var wg sync.WaitGroup
	for a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := fmt.Sprintf("agent-%02d", a)
			r := rand.New(rand.NewPCG(uint64(a), 77))
			for i := 0; commits.Load() < target && !t.Failed(); i++ {
				b := r.IntN(hot)
				id := blocks[b]
				c0 := now()
				if kd, err := kc.GetBlockKramdown(ctx, id); err == nil {
					record(b, a, casInput{read: true}, c0, content(kd.Kramdown), now())
				}
				if r.IntN(6) == 0 {
					marker := fmt.Sprintf("append-a%d-i%d", a, i)
					args := map[string]any{"action": "append", "parentID": appendDoc, "data": marker}
					pre := preflight(client, "block", args)
					if pre == nil {
						continue
					}
					out, _ := commit(client, "block", args, pre)
					appended.Store(marker, out)
					if r.IntN(3) == 0 { // a duplicate delivery of the same commit
						call(client, "block", commitOf(args, pre))
						replays.Add(1)
					}
					continue
				}
				value := fmt.Sprintf("v-a%d-i%d", a, i)
				args := map[string]any{"action": "update", "id": id, "data": value}
				c1 := now()
				before, err1 := kc.GetBlockKramdown(ctx, id)
				pre := preflight(client, "block", args)
				if pre == nil {
					continue
				}
				after, err2 := kc.GetBlockKramdown(ctx, id)
				out, _ := commit(client, "block", args, pre)
				in := casInput{value: value}
				// Contents are unique, so equal reads around the preflight
				// tell what it leased; otherwise the write is checked as a
				// plain write.
				if err1 == nil && err2 == nil && content(before.Kramdown) == content(after.Kramdown) {
					in.expect = content(before.Kramdown)
				} else {
					in.blind = true
				}
				record(b, a, in, c1, out, now())
				switch out {
				case outOK:
					counts[0].Add(1)
				case outFail:
					counts[1].Add(1)
				default:
					counts[2].Add(1)
				}
				if r.IntN(8) == 0 {
					call(client, "block", commitOf(args, pre))
					replays.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	bg.Wait()
	elapsed := time.Since(start)
	if !restarted.Load() {
		t.Fatal("the authority was never restarted")
	}
	for b, id := range blocks {
		c0 := now()
		kd, err := kc.GetBlockKramdown(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		record(b, -1, casInput{read: true}, c0, content(kd.Kramdown), now())
	}

	// Linearizable, block by block.
	checkStart := time.Now()
	for b := range blocks {
		model := casModel(fmt.Sprintf("initial %d", b))
		res, info := porcupine.CheckOperationsVerbose(model, history[b], 5*time.Minute)
		if res != porcupine.Ok {
			f, _ := os.CreateTemp("", "history-long-*.html")
			porcupine.Visualize(model, info, f)
			t.Fatalf("block %d: history of %d operations is %v; visualisation: %s", b, len(history[b]), res, f.Name())
		}
	}
	checkTime := time.Since(checkStart)

	// No request reached the kernel twice.
	counter.mu.Lock()
	duplicates := 0
	for data, n := range counter.n {
		if n > 1 {
			duplicates++
			t.Errorf("%q reached the kernel %d times", data, n)
		}
	}
	counter.mu.Unlock()

	// No commit was lost: each replays as committed from the restarted
	// authority's ledger, and each committed append landed exactly once.
	lost := 0
	for _, c := range okCommits {
		st, body := call("auditor", c.id, c.args)
		out, res := outcome(st, body)
		if out != outOK || res["replayed"] != true {
			lost++
			t.Errorf("committed %v no longer replays as committed: %d %v", c.args["requestId"], st, res)
		}
	}
	kd, err := kc.GetBlockKramdown(ctx, appendDoc)
	if err != nil {
		t.Fatal(err)
	}
	var nAppends [3]int
	appended.Range(func(key, v any) bool {
		n := strings.Count(kd.Kramdown, key.(string)+"\n")
		switch {
		case n > 1:
			t.Errorf("%s landed %d times", key, n)
		case v == outOK && n != 1:
			lost++
			t.Errorf("%s committed but landed %d times", key, n)
		case v == outFail && n != 0:
			t.Errorf("%s was refused but landed", key)
		}
		switch v {
		case outOK:
			nAppends[0]++
		case outFail:
			nAppends[1]++
		default:
			nAppends[2]++
		}
		return true
	})
	ops := 0
	for b := range blocks {
		ops += len(history[b])
	}
	t.Logf("%d strict commits from %d agents on %d hot blocks and one append target in %v, one SIGKILL restart of the authority",
		commits.Load(), agents, hot, elapsed.Round(time.Second))
	t.Logf("updates: %d committed, %d refused, %d unknown; appends: %d committed, %d refused, %d unknown; %d duplicate deliveries of a commit",
		counts[0].Load(), counts[1].Load(), counts[2].Load(), nAppends[0], nAppends[1], nAppends[2], replays.Load())
	t.Logf("porcupine: %d operations on the hot blocks linearizable in %v; %d requests reached the kernel twice; %d commits lost",
		ops, checkTime.Round(time.Millisecond), duplicates, lost)
	if counts[0].Load() == 0 || counts[2].Load() == 0 || nAppends[0] == 0 {
		t.Fatal("the run committed nothing, or no fault made an outcome unknown: it tested nothing")
	}
}

// content is a block's text as the model sees it.
func content(kramdown string) string {
	line, _, _ := strings.Cut(kramdown, "\n")
	return strings.TrimSpace(line)
}
