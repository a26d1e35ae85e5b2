package embedded

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/88250/lute/ast"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// setAttrViewNewItemTemplates (avID, data {templates, defaultTemplateID}),
// as SiYuan 3.7.3's AttributeView.SetNewItemTemplates: the whole list is
// checked and replaces the database's, or nothing changes.

// avSetNewItemTemplates applies the operation. Callers hold writeMu.
func (k *Kernel) avSetNewItemTemplates(avID string, data any) error {
	raw, err := json.Marshal(data)
	if err != nil {
		return err
	}
	var config itemTemplatesConfig
	if err := json.Unmarshal(raw, &config); err != nil {
		return err
	}
	return k.editAV(avID, func(av *wire.AttributeView) error {
		templates := []*itemTemplate{}
		ids := map[string]bool{}
		for _, t := range config.Templates {
			if t == nil {
				continue
			}
			t.Name, t.Icon = strings.TrimSpace(t.Name), strings.TrimSpace(t.Icon)
			if t.Name == "" {
				return errors.New("new item template name is empty")
			}
			if !ast.IsNodeIDPattern(t.ID) {
				return fmt.Errorf("invalid new item template id [%s]", t.ID)
			}
			if ids[t.ID] {
				return fmt.Errorf("duplicated new item template id [%s]", t.ID)
			}
			ids[t.ID] = true
			if t.TargetType != "detached" && t.TargetType != "document" {
				return fmt.Errorf("invalid new item template target type [%s]", t.TargetType)
			}
			if t.TargetType != "document" {
				t.Icon = ""
			}
			t.ContentTemplatePath = strings.TrimSpace(t.ContentTemplatePath)
			if t.SaveLocation != nil {
				t.SaveLocation.BoxID = strings.TrimSpace(t.SaveLocation.BoxID)
				t.SaveLocation.PathTemplate = strings.TrimSpace(t.SaveLocation.PathTemplate)
			}
			if err := normalizeItemFieldValues(av, t); err != nil {
				return err
			}
			templates = append(templates, t)
		}
		if config.DefaultTemplateID != "" && !ids[config.DefaultTemplateID] {
			return fmt.Errorf("default new item template [%s] not found", config.DefaultTemplateID)
		}
		av.NewItemTemplates = nil
		if len(templates) > 0 {
			enc, err := json.Marshal(templates)
			if err != nil {
				return err
			}
			av.NewItemTemplates = enc
		}
		av.DefaultTemplateID = config.DefaultTemplateID
		return nil
	})
}

// itemTemplateKeyTypes are the key types a template may give a value.
var itemTemplateKeyTypes = map[string]bool{wire.AVKeyText: true, wire.AVKeyNumber: true, wire.AVKeyDate: true, wire.AVKeySelect: true,
	wire.AVKeyMSelect: true, wire.AVKeyURL: true, wire.AVKeyEmail: true, wire.AVKeyPhone: true, wire.AVKeyMAsset: true,
	wire.AVKeyCheckbox: true, wire.AVKeyRelation: true}

// normalizeItemFieldValues is normalizeNewItemTemplateFieldValues: an
// unknown or non-editable key fails; a nil value, or a static one without
// a value, is dropped; currentTime is for dates only.
func normalizeItemFieldValues(av *wire.AttributeView, t *itemTemplate) error {
	if len(t.FieldValues) == 0 {
		t.FieldValues = nil
		return nil
	}
	out := map[string]*itemFieldValue{}
	for keyID, fv := range t.FieldValues {
		key := avKey(av, keyID)
		if key == nil {
			return fmt.Errorf("new item template field [%s] not found", keyID)
		}
		if !itemTemplateKeyTypes[key.Type] {
			return fmt.Errorf("new item template field [%s] type [%s] is not editable", keyID, key.Type)
		}
		if fv == nil {
			continue
		}
		if fv.Mode == "" {
			fv.Mode = "static"
		}
		switch fv.Mode {
		case "currentTime":
			if key.Type != wire.AVKeyDate {
				return fmt.Errorf("new item template field [%s] current time mode requires date type", keyID)
			}
			fv.Value = nil
		case "static":
			if fv.Value == nil {
				continue
			}
			v, err := normalizeItemValue(fv.Value, key)
			if err != nil {
				return fmt.Errorf("new item template field [%s] value is invalid: %w", keyID, err)
			}
			fv.Value = v
		default:
			return fmt.Errorf("invalid new item template field value mode [%s]", fv.Mode)
		}
		out[keyID] = fv
	}
	t.FieldValues = nil
	if len(out) > 0 {
		t.FieldValues = out
	}
	return nil
}

// normalizeItemValue is normalizeNewItemTemplateValue: the value keeps
// only its key type's part (which must be there; select and mSelect drop
// empty options, a select keeps one; assets drop empty ones), and none of
// a cell's identity or timestamps.
func normalizeItemValue(value *wire.AVValue, key *wire.AVKey) (*wire.AVValue, error) {
	in := cloneValue(value)
	v := &wire.AVValue{Type: key.Type}
	switch key.Type {
	case wire.AVKeyText:
		if v.Text = in.Text; v.Text == nil {
			return nil, errors.New("text value is missing")
		}
	case wire.AVKeyNumber:
		if v.Number = in.Number; v.Number == nil {
			return nil, errors.New("number value is missing")
		}
		v.Number.Format, v.Number.FormattedContent = key.NumberFormat, ""
	case wire.AVKeyDate:
		if v.Date = in.Date; v.Date == nil {
			return nil, errors.New("date value is missing")
		}
		v.Date.FormattedContent = ""
	case wire.AVKeySelect, wire.AVKeyMSelect:
		for _, o := range in.MSelect {
			if o != nil && strings.TrimSpace(o.Content) != "" {
				v.MSelect = append(v.MSelect, o)
			}
		}
		if key.Type == wire.AVKeySelect && len(v.MSelect) > 1 {
			v.MSelect = v.MSelect[:1]
		}
	case wire.AVKeyURL:
		if v.URL = in.URL; v.URL == nil {
			return nil, errors.New("URL value is missing")
		}
	case wire.AVKeyEmail:
		if v.Email = in.Email; v.Email == nil {
			return nil, errors.New("email value is missing")
		}
	case wire.AVKeyPhone:
		if v.Phone = in.Phone; v.Phone == nil {
			return nil, errors.New("phone value is missing")
		}
	case wire.AVKeyMAsset:
		for _, a := range in.MAsset {
			if a != nil && strings.TrimSpace(a.Content) != "" {
				if a.Type != "file" && a.Type != "image" {
					return nil, fmt.Errorf("invalid asset type [%s]", a.Type)
				}
				v.MAsset = append(v.MAsset, a)
			}
		}
	case wire.AVKeyCheckbox:
		if v.Checkbox = in.Checkbox; v.Checkbox == nil {
			return nil, errors.New("checkbox value is missing")
		}
	case wire.AVKeyRelation:
		if v.Relation = in.Relation; v.Relation == nil {
			return nil, errors.New("relation value is missing")
		}
		for _, id := range v.Relation.BlockIDs {
			if !ast.IsNodeIDPattern(id) {
				return nil, fmt.Errorf("invalid relation block ID [%s]", id)
			}
		}
		v.Relation.Contents = nil
	default:
		return nil, fmt.Errorf("unsupported value type [%s]", key.Type)
	}
	return v, nil
}

// The templates as the kernel stores them (kernel/av NewItemTemplate and
// its parts), in its field order.

// itemTemplate is one template: what a new item of the database made
// from it is (a detached row, or a row bound to a new document), its
// primary key (a Go template rendered at creation) and field values.
type itemTemplate struct {
	ID                  string                     `json:"id"`
	Name                string                     `json:"name"`
	Icon                string                     `json:"icon,omitempty"`
	TargetType          string                     `json:"targetType"` // detached, document
	PrimaryKeyTemplate  string                     `json:"primaryKeyTemplate,omitempty"`
	FieldValues         map[string]*itemFieldValue `json:"fieldValues,omitempty"`
	SaveLocation        *itemSaveLocation          `json:"saveLocation,omitempty"`
	ContentTemplatePath string                     `json:"contentTemplatePath,omitempty"`
}

// itemFieldValue is a field's value in a template: static (Value) or
// the creation time (currentTime, date fields).
type itemFieldValue struct {
	Mode  string        `json:"mode"`
	Value *wire.AVValue `json:"value,omitempty"`
}

// itemSaveLocation is where a document-bound item's document goes.
type itemSaveLocation struct {
	BoxID        string `json:"boxID,omitempty"`
	PathTemplate string `json:"pathTemplate"`
}

// itemTemplatesConfig is the data of setAttrViewNewItemTemplates: the
// complete list and the default template's ID ("" for none).
type itemTemplatesConfig struct {
	Templates         []*itemTemplate `json:"templates"`
	DefaultTemplateID string          `json:"defaultTemplateID,omitempty"`
}
