// Package transfer moves files across the boundary between the person's
// machine and the write authority:
//
//   - Store (the authority) stages uploads in memory: POST /transfer/upload
//     takes raw bytes (application/octet-stream, the name percent-encoded in
//     X-Sisyphus-File-Name) or JSON {fileName, dataBase64}, hashes them
//     while reading and answers an opaque uploadSource handle;
//     POST /transfer/lookup finds a snapshot the store itself hashed. Its
//     Get gives upload_asset the very bytes it verified. Staging never
//     touches the workspace.
//   - Stager (a front) stages a local file through its authority: it hashes
//     the file, asks /transfer/lookup, and streams it to /transfer/upload
//     only when the authority has no such snapshot. It opens no path: the
//     front hands it a file it opened under its folder rule (package
//     localfs).
//   - Downloader (a front) saves a manifest of kernel files on the person's
//     disk: streamed, hashed, bounded, never over an existing destination,
//     and leaving nothing behind when it fails.
//
// The package knows nothing of the authority, the tools or the kernel
// client: the authority mounts the Store's handlers behind its own checks,
// a front hands the Stager and the Downloader its link to the authority
// (Authority) and its kernel client (FileGetter). Agent-visible failures are
// *failure.Error.
package transfer
