package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/jsonobj"
)

// maxBridgeRounds bounds how often a legacy call is re-invoked after an
// InputRequired error.
const maxBridgeRounds = 16

// reqMeta is what the era-specific preflight extracted from a request.
type reqMeta struct {
	meta     map[string]json.RawMessage
	version  string
	capsRaw  json.RawMessage
	logLevel LogLevel
	progress json.RawMessage
}

// paramsObject decodes params; absent params decode as an empty object.
func paramsObject(raw json.RawMessage) (map[string]json.RawMessage, *Error) {
	if len(raw) == 0 {
		return map[string]json.RawMessage{}, nil
	}
	// raw is a member of a message decodeMessage validated.
	p, ok := jsonobj.Split(raw)
	if !ok {
		return nil, InvalidParamsError("params must be an object")
	}
	return p, nil
}

// metaOf returns params._meta as a map (nil when absent or not an object).
func metaOf(params map[string]json.RawMessage) map[string]json.RawMessage {
	m, _ := jsonobj.Split(params["_meta"])
	return m
}

// hasMetaProtocolVersion reports whether params._meta names a protocol
// version: the mark of a modern request.
func hasMetaProtocolVersion(m *message) bool {
	p, err := m.paramsObj()
	if err != nil {
		return false
	}
	_, ok := metaOf(p)[MetaProtocolVersion]
	return ok
}

// header is the view of HTTP request headers the modern preflight needs;
// nil on stdio.
type header interface {
	values(name string) []string
}

// modernPreflight validates a modern request: _meta, protocol version,
// client capabilities, log level, and (HTTP) the routing headers. The order
// follows the conformance expectations: header/body mismatch before version
// support, version support before capabilities.
func (s *Server) modernPreflight(m *message, h header) (*reqMeta, *Error) {
	params, perr := m.paramsObj()
	if perr != nil {
		return nil, perr
	}
	rawMeta, hasMeta := params["_meta"]
	var meta map[string]json.RawMessage
	if hasMeta {
		var ok bool
		if meta, ok = jsonobj.Split(rawMeta); !ok {
			return nil, InvalidParamsError("params._meta must be an object")
		}
	}
	rawPV, hasPV := meta[MetaProtocolVersion]
	var hdrPV string
	if h != nil {
		vals := h.values("Mcp-Protocol-Version")
		if len(vals) == 0 {
			if hasPV {
				return nil, errHeaderMismatch("MCP-Protocol-Version header is required")
			}
		} else {
			hdrPV = trimOWS(vals[0])
		}
	}
	if !hasMeta {
		return nil, InvalidParamsError("params._meta is required")
	}
	if !hasPV {
		return nil, InvalidParamsError("params._meta is missing %s", MetaProtocolVersion)
	}
	var pv string
	if json.Unmarshal(rawPV, &pv) != nil {
		return nil, InvalidParamsError("%s must be a string", MetaProtocolVersion)
	}
	if h != nil && hdrPV != pv {
		return nil, errHeaderMismatch("MCP-Protocol-Version header value '%s' does not match body value '%s'", hdrPV, pv)
	}
	if !isModernVersion(pv) {
		return nil, &Error{Code: CodeUnsupportedProtocolVersion, Message: "Unsupported protocol version",
			Data: map[string]any{"supported": SupportedProtocolVersions(), "requested": pv}}
	}
	caps, ok := meta[MetaClientCapabilities]
	if !ok || !isJSONObject(caps) {
		return nil, InvalidParamsError("params._meta is missing %s (an object)", MetaClientCapabilities)
	}
	rm := &reqMeta{meta: meta, version: pv, capsRaw: caps}
	if raw, ok := meta[MetaLogLevel]; ok {
		var l LogLevel
		if json.Unmarshal(raw, &l) != nil || l.severity() < 0 {
			return nil, InvalidParamsError("invalid %s", MetaLogLevel)
		}
		rm.logLevel = l
	}
	if raw, ok := meta[MetaProgressToken]; ok {
		if _, valid := parseID(raw); valid {
			rm.progress = raw
		}
	}
	if h != nil {
		if err := s.checkRoutingHeaders(m, params, h); err != nil {
			return nil, err
		}
	}
	return rm, nil
}

// legacyMeta extracts the per-request parts of a legacy request.
func legacyMeta(m *message) *reqMeta {
	params, err := m.paramsObj()
	if err != nil {
		return &reqMeta{}
	}
	rm := &reqMeta{meta: metaOf(params)}
	if raw, ok := rm.meta[MetaProgressToken]; ok {
		if _, valid := parseID(raw); valid {
			rm.progress = raw
		}
	}
	return rm
}

// newReqCtx builds the context of one request.
func (s *Server) newReqCtx(era Era, m *message, rm *reqMeta, principal string, sess *session, out sink) *reqCtx {
	rc := &reqCtx{
		srv: s, era: era, principal: principal, id: m.id, method: m.method,
		meta: rm.meta, sess: sess, out: out, logLevel: rm.logLevel, progress: rm.progress,
	}
	if era == EraModern {
		rc.version, rc.capsRaw = rm.version, rm.capsRaw
	} else if sess != nil {
		rc.version, rc.capsRaw = sess.version, sess.capsRaw
	}
	if era == EraLegacy && sess != nil {
		rc.caps = sess.caps // parsed once, when the session began
	} else {
		rc.caps = parseCapabilities(rc.capsRaw)
	}
	return rc
}

// dispatch runs one request. It returns the encoded response, or nil when no
// response must be sent (the request was cancelled), and the JSON-RPC error
// (if any) so HTTP can pick a status.
func (s *Server) dispatch(ctx context.Context, rc *reqCtx, m *message) ([]byte, *Error) {
	res, err := s.route(ctx, rc, m)
	rc.mu.Lock()
	rc.finished = true
	rc.mu.Unlock()
	if ctx.Err() != nil {
		// Cancelled (notifications/cancelled, client gone, session or
		// server closed): the result, if any, is not sent.
		return nil, nil
	}
	if err != nil {
		e := s.rpcError(rc, err)
		return encodeError(m.id, e), e
	}
	b, merr := marshalResult(s.decorate(rc, res))
	if merr != nil {
		s.logger.Error("mcp: cannot encode result", "method", rc.method, "err", merr)
		e := errInternal()
		return encodeError(m.id, e), e
	}
	return encodeResult(m.id, b), nil
}

// rpcError maps a handler error to a JSON-RPC error.
func (s *Server) rpcError(rc *reqCtx, err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var mc *MissingCapabilityError
	if errors.As(err, &mc) {
		return mc.rpc()
	}
	var nf *resourceNotFoundError
	if errors.As(err, &nf) {
		return nf.rpc(rc.era)
	}
	s.logger.Error("mcp: handler failed", "method", rc.method, "err", err)
	return errInternal()
}

// decorate adds the modern result fields: resultType, serverInfo and, for
// cacheable results, ttlMs/cacheScope. Legacy results are left as they are.
func (s *Server) decorate(rc *reqCtx, res map[string]any) map[string]any {
	if res == nil {
		res = map[string]any{}
	}
	if rc.era != EraModern {
		return res
	}
	if _, ok := res["resultType"]; !ok {
		res["resultType"] = "complete"
	}
	meta, _ := res["_meta"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	meta[MetaServerInfo] = s.serverInfo()
	res["_meta"] = meta
	if res["resultType"] == "complete" {
		switch rc.method {
		case "tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read", "server/discover", "skills/list", "skills/get", "resources/directory/read":
			res["ttlMs"] = s.opts.CacheTTL.Milliseconds()
			res["cacheScope"] = s.opts.CacheScope
		}
	}
	return res
}

// route runs a method.
func (s *Server) route(ctx context.Context, rc *reqCtx, m *message) (map[string]any, error) {
	params, perr := m.paramsObj()
	if perr != nil {
		return nil, perr
	}
	modern := rc.era == EraModern
	switch m.method {
	case "server/discover":
		if !modern {
			return nil, errMethodNotFound(m.method)
		}
		res := map[string]any{
			"supportedVersions": SupportedProtocolVersions(),
			"capabilities":      s.capabilities(EraModern),
		}
		setIf(res, "instructions", s.opts.Instructions)
		return res, nil
	case "ping":
		if modern {
			return nil, errMethodNotFound(m.method)
		}
		return map[string]any{}, nil
	case "logging/setLevel":
		if modern || rc.sess == nil {
			return nil, errMethodNotFound(m.method)
		}
		var p struct {
			Level LogLevel `json:"level"`
		}
		if json.Unmarshal(m.params, &p) != nil || p.Level.severity() < 0 {
			return nil, InvalidParamsError("invalid log level")
		}
		rc.sess.setLogLevel(p.Level)
		return map[string]any{}, nil
	case "tools/list":
		if err := checkCursor(params); err != nil {
			return nil, err
		}
		s.refreshTools(ctx)
		return map[string]any{"tools": s.toolListJSON(rc.apps())}, nil
	case "tools/call":
		return s.callTool(ctx, rc, params)
	case "prompts/list", "prompts/get":
		if !s.hasPrompts() {
			return nil, errMethodNotFound(m.method)
		}
		if m.method == "prompts/get" {
			return s.getPrompt(ctx, rc, params)
		}
		if err := checkCursor(params); err != nil {
			return nil, err
		}
		return map[string]any{"prompts": s.promptList()}, nil
	case "resources/list", "resources/templates/list", "resources/read":
		if !s.hasResources() {
			return nil, errMethodNotFound(m.method)
		}
		switch m.method {
		case "resources/read":
			return s.readResource(ctx, rc, params)
		case "resources/list":
			if err := checkCursor(params); err != nil {
				return nil, err
			}
			// The App views follow the configuration the tools do.
			s.refreshTools(ctx)
			return map[string]any{"resources": s.resourceList(rc.apps())}, nil
		}
		if err := checkCursor(params); err != nil {
			return nil, err
		}
		return map[string]any{"resourceTemplates": s.templateList()}, nil
	case "resources/subscribe", "resources/unsubscribe":
		if modern || rc.sess == nil || !s.hasResources() {
			return nil, errMethodNotFound(m.method)
		}
		var p struct {
			URI string `json:"uri"`
		}
		if json.Unmarshal(m.params, &p) != nil || p.URI == "" {
			return nil, InvalidParamsError("uri is required")
		}
		rc.sess.mu.Lock()
		if m.method == "resources/subscribe" {
			rc.sess.subs[p.URI] = true
		} else {
			delete(rc.sess.subs, p.URI)
		}
		rc.sess.mu.Unlock()
		return map[string]any{}, nil
	case "skills/list", "skills/get":
		if !s.hasSkills() {
			return nil, errMethodNotFound(m.method)
		}
		return s.skillsMethod(m.method, params)
	case "resources/directory/read":
		if !s.hasSkills() {
			return nil, errMethodNotFound(m.method)
		}
		return s.directoryRead(params)
	case "completion/complete":
		h := s.completionHandler()
		if h == nil {
			return nil, errMethodNotFound(m.method)
		}
		return s.complete(ctx, rc, h, m.params)
	}
	return nil, errMethodNotFound(m.method)
}

func checkCursor(params map[string]json.RawMessage) *Error {
	raw, ok := params["cursor"]
	if !ok || isJSONNull(raw) {
		return nil
	}
	return InvalidParamsError("Invalid cursor")
}

// guard runs fn, turning a panic into an internal error.
func (s *Server) guard(rc *reqCtx, fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			s.logger.Error("mcp: handler panicked", "method", rc.method, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			err = errInternal()
		}
	}()
	return fn()
}

// prepareInput verifies requestState and collects the verified answers of a
// modern retry into rc.
func (s *Server) prepareInput(rc *reqCtx, params map[string]json.RawMessage, b stateBinding) *Error {
	if rc.era != EraModern {
		return nil
	}
	in, err := parseMRTRParams(params)
	if err != nil {
		return err
	}
	rc.raw = in.responses
	if in.state == nil {
		return nil
	}
	p, verr := s.states.verify(*in.state, b)
	if verr != nil {
		s.logger.Warn("mcp: requestState rejected", "method", b.method, "name", b.name, "reason", verr.Message)
		return verr
	}
	rc.stateDecl = p.C
	answers := map[string]json.RawMessage{}
	for k, v := range p.A {
		answers[k] = v
	}
	for k, method := range p.K {
		resp, ok := in.responses[k]
		if !ok {
			continue
		}
		if e := validateInputResponse(method, resp); e != nil {
			return e
		}
		answers[k] = resp
	}
	rc.answers = answers
	return nil
}

// rounds runs invoke until it stops asking for input: in the modern era an
// input request ends the round with an input_required result; in a legacy
// session the requests are sent to the client and invoke runs again.
func (s *Server) rounds(ctx context.Context, rc *reqCtx, b stateBinding, setResponses func(map[string]json.RawMessage), invoke func() (map[string]any, error)) (map[string]any, error) {
	for round := 0; ; round++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		res, err := invoke()
		var ir *inputRequiredError
		if !errors.As(err, &ir) {
			return res, err
		}
		if rc.era == EraModern {
			return s.inputRequiredResult(rc, b, ir)
		}
		if round >= maxBridgeRounds || len(ir.requests) == 0 {
			return nil, errInternal()
		}
		r := rc.request()
		if _, err := r.Input(ctx, ir.requests); err != nil {
			return nil, err
		}
		rc.mu.Lock()
		answers := make(map[string]json.RawMessage, len(rc.answers))
		for k, v := range rc.answers {
			answers[k] = v
		}
		rc.mu.Unlock()
		setResponses(answers)
	}
}

// inputRequiredResult builds a modern input_required result.
func (s *Server) inputRequiredResult(rc *reqCtx, b stateBinding, ir *inputRequiredError) (map[string]any, error) {
	pending := map[string]string{}
	for k, r := range ir.requests {
		params, err := json.Marshal(r.Params)
		if err != nil {
			return nil, err
		}
		capName := capabilityForMethod(r.Method)
		if capName == "" {
			return nil, fmt.Errorf("mcp: %q is not an input request method", r.Method)
		}
		if !rc.caps.supportsInput(r.Method, params) {
			return nil, &MissingCapabilityError{Capability: capName}
		}
		pending[k] = r.Method
	}
	rc.mu.Lock()
	answers := rc.answers
	rc.mu.Unlock()
	token, err := s.states.issue(b, s.opts.RequestStateTTL, pending, answers)
	if err != nil {
		return nil, err
	}
	res := map[string]any{"resultType": "input_required", "requestState": token}
	if len(ir.requests) > 0 {
		res["inputRequests"] = ir.requests
	}
	return res, nil
}

func (s *Server) callTool(ctx context.Context, rc *reqCtx, params map[string]json.RawMessage) (map[string]any, error) {
	name, ok := jsonobj.String(params["name"])
	if !ok || name == "" {
		return nil, InvalidParamsError("tools/call: name is required")
	}
	s.refreshTools(ctx) // its schema, checked here, as the list shows it now
	entry := s.lookupTool(name)
	if entry == nil || (entry.tool.UI != nil && !rc.apps()) {
		// An App's tool is not in the list of a client that cannot
		// render Apps: for it, the tool does not exist.
		return nil, InvalidParamsError("Unknown tool: %s", name)
	}
	args := params["arguments"]
	if len(args) == 0 || isJSONNull(args) {
		args = json.RawMessage(`{}`)
	}
	argMap, ok := jsonobj.Split(args)
	if !ok {
		return nil, InvalidParamsError("tools/call: arguments must be an object")
	}
	b := stateBinding{principal: rc.principal, method: "tools/call", name: name, params: args, decl: rc.caps.elicitationDecl()}
	if err := s.prepareInput(rc, params, b); err != nil {
		return nil, err
	}
	if msg := entry.checkArguments(argMap); msg != "" {
		if entry.tool.InvalidArguments != nil {
			if res := entry.tool.InvalidArguments(msg); res != nil {
				return res.toWire(), nil
			}
		}
		return ErrorResult("Invalid arguments for tool " + name + ": " + msg).toWire(), nil
	}
	req := &CallRequest{Request: rc.request(), Name: name, Arguments: args, ArgumentFields: argMap}
	return s.rounds(ctx, rc, b, func(a map[string]json.RawMessage) { req.InputResponses = a }, func() (map[string]any, error) {
		if s.beforeCall != nil {
			s.beforeCall(&req.Request)
		}
		if err := ctx.Err(); err != nil {
			return nil, err // cancelled before it ran
		}
		var res *CallResult
		err := s.guard(rc, func() error {
			var herr error
			res, herr = entry.tool.Handler(ctx, req)
			return herr
		})
		if err != nil {
			if IsInputRequired(err) || ctx.Err() != nil {
				return nil, err
			}
			var e *Error
			var mc *MissingCapabilityError
			if errors.As(err, &e) || errors.As(err, &mc) {
				return nil, err
			}
			return ErrorResult(err).toWire(), nil
		}
		if res == nil {
			res = &CallResult{}
		}
		return res.toWire(), nil
	})
}

func (s *Server) promptList() []map[string]any {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]map[string]any, 0, len(s.promptOrd))
	for _, n := range s.promptOrd {
		p := s.prompts[n]
		w := map[string]any{"name": p.Name}
		setIf(w, "title", p.Title)
		setIf(w, "description", p.Description)
		if len(p.Arguments) > 0 {
			w["arguments"] = p.Arguments
		}
		out = append(out, w)
	}
	return out
}

func (s *Server) getPrompt(ctx context.Context, rc *reqCtx, params map[string]json.RawMessage) (map[string]any, error) {
	name, ok := jsonobj.String(params["name"])
	if !ok || name == "" {
		return nil, InvalidParamsError("prompts/get: name is required")
	}
	s.mu.RLock()
	p := s.prompts[name]
	s.mu.RUnlock()
	if p == nil {
		return nil, InvalidParamsError("Unknown prompt: %s", name)
	}
	args := map[string]string{}
	rawArgs := params["arguments"]
	if len(rawArgs) > 0 && !isJSONNull(rawArgs) {
		if json.Unmarshal(rawArgs, &args) != nil {
			return nil, InvalidParamsError("prompts/get: arguments must be an object of strings")
		}
	}
	var missing []string
	for _, a := range p.Arguments {
		if _, ok := args[a.Name]; a.Required && !ok {
			missing = append(missing, a.Name)
		}
	}
	if len(missing) > 0 {
		return nil, InvalidParamsError("prompts/get: missing required argument(s): %s", strings.Join(missing, ", "))
	}
	canon, _ := json.Marshal(args)
	b := stateBinding{principal: rc.principal, method: "prompts/get", name: name, params: canon, decl: rc.caps.elicitationDecl()}
	if err := s.prepareInput(rc, params, b); err != nil {
		return nil, err
	}
	req := &PromptRequest{Request: rc.request(), Name: name, Arguments: args}
	return s.rounds(ctx, rc, b, func(a map[string]json.RawMessage) { req.InputResponses = a }, func() (map[string]any, error) {
		var res *PromptResult
		err := s.guard(rc, func() error {
			var herr error
			res, herr = p.Handler(ctx, req)
			return herr
		})
		if err != nil {
			return nil, err
		}
		if res == nil {
			res = &PromptResult{}
		}
		msgs := res.Messages
		if msgs == nil {
			msgs = []PromptMessage{}
		}
		out := map[string]any{"messages": msgs}
		setIf(out, "description", res.Description)
		return out, nil
	})
}

// resourceList lists the direct resources; App views (ui://) only to a
// client that declared the Apps extension (apps).
func (s *Server) resourceList(apps bool) []map[string]any {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]map[string]any, 0, len(s.resOrder))
	for _, u := range s.resOrder {
		r := s.resources[u]
		if !apps && isUIResource(u) {
			continue
		}
		w := map[string]any{"uri": r.URI, "name": r.Name}
		if len(r.Meta) > 0 {
			w["_meta"] = r.Meta
		}
		setIf(w, "title", r.Title)
		setIf(w, "description", r.Description)
		setIf(w, "mimeType", r.MimeType)
		if r.Size > 0 {
			w["size"] = r.Size
		}
		out = append(out, w)
	}
	return out
}

func (s *Server) templateList() []map[string]any {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]map[string]any, 0, len(s.templates))
	for _, t := range s.templates {
		w := map[string]any{"uriTemplate": t.tmpl.URITemplate, "name": t.tmpl.Name}
		setIf(w, "title", t.tmpl.Title)
		setIf(w, "description", t.tmpl.Description)
		setIf(w, "mimeType", t.tmpl.MimeType)
		out = append(out, w)
	}
	return out
}

func (s *Server) readResource(ctx context.Context, rc *reqCtx, params map[string]json.RawMessage) (map[string]any, error) {
	var uri string
	if json.Unmarshal(params["uri"], &uri) != nil || uri == "" {
		return nil, InvalidParamsError("resources/read: uri is required")
	}
	var handler ResourceHandler
	var vars map[string]string
	s.mu.RLock()
	if r := s.resources[uri]; r != nil {
		// A view is not a resource of a client that cannot render it
		// (its list does not show it either).
		if !isUIResource(uri) || rc.apps() {
			handler = r.Handler
		}
	} else {
		for _, t := range s.templates {
			if v, ok := matchTemplate(t.segments, uri); ok {
				handler, vars = t.tmpl.Handler, v
				break
			}
		}
	}
	s.mu.RUnlock()
	if handler == nil {
		return nil, ResourceNotFound(uri)
	}
	b := stateBinding{principal: rc.principal, method: "resources/read", name: uri, decl: rc.caps.elicitationDecl()}
	if err := s.prepareInput(rc, params, b); err != nil {
		return nil, err
	}
	req := &ResourceRequest{Request: rc.request(), URI: uri, Vars: vars}
	return s.rounds(ctx, rc, b, func(a map[string]json.RawMessage) { req.InputResponses = a }, func() (map[string]any, error) {
		var res *ResourceResult
		err := s.guard(rc, func() error {
			var herr error
			res, herr = handler(ctx, req)
			return herr
		})
		if err != nil {
			return nil, err
		}
		if res == nil || len(res.Contents) == 0 {
			return nil, ResourceNotFound(uri)
		}
		return map[string]any{"contents": res.Contents}, nil
	})
}

func (s *Server) complete(ctx context.Context, rc *reqCtx, h CompletionHandler, raw json.RawMessage) (map[string]any, error) {
	var p struct {
		Ref      CompleteReference `json:"ref"`
		Argument CompleteArgument  `json:"argument"`
		Context  struct {
			Arguments map[string]string `json:"arguments"`
		} `json:"context"`
	}
	if json.Unmarshal(raw, &p) != nil || p.Ref.Type == "" || p.Argument.Name == "" {
		return nil, InvalidParamsError("completion/complete: ref and argument are required")
	}
	req := &CompleteRequest{Request: rc.request(), Ref: p.Ref, Argument: p.Argument, Context: p.Context.Arguments}
	var res *CompleteResult
	err := s.guard(rc, func() error {
		var herr error
		res, herr = h(ctx, req)
		return herr
	})
	if err != nil {
		return nil, err
	}
	if res == nil {
		res = &CompleteResult{}
	}
	values := res.Values
	if values == nil {
		values = []string{}
	}
	if len(values) > 100 {
		values = values[:100]
	}
	c := map[string]any{"values": values}
	if res.Total > 0 {
		c["total"] = res.Total
	}
	if res.HasMore {
		c["hasMore"] = true
	}
	return map[string]any{"completion": c}, nil
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// encodedJSON is a value this process encoded with json.Marshal (valid,
// compact): a result carries it as is, where encoding/json would check and
// compact it again — for the tools list, tens of kilobytes on every call.
type encodedJSON []byte

// MarshalJSON returns the value itself (json.Marshal still compacts it).
func (e encodedJSON) MarshalJSON() ([]byte, error) { return e, nil }

// marshalResult encodes a result object as json.Marshal does (keys sorted,
// HTML escaped), copying encodedJSON members as they are.
func marshalResult(res map[string]any) ([]byte, error) {
	b := []byte{'{'}
	for i, k := range sortedKeys(res) {
		if i > 0 {
			b = append(b, ',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		b = append(append(b, kb...), ':')
		if e, ok := res[k].(encodedJSON); ok && len(e) > 0 {
			b = append(b, e...)
			continue
		}
		vb, err := json.Marshal(res[k])
		if err != nil {
			return nil, err
		}
		b = append(b, vb...)
	}
	return append(b, '}'), nil
}
