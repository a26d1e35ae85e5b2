package av

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// Creating a database takes several kernel writes, each a stage of a
// staged creation (tools.Stages): the database block is inserted, the
// database file is created by a render (SiYuan's only way: it gives the
// new database a table view, a primary key and a select column), then it
// is named, its columns added and its rows added. Every id is reserved
// before the first of them; the ledger keeps those ids and each confirmed
// stage, so a replay after a crash finishes the same database.

// Reserved id names in a creation's ledger record.
const (
	idAV      = "avID"
	idBlock   = "blockID"
	idParent  = "parentID"
	idPrev    = "previousID"
	idSource  = "sourceAvID"
	keyPrefix = "key:"
	rowPrefix = "row:"
)

type newColumn struct{ Name, Type, Icon string }

type createArgs struct {
	ParentID   string           `arg:"parentID" help:"the document (or container block) the database block goes first in" id:""`
	PreviousID string           `arg:"previousID" help:"the block the database block goes after (instead of parentID)" id:""`
	Name       string           `arg:"name" help:"the database's name (default: SiYuan's)"`
	Given      []map[string]any `arg:"columns" help:"columns after SiYuan's primary key and select column: [{name, type, icon?}], at most 50; type: text, number, date, select, mSelect, url, email, phone, mAsset, template, created, updated, checkbox, lineNumber"`
	Texts      []string         `arg:"primaryKeyTexts" help:"detached rows, one per primary-key text; at most 100"`
	Columns    []newColumn      // the columns asked, checked
}

// anchor is the block the new database block is placed by.
func (a createArgs) anchor() string {
	if a.PreviousID != "" {
		return a.PreviousID
	}
	return a.ParentID
}

// placeState is whether the blocks a new database block is placed by exist.
type placeState struct {
	Anchor string `json:"anchor"`
	Exists bool   `json:"exists"`
}

func parseCreate(out *createArgs) error {
	out.Name = storedName(out.Name)
	if out.ParentID == "" && out.PreviousID == "" {
		return failure.Invalid("pass parentID (the document or block the database block goes first in) or previousID (the block it goes after)")
	}
	if utf8.RuneCountInString(out.Name) > 512 {
		return failure.Invalid("name has more than 512 characters; SiYuan would cut it")
	}
	raw := out.Given
	if len(raw) > 50 {
		return failure.Invalid("pass at most 50 columns")
	}
	seen := map[string]bool{}
	for i, c := range raw {
		name, _ := c["name"].(string)
		typ, _ := c["type"].(string)
		icon, _ := c["icon"].(string)
		name = strings.TrimSpace(name)
		if name == "" {
			return failure.Invalid("columns[%d].name must not be empty", i)
		}
		if !slices.Contains(columnTypes, typ) {
			return failure.Invalid("columns[%d].type %q is not one of %s", i, typ, strings.Join(columnTypes, ", "))
		}
		for k := range c {
			if k != "name" && k != "type" && k != "icon" {
				return failure.Invalid("columns[%d] has %q; a column is {name, type, icon}", i, k)
			}
		}
		if seen[name] {
			return failure.Invalid("columns[%d]: two columns are named %q", i, name)
		}
		seen[name] = true
		out.Columns = append(out.Columns, newColumn{name, typ, icon})
	}
	if len(out.Texts) > 100 {
		return failure.Invalid("pass at most 100 primaryKeyTexts")
	}
	return nil
}

// readPlace reads whether the anchor block exists.
func readPlace(ctx context.Context, env *tools.Env, anchor string) (placeState, error) {
	ok, err := env.Kernel.CheckBlockExist(ctx, anchor)
	if err != nil {
		return placeState{}, fmt.Errorf("check block %s: %w", anchor, err)
	}
	return placeState{Anchor: anchor, Exists: ok}, nil
}

var create = tools.Write[createArgs, placeState]{
	Name: "create", Summary: "create a database in one strict call: a database block (first in parentID, or after previousID), named, with typed columns and detached rows; a replay after a crash finishes the same database",
	Policy: additive,
	Example: map[string]any{"parentID": "20260812120000-abcdefg", "name": "Reading list",
		"columns": []map[string]any{{"name": "Author", "type": "text"}, {"name": "Done", "type": "checkbox"}}, "primaryKeyTexts": []string{"Dune"}, "validateOnly": true},
	Validate: parseCreate,
	Scope: tools.Scope[createArgs]{Touches: func(a createArgs) []tools.Touch {
		return []tools.Touch{tools.OnBlock(a.anchor(), tools.LevelWrite)}
	}},
	Targets: func(a createArgs) []string { return []string{a.anchor()} },
	State: func(ctx context.Context, env *tools.Env, a createArgs) (placeState, error) {
		return readPlace(ctx, env, a.anchor())
	},
	Check: func(_ createArgs, st placeState) error {
		if !st.Exists {
			return failure.Missing("block", st.Anchor)
		}
		return nil
	},
	Stages: &tools.Stages[createArgs, placeState]{
		Reserve: func(a createArgs, _ placeState) (map[string]string, error) {
			ids := map[string]string{idAV: newID(), idBlock: newID(), idParent: a.ParentID, idPrev: a.PreviousID}
			for i := range a.Columns {
				ids[keyPrefix+strconv.Itoa(i)] = newID()
			}
			for i := range a.Texts {
				ids[rowPrefix+strconv.Itoa(i)] = newID()
			}
			return ids, nil
		},
		Steps: func(a createArgs) []tools.Step[createArgs] {
			steps := []tools.Step[createArgs]{insertBlockStep[createArgs](), renderCreateStep[createArgs]()}
			if a.Name != "" {
				steps = append(steps, nameStep())
			}
			for i := range a.Columns {
				steps = append(steps, columnStep(i))
			}
			if len(a.Texts) > 0 {
				steps = append(steps, rowsStep())
			}
			return steps
		},
		Receipt: func(a createArgs, ids map[string]string, done []string) tools.Payload {
			return tools.Payload{"avID": ids[idAV], "blockID": ids[idBlock], "columnIDs": listed(ids, keyPrefix, len(a.Columns)),
				"rowIDs": listed(ids, rowPrefix, len(a.Texts)), "columnCount": len(a.Columns), "rowCount": len(a.Texts), "stage": last(done)}
		},
	},
	Readback: func(ctx context.Context, env *tools.Env, a createArgs, p tools.Payload) (any, error) {
		avID, blockID, err := createdDB(p)
		if err != nil {
			return nil, err
		}
		keys, err := tools.PayloadKey[[]string](p, "columnIDs")
		if err != nil {
			return nil, err
		}
		rows, err := tools.PayloadKey[[]string](p, "rowIDs")
		if err != nil {
			return nil, err
		}
		st, err := readChanged(ctx, env, avID, func(st DBState) error {
			if !slices.Contains(st.Blocks, blockID) {
				return fmt.Errorf("database %s is not shown by block %s", avID, blockID)
			}
			if a.Name != "" && st.Name != a.Name {
				return fmt.Errorf("database %s is named %q, want %q", avID, st.Name, a.Name)
			}
			for i, id := range keys {
				if k, ok := st.key(id); !ok || k.Name != a.Columns[i].Name || k.Type != a.Columns[i].Type {
					return fmt.Errorf("database %s shows no %s column %q with ID %s", avID, a.Columns[i].Type, a.Columns[i].Name, id)
				}
			}
			if want := 2 + len(keys); len(st.Keys) != want {
				return fmt.Errorf("database %s has %d columns, want %d", avID, len(st.Keys), want)
			}
			pk := st.primary().ID
			for i, id := range rows {
				r, ok := st.row(id)
				if !ok || !r.Detached || r.Cells[pk] == nil || r.Cells[pk].Block == nil || r.Cells[pk].Block.Content != a.Texts[i] {
					return fmt.Errorf("database %s shows no detached row %s with its text", avID, id)
				}
			}
			if len(st.Rows) != len(rows) {
				return fmt.Errorf("database %s has %d rows, want %d", avID, len(st.Rows), len(rows))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		p["primaryKeyID"] = st.primary().ID
		if len(st.Views) > 0 {
			p["viewID"] = st.Views[0].ID
		}
		return st, nil
	},
}

// listed is the ids reserved under prefix 0..n-1.
func listed(ids map[string]string, prefix string, n int) []string {
	out := make([]string, 0, n)
	for i := range n {
		out = append(out, ids[prefix+strconv.Itoa(i)])
	}
	return out
}

func last(done []string) string {
	if len(done) == 0 {
		return ""
	}
	return done[len(done)-1]
}

// blockPresent polls until the block exists.
func blockPresent(ctx context.Context, env *tools.Env, id string) (bool, error) {
	return tools.Poll(ctx, func() (bool, error) { return env.Kernel.CheckBlockExist(ctx, id) })
}

// avPresent polls until the database's file exists and check passes.
func avPresent(ctx context.Context, env *tools.Env, avID string, check func(*siyuan.AttributeView) bool) (bool, error) {
	return tools.Poll(ctx, func() (bool, error) {
		av, err := env.Kernel.GetAttributeView(ctx, avID)
		return err == nil && av != nil && check(av), err
	})
}

// insertBlockStep inserts the database block with the reserved ids, as
// the editor and upstream Sisyphus do: a transaction insert of its DOM,
// spun by the kernel's Lute first so that an open editor can render what
// it is sent (the bare DOM when the spin fails: the kernel parses either).
// Inserting twice would make two blocks with one ID, so it is never sent
// again in doubt.
func insertBlockStep[A any]() tools.Step[A] {
	return tools.Step[A]{Name: "block",
		Do: func(ctx context.Context, env *tools.Env, _ A, ids map[string]string) (map[string]string, error) {
			op := siyuan.InsertDatabaseBlockOp(ids[idBlock], ids[idAV], ids[idPrev], ids[idParent])
			if spun, err := env.Kernel.SpinBlockDOM(ctx, siyuan.DatabaseBlockDOM(ids[idBlock], ids[idAV])); err == nil && spun != "" {
				op.Data = spun
			}
			_, err := env.Kernel.Transactions(ctx, []siyuan.Transaction{{DoOperations: []siyuan.Operation{op}}})
			return nil, tools.WriteFailure(err, false)
		},
		Present: func(ctx context.Context, env *tools.Env, _ A, ids map[string]string) (bool, error) {
			return blockPresent(ctx, env, ids[idBlock])
		},
	}
}

// renderCreateStep writes the database file: a render with
// createIfNotExist makes it only when it is missing, so sending it again
// cannot make a second database (Redo).
func renderCreateStep[A any]() tools.Step[A] {
	return tools.Step[A]{Name: "database", Redo: true,
		Do: func(ctx context.Context, env *tools.Env, _ A, ids map[string]string) (map[string]string, error) {
			_, err := env.Kernel.RenderAttributeViewOrCreate(ctx, siyuan.RenderAVRequest{ID: ids[idAV], BlockID: ids[idBlock], PageSize: 1, IgnoreRows: true})
			return nil, tools.WriteFailure(err, false)
		},
		Present: func(ctx context.Context, env *tools.Env, _ A, ids map[string]string) (bool, error) {
			return avPresent(ctx, env, ids[idAV], func(*siyuan.AttributeView) bool { return true })
		},
	}
}

// nameStep names the database; naming twice is naming once (Redo).
func nameStep() tools.Step[createArgs] {
	return tools.Step[createArgs]{Name: "name", Redo: true,
		Do: func(ctx context.Context, env *tools.Env, a createArgs, ids map[string]string) (map[string]string, error) {
			_, err := env.Kernel.Transactions(ctx, []siyuan.Transaction{{DoOperations: []siyuan.Operation{siyuan.SetAttrViewNameOp(ids[idAV], a.Name)}}})
			return nil, tools.WriteFailure(err, false)
		},
		Present: func(ctx context.Context, env *tools.Env, a createArgs, ids map[string]string) (bool, error) {
			return avPresent(ctx, env, ids[idAV], func(av *siyuan.AttributeView) bool { return av.Name == a.Name })
		},
	}
}

// columnStep adds column i with its reserved key ID after the last
// column. SiYuan does not deduplicate key IDs: never sent again in doubt.
func columnStep(i int) tools.Step[createArgs] {
	key := keyPrefix + strconv.Itoa(i)
	return tools.Step[createArgs]{Name: "column:" + strconv.Itoa(i),
		Do: func(ctx context.Context, env *tools.Env, a createArgs, ids map[string]string) (map[string]string, error) {
			st, err := ReadDBState(ctx, env, ids[idAV])
			if err != nil {
				return nil, tools.Refuse(err)
			}
			c := a.Columns[i]
			err = env.Kernel.AddAttributeViewKey(ctx, siyuan.AddAVKeyRequest{AvID: ids[idAV], KeyID: ids[key], KeyName: c.Name, KeyType: c.Type, KeyIcon: c.Icon, PreviousKeyID: lastColumn(st)})
			return nil, tools.WriteFailure(err, false)
		},
		Present: func(ctx context.Context, env *tools.Env, _ createArgs, ids map[string]string) (bool, error) {
			return avPresent(ctx, env, ids[idAV], func(av *siyuan.AttributeView) bool { return hasKey(av, ids[key]) })
		},
	}
}

// rowsStep adds the detached rows with their reserved item IDs. SiYuan
// adds them one by one: in doubt, some may be there, so never sent again.
func rowsStep() tools.Step[createArgs] {
	return tools.Step[createArgs]{Name: "rows",
		Do: func(ctx context.Context, env *tools.Env, a createArgs, ids map[string]string) (map[string]string, error) {
			var srcs []siyuan.AVSrc
			for i, text := range a.Texts {
				srcs = append(srcs, siyuan.AVSrc{ItemID: ids[rowPrefix+strconv.Itoa(i)], Detached: true, Content: text})
			}
			err := env.Kernel.AddAttributeViewBlocks(ctx, siyuan.AddAVBlocksRequest{AvID: ids[idAV], BlockID: ids[idBlock], Srcs: srcs})
			return nil, tools.WriteFailure(err, len(srcs) > 1)
		},
		Present: func(ctx context.Context, env *tools.Env, a createArgs, ids map[string]string) (bool, error) {
			return avPresent(ctx, env, ids[idAV], func(av *siyuan.AttributeView) bool {
				for i := range a.Texts {
					if !hasRow(av, ids[rowPrefix+strconv.Itoa(i)]) {
						return false
					}
				}
				return true
			})
		},
	}
}

func hasKey(av *siyuan.AttributeView, id string) bool {
	for _, kv := range av.KeyValues {
		if kv != nil && kv.Key != nil && kv.Key.ID == id {
			return true
		}
	}
	return false
}

func hasRow(av *siyuan.AttributeView, item string) bool {
	for _, kv := range av.KeyValues {
		if kv == nil || kv.Key == nil || kv.Key.Type != siyuan.AVKeyBlock {
			continue
		}
		for _, v := range kv.Values {
			if v != nil && v.BlockID == item {
				return true
			}
		}
	}
	return false
}

// createdDB reads the database and block a staged creation made from its
// receipt, checked: a staged creation hands its readback only the
// receipt.
func createdDB(p tools.Payload) (avID, blockID string, err error) {
	if avID, err = tools.PayloadKey[string](p, "avID"); err != nil {
		return "", "", err
	}
	blockID, err = tools.PayloadKey[string](p, "blockID")
	return avID, blockID, err
}
