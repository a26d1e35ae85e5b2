package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestCallsAndListAgreeE2E: the tools file edited on disk behind the
// authority's back reaches tools/list and a call's gate together. The
// agent observes list, call, list until the edit shows; whenever both
// lists show the same configuration, the call between them (which read the
// configuration between the two) must show it too.
func TestCallsAndListAgreeE2E(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	s := startServeWith(t, "--embedded", ws, "--state-dir", t.TempDir())
	a := connect(t, s.url, "2025-11-25")
	file := filepath.Join(ws, "data", "storage", "petal", "siyuan-plugins-mcp-sisyphus", "mcpToolsConfig")
	listed := func() bool {
		res, err := a.cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range res.Tools {
			if tl.Name == "tag" {
				enum, _ := tl.InputSchema.(map[string]any)["properties"].(map[string]any)["action"].(map[string]any)["enum"].([]any)
				return slices.Contains(enum, any("list"))
			}
		}
		return false
	}
	called := func() bool {
		m, isErr := a.call("tag", map[string]any{"action": "list"})
		code := errCodeOf(m)
		return !isErr || code != "action_disabled" && code != "invalid_arguments"
	}
	for _, step := range []struct {
		name, body string
		on         bool
	}{
		{"tag off", `{"tag":{"enabled":false}}`, false},
		{"tag.list off", `{"tag":{"actions":{"list":false}}}`, false},
		{"the defaults", `{}`, true},
		{"tag off again", `{"tag":{"enabled":false}}`, false},
	} {
		if err := os.WriteFile(file, []byte(step.body), 0o644); err != nil {
			t.Fatal(err)
		}
		// A guard against a hang (the cache and the poll are 2 s), not a
		// measure: the assertion is that no observation disagrees.
		deadline := time.Now().Add(30 * time.Second)
		for agreedNew := false; !agreedNew; {
			before, c, after := listed(), called(), listed()
			if before == after && c != before {
				t.Fatalf("%s: tools/list offered tag.list: %v before and after a call whose gate said %v", step.name, before, c)
			}
			agreedNew = before == after && before == step.on
			if !agreedNew && time.Now().After(deadline) {
				t.Fatalf("%s: the edit never showed", step.name)
			}
		}
	}
}
