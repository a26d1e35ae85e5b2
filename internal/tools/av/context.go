package av

import (
	"context"
	"fmt"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// databaseContext is upstream 0.6.8's answer field of that name on the
// database reads: which id is the database, which database blocks show it
// (each with the view it shows), where the answer holds the column and
// row ids, the column ids by name, and for the rows the answer shows, the
// block each bound row is bound to. Only what the call may see: the
// blocks and rows of notebooks hidden from agents are left out, as the
// reads leave them out.
type dbContext struct {
	avID, blockID, viewID string
	blocks                []string          // the database blocks the call may see
	columns               []siyuan.AVKey    // id and name of each column
	bound                 map[string]string // row item ID → bound block ID; nil: rows not shown
	columnsAt, rowsAt     string            // where the answer holds them
}

// idUsage says what each id of a database answer is for.
var idUsage = map[string]string{
	"avID":     "the database (attribute view); pass it as avID",
	"blockID":  "a database block showing it (a node in a document), never a row",
	"viewID":   "a view of the database",
	"rowID":    "a row's item ID (rowID, itemID, srcIDs); never the block bound to it (boundBlocks maps one to the other)",
	"columnID": "a column's key ID: columnID in set_cells, keyID elsewhere",
}

// answer is the databaseContext of an answer.
func (c dbContext) answer(ctx context.Context, env *tools.Env) (map[string]any, error) {
	out := map[string]any{"avID": c.avID, "idUsage": idUsage}
	if c.blockID != "" {
		out["blockID"] = c.blockID
	}
	blocks := make([]map[string]any, 0, len(c.blocks))
	for _, b := range c.blocks {
		attrs, err := env.Kernel.GetBlockAttrs(ctx, b)
		if err != nil {
			return nil, fmt.Errorf("read the attributes of database block %s: %w", b, err)
		}
		m := map[string]any{"blockID": b}
		if v := attrs["custom-sy-av-view"]; v != "" {
			m["viewID"] = v
			if b == c.blockID && c.viewID == "" {
				c.viewID = v
			}
		}
		blocks = append(blocks, m)
	}
	out["blocks"] = blocks
	if c.viewID != "" {
		out["viewID"] = c.viewID
	}
	// Column ids by name: a name several columns share maps to the list.
	byName := map[string]any{}
	for _, k := range c.columns {
		switch prev := byName[k.Name].(type) {
		case nil:
			byName[k.Name] = k.ID
		case string:
			byName[k.Name] = []string{prev, k.ID}
		case []string:
			byName[k.Name] = append(prev, k.ID)
		}
	}
	out["columnIDs"] = byName
	if c.columnsAt != "" {
		out["columns"] = c.columnsAt
	}
	if c.rowsAt != "" {
		out["rows"] = c.rowsAt
	}
	if c.bound != nil {
		out["boundBlocks"] = c.bound
	}
	return out, nil
}

// keysOf are the keys of a stored database.
func keysOf(av *siyuan.AttributeView) []siyuan.AVKey {
	out := []siyuan.AVKey{}
	for _, kv := range av.KeyValues {
		if kv != nil && kv.Key != nil {
			out = append(out, siyuan.AVKey{ID: kv.Key.ID, Name: kv.Key.Name})
		}
	}
	return out
}

// renderContext is the databaseContext of a compact render: its columns
// and the bound rows of its page (or groups' pages).
func renderContext(ctx context.Context, env *tools.Env, a renderArgs, out map[string]any) (map[string]any, error) {
	blocks, err := tools.DatabaseBlocks(ctx, env, a.AvID)
	if err != nil {
		return nil, err
	}
	c := dbContext{avID: a.AvID, blockID: a.BlockID, blocks: blocks, columnsAt: "columns[].id", rowsAt: "rows[].id (grouped: groups[].rows[].id)", bound: map[string]string{}}
	c.viewID, _ = out["viewID"].(string)
	cols, _ := out["columns"].([]map[string]any)
	for _, col := range cols {
		id, _ := col["id"].(string)
		name, _ := col["name"].(string)
		c.columns = append(c.columns, siyuan.AVKey{ID: id, Name: name})
	}
	addRows := func(rows []map[string]any) {
		for _, r := range rows {
			if b, ok := r["blockID"].(string); ok {
				c.bound[r["id"].(string)] = b
			}
		}
	}
	rows, _ := out["rows"].([]map[string]any)
	addRows(rows)
	gs, _ := out["groups"].([]map[string]any)
	for _, g := range gs {
		rows, _ := g["rows"].([]map[string]any)
		addRows(rows)
	}
	return c.answer(ctx, env)
}
