package contract

// Databases: the Template calculation, a column's cells through a
// template.

import (
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// checkAVCalcTemplate: Template calculations over viewDB's columns:
// numbers and text results, a multi-select's options one by one, sprig
// functions, a template with no value and one that does not parse.
func checkAVCalcTemplate(t *testing.T, s *suite) {
	v := s.newViewDB(t)
	calc := func(key, tpl string) siyuan.Operation {
		return siyuan.Operation{Action: "setAttrViewColCalc", AvID: v.av, BlockID: v.block, ID: key,
			Data: map[string]any{"operator": "Template", "template": tpl}}
	}
	for _, tc := range []struct {
		name, key, tpl, want string
	}{
		{"number sum", v.num, `.action{.sum}`, `{"operator":"Template","result":{"number":{"content":15.5,"isNotEmpty":true,"format":"","formattedContent":"15.5"}},"template":".action{.sum}"}`},
		{"number median and count", v.num, `.action{.median}/.action{.count}`, `{"operator":"Template","result":{"type":"text","text":{"content":"5/4"}},"template":".action{.median}/.action{.count}"}`},
		{"number avg formatted", v.num, `.action{printf "%.2f" .avg}`, `{"operator":"Template","result":{"number":{"content":3.88,"isNotEmpty":true,"format":"","formattedContent":"3.88"}},"template":".action{printf \"%.2f\" .avg}"}`},
		{"text joined", v.text, `.action{join "," .strings}`, `{"operator":"Template","result":{"type":"text","text":{"content":"Apple pie,banana,apple,Cherry APPLE"}},"template":".action{join \",\" .strings}"}`},
		{"multi-select options", v.ms, `.action{.count} .action{join "" .strings}`, `{"operator":"Template","result":{"type":"text","text":{"content":"4 xyyz"}},"template":".action{.count} .action{join \"\" .strings}"}`},
		{"checkbox", v.cb, `.action{.nonEmptyCount}`, `{"operator":"Template","result":{"number":{"content":5,"isNotEmpty":true,"format":"","formattedContent":"5"}},"template":".action{.nonEmptyCount}"}`},
		{"no value", v.num, `.action{.nothing}`, `{"operator":"Template","result":null,"template":".action{.nothing}"}`},
		{"parse error", v.num, `.action{`, `{"operator":"Template","result":null,"template":".action{"}`},
	} {
		s.tx(t, calc(tc.key, tc.tpl))
		r := s.render(t, siyuan.RenderAVRequest{ID: v.av, BlockID: v.block})
		for _, c := range r.View.Columns {
			if c.ID == tc.key {
				if got := string(c.Calc); got != tc.want {
					t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
				}
			}
		}
	}
}
