// Package toolcli is the tools as shell commands: `sisyphus TOOL ACTION
// --flags` read from the same declarations as the MCP schemas. It turns
// flags into a call's arguments, writes the help and the shell completion
// of every action, and renders an answer for a person to read. It runs
// nothing: cmd/sisyphus sends the call through the front every other
// command uses.
package toolcli
