package fs

import (
	"strings"
	"testing"
)

// FuzzReplacePlan feeds agent-given edits and texts to the replace planner,
// the virtual-file block splitter and the search matcher: never a panic,
// and a successful plan changes only blocks whose text changes.
func FuzzReplacePlan(f *testing.F) {
	f.Add("one teh\n\ntwo teh", "teh", "the", true, "t.h")
	f.Add("```\na\n\nb\n```", "a\n\nb", "", false, "(")
	f.Add("", "x", "y", false, "")
	f.Fuzz(func(t *testing.T, text, old, repl string, all bool, query string) {
		blocks := textBlocks(text)
		st := replaceState{Path: "/n/d", bodies: map[string]string{}}
		for i, b := range blocks {
			id := string(rune('a' + i%26))
			if _, dup := st.bodies[id]; dup {
				break
			}
			st.order = append(st.order, id)
			st.bodies[id] = b
		}
		if old == "" {
			return
		}
		plan, err := planDoc(st, []textEdit{{Old: old, New: repl, ReplaceAll: all}})
		if err == nil {
			for _, id := range plan.changed {
				if plan.bodies[id] == st.bodies[id] {
					t.Fatalf("block %s listed as changed but is not", id)
				}
			}
		}
		st.text = text
		if _, _, err := planVirtual(st, []textEdit{{Old: old, New: repl, ReplaceAll: all}}); err == nil && !strings.Contains(text, old) {
			t.Fatalf("a virtual plan without a match passed")
		}
		for _, regex := range []bool{false, true} {
			if m, err := matcher(query, regex, false); err == nil {
				matchLines("/p", text, m)
			}
		}
	})
}
