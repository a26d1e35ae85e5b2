package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
)

// Request is what every handler learns about the request it serves.
type Request struct {
	// Method is the JSON-RPC method ("tools/call", "prompts/get", ...).
	Method string
	// ID is the JSON-RPC id of this request (of this round, in the modern era).
	ID ID
	// Era and ProtocolVersion tell which revision the client speaks.
	Era             Era
	ProtocolVersion string
	// Principal is the authenticated context returned by
	// HTTPOptions.Authenticate ("" on stdio and without authentication).
	Principal string
	// Meta is params._meta as sent.
	Meta map[string]json.RawMessage
	// ClientCapabilities is the client's capabilities object: per request in
	// the modern era, from initialize in a legacy session.
	ClientCapabilities json.RawMessage
	// InputResponses holds the answers to earlier input requests. In the
	// modern era it is params.inputResponses exactly as the client sent it:
	// NOT verified, do not base authorization on it (use Input or Elicit).
	// In a legacy session it holds the answers the client gave to the
	// requests of an InputRequired error.
	InputResponses map[string]json.RawMessage

	rc *reqCtx
}

// reqCtx is the per-request plumbing shared by all transports.
type reqCtx struct {
	srv       *Server
	era       Era
	version   string
	principal string
	id        ID
	method    string
	meta      map[string]json.RawMessage
	capsRaw   json.RawMessage
	caps      capabilities
	sess      *session // legacy only
	out       sink     // request-related messages
	logLevel  LogLevel // modern: per request ("" = no logs)
	progress  json.RawMessage
	stateDecl string // the declaration the verified requestState was issued under

	mu       sync.Mutex
	answers  map[string]json.RawMessage // verified (modern) or collected (legacy) answers
	raw      map[string]json.RawMessage // modern inputResponses as sent
	elicitN  int
	finished bool
}

// sink receives JSON-RPC messages related to one request.
type sink interface {
	send(msg []byte) error
}

// apps reports whether the request's client declared the MCP Apps
// extension: a legacy session's declaration stands for all its requests.
func (rc *reqCtx) apps() bool {
	if rc.sess != nil {
		return rc.sess.apps
	}
	return rc.caps.declaresApps()
}

func (rc *reqCtx) request() Request {
	return Request{
		Method: rc.method, ID: rc.id, Era: rc.era, ProtocolVersion: rc.version,
		Principal: rc.principal, Meta: rc.meta, ClientCapabilities: rc.capsRaw,
		InputResponses: rc.raw, rc: rc,
	}
}

func (rc *reqCtx) sendNotification(method string, params any) error {
	rc.mu.Lock()
	done := rc.finished
	rc.mu.Unlock()
	if done || rc.out == nil {
		return errors.New("mcp: request already answered")
	}
	msg, err := encodeNotification(method, params)
	if err != nil {
		return err
	}
	return rc.out.send(msg)
}

// Notify sends a request-related notification (on the request's SSE
// response stream, or on stdout for stdio).
func (r *Request) Notify(ctx context.Context, method string, params any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return r.rc.sendNotification(method, params)
}

// Progress sends notifications/progress if the client asked for progress
// (params._meta.progressToken); otherwise it does nothing. A total of 0
// means unknown.
func (r *Request) Progress(ctx context.Context, progress, total float64, message string) error {
	if len(r.rc.progress) == 0 {
		return nil
	}
	p := map[string]any{"progressToken": r.rc.progress, "progress": progress}
	if total > 0 {
		p["total"] = total
	}
	if message != "" {
		p["message"] = message
	}
	return r.Notify(ctx, "notifications/progress", p)
}

// Log sends notifications/message if the client opted in at this level:
// per request through _meta logLevel in the modern era, through
// logging/setLevel in a legacy session. Otherwise it does nothing.
func (r *Request) Log(ctx context.Context, level LogLevel, logger string, data any) error {
	if level.severity() < 0 {
		return fmt.Errorf("mcp: unknown log level %q", level)
	}
	threshold := r.rc.logLevel
	if r.rc.era == EraLegacy && r.rc.sess != nil {
		threshold = r.rc.sess.getLogLevel()
	}
	if threshold == "" || level.severity() < threshold.severity() {
		return nil
	}
	p := map[string]any{"level": level, "data": data}
	if logger != "" {
		p["logger"] = logger
	}
	return r.Notify(ctx, "notifications/message", p)
}

// HasCapability reports whether the client declared a top-level capability
// ("sampling", "roots", "elicitation", "extensions", ...).
func (r *Request) HasCapability(name string) bool { return r.rc.caps.has(name) }

// CanElicit reports whether the client accepts form-mode elicitation
// ("elicitation": {} or "elicitation": {"form": {}}).
func (r *Request) CanElicit() bool { return r.rc.caps.elicitationForm() }

// StateDeclared is the elicitation declaration ("form", "url",
// "form+url") under which this retry's verified requestState was issued,
// "" without one. What was asked under a form declaration must be answered
// through the form, whatever the retry declares: removing capabilities
// cannot skip a question already asked.
func (r *Request) StateDeclared() string { return r.rc.stateDecl }

// Input asks the client for input and returns the answers by key. Keys are
// chosen by the caller and must be stable across rounds.
//
// Legacy session: each request is sent to the client as a JSON-RPC request
// and Input blocks until it answers (or ctx ends).
//
// Modern era: if every key has an answer bound to the verified requestState
// of this retry, Input returns them; otherwise it returns an error
// satisfying IsInputRequired, which the handler must return as is. The
// client then answers and retries, and the handler runs again from the
// start. Answers the client sent without a valid requestState are never
// returned.
//
// If the client did not declare the capability a request needs, Input
// returns a *MissingCapabilityError.
func (r *Request) Input(ctx context.Context, requests map[string]InputRequest) (map[string]json.RawMessage, error) {
	rc := r.rc
	keys := make([]string, 0, len(requests))
	for k := range requests {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make(map[string]json.RawMessage, len(keys))
	missing := map[string]InputRequest{}
	rc.mu.Lock()
	for _, k := range keys {
		if a, ok := rc.answers[k]; ok {
			out[k] = a
		} else {
			missing[k] = requests[k]
		}
	}
	rc.mu.Unlock()
	if len(missing) == 0 {
		// Answers bound to a verified state (or collected earlier in this
		// legacy call) stand even if this retry declares fewer capabilities.
		return out, nil
	}
	for _, k := range keys {
		req, ok := missing[k]
		if !ok {
			continue
		}
		capName := capabilityForMethod(req.Method)
		if capName == "" {
			return nil, fmt.Errorf("mcp: %q is not an input request method", req.Method)
		}
		params, err := json.Marshal(req.Params)
		if err != nil {
			return nil, fmt.Errorf("mcp: input request %q: %w", k, err)
		}
		if !rc.caps.supportsInput(req.Method, params) {
			return nil, &MissingCapabilityError{Capability: capName}
		}
	}
	if rc.era == EraModern || rc.sess == nil {
		return nil, &inputRequiredError{requests: missing}
	}
	for _, k := range keys {
		req, ok := missing[k]
		if !ok {
			continue
		}
		res, err := rc.sess.call(ctx, rc.out, req.Method, req.Params)
		if err != nil {
			return nil, err
		}
		if verr := validateInputResponse(req.Method, res); verr != nil {
			return nil, verr
		}
		rc.mu.Lock()
		if rc.answers == nil {
			rc.answers = map[string]json.RawMessage{}
		}
		rc.answers[k] = res
		rc.mu.Unlock()
		out[k] = res
	}
	return out, nil
}

// Elicit asks the user to fill a form (elicitation/create, form mode) and
// returns the answer; it works like Input. The caller must handle the three
// actions: accept (Content holds the values), decline and cancel.
func (r *Request) Elicit(ctx context.Context, p ElicitParams) (*ElicitResult, error) {
	key := p.Key
	if key == "" {
		r.rc.mu.Lock()
		r.rc.elicitN++
		key = fmt.Sprintf("elicitation-%d", r.rc.elicitN)
		r.rc.mu.Unlock()
	}
	schema := p.RequestedSchema
	if schema == nil {
		schema = map[string]any{"type": "object", "properties": map[string]any{}}
	}
	params := map[string]any{"message": p.Message, "requestedSchema": schema}
	if r.rc.era == EraModern || r.rc.version >= "2025-11-25" {
		params["mode"] = "form"
	}
	answers, err := r.Input(ctx, map[string]InputRequest{key: {Method: "elicitation/create", Params: params}})
	if err != nil {
		return nil, err
	}
	res, rerr := parseElicitResult(answers[key])
	if rerr != nil {
		return nil, rerr
	}
	return res, nil
}

// Client identifies the calling client, for fairness between clients: its
// legacy session ("session:<id>"; "stdio" on stdio), or in the modern era
// the client's declared name ("client:<name>"). It is what the client says,
// not authentication: never base authorization on it.
func (r *Request) Client() string {
	rc := r.rc
	if rc == nil {
		return ""
	}
	if rc.sess != nil {
		if rc.sess.id == "" {
			return "stdio"
		}
		return "session:" + rc.sess.id
	}
	var info struct {
		Name string `json:"name"`
	}
	if raw, ok := rc.meta[MetaClientInfo]; ok && json.Unmarshal(raw, &info) == nil && info.Name != "" {
		return "client:" + info.Name
	}
	return ""
}
