package contract

import (
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// checkAVRollupFiltersDropped: changing a rollup drops the filters on it
// at every depth, with the groups left empty (an empty group too); an
// emptied root becomes an empty "and" group.
func checkAVRollupFiltersDropped(t *testing.T, s *suite) {
	v := s.newViewDB(t)
	b, _ := s.newDB(t)
	rel, roll, bnum := freshID(), freshID(), freshID()
	s.addCols(t, v.avDB, [3]string{rel, "Rel", "relation"}, [3]string{roll, "Roll", "rollup"})
	s.addCols(t, b, [3]string{bnum, "BNum", "number"})
	s.tx(t, siyuan.UpdateAttrViewColRelationOp(v.av, rel, "Rel", b.av, false, "", ""),
		siyuan.UpdateAttrViewColRollupOp(v.av, roll, rel, bnum, ""))
	rollLeaf := func() *siyuan.AVViewFilter {
		return leaf(t, roll, ">", `{"type":"rollup","rollup":{"contents":[{"type":"number","number":{"content":1,"isNotEmpty":true}}]}}`)
	}
	numLeaf := leaf(t, v.num, ">", `{"type":"number","number":{"content":0,"isNotEmpty":true}}`)
	names := map[string]string{v.num: "NUM", roll: "ROLL"}
	for _, tc := range []struct {
		name    string
		filters []*siyuan.AVViewFilter
		want    string
	}{
		{"nested", []*siyuan.AVViewFilter{group("or", rollLeaf(), group("and", rollLeaf(), group("or", rollLeaf())), group("and"), numLeaf)},
			`[{"column":"","operator":"","value":null,"combination":"or","filters":[{"column":"NUM","operator":"\u003e","value":{"type":"number","number":{"content":0,"isNotEmpty":true,"format":"","formattedContent":""}}}]}]`},
		{"root emptied", []*siyuan.AVViewFilter{group("or", rollLeaf(), group("and", rollLeaf()))},
			`[{"column":"","operator":"","value":null,"combination":"and"}]`},
	} {
		s.tx(t, siyuan.SetAttrViewFiltersOp(v.av, v.block, tc.filters),
			siyuan.UpdateAttrViewColRollupOp(v.av, roll, rel, bnum, "Sum"))
		got := normJSON(t, s.storedAV(t, v.av).Views[0].Filters, names)
		if got != tc.want {
			t.Errorf("%s: stored filters\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}
