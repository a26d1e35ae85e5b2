package embedded

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/88250/lute/ast"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// The MCP endpoint's tools: SiYuan 3.7.3's native tools as it lists them
// (endpoint.NativeMCPTools, its tools/list: names, descriptions, input
// schemas with their action enums, source and effect scope), and two tools of a
// bundled example plugin, named as SiYuan names plugin tools
// (plugin__<plugin>__<tool>, source "plugin", effectScope "unknown"): one
// registered read-only, one not. A real SiYuan without plugins lists no
// plugin tools; these two let the bridge's plugin path be tested without a
// SiYuan install.
//
// A call is checked as SiYuan checks it (an action outside the tool's
// enum is refused with its message). The actions this kernel's data can
// carry out answer as 3.7.3 does, with its texts and its argument errors:
// notebook list, create, open, close, remove and set_icon; outline get;
// search fulltext and semantic; system version, current_time and
// workspace; block get, get_kramdown, get_children, insert, append,
// prepend, update, delete and move; attr get; document get, info and
// list; sql query; ref backlinks, mentions and refresh; workspace list and
// info; tag list; bookmark list and labels. So do those whose answer on
// 3.7.3 follows from a state this kernel is always in (no data repo key,
// cloud sync disabled, no skills): repo list, create, search, diff and
// tag; sync; skill list and load; and frontend, question and todo_write
// without todos, which 3.7.3 answers the same whatever its data. The
// others are refused with an error result that says so, never a success
// that did nothing.

// mcpTool is one tool: what tools/list shows and its handler.
type mcpTool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	Source       string          `json:"source,omitempty"`
	ReadOnlyHint bool            `json:"readOnlyHint,omitempty"`
	EffectScope  string          `json:"effectScope,omitempty"`

	handler func(ctx context.Context, args map[string]any) mcpResult
}

// mcpResult is a tools/call result.
type mcpResult struct {
	Content []mcpContent `json:"content"`
	IsError bool         `json:"isError,omitempty"`
}

type mcpContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

func textResult(s string) mcpResult { return mcpResult{Content: []mcpContent{{"text", s}}} }
func errorResult(s string) mcpResult {
	return mcpResult{Content: []mcpContent{{"text", s}}, IsError: true}
}

// ExamplePlugin is the bundled example plugin whose tools the MCP endpoint
// lists: WordCount is registered read-only, Stamp is not (it sets the
// StampAttr attribute on a block).
const (
	ExamplePluginWordCount = "plugin__sisyphus_example__word_count"
	ExamplePluginStamp     = "plugin__sisyphus_example__stamp"
	StampAttr              = "custom-sisyphus-stamp"
)

// nativeTool is one native tool as SiYuan lists it.
type nativeTool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Source      string          `json:"source"`
	EffectScope string          `json:"effectScope"`
}

// mcpHandlers are the native tools' handlers: an action this kernel
// carries out answers; any other of the tool's actions is unbacked.
func (k *Kernel) mcpHandlers() map[string]func(ctx context.Context, action string, args map[string]any) (mcpResult, bool) {
	return map[string]func(ctx context.Context, action string, args map[string]any) (mcpResult, bool){
		"notebook": func(ctx context.Context, action string, args map[string]any) (mcpResult, bool) {
			switch action {
			case "list":
				return k.mcpNotebook(ctx), true
			case "create", "open", "close", "remove", "set_icon":
				return k.mcpNotebookWrite(ctx, action, args), true
			}
			return mcpResult{}, false
		},
		"outline": func(ctx context.Context, _ string, args map[string]any) (mcpResult, bool) {
			return k.mcpOutline(ctx, args), true
		},
		"search": func(ctx context.Context, action string, args map[string]any) (mcpResult, bool) {
			if action != "fulltext" && action != "semantic" {
				return mcpResult{}, false
			}
			return k.mcpSearch(ctx, args), true
		},
		"block": func(ctx context.Context, action string, args map[string]any) (mcpResult, bool) {
			switch action {
			case "get":
				return k.mcpBlockGet(ctx, args), true
			case "get_kramdown":
				return k.mcpBlockKramdown(ctx, args), true
			case "get_children":
				return k.mcpBlockChildren(ctx, args), true
			case "insert", "append", "prepend", "update", "delete", "move":
				return k.mcpBlockWrite(ctx, action, args), true
			}
			return mcpResult{}, false
		},
		"attr": func(ctx context.Context, action string, args map[string]any) (mcpResult, bool) {
			if action != "get" {
				return mcpResult{}, false
			}
			return k.mcpAttrGet(args), true
		},
		"document": func(ctx context.Context, action string, args map[string]any) (mcpResult, bool) {
			switch action {
			case "get":
				return k.mcpDocGet(ctx, args), true
			case "info":
				return k.mcpDocInfo(ctx, args), true
			case "list":
				return k.mcpDocList(ctx, args), true
			}
			return mcpResult{}, false
		},
		"ref": func(ctx context.Context, action string, args map[string]any) (mcpResult, bool) {
			return k.mcpRef(ctx, action, args), true
		},
		"workspace": func(_ context.Context, action string, _ map[string]any) (mcpResult, bool) {
			return k.mcpWorkspace(action), true
		},
		"tag": func(ctx context.Context, action string, _ map[string]any) (mcpResult, bool) {
			if action != "list" {
				return mcpResult{}, false
			}
			return k.mcpTagList(ctx), true
		},
		"bookmark": func(ctx context.Context, action string, _ map[string]any) (mcpResult, bool) {
			if action != "list" && action != "labels" {
				return mcpResult{}, false
			}
			return k.mcpBookmarks(ctx, action), true
		},
		"sql": func(ctx context.Context, _ string, args map[string]any) (mcpResult, bool) {
			return k.mcpSQL(ctx, args), true
		},
		// Tools 3.7.3 answers the same way whatever its data: frontend and
		// question belong to its agent chat and refuse direct calls.
		"frontend": func(context.Context, string, map[string]any) (mcpResult, bool) {
			return errorResult("frontend actions are only available in the interactive agent chat (not via direct tool invocation)"), true
		},
		"question": func(context.Context, string, map[string]any) (mcpResult, bool) {
			return textResult("question tool: should be intercepted by agent loop"), true
		},
		"todo_write": func(_ context.Context, _ string, args map[string]any) (mcpResult, bool) {
			if _, ok := args["todos"]; ok {
				return mcpResult{}, false
			}
			return errorResult("todo_write error: missing 'todos' parameter"), true
		},
		"repo": func(_ context.Context, action string, args map[string]any) (mcpResult, bool) {
			return mcpRepo(action, args)
		},
		"skill": func(_ context.Context, action string, args map[string]any) (mcpResult, bool) {
			return mcpSkill(action, args)
		},
		"sync": func(_ context.Context, action string, _ map[string]any) (mcpResult, bool) {
			return mcpSync(action)
		},
		"system": func(ctx context.Context, action string, _ map[string]any) (mcpResult, bool) {
			return k.mcpSystem(action), true
		},
	}
}

// nativeTools are SiYuan 3.7.3's native tools with their handlers.
func (k *Kernel) nativeTools() []mcpTool {
	var natives []nativeTool
	if err := json.Unmarshal(endpoint.NativeMCPTools(), &natives); err != nil {
		panic("embedded: the native MCP tools: " + err.Error()) // endpoint's declaration is broken: its test fails too
	}
	handlers := k.mcpHandlers()
	out := make([]mcpTool, len(natives))
	for i, n := range natives {
		out[i] = mcpTool{Name: n.Name, Title: n.Title, Description: n.Description, InputSchema: n.InputSchema, Source: n.Source, EffectScope: n.EffectScope,
			handler: nativeHandler(n, handlers[n.Name])}
	}
	return out
}

// nativeHandler checks a call's action against the tool's enum, as
// SiYuan's handlers do, and runs what this kernel backs.
func nativeHandler(n nativeTool, h func(ctx context.Context, action string, args map[string]any) (mcpResult, bool)) func(ctx context.Context, args map[string]any) mcpResult {
	var schema struct {
		Properties struct {
			Action struct {
				Enum []string `json:"enum"`
			} `json:"action"`
		} `json:"properties"`
	}
	json.Unmarshal(n.InputSchema, &schema)
	enum := schema.Properties.Action.Enum
	return func(ctx context.Context, args map[string]any) mcpResult {
		action, _ := args["action"].(string)
		if enum != nil && !slices.Contains(enum, action) {
			return errorResult("unknown action '" + action + "', expected one of: [" + strings.Join(enum, ", ") + "]")
		}
		if h != nil {
			if res, ok := h(ctx, action, args); ok {
				return res
			}
		}
		what := n.Name
		if action != "" {
			what += " " + action
		}
		return errorResult("the embedded kernel does not carry out " + what + " (SiYuan's own kernel does); nothing was done")
	}
}

// mcpTools lists the tools sorted by name, as SiYuan's registry does.
func (k *Kernel) mcpTools() []mcpTool {
	k.mcpOnce.Do(func() { k.mcpList = k.buildMCPTools() })
	return k.mcpList
}

func (k *Kernel) buildMCPTools() []mcpTool {
	all := append(k.nativeTools(), []mcpTool{
		{Name: ExamplePluginStamp, Title: "Stamp a block", Source: "plugin", EffectScope: "unknown",
			Description: "Sets the " + StampAttr + " attribute of a block to value.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","description":"Block ID"},"value":{"type":"string","description":"Stamp value"}},"required":["id","value"]}`),
			handler:     k.mcpStamp},
		{Name: ExamplePluginWordCount, Title: "Word count", Source: "plugin", ReadOnlyHint: true, EffectScope: "unknown",
			Description: "Counts the words of a block or document.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","description":"Block or document ID"}},"required":["id"]}`),
			handler:     k.mcpWordCount},
	}...)
	slices.SortFunc(all, func(a, b mcpTool) int { return strings.Compare(a.Name, b.Name) })
	return all
}

// lookupMCPTool finds a tool as SiYuan's LookupTool does: the exact name,
// then any case, then without a "siyuan_" prefix.
func lookupMCPTool(tools []mcpTool, name string) *mcpTool {
	name = strings.TrimSpace(name)
	for i := range tools {
		if tools[i].Name == name {
			return &tools[i]
		}
	}
	lower := strings.ToLower(name)
	base, prefixed := strings.CutPrefix(lower, "siyuan_")
	for _, want := range []string{lower, base} {
		for i := range tools {
			if strings.ToLower(tools[i].Name) == want {
				return &tools[i]
			}
		}
		if !prefixed {
			break
		}
	}
	return nil
}

// callMCPTool answers tools/call.
func (k *Kernel) callMCPTool(r *http.Request, raw json.RawMessage) (any, *rpcError) {
	var params map[string]any
	if json.Unmarshal(raw, &params) != nil || params == nil {
		return nil, &rpcError{-32602, "Invalid params"}
	}
	name, _ := params["name"].(string)
	if name == "" {
		return nil, &rpcError{-32602, "Invalid params: name is required"}
	}
	t := lookupMCPTool(k.mcpTools(), name)
	if t == nil {
		return errorResult("tool not found: " + name), nil
	}
	args, _ := params["arguments"].(map[string]any)
	if args == nil {
		args = map[string]any{}
	}
	return t.handler(r.Context(), args), nil
}

func (k *Kernel) mcpNotebook(ctx context.Context) mcpResult {
	v, err := k.lsNotebooks(ctx, nil)
	if err != nil {
		return errorResult("list notebooks failed: " + err.Error())
	}
	nbs := v.(map[string]any)["notebooks"].([]wire.Notebook)
	var b strings.Builder
	fmt.Fprintf(&b, "Notebooks (%d):\n\n", len(nbs))
	for _, nb := range nbs {
		fmt.Fprintf(&b, "- %s (id: %s, icon: %s, closed: %v)\n", nb.Name, nb.ID, nb.Icon, nb.Closed)
	}
	return textResult(b.String())
}

// mcpSearch is the search tool over /api/search/fullTextSearchBlock's
// implementation, with the MCP handler's defaults (page 1, 32 a page
// whatever the description says) and its text.
func (k *Kernel) mcpSearch(ctx context.Context, args map[string]any) mcpResult {
	action, _ := args["action"].(string)
	switch action {
	case "fulltext":
	case "semantic":
		// This kernel has no embedding model: SiYuan's answer without one.
		return textResult("No semantic search results. Make sure AI embedding is configured in SiYuan settings.")
	default:
		return errorResult("unknown action '" + action + "', expected one of: [fulltext, semantic]")
	}
	query, _ := args["query"].(string)
	num := func(key string, def int) int {
		if v, ok := args[key].(float64); ok {
			return int(v)
		}
		return def
	}
	page, pageSize := max(num("page", 1), 1), num("pageSize", 32)
	if pageSize < 1 {
		pageSize = 32
	}
	a := args2(map[string]any{"query": query, "page": page, "pageSize": pageSize,
		"method": num("method", 0), "orderBy": num("orderBy", 0), "groupBy": num("groupBy", 0)})
	if nbs, _ := args["notebook"].(string); nbs != "" {
		var paths []any
		for _, nb := range strings.Split(nbs, ",") {
			if nb = strings.TrimSpace(nb); nb != "" {
				paths = append(paths, nb)
			}
		}
		a["paths"] = paths
	}
	v, err := k.fullTextSearchBlock(ctx, a)
	if err != nil {
		return errorResult(err.Error())
	}
	res := v.(map[string]any)
	blocks := res["blocks"].([]*wire.Block)
	matched := res["matchedBlockCount"].(int)
	if matched == 0 {
		return textResult("No results found.")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Found %d results (page %d/%d):\n\n", matched, page, res["pageCount"].(int))
	for _, blk := range blocks {
		content := blk.Markdown
		if content == "" {
			content = blk.Content
		}
		if len(content) > 200 {
			content = content[:200] + "..." // bytes, as SiYuan cuts them
		}
		fmt.Fprintf(&b, "- [%s] %s\n  %s\n  id: %s\n\n", blk.HPath, blk.Type, content, blk.ID)
	}
	if res["docMode"].(bool) {
		fmt.Fprintf(&b, "(grouped by document, %d documents matched)\n", res["matchedRootCount"].(int))
	}
	return textResult(b.String())
}

// args2 builds handler arguments as a decoded request body would hold
// them (numbers as json.Number).
func args2(m map[string]any) args {
	out := args{}
	for key, v := range m {
		if n, ok := v.(int); ok {
			out[key] = json.Number(fmt.Sprint(n))
			continue
		}
		out[key] = v
	}
	return out
}

// outlineEntry is one heading of the tree.
type outlineEntry struct {
	name, id string
	level    int
	children []*outlineEntry
}

// mcpOutline is the outline tool: the document's headings nested by level,
// in document order.
func (k *Kernel) mcpOutline(ctx context.Context, args map[string]any) mcpResult {
	id, _ := args["id"].(string)
	if id == "" {
		return errorResult("id is required")
	}
	const none = "document not found or has no headings"
	tree, err := k.loadTree(id)
	if err != nil {
		return errorResult(none)
	}
	var roots, stack []*outlineEntry
	count := 0
	ast.Walk(tree.Root, func(n *ast.Node, entering bool) ast.WalkStatus {
		if !entering || n.Type != ast.NodeHeading {
			return ast.WalkContinue
		}
		e := &outlineEntry{name: strings.TrimSpace(sqlStaticContent(n)), id: n.ID, level: n.HeadingLevel}
		count++
		for len(stack) > 0 && stack[len(stack)-1].level >= e.level {
			stack = stack[:len(stack)-1]
		}
		if len(stack) == 0 {
			roots = append(roots, e)
		} else {
			top := stack[len(stack)-1]
			top.children = append(top.children, e)
		}
		stack = append(stack, e)
		return ast.WalkSkipChildren
	})
	if count == 0 {
		return errorResult(none)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Document outline (%d headings):\n\n", count)
	var write func(e *outlineEntry, depth int)
	write = func(e *outlineEntry, depth int) {
		fmt.Fprintf(&b, "%s- [%s] (id: %s, depth: %d)\n", strings.Repeat("  ", depth), e.name, e.id, depth)
		for _, c := range e.children {
			write(c, depth+1)
		}
	}
	for _, e := range roots {
		write(e, 0)
	}
	return textResult(b.String())
}

// mcpWordCount is the example plugin's read-only tool.
func (k *Kernel) mcpWordCount(ctx context.Context, args map[string]any) mcpResult {
	id, _ := args["id"].(string)
	if id == "" {
		return errorResult("id is required")
	}
	_, node, err := k.loadTreeOf(id)
	if err != nil {
		return errorResult("block not found: " + id)
	}
	var words int
	ast.Walk(node, func(n *ast.Node, entering bool) ast.WalkStatus {
		if entering && n.Type == ast.NodeText {
			words += len(strings.Fields(string(n.Tokens)))
		}
		return ast.WalkContinue
	})
	return textResult(fmt.Sprintf("Words: %d", words))
}

// mcpStamp is the example plugin's tool with an effect: it sets StampAttr,
// serialised with every other write as the API's writes are.
func (k *Kernel) mcpStamp(ctx context.Context, args map[string]any) mcpResult {
	id, _ := args["id"].(string)
	value, _ := args["value"].(string)
	if id == "" || value == "" {
		return errorResult("id and value are required")
	}
	k.writeMu.Lock()
	defer k.writeMu.Unlock()
	k.applyPendingLocked()
	if _, err := k.setBlockAttrs(ctx, args2(map[string]any{"id": id, "attrs": map[string]any{StampAttr: value}})); err != nil {
		var ae *apiError
		if errors.As(err, &ae) {
			return errorResult("stamp failed: " + ae.msg)
		}
		return errorResult("stamp failed: " + err.Error())
	}
	return textResult("stamped " + id)
}

// mcpSystem is the system tool: the version, the current time (RFC 3339,
// as SiYuan formats it) and the workspace summary. This kernel runs as
// SiYuan's standard container.
func (k *Kernel) mcpSystem(action string) mcpResult {
	switch action {
	case "version":
		return textResult(Version)
	case "current_time":
		return textResult(time.Now().Format(time.RFC3339))
	}
	return textResult("Workspace: " + k.dir + "\nVersion: " + Version + "\nContainer: std")
}

// mcpID is a call's "id" argument, or the error 3.7.3's handlers answer
// without one.
func mcpID(args map[string]any) (string, *mcpResult) {
	id, _ := args["id"].(string)
	if id == "" {
		r := errorResult("id is required")
		return "", &r
	}
	return id, nil
}

// mcpBlockGet is block get: the block's index row in 3.7.3's layout. 3.7.3
// reads the row without its times, so Created and Updated are always
// empty. An unknown block is its "tree not found" error; a known one the
// index does not hold yet is "indexing", what 3.7.3 answers while it
// indexes.
func (k *Kernel) mcpBlockGet(ctx context.Context, args map[string]any) mcpResult {
	id, bad := mcpID(args)
	if bad != nil {
		return *bad
	}
	if _, ok := k.lookup(id); !ok {
		return errorResult("get block failed: tree not found")
	}
	rows, err := k.sql.blocksByID(ctx, []string{id})
	if err != nil || len(rows) == 0 {
		return errorResult("get block failed: indexing")
	}
	r := rows[0]
	str := func(col string) string { return sqlValueString(r[col]) }
	return textResult(fmt.Sprintf("ID: %s\nType: %s\nHPath: %s\nContent: %s\nMarkdown: %s\nTags: %s\nCreated: \nUpdated: ",
		str("id"), searchNodeTypes[str("type")], str("hpath"), str("content"), str("markdown"), str("tag")))
}

// mcpBlockKramdown is block get_kramdown: what /api/block/getBlockKramdown
// answers; an unknown block is an error here.
func (k *Kernel) mcpBlockKramdown(ctx context.Context, args map[string]any) mcpResult {
	id, bad := mcpID(args)
	if bad != nil {
		return *bad
	}
	v, err := k.getBlockKramdown(ctx, args2(map[string]any{"id": id}))
	if md, _ := v.(map[string]any)["kramdown"].(string); err == nil && md != "" {
		return textResult(md)
	}
	return errorResult("block not found or empty: " + id)
}

// mcpBlockChildren is block get_children: /api/block/getChildBlocks as a
// list of type, markdown and id; none (or an unknown block) is not an
// error.
func (k *Kernel) mcpBlockChildren(ctx context.Context, args map[string]any) mcpResult {
	id, bad := mcpID(args)
	if bad != nil {
		return *bad
	}
	v, err := k.getChildBlocks(ctx, args2(map[string]any{"id": id}))
	kids, _ := v.([]wire.ChildBlock)
	if err != nil || len(kids) == 0 {
		return textResult("no child blocks found")
	}
	var b strings.Builder
	for _, c := range kids {
		fmt.Fprintf(&b, "- [%s] %s (%s)\n", c.Type, c.Markdown, c.ID)
	}
	return textResult(b.String())
}

// mcpAttrGet is attr get: the block's attributes. 3.7.3 lists them in its
// map's iteration order, which varies from call to call; this kernel lists
// them in the block's own order, one of those 3.7.3 shows.
func (k *Kernel) mcpAttrGet(args map[string]any) mcpResult {
	id, bad := mcpID(args)
	if bad != nil {
		return *bad
	}
	_, node, err := k.viewOf(id)
	if err != nil || len(node.KramdownIAL) == 0 {
		return textResult("no custom attributes")
	}
	m, _ := k.attrsOf(id)
	var b strings.Builder
	fmt.Fprintf(&b, "Attributes for %s:\n\n", id)
	for _, kv := range node.KramdownIAL {
		fmt.Fprintf(&b, "- %s: %s\n", kv[0], m[kv[0]])
	}
	return textResult(b.String())
}

// apiMsg is the message of a handler's refusal, as SiYuan's API would
// send it.
func apiMsg(err error) string {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.msg
	}
	return err.Error()
}

// mcpDocGet is document get: the block's index row in 3.7.3's layout,
// whose Title, Created and Updated 3.7.3 leaves empty.
func (k *Kernel) mcpDocGet(ctx context.Context, args map[string]any) mcpResult {
	id, bad := mcpID(args)
	if bad != nil {
		return *bad
	}
	if _, ok := k.lookup(id); !ok {
		return errorResult("load doc failed: tree not found")
	}
	rows, err := k.sql.blocksByID(ctx, []string{id})
	if err != nil || len(rows) == 0 {
		return errorResult("load doc failed: indexing")
	}
	r := rows[0]
	str := func(col string) string { return sqlValueString(r[col]) }
	return textResult(fmt.Sprintf("ID: %s\nTitle: \nHPath: %s\nBox: %s\nContent: %s\nMarkdown: %s\nType: %s\nCreated: \nUpdated: ",
		str("id"), str("hpath"), str("box"), str("content"), str("markdown"), searchNodeTypes[str("type")]))
}

// mcpDocInfo is document info: /api/block/getDocInfo in 3.7.3's layout.
// 3.7.3 lists the attributes in a Go map's order, which varies from call
// to call; this kernel sorts them.
func (k *Kernel) mcpDocInfo(ctx context.Context, args map[string]any) mcpResult {
	id, bad := mcpID(args)
	if bad != nil {
		return *bad
	}
	v, err := k.getDocInfo(ctx, args2(map[string]any{"id": id}))
	info, ok := v.(*wire.DocInfo)
	if err != nil || !ok {
		return errorResult("get doc info failed: tree not found")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "ID: %s\nRootID: %s\nName: %s\nRefCount: %d\nSubFileCount: %d\nIcon: %s\nIAL:",
		info.ID, info.RootID, info.Name, info.RefCount, info.SubFileCount, info.Icon)
	keys := make([]string, 0, len(info.IAL))
	for key := range info.IAL {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	for _, key := range keys {
		fmt.Fprintf(&b, "\n  %s: %s", key, info.IAL[key])
	}
	return textResult(b.String())
}

// mcpDocList is document list: the documents under a human-readable path
// ("/" the notebook's top), each with its own.
func (k *Kernel) mcpDocList(ctx context.Context, args map[string]any) mcpResult {
	box, _ := args["notebook"].(string)
	if box == "" {
		return errorResult("notebook is required")
	}
	hp, _ := args["path"].(string)
	if hp == "" {
		hp = "/"
	}
	dir := "/"
	if hp != "/" {
		ids := k.docsByHPath(box, hp)
		loc, ok := blockLoc{}, false
		if len(ids) > 0 {
			loc, ok = k.lookup(ids[0])
		}
		if !ok {
			return errorResult("target path not found: " + hp)
		}
		dir = strings.TrimSuffix(loc.Path, ".sy")
	}
	v, err := k.listDocsByPath(ctx, args2(map[string]any{"notebook": box, "path": dir}))
	if err != nil {
		return errorResult("list docs failed: " + apiMsg(err))
	}
	files, _ := v.(map[string]any)["files"].([]wire.DocFile)
	var b strings.Builder
	fmt.Fprintf(&b, "Documents in %s (hPath: %s):\n\n", box, hp)
	for _, f := range files {
		fmt.Fprintf(&b, "- %s (id: %s, hPath: %s)\n", f.Name, f.ID, strings.TrimSuffix(hp, "/")+"/"+f.Name)
	}
	return textResult(b.String())
}

// mcpSQL is sql query: a read-only statement's rows as a table. 3.7.3
// orders the columns of the header and of each row as a Go map iterates,
// differently from call to call and row to row; this kernel sorts them.
func (k *Kernel) mcpSQL(ctx context.Context, args map[string]any) mcpResult {
	stmt, _ := args["stmt"].(string)
	if stmt == "" {
		return errorResult("stmt is required")
	}
	v, err := k.querySQL(ctx, args2(map[string]any{"stmt": stmt, "mode": "readonly"}))
	if err != nil {
		return errorResult("readonly SQL required: " + apiMsg(err))
	}
	rows, _ := v.([]map[string]any)
	if len(rows) == 0 {
		return textResult("no results")
	}
	var cols []string
	for col := range rows[0] {
		cols = append(cols, col)
	}
	slices.Sort(cols)
	var b strings.Builder
	fmt.Fprintf(&b, "Query results (%d rows):\n\n| %s |\n|%s\n", len(rows), strings.Join(cols, " | "), strings.Repeat("---|", len(cols)))
	for _, r := range rows {
		cells := make([]string, len(cols))
		for i, col := range cols {
			switch x := r[col].(type) {
			case []byte:
				cells[i] = string(x)
			default:
				cells[i] = fmt.Sprint(x)
			}
		}
		fmt.Fprintf(&b, "| %s |\n", strings.Join(cells, " | "))
	}
	return textResult(b.String())
}

// mcpRepoKeyMissing is 3.7.3's refusal of a data repo action before a
// repo key is set, the state this kernel is always in: it keeps no data
// repo (snapshots).
const mcpRepoKeyMissing = "Please initialize the data repo key first in [Settings - Account & Sync - Data repo key]"

// mcpRepo answers the repo actions whose refusal was captured: each checks
// its arguments, then fails for the missing key under its own verb.
func mcpRepo(action string, args map[string]any) (mcpResult, bool) {
	has := func(keys ...string) bool {
		for _, key := range keys {
			if v, _ := args[key].(string); v == "" {
				return false
			}
		}
		return true
	}
	switch {
	case action == "list":
		return errorResult("get snapshots failed: " + mcpRepoKeyMissing), true
	case action == "create":
		return errorResult("create snapshot failed: " + mcpRepoKeyMissing), true
	case action == "search" && !has("keyword"):
		return errorResult("keyword is required"), true
	case action == "search":
		return errorResult("search repo failed: " + mcpRepoKeyMissing), true
	case action == "diff" && !has("left", "right"):
		return errorResult("left and right are required"), true
	case action == "diff":
		return errorResult("diff failed: " + mcpRepoKeyMissing), true
	case action == "tag" && !has("id", "name"):
		return errorResult("id and name are required"), true
	case action == "tag":
		return errorResult("tag snapshot failed: " + mcpRepoKeyMissing), true
	}
	return mcpResult{}, false
}

// mcpSkill answers the skill reads: this kernel has no skills.
func mcpSkill(action string, args map[string]any) (mcpResult, bool) {
	switch action {
	case "list":
		return textResult("no skills available"), true
	case "load":
		name, _ := args["name"].(string)
		if name == "" {
			return errorResult("skill name is required"), true
		}
		return errorResult("skill not found: " + name), true
	}
	return mcpResult{}, false
}

// mcpSync answers as 3.7.3 does with cloud sync disabled (its default,
// and this kernel has no cloud): the status of its default settings, and
// perform, upload and download report done without syncing anything, as
// 3.7.3 reports them then.
func mcpSync(action string) (mcpResult, bool) {
	switch action {
	case "status":
		return textResult("Sync Status:\n  Enabled: false\n  Mode: 1 (0/1=auto, 2=manual, 3=full-manual)\n  Provider: 0\n  Cloud: main\n  Perception: false\n  Interval: 30s\n  Synced: 0\n  Stat: "), true
	case "perform":
		return textResult("sync done: "), true
	case "upload", "download":
		return textResult("sync " + action + " done: "), true
	}
	return mcpResult{}, false
}

// mcpRef is the ref tool: the documents of /api/ref/getBacklink2's
// backlinks or backmentions, unfiltered. refresh has nothing to do here
// (this kernel computes backlinks from the documents on every read), and
// 3.7.3 answers it the same for any id.
func (k *Kernel) mcpRef(ctx context.Context, action string, args map[string]any) mcpResult {
	id, _ := args["id"].(string)
	if action == "refresh" {
		return textResult("backlink refreshed for: " + id)
	}
	key, title, none := "backlinks", "Backlinks", "no backlinks found"
	if action == "mentions" {
		key, title, none = "backmentions", "Mentions", "no mentions found"
	}
	var paths []*blPath
	if id != "" {
		v, err := k.getBacklink2(ctx, args2(map[string]any{"id": id, "k": "", "mk": ""}))
		if m, ok := v.(map[string]any); ok && err == nil {
			paths, _ = m[key].([]*blPath)
		}
	}
	if len(paths) == 0 {
		return textResult(none)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%d):\n\n", title, len(paths))
	for _, p := range paths {
		fmt.Fprintf(&b, "- [%s] %s (id: %s)\n", p.NodeType, p.HPath, p.ID)
	}
	return textResult(b.String())
}

// mcpWorkspace is the workspace tool. 3.7.3 lists the workspaces its
// desktop install registered; this kernel belongs to no install, so it
// lists its own workspace, the one it serves.
func (k *Kernel) mcpWorkspace(action string) mcpResult {
	if action == "list" {
		return textResult("Registered workspaces (1):\n\n- " + k.dir + "\n")
	}
	return textResult("Path:    " + k.dir + "\nVersion: " + Version + "\nValid:   true\n")
}

// mcpTagList is tag list: every tag a block carries, by its full label,
// sorted; a parent label no block carries itself is not listed.
func (k *Kernel) mcpTagList(ctx context.Context) mcpResult {
	if err := k.flushForTags(ctx, false); err != nil {
		return errorResult("list tags failed: " + err.Error())
	}
	labels, err := k.tagSpanLabels(ctx)
	if err != nil {
		return errorResult("list tags failed: " + err.Error())
	}
	var names []string
	for l, n := range labels {
		if n > 0 {
			names = append(names, l)
		}
	}
	slices.Sort(names)
	var b strings.Builder
	fmt.Fprintf(&b, "Tags (%d):\n\n", len(names))
	for _, l := range names {
		fmt.Fprintf(&b, "- #%s\n", l)
	}
	return textResult(b.String())
}

// mcpBookmarkAttr finds a block's bookmark in its IAL as the index holds it.
var mcpBookmarkAttr = regexp.MustCompile(`(?:^|\s)bookmark="([^"]*)"`)

// mcpBookmarks is bookmark list (each bookmark with its number of blocks)
// and labels (the names alone), sorted by name, from the index as 3.7.3
// reads them.
func (k *Kernel) mcpBookmarks(ctx context.Context, action string) mcpResult {
	rows, err := k.sql.db.QueryContext(ctx, "SELECT ial FROM blocks WHERE ial LIKE '%bookmark=%'")
	if err != nil {
		return errorResult("get bookmarks failed: " + err.Error())
	}
	defer rows.Close()
	counts := map[string]int{}
	for rows.Next() {
		var ial string
		if rows.Scan(&ial) != nil {
			continue
		}
		if m := mcpBookmarkAttr.FindStringSubmatch(ial); m != nil && m[1] != "" {
			counts[html.UnescapeString(m[1])]++
		}
	}
	names := make([]string, 0, len(counts))
	for n := range counts {
		names = append(names, n)
	}
	slices.Sort(names)
	var b strings.Builder
	if action == "labels" {
		fmt.Fprintf(&b, "Bookmark labels (%d):\n\n", len(names))
		for _, n := range names {
			fmt.Fprintf(&b, "- %s\n", n)
		}
		return textResult(b.String())
	}
	fmt.Fprintf(&b, "Bookmarks (%d):\n\n", len(names))
	for _, n := range names {
		fmt.Fprintf(&b, "- %s: %d blocks\n", n, counts[n])
	}
	return textResult(b.String())
}

// mcpBlockWrite is block's writes over the API's handlers, serialised with
// every other write as the API's are, with 3.7.3's argument checks and
// answers. Where 3.7.3 answers success for a write that did nothing (an
// update or delete of an unknown block, an insert without an anchor), this
// kernel answers its API's refusal as an error instead.
func (k *Kernel) mcpBlockWrite(ctx context.Context, action string, in map[string]any) mcpResult {
	str := func(key string) string { v, _ := in[key].(string); return v }
	dataType := str("dataType")
	if dataType == "" {
		dataType = "markdown"
	}
	a := args2(map[string]any{"data": str("data"), "dataType": dataType})
	var run func(context.Context, args) (any, error)
	var done string
	switch action {
	case "insert":
		if str("data") == "" {
			return errorResult("data is required")
		}
		for _, key := range []string{"parentID", "previousID", "nextID"} {
			a[key] = str(key)
		}
		run, done = k.insertBlock, "block inserted"
	case "append", "prepend":
		switch {
		case str("parentID") == "":
			return errorResult("parentID is required")
		case str("data") == "":
			return errorResult("data is required")
		}
		if _, ok := k.lookup(str("parentID")); !ok {
			return errorResult("parent block not found: " + str("parentID"))
		}
		a["parentID"] = str("parentID")
		run, done = k.appendBlock, "block appended"
		if action == "prepend" {
			run, done = k.prependBlock, "block prepended"
		}
	case "update":
		switch {
		case str("id") == "":
			return errorResult("id is required")
		case str("data") == "":
			return errorResult("data is required")
		}
		a["id"] = str("id")
		run, done = k.updateBlock, "block updated"
	case "delete":
		if str("id") == "" {
			return errorResult("id is required")
		}
		a = args2(map[string]any{"id": str("id")})
		run, done = k.deleteBlock, "block deleted: "+str("id")
	case "move":
		switch {
		case str("id") == "":
			return errorResult("id is required")
		case str("parentID") == "":
			return errorResult("parentID is required")
		}
		a = args2(map[string]any{"id": str("id"), "parentID": str("parentID"), "previousID": str("previousID")})
		run, done = k.moveBlock, "block moved: "+str("id")
	}
	k.writeMu.Lock()
	defer k.writeMu.Unlock()
	k.applyPendingLocked()
	if _, err := run(ctx, a); err != nil {
		return errorResult(action + " block failed: " + apiMsg(err))
	}
	return textResult(done)
}

// mcpNotebookWrite is notebook's writes over the API's handlers, serialised
// with every other write, with 3.7.3's argument checks and answers.
func (k *Kernel) mcpNotebookWrite(ctx context.Context, action string, in map[string]any) mcpResult {
	str := func(key string) string { v, _ := in[key].(string); return v }
	id := str("id")
	if action == "create" && str("name") == "" {
		return errorResult("name is required")
	}
	if action != "create" && id == "" {
		return errorResult("id is required")
	}
	if action == "open" {
		if _, err := k.readBoxConf(id); err != nil {
			// 3.7.3 opens the notebook's folder, and finds none.
			return errorResult("open notebook failed: can not open file, just support open folder only")
		}
	}
	k.writeMu.Lock()
	defer k.writeMu.Unlock()
	k.applyPendingLocked()
	a := args2(map[string]any{"notebook": id})
	var err error
	var v any
	switch action {
	case "create":
		v, err = k.createNotebook(ctx, args2(map[string]any{"name": str("name")}))
	case "open":
		_, err = k.openNotebook(ctx, a)
	case "close":
		_, err = k.closeNotebook(ctx, a)
	case "remove":
		_, err = k.removeNotebook(ctx, a)
	case "set_icon":
		a["icon"] = str("icon")
		_, err = k.setNotebookIcon(ctx, a)
	}
	if err != nil {
		verb := strings.ReplaceAll(action, "_", " ")
		return errorResult(verb + " notebook failed: " + apiMsg(err))
	}
	switch action {
	case "create":
		nb, _ := v.(map[string]any)["notebook"].(wire.Notebook)
		return textResult(fmt.Sprintf("notebook created: %s (id: %s)", nb.Name, nb.ID))
	case "open":
		return textResult("notebook opened: " + id)
	case "close":
		return textResult("notebook closed: " + id)
	case "remove":
		return textResult("notebook removed: " + id)
	}
	return textResult("notebook icon set: " + id + " -> " + str("icon"))
}
