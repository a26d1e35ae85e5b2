// Package authority assembles what `sisyphus serve` and `sisyphus stdio`
// expose: the MCP server carrying the Sisyphus tools, and the authority's
// HTTP routes (/mcp, also under the upstream plugin prefix) behind a bearer
// token.
//
// It sits above internal/mcp (the protocol) and internal/tools (the
// SiYuan-facing tools) and is the only place the two meet.
package authority
