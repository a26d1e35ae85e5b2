// Command conformancefixture serves the internal/mcp protocol layer with the
// tools, prompts and resources the official MCP conformance suite expects
// (@modelcontextprotocol/conformance). It is a test fixture, not part of the
// product binary.
//
// Usage:
//
//	conformancefixture HOST:PORT
//
// It serves Streamable HTTP on /mcp, without authentication, both eras.
package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/mcp"
)

// A 1x1 red PNG and a tiny silent WAV.
const (
	pngBase64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
	wavBase64 = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQIAAAAAAA=="
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: conformancefixture HOST:PORT")
		os.Exit(2)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv := newFixture(logger)
	ln, err := net.Listen("tcp", os.Args[1])
	if err != nil {
		logger.Error("listen", "err", err)
		os.Exit(1)
	}
	mux := http.NewServeMux()
	// Product defaults apart from authentication (none) and the path.
	mux.Handle("/mcp", srv.HTTPHandler(mcp.HTTPOptions{Path: "/mcp"}))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		srv.Close()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	}()
	fmt.Printf("conformance fixture serving http://%s/mcp\n", ln.Addr())
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		logger.Error("serve", "err", err)
		os.Exit(1)
	}
}

func mustB64(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

func text(s string) (*mcp.CallResult, error) { return mcp.TextResult(s), nil }

func noArgs(name, desc string, h mcp.ToolHandler) mcp.Tool {
	return mcp.Tool{Name: name, Description: desc, InputSchema: map[string]any{"type": "object", "properties": map[string]any{}}, Handler: h}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func elicitRequest(message string, props map[string]any, required ...string) mcp.InputRequest {
	schema := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		schema["required"] = required
	}
	return mcp.InputRequest{Method: "elicitation/create", Params: map[string]any{"mode": "form", "message": message, "requestedSchema": schema}}
}

func samplingRequest(prompt string, maxTokens int) mcp.InputRequest {
	return mcp.InputRequest{Method: "sampling/createMessage", Params: map[string]any{
		"messages":  []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": prompt}}},
		"maxTokens": maxTokens,
	}}
}

func rootsRequest() mcp.InputRequest {
	return mcp.InputRequest{Method: "roots/list", Params: map[string]any{}}
}

// samplingText extracts the text of a CreateMessageResult.
func samplingText(raw json.RawMessage) string {
	var r struct {
		Content json.RawMessage `json:"content"`
	}
	_ = json.Unmarshal(raw, &r)
	var one struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(r.Content, &one) == nil && one.Text != "" {
		return one.Text
	}
	var many []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(r.Content, &many)
	var parts []string
	for _, p := range many {
		parts = append(parts, p.Text)
	}
	return strings.Join(parts, "")
}

func newFixture(logger *slog.Logger) *mcp.Server {
	s := mcp.NewServer(mcp.Options{
		Name: "sisyphus-conformance-fixture", Version: "1.0.0", Logger: logger,
		Instructions: "Conformance fixture for the Sisyphus MCP protocol layer.",
	})
	addTools(s)
	addPrompts(s)
	addResources(s)
	s.SetCompletionHandler(func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
		var candidates []string
		switch {
		case req.Ref.Type == "ref/prompt" && req.Ref.Name == "test_prompt_with_arguments":
			candidates = []string{"paris", "park", "party", "test", "testing"}
		case req.Ref.Type == "ref/resource":
			candidates = []string{"1", "2", "123"}
		}
		var out []string
		for _, c := range candidates {
			if strings.HasPrefix(c, req.Argument.Value) {
				out = append(out, c)
			}
		}
		return &mcp.CompleteResult{Values: out, Total: len(out)}, nil
	})
	return s
}

func addTools(s *mcp.Server) {
	s.AddTool(noArgs("test_simple_text", "Returns simple text", func(ctx context.Context, req *mcp.CallRequest) (*mcp.CallResult, error) {
		return text("This is a simple text response for testing.")
	}))
	s.AddTool(noArgs("test_image_content", "Returns an image", func(ctx context.Context, req *mcp.CallRequest) (*mcp.CallResult, error) {
		return &mcp.CallResult{Content: []mcp.Content{mcp.ImageContent(mustB64(pngBase64), "image/png")}}, nil
	}))
	s.AddTool(noArgs("test_audio_content", "Returns audio", func(ctx context.Context, req *mcp.CallRequest) (*mcp.CallResult, error) {
		return &mcp.CallResult{Content: []mcp.Content{mcp.AudioContent(mustB64(wavBase64), "audio/wav")}}, nil
	}))
	s.AddTool(noArgs("test_embedded_resource", "Returns an embedded resource", func(ctx context.Context, req *mcp.CallRequest) (*mcp.CallResult, error) {
		return &mcp.CallResult{Content: []mcp.Content{mcp.EmbeddedResource(mcp.ResourceContents{
			URI: "test://embedded-resource", MimeType: "text/plain", Text: "This is an embedded resource content.",
		})}}, nil
	}))
	s.AddTool(noArgs("test_multiple_content_types", "Returns mixed content", func(ctx context.Context, req *mcp.CallRequest) (*mcp.CallResult, error) {
		return &mcp.CallResult{Content: []mcp.Content{
			mcp.TextContent("Multiple content types test:"),
			mcp.ImageContent(mustB64(pngBase64), "image/png"),
			mcp.EmbeddedResource(mcp.ResourceContents{URI: "test://mixed-content-resource", MimeType: "application/json", Text: `{"test":"data","value":123}`}),
		}}, nil
	}))
	logTool := func(ctx context.Context, req *mcp.CallRequest) (*mcp.CallResult, error) {
		for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
			if i > 0 {
				if err := sleep(ctx, 50*time.Millisecond); err != nil {
					return nil, err
				}
			}
			_ = req.Log(ctx, mcp.LogInfo, "conformance", msg)
		}
		return text("Tool with logging executed successfully")
	}
	s.AddTool(noArgs("test_tool_with_logging", "Sends log messages", logTool))
	s.AddTool(noArgs("test_logging_tool", "Sends log messages (only when the request opted in)", logTool))
	s.AddTool(noArgs("test_tool_with_progress", "Reports progress", func(ctx context.Context, req *mcp.CallRequest) (*mcp.CallResult, error) {
		for i, p := range []float64{0, 50, 100} {
			if i > 0 {
				if err := sleep(ctx, 50*time.Millisecond); err != nil {
					return nil, err
				}
			}
			_ = req.Progress(ctx, p, 100, "")
		}
		return text("Tool with progress executed successfully")
	}))
	s.AddTool(noArgs("test_error_handling", "Always fails", func(ctx context.Context, req *mcp.CallRequest) (*mcp.CallResult, error) {
		//lint:ignore ST1005 the conformance suite's reference server answers this text; the fixture mirrors it
		return nil, errors.New("This tool intentionally returns an error for testing")
	}))
	s.AddTool(mcp.Tool{
		Name: "test_sampling", Description: "Asks the client's LLM",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"prompt": map[string]any{"type": "string"}}, "required": []string{"prompt"}},
		Handler: func(ctx context.Context, req *mcp.CallRequest) (*mcp.CallResult, error) {
			var a struct {
				Prompt string `json:"prompt"`
			}
			_ = json.Unmarshal(req.Arguments, &a)
			ans, err := req.Input(ctx, map[string]mcp.InputRequest{"sampling": samplingRequest(a.Prompt, 100)})
			if err != nil {
				return nil, err
			}
			return text("LLM response: " + samplingText(ans["sampling"]))
		},
	})
	s.AddTool(mcp.Tool{
		Name: "test_elicitation", Description: "Asks the user",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"message": map[string]any{"type": "string"}}, "required": []string{"message"}},
		Handler: func(ctx context.Context, req *mcp.CallRequest) (*mcp.CallResult, error) {
			var a struct {
				Message string `json:"message"`
			}
			_ = json.Unmarshal(req.Arguments, &a)
			res, err := req.Elicit(ctx, mcp.ElicitParams{Message: a.Message, RequestedSchema: map[string]any{
				"type": "object",
				"properties": map[string]any{
					"username": map[string]any{"type": "string", "description": "User's response"},
					"email":    map[string]any{"type": "string", "description": "User's email address"},
				},
				"required": []string{"username", "email"},
			}})
			if err != nil {
				return nil, err
			}
			content, _ := json.Marshal(res.Content)
			return text(fmt.Sprintf("User response: action=%s, content=%s", res.Action, content))
		},
	})
	s.AddTool(noArgs("test_elicitation_sep1034_defaults", "Elicitation with defaults", func(ctx context.Context, req *mcp.CallRequest) (*mcp.CallResult, error) {
		res, err := req.Elicit(ctx, mcp.ElicitParams{Message: "Please review and update the form fields with defaults", RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"name":     map[string]any{"type": "string", "description": "User name", "default": "John Doe"},
				"age":      map[string]any{"type": "integer", "description": "User age", "default": 30},
				"score":    map[string]any{"type": "number", "description": "User score", "default": 95.5},
				"status":   map[string]any{"type": "string", "description": "User status", "enum": []string{"active", "inactive", "pending"}, "default": "active"},
				"verified": map[string]any{"type": "boolean", "description": "Verification status", "default": true},
			},
		}})
		if err != nil {
			return nil, err
		}
		content, _ := json.Marshal(res.Content)
		return text(fmt.Sprintf("Elicitation completed: action=%s, content=%s", res.Action, content))
	}))
	s.AddTool(noArgs("test_elicitation_sep1330_enums", "Elicitation with enums", func(ctx context.Context, req *mcp.CallRequest) (*mcp.CallResult, error) {
		res, err := req.Elicit(ctx, mcp.ElicitParams{Message: "Please select options from the enum fields", RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"untitledSingle": map[string]any{"type": "string", "description": "Untitled single-select", "enum": []string{"option1", "option2", "option3"}},
				"titledSingle": map[string]any{"type": "string", "description": "Titled single-select", "oneOf": []any{
					map[string]any{"const": "value1", "title": "First Option"},
					map[string]any{"const": "value2", "title": "Second Option"},
					map[string]any{"const": "value3", "title": "Third Option"},
				}},
				"legacyEnum":    map[string]any{"type": "string", "description": "Legacy titled enum", "enum": []string{"opt1", "opt2", "opt3"}, "enumNames": []string{"Option One", "Option Two", "Option Three"}},
				"untitledMulti": map[string]any{"type": "array", "description": "Untitled multi-select", "items": map[string]any{"type": "string", "enum": []string{"option1", "option2", "option3"}}},
				"titledMulti": map[string]any{"type": "array", "description": "Titled multi-select", "items": map[string]any{"anyOf": []any{
					map[string]any{"const": "value1", "title": "First Choice"},
					map[string]any{"const": "value2", "title": "Second Choice"},
					map[string]any{"const": "value3", "title": "Third Choice"},
				}}},
			},
		}})
		if err != nil {
			return nil, err
		}
		content, _ := json.Marshal(res.Content)
		return text(fmt.Sprintf("Elicitation completed: action=%s, content=%s", res.Action, content))
	}))
	s.AddTool(mcp.Tool{
		Name: "json_schema_2020_12_tool", Description: "Tool with JSON Schema 2020-12 features",
		InputSchema: json.RawMessage(`{
			"$schema": "https://json-schema.org/draft/2020-12/schema",
			"type": "object",
			"$defs": {"address": {"$anchor": "addressDef", "type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
			"properties": {
				"name": {"type": "string"},
				"address": {"$ref": "#/$defs/address"},
				"contactMethod": {"type": "string", "enum": ["phone", "email"]},
				"phone": {"type": "string"},
				"email": {"type": "string"}
			},
			"allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
			"if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
			"then": {"required": ["phone"]},
			"else": {"required": ["email"]},
			"additionalProperties": false
		}`),
		Handler: func(ctx context.Context, req *mcp.CallRequest) (*mcp.CallResult, error) {
			return text("JSON Schema 2020-12 tool executed: " + string(req.Arguments))
		},
	})
	s.AddTool(mcp.Tool{
		Name: "test_x_mcp_header", Description: "Mirrors the region argument into the Mcp-Param-Region header",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{
			"region": map[string]any{"type": "string", "x-mcp-header": "Region", "description": "Region to run in"},
			"query":  map[string]any{"type": "string"},
		}, "required": []string{"region"}},
		Handler: func(ctx context.Context, req *mcp.CallRequest) (*mcp.CallResult, error) {
			return text("x-mcp-header tool executed: " + string(req.Arguments))
		},
	})
	s.AddTool(noArgs("test_missing_capability", "Needs the client's sampling capability", func(ctx context.Context, req *mcp.CallRequest) (*mcp.CallResult, error) {
		if !req.HasCapability("sampling") {
			return nil, &mcp.MissingCapabilityError{Capability: "sampling"}
		}
		ans, err := req.Input(ctx, map[string]mcp.InputRequest{"sampling": samplingRequest("Say hello", 20)})
		if err != nil {
			return nil, err
		}
		return text("LLM response: " + samplingText(ans["sampling"]))
	}))
	s.AddTool(noArgs("test_streaming_elicitation", "Asks the user (input_required in 2026-07-28)", func(ctx context.Context, req *mcp.CallRequest) (*mcp.CallResult, error) {
		res, err := req.Elicit(ctx, mcp.ElicitParams{Key: "confirm", Message: "Please confirm", RequestedSchema: map[string]any{
			"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}, "required": []string{"ok"},
		}})
		if err != nil {
			return nil, err
		}
		return text("Elicitation action: " + res.Action)
	}))

	var mu sync.Mutex
	dynamicTool, dynamicPrompt := false, false
	s.AddTool(noArgs("test_trigger_tool_change", "Adds or removes a tool", func(ctx context.Context, req *mcp.CallRequest) (*mcp.CallResult, error) {
		mu.Lock()
		defer mu.Unlock()
		dynamicTool = !dynamicTool
		if dynamicTool {
			s.AddTool(noArgs("test_dynamic_tool", "Appears and disappears", func(ctx context.Context, req *mcp.CallRequest) (*mcp.CallResult, error) {
				return text("dynamic")
			}))
		} else {
			s.RemoveTool("test_dynamic_tool")
		}
		return text("Tool list changed")
	}))
	s.AddTool(noArgs("test_trigger_prompt_change", "Adds or removes a prompt", func(ctx context.Context, req *mcp.CallRequest) (*mcp.CallResult, error) {
		mu.Lock()
		defer mu.Unlock()
		dynamicPrompt = !dynamicPrompt
		if dynamicPrompt {
			s.AddPrompt(mcp.Prompt{Name: "test_dynamic_prompt", Description: "Appears and disappears", Handler: func(ctx context.Context, req *mcp.PromptRequest) (*mcp.PromptResult, error) {
				return &mcp.PromptResult{Messages: []mcp.PromptMessage{{Role: "user", Content: mcp.TextContent("dynamic")}}}, nil
			}})
		} else {
			s.RemovePrompt("test_dynamic_prompt")
		}
		return text("Prompt list changed")
	}))

	addMRTRTools(s)
}

func addMRTRTools(s *mcp.Server) {
	// A1 works on the raw inputResponses: the suite also retries it without
	// a requestState and expects it to complete.
	s.AddTool(noArgs("test_input_required_result_elicitation", "MRTR: one elicitation", func(ctx context.Context, req *mcp.CallRequest) (*mcp.CallResult, error) {
		if raw, ok := req.InputResponses["user_name"]; ok {
			var ans struct {
				Action  string `json:"action"`
				Content struct {
					Name string `json:"name"`
				} `json:"content"`
			}
			if json.Unmarshal(raw, &ans) == nil && ans.Action == mcp.ElicitAccept {
				return text("Hello, " + ans.Content.Name + "!")
			}
			if ans.Action == mcp.ElicitDecline || ans.Action == mcp.ElicitCancel {
				return text("No name given (" + ans.Action + ")")
			}
		}
		return nil, mcp.InputRequired(map[string]mcp.InputRequest{
			"user_name": elicitRequest("What is your name?", map[string]any{"name": map[string]any{"type": "string"}}, "name"),
		})
	}))
	s.AddTool(noArgs("test_input_required_result_sampling", "MRTR: one sampling request", func(ctx context.Context, req *mcp.CallRequest) (*mcp.CallResult, error) {
		ans, err := req.Input(ctx, map[string]mcp.InputRequest{"capital_question": samplingRequest("What is the capital of France?", 100)})
		if err != nil {
			return nil, err
		}
		return text("Sampling response: " + samplingText(ans["capital_question"]))
	}))
	s.AddTool(noArgs("test_input_required_result_list_roots", "MRTR: roots/list", func(ctx context.Context, req *mcp.CallRequest) (*mcp.CallResult, error) {
		ans, err := req.Input(ctx, map[string]mcp.InputRequest{"client_roots": rootsRequest()})
		if err != nil {
			return nil, err
		}
		var r struct {
			Roots []struct {
				URI string `json:"uri"`
			} `json:"roots"`
		}
		_ = json.Unmarshal(ans["client_roots"], &r)
		var uris []string
		for _, root := range r.Roots {
			uris = append(uris, root.URI)
		}
		return text("Client roots: " + strings.Join(uris, ", "))
	}))
	confirm := elicitRequest("Please confirm", map[string]any{"ok": map[string]any{"type": "boolean"}}, "ok")
	stateTool := func(ctx context.Context, req *mcp.CallRequest) (*mcp.CallResult, error) {
		if _, err := req.Input(ctx, map[string]mcp.InputRequest{"confirm": confirm}); err != nil {
			return nil, err
		}
		return text("state-ok: requestState validated")
	}
	s.AddTool(noArgs("test_input_required_result_request_state", "MRTR: requestState round trip", stateTool))
	s.AddTool(noArgs("test_input_required_result_tampered_state", "MRTR: integrity-protected requestState", stateTool))
	s.AddTool(noArgs("test_input_required_result_multiple_inputs", "MRTR: three input requests", func(ctx context.Context, req *mcp.CallRequest) (*mcp.CallResult, error) {
		ans, err := req.Input(ctx, map[string]mcp.InputRequest{
			"user_name":    elicitRequest("What is your name?", map[string]any{"name": map[string]any{"type": "string"}}, "name"),
			"greeting":     samplingRequest("Generate a greeting", 50),
			"client_roots": rootsRequest(),
		})
		if err != nil {
			return nil, err
		}
		return text(fmt.Sprintf("Received %d input responses: greeting=%s", len(ans), samplingText(ans["greeting"])))
	}))
	s.AddTool(noArgs("test_input_required_result_multi_round", "MRTR: two rounds", func(ctx context.Context, req *mcp.CallRequest) (*mcp.CallResult, error) {
		one, err := req.Elicit(ctx, mcp.ElicitParams{Key: "step1", Message: "Step 1: What is your name?", RequestedSchema: map[string]any{
			"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []string{"name"},
		}})
		if err != nil {
			return nil, err
		}
		two, err := req.Elicit(ctx, mcp.ElicitParams{Key: "step2", Message: "Step 2: What is your favorite color?", RequestedSchema: map[string]any{
			"type": "object", "properties": map[string]any{"color": map[string]any{"type": "string"}}, "required": []string{"color"},
		}})
		if err != nil {
			return nil, err
		}
		return text(fmt.Sprintf("Completed: name=%v, color=%v", one.Content["name"], two.Content["color"]))
	}))
	s.AddTool(noArgs("test_input_required_result_capabilities", "MRTR: only declared capabilities", func(ctx context.Context, req *mcp.CallRequest) (*mcp.CallResult, error) {
		reqs := map[string]mcp.InputRequest{}
		if req.CanElicit() {
			reqs["user_name"] = elicitRequest("What is your name?", map[string]any{"name": map[string]any{"type": "string"}}, "name")
		}
		if req.HasCapability("sampling") {
			reqs["greeting"] = samplingRequest("Generate a greeting", 50)
		}
		if req.HasCapability("roots") {
			reqs["client_roots"] = rootsRequest()
		}
		if len(reqs) == 0 {
			return nil, &mcp.MissingCapabilityError{Capability: "sampling"}
		}
		ans, err := req.Input(ctx, reqs)
		if err != nil {
			return nil, err
		}
		return text(fmt.Sprintf("Received %d input responses", len(ans)))
	}))
}

func addPrompts(s *mcp.Server) {
	s.AddPrompt(mcp.Prompt{Name: "test_simple_prompt", Description: "A simple prompt without arguments",
		Handler: func(ctx context.Context, req *mcp.PromptRequest) (*mcp.PromptResult, error) {
			return &mcp.PromptResult{Messages: []mcp.PromptMessage{{Role: "user", Content: mcp.TextContent("This is a simple prompt for testing.")}}}, nil
		}})
	s.AddPrompt(mcp.Prompt{Name: "test_prompt_with_arguments", Description: "A prompt with arguments",
		Arguments: []mcp.PromptArgument{
			{Name: "arg1", Description: "First test argument", Required: true},
			{Name: "arg2", Description: "Second test argument", Required: true},
		},
		Handler: func(ctx context.Context, req *mcp.PromptRequest) (*mcp.PromptResult, error) {
			msg := fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", req.Arguments["arg1"], req.Arguments["arg2"])
			return &mcp.PromptResult{Messages: []mcp.PromptMessage{{Role: "user", Content: mcp.TextContent(msg)}}}, nil
		}})
	s.AddPrompt(mcp.Prompt{Name: "test_prompt_with_embedded_resource", Description: "A prompt embedding a resource",
		Arguments: []mcp.PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}},
		Handler: func(ctx context.Context, req *mcp.PromptRequest) (*mcp.PromptResult, error) {
			return &mcp.PromptResult{Messages: []mcp.PromptMessage{
				{Role: "user", Content: mcp.EmbeddedResource(mcp.ResourceContents{URI: req.Arguments["resourceUri"], MimeType: "text/plain", Text: "Embedded resource content for testing."})},
				{Role: "user", Content: mcp.TextContent("Please process the embedded resource above.")},
			}}, nil
		}})
	s.AddPrompt(mcp.Prompt{Name: "test_prompt_with_image", Description: "A prompt with an image",
		Handler: func(ctx context.Context, req *mcp.PromptRequest) (*mcp.PromptResult, error) {
			return &mcp.PromptResult{Messages: []mcp.PromptMessage{
				{Role: "user", Content: mcp.ImageContent(mustB64(pngBase64), "image/png")},
				{Role: "user", Content: mcp.TextContent("Please analyze the image above.")},
			}}, nil
		}})
	s.AddPrompt(mcp.Prompt{Name: "test_input_required_result_prompt", Description: "A prompt that asks for context first",
		Handler: func(ctx context.Context, req *mcp.PromptRequest) (*mcp.PromptResult, error) {
			ans, err := req.Input(ctx, map[string]mcp.InputRequest{
				"user_context": elicitRequest("What context should the prompt use?", map[string]any{"context": map[string]any{"type": "string"}}, "context"),
			})
			if err != nil {
				return nil, err
			}
			var r struct {
				Content struct {
					Context string `json:"context"`
				} `json:"content"`
			}
			_ = json.Unmarshal(ans["user_context"], &r)
			return &mcp.PromptResult{Messages: []mcp.PromptMessage{{Role: "user", Content: mcp.TextContent("Context: " + r.Content.Context)}}}, nil
		}})
}

func addResources(s *mcp.Server) {
	static := func(rc mcp.ResourceContents) mcp.ResourceHandler {
		return func(ctx context.Context, req *mcp.ResourceRequest) (*mcp.ResourceResult, error) {
			return &mcp.ResourceResult{Contents: []mcp.ResourceContents{rc}}, nil
		}
	}
	s.AddResource(mcp.Resource{URI: "test://static-text", Name: "static-text", Description: "A static text resource", MimeType: "text/plain",
		Handler: static(mcp.ResourceContents{URI: "test://static-text", MimeType: "text/plain", Text: "This is the content of the static text resource."})})
	s.AddResource(mcp.Resource{URI: "test://static-binary", Name: "static-binary", Description: "A static binary resource", MimeType: "image/png",
		Handler: static(mcp.ResourceContents{URI: "test://static-binary", MimeType: "image/png", Blob: mustB64(pngBase64)})})
	s.AddResource(mcp.Resource{URI: "test://watched-resource", Name: "watched-resource", Description: "A resource to subscribe to", MimeType: "text/plain",
		Handler: static(mcp.ResourceContents{URI: "test://watched-resource", MimeType: "text/plain", Text: "Watched resource content."})})
	s.AddResourceTemplate(mcp.ResourceTemplate{URITemplate: "test://template/{id}/data", Name: "template-data", Description: "Data by id", MimeType: "application/json",
		Handler: func(ctx context.Context, req *mcp.ResourceRequest) (*mcp.ResourceResult, error) {
			id := req.Vars["id"]
			body, _ := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
			return &mcp.ResourceResult{Contents: []mcp.ResourceContents{{URI: req.URI, MimeType: "application/json", Text: string(body)}}}, nil
		}})
}
