package contract

// Databases: a row duplicated in a grouped view.

import (
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// checkAVDuplicateRowGrouped: copies of rows of a view grouped by select
// join their source's group, after the row they were put after (last
// without one).
func checkAVDuplicateRowGrouped(t *testing.T, s *suite) {
	v := s.newViewDB(t)
	s.tx(t, setGroupOp(v.av, v.block, map[string]any{"field": v.sel}))
	d0, d1 := freshID(), freshID()
	v.names[d0], v.names[d1] = "d0", "d1"
	s.tx(t, siyuan.DuplicateAttrViewRowOp(v.av, v.items[0], d0, v.items[0]),
		siyuan.DuplicateAttrViewRowOp(v.av, v.items[1], d1, ""))
	wantEqual(t, "groups after duplicating", v.storedGroups(t, s), `{"type":"select","mSelect":[{"content":"A","color":"1"}]} sort=0 hidden=1: r0 d0 r3
{"type":"select","mSelect":[{"content":"B","color":"2"}]} sort=1 hidden=1: r1 d1
{"type":"select","mSelect":[{"content":"C","color":"3"}]} sort=2 hidden=1: r4
{"type":"text","text":{"content":"_@default@_"}} sort=3 hidden=1: r2`)
	var order []string
	for _, id := range s.storedAV(t, v.av).Views[0].ItemIDs {
		order = append(order, v.names[id])
	}
	wantEqual(t, "rows after duplicating", strings.Join(order, " "), "r0 d0 r1 r2 r3 r4 d1")
}
