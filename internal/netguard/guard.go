package netguard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of a Config's zero fields.
const (
	DefaultMaxConns      = 1024
	DefaultHeaderTimeout = 10 * time.Second
	DefaultBodyTimeout   = 30 * time.Second
	DefaultBodyStall     = 5 * time.Second
	DefaultBodyGrace     = 5 * time.Second
	DefaultBodyMinRate   = 64 << 10 // bytes per second
	DefaultIdleTimeout   = 120 * time.Second
	DefaultWriteStall    = 10 * time.Second
	// MaxHeaderBytes bounds a request's headers (net/http's default is 1
	// MiB, which a thousand slow clients would turn into a gigabyte).
	MaxHeaderBytes = 64 << 10
)

// Config bounds a server's connections; zero fields take the defaults.
type Config struct {
	// MaxConns caps the open connections.
	MaxConns int
	// HeaderTimeout bounds the reading of a request's headers.
	HeaderTimeout time.Duration
	// BodyTimeout bounds the reading of a request's body, from the start of
	// its handler.
	BodyTimeout time.Duration
	// BodyStall is the longest a body may pause while its handler reads.
	BodyStall time.Duration
	// BodyGrace is how long a body may arrive slower than BodyMinRate
	// (bytes per second, averaged from the handler's first read).
	BodyGrace   time.Duration
	BodyMinRate int64
	// IdleTimeout closes a connection idle between requests.
	IdleTimeout time.Duration
	// WriteStall is the longest the client may leave the server's bytes
	// untaken: every write to the connection must have gone out within it
	// (it is renewed for each piece of writePiece bytes), or the
	// connection is closed. A response of any length and a stream of any
	// duration pass, as long as the client keeps reading.
	WriteStall time.Duration
	// Name names the server in log records ("authority", "kernel").
	Name   string
	Logger *slog.Logger
}

func (c Config) withDefaults() Config {
	if c.MaxConns <= 0 {
		c.MaxConns = DefaultMaxConns
	}
	if c.HeaderTimeout <= 0 {
		c.HeaderTimeout = DefaultHeaderTimeout
	}
	if c.BodyTimeout <= 0 {
		c.BodyTimeout = DefaultBodyTimeout
	}
	if c.BodyStall <= 0 {
		c.BodyStall = DefaultBodyStall
	}
	if c.BodyGrace <= 0 {
		c.BodyGrace = DefaultBodyGrace
	}
	if c.BodyMinRate <= 0 {
		c.BodyMinRate = DefaultBodyMinRate
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.WriteStall <= 0 {
		c.WriteStall = DefaultWriteStall
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// ErrSlowBody is what a handler's body read fails with when the body broke
// the guard's timing (it also matches os.ErrDeadlineExceeded).
var ErrSlowBody = errors.New("netguard: the request body did not arrive in time")

// ErrSlowReader is what a write fails with when the client took nothing of
// it for WriteStall (it also matches os.ErrDeadlineExceeded).
var ErrSlowReader = errors.New("netguard: the client stopped taking the response")

// errEvicted is what a body read fails with on an evicted connection.
var errEvicted = errors.New("netguard: the connection was closed to admit another")

// Stats counts a guard's connections.
type Stats struct {
	// Open is the number of open connections, Max the cap.
	Open int `json:"open"`
	Max  int `json:"max"`
	// Evicted counts connections closed to admit a newcomer; Refused
	// newcomers closed at once because nothing could be evicted;
	// SlowBodies bodies cut for arriving too slowly; SlowReaders
	// connections closed because their client took nothing of a write for
	// WriteStall.
	Evicted     uint64 `json:"evicted"`
	Refused     uint64 `json:"refused"`
	SlowBodies  uint64 `json:"slowBodies"`
	SlowReaders uint64 `json:"slowReaders"`
}

// Guard bounds the connections of one server. Create it with New; it is
// safe for concurrent use.
type Guard struct {
	cfg Config

	mu       sync.Mutex
	conns    map[*conn]struct{}
	stats    Stats
	lastWarn time.Time
}

// New returns a guard.
func New(cfg Config) *Guard {
	return &Guard{cfg: cfg.withDefaults(), conns: map[*conn]struct{}{}}
}

// Config returns the guard's configuration with its defaults applied.
func (g *Guard) Config() Config { return g.cfg }

// Stats returns the current counts.
func (g *Guard) Stats() Stats {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.stats
	s.Open, s.Max = len(g.conns), g.cfg.MaxConns
	return s
}

// phase is where a connection is in its life, as the cap sees it.
type phase uint8

const (
	phaseNew    phase = iota // accepted; its first request's headers not read yet
	phaseIdle                // between requests (keep-alive), or reading the next headers
	phaseBody                // a handler runs and its body has not all arrived
	phaseActive              // a handler runs past its body: evicted only while a write of it is blocked
)

func (p phase) evictable() bool { return p != phaseActive }

// conn is an accepted connection under the guard.
type conn struct {
	net.Conn
	g *Guard

	// Guarded by g.mu.
	phase   phase
	since   time.Time // when it entered its phase, or its body last progressed
	evicted bool
	closed  bool

	// writing is when the piece being written started (UnixNano), 0
	// between writes. Atomic: writes take no lock.
	writing atomic.Int64
}

// writePiece is how much of a write must go out within one WriteStall:
// the deadline is renewed for each piece, so a large answer to a client
// that reads slowly but steadily is never cut, while one that stops
// reading is.
const writePiece = 16 << 10

// Write writes p in pieces, each of which the client must take within the
// stall; a connection whose client stops reading fails the write (net/http
// then ends the handler's response and closes the connection), so that
// nothing a handler holds (a call's answer, an event stream) stays held by
// a client that does not read.
func (c *conn) Write(p []byte) (int, error) {
	stall := c.g.cfg.WriteStall
	n := 0
	for len(p) > 0 {
		piece := p[:min(len(p), writePiece)]
		now := time.Now()
		c.writing.Store(now.UnixNano())
		c.Conn.SetWriteDeadline(now.Add(stall))
		k, err := c.Conn.Write(piece)
		c.writing.Store(0)
		n += k
		p = p[k:]
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				c.g.mu.Lock()
				c.g.stats.SlowReaders++
				c.g.mu.Unlock()
				err = fmt.Errorf("%w: %w", ErrSlowReader, err)
			}
			return n, err
		}
	}
	return n, nil
}

// blockedWrite is how long a write must have waited for the client before
// the connection counts as stalled for the cap (shorter when the stall
// itself is).
func (g *Guard) blockedWrite() time.Duration { return min(time.Second, g.cfg.WriteStall/2) }

// evictableSince reports whether the cap may evict c at now, and since
// when it has made no progress: a connection idle, sending its headers or
// its body, or whose handler's write has waited on the client for
// blockedWrite. A handler that is working (not waiting on its client) is
// never evicted.
func (g *Guard) evictableSince(c *conn, now time.Time) (time.Time, bool) {
	if c.phase.evictable() {
		return c.since, true
	}
	if w := c.writing.Load(); w != 0 {
		if t := time.Unix(0, w); now.Sub(t) >= g.blockedWrite() {
			return t, true
		}
	}
	return time.Time{}, false
}

// Listener returns ln under the guard's connection cap. Serve it with the
// server Server returns.
func (g *Guard) Listener(ln net.Listener) net.Listener { return &listener{Listener: ln, g: g} }

type listener struct {
	net.Listener
	g *Guard
}

// Accept admits the next connection, evicting a stalled one when the cap
// is reached; a newcomer nothing can make room for is closed at once and
// Accept waits for the next. It never blocks on the cap.
func (l *listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if gc := l.g.admit(c); gc != nil {
			return gc, nil
		}
	}
}

// admit registers c, or closes it when the cap is reached and nothing is
// evictable.
func (g *Guard) admit(c net.Conn) *conn {
	now := time.Now()
	g.mu.Lock()
	var victim *conn
	if len(g.conns) >= g.cfg.MaxConns {
		victim = g.oldestEvictableLocked(now)
		if victim == nil {
			g.stats.Refused++
			warn := now.Sub(g.lastWarn) > 10*time.Second
			if warn {
				g.lastWarn = now
			}
			refused := g.stats.Refused
			g.mu.Unlock()
			c.Close()
			if warn {
				g.cfg.Logger.Warn("connection cap reached and every connection is busy: new connections are closed at once",
					"server", g.cfg.Name, "max", g.cfg.MaxConns, "refused", refused)
			}
			return nil
		}
		victim.evicted = true
		g.dropLocked(victim)
		g.stats.Evicted++
	}
	gc := &conn{Conn: c, g: g, phase: phaseNew, since: now}
	g.conns[gc] = struct{}{}
	g.mu.Unlock()
	if victim != nil {
		victim.Conn.Close()
	}
	return gc
}

// oldestEvictableLocked is the evictable connection that has gone longest
// without progress (since it was accepted, went idle, its body last
// arrived, or its blocked write started), or nil.
func (g *Guard) oldestEvictableLocked(now time.Time) *conn {
	var oldest *conn
	var oldestSince time.Time
	for c := range g.conns {
		if since, ok := g.evictableSince(c, now); ok && (oldest == nil || since.Before(oldestSince)) {
			oldest, oldestSince = c, since
		}
	}
	return oldest
}

func (g *Guard) dropLocked(c *conn) {
	if !c.closed {
		c.closed = true
		delete(g.conns, c)
	}
}

// Close closes the connection and frees its place under the cap.
func (c *conn) Close() error {
	c.g.mu.Lock()
	c.g.dropLocked(c)
	c.g.mu.Unlock()
	return c.Conn.Close()
}

func (c *conn) setPhase(p phase) {
	c.g.mu.Lock()
	if c.phase != p {
		c.phase, c.since = p, time.Now()
	}
	c.g.mu.Unlock()
}

// progressed marks a body's bytes arriving: a body that keeps arriving is
// the last its phase gives up to a newcomer, so a flood of new connections
// evicts its own stalled ones before an upload in progress.
func (c *conn) progressed() {
	c.g.mu.Lock()
	if c.phase == phaseBody {
		c.since = time.Now()
	}
	c.g.mu.Unlock()
}

func (c *conn) isEvicted() bool {
	c.g.mu.Lock()
	defer c.g.mu.Unlock()
	return c.evicted
}

// bodyDone ends the body phase; false when the connection was evicted
// meanwhile (the handler must then not act on the body).
func (c *conn) bodyDone() bool {
	c.g.mu.Lock()
	defer c.g.mu.Unlock()
	if c.evicted {
		return false
	}
	if c.phase == phaseBody {
		c.phase, c.since = phaseActive, time.Now()
	}
	return true
}

type connKey struct{}
type bodyKey struct{}

// Server returns an http.Server serving h under the guard: header and idle
// timeouts, the body rules, bounded headers, and the phase tracking the
// cap evicts by. Serve it on Listener(ln).
func (g *Guard) Server(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           g.handler(h),
		ReadHeaderTimeout: g.cfg.HeaderTimeout,
		IdleTimeout:       g.cfg.IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
		ConnState:         g.connState,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if gc, ok := c.(*conn); ok {
				return context.WithValue(ctx, connKey{}, gc)
			}
			return ctx
		},
	}
}

// connState follows net/http's view of each connection: active once a
// request's headers are read, idle between requests.
func (g *Guard) connState(c net.Conn, s http.ConnState) {
	gc, ok := c.(*conn)
	if !ok {
		return
	}
	switch s {
	case http.StateActive, http.StateHijacked:
		gc.setPhase(phaseActive)
	case http.StateIdle:
		gc.setPhase(phaseIdle)
	}
}

// handler applies the body rules to every request with a body and marks
// the connection evictable until the body has arrived.
func (g *Guard) handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gc, _ := r.Context().Value(connKey{}).(*conn)
		if gc == nil {
			next.ServeHTTP(w, r)
			return
		}
		if gc.isEvicted() {
			// Evicted between its headers and now: run nothing for it.
			panic(http.ErrAbortHandler)
		}
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		b := &body{rc: r.Body, c: gc, cfg: &g.cfg, start: time.Now(), timeout: g.cfg.BodyTimeout}
		gc.setPhase(phaseBody)
		// Until the handler reads, only the whole body's deadline applies
		// (the rest is measured while it reads).
		gc.Conn.SetReadDeadline(b.start.Add(b.timeout))
		r = r.WithContext(context.WithValue(r.Context(), bodyKey{}, b))
		r.Body = b
		defer func() {
			switch done, failed := b.state(); {
			case done:
			case failed || w.Header().Get("Connection") == "close":
				// Cut, evicted, or answered for good: what is left of the
				// body is not worth reading; the connection closes now.
				gc.Conn.SetReadDeadline(time.Now())
			default:
				// net/http reads what is left of the body (at most 256 KiB)
				// to reuse the connection: not longer than a stall.
				gc.Conn.SetReadDeadline(time.Now().Add(g.cfg.BodyStall))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// SetBodyTimeout gives r's body d from its handler's start instead of the
// guard's BodyTimeout: a route that takes a long body (an upload) calls it
// before reading. The stall and rate rules still apply. It does nothing
// for a request the guard does not serve.
func SetBodyTimeout(r *http.Request, d time.Duration) {
	if b, ok := r.Context().Value(bodyKey{}).(*body); ok && d > 0 {
		b.mu.Lock()
		b.timeout = d
		b.mu.Unlock()
		b.c.Conn.SetReadDeadline(b.start.Add(d))
	}
}

// body is a request body under the guard's rules. Its handler reads it
// from one goroutine at a time; mu guards what SetBodyTimeout and the
// deferred check share with the reader.
type body struct {
	rc    io.ReadCloser
	c     *conn
	cfg   *Config
	start time.Time

	mu      sync.Mutex
	timeout time.Duration
	first   time.Time // the handler's first read
	n       int64     // bytes read
	done    bool      // EOF seen
	err     error     // the error every later read answers
}

// state reports whether the body arrived whole, and whether reading it
// failed.
func (b *body) state() (done, failed bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.done, b.err != nil
}

// deadline is when the next byte must have arrived: the whole body's
// deadline, a stall from now, and the time at which the bytes read so far
// fall below the minimum rate (never before the grace period ends).
func (b *body) deadline(now time.Time) time.Time {
	dl := b.start.Add(b.timeout)
	if s := now.Add(b.cfg.BodyStall); s.Before(dl) {
		dl = s
	}
	owed := time.Duration(float64(b.n) / float64(b.cfg.BodyMinRate) * float64(time.Second))
	if r := b.first.Add(max(b.cfg.BodyGrace, owed)); r.Before(dl) {
		dl = r
	}
	return dl
}

func (b *body) Read(p []byte) (int, error) {
	b.mu.Lock()
	if b.err != nil {
		err := b.err
		b.mu.Unlock()
		return 0, err
	}
	if b.done {
		b.mu.Unlock()
		return 0, io.EOF
	}
	now := time.Now()
	if b.first.IsZero() {
		b.first = now
	}
	dl := b.deadline(now)
	b.mu.Unlock()
	if b.c.isEvicted() {
		return b.fail(errEvicted)
	}
	b.c.Conn.SetReadDeadline(dl)
	n, err := b.rc.Read(p)
	b.mu.Lock()
	b.n += int64(n)
	b.mu.Unlock()
	if n > 0 {
		b.c.progressed()
	}
	switch {
	case err == io.EOF:
		if !b.c.bodyDone() {
			return b.fail(errEvicted)
		}
		b.mu.Lock()
		b.done = true
		b.mu.Unlock()
		// The handler runs on past its body: net/http now watches the
		// connection for the client going away, and that read must not
		// time out.
		b.c.Conn.SetReadDeadline(time.Time{})
		return n, io.EOF
	case errors.Is(err, os.ErrDeadlineExceeded):
		b.c.g.mu.Lock()
		b.c.g.stats.SlowBodies++
		b.c.g.mu.Unlock()
		return b.fail(fmt.Errorf("%w (%d bytes in %s): %w", ErrSlowBody, b.n, time.Since(b.start).Round(time.Millisecond), err))
	case err != nil:
		if b.c.isEvicted() {
			return b.fail(errEvicted)
		}
		return b.fail(err)
	}
	return n, nil
}

// fail makes err the answer of this and every later read.
func (b *body) fail(err error) (int, error) {
	b.mu.Lock()
	b.err = err
	b.mu.Unlock()
	return 0, err
}

func (b *body) Close() error { return b.rc.Close() }
