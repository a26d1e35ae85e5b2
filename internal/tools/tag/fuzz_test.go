package tag

import (
	"encoding/json"
	"html"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
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

// FuzzPruneTags: whatever tree SiYuan answers, the visible tree holds only
// tags with visible spans (or visible tags under them), each with its
// visible count; ordered by count each level is in order; a cut keeps a
// prefix of the top level that lists at most limit tags before its last.
func FuzzPruneTags(f *testing.F) {
	f.Add(`[{"label":"a","count":9,"children":[{"label":"a/b","count":1}]},{"label":"h","count":4},{"label":"c","count":1}]`, 8, 2)
	f.Add(`[null,{"children":[{},{"label":"a"}]}]`, 7, 0)
	f.Fuzz(func(t *testing.T, raw string, sortMode, limit int) {
		var tree []siyuan.Tag
		if json.Unmarshal([]byte(raw), &tree) != nil {
			return
		}
		visible := map[string]int{"a": 1, "a/b": 2, "c": 3, "d": 1}
		got := pruneTags(tree, visible, sortMode)
		var check func([]siyuan.Tag)
		check = func(ts []siyuan.Tag) {
			for i, tg := range ts {
				n := visible[html.UnescapeString(tg.Label)]
				if tg.Count != n || n == 0 && len(tg.Children) == 0 {
					t.Fatalf("pruned tag %+v (visible count %d)", tg, n)
				}
				if i > 0 && (sortMode == sortCountAsc && ts[i-1].Count > tg.Count || sortMode == sortCountDesc && ts[i-1].Count < tg.Count) {
					t.Fatalf("sort %d out of order: %+v", sortMode, ts)
				}
				check(tg.Children)
			}
		}
		check(got)
		cut := cutTags(got, limit)
		if len(cut) > len(got) || len(cut) > 0 && cut[len(cut)-1].Label != got[len(cut)-1].Label {
			t.Fatalf("the cut is not a prefix: %+v of %+v", cut, got)
		}
		if before := countTags(cut) - countTags(cut[max(len(cut)-1, 0):]); len(cut) > 0 && before > max(limit, 0) {
			t.Fatalf("the cut at %d lists %d tags before its last", limit, before)
		}
	})
}
