// Package strict implements Strict Safe Writes: the policy table that
// classifies every tool action, and (as it grows) preflight leases, the alias
// pool, issued request ids, the persistent ledger and the single write lane.
//
// It never imports the MCP protocol layer; tools declare their actions'
// classes here and the coordinator decides how a call may run.
package strict
