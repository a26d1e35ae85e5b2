package embedded

import (
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"sync"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
)

// SiYuan's own MCP endpoint, as 3.7.3 serves it (kernel/mcp): POST /mcp
// behind the API token, plain JSON replies (no SSE: GET answers 405),
// the legacy handshake with a Mcp-Session-Id header, and the stateless
// revision 2026-07-28 chosen by the MCP-Protocol-Version header. Protocol
// failures are SiYuan's: a body that is not JSON is -32700 with id null, a
// wrong jsonrpc or empty method -32600, an unknown method -32601, and the
// session errors are plain {"error": ...} objects with HTTP 400 and 404.

// mcpServerName is what SiYuan calls itself in serverInfo.
const mcpServerName = "SiYuan"

// The revisions: what an initialize without a supported one gets, the
// stateless one, and those initialize accepts.
const (
	mcpLegacyVersion    = "2025-06-18"
	mcpStatelessVersion = "2026-07-28"
)

var mcpInitVersions = map[string]bool{"2025-06-18": true, "2024-11-05": true, "2026-07-28": true}

// mcpSessions are the legacy sessions initialize opened (SiYuan keeps them
// until DELETE or restart).
type mcpSessions struct {
	mu  sync.Mutex
	ids map[string]bool
}

func (s *mcpSessions) open() string {
	const alphabet = "0123456789abcdefghijklmnopqrstuvwxyz"
	b := make([]byte, 16)
	rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	id := string(b)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ids == nil {
		s.ids = map[string]bool{}
	}
	s.ids[id] = true
	return id
}

func (s *mcpSessions) has(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ids[id]
}

func (s *mcpSessions) close(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.ids, id)
}

// mcpRoutes is the MCP endpoint; its handler answers every method itself.
func (k *Kernel) mcpRoutes() map[string]route {
	return map[string]route{endpoint.MCP: {method: "POST+GET+DELETE", raw: k.serveMCP}}
}

type rpcRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
	ID      any             `json:"id,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// rpcReply is a result or an error; SiYuan always sends "id" (null for a
// body it could not parse).
type rpcReply struct {
	JSONRPC string    `json:"jsonrpc"`
	Result  any       `json:"result,omitempty"`
	Error   *rpcError `json:"error,omitempty"`
	ID      any       `json:"id"`
}

func (k *Kernel) serveMCP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	case http.MethodDelete:
		id := r.Header.Get("Mcp-Session-Id")
		if id == "" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		k.mcpState.close(id)
		w.WriteHeader(http.StatusOK)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxJSONBody))
	var req rpcRequest
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	switch {
	case err != nil:
		writeRPC(w, http.StatusOK, rpcReply{Error: &rpcError{-32700, "Parse error"}})
		return
	case req.JSONRPC != "2.0" || req.Method == "":
		writeRPC(w, http.StatusOK, rpcReply{Error: &rpcError{-32600, "Invalid Request"}, ID: req.ID})
		return
	}
	if r.Header.Get("MCP-Protocol-Version") == mcpStatelessVersion {
		if m := r.Header.Get("Mcp-Method"); m != "" && m != req.Method {
			writePlainError(w, http.StatusBadRequest, "Mcp-Method header does not match body method")
			return
		}
		k.answerMCP(w, r, &req, true)
		return
	}
	if req.Method == "initialize" {
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		json.Unmarshal(req.Params, &p)
		version := mcpLegacyVersion
		if mcpInitVersions[p.ProtocolVersion] {
			version = p.ProtocolVersion
		}
		w.Header().Set("Mcp-Session-Id", k.mcpState.open())
		if req.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		writeRPC(w, http.StatusOK, rpcReply{ID: req.ID, Result: map[string]any{
			"protocolVersion": version,
			"capabilities":    map[string]any{"tools": map[string]any{"listChanged": false}},
			"serverInfo":      map[string]any{"name": mcpServerName, "version": Version},
		}})
		return
	}
	sid := r.Header.Get("Mcp-Session-Id")
	switch {
	case sid == "":
		writePlainError(w, http.StatusBadRequest, "Mcp-Session-Id required")
		return
	case !k.mcpState.has(sid):
		writePlainError(w, http.StatusNotFound, "session not found")
		return
	}
	k.answerMCP(w, r, &req, false)
}

// answerMCP answers one method of either era.
func (k *Kernel) answerMCP(w http.ResponseWriter, r *http.Request, req *rpcRequest, stateless bool) {
	notification := req.ID == nil
	var reply rpcReply
	switch {
	case req.Method == "notifications/initialized" && !stateless:
		reply.ID = nil
		notification = true
	case req.Method == "server/discover" && stateless:
		reply.Result = map[string]any{
			"protocolVersion": mcpStatelessVersion,
			"capabilities":    map[string]any{"tools": map[string]any{"listChanged": false}},
			"serverInfo":      map[string]any{"name": mcpServerName, "version": Version},
		}
	case req.Method == "ping":
		reply.Result = map[string]any{}
	case req.Method == "tools/list":
		list := map[string]any{"tools": k.mcpTools()}
		if stateless {
			list["ttlMs"] = 60000
			list["cacheScope"] = "user"
		}
		reply.Result = list
	case req.Method == "tools/call":
		if notification {
			break // SiYuan does not run a tool for a notification
		}
		res, rerr := k.callMCPTool(r, req.Params)
		reply.Result, reply.Error = res, rerr
	default:
		reply.Error = &rpcError{-32601, "Method not found"}
	}
	if notification {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	reply.ID = req.ID
	writeRPC(w, http.StatusOK, reply)
}

func writeRPC(w http.ResponseWriter, status int, reply rpcReply) {
	reply.JSONRPC = "2.0"
	if reply.Error == nil && reply.Result == nil {
		reply.Result = map[string]any{}
	}
	data, _ := json.Marshal(reply)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(data)
}

func writePlainError(w http.ResponseWriter, status int, msg string) {
	data, _ := json.Marshal(map[string]string{"error": msg})
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(data)
}
