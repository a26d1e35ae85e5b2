// Package tools defines Sisyphus's agent-facing tools (notebook, document,
// block, search, system, ...) with the upstream Sisyphus names, each an
// `action`-multiplexed tool whose actions declare their arguments and their
// Strict Safe Writes class.
//
// The package knows SiYuan (through internal/siyuan) but not MCP: a Registry
// turns a tool name and JSON arguments into a JSON-ready result or a typed
// agent-facing error, and the server layer adapts that to the protocol.
package tools
