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
//   - at most MaxConns connections are open. Accept never blocks: when the
//     cap is reached, a new connection evicts the connection that has gone
//     longest without progress among those idle between requests, still
//     sending their request headers, or still sending their body (a body
//     that keeps arriving counts as progress, so a flood of new connections
//     evicts its own stalled ones before an upload in progress); only when
//     every connection has a handler running
//     past its body (a call, an event stream) is the newcomer closed at
//     once. A handler is never evicted once its body has arrived, so no
//     call starts on a connection the guard then closes.
//
// There is no write timeout: event streams and long calls write for
// minutes, and a client that stops reading is bounded by the handler's
// own deadlines.
//
// The process needs a file descriptor per connection: [DescriptorLimit]
// reports the soft limit (the Go runtime raises it to just under the hard
// limit at start on Unix), and the caller checks it against the cap.
package netguard
