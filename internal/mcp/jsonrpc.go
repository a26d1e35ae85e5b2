package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/jsonobj"
)

// JSON-RPC and MCP error codes.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603

	// CodeResourceNotFoundLegacy is "resource not found" in revisions up to
	// 2025-11-25. Modern requests use CodeInvalidParams instead.
	CodeResourceNotFoundLegacy = -32002

	// CodeHeaderMismatch: HTTP headers missing, malformed or not matching the body.
	CodeHeaderMismatch = -32020
	// CodeMissingClientCapability: the request needs a capability the client did not declare.
	CodeMissingClientCapability = -32021
	// CodeUnsupportedProtocolVersion: the requested protocol version is not served.
	CodeUnsupportedProtocolVersion = -32022
)

// Error is a JSON-RPC error. Handlers return it to answer with that error
// instead of a result.
type Error struct {
	Code    int
	Message string
	Data    any // optional; marshalled as the error's data member
}

func (e *Error) Error() string { return fmt.Sprintf("mcp: %s (code %d)", e.Message, e.Code) }

// NewError returns a JSON-RPC error with the given code, message and data.
func NewError(code int, message string, data any) *Error {
	return &Error{Code: code, Message: message, Data: data}
}

// InvalidParamsError returns a -32602 error with a formatted message.
func InvalidParamsError(format string, args ...any) *Error {
	return &Error{Code: CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

func errInvalidRequest(msg string) *Error { return &Error{Code: CodeInvalidRequest, Message: msg} }
func errMethodNotFound(method string) *Error {
	return &Error{Code: CodeMethodNotFound, Message: "Method not found: " + method}
}
func errInternal() *Error { return &Error{Code: CodeInternalError, Message: "Internal error"} }
func errHeaderMismatch(format string, args ...any) *Error {
	return &Error{Code: CodeHeaderMismatch, Message: "Header mismatch: " + fmt.Sprintf(format, args...)}
}

// ID is a JSON-RPC request id: a string or a number. Two ids are equal only
// when their types and values are equal, so the string "1" differs from the
// number 1. The zero ID means "no id".
type ID struct {
	raw string // JSON text as received (string literal or number)
}

// StringID returns the id for a JSON string.
func StringID(s string) ID {
	b, _ := json.Marshal(s)
	return ID{raw: string(b)}
}

// IntID returns the id for a JSON integer.
func IntID(n int64) ID { return ID{raw: strconv.FormatInt(n, 10)} }

// IsZero reports whether the id is absent.
func (id ID) IsZero() bool { return id.raw == "" }

// IsString reports whether the id is a JSON string.
func (id ID) IsString() bool { return strings.HasPrefix(id.raw, `"`) }

// String returns the id's JSON text ("" for no id).
func (id ID) String() string { return id.raw }

// MarshalJSON returns the id as received; a zero id marshals as null.
func (id ID) MarshalJSON() ([]byte, error) {
	if id.raw == "" {
		return []byte("null"), nil
	}
	return []byte(id.raw), nil
}

// key returns a canonical, type-tagged key: "s:" + string value or "n:" +
// canonical number. 1 and 1.0 share a key; "1" does not.
func (id ID) key() string {
	if id.raw == "" {
		return ""
	}
	if id.IsString() {
		var s string
		if json.Unmarshal([]byte(id.raw), &s) != nil {
			return "s:" + id.raw
		}
		return "s:" + s
	}
	return "n:" + canonicalNumber(id.raw)
}

// canonicalNumber writes a JSON number exactly as digits*10^exp with no
// redundant zeros, so that 1, 1.0 and 10e-1 agree and large integers stay
// distinct.
func canonicalNumber(raw string) string {
	s := raw
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	mant, exp := s, 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
		if err != nil || e > 1e6 || e < -1e6 {
			return raw
		}
		mant, exp = s[:i], e
	}
	intPart, frac := mant, ""
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		intPart, frac = mant[:i], mant[i+1:]
	}
	digits := strings.TrimLeft(intPart+frac, "0")
	exp -= len(frac)
	if digits == "" {
		return "0"
	}
	trimmed := strings.TrimRight(digits, "0")
	exp += len(digits) - len(trimmed)
	sign := ""
	if neg {
		sign = "-"
	}
	if exp >= 0 && exp <= 30 {
		return sign + trimmed + strings.Repeat("0", exp)
	}
	return sign + trimmed + "e" + strconv.Itoa(exp)
}

// parseID validates raw JSON as a request id (string or number). The id is
// echoed as it came, so it is checked whole (json.Valid: the scanner the
// message's own check has just run, not a decoding into a value).
func parseID(raw json.RawMessage) (ID, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ID{}, false
	}
	if c := raw[0]; (c == '"' || c == '-' || c >= '0' && c <= '9') && json.Valid(raw) {
		return ID{raw: string(raw)}, true
	}
	return ID{}, false
}

type msgKind int

const (
	kindRequest msgKind = iota + 1
	kindNotification
	kindResponse
)

// message is one decoded JSON-RPC message.
type message struct {
	kind   msgKind
	id     ID
	method string
	params json.RawMessage // nil when absent or null
	result json.RawMessage
	err    *wireError

	// The params object, parsed once: several stages of one request read it.
	paramsParsed bool
	paramsMap    map[string]json.RawMessage
	paramsErr    *Error
}

// paramsObj returns the params object, parsing it on first use.
func (m *message) paramsObj() (map[string]json.RawMessage, *Error) {
	if !m.paramsParsed {
		m.paramsMap, m.paramsErr = paramsObject(m.params)
		m.paramsParsed = true
	}
	return m.paramsMap, m.paramsErr
}

type wireError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// decodeMessage parses one JSON-RPC 2.0 message. On failure it returns the
// error to send back and, when it could be read, the request id to echo.
// Batches (arrays) are rejected: MCP removed batching in 2025-06-18.
func decodeMessage(data []byte) (*message, ID, *Error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, ID{}, &Error{Code: CodeParseError, Message: "Parse error: empty message"}
	}
	// The message is validated once, whole; its objects (this one, its
	// params, a call's arguments) are then split without decoding.
	if !json.Valid(data) {
		return nil, ID{}, &Error{Code: CodeParseError, Message: "Parse error: invalid JSON"}
	}
	if data[0] == '[' {
		return nil, ID{}, errInvalidRequest("Invalid request: batches are not supported")
	}
	fields, ok := jsonobj.Split(data)
	if !ok {
		return nil, ID{}, errInvalidRequest("Invalid request: message must be a JSON object")
	}
	m := &message{}
	var echo ID
	rawID, hasID := fields["id"]
	if hasID {
		if id, ok := parseID(rawID); ok {
			m.id, echo = id, id
		} else if !isJSONNull(rawID) {
			return nil, ID{}, errInvalidRequest("Invalid request: id must be a string or a number")
		}
	}
	if v, ok := fields["jsonrpc"]; !ok || !jsonobj.IsString(v, "2.0") {
		return nil, echo, errInvalidRequest(`Invalid request: jsonrpc must be "2.0"`)
	}
	if rawMethod, ok := fields["method"]; ok {
		if m.method, ok = jsonobj.String(rawMethod); !ok || m.method == "" {
			return nil, echo, errInvalidRequest("Invalid request: method must be a non-empty string")
		}
		if p, ok := fields["params"]; ok && !isJSONNull(p) {
			m.params = p
		}
		switch {
		case !hasID:
			m.kind = kindNotification
		case m.id.IsZero():
			return nil, ID{}, errInvalidRequest("Invalid request: id must not be null")
		default:
			m.kind = kindRequest
		}
		return m, echo, nil
	}
	res, hasResult := fields["result"]
	rawErr, hasErr := fields["error"]
	if !hasID || hasResult == hasErr {
		return nil, echo, errInvalidRequest("Invalid request: not a request, notification or response")
	}
	m.kind = kindResponse
	if hasResult {
		m.result = res
	} else {
		var we wireError
		if json.Unmarshal(rawErr, &we) != nil {
			return nil, echo, errInvalidRequest("Invalid request: malformed error object")
		}
		m.err = &we
	}
	return m, echo, nil
}

func isJSONNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

func isJSONObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

type wireResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      *ID             `json:"id,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *wireErrorOut   `json:"error,omitempty"`
}

type wireErrorOut struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

type wireRequest struct {
	JSONRPC string `json:"jsonrpc"`
	ID      *ID    `json:"id,omitempty"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
}

// encodeResult encodes a result response. result must come from
// json.Marshal (valid and compact): it is copied as is, not compacted and
// checked again, since a tool's whole answer would be walked once more.
func encodeResult(id ID, result json.RawMessage) []byte {
	idb, err := json.Marshal(&id)
	if err != nil || len(result) == 0 {
		return encodeError(id, errInternal())
	}
	b := make([]byte, 0, len(result)+len(idb)+len(`{"jsonrpc":"2.0","id":,"result":}`))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, idb...)
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return append(b, '}')
}

// encodeError encodes an error response; a zero id is omitted, as the
// schema's JSONRPCErrorResponse allows.
func encodeError(id ID, e *Error) []byte {
	resp := wireResponse{JSONRPC: "2.0", Error: &wireErrorOut{Code: e.Code, Message: e.Message, Data: e.Data}}
	if !id.IsZero() {
		resp.ID = &id
	}
	b, err := json.Marshal(resp)
	if err != nil {
		resp.Error.Data = nil
		b, _ = json.Marshal(resp)
	}
	return b
}

func encodeNotification(method string, params any) ([]byte, error) {
	return json.Marshal(wireRequest{JSONRPC: "2.0", Method: method, Params: params})
}

func encodeRequest(id ID, method string, params any) ([]byte, error) {
	return json.Marshal(wireRequest{JSONRPC: "2.0", ID: &id, Method: method, Params: params})
}
