package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Confirmation of dangerous actions through the built binary, in both
// eras: a modern client that declares form elicitation gets input_required
// rounds; a legacy one a real elicitation/create; one without forms must
// pass confirm:true.

// modernRound posts one modern tools/call with the given capabilities and
// extra params (inputResponses, requestState), and decodes the JSON-RPC
// answer.
func modernRound(t *testing.T, base string, caps map[string]any, tool string, args map[string]any, extra map[string]any) (int, map[string]any) {
	t.Helper()
	if caps == nil {
		caps = map[string]any{}
	}
	params := map[string]any{"name": tool, "arguments": args, "_meta": map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "confirm-e2e", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": caps}}
	for k, v := range extra {
		params[k] = v
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
	req, _ := http.NewRequest("POST", base+"/mcp", bytes.NewReader(body))
	for k, v := range map[string]string{"Authorization": "Bearer sekret", "Content-Type": "application/json",
		"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": tool} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("answer is not JSON (HTTP %d): %s", resp.StatusCode, data)
	}
	return resp.StatusCode, m
}

var formCaps = map[string]any{"elicitation": map[string]any{}}

// confirmFixture is an authority on the embedded demo with block.delete
// enabled, and a delete preflighted.
type confirmFixture struct {
	s      *serveProc
	base   string
	a      *agent
	para   string
	commit map[string]any // the delete's commit arguments
}

func newConfirmFixture(t *testing.T) *confirmFixture {
	t.Helper()
	s := startServeWith(t, "--embedded", t.TempDir(), "--state-dir", t.TempDir())
	s.config(t, "enable", "block.delete")
	a := connect(t, s.url, "2025-11-25")
	_, para := firstParagraph(a)
	del := map[string]any{"action": "delete", "id": para}
	pre := a.ok("block", with(del, "validateOnly", true))
	return &confirmFixture{s: s, base: strings.TrimSuffix(s.url, "/mcp"), a: a, para: para, commit: commitOf(del, pre)}
}

func (f *confirmFixture) exists(t *testing.T) bool {
	t.Helper()
	m, isErr := f.a.call("block", map[string]any{"action": "get_kramdown", "id": f.para})
	return !isErr && m["kramdown"] != ""
}

// round1 asks for the delete with form elicitation and returns the
// requestState and the form it got.
func (f *confirmFixture) round1(t *testing.T) (string, map[string]any) {
	t.Helper()
	_, m := modernRound(t, f.base, formCaps, "block", f.commit, nil)
	res, _ := m["result"].(map[string]any)
	if res["resultType"] != "input_required" {
		t.Fatalf("a dangerous call from a form client must ask first: %v", m)
	}
	reqs, _ := res["inputRequests"].(map[string]any)
	form, _ := reqs["dangerous-action-confirmation"].(map[string]any)
	if form["method"] != "elicitation/create" {
		t.Fatalf("input request: %v", res)
	}
	params := form["params"].(map[string]any)
	msg, _ := params["message"].(string)
	if params["mode"] != "form" || !strings.Contains(msg, "block.delete") || !strings.Contains(msg, f.para) {
		t.Fatalf("the form must show the tool, action and arguments: %v", params)
	}
	schema := params["requestedSchema"].(map[string]any)
	if req, _ := schema["required"].([]any); len(req) != 1 || req[0] != "confirm" {
		t.Fatalf("requested schema: %v", schema)
	}
	return res["requestState"].(string), form
}

func answer(action string, content map[string]any) map[string]any {
	a := map[string]any{"action": action}
	if content != nil {
		a["content"] = content
	}
	return map[string]any{"dangerous-action-confirmation": a}
}

// toolOutcome is a tools/call result: its structured content and isError.
func toolOutcome(t *testing.T, m map[string]any) (map[string]any, bool) {
	t.Helper()
	res, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result: %v", m)
	}
	sc, _ := res["structuredContent"].(map[string]any)
	isErr, _ := res["isError"].(bool)
	return sc, isErr
}

func TestModernConfirmation(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		answer    map[string]any
		code      string // "" : committed
		cancelled any
	}{
		{"accept", answer("accept", map[string]any{"confirm": true}), "", nil},
		{"accept no", answer("accept", map[string]any{"confirm": false}), "confirmation_declined", false},
		{"decline", answer("decline", nil), "confirmation_declined", false},
		{"cancel", answer("cancel", nil), "confirmation_cancelled", true},
		{"content missing", answer("accept", nil), "confirmation_invalid", false},
		{"content wrongly typed", answer("accept", map[string]any{"confirm": "yes"}), "confirmation_invalid", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newConfirmFixture(t)
			state, _ := f.round1(t)
			if !f.exists(t) {
				t.Fatal("asking ran the delete")
			}
			_, m := modernRound(t, f.base, formCaps, "block", f.commit, map[string]any{"inputResponses": c.answer, "requestState": state})
			sc, isErr := toolOutcome(t, m)
			if c.code == "" {
				if isErr || sc["status"] != "committed" || f.exists(t) {
					t.Fatalf("accepted delete: %v", m)
				}
				return
			}
			e, _ := sc["error"].(map[string]any)
			if !isErr || e["code"] != c.code || sc["writeAttempted"] != false || sc["cancelled"] != c.cancelled {
				t.Fatalf("got %v, want %s (cancelled %v)", sc, c.code, c.cancelled)
			}
			if !f.exists(t) {
				t.Fatal("a refused confirmation ran the delete")
			}
		})
	}
}

// TestModernConfirmationStates: forged, reused, argument-changed states are
// rejected; confirm:true alone never passes a form client; a retry that
// drops its capabilities cannot skip the question.
func TestModernConfirmationStates(t *testing.T) {
	t.Parallel()
	f := newConfirmFixture(t)
	yes := answer("accept", map[string]any{"confirm": true})
	rejected := func(name string, m map[string]any, want string) {
		t.Helper()
		e, _ := m["error"].(map[string]any)
		if e == nil || e["code"] != float64(-32602) || !strings.Contains(fmt.Sprint(e["message"]), want) {
			t.Fatalf("%s: got %v, want -32602 %q", name, m, want)
		}
		if !f.exists(t) {
			t.Fatalf("%s ran the delete", name)
		}
	}

	// confirm:true alone: still asked.
	_, m := modernRound(t, f.base, formCaps, "block", with(f.commit, "confirm", true), nil)
	if res, _ := m["result"].(map[string]any); res["resultType"] != "input_required" {
		t.Fatalf("confirm:true must not bypass the form: %v", m)
	}

	state, _ := f.round1(t)
	forged := state[:len(state)-2] + "AA"
	_, m = modernRound(t, f.base, formCaps, "block", f.commit, map[string]any{"inputResponses": yes, "requestState": forged})
	rejected("forged", m, "integrity")

	_, m = modernRound(t, f.base, formCaps, "block", with(f.commit, "id", firstOther(t, f)), map[string]any{"inputResponses": yes, "requestState": state})
	rejected("changed arguments", m, "different request")

	// Dropping the capability and sending confirm:true cannot skip the
	// question asked under it.
	state, _ = f.round1(t)
	_, m = modernRound(t, f.base, nil, "block", with(f.commit, "confirm", true), map[string]any{"requestState": state})
	if res, _ := m["result"].(map[string]any); res != nil && res["isError"] != true {
		t.Fatalf("a retry without its capability ran: %v", m)
	}
	if !f.exists(t) {
		t.Fatal("a retry without its capability ran the delete")
	}

	state, _ = f.round1(t)
	_, m = modernRound(t, f.base, formCaps, "block", f.commit, map[string]any{"inputResponses": answer("decline", nil), "requestState": state})
	if sc, _ := toolOutcome(t, m); sc["error"].(map[string]any)["code"] != "confirmation_declined" {
		t.Fatalf("decline: %v", m)
	}
	_, m = modernRound(t, f.base, formCaps, "block", f.commit, map[string]any{"inputResponses": yes, "requestState": state})
	rejected("reused after decline", m, "already used")

	// Accepted, then the same business requestId again: asked afresh, then
	// the ledger replays without deleting twice.
	state, _ = f.round1(t)
	_, m = modernRound(t, f.base, formCaps, "block", f.commit, map[string]any{"inputResponses": yes, "requestState": state})
	if sc, isErr := toolOutcome(t, m); isErr || sc["status"] != "committed" {
		t.Fatalf("accepted: %v", m)
	}
	state, _ = f.round1(t)
	_, m = modernRound(t, f.base, formCaps, "block", f.commit, map[string]any{"inputResponses": yes, "requestState": state})
	if sc, _ := toolOutcome(t, m); sc["replayed"] != true || sc["writeAttempted"] != false {
		t.Fatalf("a replay after a fresh confirmation: %v", m)
	}
}

// firstOther is another block of the fixture's document.
func firstOther(t *testing.T, f *confirmFixture) string {
	doc := f.a.ok("block", map[string]any{"action": "info", "id": f.para})["document"].(map[string]any)["id"].(string)
	for _, k := range f.a.ok("block", map[string]any{"action": "get_children", "id": doc})["data"].([]any) {
		if id := k.(map[string]any)["id"].(string); id != f.para {
			return id
		}
	}
	t.Fatal("no other block")
	return ""
}

// TestConfirmationRoundsAreNotTaskResults: an input_required round is never
// kept as a task's terminal result.
func TestConfirmationRoundsAreNotTaskResults(t *testing.T) {
	t.Parallel()
	f := newConfirmFixture(t)
	const task = "5b2c4d7e-1111-4222-8333-444455556666"
	_, m := modernRound(t, f.base, formCaps, "block", f.commit, map[string]any{"_meta": map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "confirm-e2e", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": formCaps,
		"io.siyuan.sisyphus/taskId":                  task}})
	if res, _ := m["result"].(map[string]any); res["resultType"] != "input_required" {
		t.Fatalf("round 1: %v", m)
	}
	if data := taskQuery(t, f.base, task, "result"); !strings.Contains(string(data), `"found":false`) {
		t.Fatalf("a confirmation round was recorded as a task: %s", data)
	}
}

// TestLegacyConfirmation: a legacy session that declared form elicitation
// gets a real elicitation/create and the call waits for its answer; one
// without forms passes confirm:true, or is refused.
func TestLegacyConfirmation(t *testing.T) {
	t.Parallel()
	s := startServeWith(t, "--embedded", t.TempDir(), "--state-dir", t.TempDir())
	s.config(t, "enable", "block.delete")
	var asked atomic.Int32
	var reply atomic.Value
	reply.Store(&sdk.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}})
	a := connectWith(t, s.url, "2025-11-25", "legacy-form", &sdk.ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			asked.Add(1)
			if !strings.Contains(req.Params.Message, "block.delete") {
				return nil, fmt.Errorf("the form does not say what it confirms: %q", req.Params.Message)
			}
			return reply.Load().(*sdk.ElicitResult), nil
		}})
	doc, _ := firstParagraph(a)
	kids := a.ok("block", map[string]any{"action": "get_children", "id": doc})["data"].([]any)
	del := func(i int) (map[string]any, map[string]any) {
		id := kids[i].(map[string]any)["id"].(string)
		args := map[string]any{"action": "delete", "id": id}
		return args, commitOf(args, a.ok("block", with(args, "validateOnly", true)))
	}

	_, c0 := del(0)
	if res := a.ok("block", c0); res["status"] != "committed" || asked.Load() != 1 {
		t.Fatalf("accepted: %v (asked %d)", res, asked.Load())
	}
	reply.Store(&sdk.ElicitResult{Action: "decline"})
	_, c1 := del(1)
	m := a.fails("block", c1, "confirmation_declined")
	if m["cancelled"] != false || asked.Load() != 2 {
		t.Fatalf("declined: %v", m)
	}
	reply.Store(&sdk.ElicitResult{Action: "cancel"})
	if m := a.fails("block", c1, "confirmation_cancelled"); m["cancelled"] != true {
		t.Fatalf("cancelled: %v", m)
	}

	// Without forms: the legacy convention.
	plain := connect(t, s.url, "2025-11-25")
	plain.fails("block", c1, "confirmation_required")
	plain.fails("block", with(c1, "confirm", false), "confirmation_declined")
	if res := plain.ok("block", with(c1, "confirm", true)); res["status"] != "committed" {
		t.Fatalf("confirm:true: %v", res)
	}
}

// TestFrontConfirmsBeforeDelegating: stdio (a front) asks its own client,
// then sends the confirmed call to the authority, which takes it on the
// internal hop.
func TestFrontConfirmsBeforeDelegating(t *testing.T) {
	t.Parallel()
	state, ws := t.TempDir(), t.TempDir()
	s := startServeWith(t, "--embedded", ws, "--state-dir", state)
	s.config(t, "enable", "block.delete")
	var asked atomic.Int32
	var reply atomic.Value
	reply.Store(&sdk.ElicitResult{Action: "decline"})
	client := sdk.NewClient(&sdk.Implementation{Name: "desktop", Version: "1"}, &sdk.ClientOptions{
		ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			asked.Add(1)
			return reply.Load().(*sdk.ElicitResult), nil
		}})
	cmd := exec.Command(bin, "stdio", "--embedded", ws, "--state-dir", state)
	cmd.Stderr = io.Discard
	cs, err := client.Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	a := &agent{t: t, cs: cs}
	_, para := firstParagraph(a)
	del := map[string]any{"action": "delete", "id": para}
	c := commitOf(del, a.ok("block", with(del, "validateOnly", true)))
	a.fails("block", c, "confirmation_declined")
	if asked.Load() != 1 {
		t.Fatalf("asked %d times", asked.Load())
	}
	reply.Store(&sdk.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}})
	if res := a.ok("block", c); res["status"] != "committed" || asked.Load() != 2 {
		t.Fatalf("a confirmed delegated delete: %v (asked %d)", res, asked.Load())
	}
}

// TestCallConfirmation: sisyphus call is run by the person; without a
// terminal to ask on, a dangerous call needs --yes.
func TestCallConfirmation(t *testing.T) {
	t.Parallel()
	state, ws := t.TempDir(), t.TempDir()
	s := startServeWith(t, "--embedded", ws, "--state-dir", state)
	s.config(t, "enable", "block.delete")
	a := connect(t, s.url, "2025-11-25")
	_, para := firstParagraph(a)
	front := []string{"--embedded", ws, "--state-dir", state}
	del := map[string]any{"action": "delete", "id": para}
	pre, _ := cli(t, "block", with(del, "validateOnly", true), front...)
	c := commitOf(del, pre)
	m, code := cli(t, "block", c, front...)
	e, _ := m["error"].(map[string]any)
	if code == 0 || errCodeOf(m) != "confirmation_required" || !strings.Contains(fmt.Sprint(e["action"]), "--yes") {
		t.Fatalf("no terminal, no --yes: %d %v", code, m)
	}
	// confirm:true in the arguments is not the person's --yes.
	if m, _ := cli(t, "block", with(c, "confirm", true), front...); errCodeOf(m) != "confirmation_required" {
		t.Fatalf("confirm:true without --yes: %v", m)
	}
	if m, code := cli(t, "block", c, append(front, "--yes")...); code != 0 || m["status"] != "committed" {
		t.Fatalf("--yes: %d %v", code, m)
	}
}
