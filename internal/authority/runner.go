package authority

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	"github.com/sisyphus-go/sisyphus/internal/admission"
	"github.com/sisyphus-go/sisyphus/internal/mcp"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// MetaTaskID is the _meta key of the io.siyuan.sisyphus/task-control
// extension: a UUID naming a tools/call for later status, cancel and result
// queries.
const MetaTaskID = "io.siyuan.sisyphus/taskId"

// Agent-facing codes of admission and delegation.
const (
	CodeQueueFull          = "queue_full"
	CodeCancelled          = strict.CodeCancelled
	CodeTaskIDConflict     = "task_id_conflict"
	CodeInvalidTaskID      = "invalid_task_id"
	CodeShuttingDown       = "shutting_down"
	CodePermissionDenied   = "permission_denied"
	CodeReadBudgetExceeded = admission.CodeReadBudgetExceeded
	CodeCoordinatorChanged = "write_coordinator_changed"
)

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
	call, err := r.Admission.Admit(ctx, admission.Request{Lane: lane, Principal: c.Principal, TaskID: c.TaskID, Tool: c.Tool, Action: action})
	if err != nil {
		return errorResult(admissionError(err, writes))
	}
	if c.CancelOnDone {
		stop := context.AfterFunc(ctx, func() { call.Cancel() })
		defer stop()
	}
	res := r.execute(call, c, lane, action, writes)
	call.Finish(admission.Outcome{Result: wireResult(res), IsError: res.IsError, Cancelled: isCancelled(res)})
	return res
}

func (r *Runner) execute(call *admission.Call, c Call, lane admission.Lane, action string, writes bool) *mcp.CallResult {
	if err := call.Start(call.Context()); err != nil {
		if errors.Is(err, admission.ErrCancelled) || errors.Is(err, admission.ErrDraining) {
			return errorResult(admissionError(err, writes))
		}
		return errorResult(&tools.Error{Code: CodePermissionDenied, Message: "the permission snapshot could not be loaded; nothing was run",
			Action: "retry later", WriteAttempted: writeFlag(writes), Cause: err})
	}
	if !call.Snapshot().Allowed(c.Tool, action) {
		return errorResult(&tools.Error{Code: CodePermissionDenied, Message: "this call is not permitted; nothing was run",
			WriteAttempted: writeFlag(writes)})
	}
	ctx := call.Context()
	switch lane {
	case admission.LaneRead:
		ctx = siyuan.WithReadMeter(ctx, call.Budget())
	case admission.LaneWrite:
		ctx = strict.WithCommitBarrier(ctx, call.EnterCommit)
	}
	v, err := r.Registry.Call(ctx, c.Tool, c.Args)
	if be := call.Budget().Exceeded(); be != nil {
		// Whatever the action made of the error: the budget decides.
		return errorResult(&tools.Error{Code: CodeReadBudgetExceeded, Message: be.Error() + "; nothing more was read",
			Action: "narrow the query or request smaller pages (the action's paging arguments)", Cause: be})
	}
	if err != nil {
		if lane == admission.LaneRead && call.CancelRequested() && errors.Is(err, admission.ErrDraining) {
			return errorResult(admissionError(admission.ErrDraining, false))
		}
		if lane == admission.LaneRead && call.CancelRequested() && errors.Is(err, context.Canceled) {
			return errorResult(&tools.Error{Code: CodeCancelled, Message: "the read was cancelled; it stopped at a checkpoint", Cause: err})
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
func admissionError(err error, writes bool) *tools.Error {
	wa := writeFlag(writes)
	switch {
	case errors.Is(err, admission.ErrQueueFull):
		return &tools.Error{Code: CodeQueueFull, Message: "too many calls are in flight (128); this one was not run",
			Action: "retry after the running calls settle", WriteAttempted: wa, Cause: err}
	case errors.Is(err, admission.ErrTaskConflict):
		return &tools.Error{Code: CodeTaskIDConflict, Message: "this taskId names a live or retained task; the call was not run",
			Action: "use a new taskId for every tools/call; a business replay keeps the original requestId with a new taskId", WriteAttempted: wa, Cause: err}
	case errors.Is(err, admission.ErrInvalidTask):
		return &tools.Error{Code: CodeInvalidTaskID, Message: "_meta[\"" + MetaTaskID + "\"] must be a UUID string; the call was not run",
			WriteAttempted: wa, Cause: err}
	case errors.Is(err, admission.ErrDraining):
		if writes {
			return &tools.Error{Code: strict.CodeCoordinatorUnavailable, Message: "the write authority is shutting down; nothing was written",
				Action: "wait for the authority to restart, then preflight again", WriteAttempted: wa, Cause: err}
		}
		return &tools.Error{Code: CodeShuttingDown, Message: "the server is shutting down; the read was not run", Action: "retry once it is back", Cause: err}
	case errors.Is(err, admission.ErrCancelled):
		return &tools.Error{Code: CodeCancelled, Message: "the call was cancelled before it ran; nothing was run",
			Action: "call again if it is still wanted", WriteAttempted: wa, Cause: err}
	}
	return &tools.Error{Code: "internal_error", Message: "internal error", WriteAttempted: wa, Cause: err}
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
	var te *tools.Error
	if !errors.As(err, &te) {
		te = &tools.Error{Code: "internal_error", Message: "internal error", Cause: err}
	}
	out := te.Result()
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
	return json.Unmarshal(raw, &probe) == nil && probe.Error.Code == CodeCancelled
}

// wireResult is res as a tools/call result object.
func wireResult(res *mcp.CallResult) []byte {
	out := map[string]any{"content": res.Content}
	if res.Content == nil {
		out["content"] = []mcp.Content{}
	}
	if res.StructuredContent != nil {
		out["structuredContent"] = res.StructuredContent
	}
	if res.IsError {
		out["isError"] = true
	}
	if len(res.Meta) > 0 {
		out["_meta"] = res.Meta
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil
	}
	return b
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
func NewServer(rn *Runner, version string, log *slog.Logger) *mcp.Server {
	s := mcp.NewServer(mcp.Options{
		Name: "sisyphus", Title: "Sisyphus for SiYuan", Version: version,
		Instructions: Instructions, Logger: log,
	})
	for _, t := range rn.Registry.Tools() {
		tool := mcpTool(rn.Registry, t)
		name := t.Name
		tool.Handler = func(ctx context.Context, req *mcp.CallRequest) (*mcp.CallResult, error) {
			taskID, ok := taskIDFromMeta(req.Meta)
			if !ok {
				return errorResult(admissionError(admission.ErrInvalidTask, false)), nil
			}
			return rn.Run(ctx, Call{Tool: name, Args: req.Arguments, Principal: req.Principal, TaskID: taskID,
				CancelOnDone: req.Era != mcp.EraModern || taskID == ""}), nil
		}
		s.AddTool(tool)
	}
	return s
}
