package av

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tplguard"
)

// set_new_item_templates replaces a database's new-item templates and its
// default template with one setAttrViewNewItemTemplates operation, which
// SiYuan applies whole or not at all. The list is sent as SiYuan stores
// it (trimmed, a detached target without icon, each static value in its
// column's form), so the readback requires exactly what was sent.

type itemTemplatesArgs struct {
	dbArg
	Block     string           `arg:"blockID" help:"a database block showing the database" id:"" required:""`
	Given     []map[string]any `arg:"templates" help:"the complete ordered list (may be empty): [{id, name, icon?, targetType detached|document, primaryKeyTemplate?, fieldValues? {keyID: {mode static|currentTime, value?}}, saveLocation? {boxID?, pathTemplate}, contentTemplatePath?}]; a static value is a cell value of its column's type, e.g. {\"text\":{\"content\":\"x\"}}" required:""`
	Default   string           `arg:"defaultTemplateID" help:"the default template's id, or \"\" for none" default:""`
	Templates []*siyuan.AVNewItemTemplate
}

func parseItemTemplates(a *itemTemplatesArgs) error {
	if len(a.Given) > 50 {
		return failure.Invalid("pass at most 50 templates")
	}
	ids := map[string]bool{}
	for i, m := range a.Given {
		at := "templates[" + strconv.Itoa(i) + "]"
		raw, _ := json.Marshal(m)
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		var t siyuan.AVNewItemTemplate
		if err := dec.Decode(&t); err != nil {
			return failure.Invalid("%s: %v", at, err)
		}
		if err := tools.CheckID(at+".id", t.ID); err != nil {
			return err
		}
		if ids[t.ID] {
			return failure.Invalid("%s.id: %s is listed twice", at, t.ID)
		}
		ids[t.ID] = true
		t.Name, t.Icon, t.ContentTemplatePath = strings.TrimSpace(t.Name), strings.TrimSpace(t.Icon), strings.TrimSpace(t.ContentTemplatePath)
		if t.Name == "" {
			return failure.Invalid("%s.name must not be empty", at)
		}
		switch t.TargetType {
		case "detached":
			t.Icon = ""
		case "document":
		default:
			return failure.Invalid("%s.targetType must be detached or document", at)
		}
		if containsString(strings.Split(t.ContentTemplatePath, "/"), "..") {
			return failure.Invalid("%s.contentTemplatePath must not climb (..)", at)
		}
		if t.SaveLocation != nil {
			t.SaveLocation.BoxID, t.SaveLocation.PathTemplate = strings.TrimSpace(t.SaveLocation.BoxID), strings.TrimSpace(t.SaveLocation.PathTemplate)
			if t.SaveLocation.BoxID != "" {
				if err := tools.CheckID(at+".saveLocation.boxID", t.SaveLocation.BoxID); err != nil {
					return err
				}
			}
		}
		for key, fv := range t.FieldValues {
			fat := at + ".fieldValues." + key
			if err := tools.CheckID(fat, key); err != nil {
				return err
			}
			if fv == nil {
				return failure.Invalid("%s must be {mode, value?}", fat)
			}
			if fv.Mode == "" {
				fv.Mode = "static"
			}
			switch {
			case fv.Mode == "currentTime" && fv.Value != nil:
				return failure.Invalid("%s: mode currentTime takes no value", fat)
			case fv.Mode == "static" && fv.Value == nil:
				return failure.Invalid("%s: mode static needs a value", fat)
			case fv.Mode != "static" && fv.Mode != "currentTime":
				return failure.Invalid("%s.mode must be static or currentTime", fat)
			}
		}
		if len(t.FieldValues) == 0 {
			t.FieldValues = nil
		}
		a.Templates = append(a.Templates, &t)
	}
	if a.Default != "" && !ids[a.Default] {
		return failure.Invalid("defaultTemplateID %s is not one of the templates' ids", a.Default)
	}
	return nil
}

func containsString(xs []string, x string) bool {
	for _, s := range xs {
		if s == x {
			return true
		}
	}
	return false
}

// itemTemplatesState is the template configuration (hashed) and the
// database, for the checks of field values against their columns.
type itemTemplatesState struct {
	Missing   bool                        `json:"missing,omitempty"`
	Templates []*siyuan.AVNewItemTemplate `json:"templates"`
	Default   string                      `json:"defaultTemplateID"`
	db        DBState
}

func readItemTemplates(ctx context.Context, env *tools.Env, avID string) (itemTemplatesState, error) {
	db, _, av, err := readDBStored(ctx, env, avID)
	if err != nil {
		return itemTemplatesState{}, err
	}
	st := itemTemplatesState{Missing: db.Missing, Templates: []*siyuan.AVNewItemTemplate{}, db: db}
	if av == nil {
		return st, nil
	}
	st.Default = av.DefaultTemplateID
	if len(av.NewItemTemplates) > 0 && string(av.NewItemTemplates) != "null" {
		if err := json.Unmarshal(av.NewItemTemplates, &st.Templates); err != nil {
			return st, fmt.Errorf("read the new-item templates of database %s: %w", avID, err)
		}
	}
	return st, nil
}

// valuePart is whether a value holds its key type's part and no other.
func valuePart(v *siyuan.AVValue, typ string) (has, other bool) {
	parts := map[string]bool{siyuan.AVKeyText: v.Text != nil, siyuan.AVKeyNumber: v.Number != nil, siyuan.AVKeyDate: v.Date != nil,
		siyuan.AVKeyURL: v.URL != nil, siyuan.AVKeyEmail: v.Email != nil, siyuan.AVKeyPhone: v.Phone != nil,
		siyuan.AVKeyMAsset: v.MAsset != nil, siyuan.AVKeyCheckbox: v.Checkbox != nil, siyuan.AVKeyRelation: v.Relation != nil,
		siyuan.AVKeyMSelect: v.MSelect != nil}
	if typ == siyuan.AVKeySelect {
		typ = siyuan.AVKeyMSelect
	}
	for p, set := range parts {
		if p == typ {
			has = set
		} else if set {
			other = true
		}
	}
	other = other || v.Block != nil || v.Template != nil || v.Rollup != nil
	return has, other
}

// editable are the column types a template may give a value.
var editable = map[string]bool{siyuan.AVKeyText: true, siyuan.AVKeyNumber: true, siyuan.AVKeyDate: true, siyuan.AVKeySelect: true,
	siyuan.AVKeyMSelect: true, siyuan.AVKeyURL: true, siyuan.AVKeyEmail: true, siyuan.AVKeyPhone: true, siyuan.AVKeyMAsset: true,
	siyuan.AVKeyCheckbox: true, siyuan.AVKeyRelation: true}

func checkItemTemplates(a itemTemplatesArgs, st itemTemplatesState) error {
	if st.Missing {
		return failure.Missing("database", a.AvID)
	}
	for i, t := range a.Templates {
		for key, fv := range t.FieldValues {
			at := "templates[" + strconv.Itoa(i) + "].fieldValues." + key
			k, ok := st.db.key(key)
			if !ok {
				return failure.New(failure.NotFound, "%s: database %s has no such column", at, a.AvID)
			}
			if !editable[k.Type] {
				return failure.Invalid("%s: a %s column takes no template value", at, k.Type)
			}
			if fv.Mode == "currentTime" {
				if k.Type != siyuan.AVKeyDate {
					return failure.Invalid("%s: mode currentTime is for date columns; this is a %s column", at, k.Type)
				}
				continue
			}
			if has, other := valuePart(fv.Value, k.Type); !has || other {
				return failure.Invalid("%s: the value must hold the %s column's part only (e.g. {\"%s\": …})", at, k.Type, partName(k.Type))
			}
			if k.Type == siyuan.AVKeySelect && len(fv.Value.MSelect) > 1 {
				return failure.Invalid("%s: a select column takes one option", at)
			}
		}
	}
	return nil
}

func partName(typ string) string {
	if typ == siyuan.AVKeySelect {
		return "mSelect"
	}
	return typ
}

// stored is the list as SiYuan stores it: each static value of its
// column's type, with the column's number format and no computed text.
func (a itemTemplatesArgs) stored(db DBState) []*siyuan.AVNewItemTemplate {
	out := []*siyuan.AVNewItemTemplate{}
	for _, t := range a.Templates {
		raw, _ := json.Marshal(t)
		var c siyuan.AVNewItemTemplate
		_ = json.Unmarshal(raw, &c)
		for key, fv := range c.FieldValues {
			k, _ := db.key(key)
			if fv.Value == nil {
				continue
			}
			v := fv.Value
			v.ID, v.KeyID, v.BlockID, v.Type, v.IsDetached, v.CreatedAt, v.UpdatedAt = "", "", "", k.Type, false, 0, 0
			if v.Number != nil {
				v.Number.Format, v.Number.FormattedContent = k.NumberFormat, ""
			}
			if v.Date != nil {
				v.Date.FormattedContent = ""
			}
			if v.Relation != nil {
				v.Relation.Contents = nil
			}
			var opts []*siyuan.AVValueSelect
			for _, o := range v.MSelect {
				if o != nil && strings.TrimSpace(o.Content) != "" {
					opts = append(opts, o)
				}
			}
			v.MSelect = opts
			var assets []*siyuan.AVValueAsset
			for _, as := range v.MAsset {
				if as != nil && strings.TrimSpace(as.Content) != "" {
					assets = append(assets, as)
				}
			}
			v.MAsset = assets
		}
		out = append(out, &c)
	}
	return out
}

var setNewItemTemplates = tools.WriteWith[itemTemplatesArgs, itemTemplatesState, itemTemplatesState]{Write: tools.Write[itemTemplatesArgs, itemTemplatesState]{
	Name: "set_new_item_templates", Summary: "replace a database's new-item templates (the complete ordered list) and its default template; each field value is checked against its column",
	Policy: guarded, Dangerous: true,
	Example: map[string]any{"avID": "20260812120000-abcdefg", "blockID": "20260812120000-hijklmn", "templates": []map[string]any{{"id": "20260812120000-opqrstu", "name": "Task", "targetType": "detached", "primaryKeyTemplate": "Task"}},
		"defaultTemplateID": "20260812120000-opqrstu", "validateOnly": true},
	Validate: parseItemTemplates,
	// SiYuan renders primaryKeyTemplate and pathTemplate (Go templates)
	// when an item is created: they pass what file.render's would. A save
	// location's notebook is written to then: rw there too.
	Scope: tools.Scope[itemTemplatesArgs]{Resolve: func(ctx context.Context, env *tools.Env, a itemTemplatesArgs) ([]tools.Touch, error) {
		ts, err := dbTouchesAt(ctx, env, a.AvID, a.Block, tools.LevelWrite)
		if err != nil {
			return nil, err
		}
		for _, t := range a.Templates {
			for _, src := range []string{t.PrimaryKeyTemplate, savePath(t)} {
				if src != "" {
					if err := tplguard.Check(ctx, src, tplguard.Sprig); err != nil {
						return nil, err
					}
				}
			}
			if t.SaveLocation != nil && t.SaveLocation.BoxID != "" {
				ts = append(ts, tools.OnNotebook(t.SaveLocation.BoxID, tools.LevelWrite))
			}
		}
		return ts, nil
	}},
	Targets: func(a itemTemplatesArgs) []string { return []string{a.AvID} },
	State: func(ctx context.Context, env *tools.Env, a itemTemplatesArgs) (itemTemplatesState, error) {
		return readItemTemplates(ctx, env, a.AvID)
	},
	Check: checkItemTemplates,
},
	Execute: func(ctx context.Context, env *tools.Env, a itemTemplatesArgs, st itemTemplatesState) (tools.Payload, itemTemplatesState, error) {
		op := siyuan.SetAttrViewNewItemTemplatesOp(a.AvID, siyuan.AVNewItemTemplatesConfig{Templates: a.stored(st.db), DefaultTemplateID: a.Default})
		if _, err := env.Kernel.Transactions(ctx, []siyuan.Transaction{{DoOperations: []siyuan.Operation{op}}}); err != nil {
			return nil, st, tools.WriteFailure(err, false)
		}
		ids := make([]string, 0, len(a.Templates))
		for _, t := range a.Templates {
			ids = append(ids, t.ID)
		}
		return tools.Payload{"avID": a.AvID, "templateIDs": ids, "defaultTemplateID": a.Default}, st, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a itemTemplatesArgs, _ tools.Payload, before itemTemplatesState) (any, error) {
		want := a.stored(before.db)
		return tools.Await(ctx, func(ctx context.Context) (itemTemplatesState, error) {
			return readItemTemplates(ctx, env, a.AvID)
		}, func(st itemTemplatesState) error {
			if st.Missing || !same(st.Templates, want) || st.Default != a.Default {
				return fmt.Errorf("database %s does not hold exactly the templates sent (default %q)", a.AvID, st.Default)
			}
			if !same(st.db, before.db) {
				return fmt.Errorf("database %s changed beyond its templates", a.AvID)
			}
			return nil
		})
	},
}

func savePath(t *siyuan.AVNewItemTemplate) string {
	if t.SaveLocation == nil {
		return ""
	}
	return t.SaveLocation.PathTemplate
}
