package authority

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

func TestEnsureAdminTokenCreatesOnce(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	tok, created, loosened, err := EnsureAdminToken(state)
	if err != nil || !created || loosened {
		t.Fatalf("first call: created %v loosened %v err %v", created, loosened, err)
	}
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(tok) {
		t.Fatalf("token %q is not 32 random bytes in hex", tok)
	}
	for p, want := range map[string]os.FileMode{state: 0o700, AdminTokenPath(state): 0o600} {
		if st, err := os.Stat(p); err != nil || st.Mode().Perm() != want {
			t.Fatalf("%s: %v %v, want mode %o", p, st.Mode(), err, want)
		}
	}
	again, created, _, err := EnsureAdminToken(state)
	if err != nil || created || again != tok {
		t.Fatalf("second call: %q created %v err %v, want the same token", again, created, err)
	}
	if other, _, _, _ := EnsureAdminToken(t.TempDir()); other == tok {
		t.Fatal("two state dirs got the same token")
	}
	if names, _ := os.ReadDir(state); len(names) != 1 {
		t.Fatalf("the state dir holds more than the token: %v", names)
	}
}

// TestEnsureAdminTokenRace: processes creating the token at once (serve
// and sisyphus admin-token) all end with the one token on disk.
func TestEnsureAdminTokenRace(t *testing.T) {
	state := t.TempDir()
	var wg sync.WaitGroup
	toks := make([]string, 16)
	for i := range toks {
		wg.Go(func() {
			tok, _, _, err := EnsureAdminToken(state)
			if err != nil {
				t.Error(err)
			}
			toks[i] = tok
		})
	}
	wg.Wait()
	disk, err := ReadAdminToken(AdminTokenPath(state))
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range toks {
		if tok != disk {
			t.Fatalf("a caller got %q, the file holds %q", tok, disk)
		}
	}
}

func TestReadAdminToken(t *testing.T) {
	good := strings.Repeat("a1", 20)
	for _, c := range []struct {
		name, content, want, err string
	}{
		{"generated", good + "\n", good, ""},
		{"surrounding space", "  " + good + "\r\n", good, ""},
		{"empty", "", "", "shorter than 32"},
		{"short", "hunter2\n", "", "shorter than 32"},
		{"inner space", good[:20] + " " + good[20:], "", "printable ASCII"},
		{"not ascii", good + "é", "", "printable ASCII"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), AdminTokenFile)
			if err := os.WriteFile(p, []byte(c.content), 0o600); err != nil {
				t.Fatal(err)
			}
			tok, err := ReadAdminToken(p)
			if c.err == "" {
				if err != nil || tok != c.want {
					t.Fatalf("%q %v, want %q", tok, err, c.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "remove the file") {
				t.Fatalf("%q %v, want an error saying %q and how to fix it", tok, err, c.err)
			}
			// A malformed file is never replaced behind the person's back.
			if _, _, _, err := EnsureAdminToken(filepath.Dir(p)); err == nil {
				t.Fatal("EnsureAdminToken accepted or replaced a malformed token")
			}
		})
	}
	if _, err := ReadAdminToken(filepath.Join(t.TempDir(), "none")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}

func TestEnsureAdminTokenNarrowsItsMode(t *testing.T) {
	state := t.TempDir()
	tok, _, _, _ := EnsureAdminToken(state)
	if err := os.Chmod(AdminTokenPath(state), 0o644); err != nil {
		t.Fatal(err)
	}
	again, _, loosened, err := EnsureAdminToken(state)
	if err != nil || !loosened || again != tok {
		t.Fatalf("loose file: %v %v %v", again == tok, loosened, err)
	}
	if st, _ := os.Stat(AdminTokenPath(state)); st.Mode().Perm() != 0o600 {
		t.Fatalf("mode after narrowing: %v", st.Mode())
	}
}

// FuzzReadAdminToken: whatever the file holds, the token read is its
// trimmed content and passes the check, or there is an error.
func FuzzReadAdminToken(f *testing.F) {
	for _, s := range []string{"", strings.Repeat("0", 64), " x ", strings.Repeat("ab", 16) + "\n", "\x00" + strings.Repeat("a", 40)} {
		f.Add(s)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, content string) {
		p := filepath.Join(dir, AdminTokenFile)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		tok, err := ReadAdminToken(p)
		if err != nil {
			return
		}
		if tok != strings.TrimSpace(content) || checkAdminToken(tok) != nil || strings.ContainsAny(tok, " \t\r\n") {
			t.Fatalf("accepted %q from %q", tok, content)
		}
	})
}
