package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Regression tests, through the built binary, for clients that ask and
// never read the answer: they must hold neither the connection cap nor
// the large-body budget for longer than the write stall, and others must
// get both at once.

// dialNoRead connects to addr as a client that will not read: a receive
// buffer of 2 KiB and a segment size of 536 bytes announced to the server,
// so that the server's send buffer stays small too and an answer of tens
// of KiB (a tools/list) cannot be written whole into the sockets.
func dialNoRead(t *testing.T, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			if serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 2048); serr == nil {
				serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_MAXSEG, 536)
			}
		})
		if err != nil {
			return err
		}
		return serr
	}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// padded is a modern MCP request of method (tools/list, or tools/call of
// tool with args) padded with an unused params field to about size bytes,
// so that it is read under the large-body budget: its body and headers.
func padded(method, tool string, args map[string]any, size int) ([]byte, map[string]string) {
	params := map[string]any{
		"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "reader", "version": "1"},
			"io.modelcontextprotocol/clientCapabilities": map[string]any{}},
		"pad": strings.Repeat("x", size),
	}
	hdr := map[string]string{"Authorization": "Bearer sekret", "Content-Type": "application/json",
		"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	if tool != "" {
		params["name"], params["arguments"], hdr["Mcp-Name"] = tool, args, tool
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	return body, hdr
}

// rawPost is the whole HTTP/1.1 request of body and hdr to addr.
func rawPost(addr string, body []byte, hdr map[string]string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n", addr, len(body))
	for k, v := range hdr {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	b.WriteString("\r\n")
	b.Write(body)
	return b.Bytes()
}

// TestClientsThatDoNotReadHoldNothing: with --max-connections 16, sixteen
// clients each post a tools/list padded to 1 MiB (together, the whole
// large-body budget: four bodies at the cap), eight more lists pipelined
// behind it, and never read the answers past the first status line. Every connection then has a handler running,
// blocked on writing to a client that does not read. At once, with the
// write stall (10 s) still far off, a new client gets a connection and its
// own 1 MiB post is read and answered: a blocked writer is evicted for it,
// and the posts that do not read gave their budget back when their answer
// started. Then every one of the sixteen is closed by the server, evicted
// or cut by the stall, and /health counts them.
func TestClientsThatDoNotReadHoldNothing(t *testing.T) {
	_, base, addr := limitsServe(t, "--max-connections", "16")
	const attackers = 16
	list, listHdr := padded("tools/list", "", nil, 1<<20)
	// One tools/list answer (about 60 KiB) can fit whole in the socket
	// buffers the system gives the server's side; more lists pipelined
	// behind it cannot, so each handler ends blocked on its client
	// whatever those buffers are.
	small, smallHdr := padded("tools/list", "", nil, 0)
	ask := rawPost(addr, list, listHdr)
	for range 8 {
		ask = append(ask, rawPost(addr, small, smallHdr)...)
	}
	var wg sync.WaitGroup
	for i := 0; i < attackers; i++ {
		c := dialNoRead(t, addr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Write(ask); err != nil {
				t.Errorf("attacker %d: %v", i, err)
				return
			}
			// The answer has started (its status line arrives); nothing
			// more is read.
			c.SetReadDeadline(time.Now().Add(30 * time.Second))
			head := make([]byte, len("HTTP/1.1 200"))
			if _, err := io.ReadFull(c, head); err != nil || string(head) != "HTTP/1.1 200" {
				t.Errorf("attacker %d: %q %v", i, head, err)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	// Past the second after which a write blocked on its client counts as
	// stalled for the connection cap.
	time.Sleep(1500 * time.Millisecond)

	if !healthOK(base) {
		t.Fatal("/health: no connection while sixteen clients do not read their answers")
	}
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}
	body, hdr := padded("tools/call", "notebook", map[string]any{"action": "list"}, 1<<20)
	req, _ := http.NewRequestWithContext(context.Background(), "POST", base+"/mcp", bytes.NewReader(body))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("a 1 MiB post beside sixteen clients that do not read: %v", err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Contains(answer, []byte(`"notebooks"`)) {
		t.Fatalf("a 1 MiB post beside sixteen clients that do not read: %d %.300s", resp.StatusCode, answer)
	}
	cs := connStats(t, base)
	// The first newcomer evicted a blocked writer; the next found its place
	// free once it left. Nobody was refused.
	if cs["evicted"].(float64) < 1 || cs["refused"].(float64) != 0 {
		t.Fatalf("connections: %v", cs)
	}
	// Every client that does not read is closed by the server: evicted
	// for a newcomer, or cut by the write stall.
	waitFor(t, "the clients that do not read to be closed", func() bool {
		cs = connStats(t, base)
		return cs["evicted"].(float64)+cs["slowReaders"].(float64) >= attackers
	})
	t.Logf("connections once the clients that do not read were closed: %v", cs)
}

// TestUnreadAnswersHoldNoBodyBudget: sixteen clients post a tools/list
// padded to 4 MiB (the default cap is 4 MiB + 64 KiB, the budget four
// bodies at the cap) and never read the answer past its status line. Each
// body gives its budget back as its answer starts, so all sixteen are
// read in turn, and a new client's 4 MiB post is read and answered at once
// instead of waiting for budget that the sixteen would hold until the
// stall. The serve process's peak resident memory grows by no more than
// the budget allows (the bound of TestLargePostsStayInFlatMemory).
func TestUnreadAnswersHoldNoBodyBudget(t *testing.T) {
	s, base, addr := limitsServe(t)
	pid := s.cmd.Process.Pid
	healthOK(base)
	idle := procKiB(t, pid, "VmHWM")
	const attackers = 16
	list, listHdr := padded("tools/list", "", nil, 4<<20)
	post := rawPost(addr, list, listHdr)
	statuses := make(chan string, attackers)
	var wg sync.WaitGroup
	for i := 0; i < attackers; i++ {
		c := dialNoRead(t, addr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Write(post); err != nil {
				statuses <- err.Error()
				return
			}
			c.SetReadDeadline(time.Now().Add(30 * time.Second))
			head := make([]byte, len("HTTP/1.1 200"))
			io.ReadFull(c, head)
			statuses <- string(head)
		}()
	}
	wg.Wait()
	close(statuses)
	for st := range statuses {
		if st != "HTTP/1.1 200" {
			t.Fatalf("a 4 MiB post among sixteen that do not read their answers: %q", st)
		}
	}
	body, hdr := padded("tools/call", "notebook", map[string]any{"action": "list"}, 4<<20)
	req, _ := http.NewRequestWithContext(context.Background(), "POST", base+"/mcp", bytes.NewReader(body))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Contains(answer, []byte(`"notebooks"`)) {
		t.Fatalf("a 4 MiB post beside sixteen answers nobody reads: %d %.300s", resp.StatusCode, answer)
	}
	peak := procKiB(t, pid, "VmHWM")
	const budget = 4 * (4<<20 + 64<<10) / 1024 // KiB
	bound := 2*budget + 48<<10
	t.Logf("serve's peak RSS: %.1f MiB before, %.1f MiB after seventeen 4 MiB posts, sixteen of them unread (growth %.1f MiB, bound %.1f MiB)",
		float64(idle)/1024, float64(peak)/1024, float64(peak-idle)/1024, float64(bound)/1024)
	if peak-idle > bound {
		t.Fatalf("peak resident memory grew by %d KiB, more than %d KiB", peak-idle, bound)
	}
}
