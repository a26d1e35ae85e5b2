package authority

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/admission"
	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/mcp"
	"github.com/sisyphus-go/sisyphus/internal/strict"
)

// Headers between a front and its authority.
const (
	// HeaderInstance carries the authority's instance id on every response.
	HeaderInstance = "Sisyphus-Instance"
	// HeaderExpectInstance names the instance a front pinned; another
	// instance refuses the request with 409 write_coordinator_changed
	// before running anything.
	HeaderExpectInstance = "Sisyphus-Expect-Instance"
	// HeaderExpectKernel carries a digest of the front's workspace identity;
	// an authority coordinating another workspace refuses with 409.
	HeaderExpectKernel = "Sisyphus-Expect-Kernel"
	// HeaderServer is on every answer of a Sisyphus server (its role and
	// version), so that a tool pointed at one can say so.
	HeaderServer = "Sisyphus-Server"
)

// delegationProtocol is the MCP revision of the front→authority hop:
// stateless, one POST per call.
const delegationProtocol = "2026-07-28"

// Delegated is a successful delegated result: the authority's
// structuredContent, and the taskId it ran under.
type Delegated struct {
	Structured json.RawMessage
	TaskID     string
}

// MarshalJSON is the structured content itself.
func (d *Delegated) MarshalJSON() ([]byte, error) { return d.Structured, nil }

// Relayed is the cause of a delegated failure: the authority's error result
// as it sent it (nil when the failure is the delegation's own), and the
// taskId of the call.
type Relayed struct {
	Result json.RawMessage
	TaskID string
}

func (r *Relayed) Error() string { return "delegated call failed (task " + r.TaskID + ")" }

// DelegatorConfig configures a Delegator.
type DelegatorConfig struct {
	// URL of the authority (--authority); "" discovers it from StateDir.
	URL string
	// StateDir holds the authority's discovery record and token.
	StateDir string
	// Token is the authority's bearer token; "" reads StateDir/token.
	Token string
	// Kernel is this process's workspace identity; an authority serving
	// another workspace is refused.
	Kernel     string
	HTTPClient *http.Client
	Logger     *slog.Logger
	Version    string
	// Recovery after a lost reply: at most RecoveryAttempts result queries
	// (3), each bounded by RecoveryTimeout (2 s), RecoveryPause apart (100 ms).
	RecoveryAttempts int
	RecoveryTimeout  time.Duration
	RecoveryPause    time.Duration
	// CancelGrace is how long a cancelled call keeps waiting for the
	// authority's answer after relaying the cancellation (default 30 s);
	// past it the front stops waiting and asks for the task's result.
	CancelGrace time.Duration
}

// Delegator sends a front's non-read calls to the authority, pinning the
// authority identity (URL and instance id) it started with, or first
// reached. It is the tools.Env.Delegate of stdio, `sisyphus call` and
// `sisyphus serve --authority`.
type Delegator struct {
	cfg    DelegatorConfig
	hc     *http.Client
	log    *slog.Logger
	kernel string // identity tag
	seq    atomic.Int64

	mu      sync.Mutex
	pinned  *target
	changed string // non-empty: why writes are refused until restart
	strict  *bool

	ev struct {
		delegated, unavailable, changed, lost, recovered, unknown, cancelRelays atomic.Uint64
	}
}

// target is where a call goes: the authority's base URL, its instance (""
// until known) and the largest request it takes (0: not known).
type target struct {
	base, instance string
	maxRequest     int64
}

// NewDelegator returns a delegator; when a live authority is recorded in
// the state dir (and matches URL, if given), it is pinned at once.
func NewDelegator(cfg DelegatorConfig) *Delegator {
	if cfg.RecoveryAttempts <= 0 {
		cfg.RecoveryAttempts = 3
	}
	if cfg.RecoveryTimeout <= 0 {
		cfg.RecoveryTimeout = 2 * time.Second
	}
	if cfg.RecoveryPause <= 0 {
		cfg.RecoveryPause = 100 * time.Millisecond
	}
	if cfg.CancelGrace <= 0 {
		cfg.CancelGrace = 30 * time.Second
	}
	if cfg.URL != "" {
		cfg.URL = baseURL(cfg.URL)
	}
	d := &Delegator{cfg: cfg, hc: cfg.HTTPClient, log: cfg.Logger}
	if d.hc == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 64
		d.hc = &http.Client{Transport: t}
	}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	if cfg.Kernel != "" {
		d.kernel = identityTag(cfg.Kernel)
	}
	if rec, err := ReadRecord(cfg.StateDir); err == nil && (cfg.URL == "" || cfg.URL == baseURL(rec.URL)) {
		d.pinned = &target{base: baseURL(rec.URL), instance: rec.InstanceID, maxRequest: rec.MaxRequestBytes}
		s := rec.Strict
		d.strict = &s
	}
	return d
}

// Strict tells whether the authority runs Strict Safe Writes (true until
// known otherwise).
func (d *Delegator) Strict() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.strict == nil || *d.strict
}

// Pinned returns the pinned authority's URL and instance id ("" when none).
func (d *Delegator) Pinned() (url, instance string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.pinned == nil {
		return "", ""
	}
	return d.pinned.base, d.pinned.instance
}

// Where a front's token for its authority came from.
const (
	tokenGiven     = "given"     // --token or the environment
	tokenAuthority = "authority" // the running authority's token file
	tokenStateDir  = "state dir" // the state dir's generated token
	tokenNone      = "none"
)

// token returns the bearer token to send and where it came from: the one
// given, else the one the authority of the state dir uses (however it was
// given to it), else the state dir's generated token.
func (d *Delegator) token() (tok, source string) {
	if d.cfg.Token != "" {
		return d.cfg.Token, tokenGiven
	}
	if d.cfg.StateDir == "" {
		return "", tokenNone
	}
	if at, err := ReadAuthorityToken(d.cfg.StateDir); err == nil {
		return at.Token, tokenAuthority
	}
	data, err := os.ReadFile(filepath.Join(d.cfg.StateDir, "token"))
	if t := strings.TrimSpace(string(data)); err == nil && t != "" {
		return t, tokenStateDir
	}
	return "", tokenNone
}

// refusedToken says in plain words why the authority refused this
// process's token, and what to do about it.
func (d *Delegator) refusedToken(base string, status int) *failure.Error {
	_, source := d.token()
	var why, fix string
	switch source {
	case tokenGiven:
		why, fix = "refused the token this process was given (--token or SISYPHUS_TOKEN)", "give it the authority's token, or drop --token to use the one the authority's state dir records"
	case tokenAuthority:
		why, fix = "refused the token its own state dir records (it may have restarted with another token since)", "run the call again; if it persists, restart the authority"
	case tokenStateDir:
		why, fix = "refused the state dir's token file ("+filepath.Join(d.cfg.StateDir, "token")+"); this authority was started with another token", "pass the authority's token with --token or SISYPHUS_TOKEN"
	default:
		why, fix = "needs a bearer token and this process has none", "pass the authority's token with --token or SISYPHUS_TOKEN, or --state-dir of the authority"
	}
	e := unavailable("the write authority at %s %s (HTTP %d)", base, why, status)
	e.Action = fix + "; then preflight again"
	return e
}

func unavailable(format string, a ...any) *failure.Error {
	e := failure.New(failure.CoordinatorUnavailable, "%s; nothing was written", fmt.Sprintf(format, a...)).Attempted(false)
	e.Action = "start the authority (sisyphus serve) for this state dir, or pass --authority URL; then preflight again. Never write around it"
	return e
}

// resolve returns where to send a call.
func (d *Delegator) resolve() (target, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.changed != "" {
		return target{}, d.changedError()
	}
	if d.pinned != nil {
		return *d.pinned, nil
	}
	rec, err := ReadRecord(d.cfg.StateDir)
	if d.cfg.URL != "" {
		t := target{base: d.cfg.URL}
		if err == nil && baseURL(rec.URL) == d.cfg.URL {
			t.instance, t.maxRequest = rec.InstanceID, rec.MaxRequestBytes
		}
		return t, nil
	}
	if err != nil {
		if errors.Is(err, ErrNoRecord) {
			return target{}, unavailable("no write authority is running for state dir %s (no discovery record)", d.cfg.StateDir)
		}
		return target{}, unavailable("the write authority cannot be found: %v", err)
	}
	return target{base: baseURL(rec.URL), instance: rec.InstanceID, maxRequest: rec.MaxRequestBytes}, nil
}

func (d *Delegator) changedError() *failure.Error {
	return failure.New(failure.CoordinatorChanged, "%s; nothing was sent", d.changed).Attempted(false)
}

// markChanged makes every later write answer write_coordinator_changed.
func (d *Delegator) markChanged(why string) *failure.Error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.changed == "" {
		d.changed = why
		d.log.Warn("write authority changed: refusing writes until restart", "why", why)
	}
	d.ev.changed.Add(1)
	return d.changedError()
}

// pin records the instance that answered from t.
func (d *Delegator) pin(t target, instance string) error {
	if instance == "" {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.pinned == nil {
		d.pinned = &target{base: t.base, instance: instance, maxRequest: t.maxRequest}
		return nil
	}
	if d.pinned.base == t.base && d.pinned.instance != instance {
		return errors.New("changed")
	}
	return nil
}

// afterConnectFailure tells unavailable from changed when t cannot be
// reached: another live authority recorded in the state dir means the
// authority changed.
func (d *Delegator) afterConnectFailure(t target, cause error) error {
	d.ev.unavailable.Add(1)
	if t.instance != "" {
		if rec, err := ReadRecord(d.cfg.StateDir); err == nil && rec.InstanceID != t.instance {
			return d.markChanged(fmt.Sprintf("the authority this process pinned (%s) is gone and another instance now runs at %s", t.base, rec.URL))
		}
	}
	return unavailable("the write authority at %s cannot be reached (%v)", t.base, shortErr(cause))
}

func shortErr(err error) string {
	msg := err.Error()
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	return msg
}

// Delegate sends one non-read call to the authority as an MCP tools/call
// under a new taskId, and returns its result: a *Delegated, or a
// *tools.Error (the authority's error result relayed unchanged, or
// write_coordinator_unavailable, write_coordinator_changed, outcome_unknown
// with the taskId). A cancellation of ctx is relayed to the authority
// (task-control cancel) and the answer still awaited; the business call is
// never sent twice.
func (d *Delegator) Delegate(ctx context.Context, tool string, args json.RawMessage) (any, error) {
	t, err := d.resolve()
	if err != nil {
		d.ev.unavailable.Add(1)
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, failure.New(failure.Cancelled, "the call was cancelled before it was sent; nothing was run").Attempted(false)
	}
	d.ev.delegated.Add(1)
	taskID := NewTaskID()
	body, err := d.callBody(tool, args, taskID)
	if err != nil {
		return nil, failure.Invalid("arguments cannot be encoded").Attempted(false)
	}
	if t.maxRequest > 0 && int64(len(body)) > t.maxRequest {
		return nil, tooLargeForAuthority(len(body), t.maxRequest)
	}

	reqCtx, abort := context.WithCancel(context.WithoutCancel(ctx))
	defer abort()
	var grace *time.Timer
	var graceMu sync.Mutex
	stop := context.AfterFunc(ctx, func() {
		d.ev.cancelRelays.Add(1)
		go d.relayCancel(t, taskID)
		graceMu.Lock()
		grace = time.AfterFunc(d.cfg.CancelGrace, abort)
		graceMu.Unlock()
	})
	defer func() {
		stop()
		graceMu.Lock()
		if grace != nil {
			grace.Stop()
		}
		graceMu.Unlock()
	}()

	var sent atomic.Bool
	trace := &httptrace.ClientTrace{
		WroteHeaders: func() { sent.Store(true) },
		WroteRequest: func(httptrace.WroteRequestInfo) { sent.Store(true) },
	}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(reqCtx, trace), http.MethodPost, t.base+"/mcp", bytes.NewReader(body))
	if err != nil {
		return nil, unavailable("bad authority URL %q", t.base)
	}
	d.headers(req, t)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", delegationProtocol)
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	resp, err := d.hc.Do(req)
	if err != nil {
		if !sent.Load() {
			return nil, d.afterConnectFailure(t, err)
		}
		return d.recover(t, taskID, args, err)
	}
	defer resp.Body.Close()
	data, rerr := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err := d.checkIdentity(t, resp); err != nil {
		return nil, err
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		d.ev.unavailable.Add(1)
		return nil, d.refusedToken(t.base, resp.StatusCode)
	case resp.StatusCode == http.StatusConflict:
		return nil, d.conflict(t, data)
	case resp.StatusCode == http.StatusRequestEntityTooLarge:
		// Refused as the body arrived, before anything ran.
		return nil, tooLargeForAuthority(len(body), 0)
	case resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != "" && rerr == nil && isRPCError(data):
		// The authority's MCP endpoint refused to read the call (its budget
		// of large bodies was spent): nothing ran, so saying so is safe.
		e := failure.New(failure.QueueFull, "the authority is reading as many large calls as it takes at once; this one was not read or run").Attempted(false)
		e.Action = "retry in a moment"
		return nil, e
	case rerr != nil:
		return d.recover(t, taskID, args, rerr)
	case resp.StatusCode >= 500:
		return d.recover(t, taskID, args, fmt.Errorf("HTTP %d", resp.StatusCode))
	}
	msg, err := rpcResponse(resp.Header.Get("Content-Type"), data)
	switch {
	case err != nil && resp.StatusCode >= 300:
		// Refused by routing or validation before any tool ran.
		d.ev.unavailable.Add(1)
		return nil, unavailable("the authority at %s answered HTTP %d (is it a Sisyphus authority?)", t.base, resp.StatusCode)
	case err != nil:
		return d.recover(t, taskID, args, err)
	}
	if msg.Error != nil {
		return nil, failure.New(failure.DelegationRefused, "the authority refused the call: %s", msg.Error.Message).Attempted(false)
	}
	return toolResult(msg.Result, taskID)
}

// tooLargeForAuthority refuses a call larger than the authority takes in
// one request (limit 0: the authority said so with 413).
func tooLargeForAuthority(size int, limit int64) *failure.Error {
	if limit == 0 {
		return failure.Invalid("the call (%d bytes as sent) is larger than the authority takes in one request (its --max-request-size); nothing was run", size).
			With("size", size).Attempted(false)
	}
	return failure.Invalid("the call is %d bytes as sent, and the authority takes at most %d in one request (its --max-request-size); nothing was sent", size, limit).
		With("size", size).With("limit", limit).Attempted(false)
}

// isRPCError reports whether data is a JSON-RPC error response.
func isRPCError(data []byte) bool {
	var m struct {
		Error *json.RawMessage `json:"error"`
	}
	return json.Unmarshal(data, &m) == nil && m.Error != nil
}

func (d *Delegator) headers(req *http.Request, t target) {
	if tok, _ := d.token(); tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	d.pins(req, t)
}

// pins puts the pinned instance and workspace on req, and says who sends
// it.
func (d *Delegator) pins(req *http.Request, t target) {
	if t.instance != "" {
		req.Header.Set(HeaderExpectInstance, t.instance)
	}
	if d.kernel != "" {
		req.Header.Set(HeaderExpectKernel, d.kernel)
	}
	req.Header.Set("User-Agent", "sisyphus-front/"+d.cfg.Version)
}

// checkIdentity pins the answering instance, or reports that it changed.
func (d *Delegator) checkIdentity(t target, resp *http.Response) error {
	inst := resp.Header.Get(HeaderInstance)
	if resp.StatusCode == http.StatusConflict {
		return nil
	}
	if d.pin(t, inst) != nil {
		return d.markChanged(fmt.Sprintf("another authority instance answers at %s", t.base))
	}
	return nil
}

// conflict reads a 409 of the authority.
func (d *Delegator) conflict(t target, data []byte) error {
	var body struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	json.Unmarshal(data, &body)
	if body.Error.Code == string(failure.CoordinatorChanged) {
		return d.markChanged(fmt.Sprintf("the authority at %s is not the instance this process pinned", t.base))
	}
	d.ev.unavailable.Add(1)
	return unavailable("the authority at %s coordinates another workspace than the one this process reads (%s)", t.base, d.cfg.Kernel)
}

func (d *Delegator) callBody(tool string, args json.RawMessage, taskID string) ([]byte, error) {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	return json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": d.seq.Add(1), "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args, "_meta": map[string]any{
			mcp.MetaProtocolVersion:    delegationProtocol,
			mcp.MetaClientInfo:         map[string]any{"name": "sisyphus-front", "version": d.cfg.Version},
			mcp.MetaClientCapabilities: map[string]any{},
			MetaTaskID:                 taskID,
		}},
	})
}

// recover asks for the task's result after a lost reply: at most
// RecoveryAttempts times, each bounded by RecoveryTimeout, RecoveryPause
// apart. It never resubmits the call.
func (d *Delegator) recover(t target, taskID string, args json.RawMessage, cause error) (any, error) {
	d.ev.lost.Add(1)
	d.log.Warn("authority reply lost after dispatch; asking for the task's result", "err", cause)
	for i := 0; i < d.cfg.RecoveryAttempts; i++ {
		if i > 0 {
			time.Sleep(d.cfg.RecoveryPause)
		}
		ctx, cancel := context.WithTimeout(context.Background(), d.cfg.RecoveryTimeout)
		rep, err := d.control(ctx, t, taskID, admission.OpResult)
		cancel()
		if err != nil {
			var fe *failure.Error
			if errors.As(err, &fe) && fe.Code == failure.CoordinatorChanged {
				break
			}
			continue
		}
		if rep.Result != nil {
			d.ev.recovered.Add(1)
			var res json.RawMessage = rep.Result
			return toolResult(res, taskID)
		}
		if rep.Error != nil {
			break // settled, but its body is not available
		}
	}
	d.ev.unknown.Add(1)
	var probe struct {
		RequestID string `json:"requestId"`
	}
	json.Unmarshal(args, &probe)
	e := failure.Wrap(failure.OutcomeUnknown, &Relayed{TaskID: taskID},
		"the authority's reply was lost after the call was sent, and its result could not be recovered; the call was not resubmitted").Attempted(true)
	e.Action = "query it later with `sisyphus tasks result " + taskID + "` and inspect the target; reconcile with the original requestId, never a new one"
	if id, err := strict.ParseRequestID(probe.RequestID); err == nil {
		e.RequestID = string(id) // as issued, whatever the case it was sent in
	}
	return nil, e
}

// relayCancel sends a task-control cancel for taskID. The call may not be
// registered yet when the cancellation races its dispatch: an answer of
// found:false is retried a few times.
func (d *Delegator) relayCancel(t target, taskID string) {
	for i := 0; i < d.cfg.RecoveryAttempts; i++ {
		if i > 0 {
			time.Sleep(d.cfg.RecoveryPause)
		}
		ctx, cancel := context.WithTimeout(context.Background(), d.cfg.RecoveryTimeout)
		rep, err := d.control(ctx, t, taskID, admission.OpCancel)
		cancel()
		if err != nil {
			d.log.Warn("relaying the cancellation to the authority failed", "err", err)
			return
		}
		if rep.Found {
			d.log.Info("cancellation relayed to the authority", "accepted", rep.Accepted != nil && *rep.Accepted, "committing", rep.Committing)
			return
		}
	}
}

// Control sends a task-control request (status, cancel, result) to the
// authority.
func (d *Delegator) Control(ctx context.Context, taskID, op string) (admission.Reply, error) {
	t, err := d.resolve()
	if err != nil {
		return admission.Reply{}, err
	}
	return d.control(ctx, t, taskID, op)
}

func (d *Delegator) control(ctx context.Context, t target, taskID, op string) (admission.Reply, error) {
	body, _ := json.Marshal(map[string]string{"taskId": taskID, "operation": op})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.base+"/tasks", bytes.NewReader(body))
	if err != nil {
		return admission.Reply{}, err
	}
	d.headers(req, t)
	req.Header.Set("Content-Type", "application/json")
	resp, err := d.hc.Do(req)
	if err != nil {
		return admission.Reply{}, unavailable("the authority at %s cannot be reached (%v)", t.base, shortErr(err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return admission.Reply{}, err
	}
	if resp.StatusCode == http.StatusConflict {
		return admission.Reply{}, d.conflict(t, data)
	}
	if resp.StatusCode == http.StatusUnauthorized {
		return admission.Reply{}, d.refusedToken(t.base, resp.StatusCode)
	}
	if resp.StatusCode != http.StatusOK {
		return admission.Reply{}, fmt.Errorf("task control: HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(data))
	}
	var rep admission.Reply
	if err := json.Unmarshal(data, &rep); err != nil {
		return admission.Reply{}, fmt.Errorf("task control: %w", err)
	}
	return rep, nil
}

// Health fetches the authority's /health.
func (d *Delegator) Health(ctx context.Context) (json.RawMessage, error) {
	t, err := d.resolve()
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.base+"/health", nil)
	if err != nil {
		return nil, err
	}
	d.headers(req, t)
	resp, err := d.hc.Do(req)
	if err != nil {
		return nil, unavailable("the authority at %s cannot be reached (%v)", t.base, shortErr(err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusUnauthorized {
		return nil, d.refusedToken(t.base, resp.StatusCode)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("health: HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(data))
	}
	return data, nil
}

// Stats are the delegation counters of a front's /health.
func (d *Delegator) Stats() map[string]any {
	d.mu.Lock()
	changed := d.changed != ""
	pinned := d.pinned != nil
	d.mu.Unlock()
	return map[string]any{
		"pinned": pinned, "changed": changed,
		"delegated": d.ev.delegated.Load(), "unavailable": d.ev.unavailable.Load(), "changedRefusals": d.ev.changed.Load(),
		"lostReplies": d.ev.lost.Load(), "recovered": d.ev.recovered.Load(), "outcomeUnknown": d.ev.unknown.Load(),
		"cancelRelays": d.ev.cancelRelays.Load(),
	}
}

// rpcMessage is a JSON-RPC response.
type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// rpcResponse finds the response in a JSON body or an SSE stream.
func rpcResponse(contentType string, data []byte) (*rpcMessage, error) {
	if strings.HasPrefix(strings.TrimSpace(contentType), "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 64<<10), len(data)+1)
		var event bytes.Buffer
		flush := func() (*rpcMessage, bool) {
			defer event.Reset()
			var m rpcMessage
			if event.Len() == 0 || json.Unmarshal(event.Bytes(), &m) != nil || (m.Result == nil && m.Error == nil) {
				return nil, false
			}
			return &m, true
		}
		for sc.Scan() {
			line := sc.Text()
			if line == "" {
				if m, ok := flush(); ok {
					return m, nil
				}
				continue
			}
			if v, ok := strings.CutPrefix(line, "data:"); ok {
				event.WriteString(strings.TrimPrefix(v, " "))
			}
		}
		if m, ok := flush(); ok {
			return m, nil
		}
		return nil, errors.New("the event stream ended without a response")
	}
	var m rpcMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("decode response: %w", err)
	}
	if m.Result == nil && m.Error == nil {
		return nil, errors.New("response without result or error")
	}
	return &m, nil
}

// toolResult turns a tools/call result object into Delegate's answer.
func toolResult(raw json.RawMessage, taskID string) (any, error) {
	var res struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		Structured json.RawMessage `json:"structuredContent"`
		IsError    bool            `json:"isError"`
		ResultType string          `json:"resultType"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, failure.Wrap(failure.Internal, err, "the authority's result cannot be decoded")
	}
	structured := res.Structured
	if structured == nil {
		text := ""
		for _, c := range res.Content {
			if c.Type == "text" {
				text += c.Text
			}
		}
		if json.Valid([]byte(text)) && strings.HasPrefix(strings.TrimSpace(text), "{") {
			structured = json.RawMessage(text)
		} else {
			structured, _ = json.Marshal(map[string]any{"text": text})
		}
	}
	if !res.IsError {
		return &Delegated{Structured: structured, TaskID: taskID}, nil
	}
	e, ok := failure.Parse(structured)
	if !ok {
		e = failure.New(failure.Delegated, "the authority answered an error")
	}
	e.Cause = &Relayed{Result: structured, TaskID: taskID}
	return nil, e
}
