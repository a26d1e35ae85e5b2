package mcp

import (
	"encoding/json"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/jsonobj"
)

// ModernProtocolVersion is the stateless revision this package serves.
const ModernProtocolVersion = "2026-07-28"

// LatestLegacyProtocolVersion is the newest handshake-based revision; it is
// what initialize answers when the client asks for a version not served.
const LatestLegacyProtocolVersion = "2025-11-25"

// Reserved _meta keys.
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaLogLevel           = "io.modelcontextprotocol/logLevel"
	MetaServerInfo         = "io.modelcontextprotocol/serverInfo"
	MetaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"
	MetaProgressToken      = "progressToken"
)

// Era is the protocol generation a request belongs to.
type Era int

// The two eras.
const (
	EraLegacy Era = iota + 1 // 2024-11-05 .. 2025-11-25: initialize, sessions
	EraModern                // 2026-07-28: stateless, per-request _meta
)

func (e Era) String() string {
	switch e {
	case EraLegacy:
		return "legacy"
	case EraModern:
		return "modern"
	}
	return "unknown"
}

// isLegacyVersion reports whether v is a handshake-based revision we serve.
func isLegacyVersion(v string) bool {
	switch v {
	case "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05":
		return true
	}
	return false
}

// isModernVersion reports whether v is a stateless revision we serve.
func isModernVersion(v string) bool { return v == ModernProtocolVersion }

// SupportedProtocolVersions lists every version served, newest first.
func SupportedProtocolVersions() []string {
	return []string{ModernProtocolVersion, "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}
}

// LogLevel is an MCP logging level (RFC 5424 severities).
type LogLevel string

// Logging levels, in increasing severity.
const (
	LogDebug     LogLevel = "debug"
	LogInfo      LogLevel = "info"
	LogNotice    LogLevel = "notice"
	LogWarning   LogLevel = "warning"
	LogError     LogLevel = "error"
	LogCritical  LogLevel = "critical"
	LogAlert     LogLevel = "alert"
	LogEmergency LogLevel = "emergency"
)

// severity returns 0..7 for a known level and -1 otherwise.
func (l LogLevel) severity() int {
	switch l {
	case LogDebug:
		return 0
	case LogInfo:
		return 1
	case LogNotice:
		return 2
	case LogWarning:
		return 3
	case LogError:
		return 4
	case LogCritical:
		return 5
	case LogAlert:
		return 6
	case LogEmergency:
		return 7
	}
	return -1
}

// capabilities is a decoded ClientCapabilities object (top-level members only).
type capabilities map[string]json.RawMessage

// parseCapabilities splits raw (a value of a validated message: the
// capabilities, or one capability's object) as json.Unmarshal into
// capabilities would: nil unless it is an object.
func parseCapabilities(raw json.RawMessage) capabilities {
	c, _ := jsonobj.Split(raw)
	return c
}

// has reports whether the capability is declared (as an object).
func (c capabilities) has(name string) bool {
	v, ok := c[name]
	return ok && isJSONObject(v)
}

// elicitationForm reports whether form-mode elicitation is declared:
// "elicitation": {} (form implied) or "elicitation": {"form": {...}}.
func (c capabilities) elicitationForm() bool {
	v, ok := c["elicitation"]
	if !ok || !isJSONObject(v) {
		return false
	}
	modes := parseCapabilities(v)
	_, form := modes["form"]
	_, url := modes["url"]
	return form || !url
}

// elicitationDecl is the client's elicitation declaration, normalised:
// "" (none), "form", "url" or "form+url". A requestState is bound to it.
func (c capabilities) elicitationDecl() string {
	v, ok := c["elicitation"]
	if !ok || !isJSONObject(v) {
		return ""
	}
	modes := parseCapabilities(v)
	_, form := modes["form"]
	_, url := modes["url"]
	switch {
	case url && form:
		return "form+url"
	case url:
		return "url"
	}
	return "form"
}

// capabilityForMethod names the client capability an input request needs.
func capabilityForMethod(method string) string {
	switch method {
	case "elicitation/create":
		return "elicitation"
	case "sampling/createMessage":
		return "sampling"
	case "roots/list":
		return "roots"
	}
	return ""
}

// clientSupports reports whether caps allow sending an input request with
// the given method (and, for elicitation, params.mode).
func (c capabilities) supportsInput(method string, params json.RawMessage) bool {
	switch method {
	case "elicitation/create":
		var p struct {
			Mode string `json:"mode"`
		}
		_ = json.Unmarshal(params, &p)
		if p.Mode == "url" {
			v, ok := c["elicitation"]
			if !ok {
				return false
			}
			_, url := parseCapabilities(v)["url"]
			return url
		}
		return c.elicitationForm()
	case "sampling/createMessage":
		return c.has("sampling")
	case "roots/list":
		return c.has("roots")
	}
	return false
}

// methodNeedsName reports which body field the Mcp-Name header mirrors.
func mcpNameField(method string) string {
	switch method {
	case "tools/call", "prompts/get":
		return "name"
	case "resources/read":
		return "uri"
	}
	return ""
}

func trimOWS(s string) string { return strings.Trim(s, " \t") }
