package mcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure a Server.
type Options struct {
	Name         string // serverInfo.name
	Version      string // serverInfo.version
	Title        string // optional serverInfo.title
	Instructions string // optional instructions for the model
	Logger       *slog.Logger

	// SessionIdleTimeout ends legacy sessions idle this long (default 30m).
	SessionIdleTimeout time.Duration
	// MaxSessions caps live legacy sessions (default 4096), and
	// MaxSessionsPerClient those of one client (default 64; a client is
	// the principal, the remote address and clientInfo.name). At either cap
	// a new session ends the least recently used idle session of its own
	// client, or (at MaxSessions) of the client holding the most, never of
	// a client holding fewer than the newcomer's would; with none to end,
	// initialize gets 503. An ended session answers 404 like an expired one.
	MaxSessions          int
	MaxSessionsPerClient int
	// MaxClientRequests caps the legacy server-to-client requests
	// (elicitation, sampling, roots) awaiting an answer over HTTP: in all
	// (default 64), per client (default 8) and per session (default 4).
	// Over the client's or the session's cap the new request fails at
	// once; over the total it withdraws the oldest of the client awaiting
	// the most, never of a client awaiting fewer than the newcomer's would.
	MaxClientRequests           int
	MaxClientRequestsPerClient  int
	MaxClientRequestsPerSession int
	// RequestStateTTL bounds how long an issued requestState is accepted
	// (default 5m).
	RequestStateTTL time.Duration
	// MaxRequestStates caps the issued requestStates not yet presented
	// (default 128); beyond, the oldest is forgotten and rejected.
	MaxRequestStates int
	// ClientRequestTimeout bounds how long a legacy server-to-client request
	// (elicitation/create, sampling/createMessage, roots/list) waits for the
	// client's answer (default 10m).
	ClientRequestTimeout time.Duration
	// MaxMessageBytes caps one stdio message (default 4 MiB).
	MaxMessageBytes int
	// CacheTTL and CacheScope are the caching hints put on cacheable modern
	// results (tools/list, prompts/list, resources/list,
	// resources/templates/list, resources/read, server/discover). Defaults:
	// 0 and "private".
	CacheTTL   time.Duration
	CacheScope string

	// RefreshTools, when set, brings the registered tools up to date with
	// their source (through AddTools and RemoveTool) before the server
	// answers from them: before tools/list, before a tools/call looks its
	// tool up, and before a GET stream's default snapshot. Tools that
	// follow a configuration which can change behind the server's back
	// set it, so that the list never shows another configuration than the
	// calls run under. It must be cheap when nothing changed.
	RefreshTools func(ctx context.Context)
}

// Server is an MCP server: a registry of tools, prompts and resources plus
// the protocol machinery of both eras. Create it with NewServer; it is safe
// for concurrent use.
type Server struct {
	opts   Options
	logger *slog.Logger

	mu        sync.RWMutex
	tools     map[string]*toolEntry
	toolOrder []string
	// toolsJSON is the visible tools' list as sent, kept until a tool
	// changes: an agent lists after every list_changed, and the list is
	// tens of kilobytes of schemas.
	// It has two variants: [0] for a client that does not declare the
	// Apps extension (no App tools), [1] for one that does.
	toolsJSON  [2]encodedJSON
	prompts    map[string]*Prompt
	promptOrd  []string
	resources  map[string]*Resource
	resOrder   []string
	templates  []*templateEntry
	completion CompletionHandler
	// skills are the skills extension's entries by SKILL.md URI.
	skills     map[string]*skillEntry
	skillOrder []string

	sessions *sessionStore
	states   *stateKeeper
	hub      *hub

	baseCtx   context.Context // cancelled by Close
	cancelAll context.CancelFunc

	// streamSlots are the event streams' places (legacy GET streams and
	// modern subscriptions/listen over HTTP), shared by every handler;
	// awaiting are the server-to-client requests awaiting an answer.
	streamSlots *fairSlots
	awaiting    *fairSlots
	getStreams  atomic.Int64 // open legacy GET streams
	listens     atomic.Int64 // open subscriptions/listen streams

	// now is the clock (tests replace it).
	now func() time.Time
	// beforeCall, when set (tests), runs after a call is registered and
	// before its handler starts.
	beforeCall func(*Request)
}

type toolEntry struct {
	tool     Tool
	wire     map[string]any
	headers  []paramHeader // x-mcp-header annotations
	required []string
	props    map[string]string // property -> simple JSON type
}

type templateEntry struct {
	tmpl     ResourceTemplate
	segments []string // literal text and "{var}" pieces
}

// NewServer returns a server with no tools.
func NewServer(opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.SessionIdleTimeout <= 0 {
		opts.SessionIdleTimeout = 30 * time.Minute
	}
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = 4096
	}
	if opts.MaxSessionsPerClient <= 0 {
		opts.MaxSessionsPerClient = 64
	}
	if opts.MaxClientRequests <= 0 {
		opts.MaxClientRequests = 64
	}
	if opts.MaxClientRequestsPerClient <= 0 {
		opts.MaxClientRequestsPerClient = 8
	}
	if opts.MaxClientRequestsPerSession <= 0 {
		opts.MaxClientRequestsPerSession = 4
	}
	if opts.RequestStateTTL <= 0 {
		opts.RequestStateTTL = 5 * time.Minute
	}
	if opts.ClientRequestTimeout <= 0 {
		opts.ClientRequestTimeout = 10 * time.Minute
	}
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = 4 << 20
	}
	if opts.CacheScope == "" {
		opts.CacheScope = "private"
	}
	if opts.Name == "" {
		opts.Name = "mcp-server"
	}
	if opts.Version == "" {
		opts.Version = "0.0.0"
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		opts:        opts,
		logger:      opts.Logger,
		tools:       map[string]*toolEntry{},
		prompts:     map[string]*Prompt{},
		resources:   map[string]*Resource{},
		skills:      map[string]*skillEntry{},
		hub:         newHub(),
		baseCtx:     ctx,
		cancelAll:   cancel,
		streamSlots: newFairSlots(),
		awaiting:    newFairSlots(),
		now:         time.Now,
	}
	var key [32]byte
	if _, err := rand.Read(key[:]); err != nil {
		panic("mcp: no randomness: " + err.Error())
	}
	s.states = newStateKeeper(key, func() time.Time { return s.now() }, opts.MaxRequestStates)
	s.sessions = newSessionStore(s)
	return s
}

// Close ends every legacy session, GET stream and subscription stream and
// cancels running handlers. The server must not be used afterwards.
func (s *Server) Close() {
	s.hub.close() // first: listen streams see it and send their final result
	s.cancelAll()
	s.sessions.closeAll()
}

// Stats counts live protocol state, for health reporting.
type Stats struct {
	Sessions      int // legacy HTTP sessions
	Streams       int // legacy GET streams
	Subscriptions int // modern subscriptions/listen streams (HTTP and stdio)
}

// Stats returns current counts.
func (s *Server) Stats() Stats {
	return Stats{Sessions: s.sessions.len(), Streams: int(s.getStreams.Load()), Subscriptions: int(s.listens.Load())}
}

// awaitCaps are the caps of server-to-client requests awaiting answers.
func (s *Server) awaitCaps() slotCaps {
	return slotCaps{perGroup: s.opts.MaxClientRequestsPerSession, perClient: s.opts.MaxClientRequestsPerClient, total: s.opts.MaxClientRequests}
}

var toolNamePattern = regexp.MustCompile(`^[A-Za-z0-9_.\-/]{1,128}$`)

// AddTool registers (or replaces) a tool and notifies listeners that the
// tool list changed. It panics on an invalid definition (bad name, nil
// handler, schema that is not a JSON object with "type":"object", or an
// invalid x-mcp-header annotation), like http.ServeMux does for bad patterns.
func (s *Server) AddTool(t Tool) { s.AddTools(t) }

// AddTools registers (or replaces) several tools at once and announces one
// change: a client that lists on the notification sees all of them
// replaced, never some. It panics as AddTool does, before changing any.
func (s *Server) AddTools(ts ...Tool) {
	entries := make([]*toolEntry, len(ts))
	for i, t := range ts {
		entries[i] = newToolEntry(t)
	}
	if len(entries) == 0 {
		return
	}
	s.mu.Lock()
	for _, e := range entries {
		if _, ok := s.tools[e.tool.Name]; !ok {
			s.toolOrder = append(s.toolOrder, e.tool.Name)
		}
		s.tools[e.tool.Name] = e
	}
	s.toolsJSON = [2]encodedJSON{}
	s.mu.Unlock()
	s.ToolsChanged()
}

// newToolEntry checks a tool's definition and renders its wire form.
func newToolEntry(t Tool) *toolEntry {
	if !toolNamePattern.MatchString(t.Name) {
		panic(fmt.Sprintf("mcp: invalid tool name %q", t.Name))
	}
	if t.Handler == nil {
		panic("mcp: tool " + t.Name + " has no handler")
	}
	in, err := schemaJSON(t.InputSchema, true)
	if err != nil {
		panic(fmt.Sprintf("mcp: tool %s: input schema: %v", t.Name, err))
	}
	e := &toolEntry{tool: t}
	wire := map[string]any{"name": t.Name, "inputSchema": in}
	setIf(wire, "title", t.Title)
	setIf(wire, "description", t.Description)
	if t.OutputSchema != nil {
		out, err := schemaJSON(t.OutputSchema, false)
		if err != nil {
			panic(fmt.Sprintf("mcp: tool %s: output schema: %v", t.Name, err))
		}
		wire["outputSchema"] = out
	}
	if t.Annotations != nil && *t.Annotations != (ToolAnnotations{}) {
		a := *t.Annotations // copy: later changes by the caller do not leak in
		wire["annotations"] = &a
	}
	if t.UI != nil {
		ui := *t.UI
		e.tool.UI = &ui
		wire["_meta"] = ui.meta()
	}
	e.wire = wire
	if e.headers, err = parseParamHeaders(in); err != nil {
		panic(fmt.Sprintf("mcp: tool %s: %v", t.Name, err))
	}
	e.required, e.props = shallowSchema(in)
	return e
}

// RemoveTool unregisters a tool and notifies listeners if it existed.
func (s *Server) RemoveTool(name string) {
	s.mu.Lock()
	_, ok := s.tools[name]
	if ok {
		delete(s.tools, name)
		s.toolOrder = removeString(s.toolOrder, name)
		s.toolsJSON = [2]encodedJSON{}
	}
	s.mu.Unlock()
	if ok {
		s.ToolsChanged()
	}
}

// AddPrompt registers (or replaces) a prompt and notifies listeners.
func (s *Server) AddPrompt(p Prompt) {
	if p.Name == "" || p.Handler == nil {
		panic("mcp: prompt needs a name and a handler")
	}
	s.mu.Lock()
	if _, ok := s.prompts[p.Name]; !ok {
		s.promptOrd = append(s.promptOrd, p.Name)
	}
	s.prompts[p.Name] = &p
	s.mu.Unlock()
	s.PromptsChanged()
}

// RemovePrompt unregisters a prompt and notifies listeners if it existed.
func (s *Server) RemovePrompt(name string) {
	s.mu.Lock()
	_, ok := s.prompts[name]
	if ok {
		delete(s.prompts, name)
		s.promptOrd = removeString(s.promptOrd, name)
	}
	s.mu.Unlock()
	if ok {
		s.PromptsChanged()
	}
}

// AddResource registers (or replaces) a direct resource.
func (s *Server) AddResource(r Resource) {
	if r.URI == "" || r.Name == "" || r.Handler == nil {
		panic("mcp: resource needs a URI, a name and a handler")
	}
	s.mu.Lock()
	if _, ok := s.resources[r.URI]; !ok {
		s.resOrder = append(s.resOrder, r.URI)
	}
	s.resources[r.URI] = &r
	s.mu.Unlock()
	s.ResourcesChanged()
}

// RemoveResource unregisters a direct resource and announces the change
// if it existed.
func (s *Server) RemoveResource(uri string) {
	s.mu.Lock()
	_, ok := s.resources[uri]
	if ok {
		delete(s.resources, uri)
		s.resOrder = removeString(s.resOrder, uri)
	}
	s.mu.Unlock()
	if ok {
		s.ResourcesChanged()
	}
}

// AddResourceTemplate registers a resource template.
func (s *Server) AddResourceTemplate(t ResourceTemplate) {
	if t.URITemplate == "" || t.Name == "" || t.Handler == nil {
		panic("mcp: resource template needs a URI template, a name and a handler")
	}
	segs, err := parseTemplate(t.URITemplate)
	if err != nil {
		panic("mcp: " + err.Error())
	}
	s.mu.Lock()
	s.templates = append(s.templates, &templateEntry{tmpl: t, segments: segs})
	s.mu.Unlock()
	s.ResourcesChanged()
}

// SetCompletionHandler enables completion/complete.
func (s *Server) SetCompletionHandler(h CompletionHandler) {
	s.mu.Lock()
	s.completion = h
	s.mu.Unlock()
}

// ToolsChanged tells every listener (legacy GET streams, stdio sessions,
// subscriptions/listen streams that asked for it) that the tool list changed.
func (s *Server) ToolsChanged() { s.hub.publish(event{kind: evTools}) }

// PromptsChanged announces a prompt list change.
func (s *Server) PromptsChanged() { s.hub.publish(event{kind: evPrompts}) }

// ResourcesChanged announces a resource list change.
func (s *Server) ResourcesChanged() { s.hub.publish(event{kind: evResources}) }

// ResourceUpdated announces that the resource at uri changed, to subscribers
// of that URI.
func (s *Server) ResourceUpdated(uri string) { s.hub.publish(event{kind: evResourceUpdated, uri: uri}) }

// refreshTools runs Options.RefreshTools, if any.
func (s *Server) refreshTools(ctx context.Context) {
	if s.opts.RefreshTools != nil {
		s.opts.RefreshTools(ctx)
	}
}

// toolsSnapshot is the default GET-stream snapshot: a hash of the tool list.
func (s *Server) toolsSnapshot() string {
	s.refreshTools(s.baseCtx)
	// The Apps variant: it holds every tool the other does, and more.
	sum := sha256.Sum256(s.toolListJSON(true))
	return hex.EncodeToString(sum[:])
}

// toolListJSON is the visible tools' list, encoded once per change for
// each kind of client: apps is whether it declared the Apps extension
// (only then does it get the tools that have a UI).
func (s *Server) toolListJSON(apps bool) encodedJSON {
	v := 0
	if apps {
		v = 1
	}
	s.mu.RLock()
	b := s.toolsJSON[v]
	s.mu.RUnlock()
	if b != nil {
		return b
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.toolsJSON[v] == nil {
		out := make([]map[string]any, 0, len(s.toolOrder))
		for _, n := range s.toolOrder {
			if e := s.tools[n]; !e.tool.Hidden && (apps || e.tool.UI == nil) {
				out = append(out, e.wire)
			}
		}
		enc, err := json.Marshal(out)
		if err != nil {
			// The entries were checked when they were added.
			panic(fmt.Sprintf("mcp: tool list: %v", err))
		}
		s.toolsJSON[v] = enc
	}
	return s.toolsJSON[v]
}

// hasApps reports whether any tool or resource belongs to an MCP App.
func (s *Server) hasApps() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, e := range s.tools {
		if e.tool.UI != nil {
			return true
		}
	}
	for u := range s.resources {
		if isUIResource(u) {
			return true
		}
	}
	return false
}

func (s *Server) lookupTool(name string) *toolEntry {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.tools[name]
}

func (s *Server) hasPrompts() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.prompts) > 0
}

func (s *Server) hasResources() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.resources) > 0 || len(s.templates) > 0
}

func (s *Server) completionHandler() CompletionHandler {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.completion
}

// capabilities returns the server capabilities for an era.
func (s *Server) capabilities(era Era) map[string]any {
	caps := map[string]any{
		"tools":   map[string]any{"listChanged": true},
		"logging": map[string]any{},
	}
	if s.hasPrompts() {
		caps["prompts"] = map[string]any{"listChanged": true}
	}
	if s.hasResources() {
		caps["resources"] = map[string]any{"subscribe": true, "listChanged": true}
	}
	if s.completionHandler() != nil {
		caps["completions"] = map[string]any{}
	}
	// Both eras: a legacy client that knows an extension finds it where a
	// modern one does; one that does not ignores the field.
	ext := map[string]any{}
	if s.hasSkills() {
		// directoryRead: resources/directory/read lists a skill's folders.
		ext[ExtSkills] = map[string]any{"directoryRead": true}
	}
	if s.hasApps() {
		ext[ExtApps] = map[string]any{"mimeTypes": []string{MimeApp}}
	}
	if len(ext) > 0 {
		caps["extensions"] = ext
	}
	return caps
}

func (s *Server) serverInfo() map[string]any {
	info := map[string]any{"name": s.opts.Name, "version": s.opts.Version}
	setIf(info, "title", s.opts.Title)
	return info
}

// schemaJSON normalises a schema value to a JSON object.
func schemaJSON(v any, input bool) (json.RawMessage, error) {
	var raw json.RawMessage
	switch x := v.(type) {
	case nil:
		if input {
			return json.RawMessage(`{"type":"object"}`), nil
		}
		return nil, nil
	case json.RawMessage:
		raw = x
	case []byte:
		raw = x
	case string:
		raw = json.RawMessage(x)
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return nil, err
		}
		raw = b
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if input {
		var typ string
		if json.Unmarshal(obj["type"], &typ) != nil || typ != "object" {
			return nil, fmt.Errorf(`root "type" must be "object"`)
		}
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, err
	}
	return json.RawMessage(buf.Bytes()), nil
}

// shallowSchema extracts the root "required" list and the simple "type" of
// each root property, for the shallow argument check done before a call.
func shallowSchema(schema json.RawMessage) ([]string, map[string]string) {
	var s struct {
		Required   []string                   `json:"required"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(schema, &s)
	props := map[string]string{}
	for name, p := range s.Properties {
		var t struct {
			Type any `json:"type"`
		}
		if json.Unmarshal(p, &t) == nil {
			if ts, ok := t.Type.(string); ok {
				props[name] = ts
			}
		}
	}
	return s.Required, props
}

// checkArguments is a shallow check of the arguments against the input
// schema: required properties present, root property types right. Deeper
// validation is the tool's job.
func (e *toolEntry) checkArguments(args map[string]json.RawMessage) string {
	var missing []string
	for _, r := range e.required {
		if _, ok := args[r]; !ok {
			missing = append(missing, r)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return "missing required argument(s): " + strings.Join(missing, ", ")
	}
	// The first mismatch by name, so that the message is the same
	// whatever the order of the arguments.
	bad := ""
	for n, v := range args {
		if want, ok := e.props[n]; ok && !typeMatches(want, jsonType(v), v) && (bad == "" || n < bad) {
			bad = n
		}
	}
	if bad != "" {
		return fmt.Sprintf("argument %q must be of type %s, got %s", bad, e.props[bad], jsonType(args[bad]))
	}
	return ""
}

func jsonType(raw json.RawMessage) string {
	raw = trimSpace(raw)
	if len(raw) == 0 {
		return "missing"
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

func typeMatches(want, got string, raw json.RawMessage) bool {
	switch want {
	case "integer":
		if got != "number" {
			return false
		}
		var n json.Number
		if json.Unmarshal(raw, &n) != nil {
			return false
		}
		if _, err := n.Int64(); err == nil {
			return true
		}
		f, err := n.Float64()
		return err == nil && f == float64(int64(f))
	case "number", "string", "boolean", "object", "array", "null":
		return want == got
	}
	return true
}

func removeString(list []string, s string) []string {
	out := list[:0]
	for _, v := range list {
		if v != s {
			out = append(out, v)
		}
	}
	return out
}
