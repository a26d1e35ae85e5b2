package embedded

import (
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

func TestPinyinLess(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"apple", "banana", true},
		{"banana", "apple", false},
		{"Apple", "apple pie", true}, // case ignored, a prefix first
		{"apple pie", "APPLE", false},
		{"same", "same", true}, // equal texts count as less, as the kernel's
		{"阿", "不", true},       // a before b in pinyin
		{"不", "阿", false},
		{"😀b", "a", false}, // emojis dropped
	} {
		if got := pinyinLess(tc.a, tc.b); got != tc.want {
			t.Errorf("pinyinLess(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestValueEdited(t *testing.T) {
	const later = avEditedSince + 1000
	for _, tc := range []struct {
		name string
		v    *wire.AVValue
		want bool
	}{
		{"old data", &wire.AVValue{Type: wire.AVKeyText, Text: &wire.AVValueContent{}, CreatedAt: 1}, true},
		{"empty, never updated", &wire.AVValue{Type: wire.AVKeyText, Text: &wire.AVValueContent{}, CreatedAt: later, UpdatedAt: later}, false},
		{"empty, updated", &wire.AVValue{Type: wire.AVKeyText, Text: &wire.AVValueContent{}, CreatedAt: later, UpdatedAt: later + 1}, true},
		{"filled", &wire.AVValue{Type: wire.AVKeyText, Text: &wire.AVValueContent{Content: "x"}, CreatedAt: later, UpdatedAt: later}, true},
		{"checkbox never updated", &wire.AVValue{Type: wire.AVKeyCheckbox, Checkbox: &wire.AVValueCheckbox{Checked: true}, CreatedAt: later, UpdatedAt: later}, false},
		{"created", &wire.AVValue{Type: wire.AVKeyCreated, CreatedAt: later, UpdatedAt: later}, true},
	} {
		if got := valueEdited(tc.v); got != tc.want {
			t.Errorf("%s: valueEdited = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestCompareValuesSelectOptionOrder(t *testing.T) {
	opts := map[string]int{"b": 0, "a": 1}
	sel := func(s ...string) *wire.AVValue {
		v := &wire.AVValue{Type: wire.AVKeyMSelect}
		for _, x := range s {
			v.MSelect = append(v.MSelect, &wire.AVValueSelect{Content: x})
		}
		return v
	}
	for _, tc := range []struct {
		a, b *wire.AVValue
		sign int
	}{
		{sel("b"), sel("a"), -1},
		{sel("a"), sel("b"), 1},
		{sel("a", "b"), sel("a"), 0}, // compared over the shorter list
		{sel("c"), sel("d"), -1},     // neither an option: by text
	} {
		got := compareValues(tc.a, tc.b, opts)
		if (got < 0 && tc.sign >= 0) || (got > 0 && tc.sign <= 0) || (got == 0 && tc.sign != 0) {
			t.Errorf("compare %v %v = %d, want sign %d", tc.a.MSelect, tc.b.MSelect, got, tc.sign)
		}
	}
}
