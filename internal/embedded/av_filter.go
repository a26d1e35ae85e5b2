package embedded

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// Filtering a rendered view as SiYuan 3.7.3's av.Filter does: the view's
// filters are one root group (a flat list of leaves counts as an "and"
// group); a group passes when all ("and") or any ("or") of its children
// do, an empty "and" group always and an empty "or" group never; a leaf
// on a column the view does not show never passes. A leaf compares a
// cell with the filter's value by the column's type (avFilterValue).
//
// Text comparisons ignore case (the kernel's search is case-insensitive
// unless configured otherwise), and a blank filter value lets every row
// through, as does a filter whose value is of another type than the
// column (the column's type was changed after the filter was set).

// The filter operators of SiYuan 3.7.3.
const (
	avOpEq         = "="
	avOpNe         = "!="
	avOpGt         = ">"
	avOpGe         = ">="
	avOpLt         = "<"
	avOpLe         = "<="
	avOpContains   = "Contains"
	avOpNotContain = "Does not contains"
	avOpEmpty      = "Is empty"
	avOpNotEmpty   = "Is not empty"
	avOpStarts     = "Starts with"
	avOpEnds       = "Ends with"
	avOpBetween    = "Is between"
	avOpTrue       = "Is true"
	avOpFalse      = "Is false"
)

// avRelativeDate is a filter's relative date: Count units (0 day, 1 week,
// 2 month, 3 year) before (-1) or after (1) now, or the current one (0).
type avRelativeDate struct {
	Count     int `json:"count"`
	Unit      int `json:"unit"`
	Direction int `json:"direction"`
}

func parseRelativeDate(raw json.RawMessage) *avRelativeDate {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	d := &avRelativeDate{}
	if json.Unmarshal(raw, d) != nil {
		return nil
	}
	return d
}

// filterRows keeps the rows the view's filters let through.
func filterRows(t *wire.AVTable) {
	root := filterRoot(t.Filters)
	if root == nil {
		return
	}
	col := map[string]int{}
	for i, c := range t.Columns {
		if _, ok := col[c.ID]; !ok {
			col[c.ID] = i
		}
	}
	var rows []*wire.AVRow
	for _, row := range t.Rows {
		if evalFilter(root, row, col) {
			rows = append(rows, row)
		}
	}
	t.Rows = rows
	if t.Rows == nil {
		t.Rows = []*wire.AVRow{}
	}
}

// filterRoot is the root group of a view's filters.
func filterRoot(fs []*wire.AVViewFilter) *wire.AVViewFilter {
	if len(fs) == 0 {
		return nil
	}
	if len(fs) == 1 && isFilterGroup(fs[0]) {
		return fs[0]
	}
	return &wire.AVViewFilter{Combination: "and", Filters: fs}
}

func evalFilter(f *wire.AVViewFilter, row *wire.AVRow, col map[string]int) bool {
	if f == nil {
		return false
	}
	if isFilterGroup(f) {
		if len(f.Filters) == 0 {
			return f.Combination != "or"
		}
		or := f.Combination == "or"
		for _, c := range f.Filters {
			if evalFilter(c, row, col) == or {
				return or
			}
		}
		return !or
	}
	i, ok := col[f.Column]
	if !ok || i >= len(row.Cells) {
		return false
	}
	v := row.Cells[i].Value
	if v == nil {
		return f.Operator == avOpEmpty
	}
	return avFilterValue(v, f)
}

// avFilterValue is Value.Filter: whether a cell passes a leaf.
func avFilterValue(v *wire.AVValue, f *wire.AVViewFilter) bool {
	rel, rel2 := parseRelativeDate(f.RelativeDate), parseRelativeDate(f.RelativeDate2)
	if f.Value == nil && rel == nil {
		return true
	}
	if f.Value != nil && v.Type != f.Value.Type {
		return true
	}
	if f.Qualifier == "" {
		switch f.Operator {
		case avOpEmpty:
			return avValueEmpty(v)
		case avOpNotEmpty:
			return !avValueEmpty(v)
		}
	}
	fv := f.Value
	known := f.Qualifier == "" || f.Qualifier == "Any" || f.Qualifier == "All" || f.Qualifier == "None"
	switch {
	case !known:
		// An unknown quantifier falls through the kernel's special cases.
	case v.Type == wire.AVKeyRollup && v.Rollup != nil && fv != nil && fv.Type == wire.AVKeyRollup && fv.Rollup != nil:
		return filterRollup(v, f, rel, rel2)
	case v.Type == wire.AVKeyRelation && v.Relation != nil && fv != nil && fv.Type == wire.AVKeyRelation && fv.Relation != nil:
		return filterRelation(v, f, rel, rel2)
	case v.Type == wire.AVKeyMAsset && v.MAsset != nil && fv != nil && fv.Type == wire.AVKeyMAsset:
		return filterAssets(v, f)
	}
	return compareFilter(v, fv, rel, rel2, f.Operator)
}

// filterRollup compares each of a rollup's contents with the filter's
// first content: any (the default), all or none of them must pass.
func filterRollup(v *wire.AVValue, f *wire.AVViewFilter, rel, rel2 *avRelativeDate) bool {
	contents := v.Rollup.Contents
	blank := func(c *wire.AVValue) bool { return !hasTypedPart(c, c.Type) }
	anyBlank, anyFilled := false, false
	for _, c := range contents {
		if blank(c) {
			anyBlank = true
		} else {
			anyFilled = true
		}
	}
	// The kernel also counts the related rows: fewer contents than rows
	// means some row has no value. The rendered cell keeps no count of
	// them, so a rollup is as full as its contents here.
	switch f.Operator {
	case avOpEmpty:
		switch f.Qualifier {
		case "All":
			return len(contents) == 0 || !anyFilled
		case "None":
			return len(contents) > 0 && !anyBlank
		default:
			return len(contents) == 0 || anyBlank
		}
	case avOpNotEmpty:
		switch f.Qualifier {
		case "All":
			return len(contents) > 0 && !anyBlank
		case "None":
			return len(contents) == 0 || !anyFilled
		default:
			return len(contents) > 0 && anyFilled
		}
	}
	if len(f.Value.Rollup.Contents) == 0 {
		return true
	}
	want := f.Value.Rollup.Contents[0]
	if !(rel != nil && isTimeType(want.Type)) && !hasTypedPart(f.Value, want.Type) {
		return true
	}
	pass := func(c *wire.AVValue) bool { return compareFilter(c, want, rel, rel2, f.Operator) }
	switch f.Qualifier {
	case "All":
		for _, c := range contents {
			if !pass(c) {
				return false
			}
		}
		return true
	case "None":
		for _, c := range contents {
			if pass(c) {
				return false
			}
		}
		return true
	default:
		for _, c := range contents {
			if pass(c) {
				return true
			}
		}
		return false
	}
}

// filterRelation compares the related rows' primary keys with the
// filter's first block ID (as text): Contains passes when one matches,
// "Does not contains" when none is excluded by it.
func filterRelation(v *wire.AVValue, f *wire.AVViewFilter, rel, rel2 *avRelativeDate) bool {
	if len(f.Value.Relation.BlockIDs) == 0 {
		return true
	}
	want := &wire.AVValue{Type: wire.AVKeyBlock, Block: &wire.AVValueBlock{Content: f.Value.Relation.BlockIDs[0]}}
	for _, c := range v.Relation.Contents {
		ok := compareFilter(c, want, rel, rel2, f.Operator)
		if f.Operator == avOpNotContain {
			if !ok {
				return false
			}
		} else if ok {
			return true
		}
	}
	return f.Operator == avOpNotContain
}

// filterAssets compares each asset's name (files) and address with the
// filter's first asset's address, under the leaf's quantifier.
func filterAssets(v *wire.AVValue, f *wire.AVViewFilter) bool {
	var want string
	if len(f.Value.MAsset) > 0 {
		want = f.Value.MAsset[0].Content
	}
	blank := func(a *wire.AVValueAsset) bool {
		return strings.TrimSpace(a.Name) == "" && strings.TrimSpace(a.Content) == ""
	}
	anyBlank, anyFilled := false, false
	for _, a := range v.MAsset {
		if blank(a) {
			anyBlank = true
		} else {
			anyFilled = true
		}
	}
	n := len(v.MAsset)
	switch f.Operator {
	case avOpEmpty:
		switch f.Qualifier {
		case "All":
			return n == 0 || !anyFilled
		case "None":
			return n > 0 && !anyBlank
		default:
			return n == 0 || anyBlank
		}
	case avOpNotEmpty:
		switch f.Qualifier {
		case "All":
			return n > 0 && !anyBlank
		case "None":
			return n == 0 || !anyFilled
		default:
			return n > 0 && anyFilled
		}
	}
	if len(f.Value.MAsset) == 0 {
		return true
	}
	matchName := func(a *wire.AVValueAsset) bool {
		return a.Type == "file" && filterText(f.Operator, a.Name, want)
	}
	matchContent := func(a *wire.AVValueAsset) bool {
		return (a.Type == "file" || a.Type == "image") && filterText(f.Operator, a.Content, want)
	}
	switch f.Qualifier {
	case "All":
		for _, a := range v.MAsset {
			if (a.Type == "file" || a.Type == "image") && !matchName(a) && !matchContent(a) {
				return false
			}
		}
		return true
	case "None":
		for _, a := range v.MAsset {
			if matchName(a) || matchContent(a) {
				return false
			}
		}
		return true
	default:
		for _, a := range v.MAsset {
			if matchName(a) || matchContent(a) {
				return true
			}
		}
		// No asset matched: the kernel then compares whole addresses.
		return compareFilter(v, f.Value, nil, nil, f.Operator)
	}
}

// avValueEmpty is Value.IsEmpty.
func avValueEmpty(v *wire.AVValue) bool {
	if v == nil {
		return true
	}
	content := func(c *wire.AVValueContent) bool { return c == nil || c.Content == "" }
	switch v.Type {
	case wire.AVKeyBlock:
		return v.Block == nil || v.Block.Content == ""
	case wire.AVKeyText:
		return content(v.Text)
	case wire.AVKeyNumber:
		return v.Number == nil || !v.Number.IsNotEmpty
	case wire.AVKeyDate:
		return v.Date == nil || !v.Date.IsNotEmpty
	case wire.AVKeySelect:
		return len(v.MSelect) == 0 || v.MSelect[0].Content == ""
	case wire.AVKeyMSelect:
		return len(v.MSelect) == 0
	case wire.AVKeyURL:
		return content(v.URL)
	case wire.AVKeyEmail:
		return content(v.Email)
	case wire.AVKeyPhone:
		return content(v.Phone)
	case wire.AVKeyMAsset:
		return len(v.MAsset) == 0
	case wire.AVKeyTemplate:
		return v.Template == nil || strings.TrimSpace(v.Template.Content) == ""
	case wire.AVKeyCreated:
		return v.Created == nil || !v.Created.IsNotEmpty
	case wire.AVKeyUpdated:
		return v.Updated == nil || !v.Updated.IsNotEmpty
	case wire.AVKeyCheckbox:
		return v.Checkbox == nil
	case wire.AVKeyRelation:
		return v.Relation == nil || len(v.Relation.Contents) == 0
	case wire.AVKeyRollup:
		return v.Rollup == nil || len(v.Rollup.Contents) == 0
	}
	return false
}

// compareFilter is Value.filter: a value against the filter's value (or
// relative dates) by the value's type.
func compareFilter(v, other *wire.AVValue, rel, rel2 *avRelativeDate, op string) bool {
	switch op {
	case avOpEmpty:
		return avValueEmpty(v)
	case avOpNotEmpty:
		return !avValueEmpty(v)
	}
	text := func(a, b *wire.AVValueContent) bool {
		return a != nil && b != nil && filterText(op, a.Content, b.Content)
	}
	switch v.Type {
	case wire.AVKeyBlock:
		return v.Block != nil && other != nil && other.Block != nil && filterText(op, v.Block.Content, other.Block.Content)
	case wire.AVKeyText:
		return other != nil && text(v.Text, other.Text)
	case wire.AVKeyURL:
		return other != nil && text(v.URL, other.URL)
	case wire.AVKeyEmail:
		return other != nil && text(v.Email, other.Email)
	case wire.AVKeyPhone:
		return other != nil && text(v.Phone, other.Phone)
	case wire.AVKeyNumber:
		if v.Number == nil || other == nil || other.Number == nil {
			return false
		}
		if !other.Number.IsNotEmpty {
			return true
		}
		a, b := v.Number, other.Number
		switch op {
		case avOpEq:
			return a.Content == b.Content && a.IsNotEmpty == b.IsNotEmpty
		case avOpNe:
			return a.Content != b.Content || a.IsNotEmpty != b.IsNotEmpty
		case avOpGt:
			return a.Content > b.Content
		case avOpGe:
			return a.Content >= b.Content
		case avOpLt:
			return a.Content < b.Content
		case avOpLe:
			return a.Content <= b.Content
		}
		return false
	case wire.AVKeyDate:
		if v.Date != nil && other != nil && other.Date != nil && rel == nil && !other.Date.IsNotEmpty {
			return true
		}
		if v.Date == nil || !v.Date.IsNotEmpty {
			// Empty dates are never compared (siyuan#11061).
			return false
		}
		if rel != nil {
			return filterRelativeTime(v.Date.Content, op, rel, rel2)
		}
		if other == nil || other.Date == nil {
			return true
		}
		return filterTime(v.Date.Content, v.Date.IsNotEmpty, other.Date.Content, other.Date.Content2, op)
	case wire.AVKeyCreated, wire.AVKeyUpdated:
		t, o := v.Created, (*wire.AVValueTime)(nil)
		if other != nil {
			o = other.Created
		}
		if v.Type == wire.AVKeyUpdated {
			t = v.Updated
			o = nil
			if other != nil {
				o = other.Updated
			}
		}
		if t == nil {
			return false
		}
		if rel != nil {
			return filterRelativeTime(t.Content, op, rel, rel2)
		}
		if o == nil {
			return true
		}
		return filterTime(t.Content, t.IsNotEmpty, o.Content, o.Content2, op)
	case wire.AVKeySelect, wire.AVKeyMSelect:
		if v.MSelect == nil {
			return false
		}
		if other == nil || len(other.MSelect) == 0 {
			return true
		}
		return sharedVerdict(shares(v.MSelect, other.MSelect, func(o *wire.AVValueSelect) string { return o.Content }), op)
	case wire.AVKeyMAsset:
		if len(v.MAsset) == 0 || other == nil || len(other.MAsset) == 0 {
			return false
		}
		return sharedVerdict(shares(v.MAsset, other.MAsset, func(o *wire.AVValueAsset) string { return o.Content }), op)
	case wire.AVKeyTemplate:
		if v.Template == nil || other == nil || other.Template == nil {
			return false
		}
		a, b := v.Template.Content, other.Template.Content
		if strings.TrimSpace(b) == "" {
			switch op {
			case avOpEq, avOpNe, avOpGt, avOpGe, avOpLt, avOpLe, avOpContains, avOpNotContain, avOpStarts, avOpEnds:
				return true
			}
			return false
		}
		// Templates compare case-sensitively, as strings.
		switch op {
		case avOpEq:
			return a == b
		case avOpNe:
			return a != b
		case avOpGt:
			return a > b
		case avOpGe:
			return a >= b
		case avOpLt:
			return a < b
		case avOpLe:
			return a <= b
		}
		return matchText(op, a, b)
	case wire.AVKeyCheckbox:
		if v.Checkbox == nil {
			return false
		}
		switch op {
		case avOpTrue, avOpEq:
			if other != nil && other.Checkbox != nil {
				return v.Checkbox.Checked == other.Checkbox.Checked
			}
			return v.Checkbox.Checked
		case avOpFalse:
			return !v.Checkbox.Checked
		case avOpNe:
			if other != nil && other.Checkbox != nil {
				return v.Checkbox.Checked != other.Checkbox.Checked
			}
			return !v.Checkbox.Checked
		}
		return false
	case wire.AVKeyRelation:
		// A rollup of a relation column: its first related row's key.
		if v.Relation == nil || len(v.Relation.Contents) == 0 || v.Relation.Contents[0].Block == nil ||
			other == nil || other.Relation == nil || len(other.Relation.BlockIDs) == 0 {
			return false
		}
		return filterText(op, v.Relation.Contents[0].Block.Content, other.Relation.BlockIDs[0])
	}
	return false
}

// filterText compares texts case-insensitively; a blank filter value
// passes everything but the emptiness tests.
func filterText(op, value, want string) bool {
	switch op {
	case avOpEmpty:
		return strings.TrimSpace(value) == ""
	case avOpNotEmpty:
		return strings.TrimSpace(value) != ""
	case avOpEq, avOpNe, avOpContains, avOpNotContain, avOpStarts, avOpEnds:
	default:
		return false
	}
	if strings.TrimSpace(want) == "" {
		return true
	}
	switch op {
	case avOpEq:
		return strings.EqualFold(value, want)
	case avOpNe:
		return !strings.EqualFold(value, want)
	}
	return matchText(op, strings.ToLower(value), strings.ToLower(want))
}

// matchText is a Contains, Does not contains, Starts with or Ends with
// test of a against b, as given (the caller folds case or not); any other
// operator keeps nothing.
func matchText(op, a, b string) bool {
	switch op {
	case avOpContains:
		return strings.Contains(a, b)
	case avOpNotContain:
		return !strings.Contains(a, b)
	case avOpStarts:
		return strings.HasPrefix(a, b)
	case avOpEnds:
		return strings.HasSuffix(a, b)
	}
	return false
}

// filterTime compares a time with a filter's date, by whole days in local
// time ("Is between" from the first day's start to the second's end).
func filterTime(ms int64, notEmpty bool, want, want2 int64, op string) bool {
	if op == avOpBetween && want2 != 0 && want > want2 {
		want, want2 = want2, want
	}
	t := time.UnixMilli(ms)
	start, end := dayBounds(time.UnixMilli(want))
	switch op {
	case avOpEq:
		return !t.Before(start) && t.Before(end)
	case avOpNe:
		return t.Before(start) || t.After(end)
	case avOpGt:
		return !t.Before(end)
	case avOpGe:
		return !t.Before(start)
	case avOpLt:
		return t.Before(start)
	case avOpLe:
		return !t.After(end)
	case avOpBetween:
		if want == 0 || want2 == 0 {
			return true
		}
		_, end2 := dayBounds(time.UnixMilli(want2))
		return !t.Before(start) && !t.After(end2)
	case avOpEmpty:
		return !notEmpty
	case avOpNotEmpty:
		return notEmpty
	}
	return false
}

// dayBounds are a day's first and last instants, in local time.
func dayBounds(t time.Time) (time.Time, time.Time) {
	start := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, t.Location())
	end := time.Date(t.Year(), t.Month(), t.Day(), 23, 59, 59, 999999999, t.Location())
	return start, end
}

// filterRelativeTime compares a time with the regions relative dates
// name (calcRelativeTimeRegion). A relative date without a second one
// ("Is between" always has two) stands for both.
func filterRelativeTime(ms int64, op string, rel, rel2 *avRelativeDate) bool {
	if rel2 == nil {
		rel2 = rel
	}
	t := time.UnixMilli(ms)
	now := time.Now()
	s1, e1 := relativeRegion(now, rel)
	s2, e2 := relativeRegion(now, rel2)
	d1, d2 := rel.Direction, rel2.Direction
	if op == avOpBetween && s1.After(s2) {
		s1, e1, s2, e2 = s2, e2, s1, e1
	}
	in := func(s, e time.Time) bool { return !t.Before(s) && !t.After(e) }
	switch op {
	case avOpEq:
		return in(s1, e1)
	case avOpNe:
		return t.Before(s1) || t.After(e1)
	case avOpGt:
		return t.After(e1)
	case avOpGe:
		return !t.Before(s1)
	case avOpLt:
		return t.Before(s1)
	case avOpLe:
		return !t.After(e1)
	case avOpBetween:
		// The kernel spans the two regions, except where either is the
		// current unit: then a time in either region passes. Two "before"
		// regions end where the second one starts.
		left := s1
		if !s1.Before(s2) {
			left = s2
		}
		latest := e1
		if e1.Before(e2) {
			latest = e2
		}
		var right time.Time
		switch {
		case d1 == 0 || (d2 == 0 && (d1 == -1 || d1 == 1)):
			return in(s1, e1) || in(s2, e2)
		case d1 == -1 && d2 == -1:
			right = s2
			if e1.Before(s2) {
				right = e1
			}
		case (d1 == -1 || d1 == 1) && (d2 == -1 || d2 == 1):
			right = latest
		default:
			return false
		}
		return in(left, right)
	}
	return false
}

// relativeRegion is calcRelativeTimeRegion: the first and last instants
// of the day, week (Monday to Sunday), month or year a relative date
// names.
func relativeRegion(now time.Time, d *avRelativeDate) (start, end time.Time) {
	loc := now.Location()
	y, m, day := now.Date()
	switch d.Unit {
	case 0:
		today := time.Date(y, m, day, 0, 0, 0, 0, loc)
		switch d.Direction {
		case -1:
			return today.AddDate(0, 0, -d.Count), today
		case 0:
			return today, time.Date(y, m, day, 23, 59, 59, 999999999, loc)
		case 1:
			start = today.AddDate(0, 0, d.Count)
			return start, time.Date(start.Year(), start.Month(), start.Day(), 23, 59, 59, 999999999, loc)
		}
	case 1:
		wd := int(now.Weekday())
		if wd == 0 {
			wd = 7
		}
		monday := time.Date(y, m, day-wd+1, 0, 0, 0, 0, loc)
		switch d.Direction {
		case -1:
			return monday.AddDate(0, 0, -d.Count*7), monday
		case 0:
			return monday, time.Date(y, m, day-wd+7, 23, 59, 59, 999999999, loc)
		case 1:
			start = monday.AddDate(0, 0, d.Count*7)
			return start, time.Date(start.Year(), start.Month(), start.Day()-int(start.Weekday())+7, 23, 59, 59, 999999999, loc)
		}
	case 2:
		first := time.Date(y, m, 1, 0, 0, 0, 0, loc)
		switch d.Direction {
		case -1:
			return first.AddDate(0, -d.Count, 0), first
		case 0:
			return first, time.Date(y, m+1, 1, 0, 0, 0, 0, loc).Add(-time.Nanosecond)
		case 1:
			start = first.AddDate(0, d.Count, 0)
			return start, time.Date(start.Year(), start.Month()+1, 1, 0, 0, 0, 0, loc).Add(-time.Nanosecond)
		}
	case 3:
		first := time.Date(y, 1, 1, 0, 0, 0, 0, loc)
		switch d.Direction {
		case -1:
			return first.AddDate(-d.Count, 0, 0), first
		case 0:
			return first, time.Date(y+1, 1, 1, 0, 0, 0, 0, loc).Add(-time.Nanosecond)
		case 1:
			start = first.AddDate(d.Count, 0, 0)
			return start, time.Date(start.Year()+1, 1, 1, 0, 0, 0, 0, loc).Add(-time.Nanosecond)
		}
	}
	return time.Time{}, time.Time{}
}

// shares reports whether a cell's entries (options, assets) and a filter
// value's have a content in common.
func shares[T any](cell, value []T, content func(T) string) bool {
	for _, a := range cell {
		for _, b := range value {
			if content(a) == content(b) {
				return true
			}
		}
	}
	return false
}

// sharedVerdict is the verdict of a select, multi-select or assets filter
// on whether the cell shares an entry with its value: = and Contains keep
// such a cell, != and Does not contains the others, any other operator
// keeps none.
func sharedVerdict(has bool, op string) bool {
	switch op {
	case avOpEq, avOpContains:
		return has
	case avOpNe, avOpNotContain:
		return !has
	}
	return false
}
