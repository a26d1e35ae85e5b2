// Package netguard bounds what a client can hold of an HTTP server's
// connections, so that clients that connect and then send slowly, or not
// at all, cannot keep the server from answering others.
//
// A [Guard] wraps a net.Listener and builds the http.Server around it:
//
//   - request headers must arrive within HeaderTimeout, and a connection
//     idle between requests is closed after IdleTimeout;
//   - a request body must arrive within BodyTimeout of its handler's start
//     (a route expecting a long body raises it with [SetBodyTimeout]), with
//     no pause longer than BodyStall, and after BodyGrace at no less than
//     BodyMinRate on average. A body that breaks any of these is cut: the
//     handler's read fails with an error matching os.ErrDeadlineExceeded
//     (and [ErrSlowBody]), so that whatever the handler holds for the body
//     (a staging slot, a budget of bytes) is freed at once;
//   - every write to a connection must go out within WriteStall, renewed
//     for each piece of 16 KiB: a client that stops reading fails the
//     handler's writes (and net/http closes the connection) within the
//     stall, so that it holds neither the connection nor what the handler
//     keeps for it. A response of any length and an event stream of any
//     duration pass while the client keeps reading;
//   - at most MaxConns connections are open. Accept never blocks: when the
//     cap is reached, a new connection evicts the connection that has gone
//     longest without progress among those idle between requests, still
//     sending their request headers, still sending their body (a body
//     that keeps arriving counts as progress, so a flood of new connections
//     evicts its own stalled ones before an upload in progress), or whose
//     handler's write has waited a second on a client that does not read;
//     only when every connection has a handler working past its body (a
//     call, an event stream) is the newcomer closed at once. A handler is
//     evicted only while it waits on its client (for its body, or for a
//     write to go out), never while it works, so no call starts on a
//     connection the guard then closes.
//
// The process needs a file descriptor per connection: [DescriptorLimit]
// reports the soft limit (the Go runtime raises it to just under the hard
// limit at start on Unix), and the caller checks it against the cap.
package netguard
