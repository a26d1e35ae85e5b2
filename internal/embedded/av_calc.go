package embedded

import (
	"encoding/json"
	"math"
	"sort"
	"strconv"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// Column calculations as SiYuan 3.7.3's av.Calc makes them, over the
// rows left after filtering: each table column with an operator gets a
// result, a value holding only a number (counts, percents as fractions
// in the "percent" format, sums and the like in the column's format), a
// date or a created/updated time. An operator that does not apply to the
// column's type, or has nothing to work on (an average of no numbers),
// leaves the result null.
//
// The "Range" of dates and times is a duration in words
// (av_calc_range.go); the "Template" operator renders the column's
// template (av_calc_template.go).

// avFieldCalc is the kernel's av.FieldCalc, a column's calculation.
type avFieldCalc struct {
	Operator string        `json:"operator"`
	Result   *wire.AVValue `json:"result"`
	Template string        `json:"template,omitempty"`
}

// calcColumns sets the results of the columns' calculations.
func calcColumns(t *wire.AVTable) {
	for i, col := range t.Columns {
		if len(col.Calc) == 0 || string(col.Calc) == "null" {
			continue
		}
		var calc avFieldCalc
		if json.Unmarshal(col.Calc, &calc) != nil || calc.Operator == "" {
			continue
		}
		var cells []*wire.AVValue
		for _, row := range t.Rows {
			var v *wire.AVValue
			if i < len(row.Cells) {
				v = row.Cells[i].Value
			}
			cells = append(cells, v)
		}
		if calc.Operator == "Template" {
			calc.Result = calcByTemplate(col, calc.Template, cells)
		} else {
			calc.Result = calcColumn(col, calc.Operator, cells)
		}
		if enc, err := json.Marshal(calc); err == nil {
			col.Calc = enc
		}
	}
}

// calcColumn is one column's result (nil for none).
func calcColumn(col *wire.AVColumn, op string, cells []*wire.AVValue) *wire.AVValue {
	n := len(cells)
	num := func(f float64, format string) *wire.AVValue {
		return &wire.AVValue{Number: newNumber(f, format)}
	}
	percent := func(part int) *wire.AVValue {
		if n == 0 {
			return nil
		}
		return num(float64(part)/float64(n), "percent")
	}
	if op == "Count all" {
		return num(float64(n), "")
	}
	switch col.Type {
	case wire.AVKeyCheckbox:
		checked := 0
		for _, v := range cells {
			if v != nil && v.Checkbox != nil && v.Checkbox.Checked {
				checked++
			}
		}
		unchecked := 0
		for _, v := range cells {
			if v != nil && v.Checkbox != nil && !v.Checkbox.Checked {
				unchecked++
			}
		}
		switch op {
		case "Checked":
			return num(float64(checked), "")
		case "Unchecked":
			return num(float64(unchecked), "")
		case "Percent checked":
			return percent(checked)
		case "Percent unchecked":
			return percent(unchecked)
		}
		return nil
	}

	// What counts as a value, how many values a cell holds and the keys
	// that make values unique, by type.
	filled, values, unique := 0, 0, map[string]bool{}
	for _, v := range cells {
		keys, has, count := calcKeys(col.Type, v)
		if has {
			filled++
		}
		values += count
		for _, k := range keys {
			unique[k] = true
		}
	}
	switch op {
	case "Count values":
		return num(float64(values), "")
	case "Count unique values":
		return num(float64(len(unique)), "")
	case "Count empty":
		return num(float64(n-filled), "")
	case "Count not empty":
		return num(float64(filled), "")
	case "Percent empty":
		return percent(n - filled)
	case "Percent not empty":
		return percent(filled)
	case "Percent unique values":
		if col.Type == wire.AVKeyRollup {
			// The kernel keys a rollup's contents by their text alone here.
			unique = map[string]bool{}
			for _, v := range cells {
				if v != nil && v.Rollup != nil {
					for _, c := range v.Rollup.Contents {
						unique[valueString(c, true)] = true
					}
				}
			}
		}
		return percent(len(unique))
	}

	switch col.Type {
	case wire.AVKeyNumber, wire.AVKeyRollup:
		var nums []float64
		for _, v := range cells {
			switch {
			case v == nil:
			case col.Type == wire.AVKeyNumber && v.Number != nil && v.Number.IsNotEmpty:
				nums = append(nums, v.Number.Content)
			case col.Type == wire.AVKeyRollup && v.Rollup != nil:
				for _, c := range v.Rollup.Contents {
					f, _ := convertToFloat(valueString(c, false))
					nums = append(nums, f)
				}
			}
		}
		if r, ok := calcNumbers(op, nums); ok {
			return num(r, col.NumberFormat)
		}
	case wire.AVKeyDate:
		if op == "Range" {
			return calcDateRange(cells)
		}
		var first, last *wire.AVValueDate
		for _, v := range cells {
			if v == nil || v.Date == nil || !v.Date.IsNotEmpty {
				continue
			}
			if first == nil || v.Date.Content < first.Content {
				first = v.Date
			}
			if last == nil || v.Date.Content > last.Content {
				last = v.Date
			}
		}
		d := first
		if op == "Latest" {
			d = last
		}
		if (op == "Earliest" || op == "Latest") && d != nil && d.Content != 0 {
			// NewFormattedValueDate with no end: an end of 1970 that is
			// "not empty" and, for a value with an end, shown.
			return &wire.AVValue{Date: &wire.AVValueDate{Content: d.Content, IsNotEmpty: true, HasEndDate: d.HasEndDate,
				IsNotTime: d.IsNotTime, IsNotEmpty2: true, FormattedContent: formatDate(d.Content, 0, d.IsNotTime, d.HasEndDate)}}
		}
	case wire.AVKeyCreated, wire.AVKeyUpdated:
		if op == "Range" {
			return calcTimeRange(col.Type, cells)
		}
		var lo, hi int64
		for _, v := range cells {
			t := calcTime(col.Type, v)
			if t == nil {
				continue
			}
			if lo == 0 || t.Content < lo {
				lo = t.Content
			}
			if hi == 0 || t.Content > hi {
				hi = t.Content
			}
		}
		ms := lo
		if op == "Latest" {
			ms = hi
		}
		if (op == "Earliest" || op == "Latest") && ms != 0 {
			include := col.Created != nil && col.Created.IncludeTime
			if col.Type == wire.AVKeyUpdated {
				include = col.Updated != nil && col.Updated.IncludeTime
			}
			// NewFormattedValueCreated leaves isNotEmpty false.
			t := &wire.AVValueTime{Content: ms, FormattedContent: formatTime(ms, !include)}
			if col.Type == wire.AVKeyUpdated {
				return &wire.AVValue{Updated: t}
			}
			return &wire.AVValue{Created: t}
		}
	}
	return nil
}

func calcTime(typ string, v *wire.AVValue) *wire.AVValueTime {
	if v == nil {
		return nil
	}
	if typ == wire.AVKeyUpdated {
		return v.Updated
	}
	return v.Created
}

// calcKeys is how the kernel counts a cell of a type: the keys that make
// it unique, whether it counts as filled, and how many values it holds.
func calcKeys(typ string, v *wire.AVValue) (keys []string, filled bool, count int) {
	if v == nil {
		return nil, false, 0
	}
	text := func(s string, ok bool) ([]string, bool, int) {
		if !ok || s == "" {
			return nil, false, 0
		}
		return []string{s}, true, 1
	}
	switch typ {
	case wire.AVKeyBlock:
		return text(contentOf(v.Block != nil, func() string { return v.Block.Content }))
	case wire.AVKeyText:
		return text(contentOf(v.Text != nil, func() string { return v.Text.Content }))
	case wire.AVKeyURL:
		return text(contentOf(v.URL != nil, func() string { return v.URL.Content }))
	case wire.AVKeyEmail:
		return text(contentOf(v.Email != nil, func() string { return v.Email.Content }))
	case wire.AVKeyPhone:
		return text(contentOf(v.Phone != nil, func() string { return v.Phone.Content }))
	case wire.AVKeyTemplate:
		return text(contentOf(v.Template != nil, func() string { return v.Template.Content }))
	case wire.AVKeyNumber:
		if v.Number == nil || !v.Number.IsNotEmpty {
			return nil, false, 0
		}
		return []string{strconv.FormatFloat(v.Number.Content, 'g', -1, 64)}, true, 1
	case wire.AVKeyDate:
		if v.Date == nil || !v.Date.IsNotEmpty {
			return nil, false, 0
		}
		return []string{strconv.FormatInt(v.Date.Content, 10)}, true, 1
	case wire.AVKeyCreated, wire.AVKeyUpdated:
		t := calcTime(typ, v)
		if t == nil {
			return nil, false, 0
		}
		return []string{strconv.FormatInt(t.Content, 10)}, true, 1
	case wire.AVKeySelect:
		if len(v.MSelect) == 0 || v.MSelect[0] == nil || v.MSelect[0].Content == "" {
			return nil, false, 0
		}
		return []string{v.MSelect[0].Content}, true, 1
	case wire.AVKeyMSelect:
		for _, s := range v.MSelect {
			keys = append(keys, s.Content)
		}
		return keys, len(v.MSelect) > 0, len(v.MSelect)
	case wire.AVKeyMAsset:
		for _, a := range v.MAsset {
			keys = append(keys, a.Content)
		}
		return keys, len(v.MAsset) > 0, len(v.MAsset)
	case wire.AVKeyRelation:
		// Every relation cell counts as a value; empty means no rows.
		if v.Relation == nil {
			return nil, false, 0
		}
		return v.Relation.BlockIDs, len(v.Relation.BlockIDs) > 0, 1
	case wire.AVKeyRollup:
		if v.Rollup == nil {
			return nil, false, 0
		}
		for _, c := range v.Rollup.Contents {
			switch c.Type {
			case wire.AVKeyRelation:
				if c.Relation != nil {
					for _, r := range c.Relation.Contents {
						keys = append(keys, valueString(r, true))
					}
				}
			case wire.AVKeyMSelect:
				for _, s := range c.MSelect {
					keys = append(keys, s.Content)
				}
			case wire.AVKeyMAsset:
				for _, a := range c.MAsset {
					keys = append(keys, a.Content)
				}
			default:
				keys = append(keys, valueString(c, true))
			}
		}
		return keys, len(v.Rollup.Contents) > 0, 1
	}
	return nil, false, 0
}

func contentOf(ok bool, get func() string) (string, bool) {
	if !ok {
		return "", false
	}
	return get(), true
}

// calcNumbers is Sum, Average, Median, Min, Max or Range of numbers;
// false when there is no result (no numbers, another operator).
func calcNumbers(op string, nums []float64) (float64, bool) {
	if op == "Sum" {
		s := 0.0
		for _, f := range nums {
			s += f
		}
		return s, true
	}
	if len(nums) == 0 {
		return 0, false
	}
	lo, hi, sum := math.MaxFloat64, -math.MaxFloat64, 0.0
	for _, f := range nums {
		lo, hi, sum = min(lo, f), max(hi, f), sum+f
	}
	switch op {
	case "Average":
		return sum / float64(len(nums)), true
	case "Median":
		s := append([]float64(nil), nums...)
		sort.Float64s(s)
		if len(s)%2 == 0 {
			return (s[len(s)/2-1] + s[len(s)/2]) / 2, true
		}
		return s[len(s)/2], true
	case "Min":
		return lo, true
	case "Max":
		return hi, true
	case "Range":
		return hi - lo, true
	}
	return 0, false
}
