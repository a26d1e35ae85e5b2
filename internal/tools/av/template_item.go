package av

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tplguard"
)

// create_from_template makes one item of a database from one of its
// new-item templates, as SiYuan 3.7.3's createAttributeViewItem does,
// but composed from operations whose ids this call chooses.
//
// createAttributeViewItem picks the item's id itself (and the bound
// document's), so after a lost reply nothing identifies what it made:
// another client's item, made in the same seconds with the same values,
// looks the same, and the ledger cannot hold the list of items before.
// So the item is a staged creation (tools.Stages) of one stage: Reserve
// pins the item id, and the stage sends the transaction SiYuan itself
// builds (insertAttrViewBlock with that item id and the rendered primary
// key, one updateAttrViewCell per field value in column order,
// doUpdateUpdated of the database block) through /api/transactions. Its
// Present check is the reserved item showing: a replay after a lost
// reply finds it and finishes without a second item; when it does not
// show, the stage is never sent again (outcome_unknown).
//
// The primary key is rendered by the kernel itself (/api/template/
// renderSprig: SiYuan's RenderGoTemplate, the function map createAttribute
// ViewItem uses, at the time of the call rather than the item's creation
// time, the same second or so), trimmed; a template without {{ is its
// own text. The stage learns the text's digest, so the readback requires
// exactly that text; a resumed creation (no digest learned) requires it
// only of a template without actions.
//
// Document targets (a new document bound to the item) are composed in
// template_doc.go.

const idItem = "item"

type templateItemArgs struct {
	dbArg
	Block    string `arg:"blockID" help:"a database block showing the database" id:"" required:""`
	Template string `arg:"templateID" help:"a new-item template" id:"" required:""`
	View     string `arg:"viewID" help:"the view placing the item" id:""`
	Previous string `arg:"previousID" help:"the row (item ID) the item follows" id:""`
	Group    string `arg:"groupID" help:"the group of the view the item goes in" id:""`
}

// templateItemState is what the item is made from: the template, the
// values it gives (relation values keep only rows their database has, as
// SiYuan's), the database's rows and the views with their groups. db and
// the rendered primary key are for Check, not hashed.
type templateItemState struct {
	Missing   bool                        `json:"missing,omitempty"`
	Blocks    []string                    `json:"blocks"`
	Template  *siyuan.AVNewItemTemplate   `json:"template,omitempty"`
	Values    map[string]*siyuan.AVValue  `json:"values,omitempty"`
	Now       []string                    `json:"now,omitempty"`
	Rows      []string                    `json:"rows"`
	Views     map[string][]string         `json:"views"`
	Doc       *docTarget                  `json:"doc,omitempty"`
	Content   *contentTpl                 `json:"content,omitempty"`
	dateKeys  map[string]*wire.AVDateConf `json:"-"`
	place     docPlace
	placeErr  error
	db        DBState
	primary   string
	renderErr error
}

func readTemplateItem(ctx context.Context, env *tools.Env, a templateItemArgs) (templateItemState, error) {
	tpls, err := readItemTemplates(ctx, env, a.AvID)
	if err != nil {
		return templateItemState{}, err
	}
	db := tpls.db
	st := templateItemState{Missing: db.Missing, Blocks: db.Blocks, Rows: []string{}, Views: map[string][]string{}, db: db}
	if db.Missing {
		return st, nil
	}
	for _, r := range db.Rows {
		st.Rows = append(st.Rows, r.ID)
	}
	raw, err := env.Kernel.GetAttributeView(ctx, a.AvID)
	if err != nil {
		return st, err
	}
	st.dateKeys = map[string]*wire.AVDateConf{}
	if raw != nil {
		for _, kv := range raw.KeyValues {
			if kv != nil && kv.Key != nil && kv.Key.Date != nil {
				st.dateKeys[kv.Key.ID] = kv.Key.Date
			}
		}
		for _, v := range raw.Views {
			if v == nil {
				continue
			}
			groups := []string{}
			var gs []struct {
				ID string `json:"id"`
			}
			if len(v.Groups) > 0 && json.Unmarshal(v.Groups, &gs) == nil {
				for _, g := range gs {
					groups = append(groups, g.ID)
				}
			}
			st.Views[v.ID] = groups
		}
	}
	for _, t := range tpls.Templates {
		if t != nil && t.ID == a.Template {
			st.Template = t
		}
	}
	if st.Template == nil {
		return st, nil
	}
	// The field values SiYuan keeps (PruneInvalidNewItemTemplateFieldValues):
	// of an editable column, currentTime of a date one, a static value
	// holding its column's part (as that type; a select's first option).
	st.Values = map[string]*siyuan.AVValue{}
	for keyID, fv := range st.Template.FieldValues {
		k, ok := db.key(keyID)
		if !ok || fv == nil || !editable[k.Type] {
			continue
		}
		if fv.Mode == "currentTime" {
			if k.Type == siyuan.AVKeyDate {
				st.Now = append(st.Now, keyID)
			}
			continue
		}
		if fv.Mode != "static" && fv.Mode != "" || fv.Value == nil {
			continue
		}
		if has, _ := valuePart(fv.Value, k.Type); !has && k.Type != siyuan.AVKeySelect && k.Type != siyuan.AVKeyMSelect && k.Type != siyuan.AVKeyMAsset {
			continue
		}
		v := *fv.Value
		v.Type = k.Type
		if k.Type == siyuan.AVKeySelect && len(v.MSelect) > 1 {
			v.MSelect = v.MSelect[:1]
		}
		if k.Type == siyuan.AVKeyRelation && k.Relation != nil && v.Relation != nil {
			target := db
			if k.Relation.AvID != a.AvID {
				if target, err = ReadDBState(ctx, env, k.Relation.AvID); err != nil {
					return st, err
				}
			}
			rel := *v.Relation
			rel.BlockIDs = nil
			for _, id := range v.Relation.BlockIDs {
				if _, ok := target.row(id); ok {
					rel.BlockIDs = append(rel.BlockIDs, id)
				}
			}
			if len(rel.BlockIDs) == 0 {
				continue
			}
			v.Relation = &rel
		}
		st.Values[keyID] = &v
	}
	st.primary, st.renderErr = renderPrimary(ctx, env, st.Template.PrimaryKeyTemplate)
	if st.Template.TargetType == "document" && slices.Contains(st.Blocks, a.Block) {
		if st.Doc, err = readDocTarget(ctx, env, a.Block); err != nil {
			return st, err
		}
		if st.renderErr == nil {
			st.place, st.placeErr = st.Doc.place(ctx, env, st.Template, st.primary)
		}
		if st.Template.ContentTemplatePath != "" {
			if st.Content, err = readContentTpl(ctx, env, st.Template.ContentTemplatePath); err != nil {
				return st, err
			}
		}
	}
	return st, nil
}

// renderPrimary renders a primary-key template as SiYuan does, trimmed.
func renderPrimary(ctx context.Context, env *tools.Env, src string) (string, error) {
	if !strings.Contains(src, "{{") {
		return strings.TrimSpace(src), nil
	}
	out, err := env.Kernel.RenderSprig(ctx, src)
	return strings.TrimSpace(out), err
}

func digestText(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func checkTemplateItem(a templateItemArgs, st templateItemState) error {
	if st.Missing {
		return failure.Missing("database", a.AvID)
	}
	if !slices.Contains(st.Blocks, a.Block) {
		return failure.Invalid("block %s does not show database %s", a.Block, a.AvID)
	}
	if st.Template == nil {
		return failure.New(failure.NotFound, "templateID %s: database %s has no such new-item template", a.Template, a.AvID)
	}
	if st.renderErr != nil {
		return failure.Invalid("template %s: its primaryKeyTemplate does not render: %v", a.Template, tools.KernelError(st.renderErr))
	}
	if st.Template.TargetType == "document" {
		if st.placeErr != nil {
			return st.placeErr
		}
		if st.Content != nil && st.Content.err != nil {
			return st.Content.err
		}
	}
	if a.View != "" {
		if _, ok := st.Views[a.View]; !ok {
			return failure.New(failure.NotFound, "viewID %s: database %s has no such view", a.View, a.AvID)
		}
	}
	if a.Group != "" {
		found := false
		for v, groups := range st.Views {
			if (a.View == "" || v == a.View) && slices.Contains(groups, a.Group) {
				found = true
			}
		}
		if !found {
			return failure.New(failure.NotFound, "groupID %s: no view of database %s has such a group", a.Group, a.AvID)
		}
	}
	if a.Previous != "" && !slices.Contains(st.Rows, a.Previous) {
		return failure.New(failure.NotFound, "previousID %s: database %s has no such row (row IDs are item IDs)", a.Previous, a.AvID)
	}
	return nil
}

// itemOps is the transaction createAttributeViewItem builds, with the
// reserved item id: the item detached, or bound to doc.
func itemOps(a templateItemArgs, st templateItemState, item, doc, primary string, now time.Time) []siyuan.Operation {
	src := siyuan.AVSrc{ItemID: item, ID: item, Detached: true, Content: primary}
	if doc != "" {
		src = siyuan.AVSrc{ItemID: item, ID: doc, Content: primary}
	}
	ins := siyuan.InsertAttrViewBlockOp(a.AvID, a.Block, []siyuan.AVSrc{src}, a.Previous)
	ins.ViewID, ins.GroupID = a.View, a.Group
	ops := []siyuan.Operation{ins}
	for _, k := range st.db.Keys {
		v := st.Values[k.ID]
		if slices.Contains(st.Now, k.ID) {
			notTime := true
			if d := st.dateKeys[k.ID]; d != nil {
				notTime = !d.FillSpecificTime
			}
			// As av.NewFormattedValueDate(now, 0, none, notTime, false)
			// stores it (the end's emptiness from time.UnixMilli(0), not
			// zero; formatted in this process's zone).
			layout := "2006-01-02 15:04"
			if notTime {
				layout = "2006-01-02"
			}
			v = &siyuan.AVValue{Type: siyuan.AVKeyDate, Date: &siyuan.AVValueDate{Content: now.UnixMilli(), IsNotEmpty: true, IsNotTime: notTime,
				IsNotEmpty2: true, FormattedContent: now.Format(layout)}}
		}
		if v == nil {
			continue
		}
		ops = append(ops, siyuan.UpdateAttrViewCellOp(a.AvID, k.ID, item, v))
	}
	return append(ops, siyuan.DoUpdateUpdatedOp(a.Block, now.Format("20060102150405")))
}

var createFromTemplate = tools.Write[templateItemArgs, templateItemState]{
	Name: "create_from_template", Summary: "make one item from a new-item template; answers its itemID (and documentID)",
	Policy: guarded, Dangerous: true,
	Example:  map[string]any{"avID": "20260812120000-abcdefg", "blockID": "20260812120000-hijklmn", "templateID": "20260812120000-opqrstu", "validateOnly": true},
	Validate: func(*templateItemArgs) error { return nil },
	// The primary-key template runs in the kernel: it passes the guard
	// file.render's templates pass.
	Scope: tools.Scope[templateItemArgs]{Resolve: func(ctx context.Context, env *tools.Env, a templateItemArgs) ([]tools.Touch, error) {
		ts, err := dbTouchesAt(ctx, env, a.AvID, a.Block, tools.LevelWrite)
		if err != nil {
			return nil, err
		}
		tpls, err := readItemTemplates(ctx, env, a.AvID)
		if err != nil {
			return nil, err
		}
		for _, t := range tpls.Templates {
			if t == nil || t.ID != a.Template {
				continue
			}
			srcs := []string{t.PrimaryKeyTemplate}
			if t.TargetType == "document" {
				// The document's notebook is written too.
				target, err := readDocTarget(ctx, env, a.Block)
				if err != nil {
					return nil, err
				}
				box, tpl, _, err := target.location(t.SaveLocation)
				if err != nil {
					return nil, err
				}
				ts = append(ts, tools.OnNotebook(box, tools.LevelWrite))
				srcs = append(srcs, tpl)
			}
			for _, src := range srcs {
				if strings.Contains(src, "{{") {
					if err := tplguard.Check(ctx, src, tplguard.Sprig); err != nil {
						return nil, err
					}
				}
			}
		}
		return ts, nil
	}},
	Targets: func(a templateItemArgs) []string { return []string{a.AvID} },
	State:   readTemplateItem,
	Check:   checkTemplateItem,
	Stages: &tools.Stages[templateItemArgs, templateItemState]{
		Reserve: func(a templateItemArgs, st templateItemState) (map[string]string, error) {
			ids := map[string]string{idAV: a.AvID, idItem: newID(), "rows": strconv.Itoa(len(st.Rows))}
			if st.Doc != nil {
				ids[idDoc], ids["box"], ids["icon"] = newID(), st.place.Box, st.Template.Icon
				if st.Content != nil {
					ids[idFirst] = newID()
					keys := make([]string, 0, len(st.Content.attrs))
					for k := range contentAttrsSet(st.Content.attrs, st.Template.Icon) {
						keys = append(keys, k)
					}
					slices.Sort(keys)
					ids["attrKeys"] = strings.Join(keys, " ")
				}
			}
			return ids, nil
		},
		Steps: func(templateItemArgs) []tools.Step[templateItemArgs] {
			return append(docSteps(), tools.Step[templateItemArgs]{Name: idItem,
				// The state is read again (the coordinator is serial and
				// has just found it unchanged) and sent once.
				Do: func(ctx context.Context, env *tools.Env, a templateItemArgs, ids map[string]string) (map[string]string, error) {
					st, err := readTemplateItem(ctx, env, a)
					if err != nil {
						return nil, tools.Refuse(err)
					}
					if err := checkTemplateItem(a, st); err != nil {
						return nil, tools.Refuse(err)
					}
					primary := st.primary
					if ids[idDoc] != "" {
						// A bound item's primary key is its document's title,
						// as made (a resumed call learned no title: the one
						// the state renders now).
						if primary = ids["primary"]; primary == "" {
							primary = st.place.Title
						}
					}
					ops := itemOps(a, st, ids[idItem], ids[idDoc], primary, time.Now())
					_, err = env.Kernel.Transactions(ctx, []siyuan.Transaction{{DoOperations: ops}})
					if err != nil {
						return nil, tools.WriteFailure(err, false)
					}
					return map[string]string{"text": digestText(primary)}, nil
				},
				Present: func(ctx context.Context, env *tools.Env, _ templateItemArgs, ids map[string]string) (bool, error) {
					return avPresent(ctx, env, ids[idAV], func(av *siyuan.AttributeView) bool { return hasRow(av, ids[idItem]) })
				},
			})
		},
		Receipt: func(a templateItemArgs, ids map[string]string, done []string) tools.Payload {
			p := tools.Payload{"avID": a.AvID, "templateID": a.Template, "itemID": ids[idItem], "created": slices.Contains(done, idItem),
				"_rows": ids["rows"], "_text": ids["text"]}
			if ids[idDoc] != "" {
				p["documentID"], p["_box"], p["_icon"] = ids[idDoc], ids["box"], ids["icon"]
			}
			if ids[idFirst] != "" {
				p["_content"], p["_first"], p["_attrKeys"], p["_attrs"] = ids["content"], ids[idFirst], ids["attrKeys"], ids["attrs"]
			}
			return p
		},
	},
	Readback: func(ctx context.Context, env *tools.Env, a templateItemArgs, p tools.Payload) (any, error) {
		item, err := tools.PayloadKey[string](p, "itemID")
		if err != nil {
			return nil, err
		}
		rows, _ := p["_rows"].(string)
		text, _ := p["_text"].(string)
		doc, _ := p["documentID"].(string)
		keys, _ := p["_attrKeys"].(string)
		// A document with a name shows its name as the item's primary
		// key (SiYuan's getNodeAvBlockText); the attributes' check
		// covers the name.
		named := slices.Contains(strings.Fields(keys), "name")
		if doc != "" {
			box, _ := p["_box"].(string)
			icon, _ := p["_icon"].(string)
			if err := docMade(ctx, env, doc, box, icon); err != nil {
				return nil, err
			}
			if first, _ := p["_first"].(string); first != "" {
				if c, _ := p["_content"].(string); c == "empty" {
					first = ""
				}
				digest, _ := p["_attrs"].(string)
				if err := contentMade(ctx, env, doc, first, strings.Fields(keys), digest); err != nil {
					return nil, err
				}
			}
		}
		return readChanged(ctx, env, a.AvID, func(db DBState) error {
			st, err := readTemplateItem(ctx, env, a)
			if err != nil {
				return err
			}
			return itemMade(a, st, db, item, doc, rows, text, named)
		})
	},
}

// itemMade requires exactly one new item, the reserved one: detached
// (or bound to doc), with the rendered primary key (unless its document
// is named) and each of the template's values.
func itemMade(a templateItemArgs, st templateItemState, db DBState, item, doc, rows, text string, named bool) error {
	if n, err := strconv.Atoi(rows); err == nil && len(db.Rows) != n+1 {
		return fmt.Errorf("database %s has %d rows, want %d (one new item)", a.AvID, len(db.Rows), n+1)
	}
	r, ok := db.row(item)
	switch {
	case !ok:
		return fmt.Errorf("database %s shows no item %s", a.AvID, item)
	case doc == "" && !r.Detached:
		return fmt.Errorf("item %s of database %s is not detached", item, a.AvID)
	case doc != "" && (r.Detached || r.Block != doc):
		return fmt.Errorf("item %s of database %s is not bound to document %s", item, a.AvID, doc)
	}
	got := ""
	if v := r.Cells[db.primary().ID]; v != nil && v.Block != nil {
		got = v.Block.Content
	}
	if st.Template == nil {
		return fmt.Errorf("database %s no longer has template %s", a.AvID, a.Template)
	}
	switch {
	case named:
	case text != "" && digestText(got) != text:
		return fmt.Errorf("item %s has the primary key %q, not the one rendered", item, got)
	case text == "" && !strings.Contains(st.Template.PrimaryKeyTemplate, "{{") && got != strings.TrimSpace(st.Template.PrimaryKeyTemplate):
		return fmt.Errorf("item %s has the primary key %q, want %q", item, got, strings.TrimSpace(st.Template.PrimaryKeyTemplate))
	}
	for _, keyID := range st.Now {
		if c := r.Cells[keyID]; c == nil || c.Date == nil || c.Date.Content == 0 {
			return fmt.Errorf("item %s has no date in column %s", item, keyID)
		}
	}
	for keyID, want := range st.Values {
		if c := r.Cells[keyID]; c == nil || !samePart(c, want) {
			return fmt.Errorf("item %s does not hold the template's value in column %s", item, keyID)
		}
	}
	return nil
}

// samePart is whether a cell holds a template value's part (what
// identifies a value; not its formatting or identity).
func samePart(c, want *siyuan.AVValue) bool {
	switch {
	case want.Text != nil:
		return c.Text != nil && c.Text.Content == want.Text.Content
	case want.Number != nil:
		return c.Number != nil && c.Number.Content == want.Number.Content && c.Number.IsNotEmpty == want.Number.IsNotEmpty
	case want.Date != nil:
		return c.Date != nil && c.Date.Content == want.Date.Content && c.Date.Content2 == want.Date.Content2 && c.Date.HasEndDate == want.Date.HasEndDate
	case want.URL != nil:
		return c.URL != nil && c.URL.Content == want.URL.Content
	case want.Email != nil:
		return c.Email != nil && c.Email.Content == want.Email.Content
	case want.Phone != nil:
		return c.Phone != nil && c.Phone.Content == want.Phone.Content
	case want.Checkbox != nil:
		return c.Checkbox != nil && c.Checkbox.Checked == want.Checkbox.Checked
	case want.Relation != nil:
		return c.Relation != nil && slices.Equal(c.Relation.BlockIDs, want.Relation.BlockIDs)
	case want.MSelect != nil:
		var a, b []string
		for _, o := range c.MSelect {
			a = append(a, o.Content)
		}
		for _, o := range want.MSelect {
			b = append(b, o.Content)
		}
		return slices.Equal(a, b)
	case want.MAsset != nil:
		var a, b []string
		for _, o := range c.MAsset {
			a = append(a, o.Content)
		}
		for _, o := range want.MAsset {
			b = append(b, o.Content)
		}
		return slices.Equal(a, b)
	}
	return true
}
