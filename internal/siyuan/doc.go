// Package siyuan is a typed client for the SiYuan kernel HTTP API (checked
// against SiYuan 3.7.3). It is the only way the rest of Sisyphus touches notes.
//
// The client is built around one rule: a write must never be sent twice, and a
// caller must always be able to tell a definite failure from an ambiguous one.
//
//   - Every call is classified as a Read or a Write (see [CallKind]), by its
//     endpoint's class in the one endpoint table (package endpoint), which
//     the embedded kernel routes by too. Reads are
//     retried a bounded number of times on transient transport failures. Writes
//     are attempted exactly once: this package never retries them, and it keeps
//     net/http from replaying them (no Idempotency-Key, no rewindable body, no
//     redirects followed).
//   - A write that may have reached the kernel but whose reply was lost fails
//     with [*OutcomeUnknownError]; callers must read the state back before
//     deciding anything. Every other failure is definite: [*TransportError],
//     [*APIError], [*AuthError], [*NullDataError], or a local argument error
//     wrapping [ErrInvalidArgument].
//   - SiYuan answers most requests with an envelope {code, msg, data}. A
//     non-zero code is an [*APIError]. Many handlers panic on malformed input
//     after having scheduled the reply {code:0, data:null}; endpoints that must
//     return data report that as [*NullDataError] instead of a silent success.
//   - The workspace file API's "no such path" (code 404 from GetFile, ReadDir,
//     RemoveFile) also matches [ErrFileNotFound] with errors.Is, so that "not
//     stored yet" can be told from a failure.
//
// A [Client] is safe for concurrent use; it holds no mutable state after [New].
package siyuan
