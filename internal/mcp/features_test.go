package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func featureServer(t *testing.T) *Server {
	s := testServer(t, nil)
	s.AddResource(Resource{URI: "test://a", Name: "a", Description: "A", MimeType: "text/plain",
		Handler: func(ctx context.Context, req *ResourceRequest) (*ResourceResult, error) {
			return &ResourceResult{Contents: []ResourceContents{{URI: req.URI, MimeType: "text/plain", Text: "alpha"}}}, nil
		}})
	s.AddResourceTemplate(ResourceTemplate{URITemplate: "test://item/{id}", Name: "item",
		Handler: func(ctx context.Context, req *ResourceRequest) (*ResourceResult, error) {
			if req.Vars["id"] == "missing" {
				return nil, ResourceNotFound(req.URI)
			}
			return &ResourceResult{Contents: []ResourceContents{{URI: req.URI, Blob: []byte{1, 2, 3}}}}, nil
		}})
	s.AddPrompt(Prompt{Name: "greet", Arguments: []PromptArgument{{Name: "who", Required: true}},
		Handler: func(ctx context.Context, req *PromptRequest) (*PromptResult, error) {
			return &PromptResult{Messages: []PromptMessage{{Role: "user", Content: TextContent("hello " + req.Arguments["who"])}}}, nil
		}})
	s.AddPrompt(Prompt{Name: "ask",
		Handler: func(ctx context.Context, req *PromptRequest) (*PromptResult, error) {
			res, err := req.Elicit(ctx, ElicitParams{Key: "topic", Message: "topic?"})
			if err != nil {
				return nil, err
			}
			return &PromptResult{Messages: []PromptMessage{{Role: "user", Content: TextContent("topic " + res.Action)}}}, nil
		}})
	s.SetCompletionHandler(func(ctx context.Context, req *CompleteRequest) (*CompleteResult, error) {
		return &CompleteResult{Values: []string{req.Argument.Value + "1", req.Argument.Value + "2"}, Total: 2}, nil
	})
	return s
}

func TestFeaturesBothEras(t *testing.T) {
	s := featureServer(t)
	ts := newHTTPTest(t, s, HTTPOptions{})
	sid := legacyInit(t, ts.URL, nil, map[string]any{"elicitation": map[string]any{}})
	type call struct {
		method string
		params map[string]any
	}
	run := func(era string, c call) httpResult {
		if era == "modern" {
			params := map[string]any{}
			for k, v := range c.params {
				params[k] = v
			}
			params["_meta"] = modernMeta(map[string]any{"elicitation": map[string]any{}})
			body, h := modernReq(1, c.method, params)
			return do(t, nil, http.MethodPost, ts.URL, body, h)
		}
		return do(t, nil, http.MethodPost, ts.URL, mustJSON(map[string]any{"jsonrpc": "2.0", "id": 1, "method": c.method, "params": c.params}), legacyHeaders(sid))
	}
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			r := run(era, call{"resources/list", nil})
			if list := r.result()["resources"].([]any); len(list) != 1 || list[0].(map[string]any)["description"] != "A" {
				t.Fatalf("resources/list: %s", r.body)
			}
			r = run(era, call{"resources/templates/list", nil})
			if list := r.result()["resourceTemplates"].([]any); len(list) != 1 {
				t.Fatalf("templates: %s", r.body)
			}
			r = run(era, call{"resources/read", map[string]any{"uri": "test://a"}})
			if c := r.result()["contents"].([]any)[0].(map[string]any); c["text"] != "alpha" {
				t.Fatalf("read: %s", r.body)
			}
			r = run(era, call{"resources/read", map[string]any{"uri": "test://item/7"}})
			if c := r.result()["contents"].([]any)[0].(map[string]any); c["blob"] != "AQID" {
				t.Fatalf("read blob: %s", r.body)
			}
			wantNotFound := CodeResourceNotFoundLegacy
			if era == "modern" {
				wantNotFound = CodeInvalidParams
			}
			for _, uri := range []string{"test://nope", "test://item/missing"} {
				r = run(era, call{"resources/read", map[string]any{"uri": uri}})
				data, _ := r.last()["error"].(map[string]any)["data"].(map[string]any)
				if r.errCode() != wantNotFound || data["uri"] != uri {
					t.Fatalf("not found %s: %s", uri, r.body)
				}
			}
			r = run(era, call{"prompts/get", map[string]any{"name": "greet", "arguments": map[string]any{"who": "bob"}}})
			if !strings.Contains(string(r.body), "hello bob") {
				t.Fatalf("prompt: %s", r.body)
			}
			if r = run(era, call{"prompts/get", map[string]any{"name": "greet"}}); r.errCode() != CodeInvalidParams {
				t.Fatalf("missing prompt argument: %s", r.body)
			}
			if r = run(era, call{"prompts/get", map[string]any{"name": "nope"}}); r.errCode() != CodeInvalidParams {
				t.Fatalf("unknown prompt: %s", r.body)
			}
			r = run(era, call{"completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "greet"}, "argument": map[string]any{"name": "who", "value": "b"}}})
			if vals := r.result()["completion"].(map[string]any)["values"].([]any); len(vals) != 2 || vals[0] != "b1" {
				t.Fatalf("complete: %s", r.body)
			}
			if r = run(era, call{"completion/complete", map[string]any{}}); r.errCode() != CodeInvalidParams {
				t.Fatalf("bad complete: %s", r.body)
			}
		})
	}

	// MRTR on prompts/get (modern); the answer stands even if the retry
	// declares no capabilities at all.
	body, h := modernReq(1, "prompts/get", map[string]any{"name": "ask", "_meta": modernMeta(map[string]any{"elicitation": map[string]any{}})})
	r := do(t, nil, http.MethodPost, ts.URL, body, h)
	state, _ := r.result()["requestState"].(string)
	if state == "" {
		t.Fatalf("prompt round 1: %s", r.body)
	}
	body, h = modernReq(2, "prompts/get", map[string]any{"name": "ask", "requestState": state,
		"inputResponses": map[string]any{"topic": map[string]any{"action": "cancel"}}, "_meta": modernMeta(nil)})
	r = do(t, nil, http.MethodPost, ts.URL, body, h)
	if !strings.Contains(string(r.body), "topic cancel") || r.result()["resultType"] != "complete" {
		t.Fatalf("prompt round 2: %s", r.body)
	}

	// Capabilities follow the registry.
	body, h = modernReq(3, "server/discover", nil)
	caps := do(t, nil, http.MethodPost, ts.URL, body, h).result()["capabilities"].(map[string]any)
	for _, c := range []string{"tools", "prompts", "resources", "completions", "logging"} {
		if caps[c] == nil {
			t.Errorf("capability %s missing: %v", c, caps)
		}
	}
}

func TestResultHelpers(t *testing.T) {
	r := StructuredResult(map[string]any{"ok": true})
	b, _ := json.Marshal(r.toWire())
	if !strings.Contains(string(b), `"structuredContent":{"ok":true}`) || !strings.Contains(string(b), `"text":"{\"ok\":true}"`) {
		t.Fatalf("StructuredResult: %s", b)
	}
	e := ErrorResult(map[string]any{"error": map[string]any{"code": "state_changed"}})
	b, _ = json.Marshal(e.toWire())
	if !strings.Contains(string(b), `"isError":true`) || !strings.Contains(string(b), `"code":"state_changed"`) {
		t.Fatalf("ErrorResult: %s", b)
	}
	b, _ = json.Marshal((&CallResult{}).toWire())
	if string(b) != `{"content":[]}` {
		t.Fatalf("empty result: %s", b)
	}
	b, _ = json.Marshal(TextContent(""))
	if string(b) != `{"text":"","type":"text"}` {
		t.Fatalf("empty text: %s", b)
	}
	if _, err := json.Marshal(Content{Type: "bogus"}); err == nil {
		t.Fatal("unknown content type accepted")
	}
}
