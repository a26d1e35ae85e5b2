// Package wire holds the SiYuan kernel's JSON model types: the objects its
// HTTP API answers with (and, for transactions and notebook confs, accepts),
// tagged as the SiYuan 3.7.3 kernel source tags them (kernel/model,
// kernel/conf and the handlers in kernel/api), not as API.md documents them.
//
// It exists so that the typed client (package siyuan, which re-exports these
// types under its own names) and the embedded kernel encode and decode one
// set of declarations: a field added, renamed or retagged here changes both,
// so the two cannot drift apart.
//
// Where the kernel builds an answer as a map rather than a struct, its keys
// come out sorted; the embedded kernel answers with a map too, to stay
// byte-identical, and the type here is the shape the client decodes. Such
// types say so.
//
// Go field names and slice shapes follow the client's API ([]T where the
// kernel has []*T: the JSON is the same); only the tags are the kernel's.
// Deviations from the kernel's tags are commented where they occur.
package wire
