package tplfile

import (
	"strings"
	"testing"
)

func TestWorkspaceRoot(t *testing.T) {
	for _, c := range []struct {
		abs, rel, root, sep string
	}{
		{"/home/me/SiYuan/data/templates/daily.md", "templates/daily.md", "/home/me/SiYuan/", "/"},
		{"/ws/data/templates/work/weekly.md", "templates/work/weekly.md", "/ws/", "/"},
		{`C:\Users\me\SiYuan\data\templates\daily.md`, "templates/daily.md", `C:\Users\me\SiYuan\`, `\`},
		{`C:\Users\me\SiYuan\data\templates\work\weekly.md`, "templates/work/weekly.md", `C:\Users\me\SiYuan\`, `\`},
		{"/ws/data/templates/other.md", "templates/daily.md", "", ""},
		{"/ws/xdata/templates/daily.md", "templates/daily.md", "", ""},
		{"data/templates/daily.md", "templates/daily.md", "", ""},
		{"", "templates/daily.md", "", ""},
	} {
		root, sep, err := WorkspaceRoot(c.abs, c.rel)
		if root != c.root || sep != c.sep || (err == nil) != (c.root != "") {
			t.Errorf("WorkspaceRoot(%q, %q) = %q, %q, %v; want %q, %q", c.abs, c.rel, root, sep, err, c.root, c.sep)
		}
	}
}

// FuzzWorkspaceRoot: whatever path SiYuan answers for a template, the
// workspace found is its prefix ending with a separator, and what follows
// is data/<the template> in either separator; anything else is refused.
func FuzzWorkspaceRoot(f *testing.F) {
	f.Add("/home/me/SiYuan/data/templates/daily.md", "templates/daily.md")
	f.Add(`C:\ws\data\templates\work\weekly.md`, "templates/work/weekly.md")
	f.Add("/data/templates/daily.md", "templates/daily.md")
	f.Add("x", "")
	f.Fuzz(func(t *testing.T, abs, rel string) {
		root, sep, err := WorkspaceRoot(abs, rel)
		if err != nil {
			if root != "" || sep != "" {
				t.Fatalf("refused with %q, %q", root, sep)
			}
			return
		}
		if sep != "/" && sep != `\` || !strings.HasSuffix(root, sep) || len(root) < 2 || !strings.HasPrefix(abs, root) ||
			strings.ReplaceAll(abs[len(root):], `\`, "/") != "data/"+rel {
			t.Fatalf("WorkspaceRoot(%q, %q) = %q, %q", abs, rel, root, sep)
		}
	})
}
