package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sisyphus-go/sisyphus/internal/testvars"
)

// serveProc is a running `sisyphus serve`.
type serveProc struct {
	cmd      *exec.Cmd
	url      string
	stateDir string
}

// config runs `sisyphus config ARGS` against this authority, as the person
// who runs it, and fails the test if it fails.
func (s *serveProc) config(t *testing.T, args ...string) string {
	t.Helper()
	if s.stateDir == "" {
		t.Fatal("config needs a serve started with --state-dir")
	}
	out, err := exec.Command(bin, append(append([]string{"config"}, args...), "--state-dir", s.stateDir)...).CombinedOutput()
	if err != nil {
		t.Fatalf("sisyphus config %v: %v\n%s", args, err, out)
	}
	if len(args) == 3 && args[0] == "permission" && args[2] == "none" {
		// The configuration lives in the workspace: on a real SiYuan
		// the next test would find this notebook still hidden (SiYuan
		// drops a removed notebook from its index some seconds after
		// it is gone). It goes back to the default before the test's
		// notebooks are removed (cleanups run last first).
		t.Cleanup(func() {
			cmd := exec.Command(bin, "config", "permission", args[1], "r", "--state-dir", s.stateDir)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Logf("sisyphus config permission %s r: %v\n%s", args[1], err, out)
			}
		})
	}
	return string(out)
}

// startServeWith runs serve with extra flags and waits for its ready line.
func startServeWith(t *testing.T, args ...string) *serveProc {
	t.Helper()
	return startServeEnv(t, nil, append([]string{"--token", "sekret"}, args...)...)
}

// startServeEnv runs serve with env added to this process's environment
// and with exactly args (no --token of its own).
func startServeEnv(t *testing.T, env []string, args ...string) *serveProc {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = io.Discard
	// SISYPHUS_TEST_SERVE_LOG keeps the servers' logs (appended) for a
	// person looking into a test.
	if p := testvars.TestServeLog.Value(); p != "" {
		if f, err := os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err == nil {
			cmd.Stderr = f
			t.Cleanup(func() { f.Close() })
		}
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := readyRE.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
		close(urls)
	}()
	select {
	case u, ok := <-urls:
		if !ok {
			t.Fatal("serve exited before it was ready")
		}
		sp := &serveProc{cmd: cmd, url: u}
		for i, a := range args {
			if a == "--state-dir" && i+1 < len(args) {
				sp.stateDir = args[i+1]
			}
		}
		return sp
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not print its ready line")
	}
	return nil
}

// agent is an MCP client session that calls tools and decodes results.
type agent struct {
	t  *testing.T
	cs *sdk.ClientSession
}

func connect(t *testing.T, url, era string) *agent { return connectWith(t, url, era, "agent", nil) }

// connectWith is connect for a named client with options (handlers for
// elicitation, list changes).
func connectWith(t *testing.T, url, era, name string, opts *sdk.ClientOptions) *agent {
	t.Helper()
	client := sdk.NewClient(&sdk.Implementation{Name: name, Version: "1"}, opts)
	tr := &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{"sekret"}}, MaxRetries: -1}
	cs, err := client.Connect(context.Background(), tr, &sdk.ClientSessionOptions{ProtocolVersion: era})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return &agent{t: t, cs: cs}
}

// call returns the structured result and whether it is an error.
func (a *agent) call(tool string, args map[string]any) (map[string]any, bool) {
	a.t.Helper()
	res, err := a.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		a.t.Fatalf("%s %v: %v", tool, args, err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var m map[string]any
	json.Unmarshal(b, &m)
	return m, res.IsError
}

func (a *agent) ok(tool string, args map[string]any) map[string]any {
	a.t.Helper()
	m, isErr := a.call(tool, args)
	if isErr {
		a.t.Fatalf("%s %v: %v", tool, args, m)
	}
	return m
}

func (a *agent) fails(tool string, args map[string]any, code string) map[string]any {
	a.t.Helper()
	m, isErr := a.call(tool, args)
	e, _ := m["error"].(map[string]any)
	if !isErr || e == nil || e["code"] != code || e["message"] == "" || e["action"] == "" {
		a.t.Fatalf("%s %v: got %v, want error %s with message and action", tool, args, m, code)
	}
	if _, ok := m["writeAttempted"]; !ok {
		a.t.Fatalf("%s: a write failure must say writeAttempted: %v", code, m)
	}
	return m
}

func with(m map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

func commitOf(args, pre map[string]any) map[string]any {
	out := with(args, "requestId", pre["requestId"])
	if f, ok := pre["preconditionField"].(string); ok {
		out[f] = pre[f]
	}
	return out
}

// firstParagraph finds the welcome document's first paragraph.
func firstParagraph(a *agent) (doc, para string) {
	nbs := a.ok("notebook", map[string]any{"action": "list"})["notebooks"].([]any)
	nb := nbs[0].(map[string]any)["id"].(string)
	doc = a.ok("document", map[string]any{"action": "get_child_docs", "notebook": nb})["data"].([]any)[0].(map[string]any)["id"].(string)
	kids := a.ok("block", map[string]any{"action": "get_children", "id": doc})["data"].([]any)
	return doc, kids[0].(map[string]any)["id"].(string)
}

// TestStrictWritesOverMCP drives the strict protocol through the real
// endpoint in both eras: preflight, commit, replay and each failure code an
// agent can provoke.
func TestStrictWritesOverMCP(t *testing.T) {
	s := startServeWith(t, "--embedded", t.TempDir(), "--state-dir", t.TempDir())
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			a := connect(t, s.url, era)
			b := connect(t, s.url, era)
			_, para := firstParagraph(a)
			upd := map[string]any{"action": "update", "id": para, "data": "written by " + era}

			pre := a.ok("block", with(upd, "validateOnly", true))
			if pre["preconditionField"] != "expectedStateHash" || pre["writeAttempted"] != false || len(pre["expectedStateHash"].(string)) < 4 {
				t.Fatalf("preflight: %v", pre)
			}
			a.fails("block", upd, "precondition_required")
			a.fails("block", with(upd, "requestId", pre["requestId"], "expectedStateHash", otherCredential(pre["expectedStateHash"].(string))), "preflight_lease_invalid")

			res := a.ok("block", commitOf(upd, pre))
			if res["status"] != "committed" || res["writeSafetyGuaranteed"] != true || res["replayed"] != false {
				t.Fatalf("commit: %v", res)
			}
			rep := a.ok("block", commitOf(upd, pre))
			if rep["replayed"] != true || rep["writeAttempted"] != false {
				t.Fatalf("replay: %v", rep)
			}
			a.fails("block", commitOf(with(upd, "data", "other"), pre), "idempotency_conflict")

			// Two agents preflight the same state; the second to commit loses.
			x := map[string]any{"action": "update", "id": para, "data": "agent A " + era}
			y := map[string]any{"action": "update", "id": para, "data": "agent B " + era}
			px := a.ok("block", with(x, "validateOnly", true))
			py := b.ok("block", with(y, "validateOnly", true))
			a.ok("block", commitOf(x, px))
			lost := b.fails("block", commitOf(y, py), "state_changed")
			if lost["expectedHash"] != py["expectedStateHash"] || lost["currentHash"] == nil || lost["writeAttempted"] != false {
				t.Fatalf("state_changed: %v", lost)
			}
			kd := a.ok("block", map[string]any{"action": "get_kramdown", "id": para})["kramdown"].(string)
			if !strings.HasPrefix(kd, "agent A") {
				t.Fatalf("the losing write must not land: %s", kd)
			}
		})
	}
}

// TestStrictRestartAndUnknown: the ledger survives a restart, leases do not,
// and a write whose authority died mid-flight stays outcome_unknown.
func TestStrictRestartAndUnknown(t *testing.T) {
	state, ws := t.TempDir(), t.TempDir()
	// A separate kernel process, so the authority can die while the kernel
	// is still applying a slow write.
	k := startKernel(t, ws, "--fault", "/api/block/updateBlock=latency:2s")
	s := startServeWith(t, "--siyuan-url", k.url, "--siyuan-token", "tok", "--state-dir", state)
	a := connect(t, s.url, "2025-11-25")
	_, para := firstParagraph(a)

	done := map[string]any{"action": "set_attrs", "id": para, "attrs": map[string]any{"custom-done": "1"}}
	doneRes := a.ok("block", commitOf(done, a.ok("block", with(done, "validateOnly", true))))
	pending := map[string]any{"action": "set_attrs", "id": para, "attrs": map[string]any{"custom-pending": "1"}}
	pendingPre := a.ok("block", with(pending, "validateOnly", true))
	slow := map[string]any{"action": "update", "id": para, "data": "slow write"}
	slowPre := a.ok("block", with(slow, "validateOnly", true))

	// Commit the slow write and kill the authority while the kernel applies it.
	go a.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "block", Arguments: commitOf(slow, slowPre)})
	time.Sleep(500 * time.Millisecond)
	s.cmd.Process.Signal(syscall.SIGKILL)
	s.cmd.Wait()
	time.Sleep(2 * time.Second) // the kernel finishes applying

	s2 := startServeWith(t, "--siyuan-url", k.url, "--siyuan-token", "tok", "--state-dir", state)
	b := connect(t, s2.url, "2026-07-28")
	// The lease died with the process.
	b.fails("block", commitOf(pending, pendingPre), "preflight_lease_invalid")
	// The ledger did not: the committed request replays.
	rep := b.ok("block", with(done, "requestId", doneRes["requestId"], "expectedStateHash", "ffff"))
	if rep["replayed"] != true || rep["requestId"] != doneRes["requestId"] {
		t.Fatalf("replay after restart: %v", rep)
	}
	// The write in flight when the authority died is unknown, forever, and never re-run.
	u := b.fails("block", commitOf(slow, slowPre), "outcome_unknown")
	if u["requestId"] != slowPre["requestId"] {
		t.Fatalf("outcome_unknown must name the request: %v", u)
	}
}

// TestStdioWithoutCoordinator: while serve holds the state dir's ledger, a
// stdio process serves reads and refuses writes, writing nothing.
func TestStdioWithoutCoordinator(t *testing.T) {
	state := t.TempDir()
	startServeWith(t, "--embedded", t.TempDir(), "--state-dir", state)
	client := sdk.NewClient(&sdk.Implementation{Name: "e2e", Version: "1"}, nil)
	tr := &sdk.CommandTransport{Command: exec.Command(bin, "stdio", "--embedded", t.TempDir(), "--state-dir", state)}
	cs, err := client.Connect(context.Background(), tr, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	a := &agent{t: t, cs: cs}
	_, para := firstParagraph(a)
	a.fails("block", map[string]any{"action": "update", "id": para, "data": "x", "validateOnly": true}, "write_coordinator_unavailable")
}

// strictDo preflights and commits one write through MCP and returns the commit.
func (a *agent) strictDo(tool string, args map[string]any) map[string]any {
	a.t.Helper()
	pre := a.ok(tool, with(args, "validateOnly", true))
	if pre["writeAttempted"] != false || pre["requestId"] == nil {
		a.t.Fatalf("%s %v preflight: %v", tool, args, pre)
	}
	res := a.ok(tool, commitOf(args, pre))
	if res["status"] != "committed" || res["writeSafetyGuaranteed"] != true {
		a.t.Fatalf("%s %v commit: %v", tool, args, res)
	}
	return res
}

// TestStrictToolsOverMCP walks every tool's strict writes through the real
// endpoint: notebook, document, fs and block.
func TestStrictToolsOverMCP(t *testing.T) {
	s := startServeWith(t, "--embedded", t.TempDir(), "--state-dir", t.TempDir())
	strictToolsFlow(t, s, connect(t, s.url, "2026-07-28"), "E2E")
}

// TestStrictToolsLive runs the same walk against a real SiYuan when
// SISYPHUS_LIVE_SIYUAN_URL and SISYPHUS_LIVE_SIYUAN_TOKEN are set. It works
// only inside a notebook it creates and removes.
func TestStrictToolsLive(t *testing.T) {
	s := startLiveServe(t)
	strictToolsFlow(t, s, connect(t, s.url, "2025-11-25"), fmt.Sprintf("sisyphus-live-%d", time.Now().UnixNano()))
}

// startLiveServe runs an authority on the real SiYuan named by
// SISYPHUS_LIVE_SIYUAN_URL and SISYPHUS_LIVE_SIYUAN_TOKEN, or skips.
func startLiveServe(t *testing.T) *serveProc {
	t.Helper()
	url, tok := testvars.Live(t)
	return startServeWith(t, "--siyuan-url", url, "--siyuan-token", tok, "--state-dir", t.TempDir())
}

func strictToolsFlow(t *testing.T, s *serveProc, a *agent, name string) {
	nb := a.strictDo("notebook", map[string]any{"action": "create", "name": name + " Notebook"})["notebook"].(string)
	// A new notebook is read-only for agents until the person grants more;
	// the removals below are off until the person enables them.
	a.fails("notebook", map[string]any{"action": "rename", "notebook": nb, "name": name, "validateOnly": true}, "permission_denied")
	s.config(t, "permission", nb, "rwd")
	s.config(t, "enable", "document.remove")
	s.config(t, "enable", "notebook.remove")
	a.strictDo("notebook", map[string]any{"action": "rename", "notebook": nb, "name": name})
	if got := a.ok("notebook", map[string]any{"action": "get_conf", "notebook": nb})["name"]; got != name {
		t.Fatalf("notebook name: %v", got)
	}

	doc := a.strictDo("document", map[string]any{"action": "create", "notebook": nb, "path": "/Plan", "markdown": "first line\n\nsecond line"})["id"].(string)
	a.strictDo("document", map[string]any{"action": "rename", "id": doc, "title": "Plan v2"})
	look := a.ok("document", map[string]any{"action": "lookup", "id": doc})["documents"].([]any)[0].(map[string]any)
	if look["hpath"] != "/Plan v2" {
		t.Fatalf("hpath after rename: %v", look)
	}

	a.strictDo("fs", map[string]any{"action": "write", "path": "/" + name + "/Notes", "content": "fs body"})
	ls := a.ok("fs", map[string]any{"action": "ls", "path": "/" + name})
	if !strings.Contains(fmt.Sprint(ls), "Notes") {
		t.Fatalf("fs ls: %v", ls)
	}
	a.strictDo("fs", map[string]any{"action": "rm", "path": "/" + name + "/Notes", "confirm": true})

	kids := a.ok("block", map[string]any{"action": "get_children", "id": doc})["data"].([]any)
	para := kids[0].(map[string]any)["id"].(string)
	a.strictDo("block", map[string]any{"action": "replace", "id": para, "old": "first", "new": "1st"})
	if kd := a.ok("block", map[string]any{"action": "get_kramdown", "id": para})["kramdown"].(string); !strings.HasPrefix(kd, "1st line") {
		t.Fatalf("replace: %s", kd)
	}
	a.strictDo("document", map[string]any{"action": "remove", "id": doc, "confirm": true})
	a.strictDo("notebook", map[string]any{"action": "remove", "notebook": nb, "confirm": true})
}

// otherCredential is a well-formed credential that is not cred: "0000",
// unless cred happens to start so (one state in 65,536), then "1111".
func otherCredential(cred string) string {
	if strings.HasPrefix(strings.TrimPrefix(cred, "sha256:v1:"), "0000") {
		return "1111"
	}
	return "0000"
}
