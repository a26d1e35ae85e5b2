package embedded

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/88250/lute/ast"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// Columns (keys) and the database's name, as model.AddAttributeViewKey,
// RemoveAttributeViewKey, updateAttributeViewColTemplate,
// updateAttributeViewColNumberFormat, updateAttributeViewColRelation,
// updateAttributeViewColRollup and setAttributeViewName.

// avAddableKeyTypes are the types addAttrViewCol accepts; any other type
// (the primary key's included) adds nothing, without an error.
var avAddableKeyTypes = map[string]bool{
	wire.AVKeyText: true, wire.AVKeyNumber: true, wire.AVKeyDate: true, wire.AVKeySelect: true, wire.AVKeyMSelect: true,
	wire.AVKeyURL: true, wire.AVKeyEmail: true, wire.AVKeyPhone: true, wire.AVKeyMAsset: true, wire.AVKeyTemplate: true,
	wire.AVKeyCreated: true, wire.AVKeyUpdated: true, wire.AVKeyCheckbox: true, wire.AVKeyRelation: true,
	wire.AVKeyRollup: true, wire.AVKeyLineNumber: true,
}

// editAV runs a change on a database under avMu and saves it.
func (k *Kernel) editAV(avID string, edit func(av *wire.AttributeView) error) error {
	k.avMu.Lock()
	defer k.avMu.Unlock()
	av, err := k.readAV(avID)
	if err != nil {
		return err
	}
	if err := edit(av); errors.Is(err, errAVNoSave) {
		return nil
	} else if err != nil {
		return err
	}
	return k.saveAV(av)
}

// avAddKey adds a column. The kernel neither checks nor deduplicates the
// key ID. In table views the column goes after previousKeyID (last when
// that is not a column), or, with no previousKeyID, first: before the
// primary key, unless the current view is a gallery or kanban. In
// gallery and kanban views the field goes after previousKeyID, else last.
func (k *Kernel) avAddKey(avID, keyID, name, typ, icon, previousKeyID string) error {
	return k.editAV(avID, func(av *wire.AttributeView) error {
		current, err := avCurrentView(av, av.ViewID)
		if err != nil {
			return err
		}
		if !avAddableKeyTypes[typ] {
			return nil
		}
		key := &wire.AVKey{ID: keyID, Name: name, Type: typ, Icon: icon}
		if typ == wire.AVKeyRollup {
			key.Rollup = &wire.AVRollup{Calc: &wire.AVRollupCalc{}}
		}
		av.KeyValues = append(av.KeyValues, &wire.AVKeyValues{Key: key})
		for _, v := range av.Views {
			if v.Table == nil {
				insertCardField(v, keyID, previousKeyID)
				continue
			}
			col := &wire.AVViewColumn{ID: keyID, Wrap: v.Table.WrapField}
			switch i := columnIndex(v.Table.Columns, previousKeyID); {
			case previousKeyID == "" && (current.LayoutType == "gallery" || current.LayoutType == "kanban"):
				v.Table.Columns = append(v.Table.Columns, col)
			case previousKeyID == "":
				v.Table.Columns = append([]*wire.AVViewColumn{col}, v.Table.Columns...)
			case i >= 0:
				v.Table.Columns = slices.Insert(v.Table.Columns, i+1, col)
			default:
				v.Table.Columns = append(v.Table.Columns, col)
			}
		}
		return nil
	})
}

func columnIndex(cols []*wire.AVViewColumn, id string) int {
	return slices.IndexFunc(cols, func(c *wire.AVViewColumn) bool { return c.ID == id })
}

// avRemoveKey removes a column and its cells from the database and its
// views. Removing one side of a two-way relation makes the other side
// one-way, or, with removeDest, removes it too.
func (k *Kernel) avRemoveKey(avID, keyID string, removeDest bool) error {
	var destToSave *wire.AttributeView
	err := k.editAV(avID, func(av *wire.AttributeView) error {
		key := avKey(av, keyID)
		if key == nil {
			return errAVKeyNotFound
		}
		if key.Type == wire.AVKeyBlock {
			return errors.New("cannot remove primary key field")
		}
		av.KeyValues = slices.DeleteFunc(av.KeyValues, func(kv *wire.AVKeyValues) bool { return kv.Key == key })
		if key.Type == wire.AVKeyRelation && key.Relation != nil && key.Relation.IsTwoWay {
			dest := av
			if key.Relation.AvID != avID {
				dest, _ = k.readAV(key.Relation.AvID)
			}
			if dest != nil {
				if back := avKey(dest, key.Relation.BackKeyID); back != nil && back.Relation != nil &&
					back.Relation.AvID == av.ID && back.Relation.IsTwoWay {
					back.Relation.IsTwoWay, back.Relation.BackKeyID = false, ""
				}
				if removeDest {
					backID := key.Relation.BackKeyID
					dest.KeyValues = slices.DeleteFunc(dest.KeyValues, func(kv *wire.AVKeyValues) bool { return kv.Key.ID == backID })
					for _, v := range dest.Views {
						if v.Table != nil {
							v.Table.Columns = removeColumn(v.Table.Columns, backID)
						}
						removeCardField(v, backID)
					}
				}
				if dest != av {
					destToSave = dest
				}
			}
		}
		for _, v := range av.Views {
			if v.Table != nil {
				v.Table.Columns = removeColumn(v.Table.Columns, keyID)
			}
			removeCardField(v, keyID)
		}
		return nil
	})
	if err != nil || destToSave == nil {
		return err
	}
	k.avMu.Lock()
	defer k.avMu.Unlock()
	return k.saveAV(destToSave)
}

// avSetName is setAttributeViewName: trimmed, line breaks as spaces, at
// most 512 characters.
func (k *Kernel) avSetName(avID, name string) error {
	return k.editAV(avID, func(av *wire.AttributeView) error {
		av.Name = truncateRunes(strings.ReplaceAll(strings.TrimSpace(name), "\n", " "), 512)
		return nil
	})
}

func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// avSetKeyTemplate sets a template column's template (typ must be
// "template" and the key one).
func (k *Kernel) avSetKeyTemplate(avID, keyID, typ, tpl string) error {
	return k.editAV(avID, func(av *wire.AttributeView) error {
		if key := avKey(av, keyID); typ == wire.AVKeyTemplate && key != nil && key.Type == wire.AVKeyTemplate {
			key.Template = tpl
		}
		return nil
	})
}

// avSetNumberFormat sets a number column's format (typ must be "number"
// and the key one). Stored values keep theirs until rendered.
func (k *Kernel) avSetNumberFormat(avID, keyID, typ, format string) error {
	return k.editAV(avID, func(av *wire.AttributeView) error {
		if key := avKey(av, keyID); typ == wire.AVKeyNumber && key != nil && key.Type == wire.AVKeyNumber {
			key.NumberFormat = format
		}
		return nil
	})
}

// avSetRelation makes keyID of srcID a relation to destID. A two-way
// relation takes (or creates, named name or "<src name> <format>") the
// key backKeyID in destID and links the rows already related; the
// relation key is renamed format.
func (k *Kernel) avSetRelation(srcID, destID, keyID, backKeyID, name, format string, twoWay bool) error {
	k.avMu.Lock()
	defer k.avMu.Unlock()
	src, err := k.readAV(srcID)
	if err != nil {
		return err
	}
	dest, err := k.readAV(destID)
	if err != nil {
		return err
	}
	same := src.ID == dest.ID
	if same {
		dest = src
	}
	var oldDest *wire.AttributeView
	if kv := avKeyValues(src, keyID); kv != nil {
		if rel := kv.Key.Relation; rel != nil && rel.IsTwoWay {
			// Break the old two-way relation first.
			old := dest
			switch rel.AvID {
			case dest.ID:
			case src.ID:
				old = src
			default:
				old, _ = k.readAV(rel.AvID)
			}
			if old != nil {
				if back := avKey(old, rel.BackKeyID); back != nil && back.Relation != nil && back.Relation.AvID == src.ID && back.Relation.IsTwoWay {
					back.Relation.IsTwoWay, back.Relation.BackKeyID = false, ""
				}
				if old != dest && old != src {
					oldDest = old
				}
			}
		}
		nr := &wire.AVRelation{AvID: destID, IsTwoWay: twoWay}
		if twoWay {
			nr.BackKeyID = backKeyID
		}
		kv.Key.Relation, kv.Key.Name = nr, format
	}
	backName := strings.TrimSpace(name)
	if backName == "" {
		backName = strings.TrimSpace(src.Name + " " + format)
	}
	if back := avKey(dest, backKeyID); back != nil {
		back.Relation = &wire.AVRelation{AvID: srcID, IsTwoWay: twoWay, BackKeyID: keyID}
		if twoWay {
			back.Name = backName
		} else {
			back.Relation.BackKeyID = ""
		}
	} else if twoWay {
		backKV := &wire.AVKeyValues{Key: &wire.AVKey{ID: backKeyID, Name: backName, Type: wire.AVKeyRelation,
			Relation: &wire.AVRelation{AvID: srcID, IsTwoWay: true, BackKeyID: keyID}}}
		dest.KeyValues = append(dest.KeyValues, backKV)
		for _, v := range dest.Views {
			appendViewField(v, backKeyID, false)
		}
		now := time.Now().UnixMilli()
		if kv := avKeyValues(src, keyID); kv != nil {
			for _, sv := range kv.Values {
				if sv.Relation == nil {
					continue
				}
				for _, id := range sv.Relation.BlockIDs {
					dv := avValueOf(backKV, id)
					if dv == nil {
						dv = &wire.AVValue{ID: ast.NewNodeID(), KeyID: backKeyID, BlockID: id, Type: kv.Key.Type,
							Relation: &wire.AVValueRelation{}, CreatedAt: now, UpdatedAt: now + 1000}
					} else {
						dv.Type, dv.UpdatedAt = kv.Key.Type, now
					}
					dv.Relation.BlockIDs = dedupe(append(dv.Relation.BlockIDs, sv.BlockID))
					// The kernel appends the value again even when it was
					// there: a row related twice gets two back cells.
					backKV.Values = append(backKV.Values, dv)
				}
			}
		}
	}
	if err := k.saveAV(src); err != nil {
		return err
	}
	if !same {
		if err := k.saveAV(dest); err != nil {
			return err
		}
	}
	if oldDest != nil {
		return k.saveAV(oldDest)
	}
	return nil
}

// avSetRollup makes rollupKeyID a rollup of targetKeyID in the database
// that relationKeyID relates to, with the calc of data ({calc:{operator}})
// when given; filters on the rollup are dropped.
func (k *Kernel) avSetRollup(avID, rollupKeyID, relationKeyID, targetKeyID string, data any) error {
	return k.editAV(avID, func(av *wire.AttributeView) error {
		key := avKey(av, rollupKeyID)
		if key == nil {
			return errAVNoSave
		}
		key.Rollup = &wire.AVRollup{RelationKeyID: relationKeyID, KeyID: targetKeyID}
		if data == nil {
			return errAVNoSave // the kernel returns before saving
		}
		m, ok := data.(map[string]any)
		if !ok {
			return errf("rollup data must be an object")
		}
		if c, ok := m["calc"]; ok && c != nil {
			raw, err := json.Marshal(c)
			if err != nil {
				return err
			}
			if err := json.Unmarshal(raw, &key.Rollup.Calc); err != nil {
				return err
			}
		}
		for _, v := range av.Views {
			v.Filters = removeFiltersOn(v.Filters, rollupKeyID)
			if len(v.Filters) == 0 {
				v.Filters = []*wire.AVViewFilter{{Combination: "and"}}
			}
		}
		return nil
	})
}

// errAVNoSave ends an edit without saving and without an error.
var errAVNoSave = errors.New("no save")

// removeFiltersOn drops the filter leaves on a column, at every depth,
// and every group left empty (or empty already), as RemoveFiltersByColumn.
func removeFiltersOn(fs []*wire.AVViewFilter, column string) []*wire.AVViewFilter {
	var ret []*wire.AVViewFilter
	for _, f := range fs {
		if f == nil {
			continue
		}
		if isFilterGroup(f) {
			if f.Filters = removeFiltersOn(f.Filters, column); len(f.Filters) > 0 {
				ret = append(ret, f)
			}
			continue
		}
		if f.Column != column {
			ret = append(ret, f)
		}
	}
	return ret
}
