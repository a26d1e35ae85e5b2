package embedded

import (
	"bytes"
	"sort"
	"strings"
	"time"
	"unicode"

	"golang.org/x/text/encoding/simplifiedchinese"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// Sorting a rendered view as SiYuan 3.7.3's av.Sort does. Rows none of
// whose sorted cells was ever edited (a new row's empty cells) go last,
// oldest primary key first; the others sort by the rules in order: an
// empty cell after a filled one whatever the order, then Value.Compare
// (texts in pinyin order ignoring case, numbers, dates by day when they
// have no time, select options in the column's option order, checked
// after unchecked); rows equal under every rule keep the order of their
// primary keys' creation. The kernel's sort is not stable; neither is this
// one, so that equal rows end where the kernel puts them.

// sortRows orders the rows by the view's sorts.
func sortRows(av *wire.AttributeView, t *wire.AVTable) {
	type rule struct {
		index   int
		desc    bool
		options map[string]int
	}
	var rules []rule
	for _, s := range t.Sorts {
		for i, c := range t.Columns {
			if c.ID != s.Column {
				continue
			}
			r := rule{index: i, desc: s.Order != "ASC"}
			if c.Type == wire.AVKeySelect || c.Type == wire.AVKeyMSelect {
				if key := avKey(av, c.ID); key != nil {
					r.options = map[string]int{}
					for j, o := range key.Options {
						r.options[o.Name] = j
					}
				}
			}
			rules = append(rules, r)
			break
		}
	}
	if len(t.Sorts) == 0 {
		return
	}
	cell := func(row *wire.AVRow, i int) *wire.AVValue {
		if i < len(row.Cells) {
			return row.Cells[i].Value
		}
		return nil
	}

	var edited, unedited []*wire.AVRow
	for _, row := range t.Rows {
		isEdited := false
		for _, r := range rules {
			v := cell(row, r.index)
			if v == nil {
				continue
			}
			if v.Type == wire.AVKeyCheckbox {
				// An edited primary key makes its checkboxes edited
				// (siyuan#11016).
				if bv := rowBlockValue(row); bv != nil && valueEdited(bv) {
					isEdited = true
					break
				}
			}
			if valueEdited(v) {
				isEdited = true
				break
			}
		}
		if isEdited {
			edited = append(edited, row)
		} else {
			unedited = append(unedited, row)
		}
	}
	created := func(row *wire.AVRow) (int64, bool) {
		if bv := rowBlockValue(row); bv != nil {
			return bv.CreatedAt, true
		}
		return 0, false
	}
	sort.Slice(unedited, func(i, j int) bool {
		a, ok := created(unedited[i])
		if !ok {
			return true
		}
		b, ok := created(unedited[j])
		if !ok {
			return false
		}
		return a < b
	})
	sort.Slice(edited, func(i, j int) bool {
		sorted := true
		for _, r := range rules {
			a, b := cell(edited[i], r.index), cell(edited[j], r.index)
			if a == nil || avValueEmpty(a) {
				if b != nil && !avValueEmpty(b) {
					return false
				}
				sorted = false
				continue
			}
			if b == nil || avValueEmpty(b) {
				return true
			}
			c := compareValues(a, b, r.options)
			if c == 0 {
				sorted = false
				continue
			}
			if r.desc {
				return c > 0
			}
			return c < 0
		}
		if !sorted {
			a, ok := created(edited[i])
			if !ok {
				return false
			}
			b, ok := created(edited[j])
			if !ok {
				return false
			}
			return a < b
		}
		return false
	})
	t.Rows = append(edited, unedited...)
	if len(t.Rows) == 0 {
		t.Rows = []*wire.AVRow{}
	}
}

// avEditedSince is when the kernel began telling edited values apart
// (2024-03-07): values created before are all edited.
const avEditedSince = 1709740800000

// valueEdited is Value.IsEdited.
func valueEdited(v *wire.AVValue) bool {
	switch {
	case v.CreatedAt < avEditedSince:
		return true
	case v.Type == wire.AVKeyUpdated || v.Type == wire.AVKeyCreated:
		return true
	case v.Type == wire.AVKeyCheckbox:
		return v.CreatedAt != v.UpdatedAt
	case !avValueEmpty(v):
		return true
	}
	return v.CreatedAt != v.UpdatedAt
}

// compareValues is Value.Compare: <0, 0 or >0.
func compareValues(a, b *wire.AVValue, options map[string]int) int {
	textCmp := func(x, y string, emptyLast bool) int {
		if emptyLast {
			switch {
			case x == "" && y == "":
				return 0
			case x == "":
				return 1
			case y == "":
				return -1
			}
		}
		if x == y {
			return 0
		}
		if pinyinLess(x, y) {
			return -1
		}
		return 1
	}
	plainCmp := func(x, y *wire.AVValueContent) int {
		switch {
		case x.Content == "" && y.Content == "":
			return 0
		case x.Content == "":
			return 1
		case y.Content == "":
			return -1
		}
		return strings.Compare(x.Content, y.Content)
	}
	intCmp := func(x, y int64) int {
		switch {
		case x > y:
			return 1
		case x < y:
			return -1
		}
		return 0
	}
	switch a.Type {
	case wire.AVKeyBlock:
		if a.Block != nil && b.Block != nil {
			return textCmp(a.Block.Content, b.Block.Content, false)
		}
	case wire.AVKeyText:
		if a.Text != nil && b.Text != nil {
			return textCmp(a.Text.Content, b.Text.Content, true)
		}
	case wire.AVKeyNumber:
		if a.Number != nil && b.Number != nil {
			switch {
			case a.Number.IsNotEmpty && !b.Number.IsNotEmpty:
				return -1
			case !a.Number.IsNotEmpty && !b.Number.IsNotEmpty:
				return 1
			case !a.Number.IsNotEmpty:
				return 0
			case a.Number.Content > b.Number.Content:
				return 1
			case a.Number.Content < b.Number.Content:
				return -1
			}
			return 0
		}
	case wire.AVKeyDate:
		if a.Date != nil && b.Date != nil {
			switch {
			case a.Date.IsNotEmpty && !b.Date.IsNotEmpty:
				return -1
			case !a.Date.IsNotEmpty && !b.Date.IsNotEmpty:
				return 1
			case !a.Date.IsNotEmpty:
				return 0
			}
			day := func(d *wire.AVValueDate) int64 {
				if !d.IsNotTime {
					return d.Content
				}
				t := time.UnixMilli(d.Content)
				return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.Local).UnixMilli()
			}
			return intCmp(day(a.Date), day(b.Date))
		}
	case wire.AVKeyCreated:
		if a.Created != nil && b.Created != nil {
			return intCmp(a.Created.Content, b.Created.Content)
		}
	case wire.AVKeyUpdated:
		if a.Updated != nil && b.Updated != nil {
			return intCmp(a.Updated.Content, b.Updated.Content)
		}
	case wire.AVKeySelect, wire.AVKeyMSelect:
		if a.MSelect != nil && b.MSelect != nil {
			for i := range min(len(a.MSelect), len(b.MSelect)) {
				x, y := a.MSelect[i].Content, b.MSelect[i].Content
				if d := options[x] - options[y]; d != 0 {
					return d
				}
				if c := strings.Compare(x, y); c != 0 {
					return c
				}
			}
			return 0
		}
	case wire.AVKeyURL:
		if a.URL != nil && b.URL != nil {
			return plainCmp(a.URL, b.URL)
		}
	case wire.AVKeyEmail:
		if a.Email != nil && b.Email != nil {
			return plainCmp(a.Email, b.Email)
		}
	case wire.AVKeyPhone:
		if a.Phone != nil && b.Phone != nil {
			return plainCmp(a.Phone, b.Phone)
		}
	case wire.AVKeyMAsset:
		if a.MAsset != nil && b.MAsset != nil {
			join := func(as []*wire.AVValueAsset) string {
				var sb strings.Builder
				for _, x := range as {
					sb.WriteString(x.Content)
				}
				return sb.String()
			}
			return textCmp(join(a.MAsset), join(b.MAsset), false)
		}
	case wire.AVKeyTemplate:
		if a.Template != nil && b.Template != nil {
			x, okx := convertToFloat(a.Template.Content)
			y, oky := convertToFloat(b.Template.Content)
			if okx && oky {
				return floatCmp(x, y)
			}
			return textCmp(a.Template.Content, b.Template.Content, false)
		}
	case wire.AVKeyCheckbox:
		if a.Checkbox != nil && b.Checkbox != nil {
			switch {
			case a.Checkbox.Checked && !b.Checkbox.Checked:
				return 1
			case !a.Checkbox.Checked && b.Checkbox.Checked:
				return -1
			}
			return 0
		}
	case wire.AVKeyRelation:
		if a.Relation != nil && b.Relation != nil {
			return contentsCmp(a.Relation.Contents, b.Relation.Contents)
		}
	case wire.AVKeyRollup:
		if a.Rollup != nil && b.Rollup != nil {
			return contentsCmp(a.Rollup.Contents, b.Rollup.Contents)
		}
	}
	return 0
}

func floatCmp(x, y float64) int {
	switch {
	case x > y:
		return 1
	case x < y:
		return -1
	}
	return 0
}

// contentsCmp compares relation or rollup contents: as numbers when both
// first contents are numbers, else as their texts joined by spaces.
func contentsCmp(a, b []*wire.AVValue) int {
	if len(a) > 0 && len(b) > 0 && a[0].Type == wire.AVKeyNumber && b[0].Type == wire.AVKeyNumber {
		x, okx := convertToFloat(valueString(a[0], false))
		y, oky := convertToFloat(valueString(b[0], false))
		if okx && oky {
			return floatCmp(x, y)
		}
	}
	join := func(vs []*wire.AVValue) string {
		var sb strings.Builder
		for _, v := range vs {
			sb.WriteString(valueString(v, true))
			sb.WriteByte(' ')
		}
		return strings.TrimSpace(sb.String())
	}
	x, y := join(a), join(b)
	if x == y {
		return 0
	}
	if emojiPinyinLess(x, y) {
		return -1
	}
	return 1
}

// emojiPinyinLess is EmojiPinYinCompare: texts of emojis only compare as
// strings, others by pinyinLess.
func emojiPinyinLess(a, b string) bool {
	x, y := strings.TrimSpace(removeEmojiInvisible(a)), strings.TrimSpace(removeEmojiInvisible(b))
	if x == "" && y == "" {
		return a < b
	}
	return pinyinLess(a, b)
}

// pinyinLess is PinYinCompare: lower-cased texts without emojis and
// invisible characters, compared as GB18030 bytes (which orders Chinese
// by pinyin); a text that is a prefix of the other (or equal) is less.
func pinyinLess(a, b string) bool {
	enc := func(s string) []byte {
		s = strings.ToLower(removeEmojiInvisible(s))
		out, err := simplifiedchinese.GB18030.NewEncoder().Bytes([]byte(s))
		if err != nil {
			return []byte(s)
		}
		return out
	}
	x, y := enc(a), enc(b)
	if len(x) <= len(y) && bytes.Equal(x, y[:len(x)]) {
		return true
	}
	for i := range x {
		if i >= len(y) {
			return false
		}
		if x[i] != y[i] {
			return x[i] < y[i]
		}
	}
	return true
}

// removeEmojiInvisible drops emojis (symbols of the emoji blocks),
// invisible characters and private-use characters.
func removeEmojiInvisible(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 0x1F000 && r <= 0x1FAFF, r >= 0x2600 && r <= 0x27BF, r == 0xFE0F, r == 0x200D:
			return -1
		case unicode.Is(unicode.Co, r), unicode.Is(unicode.Cf, r), unicode.IsControl(r) && r != '\n' && r != '\t':
			return -1
		}
		return r
	}, s)
}
