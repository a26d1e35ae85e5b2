// Package failure is the one vocabulary of agent-visible errors: a single
// error type ([Error]: code, message, what the caller should do, details)
// and a table of every code Sisyphus answers ([Codes]), with its meaning and
// the caller's action. The strict coordinator, the tools, admission and the
// authority all answer with it; the MCP layer renders it once.
//
// Agent-visible text never carries internal causes: those stay in
// [Error.Cause], for logs and errors.Is/As.
//
// It imports nothing of the project, so every layer may use it.
package failure
