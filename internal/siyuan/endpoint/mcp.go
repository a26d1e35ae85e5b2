package endpoint

import (
	_ "embed" // the native MCP tools
	"slices"
)

//go:embed mcp_native.json
var nativeMCPTools []byte

// NativeMCPTools is SiYuan 3.7.3's native MCP tool list, as its MCP
// endpoint answers tools/list (names, titles, descriptions, input schemas
// with their action enums, source and effect scope): what the embedded
// kernel serves and the contract suite holds a real kernel to.
func NativeMCPTools() []byte { return slices.Clone(nativeMCPTools) }
