package embedded

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/88250/lute/ast"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// Rollups, as kernel/sql/av.go and ValueRollup.BuildContents compute them:
// for each row the related rows' values of the rollup's target column,
// then the rollup's operator over them.

// fillRollups computes the rollup cells of a rendered table. A target
// column that is a template (or, in another database, a created, updated
// or relation column) is read from a render of that database's first view.
func (r *avRenderer) fillRollups(av *wire.AttributeView, t *wire.AVTable) {
	further := map[string]*wire.AVTable{}
	for _, col := range t.Columns {
		if col.Type != wire.AVKeyRollup {
			continue
		}
		key := avKey(av, col.ID)
		if key == nil || key.Rollup == nil {
			continue
		}
		relKey := avKey(av, key.Rollup.RelationKeyID)
		if relKey == nil || relKey.Relation == nil {
			continue
		}
		dest := r.av(relKey.Relation.AvID)
		if dest == nil {
			continue
		}
		destKey := avKey(dest, key.Rollup.KeyID)
		if destKey == nil {
			continue
		}
		same := dest.ID == av.ID
		switch {
		case destKey.Type == wire.AVKeyTemplate,
			!same && (destKey.Type == wire.AVKeyUpdated || destKey.Type == wire.AVKeyCreated || destKey.Type == wire.AVKeyRelation):
			if len(dest.Views) > 0 {
				further[key.ID] = r.view(dest, dest.Views[0], "")
			}
		}
	}
	for _, row := range t.Rows {
		for _, c := range row.Cells {
			v := c.Value
			if v.Type != wire.AVKeyRollup {
				continue
			}
			// As in the kernel, a rollup that cannot be computed ends the
			// row's rollups: later ones stay empty.
			key := avKey(av, v.KeyID)
			if key == nil || key.Rollup == nil {
				break
			}
			relKey := avKey(av, key.Rollup.RelationKeyID)
			if relKey == nil || relKey.Relation == nil {
				break
			}
			relVal := avValueIn(av, relKey.ID, row.ID)
			if relVal == nil || relVal.Relation == nil {
				break
			}
			dest := r.av(relKey.Relation.AvID)
			if dest == nil {
				break
			}
			destKey := avKey(dest, key.Rollup.KeyID)
			if destKey == nil {
				break
			}
			if v.Rollup == nil {
				v.Rollup = &wire.AVValueRollup{}
			}
			buildRollup(v.Rollup, dest, destKey, relVal, key.Rollup.Calc, further[key.ID])
		}
	}
}

// avValueIn is AttributeView.GetValue: an item's value in a column.
func avValueIn(av *wire.AttributeView, keyID, itemID string) *wire.AVValue {
	if kv := avKeyValues(av, keyID); kv != nil {
		return avValueOf(kv, itemID)
	}
	return nil
}

// buildRollup is ValueRollup.BuildContents.
func buildRollup(r *wire.AVValueRollup, dest *wire.AttributeView, destKey *wire.AVKey, relVal *wire.AVValue,
	calc *wire.AVRollupCalc, further *wire.AVTable) {
	r.Contents = nil
	for _, id := range relVal.Relation.BlockIDs {
		destVal := avValueIn(dest, destKey.ID, id)
		if further != nil && (destKey.Type == wire.AVKeyTemplate || destKey.Type == wire.AVKeyUpdated || destKey.Type == wire.AVKeyCreated) {
			destVal = tableValue(further, id, destKey.ID)
		}
		if destVal == nil {
			if destKey.Type == wire.AVKeyCheckbox {
				// An unedited checkbox has no value: it counts as unchecked.
				r.Contents = append(r.Contents, defaultValue(ast.NewNodeID(), destKey.ID, id, destKey.Type, false))
			}
			continue
		}
		if !hasTypedPart(destVal, destKey.Type) {
			continue // the column's type changed since the value was set
		}
		if destKey.Type == wire.AVKeyNumber && destVal.Number != nil {
			destVal.Number.Format = destKey.NumberFormat
			formatNumberValue(destVal.Number)
		}
		r.Contents = append(r.Contents, cloneValue(destVal))
	}
	calcRollup(r, calc, destKey)
}

// calcRollup applies a rollup's operator, as ValueRollup.calcContents.
func calcRollup(r *wire.AVValueRollup, calc *wire.AVRollupCalc, destKey *wire.AVKey) {
	if calc == nil {
		return
	}
	num := func(f float64, format string) []*wire.AVValue {
		return []*wire.AVValue{{Type: wire.AVKeyNumber, Number: newNumber(f, format)}}
	}
	count := func(pred func(*wire.AVValue) bool) int {
		n := 0
		for _, v := range r.Contents {
			if pred(v) {
				n++
			}
		}
		return n
	}
	empty := func(v *wire.AVValue) bool { return valueString(v, true) == "" }
	unique := func() int {
		seen := map[string]bool{}
		for _, v := range r.Contents {
			seen[valueString(v, true)] = true
		}
		return len(seen)
	}
	checked := func(want bool) int {
		return count(func(v *wire.AVValue) bool { return v.Checkbox != nil && v.Checkbox.Checked == want })
	}
	total := len(r.Contents)
	switch calc.Operator {
	case "Unique values":
		r.Contents = uniqueContents(r.Contents)
	case "Count all":
		n := total
		if destKey.Type == wire.AVKeyRelation {
			n = 0
			for _, v := range r.Contents {
				if v.Relation != nil {
					n += len(v.Relation.BlockIDs)
				}
			}
		}
		r.Contents = num(float64(n), "")
	case "Count values":
		r.Contents = num(float64(total), "")
	case "Count unique values":
		r.Contents = num(float64(unique()), "")
	case "Count empty":
		r.Contents = num(float64(count(empty)), "")
	case "Count not empty":
		r.Contents = num(float64(total-count(empty)), "")
	case "Percent empty":
		if total > 0 {
			r.Contents = num(float64(count(empty))/float64(total), "percent")
		}
	case "Percent not empty":
		if total > 0 {
			r.Contents = num(float64(total-count(empty))/float64(total), "percent")
		}
	case "Percent unique values":
		if total > 0 {
			r.Contents = num(float64(unique())/float64(total), "percent")
		}
	case "Sum", "Average", "Median", "Min", "Max":
		nums := rollupNumbers(r.Contents)
		if res, ok := aggregate(calc.Operator, nums); ok {
			r.Contents = num(res, destKey.NumberFormat)
		}
	case "Range":
		if total < 2 {
			return
		}
		if r.Contents[0].Type == wire.AVKeyNumber || !isTimeType(r.Contents[0].Type) {
			nums := rollupNumbers(r.Contents)
			lo, _ := aggregate("Min", nums)
			hi, _ := aggregate("Max", nums)
			r.Contents = num(hi-lo, destKey.NumberFormat)
		}
		// A range of dates is a duration in words, which this kernel does
		// not render: the contents stay as they are.
	case "Earliest", "Latest":
		if total == 0 {
			return
		}
		rollupEdgeTime(r, calc.Operator == "Latest", destKey)
	case "Checked":
		r.Contents = num(float64(checked(true)), "")
	case "Unchecked":
		r.Contents = num(float64(checked(false)), "")
	case "Percent checked":
		if total > 0 {
			r.Contents = num(float64(checked(true)*100/total), "")
		}
	case "Percent unchecked":
		if total > 0 {
			r.Contents = num(float64(checked(false)*100/total), "")
		}
	}
}

func isTimeType(t string) bool {
	return t == wire.AVKeyDate || t == wire.AVKeyCreated || t == wire.AVKeyUpdated
}

// rollupNumbers are the contents as numbers: a number's content, else its
// text's digits (Convert2Float; 0 when there are none).
func rollupNumbers(vs []*wire.AVValue) []float64 {
	var nums []float64
	for _, v := range vs {
		if v.Type == wire.AVKeyNumber && v.Number != nil && v.Number.IsNotEmpty {
			nums = append(nums, v.Number.Content)
			continue
		}
		f, _ := convertToFloat(valueString(v, false))
		nums = append(nums, f)
	}
	return nums
}

func aggregate(op string, nums []float64) (float64, bool) {
	switch op {
	case "Sum":
		s := 0.0
		for _, n := range nums {
			s += n
		}
		return s, true
	case "Average":
		if len(nums) == 0 {
			return 0, false
		}
		s, _ := aggregate("Sum", nums)
		return s / float64(len(nums)), true
	case "Median":
		if len(nums) == 0 {
			return 0, false
		}
		s := append([]float64(nil), nums...)
		sort.Float64s(s)
		if len(s)%2 == 0 {
			return (s[len(s)/2-1] + s[len(s)/2]) / 2, true
		}
		return s[len(s)/2], true
	case "Min":
		m := math.MaxFloat64
		for _, n := range nums {
			m = min(m, n)
		}
		return m, m != math.MaxFloat64
	case "Max":
		m := -math.MaxFloat64
		for _, n := range nums {
			m = max(m, n)
		}
		return m, m != -math.MaxFloat64
	}
	return 0, false
}

// rollupEdgeTime is Earliest/Latest over date, created and updated values.
func rollupEdgeTime(r *wire.AVValueRollup, latest bool, destKey *wire.AVKey) {
	var edge int64
	isNotTime, hasEnd := false, false
	better := func(c int64) bool { return edge == 0 || (latest && c > edge) || (!latest && c < edge) }
	for _, v := range r.Contents {
		switch {
		case v.Type == wire.AVKeyDate && v.Date != nil && v.Date.IsNotEmpty:
			if better(v.Date.Content) {
				edge, isNotTime, hasEnd = v.Date.Content, v.Date.IsNotTime, v.Date.HasEndDate
			}
		case v.Type == wire.AVKeyUpdated && v.Updated != nil && v.Updated.IsNotEmpty:
			if better(v.Updated.Content) {
				edge, isNotTime, hasEnd = v.Updated.Content, true, false
			}
		case v.Type == wire.AVKeyCreated && v.Created != nil && v.Created.IsNotEmpty:
			if better(v.Created.Content) {
				edge, isNotTime, hasEnd = v.Created.Content, true, false
			}
		}
	}
	if edge == 0 {
		return
	}
	switch r.Contents[0].Type {
	case wire.AVKeyDate:
		d := &wire.AVValueDate{Content: edge, IsNotEmpty: true, HasEndDate: hasEnd, IsNotTime: isNotTime,
			FormattedContent: formatDate(edge, 0, isNotTime, hasEnd)}
		r.Contents = []*wire.AVValue{{Type: wire.AVKeyDate, Date: d}}
	case wire.AVKeyUpdated, wire.AVKeyCreated:
		inc := destKey.Updated
		if r.Contents[0].Type == wire.AVKeyCreated {
			inc = destKey.Created
		}
		notTime := inc != nil && !inc.IncludeTime
		t := &wire.AVValueTime{Content: edge, FormattedContent: formatTime(edge, notTime)}
		v := &wire.AVValue{Type: r.Contents[0].Type}
		if v.Type == wire.AVKeyCreated {
			v.Created = t
		} else {
			v.Updated = t
		}
		r.Contents = []*wire.AVValue{v}
	}
}

// uniqueContents is the Unique values operator: the first of each text;
// in relation, mSelect and mAsset values, the first of each element.
func uniqueContents(vs []*wire.AVValue) []*wire.AVValue {
	seen := map[string]bool{}
	first := func(k string) bool {
		if seen[k] {
			return false
		}
		seen[k] = true
		return true
	}
	var out []*wire.AVValue
	for _, v := range vs {
		switch v.Type {
		case wire.AVKeyRelation:
			if v.Relation == nil {
				continue
			}
			var keep []*wire.AVValue
			for _, c := range v.Relation.Contents {
				if first(valueString(c, true)) {
					keep = append(keep, c)
				}
			}
			v.Relation.Contents = keep
			if len(keep) > 0 {
				out = append(out, v)
			}
		case wire.AVKeyMSelect:
			var keep []*wire.AVValueSelect
			for _, o := range v.MSelect {
				if first(o.Content) {
					keep = append(keep, o)
				}
			}
			v.MSelect = keep
			if len(keep) > 0 {
				out = append(out, v)
			}
		case wire.AVKeyMAsset:
			var keep []*wire.AVValueAsset
			for _, a := range v.MAsset {
				if first(a.Content) {
					keep = append(keep, a)
				}
			}
			v.MAsset = keep
			if len(keep) > 0 {
				out = append(out, v)
			}
		default:
			if first(valueString(v, true)) {
				out = append(out, v)
			}
		}
	}
	return out
}

// convertToFloat is util.Convert2Float: the digits, dots and minus signs
// of a text (spaces and commas dropped) as a number.
func convertToFloat(s string) (float64, bool) {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsDigit(r) || r == '.' || r == '-' {
			b.WriteRune(r)
		}
	}
	f, err := strconv.ParseFloat(b.String(), 64)
	if err != nil {
		return 0, false
	}
	return f, true
}
