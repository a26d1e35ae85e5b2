package tag

import (
	"strings"
	"testing"
)

// FuzzLabels: a new label either is refused as invalid_arguments or is
// what SiYuan would write (trimmed, not empty, no marker in an ASCII
// label), and the rename maps the old label and its nested ones onto it.
func FuzzLabels(f *testing.F) {
	for _, s := range [][2]string{{"a", "b"}, {"a/b", " /c/ "}, {"标签", "x#y"}, {"", "/"}, {"a", "a/b"}, {"a", "\u3000a#b"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, old, nw string) {
		l, err := newLabelOf(nw)
		if err != nil {
			if l != "" {
				t.Fatalf("refused %q but returned %q", nw, l)
			}
			return
		}
		ascii := !strings.ContainsFunc(l, func(r rune) bool { return r > 0x7f })
		if l == "" || l != strings.TrimSpace(l) || ascii && strings.ContainsAny(l, markers) {
			t.Fatalf("newLabelOf(%q) = %q", nw, l)
		}
		if old == "" {
			return
		}
		a := renameArgs{old, l}
		if got := a.renamed(old); got != l {
			t.Fatalf("renamed(%q) = %q, want %q", old, got, l)
		}
		if got := a.renamed(old + "/kid"); got != l+"/kid" {
			t.Fatalf("renamed(%q/kid) = %q", old, got)
		}
	})
}
