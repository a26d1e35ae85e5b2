// Package tools is the framework of Sisyphus's agent-facing tools: the
// registry, the typed action declarations ([Read], [Write]), parameter
// decoding, schema and help generation, and the mapping of kernel failures
// onto the error vocabulary of package failure.
//
// Each tool is a package of its own under this one (block, document, fs,
// notebook, search, system), holding its action table; package catalog
// lists them all. A tool package imports this one and the shared helpers
// (kernelview, markup), never another tool.
//
// The framework knows SiYuan (through internal/siyuan) and Strict Safe
// Writes (internal/strict) but not MCP: a [Registry] turns a tool name and
// JSON arguments into a JSON-ready result or a *failure.Error, and the
// authority adapts that to the protocol.
//
// # How an action runs
//
// Arguments are bound against the action's [Param] list (types, enums,
// ranges, defaults), then parsed once into the action's typed argument
// struct. A read runs. A write becomes one strict.Op for the coordinator:
// its targets, its state reader, its check, its execute and its readback,
// each a named step of the declaration.
package tools
