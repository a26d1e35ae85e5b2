package embedded

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/88250/lute/ast"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// Cell values: formatting, text and defaults, as kernel/av/value.go.

// currencies are the currency number formats, by SiYuan's names for
// them: the locale SiYuan prints one with and its format.
var currencies = map[string]struct {
	tag    language.Tag
	format string
}{
	"USD":            {language.English, "$%.2f"},
	"usDollar":       {language.English, "$%.2f"},
	"CNY":            {language.Chinese, "CN¥%.2f"},
	"yuan":           {language.Chinese, "CN¥%.2f"},
	"EUR":            {language.German, "€%.2f"},
	"euro":           {language.German, "€%.2f"},
	"GBP":            {language.English, "£%.2f"},
	"pound":          {language.English, "£%.2f"},
	"JPY":            {language.Japanese, "¥%.0f"},
	"yen":            {language.Japanese, "¥%.0f"},
	"RUB":            {language.Russian, "₽%.2f"},
	"ruble":          {language.Russian, "₽%.2f"},
	"INR":            {language.Hindi, "₹%.2f"},
	"rupee":          {language.Hindi, "₹%.2f"},
	"KRW":            {language.Korean, "₩%.0f"},
	"won":            {language.Korean, "₩%.0f"},
	"TRY":            {language.Turkish, "₺%.2f"},
	"turkishLira":    {language.Turkish, "₺%.2f"},
	"CAD":            {language.English, "CA$%.2f"},
	"canadianDollar": {language.English, "CA$%.2f"},
	"CHF":            {language.French, "CHF%.2f"},
	"franc":          {language.French, "CHF%.2f"},
	"THB":            {language.Thai, "฿%.2f"},
	"AUD":            {language.English, "A$%.2f"},
	"HKD":            {language.English, "HK$%.2f"},
	"TWD":            {language.Chinese, "NT$%.2f"},
	"MOP":            {language.Chinese, "MOP$%.2f"},
	"SGD":            {language.English, "S$%.2f"},
	"NZD":            {language.English, "NZ$%.2f"},
	"ILS":            {language.Hebrew, "ILS₪%.2f"},
	"SKK":            {language.Slovak, "SKK%.2f"},
}

// formatNumber is formatNumber of kernel/av: a number in a column's
// format. Currency formats use the locale SiYuan prints them with.
func formatNumber(content float64, format string) string {
	trim := func(s string) string { return strings.TrimRight(strings.TrimRight(s, "0"), ".") }
	p := func(tag language.Tag, f string) string { return message.NewPrinter(tag).Sprintf(f, content) }
	switch format {
	case "":
		return strconv.FormatFloat(content, 'f', -1, 64)
	case "commas":
		return trim(p(language.English, "%f"))
	case "percent":
		return trim(fmt.Sprintf("%.2f", content*100)) + "%"
	}
	if c, ok := currencies[format]; ok {
		return p(c.tag, c.format)
	}
	return strconv.FormatFloat(content, 'f', -1, 64)
}

// formatNumberValue is ValueNumber.FormatNumber: an empty number has no
// text.
func formatNumberValue(n *wire.AVValueNumber) {
	if !n.IsNotEmpty {
		n.FormattedContent = ""
		return
	}
	n.FormattedContent = formatNumber(n.Content, n.Format)
}

// newNumber is NewFormattedValueNumber, the result of a calculation:
// without a format it keeps at most five decimals.
func newNumber(content float64, format string) *wire.AVValueNumber {
	n := &wire.AVValueNumber{Content: content, IsNotEmpty: true, Format: format, FormattedContent: formatNumber(content, format)}
	if format == "" {
		n.FormattedContent = strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.5f", content), "0"), ".")
	}
	return n
}

// formatDate is the text of NewFormattedValueDate (without its duration
// format): local time, the date only when isNotTime, "→ end" when the
// value has one.
func formatDate(content, content2 int64, isNotTime, hasEndDate bool) string {
	if content == 0 {
		return ""
	}
	layout := "2006-01-02 15:04"
	if isNotTime {
		layout = "2006-01-02"
	}
	s := time.UnixMilli(content).Format(layout)
	if end := time.UnixMilli(content2); hasEndDate && !end.IsZero() {
		s += " → " + end.Format(layout)
	}
	return s
}

// formatTime is the text of a created or updated value.
func formatTime(content int64, isNotTime bool) string {
	if isNotTime {
		return time.UnixMilli(content).Format("2006-01-02")
	}
	return time.UnixMilli(content).Format("2006-01-02 15:04")
}

const avCheckedText = "√"

// valueString is Value.String: a cell as text (the number's formatted
// text when format, else %f), as search, templates and the blocks table
// see it.
func valueString(v *wire.AVValue, format bool) string {
	if v == nil {
		return ""
	}
	content := func(c *wire.AVValueContent) string {
		if c == nil {
			return ""
		}
		return strings.TrimSpace(c.Content)
	}
	switch v.Type {
	case wire.AVKeyBlock:
		if v.Block == nil {
			return ""
		}
		return strings.TrimSpace(v.Block.Content)
	case wire.AVKeyText:
		return content(v.Text)
	case wire.AVKeyNumber:
		if v.Number == nil {
			return ""
		}
		if format {
			return v.Number.FormattedContent
		}
		return fmt.Sprintf("%f", v.Number.Content)
	case wire.AVKeyDate:
		if v.Date == nil {
			return ""
		}
		return formatDate(v.Date.Content, v.Date.Content2, v.Date.IsNotTime, v.Date.HasEndDate)
	case wire.AVKeySelect:
		if len(v.MSelect) == 0 {
			return ""
		}
		return v.MSelect[0].Content
	case wire.AVKeyMSelect:
		var s []string
		for _, o := range v.MSelect {
			s = append(s, o.Content)
		}
		return strings.Join(s, " ")
	case wire.AVKeyURL:
		return content(v.URL)
	case wire.AVKeyEmail:
		return content(v.Email)
	case wire.AVKeyPhone:
		return content(v.Phone)
	case wire.AVKeyMAsset:
		var s []string
		for _, a := range v.MAsset {
			s = append(s, a.Name+" "+a.Content)
		}
		return strings.Join(s, " ")
	case wire.AVKeyTemplate:
		return content(v.Template)
	case wire.AVKeyCreated:
		if v.Created == nil {
			return ""
		}
		return v.Created.FormattedContent
	case wire.AVKeyUpdated:
		if v.Updated == nil {
			return ""
		}
		return v.Updated.FormattedContent
	case wire.AVKeyCheckbox:
		if v.Checkbox != nil && v.Checkbox.Checked {
			return avCheckedText
		}
		return ""
	case wire.AVKeyRelation:
		if v.Relation == nil {
			return ""
		}
		return joinValues(v.Relation.Contents, format)
	case wire.AVKeyRollup:
		if v.Rollup == nil {
			return ""
		}
		return joinValues(v.Rollup.Contents, format)
	}
	return ""
}

func joinValues(vs []*wire.AVValue, format bool) string {
	if len(vs) == 0 {
		return ""
	}
	s := make([]string, 0, len(vs))
	for _, v := range vs {
		s = append(s, valueString(v, format))
	}
	return strings.TrimSpace(strings.Join(s, ", "))
}

// msFromID is the time of a node ID in milliseconds (local time, as the
// kernel parses it), or now when the ID holds none.
func msFromID(id string) int64 {
	if len(id) >= 14 {
		if t, err := time.ParseInLocation("20060102150405", id[:14], time.Local); err == nil {
			return t.UnixMilli()
		}
	}
	return time.Now().UnixMilli()
}

// defaultValue is GetAttributeViewDefaultValue: an empty cell of a type,
// created (and updated) at its value ID's time.
func defaultValue(valueID, keyID, itemID, typ string, dateIsTime bool) *wire.AVValue {
	if valueID == "" {
		valueID = ast.NewNodeID()
	}
	v := &wire.AVValue{ID: valueID, KeyID: keyID, BlockID: itemID, Type: typ, CreatedAt: msFromID(valueID)}
	v.UpdatedAt = v.CreatedAt
	switch typ {
	case wire.AVKeyBlock:
		v.Block = &wire.AVValueBlock{Created: v.CreatedAt, Updated: v.UpdatedAt}
	case wire.AVKeyDate:
		v.Date = &wire.AVValueDate{IsNotTime: !dateIsTime}
	case wire.AVKeySelect, wire.AVKeyMSelect:
		v.MSelect = []*wire.AVValueSelect{}
	case wire.AVKeyMAsset:
		v.MAsset = []*wire.AVValueAsset{}
	default:
		fillNilValue(v, typ)
	}
	return v
}

// fillNilValue is FillAttributeViewNilValue: the value's type is the
// column's, and its part of that type exists.
func fillNilValue(v *wire.AVValue, typ string) {
	v.Type = typ
	content := func(c **wire.AVValueContent) {
		if *c == nil {
			*c = &wire.AVValueContent{}
		}
	}
	switch typ {
	case wire.AVKeyText:
		content(&v.Text)
	case wire.AVKeyNumber:
		if v.Number == nil {
			v.Number = &wire.AVValueNumber{}
		}
	case wire.AVKeyDate:
		if v.Date == nil {
			v.Date = &wire.AVValueDate{}
		}
	case wire.AVKeySelect, wire.AVKeyMSelect:
		if len(v.MSelect) == 0 {
			v.MSelect = []*wire.AVValueSelect{}
		}
	case wire.AVKeyURL:
		content(&v.URL)
	case wire.AVKeyEmail:
		content(&v.Email)
	case wire.AVKeyPhone:
		content(&v.Phone)
	case wire.AVKeyMAsset:
		if len(v.MAsset) == 0 {
			v.MAsset = []*wire.AVValueAsset{}
		}
	case wire.AVKeyTemplate:
		content(&v.Template)
	case wire.AVKeyCreated:
		if v.Created == nil {
			v.Created = &wire.AVValueTime{}
		}
	case wire.AVKeyUpdated:
		if v.Updated == nil {
			v.Updated = &wire.AVValueTime{}
		}
	case wire.AVKeyCheckbox:
		if v.Checkbox == nil {
			v.Checkbox = &wire.AVValueCheckbox{}
		}
	case wire.AVKeyRelation:
		if v.Relation == nil {
			v.Relation = &wire.AVValueRelation{}
		}
	case wire.AVKeyRollup:
		if v.Rollup == nil {
			v.Rollup = &wire.AVValueRollup{}
		}
	}
}

// hasTypedPart is the nil check of GetValByType: whether the value holds
// something of the type (a rollup: its first content does).
func hasTypedPart(v *wire.AVValue, typ string) bool {
	if v.Type == wire.AVKeyRollup {
		if v.Rollup == nil || len(v.Rollup.Contents) == 0 {
			return false
		}
		return hasTypedPart(v.Rollup.Contents[0], typ)
	}
	switch typ {
	case wire.AVKeyBlock:
		return v.Block != nil
	case wire.AVKeyText:
		return v.Text != nil
	case wire.AVKeyNumber:
		return v.Number != nil
	case wire.AVKeyDate:
		return v.Date != nil
	case wire.AVKeySelect, wire.AVKeyMSelect:
		return v.MSelect != nil
	case wire.AVKeyURL:
		return v.URL != nil
	case wire.AVKeyEmail:
		return v.Email != nil
	case wire.AVKeyPhone:
		return v.Phone != nil
	case wire.AVKeyMAsset:
		return v.MAsset != nil
	case wire.AVKeyTemplate:
		return v.Template != nil
	case wire.AVKeyCreated:
		return v.Created != nil
	case wire.AVKeyUpdated:
		return v.Updated != nil
	case wire.AVKeyCheckbox:
		return v.Checkbox != nil
	case wire.AVKeyRelation:
		return v.Relation != nil
	case wire.AVKeyRollup:
		return v.Rollup != nil
	}
	return false
}

// cloneValue deep-copies a value through its JSON, as Value.Clone.
func cloneValue(v *wire.AVValue) *wire.AVValue {
	c := cloneJSON(v)
	if c == nil {
		return &wire.AVValue{}
	}
	return c
}
