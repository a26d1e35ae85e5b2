package authority

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/admission"
	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/mascotstore"
	"github.com/sisyphus-go/sisyphus/internal/mcp"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// MetaTaskID is the _meta key of the io.siyuan.sisyphus/task-control
// extension: a UUID naming a tools/call for later status, cancel and result
// queries.
const MetaTaskID = "io.siyuan.sisyphus/taskId"

// Runner runs tool calls under admission. Every entry point takes it: MCP
// over HTTP and stdio, and `sisyphus call`.
type Runner struct {
	Registry  *tools.Registry
	Admission *admission.Controller
	// Delegating marks a front: its non-read calls go to the registry's
	// Delegate, counted in flight but queued in no local lane (the authority
	// admits them; a second write lane would split the boundary).
	Delegating bool
	Logger     *slog.Logger
	// ConfirmTimeout bounds how long a confirmation waits for the person
	// (0: DefaultConfirmTimeout).
	ConfirmTimeout time.Duration
	// Mascot, when set, keeps the mascot's books of the calls run here
	// (see mascot.go); Transport names this front in them (http, stdio or
	// cli; "": http).
	Mascot    *mascotstore.Store
	Transport string

	shown toolSync // what the MCP server shows of the registry
}

// Call is one tool call handed to a Runner.
type Call struct {
	Tool string
	Args json.RawMessage
	// Fields, when set, are Args decoded (see tools.Input).
	Fields    map[string]json.RawMessage
	Principal string
	// TaskID is the task-control id ("" without it).
	TaskID string
	// Caller identifies the client for fairness between clients (see
	// admission.Request.Caller).
	Caller string
	// CancelOnDone makes the cancellation of the caller's context a
	// cancellation request (a legacy notifications/cancelled, Ctrl-C).
	// False for a modern HTTP call with a taskId: a dropped connection then
	// cancels nothing, and the result stays available to task control.
	CancelOnDone bool
	// Confirmer asks the call's person to confirm a dangerous action (nil:
	// the client has no forms; it must pass confirm:true).
	Confirmer tools.Confirmer
}

func (c Call) input() tools.Input { return tools.Input{Raw: c.Args, Fields: c.Fields} }

// DefaultConfirmTimeout is how long a confirmation waits for the person,
// and how long a modern confirmation's requestState is accepted.
const DefaultConfirmTimeout = 5 * time.Minute

func (r *Runner) confirmTimeout() time.Duration {
	if r.ConfirmTimeout > 0 {
		return r.ConfirmTimeout
	}
	return DefaultConfirmTimeout
}

// laneOf classifies a call by its tool and action: reads (and help, unknown
// tools and actions, which the registry answers without the kernel) take
// the read lane, everything else the write lane.
func (r *Runner) laneOf(tool string, in tools.Input) (admission.Lane, string) {
	t, ok := r.Registry.Tool(tool)
	if !ok {
		return admission.LaneRead, ""
	}
	action, ok := in.Action()
	if !ok {
		return admission.LaneRead, ""
	}
	a, ok := t.Action(action)
	if !ok || a.Policy.Class == strict.Read {
		return admission.LaneRead, action
	}
	if r.Delegating {
		return admission.LaneDelegated, action
	}
	return admission.LaneWrite, action
}

// Run runs one call and returns its tool result. The error is only the
// MCP layer's own: a confirmation that continues in another round
// (input_required), which the handler returns as is.
//
// A dangerous call, and at a front any call that reads or creates a file
// of the person's (tools.Registry.ToConfirm), is confirmed before it is
// admitted, so that no lane waits for a person, and only once the gate,
// the arguments and the front's folder rule let it run: nobody is asked
// about a call that would be refused anyway.
func (r *Runner) Run(ctx context.Context, c Call) (*mcp.CallResult, error) {
	in := c.input()
	r.Registry.Prime(ctx, c.Tool, in)
	p, ok, lerr := r.Registry.ToConfirm(ctx, c.Tool, in)
	if ok || lerr != nil {
		// The gate's refusal comes first; then the local path's.
		if err := r.Registry.Check(ctx, c.Tool, in); err != nil {
			return errorResult(err), nil
		}
		if lerr != nil {
			return errorResult(lerr), nil
		}
		cctx, cancel := context.WithTimeout(ctx, r.confirmTimeout())
		err := tools.Confirm(cctx, c.Confirmer, p)
		timedOut := errors.Is(cctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
		cancel()
		switch {
		case err != nil && mcp.IsInputRequired(err):
			return nil, err
		case err != nil && timedOut:
			e := failure.New(failure.ConfirmationRequired, "%s.%s was not confirmed within %s; nothing was run", p.Tool, p.Action, r.confirmTimeout())
			return errorResult(e.Attempted(false)), nil
		case err != nil:
			return errorResult(confirmFailure(err, p)), nil
		}
		ctx = tools.WithConfirmed(ctx, p.Tool, p.Action)
	}
	return r.run(ctx, c), nil
}

// confirmFailure is the agent-facing form of a confirmation that did not
// come back as an answer.
func confirmFailure(err error, p tools.Pending) *failure.Error {
	var fe *failure.Error
	if errors.As(err, &fe) {
		return fe
	}
	var me *mcp.MissingCapabilityError
	if errors.As(err, &me) {
		// A retry that dropped the capability it was asked under.
		e := failure.Wrap(failure.ConfirmationInvalid, err, "the confirmation of %s.%s was asked by a form, and this call can no longer answer it; nothing was run", p.Tool, p.Action)
		return e.Attempted(false).SetCancelled(false)
	}
	e := failure.Wrap(failure.ConfirmationInvalid, err, "the client could not answer the confirmation of %s.%s (%v); nothing was run", p.Tool, p.Action, err)
	return e.Attempted(false).SetCancelled(false)
}

func (r *Runner) run(ctx context.Context, c Call) *mcp.CallResult {
	lane, action := r.laneOf(c.Tool, c.input())
	writes := lane != admission.LaneRead
	call, err := r.Admission.Admit(ctx, admission.Request{Lane: lane, Principal: c.Principal, TaskID: c.TaskID, Tool: c.Tool, Action: action,
		Caller: c.Principal + "/" + c.Caller})
	if err != nil {
		return errorResult(admissionError(err, writes))
	}
	if c.CancelOnDone {
		stop := context.AfterFunc(ctx, func() { call.Cancel() })
		defer stop()
	}
	started := time.Now()
	res := r.execute(call, c, lane, action, writes)
	named, counted := r.accounting(call, c, lane, action)
	var wire []byte
	if c.TaskID != "" { // only a task's result is kept
		wire, _ = json.Marshal(res)
	}
	call.Finish(admission.Outcome{Result: wire, IsError: res.IsError, Cancelled: isCancelled(res)})
	if counted {
		// After Finish: the call's lane slot is free while it awaits its
		// coin, so the calls behind it run and their coins share the write.
		r.accountEnd(ctx, c, named, res, started)
	}
	return res
}

func (r *Runner) execute(call *admission.Call, c Call, lane admission.Lane, action string, writes bool) *mcp.CallResult {
	if err := call.Start(call.Context()); err != nil {
		if errors.Is(err, admission.ErrCancelled) || errors.Is(err, admission.ErrDraining) {
			return errorResult(admissionError(err, writes))
		}
		r.logPanic(c.Tool, err)
		e := tools.KernelError(err)
		if e.Code == failure.Internal || e.Code == failure.KernelError {
			e = failure.Wrap(failure.ConfigUnavailable, err, "the configuration could not be loaded; nothing was run")
		}
		e = e.Clone()
		e.WriteAttempted = writeFlag(writes)
		return errorResult(e)
	}
	if !call.Snapshot().Allowed(c.Tool, action) {
		e := failure.New(failure.PermissionDenied, "this call is not permitted; nothing was run")
		e.WriteAttempted = writeFlag(writes)
		return errorResult(e)
	}
	ctx := call.Context()
	if p, ok := call.Snapshot().Policy.(*tools.Policy); ok && p != nil {
		ctx = tools.WithPolicy(ctx, p)
	}
	switch lane {
	case admission.LaneRead:
		ctx = siyuan.WithReadMeter(ctx, call.Budget())
	case admission.LaneWrite:
		ctx = strict.WithCommitBarrier(ctx, call.EnterCommit)
	}
	if named, ok := r.accounting(call, c, lane, action); ok {
		r.accountStart(c, named)
	}
	v, err := r.Registry.CallInput(ctx, c.Tool, c.input())
	r.logPanic(c.Tool, err)
	if lane == admission.LaneRead && call.TimedOut() {
		return errorResult(cutRead(failure.Wrap(failure.ReadTimedOut, context.Cause(ctx),
			"the read ran past its deadline (%s) and was stopped; its kernel call was abandoned", r.Admission.Limits().ReadTimeout)))
	}
	if be := call.Budget().Exceeded(); be != nil {
		// Whatever the action made of the error: the budget decides.
		return errorResult(cutRead(failure.Wrap(failure.ReadBudgetExceeded, be, "%s; nothing more was read", be.Error())))
	}
	if err != nil {
		// A cancelled read stops wherever it is: its kernel call is aborted,
		// so whatever error that gave, the read was cancelled.
		if lane == admission.LaneRead && call.CancelRequested() && errors.Is(context.Cause(ctx), admission.ErrDraining) {
			return errorResult(admissionError(admission.ErrDraining, false))
		}
		if lane == admission.LaneRead && call.CancelRequested() {
			return errorResult(failure.Wrap(failure.Cancelled, err, "the read was cancelled; it was stopped"))
		}
		return errorResult(err)
	}
	if d, ok := v.(*Delegated); ok {
		res := mcp.StructuredResult(d)
		res.Meta = map[string]any{MetaTaskID: d.TaskID}
		return res
	}
	if img, ok := v.(*tools.Image); ok {
		// The metadata as every answer is sent, then the image for the
		// model to look at.
		res := mcp.StructuredResult(img.Meta)
		res.Content = append(res.Content, mcp.ImageContent(img.Data, img.MimeType))
		return res
	}
	return mcp.StructuredResult(v)
}

// logPanic logs a panic recovered in a goroutine working for a call (the
// agent sees only internal_error): the log keeps the bug and its stack.
func (r *Runner) logPanic(tool string, err error) {
	if p := failure.PanicOf(err); p != nil && r.Logger != nil {
		r.Logger.Error("a goroutine working for a call panicked", "tool", tool, "panic", fmt.Sprint(p.Value), "stack", string(p.Stack))
	}
}

func writeFlag(writes bool) *bool {
	if !writes {
		return nil
	}
	f := false
	return &f
}

// admissionError is the agent-facing form of an admission refusal.
func admissionError(err error, writes bool) *failure.Error {
	var e *failure.Error
	switch {
	case errors.Is(err, admission.ErrQueueFull):
		e = failure.Wrap(failure.QueueFull, err, "too many calls are in flight (128); this one was not run")
	case errors.Is(err, admission.ErrCallerFull):
		e = failure.Wrap(failure.QueueFull, err, "this client has too many calls in flight; this one was not run")
	case errors.Is(err, admission.ErrTaskConflict):
		e = failure.Wrap(failure.TaskIDConflict, err, "this taskId names a live or retained task; the call was not run")
	case errors.Is(err, admission.ErrInvalidTask):
		e = failure.Wrap(failure.InvalidTaskID, err, "_meta[%q] must be a UUID string; the call was not run", MetaTaskID)
	case errors.Is(err, admission.ErrDraining) && writes:
		e = failure.Wrap(failure.CoordinatorUnavailable, err, "the write authority is shutting down; nothing was written")
		e.Action = "wait for the authority to restart, then preflight again"
	case errors.Is(err, admission.ErrDraining):
		e = failure.Wrap(failure.ShuttingDown, err, "the server is shutting down; the read was not run")
	case errors.Is(err, admission.ErrCancelled):
		e = failure.Wrap(failure.Cancelled, err, "the call was cancelled before it ran; nothing was run")
	default:
		e = failure.Wrap(failure.Internal, err, "internal error")
	}
	e.WriteAttempted = writeFlag(writes)
	return e
}

// errorResult turns an error into a tool error result. A delegated failure
// is relayed exactly as the authority answered it.
// cutRead marks the error of a read its budget or deadline stopped as
// incomplete: none of what it read is answered, so an agent never takes a
// shortened answer for the whole, and no page is advanced for it (the
// error's action says how to narrow the read).
func cutRead(e *failure.Error) *failure.Error {
	f := false
	e.Complete = &f
	return e
}

func errorResult(err error) *mcp.CallResult {
	var rel *Relayed
	if errors.As(err, &rel) && rel.Result != nil {
		res := mcp.ErrorResult(rel.Result)
		if rel.TaskID != "" {
			res.Meta = map[string]any{MetaTaskID: rel.TaskID}
		}
		return res
	}
	var fe *failure.Error
	if !errors.As(err, &fe) {
		fe = failure.Wrap(failure.Internal, err, "internal error")
	}
	out := fe.Result()
	if rel != nil && rel.TaskID != "" {
		out["taskId"] = rel.TaskID
	}
	return mcp.ErrorResult(out)
}

func isCancelled(res *mcp.CallResult) bool {
	if res == nil || !res.IsError {
		return false
	}
	var probe struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	raw, _ := res.StructuredContent.(json.RawMessage)
	return json.Unmarshal(raw, &probe) == nil && probe.Error.Code == string(failure.Cancelled)
}

// taskIDFromMeta reads the taskId of a tools/call; ok is false when it is
// present but not a string.
func taskIDFromMeta(meta map[string]json.RawMessage) (string, bool) {
	raw, present := meta[MetaTaskID]
	if !present {
		return "", true
	}
	var id string
	if json.Unmarshal(raw, &id) != nil {
		return "", false
	}
	return id, true
}

// NewServer returns the MCP server of rn's registry, each call run through
// rn (confirmation, admission, read budgets, commit barrier, task
// records). Its tools are those the configuration shows, kept current by
// SyncTools, and brought up to the configuration the calls read before
// every tools/list and tools/call (RefreshTools).
func NewServer(rn *Runner, version string, log *slog.Logger, maxMessage int) *mcp.Server {
	var s *mcp.Server
	s = mcp.NewServer(mcp.Options{
		Name: "sisyphus", Title: "Sisyphus for SiYuan", Version: version,
		Instructions: Instructions, Logger: log, MaxMessageBytes: maxMessage,
		RequestStateTTL: rn.confirmTimeout(),
		RefreshTools:    func(ctx context.Context) { rn.RefreshTools(ctx, s) },
	})
	rn.SyncTools(context.Background(), s)
	serveAgentDocs(s, rn, log)
	return s
}

// SyncTools shows s's clients rn's tools as the configuration is now
// (enabled actions, strict mode); when it cannot be read, as the default
// configuration shows them (every call then says why it cannot run). It
// compares every tool's declaration: the poll's check, which also catches
// what the configuration does not decide.
func (r *Runner) SyncTools(ctx context.Context, s *mcp.Server) { r.syncTools(ctx, s, true) }

// RefreshTools is SyncTools for the MCP server's RefreshTools hook, run
// before every tools/list and tools/call: it reads the configuration as a
// call's gate reads it (the same cached policy), and only when that
// configuration differs from the one shown does it compare the tools.
func (r *Runner) RefreshTools(ctx context.Context, s *mcp.Server) { r.syncTools(ctx, s, false) }

func (r *Runner) syncTools(ctx context.Context, s *mcp.Server, full bool) {
	if ctx.Err() != nil {
		return // a closed service, or an asker gone: nothing to show
	}
	ts := &r.shown
	// The configuration is read under the lock: syncs then apply in the
	// order of their reads, and one that read an older configuration can
	// never replace a newer one shown by another.
	ts.mu.Lock()
	defer ts.mu.Unlock()
	v, err := r.Registry.View(ctx)
	key := viewKey(v)
	if err != nil {
		if ctx.Err() != nil {
			return // the asker went away: its failed read says nothing of the configuration
		}
		if r.Logger != nil && ts.key != keyUnreadable {
			r.Logger.Warn("the configuration could not be read; showing the default tools", "err", err)
		}
		v = tools.View{Policy: &tools.Policy{Default: tools.DefaultLevel, Strict: true}, Strict: true}
		key = keyUnreadable
	}
	if !full && key == ts.key {
		return
	}
	ts.sync(s, r, v)
	ts.key = key
}

// keyUnreadable is the shown key while the configuration cannot be read.
const keyUnreadable = "unreadable"

// viewKey names what a view decides of the tools' declarations: the
// configuration's access version, strict mode and the gone notebooks.
func viewKey(v tools.View) string {
	if v.Policy == nil {
		return ""
	}
	gone := make([]string, 0, len(v.Policy.Gone))
	for id := range v.Policy.Gone {
		gone = append(gone, id)
	}
	sort.Strings(gone)
	return fmt.Sprintf("%s|%t|%s", v.Policy.Version, v.Strict, strings.Join(gone, ","))
}

// toolHandler runs an MCP tools/call of one tool through rn.
func toolHandler(rn *Runner, name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallRequest) (*mcp.CallResult, error) {
		taskID, ok := taskIDFromMeta(req.Meta)
		if !ok {
			return errorResult(admissionError(admission.ErrInvalidTask, false)), nil
		}
		return rn.Run(ctx, Call{Tool: name, Args: req.Arguments, Fields: req.ArgumentFields, Principal: req.Principal, TaskID: taskID, Caller: req.Client(),
			CancelOnDone: req.Era != mcp.EraModern || taskID == "", Confirmer: mcpConfirmer{&req.Request}})
	}
}

// mcpConfirmer asks through MCP form elicitation: a real elicitation/create
// in a legacy session, an input_required round in the modern era.
type mcpConfirmer struct{ req *mcp.Request }

// CanForm: the client declared form elicitation, or this is the retry of a
// round that asked under that declaration (which stands whatever the retry
// declares).
func (m mcpConfirmer) CanForm() bool {
	return m.req.CanElicit() || strings.Contains(m.req.StateDeclared(), "form")
}

func (m mcpConfirmer) Form(ctx context.Context, message string, schema map[string]any) (tools.FormAnswer, error) {
	res, err := m.req.Elicit(ctx, mcp.ElicitParams{Key: "dangerous-action-confirmation", Message: message, RequestedSchema: schema})
	if err != nil {
		return tools.FormAnswer{}, err
	}
	return tools.FormAnswer{Action: res.Action, Content: res.Content}, nil
}

// toolSync keeps an MCP server's tools equal to what the configuration
// shows: a tool without enabled actions is hidden, a changed schema is
// replaced; every change announces list_changed.
type toolSync struct {
	mu    sync.Mutex
	shown map[string]string // tool → digest of its declaration
	views map[string]bool   // the MCP Apps' views shown, by URI
	key   string            // viewKey of the view shown ("": none yet)
}

// sync shows v; ts.mu is held.
func (ts *toolSync) sync(s *mcp.Server, rn *Runner, v tools.View) {
	if ts.shown == nil {
		ts.shown = map[string]string{}
	}
	// One replacement for all of them: a client listing on the
	// announcement must not see half a configuration change.
	var changed []mcp.Tool
	for _, t := range rn.Registry.Tools() {
		tool := mcpTool(t, v)
		tool.Hidden = !v.Policy.ToolOn(t)
		b, _ := json.Marshal(map[string]any{"schema": tool.InputSchema, "ann": tool.Annotations, "hidden": tool.Hidden, "desc": tool.Description})
		key := string(b)
		if ts.shown[t.Name] == key {
			continue
		}
		tool.Handler = toolHandler(rn, t.Name)
		changed = append(changed, tool)
		ts.shown[t.Name] = key
	}
	for _, a := range rn.appsOn() {
		for _, tool := range appTools(rn, a, v) {
			b, _ := json.Marshal(map[string]any{"schema": tool.InputSchema, "ann": tool.Annotations, "hidden": tool.Hidden, "desc": tool.Description})
			if ts.shown[tool.Name] != string(b) {
				changed = append(changed, tool)
				ts.shown[tool.Name] = string(b)
			}
		}
	}
	s.AddTools(changed...)
	ts.syncViews(s, rn, v)
}

// syncViews shows the view of every App switched on, and only those.
func (ts *toolSync) syncViews(s *mcp.Server, rn *Runner, v tools.View) {
	if ts.views == nil {
		ts.views = map[string]bool{}
	}
	for _, a := range rn.appsOn() {
		on := v.Policy.Apps.On(a.Key)
		switch {
		case on && !ts.views[a.View]:
			s.AddResource(viewResource(a))
		case !on && ts.views[a.View]:
			s.RemoveResource(a.View)
		}
		ts.views[a.View] = on
	}
}

// Instructions tell the model how to use the server.
const Instructions = `Sisyphus serves a SiYuan notes workspace. Start with system {"action":"bootstrap"}.
Every tool takes an "action"; {"action":"help"} lists a tool's actions and their arguments.
Read documents with document get_doc (windows of whole blocks); find things with search.
Writes Sisyphus owns are strict: preflight with validateOnly:true, then commit with the returned
requestId and credential, copied unchanged. Never invent hashes or request ids.
Each notebook has a permission for you (notebook list shows it: r read, rw write, rwd delete);
only the person changes it. Dangerous actions (help marks them) need the person's confirmation:
if your client shows forms it asks them; otherwise describe the call, wait for their explicit yes,
then pass confirm:true. Scenario guides: the skill skill://siyuan-index/SKILL.md (skills/list lists
the others; also the resources siyuan://skills/index and siyuan://help/*, and the siyuan_* prompts).`

// mcpTool is a tool's MCP declaration under a view: name, schema and
// annotations.
func mcpTool(t *tools.Tool, v tools.View) mcp.Tool {
	a := t.Annotations(v)
	ann := &mcp.ToolAnnotations{Title: a.Title, ReadOnlyHint: mcp.Bool(a.ReadOnly), OpenWorldHint: mcp.Bool(a.OpenWorld),
		DestructiveHint: mcp.Bool(a.Destructive), IdempotentHint: mcp.Bool(a.Idempotent)}
	return mcp.Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema(v), Annotations: ann,
		// Every refusal carries its code, schema violations too.
		InvalidArguments: func(msg string) *mcp.CallResult {
			e := failure.Invalid("%s", msg)
			e.Action = "fix the arguments; {\"action\":\"help\",\"topic\":\"<action>\"} shows them"
			return errorResult(e)
		}}
}
