package mcp

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
)

// session is a legacy (initialize-based) session: on HTTP it is addressed
// by Mcp-Session-Id; a stdio connection has at most one.
type session struct {
	srv       *Server
	id        string // "" for stdio
	principal string
	client    string // clientKey: principal, remote address, clientInfo.name
	version   string
	capsRaw   json.RawMessage
	caps      capabilities
	// apps: the client declared the MCP Apps extension at initialize
	// (decided once, as the session's capabilities are).
	apps bool

	ctx    context.Context // cancelled when the session ends
	cancel context.CancelFunc

	inflight *inflightTable

	mu          sync.Mutex
	lastUsed    time.Time
	logLevel    LogLevel // "" until logging/setLevel
	initialized bool
	closed      bool
	pending     map[string]chan *message // outbound request id key -> reply
	nextID      int64
	subs        map[string]bool       // resources/subscribe
	streams     map[*httpStream]bool  // open GET streams (fallback for outbound requests)
	notify      func(msg []byte) bool // stdio: unsolicited messages go here
}

func newSession(srv *Server, id, principal, client, version string, caps json.RawMessage, inflight *inflightTable) *session {
	ctx, cancel := context.WithCancel(srv.baseCtx)
	if inflight == nil {
		inflight = newInflightTable()
	}
	if len(caps) == 0 || !isJSONObject(caps) {
		caps = json.RawMessage(`{}`)
	}
	parsed := parseCapabilities(caps)
	return &session{
		srv: srv, id: id, principal: principal, client: client, version: version,
		capsRaw: caps, caps: parsed, apps: parsed.declaresApps(),
		ctx: ctx, cancel: cancel, inflight: inflight,
		lastUsed: srv.now(), pending: map[string]chan *message{},
		subs: map[string]bool{}, streams: map[*httpStream]bool{},
	}
}

func (s *session) touch() {
	s.mu.Lock()
	s.lastUsed = s.srv.now()
	s.mu.Unlock()
}

// idle reports whether the session may be ended for another: no call
// runs in it and no event stream of it is open.
func (s *session) idle() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed || s.inflight.count() == 0 && len(s.streams) == 0
}

// lastUse is when the session was last used.
func (s *session) lastUse() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastUsed
}

// expired reports whether the session has been idle too long. A session
// with running calls is not idle.
func (s *session) expired() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return true
	}
	if s.inflight.count() > 0 {
		return false
	}
	return s.srv.now().Sub(s.lastUsed) > s.srv.opts.SessionIdleTimeout
}

func (s *session) getLogLevel() LogLevel {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logLevel
}

func (s *session) setLogLevel(l LogLevel) {
	s.mu.Lock()
	s.logLevel = l
	s.mu.Unlock()
}

// terminate ends the session: running calls are cancelled and streams close.
func (s *session) terminate() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	pending := s.pending
	s.pending = map[string]chan *message{}
	s.mu.Unlock()
	s.cancel()
	s.inflight.cancelAll()
	for _, ch := range pending {
		close(ch)
	}
}

func (s *session) subscribed(uri string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.subs[uri]
}

func (s *session) addStream(st *httpStream) {
	s.mu.Lock()
	s.streams[st] = true
	s.mu.Unlock()
}

func (s *session) removeStream(st *httpStream) {
	s.mu.Lock()
	delete(s.streams, st)
	s.mu.Unlock()
}

// sendUnsolicited delivers a message on a session-wide channel: a GET
// stream (HTTP) or stdout (stdio).
func (s *session) sendUnsolicited(msg []byte) bool {
	s.mu.Lock()
	notify := s.notify
	streams := make([]*httpStream, 0, len(s.streams))
	for st := range s.streams {
		streams = append(streams, st)
	}
	s.mu.Unlock()
	if notify != nil {
		return notify(msg)
	}
	for _, st := range streams {
		if st.send(msg) == nil {
			return true
		}
	}
	return false
}

// call sends a server-to-client request related to the current client
// request (on out, else on a session-wide stream) and waits for the reply.
// When ctx ends first, the client is told with notifications/cancelled.
func (s *session) call(ctx context.Context, out sink, method string, params any) (json.RawMessage, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, errors.New("mcp: session closed")
	}
	s.nextID++
	id := IntID(s.nextID)
	ch := make(chan *message, 1)
	s.pending[id.key()] = ch
	s.mu.Unlock()
	// A request awaiting an answer keeps the client's call (and on HTTP its
	// connection) open: over HTTP their number is capped per session, per
	// client and in all, fairly between clients.
	withdrawn := make(chan struct{})
	if s.id != "" {
		sl := s.srv.awaiting.take(s.srv.awaitCaps(), s.client, s, sync.OnceFunc(func() { close(withdrawn) }))
		if sl == nil {
			s.dropPending(id)
			return nil, errTooManyClientRequests
		}
		defer s.srv.awaiting.release(sl)
	}
	msg, err := encodeRequest(id, method, params)
	if err != nil {
		s.dropPending(id)
		return nil, err
	}
	sent := out != nil && out.send(msg) == nil
	if !sent && !s.sendUnsolicited(msg) {
		s.dropPending(id)
		return nil, errors.New("mcp: no open stream to reach the client")
	}
	timeout := time.NewTimer(s.srv.opts.ClientRequestTimeout)
	defer timeout.Stop()
	select {
	case resp, ok := <-ch:
		if !ok {
			return nil, errors.New("mcp: session closed")
		}
		if resp.err != nil {
			return nil, fmt.Errorf("mcp: client answered %s with error %d: %s", method, resp.err.Code, resp.err.Message)
		}
		return resp.result, nil
	case <-ctx.Done():
		if s.ctx.Err() != nil {
			// The session's end cancels its calls too: a session that
			// ended is told nothing, whichever of the two is seen first.
			s.dropPending(id)
			return nil, errors.New("mcp: session closed")
		}
		s.abandon(id, out, "request cancelled")
		return nil, ctx.Err()
	case <-timeout.C:
		s.abandon(id, out, "timed out")
		return nil, fmt.Errorf("mcp: client did not answer %s within %v", method, s.srv.opts.ClientRequestTimeout)
	case <-withdrawn:
		s.abandon(id, out, "withdrawn: too many requests await answers")
		return nil, errClientRequestWithdrawn
	case <-s.ctx.Done():
		return nil, errors.New("mcp: session closed")
	}
}

func (s *session) dropPending(id ID) {
	s.mu.Lock()
	delete(s.pending, id.key())
	s.mu.Unlock()
}

// abandon gives up on an outbound request and tells the client so.
func (s *session) abandon(id ID, out sink, reason string) {
	s.dropPending(id)
	note, err := encodeNotification("notifications/cancelled", map[string]any{"requestId": id, "reason": reason})
	if err != nil {
		return
	}
	if out == nil || out.send(note) != nil {
		s.sendUnsolicited(note)
	}
}

// deliver routes a client's response to the waiting call.
func (s *session) deliver(m *message) bool {
	s.mu.Lock()
	ch, ok := s.pending[m.id.key()]
	if ok {
		delete(s.pending, m.id.key())
	}
	s.mu.Unlock()
	if ok {
		ch <- m
	}
	return ok
}

// inflightTable tracks running client requests by exact, typed id so that
// notifications/cancelled can stop them.
type inflightTable struct {
	mu    sync.Mutex
	calls map[string]context.CancelFunc
}

func newInflightTable() *inflightTable {
	return &inflightTable{calls: map[string]context.CancelFunc{}}
}

// add registers a call; false if the id is already in flight.
func (t *inflightTable) add(id ID, cancel context.CancelFunc) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, dup := t.calls[id.key()]; dup {
		return false
	}
	t.calls[id.key()] = cancel
	return true
}

func (t *inflightTable) remove(id ID) {
	t.mu.Lock()
	delete(t.calls, id.key())
	t.mu.Unlock()
}

// cancel cancels the call with exactly this id (type included).
func (t *inflightTable) cancel(id ID) bool {
	t.mu.Lock()
	c, ok := t.calls[id.key()]
	t.mu.Unlock()
	if ok {
		c()
	}
	return ok
}

func (t *inflightTable) cancelAll() {
	t.mu.Lock()
	calls := t.calls
	t.calls = map[string]context.CancelFunc{}
	t.mu.Unlock()
	for _, c := range calls {
		c()
	}
}

func (t *inflightTable) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.calls)
}

// sessionStore holds the HTTP legacy sessions.
type sessionStore struct {
	srv       *Server
	mu        sync.Mutex
	byID      map[string]*session
	perClient map[string]int
	lastSweep time.Time
}

func newSessionStore(srv *Server) *sessionStore {
	return &sessionStore{srv: srv, byID: map[string]*session{}, perClient: map[string]int{}}
}

var (
	errTooManySessions        = errors.New("mcp: too many sessions")
	errTooManyClientRequests  = errors.New("mcp: too many requests already await this client's answers")
	errClientRequestWithdrawn = errors.New("mcp: the request was withdrawn: too many requests await clients' answers")
)

// create opens a session for client. At MaxSessionsPerClient the client's
// least recently used idle session ends for it; at MaxSessions, after the
// sweep of expired ones, the least recently used idle session of the
// client holding the most, if that client holds at least as many as this
// one would. An ended session answers 404, as an expired one does.
func (st *sessionStore) create(principal, client, version string, caps json.RawMessage) (*session, error) {
	st.mu.Lock()
	if now := st.srv.now(); now.Sub(st.lastSweep) > time.Minute {
		st.lastSweep = now
		st.sweepLocked()
	}
	var victim *session
	switch {
	case st.perClient[client] >= st.srv.opts.MaxSessionsPerClient:
		if victim = st.lruIdleLocked(func(s *session) bool { return s.client == client }); victim == nil {
			st.mu.Unlock()
			return nil, errTooManySessions
		}
	case len(st.byID) >= st.srv.opts.MaxSessions:
		st.sweepLocked()
		if len(st.byID) >= st.srv.opts.MaxSessions {
			if victim = st.fairVictimLocked(st.perClient[client] + 1); victim == nil {
				st.mu.Unlock()
				return nil, errTooManySessions
			}
		}
	}
	if victim != nil {
		st.dropLocked(victim)
	}
	sess := newSession(st.srv, rand.Text(), principal, client, version, caps, nil)
	st.byID[sess.id] = sess
	st.perClient[client]++
	n := len(st.byID)
	st.mu.Unlock()
	if victim != nil {
		victim.terminate()
		st.srv.logger.Debug("mcp: legacy session ended to admit another", "sessions", n)
	}
	st.srv.logger.Debug("mcp: legacy session opened", "protocolVersion", version, "sessions", n)
	return sess, nil
}

// lruIdleLocked is the least recently used idle session among those match
// accepts, or nil.
func (st *sessionStore) lruIdleLocked(match func(*session) bool) *session {
	var v *session
	var vUsed time.Time
	for _, s := range st.byID {
		if !match(s) || !s.idle() {
			continue
		}
		if used := s.lastUse(); v == nil || used.Before(vUsed) {
			v, vUsed = s, used
		}
	}
	return v
}

// fairVictimLocked is the least recently used idle session of the client
// holding the most sessions among those holding at least need, or nil.
func (st *sessionStore) fairVictimLocked(need int) *session {
	var v *session
	var vUsed time.Time
	for _, s := range st.byID {
		n := st.perClient[s.client]
		if n < need || !s.idle() {
			continue
		}
		used := s.lastUse()
		if vn := st.perClient[v.clientOrEmpty()]; v == nil || n > vn || n == vn && used.Before(vUsed) {
			v, vUsed = s, used
		}
	}
	return v
}

func (s *session) clientOrEmpty() string {
	if s == nil {
		return ""
	}
	return s.client
}

// dropLocked removes s from the store (the caller terminates it).
func (st *sessionStore) dropLocked(s *session) {
	if st.byID[s.id] != s {
		return
	}
	delete(st.byID, s.id)
	if st.perClient[s.client]--; st.perClient[s.client] <= 0 {
		delete(st.perClient, s.client)
	}
}

func (st *sessionStore) sweepLocked() {
	for _, s := range st.byID {
		if s.expired() {
			st.dropLocked(s)
			s.terminate()
			st.srv.logger.Debug("mcp: idle legacy session ended")
		}
	}
}

// get returns the live session with this id, or nil (unknown, ended or
// idle past the timeout, which ends it).
func (st *sessionStore) get(id string) *session {
	st.mu.Lock()
	defer st.mu.Unlock()
	s := st.byID[id]
	if s == nil {
		return nil
	}
	if s.expired() {
		st.dropLocked(s)
		s.terminate()
		return nil
	}
	return s
}

func (st *sessionStore) remove(id string) {
	st.mu.Lock()
	s := st.byID[id]
	if s != nil {
		st.dropLocked(s)
	}
	st.mu.Unlock()
	if s != nil {
		s.terminate()
	}
}

func (st *sessionStore) closeAll() {
	st.mu.Lock()
	all := st.byID
	st.byID, st.perClient = map[string]*session{}, map[string]int{}
	st.mu.Unlock()
	for _, s := range all {
		s.terminate()
	}
}

func (st *sessionStore) len() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.byID)
}
