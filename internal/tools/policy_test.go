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
