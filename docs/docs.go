// Package docs carries the project's documents that the binary itself
// shows: the changelog, which system.changelog answers from.
package docs

import _ "embed"

// Changelog is docs/CHANGELOG.md.
//
//go:embed CHANGELOG.md
var Changelog string
