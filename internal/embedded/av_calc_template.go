package embedded

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig/v3"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// The "Template" calculation of SiYuan 3.7.3 (av/calc_template.go): the
// column's non-blank cells (a multi-select's options and an asset
// column's files one by one) given to a Go template written with
// .action{…} delimiters, with sprig's functions and countif. The context
// holds values (the cells as numbers, 0 where not one), strings, raw (the
// values), count, nonEmptyCount, sum, avg, min, max and median. A result
// that reads as a number is a number in the column's format, another is
// text; nothing rendered (or "<no value>") leaves the result null, as a
// template that fails does (SiYuan also shows the error for 30 s).

// calcByTemplate is calcFieldByTemplate.
func calcByTemplate(col *wire.AVColumn, tpl string, cells []*wire.AVValue) *wire.AVValue {
	nums, strs, raw := templateCalcValues(cells)
	if len(nums) == 0 {
		return nil
	}
	out, err := evalCalcTemplate(tpl, templateCalcContext(nums, strs, raw))
	if err != nil || out == "" {
		return nil
	}
	if f, err := strconv.ParseFloat(strings.TrimSpace(out), 64); err == nil {
		return &wire.AVValue{Number: newNumber(f, col.NumberFormat)}
	}
	return &wire.AVValue{Type: wire.AVKeyText, Text: &wire.AVValueContent{Content: out}}
}

// templateCalcValues is collectFieldValues.
func templateCalcValues(cells []*wire.AVValue) (nums []float64, strs []string, raw []*wire.AVValue) {
	add := func(s string, v *wire.AVValue) {
		f, _ := convertToFloat(s)
		nums, strs, raw = append(nums, f), append(strs, s), append(raw, v)
	}
	for _, v := range cells {
		if v == nil || valueBlank(v) {
			continue
		}
		switch v.Type {
		case wire.AVKeyMSelect:
			for _, o := range v.MSelect {
				add(o.Content, &wire.AVValue{Type: wire.AVKeySelect, MSelect: []*wire.AVValueSelect{o}})
			}
		case wire.AVKeyMAsset:
			for _, a := range v.MAsset {
				add(a.Name+" "+a.Content, &wire.AVValue{Type: wire.AVKeyMAsset, MAsset: []*wire.AVValueAsset{a}})
			}
		default:
			add(valueString(v, false), v)
		}
	}
	return nums, strs, raw
}

// templateCalcContext is buildRollupTemplateContext.
func templateCalcContext(values []float64, strs []string, raw []*wire.AVValue) map[string]any {
	ctx := map[string]any{"values": values, "strings": strs, "raw": raw, "count": len(values),
		"nonEmptyCount": len(values), "avg": 0.0, "min": 0.0, "max": 0.0, "median": 0.0}
	sum, lo, hi := 0.0, math.MaxFloat64, -math.MaxFloat64
	for _, v := range values {
		sum += v
		lo, hi = min(lo, v), max(hi, v)
	}
	ctx["sum"] = sum
	if n := len(values); n > 0 {
		sorted := append([]float64(nil), values...)
		sort.Float64s(sorted)
		median := sorted[n/2]
		if n%2 == 0 {
			median = (sorted[n/2-1] + sorted[n/2]) / 2
		}
		ctx["avg"], ctx["min"], ctx["max"], ctx["median"] = sum/float64(n), lo, hi, median
	}
	return ctx
}

// evalCalcTemplate is evalRollupTemplate's text ("" for "<no value>").
func evalCalcTemplate(text string, ctx map[string]any) (string, error) {
	if text == "" {
		return "", nil
	}
	funcs := sprig.TxtFuncMap()
	funcs["countif"] = countIf
	tpl, err := template.New("").Delims(".action{", "}").Funcs(funcs).Parse(text)
	if err != nil {
		return "", fmt.Errorf("parse template [%s] failed: %w", text, err)
	}
	var buf bytes.Buffer
	if err := tpl.Execute(&buf, ctx); err != nil {
		return "", fmt.Errorf("execute template [%s] failed: %w", text, err)
	}
	if buf.String() == "<no value>" {
		return "", nil
	}
	return buf.String(), nil
}
