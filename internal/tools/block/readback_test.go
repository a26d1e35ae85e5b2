package block

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/kernelview"
	"github.com/sisyphus-go/sisyphus/internal/tools/markup"
	"github.com/sisyphus-go/sisyphus/internal/tools/tooltest"
)

// TestShowsApplied: the text an update applied is checked against the
// block's kramdown rendered here; the kernel's DOM is asked only for the
// blocks whose rendering here differs (one getBlockDOM, or one
// getBlockDOMs for several), and decides.
func TestShowsApplied(t *testing.T) {
	s := &sfix{tooltest.NewHooked(t, testTools)}
	var mu sync.Mutex
	calls := map[string]int{}
	s.SetHook(func(w http.ResponseWriter, r *http.Request) bool {
		mu.Lock()
		calls[strings.TrimPrefix(r.URL.Path, "/api/block/")]++
		mu.Unlock()
		return false
	})
	env := &tools.Env{Kernel: s.C}
	read := func(ids ...string) []kernelview.BlockState {
		sts, err := kernelview.ReadBlockContents(t.Context(), env, ids)
		if err != nil {
			t.Fatal(err)
		}
		return sts
	}
	b0, b1 := s.Blocks[0], s.Blocks[1]
	shown := func(id string) string {
		d, err := s.C.GetBlockDOM(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		return markup.DOMText(d.DOM)
	}
	text0, text1 := shown(b0), shown(b1)
	// stale is b's state as read before a change the kernel now shows.
	stale := func(st kernelview.BlockState) kernelview.BlockState {
		st.Kramdown = "stale " + st.Kramdown
		return st
	}
	for _, c := range []struct {
		name  string
		sts   []kernelview.BlockState
		want  map[string]string
		calls map[string]int
		fails string
	}{
		{"shown as rendered here: no DOM read", read(b0, b1), map[string]string{b0: text0, b1: text1}, map[string]int{}, ""},
		{"no applied text: nothing to compare", read(b0), map[string]string{}, map[string]int{}, ""},
		{"rendered here differs, the kernel's DOM shows it", []kernelview.BlockState{stale(read(b0)[0])}, map[string]string{b0: text0}, map[string]int{"getBlockDOM": 1}, ""},
		{"several differ: one batch DOM read", []kernelview.BlockState{stale(read(b0)[0]), stale(read(b1)[0])}, map[string]string{b0: text0, b1: text1}, map[string]int{"getBlockDOMs": 1}, ""},
		{"unparsable here: the kernel decides", []kernelview.BlockState{{ID: b0, Kramdown: "\x00{: id=\"x\"}"}}, map[string]string{b0: text0}, map[string]int{"getBlockDOM": 1}, ""},
		{"the kernel does not show it either", read(b0), map[string]string{b0: "something else"}, map[string]int{"getBlockDOM": 1}, "does not show the requested content"},
		{"a block gone", []kernelview.BlockState{{ID: b0, Missing: true}}, map[string]string{b0: text0}, map[string]int{}, "is gone"},
	} {
		t.Run(c.name, func(t *testing.T) {
			mu.Lock()
			clear(calls)
			mu.Unlock()
			err := showsApplied(t.Context(), env, c.sts, c.want)
			if c.fails == "" && err != nil || c.fails != "" && (err == nil || !strings.Contains(err.Error(), c.fails)) {
				t.Fatalf("showsApplied = %v, want %q", err, c.fails)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(calls) != len(c.calls) {
				t.Fatalf("kernel calls %v, want %v", calls, c.calls)
			}
			for k, n := range c.calls {
				if calls[k] != n {
					t.Fatalf("kernel calls %v, want %v", calls, c.calls)
				}
			}
		})
	}
}
