// Package admission decides when a tool call may run, and keeps what a
// caller may later ask about it.
//
//   - Lanes: owned reads run with concurrency 4; mutations, external effects,
//     extension calls and app entry points share one FIFO lane with
//     concurrency 1 (the strict coordinator behind it stays the only lease and
//     ledger authority; this lane only orders admission). A front's delegated
//     call takes no local lane: the authority admits it.
//   - Fairness: a lane hands a free slot to the waiting caller (a client:
//     its legacy session, its declared name, a front) that runs the fewest
//     calls in it, so one client flooding a lane delays another by one
//     slot's turn; no caller holds more than three quarters of the places in
//     flight.
//   - In flight: at most 128 calls, counted from admission (preparation
//     included) until they settle; the next one is refused with queue_full
//     before anything runs.
//   - Read deadline: a read is stopped 30 s (configurable) after it starts
//     executing.
//   - Permissions: each call loads its permission snapshot when it starts
//     executing, not when it is queued ([Permissions]).
//   - Cancellation: a queued call stops before it executes; a running read
//     stops at once, its kernel call aborted (a read changes nothing, so
//     nothing is left half-done) and its slot given back; a write stops at
//     its commit barrier ([Call.EnterCommit]) unless its commit has started,
//     after which cancellation is rejected: a kernel write is never
//     interrupted. A drain stops reads and waits for writes only.
//   - Read budgets: an owned read may make at most 128 kernel calls and decode
//     at most 8 MiB; past either it fails with read_budget_exceeded even if
//     the code that made the call caught the error.
//   - Task records (the io.siyuan.sisyphus/task-control extension): a call
//     that carries a taskId can be asked for its status, cancelled, or asked
//     for its result; terminal records are kept 10 minutes, at most 128, 8 MiB
//     in all and 1 MiB each (result_too_large beyond). Records live in memory
//     only: found:false proves nothing.
//
// Reads and writes are not snapshot-isolated: a read admitted while a write
// runs may observe the workspace before, during (across several kernel
// calls) or after that write. Admission orders calls; it is not a
// transaction.
package admission
