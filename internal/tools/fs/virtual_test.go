package fs

import (
	"context"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/settings"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

func TestFsVirtualMemory(t *testing.T) {
	s := newStrictFixture(t, false)
	ctx := context.Background()

	// Empty at first: read answers no text, ls / lists both virtual files first.
	if r := s.OK(t, "fs", map[string]any{"action": "read", "path": "/AGENTS.md"}); r["content"] != "" || r["virtual"] != true || r["updatedAt"] != nil || r["readOnly"] != false {
		t.Fatalf("empty memory: %v", r)
	}
	root := s.OK(t, "fs", map[string]any{"action": "ls", "path": "/"})
	if got := names(t, root); len(got) < 3 || got[0] != "AGENTS.md" || got[1] != "USER_RULES.md" {
		t.Fatalf("ls /: %v", got)
	}
	if e := root["data"].([]any)[1].(map[string]any); e["virtual"] != true || e["readOnly"] != true || e["path"] != "/USER_RULES.md" {
		t.Fatalf("ls / rules entry: %v", e)
	}
	// rm of an empty memory: not_found at preflight.
	s.WantErr(t, "fs", map[string]any{"action": "rm", "path": "/AGENTS.md", "validateOnly": true, "confirm": true}, failure.NotFound)

	// Create (additive), then a second create is refused: it exists.
	create := map[string]any{"action": "write", "path": "/AGENTS.md", "content": "# Memory\n\nuser prefers short answers"}
	pre := s.Preflight(t, "fs", create, "", 1)
	res := s.Commit(t, "fs", create, pre)
	if res["virtual"] != true || res["path"] != "/AGENTS.md" {
		t.Fatalf("create memory: %v", res)
	}
	s.Replay(t, "fs", create, pre, res)
	cfg, err := settings.NewStore(s.C).Load(ctx)
	if err != nil || cfg.AgentMemory() != "# Memory\n\nuser prefers short answers" || cfg.AgentMemoryUpdatedAt() == "" {
		t.Fatalf("stored memory: %q %q %v", cfg.AgentMemory(), cfg.AgentMemoryUpdatedAt(), err)
	}
	s.InvalidAt(t, "fs", create, false)
	r := s.OK(t, "fs", map[string]any{"action": "read", "path": "/AGENTS.md", "blockLimit": 1})
	if r["content"] != "# Memory" || r["totalBlocks"] != float64(2) || r["updatedAt"] == nil || r["nextWindow"].(map[string]any)["path"] != "/AGENTS.md" {
		t.Fatalf("read memory window: %v", r)
	}

	// Overwrite is guarded by the text's hash: drift is state_changed.
	over := map[string]any{"action": "write", "path": "/AGENTS.md", "content": "new memory", "overwrite": true}
	pre = s.Preflight(t, "fs", over, "expectedStateHash", 1)
	s.Drifted(t, "fs", over, pre, func() {
		text := "changed elsewhere"
		if _, err := settings.NewStore(s.C).Apply(ctx, settings.Change{AgentMemory: &text}); err != nil {
			t.Fatal(err)
		}
	})
	pre = s.Preflight(t, "fs", over, "expectedStateHash", 1)
	s.Commit(t, "fs", over, pre)

	// replace: exact edits on the text; zero and ambiguous matches refused.
	rep := map[string]any{"action": "replace", "path": "/AGENTS.md", "edit": map[string]any{"old": "new", "new": "kept"}}
	pre = s.Preflight(t, "fs", rep, "expectedManifestHash", 1)
	res = s.Commit(t, "fs", rep, pre)
	if got := s.OK(t, "fs", map[string]any{"action": "read", "path": "/AGENTS.md"})["content"]; got != "kept memory" {
		t.Fatalf("after replace: %q (%v)", got, res)
	}
	s.InvalidAt(t, "fs", map[string]any{"action": "replace", "path": "/AGENTS.md", "old": "absent", "new": "x"}, false)
	s.InvalidAt(t, "fs", map[string]any{"action": "replace", "path": "/AGENTS.md", "old": "e", "new": "x"}, false)
	all := map[string]any{"action": "replace", "path": "/AGENTS.md", "old": "e", "new": "E", "replace_all": true}
	pre = s.Preflight(t, "fs", all, "expectedManifestHash", 1)
	s.Commit(t, "fs", all, pre)

	// search finds it, alone and from /.
	if m := s.OK(t, "fs", map[string]any{"action": "search", "path": "/AGENTS.md", "query": "kEpt"}); m["total"] != float64(1) {
		t.Fatalf("search memory: %v", m)
	}
	if m := s.OK(t, "fs", map[string]any{"action": "search", "path": "/", "query": "kEpt", "caseSensitive": true}); m["total"] != float64(1) ||
		m["data"].([]any)[0].(map[string]any)["path"] != "/AGENTS.md" {
		t.Fatalf("search /: %v", m)
	}

	// mv is refused either way; tree shows it without children.
	s.InvalidAt(t, "fs", map[string]any{"action": "mv", "from": "/AGENTS.md", "to": "/Strict/Memory", "confirm": true}, false)
	s.InvalidAt(t, "fs", map[string]any{"action": "mv", "from": "/Strict/Doc", "to": "/AGENTS.md", "confirm": true}, false)
	s.WantErr(t, "fs", map[string]any{"action": "ls", "path": "/AGENTS.md"}, failure.InvalidArguments)
	s.WantErr(t, "fs", map[string]any{"action": "read", "path": "/AGENTS.md/child"}, failure.InvalidArguments)
	if tr := s.OK(t, "fs", map[string]any{"action": "tree", "path": "/AGENTS.md"}); tr["virtual"] != true || len(tr["tree"].([]any)) != 0 {
		t.Fatalf("tree of the memory: %v", tr)
	}

	// rm clears it (dangerous: confirmed).
	clear := map[string]any{"action": "rm", "path": "/AGENTS.md", "confirm": true}
	pre = s.Preflight(t, "fs", clear, "expectedStateHash", 1)
	if res := s.Commit(t, "fs", clear, pre); res["cleared"] != true {
		t.Fatalf("clear: %v", res)
	}
	if cfg, _ := settings.NewStore(s.C).Load(ctx); cfg.AgentMemory() != "" || cfg.AgentMemoryUpdatedAt() != "" {
		t.Fatalf("after clear: %q %q", cfg.AgentMemory(), cfg.AgentMemoryUpdatedAt())
	}

	// The cap.
	s.InvalidAt(t, "fs", map[string]any{"action": "write", "path": "/AGENTS.md", "content": strings.Repeat("x", settings.MaxTextBytes+1)}, false)
}

func TestFsUserRulesReadOnly(t *testing.T) {
	s := newStrictFixture(t, false)
	rules := "always answer in English\n\nnever delete notebooks"
	if _, err := settings.NewStore(s.C).Apply(context.Background(), settings.Change{UserRules: &rules}); err != nil {
		t.Fatal(err)
	}
	r := s.OK(t, "fs", map[string]any{"action": "read", "path": "/USER_RULES.md"})
	if r["content"] != rules || r["readOnly"] != true || r["totalBlocks"] != float64(2) {
		t.Fatalf("read rules: %v", r)
	}
	for _, args := range []map[string]any{
		{"action": "write", "path": "/USER_RULES.md", "content": "x", "overwrite": true},
		{"action": "write", "path": "/USER_RULES.md", "content": "x"},
		{"action": "replace", "path": "/USER_RULES.md", "old": "English", "new": "French"},
		{"action": "rm", "path": "/USER_RULES.md", "confirm": true},
	} {
		for _, vo := range []bool{true, false} {
			e := s.WantErr(t, "fs", tooltest.CopyArgs(args, "validateOnly", vo), failure.PermissionDenied)
			if e.WriteAttempted == nil || *e.WriteAttempted {
				t.Fatalf("%v: writeAttempted %v", args, e.WriteAttempted)
			}
		}
	}
	s.WantErr(t, "fs", map[string]any{"action": "mv", "from": "/USER_RULES.md", "to": "/Strict/R", "confirm": true}, failure.InvalidArguments)
	if m := s.OK(t, "fs", map[string]any{"action": "search", "path": "/USER_RULES.md", "query": "never"}); m["total"] != float64(1) ||
		m["data"].([]any)[0].(map[string]any)["line"] != float64(3) {
		t.Fatalf("search rules: %v", m)
	}
}

// A notebook literally named AGENTS.md is shadowed: /AGENTS.md stays the
// memory, ls and tree mark the notebook, paths under it are refused.
func TestFsShadowedNotebook(t *testing.T) {
	s := newStrictFixture(t, false)
	nb, _ := s.fsNotebook(t, "AGENTS.md", "/Inside")
	root := s.OK(t, "fs", map[string]any{"action": "ls", "path": "/"})
	found := false
	for _, e := range root["data"].([]any) {
		if m := e.(map[string]any); m["id"] == nb {
			found = m["shadowed"] == true
		}
	}
	if !found {
		t.Fatalf("ls / does not mark the shadowed notebook: %v", root)
	}
	if r := s.OK(t, "fs", map[string]any{"action": "read", "path": "/AGENTS.md"}); r["virtual"] != true {
		t.Fatalf("/AGENTS.md is not the memory: %v", r)
	}
	s.WantErr(t, "fs", map[string]any{"action": "read", "path": "/AGENTS.md/Inside"}, failure.InvalidArguments)
	if m := s.OK(t, "fs", map[string]any{"action": "search", "path": "/", "query": "text of"}); m["shadowedNotebooks"] == nil {
		t.Fatalf("search / does not report the shadowed notebook: %v", m)
	}
}

func TestTextBlocks(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"", 0}, {"one", 1}, {"a\n\nb", 2}, {"a\n\n\n\nb\nc", 2}, {"```\na\n\nb\n```\n\nc", 2}, {"~~~\n\n~~~", 1},
	} {
		if got := textBlocks(tc.in); len(got) != tc.want {
			t.Errorf("textBlocks(%q) = %q, want %d blocks", tc.in, got, tc.want)
		}
	}
}

// fs.write takes the body as markdown (upstream's name) or content.
func TestFsWriteBodyNames(t *testing.T) {
	s := newStrictFixture(t, false)
	_, res := s.strictOK(t, map[string]any{"action": "write", "path": "/Strict/Upstream", "markdown": "upstream body"})
	if id, _ := res["id"].(string); id == "" || s.body(t, id) != "upstream body" {
		t.Fatalf("write with markdown: %v", res)
	}
	for _, bad := range []map[string]any{
		{"action": "write", "path": "/Strict/Both", "markdown": "a", "content": "a"},
		{"action": "write", "path": "/Strict/Neither"},
	} {
		s.WantErr(t, "fs", tooltest.CopyArgs(bad, "validateOnly", true), failure.InvalidArguments)
	}
}
