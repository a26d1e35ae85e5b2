package contract

// Databases: what a view's settings do to its render. Filters, sorts and
// column calculations are set as the editor sets them (by transaction, on
// the view the database block shows) and the rows a render answers, in
// their order, compared with what SiYuan 3.7.3 answers.

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// viewDB is a database of five detached rows r0…r4 with a column of most
// types, for the view checks:
//
//	     text           num   date (12:00 UTC)   select  mSelect  done   url
//	r0   "Apple pie"    10    2025-01-10          A       x, y     true   https://a.com
//	r1   "banana"       -5    2025-03-01          B       y        false  ""
//	r2   —              —     —                   —       —        —      —
//	r3   "apple"        10.5  2025-01-10 18:00    A       z        —      —
//	r4   "Cherry APPLE" 0     2024-12-31          C       —        true   —
type viewDB struct {
	avDB
	text, num, date, ms, cb, url string
	items                        []string // r0…r4
	names                        map[string]string
}

func (s *suite) newViewDB(t *testing.T) viewDB {
	t.Helper()
	db, _ := s.newDB(t)
	v := viewDB{avDB: db, text: freshID(), num: freshID(), date: freshID(), ms: freshID(), cb: freshID(), url: freshID(),
		names: map[string]string{}}
	s.addCols(t, db, [3]string{v.text, "Text", "text"}, [3]string{v.num, "Num", "number"}, [3]string{v.date, "Date", "date"},
		[3]string{v.ms, "Tags", "mSelect"}, [3]string{v.cb, "Done", "checkbox"}, [3]string{v.url, "URL", "url"})
	var srcs []siyuan.AVSrc
	for i := range 5 {
		id := freshID()
		v.items = append(v.items, id)
		v.names[id] = fmt.Sprintf("r%d", i)
		srcs = append(srcs, siyuan.AVSrc{ItemID: id, Detached: true, Content: fmt.Sprintf("r%d", i)})
	}
	// Each row is inserted after the one before, so the manual order is r0…r4.
	for i, src := range srcs {
		prev := ""
		if i > 0 {
			prev = v.items[i-1]
		}
		s.tx(t, siyuan.InsertAttrViewBlockOp(db.av, db.block, []siyuan.AVSrc{src}, prev))
	}
	it := v.items
	s.setCells(t, db,
		[3]string{v.text, it[0], `{"text":{"content":"Apple pie"}}`},
		[3]string{v.text, it[1], `{"text":{"content":"banana"}}`},
		[3]string{v.text, it[3], `{"text":{"content":"apple"}}`},
		[3]string{v.text, it[4], `{"text":{"content":"Cherry APPLE"}}`},
		[3]string{v.num, it[0], `{"number":{"content":10,"isNotEmpty":true}}`},
		[3]string{v.num, it[1], `{"number":{"content":-5,"isNotEmpty":true}}`},
		[3]string{v.num, it[3], `{"number":{"content":10.5,"isNotEmpty":true}}`},
		[3]string{v.num, it[4], `{"number":{"content":0,"isNotEmpty":true}}`},
		[3]string{v.date, it[0], dateCell(2025, 1, 10, 12, true)},
		[3]string{v.date, it[1], dateCell(2025, 3, 1, 12, true)},
		[3]string{v.date, it[3], dateCell(2025, 1, 10, 18, false)},
		[3]string{v.date, it[4], dateCell(2024, 12, 31, 12, true)},
		[3]string{db.sel, it[0], `{"mSelect":[{"content":"A","color":"1"}]}`},
		[3]string{db.sel, it[1], `{"mSelect":[{"content":"B","color":"2"}]}`},
		[3]string{db.sel, it[3], `{"mSelect":[{"content":"A","color":"1"}]}`},
		[3]string{db.sel, it[4], `{"mSelect":[{"content":"C","color":"3"}]}`},
		[3]string{v.ms, it[0], `{"mSelect":[{"content":"x","color":"1"},{"content":"y","color":"2"}]}`},
		[3]string{v.ms, it[1], `{"mSelect":[{"content":"y","color":"2"}]}`},
		[3]string{v.ms, it[3], `{"mSelect":[{"content":"z","color":"3"}]}`},
		[3]string{v.cb, it[0], `{"checkbox":{"checked":true}}`},
		[3]string{v.cb, it[1], `{"checkbox":{"checked":false}}`},
		[3]string{v.cb, it[4], `{"checkbox":{"checked":true}}`},
		[3]string{v.url, it[0], `{"url":{"content":"https://a.com"}}`},
		[3]string{v.url, it[1], `{"url":{"content":""}}`})
	return v
}

// dateMs is a UTC hour of a day in milliseconds: noon is the same day in
// every time zone within eleven hours of UTC, which the kernel's
// day-based date filters rely on.
func dateMs(y, m, d, h int) int64 {
	return time.Date(y, time.Month(m), d, h, 0, 0, 0, time.UTC).UnixMilli()
}

func dateCell(y, m, d, h int, dateOnly bool) string {
	return fmt.Sprintf(`{"date":{"content":%d,"isNotEmpty":true,"isNotTime":%t}}`, dateMs(y, m, d, h), dateOnly)
}

// rows are the names of the rows a render answers, in order.
func (v viewDB) rows(r siyuan.AVRender) string {
	var names []string
	for _, row := range r.View.Rows {
		names = append(names, v.names[row.ID])
	}
	return strings.Join(names, " ")
}

// leaf is a filter on a column: value is the filter's value as JSON
// ("" for none).
func leaf(t *testing.T, column, operator, value string) *siyuan.AVViewFilter {
	t.Helper()
	f := &siyuan.AVViewFilter{Column: column, Operator: operator}
	if value != "" {
		f.Value = &siyuan.AVValue{}
		mustJSON(t, value, f.Value)
	}
	return f
}

func group(combination string, fs ...*siyuan.AVViewFilter) *siyuan.AVViewFilter {
	if fs == nil {
		fs = []*siyuan.AVViewFilter{}
	}
	return &siyuan.AVViewFilter{Combination: combination, Filters: fs}
}

func textValue(typ, s string) string {
	data, _ := json.Marshal(s)
	return fmt.Sprintf(`{"type":%q,%q:{"content":%s}}`, typ, typ, data)
}

// checkAVFilters: each filter operator of each column type, "and"/"or"
// groups nested, an empty "or" group and a value of the wrong type, by
// the rows a render keeps.
func checkAVFilters(t *testing.T, s *suite) {
	v := s.newViewDB(t)
	num := func(f float64) string {
		return fmt.Sprintf(`{"type":"number","number":{"content":%v,"isNotEmpty":true}}`, f)
	}
	date := func(ms, ms2 int64) string {
		return fmt.Sprintf(`{"type":"date","date":{"content":%d,"isNotEmpty":true,"content2":%d,"isNotEmpty2":%t}}`, ms, ms2, ms2 != 0)
	}
	sel := func(typ string, opts ...string) string {
		var parts []string
		for _, o := range opts {
			parts = append(parts, fmt.Sprintf(`{"content":%q,"color":"1"}`, o))
		}
		return fmt.Sprintf(`{"type":%q,"mSelect":[%s]}`, typ, strings.Join(parts, ","))
	}
	relDate := func(f *siyuan.AVViewFilter, rel string) *siyuan.AVViewFilter {
		f.RelativeDate = json.RawMessage(rel)
		return f
	}
	jan10 := dateMs(2025, 1, 10, 12)
	for _, tc := range []struct {
		name    string
		filters []*siyuan.AVViewFilter
		want    string
	}{
		{"no filter", nil, "r0 r1 r2 r3 r4"},
		{"text =", []*siyuan.AVViewFilter{leaf(t, v.text, "=", textValue("text", "APPLE"))}, "r3"},
		{"text !=", []*siyuan.AVViewFilter{leaf(t, v.text, "!=", textValue("text", "apple"))}, "r0 r1 r2 r4"},
		{"text Contains", []*siyuan.AVViewFilter{leaf(t, v.text, "Contains", textValue("text", "aPPle"))}, "r0 r3 r4"},
		{"text Does not contains", []*siyuan.AVViewFilter{leaf(t, v.text, "Does not contains", textValue("text", "apple"))}, "r1 r2"},
		{"text Starts with", []*siyuan.AVViewFilter{leaf(t, v.text, "Starts with", textValue("text", "APP"))}, "r0 r3"},
		{"text Ends with", []*siyuan.AVViewFilter{leaf(t, v.text, "Ends with", textValue("text", "apple"))}, "r3 r4"},
		{"text Is empty", []*siyuan.AVViewFilter{leaf(t, v.text, "Is empty", textValue("text", ""))}, "r2"},
		{"text Is not empty", []*siyuan.AVViewFilter{leaf(t, v.text, "Is not empty", textValue("text", ""))}, "r0 r1 r3 r4"},
		{"text Contains blank", []*siyuan.AVViewFilter{leaf(t, v.text, "Contains", textValue("text", " "))}, "r0 r1 r2 r3 r4"},
		{"text no value", []*siyuan.AVViewFilter{leaf(t, v.text, "Contains", "")}, "r0 r1 r2 r3 r4"},
		{"text value of another type", []*siyuan.AVViewFilter{leaf(t, v.text, "=", num(1))}, "r0 r1 r2 r3 r4"},
		{"primary key Contains", []*siyuan.AVViewFilter{leaf(t, v.pk, "Contains", `{"type":"block","block":{"content":"R1"}}`)}, "r1"},
		{"url Contains", []*siyuan.AVViewFilter{leaf(t, v.url, "Contains", textValue("url", "A.COM"))}, "r0"},
		{"url Is empty", []*siyuan.AVViewFilter{leaf(t, v.url, "Is empty", textValue("url", ""))}, "r1 r2 r3 r4"},
		{"number =", []*siyuan.AVViewFilter{leaf(t, v.num, "=", num(10))}, "r0"},
		{"number !=", []*siyuan.AVViewFilter{leaf(t, v.num, "!=", num(10))}, "r1 r2 r3 r4"},
		{"number >", []*siyuan.AVViewFilter{leaf(t, v.num, ">", num(0))}, "r0 r3"},
		// An empty number counts as 0 in the comparisons.
		{"number >=", []*siyuan.AVViewFilter{leaf(t, v.num, ">=", num(0))}, "r0 r2 r3 r4"},
		{"number <", []*siyuan.AVViewFilter{leaf(t, v.num, "<", num(0))}, "r1"},
		{"number <=", []*siyuan.AVViewFilter{leaf(t, v.num, "<=", num(10))}, "r0 r1 r2 r4"},
		{"number Is between", []*siyuan.AVViewFilter{leaf(t, v.num, "Is between", num(-10))}, ""},
		{"number Is empty", []*siyuan.AVViewFilter{leaf(t, v.num, "Is empty", `{"type":"number","number":{"content":0,"isNotEmpty":false}}`)}, "r2"},
		{"number empty value", []*siyuan.AVViewFilter{leaf(t, v.num, ">", `{"type":"number","number":{"content":5,"isNotEmpty":false}}`)}, "r0 r1 r2 r3 r4"},
		{"date =", []*siyuan.AVViewFilter{leaf(t, v.date, "=", date(jan10, 0))}, "r0 r3"},
		{"date !=", []*siyuan.AVViewFilter{leaf(t, v.date, "!=", date(jan10, 0))}, "r1 r4"},
		{"date >", []*siyuan.AVViewFilter{leaf(t, v.date, ">", date(jan10, 0))}, "r1"},
		{"date >=", []*siyuan.AVViewFilter{leaf(t, v.date, ">=", date(jan10, 0))}, "r0 r1 r3"},
		{"date <", []*siyuan.AVViewFilter{leaf(t, v.date, "<", date(jan10, 0))}, "r4"},
		{"date <=", []*siyuan.AVViewFilter{leaf(t, v.date, "<=", date(jan10, 0))}, "r0 r3 r4"},
		{"date Is between", []*siyuan.AVViewFilter{leaf(t, v.date, "Is between", date(dateMs(2025, 2, 1, 12), dateMs(2025, 1, 1, 12)))}, "r0 r3"},
		{"date Is empty", []*siyuan.AVViewFilter{leaf(t, v.date, "Is empty", date(0, 0))}, "r2"},
		{"date Is not empty", []*siyuan.AVViewFilter{leaf(t, v.date, "Is not empty", date(0, 0))}, "r0 r1 r3 r4"},
		{"date relative this year", []*siyuan.AVViewFilter{relDate(leaf(t, v.date, "=", date(0, 0)), `{"count":1,"unit":3,"direction":0}`)}, ""},
		{"date relative before 100 years", []*siyuan.AVViewFilter{relDate(leaf(t, v.date, ">=", date(0, 0)), `{"count":100,"unit":3,"direction":-1}`)}, "r0 r1 r3 r4"},
		{"date relative after", []*siyuan.AVViewFilter{relDate(leaf(t, v.date, "<", date(0, 0)), `{"count":2,"unit":0,"direction":1}`)}, "r0 r1 r3 r4"},
		{"select =", []*siyuan.AVViewFilter{leaf(t, v.sel, "=", sel("select", "A"))}, "r0 r3"},
		{"select !=", []*siyuan.AVViewFilter{leaf(t, v.sel, "!=", sel("select", "A"))}, "r1 r2 r4"},
		{"select Contains", []*siyuan.AVViewFilter{leaf(t, v.sel, "Contains", sel("select", "B", "C"))}, "r1 r4"},
		{"select Is empty", []*siyuan.AVViewFilter{leaf(t, v.sel, "Is empty", sel("select"))}, "r2"},
		{"select no option", []*siyuan.AVViewFilter{leaf(t, v.sel, "=", sel("select"))}, "r0 r1 r2 r3 r4"},
		{"mSelect Contains", []*siyuan.AVViewFilter{leaf(t, v.ms, "Contains", sel("mSelect", "y"))}, "r0 r1"},
		{"mSelect Does not contains", []*siyuan.AVViewFilter{leaf(t, v.ms, "Does not contains", sel("mSelect", "y"))}, "r2 r3 r4"},
		{"mSelect Is not empty", []*siyuan.AVViewFilter{leaf(t, v.ms, "Is not empty", sel("mSelect"))}, "r0 r1 r3"},
		{"checkbox Is true", []*siyuan.AVViewFilter{leaf(t, v.cb, "Is true", `{"type":"checkbox","checkbox":{"checked":true}}`)}, "r0 r4"},
		{"checkbox Is false", []*siyuan.AVViewFilter{leaf(t, v.cb, "Is false", `{"type":"checkbox","checkbox":{"checked":false}}`)}, "r1 r2 r3"},
		{"or group", []*siyuan.AVViewFilter{group("or", leaf(t, v.text, "Contains", textValue("text", "apple")),
			leaf(t, v.num, "<", num(0)))}, "r0 r1 r3 r4"},
		{"and group", []*siyuan.AVViewFilter{group("and", leaf(t, v.text, "Contains", textValue("text", "apple")),
			leaf(t, v.num, ">=", num(10)))}, "r0 r3"},
		{"nested groups", []*siyuan.AVViewFilter{group("and", leaf(t, v.sel, "=", sel("select", "A")),
			group("or", leaf(t, v.num, ">", num(10)), leaf(t, v.cb, "Is true", `{"type":"checkbox","checkbox":{"checked":true}}`)))}, "r0 r3"},
		{"leaves without a root group", []*siyuan.AVViewFilter{leaf(t, v.text, "Contains", textValue("text", "apple")),
			leaf(t, v.num, ">", num(0))}, "r0 r3"},
		// The render drops empty groups before filtering: an empty "or"
		// root lets every row through.
		{"empty or group", []*siyuan.AVViewFilter{group("or")}, "r0 r1 r2 r3 r4"},
		{"or group with an empty group", []*siyuan.AVViewFilter{group("or", group("or"),
			leaf(t, v.num, "<", num(0)))}, "r1"},
		{"empty and group", []*siyuan.AVViewFilter{group("and")}, "r0 r1 r2 r3 r4"},
	} {
		s.tx(t, siyuan.SetAttrViewFiltersOp(v.av, v.block, tc.filters))
		r := s.render(t, siyuan.RenderAVRequest{ID: v.av, BlockID: v.block})
		if got := v.rows(r); got != tc.want {
			t.Errorf("%s: rows %q, want %q", tc.name, got, tc.want)
		}
		if r.View.RowCount != len(r.View.Rows) {
			t.Errorf("%s: rowCount %d for %d rows", tc.name, r.View.RowCount, len(r.View.Rows))
		}
	}
	// The filters as stored: always one root group.
	s.tx(t, siyuan.SetAttrViewFiltersOp(v.av, v.block, []*siyuan.AVViewFilter{leaf(t, v.num, ">", num(0))}))
	stored := s.storedAV(t, v.av).Views[0].Filters
	if len(stored) != 1 || stored[0].Combination != "and" || len(stored[0].Filters) != 1 || stored[0].Filters[0].Column != v.num {
		t.Fatalf("stored filters = %s", normJSON(t, stored, nil))
	}
	got := normJSON(t, stored, map[string]string{v.num: "NUM"})
	wantEqual(t, "stored filters", got, `[{"column":"","operator":"","value":null,"combination":"and","filters":[{"column":"NUM","operator":"\u003e","value":{"type":"number","number":{"content":0,"isNotEmpty":true,"format":"","formattedContent":""}}}]}]`)
	// Groups nest at most three deep under the root: a deeper tree is
	// refused and the filters stay.
	deep := group("and", group("and", group("and", group("and", group("and", leaf(t, v.num, ">", num(0)))))))
	s.tx(t, siyuan.SetAttrViewFiltersOp(v.av, v.block, []*siyuan.AVViewFilter{deep}))
	if again := normJSON(t, s.storedAV(t, v.av).Views[0].Filters, map[string]string{v.num: "NUM"}); again != got {
		t.Fatalf("filters after a too deep tree:\n got %s\nwant %s", again, got)
	}
}

// checkAVSorts: one and several sort rules over each column type, by the
// order of the rows a render answers. Rows whose sorted cells were never
// set go last in either order, ties keep their creation order.
func checkAVSorts(t *testing.T, s *suite) {
	v := s.newViewDB(t)
	sorts := func(kv ...string) []*siyuan.AVViewSort {
		var ss []*siyuan.AVViewSort
		for i := 0; i < len(kv); i += 2 {
			ss = append(ss, &siyuan.AVViewSort{Column: kv[i], Order: kv[i+1]})
		}
		return ss
	}
	for _, tc := range []struct {
		name  string
		sorts []*siyuan.AVViewSort
		want  string
	}{
		{"none", nil, "r0 r1 r2 r3 r4"},
		{"text ASC", sorts(v.text, "ASC"), "r3 r0 r1 r4 r2"},
		{"text DESC", sorts(v.text, "DESC"), "r4 r1 r0 r3 r2"},
		{"number ASC", sorts(v.num, "ASC"), "r1 r4 r0 r3 r2"},
		{"number DESC", sorts(v.num, "DESC"), "r3 r0 r4 r1 r2"},
		{"date ASC", sorts(v.date, "ASC"), "r4 r0 r3 r1 r2"},
		{"date DESC", sorts(v.date, "DESC"), "r1 r3 r0 r4 r2"},
		{"select ASC", sorts(v.sel, "ASC"), "r0 r3 r1 r4 r2"},
		{"select DESC", sorts(v.sel, "DESC"), "r4 r1 r0 r3 r2"},
		{"mSelect ASC", sorts(v.ms, "ASC"), "r0 r1 r3 r2 r4"},
		{"checkbox ASC", sorts(v.cb, "ASC"), "r1 r2 r3 r0 r4"},
		{"checkbox DESC", sorts(v.cb, "DESC"), "r0 r4 r1 r2 r3"},
		{"url ASC", sorts(v.url, "ASC"), "r0 r1 r2 r3 r4"},
		{"primary key DESC", sorts(v.pk, "DESC"), "r4 r3 r2 r1 r0"},
		{"select ASC then number DESC", sorts(v.sel, "ASC", v.num, "DESC"), "r3 r0 r1 r4 r2"},
		{"unknown column", sorts(unknownID, "ASC"), "r0 r1 r2 r3 r4"},
	} {
		s.tx(t, siyuan.SetAttrViewSortsOp(v.av, v.block, tc.sorts))
		r := s.render(t, siyuan.RenderAVRequest{ID: v.av, BlockID: v.block})
		if got := v.rows(r); got != tc.want {
			t.Errorf("%s: rows %q, want %q", tc.name, got, tc.want)
		}
	}
	// Filtered, sorted, then paged.
	s.tx(t, siyuan.SetAttrViewSortsOp(v.av, v.block, sorts(v.num, "DESC")),
		siyuan.SetAttrViewFiltersOp(v.av, v.block, []*siyuan.AVViewFilter{leaf(t, v.num, ">=", `{"type":"number","number":{"content":0,"isNotEmpty":true}}`)}),
		siyuan.SetAttrViewPageSizeOp(v.av, v.block, 2))
	r := s.render(t, siyuan.RenderAVRequest{ID: v.av, BlockID: v.block, Page: 2})
	if got := v.rows(r); got != "r4 r2" || r.View.RowCount != 4 || r.View.PageSize != 2 {
		t.Fatalf("page 2 of the filtered sorted view: rows %q, rowCount %d, pageSize %d", got, r.View.RowCount, r.View.PageSize)
	}
	stored := s.storedAV(t, v.av).Views[0]
	if got := normJSON(t, stored.Sorts, map[string]string{v.num: "NUM"}); got != `[{"column":"NUM","order":"DESC"}]` || stored.PageSize != 2 {
		t.Fatalf("stored sorts %s, page size %d", got, stored.PageSize)
	}
}

// checkAVCalcs: column calculations of each type, in the render's
// columns, over the rows left after filtering.
func checkAVCalcs(t *testing.T, s *suite) {
	v := s.newViewDB(t)
	cols := []string{v.pk, v.sel, v.text, v.num, v.date, v.ms, v.cb, v.url}
	names := map[string]string{v.pk: "PK", v.sel: "SEL", v.text: "TEXT", v.num: "NUM", v.date: "DATE", v.ms: "MS", v.cb: "CB", v.url: "URL"}
	calcs := func(r siyuan.AVRender) string {
		var parts []string
		for _, c := range r.View.Columns {
			parts = append(parts, names[c.ID]+"="+string(c.Calc))
		}
		return strings.Join(parts, "\n")
	}
	for i, tc := range []struct {
		ops    [8]string // the operators of cols, in order
		filter []*siyuan.AVViewFilter
		want   string
	}{
		{ops: [8]string{"Count all", "Count unique values", "Count values", "Sum", "Earliest", "Count values", "Percent checked", "Percent empty"},
			want: avCalcs1},
		{ops: [8]string{"Count empty", "Percent not empty", "Count unique values", "Average", "Latest", "Count unique values", "Unchecked", "Count not empty"},
			want: avCalcs2},
		{ops: [8]string{"Count values", "Count empty", "Percent unique values", "Median", "Count values", "Percent empty", "Checked", "Count unique values"},
			want: avCalcs3},
		{ops: [8]string{"Percent empty", "Sum", "Min", "Max", "Count empty", "Count not empty", "Percent unchecked", "Sum"},
			want: avCalcs4},
		{ops: [8]string{"", "Count all", "Percent not empty", "Range", "Percent unique values", "Count all", "Count all", ""},
			filter: []*siyuan.AVViewFilter{leaf(t, v.num, ">", `{"type":"number","number":{"content":0,"isNotEmpty":true}}`)},
			want:   avCalcs5},
	} {
		ops := []siyuan.Operation{siyuan.SetAttrViewFiltersOp(v.av, v.block, tc.filter)}
		for j, op := range tc.ops {
			ops = append(ops, siyuan.SetAttrViewColCalcOp(v.av, v.block, cols[j], op))
		}
		s.tx(t, ops...)
		r := s.render(t, siyuan.RenderAVRequest{ID: v.av, BlockID: v.block})
		if got := calcs(r); got != tc.want {
			t.Errorf("calculations %d:\n got %s\nwant %s", i+1, got, tc.want)
		}
	}
	// The stored calculation: the operator, with the result the render
	// computed left out of the file.
	stored := s.storedAV(t, v.av).Views[0].Table.Columns
	var got []string
	for _, c := range stored {
		got = append(got, names[c.ID]+"="+string(c.Calc))
	}
	wantEqual(t, "stored calculations", strings.Join(got, " "), avCalcsStored)
}

// The calculations of checkAVCalcs as SiYuan 3.7.3 renders them.
const (
	avCalcs1 = `PK={"operator":"Count all","result":{"number":{"content":5,"isNotEmpty":true,"format":"","formattedContent":"5"}}}
SEL={"operator":"Count unique values","result":{"number":{"content":3,"isNotEmpty":true,"format":"","formattedContent":"3"}}}
TEXT={"operator":"Count values","result":{"number":{"content":4,"isNotEmpty":true,"format":"","formattedContent":"4"}}}
NUM={"operator":"Sum","result":{"number":{"content":15.5,"isNotEmpty":true,"format":"","formattedContent":"15.5"}}}
DATE={"operator":"Earliest","result":{"date":{"content":1735646400000,"isNotEmpty":true,"hasEndDate":false,"isNotTime":true,"content2":0,"isNotEmpty2":true,"formattedContent":"2024-12-31"}}}
MS={"operator":"Count values","result":{"number":{"content":4,"isNotEmpty":true,"format":"","formattedContent":"4"}}}
CB={"operator":"Percent checked","result":{"number":{"content":0.4,"isNotEmpty":true,"format":"percent","formattedContent":"40%"}}}
URL={"operator":"Percent empty","result":{"number":{"content":0.8,"isNotEmpty":true,"format":"percent","formattedContent":"80%"}}}`
	avCalcs2 = `PK={"operator":"Count empty","result":{"number":{"content":0,"isNotEmpty":true,"format":"","formattedContent":"0"}}}
SEL={"operator":"Percent not empty","result":{"number":{"content":0.8,"isNotEmpty":true,"format":"percent","formattedContent":"80%"}}}
TEXT={"operator":"Count unique values","result":{"number":{"content":4,"isNotEmpty":true,"format":"","formattedContent":"4"}}}
NUM={"operator":"Average","result":{"number":{"content":3.875,"isNotEmpty":true,"format":"","formattedContent":"3.875"}}}
DATE={"operator":"Latest","result":{"date":{"content":1740830400000,"isNotEmpty":true,"hasEndDate":false,"isNotTime":true,"content2":0,"isNotEmpty2":true,"formattedContent":"2025-03-01"}}}
MS={"operator":"Count unique values","result":{"number":{"content":3,"isNotEmpty":true,"format":"","formattedContent":"3"}}}
CB={"operator":"Unchecked","result":{"number":{"content":3,"isNotEmpty":true,"format":"","formattedContent":"3"}}}
URL={"operator":"Count not empty","result":{"number":{"content":1,"isNotEmpty":true,"format":"","formattedContent":"1"}}}`
	avCalcs3 = `PK={"operator":"Count values","result":{"number":{"content":5,"isNotEmpty":true,"format":"","formattedContent":"5"}}}
SEL={"operator":"Count empty","result":{"number":{"content":1,"isNotEmpty":true,"format":"","formattedContent":"1"}}}
TEXT={"operator":"Percent unique values","result":{"number":{"content":0.8,"isNotEmpty":true,"format":"percent","formattedContent":"80%"}}}
NUM={"operator":"Median","result":{"number":{"content":5,"isNotEmpty":true,"format":"","formattedContent":"5"}}}
DATE={"operator":"Count values","result":{"number":{"content":4,"isNotEmpty":true,"format":"","formattedContent":"4"}}}
MS={"operator":"Percent empty","result":{"number":{"content":0.4,"isNotEmpty":true,"format":"percent","formattedContent":"40%"}}}
CB={"operator":"Checked","result":{"number":{"content":2,"isNotEmpty":true,"format":"","formattedContent":"2"}}}
URL={"operator":"Count unique values","result":{"number":{"content":1,"isNotEmpty":true,"format":"","formattedContent":"1"}}}`
	avCalcs4 = `PK={"operator":"Percent empty","result":{"number":{"content":0,"isNotEmpty":true,"format":"percent","formattedContent":"0%"}}}
SEL={"operator":"Sum","result":null}
TEXT={"operator":"Min","result":null}
NUM={"operator":"Max","result":{"number":{"content":10.5,"isNotEmpty":true,"format":"","formattedContent":"10.5"}}}
DATE={"operator":"Count empty","result":{"number":{"content":1,"isNotEmpty":true,"format":"","formattedContent":"1"}}}
MS={"operator":"Count not empty","result":{"number":{"content":3,"isNotEmpty":true,"format":"","formattedContent":"3"}}}
CB={"operator":"Percent unchecked","result":{"number":{"content":0.6,"isNotEmpty":true,"format":"percent","formattedContent":"60%"}}}
URL={"operator":"Sum","result":null}`
	avCalcs5 = `PK={"operator":"","result":null}
SEL={"operator":"Count all","result":{"number":{"content":2,"isNotEmpty":true,"format":"","formattedContent":"2"}}}
TEXT={"operator":"Percent not empty","result":{"number":{"content":1,"isNotEmpty":true,"format":"percent","formattedContent":"100%"}}}
NUM={"operator":"Range","result":{"number":{"content":0.5,"isNotEmpty":true,"format":"","formattedContent":"0.5"}}}
DATE={"operator":"Percent unique values","result":{"number":{"content":1,"isNotEmpty":true,"format":"percent","formattedContent":"100%"}}}
MS={"operator":"Count all","result":{"number":{"content":2,"isNotEmpty":true,"format":"","formattedContent":"2"}}}
CB={"operator":"Count all","result":{"number":{"content":2,"isNotEmpty":true,"format":"","formattedContent":"2"}}}
URL={"operator":"","result":null}`
	avCalcsStored = `PK={"operator":"","result":null} SEL={"operator":"Count all","result":null} TEXT={"operator":"Percent not empty","result":null} NUM={"operator":"Range","result":null} DATE={"operator":"Percent unique values","result":null} MS={"operator":"Count all","result":null} CB={"operator":"Count all","result":null} URL={"operator":"","result":null}`
)

// checkAVViewSettings: a second table view added to a database, shown by
// its block; the settings of that view (hidden and moved columns, page
// size, name, filters) leave the first view as it was.
func checkAVViewSettings(t *testing.T, s *suite) {
	v := s.newViewDB(t)
	first := s.storedAV(t, v.av).ViewID
	second := freshID()
	s.tx(t, siyuan.AddAttrViewViewOp(v.av, second, v.block, "table"))
	r := s.render(t, siyuan.RenderAVRequest{ID: v.av, BlockID: v.block})
	if r.ViewID != second || r.ViewType != "table" || len(r.Views) != 2 || r.Views[1].ID != second || r.Views[1].Name != "Table" {
		t.Fatalf("render after addAttrViewView: viewID %s, views %s", r.ViewID, normJSON(t, r.Views, nil))
	}
	if got := v.rows(r); got != "r0 r1 r2 r3 r4" {
		t.Fatalf("second view rows %q", got)
	}
	if a := s.treeAttrs(t, v.block); a["custom-sy-av-view"] != second {
		t.Fatalf("database block attrs %v", a)
	}
	s.tx(t, siyuan.SetAttrViewColHiddenOp(v.av, v.block, v.num, true),
		siyuan.SortAttrViewColOp(v.av, v.block, v.url, ""),
		siyuan.SortAttrViewColOp(v.av, v.block, v.text, v.date),
		siyuan.SortAttrViewColOp(v.av, v.block, v.ms, v.ms),
		siyuan.SetAttrViewPageSizeOp(v.av, v.block, 3),
		siyuan.SetAttrViewViewNameOp(v.av, second, "  Second  "),
		siyuan.SetAttrViewFiltersOp(v.av, v.block, []*siyuan.AVViewFilter{leaf(t, v.cb, "Is true", `{"type":"checkbox","checkbox":{"checked":true}}`)}))
	names := map[string]string{v.pk: "PK", v.sel: "SEL", v.text: "TEXT", v.num: "NUM", v.date: "DATE", v.ms: "MS", v.cb: "CB", v.url: "URL"}
	cols := func(r siyuan.AVRender) string {
		var parts []string
		for _, c := range r.View.Columns {
			p := names[c.ID]
			if c.Hidden {
				p += "(hidden)"
			}
			parts = append(parts, p)
		}
		return strings.Join(parts, " ")
	}
	r = s.render(t, siyuan.RenderAVRequest{ID: v.av, BlockID: v.block})
	wantEqual(t, "second view columns", cols(r), "URL PK SEL NUM(hidden) DATE TEXT MS CB")
	if r.View.Name != "Second" || r.View.PageSize != 3 || r.Views[1].PageSize != 3 || v.rows(r) != "r0 r4" {
		t.Fatalf("second view: name %q, page size %d/%d, rows %q", r.View.Name, r.View.PageSize, r.Views[1].PageSize, v.rows(r))
	}
	r = s.render(t, siyuan.RenderAVRequest{ID: v.av, ViewID: first})
	wantEqual(t, "first view columns", cols(r), "PK SEL TEXT NUM DATE MS CB URL")
	if r.ViewID != first || r.View.PageSize != 50 || v.rows(r) != "r0 r1 r2 r3 r4" {
		t.Fatalf("first view: %s, page size %d, rows %q", r.ViewID, r.View.PageSize, v.rows(r))
	}
	// Rendering a view by its ID makes it the current one.
	av := s.storedAV(t, v.av)
	if av.ViewID != first {
		t.Fatalf("current view after rendering the first = %s", av.ViewID)
	}
	// The second view as stored, field for field.
	names[second] = "VIEW"
	for i, id := range v.items {
		names[id] = fmt.Sprintf("r%d", i)
	}
	sv := av.Views[1]
	names[sv.Table.ID] = "TABLE"
	wantEqual(t, "stored second view", normJSON(t, sv, names), avSecondView)
}

// avSecondView is the view checkAVViewSettings adds, as SiYuan 3.7.3
// stores it.
const avSecondView = `{"id":"VIEW","icon":"","name":"Second","hideAttrViewName":false,"desc":"","filters":[{"column":"","operator":"","value":null,"combination":"and","filters":[{"column":"CB","operator":"Is true","value":{"type":"checkbox","checkbox":{"checked":true}}}]}],"pageSize":3,"type":"table","table":{"spec":0,"id":"TABLE","showIcon":true,"wrapField":false,"columns":[{"id":"URL","wrap":false,"hidden":false,"pin":false,"width":""},{"id":"PK","wrap":false,"hidden":false,"pin":false,"width":""},{"id":"SEL","wrap":false,"hidden":false,"pin":false,"width":""},{"id":"NUM","wrap":false,"hidden":true,"pin":false,"width":""},{"id":"DATE","wrap":false,"hidden":false,"pin":false,"width":""},{"id":"TEXT","wrap":false,"hidden":false,"pin":false,"width":""},{"id":"MS","wrap":false,"hidden":false,"pin":false,"width":""},{"id":"CB","wrap":false,"hidden":false,"pin":false,"width":""}],"rowIds":null},"itemIds":["r0","r1","r2","r3","r4"],"groupCreated":0,"groupItemIds":null,"groupFolded":false,"groupHidden":0,"groupSort":0}`

// checkAVFiltersGenerated: filters on template, asset, relation and
// rollup columns, with the rollup and asset quantifiers.
func checkAVFiltersGenerated(t *testing.T, s *suite) {
	v := s.newViewDB(t)
	b, _ := s.newDB(t)
	tpl, assets, rel, roll, bnum, back := freshID(), freshID(), freshID(), freshID(), freshID(), freshID()
	s.addCols(t, v.avDB, [3]string{tpl, "Tpl", "template"}, [3]string{assets, "Files", "mAsset"},
		[3]string{rel, "Rel", "relation"}, [3]string{roll, "Roll", "rollup"})
	s.addCols(t, b, [3]string{bnum, "BNum", "number"})
	j0, j1 := freshID(), freshID()
	s.tx(t, siyuan.UpdateAttrViewColTemplateOp(v.av, tpl, `.action{.Text}`),
		siyuan.UpdateAttrViewColRelationOp(v.av, rel, "Rel", b.av, false, back, ""),
		siyuan.UpdateAttrViewColRollupOp(v.av, roll, rel, bnum, ""),
		siyuan.InsertAttrViewBlockOp(b.av, b.block, []siyuan.AVSrc{{ItemID: j0, Detached: true, Content: "B0"},
			{ItemID: j1, Detached: true, Content: "B1"}}, ""))
	s.setCells(t, b, [3]string{bnum, j0, `{"number":{"content":1.5,"isNotEmpty":true}}`},
		[3]string{bnum, j1, `{"number":{"content":2,"isNotEmpty":true}}`})
	it := v.items
	s.setCells(t, v.avDB,
		[3]string{rel, it[0], `{"relation":{"blockIDs":["` + j0 + `","` + j1 + `"]}}`},
		[3]string{rel, it[1], `{"relation":{"blockIDs":["` + j1 + `"]}}`},
		[3]string{assets, it[0], `{"mAsset":[{"type":"image","name":"","content":"assets/pic-1.png"}]}`},
		[3]string{assets, it[1], `{"mAsset":[{"type":"file","name":"Report","content":"assets/report.pdf"},{"type":"file","name":"pic notes","content":"assets/n.txt"}]}`},
		[3]string{assets, it[3], `{"mAsset":[{"type":"file","name":"x","content":"https://example.com/x"}]}`})
	rollVal := func(f float64) string {
		return fmt.Sprintf(`{"type":"rollup","rollup":{"contents":[{"type":"number","number":{"content":%v,"isNotEmpty":true}}]}}`, f)
	}
	q := func(f *siyuan.AVViewFilter, quantifier string) *siyuan.AVViewFilter {
		f.Qualifier = quantifier
		return f
	}
	for _, tc := range []struct {
		name   string
		filter *siyuan.AVViewFilter
		want   string
	}{
		{"template Contains (case kept)", leaf(t, tpl, "Contains", textValue("template", "apple")), "r3"},
		{"template =", leaf(t, tpl, "=", textValue("template", "banana")), "r1"},
		{"template >", leaf(t, tpl, ">", textValue("template", "b")), "r1"},
		{"template Is empty", leaf(t, tpl, "Is empty", textValue("template", "")), "r2"},
		{"template blank value", leaf(t, tpl, "Starts with", textValue("template", "  ")), "r0 r1 r2 r3 r4"},
		{"assets Contains", leaf(t, assets, "Contains", `{"type":"mAsset","mAsset":[{"type":"file","name":"","content":"PIC"}]}`), "r0 r1"},
		// No asset of r0 passes, so the kernel then compares whole
		// addresses: none equals "pic", and r0 passes after all.
		{"assets Does not contains", leaf(t, assets, "Does not contains", `{"type":"mAsset","mAsset":[{"type":"file","name":"","content":"pic"}]}`), "r0 r1 r3"},
		{"assets Is empty", leaf(t, assets, "Is empty", `{"type":"mAsset","mAsset":[]}`), "r2 r4"},
		{"assets All Contains", q(leaf(t, assets, "Contains", `{"type":"mAsset","mAsset":[{"type":"file","name":"","content":"assets/"}]}`), "All"), "r0 r1 r2 r4"},
		{"assets None Contains", q(leaf(t, assets, "Contains", `{"type":"mAsset","mAsset":[{"type":"file","name":"","content":"pic"}]}`), "None"), "r2 r3 r4"},
		{"relation Contains", leaf(t, rel, "Contains", `{"type":"relation","relation":{"blockIDs":["b0"]}}`), "r0"},
		{"relation Does not contains", leaf(t, rel, "Does not contains", `{"type":"relation","relation":{"blockIDs":["b0"]}}`), "r1 r2 r3 r4"},
		{"relation Is empty", leaf(t, rel, "Is empty", `{"type":"relation","relation":{"blockIDs":[]}}`), "r2 r3 r4"},
		{"rollup >", leaf(t, roll, ">", rollVal(1.8)), "r0 r1"},
		{"rollup Any >", q(leaf(t, roll, ">", rollVal(1.8)), "Any"), "r0 r1"},
		{"rollup All >", q(leaf(t, roll, ">", rollVal(1.8)), "All"), "r1 r2 r3 r4"},
		{"rollup None >", q(leaf(t, roll, ">", rollVal(1.8)), "None"), "r2 r3 r4"},
		{"rollup Is empty", leaf(t, roll, "Is empty", rollVal(0)), "r2 r3 r4"},
		{"rollup All Is not empty", q(leaf(t, roll, "Is not empty", rollVal(0)), "All"), "r0 r1"},
	} {
		s.tx(t, siyuan.SetAttrViewFiltersOp(v.av, v.block, []*siyuan.AVViewFilter{tc.filter}))
		r := s.render(t, siyuan.RenderAVRequest{ID: v.av, BlockID: v.block})
		if got := v.rows(r); got != tc.want {
			t.Errorf("%s: rows %q, want %q", tc.name, got, tc.want)
		}
	}
}
