package mcp

import (
	"encoding/json"
	"strings"
)

// ExtApps is the MCP Apps extension's identifier (SEP-1865): a client that
// renders HTML views declares it under capabilities.extensions with the
// MIME types it renders; a server that serves views advertises it too.
const ExtApps = "io.modelcontextprotocol/ui"

// MimeApp is the MIME type of an MCP App's HTML view (a ui:// resource).
const MimeApp = "text/html;profile=mcp-app"

// SchemeUI starts the URI of every view resource.
const SchemeUI = "ui://"

// Tool visibilities of the Apps extension (_meta.ui.visibility).
const (
	VisibleModel = "model" // the agent sees and calls the tool
	VisibleApp   = "app"   // a view of this server calls it through its host
)

// ToolUI links a tool to an MCP App: its _meta.ui. A tool that has one is
// offered only to clients that declare the Apps extension (the text-only
// client gets neither launchers nor app-only tools), and a call from
// another client is answered as a call of an unknown tool, which is what
// its list says it is.
type ToolUI struct {
	// ResourceURI is the ui:// view the host renders the tool's results
	// in ("" for a tool only views call).
	ResourceURI string
	// Visibility is who may call the tool: VisibleModel, VisibleApp or
	// both. A host keeps an app-only tool out of its model's list; the
	// server cannot tell the model's calls from a view's (both come from
	// the host), so the host is what enforces it.
	Visibility []string
}

// meta is the tool's _meta: ui, plus the flat ui/resourceUri key that
// hosts of the extension's first drafts read.
func (u *ToolUI) meta() map[string]any {
	ui := map[string]any{}
	if u.ResourceURI != "" {
		ui["resourceUri"] = u.ResourceURI
	}
	if len(u.Visibility) > 0 {
		ui["visibility"] = append([]string(nil), u.Visibility...)
	}
	m := map[string]any{"ui": ui}
	if u.ResourceURI != "" {
		m["ui/resourceUri"] = u.ResourceURI
	}
	return m
}

// isUIResource reports whether uri names an App view: such a resource is
// listed, and read, only for a client that declares the extension.
func isUIResource(uri string) bool { return strings.HasPrefix(uri, SchemeUI) }

// declaresApps reports whether the capabilities declare the Apps extension
// with the HTML profile among its mimeTypes (the extension's one required
// setting): a client that declares the extension for other content types
// cannot render these views.
func (c capabilities) declaresApps() bool {
	ext, ok := c["extensions"]
	if !ok || !isJSONObject(ext) {
		return false
	}
	ui, ok := parseCapabilities(ext)[ExtApps]
	if !ok || !isJSONObject(ui) {
		return false
	}
	var s struct {
		MimeTypes []json.RawMessage `json:"mimeTypes"`
	}
	if json.Unmarshal(ui, &s) != nil {
		return false
	}
	for _, m := range s.MimeTypes {
		var t string
		if json.Unmarshal(m, &t) == nil && t == MimeApp {
			return true
		}
	}
	return false
}

// RendersApps reports whether the client declared the MCP Apps extension
// with the HTML profile: in the modern era on this request, in a legacy
// session at its initialize.
func (r *Request) RendersApps() bool { return r.rc.apps() }
