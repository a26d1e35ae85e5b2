package embedded

import (
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

func TestCalcNumbers(t *testing.T) {
	for _, tc := range []struct {
		op   string
		nums []float64
		want float64
		ok   bool
	}{
		{"Sum", nil, 0, true}, // a sum of nothing is 0
		{"Average", nil, 0, false},
		{"Average", []float64{1, 2}, 1.5, true},
		{"Median", []float64{3, 1, 2}, 2, true},
		{"Median", []float64{4, 1, 3, 2}, 2.5, true},
		{"Min", []float64{3, -1}, -1, true},
		{"Max", []float64{3, -1}, 3, true},
		{"Range", []float64{3, -1}, 4, true},
		{"Count all", []float64{1}, 0, false},
	} {
		got, ok := calcNumbers(tc.op, tc.nums)
		if got != tc.want || ok != tc.ok {
			t.Errorf("calcNumbers(%s, %v) = %v, %v; want %v, %v", tc.op, tc.nums, got, ok, tc.want, tc.ok)
		}
	}
}

func TestCalcColumnEmptyAndTypes(t *testing.T) {
	text := func(s string) *wire.AVValue {
		return &wire.AVValue{Type: wire.AVKeyText, Text: &wire.AVValueContent{Content: s}}
	}
	col := &wire.AVColumn{Type: wire.AVKeyText}
	cells := []*wire.AVValue{text("a"), text(""), text("a"), nil}
	for _, tc := range []struct {
		op   string
		want string // the result's formatted number, "" for none
	}{
		{"Count all", "4"},
		{"Count values", "2"},
		{"Count unique values", "1"},
		{"Count empty", "2"},
		{"Percent not empty", "50%"},
		{"Sum", ""}, // not a text operator
		{"Checked", ""},
	} {
		got := ""
		if r := calcColumn(col, tc.op, cells); r != nil {
			got = r.Number.FormattedContent
		}
		if got != tc.want {
			t.Errorf("%s = %q, want %q", tc.op, got, tc.want)
		}
	}
	if r := calcColumn(col, "Percent empty", nil); r != nil {
		t.Errorf("a percent of no rows = %+v, want none", r)
	}
}
