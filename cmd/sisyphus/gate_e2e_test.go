package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The gate through the built binary: notebook permissions for every class
// of action at every level, preflight and commit; tool switches reaching
// agents' tool lists; configuration migrated from the upstream plugin.

// TestPermissionMatrix: each class of action against each level, the
// preflight and the commit; a level lowered between preflight and commit
// refuses the commit (the permission is read when the call runs).
func TestPermissionMatrix(t *testing.T) {
	t.Parallel()
	s := startServeWith(t, "--embedded", t.TempDir(), "--state-dir", t.TempDir())
	s.config(t, "enable", "block.delete")
	a := connect(t, s.url, "2026-07-28")
	nb := a.ok("notebook", map[string]any{"action": "list"})["notebooks"].([]any)[0].(map[string]any)["id"].(string)
	doc, _ := firstParagraph(a)
	var blocks []string
	for _, k := range a.ok("block", map[string]any{"action": "get_children", "id": doc})["data"].([]any) {
		blocks = append(blocks, k.(map[string]any)["id"].(string))
	}
	kids := func() []string { return blocks }
	type class struct {
		name string
		need string // the lowest level that allows it
		args func() map[string]any
		tool string
	}
	classes := []class{
		{"read", "r", func() map[string]any { return map[string]any{"action": "get_kramdown", "id": kids()[0]} }, "block"},
		{"additive write", "rw", func() map[string]any { return map[string]any{"action": "append", "parentID": doc, "data": "added"} }, "block"},
		{"guarded write", "rw", func() map[string]any { return map[string]any{"action": "update", "id": kids()[0], "data": "updated"} }, "block"},
		{"structure write", "rw", func() map[string]any {
			ids := kids()
			return map[string]any{"action": "move", "id": ids[1], "parentID": doc}
		}, "block"},
		{"delete", "rwd", func() map[string]any { ids := kids(); return map[string]any{"action": "delete", "id": ids[len(ids)-1]} }, "block"},
		{"external", "none", func() map[string]any { return map[string]any{"action": "notify", "msg": "hello"} }, "system"},
	}
	order := []string{"none", "r", "rw", "rwd"}
	rank := func(l string) int { return slices.Index(order, l) }
	for _, level := range order {
		s.config(t, "permission", nb, level)
		for _, c := range classes {
			args := c.args()
			allowed := rank(level) >= rank(c.need)
			if level == "none" && c.name != "external" {
				// Hidden: the answer of a block that does not exist.
				if c.name != "read" {
					args = with(args, "validateOnly", true)
				}
				hidden, missing := asMissing(a, c.tool, args)
				if hidden != missing || !strings.Contains(hidden, `"not_found"`) {
					t.Errorf("%s in a hidden notebook answers\n  %s\nfor a block that does not exist\n  %s", c.name, hidden, missing)
				}
				continue
			}
			if c.name == "read" || c.name == "external" {
				m, isErr := a.call(c.tool, args)
				if allowed == isErr {
					t.Errorf("%s at %s: %v", c.name, level, m)
				}
				if !allowed && errCodeOf(m) != "permission_denied" {
					t.Errorf("%s at %s: %v", c.name, level, m)
				}
				continue
			}
			m, isErr := a.call(c.tool, with(args, "validateOnly", true))
			if !allowed {
				if !isErr || errCodeOf(m) != "permission_denied" || m["writeAttempted"] != false {
					t.Errorf("%s preflight at %s: %v", c.name, level, m)
				}
				e := m["error"].(map[string]any)
				if e["notebook"] != nb || e["permission"] != level || e["requiredPermission"] != c.need {
					t.Errorf("%s at %s: refusal details %v", c.name, level, e)
				}
				continue
			}
			if isErr {
				t.Errorf("%s preflight at %s: %v", c.name, level, m)
				continue
			}
			commit := commitOf(args, m)
			if c.name == "delete" || c.name == "structure write" {
				commit["confirm"] = true
			}
			if res, isErr := a.call(c.tool, commit); isErr || res["status"] != "committed" && res["status"] != "no_change" {
				t.Errorf("%s commit at %s: %v", c.name, level, res)
			}
		}
	}
	// Preflighted at rwd, committed after the level dropped to r.
	s.config(t, "permission", nb, "rwd")
	upd := map[string]any{"action": "update", "id": kids()[0], "data": "late"}
	pre := a.ok("block", with(upd, "validateOnly", true))
	s.config(t, "permission", nb, "r")
	a.fails("block", commitOf(upd, pre), "permission_denied")
	if kd := a.ok("block", map[string]any{"action": "get_kramdown", "id": kids()[0]})["kramdown"].(string); strings.HasPrefix(kd, "late") {
		t.Fatal("a commit refused by permission wrote")
	}
	// Hidden: the notebook leaves every listing, raw SQL is refused.
	s.config(t, "permission", nb, "none")
	if l := a.ok("notebook", map[string]any{"action": "list"}); strings.Contains(fmt.Sprint(l), nb) {
		t.Fatalf("a hidden notebook is listed: %v", l)
	}
	if m, isErr := a.call("search", map[string]any{"action": "query_sql", "stmt": "SELECT id FROM blocks LIMIT 1"}); !isErr || errCodeOf(m) != "permission_denied" {
		t.Fatalf("raw SQL with a hidden notebook: %v", m)
	}
}

// TestConfigChangesReachAgents: a switch changed with sisyphus config, or
// in the stored file by anyone, reaches connected agents as
// tools/list_changed, their tool list and their calls; a retained task
// result answers access_changed without its body.
func TestConfigChangesReachAgents(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	s := startServeWith(t, "--embedded", ws, "--state-dir", t.TempDir())
	base := strings.TrimSuffix(s.url, "/mcp")
	var changes atomic.Int32
	a := connectWith(t, s.url, "2025-11-25", "watcher", &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changes.Add(1) }})
	cs := a.cs
	_, para := firstParagraph(a)

	// A read kept by task control.
	const task = "7e1f0c2a-2222-4333-8444-555566667777"
	if st, body := modernCall(context.Background(), &http.Client{}, base, "block", map[string]any{"action": "get_kramdown", "id": para}, task); st != http.StatusOK {
		t.Fatalf("task call: %d %s", st, body)
	}

	waitChange := func(what string, from int32) {
		t.Helper()
		for deadline := time.Now().Add(8 * time.Second); changes.Load() == from; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no tools/list_changed after %s", what)
			}
		}
	}
	actions := func(tool string) []string {
		t.Helper()
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range res.Tools {
			if tl.Name == tool {
				b, _ := tl.InputSchema.(map[string]any)
				enum := b["properties"].(map[string]any)["action"].(map[string]any)["enum"].([]any)
				var out []string
				for _, e := range enum {
					out = append(out, e.(string))
				}
				return out
			}
		}
		return nil
	}
	if !slices.Contains(actions("block"), "update") || slices.Contains(actions("block"), "delete") {
		t.Fatalf("default block actions: %v", actions("block"))
	}
	n := changes.Load()
	s.config(t, "disable", "block.update")
	waitChange("disable block.update", n)
	if slices.Contains(actions("block"), "update") {
		t.Fatalf("a disabled action is still listed: %v", actions("block"))
	}
	a.fails("block", map[string]any{"action": "update", "id": para, "data": "x", "validateOnly": true}, "action_disabled")

	n = changes.Load()
	s.config(t, "disable", "search")
	waitChange("disable search", n)
	if actions("search") != nil {
		t.Fatal("a disabled tool is still listed")
	}
	if m, isErr := a.call("search", map[string]any{"action": "fulltext", "query": "x"}); !isErr || errCodeOf(m) != "action_disabled" {
		t.Fatalf("a call to a disabled tool: %v", m)
	}

	// The task's body is not disclosed under the new configuration.
	var rep struct {
		Found  bool
		Result any
		Error  *struct{ Code string }
	}
	if err := json.Unmarshal(taskQuery(t, base, task, "result"), &rep); err != nil {
		t.Fatal(err)
	}
	if !rep.Found || rep.Error == nil || rep.Error.Code != "access_changed" || rep.Result != nil {
		t.Fatalf("task result after a change: %+v", rep)
	}

	// A change made to the stored file by someone else (the upstream
	// plugin, a person's editor) reaches the list within the server's poll.
	n = changes.Load()
	p := filepath.Join(ws, "data", "storage", "petal", "siyuan-plugins-mcp-sisyphus", "mcpToolsConfig")
	if err := os.WriteFile(p, []byte(`{"search": {"enabled": true}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	waitChange("an edit of the stored file", n)
	if actions("search") == nil || !slices.Contains(actions("block"), "update") {
		t.Fatalf("after the file edit: search %v, block %v", actions("search"), actions("block"))
	}
}

// TestUpstreamConfigurationMigrates: a workspace configured by the upstream
// plugin, legacy values included, is served as the plugin served it.
func TestUpstreamConfigurationMigrates(t *testing.T) {
	t.Parallel()
	ws, state := t.TempDir(), t.TempDir()
	// Boot once to seed the demo, then stop and configure as the plugin did.
	first := startServeWith(t, "--embedded", ws, "--state-dir", state)
	a := connect(t, first.url, "2025-11-25")
	demo := a.ok("notebook", map[string]any{"action": "list"})["notebooks"].([]any)[0].(map[string]any)["id"].(string)
	doc, para := firstParagraph(a)
	stopServe(t, first)
	dir := filepath.Join(ws, "data", "storage", "petal", "siyuan-plugins-mcp-sisyphus")
	if err := os.WriteFile(filepath.Join(dir, "notebookPermissions"), []byte(`{"`+demo+`": "readonly"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mcpToolsConfig"), []byte(`{"block": {"enabled": true, "actions": {"get_kramdown": false}},
		"writeSafety": {"strictMode": true}, "userRulesText": "kept"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServeWith(t, "--embedded", ws, "--state-dir", state)
	b := connect(t, s.url, "2025-11-25")
	if p := b.ok("notebook", map[string]any{"action": "list"})["notebooks"].([]any)[0].(map[string]any)["permission"]; p != "r" {
		t.Fatalf("readonly must read as r: %v", p)
	}
	b.fails("block", map[string]any{"action": "update", "id": para, "data": "x", "validateOnly": true}, "permission_denied")
	if m, isErr := b.call("block", map[string]any{"action": "get_kramdown", "id": para}); !isErr || errCodeOf(m) != "action_disabled" {
		t.Fatalf("an action the plugin disabled: %v", m)
	}
	b.ok("document", map[string]any{"action": "get_doc", "id": doc})
	out := s.config(t, "show")
	if !strings.Contains(out, demo) {
		t.Fatalf("config show: %s", out)
	}
	// A change stores the legacy value migrated and keeps the plugin's keys.
	s.config(t, "permission", demo, "rw")
	perms, _ := os.ReadFile(filepath.Join(dir, "notebookPermissions"))
	if !strings.Contains(string(perms), `"rw"`) || strings.Contains(string(perms), "readonly") {
		t.Fatalf("stored permissions: %s", perms)
	}
	s.config(t, "enable", "block.get_kramdown")
	tc, _ := os.ReadFile(filepath.Join(dir, "mcpToolsConfig"))
	if !strings.Contains(string(tc), `"userRulesText": "kept"`) {
		t.Fatalf("the plugin's keys were not kept: %s", tc)
	}
	b.ok("block", map[string]any{"action": "get_kramdown", "id": para})
}

// taskQuery asks the authority's task control about a task.
func taskQuery(t *testing.T, base, task, op string) []byte {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/tasks", strings.NewReader(`{"taskId":"`+task+`","operation":"`+op+`"}`))
	req.Header.Set("Authorization", "Bearer sekret")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return data
}
