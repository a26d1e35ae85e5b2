package contract

// Databases: the Range calculation of a date column, a span in words.

import (
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// checkAVCalcDateRange: Range over the dates of viewDB's rows the filter
// keeps, as the span from the earliest to the latest in words.
func checkAVCalcDateRange(t *testing.T, s *suite) {
	v := s.newViewDB(t)
	num := func(op, f string) []*siyuan.AVViewFilter {
		return []*siyuan.AVViewFilter{leaf(t, v.num, op, `{"type":"number","number":{"content":`+f+`,"isNotEmpty":true}}`)}
	}
	for _, tc := range []struct {
		name   string
		filter []*siyuan.AVViewFilter
		want   string
	}{
		// 2024-12-31 12:00 to 2025-03-01 12:00: 60 days.
		{"all rows", nil, `{"operator":"Range","result":{"date":{"content":1735646400000,"isNotEmpty":true,"hasEndDate":false,"isNotTime":true,"content2":1740830400000,"isNotEmpty2":true,"formattedContent":"2 months"}}}`},
		// r0 (a day) and r3 (a time, six hours later).
		{"r0 r3", num(">", "5"), `{"operator":"Range","result":{"date":{"content":1736510400000,"isNotEmpty":true,"hasEndDate":false,"isNotTime":false,"content2":1736532000000,"isNotEmpty2":true,"formattedContent":"6 hours"}}}`},
		// r0 alone: no span.
		{"r0", num("=", "10"), `{"operator":"Range","result":{"date":{"content":1736510400000,"isNotEmpty":true,"hasEndDate":false,"isNotTime":true,"content2":1736510400000,"isNotEmpty2":true,"formattedContent":"now"}}}`},
		// r2 alone: no date.
		{"no dates", []*siyuan.AVViewFilter{leaf(t, v.text, "Is empty", textValue("text", ""))}, `{"operator":"Range","result":null}`},
	} {
		s.tx(t, siyuan.SetAttrViewFiltersOp(v.av, v.block, tc.filter), siyuan.SetAttrViewColCalcOp(v.av, v.block, v.date, "Range"))
		r := s.render(t, siyuan.RenderAVRequest{ID: v.av, BlockID: v.block})
		for _, c := range r.View.Columns {
			if c.ID == v.date {
				if got := string(c.Calc); got != tc.want {
					t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
				}
			}
		}
	}
}
