package av

import (
	"context"
	"fmt"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/canon"
	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/tplguard"
)

// ---- add_column -----------------------------------------------------------

// columnTypes are the key types create makes: every type but the primary
// key's, and relation and rollup, which need another database's
// configuration (add_column takes it).
var columnTypes = []string{siyuan.AVKeyText, siyuan.AVKeyNumber, siyuan.AVKeyDate, siyuan.AVKeySelect, siyuan.AVKeyMSelect,
	siyuan.AVKeyURL, siyuan.AVKeyEmail, siyuan.AVKeyPhone, siyuan.AVKeyMAsset, siyuan.AVKeyTemplate, siyuan.AVKeyCreated,
	siyuan.AVKeyUpdated, siyuan.AVKeyCheckbox, siyuan.AVKeyLineNumber}

// addColumnTypes are the types add_column makes: those and relation and
// rollup, configured by their arguments.
var addColumnTypes = append(append([]string{}, columnTypes...), siyuan.AVKeyRelation, siyuan.AVKeyRollup)

type addColumnArgs struct {
	dbArg
	ctxBlock
	KeyID    string     `arg:"keyID" help:"the column's ID: for add_column, the new one's (default: a new ID; refused if taken)" id:""`
	Name     string     `arg:"keyName" help:"the column's name" required:""`
	Type     columnType `arg:"keyType" help:"the column's type" required:""`
	Icon     string     `arg:"keyIcon" help:"an emoji code (optional)"`
	Previous string     `arg:"previousKeyID" help:"put the column after this one (default: last)" id:""`
	// relation: the other database, two-way, the back key's name.
	RelationAvID string `arg:"relationAvID" help:"relation: the database whose rows it links (may be this one)" id:""`
	TwoWay       bool   `arg:"isTwoWay" help:"relation: also add the back column in relationAvID"`
	BackKeyName  string `arg:"backKeyName" help:"relation, two-way: the back column's name (default: SiYuan's \"<this database's name> <keyName>\")"`
	// rollup: the relation key of this database, the key of the other
	// database it rolls up, and the operator.
	RollupRelation string `arg:"rollupRelationKeyID" help:"rollup: the relation column of this database" id:""`
	RollupKey      string `arg:"rollupKeyID" help:"rollup: the column of the related database to roll up" id:""`
	RollupOperator string `arg:"rollupOperator" help:"rollup: \"\" lists the values; or Sum, Average, Min, Max, Count all, Count values, Count unique values, …"`
	// template: its template.
	Template string `arg:"template" help:"template: its template (.action{.Column} names columns)"`
}

// columnType is a type add_column adds.
type columnType string

func (columnType) ArgEnum() []string { return addColumnTypes }

// colState is add_column's state: the database and, for a relation, the
// database it relates to (which a two-way relation changes too).
type colState struct {
	DB      DBState  `json:"db"`
	Related *DBState `json:"related,omitempty"`
}

// addedColumn is what add_column hands its readback: the state before,
// the new column's id and its back relation's ("" when one-way).
type addedColumn struct {
	before   colState
	id, back string
}

var addColumn = tools.WriteWith[addColumnArgs, colState, addedColumn]{Write: tools.Write[addColumnArgs, colState]{
	Name: "add_column", Summary: "add a column (key) of a type, after previousKeyID (default: after the last column); a relation relates to relationAvID (isTwoWay adds the back column there), a rollup rolls up rollupKeyID of the rows rollupRelationKeyID links; a two-way relation answers both databases' hashes", Policy: guarded,
	Example:  map[string]any{"avID": "20260812120000-abcdefg", "keyName": "Status", "keyType": "select", "validateOnly": true},
	Validate: parseAddColumn,
	Scope: tools.Scope[addColumnArgs]{Resolve: func(ctx context.Context, env *tools.Env, a addColumnArgs) ([]tools.Touch, error) {
		// SiYuan renders a template column on every render of the
		// database: its template passes what file.render's would.
		if a.Type == siyuan.AVKeyTemplate && a.Template != "" {
			if err := tplguard.Check(ctx, a.Template, tplguard.File); err != nil {
				return nil, err
			}
		}
		ts, err := dbTouchesAt(ctx, env, a.AvID, a.BlockID, tools.LevelWrite)
		if err != nil || a.RelationAvID == "" || a.RelationAvID == a.AvID {
			return ts, err
		}
		// The related database is read (its rows are linked); a two-way
		// relation also writes it (its back column).
		need := tools.LevelRead
		if a.TwoWay {
			need = tools.LevelWrite
		}
		other, err := dbTouches(ctx, env, a.RelationAvID, need)
		if err != nil {
			return nil, err
		}
		return append(ts, other...), nil
	}},
	Targets: func(a addColumnArgs) []string {
		if a.RelationAvID != "" && a.RelationAvID != a.AvID {
			return []string{a.AvID, a.RelationAvID}
		}
		return []string{a.AvID}
	},
	State: readColState,
	Check: checkAddColumn,
},
	Execute: func(ctx context.Context, env *tools.Env, a addColumnArgs, st colState) (tools.Payload, addedColumn, error) {
		prev := a.Previous
		if prev == "" {
			prev = lastColumn(st.DB)
		}
		id := a.KeyID
		if id == "" {
			id = newID()
		}
		err := env.Kernel.AddAttributeViewKey(ctx, siyuan.AddAVKeyRequest{AvID: a.AvID, KeyID: id, KeyName: a.Name, KeyType: string(a.Type), KeyIcon: a.Icon, PreviousKeyID: prev})
		if err != nil {
			return nil, addedColumn{}, tools.WriteFailure(err, false)
		}
		added := addedColumn{before: st, id: id}
		p := tools.Payload{"avID": a.AvID, "keyID": id, "columnID": id, "previousKeyID": prev}
		var op *siyuan.Operation
		switch {
		case a.Type == siyuan.AVKeyRelation:
			back := ""
			if a.TwoWay {
				back = newID()
				p["backKeyID"], added.back = back, back
			}
			o := siyuan.UpdateAttrViewColRelationOp(a.AvID, id, a.Name, a.RelationAvID, a.TwoWay, back, a.BackKeyName)
			op = &o
		case a.Type == siyuan.AVKeyRollup:
			o := siyuan.UpdateAttrViewColRollupOp(a.AvID, id, a.RollupRelation, a.RollupKey, a.RollupOperator)
			op = &o
		case a.Type == siyuan.AVKeyTemplate && a.Template != "":
			o := siyuan.UpdateAttrViewColTemplateOp(a.AvID, id, a.Template)
			op = &o
		}
		if op != nil {
			// The column exists: a failure now leaves it unconfigured.
			if _, err := env.Kernel.Transactions(ctx, []siyuan.Transaction{{DoOperations: []siyuan.Operation{*op}}}); err != nil {
				return nil, added, tools.WriteFailure(err, true)
			}
		}
		return p, added, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a addColumnArgs, p tools.Payload, added addedColumn) (any, error) {
		before, id, back := added.before, added.id, added.back
		var after colState
		_, err := tools.Await(ctx, func(ctx context.Context) (colState, error) {
			st, err := readColState(ctx, env, a)
			after = st
			return st, err
		}, func(st colState) error { return columnAdded(a, before, st, id, back) })
		if err != nil {
			return nil, err
		}
		if h, err := partHashes(a, before, after); err == nil && h != nil {
			p["hashes"] = h
		}
		return after, nil
	},
}

func parseAddColumn(out *addColumnArgs) error {
	out.Name, out.BackKeyName = strings.TrimSpace(out.Name), strings.TrimSpace(out.BackKeyName)
	if out.Name == "" {
		return failure.Invalid("keyName must not be empty")
	}
	isRel, isRollup := out.Type == siyuan.AVKeyRelation, out.Type == siyuan.AVKeyRollup
	switch {
	case isRel && out.RelationAvID == "":
		return failure.Invalid("a relation column needs relationAvID (the database whose rows it links)")
	case !isRel && (out.RelationAvID != "" || out.TwoWay || out.BackKeyName != ""):
		return failure.Invalid("relationAvID, isTwoWay and backKeyName are for keyType relation")
	case isRel && out.RelationAvID == out.AvID && out.TwoWay:
		return failure.Invalid("a two-way relation of a database to itself is not supported here; pass isTwoWay:false")
	case !out.TwoWay && out.BackKeyName != "":
		return failure.Invalid("backKeyName needs isTwoWay:true")
	case isRollup && (out.RollupRelation == "" || out.RollupKey == ""):
		return failure.Invalid("a rollup column needs rollupRelationKeyID (a relation column of this database) and rollupKeyID (a column of the related database)")
	case !isRollup && (out.RollupRelation != "" || out.RollupKey != "" || out.RollupOperator != ""):
		return failure.Invalid("rollupRelationKeyID, rollupKeyID and rollupOperator are for keyType rollup")
	case out.Template != "" && out.Type != siyuan.AVKeyTemplate:
		return failure.Invalid("template is for keyType template")
	}
	return nil
}

// related is the other database a call reads: a relation's, or the one a
// rollup's relation column links.
func relatedOf(a addColumnArgs, db DBState) string {
	if a.RelationAvID != "" && a.RelationAvID != a.AvID {
		return a.RelationAvID
	}
	if a.Type == siyuan.AVKeyRollup {
		if k, ok := db.key(a.RollupRelation); ok && k.Relation != nil && k.Relation.AvID != a.AvID {
			return k.Relation.AvID
		}
	}
	return ""
}

func readColState(ctx context.Context, env *tools.Env, a addColumnArgs) (colState, error) {
	db, err := ReadDBState(ctx, env, a.AvID)
	if err != nil {
		return colState{}, err
	}
	st := colState{DB: db}
	if other := relatedOf(a, db); other != "" {
		r, err := ReadDBState(ctx, env, other)
		if err != nil {
			return colState{}, err
		}
		st.Related = &r
	}
	return st, nil
}

func checkAddColumn(a addColumnArgs, st colState) error {
	if err := exists(st.DB); err != nil {
		return err
	}
	if _, ok := st.DB.key(a.KeyID); ok && a.KeyID != "" {
		return failure.Invalid("keyID %s: database %s already has a column with that ID; pick another or omit keyID", a.KeyID, a.AvID)
	}
	if a.Previous != "" {
		if _, ok := st.DB.key(a.Previous); !ok {
			return failure.New(failure.NotFound, "previousKeyID %s: database %s has no such column", a.Previous, a.AvID)
		}
	}
	switch a.Type {
	case siyuan.AVKeyRelation:
		if st.Related != nil && st.Related.Missing {
			return failure.Missing("database", a.RelationAvID)
		}
	case siyuan.AVKeyRollup:
		rel, ok := st.DB.key(a.RollupRelation)
		if !ok || rel.Type != siyuan.AVKeyRelation || rel.Relation == nil || rel.Relation.AvID == "" {
			return failure.New(failure.NotFound, "rollupRelationKeyID %s: database %s has no configured relation column with that ID", a.RollupRelation, a.AvID)
		}
		other := st.DB
		if st.Related != nil {
			other = *st.Related
		}
		if other.Missing {
			return failure.Missing("database", rel.Relation.AvID)
		}
		if _, ok := other.key(a.RollupKey); !ok {
			return failure.New(failure.NotFound, "rollupKeyID %s: the related database %s has no such column", a.RollupKey, rel.Relation.AvID)
		}
	}
	return nil
}

// columnAdded requires exactly the new column (configured as asked) in
// the database and, for a two-way relation, exactly its back column in
// the related one.
func columnAdded(a addColumnArgs, before, st colState, id, back string) error {
	k, ok := st.DB.key(id)
	if !ok || k.Name != a.Name || k.Type != string(a.Type) {
		return fmt.Errorf("database %s shows no %s column %q with ID %s", a.AvID, a.Type, a.Name, id)
	}
	switch a.Type {
	case siyuan.AVKeyRelation:
		want := siyuan.AVRelation{AvID: a.RelationAvID, IsTwoWay: a.TwoWay, BackKeyID: back}
		if k.Relation == nil || *k.Relation != want {
			return fmt.Errorf("column %s relates to %+v, want %+v", id, k.Relation, want)
		}
	case siyuan.AVKeyRollup:
		if k.Rollup == nil || k.Rollup.RelationKeyID != a.RollupRelation || k.Rollup.KeyID != a.RollupKey || k.Rollup.Operator != a.RollupOperator {
			return fmt.Errorf("column %s rolls up %+v", id, k.Rollup)
		}
	case siyuan.AVKeyTemplate:
		if k.Template != a.Template {
			return fmt.Errorf("column %s has the template %q, want %q", id, k.Template, a.Template)
		}
	}
	if !same(shapeOf(st.DB.without(nil, []string{id})), shapeOf(before.DB)) {
		return fmt.Errorf("database %s changed beyond the new column", a.AvID)
	}
	if before.Related == nil || st.Related == nil {
		return nil
	}
	if back == "" {
		if !same(shapeOf(*st.Related), shapeOf(*before.Related)) {
			return fmt.Errorf("the related database %s changed", a.RelationAvID)
		}
		return nil
	}
	bk, ok := st.Related.key(back)
	if !ok || bk.Type != siyuan.AVKeyRelation || bk.Relation == nil || *bk.Relation != (siyuan.AVRelation{AvID: a.AvID, IsTwoWay: true, BackKeyID: id}) {
		return fmt.Errorf("the related database %s shows no back column %s linking to %s", a.RelationAvID, back, id)
	}
	if a.BackKeyName != "" && bk.Name != a.BackKeyName {
		return fmt.Errorf("the back column is named %q, want %q", bk.Name, a.BackKeyName)
	}
	if !same(shapeOf(st.Related.without(nil, []string{back})), shapeOf(*before.Related)) {
		return fmt.Errorf("the related database %s changed beyond the back column", a.RelationAvID)
	}
	return nil
}

// partHashes are the preimage and postimage digests of each database a
// change touches, by avID (full digests: the coordinator answers them as
// aliases from its one pool, the ledger keeps them whole).
func partHashes(a addColumnArgs, before, after colState) (map[string]any, error) {
	out := map[string]any{}
	add := func(id string, b, c DBState) error {
		pre, err := canon.Digest(b)
		if err != nil {
			return err
		}
		post, err := canon.Digest(c)
		if err != nil {
			return err
		}
		out[id] = map[string]any{"previousHash": pre, "resultHash": post}
		return nil
	}
	if err := add(a.AvID, before.DB, after.DB); err != nil {
		return nil, err
	}
	if before.Related != nil && after.Related != nil {
		if err := add(before.Related.ID, *before.Related, *after.Related); err != nil {
			return nil, err
		}
	}
	return out, nil
}
