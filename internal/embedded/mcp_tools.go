package embedded

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/88250/lute/ast"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// The MCP endpoint's tools: a few of SiYuan's native ones, with 3.7.3's
// names, schemas and text answers, backed by this kernel's index (search
// fulltext and semantic, outline get, notebook list), and two tools of a
// bundled example plugin, named as SiYuan names plugin tools
// (plugin__<plugin>__<tool>, source "plugin", effectScope "unknown"): one
// registered read-only, one not. A real SiYuan without plugins lists no
// plugin tools; these two let the bridge's plugin path be tested without a
// SiYuan install.

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

// mcpTools lists the tools sorted by name, as SiYuan's registry does.
func (k *Kernel) mcpTools() []mcpTool {
	return []mcpTool{
		{Name: "notebook", Source: "native",
			Description: "Notebook management. Actions: list().",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"action":{"type":"string","description":"Operation","enum":["list"]}},"required":["action"]}`),
			handler:     k.mcpNotebook},
		{Name: "outline", Source: "native",
			Description: "Document outline (heading tree). Action: get(id).",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"action":{"type":"string","description":"Operation","enum":["get"]},"id":{"type":"string","description":"Document block ID"}},"required":["action","id"]}`),
			handler:     k.mcpOutline},
		{Name: ExamplePluginStamp, Title: "Stamp a block", Source: "plugin", EffectScope: "unknown",
			Description: "Sets the " + StampAttr + " attribute of a block to value.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","description":"Block ID"},"value":{"type":"string","description":"Stamp value"}},"required":["id","value"]}`),
			handler:     k.mcpStamp},
		{Name: ExamplePluginWordCount, Title: "Word count", Source: "plugin", ReadOnlyHint: true, EffectScope: "unknown",
			Description: "Counts the words of a block or document.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","description":"Block or document ID"}},"required":["id"]}`),
			handler:     k.mcpWordCount},
		{Name: "search", Source: "native", EffectScope: "local",
			Description: "Search. Actions: fulltext(query, page=1, pageSize=20, notebook?, method?, orderBy?, groupBy?), semantic(query, page=1, pageSize=20, notebook?) — semantic needs AI embedding configured.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"action":{"type":"string","description":"Operation: fulltext or semantic","enum":["fulltext","semantic"]},"groupBy":{"type":"number","description":"Group by (fulltext only): 0=none 1=document (default 0)"},"method":{"type":"number","description":"Search method: fulltext 0=keyword 1=query-syntax 2=sql 3=regex (default 0)"},"notebook":{"type":"string","description":"Comma-separated notebook IDs to filter (optional)"},"orderBy":{"type":"number","description":"Sort order — fulltext: 0=type 1=created-asc 2=created-desc 3=updated-asc 4=updated-desc 5=content 6=relevance-asc 7=relevance-desc (default 0)"},"page":{"type":"number","description":"Page number (default 1)"},"pageSize":{"type":"number","description":"Results per page (default 20)"},"query":{"type":"string","description":"Search keywords (required)"}},"required":["action"]}`),
			handler:     k.mcpSearch},
	}
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

func (k *Kernel) mcpNotebook(ctx context.Context, args map[string]any) mcpResult {
	action, _ := args["action"].(string)
	if action != "list" {
		return errorResult("unknown action '" + action + "', expected one of: [list]")
	}
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
	action, _ := args["action"].(string)
	if action != "get" {
		return errorResult("unknown action '" + action + "', expected one of: [get]")
	}
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
