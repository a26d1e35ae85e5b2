package failure

// Code is a stable, machine-readable error code.
type Code string

// Codes of Strict Safe Writes: the failures its design names from the
// start (the core codes, marked [Entry.Seed]).
const (
	PreconditionRequired   Code = "precondition_required"
	PreflightLeaseInvalid  Code = "preflight_lease_invalid"
	StateChanged           Code = "state_changed"
	OutcomeUnknown         Code = "outcome_unknown"
	ReadbackMismatch       Code = "readback_mismatch"
	IdempotencyConflict    Code = "idempotency_conflict"
	CoordinatorUnavailable Code = "write_coordinator_unavailable"
	PreflightUnavailable   Code = "preflight_unavailable"
)

// The project's own codes around strict writes.
const (
	LedgerUnavailable  Code = "write_ledger_unavailable"
	StrictModeDisabled Code = "strict_mode_disabled"
	Rejected           Code = "write_rejected"
	Cancelled          Code = "cancelled"
	CoordinatorChanged Code = "write_coordinator_changed"
)

// Codes of the tools.
const (
	UnknownTool       Code = "unknown_tool"
	UnknownAction     Code = "unknown_action"
	UnknownHelpTopic  Code = "unknown_help_topic"
	InvalidArguments  Code = "invalid_arguments"
	NotFound          Code = "not_found"
	AmbiguousPath     Code = "ambiguous_path"
	KernelError       Code = "kernel_error"
	KernelAuth        Code = "kernel_auth_failed"
	KernelUnreachable Code = "kernel_unreachable"
)

// Codes of admission, task control and delegation.
const (
	QueueFull          Code = "queue_full"
	TaskIDConflict     Code = "task_id_conflict"
	InvalidTaskID      Code = "invalid_task_id"
	ShuttingDown       Code = "shutting_down"
	PermissionDenied   Code = "permission_denied"
	ActionDisabled     Code = "action_disabled"
	ConfigUnavailable  Code = "config_unavailable"
	ReadBudgetExceeded Code = "read_budget_exceeded"
	ReadTimedOut       Code = "read_timeout"
	ResultTooLarge     Code = "result_too_large"
	AccessChanged      Code = "access_changed"
	DelegationRefused  Code = "delegation_refused"
	Delegated          Code = "delegated_error"
	Internal           Code = "internal_error"
)

// Codes of the confirmation of dangerous actions.
const (
	ConfirmationRequired  Code = "confirmation_required"
	ConfirmationDeclined  Code = "confirmation_declined"
	ConfirmationCancelled Code = "confirmation_cancelled"
	ConfirmationInvalid   Code = "confirmation_invalid"
)

// Codes of file transfer: upload staging on the authority, downloads at a
// front.
const (
	UploadSourceUnknown Code = "upload_source_unknown"
	UploadSourceExpired Code = "upload_source_expired"
	StagingBusy         Code = "staging_busy"
	StagingFull         Code = "staging_full"
	FileTooLarge        Code = "file_too_large"
	DownloadTooLarge    Code = "download_too_large"
	DestinationExists   Code = "destination_exists"
	TransferFailed      Code = "transfer_failed"
	LocalPathRefused    Code = "local_path_refused"
	PathNotAllowed      Code = "path_not_allowed"
)

// Codes of the extension tool, the bridge to SiYuan's own MCP endpoint.
const (
	ExtensionUnsupported   Code = "extension_unsupported"
	ExtensionUnavailable   Code = "extension_unavailable"
	NativeActionNotAllowed Code = "native_action_not_allowed"
	ExtensionToolError     Code = "extension_tool_error"
)

// Codes of the HTTP routes (answered as JSON bodies with an HTTP status,
// not as tool results).
const (
	Unauthorized     Code = "unauthorized"
	Forbidden        Code = "forbidden"
	MethodNotAllowed Code = "method_not_allowed"
	InvalidRequest   Code = "invalid_request"
	KernelMismatch   Code = "kernel_mismatch"
	Misdirected      Code = "misdirected_request"
	NotAuthority     Code = "not_authority"
)

// Codes of actions that need a setting the person makes.
const (
	NotConfigured Code = "not_configured"
)

// Codes of the timeline tool.
const (
	TimelineTagMismatch Code = "timeline_tag_mismatch"
)

// Codes of the mascot tool.
const (
	InsufficientBalance Code = "insufficient_balance"
)

// Surface says where a code is answered.
type Surface string

// Surfaces.
const (
	// ToolResult: a tool result with isError and structuredContent.error.
	ToolResult Surface = "tool result"
	// HTTP: the JSON body of an HTTP error status from an authority route.
	HTTP Surface = "HTTP"
)

// Entry is one code of the table.
type Entry struct {
	Code Code
	// Meaning says when the code is answered.
	Meaning string
	// CallerAction says what the caller should do; an [Error] without its
	// own Action shows it.
	CallerAction string
	// Seed marks the core codes of Strict Safe Writes, the eight failures
	// the design began with (the docs mark them "core").
	Seed    bool
	Surface Surface
}

// Codes is every code Sisyphus answers, in the order the docs list them.
// docs/ERRORS.md is generated from it (go test ./internal/failure -update).
var Codes = []Entry{
	{PreconditionRequired, "A request ID or required hash is absent, malformed, or was not issued by a preflight of this authority",
		"Run the same call with validateOnly:true, then copy requestId and the credential it returns unchanged; never invent either", true, ToolResult},
	{PreflightLeaseInvalid, "The lease is missing, expired, used, evicted, or belonged to a previous process; or the requestId expired unused",
		"Run the same validateOnly call again", true, ToolResult},
	{StateChanged, "The target changed after preflight; nothing was written",
		"Stop and reread the target before deciding to write; a new write needs a fresh preflight", true, ToolResult},
	{OutcomeUnknown, "The connection failed after execution began, or the request was left executing; it will not run again",
		"Do not retry with a new requestId; inspect the target to learn whether the write happened", true, ToolResult},
	{ReadbackMismatch, "The write was sent but the readback could not verify it",
		"Treat the outcome as unknown: inspect the target before acting", true, ToolResult},
	{IdempotencyConflict, "The requestId was issued for a different call (tool, action, arguments or targets)",
		"Preflight this call to get its own requestId", true, ToolResult},
	{CoordinatorUnavailable, "The write authority cannot be discovered or reached, or is shutting down; nothing was written",
		"Check that the Sisyphus authority (sisyphus serve) is running for this state dir, then preflight again; never write around it", true, ToolResult},
	{PreflightUnavailable, "validateOnly on an action with external effects that cannot be read back; nothing was executed",
		"Call it without validateOnly (no strict guarantee) or not at all", true, ToolResult},
	{LedgerUnavailable, "The write ledger cannot be read or written; nothing was dispatched (fail closed)",
		"Check the state directory's disk, then restart Sisyphus", false, ToolResult},
	{StrictModeDisabled, "validateOnly while strict mode is off",
		"Call the action without validateOnly", false, ToolResult},
	{Rejected, "The kernel refused the write and applied nothing",
		"Fix the arguments, then preflight again", false, ToolResult},
	{Cancelled, "The call was cancelled before it ran or before its write started; nothing was written",
		"Call again if it is still wanted; an unused requestId and its lease stay valid until they expire", false, ToolResult},
	{CoordinatorChanged, "Another authority instance replaced the one this process pinned; nothing was sent",
		"Restart this process so it pins the new authority, then preflight again (leases do not move)", false, ToolResult},
	{UnknownTool, "No tool has this name", "Call tools/list to see the tools", false, ToolResult},
	{UnknownAction, "The tool has no such action (validActions lists them)", "Pass one of validActions", false, ToolResult},
	{UnknownHelpTopic, "help was asked about an action the tool does not have", "Pass one of validActions as topic", false, ToolResult},
	{InvalidArguments, "The arguments do not fit the action (types, required fields, values); nothing was run",
		"Fix the arguments; {\"action\":\"help\",\"topic\":\"<action>\"} shows them", false, ToolResult},
	{NotFound, "The block, document, notebook or path does not exist, or is in a notebook hidden from agents (answered alike); nothing was written",
		"Check the id or path; find ids with document.lookup or search.fulltext", false, ToolResult},
	{AmbiguousPath, "A human path names several notebooks or documents; nothing was written",
		"Rename one of them, or use the document or notebook tools with one of the listed ids", false, ToolResult},
	{KernelError, "SiYuan answered an error", "Check the arguments; read the target again", false, ToolResult},
	{KernelAuth, "SiYuan refused Sisyphus's API token", "Check the SiYuan token Sisyphus is configured with (sisyphus doctor)", false, ToolResult},
	{KernelUnreachable, "SiYuan could not be reached", "Check that SiYuan is running (sisyphus doctor), then retry the read", false, ToolResult},
	{QueueFull, "Too many calls are in flight (128); this one was not run", "Retry after the running calls settle", false, ToolResult},
	{TaskIDConflict, "The taskId names a live or retained task; the call was not run",
		"Use a new taskId for every tools/call; a business replay keeps the original requestId with a new taskId", false, ToolResult},
	{InvalidTaskID, "The task-control taskId is not a UUID string; the call was not run", "Send a UUID", false, ToolResult},
	{ShuttingDown, "The server is shutting down; the read was not run", "Retry once it is back", false, ToolResult},
	{PermissionDenied, "A visible notebook the call touches has a lower permission than the call needs (details: notebook, permission, requiredPermission), or the call reaches every notebook and one is hidden (no details); nothing was run",
		"Work in notebooks you may use (notebook.list shows them), or ask the person who runs Sisyphus to change the permission (sisyphus config, or the settings page)", false, ToolResult},
	{ActionDisabled, "The tool or action, or the MCP App or App action, is disabled in Sisyphus's configuration; nothing was run",
		"Use an enabled action (tools/list and help show them), or ask the person who runs Sisyphus to enable it", false, ToolResult},
	{ConfigUnavailable, "Sisyphus's configuration (notebook permissions, tool switches) could not be read; nothing was run (fail closed)",
		"Ask the person who runs Sisyphus to check the configuration files (sisyphus config show says what is wrong)", false, ToolResult},
	{ConfirmationRequired, "A dangerous action needs the person's confirmation and none was given; nothing was run",
		"Describe the call to the person and wait for explicit approval; then call again with confirm:true (clients without form elicitation), or answer the confirmation form", false, ToolResult},
	{ConfirmationDeclined, "The person declined the confirmation (or confirm was false); nothing was run",
		"Do not retry the same call unless the person asks for it", false, ToolResult},
	{ConfirmationCancelled, "The person dismissed the confirmation without choosing; nothing was run",
		"Ask the person again later, if the call is still wanted", false, ToolResult},
	{ConfirmationInvalid, "The confirmation answer was malformed, missing or wrongly typed; it does not mean the person declined; nothing was run",
		"Check the client's elicitation support; never bypass the confirmation (call again to ask again)", false, ToolResult},
	{ReadBudgetExceeded, "The read made more kernel calls (128) or decoded more data (8 MiB) than one read may; complete:false beside the error: no part of it is answered, and no page was advanced",
		"Narrow the query or request smaller pages (the action's paging arguments)", false, ToolResult},
	{ReadTimedOut, "The read ran past its deadline (30 s unless configured) and was stopped; nothing was changed; complete:false beside the error: no part of it is answered",
		"Narrow the read (a smaller page, a tighter query); the server's --read-timeout sets the deadline", false, ToolResult},
	{ResultTooLarge, "A task result is larger than task control keeps (1 MiB)", "Reconcile with the original requestId instead", false, ToolResult},
	{AccessChanged, "Permissions or tool configuration changed since the task ran; its body is not disclosed", "Call again under the current configuration", false, ToolResult},
	{DelegationRefused, "The authority refused the delegated call before running a tool", "Check the arguments against {\"action\":\"help\"}", false, ToolResult},
	{Delegated, "The authority answered an error without a code", "Inspect the target; run sisyphus health", false, ToolResult},
	{Internal, "A bug in Sisyphus; nothing more is known", "Report it with the server's log; inspect the target if a write was attempted", false, ToolResult},
	{UploadSourceUnknown, "The uploadSource names no staged file: it was never staged at this authority, or the authority restarted since (staging lives in memory only); nothing was written",
		"Stage the file again (a front does it from localFilePath; a direct client POSTs /transfer/upload) and preflight again with the uploadSource it returns", false, ToolResult},
	{UploadSourceExpired, "The staged file expired (staged bytes are kept 10 minutes from staging); nothing was written",
		"Stage the file again and preflight again with the new uploadSource", false, ToolResult},
	{StagingBusy, "Two stagings are already running at the authority (HTTP 429 from /transfer/upload); nothing was kept",
		"Retry in a moment: staging has no side effect, and the same content and name get the same uploadSource", false, ToolResult},
	{StagingFull, "The authority's staging store is full (32 MiB or 64 files, after expired ones are removed; HTTP 507); nothing was kept",
		"Use the uploadSources already staged, or wait until staged files expire (at most 10 minutes), then stage again", false, ToolResult},
	{FileTooLarge, "The file is larger than staging takes (10 MiB per file; HTTP 413 from /transfer/upload); nothing was kept or written",
		"Make the file smaller, or add it through SiYuan itself; Sisyphus never uploads around the staging cap", false, ToolResult},
	{DownloadTooLarge, "The download passed its limit (512 MiB per ZIP or per document extraction); the partial output was removed",
		"Export less at once (fewer resources, a smaller document)", false, ToolResult},
	{DestinationExists, "The local destination (a file or a directory) already exists; nothing was written",
		"Name a destination that does not exist yet, or ask the person to move the existing one away", false, ToolResult},
	{TransferFailed, "A file transfer failed, was cancelled or passed its per-file deadline (120 s), or its upload reached the authority too slowly (HTTP 408 from /transfer/upload: a pause of 5 s, or under 64 KiB/s after 5 s); what it wrote locally was removed. An export the authority ran stays run",
		"Check the connection and the paths, then call again if the transfer is still wanted", false, ToolResult},
	{LocalPathRefused, "The call names a path on a computer (localFilePath, file) and reached the authority, which never opens a path a call names; nothing was read or written",
		"Stage the file with POST /transfer/upload and pass the uploadSource it answers; or call through sisyphus stdio or sisyphus call, which stage a file from the folders the person allowed", false, ToolResult},
	{PathNotAllowed, "The local path (a file to read, or a destination to create) lies outside the folders the person allowed agents, or in a place never allowed: the SiYuan workspace, Sisyphus's state dir, hidden files and folders, system folders; nothing was read or written",
		"Use a path inside an allowed folder, or ask the person to allow its folder (--allow-dir DIR or SISYPHUS_ALLOW_DIRS on the stdio, call or serve --authority process)", false, ToolResult},
	{Unauthorized, "A valid credential is required (HTTP 401): the bearer token on an agent's route, the admin token on /config",
		"Send Authorization: Bearer <token>: agents the bearer token serve printed (the state dir's token file); the person's sisyphus config the admin token (sisyphus admin-token)", false, HTTP},
	{Forbidden, "The task belongs to another authentication context, the browser origin is not allowed, or the credential belongs to other routes: the bearer token on /config or the settings page, the admin token on /mcp, /tasks, /health or /transfer (HTTP 403)",
		"Query tasks with the credentials that started them; call from an allowed origin; agents use the bearer token, and only the person the admin token", false, HTTP},
	{Misdirected, "The Host header names no host this loopback server answers to (HTTP 421; DNS-rebinding protection)",
		"Call it as localhost or 127.0.0.1, or list the host in the server's allowed hosts", false, HTTP},
	{MethodNotAllowed, "The route does not take this HTTP method (HTTP 405)", "Use the method the Allow header names", false, HTTP},
	{InvalidRequest, "The request body or Content-Type does not fit the route (HTTP 400 or 415)", "Fix the request as the message says", false, HTTP},
	{NotAuthority, "The route is served only by the write authority, and this server is a front (HTTP 404)",
		"Send the request to the authority the front delegates to (its --authority URL, or the URL in the state dir's authority.json)", false, HTTP},
	{KernelMismatch, "The authority coordinates another workspace than the caller reads (HTTP 409)", "Point the front at the authority of its own workspace", false, HTTP},
	{NotConfigured, "The action needs a setting the person has not made (feedback.submit: an endpoint); nothing was sent",
		"Ask the person to make the setting the message names (sisyphus config ...)", false, ToolResult},
	{TimelineTagMismatch, "The timeline tag names another document than the documentId given (a document node's tag is sisyphustimeline_<documentId>_<label>); nothing was run",
		"Pass the documentId the tag names, or a tag list_nodes gives for this document", false, ToolResult},
	{InsufficientBalance, "The mascot's balance is below the item's cost at commit (details: need, have); nothing was spent",
		"Earn more coins (every successful tool call earns one), check with mascot get_balance, then preflight again", false, ToolResult},
	{ExtensionUnsupported, "SiYuan is older than 3.7.0, which has no MCP endpoint for extension to bridge (details: siyuanVersion); nothing was sent",
		"Upgrade SiYuan to 3.7.0 or newer, then call extension list with refresh:true", false, ToolResult},
	{ExtensionUnavailable, "SiYuan's MCP endpoint did not answer the discovery, or answered something else than MCP; nothing was forwarded",
		"Check that SiYuan runs and Sisyphus's token is an administrator's, then call extension list with refresh:true", false, ToolResult},
	{NativeActionNotAllowed, "The forwarded arguments name a sub-action of a native SiYuan tool outside the read allowlist (allowedActions lists it); nothing was sent",
		"Pass one of allowedActions as arguments.action; other native actions are not forwarded (use Sisyphus's own tools)", false, ToolResult},
	{ExtensionToolError, "The forwarded tool ran (or was looked up) and answered an error (content holds its text); for a tool with effects, writeAttempted is true",
		"Read the tool's message; a tool with effects is never retried by Sisyphus, so inspect what it touches before calling again", false, ToolResult},
}

var byCode = func() map[Code]Entry {
	m := make(map[Code]Entry, len(Codes))
	for _, e := range Codes {
		m[e.Code] = e
	}
	return m
}()

// Lookup returns a code's table entry.
func Lookup(c Code) (Entry, bool) {
	e, ok := byCode[c]
	return e, ok
}
