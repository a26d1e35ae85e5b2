package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"
)

// HTTPOptions configure Server.HTTPHandler.
type HTTPOptions struct {
	// Path, when set, is the only path served; others get 404.
	Path string
	// Authenticate runs on every request. It returns the principal (the
	// authentication context; sessions, streams and requestStates are bound
	// to it) and whether the request is authenticated. Nil allows everything
	// with principal "".
	Authenticate func(*http.Request) (principal string, ok bool)
	// AllowedOrigins lists browser origins ("https://app.example") allowed
	// besides same-origin requests; "*" allows any. A request whose Origin
	// header is present and not allowed gets 403.
	AllowedOrigins []string
	// AllowedHosts lists extra Host header values (host or host:port)
	// accepted on loopback listeners, where only localhost names are
	// accepted by default (DNS-rebinding protection). On other listeners,
	// when non-empty, it is the list of accepted hosts.
	AllowedHosts []string
	// MaxBodyBytes caps a POST body (default 4 MiB): a larger declared
	// length gets 413 before anything is read, a longer body as soon as it
	// passes the cap, and the connection is closed.
	MaxBodyBytes int64
	// BodyBudgetBytes bounds the bytes of bodies over 64 KiB the handler
	// holds at once, from before they are read until their response starts
	// (default four times MaxBodyBytes): concurrent large posts stay in
	// flat memory, and a client that does not read its answer holds none.
	// A body that cannot get its size from the budget within BodyBudgetWait
	// (default 5s) is answered 503 with Retry-After, unread.
	BodyBudgetBytes int64
	BodyBudgetWait  time.Duration

	// ToolsSnapshot identifies the tool list a legacy GET stream announces;
	// the stream sends notifications/tools/list_changed when it changes.
	// Default: a hash of the registered tools.
	ToolsSnapshot func() string
	// StreamPollInterval is how often a GET stream re-checks the snapshot
	// (default 5s).
	StreamPollInterval time.Duration
	// StreamMaxDuration closes a GET stream after this long (default 10m).
	StreamMaxDuration time.Duration
	// MaxStreams (default 64), MaxStreamsPerClient (default 4) and
	// MaxStreamsPerSession (default 2) cap the open event streams: legacy
	// GET streams and modern subscriptions/listen. A new stream past the
	// session's or the client's cap closes that session's or client's
	// oldest; past MaxStreams, the oldest of the client holding the most,
	// never of a client holding fewer than the newcomer's would (else the
	// GET gets 429, the listen 503). The caps are counted per server,
	// across its handlers.
	MaxStreams           int
	MaxStreamsPerClient  int
	MaxStreamsPerSession int
	// KeepAliveInterval is the period of SSE comment lines on long-lived
	// streams (default 15s).
	KeepAliveInterval time.Duration
}

type httpHandler struct {
	srv    *Server
	opts   HTTPOptions
	budget *byteBudget
}

// HTTPHandler returns the Streamable HTTP endpoint serving both eras:
// POST for requests, notifications and (legacy) responses; GET for the
// legacy notification stream; DELETE to end a legacy session.
func (s *Server) HTTPHandler(opts HTTPOptions) http.Handler {
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 4 << 20
	}
	if opts.BodyBudgetBytes <= 0 {
		opts.BodyBudgetBytes = 4 * opts.MaxBodyBytes
	}
	// A body of unknown length takes the whole cap (and one byte to see
	// past it) from the budget.
	opts.BodyBudgetBytes = max(opts.BodyBudgetBytes, opts.MaxBodyBytes+1)
	if opts.BodyBudgetWait <= 0 {
		opts.BodyBudgetWait = defaultBodyBudgetWait
	}
	if opts.StreamPollInterval <= 0 {
		opts.StreamPollInterval = 5 * time.Second
	}
	if opts.StreamMaxDuration <= 0 {
		opts.StreamMaxDuration = 10 * time.Minute
	}
	if opts.MaxStreams <= 0 {
		opts.MaxStreams = 64
	}
	if opts.MaxStreamsPerClient <= 0 {
		opts.MaxStreamsPerClient = 4
	}
	if opts.MaxStreamsPerSession <= 0 {
		opts.MaxStreamsPerSession = 2
	}
	if opts.KeepAliveInterval <= 0 {
		opts.KeepAliveInterval = 15 * time.Second
	}
	if opts.ToolsSnapshot == nil {
		opts.ToolsSnapshot = s.toolsSnapshot
	}
	return &httpHandler{srv: s, opts: opts, budget: newByteBudget(opts.BodyBudgetBytes)}
}

// trackingWriter remembers whether the response was started, so a
// recovered panic answers only when it still can.
type trackingWriter struct {
	http.ResponseWriter
	started bool
}

func (t *trackingWriter) WriteHeader(code int) {
	t.started = true
	t.ResponseWriter.WriteHeader(code)
}

func (t *trackingWriter) Write(b []byte) (int, error) {
	t.started = true
	return t.ResponseWriter.Write(b)
}

func (t *trackingWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	tw := &trackingWriter{ResponseWriter: w}
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			h.srv.logger.Error("mcp: panic serving HTTP", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			if !tw.started {
				writeError(tw, http.StatusInternalServerError, ID{}, errInternal())
			}
		}
	}()
	h.serve(tw, r)
}

func (h *httpHandler) serve(w http.ResponseWriter, r *http.Request) {
	if h.opts.Path != "" && r.URL.Path != h.opts.Path {
		http.NotFound(w, r)
		return
	}
	hostOK := h.hostAllowed(r)
	if origin := r.Header.Get("Origin"); origin != "" && !h.originAllowed(origin, r.Host, hostOK) {
		writeError(w, http.StatusForbidden, ID{}, errInvalidRequest("Forbidden: origin not allowed"))
		return
	}
	if !hostOK {
		writeError(w, http.StatusMisdirectedRequest, ID{}, errInvalidRequest("Misdirected request: host not allowed"))
		return
	}
	principal := ""
	if h.opts.Authenticate != nil {
		p, ok := h.opts.Authenticate(r)
		if !ok {
			w.Header().Set("WWW-Authenticate", "Bearer")
			writeError(w, http.StatusUnauthorized, ID{}, errInvalidRequest(unauthorizedReason(r)))
			return
		}
		principal = p
	}
	switch r.Method {
	case http.MethodPost:
		h.servePOST(w, r, principal)
	case http.MethodGet:
		h.serveGET(w, r, principal)
	case http.MethodDelete:
		h.serveDELETE(w, r, principal)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		writeError(w, http.StatusMethodNotAllowed, ID{}, errInvalidRequest("Method not allowed"))
	}
}

// unauthorizedReason says what was wrong with a refused request's
// credentials, so that a person wiring a client sees which header to send
// instead of a bare "Unauthorized" (that some clients take for a sign-in
// prompt). It never echoes what was sent.
func unauthorizedReason(r *http.Request) string {
	auth := strings.TrimSpace(r.Header.Get("Authorization"))
	scheme, _, _ := strings.Cut(auth, " ")
	switch {
	case auth == "":
		return "Unauthorized: the Authorization header is missing; send Authorization: Bearer <token>, the token the server printed when it started"
	case !strings.EqualFold(scheme, "Bearer"):
		return "Unauthorized: the Authorization header is not a bearer token; send Authorization: Bearer <token>"
	}
	return "Unauthorized: the bearer token is wrong (not this server's token); send the token the server printed when it started"
}

// CheckOriginAndHost applies the endpoint's Origin and Host checks to a
// request of another route served beside it, so that every route of a
// server refuses what the MCP endpoint refuses. It returns 0 when the
// request passes, else the HTTP status (403 or 421) and the reason.
func (o HTTPOptions) CheckOriginAndHost(r *http.Request) (status int, reason string) {
	h := &httpHandler{opts: o}
	hostOK := h.hostAllowed(r)
	if origin := r.Header.Get("Origin"); origin != "" && !h.originAllowed(origin, r.Host, hostOK) {
		return http.StatusForbidden, "Forbidden: origin not allowed"
	}
	if !hostOK {
		return http.StatusMisdirectedRequest, "Misdirected request: host not allowed"
	}
	return 0, ""
}

// hostAllowed implements DNS-rebinding protection: on a loopback listener
// the Host header must name a loopback host (or be in AllowedHosts).
func (h *httpHandler) hostAllowed(r *http.Request) bool {
	host := strings.ToLower(r.Host)
	for _, a := range h.opts.AllowedHosts {
		a = strings.ToLower(a)
		if a == host || a == hostOnly(host) {
			return true
		}
	}
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	tcp, _ := local.(*net.TCPAddr)
	if tcp == nil || !tcp.IP.IsLoopback() {
		return len(h.opts.AllowedHosts) == 0
	}
	name := hostOnly(host)
	if name == "localhost" {
		return true
	}
	ip := net.ParseIP(name)
	return ip != nil && ip.IsLoopback()
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return strings.Trim(h, "[]")
	}
	return strings.Trim(hostport, "[]")
}

// originAllowed accepts listed origins and same-origin requests to an
// allowed host.
func (h *httpHandler) originAllowed(origin, host string, hostOK bool) bool {
	for _, a := range h.opts.AllowedOrigins {
		if a == "*" || strings.EqualFold(strings.TrimRight(a, "/"), origin) {
			return true
		}
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return hostOK && strings.EqualFold(u.Host, host)
}

func writeError(w http.ResponseWriter, status int, id ID, e *Error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(encodeError(id, e))
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	// Declared, net/http sends the body as it is; undeclared, an answer
	// past its 2 KiB buffer (a tools/list, a large read) goes chunked, with
	// a closing chunk written apart.
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// modernStatus maps a JSON-RPC error code to the HTTP status of a modern
// response.
func modernStatus(code int) int {
	switch code {
	case CodeMethodNotFound:
		return http.StatusNotFound
	case CodeInternalError:
		return http.StatusInternalServerError
	}
	return http.StatusBadRequest
}

// acceptsBoth reports whether the Accept header allows JSON and SSE.
func acceptsBoth(values []string) (jsonOK, sseOK bool) {
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			switch mt {
			case "*/*":
				jsonOK, sseOK = true, true
			case "application/*", "application/json":
				jsonOK = true
			case "text/*", "text/event-stream":
				sseOK = true
			}
		}
	}
	return jsonOK, sseOK
}

func (h *httpHandler) servePOST(w http.ResponseWriter, r *http.Request, principal string) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		writeError(w, http.StatusUnsupportedMediaType, ID{}, errInvalidRequest("Unsupported Media Type: Content-Type must be application/json"))
		return
	}
	if jsonOK, sseOK := acceptsBoth(r.Header.Values("Accept")); !jsonOK || !sseOK {
		writeError(w, http.StatusNotAcceptable, ID{}, errInvalidRequest("Not Acceptable: Accept must list application/json and text/event-stream"))
		return
	}
	body, release, refusal := h.readBody(r)
	defer release()
	if refusal != nil {
		refusal.write(w)
		return
	}
	w = &releaseOnAnswer{ResponseWriter: w, release: release}
	m, echo, derr := decodeMessage(body)
	if derr != nil {
		writeError(w, http.StatusBadRequest, echo, derr)
		return
	}
	if h.isModern(r, m) {
		h.serveModern(w, r, principal, m)
		return
	}
	h.serveLegacy(w, r, principal, m)
}

// isModern decides the era of a POST (see the package documentation).
func (h *httpHandler) isModern(r *http.Request, m *message) bool {
	if m.kind != kindResponse && (m.method == "server/discover" || hasMetaProtocolVersion(m)) {
		return true
	}
	return modernHeader(r)
}

// modernHeader reports an MCP-Protocol-Version header that is not legacy.
func modernHeader(r *http.Request) bool {
	vals := r.Header.Values("Mcp-Protocol-Version")
	return len(vals) > 0 && !isLegacyVersion(trimOWS(vals[0]))
}

// mergedContext is r's context, also cancelled when the server closes.
func (h *httpHandler) mergedContext(r *http.Request) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(r.Context())
	stop := context.AfterFunc(h.srv.baseCtx, cancel)
	return ctx, func() { stop(); cancel() }
}

func (h *httpHandler) serveModern(w http.ResponseWriter, r *http.Request, principal string, m *message) {
	switch m.kind {
	case kindResponse:
		writeError(w, http.StatusBadRequest, ID{}, errInvalidRequest("Invalid request: responses are not accepted in this protocol version"))
		return
	case kindNotification:
		// No client notification is defined for modern HTTP (closing the
		// stream is the cancellation signal); accept and ignore.
		w.WriteHeader(http.StatusAccepted)
		return
	}
	rm, perr := h.srv.modernPreflight(m, httpHeader(r.Header))
	if perr != nil {
		writeError(w, modernStatus(perr.Code), m.id, perr)
		return
	}
	ctx, cancel := h.mergedContext(r)
	defer cancel()
	if m.method == "subscriptions/listen" {
		h.serveListen(ctx, w, clientKey(principal, r.RemoteAddr, metaClientName(rm.meta)), m, rm)
		return
	}
	st := newHTTPStream(w)
	rc := h.srv.newReqCtx(EraModern, m, rm, principal, nil, st)
	resp, rpcErr := h.srv.dispatch(ctx, rc, m)
	if resp == nil {
		st.close()
		return
	}
	status := http.StatusOK
	if rpcErr != nil {
		status = modernStatus(rpcErr.Code)
	}
	st.finish(status, resp)
}

func (h *httpHandler) serveListen(ctx context.Context, w http.ResponseWriter, client string, m *message, rm *reqMeta) {
	params, _ := m.paramsObj()
	f, perr := h.srv.parseListen(params)
	if perr != nil {
		writeError(w, modernStatus(perr.Code), m.id, perr)
		return
	}
	ctx, evict := context.WithCancel(ctx)
	defer evict()
	sl := h.srv.streamSlots.take(h.streamCaps(), client, nil, evict)
	if sl == nil {
		w.Header().Set("Retry-After", "5")
		writeError(w, http.StatusServiceUnavailable, m.id, &Error{Code: CodeInternalError, Message: "Too many open streams"})
		return
	}
	defer h.srv.streamSlots.release(sl)
	st := newHTTPStream(w)
	st.openLongLived()
	h.srv.runListen(ctx, m.id, f, st.send, st.comment, h.opts.KeepAliveInterval)
	st.close()
}

// lookupSession finds the caller's legacy session from Mcp-Session-Id.
func (h *httpHandler) lookupSession(r *http.Request, principal string) (*session, int, *Error) {
	sid := r.Header.Get("Mcp-Session-Id")
	if sid == "" {
		return nil, http.StatusBadRequest, errInvalidRequest("Bad Request: Mcp-Session-Id header is required")
	}
	sess := h.srv.sessions.get(sid)
	if sess == nil || sess.principal != principal {
		return nil, http.StatusNotFound, errInvalidRequest("Session not found")
	}
	if v := r.Header.Get("Mcp-Protocol-Version"); v != "" && !isLegacyVersion(trimOWS(v)) {
		return nil, http.StatusBadRequest, errInvalidRequest("Bad Request: unsupported MCP-Protocol-Version header")
	}
	return sess, 0, nil
}

func (h *httpHandler) serveLegacy(w http.ResponseWriter, r *http.Request, principal string, m *message) {
	if m.kind == kindRequest && m.method == "initialize" {
		h.initialize(w, r, principal, m)
		return
	}
	sess, status, e := h.lookupSession(r, principal)
	if e != nil {
		id := ID{}
		if m.kind == kindRequest {
			id = m.id
		}
		writeError(w, status, id, e)
		return
	}
	sess.touch()
	defer sess.touch()
	switch m.kind {
	case kindResponse:
		sess.deliver(m)
		w.WriteHeader(http.StatusAccepted)
		return
	case kindNotification:
		h.srv.legacyNotification(sess, m)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	// Legacy HTTP: a dropped connection does not cancel the call; only
	// notifications/cancelled, DELETE, session expiry or Close do.
	ctx, cancel := context.WithCancel(sess.ctx)
	defer cancel()
	if !sess.inflight.add(m.id, cancel) {
		writeJSON(w, http.StatusOK, encodeError(m.id, errInvalidRequest("Invalid request: id already in flight")))
		return
	}
	defer sess.inflight.remove(m.id)
	st := newHTTPStream(w)
	rc := h.srv.newReqCtx(EraLegacy, m, legacyMeta(m), principal, sess, st)
	resp, _ := h.srv.dispatch(ctx, rc, m)
	// A session's end cancels its calls, but a call may see the session
	// end a moment before its own context does: an ended session is
	// answered nothing either way.
	if resp == nil || sess.ctx.Err() != nil {
		st.close()
		return
	}
	st.finish(http.StatusOK, resp)
}

func (h *httpHandler) initialize(w http.ResponseWriter, r *http.Request, principal string, m *message) {
	res, sess, e := h.srv.initialize(m, principal, r.RemoteAddr, nil)
	if e != nil {
		writeError(w, http.StatusBadRequest, m.id, e)
		return
	}
	if sess == nil {
		writeError(w, http.StatusServiceUnavailable, m.id, &Error{Code: CodeInternalError, Message: "Too many sessions"})
		return
	}
	w.Header().Set("Mcp-Session-Id", sess.id)
	writeJSON(w, http.StatusOK, res)
}

// initialize negotiates a legacy session. With inflight == nil the session
// goes into the HTTP store (for the client at remoteAddr); otherwise it is
// a stdio session using that table.
func (s *Server) initialize(m *message, principal, remoteAddr string, inflight *inflightTable) ([]byte, *session, *Error) {
	var p struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
		ClientInfo      struct {
			Name string `json:"name"`
		} `json:"clientInfo"`
	}
	if json.Unmarshal(m.params, &p) != nil || p.ProtocolVersion == "" {
		// A clientInfo of another shape is not ours to refuse: it only
		// loses its name.
		var only struct {
			ProtocolVersion string          `json:"protocolVersion"`
			Capabilities    json.RawMessage `json:"capabilities"`
		}
		if json.Unmarshal(m.params, &only) == nil && only.ProtocolVersion != "" {
			p.ProtocolVersion, p.Capabilities, p.ClientInfo.Name = only.ProtocolVersion, only.Capabilities, ""
		}
	}
	if p.ProtocolVersion == "" {
		return nil, nil, InvalidParamsError("initialize: protocolVersion is required")
	}
	version := p.ProtocolVersion
	if !isLegacyVersion(version) {
		version = LatestLegacyProtocolVersion
	}
	var sess *session
	if inflight == nil {
		var err error
		if sess, err = s.sessions.create(principal, clientKey(principal, remoteAddr, p.ClientInfo.Name), version, p.Capabilities); err != nil {
			return nil, nil, nil
		}
	} else {
		sess = newSession(s, "", principal, "", version, p.Capabilities, inflight)
	}
	res := map[string]any{
		"protocolVersion": version,
		"capabilities":    s.capabilities(EraLegacy),
		"serverInfo":      s.serverInfo(),
	}
	setIf(res, "instructions", s.opts.Instructions)
	b, err := json.Marshal(res)
	if err != nil {
		return nil, nil, errInternal()
	}
	return encodeResult(m.id, b), sess, nil
}

// legacyNotification handles a client notification in a legacy session.
func (s *Server) legacyNotification(sess *session, m *message) {
	switch m.method {
	case "notifications/initialized":
		sess.mu.Lock()
		sess.initialized = true
		sess.mu.Unlock()
	case "notifications/cancelled":
		if id, ok := cancelledID(m.params); ok {
			sess.inflight.cancel(id)
		}
	}
}

// cancelledID reads params.requestId of notifications/cancelled.
func cancelledID(params json.RawMessage) (ID, bool) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return ID{}, false
	}
	return parseID(p.RequestID)
}

func (h *httpHandler) serveDELETE(w http.ResponseWriter, r *http.Request, principal string) {
	if modernHeader(r) {
		w.Header().Set("Allow", "POST")
		writeError(w, http.StatusMethodNotAllowed, ID{}, errInvalidRequest("Method not allowed"))
		return
	}
	sess, status, e := h.lookupSession(r, principal)
	if e != nil {
		writeError(w, status, ID{}, e)
		return
	}
	h.srv.sessions.remove(sess.id)
	w.WriteHeader(http.StatusNoContent)
}

// httpStream is the response of one HTTP request: a single JSON body, or
// an SSE stream started lazily by the first message that is not the final
// response.
type httpStream struct {
	mu    sync.Mutex
	w     http.ResponseWriter
	ctl   *http.ResponseController
	state int
	err   error
}

const (
	streamPending = iota
	streamSSE
	streamDone
)

var errStreamClosed = errors.New("mcp: stream closed")

func newHTTPStream(w http.ResponseWriter) *httpStream {
	return &httpStream{w: w, ctl: http.NewResponseController(w)}
}

func (st *httpStream) startLocked() {
	// A stream may outlive any server WriteTimeout (a tool waiting for an
	// elicitation answer, a listen stream): lift the deadline. (Under
	// netguard each write sets its own, so a client that stops reading
	// still ends the stream.)
	_ = st.ctl.SetWriteDeadline(time.Time{})
	h := st.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	st.w.WriteHeader(http.StatusOK)
	st.state = streamSSE
	st.err = st.ctl.Flush()
}

// openLongLived starts the SSE stream now.
func (st *httpStream) openLongLived() {
	st.mu.Lock()
	if st.state == streamPending {
		st.startLocked()
	}
	st.mu.Unlock()
}

func (st *httpStream) writeLocked(chunk string) error {
	if _, err := io.WriteString(st.w, chunk); err != nil {
		st.err = err
		return err
	}
	if err := st.ctl.Flush(); err != nil {
		st.err = err
		return err
	}
	return nil
}

// send writes one message as an SSE event, starting the stream if needed.
func (st *httpStream) send(msg []byte) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.state == streamDone {
		return errStreamClosed
	}
	if st.err != nil {
		return st.err
	}
	if st.state == streamPending {
		st.startLocked()
	}
	return st.writeLocked("event: message\ndata: " + string(msg) + "\n\n")
}

// comment writes an SSE keep-alive comment.
func (st *httpStream) comment() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.state != streamSSE {
		return errStreamClosed
	}
	if st.err != nil {
		return st.err
	}
	return st.writeLocked(":\n\n")
}

// finish writes the final response: as the JSON body if nothing was
// streamed yet, else as the last SSE event.
func (st *httpStream) finish(status int, msg []byte) {
	st.mu.Lock()
	defer st.mu.Unlock()
	switch st.state {
	case streamPending:
		writeJSON(st.w, status, msg)
	case streamSSE:
		if st.err == nil {
			_ = st.writeLocked("event: message\ndata: " + string(msg) + "\n\n")
		}
	}
	st.state = streamDone
}

// close ends the response without a final message.
func (st *httpStream) close() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.state == streamPending {
		st.startLocked()
	}
	st.state = streamDone
}
