// Package strict implements Strict Safe Writes: the policy table that
// classifies every tool action, preflight leases, the alias pool, issued
// request ids, the persistent ledger and the single write lane.
//
// It never imports the MCP protocol layer; tools declare their actions'
// classes here and the coordinator decides how a call may run.
//
// # Building blocks
//
//   - [AliasPool]: the one short-hash pool of the process. Every hash a
//     response shows, and every preflight credential, is an alias from it;
//     resolution is exact, aliases are never reassigned.
//   - [LeasePool]: preflight leases in memory, bound to a [Scope] (tool,
//     action, business-argument digest, sorted target ids), ten minutes each.
//   - [IDIssuer]: request ids of 4+ hex digits, reserved on disk forever.
//   - [Ledger]: the bbolt idempotency ledger (issued → executing →
//     committed | no_change | failed_before_dispatch), which shares its file
//     with the id reservations.
//
// # How a coordinator uses them
//
// Preflight (validateOnly): read the state and digest it (package canon);
// [Ledger.Issue] with an empty RequestID issues a new id, reserved on disk
// beforehand (a batch at a time, fsynced), and keeps the issued request in
// memory; [LeasePool.Put] stores the lease and returns the credential (the
// digest's alias) and expiry.
//
// Commit: the request id and the credential are parsed once ([RequestID],
// [Credential]); then, inside the single write lane:
//
//  1. [Ledger.Check]: ErrReplay replays the record's receipt (replayed:
//     true, writeAttempted: false); ErrAlreadyExecuting is outcome_unknown;
//     ErrIdempotencyConflict is idempotency_conflict; ErrUnknownRequest is
//     precondition_required; ErrRequestExpired asks for a new preflight.
//  2. [LeasePool.Take] with the credential (or [LeasePool.ForRequest] for an
//     additive action): ErrLeaseInvalid is preflight_lease_invalid. Reread
//     the state and compare the full digests: a mismatch is state_changed,
//     and neither the lease nor the request is used up. Then the action's
//     check runs on the state just read.
//  3. [Ledger.Begin] makes the record executing, durably; then
//     [LeasePool.Consume]; then dispatch once.
//  4. After readback, [Ledger.Finish] with committed or no_change. If the
//     outcome is unknown (lost reply, readback mismatch), do not call Finish:
//     the record stays executing and answers outcome_unknown forever.
//
// Any [ErrLedgerUnavailable] means: do not dispatch.
//
// # Staged creations
//
// An [Op] with a [Plan] (a database made by several kernel writes) is
// begun with [Ledger.BeginCreation], which stores the ids the plan
// reserved with executing; each stage is marked with [Ledger.Stage]
// (pending before its dispatch, done once the kernel shows it). A commit
// that finds its request executing with a [Creation] resumes it instead
// of answering outcome_unknown, sending nothing that could make a second
// object (see [Plan]).
package strict
