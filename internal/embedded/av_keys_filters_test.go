package embedded

import (
	"encoding/json"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

func TestRemoveFiltersOn(t *testing.T) {
	leaf := func(col string) *wire.AVViewFilter { return &wire.AVViewFilter{Column: col, Operator: "="} }
	grp := func(comb string, fs ...*wire.AVViewFilter) *wire.AVViewFilter {
		return &wire.AVViewFilter{Combination: comb, Filters: fs}
	}
	for _, tc := range []struct {
		name string
		in   []*wire.AVViewFilter
		want string
	}{
		{"leaf kept", []*wire.AVViewFilter{grp("or", leaf("a"), leaf("x"))}, `[[or: a]]`},
		{"emptied group dropped", []*wire.AVViewFilter{grp("and", leaf("a"), grp("or", leaf("x"), leaf("x")))}, `[[and: a]]`},
		{"empty group dropped too", []*wire.AVViewFilter{grp("and", leaf("a"), grp("or"))}, `[[and: a]]`},
		{"emptied root dropped", []*wire.AVViewFilter{grp("or", leaf("x"))}, `[]`},
		{"nested three deep", []*wire.AVViewFilter{grp("and", grp("or", grp("and", leaf("x")), leaf("b")))}, `[[and: [or: b]]]`},
		{"nil skipped", []*wire.AVViewFilter{nil, leaf("a")}, `[a]`},
	} {
		if got := filterTreeText(removeFiltersOn(tc.in, "x")); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

// filterTreeText is a filter list as "[comb: leaf …]".
func filterTreeText(fs []*wire.AVViewFilter) string {
	s := "["
	for i, f := range fs {
		if i > 0 {
			s += " "
		}
		if isFilterGroup(f) {
			inner := filterTreeText(f.Filters)
			s += "[" + f.Combination + ": " + inner[1:]
			continue
		}
		data, _ := json.Marshal(f.Column)
		s += string(data[1 : len(data)-1])
	}
	return s + "]"
}
