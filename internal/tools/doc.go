// Package tools is the framework of Sisyphus's agent-facing tools: the
// registry, the typed action declarations ([Read], [Write]), parameter
// decoding, schema and help generation, and the mapping of kernel failures
// onto the error vocabulary of package failure.
//
// Each tool is a package of its own under this one (av, block, document,
// extension, feedback, file, flashcard, fs, mascot, notebook, search, system, tag, timeline),
// holding its action table; package catalog lists them all. The other
// packages under this one are helper packages (catalog, kernelview, markup,
// tooltest, tplfile, tplguard), not tools: kernelview reads the block,
// notebook and document states several tools show or hash, markup holds
// SiYuan's text rules, tplguard decides which templates may be rendered,
// tplfile has SiYuan render a template file exactly as checked, and
// tooltest is the tool tests' fixture. A tool package imports this one and the shared
// helpers, never another tool. (internal/archtest checks that these two
// lists name every package here.)
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
