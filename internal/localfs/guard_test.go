package localfs

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
)

// tree is a person's home as an attacker finds it: an allowed folder
// holding the workspace, the state dir, hidden files and links that lead
// out of it.
type tree struct {
	root, home, work, ws, state, outside string
}

func mkTree(t testing.TB) tree {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tr := tree{root: root, home: filepath.Join(root, "home")}
	tr.work = filepath.Join(tr.home, "work")
	tr.ws = filepath.Join(tr.work, "SiYuan")
	tr.state = filepath.Join(tr.work, "state")
	tr.outside = filepath.Join(root, "outside")
	files := map[string]string{
		"home/.ssh/id_ed25519":            "private key",
		"home/work/a.png":                 "A",
		"home/work/sub/b.txt":             "B",
		"home/work/.env":                  "TOKEN=x",
		"home/work/SiYuan/conf/conf.json": `{"api":{"token":"siyuan-token"}}`,
		"home/work/state/token":           "bearer",
		"outside/x.txt":                   "X",
	}
	for p, data := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(tr.work, "dir"), 0o755)
	links := map[string]string{
		"to-key":       filepath.Join(tr.home, ".ssh", "id_ed25519"),
		"to-ssh":       filepath.Join(tr.home, ".ssh"),
		"to-conf":      filepath.Join(tr.ws, "conf", "conf.json"),
		"to-ws":        tr.ws,
		"to-token":     filepath.Join(tr.state, "token"),
		"to-outside":   filepath.Join(tr.outside, "x.txt"),
		"to-outdir":    tr.outside,
		"to-inside":    "a.png",
		"to-proc":      "/proc/self/environ",
		"dangling":     filepath.Join(root, "nowhere"),
		"relative-out": "../../outside/x.txt",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(tr.work, name)); err != nil {
			t.Skipf("no symbolic links here: %v", err)
		}
	}
	if err := os.Link(filepath.Join(tr.home, ".ssh", "id_ed25519"), filepath.Join(tr.work, "hard")); err != nil {
		t.Logf("no hard links here: %v", err)
	}
	if err := mkfifo(filepath.Join(tr.work, "fifo")); err != nil {
		t.Logf("no FIFO here: %v", err)
	}
	return tr
}

func (tr tree) guard(t testing.TB) *Guard {
	t.Helper()
	g, err := New(Rules{Allowed: []string{tr.work}, WorkDir: tr.work,
		Forbidden: []Place{{tr.state, "Sisyphus's state dir"}},
		Workspace: func(context.Context) (string, error) { return tr.ws, nil }})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func codeOf(err error) failure.Code {
	var fe *failure.Error
	if errors.As(err, &fe) {
		return fe.Code
	}
	if err != nil {
		return "untyped"
	}
	return ""
}

func TestOpen(t *testing.T) {
	tr := mkTree(t)
	g := tr.guard(t)
	for _, tt := range []struct {
		path string
		code failure.Code
		want string // the content read, when accepted
	}{
		{"a.png", "", "A"},
		{filepath.Join(tr.work, "sub", "b.txt"), "", "B"},
		{"to-inside", "", "A"},
		{"sub/b.txt", "", "B"},
		{"./sub/b.txt", "", "B"},
		{"to-key", failure.PathNotAllowed, ""},
		{"to-ssh/id_ed25519", failure.PathNotAllowed, ""},
		{"to-conf", failure.PathNotAllowed, ""},
		{"to-ws/conf/conf.json", failure.PathNotAllowed, ""},
		{"SiYuan/conf/conf.json", failure.PathNotAllowed, ""},
		{"to-token", failure.PathNotAllowed, ""},
		{"state/token", failure.PathNotAllowed, ""},
		{"to-outside", failure.PathNotAllowed, ""},
		{"to-outdir/x.txt", failure.PathNotAllowed, ""},
		{"relative-out", failure.PathNotAllowed, ""},
		{"to-proc", failure.PathNotAllowed, ""},
		{".env", failure.PathNotAllowed, ""},
		{"../.ssh/id_ed25519", failure.PathNotAllowed, ""},
		{"sub/../a.png", failure.PathNotAllowed, ""},
		{filepath.Join(tr.home, ".ssh", "id_ed25519"), failure.PathNotAllowed, ""},
		{filepath.Join(tr.outside, "x.txt"), failure.PathNotAllowed, ""},
		{"/proc/self/cmdline", failure.PathNotAllowed, ""},
		{"/etc/passwd", failure.PathNotAllowed, ""},
		{"dangling", failure.NotFound, ""},
		{"absent.png", failure.NotFound, ""},
		{"dir", failure.InvalidArguments, ""},
		{"", failure.InvalidArguments, ""},
	} {
		t.Run(tt.path, func(t *testing.T) {
			f, err := g.Open(context.Background(), tt.path)
			if codeOf(err) != tt.code {
				t.Fatalf("got %v, want %q", err, tt.code)
			}
			if err != nil {
				if strings.Contains(err.Error(), "private key") || strings.Contains(err.Error(), "siyuan-token") {
					t.Fatalf("a refusal shows content: %v", err)
				}
				return
			}
			defer f.Close()
			b, _ := io.ReadAll(f)
			if string(b) != tt.want || f.Size != int64(len(tt.want)) || !strings.HasPrefix(f.Path, tr.work+string(filepath.Separator)) {
				t.Fatalf("read %q from %s (%d bytes)", b, f.Path, f.Size)
			}
		})
	}
	if _, err := os.Lstat(filepath.Join(tr.work, "hard")); err == nil {
		if _, err := g.Open(context.Background(), "hard"); codeOf(err) != failure.PathNotAllowed {
			t.Fatalf("a hard link to a key: %v", err)
		}
	}
	if _, err := os.Lstat(filepath.Join(tr.work, "fifo")); err == nil {
		// Opening a FIFO for reading would wait for a writer: it must not.
		if _, err := g.Open(context.Background(), "fifo"); codeOf(err) != failure.InvalidArguments {
			t.Fatalf("a FIFO: %v", err)
		}
	}
}

// TestOpenCatchesASwap: the file opened is checked against the path decided
// on, so a link swapped in between is refused.
func TestOpenCatchesASwap(t *testing.T) {
	tr := mkTree(t)
	g := tr.guard(t)
	forbidden, err := g.places(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(tr.home, ".ssh", "id_ed25519")) // what a swapped link opened
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	decided := filepath.Join(tr.work, "a.png")
	if _, err := g.verify(f, "a.png", decided, decided, forbidden); codeOf(err) != failure.PathNotAllowed {
		t.Fatalf("a swapped file was accepted: %v", err)
	}
}

func TestWorkspaceMustBeKnown(t *testing.T) {
	tr := mkTree(t)
	calls := 0
	g, err := New(Rules{Allowed: []string{tr.work}, WorkDir: tr.work, Workspace: func(context.Context) (string, error) {
		calls++
		if calls == 1 {
			return "", errors.New("kernel unreachable")
		}
		return tr.ws, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Open(context.Background(), "a.png"); codeOf(err) != failure.PathNotAllowed || !strings.Contains(err.Error(), "workspace") {
		t.Fatalf("an unknown workspace: %v", err)
	}
	if _, err := g.Open(context.Background(), "SiYuan/conf/conf.json"); codeOf(err) != failure.PathNotAllowed {
		t.Fatalf("the workspace once known: %v", err)
	}
	f, err := g.Open(context.Background(), "a.png")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if calls != 2 {
		t.Fatalf("the workspace was asked %d times; it is kept once known", calls)
	}
	rel, _ := New(Rules{Allowed: []string{tr.work}, WorkDir: tr.work, Workspace: func(context.Context) (string, error) { return "SiYuan", nil }})
	if _, err := rel.Open(context.Background(), "a.png"); codeOf(err) != failure.PathNotAllowed {
		t.Fatalf("a relative workspace: %v", err)
	}
}

func TestDestination(t *testing.T) {
	tr := mkTree(t)
	g := tr.guard(t)
	for _, tt := range []struct {
		path string
		code failure.Code
		want string
	}{
		{"out.zip", "", filepath.Join(tr.work, "out.zip")},
		{"new/deeper/out.zip", "", filepath.Join(tr.work, "new", "deeper", "out.zip")},
		{filepath.Join(tr.work, "sub", "x"), "", filepath.Join(tr.work, "sub", "x")},
		{"a.png", failure.DestinationExists, ""},
		{"dangling", failure.DestinationExists, ""},
		{"to-key", failure.DestinationExists, ""},
		{"to-ssh/new", failure.PathNotAllowed, ""},
		{"to-outdir/new.zip", failure.PathNotAllowed, ""},
		{"to-ws/data/new.md", failure.PathNotAllowed, ""},
		{"SiYuan/new", failure.PathNotAllowed, ""},
		{"state/new", failure.PathNotAllowed, ""},
		{".hidden/x.zip", failure.PathNotAllowed, ""},
		{"new/.x", failure.PathNotAllowed, ""},
		{"../outside/new.zip", failure.PathNotAllowed, ""},
		{filepath.Join(tr.outside, "new.zip"), failure.PathNotAllowed, ""},
		{filepath.Join(tr.home, ".config", "autostart", "x.desktop"), failure.PathNotAllowed, ""},
		{"a.png/x", failure.InvalidArguments, ""},
	} {
		t.Run(tt.path, func(t *testing.T) {
			got, err := g.Destination(context.Background(), tt.path)
			if codeOf(err) != tt.code || got != tt.want {
				t.Fatalf("got %q %v, want %q %q", got, err, tt.want, tt.code)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(tr.work, "new")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("deciding a destination created a folder")
	}
}

func TestNew(t *testing.T) {
	tr := mkTree(t)
	os.MkdirAll(filepath.Join(tr.home, ".config"), 0o755)
	for _, tt := range []struct {
		name    string
		allowed string
		says    string
	}{
		{"missing", filepath.Join(tr.home, "nope"), "cannot be used"},
		{"a file", filepath.Join(tr.work, "a.png"), "not a folder"},
		{"hidden", filepath.Join(tr.home, ".config"), "hidden"},
		{"a link to a hidden folder", filepath.Join(tr.work, "to-ssh"), "hidden"},
		{"the state dir", tr.state, "state dir"},
		{"inside the state dir", filepath.Join(tr.work, "state"), "state dir"},
		{"proc", "/proc", "system folder"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(Rules{Allowed: []string{tt.allowed}, Forbidden: []Place{{tr.state, "Sisyphus's state dir"}}, WorkDir: tr.work})
			if err == nil || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("got %v, want an error saying %q", err, tt.says)
			}
		})
	}
	g, err := New(Rules{WorkDir: tr.work})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Open(context.Background(), "a.png"); codeOf(err) != failure.PathNotAllowed || !strings.Contains(err.Error(), "none is allowed") {
		t.Fatalf("no allowed folder: %v", err)
	}
	var none *Guard
	if _, err := none.Open(context.Background(), filepath.Join(tr.work, "a.png")); codeOf(err) != failure.PathNotAllowed {
		t.Fatalf("a nil guard: %v", err)
	}
	if _, err := none.Destination(context.Background(), filepath.Join(tr.work, "x")); codeOf(err) != failure.PathNotAllowed {
		t.Fatalf("a nil guard: %v", err)
	}
}

// FuzzOpen names any path relative to the allowed folder of a tree full of
// traps: whatever it opens lies inside the allowed folder, outside the
// workspace and the state dir, and is not hidden.
func FuzzOpen(f *testing.F) {
	for _, s := range []string{"a.png", "to-key", "to-ssh/id_ed25519", "to-ws/conf/conf.json", "../.ssh/id_ed25519", "relative-out",
		"to-inside", "sub//b.txt", "/proc/self/cmdline", ".env", "hard", "fifo", "dir", "to-outdir/x.txt"} {
		f.Add(s)
	}
	tr := mkTree(f)
	g := tr.guard(f)
	f.Fuzz(func(t *testing.T, p string) {
		file, err := g.Open(context.Background(), p)
		if err != nil {
			var fe *failure.Error
			if !errors.As(err, &fe) {
				t.Fatalf("%q: an untyped error %v", p, err)
			}
			return
		}
		defer file.Close()
		if !within(file.Path, tr.work) || within(file.Path, tr.ws) || within(file.Path, tr.state) || hidden(file.Path) {
			t.Fatalf("%q opened %s", p, file.Path)
		}
		if b, _ := io.ReadAll(file); strings.Contains(string(b), "private key") || strings.Contains(string(b), "token") {
			t.Fatalf("%q read a secret: %q", p, b)
		}
	})
}

// FuzzDestination names any destination relative to the allowed folder of
// the same tree: whatever it accepts is new, inside the allowed folder,
// outside the workspace and the state dir, and not hidden.
func FuzzDestination(f *testing.F) {
	for _, s := range []string{"out.zip", "new/deep/x", "to-ssh/x", "to-outdir/x", "to-ws/data/x", "SiYuan/x", "state/x", ".x/y", "../x",
		"a.png", "dangling", "dangling/x", "sub//x", "/tmp/x", "/proc/x"} {
		f.Add(s)
	}
	tr := mkTree(f)
	g := tr.guard(f)
	f.Fuzz(func(t *testing.T, p string) {
		dst, err := g.Destination(context.Background(), p)
		if err != nil {
			var fe *failure.Error
			if !errors.As(err, &fe) {
				t.Fatalf("%q: an untyped error %v", p, err)
			}
			return
		}
		if !within(dst, tr.work) || dst == tr.work || within(dst, tr.ws) || within(dst, tr.state) || hidden(dst) {
			t.Fatalf("%q accepted %s", p, dst)
		}
		if _, err := os.Lstat(dst); err == nil {
			t.Fatalf("%q accepted %s, which exists", p, dst)
		}
	})
}
