// Package endpoint is the one list of the SiYuan HTTP API endpoints that
// Sisyphus calls or serves: each path once, with its class (read, write,
// notice, per-method). The kernel client classifies its calls by it (reads
// are retried, everything else attempted once) and the embedded kernel
// routes by it (its writes are serialised), so the two cannot disagree on
// what an endpoint is. It imports nothing of the project.
package endpoint
