package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/testvars"
)

// Regression tests, through the built binary, for what a hostile client
// could exhaust: connections, memory, the upload staging slots, legacy
// sessions and event streams, and the write lane. Each is written as the
// attack it guards against.

// limitsServe runs an authority on a kernel of its own with extra flags and
// returns it with its base URL (without /mcp) and its host:port.
func limitsServe(t *testing.T, extra ...string) (s *serveProc, base, addr string) {
	t.Helper()
	k := startKernel(t, t.TempDir())
	s = startServeWith(t, append([]string{"--siyuan-url", k.url, "--siyuan-token", "tok", "--state-dir", t.TempDir()}, extra...)...)
	base = strings.TrimSuffix(s.url, "/mcp")
	u, _ := url.Parse(base)
	return s, base, u.Host
}

// dialRaw opens a connection to addr and writes head.
func dialRaw(t *testing.T, addr, head string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	if head != "" {
		if _, err := io.WriteString(c, head); err != nil {
			t.Fatalf("write: %v", err)
		}
	}
	return c
}

// mcpHead is the head of a POST /mcp with a body of n bytes declared (-1:
// chunked).
func mcpHead(addr string, n int) string {
	length := fmt.Sprintf("Content-Length: %d", n)
	if n < 0 {
		length = "Transfer-Encoding: chunked"
	}
	return "POST /mcp HTTP/1.1\r\nHost: " + addr + "\r\nAuthorization: Bearer sekret\r\nContent-Type: application/json\r\n" +
		"Accept: application/json, text/event-stream\r\n" + length + "\r\n\r\n"
}

// healthOK asks /health once, on a new connection, and reports whether it
// answered 200.
func healthOK(base string) bool {
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	req, _ := http.NewRequest("GET", base+"/health", nil)
	req.Header.Set("Authorization", "Bearer sekret")
	resp, err := hc.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode == 200
}

func connStats(t *testing.T, base string) map[string]any {
	t.Helper()
	c, ok := health(t, base)["connections"].(map[string]any)
	if !ok {
		t.Fatalf("/health has no connections: %v", health(t, base))
	}
	return c
}

// TestTricklingBodiesAreCut: 300 connections trickle a body, a byte every
// 300 ms, to /mcp and to the settings sign-in. /health keeps answering
// while they do, and each trickle is cut off by the body rules (a 1 s
// stall and grace here, hidden flags of serve), its connection closed.
func TestTricklingBodiesAreCut(t *testing.T) {
	_, base, addr := limitsServe(t, "--body-stall", "1s", "--body-timeout", "4s")
	const trickles = 300
	heads := []string{
		mcpHead(addr, 100000),
		"POST /settings/login HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\n",
	}
	var wg sync.WaitGroup
	var open atomic.Int32
	statuses := make(chan string, trickles)
	for i := 0; i < trickles; i++ {
		c := dialRaw(t, addr, heads[i%2])
		open.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer open.Add(-1)
			go func() { // a byte every 300 ms until the server hangs up
				for {
					time.Sleep(300 * time.Millisecond)
					if _, err := c.Write([]byte("x")); err != nil {
						return
					}
				}
			}()
			c.SetReadDeadline(time.Now().Add(60 * time.Second))
			line, _ := bufio.NewReader(c).ReadString('\n')
			io.Copy(io.Discard, c) // until the server closes it
			statuses <- strings.TrimSpace(line)
		}()
	}
	// /health answers throughout the attack.
	answered := 0
	for open.Load() > 0 {
		if !healthOK(base) {
			t.Fatalf("/health did not answer with %d trickling connections open", open.Load())
		}
		answered++
		time.Sleep(100 * time.Millisecond)
	}
	wg.Wait()
	close(statuses)
	cut := map[string]int{}
	for s := range statuses {
		cut[s]++
	}
	if cut["HTTP/1.1 408 Request Timeout"] != trickles/2 {
		t.Fatalf("the trickles to /mcp were not all answered 408: %v", cut)
	}
	cs := connStats(t, base)
	if cs["slowBodies"].(float64) < trickles {
		t.Fatalf("bodies cut: %v", cs)
	}
	t.Logf("/health answered %d times during the attack; the trickles got %v", answered, cut)
}

// TestConnectionCapEvictsStalledClients: with --max-connections 64, 500
// clients that connect and stall (sending nothing, half their headers, or
// half a body) neither block the server nor keep others out: /health and
// a tool call still answer, and the stalled connections are evicted,
// oldest first.
func TestConnectionCapEvictsStalledClients(t *testing.T) {
	_, base, addr := limitsServe(t, "--max-connections", "64")
	stalls := []string{"", "GET /health HTTP/1.1\r\nHost: " + addr + "\r\n", mcpHead(addr, 1000) + "{\"jsonrpc\""}
	conns := make([]net.Conn, 0, 500)
	for i := 0; i < 500; i++ {
		conns = append(conns, dialRaw(t, addr, stalls[i%len(stalls)]))
	}
	for i := 0; i < 5; i++ {
		if !healthOK(base) {
			t.Fatalf("/health did not answer beside 500 stalled connections (try %d)", i)
		}
	}
	hc := &http.Client{Timeout: 30 * time.Second}
	if m, isErr := callAs(t, context.Background(), hc, base, "e2e", "notebook", map[string]any{"action": "list"}); isErr {
		t.Fatalf("a call beside 500 stalled connections: %v", m)
	}
	cs := connStats(t, base)
	if cs["open"].(float64) > 64 || cs["evicted"].(float64) < 500-64 {
		t.Fatalf("connections: %v", cs)
	}
	// The first stalled connections were the first evicted.
	for i, c := range conns[:10] {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err == nil || isTimeout(err) {
			t.Fatalf("stalled connection %d is still open (%v)", i, err)
		}
	}
	t.Logf("connections after the attack: %v", cs)
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// postHuge sends one POST /mcp of size bytes (declared, or chunked) as
// fast as the server takes it and returns the status line it answered
// ("" when the connection broke first).
func postHuge(addr string, size int, chunked bool) string {
	n := size
	if chunked {
		n = -1
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return "dial: " + err.Error()
	}
	defer c.Close()
	io.WriteString(c, mcpHead(addr, n))
	go func() {
		chunk := bytes.Repeat([]byte("x"), 1<<20)
		for sent := 0; sent < size; sent += len(chunk) {
			var err error
			if chunked {
				_, err = fmt.Fprintf(c, "%x\r\n%s\r\n", len(chunk), chunk)
			} else {
				_, err = c.Write(chunk)
			}
			if err != nil {
				return
			}
		}
		if chunked {
			io.WriteString(c, "0\r\n\r\n")
		}
	}()
	c.SetReadDeadline(time.Now().Add(60 * time.Second))
	line, _ := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSpace(line)
}

// TestLargePostsStayInFlatMemory: twenty clients post 40 MiB to /mcp at
// once, declaring the length, then twenty more without declaring it. All
// are refused with 413, and the serve process's peak resident memory
// (VmHWM) grows by less than the body budget allows: four bodies at the
// cap (4 MiB + 64 KiB) held at once, twice over for the garbage
// collector's headroom, plus 48 MiB for everything else a burst of forty
// connections costs.
func TestLargePostsStayInFlatMemory(t *testing.T) {
	s, base, addr := limitsServe(t)
	pid := s.cmd.Process.Pid
	healthOK(base)
	idle := procKiB(t, pid, "VmHWM")
	for _, chunked := range []bool{false, true} {
		var wg sync.WaitGroup
		answers := make(chan string, 20)
		for i := 0; i < 20; i++ {
			wg.Add(1)
			go func() { defer wg.Done(); answers <- postHuge(addr, 40<<20, chunked) }()
		}
		wg.Wait()
		close(answers)
		for a := range answers {
			if a != "HTTP/1.1 413 Request Entity Too Large" {
				t.Fatalf("a 40 MiB post (chunked=%v) was answered %q", chunked, a)
			}
		}
	}
	peak := procKiB(t, pid, "VmHWM")
	const budget = 4 * (4<<20 + 64<<10) / 1024 // KiB
	bound := 2*budget + 48<<10
	t.Logf("serve's peak RSS: %.1f MiB before, %.1f MiB after forty 40 MiB posts (growth %.1f MiB, bound %.1f MiB)",
		float64(idle)/1024, float64(peak)/1024, float64(peak-idle)/1024, float64(bound)/1024)
	if peak-idle > bound {
		t.Fatalf("peak resident memory grew by %d KiB, more than %d KiB", peak-idle, bound)
	}
	if !healthOK(base) {
		t.Fatal("/health after the posts")
	}
}

// TestTricklingUploadsFreeTheirSlots: two clients hold both upload staging
// slots by trickling their files a byte every 200 ms; a third client is
// refused (staging_busy) while they do, and its upload succeeds once the
// trickles are cut off (a 1 s stall and grace here), without waiting for
// the upload's own deadline.
func TestTricklingUploadsFreeTheirSlots(t *testing.T) {
	_, base, addr := limitsServe(t, "--body-stall", "1s", "--body-timeout", "30s")
	head := func(name string) string {
		return "POST /transfer/upload HTTP/1.1\r\nHost: " + addr + "\r\nAuthorization: Bearer sekret\r\n" +
			"Content-Type: application/octet-stream\r\nX-Sisyphus-File-Name: " + name + "\r\nContent-Length: 1048576\r\n\r\n"
	}
	cut := make(chan string, 2)
	for _, name := range []string{"slow1.bin", "slow2.bin"} {
		c := dialRaw(t, addr, head(name))
		go func() {
			for {
				if _, err := c.Write([]byte("x")); err != nil {
					return
				}
				time.Sleep(200 * time.Millisecond)
			}
		}()
		go func() {
			c.SetReadDeadline(time.Now().Add(60 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				cut <- err.Error()
				return
			}
			b, _ := io.ReadAll(resp.Body)
			cut <- fmt.Sprintf("%d %s", resp.StatusCode, b)
		}()
	}
	waitFor(t, "both slots held", func() bool {
		st, _ := health(t, base)["staging"].(map[string]any)
		return st["active"] == 2.0
	})
	upload := func() (int, map[string]any) {
		req, _ := http.NewRequest("POST", base+"/transfer/upload", strings.NewReader("the third client's file"))
		req.Header.Set("Authorization", "Bearer sekret")
		req.Header.Set("Content-Type", "application/octet-stream")
		req.Header.Set("X-Sisyphus-File-Name", "third.txt")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}
	if code, m := upload(); code != 429 || errCodeOf(m) != "staging_busy" {
		t.Fatalf("the third upload while both slots are held: %d %v", code, m)
	}
	for i := 0; i < 2; i++ {
		if got := <-cut; !strings.HasPrefix(got, "408 ") || !strings.Contains(got, "transfer_failed") {
			t.Fatalf("a trickling upload was answered %q", got)
		}
	}
	if code, m := upload(); code != 200 || m["uploadSource"] == nil {
		t.Fatalf("the third upload once the trickles were cut: %d %v", code, m)
	}
}

// initialize opens a legacy session named name over hc; "" when refused
// or when the request failed (it runs in the flood's goroutines, where a
// test may not stop).
func initialize(hc *http.Client, base, name string) string {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": name, "version": "1"}}})
	req, _ := http.NewRequest("POST", base+"/mcp", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer sekret")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	return resp.Header.Get("Mcp-Session-Id")
}

// TestSessionFloodLeavesRoomForOthers: one client opens legacy sessions
// until the server's 4,096 are all taken, first under one name and then
// under thousands; a well-behaved client connecting afterwards still
// initializes and calls a tool, and the flood only ever ended its own
// sessions (or those of the clients holding the most).
func TestSessionFloodLeavesRoomForOthers(t *testing.T) {
	_, base, _ := limitsServe(t)
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	var wg sync.WaitGroup
	jobs := make(chan string)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range jobs {
				initialize(hc, base, name)
			}
		}()
	}
	for i := 0; i < 200; i++ {
		jobs <- "flood"
	}
	for i := 0; i < 4200; i++ {
		jobs <- fmt.Sprintf("flood-%d", i)
	}
	close(jobs)
	wg.Wait()
	if n := health(t, base)["mcp"].(map[string]any)["sessions"].(float64); n != 4096 {
		t.Fatalf("%v sessions after the flood, want the cap of 4096", n)
	}
	a := connectWith(t, base+"/mcp", "2025-11-25", "good", nil)
	a.ok("notebook", map[string]any{"action": "list"})
	// The flood goes on under new names while the client works: its
	// session, in use, is never the one ended.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 2000; i++ {
			initialize(hc, base, fmt.Sprintf("flood-more-%d", i))
		}
	}()
	for i := 0; i < 20; i++ {
		a.ok("notebook", map[string]any{"action": "list"})
	}
	<-done
	a.ok("notebook", map[string]any{"action": "list"})
}

// TestStreamFloodLeavesRoomForOthers: one client opens event streams (GET
// /mcp) under sixteen names, four each, until all 64 are taken; a
// well-behaved client then opens its own, hears the tool list announced
// on it, and calls a tool in its session.
func TestStreamFloodLeavesRoomForOthers(t *testing.T) {
	_, base, _ := limitsServe(t)
	hc := &http.Client{}
	open := func(sid string) (*http.Response, context.CancelFunc) {
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, "GET", base+"/mcp", nil)
		req.Header.Set("Authorization", "Bearer sekret")
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cancel(); resp.Body.Close() })
		return resp, cancel
	}
	for n := 0; n < 16; n++ {
		for s := 0; s < 2; s++ {
			sid := initialize(hc, base, fmt.Sprintf("flood-%d", n))
			for k := 0; k < 3; k++ { // one more than a session takes
				if resp, _ := open(sid); resp.StatusCode != 200 {
					t.Fatalf("flood stream: %d", resp.StatusCode)
				}
			}
		}
	}
	// A stream that a newcomer displaced ends a moment later (its
	// goroutine sees its context cancelled), so the count settles on the
	// cap rather than reaching it at once.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		n := health(t, base)["mcp"].(map[string]any)["streams"].(float64)
		if n == 64 {
			break
		}
		if n < 64 || time.Now().After(deadline) {
			t.Fatalf("%v streams after the flood, want the cap of 64", n)
		}
	}
	sid := initialize(hc, base, "good")
	resp, _ := open(sid)
	if resp.StatusCode != 200 {
		t.Fatalf("the well-behaved client's stream: %d", resp.StatusCode)
	}
	events := bufio.NewReader(resp.Body)
	line, err := events.ReadString('\n')
	for err == nil && !strings.HasPrefix(line, "data: ") {
		line, err = events.ReadString('\n')
	}
	if !strings.Contains(line, "notifications/tools/list_changed") {
		t.Fatalf("the well-behaved client's stream said %q (%v)", line, err)
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"notebook","arguments":{"action":"list"}}}`
	req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer sekret")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	res, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || !strings.Contains(string(out), `"notebooks"`) || strings.Contains(string(out), `"isError":true`) {
		t.Fatalf("the well-behaved client's call: %d %s", res.StatusCode, out)
	}
}

// TestSilentFeedbackEndpointDoesNotHoldTheLane: the feedback endpoint
// accepts the connection and never answers. feedback.submit answers
// outcome_unknown (sent once, never again) when its time in the write lane
// is up, and a strict write queued behind it runs.
func TestSilentFeedbackEndpointDoesNotHoldTheLane(t *testing.T) {
	s, base, _ := limitsServe(t)
	ln := listenLoopback(t)
	accepted := make(chan struct{}, 4)
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c) // read nothing, answer nothing
			mu.Unlock()
			accepted <- struct{}{}
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range held {
			c.Close()
		}
		mu.Unlock()
	})
	s.config(t, "feedback", "http://"+ln.Addr().String()+"/hook")
	a := connect(t, s.url, "2025-11-25")
	_, para := firstParagraph(a)
	upd := map[string]any{"action": "update", "id": para, "data": "written behind the silent feedback"}
	pre := a.ok("block", with(upd, "validateOnly", true))

	feedback := make(chan map[string]any, 1)
	go func() {
		m, _ := callAs(t, context.Background(), &http.Client{}, base, "reporter", "feedback", map[string]any{"action": "submit", "description": "the silent endpoint"})
		feedback <- m
	}()
	<-accepted // the report is out, and the lane is held
	if res := a.ok("block", commitOf(upd, pre)); res["status"] != "committed" {
		t.Fatalf("the write behind the feedback: %v", res)
	}
	m := <-feedback
	if errCodeOf(m) != "outcome_unknown" || m["writeAttempted"] != true {
		t.Fatalf("feedback to a silent endpoint: %v", m)
	}
	select {
	case <-accepted:
		t.Fatal("the feedback was sent twice")
	case <-time.After(200 * time.Millisecond):
	}
}

// TestDefaultLimitsUnderAttack runs two attacks against serve with its
// default limits and logs what the server keeps (docs/BENCHMARKS.md; with
// SISYPHUS_TEST_BINARY it measures another build): 300 connections that
// trickle a body to /mcp, a byte every 300 ms, watched once a second with
// /health beside them; then 2,000 connections that send nothing, beyond
// the cap of 1,024.
func TestDefaultLimitsUnderAttack(t *testing.T) {
	testvars.Long(t)
	_, base, addr := limitsServe(t)
	var open atomic.Int32
	for i := 0; i < 300; i++ {
		c := dialRaw(t, addr, mcpHead(addr, 100000))
		open.Add(1)
		go func() {
			for {
				time.Sleep(300 * time.Millisecond)
				if _, err := c.Write([]byte("x")); err != nil {
					return
				}
			}
		}()
		go func() { io.Copy(io.Discard, c); open.Add(-1) }()
	}
	start := time.Now()
	for s := 1; s <= 40 && open.Load() > 0; s++ {
		time.Sleep(time.Second)
		t0 := time.Now()
		ok := healthOK(base)
		t.Logf("t=%2ds: %3d trickling connections open; /health ok=%v in %v", s, open.Load(), ok, time.Since(t0).Round(100*time.Microsecond))
		if !ok {
			t.Fatal("/health did not answer beside the trickles")
		}
	}
	if n := open.Load(); n > 0 {
		t.Fatalf("%d trickling connections still open after %v", n, time.Since(start).Round(time.Second))
	}

	stalled := 0
	for i := 0; i < 2000; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Skipf("this process cannot open more connections (%d open): %v", stalled, err)
		}
		t.Cleanup(func() { c.Close() })
		stalled++
	}
	for i := 0; i < 3; i++ {
		t0 := time.Now()
		if !healthOK(base) {
			t.Fatalf("/health did not answer beside %d stalled connections", stalled)
		}
		t.Logf("%d stalled connections: /health in %v", stalled, time.Since(t0).Round(100*time.Microsecond))
	}
	t.Logf("connections: %v", connStats(t, base))
}

func TestLimitFlagErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--max-connections", "5"}, "--max-connections must be at least 16"},
		{[]string{"serve", "--max-connections", "100000000"}, "file descriptors, but this process may open"},
		{[]string{"serve", "--max-request-size", "1KiB"}, "--max-request-size must be a size between 64KiB and 1GiB"},
		{[]string{"serve", "--max-request-size", "lots"}, "--max-request-size must be a size"},
		{[]string{"serve", "--body-timeout", "0s"}, "must be positive"},
		{[]string{"kernel", "--dir", t.TempDir(), "--max-connections", "3"}, "--max-connections must be at least 16"},
	}
	for _, tt := range tests {
		args := tt.args
		if args[0] == "serve" {
			args = append(args, "--state-dir", t.TempDir(), "--embedded", t.TempDir(), "--listen", "127.0.0.1:0")
		}
		out, err := run(t, args...)
		if err == nil || !strings.Contains(out, tt.want) {
			t.Errorf("%v: err=%v out=%q, want it to mention %q", tt.args, err, out, tt.want)
		}
	}
}

// TestAwaitedConfirmationsAreCapped: a legacy client that declares forms
// and never answers them cannot pile up calls waiting for the person: the
// fifth confirmation of one session fails at once (confirmation_invalid,
// nothing run), and ending the session ends the four that wait.
func TestAwaitedConfirmationsAreCapped(t *testing.T) {
	_, base, _ := limitsServe(t)
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{"elicitation": map[string]any{}}, "clientInfo": map[string]any{"name": "silent", "version": "1"}}})
	post := func(msg string, sid string) *http.Response {
		req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(msg))
		req.Header.Set("Authorization", "Bearer sekret")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	r := post(string(body), "")
	r.Body.Close()
	sid := r.Header.Get("Mcp-Session-Id")
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, sid).Body.Close()
	call := func(id int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"system","arguments":{"action":"perform_sync"}}}`, id)
	}
	var waiting []*http.Response
	for i := 1; i <= 4; i++ {
		resp := post(call(i), sid)
		waiting = append(waiting, resp)
		events := bufio.NewReader(resp.Body)
		line, err := events.ReadString('\n')
		for err == nil && !strings.HasPrefix(line, "data: ") {
			line, err = events.ReadString('\n')
		}
		if !strings.Contains(line, "elicitation/create") {
			t.Fatalf("confirmation %d: %q %v", i, line, err)
		}
	}
	resp := post(call(5), sid)
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(out), "confirmation_invalid") || !strings.Contains(string(out), "too many requests already await") {
		t.Fatalf("the fifth confirmation of the session: %s", out)
	}
	req, _ := http.NewRequest("DELETE", base+"/mcp", nil)
	req.Header.Set("Authorization", "Bearer sekret")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if r, err := http.DefaultClient.Do(req); err != nil || r.StatusCode != 204 {
		t.Fatalf("DELETE: %v %v", r, err)
	}
	for _, w := range waiting {
		io.Copy(io.Discard, w.Body) // each ends with its session
		w.Body.Close()
	}
}
