package siyuan

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
)

// SiYuan's own MCP endpoint (3.7.0 and later): POST /mcp behind the same
// token as the API, answering JSON-RPC 2.0 with plain JSON (no SSE; GET is
// 405). It serves the legacy handshake (initialize, Mcp-Session-Id,
// revisions 2024-11-05 and 2025-06-18) and the stateless revision
// 2026-07-28, chosen by the MCP-Protocol-Version header. The client speaks
// the stateless one: no session to expire or lose between calls, and a
// call is one HTTP exchange, so "sent once" is exactly one POST.

// MCPProtocolVersion is the revision the client speaks to /mcp.
const MCPProtocolVersion = "2026-07-28"

// MCPTool is one tool the kernel's MCP endpoint lists, with SiYuan's own
// fields: source ("native" for the kernel's tools, "plugin" for those a
// kernel plugin registered as plugin__<plugin>__<tool>, "mcp" for tools of
// MCP servers SiYuan itself connects to; empty means native), readOnlyHint
// (top level, not under annotations: 3.7.3 sets it only for plugin tools
// registered with readOnly:true) and effectScope.
type MCPTool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema,omitempty"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Source       string          `json:"source,omitempty"`
	ReadOnlyHint bool            `json:"readOnlyHint,omitempty"`
	EffectScope  string          `json:"effectScope,omitempty"`
}

// MCPServer is what server/discover answers. SiYuan 3.7.3 answers an
// early draft's shape (protocolVersion and serverInfo at the top level);
// the revision's is supportedVersions and _meta serverInfo. Both are read.
type MCPServer struct {
	ProtocolVersion   string        `json:"protocolVersion"`
	SupportedVersions []string      `json:"supportedVersions"`
	ServerInfo        MCPServerInfo `json:"serverInfo"`
	Meta              struct {
		ServerInfo MCPServerInfo `json:"io.modelcontextprotocol/serverInfo"`
	} `json:"_meta"`
}

// MCPServerInfo names a server.
type MCPServerInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Speaks reports whether the server serves the client's revision.
func (s MCPServer) Speaks() bool {
	return s.ProtocolVersion == MCPProtocolVersion || slices.Contains(s.SupportedVersions, MCPProtocolVersion)
}

// Info is the server's name and version, wherever it said them.
func (s MCPServer) Info() MCPServerInfo {
	if s.ServerInfo.Name != "" {
		return s.ServerInfo
	}
	return s.Meta.ServerInfo
}

// MCPCallResult is a tools/call result as the kernel sent it. IsError is
// the tool's own failure (an unknown tool, a bad argument): the call
// reached the tool's handler, or its lookup.
type MCPCallResult struct {
	Content           []json.RawMessage `json:"content"`
	StructuredContent json.RawMessage   `json:"structuredContent,omitempty"`
	IsError           bool              `json:"isError,omitempty"`
}

// ErrMCPEmptyReply is an HTTP 200 without a body: SiYuan 3.7.3 answers so
// when a tool's handler panics (its recovery writes no reply); it does for
// every tools/call of image, whose handler /mcp does not dispatch.
var ErrMCPEmptyReply = errors.New("the MCP endpoint answered HTTP 200 with an empty body")

// MCPError is a JSON-RPC error the endpoint answered (-32601 method not
// found, -32602 invalid params, ...): the request was refused before any
// tool ran.
type MCPError struct {
	Method  string
	Code    int
	Message string
}

func (e *MCPError) Error() string {
	return fmt.Sprintf("siyuan %s %s: JSON-RPC error %d: %s", endpoint.MCP, e.Method, e.Code, e.Message)
}

// mcp sends one JSON-RPC request to /mcp and decodes its result into out.
// A Read is retried on transient failures like any read; a Write is sent
// once, and a failure after it may have reached the kernel is an
// *OutcomeUnknownError. maxBody caps the reply (0: the client's cap).
func (c *Client) mcp(ctx context.Context, method string, params map[string]any, out any, kind CallKind, maxBody int64) error {
	id := c.mcpSeq.Add(1) // any id works statelessly; a counter reads well in logs
	if params == nil {
		params = map[string]any{}
	}
	// The revision's per-request description of the client (3.7.3 reads
	// none of it, a conforming server requires it).
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    MCPProtocolVersion,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "sisyphus-extension-bridge", "version": "1"},
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		return invalidArg(endpoint.MCP, "encode %s: %v", method, err)
	}
	decode := func(b []byte) error { return decodeRPC(method, id, b, out) }
	r := &request{endpoint: endpoint.MCP, kind: kind, jsonBody: body, decode: decode, maxBody: maxBody,
		headers: map[string]string{
			"MCP-Protocol-Version": MCPProtocolVersion,
			"Mcp-Method":           method,
			"Accept":               "application/json, text/event-stream",
		}}
	if name, ok := params["name"].(string); ok && method == "tools/call" {
		r.headers["Mcp-Name"] = headerValue(name)
	}
	_, err = c.run(ctx, r)
	return err
}

// decodeRPC decodes a JSON-RPC reply to request id into out: a JSON-RPC
// error is an *MCPError, anything else that is not a result for id a
// *DecodeError.
func decodeRPC(method string, id int64, b []byte, out any) error {
	if len(bytes.TrimSpace(b)) == 0 {
		return &DecodeError{Endpoint: endpoint.MCP, Status: 200, Cause: fmt.Errorf("%s: %w", method, ErrMCPEmptyReply)}
	}
	var reply struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &reply); err != nil {
		return &DecodeError{Endpoint: endpoint.MCP, Status: 200, Cause: fmt.Errorf("%s: not a JSON-RPC reply: %w", method, err)}
	}
	if reply.Error != nil {
		return &MCPError{Method: method, Code: reply.Error.Code, Message: reply.Error.Message}
	}
	if !bytes.Equal(bytes.TrimSpace(reply.ID), []byte(strconv.FormatInt(id, 10))) {
		return &DecodeError{Endpoint: endpoint.MCP, Status: 200, Cause: fmt.Errorf("%s: reply to id %s, want %d", method, reply.ID, id)}
	}
	if len(reply.Result) == 0 || isJSONNull(reply.Result) {
		return &DecodeError{Endpoint: endpoint.MCP, Status: 200, Cause: fmt.Errorf("%s: reply without a result", method)}
	}
	if err := json.Unmarshal(reply.Result, out); err != nil {
		return &DecodeError{Endpoint: endpoint.MCP, Status: 200, Cause: fmt.Errorf("%s: %w", method, err)}
	}
	return nil
}

// headerValue is a routing header's value: plain visible ASCII as is,
// anything else as =?base64?...?= (the revision's encoding).
func headerValue(v string) string {
	plain := v != "" && strings.TrimSpace(v) == v && !strings.HasPrefix(v, "=?base64?")
	for i := 0; plain && i < len(v); i++ {
		plain = v[i] > 0x20 && v[i] < 0x7f || v[i] == ' '
	}
	if plain {
		return v
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(v)) + "?="
}

// MCPDiscover asks the endpoint who it is (server/discover).
func (c *Client) MCPDiscover(ctx context.Context) (MCPServer, error) {
	var s MCPServer
	err := c.mcp(ctx, "server/discover", nil, &s, Read, 0)
	return s, err
}

// maxMCPPages bounds tools/list pagination (3.7.3 answers one page).
const maxMCPPages = 32

// MCPListTools lists every tool the endpoint serves, following nextCursor.
func (c *Client) MCPListTools(ctx context.Context) ([]MCPTool, error) {
	var all []MCPTool
	cursor := ""
	for range maxMCPPages {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		var page struct {
			Tools      []MCPTool `json:"tools"`
			NextCursor string    `json:"nextCursor"`
		}
		if err := c.mcp(ctx, "tools/list", params, &page, Read, 0); err != nil {
			return nil, err
		}
		all = append(all, page.Tools...)
		if page.NextCursor == "" {
			return all, nil
		}
		cursor = page.NextCursor
	}
	return nil, &DecodeError{Endpoint: endpoint.MCP, Status: 200, Cause: fmt.Errorf("tools/list: more than %d pages", maxMCPPages)}
}

// MCPCallTool calls one tool, sent exactly once whatever the tool does:
// the kernel's tools have effects Sisyphus cannot read back, so a failure
// after the request may have reached the kernel is an
// *OutcomeUnknownError, never a retry. maxBody caps the reply; a larger
// one is an outcome unknown too (the tool ran, its answer is lost).
func (c *Client) MCPCallTool(ctx context.Context, name string, arguments map[string]any, maxBody int64) (*MCPCallResult, error) {
	if name == "" {
		return nil, invalidArg(endpoint.MCP, "tools/call needs a tool name")
	}
	if arguments == nil {
		arguments = map[string]any{}
	}
	var res MCPCallResult
	if err := c.mcp(ctx, "tools/call", map[string]any{"name": name, "arguments": arguments}, &res, Write, maxBody); err != nil {
		return nil, err
	}
	return &res, nil
}
