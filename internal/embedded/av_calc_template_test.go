package embedded

import (
	"strconv"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

func TestCalcByTemplate(t *testing.T) {
	num := func(f float64) *wire.AVValue {
		return &wire.AVValue{Type: wire.AVKeyNumber, Number: &wire.AVValueNumber{Content: f, IsNotEmpty: true}}
	}
	col := &wire.AVColumn{Type: wire.AVKeyNumber}
	for _, tc := range []struct {
		name  string
		tpl   string
		cells []*wire.AVValue
		want  string // the result's text, "" for none
	}{
		{"median of an even count", `.action{.median}`, []*wire.AVValue{num(1), num(4), num(2), num(10)}, "3"},
		{"median of an odd count", `.action{.median}`, []*wire.AVValue{num(3), num(1), num(2)}, "2"},
		{"min and max as text", `.action{.min}-.action{.max}`, []*wire.AVValue{num(3), num(-1)}, "-1-3"},
		{"no cells", `.action{.count}`, nil, ""},
		{"blank cells skipped", `.action{.count}`, []*wire.AVValue{nil, {Type: wire.AVKeyNumber, Number: &wire.AVValueNumber{}}, num(1)}, "1"},
		{"no value", `.action{.nothing}`, []*wire.AVValue{num(1)}, ""},
		{"does not parse", `.action{`, []*wire.AVValue{num(1)}, ""},
	} {
		got := ""
		if r := calcByTemplate(col, tc.tpl, tc.cells); r != nil {
			switch {
			case r.Text != nil:
				got = r.Text.Content
			case r.Number != nil:
				got = strconv.FormatFloat(r.Number.Content, 'f', -1, 64)
			}
		}
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
