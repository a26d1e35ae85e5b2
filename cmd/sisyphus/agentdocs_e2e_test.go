package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// docsClient speaks JSON-RPC to the binary in one era: a legacy session
// (initialize first) or modern stateless requests (every one with _meta).
type docsClient struct {
	t       *testing.T
	url     string
	era     string
	session string
	next    int
}

func newDocsClient(t *testing.T, url, era string) (*docsClient, map[string]any) {
	c := &docsClient{t: t, url: url, era: era}
	var init map[string]any
	if era == "2025-11-25" {
		init = c.result("initialize", map[string]any{"protocolVersion": era, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "e2e", "version": "1"}})
		c.send("notifications/initialized", nil, false)
	} else {
		init = c.result("server/discover", map[string]any{})
	}
	return c, init
}

// send posts a request (or a notification) and returns the decoded answer.
func (c *docsClient) send(method string, params map[string]any, request bool) map[string]any {
	c.t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	if c.era != "2025-11-25" {
		params["_meta"] = map[string]any{"io.modelcontextprotocol/protocolVersion": c.era,
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "e2e", "version": "1"},
			"io.modelcontextprotocol/clientCapabilities": map[string]any{}}
	}
	msg := map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
	if request {
		c.next++
		msg["id"] = c.next
	}
	b, _ := json.Marshal(msg)
	req, _ := http.NewRequest("POST", c.url, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer sekret")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", c.era)
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	if c.era != "2025-11-25" {
		switch method {
		case "resources/read":
			req.Header.Set("Mcp-Method", method)
			req.Header.Set("Mcp-Name", fmt.Sprint(params["uri"]))
		case "prompts/get", "tools/call":
			req.Header.Set("Mcp-Method", method)
			req.Header.Set("Mcp-Name", fmt.Sprint(params["name"]))
		default:
			req.Header.Set("Mcp-Method", method)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		c.session = id
	}
	data, _ := io.ReadAll(resp.Body)
	if !request {
		return nil
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		c.t.Fatalf("%s: %d %.300s", method, resp.StatusCode, data)
	}
	return out
}

func (c *docsClient) result(method string, params map[string]any) map[string]any {
	c.t.Helper()
	out := c.send(method, params, true)
	res, ok := out["result"].(map[string]any)
	if !ok {
		c.t.Fatalf("%s %v: %v", method, params, out)
	}
	return res
}

// errorCode is the JSON-RPC error code of a request that must fail.
func (c *docsClient) errorCode(method string, params map[string]any) float64 {
	c.t.Helper()
	out := c.send(method, params, true)
	e, ok := out["error"].(map[string]any)
	if !ok {
		c.t.Fatalf("%s %v answered %v, want an error", method, params, out)
	}
	return e["code"].(float64)
}

// readText reads a resource and returns its one text.
func (c *docsClient) readText(uri string) (string, string) {
	c.t.Helper()
	res := c.result("resources/read", map[string]any{"uri": uri})
	cs := res["contents"].([]any)
	if len(cs) != 1 {
		c.t.Fatalf("%s: %d contents", uri, len(cs))
	}
	first := cs[0].(map[string]any)
	if first["uri"] != uri {
		c.t.Errorf("%s answered as %v", uri, first["uri"])
	}
	text, _ := first["text"].(string)
	mime, _ := first["mimeType"].(string)
	return text, mime
}

// TestAgentDocsBothEras: through the binary, in both eras, every resource,
// template, prompt and skill lists and reads; each skill's digest and size
// are its body's; the bodies are the checked-in skills/ files; the
// per-action help is the tool's own; unknown URIs and disabled actions are
// not found as each era says; tools/list stays free of all of it.
func TestAgentDocsBothEras(t *testing.T) {
	url := startServe(t)
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			c, init := newDocsClient(t, url, era)
			caps := init["capabilities"].(map[string]any)
			ext, _ := caps["extensions"].(map[string]any)
			if caps["resources"] == nil || caps["prompts"] == nil || ext["io.modelcontextprotocol/skills"] == nil {
				t.Fatalf("capabilities: %v", caps)
			}
			notFound := -32602.0
			if era == "2025-11-25" {
				notFound = -32002
			}

			// Skills: list, get, read, digests, the checked-in files.
			list := c.result("skills/list", nil)["skills"].([]any)
			if len(list) < 8 {
				t.Fatalf("%d skills", len(list))
			}
			skillURIs := map[string]bool{}
			for _, s := range list {
				entry := s.(map[string]any)
				uri := entry["uri"].(string)
				fm := entry["frontmatter"].(map[string]any)
				name := fm["name"].(string)
				if uri != "skill://"+name+"/SKILL.md" || fm["description"] == "" {
					t.Errorf("entry %v", entry)
				}
				skillURIs[uri] = true
				got := c.result("skills/get", map[string]any{"uri": uri})["skill"]
				if a, b := mustJSON(t, got), mustJSON(t, entry); a != b {
					t.Errorf("skills/get %s: %s, listed %s", uri, a, b)
				}
				body, mime := c.readText(uri)
				files := entry["resources"].([]any)
				f := files[0].(map[string]any)
				sum := sha256.Sum256([]byte(body))
				if len(files) != 1 || f["uri"] != uri || f["digest"] != "sha256:"+hex.EncodeToString(sum[:]) || int(f["size"].(float64)) != len(body) || mime != "text/markdown" {
					t.Errorf("%s: manifest %v does not describe the body (%d bytes)", uri, files, len(body))
				}
				if !strings.HasPrefix(body, "---\nname: "+name+"\ndescription: ") {
					t.Errorf("%s: frontmatter %.100q", uri, body)
				}
				checked, err := os.ReadFile(filepath.Join("..", "..", "skills", name, "SKILL.md"))
				if err != nil || string(checked) != body {
					t.Errorf("%s served is not skills/%s/SKILL.md (%v)", uri, name, err)
				}
				if alias, _ := c.readText("siyuan://skills/" + name); alias != body {
					t.Errorf("siyuan://skills/%s is not the skill's body", name)
				}
				dir := c.result("resources/directory/read", map[string]any{"uri": "skill://" + name})["resources"].([]any)
				if len(dir) != 1 || dir[0].(map[string]any)["uri"] != uri || dir[0].(map[string]any)["size"] != f["size"] {
					t.Errorf("resources/directory/read skill://%s: %v", name, dir)
				}
			}
			if code := c.errorCode("resources/directory/read", map[string]any{"uri": "skill://siyuan-index/SKILL.md"}); code != -32602 {
				t.Errorf("resources/directory/read of a file: %v", code)
			}
			if code := c.errorCode("skills/get", map[string]any{"uri": "skill://nosuch/SKILL.md"}); code != -32602 {
				t.Errorf("skills/get of an unknown skill: %v", code)
			}

			// Resources: every listed one reads; the help pages are there.
			resources := c.result("resources/list", nil)["resources"].([]any)
			seen := map[string]bool{}
			for _, r := range resources {
				uri := r.(map[string]any)["uri"].(string)
				seen[uri] = true
				if text, _ := c.readText(uri); text == "" {
					t.Errorf("%s is empty", uri)
				}
			}
			for _, u := range []string{"siyuan://help/tool-overview", "siyuan://help/strict-writes", "siyuan://help/document-paths",
				"siyuan://help/user-rules", "siyuan://help/changelog", "siyuan://skills/index"} {
				if !seen[u] {
					t.Errorf("%s is not listed", u)
				}
			}
			for u := range skillURIs {
				if !seen[u] {
					t.Errorf("%s is not listed", u)
				}
			}
			overview, _ := c.readText("siyuan://help/tool-overview")
			if !strings.Contains(overview, "## block") || !strings.Contains(overview, "`update`") || strings.Contains(overview, "`set_permission`") {
				t.Errorf("tool overview (off-by-default actions must not show): %.400s", overview)
			}
			changelog, _ := c.readText("siyuan://help/changelog")
			if !strings.HasPrefix(changelog, "# ") {
				t.Errorf("changelog: %.100s", changelog)
			}
			index, _ := c.readText("siyuan://skills/index")
			for u := range skillURIs {
				name := strings.TrimSuffix(strings.TrimPrefix(u, "skill://"), "/SKILL.md")
				if !strings.Contains(index, "**"+name+"**") {
					t.Errorf("the index leaves out %s", name)
				}
			}

			// Templates: the per-action help is the tool's help action's.
			tmpls := c.result("resources/templates/list", nil)["resourceTemplates"].([]any)
			var tnames []string
			for _, tm := range tmpls {
				tnames = append(tnames, tm.(map[string]any)["uriTemplate"].(string))
			}
			if strings.Join(tnames, " ") != "siyuan://help/action/{tool}/{action} siyuan://skills/{name}" {
				t.Errorf("templates: %v", tnames)
			}
			help, mime := c.readText("siyuan://help/action/block/update")
			call := c.result("tools/call", map[string]any{"name": "block", "arguments": map[string]any{"action": "help", "topic": "update"}})
			var fromPage, fromTool any
			if json.Unmarshal([]byte(help), &fromPage) != nil || mime != "application/json" {
				t.Fatalf("action help: %s %.200s", mime, help)
			}
			fromTool = call["structuredContent"]
			if mustJSON(t, fromPage) != mustJSON(t, fromTool) {
				t.Errorf("siyuan://help/action/block/update differs from block help: %s vs %s", mustJSON(t, fromPage), mustJSON(t, fromTool))
			}
			for _, uri := range []string{"siyuan://help/action/block/nosuch", "siyuan://help/action/nosuch/list",
				"siyuan://help/action/notebook/set_permission", "siyuan://nosuch", "skill://nosuch/SKILL.md", "siyuan://skills/nosuch"} {
				if code := c.errorCode("resources/read", map[string]any{"uri": uri}); code != notFound {
					t.Errorf("%s: code %v, want %v", uri, code, notFound)
				}
			}

			// Prompts: one per skill, with the optional task.
			prompts := c.result("prompts/list", nil)["prompts"].([]any)
			if len(prompts) != len(list) {
				t.Errorf("%d prompts for %d skills", len(prompts), len(list))
			}
			for _, p := range prompts {
				pm := p.(map[string]any)
				name := pm["name"].(string)
				args, _ := pm["arguments"].([]any)
				if !strings.HasPrefix(name, "siyuan_") || len(args) != 1 || args[0].(map[string]any)["name"] != "task" || args[0].(map[string]any)["required"] == true {
					t.Errorf("prompt %v", pm)
				}
				got := c.result("prompts/get", map[string]any{"name": name, "arguments": map[string]any{"task": "tidy my inbox"}})
				msgs := got["messages"].([]any)
				text := msgs[0].(map[string]any)["content"].(map[string]any)["text"].(string)
				if len(msgs) != 1 || !strings.Contains(text, "\n---\n") || !strings.HasSuffix(text, "The task: tidy my inbox") {
					t.Errorf("%s: %.200q", name, text)
				}
				c.result("prompts/get", map[string]any{"name": name}) // task is optional
			}

			// None of it is in tools/list.
			tl := mustJSON(t, c.result("tools/list", nil))
			if strings.Contains(tl, "skill://") || strings.Contains(tl, "siyuan://help") {
				t.Error("tools/list carries skills or help resources")
			}
		})
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSkillInstall: sisyphus skill install writes the checked-in skills,
// leaves equal files alone, refuses a changed one (writing nothing) unless
// --force, and says what it did.
func TestSkillInstall(t *testing.T) {
	dir := t.TempDir()
	out, err := run(t, "skill", "install", "--dir", dir)
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	entries, _ := os.ReadDir(filepath.Join("..", "..", "skills"))
	if len(entries) == 0 {
		t.Fatal("no checked-in skills")
	}
	for _, e := range entries {
		want, _ := os.ReadFile(filepath.Join("..", "..", "skills", e.Name(), "SKILL.md"))
		path := filepath.Join(dir, e.Name(), "SKILL.md")
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, want) || !strings.Contains(out, "wrote "+path) {
			t.Errorf("%s: %v, said %q", path, err, out)
		}
	}
	out, err = run(t, "skill", "install", "--dir", dir)
	if err != nil || strings.Contains(out, "wrote") || !strings.Contains(out, "unchanged") {
		t.Errorf("second install: %v %s", err, out)
	}
	first := filepath.Join(dir, entries[0].Name(), "SKILL.md")
	second := filepath.Join(dir, entries[1].Name(), "SKILL.md")
	os.WriteFile(first, []byte("my own notes\n"), 0o644)
	os.Remove(second)
	out, err = run(t, "skill", "install", "--dir", dir)
	if err == nil || !strings.Contains(out, first) || !strings.Contains(out, "--force") {
		t.Errorf("a changed file was not refused: %v %s", err, out)
	}
	if b, _ := os.ReadFile(first); string(b) != "my own notes\n" {
		t.Error("the changed file was overwritten")
	}
	if _, err := os.Stat(second); err == nil {
		t.Error("a refused install wrote a file")
	}
	out, err = run(t, "skill", "install", "--dir", dir, "--force")
	if err != nil || !strings.Contains(out, "replaced "+first) || !strings.Contains(out, "wrote "+second) {
		t.Errorf("--force: %v %s", err, out)
	}
	if out, err := run(t, "skill", "install"); err == nil || !strings.Contains(out, "--dir") {
		t.Errorf("no destination: %v %s", err, out)
	}
	if out, err := run(t, "skill", "install", "--client", "nosuch"); err == nil || !strings.Contains(out, "unknown client") {
		t.Errorf("unknown client: %v %s", err, out)
	}
}

// TestAgentDocsOverStdio: a go-sdk client over stdio, in both eras, lists
// and reads the resources, the templates' pages and the prompts.
func TestAgentDocsOverStdio(t *testing.T) {
	dir := t.TempDir()
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			ctx := context.Background()
			client := sdk.NewClient(&sdk.Implementation{Name: "e2e", Version: "1"}, nil)
			tr := &sdk.CommandTransport{Command: exec.Command(bin, "stdio", "--embedded", dir, "--state-dir", t.TempDir())}
			cs, err := client.Connect(ctx, tr, &sdk.ClientSessionOptions{ProtocolVersion: era})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if !strings.Contains(cs.InitializeResult().Instructions, "skill://siyuan-index/SKILL.md") {
				t.Errorf("the instructions do not point at the skills")
			}
			rl, err := cs.ListResources(ctx, nil)
			if err != nil || len(rl.Resources) < 20 {
				t.Fatalf("resources: %v %v", rl, err)
			}
			for _, r := range rl.Resources {
				rr, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: r.URI})
				if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text == "" {
					t.Errorf("%s: %v %v", r.URI, rr, err)
				}
			}
			tl, err := cs.ListResourceTemplates(ctx, nil)
			if err != nil || len(tl.ResourceTemplates) != 2 {
				t.Fatalf("templates: %v %v", tl, err)
			}
			for _, uri := range []string{"siyuan://help/action/fs/read", "siyuan://skills/siyuan-safety"} {
				if rr, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri}); err != nil || rr.Contents[0].Text == "" {
					t.Errorf("%s: %v", uri, err)
				}
			}
			if _, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "siyuan://help/action/fs/nosuch"}); err == nil {
				t.Error("an unknown action's help page was read")
			}
			pl, err := cs.ListPrompts(ctx, nil)
			if err != nil || len(pl.Prompts) < 8 {
				t.Fatalf("prompts: %v %v", pl, err)
			}
			for _, p := range pl.Prompts {
				gp, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: p.Name, Arguments: map[string]string{"task": "x"}})
				if err != nil || len(gp.Messages) != 1 {
					t.Errorf("%s: %v %v", p.Name, gp, err)
				}
			}
		})
	}
}
