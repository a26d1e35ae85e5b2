package authority

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	"github.com/sisyphus-go/sisyphus/internal/admission"
	"github.com/sisyphus-go/sisyphus/internal/failure"
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
}

// Call is one tool call handed to a Runner.
type Call struct {
	Tool      string
	Args      json.RawMessage
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
}

// laneOf classifies a call by its tool and action: reads (and help, unknown
// tools and actions, which the registry answers without the kernel) take
// the read lane, everything else the write lane.
func (r *Runner) laneOf(tool string, args json.RawMessage) (admission.Lane, string) {
	t, ok := r.Registry.Tool(tool)
	if !ok {
		return admission.LaneRead, ""
	}
	var probe struct {
		Action string `json:"action"`
	}
	if json.Unmarshal(args, &probe) != nil {
		return admission.LaneRead, ""
	}
	a, ok := t.Action(probe.Action)
	if !ok || a.Policy.Class == strict.Read {
		return admission.LaneRead, probe.Action
	}
	if r.Delegating {
		return admission.LaneDelegated, probe.Action
	}
	return admission.LaneWrite, probe.Action
}

// Run runs one call and returns its tool result; it never fails otherwise.
func (r *Runner) Run(ctx context.Context, c Call) *mcp.CallResult {
	lane, action := r.laneOf(c.Tool, c.Args)
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
	res := r.execute(call, c, lane, action, writes)
	wire, _ := json.Marshal(res)
	call.Finish(admission.Outcome{Result: wire, IsError: res.IsError, Cancelled: isCancelled(res)})
	return res
}

func (r *Runner) execute(call *admission.Call, c Call, lane admission.Lane, action string, writes bool) *mcp.CallResult {
	if err := call.Start(call.Context()); err != nil {
		if errors.Is(err, admission.ErrCancelled) || errors.Is(err, admission.ErrDraining) {
			return errorResult(admissionError(err, writes))
		}
		e := failure.Wrap(failure.PermissionDenied, err, "the permission snapshot could not be loaded; nothing was run")
		e.Action, e.WriteAttempted = "retry later", writeFlag(writes)
		return errorResult(e)
	}
	if !call.Snapshot().Allowed(c.Tool, action) {
		e := failure.New(failure.PermissionDenied, "this call is not permitted; nothing was run")
		e.WriteAttempted = writeFlag(writes)
		return errorResult(e)
	}
	ctx := call.Context()
	switch lane {
	case admission.LaneRead:
		ctx = siyuan.WithReadMeter(ctx, call.Budget())
	case admission.LaneWrite:
		ctx = strict.WithCommitBarrier(ctx, call.EnterCommit)
	}
	v, err := r.Registry.Call(ctx, c.Tool, c.Args)
	if lane == admission.LaneRead && call.TimedOut() {
		return errorResult(failure.Wrap(failure.ReadTimedOut, context.Cause(ctx),
			"the read ran past its deadline (%s) and was stopped; its kernel call was abandoned", r.Admission.Limits().ReadTimeout))
	}
	if be := call.Budget().Exceeded(); be != nil {
		// Whatever the action made of the error: the budget decides.
		return errorResult(failure.Wrap(failure.ReadBudgetExceeded, be, "%s; nothing more was read", be.Error()))
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
	return mcp.StructuredResult(v)
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

// NewServer returns the MCP server of every tool of rn's registry, each
// call run through rn (admission, read budgets, commit barrier, task
// records).
func NewServer(rn *Runner, version string, log *slog.Logger, maxMessage int) *mcp.Server {
	s := mcp.NewServer(mcp.Options{
		Name: "sisyphus", Title: "Sisyphus for SiYuan", Version: version,
		Instructions: Instructions, Logger: log, MaxMessageBytes: maxMessage,
	})
	for _, t := range rn.Registry.Tools() {
		tool := mcpTool(t)
		name := t.Name
		tool.Handler = func(ctx context.Context, req *mcp.CallRequest) (*mcp.CallResult, error) {
			taskID, ok := taskIDFromMeta(req.Meta)
			if !ok {
				return errorResult(admissionError(admission.ErrInvalidTask, false)), nil
			}
			return rn.Run(ctx, Call{Tool: name, Args: req.Arguments, Principal: req.Principal, TaskID: taskID, Caller: req.Client(),
				CancelOnDone: req.Era != mcp.EraModern || taskID == ""}), nil
		}
		s.AddTool(tool)
	}
	return s
}

// Instructions tell the model how to use the server.
const Instructions = `Sisyphus serves a SiYuan notes workspace. Start with system {"action":"bootstrap"}.
Every tool takes an "action"; {"action":"help"} lists a tool's actions and their arguments.
Read documents with document get_doc (windows of whole blocks); find things with search.
Writes Sisyphus owns are strict: preflight with validateOnly:true, then commit with the returned
requestId and credential, copied unchanged. Never invent hashes or request ids.`

// mcpTool is a tool's MCP declaration: name, schema and annotations.
func mcpTool(t *tools.Tool) mcp.Tool {
	a := t.Annotations()
	ann := &mcp.ToolAnnotations{Title: a.Title, ReadOnlyHint: mcp.Bool(a.ReadOnly), OpenWorldHint: mcp.Bool(a.OpenWorld),
		DestructiveHint: mcp.Bool(a.Destructive), IdempotentHint: mcp.Bool(a.Idempotent)}
	return mcp.Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema(), Annotations: ann,
		// Every refusal carries its code, schema violations too.
		InvalidArguments: func(msg string) *mcp.CallResult {
			e := failure.Invalid("%s", msg)
			e.Action = "fix the arguments; {\"action\":\"help\",\"topic\":\"<action>\"} shows them"
			return errorResult(e)
		}}
}
