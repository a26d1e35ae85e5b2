package embedded

import (
	"slices"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/88250/lute/ast"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// The values a row added to a filtered or grouped view starts with, as
// SiYuan 3.7.3's fillDefaultValue and getAttrViewAddingBlockDefaultValues:
// each filter on a column gives the value that passes it ("Num > 5" gives
// 6, "Status = Done" the option Done, "is empty" an empty value; a value
// from the row next to the new one when the filter gives none), then the
// group the row goes in gives the grouped column's value. Generated
// columns (relation, rollup, template, created, updated) take no value
// from a filter; a filter on a template or rollup copies the columns it
// reads from the row next to it. A filter on assets ends the computation
// (SiYuan's early return). A two-way relation value a row takes this way
// adds the row to the related rows' back cells, as setting it would.

// addingDefaults is getAttrViewAddingBlockDefaultValues.
func (r *avRenderer) addingDefaults(av *wire.AttributeView, view, groupView *wire.AVView, near *wire.AVRow, itemID string, isCreate bool, now int64) map[string]*wire.AVValue {
	ret := map[string]*wire.AVValue{}
	conf := viewGroupConf(view)
	if len(view.Filters) == 0 && conf == nil {
		return ret
	}
	funcs := r.k.templateFuncs(r.ctx, time.Now())
	tplKeys, rollupKeys := map[string][]*wire.AVKey{}, map[string]*wire.AVKey{}
	for _, kv := range av.KeyValues {
		switch kv.Key.Type {
		case wire.AVKeyTemplate:
			if keys := templateRelevantKeys(av, kv.Key, funcs); len(keys) > 0 {
				tplKeys[kv.Key.ID] = keys
			}
		case wire.AVKeyRollup:
			ru := kv.Key.Rollup
			if ru == nil {
				continue
			}
			if rel := avKeyValues(av, ru.RelationKeyID); rel != nil && rel.Key.Relation != nil && rel.Key.Relation.AvID == av.ID {
				if k := avKeyValues(av, ru.KeyID); k != nil {
					// Keyed by the rolled-up column and looked up by the
					// rollup's own ID below, as SiYuan does.
					rollupKeys[k.Key.ID] = k.Key
				}
			}
		}
	}
	filterKeys := map[string]bool{}
	if r.filterDefaults(av, view.Filters, itemID, near, tplKeys, rollupKeys, ret, filterKeys, now) {
		return ret
	}
	if conf == nil {
		return ret
	}
	kv := avKeyValues(av, conf.Field)
	if kv == nil {
		return ret
	}
	key := kv.Key
	nv := nearValue(near, key, itemID)
	gvs := groupValueOf(groupView)
	switch {
	case key.Type == wire.AVKeySelect || key.Type == wire.AVKeyMSelect:
		if opt := avOption(key, gvs); opt != nil && gvs != avGroupDefault {
			if nv == nil {
				nv = ret[key.ID]
			}
			if nv == nil {
				nv = avValueOf(kv, itemID)
			}
			sel := func() *wire.AVValueSelect { return &wire.AVValueSelect{Content: opt.Name, Color: opt.Color} }
			switch {
			case nv == nil:
				nv = defaultValue("", key.ID, itemID, key.Type, false)
				nv.MSelect = append(nv.MSelect, sel())
			case !hasOption(nv.MSelect, gvs):
				if len(nv.MSelect) == 0 || key.Type == wire.AVKeyMSelect {
					nv.MSelect = append(nv.MSelect, sel())
				} else {
					nv.MSelect = []*wire.AVValueSelect{sel()}
				}
			default:
				var vals []*wire.AVValueSelect
				if existing := avValueOf(kv, itemID); !isCreate && existing != nil {
					if !hasOption(existing.MSelect, opt.Name) {
						existing.MSelect = append(existing.MSelect, sel())
					}
					vals = existing.MSelect
				} else {
					vals = append(vals, sel())
				}
				if f := ret[key.ID]; f != nil {
					for _, v := range f.MSelect {
						if !hasOption(vals, v.Content) {
							vals = append(vals, v)
						}
					}
				}
				nv.MSelect = vals
			}
		}
		if nv != nil {
			ret[key.ID] = nv
		}
	case key.Type == wire.AVKeyTemplate && near != nil:
		for _, k := range tplKeys[key.ID] {
			if ret[k.ID] == nil {
				ret[k.ID] = nearValue(near, k, itemID)
			}
		}
	case key.Type == wire.AVKeyRollup && near != nil:
		if k, ok := rollupKeys[key.ID]; ok && ret[k.ID] == nil {
			ret[k.ID] = nearValue(near, k, itemID)
		}
	case key.Type == wire.AVKeyTemplate || key.Type == wire.AVKeyRollup:
	case near != nil && filterKeys[key.ID]:
		// The row next to it wins over the filter on the same column.
		nv = nearValue(near, key, itemID)
		ret[key.ID] = nv
		fillNow(key, nv, now)
	case near == nil && !filterKeys[key.ID]:
		nv = defaultValue("", key.ID, itemID, key.Type, false)
		if gv := groupValue(groupView); gv != nil {
			switch {
			case gv.Type == wire.AVKeyText && gv.Text != nil:
				content := gv.Text.Content
				if content == avGroupDefault {
					content = ""
				}
				switch nv.Type {
				case wire.AVKeyBlock:
					nv.Block.Content = content
				case wire.AVKeyText:
					nv.Text.Content = content
				case wire.AVKeyNumber:
					n, _ := strconv.ParseFloat(strings.Split(content, " - ")[0], 64)
					nv.Number.Content, nv.Number.IsNotEmpty = n, true
				case wire.AVKeyURL:
					nv.URL.Content = content
				case wire.AVKeyEmail:
					nv.Email.Content = content
				case wire.AVKeyPhone:
					nv.Phone.Content = content
				}
			case gv.Type == wire.AVKeyCheckbox && gv.Checkbox != nil && nv.Checkbox != nil:
				nv.Checkbox.Checked = gv.Checkbox.Checked
			}
		}
		ret[key.ID] = nv
	case nv != nil && !filterKeys[key.ID]:
		ret[key.ID] = nv
		fillNow(key, nv, now)
	}
	return ret
}

// filterDefaults is applyFilterDefaultValues: true when an asset filter
// ends the computation.
func (r *avRenderer) filterDefaults(av *wire.AttributeView, filters []*wire.AVViewFilter, itemID string, near *wire.AVRow,
	tplKeys map[string][]*wire.AVKey, rollupKeys map[string]*wire.AVKey, ret map[string]*wire.AVValue, filterKeys map[string]bool, now int64) bool {
	for _, f := range filters {
		if f == nil {
			continue
		}
		if f.Combination != "" || len(f.Filters) > 0 {
			if r.filterDefaults(av, f.Filters, itemID, near, tplKeys, rollupKeys, ret, filterKeys, now) {
				return true
			}
			continue
		}
		filterKeys[f.Column] = true
		kv := avKeyValues(av, f.Column)
		if kv == nil {
			continue
		}
		key := kv.Key
		switch {
		case key.Type == wire.AVKeyTemplate && near != nil:
			for _, k := range tplKeys[key.ID] {
				if ret[k.ID] == nil {
					ret[k.ID] = nearValue(near, k, itemID)
				}
			}
			continue
		case key.Type == wire.AVKeyRollup && near != nil:
			if k, ok := rollupKeys[key.ID]; ok && ret[k.ID] == nil {
				ret[k.ID] = nearValue(near, k, itemID)
			}
			continue
		case key.Type == wire.AVKeyMAsset:
			if near != nil {
				if _, ok := ret[key.ID]; !ok {
					ret[key.ID] = nearValue(near, key, itemID)
				}
			}
			return true
		}
		nv := affectValue(f, key, itemID, now)
		if nv == nil && filterUsable(f) {
			nv = nearValue(near, key, itemID)
		}
		if nv == nil {
			continue
		}
		if key.Type == wire.AVKeyDate && nv.Date != nil {
			if near != nil {
				if n := nearValue(near, key, itemID); n != nil && n.Date != nil {
					nv.Date.IsNotTime = n.Date.IsNotTime
				}
			}
			fillNow(key, nv, now)
		}
		ret[key.ID] = nv
	}
	return false
}

// fillNow gives a date column that fills in the current time its time.
func fillNow(key *wire.AVKey, v *wire.AVValue, now int64) {
	if v != nil && v.Date != nil && key.Date != nil && key.Date.AutoFillNow {
		v.Date.Content, v.Date.IsNotEmpty = now, true
	}
}

// filterUsable is ViewFilter.IsValid: a leaf with a value, not empty
// unless it tests emptiness or is relative.
func filterUsable(f *wire.AVViewFilter) bool {
	if f == nil || f.Value == nil {
		return false
	}
	if f.Operator != avOpEmpty && f.Operator != avOpNotEmpty {
		return !avValueEmpty(f.Value) || parseRelativeDate(f.RelativeDate) != nil
	}
	return true
}

// nearValue is getNewValueByNearItem: a copy of the next row's value with
// a new ID, for the new item.
func nearValue(near *wire.AVRow, key *wire.AVKey, itemID string) *wire.AVValue {
	if near == nil {
		return nil
	}
	v := rowValue(near, key.ID)
	if v == nil {
		return nil
	}
	c := cloneValue(v)
	c.ID, c.KeyID, c.BlockID = ast.NewNodeID(), key.ID, itemID
	c.CreatedAt = time.Now().UnixMilli()
	c.UpdatedAt = c.CreatedAt + 1000
	return c
}

func hasOption(sel []*wire.AVValueSelect, name string) bool {
	return slices.ContainsFunc(sel, func(s *wire.AVValueSelect) bool { return s != nil && s.Content == name })
}

// templateRelevantKeys is GetTemplateKeyRelevantKeys: the columns a
// template names, or the template column itself when it names none and
// parses.
func templateRelevantKeys(av *wire.AttributeView, key *wire.AVKey, funcs template.FuncMap) []*wire.AVKey {
	if key.Template == "" {
		return nil
	}
	vars, err := templateVars(key.Template, funcs)
	if err != nil {
		return nil
	}
	var ret []*wire.AVKey
	for _, kv := range av.KeyValues {
		if vars[kv.Key.Name] {
			ret = append(ret, kv.Key)
		}
	}
	if len(ret) == 0 {
		if _, err := template.New("").Delims(".action{", "}").Funcs(funcs).Parse(key.Template); err == nil {
			ret = append(ret, key)
		}
	}
	return ret
}

// affectValue is ViewFilter.GetAffectValue: the value a new row takes so
// that it passes the filter, nil when the filter gives none.
func affectValue(f *wire.AVViewFilter, key *wire.AVKey, itemID string, now int64) *wire.AVValue {
	fv := f.Value
	if fv == nil {
		return nil
	}
	switch fv.Type {
	case wire.AVKeyRelation, wire.AVKeyTemplate, wire.AVKeyRollup, wire.AVKeyUpdated, wire.AVKeyCreated:
		return nil
	}
	rel := parseRelativeDate(f.RelativeDate)
	if f.Operator != avOpEmpty && f.Operator != avOpNotEmpty && avValueEmpty(fv) && rel == nil {
		return nil
	}
	ret := cloneValue(fv)
	ret.ID, ret.KeyID, ret.BlockID = ast.NewNodeID(), key.ID, itemID
	ret.CreatedAt = time.Now().UnixMilli()
	ret.UpdatedAt = ret.CreatedAt + 1000
	text := func(c *wire.AVValueContent) string {
		if c == nil {
			return ""
		}
		return c.Content
	}
	// The text-like types: equal, contains, starts and ends with keep the
	// filter's text; not equal, does not contain and is empty clear it;
	// is not empty gives nothing.
	textLike := func(c *wire.AVValueContent) (*wire.AVValueContent, bool) {
		switch f.Operator {
		case avOpEq, avOpContains, avOpStarts, avOpEnds:
			return &wire.AVValueContent{Content: text(c)}, true
		case avOpNe, avOpNotContain, avOpEmpty:
			return &wire.AVValueContent{}, true
		case avOpNotEmpty:
			return nil, false
		}
		return c, true
	}
	var ok bool
	switch fv.Type {
	case wire.AVKeyBlock:
		content := ""
		if fv.Block != nil {
			content = fv.Block.Content
		}
		switch f.Operator {
		case avOpEq, avOpContains, avOpStarts, avOpEnds:
			ret.Block = &wire.AVValueBlock{Content: content, Created: ret.CreatedAt, Updated: ret.UpdatedAt}
		case avOpNe, avOpNotContain, avOpEmpty:
			ret.Block = &wire.AVValueBlock{Created: ret.CreatedAt, Updated: ret.UpdatedAt}
		case avOpNotEmpty:
			return nil
		}
	case wire.AVKeyText:
		if ret.Text, ok = textLike(fv.Text); !ok {
			return nil
		}
	case wire.AVKeyURL:
		if ret.URL, ok = textLike(fv.URL); !ok {
			return nil
		}
	case wire.AVKeyEmail:
		if ret.Email, ok = textLike(fv.Email); !ok {
			return nil
		}
	case wire.AVKeyPhone:
		if ret.Phone, ok = textLike(fv.Phone); !ok {
			return nil
		}
	case wire.AVKeyNumber:
		n := 0.0
		if fv.Number != nil {
			n = fv.Number.Content
		}
		switch f.Operator {
		case avOpEq, avOpGe, avOpLe:
			ret.Number = &wire.AVValueNumber{Content: n, IsNotEmpty: true}
		case avOpNe, avOpEmpty:
			ret.Number = &wire.AVValueNumber{}
		case avOpGt:
			ret.Number = &wire.AVValueNumber{Content: n + 1, IsNotEmpty: true}
		case avOpLt:
			ret.Number = &wire.AVValueNumber{Content: n - 1, IsNotEmpty: true}
		case avOpNotEmpty:
			ret.Number = &wire.AVValueNumber{IsNotEmpty: true}
		}
	case wire.AVKeyDate:
		start := time.Now()
		end := start
		if fv.Date != nil {
			start, end = time.UnixMilli(fv.Date.Content), time.UnixMilli(fv.Date.Content2)
		}
		if rel != nil {
			start, end = relativeRegion(time.Now(), rel)
		}
		at := func(t time.Time) { ret.Date = &wire.AVValueDate{Content: t.UnixMilli(), IsNotEmpty: true} }
		switch f.Operator {
		case avOpEq, avOpGe, avOpLe:
			at(start)
		case avOpGt:
			at(end.Add(24 * time.Hour))
		case avOpLt:
			at(start.Add(-24 * time.Hour))
		case avOpBetween:
			if rel2 := parseRelativeDate(f.RelativeDate2); rel2 != nil {
				start2, end2 := relativeRegion(time.Now(), rel2)
				if start.After(start2) {
					start = start2
				}
				if end.Before(end2) {
					end = end2
				}
			} else if start.After(end) {
				start, end = end, start
			}
			if t := time.Now(); start.Before(t) && t.Before(end) {
				at(t)
			} else {
				at(start)
			}
		case avOpEmpty:
			ret.Date = &wire.AVValueDate{}
		case avOpNotEmpty:
			ret.Date = &wire.AVValueDate{Content: now, IsNotEmpty: true}
		}
	case wire.AVKeySelect, wire.AVKeyMSelect:
		switch f.Operator {
		case avOpEq:
			s := &wire.AVValueSelect{Color: "1"}
			if len(key.Options) > 0 {
				s.Color = key.Options[0].Color
			}
			if len(fv.MSelect) > 0 && fv.MSelect[0] != nil {
				s.Content, s.Color = fv.MSelect[0].Content, fv.MSelect[0].Color
			}
			ret.MSelect = []*wire.AVValueSelect{s}
		case avOpNe, avOpNotContain:
			return nil
		case avOpContains:
			if len(fv.MSelect) > 0 && fv.MSelect[0] != nil {
				ret.MSelect = []*wire.AVValueSelect{{Content: fv.MSelect[0].Content, Color: fv.MSelect[0].Color}}
			}
		case avOpEmpty:
			ret.MSelect = []*wire.AVValueSelect{}
		case avOpNotEmpty:
			if len(key.Options) == 0 {
				return nil
			}
			ret.MSelect = []*wire.AVValueSelect{{Content: key.Options[0].Name, Color: key.Options[0].Color}}
		}
	case wire.AVKeyMAsset:
		switch f.Operator {
		case avOpEq, avOpContains:
			if len(fv.MAsset) > 0 && fv.MAsset[0] != nil {
				a := fv.MAsset[0]
				ret.MAsset = []*wire.AVValueAsset{{Type: a.Type, Name: a.Name, Content: a.Content}}
			}
		case avOpEmpty:
			ret.MAsset = []*wire.AVValueAsset{}
		}
	case wire.AVKeyCheckbox:
		switch f.Operator {
		case avOpTrue:
			ret.Checkbox = &wire.AVValueCheckbox{Checked: true}
		case avOpFalse:
			ret.Checkbox = &wire.AVValueCheckbox{Checked: false}
		}
	}
	return ret
}

// fillDefaults is fillDefaultValue: the defaults set on the new row's
// cells (a new cell, or the typed content of an existing one; a bound
// primary key keeps its text). A two-way relation default updates the
// other side (saving the related database when it is another).
func (r *avRenderer) fillDefaults(av *wire.AttributeView, view, groupView *wire.AVView, near *wire.AVRow, itemID string, now int64) error {
	gvs := groupValueOf(groupView)
	for keyID, nv := range r.addingDefaults(av, view, groupView, near, itemID, true, now) {
		if nv == nil {
			continue
		}
		nv.BlockID = itemID
		kv := avKeyValues(av, keyID)
		if kv == nil || nv.Type == wire.AVKeyRollup {
			continue
		}
		if (nv.Type == wire.AVKeySelect || nv.Type == wire.AVKeyMSelect) && len(nv.MSelect) == 0 && gvs != avGroupDefault {
			if opt := avOption(kv.Key, gvs); opt != nil {
				nv.MSelect = append(nv.MSelect, &wire.AVValueSelect{Content: opt.Name, Color: opt.Color})
			}
		}
		if nv.Type == wire.AVKeyRelation && nv.Relation != nil && kv.Key.Relation != nil && kv.Key.Relation.IsTwoWay {
			if err := r.k.updateBackRelations(av, kv.Key, nv, 1, nil); err != nil {
				return err
			}
		}
		existing := avValueOf(kv, itemID)
		switch {
		case existing == nil:
			kv.Values = append(kv.Values, nv)
		case existing == nv:
			delete(r.autoFill, existing)
		case existing.Type != wire.AVKeyBlock || existing.IsDetached:
			setValByType(existing, kv.Key.Type, nv)
			delete(r.autoFill, existing)
		}
	}
	return nil
}

// setValByType is Value.SetValByType with GetValByType: the typed content
// of src replaces dst's.
func setValByType(dst *wire.AVValue, typ string, src *wire.AVValue) {
	switch typ {
	case wire.AVKeyBlock:
		dst.Block = src.Block
	case wire.AVKeyText:
		dst.Text = src.Text
	case wire.AVKeyNumber:
		dst.Number = src.Number
	case wire.AVKeyDate:
		dst.Date = src.Date
	case wire.AVKeySelect, wire.AVKeyMSelect:
		dst.MSelect = src.MSelect
	case wire.AVKeyURL:
		dst.URL = src.URL
	case wire.AVKeyEmail:
		dst.Email = src.Email
	case wire.AVKeyPhone:
		dst.Phone = src.Phone
	case wire.AVKeyMAsset:
		dst.MAsset = src.MAsset
	case wire.AVKeyTemplate:
		dst.Template = src.Template
	case wire.AVKeyCreated:
		dst.Created = src.Created
	case wire.AVKeyUpdated:
		dst.Updated = src.Updated
	case wire.AVKeyCheckbox:
		dst.Checkbox = src.Checkbox
	case wire.AVKeyRelation:
		dst.Relation = src.Relation
	case wire.AVKeyRollup:
		dst.Rollup = src.Rollup
	}
}
