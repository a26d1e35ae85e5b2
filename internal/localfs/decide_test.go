package localfs

import (
	"errors"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/failure"
)

func TestDecide(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the table is written with slash paths")
	}
	allowed := []string{"/home/me/work", "/srv/share"}
	forbidden := append(systemPlaces(), Place{"/home/me/work/SiYuan", "the SiYuan workspace"}, Place{"/home/me/work/state", "Sisyphus's state dir"})
	for _, tt := range []struct {
		name, path string
		ok         bool
		says       string
	}{
		{"a file in an allowed folder", "/home/me/work/diagram.png", true, ""},
		{"deeper", "/home/me/work/a/b/c.pdf", true, ""},
		{"the allowed folder itself", "/home/me/work", true, ""},
		{"a second allowed folder", "/srv/share/x", true, ""},
		{"outside", "/home/me/Documents/x", false, "outside the folders"},
		{"a sibling sharing the prefix", "/home/me/workshop/x", false, "outside the folders"},
		{"the home directory", "/home/me", false, "outside the folders"},
		{"a hidden folder of home", "/home/me/.ssh/id_ed25519", false, "hidden"},
		{"a hidden file inside an allowed folder", "/home/me/work/.env", false, "hidden"},
		{"a hidden folder inside an allowed folder", "/home/me/work/.git/config", false, "hidden"},
		{"the workspace inside an allowed folder", "/home/me/work/SiYuan/conf/conf.json", false, "SiYuan workspace"},
		{"the workspace itself", "/home/me/work/SiYuan", false, "SiYuan workspace"},
		{"the state dir", "/home/me/work/state/token", false, "state dir"},
		{"a sibling of the workspace sharing its prefix", "/home/me/work/SiYuanNotes/x", true, ""},
		{"proc", "/proc/self/cmdline", false, "system folder"},
		{"sys", "/sys/kernel/x", false, "system folder"},
		{"dev", "/dev/zero", false, "system folder"},
		{"etc", "/etc/passwd", false, "outside the folders"},
		{"relative", "work/x", false, "clean absolute"},
		{"not clean", "/home/me/work/../.ssh/x", false, "clean absolute"},
		{"a trailing slash", "/home/me/work/x/", false, "clean absolute"},
		{"a NUL", "/home/me/work/x\x00.png", false, "clean absolute"},
		{"empty", "", false, "clean absolute"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := Decide(tt.path, allowed, forbidden)
			if tt.ok {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var fe *failure.Error
			if !errors.As(err, &fe) || fe.Code != failure.PathNotAllowed || !strings.Contains(fe.Message, tt.says) {
				t.Fatalf("got %v, want path_not_allowed saying %q", err, tt.says)
			}
		})
	}
	if err := Decide("/home/me/work/x", nil, nil); err == nil || !strings.Contains(err.Error(), "none is allowed") {
		t.Fatalf("no allowed folder: %v", err)
	}
	if err := Decide("/anything/at/all", []string{"/"}, forbidden); err != nil {
		t.Fatalf("the root allowed: %v", err)
	}
	if err := Decide("/proc/1/environ", []string{"/"}, forbidden); err == nil {
		t.Fatal("the root allowed opens /proc")
	}
}

func TestDotDot(t *testing.T) {
	for p, want := range map[string]bool{
		"a/../b": true, "..": true, "../x": true, "/a/..": true, `a\..\b`: filepath.Separator == '\\',
		"a/..b": false, "a/b..": false, "...": false, "a/./b": false, "": false,
	} {
		if got := dotDot(p); got != want {
			t.Errorf("dotDot(%q) = %v", p, got)
		}
	}
}

// FuzzDecide holds the rule's promise on any text: an accepted path is a
// clean absolute path inside an allowed folder, in no forbidden place, with
// no hidden name; and Decide never panics.
func FuzzDecide(f *testing.F) {
	allowed := []string{"/home/me/work", "/srv/share"}
	forbidden := append(systemPlaces(), Place{"/home/me/work/SiYuan", "the SiYuan workspace"})
	for _, s := range []string{"/home/me/work/a.png", "/home/me/work/../.ssh/id", "/home/me/work/.env", "/home/me/workx",
		"/home/me/work/SiYuan/conf/conf.json", "/proc/self/environ", "relative/x", "/srv/share", "//home/me/work/a", "/home/me/work/a\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if Decide(p, allowed, forbidden) != nil || runtime.GOOS == "windows" {
			return
		}
		if caseless {
			p = strings.ToLower(p)
		}
		if !filepath.IsAbs(p) || filepath.Clean(p) != p || strings.ContainsRune(p, 0) {
			t.Fatalf("accepted %q, not a clean absolute path", p)
		}
		if hidden(p) || strings.Contains(p, "/.") {
			t.Fatalf("accepted %q, hidden", p)
		}
		in := false
		for _, a := range allowed {
			in = in || p == a || strings.HasPrefix(p, a+"/")
		}
		if !in {
			t.Fatalf("accepted %q outside %v", p, allowed)
		}
		for _, x := range forbidden {
			if p == x.Path || strings.HasPrefix(p, x.Path+"/") {
				t.Fatalf("accepted %q in %s", p, x.What)
			}
		}
	})
}
