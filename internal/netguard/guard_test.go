package netguard

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// served is a guarded server on loopback and what its handler saw.
type served struct {
	g    *Guard
	addr string
	errs chan error // each handler's body error (nil when the body arrived)
}

// serve runs h (nil: read the body, answer "ok") under a guard of cfg.
func serve(t *testing.T, cfg Config, h http.HandlerFunc) *served {
	t.Helper()
	s := &served{g: New(cfg), errs: make(chan error, 1024)}
	if h == nil {
		h = func(w http.ResponseWriter, r *http.Request) {
			_, err := io.Copy(io.Discard, r.Body)
			s.errs <- err
			if err != nil {
				http.Error(w, err.Error(), http.StatusRequestTimeout)
				return
			}
			io.WriteString(w, "ok")
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := s.g.Server(h)
	go hs.Serve(s.g.Listener(ln))
	t.Cleanup(func() { hs.Close() })
	s.addr = ln.Addr().String()
	return s
}

// get makes one request on a new connection and returns the status.
func (s *served) get(t *testing.T) int {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	resp, err := c.Get("http://" + s.addr + "/")
	if err != nil {
		t.Fatalf("GET: %v", err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// dial opens a raw connection and writes head (request line and headers).
func (s *served) dial(t *testing.T, head string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if head != "" {
		if _, err := io.WriteString(c, head); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// closedWithin reports whether the server closes c within d (the reply, if
// any, is read and dropped).
func closedWithin(c net.Conn, d time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

func post(n int) string {
	return fmt.Sprintf("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", n)
}

func TestBodyRules(t *testing.T) {
	fast := Config{BodyTimeout: 2 * time.Second, BodyStall: 300 * time.Millisecond, BodyGrace: 300 * time.Millisecond, BodyMinRate: 1000}
	tests := []struct {
		name  string
		cfg   Config
		size  int
		send  func(c net.Conn) // after the headers
		cut   bool
		limit time.Duration // how long the client waits to see the connection closed
	}{
		{"whole body at once", fast, 10, func(c net.Conn) { io.WriteString(c, strings.Repeat("x", 10)) }, false, 0},
		{"a body that stops", fast, 10, func(c net.Conn) { io.WriteString(c, "xx") }, true, 5 * time.Second},
		{"a trickle below the rate", fast, 100, func(c net.Conn) {
			for i := 0; i < 30; i++ {
				if _, err := io.WriteString(c, "x"); err != nil {
					return
				}
				time.Sleep(100 * time.Millisecond)
			}
		}, true, 5 * time.Second},
		{"a trickle over the whole body's time", Config{BodyTimeout: 500 * time.Millisecond, BodyStall: time.Second, BodyGrace: time.Hour, BodyMinRate: 1}, 100, func(c net.Conn) {
			for i := 0; i < 30; i++ {
				if _, err := io.WriteString(c, "x"); err != nil {
					return
				}
				time.Sleep(100 * time.Millisecond)
			}
		}, true, 5 * time.Second},
		// A cut body's connection closes at once: what is left of it is
		// not read for another stall (an hour here).
		{"a body that never comes, with long stalls", Config{BodyTimeout: 300 * time.Millisecond, BodyStall: time.Hour, BodyGrace: time.Hour, BodyMinRate: 1},
			10, func(net.Conn) {}, true, 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := serve(t, tt.cfg, nil)
			c := s.dial(t, post(tt.size))
			go tt.send(c)
			err := <-s.errs
			if tt.cut != (err != nil) {
				t.Fatalf("body error %v, want cut=%v", err, tt.cut)
			}
			if !tt.cut {
				return
			}
			if !errors.Is(err, ErrSlowBody) || !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("the cut body's error %v is not ErrSlowBody", err)
			}
			if !closedWithin(c, tt.limit) {
				t.Fatal("the server kept the connection of a cut body open")
			}
			if st := s.g.Stats(); st.SlowBodies != 1 {
				t.Fatalf("stats: %+v", st)
			}
		})
	}
}

// A handler that answers without reading the body keeps the connection
// for what is left of it (net/http reads it before it answers, within a
// stall), unless it answered for good (Connection: close): then the answer
// goes at once and the connection closes.
func TestUnreadBodyAfterTheAnswer(t *testing.T) {
	for _, closing := range []bool{false, true} {
		s := serve(t, Config{BodyStall: time.Hour, BodyGrace: time.Hour, BodyTimeout: time.Hour}, func(w http.ResponseWriter, r *http.Request) {
			if closing {
				w.Header().Set("Connection", "close")
			}
			w.WriteHeader(http.StatusServiceUnavailable)
		})
		c := s.dial(t, post(100)+"xx")
		if !closing {
			io.WriteString(c, strings.Repeat("x", 98)) // the rest, which net/http reads
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != 503 {
			t.Fatalf("closing=%v: %v %v", closing, resp, err)
		}
		if got := closedWithin(c, time.Second); got != closing {
			t.Fatalf("closing=%v: connection closed=%v", closing, got)
		}
	}
}

// A handler that runs long after its body arrived keeps its context: the
// body's deadlines end with the body (net/http watches the connection for
// the client leaving, and a deadline there would cancel the request).
func TestLongHandlerOutlivesBodyDeadlines(t *testing.T) {
	done := make(chan error, 1)
	s := serve(t, Config{BodyTimeout: 200 * time.Millisecond, BodyStall: 100 * time.Millisecond, BodyGrace: 100 * time.Millisecond},
		func(w http.ResponseWriter, r *http.Request) {
			if _, err := io.Copy(io.Discard, r.Body); err != nil {
				done <- err
				return
			}
			select {
			case <-r.Context().Done():
				done <- fmt.Errorf("the request was cancelled: %w", context.Cause(r.Context()))
			case <-time.After(time.Second):
				done <- nil
				io.WriteString(w, "ok")
			}
		})
	resp, err := http.Post("http://"+s.addr+"/", "text/plain", strings.NewReader("hello"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// SetBodyTimeout gives a route a longer body; the stall rule still holds.
func TestSetBodyTimeout(t *testing.T) {
	cfg := Config{BodyTimeout: 300 * time.Millisecond, BodyStall: time.Second, BodyGrace: time.Hour, BodyMinRate: 1}
	errs := make(chan error, 1)
	s := serve(t, cfg, func(w http.ResponseWriter, r *http.Request) {
		SetBodyTimeout(r, 5*time.Second)
		_, err := io.Copy(io.Discard, r.Body)
		errs <- err
	})
	c := s.dial(t, post(8))
	for i := 0; i < 8; i++ {
		io.WriteString(c, "x")
		time.Sleep(100 * time.Millisecond) // 800 ms in all: past the default
	}
	if err := <-errs; err != nil {
		t.Fatalf("an extended body was cut: %v", err)
	}
}

func TestCapEvictsStalledConnections(t *testing.T) {
	phases := []struct {
		name string
		open func(s *served, t *testing.T) net.Conn
	}{
		{"sending nothing", func(s *served, t *testing.T) net.Conn { return s.dial(t, "") }},
		{"half the headers", func(s *served, t *testing.T) net.Conn { return s.dial(t, "GET / HTTP/1.1\r\nHost: x\r\n") }},
		{"half the body", func(s *served, t *testing.T) net.Conn { return s.dial(t, post(100)+"xx") }},
		{"idle after a request", func(s *served, t *testing.T) net.Conn {
			c := s.dial(t, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return c
		}},
	}
	for _, p := range phases {
		t.Run(p.name, func(t *testing.T) {
			s := serve(t, Config{MaxConns: 4}, func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				io.WriteString(w, "ok")
			})
			var stalled []net.Conn
			for i := 0; i < 4; i++ {
				stalled = append(stalled, p.open(s, t))
			}
			waitOpen(t, s.g, 4)
			// The server marks a connection idle just after it answered.
			waitEvictable(t, s.g, 4)
			// Four newcomers that each keep their connection (idle between
			// requests) take the four places.
			for i := 0; i < 4; i++ {
				c := &http.Client{Transport: &http.Transport{}, Timeout: 10 * time.Second}
				resp, err := c.Get("http://" + s.addr + "/")
				if err != nil || resp.StatusCode != 200 {
					t.Fatalf("newcomer %d: %v %v", i, resp, err)
				}
				io.Copy(io.Discard, resp.Body) // read to its end, the connection is kept
				resp.Body.Close()
				t.Cleanup(c.CloseIdleConnections)
			}
			if st := s.g.Stats(); st.Evicted != 4 || st.Refused != 0 || st.Open > 4 {
				t.Fatalf("stats: %+v", st)
			}
			// The oldest went first: every stalled connection is closed.
			for i, c := range stalled {
				if !closedWithin(c, 5*time.Second) {
					t.Fatalf("stalled connection %d is still open", i)
				}
			}
		})
	}
}

func TestCapNeverEvictsRunningHandlers(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 8)
	s := serve(t, Config{MaxConns: 3}, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/block" {
			started <- struct{}{}
			<-release
		}
		io.WriteString(w, "ok")
	})
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Get("http://" + s.addr + "/block")
			if err != nil {
				t.Errorf("a running handler was cut: %v", err)
				return
			}
			resp.Body.Close()
		}()
		<-started
	}
	// Every place is held by a running handler: a newcomer is closed at once.
	c := s.dial(t, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	if !closedWithin(c, 5*time.Second) {
		t.Fatal("a newcomer was kept beyond the cap")
	}
	if st := s.g.Stats(); st.Refused == 0 || st.Evicted != 0 {
		t.Fatalf("stats: %+v", st)
	}
	close(release)
	wg.Wait()
	if code := s.get(t); code != 200 {
		t.Fatalf("after the handlers ended: %d", code)
	}
}

// A connection evicted while its body arrives never runs the rest of its
// handler on the body: the read fails.
func TestEvictedBodyFails(t *testing.T) {
	errs := make(chan error, 4)
	s := serve(t, Config{MaxConns: 1, BodyStall: time.Minute, BodyGrace: time.Minute, BodyTimeout: time.Minute}, func(w http.ResponseWriter, r *http.Request) {
		_, err := io.Copy(io.Discard, r.Body)
		errs <- err
	})
	c := s.dial(t, post(10)+"xx")
	waitPhase(t, s.g, phaseBody)
	d := s.dial(t, "")
	if err := <-errs; err == nil {
		t.Fatal("the evicted body read on")
	}
	if !closedWithin(c, 5*time.Second) {
		t.Fatal("the evicted connection is open")
	}
	d.Close()
}

// A body that keeps arriving outlasts a flood of stalled newcomers: they
// evict each other, not the upload in progress.
func TestFloodEvictsItsOwnBeforeABodyInProgress(t *testing.T) {
	errs := make(chan error, 1)
	s := serve(t, Config{MaxConns: 4}, func(w http.ResponseWriter, r *http.Request) {
		_, err := io.Copy(io.Discard, r.Body)
		errs <- err
	})
	b := s.dial(t, post(40))
	go func() {
		for i := 0; i < 40; i++ {
			io.WriteString(b, "x")
			time.Sleep(10 * time.Millisecond)
		}
	}()
	waitPhase(t, s.g, phaseBody)
	for i := 0; i < 12; i++ {
		s.dial(t, "")
		time.Sleep(30 * time.Millisecond)
	}
	if err := <-errs; err != nil {
		t.Fatalf("the body in progress was cut: %v", err)
	}
	if st := s.g.Stats(); st.Evicted < 9 {
		t.Fatalf("stats: %+v", st)
	}
}

func waitOpen(t *testing.T, g *Guard, n int) {
	t.Helper()
	for i := 0; i < 500 && g.Stats().Open != n; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if st := g.Stats(); st.Open != n {
		t.Fatalf("open connections: %+v, want %d", st, n)
	}
}

func waitEvictable(t *testing.T, g *Guard, n int) {
	t.Helper()
	count := func() int {
		g.mu.Lock()
		defer g.mu.Unlock()
		k := 0
		for c := range g.conns {
			if c.phase.evictable() {
				k++
			}
		}
		return k
	}
	for i := 0; i < 500 && count() != n; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if k := count(); k != n {
		t.Fatalf("%d evictable connections, want %d", k, n)
	}
}

func waitPhase(t *testing.T, g *Guard, p phase) {
	t.Helper()
	for i := 0; i < 500; i++ {
		g.mu.Lock()
		for c := range g.conns {
			if c.phase == p {
				g.mu.Unlock()
				return
			}
		}
		g.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no connection reached phase %d", p)
}

// bigAnswer is a handler writing size bytes in 1 MiB writes, far more than
// the sockets of both ends buffer; it sends the error its writes ended
// with.
func bigAnswer(size int, errs chan<- error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/big" {
			io.WriteString(w, "ok")
			return
		}
		chunk := make([]byte, 1<<20)
		for sent := 0; sent < size; sent += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				errs <- err
				return
			}
		}
		errs <- nil
	}
}

// A client that asks for an answer and never reads it holds its
// connection and its handler for one stall, not forever: the handler's
// write fails with ErrSlowReader and the connection closes.
func TestStalledReaderIsCut(t *testing.T) {
	errs := make(chan error, 1)
	s := serve(t, Config{WriteStall: 300 * time.Millisecond}, bigAnswer(256<<20, errs))
	c := s.dial(t, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
	err := <-errs
	if !errors.Is(err, ErrSlowReader) || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the handler's write to a client that does not read ended with %v", err)
	}
	waitOpen(t, s.g, 0)
	if !closedWithin(c, 30*time.Second) {
		t.Fatal("the connection of a client that does not read is open")
	}
	if st := s.g.Stats(); st.SlowReaders != 1 {
		t.Fatalf("stats: %+v", st)
	}
}

// A client that reads a long answer steadily, pausing for less than the
// stall, takes all of it, however long it takes in all: the deadline is
// renewed as the bytes go out.
func TestSteadyReaderTakesALongAnswer(t *testing.T) {
	const size = 64 << 20
	errs := make(chan error, 1)
	s := serve(t, Config{WriteStall: time.Second}, bigAnswer(size, errs))
	c := s.dial(t, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	buf := make([]byte, 1<<20)
	for {
		// A pause of a fifth of the stall after every 4 MiB: 3.2 s of
		// pauses in all, beside the stall of 1 s.
		if got%(4<<20) == 0 {
			time.Sleep(200 * time.Millisecond)
		}
		n, err := io.ReadFull(resp.Body, buf)
		got += n
		if err != nil {
			break
		}
	}
	if got != size {
		t.Fatalf("read %d bytes of %d", got, size)
	}
	if err := <-errs; err != nil {
		t.Fatalf("the handler's writes: %v", err)
	}
	if st := s.g.Stats(); st.SlowReaders != 0 {
		t.Fatalf("stats: %+v", st)
	}
}

// When the cap is reached, a handler whose write waits on a client that
// does not read is evicted for a newcomer, as an idle connection would be,
// even though its stall is far off.
func TestCapEvictsBlockedWriters(t *testing.T) {
	errs := make(chan error, 2)
	s := serve(t, Config{MaxConns: 2, WriteStall: time.Hour}, bigAnswer(256<<20, errs))
	var stuck []net.Conn
	for i := 0; i < 2; i++ {
		stuck = append(stuck, s.dial(t, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n"))
	}
	waitBlockedWriters(t, s.g, 2)
	if code := s.get(t); code != 200 {
		t.Fatalf("the newcomer: %d", code)
	}
	if err := <-errs; err == nil {
		t.Fatal("the evicted handler's write succeeded")
	}
	if st := s.g.Stats(); st.Evicted != 1 || st.Refused != 0 {
		t.Fatalf("stats: %+v", st)
	}
	closed := 0
	for _, c := range stuck {
		c.SetReadDeadline(time.Now().Add(time.Second))
		if _, err := io.Copy(io.Discard, c); err == nil || !isTimeout(err) {
			closed++
		}
	}
	if closed != 1 {
		t.Fatalf("%d of the stuck connections were closed, want 1", closed)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func waitBlockedWriters(t *testing.T, g *Guard, n int) {
	t.Helper()
	count := func() int {
		g.mu.Lock()
		defer g.mu.Unlock()
		k := 0
		for c := range g.conns {
			if _, ok := g.evictableSince(c, time.Now()); ok && !c.phase.evictable() {
				k++
			}
		}
		return k
	}
	for i := 0; i < 1000 && count() != n; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if k := count(); k != n {
		t.Fatalf("%d connections blocked writing, want %d", k, n)
	}
}

// BenchmarkLargeAnswer measures an 8 MiB answer read at once by its
// client over loopback: the cost of renewing the write deadline for every
// piece of it.
func BenchmarkLargeAnswer(b *testing.B) {
	const size = 8 << 20
	chunk := make([]byte, 1<<20)
	g := New(Config{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	hs := g.Server(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for sent := 0; sent < size; sent += len(chunk) {
			w.Write(chunk)
		}
	}))
	go hs.Serve(g.Listener(ln))
	b.Cleanup(func() { hs.Close() })
	c := &http.Client{}
	url := "http://" + ln.Addr().String() + "/"
	b.SetBytes(size)
	b.ResetTimer()
	for b.Loop() {
		resp, err := c.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		if n, _ := io.Copy(io.Discard, resp.Body); n != size {
			b.Fatalf("read %d bytes", n)
		}
		resp.Body.Close()
	}
}
