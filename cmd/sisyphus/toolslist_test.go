package main

import (
	"encoding/json"
	"os"
	"sort"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/testvars"
)

// upstreamToolsList is the upstream Sisyphus's tools/list answer for the
// same tools and actions as ours (every action enabled, strict mode on),
// measured with scripts/tools-list-size on upstream commit 88b0f38 (the
// actions it has of ours: not the av view, column and relation actions,
// document.ensure_link_targets, the newer extension and file actions, nor
// our system.version alias); rerun it when actions are added and update
// the figures.
var upstreamToolsList = struct {
	bytes   int
	perTool map[string]int
}{
	bytes: 119463,
	perTool: map[string]int{"fs": 8117, "notebook": 6527, "document": 12229, "block": 11207, "av": 16554,
		"file": 9999, "search": 15349, "tag": 4547, "system": 9845, "flashcard": 6521, "extension": 3961, "feedback": 4630,
		"timeline": 6110, "mascot": 3766},
}

// TestToolsListSize: with every tool and action enabled (off-by-default
// ones too) and strict mode on, the tools/list answer a model reads is no
// larger than upstream's for the same tools, each tool included.
// SISYPHUS_TOOLS_LIST_OUT names a file to write the measurement to (bytes,
// tokens estimated as bytes/4, per tool, the actions).
func TestToolsListSize(t *testing.T) {
	t.Parallel()
	k := startKernel(t, t.TempDir())
	s := startServeWith(t, "--siyuan-url", k.url, "--siyuan-token", "tok", "--state-dir", t.TempDir())
	var conf struct {
		Tools []struct {
			Name    string `json:"name"`
			Actions []struct {
				Name    string `json:"name"`
				Enabled bool   `json:"enabled"`
			} `json:"actions"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(s.config(t, "show", "--json")), &conf); err != nil {
		t.Fatal(err)
	}
	actions := map[string][]string{}
	for _, tool := range conf.Tools {
		for _, a := range tool.Actions {
			if !a.Enabled {
				s.config(t, "enable", tool.Name+"."+a.Name)
			}
			actions[tool.Name] = append(actions[tool.Name], a.Name)
		}
	}
	m := newRawMCP(t, s.url)
	m.next++
	raw := m.post(map[string]any{"jsonrpc": "2.0", "id": m.next, "method": "tools/list"})
	var env struct {
		Result struct {
			Tools []json.RawMessage `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(raw, &env); err != nil || len(env.Result.Tools) != len(conf.Tools) {
		t.Fatalf("tools/list: %d tools (want %d), %v: %.200s", len(env.Result.Tools), len(conf.Tools), err, raw)
	}
	perTool := map[string]int{}
	for _, tl := range env.Result.Tools {
		var head struct {
			Name        string `json:"name"`
			InputSchema struct {
				Properties struct {
					Action struct {
						Enum []string `json:"enum"`
					} `json:"action"`
				} `json:"properties"`
			} `json:"inputSchema"`
		}
		if err := json.Unmarshal(tl, &head); err != nil {
			t.Fatal(err)
		}
		if n := len(head.InputSchema.Properties.Action.Enum); n != len(actions[head.Name])+1 {
			t.Errorf("%s lists %d actions with help, want every one of %d", head.Name, n, len(actions[head.Name])+1)
		}
		perTool[head.Name] = len(tl)
	}
	names := make([]string, 0, len(perTool))
	for n := range perTool {
		names = append(names, n)
	}
	sort.Strings(names)
	total := 0
	for _, n := range actions {
		total += len(n)
	}
	t.Logf("tools/list with everything enabled: %d bytes (~%d tokens at 4 bytes a token), %d tools, %d actions", len(raw), len(raw)/4, len(perTool), total)
	for _, n := range names {
		t.Logf("  %-10s %6d bytes  %2d actions", n, perTool[n], len(actions[n]))
	}
	if out := testvars.ToolsListOut.Value(); out != "" {
		b, _ := json.MarshalIndent(map[string]any{"bytes": len(raw), "tokens": len(raw) / 4, "perTool": perTool, "actions": actions}, "", "  ")
		if err := os.WriteFile(out, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if len(raw) > upstreamToolsList.bytes {
		t.Errorf("tools/list is %d bytes, upstream's for the same tools %d", len(raw), upstreamToolsList.bytes)
	}
	for n, b := range perTool {
		if up, ok := upstreamToolsList.perTool[n]; ok && b > up {
			t.Errorf("%s is %d bytes in tools/list, upstream's %d", n, b, up)
		}
	}
}
