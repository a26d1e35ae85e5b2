package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/histcheck"
)

// Regression tests, through the built binary, for what a careless or
// hostile client found (issue 9): each names the defect it guards.

// slowRead is a read that takes slowReadDelay: the kernel (its own
// process, as SiYuan is) stalls full-text search that long. SiYuan cannot
// be interrupted from outside; this is how a runaway read looks to Sisyphus.
var slowRead = map[string]any{"action": "fulltext", "query": "Sisyphus"}

const slowReadDelay = "60s"

// startSlowReads runs a kernel whose full-text search stalls and an
// authority on it with extra flags.
func startSlowReads(t *testing.T, extra ...string) *serveProc {
	t.Helper()
	k := startKernel(t, t.TempDir(), "--fault", "/api/search/fullTextSearchBlock=latency:"+slowReadDelay)
	return startServeWith(t, append([]string{"--siyuan-url", k.url, "--siyuan-token", "tok", "--state-dir", t.TempDir()}, extra...)...)
}

// toolResult decodes a modern-era tools/call answer into its structured
// content and whether it is an error.
func toolResult(t *testing.T, status int, body []byte) (map[string]any, bool) {
	t.Helper()
	var env struct {
		Result struct {
			IsError           bool           `json:"isError"`
			StructuredContent map[string]any `json:"structuredContent"`
		} `json:"result"`
		Error *struct{ Message string } `json:"error"`
	}
	if status != http.StatusOK || json.Unmarshal(body, &env) != nil || env.Error != nil {
		t.Fatalf("tools/call answered HTTP %d: %s", status, body)
	}
	return env.Result.StructuredContent, env.Result.IsError
}

// callAs makes one modern-era tools/call as client and decodes it.
func callAs(t *testing.T, ctx context.Context, hc *http.Client, base, client, tool string, args map[string]any) (map[string]any, bool) {
	t.Helper()
	st, body := modernCallAs(ctx, hc, base, client, tool, args, "")
	return toolResult(t, st, body)
}

func health(t *testing.T, base string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/health", nil)
	req.Header.Set("Authorization", "Bearer sekret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

func readLane(t *testing.T, base string) (running, queued float64) {
	lane := health(t, base)["lanes"].(map[string]any)["read"].(map[string]any)
	return lane["running"].(float64), lane["queued"].(float64)
}

// Defect 1: a runaway read held the read lane forever and SIGTERM waited on it.
func TestRunawayReadsDoNotHoldTheReadLane(t *testing.T) {
	t.Parallel()
	s := startSlowReads(t, "--read-timeout", "1s")
	base := strings.TrimSuffix(s.url, "/mcp")
	hc := &http.Client{}
	ctx := context.Background()

	// What SiYuan cannot bound is refused before it is sent.
	for _, stmt := range []string{
		"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c",
		"SELECT count(*) FROM blocks a JOIN blocks b ON 1=1 JOIN blocks c ON 1=1",
		"SELECT (SELECT count(*) FROM blocks b2 WHERE b2.content < b1.content) FROM blocks b1",
	} {
		m, isErr := callAs(t, ctx, hc, base, "e2e", "search", map[string]any{"action": "query_sql", "stmt": stmt})
		if !isErr || errCodeOf(m) != "invalid_arguments" || m["writeAttempted"] != nil && m["writeAttempted"] != false {
			t.Fatalf("%s: %v", stmt, m)
		}
	}

	// Twice the lane's width of slow reads: each ends at the deadline with
	// read_timeout, and the lane serves other reads right after.
	var wg sync.WaitGroup
	codes := make(chan string, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, body := modernCallAs(ctx, hc, base, "runaway", "search", slowRead, "")
			m, _ := toolResult(t, st, body)
			if m["complete"] != false {
				codes <- "an answer without complete:false"
				return
			}
			codes <- errCodeOf(m)
		}()
	}
	wg.Wait()
	close(codes)
	for c := range codes {
		if c != "read_timeout" {
			t.Fatalf("a slow read answered %q, want read_timeout", c)
		}
	}
	if running, queued := readLane(t, base); running != 0 || queued != 0 {
		t.Fatalf("timed-out reads still hold the lane: running %v queued %v", running, queued)
	}
	if m, isErr := callAs(t, ctx, hc, base, "e2e", "system", map[string]any{"action": "version"}); isErr {
		t.Fatalf("a read after the timeouts: %v", m)
	}
}

// Defect 1: a read the client gives up on gives its slot back at once, and
// a drain does not wait on reads.
func TestCancelledReadsFreeTheLaneAndDrainSkipsThem(t *testing.T) {
	t.Parallel()
	s := startSlowReads(t) // the default 30 s deadline
	base := strings.TrimSuffix(s.url, "/mcp")
	hc := &http.Client{}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := range 4 { // four clients: one alone may hold only three read slots
		wg.Add(1)
		go func() {
			defer wg.Done()
			modernCallAs(ctx, hc, base, fmt.Sprint("client-", i), "search", slowRead, "")
		}()
	}
	waitFor(t, "the lane to fill", func() bool { r, _ := readLane(t, base); return r == 4 })
	cancel() // the clients give up
	wg.Wait()
	waitFor(t, "cancelled reads to give back their slots", func() bool { r, _ := readLane(t, base); return r == 0 })
	if m, isErr := callAs(t, context.Background(), hc, base, "e2e", "notebook", map[string]any{"action": "list"}); isErr {
		t.Fatalf("a read after the cancellations: %v", m)
	}

	// Fill the lane again and stop the authority: it exits without waiting.
	for i := range 4 {
		go modernCallAs(context.Background(), hc, base, fmt.Sprint("client-", i), "search", slowRead, "")
	}
	waitFor(t, "the lane to fill", func() bool { r, _ := readLane(t, base); return r == 4 })
	start := time.Now()
	stopWithSIGTERM(t, s.cmd, "serve with four slow reads", 10*time.Second)
	t.Logf("drain with four slow reads running took %v", time.Since(start))
}

// waitFor polls cond for at most ten seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// One client floods the read lane with slow reads; another client's reads
// and strict writes still complete at once.
func TestFloodedReadLaneStillServesOthers(t *testing.T) {
	t.Parallel()
	const deadline = 2 * time.Second
	s := startSlowReads(t, "--read-timeout", deadline.String())
	base := strings.TrimSuffix(s.url, "/mcp")
	hc := &http.Client{}
	flood, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for flood.Err() == nil {
				modernCallAs(flood, hc, base, "flooder", "search", slowRead, "")
			}
		}()
	}
	defer func() { stop(); wg.Wait() }()
	waitFor(t, "the flood to take its share of the lane", func() bool { r, q := readLane(t, base); return r == 3 && q > 0 })

	// The flood holds three of the four read slots and queues the rest; the
	// other client's calls start at once in the fourth, so each ends well
	// within one read deadline (waiting for a flood read to end would take
	// a whole deadline).
	bounded := func(tool string, args map[string]any) map[string]any {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		defer cancel()
		start := time.Now()
		st, body := modernCallAs(ctx, hc, base, "worker", tool, args, "")
		if st == 0 {
			t.Fatalf("%s %v did not complete within %v under the flood", tool, args["action"], deadline)
		}
		m, isErr := toolResult(t, st, body)
		if isErr {
			t.Fatalf("%s %v under the flood: %v", tool, args["action"], m)
		}
		t.Logf("%s %s took %v under the flood", tool, args["action"], time.Since(start).Round(time.Millisecond))
		return m
	}
	nb := bounded("notebook", map[string]any{"action": "list"})["notebooks"].([]any)[0].(map[string]any)["id"].(string)
	doc := bounded("document", map[string]any{"action": "get_child_docs", "notebook": nb})["data"].([]any)[0].(map[string]any)["id"].(string)
	para := bounded("block", map[string]any{"action": "get_children", "id": doc})["data"].([]any)[0].(map[string]any)["id"].(string)
	for i := range 3 {
		upd := map[string]any{"action": "update", "id": para, "data": fmt.Sprintf("written under a flood, %d", i)}
		pre := bounded("block", with(upd, "validateOnly", true))
		if res := bounded("block", commitOf(upd, pre)); res["status"] != "committed" {
			t.Fatalf("commit under the flood: %v", res)
		}
	}
	if r, q := readLane(t, base); r != 3 || q == 0 {
		t.Fatalf("the flood was not holding its share of the lane throughout: running %v queued %v", r, q)
	}
}

// Defect 4: a front on the authority's state dir finds the token the
// authority uses, however it was given; a wrong token gets advice that fits.
func TestFrontFindsTheAuthoritysToken(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		env  []string
		args []string
	}{
		{"flag", nil, []string{"--token", "from-the-flag"}},
		{"env", []string{"SISYPHUS_TOKEN=from-the-env"}, nil},
		{"generated", nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			state, ws := t.TempDir(), t.TempDir()
			// Later entries win: only the authority has the env token.
			startServeEnv(t, append([]string{"SISYPHUS_TOKEN="}, c.env...), append([]string{"--embedded", ws, "--state-dir", state}, c.args...)...)
			front := []string{"--embedded", ws, "--state-dir", state}
			list, code := cliWith(t, []string{"SISYPHUS_TOKEN="}, "notebook", map[string]any{"action": "list"}, front...)
			if code != 0 {
				t.Fatalf("read: %d %v", code, list)
			}
			nb := list["notebooks"].([]any)[0].(map[string]any)["id"].(string)
			create := map[string]any{"action": "create", "notebook": nb, "path": "/From the front " + c.name}
			pre, code := cliWith(t, []string{"SISYPHUS_TOKEN="}, "document", with(create, "validateOnly", true), front...)
			if code != 0 {
				t.Fatalf("preflight through the front: %d %v", code, pre)
			}
			res, code := cliWith(t, []string{"SISYPHUS_TOKEN="}, "document", commitOf(create, pre), front...)
			if code != 0 || res["status"] != "committed" {
				t.Fatalf("commit through the front: %d %v", code, res)
			}
			wrong, code := cliWith(t, []string{"SISYPHUS_TOKEN="}, "document", with(create, "validateOnly", true), append(front, "--token", "wrong")...)
			e, _ := wrong["error"].(map[string]any)
			if code == 0 || errCodeOf(wrong) != "write_coordinator_unavailable" ||
				!strings.Contains(fmt.Sprint(e["message"]), "--token") || strings.Contains(fmt.Sprint(e["action"]), "--state-dir") {
				t.Fatalf("wrong token: %d %v", code, wrong)
			}
		})
	}
}

// Defect 5, each smaller item that an agent meets on the wire.
func TestSmallerDefectsThroughTheBinary(t *testing.T) {
	t.Parallel()
	s := startServeWith(t, "--embedded", t.TempDir(), "--state-dir", t.TempDir())
	base := strings.TrimSuffix(s.url, "/mcp")
	a := connect(t, s.url, "2025-11-25")
	_, para := firstParagraph(a)

	t.Run("wrong JSON types carry a code", func(t *testing.T) {
		for _, args := range []map[string]any{
			{"action": "update", "id": para, "data": "x", "validateOnly": "true"},
			{"action": "get_kramdown", "id": 5},
		} {
			m, isErr := a.call("block", args)
			e, _ := m["error"].(map[string]any)
			if !isErr || errCodeOf(m) != "invalid_arguments" || e["message"] == "" {
				t.Errorf("%v: %v", args, m)
			}
		}
	})
	t.Run("health and tasks check Origin and Host", func(t *testing.T) {
		for _, path := range []string{"/health", "/tasks/00000000-0000-4000-8000-000000000000"} {
			for _, h := range []struct {
				header, value string
				status        int
				code          string
			}{
				{"Origin", "http://evil.example", http.StatusForbidden, "forbidden"},
				{"Host", "evil.example", http.StatusMisdirectedRequest, "misdirected_request"},
			} {
				req, _ := http.NewRequest("GET", base+path, nil)
				req.Header.Set("Authorization", "Bearer sekret")
				if h.header == "Host" {
					req.Host = h.value
				} else {
					req.Header.Set(h.header, h.value)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != h.status || !strings.Contains(string(body), `"`+h.code+`"`) || resp.Header.Get("Sisyphus-Server") == "" {
					t.Errorf("%s with %s %s: %d %s", path, h.header, h.value, resp.StatusCode, body)
				}
			}
		}
	})
	t.Run("an uppercase requestId is answered in the issued spelling", func(t *testing.T) {
		upd := map[string]any{"action": "set_attrs", "id": para, "attrs": map[string]any{"custom-case": "1"}}
		pre := a.ok("block", with(upd, "validateOnly", true))
		issued := pre["requestId"].(string)
		args := commitOf(upd, pre)
		args["requestId"] = strings.ToUpper(issued)
		if res := a.ok("block", args); res["requestId"] != issued {
			t.Fatalf("commit answered requestId %v, issued %q", res["requestId"], issued)
		}
		if rep := a.ok("block", args); rep["requestId"] != issued || rep["replayed"] != true {
			t.Fatalf("replay answered %v", rep)
		}
	})
	t.Run("dot segments in human paths are refused", func(t *testing.T) {
		for _, p := range []string{"/Sisyphus Demo/../../../tmp/pwned", "/Sisyphus Demo/./x", "/Sisyphus Demo/a/.."} {
			m := a.fails("fs", map[string]any{"action": "write", "path": p, "content": "x", "validateOnly": true}, "invalid_arguments")
			if !strings.Contains(fmt.Sprint(m), "..") && !strings.Contains(fmt.Sprint(m), "dot") {
				t.Errorf("%s: the refusal does not say why: %v", p, m)
			}
		}
		if tree := a.ok("fs", map[string]any{"action": "ls", "path": "/Sisyphus Demo"}); strings.Contains(fmt.Sprint(tree), "pwned") {
			t.Fatalf("a dot-segment path was written: %v", tree)
		}
	})
	t.Run("text the kernel cannot store is refused", func(t *testing.T) {
		a.fails("block", map[string]any{"action": "update", "id": para, "data": "a\x00b", "validateOnly": true}, "invalid_arguments")
		// A Go client would mend these before sending; send the bytes raw.
		for _, data := range []string{"\"bad \xff utf-8\"", `"lone \ud800 surrogate"`, `"low \udc00 first"`, `"end \ud83d"`} {
			body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"block","arguments":{"action":"update","id":"` + para +
				`","validateOnly":true,"data":` + data + `},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
				`"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
			req, _ := http.NewRequest("POST", s.url, strings.NewReader(body))
			for k, v := range map[string]string{"Authorization": "Bearer sekret", "Content-Type": "application/json",
				"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "block"} {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if m, isErr := toolResult(t, resp.StatusCode, raw); !isErr || errCodeOf(m) != "invalid_arguments" {
				t.Errorf("data %s: %d %s", data, resp.StatusCode, raw)
			}
		}
	})
	t.Run("a fulltext filter that matches nothing is an error", func(t *testing.T) {
		m, isErr := a.call("search", map[string]any{"action": "fulltext", "query": "Sisyphus", "paths": []string{"/No Such Notebook"}})
		if !isErr || errCodeOf(m) != "not_found" {
			t.Fatalf("fulltext with a filter naming nothing: %v", m)
		}
	})
	t.Run("errors say what to send next", func(t *testing.T) {
		upd := map[string]any{"action": "update", "id": para, "data": "needs a hash"}
		pre := a.ok("block", with(upd, "validateOnly", true))
		m := a.fails("block", with(upd, "requestId", pre["requestId"]), "precondition_required")
		if m["error"].(map[string]any)["expectedField"] != "expectedStateHash" {
			t.Errorf("precondition_required names no expectedField: %v", m)
		}
		other := map[string]any{"action": "set_attrs", "id": para, "attrs": map[string]any{"custom-bump": "1"}}
		a.ok("block", commitOf(other, a.ok("block", with(other, "validateOnly", true))))
		m = a.fails("block", commitOf(upd, pre), "state_changed")
		if !strings.Contains(fmt.Sprint(m["error"]), "fresh preflight") {
			t.Errorf("state_changed does not ask for a fresh read: %v", m)
		}
	})
	t.Run("help examples are complete and hints honest", func(t *testing.T) {
		tools, err := a.cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range tools.Tools {
			writes := true // every tool has a write (search: find_replace)
			if idem := tool.Annotations != nil && tool.Annotations.IdempotentHint; idem == writes {
				t.Errorf("%s: idempotentHint %v", tool.Name, idem)
			}
		}
		for _, action := range []string{"update", "append", "insert"} {
			ex := a.ok("block", map[string]any{"action": "help", "topic": action})["example"].(map[string]any)
			if len(ex) < 3 || ex["validateOnly"] != true {
				t.Errorf("block %s example: %v", action, ex)
			}
		}
	})
}

// Defect 5: stdio answered nothing for calls running when stdin ended.
func TestStdioAnswersCallsRunningAtEOF(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir(), "--fault", "/api/notebook/lsNotebooks=latency:800ms")
	cmd := exec.Command(bin, "stdio", "--siyuan-url", k.url, "--siyuan-token", "tok", "--state-dir", t.TempDir())
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"eof","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"notebook","arguments":{"action":"list"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"notebook","arguments":{"action":"list"}}}`,
	}
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n") // EOF right after
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	answered := map[float64]bool{}
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m struct {
			ID     float64         `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal(sc.Bytes(), &m) == nil && m.Result != nil {
			answered[m.ID] = true
		}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("stdio exit: %v", err)
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Signal(syscall.SIGKILL)
		t.Fatal("stdio did not exit after answering")
	}
	for _, id := range []float64{1, 2, 3} {
		if !answered[id] {
			t.Errorf("request %v got no answer before exit: %v", id, answered)
		}
	}
}

// TestHardeningFlow and TestHardeningLive run the same agent-visible
// checks (defects 3 and 5 among them) against the embedded kernel and, when SISYPHUS_LIVE_SIYUAN_URL and
// SISYPHUS_LIVE_SIYUAN_TOKEN are set, a real SiYuan: the refusals must be the
// same on both, and what they refuse must not stop what should work.
func TestHardeningFlow(t *testing.T) {
	t.Parallel()
	s := startServeWith(t, "--embedded", t.TempDir(), "--state-dir", t.TempDir())
	hardeningFlow(t, s, connect(t, s.url, "2026-07-28"), "Hardening")
}

func TestHardeningLive(t *testing.T) {
	s := startLiveServe(t)
	hardeningFlow(t, s, connect(t, s.url, "2025-11-25"), fmt.Sprintf("sisyphus-live-hardening-%d", time.Now().UnixNano()))
}

// hardeningFlow works only inside a notebook it creates and removes.
func hardeningFlow(t *testing.T, s *serveProc, a *agent, name string) {
	nb := a.strictDo("notebook", map[string]any{"action": "create", "name": name})["notebook"].(string)
	s.config(t, "permission", nb, "rwd")
	s.config(t, "enable", "notebook.remove")
	defer a.strictDo("notebook", map[string]any{"action": "remove", "notebook": nb, "confirm": true})
	doc := a.strictDo("document", map[string]any{"action": "create", "notebook": nb, "path": "/Target", "markdown": "zebracorn first\n\nsecond"})["id"].(string)
	para := a.ok("block", map[string]any{"action": "get_children", "id": doc})["data"].([]any)[0].(map[string]any)["id"].(string)
	before := a.ok("block", map[string]any{"action": "get_kramdown", "id": para})["kramdown"]

	const gone = "20200101000000-aaaaaaa"
	for _, c := range []struct {
		tool string
		args map[string]any
		code string
	}{
		{"block", map[string]any{"action": "update", "id": gone, "data": "x"}, "not_found"},
		{"block", map[string]any{"action": "append", "parentID": gone, "data": "x"}, "not_found"},
		{"block", map[string]any{"action": "insert", "previousID": gone, "data": "x"}, "not_found"},
		{"block", map[string]any{"action": "update", "id": para, "data": "a\x00b"}, "invalid_arguments"},
		{"document", map[string]any{"action": "create", "notebook": gone, "path": "/x"}, "not_found"},
		{"document", map[string]any{"action": "create", "notebook": "../conf", "path": "/x"}, "invalid_arguments"},
		{"fs", map[string]any{"action": "write", "path": "/" + name + "-missing/x", "content": "x"}, "not_found"},
		{"fs", map[string]any{"action": "write", "path": "/" + name + "/../../tmp/pwned", "content": "x"}, "invalid_arguments"},
		{"notebook", map[string]any{"action": "create", "name": ""}, "invalid_arguments"},
		{"notebook", map[string]any{"action": "create", "name": "  "}, "invalid_arguments"},
	} {
		if m := a.fails(c.tool, with(c.args, "validateOnly", true), c.code); m["writeAttempted"] != false || m["requestId"] != nil {
			t.Errorf("%s %v: a refused preflight issues nothing: %v", c.tool, c.args, m)
		}
	}
	// SiYuan may list a new block's IAL attributes in another order from one
	// read to the next; the text is what must not change.
	if after := a.ok("block", map[string]any{"action": "get_kramdown", "id": para})["kramdown"]; histcheck.Content(after.(string)) != histcheck.Content(before.(string)) {
		t.Fatalf("a refused preflight changed the block: %q, was %q", after, before)
	}

	// An uppercase requestId commits and answers in the issued spelling.
	upd := map[string]any{"action": "update", "id": para, "data": "zebracorn updated"}
	pre := a.ok("block", with(upd, "validateOnly", true))
	args := commitOf(upd, pre)
	args["requestId"] = strings.ToUpper(pre["requestId"].(string))
	if res := a.ok("block", args); res["requestId"] != pre["requestId"] || res["status"] != "committed" {
		t.Fatalf("uppercase requestId: %v", res)
	}

	// The SQL guard refuses what SiYuan cannot bound and admits the rest.
	m, isErr := a.call("search", map[string]any{"action": "query_sql", "stmt": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c"})
	if !isErr || errCodeOf(m) != "invalid_arguments" {
		t.Fatalf("recursive CTE: %v", m)
	}
	rows := a.ok("search", map[string]any{"action": "query_sql", "stmt": "SELECT b.id FROM blocks b JOIN blocks d ON d.id = b.root_id WHERE d.id = '" + doc + "' LIMIT 5"})
	if rows["rowCount"] == nil {
		t.Fatalf("an admitted join: %v", rows)
	}

	// A paths filter that names nothing is refused; one that names the
	// notebook or the document still searches (SiYuan indexes within seconds).
	for _, p := range []string{"No Such Notebook", gone, nb + "/" + gone + ".sy", nb + "/nope"} {
		if m, isErr := a.call("search", map[string]any{"action": "fulltext", "query": "zebracorn", "paths": []string{p}}); !isErr || errCodeOf(m) != "not_found" {
			t.Fatalf("fulltext paths %q: %v", p, m)
		}
	}
	for _, p := range []string{nb, nb + "/" + doc + ".sy"} {
		var found bool
		for deadline := time.Now().Add(15 * time.Second); !found && time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
			m := a.ok("search", map[string]any{"action": "fulltext", "query": "zebracorn", "paths": []string{p}})
			found = strings.Contains(fmt.Sprint(m), para)
		}
		if !found {
			t.Fatalf("fulltext within %q never found the block", p)
		}
	}
}
