package mcp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
)

// httpHeader adapts http.Header to the preflight's header view.
type httpHeader http.Header

func (h httpHeader) values(name string) []string { return http.Header(h).Values(name) }

// paramHeader is one x-mcp-header annotation: the property path inside the
// arguments and the header name suffix.
type paramHeader struct {
	path []string
	name string // the part after "Mcp-Param-"
	typ  string // "string", "integer" or "boolean"
}

// parseParamHeaders collects and validates the x-mcp-header annotations of
// an input schema. Annotations are allowed only on primitive properties
// reachable through a chain of "properties" keys.
func parseParamHeaders(schema json.RawMessage) ([]paramHeader, error) {
	var out []paramHeader
	seen := map[string]bool{}
	var walk func(obj map[string]json.RawMessage, path []string) error
	walk = func(obj map[string]json.RawMessage, path []string) error {
		var props map[string]json.RawMessage
		if raw, ok := obj["properties"]; ok {
			if json.Unmarshal(raw, &props) != nil {
				return nil
			}
		}
		for _, name := range sortedKeys(props) {
			var prop map[string]json.RawMessage
			if json.Unmarshal(props[name], &prop) != nil {
				continue
			}
			p := append(append([]string(nil), path...), name)
			if raw, ok := prop["x-mcp-header"]; ok {
				var h string
				if json.Unmarshal(raw, &h) != nil || !isToken(h) {
					return fmt.Errorf("property %s: x-mcp-header must be a non-empty header token", strings.Join(p, "."))
				}
				if seen[strings.ToLower(h)] {
					return fmt.Errorf("x-mcp-header %q is not unique", h)
				}
				seen[strings.ToLower(h)] = true
				var typ string
				_ = json.Unmarshal(prop["type"], &typ)
				switch typ {
				case "string", "integer", "boolean":
				default:
					return fmt.Errorf("property %s: x-mcp-header needs type string, integer or boolean", strings.Join(p, "."))
				}
				out = append(out, paramHeader{path: p, name: h, typ: typ})
			}
			if err := walk(prop, p); err != nil {
				return err
			}
		}
		return nil
	}
	var root map[string]json.RawMessage
	if err := json.Unmarshal(schema, &root); err != nil {
		return nil, err
	}
	return out, walk(root, nil)
}

// isToken reports whether s is an RFC 9110 token (1*tchar).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// decodeHeaderValue undoes the =?base64?...?= sentinel encoding. A value
// without both markers is literal. Invalid base64 inside the markers, or
// characters outside visible ASCII, space and tab, are errors.
func decodeHeaderValue(v string) (string, error) {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if (c < 0x20 && c != '\t') || c > 0x7e {
			return "", fmt.Errorf("invalid character in header value")
		}
	}
	const pre, suf = "=?base64?", "?="
	if len(v) >= len(pre)+len(suf) && strings.HasPrefix(v, pre) && strings.HasSuffix(v, suf) {
		b, err := base64.StdEncoding.Strict().DecodeString(v[len(pre) : len(v)-len(suf)])
		if err != nil {
			return "", fmt.Errorf("invalid base64 in header value")
		}
		return string(b), nil
	}
	return v, nil
}

// checkRoutingHeaders validates Mcp-Method, Mcp-Name and the Mcp-Param-*
// headers of a modern HTTP request against its body.
func (s *Server) checkRoutingHeaders(m *message, params map[string]json.RawMessage, h header) *Error {
	methods := h.values("Mcp-Method")
	if len(methods) == 0 {
		return errHeaderMismatch("Mcp-Method header is required")
	}
	if got := trimOWS(methods[0]); got != m.method {
		return errHeaderMismatch("Mcp-Method header value '%s' does not match body value '%s'", got, m.method)
	}
	field := mcpNameField(m.method)
	if field == "" {
		return nil
	}
	var bodyName string
	if json.Unmarshal(params[field], &bodyName) != nil {
		return nil // the method reports the missing field
	}
	names := h.values("Mcp-Name")
	if len(names) == 0 {
		return errHeaderMismatch("Mcp-Name header is required for %s", m.method)
	}
	got, err := decodeHeaderValue(trimOWS(names[0]))
	if err != nil {
		return errHeaderMismatch("Mcp-Name: %v", err)
	}
	if got != bodyName {
		return errHeaderMismatch("Mcp-Name header value '%s' does not match body value '%s'", got, bodyName)
	}
	if m.method != "tools/call" {
		return nil
	}
	entry := s.lookupTool(bodyName)
	if entry == nil || len(entry.headers) == 0 {
		return nil
	}
	var args map[string]json.RawMessage
	_ = json.Unmarshal(params["arguments"], &args)
	for _, ph := range entry.headers {
		val, present := lookupPath(args, ph.path)
		vals := h.values("Mcp-Param-" + ph.name)
		if !present {
			continue // the client must omit the header; a stray one is ignored
		}
		if len(vals) == 0 {
			return errHeaderMismatch("Mcp-Param-%s header is required", ph.name)
		}
		hv, err := decodeHeaderValue(trimOWS(vals[0]))
		if err != nil {
			return errHeaderMismatch("Mcp-Param-%s: %v", ph.name, err)
		}
		if !paramMatches(val, hv) {
			return errHeaderMismatch("Mcp-Param-%s header value does not match the body", ph.name)
		}
	}
	return nil
}

// lookupPath reads args at a chain of property names; null counts as absent.
func lookupPath(args map[string]json.RawMessage, path []string) (json.RawMessage, bool) {
	cur := args
	for i, p := range path {
		raw, ok := cur[p]
		if !ok || isJSONNull(raw) {
			return nil, false
		}
		if i == len(path)-1 {
			return raw, true
		}
		if json.Unmarshal(raw, &cur) != nil {
			return nil, false
		}
	}
	return nil, false
}

// paramMatches compares a body value with a decoded header value: strings
// exactly, numbers numerically, booleans as "true"/"false".
func paramMatches(body json.RawMessage, hv string) bool {
	body = bytes.TrimSpace(body)
	switch jsonType(body) {
	case "string":
		var s string
		return json.Unmarshal(body, &s) == nil && s == hv
	case "boolean":
		return string(body) == hv
	case "number":
		a, err1 := strconv.ParseFloat(string(body), 64)
		b, err2 := strconv.ParseFloat(hv, 64)
		return err1 == nil && err2 == nil && a == b && !math.IsNaN(a)
	}
	return false
}

func trimSpace(b []byte) []byte { return bytes.TrimSpace(b) }
