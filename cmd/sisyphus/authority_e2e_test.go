package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sisyphus-go/sisyphus/internal/admission"
	"github.com/sisyphus-go/sisyphus/internal/authority"
	"github.com/sisyphus-go/sisyphus/internal/testvars"
)

// stdioAgent runs `sisyphus stdio` with args as an MCP client session.
func stdioAgent(t *testing.T, args ...string) *agent {
	t.Helper()
	client := sdk.NewClient(&sdk.Implementation{Name: "e2e", Version: "1"}, nil)
	cmd := exec.Command(bin, append([]string{"stdio"}, args...)...)
	cmd.Stderr = io.Discard
	cs, err := client.Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return &agent{t: t, cs: cs}
}

// cli runs `sisyphus call TOOL --json ARGS extra...` and decodes what it prints.
func cli(t *testing.T, tool string, args map[string]any, extra ...string) (map[string]any, int) {
	t.Helper()
	return cliWith(t, nil, tool, args, extra...)
}

// cliWith is cli with env added to the environment (later entries win).
func cliWith(t *testing.T, env []string, tool string, args map[string]any, extra ...string) (map[string]any, int) {
	t.Helper()
	raw, _ := json.Marshal(args)
	cmd := exec.Command(bin, append([]string{"call", tool, "--json", string(raw)}, extra...)...)
	cmd.Env = append(os.Environ(), env...)
	// No controlling terminal: call never waits on a prompt in a test.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if json.Unmarshal(stdout.Bytes(), &m) != nil {
		t.Fatalf("call %s %v printed no JSON (exit %d): %s %s", tool, args, code, stdout.String(), stderr.String())
	}
	return m, code
}

func errCodeOf(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

func stopServe(t *testing.T, s *serveProc) {
	t.Helper()
	stopWithSIGTERM(t, s.cmd, "serve", 20*time.Second)
}

// TestAuthorityOwnsItsStateDir: one authority per state dir, a discovery
// record while it runs, removed on a clean exit.
func TestAuthorityOwnsItsStateDir(t *testing.T) {
	state := t.TempDir()
	s := startServeWith(t, "--embedded", t.TempDir(), "--state-dir", state)
	info, err := os.Stat(filepath.Join(state, authority.RecordFile))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("discovery record: %v %v", info, err)
	}
	rec, err := authority.ReadRecord(state)
	if err != nil || rec.MCPURL() != s.url || rec.PID != s.cmd.Process.Pid || !admission.ValidTaskID(rec.InstanceID) || rec.StartedAt.IsZero() || !rec.Strict {
		t.Fatalf("record %+v %v", rec, err)
	}
	start := time.Now()
	out, err := run(t, "serve", "--embedded", t.TempDir(), "--listen", "127.0.0.1:0", "--state-dir", state)
	if err == nil || !strings.Contains(out, "is in use by another sisyphus serve") || !strings.Contains(out, s.url) {
		t.Fatalf("second serve on the same state dir: %v\n%s", err, out)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("the refusal took %v", el)
	}
	stopServe(t, s)
	if _, err := os.Stat(filepath.Join(state, authority.RecordFile)); !os.IsNotExist(err) {
		t.Fatalf("record left after a clean exit: %v", err)
	}
	// The state dir is free again.
	startServeWith(t, "--embedded", t.TempDir(), "--state-dir", state)
}

// TestFrontsShareTheAuthority: the authority, a stdio front, `sisyphus
// call` and an HTTP front are separate processes over one kernel; a lease
// taken through one commits through another.
func TestFrontsShareTheAuthority(t *testing.T) {
	state := t.TempDir()
	k := startKernel(t, t.TempDir())
	kernel := []string{"--siyuan-url", k.url, "--siyuan-token", "tok"}
	s := startServeWith(t, append(kernel, "--state-dir", state)...)
	front := []string{"--state-dir", state, "--token", "sekret"}
	st := stdioAgent(t, append(kernel, front...)...)
	httpFront := startServeWith(t, append(kernel, "--state-dir", t.TempDir(), "--authority", strings.TrimSuffix(s.url, "/mcp"))...)
	hf := connect(t, httpFront.url, "2026-07-28")

	_, para := firstParagraph(st)
	upd := map[string]any{"action": "update", "id": para, "data": "stdio preflight, cli commit"}
	pre := st.ok("block", with(upd, "validateOnly", true))
	res, code := cli(t, "block", commitOf(upd, pre), append(kernel, front...)...)
	if code != 0 || res["status"] != "committed" || res["requestId"] != pre["requestId"] {
		t.Fatalf("cli commit of a stdio lease: exit %d %v", code, res)
	}
	if rep := hf.ok("block", commitOf(upd, pre)); rep["replayed"] != true {
		t.Fatalf("replay through the HTTP front: %v", rep)
	}
	upd2 := map[string]any{"action": "update", "id": para, "data": "http front preflight, stdio commit"}
	pre2 := hf.ok("block", with(upd2, "validateOnly", true))
	if res := st.ok("block", commitOf(upd2, pre2)); res["status"] != "committed" {
		t.Fatalf("stdio commit of an HTTP-front lease: %v", res)
	}
	// The authority's answer is relayed as is: a stale lease loses.
	st.fails("block", commitOf(upd, pre2), "idempotency_conflict")

	// call prints reads as JSON and exits non-zero on a tool error.
	kd, code := cli(t, "block", map[string]any{"action": "get_kramdown", "id": para}, append(kernel, front...)...)
	if code != 0 || !strings.HasPrefix(kd["kramdown"].(string), "http front preflight") {
		t.Fatalf("cli read: %d %v", code, kd)
	}
	bad, code := cli(t, "block", map[string]any{"action": "explode"}, append(kernel, front...)...)
	if code != 1 || errCodeOf(bad) != "unknown_action" {
		t.Fatalf("cli tool error: %d %v", code, bad)
	}
	// `sisyphus health` prints the authority's counters.
	out, err := run(t, "health", "--state-dir", state, "--token", "sekret")
	var h map[string]any
	if err != nil || json.Unmarshal([]byte(out), &h) != nil || h["role"] != "authority" || h["lanes"] == nil || h["events"] == nil {
		t.Fatalf("health: %v\n%s", err, out)
	}
	if ev := h["events"].(map[string]any); ev["admitted"].(float64) < 5 {
		t.Fatalf("the writes did not go through the authority's admission: %v", ev)
	}
	// The HTTP front's own /health counts its delegations.
	req, _ := http.NewRequest("GET", strings.TrimSuffix(httpFront.url, "/mcp")+"/health", nil)
	req.Header.Set("Authorization", "Bearer sekret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var fh map[string]any
	json.NewDecoder(resp.Body).Decode(&fh)
	resp.Body.Close()
	if fh["role"] != "front" || fh["delegation"].(map[string]any)["delegated"].(float64) < 2 {
		t.Fatalf("front health: %v", fh)
	}

	// The authority stops: every front refuses writes, nothing written; reads go on.
	stopServe(t, s)
	st.fails("block", with(upd2, "validateOnly", true), "write_coordinator_unavailable")
	hf.fails("block", with(upd2, "validateOnly", true), "write_coordinator_unavailable")
	m, code := cli(t, "block", with(upd2, "validateOnly", true), append(kernel, front...)...)
	if code != 1 || errCodeOf(m) != "write_coordinator_unavailable" || m["writeAttempted"] != false {
		t.Fatalf("cli without an authority: %d %v", code, m)
	}
	st.ok("block", map[string]any{"action": "get_kramdown", "id": para})

	// A new authority on the state dir: fronts that pinned the old one refuse
	// writes until they restart; a new process pins the new one.
	startServeWith(t, append(kernel, "--state-dir", state)...)
	st.fails("block", with(upd2, "validateOnly", true), "write_coordinator_changed")
	if m, code := cli(t, "block", with(upd2, "validateOnly", true), append(kernel, front...)...); code != 0 || m["requestId"] == nil {
		t.Fatalf("a fresh cli with the new authority: %d %v", code, m)
	}
	st2 := stdioAgent(t, append(kernel, front...)...)
	st2.ok("block", with(upd2, "validateOnly", true))
}

// TestStdioNeverWritesAlone: with no authority, stdio serves reads and
// refuses writes, even though the state dir's ledger is free.
func TestStdioNeverWritesAlone(t *testing.T) {
	state := t.TempDir()
	a := stdioAgent(t, "--embedded", t.TempDir(), "--state-dir", state)
	_, para := firstParagraph(a)
	a.fails("block", map[string]any{"action": "update", "id": para, "data": "x", "validateOnly": true}, "write_coordinator_unavailable")
	if _, err := os.Stat(filepath.Join(state, "ledger.db")); !os.IsNotExist(err) {
		t.Fatalf("stdio opened a ledger: %v", err)
	}
}

// dropProxy forwards to an authority and loses the reply of the first
// commit (a tools/call without validateOnly) after the authority answered.
func dropProxy(t *testing.T, target string) (url string, dropped *atomic.Int32) {
	dropped = &atomic.Int32{}
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req, _ := http.NewRequestWithContext(context.WithoutCancel(r.Context()), r.Method, target+r.URL.Path, bytes.NewReader(body))
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		drop := false
		if strings.HasSuffix(r.URL.Path, "/mcp") && bytes.Contains(body, []byte(`"tools/call"`)) && !bytes.Contains(body, []byte("validateOnly")) {
			once.Do(func() { drop = true })
		}
		if drop {
			dropped.Add(1)
			if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
				conn.Close()
			}
			return
		}
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		w.Write(data)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, dropped
}

// TestLostReplyRecovered: the reply from the authority to `sisyphus call` is
// lost after the commit ran; call recovers it through the task result and
// prints it, and the write happened once.
func TestLostReplyRecovered(t *testing.T) {
	state := t.TempDir()
	k := startKernel(t, t.TempDir())
	kernel := []string{"--siyuan-url", k.url, "--siyuan-token", "tok"}
	s := startServeWith(t, append(kernel, "--state-dir", state)...)
	proxy, dropped := dropProxy(t, strings.TrimSuffix(s.url, "/mcp"))
	front := append(kernel, "--authority", proxy, "--token", "sekret", "--state-dir", t.TempDir())

	a := connect(t, s.url, "2026-07-28")
	_, para := firstParagraph(a)
	upd := map[string]any{"action": "update", "id": para, "data": "written once despite a lost reply"}
	pre, code := cli(t, "block", with(upd, "validateOnly", true), front...)
	if code != 0 {
		t.Fatalf("preflight: %v", pre)
	}
	res, code := cli(t, "block", commitOf(upd, pre), front...)
	if code != 0 || res["status"] != "committed" || res["replayed"] != false || dropped.Load() != 1 {
		t.Fatalf("recovered commit: exit %d %v (dropped %d)", code, res, dropped.Load())
	}
	kd := a.ok("block", map[string]any{"action": "get_kramdown", "id": para})["kramdown"].(string)
	if strings.Count(kd, "written once despite a lost reply") != 1 {
		t.Fatalf("kramdown %q", kd)
	}
	out, err := run(t, "health", "--state-dir", state, "--token", "sekret")
	if err != nil || !strings.Contains(out, `"taskResultsServed": 1`) {
		t.Fatalf("health after the recovery: %v\n%s", err, out)
	}
}

// TestQueueFullAt129: 128 calls in flight at the authority (reads held by a
// slow kernel); the 129th answers queue_full without running.
func TestQueueFullAt129(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir(), "--fault", "/api/block/getBlockKramdown=latency:1s")
	state := t.TempDir()
	s := startServeWith(t, "--siyuan-url", k.url, "--siyuan-token", "tok", "--state-dir", state)
	a := connect(t, s.url, "2026-07-28")
	nbs := a.ok("notebook", map[string]any{"action": "list"})["notebooks"].([]any)
	nb := nbs[0].(map[string]any)["id"].(string)
	doc := a.ok("document", map[string]any{"action": "get_child_docs", "notebook": nb})["data"].([]any)[0].(map[string]any)["id"].(string)
	base := strings.TrimSuffix(s.url, "/mcp")
	args := map[string]any{"action": "get_kramdown", "id": doc}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 200}}
	var wg sync.WaitGroup
	for i := 0; i < 128; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			modernCallAs(ctx, hc, base, fmt.Sprintf("e2e-%d", i%4), "block", args, "")
		}()
	}
	health := func() map[string]any {
		out, err := run(t, "health", "--state-dir", state, "--token", "sekret")
		var h map[string]any
		if err != nil || json.Unmarshal([]byte(out), &h) != nil {
			t.Fatalf("health: %v %s", err, out)
		}
		return h
	}
	deadline := time.Now().Add(20 * time.Second)
	for health()["inFlight"] != 128.0 {
		if time.Now().After(deadline) {
			t.Fatalf("never 128 in flight: %v", health())
		}
		time.Sleep(50 * time.Millisecond)
	}
	status, body := modernCall(context.Background(), hc, base, "block", args, "")
	if status != 200 || !bytes.Contains(body, []byte(`"queue_full"`)) || !bytes.Contains(body, []byte(`"isError":true`)) {
		t.Fatalf("129th call: %d %s", status, body)
	}
	h := health()
	if lanes := h["lanes"].(map[string]any)["read"].(map[string]any); lanes["running"] != 4.0 || lanes["queued"] != 124.0 {
		t.Fatalf("lanes %v", h["lanes"])
	}
	if h["events"].(map[string]any)["queueFull"] != 1.0 {
		t.Fatalf("events %v", h["events"])
	}
	// Dropping the clients cancels the queued calls before they run.
	cancel()
	wg.Wait()
	deadline = time.Now().Add(20 * time.Second)
	for health()["inFlight"] != 0.0 {
		if time.Now().After(deadline) {
			t.Fatalf("calls never settled: %v", health())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if ev := health()["events"].(map[string]any); ev["cancelledBeforeExecution"].(float64) < 100 {
		t.Fatalf("queued calls were not cancelled: %v", ev)
	}
}

// modernCall posts one stateless tools/call (with a taskId when given).
func modernCall(ctx context.Context, hc *http.Client, base, tool string, args map[string]any, taskID string) (int, []byte) {
	return modernCallAs(ctx, hc, base, "e2e", tool, args, taskID)
}

// modernCallAs is modernCall from a client of another name (admission is
// fair between clients and caps each one's calls in flight).
func modernCallAs(ctx context.Context, hc *http.Client, base, client, tool string, args map[string]any, taskID string) (int, []byte) {
	meta := map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
		"io.modelcontextprotocol/clientInfo": map[string]any{"name": client, "version": "1"}, "io.modelcontextprotocol/clientCapabilities": map[string]any{}}
	if taskID != "" {
		meta[authority.MetaTaskID] = taskID
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args, "_meta": meta}})
	req, _ := http.NewRequestWithContext(ctx, "POST", base+"/mcp", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer sekret")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data
}

// TestDrainOnSIGTERM: a write that has started committing when the
// authority gets SIGTERM finishes and is answered; calls arriving during the
// drain are refused without running; the process then exits cleanly.
func TestDrainOnSIGTERM(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir(), "--fault", "/api/block/updateBlock=latency:1500ms")
	state := t.TempDir()
	s := startServeWith(t, "--siyuan-url", k.url, "--siyuan-token", "tok", "--state-dir", state)
	a := connect(t, s.url, "2026-07-28")
	_, para := firstParagraph(a)
	upd := map[string]any{"action": "update", "id": para, "data": "committed during the drain"}
	pre := a.ok("block", with(upd, "validateOnly", true))
	base := strings.TrimSuffix(s.url, "/mcp")

	taskID := authority.NewTaskID()
	done := make(chan []byte, 1)
	go func() {
		_, body := modernCall(context.Background(), http.DefaultClient, base, "block", commitOf(upd, pre), taskID)
		done <- body
	}()
	// Wait for the commit to start (the kernel then holds updateBlock for
	// 1.5 s). Until the coordinator calls strict.CommitBarrier, "committing"
	// never shows: then wait for the write to run a little instead.
	deadline := time.Now().Add(10 * time.Second)
	var running time.Time
	committing := false
	for !committing {
		out, _ := run(t, "tasks", "status", taskID, "--state-dir", state, "--token", "sekret")
		committing = strings.Contains(out, `"committing": true`)
		if running.IsZero() && strings.Contains(out, `"state": "running"`) {
			running = time.Now()
		}
		if !running.IsZero() && time.Since(running) > 500*time.Millisecond {
			t.Log("the commit barrier is not wired into the coordinator: not checking committing")
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the commit never started: %s", out)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if committing {
		out, _ := run(t, "tasks", "cancel", taskID, "--state-dir", state, "--token", "sekret")
		if !strings.Contains(out, `"accepted": false`) || !strings.Contains(out, `"committing": true`) {
			t.Fatalf("cancelling a committing write must be rejected: %s", out)
		}
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	time.Sleep(200 * time.Millisecond)
	_, refused := modernCall(context.Background(), http.DefaultClient, base, "block", with(upd, "validateOnly", true), "")
	if !bytes.Contains(refused, []byte("write_coordinator_unavailable")) {
		t.Fatalf("a call during the drain: %s", refused)
	}
	select {
	case body := <-done:
		if !bytes.Contains(body, []byte(`"status":"committed"`)) {
			t.Fatalf("the committing write during the drain: %s", body)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the committing write was not answered")
	}
	exited := make(chan error, 1)
	go func() { exited <- s.cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("exit after the drain: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not exit after the drain")
	}
	if _, err := os.Stat(filepath.Join(state, authority.RecordFile)); !os.IsNotExist(err) {
		t.Fatal("discovery record left behind")
	}
}

// TestTasksCommand: `sisyphus tasks` asks the authority; found:false for an
// unknown id, with the note that it proves nothing.
func TestTasksCommand(t *testing.T) {
	state := t.TempDir()
	startServeWith(t, "--embedded", t.TempDir(), "--state-dir", state)
	out, err := run(t, "tasks", "status", authority.NewTaskID(), "--state-dir", state, "--token", "sekret")
	if err != nil || !strings.Contains(out, `"found": false`) || !strings.Contains(out, "proves nothing") {
		t.Fatalf("tasks status: %v %s", err, out)
	}
	if out, err := run(t, "tasks", "explode", "x", "--state-dir", state, "--token", "sekret"); err == nil || !strings.Contains(out, "want status, cancel or result") {
		t.Fatalf("bad operation: %v %s", err, out)
	}
	if out, err := run(t, "health", "--state-dir", t.TempDir()); err == nil || !strings.Contains(out, "write_coordinator_unavailable") {
		t.Fatalf("health without an authority: %v %s", err, out)
	}
}

// TestCancellationRacingACommit: Ctrl-C on `sisyphus call` during a commit
// relays a cancellation to the authority, at several points of the commit.
// Whatever the timing, the outcome is whole: either cancelled, with nothing
// written and the request still usable, or committed, written once and
// replayable; never a mutation without its ledger entry (outcome_unknown).
func TestCancellationRacingACommit(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir(), "--fault", "/api/block/getBlockKramdown=latency:150ms", "--fault", "/api/block/updateBlock=latency:150ms")
	state := t.TempDir()
	kernel := []string{"--siyuan-url", k.url, "--siyuan-token", "tok"}
	s := startServeWith(t, append(kernel, "--state-dir", state)...)
	front := append(kernel, "--state-dir", state, "--token", "sekret")
	a := connect(t, s.url, "2026-07-28")
	_, para := firstParagraph(a)
	delays := []time.Duration{20 * time.Millisecond, 300 * time.Millisecond}
	if testvars.LongOn(t) {
		for d := 0; d <= 600; d += 25 {
			delays = append(delays, time.Duration(d)*time.Millisecond)
		}
	}
	outcomes := map[string]int{}
	for i, delay := range delays {
		text := "racing write " + strings.Repeat("x", i+1)
		upd := map[string]any{"action": "update", "id": para, "data": text}
		pre := a.ok("block", with(upd, "validateOnly", true))
		raw, _ := json.Marshal(commitOf(upd, pre))
		cmd := exec.Command(bin, append([]string{"call", "block", "--json", string(raw)}, front...)...)
		var stdout bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, io.Discard
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			out, _ := run(t, "health", "--state-dir", state, "--token", "sekret")
			if strings.Contains(out, `"write": {`) && strings.Contains(out, `"running": 1`) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the commit never ran: %s", out)
			}
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(delay)
		cmd.Process.Signal(os.Interrupt)
		err := cmd.Wait()
		var res map[string]any
		if json.Unmarshal(stdout.Bytes(), &res) != nil {
			t.Fatalf("call printed %q (%v)", stdout.String(), err)
		}
		kd := a.ok("block", map[string]any{"action": "get_kramdown", "id": para})["kramdown"].(string)
		switch {
		case res["status"] == "committed":
			outcomes["committed"]++
			if err != nil || strings.Count(kd, text) != 1 {
				t.Fatalf("committed (exit %v) but the block says %q", err, kd)
			}
			if rep := a.ok("block", commitOf(upd, pre)); rep["replayed"] != true {
				t.Fatalf("a committed request must replay: %v", rep)
			}
		case errCodeOf(res) == "cancelled":
			outcomes["cancelled"]++
			if err == nil || res["writeAttempted"] != false || strings.Contains(kd, text) {
				t.Fatalf("cancelled (exit %v, %v) but the block says %q", err, res, kd)
			}
			if again := a.ok("block", commitOf(upd, pre)); again["status"] != "committed" {
				t.Fatalf("a request cancelled before its commit must still commit: %v", again)
			}
		default:
			t.Fatalf("delay %v: outcome %v", delay, res)
		}
	}
	out, _ := run(t, "health", "--state-dir", state, "--token", "sekret")
	var h map[string]any
	json.Unmarshal([]byte(out), &h)
	// A Ctrl-C that lands after the answer arrived relays nothing.
	if ev := h["events"].(map[string]any); ev["cancelRequests"].(float64) < 1 || ev["cancelRequests"].(float64) < float64(outcomes["cancelled"]) {
		t.Fatalf("Ctrl-C was not relayed to the authority: %v", ev)
	}
	t.Logf("outcomes over %d races: %v", len(delays), outcomes)
}

// TestFrontsOnTheAuthoritysEmbeddedKernel: with `serve --embedded DIR`
// holding the workspace lock, `stdio --embedded DIR` and `call --embedded
// DIR` on the same state dir read through the authority's kernel and
// delegate their writes to it.
func TestFrontsOnTheAuthoritysEmbeddedKernel(t *testing.T) {
	state, ws := t.TempDir(), t.TempDir()
	s := startServeWith(t, "--embedded", ws, "--state-dir", state)
	if info, err := os.Stat(filepath.Join(state, authority.KernelFile)); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("kernel access file: %v %v", info, err)
	}
	front := []string{"--embedded", ws, "--state-dir", state, "--token", "sekret"}
	st := stdioAgent(t, front...)
	_, para := firstParagraph(st)
	upd := map[string]any{"action": "update", "id": para, "data": "through the authority's embedded kernel"}
	pre := st.ok("block", with(upd, "validateOnly", true))
	if res, code := cli(t, "block", commitOf(upd, pre), front...); code != 0 || res["status"] != "committed" {
		t.Fatalf("cli commit: %d %v", code, res)
	}
	if kd := st.ok("block", map[string]any{"action": "get_kramdown", "id": para})["kramdown"].(string); !strings.HasPrefix(kd, "through the authority's embedded kernel") {
		t.Fatalf("read back %q", kd)
	}
	stopServe(t, s)
	if _, err := os.Stat(filepath.Join(state, authority.KernelFile)); !os.IsNotExist(err) {
		t.Fatal("kernel access file left behind")
	}
}
