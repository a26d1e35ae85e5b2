package tools

import (
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
)

func TestMigrateLevel(t *testing.T) {
	for _, c := range []struct {
		in   any
		want Level
	}{
		{"none", LevelNone}, {"r", LevelRead}, {"rw", LevelWrite}, {"rwd", LevelDelete},
		{"readonly", LevelRead}, {"write", LevelWrite},
		{"RW", LevelNone}, {"admin", LevelNone}, {"", LevelNone}, {7, LevelNone}, {nil, LevelNone}, {true, LevelNone},
	} {
		if got := MigrateLevel(c.in); got != c.want {
			t.Errorf("MigrateLevel(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

// TestCheckWorkspacePath: no spelling of a path reaches the configuration
// folder.
func TestCheckWorkspacePath(t *testing.T) {
	for _, c := range []struct {
		path string
		ok   bool
	}{
		{"/data/assets/x.png", true},
		{"/data/storage/petal/other-plugin/x", true},
		{"/data/storage/petal/siyuan-plugins-mcp-sisyphus-other/x", true},
		{"/data/storage/petal/siyuan-plugins-mcp-sisyphus", false},
		{"/data/storage/petal/siyuan-plugins-mcp-sisyphus/notebookPermissions", false},
		{"data/storage/petal/siyuan-plugins-mcp-sisyphus/mcpToolsConfig", false},
		{"//data//storage/petal/./siyuan-plugins-mcp-sisyphus/x", false},
		{"/data/assets/../storage/petal/siyuan-plugins-mcp-sisyphus/x", false},
		{"/data/storage/petal/SIYUAN-PLUGINS-MCP-SISYPHUS/x", false},
		{"/../../data/storage/petal/siyuan-plugins-mcp-sisyphus/", false},
	} {
		err := CheckWorkspacePath("path", c.path)
		if (err == nil) != c.ok {
			t.Errorf("%q: %v, want ok=%v", c.path, err, c.ok)
		}
		if fe, isFailure := err.(*failure.Error); err != nil && (!isFailure || fe.Code != failure.PermissionDenied) {
			t.Errorf("%q: %v", c.path, err)
		}
	}
}

// TestGoneNotebooks: a hidden notebook SiYuan no longer has counts neither
// in Hides nor in the gate's floor, and stays hidden itself.
func TestGoneNotebooks(t *testing.T) {
	const a, b = "20260101000000-aaaaaaa", "20260101000000-bbbbbbb"
	read := []Touch{OnBlock(b, LevelRead)}
	for _, c := range []struct {
		name   string
		p      Policy
		hides  bool
		lookup bool // a read touch needs the gate's lookups
	}{
		{"open", Policy{Default: LevelRead}, false, false},
		{"hidden", Policy{Default: LevelRead, Notebooks: map[string]Level{a: LevelNone}}, true, true},
		{"gone", Policy{Default: LevelRead, Notebooks: map[string]Level{a: LevelNone}, Gone: map[string]bool{a: true}}, false, false},
		{"one of two gone", Policy{Default: LevelRead, Notebooks: map[string]Level{a: LevelNone, b: LevelNone}, Gone: map[string]bool{a: true}}, true, true},
		{"gone, default none", Policy{Default: LevelNone, Notebooks: map[string]Level{a: LevelNone}, Gone: map[string]bool{a: true}}, true, true},
		{"gone at r", Policy{Default: LevelWrite, Notebooks: map[string]Level{a: LevelRead}, Gone: map[string]bool{a: true}}, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.p.Hides(); got != c.hides {
				t.Errorf("Hides() = %v, want %v", got, c.hides)
			}
			if got := needsLookup(&c.p, read); got != c.lookup {
				t.Errorf("needsLookup(read) = %v, want %v", got, c.lookup)
			}
			if l, ok := c.p.Notebooks[a]; ok && c.p.Level(a) != l {
				t.Errorf("Level(a) = %v, want its entry %v", c.p.Level(a), l)
			}
		})
	}
}
