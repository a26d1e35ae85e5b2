package embedded

import (
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

func TestFormatNumber(t *testing.T) {
	for _, tc := range []struct {
		n      float64
		format string
		want   string
	}{
		{1234.5, "", "1234.5"},
		{-0.125, "", "-0.125"},
		{1e21, "", "1000000000000000000000"},
		{1234.5, "commas", "1,234.5"},
		{1234567, "commas", "1,234,567"},
		{0.125, "percent", "12.5%"},
		{1234.5, "percent", "123450%"},
		{1234.5, "USD", "$1,234.50"},
		{-0.125, "USD", "$-0.12"}, // Go rounds half to even, as the kernel
		{1234.5, "EUR", "€1.234,50"},
		{1234.5, "JPY", "¥1,234"},
		{1234.5, "CNY", "CN¥1,234.50"},
		{1234.5, "yuan", "CN¥1,234.50"},
		{3, "nope", "3"},
	} {
		if got := formatNumber(tc.n, tc.format); got != tc.want {
			t.Errorf("formatNumber(%v, %q) = %q, want %q", tc.n, tc.format, got, tc.want)
		}
	}
	if n := newNumber(1.0/3, ""); n.FormattedContent != "0.33333" || !n.IsNotEmpty {
		t.Errorf("newNumber(1/3) = %+v", n)
	}
	n := &wire.AVValueNumber{Content: 5, Format: "percent"}
	formatNumberValue(n)
	if n.FormattedContent != "" {
		t.Errorf("an empty number has text %q", n.FormattedContent)
	}
}

func TestValueString(t *testing.T) {
	for _, tc := range []struct {
		v    *wire.AVValue
		want string
	}{
		{nil, ""},
		{&wire.AVValue{Type: "text", Text: &wire.AVValueContent{Content: "  a  "}}, "a"},
		{&wire.AVValue{Type: "number", Number: &wire.AVValueNumber{Content: 2, FormattedContent: "2.00"}}, "2.00"},
		{&wire.AVValue{Type: "select", MSelect: []*wire.AVValueSelect{{Content: "x"}, {Content: "y"}}}, "x"},
		{&wire.AVValue{Type: "mSelect", MSelect: []*wire.AVValueSelect{{Content: "x"}, {Content: "y"}}}, "x y"},
		{&wire.AVValue{Type: "checkbox", Checkbox: &wire.AVValueCheckbox{Checked: true}}, "√"},
		{&wire.AVValue{Type: "checkbox", Checkbox: &wire.AVValueCheckbox{}}, ""},
		{&wire.AVValue{Type: "mAsset", MAsset: []*wire.AVValueAsset{{Name: "n", Content: "assets/a"}}}, "n assets/a"},
		{&wire.AVValue{Type: "relation", Relation: &wire.AVValueRelation{Contents: []*wire.AVValue{
			{Type: "block", Block: &wire.AVValueBlock{Content: "a"}}, {Type: "block", Block: &wire.AVValueBlock{Content: "b"}}}}}, "a, b"},
		{&wire.AVValue{Type: "block"}, ""},
	} {
		if got := valueString(tc.v, true); got != tc.want {
			t.Errorf("valueString(%+v) = %q, want %q", tc.v, got, tc.want)
		}
	}
	if got := valueString(&wire.AVValue{Type: "number", Number: &wire.AVValueNumber{Content: 2}}, false); got != "2.000000" {
		t.Errorf("unformatted number = %q", got)
	}
}

func TestHasUnclosedHTMLTag(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want bool
	}{
		{"plain", false},
		{"<b>x</b>", false},
		{"<no value>", true},
		{"a <br> b", false},
		{"<b><i>x</b></i>", true},
		{"<!-- open", true},
		{"<!-- closed --><b>x</b>", false},
		{"</b>", true},
		{"<[x]>", false},
	} {
		if got := hasUnclosedHTMLTag(tc.s); got != tc.want {
			t.Errorf("hasUnclosedHTMLTag(%q) = %v, want %v", tc.s, got, tc.want)
		}
	}
}

func TestCalcRollup(t *testing.T) {
	num := func(f float64) *wire.AVValue {
		return &wire.AVValue{Type: "number", Number: &wire.AVValueNumber{Content: f, IsNotEmpty: true}}
	}
	text := func(s string) *wire.AVValue {
		return &wire.AVValue{Type: "text", Text: &wire.AVValueContent{Content: s}}
	}
	cb := func(c bool) *wire.AVValue {
		return &wire.AVValue{Type: "checkbox", Checkbox: &wire.AVValueCheckbox{Checked: c}}
	}
	for _, tc := range []struct {
		op       string
		contents []*wire.AVValue
		format   string
		want     string // the contents' texts, comma-joined
	}{
		{"", []*wire.AVValue{num(1), num(2)}, "", ""},
		{"Sum", []*wire.AVValue{num(1), num(2.5)}, "", "3.5"},
		{"Sum", nil, "USD", "$0.00"},
		{"Sum", []*wire.AVValue{text("12 apples"), num(1)}, "", "13"},
		{"Average", []*wire.AVValue{num(1), num(2)}, "", "1.5"},
		{"Average", nil, "", ""},
		{"Median", []*wire.AVValue{num(3), num(1), num(2), num(10)}, "", "2.5"},
		{"Min", []*wire.AVValue{num(3), num(-1)}, "", "-1"},
		{"Max", []*wire.AVValue{num(3), num(-1)}, "", "3"},
		{"Range", []*wire.AVValue{num(3), num(-1)}, "", "4"},
		{"Range", []*wire.AVValue{num(3)}, "", "3"},
		{"Count all", []*wire.AVValue{text("a"), text("")}, "", "2"},
		{"Count values", []*wire.AVValue{text("a"), text("")}, "", "2"},
		{"Count empty", []*wire.AVValue{text("a"), text("")}, "", "1"},
		{"Count not empty", []*wire.AVValue{text("a"), text("")}, "", "1"},
		{"Count unique values", []*wire.AVValue{text("a"), text("a"), text("b")}, "", "2"},
		{"Percent empty", []*wire.AVValue{text("a"), text("")}, "", "50%"},
		{"Percent unique values", []*wire.AVValue{text("a"), text("a"), text("b"), text("c")}, "", "75%"},
		{"Unique values", []*wire.AVValue{text("a"), text("a"), text("b")}, "", "a, b"},
		{"Checked", []*wire.AVValue{cb(true), cb(false), cb(true)}, "", "2"},
		{"Unchecked", []*wire.AVValue{cb(true), cb(false), cb(true)}, "", "1"},
		{"Percent checked", []*wire.AVValue{cb(true), cb(false), cb(true)}, "", "66"},
	} {
		r := &wire.AVValueRollup{Contents: tc.contents}
		for _, c := range r.Contents {
			if c.Number != nil {
				formatNumberValue(c.Number)
			}
		}
		calcRollup(r, &wire.AVRollupCalc{Operator: tc.op}, &wire.AVKey{NumberFormat: tc.format})
		if tc.op == "" {
			if len(r.Contents) != len(tc.contents) {
				t.Errorf("no operator changed the contents: %+v", r.Contents)
			}
			continue
		}
		if got := joinValues(r.Contents, true); got != tc.want {
			t.Errorf("%s of %d values = %q, want %q", tc.op, len(tc.contents), got, tc.want)
		}
	}
}

func TestConvertToFloat(t *testing.T) {
	for in, want := range map[string]float64{"12": 12, "1,234.5": 1234.5, "a-3b": -3, " 4 5 ": 45} {
		if got, ok := convertToFloat(in); !ok || got != want {
			t.Errorf("convertToFloat(%q) = %v %v", in, got, ok)
		}
	}
	if _, ok := convertToFloat("none"); ok {
		t.Error(`convertToFloat("none") succeeded`)
	}
}

func TestInsertItem(t *testing.T) {
	for _, tc := range []struct {
		ids            []string
		item, previous string
		want           string
	}{
		{nil, "a", "", "a"},
		{[]string{"x", "y"}, "a", "", "a x y"},
		{[]string{"x", "y"}, "a", "x", "x a y"},
		{[]string{"x", "y"}, "a", "y", "x y a"},
		{[]string{"x", "y"}, "a", "gone", "x y a"},
	} {
		got := insertItem(tc.ids, tc.item, tc.previous)
		if s := joinSpace(got); s != tc.want {
			t.Errorf("insertItem(%v, %s, %s) = %s, want %s", tc.ids, tc.item, tc.previous, s, tc.want)
		}
	}
}

func joinSpace(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}
