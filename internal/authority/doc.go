// Package authority assembles what `sisyphus serve` and `sisyphus stdio`
// expose: the MCP server carrying the Sisyphus tools, and the authority's
// HTTP routes (also under the upstream plugin prefix): the agents' routes
// (/mcp, /tasks, /health, /transfer/*) behind their bearer token, and the
// person's (/config, the settings page) behind the admin token.
//
// It sits above internal/mcp (the protocol) and internal/tools (the
// SiYuan-facing tools) and is the only place the two meet.
package authority
