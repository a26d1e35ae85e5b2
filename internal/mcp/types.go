package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// Tool describes a tool and its handler.
type Tool struct {
	Name        string
	Title       string
	Description string
	// InputSchema is the JSON Schema of the arguments: a json.RawMessage,
	// []byte, or any value that marshals to a JSON object with
	// "type":"object". Nil means {"type":"object"}.
	InputSchema any
	// OutputSchema optionally describes structuredContent (same forms as
	// InputSchema).
	OutputSchema any
	// Annotations are behaviour hints; nil (or all zero) omits them.
	Annotations *ToolAnnotations
	Handler     ToolHandler
	// InvalidArguments, when set, renders the tool error result of
	// arguments that do not fit InputSchema (message says why); nil answers
	// a text error.
	InvalidArguments func(message string) *CallResult
	// Hidden tools are left out of tools/list but still answer calls (a
	// tool the configuration disabled answers why).
	Hidden bool
	// UI, when set, makes the tool part of an MCP App (see [ToolUI]).
	UI *ToolUI
}

// ToolHandler runs a tool call. See the package documentation for how its
// result and error reach the client.
type ToolHandler func(ctx context.Context, req *CallRequest) (*CallResult, error)

// ToolAnnotations are hints about a tool's behaviour. Nil pointers are omitted.
type ToolAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// Bool returns a pointer to b, for ToolAnnotations.
func Bool(b bool) *bool { return &b }

// CallRequest is a tools/call request as seen by a tool handler.
type CallRequest struct {
	Request
	// Name is the tool name.
	Name string
	// Arguments is the arguments object as sent ("{}" when absent).
	Arguments json.RawMessage
	// ArgumentFields are Arguments' members, as decoded to check them
	// against the tool's schema: a handler may read them instead of
	// decoding Arguments again. It must not change them.
	ArgumentFields map[string]json.RawMessage
}

// CallResult is the result of a tool call.
type CallResult struct {
	Content           []Content
	StructuredContent any // nil: omitted
	IsError           bool
	Meta              map[string]any // optional result _meta
	// encoded is StructuredContent as StructuredResult encoded it: sent
	// as is while StructuredContent still holds it.
	encoded json.RawMessage
}

// TextResult returns a result with one text content block.
func TextResult(text string) *CallResult {
	return &CallResult{Content: []Content{TextContent(text)}}
}

// StructuredResult returns v as structuredContent plus the same object as
// JSON text, for clients that read only content. StructuredContent holds
// the JSON encoding of v (a json.RawMessage).
func StructuredResult(v any) *CallResult {
	b, err := json.Marshal(v)
	if err != nil {
		return &CallResult{Content: []Content{TextContent("cannot encode result: " + err.Error())}, IsError: true}
	}
	return &CallResult{Content: []Content{TextContent(string(b))}, StructuredContent: json.RawMessage(b), encoded: b}
}

// ErrorResult returns a tool error result (isError: true). A string or error
// becomes a text block; any other value becomes structuredContent plus its
// JSON text, as in StructuredResult.
func ErrorResult(v any) *CallResult {
	switch x := v.(type) {
	case string:
		return &CallResult{Content: []Content{TextContent(x)}, IsError: true}
	case error:
		return &CallResult{Content: []Content{TextContent(x.Error())}, IsError: true}
	}
	r := StructuredResult(v)
	r.IsError = true
	return r
}

// MarshalJSON encodes the result as the tools/call result object of the
// wire: content, structuredContent, isError and _meta.
func (r *CallResult) MarshalJSON() ([]byte, error) { return json.Marshal(r.toWire()) }

func (r *CallResult) toWire() map[string]any {
	content := r.Content
	if content == nil {
		content = []Content{}
	}
	out := map[string]any{"content": content}
	if b, err := encodeContents(content); err == nil {
		out["content"] = b
	}
	if r.StructuredContent != nil {
		out["structuredContent"] = r.StructuredContent
		if raw, ok := r.StructuredContent.(json.RawMessage); ok && sameBytes(raw, r.encoded) {
			out["structuredContent"] = encodedJSON(raw)
		}
	}
	if r.IsError {
		out["isError"] = true
	}
	if len(r.Meta) > 0 {
		out["_meta"] = r.Meta
	}
	return out
}

// sameBytes reports whether a and b are the same slice (not only equal).
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && len(a) > 0 && &a[0] == &b[0]
}

// encodeContents encodes content blocks as json.Marshal does; a text
// block, the one every tool result carries (its text often the whole
// answer), is escaped once and not compacted again.
func encodeContents(cs []Content) (encodedJSON, error) {
	b := []byte{'['}
	for i, c := range cs {
		if i > 0 {
			b = append(b, ',')
		}
		if c.Type != "text" {
			cb, err := json.Marshal(c)
			if err != nil {
				return nil, err
			}
			b = append(b, cb...)
			continue
		}
		tb, err := textBlockJSON(c.Text)
		if err != nil {
			return nil, err
		}
		b = append(b, tb...)
	}
	return append(b, ']'), nil
}

// textBlockJSON is a text block as sent: the members in the order
// json.Marshal sorts a map's keys, the text escaped once.
func textBlockJSON(text string) ([]byte, error) {
	tb, err := json.Marshal(text)
	if err != nil {
		return nil, err
	}
	return append(append([]byte(`{"text":`), tb...), `,"type":"text"}`...), nil
}

// Content is one content block of a tool result or prompt message.
type Content struct {
	Type     string // "text", "image", "audio", "resource", "resource_link"
	Text     string
	Data     []byte // image/audio bytes (sent base64-encoded)
	MimeType string
	Resource *ResourceContents // type "resource"
	// URI, Name, Title and Description describe a "resource_link".
	URI, Name, Title, Description string
}

// TextContent returns a text block.
func TextContent(text string) Content { return Content{Type: "text", Text: text} }

// ImageContent returns an image block.
func ImageContent(data []byte, mimeType string) Content {
	return Content{Type: "image", Data: data, MimeType: mimeType}
}

// AudioContent returns an audio block.
func AudioContent(data []byte, mimeType string) Content {
	return Content{Type: "audio", Data: data, MimeType: mimeType}
}

// EmbeddedResource returns a block embedding resource contents.
func EmbeddedResource(rc ResourceContents) Content { return Content{Type: "resource", Resource: &rc} }

// ResourceLink returns a block linking to a resource.
func ResourceLink(uri, name, mimeType string) Content {
	return Content{Type: "resource_link", URI: uri, Name: name, MimeType: mimeType}
}

// MarshalJSON encodes the block in the shape its type requires.
func (c Content) MarshalJSON() ([]byte, error) {
	if c.Type == "text" {
		return textBlockJSON(c.Text)
	}
	m := map[string]any{"type": c.Type}
	switch c.Type {
	case "image", "audio":
		m["data"] = c.Data
		m["mimeType"] = c.MimeType
	case "resource":
		if c.Resource == nil {
			return nil, errors.New("mcp: resource content without Resource")
		}
		m["resource"] = c.Resource
	case "resource_link":
		m["uri"] = c.URI
		m["name"] = c.Name
		setIf(m, "title", c.Title)
		setIf(m, "description", c.Description)
		setIf(m, "mimeType", c.MimeType)
	default:
		return nil, fmt.Errorf("mcp: unknown content type %q", c.Type)
	}
	return json.Marshal(m)
}

func setIf(m map[string]any, k, v string) {
	if v != "" {
		m[k] = v
	}
}

// ResourceContents is the text or binary contents of a resource. Blob wins
// when non-nil.
type ResourceContents struct {
	URI      string
	MimeType string
	Text     string
	Blob     []byte
	// Meta is the content item's _meta (an App view's ui, which a host
	// prefers to the listing's).
	Meta map[string]any
}

// MarshalJSON encodes text or blob contents.
func (rc ResourceContents) MarshalJSON() ([]byte, error) {
	m := map[string]any{"uri": rc.URI}
	setIf(m, "mimeType", rc.MimeType)
	if len(rc.Meta) > 0 {
		m["_meta"] = rc.Meta
	}
	if rc.Blob != nil {
		m["blob"] = rc.Blob
	} else {
		m["text"] = rc.Text
	}
	return json.Marshal(m)
}

// Prompt describes a prompt template and its handler.
type Prompt struct {
	Name        string
	Title       string
	Description string
	Arguments   []PromptArgument
	Handler     func(ctx context.Context, req *PromptRequest) (*PromptResult, error)
}

// PromptArgument describes one prompt argument.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// PromptRequest is a prompts/get request as seen by a prompt handler.
type PromptRequest struct {
	Request
	Name      string
	Arguments map[string]string
}

// PromptMessage is one message of a prompt.
type PromptMessage struct {
	Role    string  `json:"role"` // "user" or "assistant"
	Content Content `json:"content"`
}

// PromptResult is the result of prompts/get.
type PromptResult struct {
	Description string
	Messages    []PromptMessage
}

// Resource describes a direct resource and its reader.
type Resource struct {
	URI         string
	Name        string
	Title       string
	Description string
	MimeType    string
	Size        int64
	// Meta is the entry's _meta in resources/list (an App view's ui:
	// its CSP, permissions, prefersBorder).
	Meta    map[string]any
	Handler ResourceHandler
}

// ResourceTemplate describes resources addressed by an RFC 6570 level-1
// template such as "test://template/{id}/data"; each {var} matches one
// non-empty path segment.
type ResourceTemplate struct {
	URITemplate string
	Name        string
	Title       string
	Description string
	MimeType    string
	Handler     ResourceHandler
}

// ResourceHandler reads a resource.
type ResourceHandler func(ctx context.Context, req *ResourceRequest) (*ResourceResult, error)

// ResourceRequest is a resources/read request as seen by a resource handler.
type ResourceRequest struct {
	Request
	URI string
	// Vars holds the template variables when a template matched.
	Vars map[string]string
}

// ResourceResult is the result of resources/read.
type ResourceResult struct {
	Contents []ResourceContents
}

// ResourceNotFound returns the error a resource handler returns for an
// unknown URI: -32002 in legacy sessions, -32602 in the modern era, with
// data {"uri": uri}.
func ResourceNotFound(uri string) error { return &resourceNotFoundError{uri: uri} }

type resourceNotFoundError struct{ uri string }

func (e *resourceNotFoundError) Error() string { return "mcp: resource not found: " + e.uri }

func (e *resourceNotFoundError) rpc(era Era) *Error {
	code := CodeInvalidParams
	if era == EraLegacy {
		code = CodeResourceNotFoundLegacy
	}
	return &Error{Code: code, Message: "Resource not found", Data: map[string]string{"uri": e.uri}}
}

// CompleteRequest is a completion/complete request.
type CompleteRequest struct {
	Request
	Ref      CompleteReference
	Argument CompleteArgument
	// Context holds already-resolved arguments (params.context.arguments).
	Context map[string]string
}

// CompleteReference names the prompt or resource template being completed.
type CompleteReference struct {
	Type string `json:"type"` // "ref/prompt" or "ref/resource"
	Name string `json:"name,omitempty"`
	URI  string `json:"uri,omitempty"`
}

// CompleteArgument is the argument being completed.
type CompleteArgument struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// CompleteResult lists completion values.
type CompleteResult struct {
	Values  []string
	Total   int
	HasMore bool
}

// CompletionHandler answers completion/complete.
type CompletionHandler func(ctx context.Context, req *CompleteRequest) (*CompleteResult, error)

// Elicitation actions.
const (
	ElicitAccept  = "accept"
	ElicitDecline = "decline"
	ElicitCancel  = "cancel"
)

// ElicitParams is a form-mode elicitation.
type ElicitParams struct {
	// Key names the request inside inputRequests (modern era). Empty means
	// "elicitation-N", N counting the handler's Elicit calls from 1.
	Key string
	// Message is shown to the user.
	Message string
	// RequestedSchema is a flat JSON Schema object of primitive properties
	// (json.RawMessage or a marshalable value).
	RequestedSchema any
}

// ElicitResult is the user's answer.
type ElicitResult struct {
	Action  string         // ElicitAccept, ElicitDecline or ElicitCancel
	Content map[string]any // accepted form values (accept only); numbers are json.Number
	Raw     json.RawMessage
}

// InputRequest is one server-to-client request: elicitation/create,
// sampling/createMessage or roots/list, with its params.
type InputRequest struct {
	Method string
	Params any
}

// MarshalJSON encodes {"method":..., "params":...}.
func (r InputRequest) MarshalJSON() ([]byte, error) {
	params := r.Params
	if params == nil {
		params = map[string]any{}
	}
	return json.Marshal(struct {
		Method string `json:"method"`
		Params any    `json:"params"`
	}{r.Method, params})
}

// MissingCapabilityError reports that a request needs a client capability
// the client did not declare. Returned from a handler it becomes -32021 with
// data.requiredCapabilities = {Capability: {}}.
type MissingCapabilityError struct {
	Capability string // e.g. "elicitation", "sampling", "roots"
}

func (e *MissingCapabilityError) Error() string {
	return "mcp: client did not declare the " + e.Capability + " capability"
}

func (e *MissingCapabilityError) rpc() *Error {
	return &Error{
		Code:    CodeMissingClientCapability,
		Message: "Server requires the " + e.Capability + " capability for this request",
		Data:    map[string]any{"requiredCapabilities": map[string]any{e.Capability: map[string]any{}}},
	}
}
