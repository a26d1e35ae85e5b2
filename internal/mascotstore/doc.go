// Package mascotstore keeps the mascot's books in the SiYuan workspace, in
// the files upstream Sisyphus 0.6.8 uses, so that a person's balance
// carries over between the two: puppyStats.json (coins earned and held),
// puppyEvents.json (the latest call, for the mascot's display) and
// analytics.jsonl (one line per call, rotated to analytics.jsonl.1).
//
// Every write goes through per-client storage queues that live in this
// process only (they are not locks across processes):
//
//   - balance: one writer merges every client's pending increments and
//     purchases into one read-modify-write of puppyStats.json (a group
//     commit: N calls arriving together cost one putFile, and no increment
//     or purchase is lost to another in this process). A call awaits the
//     commit that carries its own increment.
//   - display events: a bounded queue per client (the oldest is dropped
//     when it is full); the file holds only the latest call, so one
//     writer writes the newest pending event of all clients and lets the
//     others go. A call never waits for it: a display write that stalls
//     delays no call, and holds at most the cap per client.
//   - analytics: a bounded queue per client (oldest dropped), drained by
//     one appender when a batch is full, a moment after its first line,
//     or at Settle, each batch with one read and one write of the file; a
//     call never waits for it.
//
// A failure to store events or analytics is logged and never reaches the
// call; a balance update's failure is logged and reported to the caller,
// which decides (an earning call does not fail for it, a purchase does).
package mascotstore
