package mcp

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// appsCaps declares the Apps extension as a host that renders HTML views
// does.
func appsCaps(mime string) map[string]any {
	return map[string]any{"extensions": map[string]any{ExtApps: map[string]any{"mimeTypes": []string{mime}}}}
}

// TestAppsBothEras: a client that declares the Apps extension with the
// HTML profile sees the launcher and the app-only tool with their
// _meta.ui, and the ui:// view with its _meta.ui in the list and the read;
// a client that does not (nothing declared, or another MIME type) sees
// neither, its call of an App tool is an unknown tool and its read of the
// view an unknown resource. The server advertises the extension.
func TestAppsBothEras(t *testing.T) {
	s := testServer(t, nil)
	ts := newHTTPTest(t, s, HTTPOptions{})
	ok := func(context.Context, *CallRequest) (*CallResult, error) { return TextResult("ran"), nil }
	view := map[string]any{"ui": map[string]any{"csp": map[string]any{"connectDomains": []string{}}, "prefersBorder": true}}
	s.AddTools(
		Tool{Name: "launch", Description: "opens the view", Handler: ok, UI: &ToolUI{ResourceURI: "ui://t/view", Visibility: []string{VisibleModel}}},
		Tool{Name: "launch_action", Description: "the view's action", Handler: ok, UI: &ToolUI{Visibility: []string{VisibleApp}}},
	)
	s.AddResource(Resource{URI: "ui://t/view", Name: "view", MimeType: MimeApp, Meta: view,
		Handler: func(context.Context, *ResourceRequest) (*ResourceResult, error) {
			return &ResourceResult{Contents: []ResourceContents{{URI: "ui://t/view", MimeType: MimeApp, Text: "<!doctype html><html></html>", Meta: view}}}, nil
		}})
	s.AddResource(Resource{URI: "test://plain", Name: "plain", Handler: func(context.Context, *ResourceRequest) (*ResourceResult, error) {
		return &ResourceResult{Contents: []ResourceContents{{URI: "test://plain", Text: "x"}}}, nil
	}})

	for _, tc := range []struct {
		name string
		caps map[string]any
		apps bool
	}{
		{"declares", appsCaps(MimeApp), true},
		{"none", nil, false},
		{"other mime", appsCaps("text/uri-list"), false},
	} {
		sid := legacyInit(t, ts.URL, nil, tc.caps)
		run := func(era, method string, params map[string]any) httpResult {
			if era == "modern" {
				p := map[string]any{"_meta": modernMeta(tc.caps)}
				for k, v := range params {
					p[k] = v
				}
				body, h := modernReq(1, method, p)
				switch method {
				case "resources/read":
					h["Mcp-Name"] = params["uri"].(string)
				case "tools/call":
					h["Mcp-Name"] = params["name"].(string)
				}
				return do(t, nil, http.MethodPost, ts.URL, body, h)
			}
			return do(t, nil, http.MethodPost, ts.URL, mustJSON(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params}), legacyHeaders(sid))
		}
		for _, era := range []string{"legacy", "modern"} {
			t.Run(tc.name+"/"+era, func(t *testing.T) {
				tools := map[string]map[string]any{}
				for _, x := range run(era, "tools/list", nil).result()["tools"].([]any) {
					tl := x.(map[string]any)
					tools[tl["name"].(string)] = tl
				}
				resources := map[string]map[string]any{}
				for _, x := range run(era, "resources/list", nil).result()["resources"].([]any) {
					r := x.(map[string]any)
					resources[r["uri"].(string)] = r
				}
				if resources["test://plain"] == nil {
					t.Fatalf("the plain resource is missing: %v", resources)
				}
				call := run(era, "tools/call", map[string]any{"name": "launch_action", "arguments": map[string]any{}})
				read := run(era, "resources/read", map[string]any{"uri": "ui://t/view"})
				if !tc.apps {
					if tools["launch"] != nil || tools["launch_action"] != nil || resources["ui://t/view"] != nil {
						t.Fatalf("a client without the extension sees App parts: %v %v", tools, resources)
					}
					if call.errCode() != CodeInvalidParams {
						t.Errorf("App tool called without the extension: %s", call.body)
					}
					wantNotFound := CodeResourceNotFoundLegacy
					if era == "modern" {
						wantNotFound = CodeInvalidParams
					}
					if read.errCode() != wantNotFound {
						t.Errorf("view read without the extension: %s", read.body)
					}
					return
				}
				if got := mustJSON(tools["launch"]["_meta"]); got != `{"ui":{"resourceUri":"ui://t/view","visibility":["model"]},"ui/resourceUri":"ui://t/view"}` {
					t.Errorf("launcher _meta: %s", got)
				}
				if got := mustJSON(tools["launch_action"]["_meta"]); got != `{"ui":{"visibility":["app"]}}` {
					t.Errorf("app-only _meta: %s", got)
				}
				if got := mustJSON(resources["ui://t/view"]["_meta"]); got != mustJSON(view) || resources["ui://t/view"]["mimeType"] != MimeApp {
					t.Errorf("view entry: %v", resources["ui://t/view"])
				}
				if toolText(call.result()) != "ran" {
					t.Errorf("app-only call: %s", call.body)
				}
				c := read.result()["contents"].([]any)[0].(map[string]any)
				if c["mimeType"] != MimeApp || mustJSON(c["_meta"]) != mustJSON(view) {
					t.Errorf("view read: %s", read.body)
				}
			})
		}
	}
	body, h := modernReq(3, "server/discover", nil)
	caps := do(t, nil, http.MethodPost, ts.URL, body, h).result()["capabilities"].(map[string]any)
	ext, _ := caps["extensions"].(map[string]any)
	if mustJSON(ext[ExtApps]) != `{"mimeTypes":["text/html;profile=mcp-app"]}` {
		t.Errorf("capabilities: %v", caps)
	}
}

// TestAppsToolListCached: each kind of client gets its list encoded once
// per change (the same bytes twice), and a change re-encodes both.
func TestAppsToolListCached(t *testing.T) {
	s := testServer(t, nil)
	ok := func(context.Context, *CallRequest) (*CallResult, error) { return TextResult("ran"), nil }
	s.AddTools(Tool{Name: "plain_one", Handler: ok}, Tool{Name: "app_one", Handler: ok, UI: &ToolUI{Visibility: []string{VisibleApp}}})
	a, b := s.toolListJSON(false), s.toolListJSON(true)
	if &a[0] != &s.toolListJSON(false)[0] || &b[0] != &s.toolListJSON(true)[0] {
		t.Error("a list was encoded again without a change")
	}
	if len(b) <= len(a) {
		t.Errorf("the Apps list %s does not hold more than %s", b, a)
	}
	s.AddTools(Tool{Name: "app_one", Handler: ok})
	if string(s.toolListJSON(false)) == string(a) {
		t.Error("a change left the list as it was")
	}
}

// TestDeclaresApps: only an object extension with the HTML profile among
// its mimeTypes counts.
func TestDeclaresApps(t *testing.T) {
	for raw, want := range map[string]bool{
		`{}`:                false,
		`{"extensions":[]}`: false,
		`{"extensions":{"io.modelcontextprotocol/ui":true}}`:                                          false,
		`{"extensions":{"io.modelcontextprotocol/ui":{}}}`:                                            false,
		`{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":"text/html;profile=mcp-app"}}}`:     false,
		`{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":[1,"text/html;profile=mcp-app"]}}}`: true,
		`{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html"]}}}`:                   false,
	} {
		if got := parseCapabilities([]byte(raw)).declaresApps(); got != want {
			t.Errorf("%s: %t, want %t", raw, got, want)
		}
	}
}

// FuzzDeclaresApps: any capabilities object a client sends is read without
// a panic, and only one that names the HTML profile declares the
// extension.
func FuzzDeclaresApps(f *testing.F) {
	f.Add([]byte(`{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}`))
	f.Add([]byte(`{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":null}}}`))
	f.Add([]byte(`{"extensions":"x"}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if parseCapabilities(raw).declaresApps() && !strings.Contains(string(raw), "profile=mcp-app") && !strings.Contains(string(raw), `\u`) {
			t.Errorf("%s declares the extension", raw)
		}
	})
}
