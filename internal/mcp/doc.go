// Package mcp is the Model Context Protocol layer of Sisyphus: JSON-RPC 2.0
// framing, both MCP eras, legacy sessions, Server-Sent Events, multi
// round-trip requests (MRTR) and cancellation. It knows nothing about SiYuan;
// the product registers tools on a [Server] and serves it over HTTP
// ([Server.HTTPHandler]) or stdio ([Server.ServeStdio]).
//
// # Eras
//
// The server speaks the stateless revision 2026-07-28 ("modern": no
// handshake, every request carries params._meta) and the handshake-based
// revisions 2024-11-05 through 2025-11-25 ("legacy": initialize, sessions,
// server-to-client requests) on the same endpoint and the same stdio
// process. The era is chosen per request:
//
//   - HTTP POST: modern when params._meta carries
//     io.modelcontextprotocol/protocolVersion, when the MCP-Protocol-Version
//     header is not a legacy version, or when the method is server/discover;
//     legacy otherwise.
//   - HTTP GET and DELETE: 405 when the MCP-Protocol-Version header is
//     modern, legacy session semantics otherwise.
//   - stdio: per message, with the same _meta rule; initialize opens the
//     connection's legacy session.
//
// # Handlers
//
// Tool, prompt and resource handlers receive a request that embeds
// [Request]. It carries the era, the protocol version, the authenticated
// principal, params._meta and the client's capabilities, and it offers
// [Request.Progress], [Request.Log], [Request.Notify], and the input methods
// [Request.Elicit] and [Request.Input], which work in both eras: in a legacy
// session they send real server-to-client requests (elicitation/create,
// sampling/createMessage, roots/list) and wait for the answers; in the modern
// era they end the current round with an input_required result whose
// integrity-protected requestState carries the answers collected so far, and
// the handler is invoked again, from the start, when the client retries with
// its inputResponses. Handlers that ask for input must therefore be
// deterministic up to their last input call and must not cause side effects
// before it.
//
// # Skills
//
// [Server.AddSkill] serves a skill through the skills extension
// (io.modelcontextprotocol/skills): skills/list and skills/get answer its
// entry (frontmatter and a complete manifest of its files with sha256
// digests and sizes) in both eras, each file is a skill:// resource read
// with resources/read, and capabilities.extensions advertises the
// extension (in the legacy initialize too, where a client that does not
// know it ignores it).
//
// # Apps
//
// A tool with a [ToolUI] and a ui:// resource belong to an MCP App
// (io.modelcontextprotocol/ui, [ExtApps]). They are offered only to a
// client that declares the extension with the [MimeApp] MIME type, in its
// initialize (legacy) or in the request's capabilities (modern): tools/list
// keeps one encoded list for each kind of client, resources/list leaves the
// views out for the other kind, and such a client's call of an App tool is
// an unknown tool, its read of a view an unknown resource, as its lists
// say. An app-only tool (visibility ["app"]) is listed to the declaring
// host, which keeps it from its model: the server cannot tell a view's
// call from the model's, both coming from the host. capabilities.extensions
// advertises the extension while any App part is registered.
//
// # HTTP
//
// Every request passes, in order: the Origin check (403 for a foreign
// origin), the Host check on loopback listeners (421; DNS-rebinding
// protection), authentication (401 with WWW-Authenticate: Bearer), then
// method, Content-Type (415), Accept (406) and body size (413, the
// connection closed) checks. A body over 64 KiB is read only under a budget
// of bytes held at once (503 with Retry-After, unread, when none frees in
// time), and one that stops arriving is answered 408. Modern
// errors use the statuses of the 2026-07-28 revision (-32601 → 404, -32602,
// -32020, -32021, -32022 → 400); legacy JSON-RPC errors travel with 200.
// A modern request is cancelled when its client disconnects; a legacy call
// only by notifications/cancelled (matching the exact, typed id within its
// session), DELETE of its session, idle expiry or Server.Close. Legacy
// sessions may open GET streams (capped per principal and in total)
// that announce tool list changes; closing one never cancels calls.
//
// Errors returned by handlers map to the wire as follows: an [*Error] becomes
// that JSON-RPC error; a [*MissingCapabilityError] becomes -32021; the error
// returned by [Request.Input], [Request.Elicit] or [InputRequired] continues
// the multi round-trip flow; a cancelled context suppresses the response; any
// other error from a tool handler becomes a tool result with isError set.
package mcp
