package document

import (
	"testing"
)

// TestRecount: each block's refcount mark and attribute-bar count become
// the count the call may see, also for a block whose bar follows its
// children (a list item), and for blocks after it.
func TestRecount(t *testing.T) {
	const (
		li = "20260812120000-lilili0"
		p1 = "20260812120000-ppppp01"
		p2 = "20260812120000-ppppp02"
	)
	bar := func(n string) string {
		return `<div class="protyle-attr" contenteditable="false"><div class="protyle-attr--refcount popover__block">` + n + `</div>` + "\u200b" + `</div>`
	}
	para := func(id, n string) string {
		return `<div data-node-id="` + id + `" class="p" refcount="` + n + `"><div contenteditable="true">x</div>` + bar(n) + `</div>`
	}
	in := `<div data-node-id="` + li + `" class="li" refcount="9">` + para(p1, "5") + bar("9") + `</div>` + para(p2, "7")
	want := `<div data-node-id="` + li + `" class="li" refcount="3">` + para(p1, "1") + bar("3") + `</div>` + para(p2, "2")
	got, err := recount(in, map[string]int{li: 3, p1: 1, p2: 2}, func(string) (bool, error) { return true, nil })
	if err != nil || got != want {
		t.Fatalf("recount:\n got %s\nwant %s", got, want)
	}
}
