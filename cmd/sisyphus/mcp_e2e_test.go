package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// eras are the two protocol revisions every transport must serve.
var eras = []string{"2025-11-25", "2026-07-28"}

var readyRE = regexp.MustCompile(`^sisyphus ready: MCP at (http://\S+/mcp)`)

// startServe runs `sisyphus serve --embedded` and returns its MCP URL.
func startServe(t *testing.T) string {
	t.Helper()
	return startServeWith(t, "--embedded", t.TempDir(), "--state-dir", t.TempDir()).url
}

type bearer struct{ tok string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.tok)
	return http.DefaultTransport.RoundTrip(r)
}

// exercise runs the same agent session over any transport: list the tools,
// browse to the welcome document, read it, and hit an error path.
func exercise(t *testing.T, cs *sdk.ClientSession, era string) {
	t.Helper()
	ctx := context.Background()
	if got := cs.InitializeResult().ProtocolVersion; got != era {
		t.Fatalf("negotiated %q, want %q", got, era)
	}
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range lt.Tools {
		names = append(names, tool.Name)
		if tool.Annotations == nil {
			t.Errorf("%s: no annotations", tool.Name)
		}
	}
	sort.Strings(names)
	if got := strings.Join(names, ","); !strings.Contains(got, "block,document") || !strings.Contains(got, "notebook,search,system") {
		t.Fatalf("tools: %v", names)
	}
	call := func(tool string, args map[string]any) map[string]any {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s %v: %v", tool, args, err)
		}
		b, _ := json.Marshal(res.StructuredContent)
		var m map[string]any
		json.Unmarshal(b, &m)
		// The text content carries the same object.
		if len(res.Content) != 1 {
			t.Fatalf("%s: content %v", tool, res.Content)
		}
		var fromText map[string]any
		if err := json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &fromText); err != nil || len(fromText) != len(m) {
			t.Fatalf("%s: text is not the structured object: %v", tool, err)
		}
		if res.IsError {
			m["isError"] = true
		}
		return m
	}
	nbs := call("notebook", map[string]any{"action": "list"})["notebooks"].([]any)
	nb := nbs[0].(map[string]any)["id"].(string)
	docs := call("document", map[string]any{"action": "get_child_docs", "notebook": nb})["data"].([]any)
	welcome := docs[0].(map[string]any)["id"].(string)
	doc := call("document", map[string]any{"action": "get_doc", "id": welcome})
	if !strings.Contains(doc["content"].(string), "Sisyphus serves this workspace") {
		t.Fatalf("welcome document: %v", doc)
	}
	bad := call("document", map[string]any{"action": "explode"})
	if bad["isError"] != true || bad["error"].(map[string]any)["code"] != "unknown_action" {
		t.Fatalf("error result: %v", bad)
	}
}

func TestServeBothErasOverHTTP(t *testing.T) {
	url := startServe(t)
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			client := sdk.NewClient(&sdk.Implementation{Name: "e2e", Version: "1"}, nil)
			tr := &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{"sekret"}}, MaxRetries: -1}
			cs, err := client.Connect(context.Background(), tr, &sdk.ClientSessionOptions{ProtocolVersion: era})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			exercise(t, cs, era)
		})
	}
	t.Run("the plugin route serves the same endpoint", func(t *testing.T) {
		alt := strings.Replace(url, "/mcp", "/plugin/private/siyuan-plugins-mcp-sisyphus/mcp", 1)
		client := sdk.NewClient(&sdk.Implementation{Name: "e2e", Version: "1"}, nil)
		tr := &sdk.StreamableClientTransport{Endpoint: alt, HTTPClient: &http.Client{Transport: bearer{"sekret"}}, MaxRetries: -1}
		cs, err := client.Connect(context.Background(), tr, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		cs.Close()
	})
	t.Run("a wrong token is refused", func(t *testing.T) {
		req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Authorization", "Bearer nope")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Fatalf("status %d, WWW-Authenticate %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
	})
}

func TestStdioBothEras(t *testing.T) {
	dir := t.TempDir()
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			client := sdk.NewClient(&sdk.Implementation{Name: "e2e", Version: "1"}, nil)
			tr := &sdk.CommandTransport{Command: exec.Command(bin, "stdio", "--embedded", dir, "--state-dir", t.TempDir())}
			cs, err := client.Connect(context.Background(), tr, &sdk.ClientSessionOptions{ProtocolVersion: era})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			exercise(t, cs, era)
		})
	}
}
