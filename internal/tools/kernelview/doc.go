// Package kernelview reads what several tools show or hash: a block's
// state, a notebook's state, where a document lives, its child documents,
// and a document as Markdown in windows of whole blocks.
//
// States are normalised the way Strict Safe Writes hashes them: attribute
// order and the created/updated timestamps never count as a change, every
// content change does. A failed kernel read fails the whole state (fail
// closed: no write is decided on a partial read); a target the kernel does
// not know is represented in the state (Missing), never inferred from a
// failed read.
package kernelview
