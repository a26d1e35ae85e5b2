package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// A reference reads its target: SiYuan fills a reference's anchor with
// the target's text. Through the built binary, an agent tries to place a
// reference to a hidden block in every form SiYuan reads one in, and the
// arguments as bytes on the wire (JSON escapes) rather than as a client
// library encodes them.

// rawToolCall posts one stateless tools/call whose arguments are exactly
// argsJSON, and decodes its result.
func rawToolCall(t *testing.T, base, tool, argsJSON string) (map[string]any, bool) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + argsJSON +
		`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequestWithContext(context.Background(), "POST", base+"/mcp", bytes.NewReader([]byte(body)))
	req.Header.Set("Authorization", "Bearer sekret")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return toolResult(t, resp.StatusCode, data)
}

// TestReferenceFormsReadTheirTarget: the person hides "Vault"; the agent
// writes to its own notebook text that references a vault block as
// Markdown hidden behind JSON escapes, as block DOM (quoted every way,
// its id as character references, a <wbr> inside it) and as inline HTML
// in Markdown. Each is refused at preflight exactly as a reference to a
// block that does not exist, and nothing of the vault reaches the agent's
// document. With nothing hidden (and the default level r, as the person's
// configuration has it) a reference to a missing block is not looked up:
// the write commits.
func TestReferenceFormsReadTheirTarget(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	k := startKernel(t, t.TempDir())
	s := startServeWith(t, "--siyuan-url", k.url, "--siyuan-token", "tok", "--state-dir", t.TempDir())
	base := strings.TrimSuffix(s.url, "/mcp")
	a := connect(t, s.url, "2026-07-28")
	c := kernelClient(t, k.url, "tok")
	open, err := c.CreateNotebook(ctx, "Open")
	if err != nil {
		t.Fatal(err)
	}
	vault, err := c.CreateNotebook(ctx, "Vault")
	if err != nil {
		t.Fatal(err)
	}
	odoc, err := c.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: open.ID, Path: "/Notes", Markdown: "mine\n"})
	if err != nil {
		t.Fatal(err)
	}
	vdoc, err := c.CreateDocWithMd(ctx, siyuan.CreateDocRequest{Notebook: vault.ID, Path: "/Salary", Markdown: "the salary is secret\n"})
	if err != nil {
		t.Fatal(err)
	}
	kids, err := c.GetChildBlocks(ctx, vdoc)
	if err != nil || len(kids) != 1 {
		t.Fatal(kids, err)
	}
	hid := kids[0].ID
	if err := c.FlushTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	s.config(t, "permission", open.ID, "rwd")
	s.config(t, "permission", vault.ID, "none")

	entities := ""
	for _, ch := range hid {
		entities += fmt.Sprintf("&#%d;", ch)
	}
	para := func(inner string) string {
		return `<div data-type="NodeParagraph" class="p"><div contenteditable="true">see ` + inner + `</div></div>`
	}
	jsonStr := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	appendArgs := func(dataType, data string) string {
		return `{"action":"append","parentID":"` + odoc + `","dataType":"` + dataType + `","data":` + data + `,"validateOnly":true}`
	}
	for _, c := range []struct{ name, args string }{
		{"markdown behind JSON escapes", appendArgs("markdown", `"see \u0028\u0028`+hid+`))"`)},
		{"block DOM, single-quoted and unquoted", appendArgs("dom", jsonStr(para(`<span data-type='block-ref' data-subtype=d data-id=`+hid+`>x</span>`)))},
		{"block DOM, the id as character references", appendArgs("dom", jsonStr(para(`<span data-type="block-ref" data-subtype="d" data-id="`+entities+`">x</span>`)))},
		{"block DOM, a caret inside the id", appendArgs("dom", jsonStr(para(`<span data-type="block-ref" data-subtype="d" data-id="`+hid[:5]+`<wbr>`+hid[5:]+`">x</span>`)))},
		{"block DOM behind JSON escapes", appendArgs("dom", `"<span data\u002dtype=\"block\u002dref\" data\u002did=\"`+hid+`\">x</span>"`)},
		{"inline HTML in Markdown", appendArgs("markdown", jsonStr(`see <span data-type="block-ref" data-subtype="d" data-id="`+hid+`">x</span>`))},
	} {
		other := fresh()
		hidden, isErr := rawToolCall(t, base, "block", c.args)
		missing, _ := rawToolCall(t, base, "block", strings.ReplaceAll(c.args, hid, other))
		h, _ := json.Marshal(hidden)
		m, _ := json.Marshal(missing)
		if !isErr || errCodeOf(hidden) != "not_found" || strings.ReplaceAll(string(m), other, hid) != string(h) {
			t.Errorf("%s: a reference to a hidden block answers\n  %s\nto a block that does not exist\n  %s", c.name, h, m)
		}
	}
	doc := a.ok("document", map[string]any{"action": "get_doc", "id": odoc})
	if strings.Contains(fmt.Sprint(doc), "salary") {
		t.Fatalf("the agent's document shows the hidden block: %v", doc)
	}

	// A reference to a visible block passes, in block DOM as in Markdown.
	mine := a.ok("block", map[string]any{"action": "get_children", "id": odoc})
	visible := mine["data"].([]any)[0].(map[string]any)["id"].(string)
	res, isErr := rawToolCall(t, base, "block", appendArgs("dom", jsonStr(para(`<span data-type='block-ref' data-id=`+visible+`>x</span>`))))
	if isErr {
		t.Fatalf("a DOM reference to a visible block: %v", res)
	}

	// Nothing hidden, the default level r: a reference to a block that
	// does not exist is SiYuan's business, and the write commits.
	s.config(t, "permission", vault.ID, "r")
	done := a.strictDo("block", map[string]any{"action": "append", "parentID": odoc, "data": "see ((" + fresh() + " 'gone'))"})
	if done["status"] != "committed" {
		t.Fatalf("a reference to a missing block with nothing hidden: %v", done)
	}
}
